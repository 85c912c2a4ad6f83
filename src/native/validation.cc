#include "validation.h"

#include <sched.h>
#include <sys/resource.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>
#include <thread>

#include "errors.h"
#include "mujoco_errors.h"

namespace joltgym {

namespace {

double RealOrThrow(const ParamInput& value, const std::string& what, bool allow_infinite) {
  if (!value.IsReal()) {
    throw BadType(what + " should be a real number, got " + value.TypeName() + " " + value.Repr());
  }
  const double x = value.Real();
  if (std::isnan(x) || (!allow_infinite && std::isinf(x))) {
    throw BadValue(what + " should be a finite number, got " + value.Repr());
  }
  return x;
}

// A real parameter value (or one end of a range) within the spec's bounds;
// `end` is 0 / 1 for a range's low / high end (which may also be -inf / +inf),
// -1 otherwise.
double CheckBounds(double x, const ParamInput& value, const std::string& what,
                   const ParamSpec& spec, int end) {
  if (end == 0 && x == -std::numeric_limits<double>::infinity()) return x;
  if (end == 1 && x == std::numeric_limits<double>::infinity()) return x;
  if (x >= spec.min_real && x <= spec.max_real) return x;
  const std::string interval = IntervalString(spec.min_real, spec.max_real);
  const std::string allowed = end == 0   ? "-inf or in " + interval
                              : end == 1 ? "in " + interval + " or inf"
                                         : "in " + interval;
  throw BadValue(what + " should be " + allowed + ", got " + value.Repr());
}

}  // namespace

std::string IntervalString(double low, double high) {
  std::ostringstream out;
  out << "[" << low << ", " << high << "]";
  return out.str();
}

std::string ShapeString(const std::vector<long>& shape) {
  std::ostringstream out;
  out << "(";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    out << shape[i];
    if (shape.size() == 1 || i + 1 < shape.size()) out << (i + 1 < shape.size() ? ", " : ",");
  }
  out << ")";
  return out.str();
}

std::string IntRangeMessage(const std::string& what, long minimum, long maximum, bool too_small,
                            const std::string& repr) {
  // ">= min" reads best for the usual mistake; a value over the (large)
  // maximum gets the full range.
  const std::string range = too_small && maximum >= std::numeric_limits<int>::max()
                                ? ">= " + std::to_string(minimum)
                                : "in [" + std::to_string(minimum) + ", " +
                                      std::to_string(maximum) + "]";
  return what + " should be " + range + ", got " + repr;
}

long CheckInt(const ParamInput& value, const std::string& what, long minimum, long maximum) {
  if (!value.IsInteger()) {
    throw BadType(what + " should be an int, got " + value.TypeName() + " " + value.Repr());
  }
  const bool too_small = value.CompareInt(minimum) < 0;
  if (too_small || value.CompareInt(maximum) > 0) {
    throw BadValue(IntRangeMessage(what, minimum, maximum, too_small, value.Repr()));
  }
  return value.Int();
}

Params ConvertTaskParams(const TaskInfo& info,
                         const std::vector<std::pair<std::string, const ParamInput*>>& kwargs,
                         const std::string& owner) {
  if (info.engines.size() > 1) return ConvertParams(info.params, kwargs, owner);
  std::vector<std::pair<std::string, const ParamInput*>> rest;
  for (const auto& [name, input] : kwargs) {
    if (name != "engine") {
      rest.emplace_back(name, input);
      continue;
    }
    if (!input->IsText()) throw BadType("engine should be a str, got " + input->TypeName() + " " + input->Repr());
    RequireEngine(info, input->Text());
  }
  return ConvertParams(info.params, rest, owner);
}

Params ConvertParams(const std::vector<ParamSpec>& specs,
                     const std::vector<std::pair<std::string, const ParamInput*>>& kwargs,
                     const std::string& owner) {
  std::map<std::string, ParamValue> given;
  for (const auto& [name, input] : kwargs) {
    const ParamSpec* spec = nullptr;
    for (const auto& s : specs) {
      if (s.name == name) spec = &s;
    }
    if (spec == nullptr) {
      std::ostringstream msg;
      msg << owner << " got an unexpected keyword argument '" << ClipMiddle(name) << "'; allowed:";
      for (std::size_t i = 0; i < specs.size(); ++i) msg << (i ? ", " : " ") << specs[i].name;
      throw BadType(msg.str());
    }
    const ParamInput& value = *input;
    ParamValue out;
    switch (spec->kind) {
      case ParamKind::kFloat:
        out.numbers = {CheckBounds(RealOrThrow(value, name, false), value, name, *spec, -1)};
        break;
      case ParamKind::kOptionalFloat:
        out.numbers = {value.IsNone()
                           ? std::nan("")
                           : CheckBounds(RealOrThrow(value, name, false), value, name, *spec, -1)};
        break;
      case ParamKind::kInt:
        out.numbers = {static_cast<double>(CheckInt(value, name, spec->min_int, spec->max_int))};
        break;
      case ParamKind::kBool:
        if (!value.IsBool()) {
          throw BadType(name + " should be a bool, got " + value.TypeName() + " " + value.Repr());
        }
        out.numbers = {value.Bool() ? 1.0 : 0.0};
        break;
      case ParamKind::kRange: {
        if (!value.IsSequence() || value.Length() != 2) {
          throw BadType(name + " should be a (low, high) pair of numbers, got " + value.Repr());
        }
        const auto first = value.Item(0), second = value.Item(1);
        const double low =
            CheckBounds(RealOrThrow(*first, name + "[0]", true), *first, name + "[0]", *spec, 0);
        const double high =
            CheckBounds(RealOrThrow(*second, name + "[1]", true), *second, name + "[1]", *spec, 1);
        if (!(low <= high)) {
          throw BadValue(name + " should have low <= high, got " + value.Repr());
        }
        out.numbers = {low, high};
        break;
      }
      case ParamKind::kString:
        if (!value.IsPath()) {
          // (A file may be given as a path object; the others are names.)
          const bool file = name.size() > 5 && name.compare(name.size() - 5, 5, "_file") == 0;
          throw BadType(name + (file ? " should be a str or path, got " : " should be a str, got ") +
                        value.TypeName() + " " + value.Repr());
        }
        out.text = value.Text();
        out.is_text = true;
        break;
      case ParamKind::kBodyRef:
        if (value.IsText()) {
          out.text = value.Text();
          out.is_text = true;
        } else if (value.IsInteger()) {
          out.numbers = {static_cast<double>(CheckInt(value, name, -(1L << 30), 1L << 30))};
        } else {
          throw BadType(name + " should be a body index (int) or name (str), got " +
                        value.TypeName() + " " + value.Repr());
        }
        break;
    }
    given[name] = std::move(out);
  }
  return Params(specs, std::move(given));
}

void CopyFinite(const float* source, float* target, std::size_t count,
                const std::vector<long>& shape, const char* what) {
  std::copy(source, source + count, target);
  for (std::size_t k = 0; k < count; ++k) {
    if (std::isfinite(target[k])) continue;
    std::vector<long> index(shape.size());
    auto flat = static_cast<long>(k);
    for (std::size_t d = shape.size(); d-- > 0;) {
      index[d] = flat % shape[d];
      flat /= shape[d];
    }
    std::ostringstream msg;
    msg << what << " should be finite, got " << target[k] << " at index " << ShapeString(index);
    throw BadValue(msg.str());
  }
}

void CopyFinite(const double* source, double* target, std::size_t count, const char* what) {
  std::copy(source, source + count, target);
  for (std::size_t k = 0; k < count; ++k) {
    if (!std::isfinite(target[k])) {
      throw BadValue(std::string(what) + " should be finite, got " + std::to_string(target[k]) +
                     " at index " + std::to_string(k));
    }
  }
}

namespace {

// One world's bytes in a pool: `resident`, what it touches (its mjData's main
// buffer, which mj_resetData clears, and the pool's and a front end's
// per-world buffers, 2x), and `mapped`, what it reserves (the arena too,
// which MuJoCo allocates whole but whose pages stay untouched until used:
// Humanoid's is 14 MiB, of which a step uses a few hundred KiB).
struct WorldBytes {
  std::uint64_t resident;
  std::uint64_t mapped;
};

WorldBytes BytesOfWorld(const Task& task) {
  const mjModel* m = task.model();
  std::uint64_t buffer = 0, arena = static_cast<std::uint64_t>(m->narena);
  // Inside a guard, as every MuJoCo call: under memory pressure (the very case
  // this estimate is for) mj_makeData's failure is MuJoCo's error, whose
  // default handler ends the process.
  MujocoReport report;
  GuardMujoco([&] {
    if (mjData* d = mj_makeData(m)) {
      buffer = static_cast<std::uint64_t>(d->nbuffer);
      arena = static_cast<std::uint64_t>(d->narena);
      mj_deleteData(d);
    }
  }, &report);
  const std::uint64_t a = static_cast<std::uint64_t>(task.num_agents());
  const std::uint64_t floats = a * (2 * static_cast<std::uint64_t>(task.obs_dim()) +
                                    3 * static_cast<std::uint64_t>(task.act_dim()) + 1);
  const std::uint64_t doubles = a * 2 * static_cast<std::uint64_t>(task.info_layout().width()) +
                                static_cast<std::uint64_t>(task.scratch_size());
  const std::uint64_t buffers = 4 * floats + 8 * doubles + 2 * a + 64;
  const std::uint64_t resident = sizeof(mjData) + buffer + 2 * buffers + 512;  // + the World object
  return {resident, resident + arena};
}

}  // namespace

std::uint64_t BytesPerWorld(const Task& task) { return BytesOfWorld(task).resident; }

namespace {

std::uint64_t ReadNumber(const char* path) {  // a file holding one number, or UINT64_MAX
  std::ifstream in(path);
  std::string text;
  if (!(in >> text) || text.empty() || !std::isdigit(static_cast<unsigned char>(text[0]))) {
    return std::numeric_limits<std::uint64_t>::max();
  }
  return std::strtoull(text.c_str(), nullptr, 10);
}

std::uint64_t MemInfo(const std::string& key) {  // /proc/meminfo's `key` in bytes, or UINT64_MAX
  std::ifstream in("/proc/meminfo");
  std::string name;
  std::uint64_t kib = 0;
  std::string unit;
  while (in >> name >> kib) {
    std::getline(in, unit);
    if (name == key + ":") return kib * 1024;
  }
  return std::numeric_limits<std::uint64_t>::max();
}

std::uint64_t MappedBytes() {  // this process's virtual size (VmSize), or 0
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.compare(0, 7, "VmSize:") == 0) return std::strtoull(line.c_str() + 7, nullptr, 10) * 1024;
  }
  return 0;
}

constexpr std::uint64_t kUnknown = std::numeric_limits<std::uint64_t>::max();

// Memory the process may still fill: MemAvailable with free swap, and the
// cgroup's memory.max less its usage.
std::uint64_t AvailablePhysical() {
  std::uint64_t available = kUnknown;
  const std::uint64_t mem = MemInfo("MemAvailable");
  if (mem != kUnknown) {
    const std::uint64_t swap = MemInfo("SwapFree");
    available = mem + (swap == kUnknown ? 0 : swap);
  }
  const std::uint64_t cgroup_max = ReadNumber("/sys/fs/cgroup/memory.max");
  if (cgroup_max != kUnknown) {
    const std::uint64_t used = ReadNumber("/sys/fs/cgroup/memory.current");
    available = std::min(available, used != kUnknown && cgroup_max > used ? cgroup_max - used : 0);
  }
  return available;
}

// Address space the process may still map: RLIMIT_AS less what is mapped.
std::uint64_t AvailableAddressSpace() {
  struct rlimit limit{};
  if (getrlimit(RLIMIT_AS, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return kUnknown;
  const std::uint64_t cap = static_cast<std::uint64_t>(limit.rlim_cur);
  const std::uint64_t mapped = MappedBytes();
  return cap > mapped ? cap - mapped : 0;
}

}  // namespace

std::uint64_t AvailableMemory() { return std::min(AvailablePhysical(), AvailableAddressSpace()); }

void CheckPoolFits(const Task& task, long num_envs) {
  // What the worlds touch against the memory left, and what they map
  // against the address space left (RLIMIT_AS counts untouched pages too).
  const WorldBytes bytes = BytesOfWorld(task);
  const std::uint64_t n = static_cast<std::uint64_t>(num_envs);
  const std::uint64_t physical = AvailablePhysical(), address_space = AvailableAddressSpace();
  const bool by_space = bytes.mapped * n > address_space;
  if (bytes.resident * n <= physical && !by_space) return;
  const std::uint64_t per_world = by_space ? bytes.mapped : bytes.resident;
  const std::uint64_t needed = per_world * n;
  const std::uint64_t available = by_space ? address_space : physical;
  auto mib = [](std::uint64_t count) {
    std::ostringstream out;
    out.precision(count >= (10ULL << 20) ? 0 : 2);
    out << std::fixed << static_cast<double>(count) / (1 << 20) << " MiB";
    return out.str();
  };
  // The out-of-memory error (Python's MemoryError, JG_ERR_OUT_OF_MEMORY),
  // raised before anything is allocated.
  throw MujocoError("num_envs=" + std::to_string(num_envs) + " needs about " + mib(needed) + " (" +
                        mib(per_world) + " per world of this task), more than the " + mib(available) +
                        " this process can still allocate; expected at most " +
                        std::to_string(per_world > 0 ? available / per_world : 0) + " worlds",
                    /*out_of_memory=*/true);
}

AutoresetMode ParseAutoresetMode(const std::string& name) {
  if (name == "next_step") return AutoresetMode::kNextStep;
  if (name == "same_step") return AutoresetMode::kSameStep;
  throw BadValue("autoreset_mode should be 'next_step' or 'same_step', got '" + name + "'");
}

int AvailableCpus() {
#if defined(__linux__)
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return std::max(1, CPU_COUNT(&set));
#endif
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

int PoolThreads(int num_envs, int requested) {
  int threads = AvailableCpus();
  if (requested > 0) threads = std::min(threads, requested);
  return std::max(1, std::min(threads, num_envs));
}

std::string LostWorldMessage(const std::string& call, int index) {
  return call + " called on world " + std::to_string(index) +
         ", which was in flight when this process forked (its step was lost); expected "
         "reset_all() or reset_one(" + std::to_string(index) + ") first";
}

std::string InFlightMessage(const std::string& call, int index) {
  return call + " called on world " + std::to_string(index) +
         ", which is in flight (sent, not yet received); expected recv() to return it first";
}

std::string WorkInFlightMessage(const WorldPool& pool, const std::string& call) {
  const int in_flight = pool.in_flight();
  if (in_flight == 0) return "";
  return call + " called while " + std::to_string(in_flight) +
         " worlds are in flight (sent, not yet received); expected recv() until none are (or "
         "reset_all(), which waits for them and drops their results)";
}

std::string NotSteppableMessage(const WorldPool& pool, const std::string& call) {
  std::string busy = WorkInFlightMessage(pool, call);
  if (!busy.empty()) return busy;
  const int i = pool.FirstNotSteppable();
  if (i < 0) return "";
  if (pool.lost(i)) return LostWorldMessage(call, i);
  if (pool.world(i).interrupted()) {
    return call + " called after world " + std::to_string(i) +
           "'s step was interrupted half-way (a signal handler raised during it); expected "
           "reset_all() or reset_one(" + std::to_string(i) + ") first";
  }
  if (pool.world(i).failed()) {
    return call + " called after a MuJoCo error in world " + std::to_string(i) +
           "; expected reset_all() or reset_one(" + std::to_string(i) + ") first";
  }
  return call + " called before reset_all(); expected reset_all() first";
}

std::string ClipRepr(const std::string& repr) {
  return repr.size() > 80 ? repr.substr(0, 77) + "..." : repr;
}

void CheckSendCount(long long count, long num_envs) {
  if (count < 1 || count > num_envs) {
    throw BadValue("env_ids should hold 1 to " + std::to_string(num_envs) +
                   " distinct world ids, got " + std::to_string(count));
  }
}

int CheckSendId(long long id, long long position, long num_envs) {
  if (id < 0 || id >= num_envs) {
    throw BadIndex("env_ids should be in [0, " + std::to_string(num_envs) + "), got " +
                   std::to_string(id) + " at position " + std::to_string(position));
  }
  return static_cast<int>(id);
}

std::string NotSendableMessage(const WorldPool& pool, int index) {
  const World& world = pool.world(index);
  if (!pool.in_flight(index) && !pool.lost(index) && !world.failed() && world.has_episode()) {
    return "";
  }
  const std::string i = std::to_string(index);
  if (pool.in_flight(index)) {
    return "send() called on world " + i +
           ", which is still in flight (sent, not yet received); expected recv() to return it "
           "first";
  }
  if (pool.lost(index)) return LostWorldMessage("send()", index);
  if (world.failed()) {
    return "send() called on world " + i + " after a MuJoCo error in it; expected reset_all() or "
           "reset_one(" + i + ") first";
  }
  return "send() called on world " + i +
         " before it was reset; expected reset_all() or async_reset() first";
}

std::string IdsRepr(const int* ids, std::size_t count) {
  std::string out = "[";
  for (std::size_t k = 0; k < count && out.size() <= 80; ++k) {
    out += (k > 0 ? ", " : "") + std::to_string(ids[k]);
  }
  return ClipRepr(out + "]");
}

void SendIdChecker::Check(const WorldPool& pool, const int* ids, int count) {
  ++serial_;
  for (int k = 0; k < count; ++k) {
    const int i = ids[k];
    if (stamp_[i] == serial_) {
      throw BadValue("env_ids should be distinct, got world " + std::to_string(i) + " twice in " +
                     IdsRepr(ids, static_cast<std::size_t>(count)));
    }
    stamp_[i] = serial_;
    const std::string blocked = NotSendableMessage(pool, i);
    if (!blocked.empty()) throw StateError(blocked);
  }
}

std::string NotReceivableMessage(const WorldPool& pool, int batch_size) {
  const int in_flight = pool.in_flight();
  if (in_flight == 0) {
    int lost = 0;
    for (int i = 0; i < pool.num_envs(); ++i) lost += pool.lost(i) ? 1 : 0;
    if (lost > 0) {
      return "recv() called with no worlds in flight: the " + std::to_string(lost) +
             " worlds in flight when this process forked were lost (their steps ran in the "
             "parent); expected reset_all() (or async_reset()) first";
    }
    return "recv() called with no worlds in flight; expected send(actions, env_ids) (or "
           "async_reset()) first";
  }
  if (in_flight < batch_size) {
    return "recv() waits for batch_size=" + std::to_string(batch_size) + " worlds, but only " +
           std::to_string(in_flight) + " are in flight; expected send() of at least " +
           std::to_string(batch_size - in_flight) + " more first";
  }
  return "";
}

}  // namespace joltgym
