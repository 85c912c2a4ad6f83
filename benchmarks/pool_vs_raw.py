"""WorldPool throughput against the raw engine limit, measured side by side.

    python benchmarks/pool_vs_raw.py [--task half_cheetah] [--worlds 64]
                                     [--threads 2] [--steps 1000] [--rounds 7]

Each round runs the C++ ``raw_step_limit`` program (mj_step over N mjData on T
threads, no Python) and then the WorldPool from Python on the same model,
worlds and threads, so that machine noise hits both alike. Prints the median
(and min-max) env-steps/s of each and the ratio of the medians.
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

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks._native_build import raw_step_limit_binary  # noqa: E402

import joltgym_marl  # noqa: E402


def make_actions(task: str, worlds: int) -> np.ndarray:
    """16 sets of uniform random actions, cycled by both contenders."""
    with joltgym_marl.WorldPool(task, 1, num_threads=1) as pool:
        shape = (16, worlds, pool.num_agents, pool.act_dim)
    return np.random.default_rng(0).uniform(-1, 1, size=shape).astype(np.float32)


def run_raw(binary: Path, task: str, worlds: int, threads: int, steps: int, mode: str,
            actions_file: Path) -> float:
    out = subprocess.run(
        [str(binary), "--task", task, "--worlds", str(worlds), "--threads", str(threads),
         "--steps", str(steps), "--mode", mode, "--assets", str(joltgym_marl.ASSET_DIR),
         "--actions", str(actions_file)],
        check=True, capture_output=True, text=True,
    ).stdout
    return json.loads(out)["env_steps_per_sec"]


def run_pool(task: str, worlds: int, threads: int, steps: int, actions: np.ndarray) -> float:
    with joltgym_marl.WorldPool(task, worlds, num_threads=threads) as pool:
        pool.reset_all(seed=0)  # world i gets seed i, as in raw_step_limit
        start = time.perf_counter()
        for t in range(steps):
            pool.step_all(actions[t % 16])
        return steps * worlds / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--task", default="half_cheetah")
    parser.add_argument("--worlds", type=int, default=64)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()

    binary = raw_step_limit_binary()
    actions = make_actions(args.task, args.worlds)
    actions_file = Path(tempfile.mkdtemp()) / "actions.f32"
    actions.tofile(actions_file)
    results: dict[str, list[float]] = {"raw mj_step": [], "raw env step": [], "WorldPool": []}
    for _ in range(args.rounds):
        results["raw mj_step"].append(
            run_raw(binary, args.task, args.worlds, args.threads, args.steps, "mj_step", actions_file))
        results["WorldPool"].append(run_pool(args.task, args.worlds, args.threads, args.steps, actions))
        results["raw env step"].append(
            run_raw(binary, args.task, args.worlds, args.threads, args.steps, "env", actions_file))

    print(f"{args.task}: {args.worlds} worlds, {args.threads} threads, {args.steps} steps x "
          f"{args.rounds} rounds, interleaved")
    print(f"{'contender':<14} {'median env-steps/s':>19} {'min':>10} {'max':>10}")
    for name, values in results.items():
        print(f"{name:<14} {statistics.median(values):>19,.0f} {min(values):>10,.0f} {max(values):>10,.0f}")
    pool = statistics.median(results["WorldPool"])
    print(f"ratio WorldPool / raw mj_step  = {pool / statistics.median(results['raw mj_step']):.3f}")
    print(f"ratio WorldPool / raw env step = {pool / statistics.median(results['raw env step']):.3f}")


if __name__ == "__main__":
    main()
