// Checks of what a user passes, shared by every front end of the core (the
// Python binding and the C API): keyword arguments against a task's
// ParamSpecs, pool settings, action arrays. One implementation, one set of
// messages: a C caller reads the words a Python caller's exception carries.
//
// Failures throw BadType (Python TypeError), BadValue (ValueError) or
// StateError (RuntimeError), see errors.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "errors.h"
#include "params.h"
#include "world_pool.h"

namespace joltgym {

// "[-1e+06, 1e+06]" for error messages.
std::string IntervalString(double low, double high);

// "(64, 6)" (and "(3,)") for error messages.
std::string ShapeString(const std::vector<long>& shape);

// "<what> should be >= <minimum>, got <repr>" or "... should be in [min, max],
// got <repr>": the message of an integer outside [minimum, maximum].
std::string IntRangeMessage(const std::string& what, long minimum, long maximum, bool too_small,
                            const std::string& repr);

// One keyword-argument value as a front end received it (a Python object, a
// JSON value), seen through the questions ConvertParams asks. Repr() and
// TypeName() are Python's spelling ("'ant.xml'", "str"), which the C API
// mimics so that messages read the same.
class ParamInput {
 public:
  virtual ~ParamInput() = default;
  virtual bool IsNone() const = 0;
  virtual bool IsBool() const = 0;
  virtual bool IsInteger() const = 0;  // an integer, not a bool
  virtual bool IsReal() const = 0;     // an integer or a float, not a bool
  virtual bool IsText() const = 0;     // a string
  virtual bool IsPath() const = 0;     // a string or a path (os.PathLike)
  virtual bool IsSequence() const = 0; // a sequence other than a string
  virtual std::size_t Length() const = 0;                     // IsSequence only
  virtual std::unique_ptr<ParamInput> Item(std::size_t i) const = 0;  // IsSequence only
  virtual double Real() const = 0;        // IsReal only
  virtual bool Bool() const = 0;          // IsBool only
  // -1, 0 or 1 as the integer is below, equal to or above `bound` (the value
  // may not fit in a long). IsInteger only.
  virtual int CompareInt(long bound) const = 0;
  virtual long Int() const = 0;           // IsInteger, within a long
  virtual std::string Text() const = 0;   // IsPath: the string or the path
  virtual std::string Repr() const = 0;
  virtual std::string TypeName() const = 0;
};

// Converts keyword arguments to task parameters. Unknown names raise BadType
// listing the allowed ones; wrong kinds raise BadType; bad values BadValue,
// among them real values outside the spec's bounds (by default finite with
// |x| <= kMaxRealParam; a range's ends may also be -inf / +inf: see
// params.h), naming the parameter, the value and the allowed range. `owner`
// names the callee in messages ("WorldPool('ant')").
Params ConvertParams(const std::vector<ParamSpec>& specs,
                     const std::vector<std::pair<std::string, const ParamInput*>>& kwargs,
                     const std::string& owner);

// ConvertParams for a task's own parameters, every front end's one door: a
// task that runs on MuJoCo only has no `engine` parameter, and still takes
// engine='mujoco' (RequireEngine answers any other engine), as the Python
// envs do: the C API refused it as an unknown keyword.
Params ConvertTaskParams(const TaskInfo& info,
                         const std::vector<std::pair<std::string, const ParamInput*>>& kwargs,
                         const std::string& owner);

// An integer argument in [minimum, maximum], or BadType / BadValue.
long CheckInt(const ParamInput& value, const std::string& what, long minimum, long maximum);

// Copies `count` floats into native memory, raising BadValue at the first
// non-finite value *of the copy* (what the native side reads is what was
// checked, even if another thread writes into the source meanwhile). `shape`
// (of the source) locates the bad value in the message.
void CopyFinite(const float* source, float* target, std::size_t count,
                const std::vector<long>& shape, const char* what);
void CopyFinite(const double* source, double* target, std::size_t count, const char* what);

// --- pool settings ------------------------------------------------------------

// The most worlds one pool may hold.
inline constexpr long kMaxNumEnvs = 1L << 20;

// The bytes one world of `task` fills in a pool: its mjData's main buffer (as
// MuJoCo sizes it for this model) and the pool's own per-world state and
// buffers (observations, final observations, infos, actions, ...), of the
// core and of a front end's copies (2x). Its arena, which MuJoCo reserves
// whole but touches only as a step needs, counts against RLIMIT_AS only.
std::uint64_t BytesPerWorld(const Task& task);

// The bytes this process may still allocate, as far as the system tells:
// the least of the memory available (MemAvailable, with free swap), the
// address-space limit (RLIMIT_AS) less what is mapped, and the cgroup's
// memory limit less its usage. UINT64_MAX if nothing could be read.
std::uint64_t AvailableMemory();

// Refuses (MujocoError with out_of_memory(): Python's MemoryError, the C
// API's JG_ERR_OUT_OF_MEMORY; with the figures) a pool of `num_envs` worlds
// of `task` that cannot fit: the bytes they fill beyond the memory left, or
// the bytes they map (arenas included) beyond RLIMIT_AS. A clean error
// instead of a MemoryError half-way, or the kernel's OOM killer.
void CheckPoolFits(const Task& task, long num_envs);

// "next_step" / "same_step", or BadValue.
AutoresetMode ParseAutoresetMode(const std::string& name);

// CPUs this process may run on (its affinity mask), at least 1.
int AvailableCpus();

// The threads a pool of `num_envs` worlds uses when asked for `requested`
// (0: the default): capped at AvailableCpus() and at num_envs, since more
// threads than CPUs only oversubscribe them (the workers spin for the next
// job).
int PoolThreads(int num_envs, int requested);

// Why `pool` cannot be stepped now, as the StateError message of `call`
// ("step_all()"), or "" if every world can be stepped.
std::string NotSteppableMessage(const WorldPool& pool, const std::string& call);

// The StateError message of `call`, which needs every world at rest, while
// some are in flight; "" if none are.
std::string WorkInFlightMessage(const WorldPool& pool, const std::string& call);

// The StateError message of `call` on world `index`, which was in flight when
// the process forked (its step was lost).
std::string LostWorldMessage(const std::string& call, int index);

// The StateError message of `call` ("reset_one()") on world `index`, which is
// in flight.
std::string InFlightMessage(const std::string& call, int index);

// --- asynchronous stepping: send(actions, env_ids) / recv() -----------------------

// `repr` cut to 80 characters, for quoting a caller's argument in a message.
std::string ClipRepr(const std::string& repr);

// send()'s count of world ids: 1 to num_envs, or BadValue.
void CheckSendCount(long long count, long num_envs);

// The world id at `position` of send()'s env_ids: in [0, num_envs), or
// BadIndex.
int CheckSendId(long long id, long long position, long num_envs);

// Why world `index` cannot be sent now (in flight, lost at a fork, failed,
// never reset), as send()'s StateError message, or "".
std::string NotSendableMessage(const WorldPool& pool, int index);

// Python's repr of world ids as a list ("[3, 1]"), cut as ClipRepr does.
std::string IdsRepr(const int* ids, std::size_t count);

// The checks of send()'s ids (each in range already: CheckSendId) against
// the pool, under its lock: each world listed once (else BadValue, quoting
// the ids as IdsRepr does), and sendable (else StateError). One per pool: a
// stamp per world makes the repeat check allocation-free.
class SendIdChecker {
 public:
  explicit SendIdChecker(int num_envs) : stamp_(static_cast<std::size_t>(num_envs), 0) {}
  void Check(const WorldPool& pool, const int* ids, int count);

 private:
  std::vector<std::uint64_t> stamp_;  // per world: the last check that listed it
  std::uint64_t serial_ = 0;
};

// Why recv() of `batch_size` worlds cannot run now (none or too few in
// flight), as its StateError message, or "".
std::string NotReceivableMessage(const WorldPool& pool, int batch_size);

}  // namespace joltgym
