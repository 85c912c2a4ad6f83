"""Pit two players of a self-play game against each other: win/draw/loss table.

    .venv/bin/python examples/evaluate.py CHECKPOINT [OPPONENT] [--episodes 200]
    .venv/bin/python examples/evaluate.py scripted still --game sumo_v0 --episodes 50

Each player is a checkpoint saved by selfplay.py (or selfplay_sumo.py),
``still`` (zero actions), ``random`` (uniform random actions) or ``scripted``
(the game's scripted baseline, examples/scripted.py). The first plays the
game's first agent (``ant_0``), the second every other agent; in an
asymmetric game each player must fit its seat's role (a walker checkpoint
first, a blocker second). The game is the first checkpoint's, else --game.
Bouts run with deterministic policies and no reward shaping, batched on
native worlds; the table gives each player's wins, draws and losses with a
95% Wilson confidence interval of its win rate.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("first", help="checkpoint path, 'still', 'random' or 'scripted'")
    parser.add_argument("second", nargs="?", default="random", help="checkpoint path, 'still', 'random' or 'scripted'")
    parser.add_argument("--game", default=None, help="the game when no checkpoint names it (default sumo_v0)")
    parser.add_argument("--robot", default=None, help="the game's robot, where it has a robot argument")
    parser.add_argument("--game-arg", action="append", default=[], metavar="NAME=VALUE",
                        help="a game keyword argument (repeatable; default: the first checkpoint's)")
    parser.add_argument("--episodes", type=int, default=200)
    parser.add_argument("--worlds", type=int, default=50)
    parser.add_argument("--seed", type=int, default=12345)
    parser.add_argument("--threads", type=int, default=None)
    args = parser.parse_args()
    if args.episodes < 1 or args.worlds < 1:
        parser.error(f"--episodes and --worlds should be >= 1, got {args.episodes} and {args.worlds}")
    # Imported after parsing: --help and bad arguments answer before torch is imported (seconds).
    from selfplay_common import (describe_game, find_spec, load_checkpoint_player, make_player, parse_game_args,
                                 play_bouts, wilson_interval)

    try:
        recorded = None
        for spec in (args.first, args.second):
            if spec not in ("still", "random", "scripted") and Path(spec).is_file():
                recorded = load_checkpoint_player(spec)[1]
                break
        game_name = args.game or (recorded["game"] if recorded else "sumo_v0")
        kwargs = dict(recorded["game_kwargs"]) if recorded and find_spec(recorded["game"]) == find_spec(game_name) else {}
        kwargs.update(parse_game_args(find_spec(game_name), args.game_arg))
        robot = args.robot
        game = describe_game(game_name, robot, kwargs)
        first = make_player(args.first, game, 0)
        others = [make_player(args.second, game, k) for k in range(1, len(game.agents))]
    except ValueError as e:
        parser.error(str(e))
    counts = play_bouts(game, [first, *others], args.episodes, worlds=args.worlds, seed=args.seed,
                        num_threads=args.threads)
    names = [args.first, args.second]
    rows = [counts[0], counts[1:].sum(0) if len(game.agents) == 2 else counts[1]]
    seats = [game.agents[0], ", ".join(game.agents[1:])]
    width = max(len(n) for n in names + ["player"])
    print(f"{args.episodes} {game.name} bouts ({game.robot}), {names[0]} ({seats[0]}) vs {names[1]} ({seats[1]})")
    print(f"| {'player':<{width}} | win | draw | loss | win rate | 95% CI |")
    print(f"|{'-' * (width + 2)}|----:|-----:|-----:|---------:|--------|")
    for name, (win, draw, loss) in zip(names, rows):
        low, high = wilson_interval(win, args.episodes)
        print(f"| {name:<{width}} | {win:>3} | {draw:>4} | {loss:>4} | {100 * win / args.episodes:>7.1f}% | "
              f"{100 * low:.0f}-{100 * high:.0f}% |")


if __name__ == "__main__":
    main()
