"""One family of benchmark contenders in a long-lived process.

    python -m benchmarks._worker FAMILY

Reads one JSON request per line on stdin and answers one JSON line each on
its stdout (anything else the libraries print goes to stderr). The first line
it writes is a greeting: ``{"ok": true, "family": ..., "versions": ...}``, or
``{"ok": false, "missing": <package>, ...}`` when a peer library is not
installed. Requests:

* ``{"op": "measure", "contender": ..., "task": ..., "worlds": N, "threads": T,
  "agents": A, "act_dim": D, "actions": FILE, "budget": s, "warmup": s, ...}``
  runs the contender for ``budget`` seconds after a warm-up and answers
  ``{"ok": true, "rate": steps/s, "steps": ..., "seconds": ...}``; ``rate``
  counts env-steps (agent-steps for multi-agent games, ``A`` per world).
* ``{"op": "memory", ...}`` (family ``memprobe``, one per fresh process):
  resident set before and after building ``N`` worlds of our vector env.
* ``{"op": "quit"}``.

Families keep peers optional and apart: ``ours`` (joltgym_marl's core, vector
env and agent vector env; never imports MuJoCo's Python bindings, whose
profiling-timer callback slows every ``mj_step`` of the process), ``native``
(the C++ limit programs), ``gymnasium`` (Gymnasium's ``*-v5`` envs),
``mujoco_batch``, ``envpool`` and ``supersuit``. Every answer says whether
``mujoco`` is imported in the worker.
"""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
import time
import traceback
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._paths import prefer_installed_package  # noqa: E402

prefer_installed_package()

import numpy as np  # noqa: E402

ACTION_SETS = 16
GYM_V5 = {"half_cheetah": "HalfCheetah-v5", "humanoid": "Humanoid-v5", "ant": "Ant-v5"}
OURS_ID = {"half_cheetah": "joltgym_marl/HalfCheetah-v0", "humanoid": "joltgym_marl/Humanoid-v0",
           "ant": "joltgym_marl/Ant-v0"}


def load_actions(request: dict) -> np.ndarray:
    """The pre-drawn actions ``[16, worlds, agents, act_dim]`` (float32) of the request."""
    shape = (ACTION_SETS, request["worlds"], request["agents"], request["act_dim"])
    return np.fromfile(request["actions"], dtype=np.float32).reshape(shape)


def batched(actions: np.ndarray) -> list[np.ndarray]:
    """One ``[worlds * agents, act_dim]`` array per action set (rows world-major)."""
    return [np.ascontiguousarray(a.reshape(-1, a.shape[-1])) for a in actions]


def single(actions: np.ndarray) -> list[np.ndarray]:
    """World 0's (single-agent) action of every set."""
    return [np.ascontiguousarray(a[0, 0]) for a in actions]


def vector_step(env, actions: np.ndarray, rows: int):
    """``step(t)`` for ``timed``: ``env.step`` on action set ``t % ACTION_SETS`` (batched), ``rows`` steps."""
    acts = batched(actions)

    def step(t):
        env.step(acts[t % ACTION_SETS])
        return rows

    return step


def episode_step(env, actions: np.ndarray):
    """``step(t)`` for ``timed``: one env's ``step`` on world 0's action set
    ``t % ACTION_SETS``, resetting it when an episode ends; one step."""
    acts = single(actions)

    def step(t):
        _, _, terminated, truncated, _ = env.step(acts[t % ACTION_SETS])
        if terminated or truncated:
            env.reset()
        return 1

    return step


def measured(step, request: dict) -> dict:
    """Times ``step`` over the request's budget: the rate, steps and seconds."""
    steps, seconds = timed(step, request["budget"], request["warmup"])
    return {"rate": steps / seconds, "steps": steps, "seconds": seconds}


def timed(step, budget: float, warmup: float, min_calls: int = 3) -> tuple[int, float]:
    """Calls ``step(t)`` (returning the steps it made) for ``warmup`` seconds and at
    least twice, then for ``budget`` seconds and at least ``min_calls`` times.

    The clock is read once per chunk of calls, sized from the warm-up to about
    1/50 of the budget, so timing costs nothing next to a step. Returns the
    steps made and the seconds they took.
    """
    clock = time.perf_counter
    t = 0
    begin = clock()
    while t < 2 or clock() - begin < warmup:
        step(t)
        t += 1
    per_call = (clock() - begin) / t
    chunk = max(1, int(budget / 50 / max(per_call, 1e-9)))
    steps = calls = 0
    start = clock()
    while True:
        for _ in range(chunk):
            steps += step(t)
            t += 1
        calls += chunk
        elapsed = clock() - start
        if elapsed >= budget and calls >= min_calls:
            return steps, elapsed


class Family:
    """A family of contenders; envs are built once and kept for later rounds."""

    def __init__(self):
        self.cache: dict[tuple, object] = {}

    def env(self, key: tuple, make):
        env = self.cache.get(key)
        if env is None:
            env = self.cache[key] = make()
        return env

    def measure(self, request: dict) -> dict:
        raise NotImplementedError

    def close(self) -> None:
        for env in self.cache.values():
            close = getattr(env, "close", None)
            if close is not None:
                try:
                    close()
                except Exception:  # noqa: BLE001 - shutting down anyway
                    pass
        self.cache.clear()


# -- ours ------------------------------------------------------------------------------


class Ours(Family):
    """joltgym_marl: ``core`` (one world), ``vector`` (make_vec), ``agent_vec`` (race rows)."""

    def __init__(self):
        super().__init__()
        import gymnasium

        import joltgym_marl
        from joltgym_marl import cheetah_race_v0

        self.gymnasium, self.jm, self.race = gymnasium, joltgym_marl, cheetah_race_v0

    def versions(self) -> dict:
        return {"joltgym_marl": self.jm.__version__}

    def measure(self, request: dict) -> dict:
        contender, task = request["contender"], request["task"]
        worlds, threads, agents = request["worlds"], request["threads"], request["agents"]
        actions = load_actions(request)
        key = (contender, task, worlds, threads, agents)
        if contender == "core":
            cls = {"half_cheetah": self.jm.HalfCheetahCore, "humanoid": self.jm.HumanoidCore,
                   "ant": self.jm.AntCore}[task]
            core = self.env(key, cls)
            core.reset(seed=0)
            step = episode_step(core, actions)
        elif contender == "vector":
            env = self.env(key, lambda: self.gymnasium.make_vec(
                OURS_ID[task], num_envs=worlds, vectorization_mode="vector_entry_point",
                num_threads=threads))
            env.reset(seed=0)  # world i seeded i, as in the limit program
            step = vector_step(env, actions, worlds)
        elif contender == "agent_vec":
            env = self.env(key, lambda: self.race.vec_env(worlds, num_agents=agents, num_threads=threads))
            env.reset(seed=0)
            step = vector_step(env, actions, worlds * agents)
        else:
            raise ValueError(f"unknown contender {contender!r} for family ours")
        return measured(step, request)


# -- native (the C++ limit) ---------------------------------------------------------------


class Native(Family):
    """``limit``: ``raw_step_limit --mode env`` (or its race build), no Python at all.

    The program takes a step count, not a time: the first request of a
    configuration calibrates it (runs growing until one lasts a tenth of the
    budget; these also warm the page cache), later ones reuse the last rate.
    """

    def __init__(self):
        super().__init__()
        self.rates: dict[tuple, float] = {}

    def versions(self) -> dict:
        return {}

    def run(self, request: dict, steps: int) -> tuple[float, float]:
        command = [request["binary"], "--task", request["binary_task"], "--worlds", str(request["worlds"]),
                   "--threads", str(request["threads"]), "--steps", str(steps), "--mode", "env",
                   "--assets", request["assets"], "--actions", request["actions"]]
        for param in request.get("params", []):
            command += ["--param", param]
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(command)} exited {done.returncode}: {done.stderr.strip()}")
        out = json.loads(done.stdout)
        return out["env_steps_per_sec"] * request["agents"], out["seconds"]

    def measure(self, request: dict) -> dict:
        if request["contender"] != "limit":
            raise ValueError(f"unknown contender {request['contender']!r} for family native")
        budget, worlds, agents = request["budget"], request["worlds"], request["agents"]
        key = (request["binary"], request["binary_task"], tuple(request.get("params", [])), worlds,
               request["threads"])
        rate = self.rates.get(key)
        if rate is None:
            steps = 2
            while True:
                rate, seconds = self.run(request, steps)
                if seconds >= budget / 10 or steps >= 10**7:
                    break
                steps = int(steps * min(100.0, max(2.0, budget / 10 / max(seconds, 1e-6))))
        steps = max(3, round(budget * rate / (worlds * agents)))
        rate, seconds = self.run(request, steps)
        self.rates[key] = rate
        return {"rate": rate, "steps": steps * worlds * agents, "seconds": seconds}


# -- Gymnasium ------------------------------------------------------------------------------


class Gym(Family):
    """Gymnasium's ``*-v5`` envs: ``gym_loop`` (one env), ``gym_sync``, ``gym_async``.

    ``gymnasium.make`` / ``gymnasium.make_vec`` with their defaults, as users
    write them. At most one AsyncVectorEnv (one process per world) is kept.
    """

    def __init__(self):
        super().__init__()
        import gymnasium
        import gymnasium.envs.mujoco  # noqa: F401  (imports mujoco: fails here if it is missing)

        self.gymnasium = gymnasium
        self.async_key: tuple | None = None

    def versions(self) -> dict:
        import mujoco

        return {"gymnasium": self.gymnasium.__version__, "mujoco": mujoco.__version__}

    def measure(self, request: dict) -> dict:
        gym = self.gymnasium
        contender, task, worlds = request["contender"], request["task"], request["worlds"]
        actions = load_actions(request)
        if contender == "gym_loop":
            env = self.env((contender, task), lambda: gym.make(GYM_V5[task]))
            env.reset(seed=0)
            step = episode_step(env, actions)
        elif contender in ("gym_sync", "gym_async"):
            mode = "sync" if contender == "gym_sync" else "async"
            key = (contender, task, worlds)
            if mode == "async" and self.async_key not in (None, key):
                self.cache.pop(self.async_key).close()
            env = self.env(key, lambda: gym.make_vec(GYM_V5[task], num_envs=worlds, vectorization_mode=mode))
            if mode == "async":
                self.async_key = key
            env.reset(seed=0)  # env i seeded i
            step = vector_step(env, actions, worlds)
        else:
            raise ValueError(f"unknown contender {contender!r} for family gymnasium")
        return measured(step, request)


# -- mujoco.batch -------------------------------------------------------------------------------


class MujocoBatch(Family):
    """``mj_batch``: ``mujoco.batch.Batch`` stepping, the env in NumPy (see _mj_batch_env)."""

    def __init__(self):
        super().__init__()
        import mujoco
        import mujoco.batch  # noqa: F401

        from benchmarks import _mj_batch_env

        self.mujoco, self.module = mujoco, _mj_batch_env

    def versions(self) -> dict:
        return {"mujoco": self.mujoco.__version__}

    def measure(self, request: dict) -> dict:
        if request["contender"] != "mj_batch":
            raise ValueError(f"unknown contender {request['contender']!r} for family mujoco_batch")
        task, worlds, threads = request["task"], request["worlds"], request["threads"]
        env = self.env((task, worlds, threads), lambda: self.module.BatchEnv(task, worlds, threads))
        env.reset(seed=0)
        return measured(vector_step(env, load_actions(request), worlds), request)


# -- EnvPool ---------------------------------------------------------------------------------------


class EnvPool(Family):
    """``envpool_sync`` (batch_size = N, ``step``) and ``envpool_async``
    (batch_size = max(1, N // 2), ``send``/``recv``), EnvPool's ``*-v5`` tasks."""

    def __init__(self):
        super().__init__()
        import envpool

        self.envpool = envpool

    def versions(self) -> dict:
        return {"envpool": self.envpool.__version__}

    def measure(self, request: dict) -> dict:
        contender, task = request["contender"], request["task"]
        worlds, threads = request["worlds"], request["threads"]
        actions = load_actions(request)
        key = (contender, task, worlds, threads)
        if contender == "envpool_sync":
            env = self.env(key, lambda: self.envpool.make_gymnasium(
                GYM_V5[task], num_envs=worlds, num_threads=threads, batch_size=worlds, seed=0))
            env.reset()
            return measured(vector_step(env, actions, worlds), request)
        if contender == "envpool_async":
            batch = max(1, worlds // 2)
            env = self.env(key, lambda: self.envpool.make_gymnasium(
                GYM_V5[task], num_envs=worlds, num_threads=threads, batch_size=batch, seed=0))
            env.async_reset()
            acts = batched(actions)

            def step(t):
                *_, info = env.recv()
                ids = info["env_id"]
                env.send(acts[t % ACTION_SETS][ids], ids)
                return len(ids)

            result = measured(step, request)
            # Collect the worlds still in flight so that the next async_reset finds none.
            in_flight = worlds
            while in_flight > 0 and worlds % batch == 0:
                in_flight -= len(env.recv()[-1]["env_id"])
            if worlds % batch:
                self.cache.pop(key).close()
            return result
        raise ValueError(f"unknown contender {contender!r} for family envpool")


# -- SuperSuit ---------------------------------------------------------------------------------------


class SuperSuit(Family):
    """``supersuit_0`` / ``supersuit_T``: ``concat_vec_envs_v1(pettingzoo_env_to_vec_env_v1(
    cheetah_race_v0.parallel_env(num_agents=A)), N, num_cpus=0 or T, base_class="gymnasium")``."""

    def __init__(self):
        super().__init__()
        import supersuit

        from joltgym_marl import cheetah_race_v0

        self.supersuit, self.race = supersuit, cheetah_race_v0

    def versions(self) -> dict:
        import supersuit

        return {"supersuit": getattr(supersuit, "__version__", "?")}

    def measure(self, request: dict) -> dict:
        ss = self.supersuit
        contender, worlds = request["contender"], request["worlds"]
        threads, agents = request["threads"], request["agents"]
        if contender not in ("supersuit_0", "supersuit_T"):
            raise ValueError(f"unknown contender {contender!r} for family supersuit")
        cpus = 0 if contender == "supersuit_0" else threads
        env = self.env((cpus, worlds, agents), lambda: ss.concat_vec_envs_v1(
            ss.pettingzoo_env_to_vec_env_v1(self.race.parallel_env(num_agents=agents)),
            worlds, num_cpus=cpus, base_class="gymnasium"))
        env.reset(seed=0)  # world i seeded i
        return measured(vector_step(env, load_actions(request), worlds * agents), request)


# -- memory probe -------------------------------------------------------------------------------------


class MemProbe(Family):
    """Resident set before/after building N worlds of our env (one request per fresh process)."""

    def __init__(self):
        super().__init__()
        import gymnasium
        import psutil

        import joltgym_marl
        from joltgym_marl import cheetah_race_v0

        self.gymnasium, self.psutil, self.race = gymnasium, psutil, cheetah_race_v0
        self.jm = joltgym_marl

    def versions(self) -> dict:
        return {"psutil": self.psutil.__version__}

    def memory(self, request: dict) -> dict:
        task, worlds, threads, agents = request["task"], request["worlds"], request["threads"], request["agents"]
        process = self.psutil.Process()
        gc.collect()
        before = process.memory_info().rss
        start = time.perf_counter()
        if task == "cheetah_race":
            env = self.race.vec_env(worlds, num_agents=agents, num_threads=threads)
            action = np.zeros((worlds * agents, env.single_action_space.shape[0]), np.float32)
        else:
            env = self.gymnasium.make_vec(OURS_ID[task], num_envs=worlds,
                                          vectorization_mode="vector_entry_point", num_threads=threads)
            action = np.zeros(env.action_space.shape, np.float32)
        built = time.perf_counter()
        env.reset(seed=0)
        env.step(action)  # every buffer and every world's contact arena in use
        stepped = time.perf_counter()
        after = process.memory_info().rss
        env.close()
        return {"rss_before": before, "rss_after": after, "bytes_per_world": (after - before) / worlds,
                "construct_seconds": built - start, "reset_and_step_seconds": stepped - built}


FAMILIES = {"ours": Ours, "native": Native, "gymnasium": Gym, "mujoco_batch": MujocoBatch,
            "envpool": EnvPool, "supersuit": SuperSuit, "memprobe": MemProbe}


def main() -> None:
    if len(sys.argv) != 2 or sys.argv[1] not in FAMILIES:
        sys.exit(f"usage: python -m benchmarks._worker {{{','.join(FAMILIES)}}}")
    family_name = sys.argv[1]
    # The protocol owns the real stdout; whatever else writes to fd 1 lands on stderr.
    protocol = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr

    def answer(message: dict) -> None:
        message["mujoco_imported"] = "mujoco" in sys.modules
        protocol.write(json.dumps(message) + "\n")
        protocol.flush()

    try:
        family = FAMILIES[family_name]()
    except ImportError as error:
        answer({"ok": False, "family": family_name, "missing": error.name or str(error),
                "error": f"{type(error).__name__}: {error}"})
        return
    except Exception as error:  # noqa: BLE001 - reported to the orchestrator
        answer({"ok": False, "family": family_name, "error": f"{type(error).__name__}: {error}",
                "traceback": traceback.format_exc()})
        return
    answer({"ok": True, "family": family_name, "versions": family.versions(), "pid": os.getpid()})
    try:
        for line in sys.stdin:
            if not line.strip():
                continue
            request = json.loads(line)
            if request.get("op") == "quit":
                break
            try:
                if request.get("op") == "memory":
                    result = family.memory(request)
                else:
                    result = family.measure(request)
                result["ok"] = True
            except Exception as error:  # noqa: BLE001 - reported to the orchestrator
                result = {"ok": False, "error": f"{type(error).__name__}: {error}",
                          "traceback": traceback.format_exc()}
            answer(result)
    finally:
        family.close()


if __name__ == "__main__":
    main()
