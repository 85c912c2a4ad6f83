#include "mujoco_errors.h"

#include "quiet_timer.h"

#include <algorithm>
#include <cctype>
#include <csetjmp>
#include <cstdio>
#include <exception>
#include <map>

// MuJoCo 4's thread-local log handler: what its own Python bindings and its
// batch API use to catch errors per call. A thread-local handler takes
// precedence over the process-wide one (mju_setLogHandler, or the legacy
// mju_user_error / mju_user_warning), so this core neither replaces a handler
// that other code in the process installed nor depends on it.
extern "C" {
MJAPI mjfLogHandler _mjPRIVATE_setTlsLogHandler(mjfLogHandler handler);
MJAPI mjfLogHandler _mjPRIVATE_getGlobalLogHandler(void);
}

namespace joltgym {

namespace {

// One active guard on this thread; guards nest through `previous`.
struct Frame {
  std::jmp_buf env;
  MujocoReport* report;
  Frame* previous;
  mjfLogHandler previous_handler;
  bool was_quiet;
};

thread_local Frame* t_frame = nullptr;

std::string MessageText(const mjLogMessage* msg) {
  std::string text = msg->subject;
  if (msg->body != nullptr && msg->body[0] != '\0') {
    text += '\n';
    text += msg->body;
  }
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.pop_back();
  return text;
}

bool MentionsMemory(const std::string& message) {
  std::string lower(message);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  // MuJoCo's texts for an exhausted stack or arena and a failed allocation
  // (not, say, "keyframes allocated in model").
  for (const char* marker : {"out of memory", "could not allocate", "allocation failed",
                             "insufficient memory", "insufficient arena memory"}) {
    if (lower.find(marker) != std::string::npos) return true;
  }
  return false;
}

void RecordError(MujocoReport* report, const mjLogMessage* msg) noexcept {
  if (report == nullptr) return;
  try {
    report->error_message = MessageText(msg);
    report->error = MentionsMemory(report->error_message) ? MujocoReport::Error::kOutOfMemory
                                                          : MujocoReport::Error::kFailure;
  } catch (...) {  // no memory for the message: the kind says enough
    report->error = MujocoReport::Error::kOutOfMemory;
  }
}

void RecordWarning(MujocoReport* report, const mjLogMessage* msg) noexcept {
  if (report == nullptr) return;
  try {
    std::string text = MessageText(msg);
    if (IsInstabilityWarning(text)) return;
    if (static_cast<int>(report->warnings.size()) >= MujocoReport::kMaxWarnings) {
      ++report->dropped_warnings;
      return;
    }
    report->warnings.push_back(std::move(text));
  } catch (...) {
    ++report->dropped_warnings;
  }
}

// The handler of every guarded call. It never returns on an error.
void LogHandler(const mjLogMessage* msg) {
  Frame* frame = t_frame;
  if (frame != nullptr && msg->level == mjLOG_ERROR) {
    RecordError(frame->report, msg);
    std::longjmp(frame->env, 1);
  }
  if (frame != nullptr && msg->level == mjLOG_WARNING) {
    RecordWarning(frame->report, msg);
    return;
  }
  // Info and debug traces are opt-in (MuJoCo's log topics): the process-wide
  // handler filters and prints them as it would without this guard.
  mjfLogHandler global = _mjPRIVATE_getGlobalLogHandler();
  if (global != nullptr && global != &LogHandler) global(msg);
}

void Leave(const Frame& frame) {
  t_frame = frame.previous;
  _mjPRIVATE_setTlsLogHandler(frame.previous_handler);
  RestoreTimerQuiet(frame.was_quiet);
}

// MuJoCo's counted warnings (mjtWarning): the text before the first number.
struct CountedWarning {
  int kind;
  std::string prefix;
};

const std::vector<CountedWarning>& CountedWarnings() {
  static const std::vector<CountedWarning> list = [] {
    constexpr std::size_t kSentinel = 987654321;
    std::vector<CountedWarning> out;
    for (int kind = 0; kind < mjNWARNING; ++kind) {
      const std::string text = mju_warningText(kind, kSentinel);
      const std::size_t at = text.find(std::to_string(kSentinel));
      out.push_back({kind, at == std::string::npos ? text : text.substr(0, at)});
    }
    return out;
  }();
  return list;
}

int CountedWarningKind(const std::string& message) {
  for (const CountedWarning& w : CountedWarnings()) {
    if (!w.prefix.empty() && message.compare(0, w.prefix.size(), w.prefix) == 0) return w.kind;
  }
  return -1;
}

std::string WorldList(const std::vector<int>& worlds) {
  std::string out;
  const std::size_t shown = std::min<std::size_t>(worlds.size(), 8);
  for (std::size_t k = 0; k < shown; ++k) out += (k ? ", " : "") + std::to_string(worlds[k]);
  if (worlds.size() > shown) out += ", ... (" + std::to_string(worlds.size()) + " worlds)";
  return out;
}

}  // namespace

void MujocoReport::Clear() {
  error = Error::kNone;
  error_message.clear();
  warnings.clear();
  dropped_warnings = 0;
}

void MujocoReport::TakeWarnings(MujocoReport& other) {
  for (std::string& w : other.warnings) {
    if (static_cast<int>(warnings.size()) < kMaxWarnings) {
      warnings.push_back(std::move(w));
    } else {
      ++dropped_warnings;
    }
  }
  dropped_warnings += other.dropped_warnings;
  other.warnings.clear();
  other.dropped_warnings = 0;
}

bool GuardMujoco(void (*fn)(void* context), void* context, MujocoReport* report) noexcept {
  Frame frame;
  frame.report = report;
  frame.previous = t_frame;
  frame.previous_handler = _mjPRIVATE_setTlsLogHandler(&LogHandler);
  // MuJoCo's profiling timer reads 0 in the core's calls (see quiet_timer.h).
  frame.was_quiet = SetTimerQuiet();
  ShieldMujocoTimer();
  t_frame = &frame;
  // Nothing below may own a resource across the call: a MuJoCo error comes
  // back here by longjmp (see the header).
  if (setjmp(frame.env) == 0) {
    bool ok = true;
    try {
      fn(context);
    } catch (const std::exception& e) {
      ok = false;
      if (report != nullptr) {
        report->error = MujocoReport::Error::kFailure;
        report->error_message = e.what();
      }
    } catch (...) {
      ok = false;
      if (report != nullptr) report->error = MujocoReport::Error::kFailure;
    }
    Leave(frame);
    return ok;
  }
  Leave(frame);
  return false;
}

bool IsInstabilityWarning(const std::string& message) {
  const int kind = CountedWarningKind(message);
  return kind == mjWARN_BADQPOS || kind == mjWARN_BADQVEL || kind == mjWARN_BADQACC;
}

std::string WarningKey(const std::string& message) {
  const int kind = CountedWarningKind(message);
  return kind < 0 ? message : "mjtWarning " + std::to_string(kind);
}

MujocoReport& ThreadConstructionReport() {
  thread_local MujocoReport report;
  return report;
}

ReportSummary SummarizeReports(const std::vector<std::pair<int, MujocoReport>>& reports,
                               const std::string& call, const std::string& reset_hint,
                               bool name_worlds) {
  ReportSummary summary;
  // Warnings: one per kind, in order of first appearance.
  std::vector<std::string> keys;
  std::map<std::string, std::pair<std::string, std::vector<int>>> warnings;
  int dropped = 0;
  std::vector<int> failed;
  bool out_of_memory = false;
  const MujocoReport* first_failure = nullptr;
  for (const auto& [index, report] : reports) {
    for (const std::string& text : report.warnings) {
      const std::string key = WarningKey(text);
      auto [it, inserted] = warnings.try_emplace(key, text, std::vector<int>{});
      if (inserted) keys.push_back(key);
      if (it->second.second.empty() || it->second.second.back() != index) {
        it->second.second.push_back(index);
      }
    }
    dropped += report.dropped_warnings;
    if (report.failed()) {
      failed.push_back(index);
      if (first_failure == nullptr) first_failure = &report;
      out_of_memory = out_of_memory || report.error == MujocoReport::Error::kOutOfMemory;
    }
  }
  for (const std::string& key : keys) {
    const auto& [text, worlds] = warnings[key];
    std::string where = name_worlds ? " in world " + WorldList(worlds) : "";
    if (name_worlds && worlds.size() > 1) where = " in worlds " + WorldList(worlds);
    summary.warnings.push_back("MuJoCo warning during " + call + where + ": " + text);
  }
  if (dropped > 0) {
    summary.warnings.push_back("MuJoCo raised " + std::to_string(dropped) +
                               " more warning(s) during " + call + " (not shown)");
  }
  if (failed.empty()) return summary;
  std::string message = "MuJoCo error during " + call;
  if (name_worlds)
    message += (failed.size() > 1 ? " in worlds " : " in world ") + WorldList(failed);
  message += ": " + first_failure->error_message + "\n";
  message += (name_worlds ? (failed.size() > 1 ? "These worlds" : "This world") : "The world");
  message += " must be reset (" + reset_hint + ") before stepping again.";
  summary.failed = true;
  summary.out_of_memory = out_of_memory;
  summary.error = message;
  return summary;
}


}  // namespace joltgym
