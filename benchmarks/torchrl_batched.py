"""TorchRL frames/s: our batched MaMuJoCo env against TorchRL's ParallelEnv of
PettingZooWrapper envs on Farama's MaMuJoCo, measured side by side.

    python benchmarks/torchrl_batched.py [--cases HalfCheetah:6x1] [--worlds 64] [--threads 2]
                                         [--farama-processes 2] [--seconds 2] [--rounds 3]
    python -m benchmarks.run --only torchrl     (the same, as the suite's section)

Per case and round, interleaved, each contender in a fresh process, the loop a
TorchRL collector runs (``step_and_maybe_reset`` on pre-drawn random actions,
16 sets cycled; no policy):

* ``farama``: TorchRL's ``ParallelEnv`` of ``--worlds`` ``PettingZooWrapper``
  envs on Farama's ``gymnasium_robotics.mamujoco_v1.parallel_env`` (a wrapper
  keeps the step infos' keys to those of reset, which ``PettingZooWrapper``
  needs), in ``--farama-processes`` worker processes: ``ParallelEnv(P,
  SerialEnv(worlds / P, ...))``, or one process per world when P equals
  ``--worlds`` (``ParallelEnv(worlds, ...)``, some 250 MB and several seconds
  of start-up per process). A conf whose agents observe different sizes
  (HalfCheetah 6x1) needs ``group_map=MarlGroupMapType.ONE_GROUP_PER_AGENT``:
  ``PettingZooWrapper``'s default single group cannot stack them;
* ``ours``: :class:`joltgym_marl.torchrl.BatchedMaMuJoCoEnv` with the same
  groups, ``--worlds`` worlds on ``--threads`` native threads, float64 as
  Farama's; ``ours 1 group``: the same with its default grouping (one group,
  the ragged observations padded), which makes fewer tensors per step.

Reported: median frames (world-steps) per wall-clock second over rounds, per
CPU second of every process in parentheses, the ratios, and where our time
goes per batched step, measured in the ``ours`` process: the native
``step_all`` alone on the same actions, our ``_step`` (native step, actions
scattered, observations gathered, the TensorDict built) and TorchRL's
``step_and_maybe_reset`` around it (spec checks, ``step_mdp``, done handling).
Run it from the clone's root.
"""

from __future__ import annotations

import argparse
import functools
import os
import statistics
import subprocess
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks._paths import use_checkout  # noqa: E402

use_checkout()

DEFAULT_CASES = ["HalfCheetah:6x1"]
ACTION_SETS = 16
KINDS = ("farama", "ours", "ours_one_group")
LABELS = {"farama": "Farama: TorchRL ParallelEnv of PettingZooWrapper", "ours": "ours: BatchedMaMuJoCoEnv",
          "ours_one_group": "ours, 1 group"}


def _quiet():
    warnings.filterwarnings("ignore")


def make_farama(scenario: str, conf: str, per_agent: bool):
    """One Farama MaMuJoCo world in TorchRL's PettingZooWrapper (a worker's env)."""
    _quiet()
    from gymnasium_robotics import mamujoco_v1
    from pettingzoo.utils import BaseParallelWrapper
    from torchrl.envs import PettingZooWrapper
    from torchrl.envs.utils import MarlGroupMapType

    class ResetInfoKeys(BaseParallelWrapper):
        # PettingZooWrapper builds its info spec from reset's infos; Farama's
        # step infos carry more keys (the reward terms): keep reset's.
        def reset(self, seed=None, options=None):
            obs, infos = self.env.reset(seed=seed, options=options)
            self._keys = {a: list(info) for a, info in infos.items()}
            return obs, infos

        def step(self, actions):
            *out, infos = self.env.step(actions)
            return (*out, {a: {k: info[k] for k in self._keys[a]} for a, info in infos.items()})

        def state(self):
            return self.env.state()

    group_map = MarlGroupMapType.ONE_GROUP_PER_AGENT if per_agent else None
    return PettingZooWrapper(ResetInfoKeys(mamujoco_v1.parallel_env(scenario, conf)), use_mask=False,
                             group_map=group_map)


def ragged(scenario: str, conf: str) -> bool:
    """Whether the conf's agents observe or act on different sizes."""
    from joltgym_marl.mamujoco import catalog

    record = next(c for c in catalog.scenario(scenario).confs if c.agent_conf == conf)
    return len(set(record.obs_dims)) > 1 or len(set(record.action_dims)) > 1


def tree_cpu() -> float:
    """CPU seconds of this process (every thread) and of its live child
    processes (ParallelEnv's workers)."""
    import psutil

    total = time.process_time()
    for child in psutil.Process().children(recursive=True):
        try:
            times = child.cpu_times()
        except psutil.Error:  # (gone meanwhile)
            continue
        total += times.user + times.system
    return total


class Clock:
    """Wall-clock and CPU time of the process tree."""

    def __init__(self):
        self.wall, self.cpu = time.perf_counter(), tree_cpu()

    def elapsed(self) -> float:
        return time.perf_counter() - self.wall

    def cpu_elapsed(self) -> float:
        return tree_cpu() - self.cpu


def timed_loop(step, items: list, seconds: float, warmup: int = 10) -> tuple[int, float, float]:
    """``step(items[k])`` cycled: ``warmup`` untimed calls, then as many as fit
    in ``seconds``; (calls, wall seconds, CPU seconds of the process tree)."""
    for k in range(warmup):
        step(items[k % len(items)])
    calls = 0
    clock = Clock()
    while clock.elapsed() < seconds:
        step(items[calls % len(items)])
        calls += 1
    return calls, clock.elapsed(), clock.cpu_elapsed()


def worker(kind: str, scenario: str, conf: str, worlds: int, threads: int, processes: int,
           seconds: float) -> dict[str, float]:
    _quiet()
    import torch
    from torchrl.envs.utils import MarlGroupMapType

    torch.set_num_threads(1)
    torch.manual_seed(0)
    per_agent = ragged(scenario, conf)
    if kind == "farama":
        from torchrl.envs import ParallelEnv, SerialEnv

        make = functools.partial(make_farama, scenario, conf, per_agent)
        if processes >= worlds:
            env = ParallelEnv(worlds, make)
        else:
            if worlds % processes:
                raise SystemExit(f"--worlds ({worlds}) should be a multiple of --farama-processes ({processes})")
            env = ParallelEnv(processes, functools.partial(SerialEnv, worlds // processes, make))
    else:
        from joltgym_marl.torchrl import BatchedMaMuJoCoEnv

        group_map = MarlGroupMapType.ONE_GROUP_PER_AGENT if kind == "ours" and per_agent else None
        env = BatchedMaMuJoCoEnv(scenario, conf, worlds, num_threads=threads, group_map=group_map)
    env.set_seed(0)
    td = env.reset()
    actions = [env.full_action_spec.rand() for _ in range(ACTION_SETS)]
    state = {"td": td}

    def step(action):
        state["td"].update(action)
        _, state["td"] = env.step_and_maybe_reset(state["td"])

    calls, wall, cpu = timed_loop(step, actions, seconds)
    out = {"calls": calls, "wall": wall, "cpu": cpu}
    if kind == "farama":
        env.close()
        return out
    # Where our time goes: the native step alone, then our _step (native step
    # included), each on the same actions, in this process.
    pool, group_names = env.pool, list(env.group_map)
    import numpy as np

    rows = []
    for action in actions:
        td = state["td"].clone()
        td.update(action)
        rows.append(td)
    native = [np.random.default_rng(k).uniform(-1, 1, (worlds, env.pool.action_low.shape[0])).astype(np.float32)
              for k in range(ACTION_SETS)]
    n_native, w_native, _ = timed_loop(pool.step_all, native, seconds / 2)
    env.reset()
    n_step, w_step, _ = timed_loop(env._step, rows, seconds / 2)
    out.update(native=w_native / n_native, own_step=w_step / n_step, full=wall / calls, groups=len(group_names))
    env.close()
    return out


def run_worker(kind, scenario, conf, args) -> dict[str, float]:
    command = [sys.executable, __file__, "--worker", kind, "--cases", f"{scenario}:{conf}", "--worlds",
               str(args.worlds), "--threads", str(args.threads), "--farama-processes", str(args.farama_processes),
               "--seconds", str(args.seconds)]
    out = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    values = dict(item.split("=") for item in out.strip().splitlines()[-1].split())
    return {k: float(v) for k, v in values.items()}


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", nargs="+", default=DEFAULT_CASES, metavar="SCENARIO:CONF",
                        help="MaMuJoCo scenario:agent_conf pairs (default %(default)s)")
    parser.add_argument("--worlds", type=int, default=64, help="worlds (TorchRL's batch) per contender (default 64)")
    parser.add_argument("--threads", type=int, default=2, help="our native threads (default 2)")
    parser.add_argument("--farama-processes", type=int, default=2,
                        help="ParallelEnv worker processes of the Farama route (default 2, one per core; "
                             "= --worlds: one process per world)")
    parser.add_argument("--seconds", type=float, default=2.0, help="seconds per measurement (default 2)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--worker", choices=KINDS, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if min(args.worlds, args.threads, args.rounds, args.farama_processes) < 1 or args.seconds <= 0:
        parser.error("--worlds, --threads, --farama-processes, --rounds should be >= 1 and --seconds > 0")
    return args


def table(args) -> str:
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    procs = args.farama_processes
    layout = (f"ParallelEnv({args.worlds}) of 1 world each" if procs >= args.worlds
              else f"ParallelEnv({procs}) of SerialEnv({args.worlds // procs})")
    lines = [f"TorchRL, MaMuJoCo: {args.worlds} worlds; Farama's route: {layout}; ours: 1 env of "
             f"{args.worlds} worlds on {args.threads} native threads; {args.rounds} rounds of {args.seconds:g} s, "
             f"interleaved, each contender in a fresh process. Frames (world-steps) per wall-clock second, median "
             f"over rounds; per CPU second of all its processes (ParallelEnv's workers too) in parentheses. "
             f"Load average at the start {load:.1f} on {os.cpu_count()} CPUs.", "",
             "| scenario | conf | " + " | ".join(LABELS[k] for k in KINDS) + " | ours / Farama | ours, 1 group / "
             "Farama |", "|---|---|" + "---:|" * (len(KINDS) + 2)]
    splits = []
    for case in args.cases:
        scenario, conf = case.split(":")
        results: dict[str, list[dict[str, float]]] = {k: [] for k in KINDS}
        for _ in range(args.rounds):
            for kind in KINDS:
                results[kind].append(run_worker(kind, scenario, conf, args))
        rate = {k: statistics.median(r["calls"] * args.worlds / r["wall"] for r in v) for k, v in results.items()}
        per_cpu = {k: statistics.median(r["calls"] * args.worlds / r["cpu"] for r in v) for k, v in results.items()}
        cells = " | ".join(f"{rate[k]:,.0f} ({per_cpu[k]:,.0f})" for k in KINDS)
        lines.append(f"| {scenario} | {conf} | {cells} | {rate['ours'] / rate['farama']:.1f}x | "
                     f"{rate['ours_one_group'] / rate['farama']:.1f}x |")
        print(lines[-1], file=sys.stderr, flush=True)
        for kind in ("ours", "ours_one_group"):
            r = results[kind]
            native = statistics.median(x["native"] for x in r) * 1e3
            own = statistics.median(x["own_step"] for x in r) * 1e3
            full = statistics.median(x["full"] for x in r) * 1e3
            groups = int(r[0]["groups"])
            splits.append(f"| {scenario} {conf} | {LABELS[kind]} ({groups} group{'s' * (groups > 1)}) | "
                          f"{full:.2f} | {native:.2f} ({native / full:.0%}) | {max(own - native, 0):.2f} "
                          f"({max(own - native, 0) / full:.0%}) | {max(full - own, 0):.2f} "
                          f"({max(full - own, 0) / full:.0%}) |")
    lines += ["", f"Where our time goes, per batched step of {args.worlds} worlds (ms, median over rounds; share of "
              "the whole step): the native step_all alone, our _step's tensors (actions scattered, observations "
              "gathered, the TensorDict built) and TorchRL's step_and_maybe_reset around _step.", "",
              "| case | env | whole step | native step_all | our tensors | TorchRL |", "|---|---|---:|---:|---:|---:|",
              *splits]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.worker:
        scenario, conf = args.cases[0].split(":")
        out = worker(args.worker, scenario, conf, args.worlds, args.threads, args.farama_processes, args.seconds)
        print(" ".join(f"{k}={v}" for k, v in out.items()))
        return 0
    print(table(args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
