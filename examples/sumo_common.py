"""Former home of the sumo self-play pieces, kept so that older imports work:
everything now lives in examples/selfplay_common.py (any registered game).

Not a script: ``from sumo_common import load_player, play_matches`` still works.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

if __name__ == "__main__":  # not a script: say what it holds, before torch is imported (seconds)
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.parse_args()
    parser.print_help()
    raise SystemExit(0)

sys.path.insert(0, str(Path(__file__).resolve().parent))

from selfplay_common import (AUTORESET, DRAW, LOSS, WIN, ActorCritic, Player, RunningNorm,  # noqa: E402,F401
                             describe_game, load_player, play_bouts)


def play_matches(first: Player, second: Player, episodes: int, *, worlds: int = 32, seed: int = 0,
                 num_threads: int | None = None, max_cycles: int = 500) -> dict[str, int]:
    """``episodes`` sumo bouts of ``first`` (ant_0) against ``second`` (ant_1); first's counts."""
    game = describe_game("sumo_v0", max_cycles=max_cycles)
    win, draw, loss = play_bouts(game, [first, second], episodes, worlds=worlds, seed=seed,
                                 num_threads=num_threads)[0]
    return {"win": int(win), "draw": int(draw), "loss": int(loss)}

