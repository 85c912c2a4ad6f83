"""Pit two sumo players against each other and print the win/draw/loss table.

    .venv/bin/python examples/evaluate.py CHECKPOINT [OPPONENT] [--episodes 200]

Each player is a checkpoint saved by selfplay_sumo.py, ``random`` (uniform
random actions) or ``still`` (zero actions). The first plays ant_0, the second
ant_1; bouts run without reward shaping, batched on native worlds.
"""

from __future__ import annotations

import argparse

from sumo_common import load_player, play_matches


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("first", help="checkpoint path, 'random' or 'still'")
    parser.add_argument("second", nargs="?", default="random", help="checkpoint path, 'random' or 'still'")
    parser.add_argument("--episodes", type=int, default=200)
    parser.add_argument("--worlds", type=int, default=50)
    parser.add_argument("--seed", type=int, default=12345)
    parser.add_argument("--threads", type=int, default=None)
    args = parser.parse_args()

    first, second = load_player(args.first), load_player(args.second)
    counts = play_matches(first, second, args.episodes, worlds=args.worlds, seed=args.seed,
                          num_threads=args.threads)
    n = sum(counts.values())
    width = max(len(first.name), len(second.name), 6)
    print(f"{args.episodes} sumo bouts, {first.name} (ant_0) vs {second.name} (ant_1)")
    print(f"| {'player':<{width}} | win | draw | loss | win rate |")
    print(f"|{'-' * (width + 2)}|----:|-----:|-----:|---------:|")
    print(f"| {first.name:<{width}} | {counts['win']:>3} | {counts['draw']:>4} | {counts['loss']:>4} | "
          f"{100 * counts['win'] / n:>7.1f}% |")
    print(f"| {second.name:<{width}} | {counts['loss']:>3} | {counts['draw']:>4} | {counts['win']:>4} | "
          f"{100 * counts['loss'] / n:>7.1f}% |")


if __name__ == "__main__":
    main()
