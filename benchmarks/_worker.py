"""One family of benchmark contenders in a long-lived process.

    python -m benchmarks._worker FAMILY

Reads one JSON request per line on stdin and answers one JSON line each on
its stdout (anything else the libraries print goes to stderr). The first line
it writes is a greeting: ``{"ok": true, "family": ..., "versions": ...}``, or
``{"ok": false, "missing": <package>, ...}`` when a peer library is not
installed. Requests:

* ``{"op": "available", "tasks": [spec, ...]}``: which of the tasks (each as
  ``benchmarks._tasks.portable`` writes it) this family can run, and under
  which id; answers ``{"ok": true, "available": {task: {"id": ...} or
  {"reason": ...}}}``.
* ``{"op": "measure", "contender": ..., "task": ..., "spec": {...}, "peer_id": ...,
  "worlds": N, "threads": T, "agents": A, "act_dim": D, "actions": FILE,
  "budget": s, "warmup": s, ...}`` runs the contender for ``budget`` seconds
  after a warm-up and answers ``{"ok": true, "rate": steps/s, "steps": ...,
  "seconds": ...}``; ``rate`` counts env-steps (agent-steps for multi-agent
  games, ``A`` per world).
* ``{"op": "memory", ...}`` (family ``memprobe``, one per fresh process):
  resident set before and after building ``N`` worlds of our vector env.
* ``{"op": "quit"}``.

Nothing here names a task: every contender is built from the request's
``spec`` (the registry's ids) and ``peer_id`` (the peer library's id of the
task, from ``available``).

Families keep peers optional and apart: ``ours`` (joltgym_marl's core, pool,
vector env and agent vector env; never imports MuJoCo's Python bindings, whose
profiling-timer callback our worlds must skip), ``ours_mujoco`` (the pool in a
process that does import them: the check that they are skipped), ``native``
(the C++ limit program), ``gymnasium`` (Gymnasium's ``*-v5`` envs),
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

from benchmarks._paths import use_checkout  # noqa: E402

use_checkout()

import numpy as np  # noqa: E402

ACTION_SETS = 16


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
    """A family of contenders; envs are built on first use and kept while the requests stay
    on one task and world count (the suite asks every thread count and contender of one
    configuration in a row), then closed: with every registered task at up to 256 worlds,
    keeping them all would take gigabytes per worker, and every process that
    AsyncVectorEnv or SuperSuit forks from the worker would start that large."""

    def __init__(self):
        self.cache: dict[tuple, object] = {}
        self.scope: tuple | None = None

    def enter(self, request: dict) -> None:
        """Closes the cached envs when ``request`` moves to another task or world count."""
        scope = (request.get("task"), request.get("worlds"))
        if scope != self.scope:
            self.close()
            gc.collect()
            self.scope = scope

    def env(self, key: tuple, make):
        env = self.cache.get(key)
        if env is None:
            env = self.cache[key] = make()
        return env

    def available(self, tasks: list[dict]) -> dict:
        """Per task name: ``{"id": ...}`` (the id this family runs it under) or ``{"reason": ...}``."""
        return {spec["name"]: {"id": spec["name"]} for spec in tasks}

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
    """joltgym_marl: ``core`` (one ``*Core``), ``pool`` (``WorldPool.step_all``), ``vector``
    (``gymnasium.make_vec``) for single-agent tasks; ``agent_vec`` (the game's ``vec_env``)."""

    def __init__(self):
        super().__init__()
        import gymnasium

        import joltgym_marl

        self.gymnasium, self.jm = gymnasium, joltgym_marl

    def versions(self) -> dict:
        return {"joltgym_marl": self.jm.__version__}

    def measure(self, request: dict) -> dict:
        contender, spec = request["contender"], request["spec"]
        worlds, threads, agents = request["worlds"], request["threads"], request["agents"]
        actions = load_actions(request)
        key = (contender, spec["name"], worlds, threads, agents)
        if contender == "core":
            core = self.env(key, self.jm.CORE_CLASSES[spec["name"]])
            core.reset(seed=0)
            step = episode_step(core, actions)
        elif contender in ("pool", "pool_f32"):
            # pool: the task's default layout (float64 for a robot, Gymnasium v5's dtype;
            # float32 for a game); pool_f32: float32 observations and rewards.
            dtype = np.float32 if contender == "pool_f32" else None
            pool = self.env(key, lambda: self.jm.WorldPool(
                spec["name"], worlds, num_threads=threads, max_episode_steps=spec["max_episode_steps"],
                dtype=dtype, **spec["kwargs"]))
            pool.reset_all(seed=0)  # world i seeded i, as in the limit program
            sets = [np.ascontiguousarray(a) for a in actions]  # [worlds, agents, act_dim] each

            def step(t):
                pool.step_all(sets[t % ACTION_SETS])
                return worlds * agents
        elif contender == "vector":
            env = self.env(key, lambda: self.gymnasium.make_vec(
                spec["env_id"], num_envs=worlds, vectorization_mode="vector_entry_point",
                num_threads=threads))
            env.reset(seed=0)  # world i seeded i, as in the limit program
            step = vector_step(env, actions, worlds)
        elif contender == "agent_vec":
            game = self.jm.MULTI_AGENT_ENVS[spec["module"]]
            env = self.env(key, lambda: game.vec_env(worlds, num_threads=threads, **spec["kwargs"]))
            env.reset(seed=0)
            step = vector_step(env, actions, worlds * agents)
        else:
            raise ValueError(f"unknown contender {contender!r} for family ours")
        return measured(step, request)


class OursMujoco(Ours):
    """``pool_mujoco``: ``pool`` in a process that imports ``mujoco`` (and steps an
    ``MjData`` of its own), whose profiling-timer callback our worlds must skip."""

    def __init__(self):
        import mujoco

        model = mujoco.MjModel.from_xml_string(
            "<mujoco><worldbody><body><freejoint/><geom size='.1'/></body></worldbody></mujoco>")
        self.mj_model, self.mj_data = model, mujoco.MjData(model)
        mujoco.mj_step(model, self.mj_data)
        super().__init__()

    def measure(self, request: dict) -> dict:
        if request["contender"] != "pool_mujoco":
            raise ValueError(f"unknown contender {request['contender']!r} for family ours_mujoco")
        return super().measure({**request, "contender": "pool"})


# -- native (the C++ limit) ---------------------------------------------------------------


# Steps every world of the limit program takes before its clock starts: our
# envs are measured in long-lived workers, so the limit must see the states of
# a long run too, not only the first steps after reset (standing humanoids,
# before their first fall, are cheaper to step than the mix of a long run).
LIMIT_WARMUP_STEPS = 100


class Native(Family):
    """``limit``: ``raw_step_limit --mode env``, no Python at all; every world
    first takes LIMIT_WARMUP_STEPS untimed steps.

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
        spec = request["spec"]
        command = [request["binary"], "--task", spec["name"], "--worlds", str(request["worlds"]),
                   "--threads", str(request["threads"]), "--steps", str(steps), "--mode", "env",
                   "--max-episode-steps", str(spec["max_episode_steps"]),
                   "--warmup-steps", str(LIMIT_WARMUP_STEPS),
                   "--assets", request["assets"], "--actions", request["actions"]]
        for param in request.get("params", []):
            command += ["--param", param]
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(command)} exited {done.returncode}: {done.stderr.strip()}")
        out = json.loads(done.stdout)
        if out.get("agents", request["agents"]) != request["agents"]:
            raise RuntimeError(f"the limit program built {out['agents']} agents per world, "
                               f"not {request['agents']}")
        return out["env_steps_per_sec"] * request["agents"], out["seconds"]

    def measure(self, request: dict) -> dict:
        if request["contender"] != "limit":
            raise ValueError(f"unknown contender {request['contender']!r} for family native")
        budget, worlds, agents = request["budget"], request["worlds"], request["agents"]
        key = (request["binary"], request["spec"]["name"], tuple(request.get("params", [])), worlds,
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


def gymnasium_ids(gymnasium, tasks: list[dict]) -> dict:
    """Each single-agent task's Gymnasium reference env (``spec["reference_id"]``), if registered."""
    out = {}
    for spec in tasks:
        ref = spec.get("reference_id")
        if spec["kind"] != "single_agent":
            out[spec["name"]] = {"reason": "a game (no Gymnasium env)"}
        elif not ref:
            out[spec["name"]] = {"reason": "the registry names no Gymnasium reference env"}
        elif ref not in gymnasium.registry:
            out[spec["name"]] = {"reason": f"Gymnasium {gymnasium.__version__} has no {ref}"}
        else:
            out[spec["name"]] = {"id": ref}
    return out


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

    def close(self) -> None:
        super().close()
        self.async_key = None

    def available(self, tasks: list[dict]) -> dict:
        return gymnasium_ids(self.gymnasium, tasks)

    def measure(self, request: dict) -> dict:
        gym = self.gymnasium
        contender, peer_id, worlds = request["contender"], request["peer_id"], request["worlds"]
        actions = load_actions(request)
        if contender == "gym_loop":
            env = self.env((contender, peer_id), lambda: gym.make(peer_id))
            env.reset(seed=0)
            step = episode_step(env, actions)
        elif contender in ("gym_sync", "gym_async"):
            mode = "sync" if contender == "gym_sync" else "async"
            key = (contender, peer_id, worlds)
            if mode == "async" and self.async_key not in (None, key):
                old = self.cache.pop(self.async_key, None)
                self.async_key = None
                if old is not None:
                    old.close()
            env = self.env(key, lambda: gym.make_vec(peer_id, num_envs=worlds, vectorization_mode=mode))
            if mode == "async":
                self.async_key = key
            env.reset(seed=0)  # env i seeded i
            step = vector_step(env, actions, worlds)
        else:
            raise ValueError(f"unknown contender {contender!r} for family gymnasium")
        return measured(step, request)


# -- mujoco.batch -------------------------------------------------------------------------------


class MujocoBatch(Family):
    """``mj_batch``: ``mujoco.batch.Batch`` stepping, a generic env in NumPy (see _mj_batch_env)."""

    def __init__(self):
        super().__init__()
        import mujoco
        import mujoco.batch  # noqa: F401

        from benchmarks import _mj_batch_env

        self.mujoco, self.module = mujoco, _mj_batch_env

    def versions(self) -> dict:
        return {"mujoco": self.mujoco.__version__}

    def available(self, tasks: list[dict]) -> dict:
        import gymnasium

        return gymnasium_ids(gymnasium, tasks)

    def measure(self, request: dict) -> dict:
        if request["contender"] != "mj_batch":
            raise ValueError(f"unknown contender {request['contender']!r} for family mujoco_batch")
        peer_id, worlds, threads = request["peer_id"], request["worlds"], request["threads"]
        limit = request["spec"]["max_episode_steps"]
        env = self.env((peer_id, worlds, threads),
                       lambda: self.module.BatchEnv(peer_id, worlds, threads, limit))
        env.reset(seed=0)
        return measured(vector_step(env, load_actions(request), worlds), request)


# -- EnvPool ---------------------------------------------------------------------------------------


class EnvPool(Family):
    """``envpool_sync`` (batch_size = N, ``step``) and ``envpool_async``
    (batch_size = max(1, N // 2), ``send``/``recv``).

    A task runs as EnvPool's MuJoCo env of the same title: ``<Title>-v5`` (the
    version Gymnasium's reference has) where EnvPool has it, else ``<Title>-v4``.
    """

    def __init__(self):
        super().__init__()
        import envpool

        self.envpool = envpool

    def versions(self) -> dict:
        return {"envpool": self.envpool.__version__}

    def available(self, tasks: list[dict]) -> dict:
        from envpool.registration import registry

        known = set(self.envpool.list_all_envs())
        out = {}
        for spec in tasks:
            if spec["kind"] != "single_agent":
                out[spec["name"]] = {"reason": "a game (no EnvPool env)"}
                continue
            candidates = list(dict.fromkeys(filter(None, [spec.get("reference_id"), f"{spec['title']}-v4"])))
            found = [c for c in candidates if c in known
                     and str(registry.specs[c][0]).startswith("envpool.mujoco")]
            out[spec["name"]] = ({"id": found[0]} if found else
                                 {"reason": f"EnvPool {self.envpool.__version__} has no MuJoCo env "
                                            f"{' or '.join(candidates)}"})
        return out

    def measure(self, request: dict) -> dict:
        contender, peer_id = request["contender"], request["peer_id"]
        worlds, threads = request["worlds"], request["threads"]
        actions = load_actions(request)
        key = (contender, peer_id, worlds, threads)
        if contender == "envpool_sync":
            env = self.env(key, lambda: self.envpool.make_gymnasium(
                peer_id, num_envs=worlds, num_threads=threads, batch_size=worlds, seed=0))
            env.reset()
            return measured(vector_step(env, actions, worlds), request)
        if contender == "envpool_async":
            batch = max(1, worlds // 2)
            env = self.env(key, lambda: self.envpool.make_gymnasium(
                peer_id, num_envs=worlds, num_threads=threads, batch_size=batch, seed=0))
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
    <game>.parallel_env(**kwargs)), N, num_cpus=0 or T, base_class="gymnasium")``."""

    def __init__(self):
        super().__init__()
        import supersuit

        from joltgym_marl import MULTI_AGENT_ENVS

        self.supersuit, self.games = supersuit, MULTI_AGENT_ENVS

    def versions(self) -> dict:
        return {"supersuit": getattr(self.supersuit, "__version__", "?")}

    def available(self, tasks: list[dict]) -> dict:
        return {spec["name"]: ({"id": spec["module"]} if spec["kind"] == "game"
                               else {"reason": "not a PettingZoo game"}) for spec in tasks}

    def measure(self, request: dict) -> dict:
        ss = self.supersuit
        contender, worlds, spec = request["contender"], request["worlds"], request["spec"]
        threads, agents = request["threads"], request["agents"]
        if contender not in ("supersuit_0", "supersuit_T"):
            raise ValueError(f"unknown contender {contender!r} for family supersuit")
        cpus = 0 if contender == "supersuit_0" else threads
        game = self.games[spec["module"]]
        kwargs = spec["kwargs"]
        env = self.env((cpus, spec["name"], worlds, agents), lambda: ss.concat_vec_envs_v1(
            ss.pettingzoo_env_to_vec_env_v1(game.parallel_env(**kwargs)),
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

        self.gymnasium, self.psutil, self.jm = gymnasium, psutil, joltgym_marl

    def versions(self) -> dict:
        return {"psutil": self.psutil.__version__}

    def memory(self, request: dict) -> dict:
        spec, worlds, threads = request["spec"], request["worlds"], request["threads"]
        process = self.psutil.Process()
        gc.collect()
        before = process.memory_info().rss
        start = time.perf_counter()
        if spec["kind"] == "game":
            env = self.jm.MULTI_AGENT_ENVS[spec["module"]].vec_env(worlds, num_threads=threads, **spec["kwargs"])
            action = np.zeros((env.num_envs, env.single_action_space.shape[0]), np.float32)
        else:
            env = self.gymnasium.make_vec(spec["env_id"], num_envs=worlds,
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


FAMILIES = {"ours": Ours, "ours_mujoco": OursMujoco, "native": Native, "gymnasium": Gym, "mujoco_batch": MujocoBatch,
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
                if request.get("op") == "measure":
                    family.enter(request)
                if request.get("op") == "memory":
                    result = family.memory(request)
                elif request.get("op") == "available":
                    result = {"available": family.available(request["tasks"])}
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
