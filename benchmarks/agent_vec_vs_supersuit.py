"""A game's native agent vector env against SuperSuit's pipeline, side by side.

    python benchmarks/agent_vec_vs_supersuit.py [--game GAME] [--worlds 64] [--agents A]
                                                [--threads 2] [--steps 300] [--rounds 5]

Both run the game (any game of the native registry, default its first;
``--agents`` per world for a game with a ``num_agents`` parameter, default
the game's own) with every agent of every world as one row, the same random
actions and the same seeds:

* native:    ``<game>_v0.vec_env(worlds, num_threads=..., **kwargs)``
* SuperSuit: ``concat_vec_envs_v1(pettingzoo_env_to_vec_env_v1(<game>_v0.parallel_env(**kwargs)),
             worlds, num_cpus=C, base_class="gymnasium")`` for C = 0 (in process)
             and C = ``--threads`` (worker processes).

Rounds are interleaved so that machine noise hits every contender alike; the
script prints median agent-steps/s (min-max) and the native/SuperSuit ratios.
Run it from the clone's root.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks._paths import use_checkout  # noqa: E402

use_checkout()

import numpy as np  # noqa: E402

from benchmarks._tasks import GAMES, TASKS, game_kwargs  # noqa: E402


def measure(venv, actions: np.ndarray, steps: int) -> float:
    venv.reset(seed=0)
    venv.step(actions[0])  # warm-up
    start = time.perf_counter()
    for t in range(steps):
        venv.step(actions[t % len(actions)])
    return steps * venv.num_envs / (time.perf_counter() - start)


def parse_args(argv=None) -> argparse.Namespace:
    names = [spec.name for spec in GAMES]
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--game", choices=names, default=names[0] if names else None,
                        help="a game of the native registry (default: %(default)s)")
    parser.add_argument("--worlds", type=int, default=64)
    parser.add_argument("--agents", type=int,
                        help="agents per world, for a game with a num_agents parameter (default: the game's)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    if args.game is None:
        parser.error("no game is registered")
    if min(args.worlds, args.threads, args.steps, args.rounds) < 1 or (args.agents is not None and args.agents < 1):
        parser.error("--worlds, --agents, --threads, --steps and --rounds should be >= 1")
    if args.agents is not None and not game_kwargs(TASKS[args.game], args.agents):
        parser.error(f"{args.game} has no num_agents parameter; leave --agents out")
    return args


def main(argv=None) -> None:
    args = parse_args(argv)
    import supersuit

    from joltgym_marl import MULTI_AGENT_ENVS

    spec = TASKS[args.game]
    game = MULTI_AGENT_ENVS[spec.module_name]
    kwargs = game_kwargs(spec, args.agents)
    contenders = {
        "native agent vector env": lambda: game.vec_env(args.worlds, num_threads=args.threads, **kwargs),
        "SuperSuit num_cpus=0": lambda: supersuit.concat_vec_envs_v1(
            supersuit.pettingzoo_env_to_vec_env_v1(game.parallel_env(**kwargs)),
            args.worlds, num_cpus=0, base_class="gymnasium"),
        f"SuperSuit num_cpus={args.threads}": lambda: supersuit.concat_vec_envs_v1(
            supersuit.pettingzoo_env_to_vec_env_v1(game.parallel_env(**kwargs)),
            args.worlds, num_cpus=args.threads, base_class="gymnasium"),
    }
    envs = {}
    try:
        for name, make in contenders.items():
            envs[name] = make()
        native = envs["native agent vector env"]
        rows, space = native.num_envs, native.single_action_space
        agents = rows // args.worlds
        actions = np.random.default_rng(0).uniform(space.low, space.high, (16, rows, *space.shape)).astype(np.float32)
        results: dict[str, list[float]] = {name: [] for name in envs}
        for _ in range(args.rounds):
            for name, venv in envs.items():
                results[name].append(measure(venv, actions, args.steps))
    finally:
        for venv in envs.values():
            venv.close()

    print(f"{spec.title}, {agents} agents x {args.worlds} worlds = {rows} rows, "
          f"{args.threads} threads/processes, {args.steps} steps x {args.rounds} rounds, interleaved")
    print(f"{'contender':<26} {'median agent-steps/s':>21} {'min':>10} {'max':>10}")
    for name, values in results.items():
        print(f"{name:<26} {statistics.median(values):>21,.0f} {min(values):>10,.0f} {max(values):>10,.0f}")
    native_rate = statistics.median(results["native agent vector env"])
    for name, values in results.items():
        if name.startswith("SuperSuit"):
            print(f"ratio native / {name} = {native_rate / statistics.median(values):.1f}x")


if __name__ == "__main__":
    main()
