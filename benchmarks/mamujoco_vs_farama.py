"""MaMuJoCo throughput: our ``mamujoco_v1.vec_env`` against Farama's
``gymnasium_robotics.mamujoco_v1.parallel_env`` and against the single-agent
C++ limit of the same robot, measured side by side.

    python benchmarks/mamujoco_vs_farama.py [--cases HalfCheetah:6x1 Ant:4x2] [--worlds 64]
                                            [--threads 2] [--seconds 1.0] [--rounds 3]
    python -m benchmarks.run --only mamujoco     (the same, as the suite's section)

Per case and round, interleaved: Farama's ``parallel_env`` (one world at a
time, as it runs: ``--worlds`` of them stepped in turn, in a worker that
imports it; its rate does not depend on the number of worlds), our
``vec_env`` (``--worlds`` worlds on ``--threads`` threads, per-agent dicts in
and out, in a worker that never imports ``mujoco``), the single-agent
``WorldPool.step_all`` of the robot and the C++ ``raw_step_limit --mode env``
(the robot's whole env step, no Python), all on pre-drawn uniform actions.
Reported: median world-steps/s over rounds and the ratios ours/Farama and
ours/limit, and beside them limit/Farama: the most any batched env of this
robot could gain over Farama's loop here (ours/Farama = ours/limit x
limit/Farama), so a target such as 20x Farama that exceeds it cannot be met
on this machine however fast the wrapper is. Run it from the clone's root.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks._paths import use_checkout  # noqa: E402

use_checkout()

import numpy as np  # noqa: E402

DEFAULT_CASES = ["HalfCheetah:6x1", "Ant:4x2"]
ACTION_SETS = 16


def _actions(agents_dims: list[tuple[str, int]], worlds: int) -> list[dict[str, np.ndarray]]:
    rng = np.random.default_rng(0)
    return [{a: rng.uniform(-1, 1, (worlds, d)).astype(np.float32) for a, d in agents_dims}
            for _ in range(ACTION_SETS)]


class Clock:
    """Wall-clock and process CPU time (every thread's, the native workers' too)."""

    def __init__(self):
        self.wall, self.cpu = time.perf_counter(), time.process_time()

    def elapsed(self) -> float:
        return time.perf_counter() - self.wall

    def rates(self, steps: int) -> tuple[float, float]:
        return steps / self.elapsed(), steps / (time.process_time() - self.cpu)


def batched_rates(step, actions: list, worlds: int, seconds: float) -> tuple[float, float]:
    """World-steps per second of ``step(actions[k])`` over ``worlds`` worlds: 20
    untimed steps, then as many as fit in ``seconds``, the action sets cycled."""
    for t in range(20):
        step(actions[t % ACTION_SETS])
    steps = 0
    clock = Clock()
    while clock.elapsed() < seconds:
        step(actions[steps % ACTION_SETS])
        steps += 1
    return clock.rates(steps * worlds)


def worker(kind: str, scenario: str, conf: str, worlds: int, threads: int, seconds: float) -> tuple[float, float]:
    """World-steps per second of one contender (run in its own process), per
    wall-clock second and per CPU second."""
    if kind == "farama":
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            from gymnasium_robotics import mamujoco_v1 as farama
            envs = [farama.parallel_env(scenario, conf) for _ in range(min(worlds, 8))]
        for i, env in enumerate(envs):
            env.reset(seed=i)
        dims = [(a, envs[0].action_space(a).shape[0]) for a in envs[0].possible_agents]
        acts = _actions(dims, len(envs))
        steps, t = 0, 0
        clock = Clock()
        while clock.elapsed() < seconds:
            a = acts[t % ACTION_SETS]
            for i, env in enumerate(envs):
                _, _, term, trunc, _ = env.step({k: v[i] for k, v in a.items()})
                if any(term.values()) or any(trunc.values()):
                    env.reset()
                steps += 1
            t += 1
        return clock.rates(steps)
    from joltgym_marl import mamujoco_v1
    from joltgym_marl.mamujoco.factorization import ROBOTS

    if kind in ("ours", "ours_padded"):
        layout = "padded" if kind == "ours_padded" else "per_agent"
        vec = mamujoco_v1.vec_env(scenario, conf, num_envs=worlds, num_threads=threads, layout=layout)
        vec.reset(seed=0)
        acts = _actions(list(zip(vec.possible_agents, vec.act_dims)), worlds)
        if layout == "padded":
            padded = []
            for a in acts:
                p = np.zeros((worlds, vec.num_agents, vec.padded_act_dim), np.float32)
                for i, agent in enumerate(vec.possible_agents):
                    p[:, i, :vec.act_dims[i]] = a[agent]
                padded.append(p)
            acts = padded
        rates = batched_rates(vec.step, acts, worlds, seconds)
        vec.close()
        return rates
    if kind == "pool":
        import joltgym_marl
        from joltgym_marl.registry import TASKS

        robot = ROBOTS[scenario]
        with joltgym_marl.WorldPool(robot, worlds, num_threads=threads,
                                    max_episode_steps=TASKS[robot].max_episode_steps) as pool:
            pool.reset_all(seed=0)
            rng = np.random.default_rng(0)
            acts = rng.uniform(-1, 1, (ACTION_SETS, worlds, 1, pool.act_dim)).astype(np.float32)
            return batched_rates(pool.step_all, acts, worlds, seconds)
    raise ValueError(kind)


def run_worker(kind, scenario, conf, worlds, threads, seconds) -> tuple[float, float]:
    out = subprocess.run([sys.executable, __file__, "--worker", kind, "--cases", f"{scenario}:{conf}",
                          "--worlds", str(worlds), "--threads", str(threads), "--seconds", str(seconds)],
                         check=True, capture_output=True, text=True).stdout
    wall, cpu = out.strip().splitlines()[-1].split()
    return float(wall), float(cpu)


def run_limit(binary: Path, robot: str, worlds: int, threads: int, seconds: float, tmp: Path) -> tuple[float, float]:
    """The C++ limit's world-steps per wall-clock second (its own timing) and per
    CPU second (the child's CPU time, start-up and warm-up included: a lower bound)."""
    import resource

    from benchmarks.pool_vs_raw import make_actions, run_raw

    actions_file = tmp / f"{robot}.f32"
    if not actions_file.exists():
        make_actions(robot, worlds, {}).tofile(actions_file)
    probe = run_raw(binary, robot, worlds, threads, 200, "env", actions_file, {}, warmup_steps=20)
    steps = max(200, int(probe * seconds / worlds))

    def children_cpu():
        r = resource.getrusage(resource.RUSAGE_CHILDREN)
        return r.ru_utime + r.ru_stime

    before = children_cpu()
    wall = run_raw(binary, robot, worlds, threads, steps, "env", actions_file, {}, warmup_steps=20)
    return wall, (steps + 20) * worlds / (children_cpu() - before)


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", nargs="+", default=DEFAULT_CASES, metavar="SCENARIO:CONF",
                        help="scenario:agent_conf pairs (default %(default)s)")
    parser.add_argument("--worlds", type=int, default=64)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--seconds", type=float, default=1.0, help="seconds per measurement")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--no-limit", action="store_true", help="skip the C++ limit (it needs a cmake build)")
    parser.add_argument("--worker", choices=["farama", "ours", "ours_padded", "pool"], help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if min(args.worlds, args.threads, args.rounds) < 1 or args.seconds <= 0:
        parser.error("--worlds, --threads, --rounds should be >= 1 and --seconds > 0")
    return args


def table(args) -> str:
    from joltgym_marl.mamujoco.factorization import ROBOTS

    binary = None
    if not args.no_limit:
        from benchmarks._native_build import raw_step_limit_binary
        binary = raw_step_limit_binary()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    lines = [f"MaMuJoCo: {args.worlds} worlds, {args.threads} threads, {args.rounds} rounds of "
             f"{args.seconds:g} s, interleaved; world-steps per wall-clock second (median over rounds), "
             f"and per CPU second in parentheses (every thread's CPU time: the cost of a world-step, "
             f"whatever else the machine runs); load average at the start {load:.1f} on "
             f"{os.cpu_count()} CPUs", "",
             "| scenario | conf | Farama parallel_env | ours vec_env | ours padded | single-agent WorldPool "
             "| single-agent C++ limit | ours / Farama | ours / limit | limit / Farama (bound) |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    with tempfile.TemporaryDirectory(prefix="mamujoco_bench_") as tmp:
        for case in args.cases:
            scenario, conf = case.split(":")
            rates: dict[str, list[tuple[float, float]]] = {
                k: [] for k in ("farama", "ours", "ours_padded", "pool", "limit")}
            for _ in range(args.rounds):
                for kind in ("farama", "ours", "ours_padded", "pool"):
                    rates[kind].append(run_worker(kind, scenario, conf, args.worlds, args.threads, args.seconds))
                if binary is not None:
                    rates["limit"].append(run_limit(binary, ROBOTS[scenario], args.worlds, args.threads,
                                                    args.seconds, Path(tmp)))
            wall = {k: statistics.median(r[0] for r in v) if v else float("nan") for k, v in rates.items()}
            cpu = {k: statistics.median(r[1] for r in v) if v else float("nan") for k, v in rates.items()}

            def cell(k):
                return f"{wall[k]:,.0f} ({cpu[k]:,.0f})"

            lines.append(f"| {scenario} | {conf} | {cell('farama')} | {cell('ours')} | {cell('ours_padded')} | "
                         f"{cell('pool')} | {cell('limit')} | {wall['ours'] / wall['farama']:.1f}x "
                         f"({cpu['ours'] / cpu['farama']:.1f}x) | {wall['ours'] / wall['limit']:.2f} "
                         f"({cpu['ours'] / cpu['limit']:.2f}) | {wall['limit'] / wall['farama']:.1f}x "
                         f"({cpu['limit'] / cpu['farama']:.1f}x) |")
            print(lines[-1], file=sys.stderr, flush=True)
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.worker:
        scenario, conf = args.cases[0].split(":")
        print(*worker(args.worker, scenario, conf, args.worlds, args.threads, args.seconds))
        return 0
    print(table(args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
