// Pieces every binding class shares: building a task from keyword arguments,
// seeds, episode options, model bytes, state access and pickling.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "../rng.h"
#include "../task.h"
#include "../fork_guard.h"
#include "../world.h"
#include "../world_pool.h"

namespace joltgym::bindings {

namespace py = pybind11;

// Builds a registered task from Python keyword arguments (checked against its
// ParamSpecs); `owner` names the callee in error messages.
std::shared_ptr<const Task> MakeTask(const std::string& name, const py::dict& kwargs,
                                     const std::string& owner, int episode_limit);

// A shallow copy (py::dict(other) would alias the same dict).
py::dict CopyDict(const py::dict& d);

// The seed a user passed (a non-negative int of any size, as Gymnasium and
// NumPy's SeedSequence take it), or 128 bits of fresh entropy for None.
SeedWords SeedOrRandom(const py::object& seed);

// An optional step/episode limit: None -> 0 (never), else an int >= minimum.
int LimitOrZero(py::handle value, const char* what, long minimum);

// Converts episode options (e.g. {"shaping_weight": 0.5}) to (scratch slot,
// value) pairs, checking every key and value; this may run Python code (a
// value's __float__), so callers convert before taking any lock.
std::vector<std::pair<int, double>> ConvertOptions(const Task& task, const py::object& options);

// Writes converted options into worlds' scratch.
void WriteOptions(const std::vector<std::pair<int, double>>& writes,
                  const std::vector<double*>& scratches);

// Both: every key and value is checked before anything is written.
void ApplyOptions(const Task& task, const py::object& options, const std::vector<double*>& scratches);
py::list OptionNames(const Task& task);

// (name, offset, size, at_reset) of each info field.
py::list InfoFields(const Task& task);

// The compiled model as MJB bytes (mujoco.MjModel.from_binary_path reads them).
py::bytes ModelBytes(const mjModel* m);

py::array_t<float> ToFloatArray(const std::vector<double>& values);

// The task's default camera as a dict (target, distance, elevation, azimuth, lookat).
py::dict CameraDict(const Task& task);

// Copies of one world's (qpos, qvel).
py::tuple StateOf(const World& world);

// Pickling: every native class reduces to _core._restore(cls, args, kwargs),
// re-created from its constructor arguments.
py::tuple Reduce(py::handle self, py::tuple args, py::dict kwargs);
py::object Restore(py::object cls, py::tuple args, py::dict kwargs);

// A pool binding's mutex, as a fork leaves it: in a forked child the threads
// that held it (and the pool's workers) are gone, so the first call there
// gets a new mutex (joltgym::ForkAwareMutex, as the C API's pools) and
// forgets the worlds that were in flight (recv() then says they were lost at
// the fork instead of waiting for them forever). Taken with the GIL held,
// before a call releases it.
class ForkAwareMutex {
 public:
  std::mutex& Get(WorldPool* pool) {
    bool renewed = false;
    std::mutex& mutex = mutex_.Get(&renewed);
    if (renewed && pool != nullptr) pool->AbandonInFlight();
    return mutex;
  }

 private:
  joltgym::ForkAwareMutex mutex_;
};

}  // namespace joltgym::bindings
