"""The native agent vector env against SuperSuit's pipeline, side by side.

    python benchmarks/agent_vec_vs_supersuit.py [--worlds 64] [--agents 4]
                                                [--threads 2] [--steps 300] [--rounds 5]

Both run CheetahRace (``--agents`` HalfCheetahs per world, ``--worlds`` worlds)
with every agent of every world as one row, the same random actions and the
same seeds:

* native:    ``cheetah_race_v0.vec_env(worlds, num_agents=..., num_threads=...)``
* SuperSuit: ``concat_vec_envs_v1(pettingzoo_env_to_vec_env_v1(parallel_env(...)),
             worlds, num_cpus=C, base_class="gymnasium")`` for C = 0 (in process)
             and C = ``--threads`` (worker processes).

Rounds are interleaved so that machine noise hits every contender alike; the
script prints median agent-steps/s (min-max) and the native/SuperSuit ratios.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import supersuit  # noqa: E402

from joltgym_marl import cheetah_race_v0  # noqa: E402


def measure(venv, actions: np.ndarray, steps: int) -> float:
    venv.reset(seed=0)
    venv.step(actions[0])  # warm-up
    start = time.perf_counter()
    for t in range(steps):
        venv.step(actions[t % len(actions)])
    return steps * venv.num_envs / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--worlds", type=int, default=64)
    parser.add_argument("--agents", type=int, default=4)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()

    game = dict(num_agents=args.agents)
    contenders = {
        "native agent vector env": lambda: cheetah_race_v0.vec_env(
            args.worlds, num_threads=args.threads, **game),
        "SuperSuit num_cpus=0": lambda: supersuit.concat_vec_envs_v1(
            supersuit.pettingzoo_env_to_vec_env_v1(cheetah_race_v0.parallel_env(**game)),
            args.worlds, num_cpus=0, base_class="gymnasium"),
        f"SuperSuit num_cpus={args.threads}": lambda: supersuit.concat_vec_envs_v1(
            supersuit.pettingzoo_env_to_vec_env_v1(cheetah_race_v0.parallel_env(**game)),
            args.worlds, num_cpus=args.threads, base_class="gymnasium"),
    }
    rows = args.worlds * args.agents
    actions = np.random.default_rng(0).uniform(-1, 1, (16, rows, 6)).astype(np.float32)
    envs = {name: make() for name, make in contenders.items()}
    results: dict[str, list[float]] = {name: [] for name in envs}
    try:
        for _ in range(args.rounds):
            for name, venv in envs.items():
                results[name].append(measure(venv, actions, args.steps))
    finally:
        for venv in envs.values():
            venv.close()

    print(f"CheetahRace, {args.agents} agents x {args.worlds} worlds = {rows} rows, "
          f"{args.threads} threads/processes, {args.steps} steps x {args.rounds} rounds, interleaved")
    print(f"{'contender':<26} {'median agent-steps/s':>21} {'min':>10} {'max':>10}")
    for name, values in results.items():
        print(f"{name:<26} {statistics.median(values):>21,.0f} {min(values):>10,.0f} {max(values):>10,.0f}")
    native = statistics.median(results["native agent vector env"])
    for name, values in results.items():
        if name.startswith("SuperSuit"):
            print(f"ratio native / {name} = {native / statistics.median(values):.1f}x")


if __name__ == "__main__":
    main()
