"""Self-play PPO on batched native sumo worlds: examples/selfplay.py with the
recipe measured in the README.

    .venv/bin/python examples/selfplay_sumo.py          # the full run (about 23 min on 2 cores)
    .venv/bin/python examples/selfplay_sumo.py --quick  # about a minute, barely trained (for CI)

The same as ``examples/selfplay.py --game sumo_v0 --delta 1 --p-latest 0.5
--eval-episodes 64 --out runs/selfplay_sumo``: for each group of worlds at every
rollout, ant_1 (or ant_0: the learner plays both seats in turn) is a still Ant
with probability --still-share (0.25), else the latest snapshot with
probability --p-latest (0.5), else a uniformly drawn older one. Snapshots play
their mean action, so the first ones stand almost still. The shaping weight
starts at --shaping-start (10, with the worlds' ctrl_cost_weight at
--ctrl-cost, 0.01) and is annealed to 0 over the first --anneal (half) of
training. Every option of selfplay.py applies; its description follows.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import selfplay_args  # noqa: E402  (torch-free: --help answers at once)

SUMO_RECIPE = dict(game="sumo_v0", delta=1.0, p_latest=0.5, eval_episodes=64, out=Path("runs/selfplay_sumo"))


def main() -> None:
    parser = selfplay_args.build_parser(__doc__ + "\n" + selfplay_args.selfplay_doc())
    parser.set_defaults(**SUMO_RECIPE)
    selfplay_args.parse_args(None, parser)  # --help and bad arguments end here, before torch is imported
    import selfplay

    selfplay.main(parser=parser)


if __name__ == "__main__":
    main()
