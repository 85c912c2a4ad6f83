#include "pool_binding.h"

#include <pybind11/numpy.h>
#include <sched.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <mutex>
#include <sstream>
#include <thread>
#include <vector>

#include "../errors.h"
#include "../fork_guard.h"
#include "../quiet_timer.h"
#include "../thread_pool.h"
#include "../world_pool.h"
#include "checks.h"
#include "common.h"
#include "diagnostics.h"
#include "gil.h"
#include "info_decoder.h"

namespace joltgym::bindings {

void DefinePool(py::module_& m) {
  m.def("_mujoco_timer_state",
        [] { return py::make_tuple(MujocoTimerShielded(), ForwardedMujocoTimer()); },
        "Test hook: (whether mjcb_time is the core's forwarder, the address of the callback it "
        "forwards to other threads or 0); see src/native/quiet_timer.h.");
  m.def("_test_mujoco_timer_shield", &EnableTimerShield, py::arg("enabled"),
        "Benchmark hook: False puts mujoco's timer callback back and stops keeping it off our "
        "worlds (to measure what that saves); True resumes.");
  m.def("_set_numpy_norm_rounding",
        [](bool fused) {
          SetNumpyNormRounding(fused ? NormRounding::kFusedMultiplyAdd : NormRounding::kSeparate);
        },
        py::arg("fused"),
        "How np.linalg.norm of a short vector rounds on this machine (its BLAS dot): True, "
        "fused multiply-adds; False, each product rounded. Set once at import by "
        "joltgym_marl._native's probe of NumPy.");
  m.def("_numpy_norm_rounding_fused",
        [] { return NumpyNormRounding() == NormRounding::kFusedMultiplyAdd; },
        "Whether NumpyNorm accumulates with fused multiply-adds (see _set_numpy_norm_rounding).");
  m.def("_test_fail_thread_starts", &ThreadPool::FailNextThreadStarts, py::arg("count"),
        "Test hook: the next `count` native worker threads fail to start.");
  py::class_<PyWorldPool> pool(m, "WorldPool",
                               R"(N worlds of one task stepped in parallel on native threads.

WorldPool(task, num_envs, *, num_threads=None, max_episode_steps=1000,
          autoreset_mode="next_step", batch_size=None, dtype=None, **task_kwargs)

dtype is that of obs, rewards and final_obs: None is float64 for a
single-agent task (Gymnasium v5's dtype, values equal to its envs') and
float32 for a game; numpy.float32 rounds a single-agent task's values once
(half the bandwidth).

num_threads counts the calling thread (num_threads - 1 workers are started).
It is capped at the CPUs this process may run on (its affinity mask) and at
num_envs: more threads than CPUs only oversubscribe them, as the workers spin
briefly for the next job (64 threads on 2 CPUs ran 8.7x slower than 2). The
default is that cap; .num_threads reports the count in use. If the system
refuses a worker thread, the constructor stops the ones it started and raises
RuntimeError.

In a child process made by fork() (multiprocessing's "fork" context) the
pool is usable: its worker threads, which do not survive fork, are restarted
on first use, and closing or finalizing it there never waits on the parent's.

On the main thread, a long reset_all(), step_all() or recv() notices signals
(Ctrl-C, SIGALRM) every 20 ms: a handler that raises stops it (each world
stepped or reset whole, or left as it was; recv() then receives nothing and
its worlds stay in flight), and its exception is raised from the call. A pool
of one world also polls between the timesteps of its step; a world stopped
half-way waits for reset_all() or reset_one(0).

The result buffers (obs, rewards, ...) are the same NumPy arrays after every
call, writable views of memory the pool owns; they cannot be resized.
MuJoCo errors raise MemoryError or MujocoError and leave the failed worlds
waiting for reset_all() or reset_one(i); MuJoCo warnings are MujocoWarning.)",
                               py::dynamic_attr());
  pool.def(py::init([](const std::string& task, py::handle num_envs, py::handle num_threads,
                       py::handle max_episode_steps, const std::string& autoreset_mode,
                       py::handle batch_size, py::handle dtype, py::kwargs kwargs) {
             return std::make_unique<PyWorldPool>(task, num_envs, num_threads, max_episode_steps,
                                                  autoreset_mode, batch_size, dtype, py::dict(kwargs));
           }),
           py::arg("task"), py::arg("num_envs"), py::kw_only(), py::arg("num_threads") = py::none(),
           py::arg("max_episode_steps") = 1000, py::arg("autoreset_mode") = "next_step",
           py::arg("batch_size") = py::none(), py::arg("dtype") = py::none())
      .def("reset_all", &PyWorldPool::ResetAll, py::kw_only(), py::arg("seed") = py::none(),
           "Seeds world i with seed + i, resets all; returns the obs buffer.")
      .def("reset_one", &PyWorldPool::ResetOne, py::arg("index"), py::kw_only(),
           py::arg("seed") = py::none(), "Resets world `index` (reseeded if `seed` is given).")
      .def("step_all", &PyWorldPool::StepAll, py::arg("actions"),
           "Steps every world; returns the (obs, rewards, terminations, truncations) buffers.")
      .def("send", &PyWorldPool::Send, py::arg("actions"), py::arg("env_ids"),
           "Queues one step of each world in env_ids (actions [len(env_ids), num_agents, act_dim], "
           "or [len(env_ids), act_dim] for one agent) and returns at once; the worker threads step "
           "them while the caller runs.")
      .def("recv", &PyWorldPool::Recv,
           "Waits for the first batch_size worlds in flight to finish (stepping queued ones on the "
           "calling thread meanwhile); returns the (env_ids, obs, rewards, terminations, "
           "truncations) batch buffers, rows in env_ids order. recv_infos, recv_reset_kind, ... "
           "hold the rest.")
      .def("async_reset", &PyWorldPool::AsyncReset, py::kw_only(), py::arg("seed") = py::none(),
           "reset_all(seed=seed), then every world in flight with its reset observation: "
           "recv() returns worlds 0.. batch_size-1, then the next batch_size, ...")
      .def_property_readonly("batch_size", [](const PyWorldPool& s) { return s.batch_size_; })
      .def_property_readonly("in_flight",
                             [](PyWorldPool& s) {
                               s.Mutex();  // in a forked child, forgets what was in flight
                               return s.Open().in_flight();
                             },
                             "Worlds sent (or async_reset) and not yet received.")
      .def_readonly("recv_env_ids", &PyWorldPool::recv_ids_)
      .def_readonly("recv_obs", &PyWorldPool::recv_obs_)
      .def_readonly("recv_rewards", &PyWorldPool::recv_reward_)
      .def_readonly("recv_terminations", &PyWorldPool::recv_terminated_)
      .def_readonly("recv_truncations", &PyWorldPool::recv_truncated_)
      .def_readonly("recv_infos", &PyWorldPool::recv_info_)
      .def_readonly("recv_final_obs", &PyWorldPool::recv_final_obs_,
                    "rows whose recv_reset_kind is AUTORESET (same_step) hold the ended "
                    "episode's obs")
      .def_readonly("recv_final_infos", &PyWorldPool::recv_final_info_)
      .def_readonly("recv_reset_kind", &PyWorldPool::recv_reset_kind_)
      .def_readonly("recv_unstable", &PyWorldPool::recv_unstable_)
      .def_readonly("recv_elapsed_steps", &PyWorldPool::recv_elapsed_)
      .def("get_state", &PyWorldPool::GetState, py::arg("index"))
      .def("copy_data_into", &PyWorldPool::CopyDataInto, py::arg("index"), py::arg("data"),
           "Copies world index's whole mjData into data, a mujoco.MjData of a model made from model_mjb().")
      .def("set_state", &PyWorldPool::SetState, py::arg("index"), py::arg("qpos"), py::arg("qvel"))
      .def("set_option", [](PyWorldPool& s, py::handle name, py::handle value, py::handle index) {
             s.Open();
             s.SetOption(name, value, index);
           }, py::arg("name"), py::arg("value"), py::kw_only(), py::arg("index") = py::none(),
           "Sets an episode option (e.g. shaping_weight) for every world, or for world `index`; "
           "it applies from the next step on.")
      .def("set_options", &PyWorldPool::SetOptions, py::arg("options"), py::kw_only(),
           py::arg("index") = py::none(),
           "set_option for each item of the dict `options`, all checked before any is set.")
      .def_property_readonly("episode_options", [](const PyWorldPool& s) { return OptionNames(s.Open().task()); })
      .def("close", &PyWorldPool::Close, "Joins the threads and frees the worlds; idempotent.")
      .def("__enter__", [](py::object self) { return self; })
      .def("__exit__", [](PyWorldPool& self, py::args) {
        self.Close();
        return false;
      })
      .def("__reduce__",
           [](py::object self) {
             auto& s = self.cast<PyWorldPool&>();
             py::dict kwargs = CopyDict(s.kwargs_);
             kwargs["num_threads"] = s.closed() ? py::object(py::none()) : py::object(py::int_(s.Open().num_threads()));
             kwargs["max_episode_steps"] = s.max_episode_steps_;
             kwargs["autoreset_mode"] = s.autoreset_mode_;
             kwargs["batch_size"] = s.batch_size_;
             kwargs["dtype"] = s.float64_ ? "float64" : "float32";
             const long n = s.obs_.shape(0);
             return Reduce(self, py::make_tuple(s.task_name_, n), kwargs);
           })
      .def_property_readonly("closed", &PyWorldPool::closed)
      .def_property_readonly("task", [](const PyWorldPool& s) { return s.task_name_; })
      .def_property_readonly("kwargs", [](const PyWorldPool& s) { return CopyDict(s.kwargs_); })
      .def_property_readonly("num_envs", [](const PyWorldPool& s) { return s.obs_.shape(0); })
      .def_property_readonly("num_threads", [](const PyWorldPool& s) { return s.Open().num_threads(); })
      .def_property_readonly("max_episode_steps", [](const PyWorldPool& s) { return s.max_episode_steps_; })
      .def_property_readonly("autoreset_mode", [](const PyWorldPool& s) { return s.autoreset_mode_; })
      .def_property_readonly("dtype", [](const PyWorldPool& s) { return s.obs_.dtype(); },
                             "dtype of obs, rewards and final_obs: float64 (single-agent tasks' default, "
                             "Gymnasium v5's) or float32 (games' default)")
      .def_readonly("obs", &PyWorldPool::obs_)
      .def_readonly("rewards", &PyWorldPool::reward_)
      .def_readonly("terminations", &PyWorldPool::terminated_)
      .def_readonly("truncations", &PyWorldPool::truncated_)
      .def_readonly("infos", &PyWorldPool::info_, "[num_envs, num_agents, info_width] float64")
      .def_readonly("final_obs", &PyWorldPool::final_obs_)
      .def_readonly("final_infos", &PyWorldPool::final_info_)
      .def_readonly("reset_kind", &PyWorldPool::reset_kind_,
                    "per world, a ResetKind: STEPPED, RESET (reset by this call) or AUTORESET (ended "
                    "and auto-reset in this call)")
      .def_readonly("unstable", &PyWorldPool::unstable_)
      .def_readonly("elapsed_steps", &PyWorldPool::elapsed_);
  // Task properties need the open pool.
  pool.def_property_readonly("num_agents", [](const PyWorldPool& s) { return s.Open().task().num_agents(); })
      .def_property_readonly("obs_dim", [](const PyWorldPool& s) { return s.Open().task().obs_dim(); })
      .def_property_readonly("agent_prefix", [](const PyWorldPool& s) { return s.Open().task().agent_prefix(); })
      .def_property_readonly("agent_names", [](const PyWorldPool& s) {
        py::list names;
        for (const std::string& name : s.Open().task().agent_names()) names.append(name);
        return names;
      })
      .def_property_readonly("act_dim", [](const PyWorldPool& s) { return s.Open().task().act_dim(); })
      .def_property_readonly("action_low", [](const PyWorldPool& s) { return ToFloatArray(s.Open().task().action_low()); })
      .def_property_readonly("action_high", [](const PyWorldPool& s) { return ToFloatArray(s.Open().task().action_high()); })
      .def_property_readonly("info_fields", [](const PyWorldPool& s) { return InfoFields(s.Open().task()); })
      .def_property_readonly("info_decoder",
                             [](const PyWorldPool& s) { return InfoDecoder(s.Open().task().info_layout()); })
      .def_property_readonly("camera", [](const PyWorldPool& s) { return CameraDict(s.Open().task()); })
      .def_property_readonly("dt", [](const PyWorldPool& s) { return s.Open().task().dt(); })
      .def("model_mjb", [](const PyWorldPool& s) { return ModelBytes(s.Open().task().model()); },
           "The compiled model as MJB bytes (mujoco.MjModel.from_binary_path).");
}

}  // namespace joltgym::bindings
