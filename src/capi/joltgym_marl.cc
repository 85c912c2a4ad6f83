// libjoltgym_marl: the C API (include/joltgym_marl.h) over the native core.
//
// Everything here is the boundary: handles, status codes, messages, buffers.
// Stepping, seeding, resets and the checks of every argument are the core's
// (WorldPool, validation.h), shared with the Python module.
#define JG_BUILDING_LIBRARY
#include "joltgym_marl.h"

#include <dlfcn.h>
#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <exception>
#include <limits>
#include <memory>
#include <mutex>
#include <new>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "errors.h"
#include "frame_renderer.h"
#include "fork_guard.h"
#include "json_value.h"
#include "mujoco_errors.h"
#include "task.h"
#include "validation.h"
#include "world_pool.h"

#ifndef JOLTGYM_VERSION
#define JOLTGYM_VERSION "0.0.0"
#endif

namespace {

using joltgym::BadIndex;
using joltgym::BadType;
using joltgym::BadValue;
using joltgym::StateError;
using joltgym::capi::JsonParamInput;
using joltgym::capi::JsonValue;

// Errors of the boundary itself (the core has no handles or pointers).
struct HandleError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
struct BusyError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
struct NullError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A message quotes the caller's input (a path, a keyword's name) cut to a
// few hundred bytes; this bounds the whole message whatever it quotes.
constexpr std::size_t kMaxMessage = 4096;
thread_local std::string t_error;
thread_local std::string t_warnings;

// Runs `body`, turning every exception into a status and this thread's
// message. Nothing escapes into C.
template <typename Body>
jg_status Guarded(Body&& body) noexcept {
  t_error.clear();
  t_warnings.clear();
  try {
    body();
    return JG_OK;
  } catch (const BadType& e) {
    t_error = joltgym::ClipMiddle(e.what(), kMaxMessage);
    return JG_ERR_TYPE;
  } catch (const joltgym::FileNotFound& e) {
    t_error = joltgym::ClipMiddle(e.what(), kMaxMessage);
    return JG_ERR_FILE_NOT_FOUND;
  } catch (const StateError& e) {
    t_error = joltgym::ClipMiddle(e.what(), kMaxMessage);
    return JG_ERR_STATE;
  } catch (const joltgym::MujocoError& e) {
    t_error = joltgym::ClipMiddle(e.what(), kMaxMessage);
    return e.out_of_memory() ? JG_ERR_OUT_OF_MEMORY : JG_ERR_MUJOCO;
  } catch (const BadValue& e) {
    t_error = joltgym::ClipMiddle(e.what(), kMaxMessage);
    return JG_ERR_VALUE;
  } catch (const HandleError& e) {
    t_error = joltgym::ClipMiddle(e.what(), kMaxMessage);
    return JG_ERR_HANDLE;
  } catch (const BusyError& e) {
    t_error = joltgym::ClipMiddle(e.what(), kMaxMessage);
    return JG_ERR_BUSY;
  } catch (const NullError& e) {
    t_error = joltgym::ClipMiddle(e.what(), kMaxMessage);
    return JG_ERR_NULL;
  } catch (const BadIndex& e) {
    t_error = joltgym::ClipMiddle(e.what(), kMaxMessage);
    return JG_ERR_INDEX;
  } catch (const std::bad_alloc&) {
    t_error = "out of memory";
    return JG_ERR_OUT_OF_MEMORY;
  } catch (const std::exception& e) {
    // The core's other runtime errors (a worker thread the system refused)
    // are Python RuntimeErrors: the lifecycle status.
    t_error = joltgym::ClipMiddle(e.what(), kMaxMessage);
    return dynamic_cast<const std::runtime_error*>(&e) != nullptr ? JG_ERR_STATE : JG_ERR_INTERNAL;
  } catch (...) {
    t_error = "unknown error";
    return JG_ERR_INTERNAL;
  }
}

void RequirePointer(const void* p, const char* what) {
  if (p == nullptr) throw NullError(std::string(what) + " should not be NULL");
}

// ---- assets -----------------------------------------------------------------

bool IsDirectory(const std::string& path) {
  struct stat info;
  return stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode);
}

// The `assets` folder beside this library (the wheel's layout), else the
// source tree's, unless the caller set one.
void DefaultAssetDir() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (!joltgym::AssetDir().empty()) return;
    Dl_info info;
    if (dladdr(reinterpret_cast<void*>(&jg_abi_version), &info) != 0 && info.dli_fname != nullptr) {
      std::string dir(info.dli_fname);
      dir = dir.substr(0, dir.find_last_of('/') + 1) + "assets";
      if (IsDirectory(dir)) {
        joltgym::SetAssetDir(dir);
        return;
      }
    }
#ifdef JOLTGYM_SOURCE_ASSET_DIR
    if (IsDirectory(JOLTGYM_SOURCE_ASSET_DIR)) joltgym::SetAssetDir(JOLTGYM_SOURCE_ASSET_DIR);
#endif
  });
}

// ---- the registry, as C strings that live as long as the process --------------

const char* ParamKindName(joltgym::ParamKind kind) {
  using joltgym::ParamKind;
  switch (kind) {
    case ParamKind::kFloat: return "float";
    case ParamKind::kInt: return "int";
    case ParamKind::kBool: return "bool";
    case ParamKind::kRange: return "range";
    case ParamKind::kString: return "str";
    case ParamKind::kBodyRef: return "body";
    case ParamKind::kOptionalFloat: return "optional_float";
  }
  return "unknown";
}

std::string JsonString(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char code[8];
          std::snprintf(code, sizeof(code), "\\u%04x", static_cast<unsigned>(c));
          out += code;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

std::string JsonNumber(double x) {
  if (std::isinf(x)) return x > 0 ? "\"inf\"" : "\"-inf\"";
  if (std::isnan(x)) return "null";
  std::ostringstream out;
  out.precision(17);
  out << x;
  return out.str();
}

std::string DefaultJson(const joltgym::ParamSpec& spec) {
  using joltgym::ParamKind;
  const joltgym::ParamValue& v = spec.default_value;
  switch (spec.kind) {
    case ParamKind::kFloat:
    case ParamKind::kOptionalFloat:
      return JsonNumber(v.numbers.at(0));
    case ParamKind::kInt:
      return std::to_string(static_cast<long>(v.numbers.at(0)));
    case ParamKind::kBool:
      return v.numbers.at(0) != 0.0 ? "true" : "false";
    case ParamKind::kRange:
      return "[" + JsonNumber(v.numbers.at(0)) + ", " + JsonNumber(v.numbers.at(1)) + "]";
    case ParamKind::kString:
      return JsonString(v.text);
    case ParamKind::kBodyRef:
      return v.is_text ? JsonString(v.text) : std::to_string(static_cast<long>(v.numbers.at(0)));
  }
  return "null";
}

struct Registry {
  std::vector<const joltgym::TaskInfo*> tasks;  // in name order
  std::vector<std::vector<std::string>> defaults;  // per task, per param
  std::string json;
};

const Registry& GetRegistry() {
  static const Registry* registry = [] {
    auto* r = new Registry;  // never freed: its strings are handed out for the process's life
    std::string json = "{";
    for (const auto& [name, info] : joltgym::TaskRegistry::Get().all()) {
      r->tasks.push_back(&info);
      std::vector<std::string> defaults;
      std::string params = "[";
      for (const auto& p : info.params) {
        defaults.push_back(DefaultJson(p));
        params += (params.size() > 1 ? ", " : "") + std::string("{\"name\": ") + JsonString(p.name) +
                  ", \"kind\": " + JsonString(ParamKindName(p.kind)) +
                  ", \"default\": " + defaults.back() + ", \"doc\": " + JsonString(p.doc) + "}";
      }
      r->defaults.push_back(std::move(defaults));
      const bool single = info.kind == joltgym::TaskKind::kSingleAgent;
      json += (json.size() > 1 ? ", " : "") + JsonString(name) + ": {\"name\": " +
              JsonString(name) + ", \"kind\": " + (single ? "\"single_agent\"" : "\"game\"") +
              ", \"title\": " + JsonString(info.title) + ", \"env_id\": " +
              JsonString(info.env_id) + ", \"reference_id\": " + JsonString(info.reference_id) +
              ", \"agent_prefix\": " + JsonString(info.agent_prefix) +
              ", \"max_episode_steps\": " + std::to_string(info.max_episode_steps) +
              ", \"params\": " + params + "]}";
    }
    r->json = json + "}";
    return r;
  }();
  return *registry;
}

int TaskIndex(const char* task) {
  RequirePointer(task, "task");
  // Any spelling of a task's names; BadValue naming the close matches and the known tasks.
  const std::string& name = joltgym::TaskRegistry::Get().Find(task).name;
  const Registry& r = GetRegistry();
  for (std::size_t i = 0; i < r.tasks.size(); ++i) {
    if (r.tasks[i]->name == name) return static_cast<int>(i);
  }
  throw BadValue(std::string("unknown task '") + task + "'");
}

// ---- pools ------------------------------------------------------------------

template <typename T>
std::unique_ptr<T[]> Zeros(std::size_t count) {
  return std::unique_ptr<T[]>(new T[std::max<std::size_t>(count, 1)]());
}

// Element counts of a set of result buffers for `rows` worlds, in the
// float64 layout (obs64, reward64, final_obs64) or the float32 one.
jg_buffer_sizes SizesFor(std::size_t rows, const joltgym::Task& t, bool float64) {
  const std::size_t a = t.num_agents(), od = t.obs_dim(), iw = t.info_layout().width();
  jg_buffer_sizes s{};
  (float64 ? s.obs64 : s.obs) = (float64 ? s.final_obs64 : s.final_obs) = rows * a * od;
  (float64 ? s.reward64 : s.reward) = rows * a;
  s.terminated = s.truncated = rows * a;
  s.info = s.final_info = rows * a * iw;
  s.reset_kind = s.unstable = s.elapsed = rows;
  return s;
}

template <typename T>
std::unique_ptr<T[]> ZerosOrNone(std::size_t count) {
  return count == 0 ? nullptr : Zeros<T>(count);
}

// One set of result buffers (jg_buffers' fields) the library owns; the
// fields of the layout not in use (size 0) stay NULL.
struct OwnedBuffers {
  std::unique_ptr<float[]> obs, final_obs, reward;
  std::unique_ptr<double[]> obs64, final_obs64, reward64;
  std::unique_ptr<bool[]> terminated, truncated, unstable;
  std::unique_ptr<double[]> info, final_info;
  std::unique_ptr<std::uint8_t[]> reset_kind;
  std::unique_ptr<std::int32_t[]> elapsed;

  jg_buffers Allocate(const jg_buffer_sizes& s) {
    obs = ZerosOrNone<float>(s.obs);
    final_obs = ZerosOrNone<float>(s.final_obs);
    reward = ZerosOrNone<float>(s.reward);
    obs64 = ZerosOrNone<double>(s.obs64);
    final_obs64 = ZerosOrNone<double>(s.final_obs64);
    reward64 = ZerosOrNone<double>(s.reward64);
    terminated = Zeros<bool>(s.terminated);
    truncated = Zeros<bool>(s.truncated);
    unstable = Zeros<bool>(s.unstable);
    info = Zeros<double>(s.info);
    final_info = Zeros<double>(s.final_info);
    reset_kind = Zeros<std::uint8_t>(s.reset_kind);
    elapsed = Zeros<std::int32_t>(s.elapsed);
    return jg_buffers{obs.get(),        reward.get(),      terminated.get(), truncated.get(),
                      info.get(),       final_obs.get(),   final_info.get(), reset_kind.get(),
                      unstable.get(),   elapsed.get(),     obs64.get(),      reward64.get(),
                      final_obs64.get()};
  }
};

joltgym::PoolBuffers ToCore(const jg_buffers& b) {
  joltgym::PoolBuffers out;
  out.obs = b.obs;
  out.reward = b.reward;
  out.terminated = b.terminated;
  out.truncated = b.truncated;
  out.info = b.info;
  out.final_obs = b.final_obs;
  out.final_info = b.final_info;
  out.reset_kind = b.reset_kind;
  out.unstable = b.unstable;
  out.elapsed = b.elapsed;
  out.obs64 = b.obs64;
  out.reward64 = b.reward64;
  out.final_obs64 = b.final_obs64;
  return out;
}

struct PoolState {
  // Held by the call inside the pool's worlds or buffers. Renewed in a forked
  // child: a parent thread inside a call at the fork never leaves it there.
  joltgym::ForkAwareMutex mutex;
  std::string name;
  std::shared_ptr<const joltgym::Task> task;  // kept after close for late queries
  std::unique_ptr<joltgym::WorldPool> pool;   // null once closed
  jg_dims dims{};
  std::vector<float> low, high;
  // The pool's own result buffers, and the ones in use (own or the caller's).
  jg_buffer_sizes sizes{};
  OwnedBuffers own_memory;
  jg_buffers own{}, current{};
  std::vector<float> actions;  // the pool's copy of the last actions (the workers read it)
  std::vector<float> staged;   // actions being checked (never a row a worker reads)
  std::vector<long> action_shape;
  // Asynchronous stepping: send()'s ids, and the batch buffers recv() fills.
  int batch_size = 1;
  std::vector<int> send_ids;
  std::unique_ptr<joltgym::SendIdChecker> send_checker;
  jg_buffer_sizes batch_sizes{};
  OwnedBuffers batch_memory;
  jg_buffers batch_own{}, batch_current{};
  std::unique_ptr<std::int32_t[]> batch_ids_own;
  std::int32_t* batch_ids = nullptr;
  // The fork generation (fork_guard.h) the pool last ran in: a call in a
  // forked child first forgets the worlds in flight at the fork (lost: the
  // workers stepping them do not exist there), as the Python binding does.
  std::uint64_t fork_generation = joltgym::ForkGeneration();
  // Frames (jg_pool_render): one renderer per world rendered, made on its
  // first frame and kept, as Python's env keeps its MujocoRenderer.
  std::vector<std::unique_ptr<joltgym::capi::FrameRenderer>> renderers;
};

// Handles: slot + 1 in the low 32 bits, the slot's generation in the high
// ones. Closing bumps the generation, so a stale handle is recognized (and
// never dereferences freed memory) even after its slot is reused.
class HandleTable {
 public:
  jg_pool Add(std::shared_ptr<PoolState> state) {
    std::lock_guard<std::mutex> lock(mutex_.Get());
    std::size_t index;
    if (!free_.empty()) {
      index = free_.back();
      free_.pop_back();
    } else {
      if (slots_.size() >= 0xFFFFFFFEu) throw BadValue("too many open pools");
      index = slots_.size();
      slots_.push_back(Slot{});
    }
    Slot& slot = slots_[index];
    slot.state = std::move(state);
    return (static_cast<std::uint64_t>(slot.generation) << 32) | (index + 1);
  }

  std::shared_ptr<PoolState> Get(jg_pool handle) {
    std::lock_guard<std::mutex> lock(mutex_.Get());
    return Find(handle).state;
  }

  std::shared_ptr<PoolState> Remove(jg_pool handle) {
    std::lock_guard<std::mutex> lock(mutex_.Get());
    Slot& slot = Find(handle);
    std::shared_ptr<PoolState> state = std::move(slot.state);
    ++slot.generation;
    free_.push_back(static_cast<std::size_t>((handle & 0xFFFFFFFFu) - 1));
    return state;
  }

 private:
  struct Slot {
    std::uint32_t generation = 1;
    std::shared_ptr<PoolState> state;
  };

  Slot& Find(jg_pool handle) {
    if (handle == 0) throw HandleError("pool handle is 0 (null); expected a handle from jg_pool_create");
    const std::uint64_t index = (handle & 0xFFFFFFFFu) - 1;
    const auto generation = static_cast<std::uint32_t>(handle >> 32);
    if ((handle & 0xFFFFFFFFu) == 0 || index >= slots_.size() || generation == 0 ||
        generation > slots_[index].generation) {
      std::ostringstream msg;
      msg << "pool handle 0x" << std::hex << handle
          << " is not a handle this library gave out; expected a handle from jg_pool_create";
      throw HandleError(msg.str());
    }
    Slot& slot = slots_[index];
    if (generation != slot.generation || !slot.state) {
      throw StateError("WorldPool is closed; expected an open pool (create a new one)");
    }
    return slot;
  }

  joltgym::ForkAwareMutex mutex_;  // a thread may hold it at a fork
  std::vector<Slot> slots_;
  std::vector<std::size_t> free_;
};

HandleTable& Handles() {
  static HandleTable* table = new HandleTable;  // never destroyed: pools may outlive static destruction
  return *table;
}

// The pool's mutex for one exclusive call, or BusyError if another thread is inside.
std::unique_lock<std::mutex> Enter(PoolState& state, const char* call) {
  std::unique_lock<std::mutex> lock(state.mutex.Get(), std::try_to_lock);
  if (!lock.owns_lock()) {
    throw BusyError(std::string(call) + " called while another thread is inside this pool; "
                    "expected one call at a time per pool (use one pool per thread, or a lock)");
  }
  if (!state.pool) throw StateError("WorldPool is closed; expected an open pool (create a new one)");
  if (state.fork_generation != joltgym::ForkGeneration()) {
    state.pool->AbandonInFlight();
    state.fork_generation = joltgym::ForkGeneration();
  }
  return lock;
}

// MuJoCo's reports of a call: warnings kept for jg_last_warnings(), an error thrown.
void Report(std::vector<std::pair<int, joltgym::MujocoReport>>& reports, const std::string& call,
            const std::string& reset_hint, bool name_worlds) {
  if (reports.empty()) return;
  const joltgym::ReportSummary summary =
      joltgym::SummarizeReports(reports, call, reset_hint, name_worlds);
  for (const std::string& w : summary.warnings) t_warnings += w + "\n";
  if (summary.failed) throw joltgym::MujocoError(summary.error, summary.out_of_memory);
}

// The same words as the Python module's warnings and errors (bindings/diagnostics).
void Report(joltgym::WorldPool& pool, const std::string& call,
            const std::string& reset_hint = "reset_all() or reset_one(i)") {
  std::vector<std::pair<int, joltgym::MujocoReport>> reports;
  pool.TakeReports(reports);
  Report(reports, call, reset_hint, true);
}

joltgym::SeedWords Seed(int32_t has_seed, std::uint64_t seed) {
  if (has_seed) return joltgym::SeedFromU64(seed);
  std::random_device device;  // as SeedSequence(None): 128 bits of entropy
  return joltgym::SeedWords{device(), device(), device(), device()};
}

// jg_pool_config.dtype: true for the float64 layout.
bool ParseDtype(const char* dtype) {
  if (dtype == nullptr || std::strcmp(dtype, "float32") == 0) return false;
  if (std::strcmp(dtype, "float64") == 0) return true;
  throw BadValue(std::string("dtype should be 'float32' (or NULL) or 'float64', got '") + dtype + "'");
}

jg_pool CreatePool(const char* task, int32_t num_envs, const jg_pool_config* config,
                   const std::vector<std::pair<std::string, JsonValue>>& kwargs) {
  RequirePointer(task, "task");
  DefaultAssetDir();
  if (num_envs < 1 || num_envs > joltgym::kMaxNumEnvs) {
    throw BadValue(joltgym::IntRangeMessage("num_envs", 1, joltgym::kMaxNumEnvs, num_envs < 1,
                                            std::to_string(num_envs)));
  }
  jg_pool_config c{0, 1000, nullptr, 0, nullptr};
  if (config != nullptr) c = *config;
  if (c.batch_size < 0 || c.batch_size > num_envs) {
    throw BadValue(joltgym::IntRangeMessage("batch_size", 1, num_envs, c.batch_size < 1,
                                            std::to_string(c.batch_size)) +
                   (c.batch_size < 0 ? " (or 0 for num_envs)" : ""));
  }
  const int batch_size = c.batch_size == 0 ? num_envs : c.batch_size;
  if (c.num_threads < 0) {
    throw BadValue(joltgym::IntRangeMessage("num_threads", 1, std::numeric_limits<int>::max(), true,
                                            std::to_string(c.num_threads)) +
                   " (or 0 for the default)");
  }
  const int threads = joltgym::PoolThreads(num_envs, c.num_threads);
  if (c.max_episode_steps < 0) {
    throw BadValue(joltgym::IntRangeMessage("max_episode_steps", 0, std::numeric_limits<int>::max(),
                                            true, std::to_string(c.max_episode_steps)));
  }
  const joltgym::AutoresetMode mode =
      joltgym::ParseAutoresetMode(c.autoreset_mode != nullptr ? c.autoreset_mode : "next_step");
  const bool float64 = ParseDtype(c.dtype);

  auto state = std::make_shared<PoolState>();
  state->name = task;
  const std::string owner = "WorldPool('" + state->name + "')";
  const joltgym::TaskInfo& info = joltgym::TaskRegistry::Get().Find(state->name);
  std::vector<JsonParamInput> inputs;
  inputs.reserve(kwargs.size());
  std::vector<std::pair<std::string, const joltgym::ParamInput*>> given;
  for (const auto& [key, value] : kwargs) inputs.emplace_back(value);
  for (std::size_t i = 0; i < kwargs.size(); ++i) given.emplace_back(kwargs[i].first, &inputs[i]);
  joltgym::ThreadConstructionReport().Clear();
  const joltgym::Params params = joltgym::ConvertTaskParams(info, given, owner);
  auto made = std::const_pointer_cast<joltgym::Task>(info.factory(params));
  made->SetEpisodeLimit(c.max_episode_steps);
  state->task = made;
  const joltgym::Task& t = *made;
  joltgym::CheckPoolFits(t, num_envs);

  const std::size_t n = static_cast<std::size_t>(num_envs), a = t.num_agents(), ad = t.act_dim();
  jg_dims& d = state->dims;
  d.num_envs = num_envs;
  d.num_agents = t.num_agents();
  d.obs_dim = t.obs_dim();
  d.act_dim = t.act_dim();
  d.info_width = t.info_layout().width();
  d.num_info_fields = static_cast<int32_t>(t.info_layout().fields().size());
  d.max_episode_steps = c.max_episode_steps;
  d.dt = t.dt();
  d.batch_size = batch_size;
  d.real_size = float64 ? 8 : 4;
  for (std::size_t j = 0; j < ad; ++j) {
    state->low.push_back(static_cast<float>(t.action_low()[j]));
    state->high.push_back(static_cast<float>(t.action_high()[j]));
  }
  state->sizes = SizesFor(n, t, float64);
  state->own = state->current = state->own_memory.Allocate(state->sizes);
  state->actions.assign(n * a * ad, 0.0f);
  state->staged.assign(n * a * ad, 0.0f);
  state->action_shape = {static_cast<long>(n), static_cast<long>(a), static_cast<long>(ad)};
  state->batch_size = batch_size;
  state->send_ids.assign(n, 0);
  state->send_checker = std::make_unique<joltgym::SendIdChecker>(num_envs);
  state->batch_sizes = SizesFor(static_cast<std::size_t>(batch_size), t, float64);
  state->batch_own = state->batch_current = state->batch_memory.Allocate(state->batch_sizes);
  state->batch_ids_own = Zeros<std::int32_t>(static_cast<std::size_t>(batch_size));
  state->batch_ids = state->batch_ids_own.get();

  state->pool = std::make_unique<joltgym::WorldPool>(made, num_envs, threads, c.max_episode_steps, mode);
  d.num_threads = state->pool->num_threads();
  state->pool->Bind(ToCore(state->own));
  // Warnings of compiling the model, then of creating the worlds, as Python
  // words them (RaiseConstructionWarnings, then the pool's reports).
  joltgym::MujocoReport& pending = joltgym::ThreadConstructionReport();
  std::vector<std::pair<int, joltgym::MujocoReport>> compiled(1);
  compiled[0].second.TakeWarnings(pending);
  pending.Clear();
  if (compiled[0].second.empty()) compiled.clear();
  Report(compiled, owner, "", false);
  Report(*state->pool, owner, "reset_all()");
  return Handles().Add(std::move(state));
}

template <typename T>
void CopyInto(T* target, const T* source, std::size_t count) {
  if (target != source) std::memcpy(target, source, sizeof(T) * count);
}

// The buffers to use next: each non-NULL field of `given` (holding `have`
// elements, at least `need`) replaces `own`'s; a field of the layout the pool
// does not use (need 0) must be NULL.
jg_buffers PickBuffers(jg_buffers next, const jg_buffers& given, const jg_buffer_sizes& have,
                       const jg_buffer_sizes& need) {
  const bool float64 = need.obs64 != 0;
  auto pick = [float64](auto given_field, auto own_field, std::size_t size, std::size_t required,
                        const char* name, const char* unit) {
    if (given_field == nullptr) return own_field;
    if (required == 0) {
      throw BadValue(std::string(name) + " buffer given to a pool of the " +
                     (float64 ? "float64" : "float32") + " layout; expected NULL (its " +
                     (float64 ? "obs64, reward64 and final_obs64" : "obs, reward and final_obs") +
                     " are used instead)");
    }
    if (size < required) {
      throw BadValue(std::string(name) + " buffer should hold at least " +
                     std::to_string(required) + " " + unit + ", got " + std::to_string(size));
    }
    return given_field;
  };
  next.obs = pick(given.obs, next.obs, have.obs, need.obs, "obs", "floats");
  next.reward = pick(given.reward, next.reward, have.reward, need.reward, "reward", "floats");
  next.terminated = pick(given.terminated, next.terminated, have.terminated, need.terminated,
                         "terminated", "bools");
  next.truncated = pick(given.truncated, next.truncated, have.truncated, need.truncated,
                        "truncated", "bools");
  next.info = pick(given.info, next.info, have.info, need.info, "info", "doubles");
  next.final_obs = pick(given.final_obs, next.final_obs, have.final_obs, need.final_obs,
                        "final_obs", "floats");
  next.final_info = pick(given.final_info, next.final_info, have.final_info, need.final_info,
                         "final_info", "doubles");
  next.reset_kind = pick(given.reset_kind, next.reset_kind, have.reset_kind, need.reset_kind,
                         "reset_kind", "bytes");
  next.unstable = pick(given.unstable, next.unstable, have.unstable, need.unstable, "unstable",
                       "bools");
  next.elapsed = pick(given.elapsed, next.elapsed, have.elapsed, need.elapsed, "elapsed",
                      "int32s");
  next.obs64 = pick(given.obs64, next.obs64, have.obs64, need.obs64, "obs64", "doubles");
  next.reward64 =
      pick(given.reward64, next.reward64, have.reward64, need.reward64, "reward64", "doubles");
  next.final_obs64 = pick(given.final_obs64, next.final_obs64, have.final_obs64, need.final_obs64,
                          "final_obs64", "doubles");
  return next;
}

// Copies the contents of buffers in use over to the ones that replace them.
void CopyBuffers(const jg_buffers& next, const jg_buffers& cur, const jg_buffer_sizes& n) {
  CopyInto(next.obs, cur.obs, n.obs);
  CopyInto(next.reward, cur.reward, n.reward);
  CopyInto(next.terminated, cur.terminated, n.terminated);
  CopyInto(next.truncated, cur.truncated, n.truncated);
  CopyInto(next.info, cur.info, n.info);
  CopyInto(next.final_obs, cur.final_obs, n.final_obs);
  CopyInto(next.final_info, cur.final_info, n.final_info);
  CopyInto(next.reset_kind, cur.reset_kind, n.reset_kind);
  CopyInto(next.unstable, cur.unstable, n.unstable);
  CopyInto(next.elapsed, cur.elapsed, n.elapsed);
  CopyInto(next.obs64, cur.obs64, n.obs64);
  CopyInto(next.reward64, cur.reward64, n.reward64);
  CopyInto(next.final_obs64, cur.final_obs64, n.final_obs64);
}

// `actions` of `shape` as the caller gave them: `count` values, not NULL.
void CheckActionCount(const float* actions, std::size_t count, const std::vector<long>& shape) {
  std::size_t expected = 1;
  for (const long d : shape) expected *= static_cast<std::size_t>(d);
  if (actions == nullptr || count != expected) {
    throw BadValue("actions should have shape " + joltgym::ShapeString(shape) + " (" +
                   std::to_string(expected) + " float32 values), got " +
                   (actions == nullptr ? std::string("NULL") : std::to_string(count) + " values"));
  }
}

constexpr const char* kResetHint = "reset_all() or reset_one(i)";

// reset_all(seed): the rule for worlds never seeded is WorldPool's.
void ResetAll(joltgym::WorldPool& p, int32_t has_seed, std::uint64_t seed) {
  const bool reseed = has_seed != 0;
  p.ResetAll(reseed, reseed || p.any_unseeded() ? Seed(has_seed, seed) : joltgym::SeedWords{});
  Report(p, "reset_all()");
}

}  // namespace

extern "C" {

uint32_t jg_abi_version(void) { return JG_ABI_VERSION; }
const char* jg_version(void) { return JOLTGYM_VERSION; }
const char* jg_mujoco_version(void) { return mj_versionString(); }

const char* jg_status_name(jg_status status) {
  switch (status) {
    case JG_OK: return "JG_OK";
    case JG_ERR_VALUE: return "JG_ERR_VALUE";
    case JG_ERR_TYPE: return "JG_ERR_TYPE";
    case JG_ERR_INDEX: return "JG_ERR_INDEX";
    case JG_ERR_STATE: return "JG_ERR_STATE";
    case JG_ERR_FILE_NOT_FOUND: return "JG_ERR_FILE_NOT_FOUND";
    case JG_ERR_MUJOCO: return "JG_ERR_MUJOCO";
    case JG_ERR_OUT_OF_MEMORY: return "JG_ERR_OUT_OF_MEMORY";
    case JG_ERR_HANDLE: return "JG_ERR_HANDLE";
    case JG_ERR_BUSY: return "JG_ERR_BUSY";
    case JG_ERR_NULL: return "JG_ERR_NULL";
    case JG_ERR_INTERNAL: return "JG_ERR_INTERNAL";
  }
  return "unknown status";
}

const char* jg_last_error(void) { return t_error.c_str(); }
const char* jg_last_warnings(void) { return t_warnings.c_str(); }

jg_status jg_set_asset_dir(const char* path) {
  return Guarded([&] {
    RequirePointer(path, "path");
    if (!IsDirectory(path)) throw joltgym::FileNotFound(std::string("asset folder '") + path + "' does not exist");
    DefaultAssetDir();  // so that a later default does not override it
    joltgym::SetAssetDir(path);
  });
}

jg_status jg_task_count(int32_t* count) {
  return Guarded([&] {
    RequirePointer(count, "count");
    *count = static_cast<int32_t>(GetRegistry().tasks.size());
  });
}

jg_status jg_task_name(int32_t index, const char** name) {
  return Guarded([&] {
    RequirePointer(name, "name");
    const Registry& r = GetRegistry();
    if (index < 0 || static_cast<std::size_t>(index) >= r.tasks.size()) {
      throw BadIndex("index should be in [0, " + std::to_string(r.tasks.size()) + "), got " +
                       std::to_string(index));
    }
    *name = r.tasks[index]->name.c_str();
  });
}

jg_status jg_task_info_get(const char* task, jg_task_info* out) {
  return Guarded([&] {
    RequirePointer(out, "info");
    const joltgym::TaskInfo& info = *GetRegistry().tasks[TaskIndex(task)];
    const bool single = info.kind == joltgym::TaskKind::kSingleAgent;
    *out = jg_task_info{info.name.c_str(),         single ? "single_agent" : "game",
                        info.title.c_str(),        info.env_id.c_str(),
                        info.reference_id.c_str(), info.agent_prefix.c_str(),
                        info.max_episode_steps,    static_cast<int32_t>(info.params.size()),
                        info.doc.c_str()};
  });
}

jg_status jg_task_param(const char* task, int32_t index, jg_param_info* out) {
  return Guarded([&] {
    RequirePointer(out, "param");
    const int t = TaskIndex(task);
    const Registry& r = GetRegistry();
    const joltgym::TaskInfo& info = *r.tasks[t];
    if (index < 0 || static_cast<std::size_t>(index) >= info.params.size()) {
      throw BadIndex("index should be in [0, " + std::to_string(info.params.size()) + "), got " +
                       std::to_string(index));
    }
    const joltgym::ParamSpec& p = info.params[index];
    *out = jg_param_info{p.name.c_str(), ParamKindName(p.kind), r.defaults[t][index].c_str(),
                         p.doc.c_str()};
  });
}

jg_status jg_tasks_json(const char** json) {
  return Guarded([&] {
    RequirePointer(json, "json");
    *json = GetRegistry().json.c_str();
  });
}

jg_status jg_pool_create(const char* task, int32_t num_envs, const jg_pool_config* config,
                         const char* const* keys, const char* const* values, int32_t num_kwargs,
                         jg_pool* pool) {
  return Guarded([&] {
    RequirePointer(pool, "pool");
    *pool = 0;
    if (num_kwargs < 0) {
      throw BadValue("num_kwargs should be >= 0, got " + std::to_string(num_kwargs));
    }
    if (num_kwargs > 0) {
      RequirePointer(keys, "keys");
      RequirePointer(values, "values");
    }
    std::vector<std::pair<std::string, JsonValue>> kwargs;
    for (int32_t i = 0; i < num_kwargs; ++i) {
      if (keys[i] == nullptr) throw NullError("keys[" + std::to_string(i) + "] should not be NULL");
      if (values[i] == nullptr) {
        throw NullError("values[" + std::to_string(i) + "] should not be NULL");
      }
      for (const auto& [seen, _] : kwargs) {
        if (seen == keys[i]) {
          throw BadType(std::string("WorldPool() got multiple values for keyword argument '") +
                        keys[i] + "'");
        }
      }
      kwargs.emplace_back(keys[i], joltgym::capi::ParseLoose(values[i]));
    }
    *pool = CreatePool(task, num_envs, config, kwargs);
  });
}

jg_status jg_pool_create_json(const char* task, int32_t num_envs, const jg_pool_config* config,
                              const char* kwargs_json, jg_pool* pool) {
  return Guarded([&] {
    RequirePointer(pool, "pool");
    *pool = 0;
    std::vector<std::pair<std::string, JsonValue>> kwargs;
    if (kwargs_json != nullptr) {
      JsonValue object = joltgym::capi::ParseJson(kwargs_json, "kwargs_json");
      if (object.kind != JsonValue::Kind::kObject) {
        throw BadType("kwargs_json should be a JSON object, got " + JsonParamInput(object).TypeName() +
                      " " + joltgym::capi::PythonRepr(object));
      }
      for (auto& [key, value] : object.members) {
        for (const auto& [seen, _] : kwargs) {
          if (seen == key) {
            throw BadType("WorldPool() got multiple values for keyword argument '" + key + "'");
          }
        }
        kwargs.emplace_back(key, std::move(value));
      }
    }
    *pool = CreatePool(task, num_envs, config, kwargs);
  });
}

jg_status jg_pool_close(jg_pool pool) {
  return Guarded([&] {
    std::shared_ptr<PoolState> state;
    try {
      state = Handles().Remove(pool);
    } catch (const StateError&) {
      throw StateError("WorldPool is already closed; expected an open pool (close each pool once)");
    }
    // Waits for a call in flight on another thread, then joins the workers.
    std::lock_guard<std::mutex> lock(state->mutex.Get());
    state->renderers.clear();
    state->pool.reset();
  });
}

jg_status jg_pool_dims(jg_pool pool, jg_dims* dims) {
  return Guarded([&] {
    RequirePointer(dims, "dims");
    *dims = Handles().Get(pool)->dims;
  });
}

jg_status jg_pool_action_bounds(jg_pool pool, float* low, float* high, size_t count) {
  return Guarded([&] {
    const auto state = Handles().Get(pool);
    RequirePointer(low, "low");
    RequirePointer(high, "high");
    if (count != state->low.size()) {
      throw BadValue("count should be act_dim = " + std::to_string(state->low.size()) + ", got " +
                     std::to_string(count));
    }
    std::copy(state->low.begin(), state->low.end(), low);
    std::copy(state->high.begin(), state->high.end(), high);
  });
}

jg_status jg_pool_info_field(jg_pool pool, int32_t index, jg_info_field* field) {
  return Guarded([&] {
    const auto state = Handles().Get(pool);
    RequirePointer(field, "field");
    const auto& fields = state->task->info_layout().fields();
    if (index < 0 || static_cast<std::size_t>(index) >= fields.size()) {
      throw BadIndex("index should be in [0, " + std::to_string(fields.size()) + "), got " +
                       std::to_string(index));
    }
    const joltgym::InfoField& f = fields[index];
    *field = jg_info_field{f.name.c_str(), f.offset, f.size, f.at_reset ? 1 : 0,
                           static_cast<int32_t>(f.kind), static_cast<int32_t>(f.labels.size())};
  });
}

jg_status jg_pool_info_label(jg_pool pool, int32_t field, int32_t label, const char** text) {
  return Guarded([&] {
    const auto state = Handles().Get(pool);
    RequirePointer(text, "text");
    const auto& fields = state->task->info_layout().fields();
    if (field < 0 || static_cast<std::size_t>(field) >= fields.size()) {
      throw BadIndex("field should be in [0, " + std::to_string(fields.size()) + "), got " +
                       std::to_string(field));
    }
    const auto& labels = fields[field].labels;
    if (label < 0 || static_cast<std::size_t>(label) >= labels.size()) {
      throw BadIndex("label should be in [0, " + std::to_string(labels.size()) + "), got " +
                       std::to_string(label));
    }
    *text = labels[label].c_str();
  });
}

jg_status jg_pool_buffers(jg_pool pool, jg_buffers* buffers) {
  return Guarded([&] {
    const auto state = Handles().Get(pool);
    RequirePointer(buffers, "buffers");
    const auto lock = Enter(*state, "jg_pool_buffers()");
    *buffers = state->current;
  });
}

jg_status jg_pool_use_buffers(jg_pool pool, const jg_buffers* buffers, const jg_buffer_sizes* sizes) {
  return Guarded([&] {
    const auto state = Handles().Get(pool);
    if (buffers != nullptr) RequirePointer(sizes, "sizes");
    const auto lock = Enter(*state, "jg_pool_use_buffers()");
    const std::string busy = joltgym::WorkInFlightMessage(*state->pool, "jg_pool_use_buffers()");
    if (!busy.empty()) throw StateError(busy);
    const jg_buffers next =
        buffers != nullptr ? PickBuffers(state->own, *buffers, *sizes, state->sizes) : state->own;
    CopyBuffers(next, state->current, state->sizes);
    state->pool->Bind(ToCore(next));
    state->current = next;
  });
}

jg_status jg_pool_reset(jg_pool pool, int32_t has_seed, uint64_t seed) {
  return Guarded([&] {
    const auto state = Handles().Get(pool);
    const auto lock = Enter(*state, "reset_all()");
    ResetAll(*state->pool, has_seed, seed);
  });
}

jg_status jg_pool_reset_one(jg_pool pool, int32_t index, int32_t has_seed, uint64_t seed) {
  return Guarded([&] {
    const auto state = Handles().Get(pool);
    const auto lock = Enter(*state, "reset_one()");
    joltgym::WorldPool& p = *state->pool;
    if (index < 0 || index >= p.num_envs()) {
      throw BadIndex("index should be in [0, " + std::to_string(p.num_envs()) + "), got " +
                     std::to_string(index));
    }
    if (p.in_flight(index)) throw StateError(joltgym::InFlightMessage("reset_one()", index));
    const bool reseed = has_seed != 0;
    p.ResetOne(index, reseed,
               reseed || !p.seeded(index) ? Seed(has_seed, seed) : joltgym::SeedWords{});
    Report(p, "reset_one()");
  });
}

jg_status jg_pool_step(jg_pool pool, const float* actions, size_t count) {
  return Guarded([&] {
    const auto state = Handles().Get(pool);
    const auto lock = Enter(*state, "step_all()");
    joltgym::WorldPool& p = *state->pool;
    CheckActionCount(actions, count, state->action_shape);
    // Checked as copied; never into the rows the workers read for worlds in
    // flight (this step is refused then).
    float* target = p.in_flight() > 0 ? state->staged.data() : state->actions.data();
    joltgym::CopyFinite(actions, target, count, state->action_shape, "actions");
    const std::string blocked = joltgym::NotSteppableMessage(p, "step_all()");
    if (!blocked.empty()) throw StateError(blocked);
    p.StepAll(state->actions.data());
    Report(p, "step_all()");
  });
}

jg_status jg_pool_send(jg_pool pool, const float* actions, size_t count, const int32_t* env_ids,
                       size_t num_ids) {
  return Guarded([&] {
    const auto state = Handles().Get(pool);
    const auto lock = Enter(*state, "send()");
    joltgym::WorldPool& p = *state->pool;
    const long n = p.num_envs();
    // (a huge size_t, such as a negative count converted, reads as negative)
    joltgym::CheckSendCount(static_cast<long long>(num_ids), n);
    RequirePointer(env_ids, "env_ids");
    const std::vector<long> shape{static_cast<long>(num_ids), state->action_shape[1],
                                  state->action_shape[2]};
    CheckActionCount(actions, count, shape);
    int* ids = state->send_ids.data();
    for (std::size_t k = 0; k < num_ids; ++k) {
      ids[k] = joltgym::CheckSendId(env_ids[k], static_cast<long long>(k), n);
    }
    joltgym::CopyFinite(actions, state->staged.data(), count, shape, "actions");
    const int num = static_cast<int>(num_ids);
    state->send_checker->Check(p, ids, num);
    const std::size_t row = static_cast<std::size_t>(shape[1] * shape[2]);
    for (int k = 0; k < num; ++k) {
      std::memcpy(state->actions.data() + static_cast<std::size_t>(ids[k]) * row,
                  state->staged.data() + static_cast<std::size_t>(k) * row, sizeof(float) * row);
    }
    p.Send(state->actions.data(), ids, num);
  });
}

jg_status jg_pool_recv(jg_pool pool, int32_t** env_ids, jg_buffers* batch) {
  return Guarded([&] {
    const auto state = Handles().Get(pool);
    const auto lock = Enter(*state, "recv()");
    joltgym::WorldPool& p = *state->pool;
    const std::string blocked = joltgym::NotReceivableMessage(p, state->batch_size);
    if (!blocked.empty()) throw StateError(blocked);
    static_assert(sizeof(int) == sizeof(std::int32_t), "world ids are int32");
    int* ids = reinterpret_cast<int*>(state->batch_ids);
    p.Recv(ids, state->batch_size, ToCore(state->batch_current));
    if (env_ids != nullptr) *env_ids = state->batch_ids;
    if (batch != nullptr) *batch = state->batch_current;
    // MuJoCo's reports of the received worlds (after the out-parameters are
    // set: a failed world is received all the same).
    std::vector<std::pair<int, joltgym::MujocoReport>> reports;
    p.TakeReportsOf(ids, state->batch_size, reports);
    Report(reports, "recv()", kResetHint, true);
  });
}

jg_status jg_pool_async_reset(jg_pool pool, int32_t has_seed, uint64_t seed) {
  return Guarded([&] {
    const auto state = Handles().Get(pool);
    const auto lock = Enter(*state, "async_reset()");
    ResetAll(*state->pool, has_seed, seed);
    state->pool->SendReset();
  });
}

jg_status jg_pool_in_flight(jg_pool pool, int32_t* count) {
  return Guarded([&] {
    const auto state = Handles().Get(pool);
    RequirePointer(count, "count");
    const auto lock = Enter(*state, "jg_pool_in_flight()");
    *count = state->pool->in_flight();
  });
}

jg_status jg_pool_batch_buffers(jg_pool pool, int32_t** env_ids, jg_buffers* batch) {
  return Guarded([&] {
    const auto state = Handles().Get(pool);
    const auto lock = Enter(*state, "jg_pool_batch_buffers()");
    if (env_ids != nullptr) *env_ids = state->batch_ids;
    if (batch != nullptr) *batch = state->batch_current;
  });
}

jg_status jg_pool_use_batch_buffers(jg_pool pool, int32_t* env_ids, size_t env_ids_count,
                                    const jg_buffers* batch, const jg_buffer_sizes* sizes) {
  return Guarded([&] {
    const auto state = Handles().Get(pool);
    if (batch != nullptr) RequirePointer(sizes, "sizes");
    const auto lock = Enter(*state, "jg_pool_use_batch_buffers()");
    const auto bs = static_cast<std::size_t>(state->batch_size);
    if (env_ids != nullptr && env_ids_count < bs) {
      throw BadValue("env_ids buffer should hold at least " + std::to_string(bs) +
                     " int32s, got " + std::to_string(env_ids_count));
    }
    const jg_buffers next = batch != nullptr
                                ? PickBuffers(state->batch_own, *batch, *sizes, state->batch_sizes)
                                : state->batch_own;
    std::int32_t* ids = env_ids != nullptr ? env_ids : state->batch_ids_own.get();
    CopyBuffers(next, state->batch_current, state->batch_sizes);
    CopyInto(ids, state->batch_ids, bs);
    state->batch_current = next;
    state->batch_ids = ids;
  });
}

jg_status jg_pool_render(jg_pool pool, int32_t index, const jg_render_config* config, uint8_t* rgb,
                         size_t size) {
  return Guarded([&] {
    const auto state = Handles().Get(pool);
    RequirePointer(config, "config");
    RequirePointer(rgb, "rgb");
    const auto lock = Enter(*state, "render()");
    joltgym::WorldPool& p = *state->pool;
    if (index < 0 || index >= p.num_envs()) {
      throw BadIndex("index should be in [0, " + std::to_string(p.num_envs()) + "), got " +
                     std::to_string(index));
    }
    const joltgym::Task& task = *state->task;
    if (task.num_agents() != 1) {
      throw BadValue("render() from the C API draws the single-agent robots as Gymnasium's rgb_array does; " +
                     state->name + " is a game (render it from Python: parallel_env(render_mode=\"rgb_array\"))");
    }
    if (p.in_flight(index)) throw StateError(joltgym::InFlightMessage("render()", index));
    const std::string camera_name = config->camera_name != nullptr ? config->camera_name : "";
    const auto expected = static_cast<std::size_t>(std::max(config->width, 0)) *
                          static_cast<std::size_t>(std::max(config->height, 0)) * 3;
    if (config->width >= 1 && config->height >= 1 && size != expected) {
      throw BadValue("rgb should hold height * width * 3 = " + std::to_string(expected) + " bytes, got " +
                     std::to_string(size));
    }
    auto& renderers = state->renderers;
    if (renderers.size() < static_cast<std::size_t>(p.num_envs())) renderers.resize(static_cast<std::size_t>(p.num_envs()));
    auto& renderer = renderers[static_cast<std::size_t>(index)];
    if (!renderer || !renderer->Matches(config->width, config->height, config->camera_id, camera_name)) {
      renderer.reset();
      renderer = std::make_unique<joltgym::capi::FrameRenderer>(task.model(), state->name, config->width,
                                                                 config->height, config->camera_id, camera_name);
    }
    renderer->Render(p.world(index).data(), rgb);
  });
}

}  // extern "C"
