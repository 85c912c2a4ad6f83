"""WorldPool throughput against the raw engine limit, measured side by side.

    python benchmarks/pool_vs_raw.py [--task TASK] [--worlds 64] [--threads 2]
                                     [--steps 1000] [--rounds 7] [--game-agents 4]

Each round runs the C++ ``raw_step_limit`` program (N worlds on T threads, no
Python: ``--mode mj_step``, the bare physics, and ``--mode env``, the whole
env step) and the WorldPool from Python (``step_all``) on the same task,
worlds, threads and actions, so that machine noise hits all alike. Prints the
median (and min-max) env-steps/s (world steps) of each and the ratios of the
medians. ``--task`` is any task of the native registry (default: its first
single-agent task); a game with a ``num_agents`` parameter runs with
``--game-agents`` agents per world. Run it from the clone's root.
"""

from __future__ import annotations

import argparse
import json
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

from benchmarks._tasks import DEFAULT_GAME_AGENTS, SINGLE_AGENT_TASKS, TASKS, game_kwargs, limit_params  # noqa: E402


def make_actions(task: str, worlds: int, kwargs: dict) -> np.ndarray:
    """16 sets of uniform random actions within the action bounds, cycled by every contender."""
    import joltgym_marl

    with joltgym_marl.WorldPool(task, 1, num_threads=1, **kwargs) as pool:
        shape = (16, worlds, pool.num_agents, pool.act_dim)
        low, high = np.asarray(pool.action_low), np.asarray(pool.action_high)
    return np.random.default_rng(0).uniform(low, high, size=shape).astype(np.float32)


def run_raw(binary: Path, task: str, worlds: int, threads: int, steps: int, mode: str,
            actions_file: Path, kwargs: dict, unit: str = "env_steps_per_sec", warmup_steps: int = 0) -> float:
    """The program's rate: ``unit`` is ``env_steps_per_sec`` (world steps) or ``agent_steps_per_sec``;
    every world first takes ``warmup_steps`` untimed steps."""
    import joltgym_marl

    command = [str(binary), "--task", task, "--worlds", str(worlds), "--threads", str(threads),
               "--steps", str(steps), "--mode", mode, "--assets", str(joltgym_marl.ASSET_DIR),
               "--actions", str(actions_file), "--max-episode-steps", str(TASKS[task].max_episode_steps),
               "--warmup-steps", str(warmup_steps)]
    for param in limit_params(kwargs):
        command += ["--param", param]
    out = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    return json.loads(out)[unit]


def run_pool(task: str, worlds: int, threads: int, steps: int, actions: np.ndarray, kwargs: dict) -> float:
    import joltgym_marl

    with joltgym_marl.WorldPool(task, worlds, num_threads=threads,
                                max_episode_steps=TASKS[task].max_episode_steps, **kwargs) as pool:
        pool.reset_all(seed=0)  # world i gets seed i, as in raw_step_limit
        start = time.perf_counter()
        for t in range(steps):
            pool.step_all(actions[t % 16])
        return steps * worlds / (time.perf_counter() - start)


def parse_args(argv=None) -> argparse.Namespace:
    default = SINGLE_AGENT_TASKS[0].name if SINGLE_AGENT_TASKS else next(iter(TASKS))
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--task", choices=list(TASKS), default=default,
                        help="a task of the native registry (default: %(default)s)")
    parser.add_argument("--worlds", type=int, default=64)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--game-agents", type=int, default=DEFAULT_GAME_AGENTS,
                        help="agents per world of a game that takes num_agents (default %(default)s)")
    args = parser.parse_args(argv)
    if min(args.worlds, args.threads, args.steps, args.rounds, args.game_agents) < 1:
        parser.error("--worlds, --threads, --steps, --rounds and --game-agents should be >= 1")
    return args


def main(argv=None) -> None:
    args = parse_args(argv)
    from benchmarks._native_build import raw_step_limit_binary

    kwargs = game_kwargs(TASKS[args.task], args.game_agents)
    binary = raw_step_limit_binary()
    actions = make_actions(args.task, args.worlds, kwargs)
    with tempfile.TemporaryDirectory(prefix="pool_vs_raw_") as tmp:
        actions_file = Path(tmp) / "actions.f32"
        actions.tofile(actions_file)
        results: dict[str, list[float]] = {"raw mj_step": [], "raw env step": [], "WorldPool": []}
        common = (args.task, args.worlds, args.threads, args.steps)
        for _ in range(args.rounds):
            results["raw mj_step"].append(run_raw(binary, *common, "mj_step", actions_file, kwargs))
            results["WorldPool"].append(run_pool(*common, actions, kwargs))
            results["raw env step"].append(run_raw(binary, *common, "env", actions_file, kwargs))

    setting = "".join(f", {k}={v}" for k, v in kwargs.items())
    print(f"{args.task}{setting}: {args.worlds} worlds, {args.threads} threads, {args.steps} steps x "
          f"{args.rounds} rounds, interleaved")
    print(f"{'contender':<14} {'median env-steps/s':>19} {'min':>10} {'max':>10}")
    for name, values in results.items():
        print(f"{name:<14} {statistics.median(values):>19,.0f} {min(values):>10,.0f} {max(values):>10,.0f}")
    pool = statistics.median(results["WorldPool"])
    print(f"ratio WorldPool / raw mj_step  = {pool / statistics.median(results['raw mj_step']):.3f}")
    print(f"ratio WorldPool / raw env step = {pool / statistics.median(results['raw env step']):.3f}")


if __name__ == "__main__":
    main()
