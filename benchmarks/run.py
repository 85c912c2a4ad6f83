"""The benchmark suite: joltgym_marl against the engine limit and what users would pick instead.

    python -m benchmarks.run [--quick] [--only targets] [--out DIR] [--tasks ...] [--rounds R] ...
    python benchmarks/run.py ...

Measures env-steps per second (agent-steps for the multi-agent games) of every
task of the native task registry (``joltgym_marl.registry.TASKS``: each
single-agent robot and each game; a game with a ``num_agents`` parameter runs
with ``--game-agents``, default 4) at 1, 8, 64 and 256 worlds on 1 and 2
threads, for

* ``limit``: the C++ ``raw_step_limit --mode env`` (the whole env step through
  the same World code, threads free-running, no Python), on the same
  pre-drawn actions (16 sets, cycled) as the Python contenders, world i seeded i,
  timed after 100 untimed steps per world (``_worker.LIMIT_WARMUP_STEPS``: the
  Python contenders are timed in long-lived workers, so both see the states of
  a long run, not only the first steps after reset);
* ours: ``core`` (one ``<Title>Core.step`` loop, 1 world), ``vector``
  (``gymnasium.make_vec(spec.env_id, vectorization_mode="vector_entry_point")``),
  ``pool`` (``WorldPool.step_all``, at the target size only), ``pool_mujoco``
  (the same in a worker that imports ``mujoco``, whose timer callback our
  worlds skip: the two should match) and, for games,
  ``agent_vec`` (the game module's ``vec_env``);
* the alternatives: ``gymnasium.make(spec.reference_id)`` in a loop,
  Gymnasium's ``SyncVectorEnv`` and ``AsyncVectorEnv`` (one process per world,
  so at most 64 worlds), ``mujoco.batch`` with a generic env in NumPy,
  EnvPool (sync and async; its ``<Title>-v5``, else ``<Title>-v4``), and for
  games SuperSuit's ``concat_vec_envs_v1`` pipeline. A peer that lacks a task
  is recorded as not available for it (``results.json`` "unavailable", an
  "n/a" row in ``results.md``), not as an error.

Every contender family runs in its own long-lived worker process
(``benchmarks/_worker.py``), so ours are measured in a process that has not
imported MuJoCo's Python bindings. Rounds are interleaved: in each round, for
each configuration, each contender is asked in turn (in an order rotated per
round) to run for a fixed time after a short warm-up. Reported: the median
and min-max over rounds, and the ratio to the limit (the median over rounds
of the ratio of the two measurements taken back to back).

The target table: for every task, our vector env (agent vector env for a
game) and ``WorldPool.step_all`` at 64 worlds and 2 threads against the limit
measured back to back (goal: >= 0.95 for single-agent tasks), then the other
goals (EnvPool, mujoco.batch, one-world core, SuperSuit). ``--only targets``
measures just that table (limit, vector, pool, agent_vec at 64 worlds / 2
threads, 5 rounds).
``--only end_to_end`` runs ``benchmarks/policy_rollout.py`` (a policy in the
loop; ours sync and async against the limit, Gymnasium's SyncVectorEnv,
EnvPool and, for the game, SuperSuit) on HalfCheetah, Humanoid, Ant and the
cheetah race (``END_TO_END_TASKS``, registry names) and
``benchmarks/sb3_training.py``, into ``end_to_end.md``.
``--only mamujoco`` runs ``benchmarks/mamujoco_vs_farama.py`` (our MaMuJoCo
``vec_env`` against Farama's ``parallel_env`` and the single-agent C++ limit on
HalfCheetah 6x1 and Ant 4x2, 64 worlds, 2 threads), into ``mamujoco.md``.
``--only torchrl`` runs ``benchmarks/torchrl_batched.py`` (TorchRL frames/s of
our batched MaMuJoCo env against TorchRL's ParallelEnv of PettingZooWrapper
envs on Farama's MaMuJoCo, HalfCheetah 6x1, 64 worlds, 2 threads), into
``torchrl.md``.

Then how cost grows: memory per world and construction time of our vector
env (a fresh process per size), and the throughput of the registry's first
single-agent task (``--scaling-task``) from 1 to 1024 worlds on 2 threads.

Writes ``results.json``, ``throughput.png``, ``scaling.png`` and
``results.md`` into ``--out`` and prints the Markdown. The default output is
``runs/benchmarks/{full,quick,targets}/`` (untracked); the committed figures
in ``benchmarks/results/`` are only written with ``--out benchmarks/results``.
Exits 2 if a peer library is missing (unless ``--skip-missing``), 1 if any
measurement failed. ``--quick`` measures every task's limit, core and vector
(or agent vector) env on 1 and 8 worlds and every peer on the registry's first
single-agent task and first game (``--peer-tasks``), with a tiny time budget:
well under a minute (the CI check). Its sizes cannot meet the targets, so its
target table shows the figures and ratios without goals or verdicts.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import queue
import subprocess
import sys
import tempfile
import threading
import time
from importlib import metadata
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._paths import ROOT, use_checkout  # noqa: E402

use_checkout()

import numpy as np  # noqa: E402

from benchmarks import _report  # noqa: E402
from benchmarks._tasks import (  # noqa: E402
    DEFAULT_GAME_AGENTS, GAMES, SINGLE_AGENT_TASKS, TASKS, game_kwargs, limit_params, portable)

ASYNC_CAP = 64  # Gymnasium's AsyncVectorEnv starts one process per world
TARGET_WORLDS, TARGET_THREADS = _report.TARGET_WORLDS, _report.TARGET_THREADS
DEFAULT_OUT = ROOT / "runs" / "benchmarks"  # untracked (runs/ is in .gitignore)
COMMITTED_OUT = ROOT / "benchmarks" / "results"

# name: (worker family, label)
CONTENDERS = {
    "limit": ("native", "limit: C++ raw_step_limit --mode env"),
    "core": ("ours", "ours: core (*Core.step loop)"),
    "vector": ("ours", "ours: vector env (WorldPool)"),
    "pool": ("ours", "ours: WorldPool.step_all (no Gymnasium wrapper; float64 obs, v5's dtype)"),
    "pool_f32": ("ours", "ours: WorldPool.step_all, dtype=float32"),
    "pool_mujoco": ("ours_mujoco", "ours: WorldPool.step_all, process imports mujoco"),
    "agent_vec": ("ours", "ours: agent vector env"),
    "gym_loop": ("gymnasium", "gymnasium.make(*-v5) loop"),
    "gym_sync": ("gymnasium", "Gymnasium SyncVectorEnv"),
    "gym_async": ("gymnasium", f"Gymnasium AsyncVectorEnv (<= {ASYNC_CAP} worlds)"),
    "mj_batch": ("mujoco_batch", "mujoco.batch + generic NumPy env"),
    "envpool_sync": ("envpool", "EnvPool sync"),
    "envpool_async": ("envpool", "EnvPool async (batch N/2)"),
    "supersuit_0": ("supersuit", "SuperSuit num_cpus=0"),
    "supersuit_T": ("supersuit", "SuperSuit num_cpus=T"),
}
OURS_AND_LIMIT = ("limit", "core", "vector", "pool", "pool_f32", "pool_mujoco", "agent_vec")
GAME_CONTENDERS = ("limit", "agent_vec", "supersuit_0", "supersuit_T")
TARGET_CONTENDERS = ("limit", "vector", "pool", "pool_f32", "agent_vec")
# The end-to-end section (registry names; each command's output is one part of end_to_end.md):
# three robots and a game, whose contenders benchmarks/policy_rollout.py picks per kind of task.
END_TO_END_TASKS = tuple(t for t in ("half_cheetah", "humanoid", "ant", "cheetah_race") if t in TASKS)
# Which package each worker family needs, for the message when it is missing.
FAMILY_PACKAGES = {
    "ours": "joltgym_marl", "ours_mujoco": "mujoco", "native": "cmake and a C++17 compiler", "gymnasium": "gymnasium[mujoco]",
    "mujoco_batch": "mujoco (with mujoco.batch)", "envpool": "envpool", "supersuit": "supersuit",
    "memprobe": "psutil",
}


def applies(contender: str, spec, worlds: int, threads: int, target: tuple[int, int]) -> bool:
    """Whether ``contender`` has a figure for ``spec`` at ``worlds`` and ``threads``
    (``target``: the (worlds, threads) of the target table)."""
    if contender == "limit":
        return True
    if spec.is_game:
        return contender in GAME_CONTENDERS
    if contender in GAME_CONTENDERS:
        return False
    if contender in ("core", "gym_loop"):
        return worlds == 1
    if contender == "gym_async":
        return worlds <= ASYNC_CAP
    if contender in ("pool", "pool_f32", "pool_mujoco"):
        return (worlds, threads) == target
    return True


# -- worker processes -------------------------------------------------------------------------


class WorkerError(RuntimeError):
    pass


def eta(elapsed: float, done: int, total: int) -> str:
    """How long the measurements so far took and the rest will take, at that pace."""
    left = elapsed / done * (total - done) if done else 0.0
    return f"{elapsed / 60:.1f} min so far, about {left / 60:.1f} min left"


def fail(message: str) -> SystemExit:
    """Exit status 2 with a message: the suite cannot run as asked."""
    print(f"benchmark error: {message}", file=sys.stderr)
    return SystemExit(2)


class Worker:
    """A ``benchmarks._worker`` process: JSON requests in, JSON lines out."""

    def __init__(self, family: str, log_dir: Path):
        self.family = family
        self.log_path = log_dir / f"worker_{family}.log"
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
        self.log = open(self.log_path, "a")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "benchmarks._worker", family], cwd=ROOT, env=env,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log, text=True, bufsize=1)
        self.lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self.hello: dict | None = None

    def _read(self) -> None:
        for line in self.process.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def receive(self, timeout: float) -> dict:
        try:
            line = self.lines.get(timeout=timeout)
        except queue.Empty:
            raise WorkerError(f"worker {self.family} gave no answer in {timeout:.0f} s "
                              f"(see {self.log_path})") from None
        if line is None:
            raise WorkerError(f"worker {self.family} exited (code {self.process.wait()}); "
                              f"last lines of {self.log_path}:\n{self.log_tail()}")
        return json.loads(line)

    def greet(self, timeout: float = 300.0) -> dict:
        self.hello = self.receive(timeout)
        return self.hello

    def ask(self, request: dict, timeout: float) -> dict:
        if self.process.poll() is not None:
            raise WorkerError(f"worker {self.family} is not running; last lines of {self.log_path}:\n"
                              f"{self.log_tail()}")
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        return self.receive(timeout)

    def log_tail(self, lines: int = 15) -> str:
        self.log.flush()
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    def close(self) -> None:
        if self.process.poll() is None:
            try:
                self.process.stdin.write(json.dumps({"op": "quit"}) + "\n")
                self.process.stdin.flush()
                self.process.wait(timeout=60)
            except (OSError, subprocess.TimeoutExpired):
                self.process.kill()
                self.process.wait()
        self.log.close()


# -- set-up -----------------------------------------------------------------------------------


def machine_info() -> dict:
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        cpu = platform.processor() or "unknown"
    versions = {}
    for package in ("joltgym_marl", "mujoco", "envpool", "gymnasium", "supersuit", "pettingzoo", "numpy"):
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            versions[package] = None
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count()
    return {"cpu": cpu, "logical_cores": os.cpu_count(), "usable_cores": usable,
            "python": platform.python_version(), "platform": platform.platform(), "versions": versions}


def task_specs(names: list[str], game_agents: int | None) -> tuple[dict, str]:
    """Per task: its registry entry, the keyword arguments it is built with, and its agents,
    action size and bounds (from the native pool itself); and the asset folder."""
    import joltgym_marl

    specs = {}
    for name in names:
        spec = TASKS[name]
        kwargs = game_kwargs(spec, game_agents)
        with joltgym_marl.WorldPool(name, 1, num_threads=1, **kwargs) as pool:
            agents = pool.num_agents
            specs[name] = {"spec": spec, "kwargs": kwargs, "portable": portable(spec, kwargs),
                           "label": spec.title, "kind": spec.kind, "agents": agents,
                           "act_dim": pool.act_dim,
                           "low": np.asarray(pool.action_low, np.float32),
                           "high": np.asarray(pool.action_high, np.float32)}
    return specs, str(joltgym_marl.ASSET_DIR)


class Actions:
    """Pre-drawn actions per (task, worlds), written once to files the workers read.

    ``[16, worlds, agents, act_dim]`` float32, uniform within the action
    bounds, seeded, the layout ``raw_step_limit --actions`` reads.
    """

    def __init__(self, specs: dict, directory: Path):
        self.specs, self.directory, self.files = specs, directory, {}

    def file(self, task: str, worlds: int) -> str:
        key = (task, worlds)
        if key not in self.files:
            spec = self.specs[task]
            shape = (16, worlds, spec["agents"], spec["act_dim"])
            actions = np.random.default_rng(0).uniform(spec["low"], spec["high"], size=shape)
            path = self.directory / f"actions_{task}_{worlds}.f32"
            actions.astype(np.float32).tofile(path)
            self.files[key] = str(path)
        return self.files[key]


def build_limits() -> dict:
    from benchmarks._native_build import raw_step_limit_binary

    return {"raw_step_limit": str(raw_step_limit_binary())}


# -- the runs -----------------------------------------------------------------------------------


class Suite:
    def __init__(self, args, out: Path):
        self.args = args
        self.out = out
        self.log_dir = out / "logs"
        self.log_dir.mkdir(parents=True, exist_ok=True)
        self.workers: dict[str, Worker] = {}
        self.errors: list[dict] = []
        self.skipped: dict[str, str] = {}
        self.versions: dict[str, dict] = {}
        # (family, task) -> the peer's id of the task, or None with a reason in `unavailable`.
        self.peer_ids: dict[tuple[str, str], str | None] = {}
        self.unavailable_reasons: dict[tuple[str, str], str] = {}
        self.unavailable: list[dict] = []

    def progress(self, text: str) -> None:
        print(text, file=sys.stderr, flush=True)

    def start_workers(self, families: list[str]) -> None:
        for family in families:
            self.workers[family] = Worker(family, self.log_dir)
        missing = []
        for family in families:
            worker = self.workers[family]
            try:
                hello = worker.greet()
            except WorkerError as error:
                hello = {"ok": False, "error": str(error)}
            if not hello.get("ok"):
                missing.append((family, hello))
                continue
            self.versions[family] = hello.get("versions", {})
            if family == "ours" and hello.get("mujoco_imported"):
                raise fail("the 'ours' worker imported mujoco's Python bindings; "
                           "our contenders must be measured without them")
        for family, hello in missing:
            self.workers.pop(family).close()
            reason = hello.get("error", "unknown error")
            if hello.get("missing"):
                reason = (f"{reason} -- install {FAMILY_PACKAGES.get(family, hello['missing'])} "
                          f"(pip install {FAMILY_PACKAGES.get(family, hello['missing']).split(' ')[0]})")
            if not self.args.skip_missing or family == "ours":
                for worker in self.workers.values():
                    worker.close()
                raise fail(f"the {family} contenders cannot run: {reason}\n"
                           "(pass --skip-missing to run without them)")
            self.skipped[family] = reason
            self.progress(f"skipping the {family} contenders: {reason}")

    def query_availability(self, tasks: list[str]) -> None:
        """Asks each peer family which tasks it has, and under which id."""
        portable_specs = [self.specs[t]["portable"] for t in tasks]
        for family, worker in list(self.workers.items()):
            try:
                answer = worker.ask({"op": "available", "tasks": portable_specs}, timeout=300)
            except WorkerError as error:
                answer = {"ok": False, "error": str(error)}
            if not answer.get("ok"):
                raise fail(f"the {family} worker could not list its tasks: {answer.get('error')}")
            for task, entry in answer["available"].items():
                self.peer_ids[(family, task)] = entry.get("id")
                if entry.get("id") is None:
                    self.unavailable_reasons[(family, task)] = entry.get("reason", "not available")

    def runnable(self, contender: str, task: str) -> bool:
        """The contender's family is running and has the task (else it is recorded as unavailable)."""
        family = CONTENDERS[contender][0]
        if family not in self.workers:
            return False
        if self.peer_ids.get((family, task)) is not None:
            return True
        reason = self.unavailable_reasons.get((family, task), "not available")
        if not any(u["task"] == task and u["contender"] == contender for u in self.unavailable):
            self.unavailable.append({"task": task, "task_label": self.specs[task]["label"],
                                     "contender": contender, "label": CONTENDERS[contender][1],
                                     "family": family, "reason": reason})
            self.progress(f"  {contender} not available for {task}: {reason}")
        return False

    def measure(self, contender: str, config: dict, request: dict) -> float | None:
        family = CONTENDERS[contender][0]
        worker = self.workers.get(family)
        if worker is None:
            return None
        timeout = 120.0 + 20 * request["budget"]
        try:
            answer = worker.ask(request, timeout)
        except WorkerError as error:
            answer = {"ok": False, "error": str(error)}
            worker.close()
            self.workers.pop(family, None)
            self.progress(f"worker {family} failed; restarting it")
            try:
                self.workers[family] = Worker(family, self.log_dir)
                self.workers[family].greet()
            except WorkerError:
                self.workers.pop(family, None)
        if answer.get("ok") and family == "ours" and answer.get("mujoco_imported"):
            answer = {"ok": False, "error": "mujoco got imported in the 'ours' worker"}
        if not answer.get("ok"):
            self.errors.append({**config, "contender": contender, "error": answer.get("error"),
                                "traceback": answer.get("traceback")})
            self.progress(f"  ERROR {contender} {config}: {answer.get('error')}")
            return None
        return float(answer["rate"])

    def request(self, contender: str, task: str, worlds: int, threads: int) -> dict:
        spec = self.specs[task]
        family = CONTENDERS[contender][0]
        request = {"op": "measure", "contender": contender, "task": task, "spec": spec["portable"],
                   "peer_id": self.peer_ids.get((family, task)), "worlds": worlds,
                   "threads": threads, "agents": spec["agents"], "act_dim": spec["act_dim"],
                   "actions": self.actions.file(task, worlds), "budget": self.args.budget,
                   "warmup": self.args.warmup}
        if contender == "limit":
            request.update(binary=self.binaries["raw_step_limit"], params=limit_params(spec["kwargs"]),
                           assets=self.asset_dir)
        return request

    def throughput_rounds(self, configs: list[tuple], title: str) -> dict:
        """``configs``: (task, worlds, threads, [contenders]). Returns samples per key, by round."""
        samples: dict[tuple, list] = {}
        rounds = self.args.rounds
        width = max(len(t) for t, *_ in configs) if configs else 12
        total = rounds * sum(len(c) for *_, c in configs)
        done, begun = 0, time.perf_counter()
        for r in range(rounds):
            started = time.perf_counter()
            for task, worlds, threads, contenders in configs:
                shift = r % len(contenders)
                order = contenders[shift:] + contenders[:shift]
                for contender in order:
                    config = {"task": task, "worlds": worlds, "threads": threads, "round": r}
                    rate = self.measure(contender, config, self.request(contender, task, worlds, threads))
                    samples.setdefault((task, contender, worlds, threads), [None] * rounds)[r] = rate
                    shown = "failed" if rate is None else f"{rate:,.0f}/s"
                    done += 1
                    self.progress(f"[{title} {r + 1}/{rounds}] {task:<{width}} {worlds:>5}w {threads}t "
                                  f"{contender:<14} {shown:>12}  ({done}/{total}, "
                                  f"{eta(time.perf_counter() - begun, done, total)})")
            self.progress(f"[{title}] round {r + 1}/{rounds} took {time.perf_counter() - started:.0f} s")
        return samples

    def memory(self, tasks: list[str], sizes: list[int], threads: int) -> list[dict]:
        rows = []
        for task in tasks:
            for worlds in sizes:
                worker = Worker("memprobe", self.log_dir)
                try:
                    hello = worker.greet()
                    if not hello.get("ok"):
                        raise WorkerError(hello.get("error", "memprobe worker failed to start"))
                    answer = worker.ask({"op": "memory", "task": task, "spec": self.specs[task]["portable"],
                                         "worlds": worlds, "threads": threads,
                                         "agents": self.specs[task]["agents"]}, timeout=600)
                except WorkerError as error:
                    answer = {"ok": False, "error": str(error)}
                finally:
                    worker.close()
                config = {"task": task, "worlds": worlds, "threads": threads}
                if not answer.get("ok"):
                    self.errors.append({**config, "contender": "memory", "error": answer.get("error"),
                                        "traceback": answer.get("traceback")})
                    self.progress(f"  ERROR memory {config}: {answer.get('error')}")
                    continue
                rows.append({**config, **{k: answer[k] for k in (
                    "rss_before", "rss_after", "bytes_per_world", "construct_seconds",
                    "reset_and_step_seconds")}})
                self.progress(f"[memory] {task:<12} {worlds:>5} worlds: "
                              f"{answer['bytes_per_world'] / 1024:,.1f} KiB/world, "
                              f"built in {answer['construct_seconds'] * 1000:,.1f} ms")
        return rows

    def target_size(self) -> tuple[int, int]:
        """The (worlds, threads) of the target table: 64 and 2, or the nearest measured."""
        worlds, threads = self.args.worlds, self.args.threads
        at = TARGET_WORLDS if TARGET_WORLDS in worlds else max([w for w in worlds if w <= TARGET_WORLDS]
                                                                or worlds)
        th = TARGET_THREADS if TARGET_THREADS in threads else max(threads)
        return at, th

    def run(self) -> dict:
        args = self.args
        started = time.time()
        self.progress("building the C++ limit program ...")
        try:
            self.binaries = build_limits()
        except (subprocess.CalledProcessError, RuntimeError, FileNotFoundError) as error:
            raise fail(f"could not build the C++ limit program "
                       f"(needs cmake and a C++17 compiler): {error}") from None
        tasks = list(args.tasks)
        scaling_task = args.scaling_task if args.scaling_worlds else None
        needed = list(dict.fromkeys([*tasks, *([scaling_task] if scaling_task else [])]))
        self.specs, self.asset_dir = task_specs(needed, args.game_agents)
        tmp = tempfile.TemporaryDirectory(prefix="joltgym_bench_")
        self.actions = Actions(self.specs, Path(tmp.name))
        target = self.target_size()

        contenders = [c for c in CONTENDERS if c in args.contenders]
        peer_tasks = set(args.peer_tasks)

        def wanted(contender: str, task: str) -> bool:
            return contender in OURS_AND_LIMIT or task in peer_tasks

        families = sorted({CONTENDERS[c][0] for c in contenders for t in tasks
                           if wanted(c, t) and any(applies(c, TASKS[t], w, th, target)
                                                   for w in args.worlds for th in args.threads)}
                          | {"ours", "native"})
        self.progress(f"starting workers: {', '.join(families)}")
        self.start_workers(families)
        self.query_availability(needed)

        configs = []
        for task in tasks:
            for worlds in args.worlds:
                for threads in args.threads:
                    listed = [c for c in contenders if wanted(c, task)
                              and applies(c, TASKS[task], worlds, threads, target) and self.runnable(c, task)]
                    configs.append((task, worlds, threads, listed))
        grid = self.throughput_rounds(configs, "throughput")

        scaling = {}
        if scaling_task:
            ours = "agent_vec" if TASKS[scaling_task].is_game else "vector"
            scaling_configs = [(scaling_task, worlds, 2, ["limit", ours]) for worlds in args.scaling_worlds]
            scaling = self.throughput_rounds(scaling_configs, "scaling")
        memory = self.memory(args.memory_tasks, args.memory_worlds, threads=2) if args.memory_worlds else []

        for worker in self.workers.values():
            worker.close()
        tmp.cleanup()

        settings = {"quick": args.quick, "only": args.only, "rounds": args.rounds, "budget_seconds": args.budget,
                    "warmup_seconds": args.warmup, "worlds": args.worlds, "threads": args.threads,
                    "tasks": tasks, "peer_tasks": [t for t in tasks if t in peer_tasks],
                    "game_agents": args.game_agents, "scaling_task": scaling_task,
                    "scaling_worlds": args.scaling_worlds, "memory_tasks": args.memory_tasks,
                    "memory_worlds": args.memory_worlds, "async_cap": ASYNC_CAP,
                    "target_worlds": target[0], "target_threads": target[1]}
        peer_ids = {f"{family}:{task}": pid for (family, task), pid in sorted(self.peer_ids.items())
                    if family not in ("ours", "native")}
        task_info = [{"name": name, "label": s["label"], "kind": s["kind"], "agents": s["agents"],
                      "kwargs": s["kwargs"], "env_id": s["spec"].env_id, "reference_id": s["spec"].reference_id}
                     for name, s in self.specs.items()]
        return _report.assemble(
            grid=grid, scaling=scaling, memory=memory, tasks=task_info, contenders=CONTENDERS,
            machine=self.machine, settings=settings, worker_versions=self.versions, peer_ids=peer_ids,
            unavailable=self.unavailable, errors=self.errors, skipped=self.skipped, started=started,
            duration=time.time() - started)


def default_out(quick: bool, only: str | None) -> Path:
    """Where a run writes without ``--out``: an untracked folder per kind of run."""
    return DEFAULT_OUT / (only if only else "quick" if quick else "full")


def parse_args(argv=None):
    names = list(TASKS)
    first_single = SINGLE_AGENT_TASKS[0].name if SINGLE_AGENT_TASKS else None
    peers_quick = [s.name for s in (SINGLE_AGENT_TASKS[:1] + GAMES[:1])]
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true",
                        help="every task's limit, core and vector env on 1 and 8 worlds, every peer on "
                             f"{' and '.join(peers_quick) or 'the first task of each kind'}; tiny time budget")
    parser.add_argument("--only", choices=["targets", "end_to_end", "mamujoco", "torchrl"],
                        help="targets: only the target table (limit, vector, pool, agent_vec at "
                             f"{TARGET_WORLDS} worlds / {TARGET_THREADS} threads, 5 rounds; no scaling, no memory); "
                             "end_to_end: rollout collection with a policy in the loop "
                             f"(benchmarks/policy_rollout.py on {', '.join(END_TO_END_TASKS)}: ours sync and "
                             "async, the limit, Gymnasium SyncVectorEnv, EnvPool sync and async, SuperSuit "
                             "for the game) and SB3 PPO wall-clock (benchmarks/sb3_training.py), written to "
                             "end_to_end.md; mamujoco: MaMuJoCo's vec_env against Farama's parallel_env "
                             "and the single-agent C++ limit (benchmarks/mamujoco_vs_farama.py), written "
                             "to mamujoco.md; torchrl: TorchRL frames/s of our batched env against ParallelEnv of "
                             "PettingZooWrapper on Farama's MaMuJoCo (benchmarks/torchrl_batched.py), written to "
                             "torchrl.md")
    parser.add_argument("--out", type=Path,
                        help="output directory (default: runs/benchmarks/full, .../quick or .../targets, "
                             "untracked; the committed results are written only with --out benchmarks/results)")
    parser.add_argument("--rounds", type=int, help="interleaved rounds (default 3; quick 1; --only targets 5)")
    parser.add_argument("--budget", type=float, help="seconds per measurement (default 0.5; quick 0.05)")
    parser.add_argument("--warmup", type=float, help="warm-up seconds per measurement (default 0.1; quick 0.01)")
    parser.add_argument("--worlds", type=int, nargs="+",
                        help=f"world counts (default 1 8 64 256; quick 1 8; --only targets {TARGET_WORLDS})")
    parser.add_argument("--threads", type=int, nargs="+",
                        help=f"thread counts (default 1 2; --only targets {TARGET_THREADS})")
    parser.add_argument("--tasks", nargs="+", choices=names, metavar="TASK",
                        help=f"tasks of the native registry (default: all): {', '.join(names)}")
    parser.add_argument("--peer-tasks", nargs="*", choices=names, metavar="TASK",
                        help="tasks the peers (Gymnasium, mujoco.batch, EnvPool, SuperSuit) run on "
                             f"(default: all; quick: {' '.join(peers_quick)})")
    parser.add_argument("--contenders", nargs="+", choices=list(CONTENDERS), metavar="NAME",
                        help=f"contenders (default all): {', '.join(CONTENDERS)}")
    parser.add_argument("--game-agents", type=int, default=DEFAULT_GAME_AGENTS,
                        help="agents per world of the games that take num_agents (default %(default)s)")
    parser.add_argument("--scaling-task", choices=names, default=first_single, metavar="TASK",
                        help="the task of the 2-thread scaling run (default: the registry's first "
                             "single-agent task, %(default)s)")
    parser.add_argument("--scaling-worlds", type=int, nargs="*",
                        help="scaling-run sizes (default 1 4 16 64 256 1024; quick 1 4 16)")
    parser.add_argument("--memory-tasks", nargs="*", choices=names, metavar="TASK",
                        help="memory/construction tasks (default: --tasks; quick: the --peer-tasks)")
    parser.add_argument("--memory-worlds", type=int, nargs="*",
                        help="memory/construction sizes (default 1 64 512 4096; quick 1 64)")
    parser.add_argument("--skip-missing", action="store_true",
                        help="run without the contenders whose peer library is not installed")
    args = parser.parse_args(argv)
    quick, targets_only = args.quick, args.only == "targets"
    defaults = {
        "rounds": 5 if targets_only else 1 if quick else 3,
        "budget": 0.05 if quick else 0.5,
        "warmup": 0.01 if quick else 0.1,
        "worlds": [TARGET_WORLDS] if targets_only else [1, 8] if quick else [1, 8, 64, 256],
        "threads": [TARGET_THREADS] if targets_only else [1, 2],
        "tasks": names,
        "contenders": list(TARGET_CONTENDERS) if targets_only else list(CONTENDERS),
        "scaling_worlds": [] if targets_only else [1, 4, 16] if quick else [1, 4, 16, 64, 256, 1024],
        "memory_worlds": [] if targets_only else [1, 64] if quick else [1, 64, 512, 4096],
    }
    for name, value in defaults.items():
        if getattr(args, name) is None:
            setattr(args, name, value)
    if args.peer_tasks is None:
        args.peer_tasks = [t for t in peers_quick if t in args.tasks] if quick else list(args.tasks)
    if args.memory_tasks is None:
        args.memory_tasks = list(args.peer_tasks) if quick else list(args.tasks)
    if args.rounds < 1 or args.budget <= 0 or args.warmup < 0:
        parser.error("--rounds should be >= 1, --budget > 0 and --warmup >= 0")
    if min(args.worlds) < 1 or min(args.threads) < 1 or args.game_agents < 1:
        parser.error("--worlds, --threads and --game-agents should be >= 1")
    if args.scaling_worlds and args.scaling_task is None:
        parser.error("no single-agent task is registered: pass --scaling-task or --scaling-worlds with no size")
    if "limit" not in args.contenders:
        args.contenders = ["limit", *args.contenders]
    if args.out is None:
        args.out = default_out(quick, args.only)
    return args


def end_to_end(args, out: Path) -> int:
    here = Path(__file__).resolve().parent
    tasks = list(END_TO_END_TASKS)
    commands = []
    for task in tasks:
        sizes = ["--seconds", "0.3", "--rounds", "1", "--worlds", "8"] if args.quick else ["--rounds", "3"]
        commands.append([str(here / "policy_rollout.py"), "--task", task, *sizes])
    sizes = ["--steps", "2048", "--envs", "4", "--rounds", "1"] if args.quick else []
    commands.append([str(here / "sb3_training.py"), *sizes])
    parts, status = [], 0
    for k, command in enumerate(commands, 1):
        shown = " ".join(["python", str(Path(command[0]).relative_to(here.parent)), *command[1:]])
        print(f"[end_to_end {k}/{len(commands)}] {shown}", file=sys.stderr, flush=True)
        proc = subprocess.run([sys.executable, *command], capture_output=True, text=True)
        status = status or proc.returncode
        parts.append(f"$ {shown}\n{proc.stdout.rstrip()}"
                     + (f"\n(exit code {proc.returncode})\n{proc.stderr[-2000:]}" if proc.returncode else ""))
    text = "# End to end: the policy in the loop\n\n```\n" + "\n\n".join(parts) + "\n```\n"
    (out / "end_to_end.md").write_text(text)
    print(text)
    print(f"wrote {out / 'end_to_end.md'}", file=sys.stderr)
    return 1 if status else 0


def section(script: str, title: str, name: str, quick_args: list[str], args, out: Path) -> int:
    """Runs a side-by-side script of benchmarks/ (``quick_args`` with --quick) into ``out/name``."""
    command = [str(Path(__file__).resolve().parent / script)]
    if args.quick:
        command += quick_args
    proc = subprocess.run([sys.executable, *command], capture_output=True, text=True)
    text = f"# {title}\n\n" + proc.stdout
    if proc.returncode:
        text += f"\n(exit code {proc.returncode})\n```\n{proc.stderr[-2000:]}\n```\n"
    (out / name).write_text(text)
    print(text)
    print(f"wrote {out / name}", file=sys.stderr)
    return 1 if proc.returncode else 0


def mamujoco(args, out: Path) -> int:
    return section("mamujoco_vs_farama.py", "MaMuJoCo", "mamujoco.md",
                   ["--rounds", "1", "--seconds", "0.2", "--worlds", "8"], args, out)


def torchrl(args, out: Path) -> int:
    return section("torchrl_batched.py", "TorchRL", "torchrl.md",
                   ["--rounds", "1", "--seconds", "0.2", "--worlds", "4"], args, out)


def main(argv=None) -> int:
    args = parse_args(argv)
    out = args.out.resolve()
    if args.only == "mamujoco":
        out.mkdir(parents=True, exist_ok=True)
        return mamujoco(args, out)
    if args.only == "torchrl":
        out.mkdir(parents=True, exist_ok=True)
        return torchrl(args, out)
    if args.only == "end_to_end":
        out.mkdir(parents=True, exist_ok=True)
        return end_to_end(args, out)
    if out == COMMITTED_OUT.resolve():
        print(f"writing the committed results in {out} (asked for with --out)", file=sys.stderr)
    out.mkdir(parents=True, exist_ok=True)
    suite = Suite(args, out)
    suite.machine = machine_info()
    results = suite.run()
    (out / "results.json").write_text(json.dumps(results, indent=1) + "\n")
    _report.charts(results, out)
    markdown = _report.markdown(results)
    (out / "results.md").write_text(markdown)
    print(markdown)
    print(f"wrote {out}", file=sys.stderr)
    if results["errors"]:
        print(f"{len(results['errors'])} measurement(s) failed; see results.json and {out / 'logs'}",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
