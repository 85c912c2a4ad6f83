"""The command line of examples/selfplay.py (and selfplay_sumo.py), apart from
the training code: parsing needs no torch, so ``--help`` and a bad argument
answer at once. Also the game helpers that parsing needs.

Not a script: ``python examples/selfplay_args.py --help`` says what it holds.
"""

from __future__ import annotations

import argparse
import ast
import sys
from pathlib import Path
from typing import Any

if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).print_help()
    sys.exit(0)

from joltgym_marl.registry import GAMES, TaskSpec, resolve  # noqa: E402


def find_spec(game: str) -> TaskSpec:
    """A registered game by any of its names (``sumo_v0``, ``sumo``, ``Sumo``; joltgym_marl.resolve)."""
    try:
        return resolve(game, kind="game")
    except (TypeError, ValueError):
        names = ", ".join(spec.env_id for spec in GAMES)
        raise ValueError(f"unknown game {game!r}; expected one of {names}") from None


def parse_game_args(spec: TaskSpec, items: list[str]) -> dict[str, Any]:
    """``["finish_line=5", "num_agents=2"]`` -> keyword arguments typed by the game's parameters."""
    params = {p.name: p for p in spec.params}
    out: dict[str, Any] = {}
    for item in items:
        key, sep, text = item.partition("=")
        if not sep or key not in params:
            raise ValueError(f"bad game argument {item!r} for {spec.env_id}; expected NAME=VALUE with NAME one "
                             f"of {', '.join(params)}")
        kind = params[key].kind
        try:
            if kind in ("float", "optional_float"):
                value: Any = None if text.lower() == "none" and kind == "optional_float" else float(text)
            elif kind == "int":
                value = int(text)
            elif kind == "bool":
                if text.lower() not in ("true", "false", "1", "0"):
                    raise ValueError
                value = text.lower() in ("true", "1")
            elif kind == "range":
                value = tuple(float(x) for x in text.split(","))
            else:
                value = text
        except ValueError:
            raise ValueError(f"game argument {key} should be a {kind.replace('_', ' ')} "
                             f"(e.g. {params[key].default!r}), got {text!r}") from None
        out[key] = value
    return out


def selfplay_doc() -> str:
    """examples/selfplay.py's docstring, read without importing it (which imports torch)."""
    source = (Path(__file__).resolve().parent / "selfplay.py").read_text()
    return ast.get_docstring(ast.parse(source), clean=False)


def build_parser(description: str | None = None) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=description or selfplay_doc(), formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--game", default="sumo_v0", help="a registered game (PettingZoo or native name)")
    p.add_argument("--robot", default=None, help="the game's robot (its robot argument, where it has one)")
    p.add_argument("--game-arg", action="append", default=[], metavar="NAME=VALUE",
                   help="a game keyword argument (repeatable), e.g. ring_radius=3.5")
    p.add_argument("--max-cycles", type=int, default=None, help="episode length (default: the game's)")
    p.add_argument("--quick", action="store_true", help="a one-minute smoke run")
    p.add_argument("--total-steps", type=int, default=4_000_000, help="learner env steps")
    p.add_argument("--worlds", type=int, default=64)
    p.add_argument("--rollout", type=int, default=128, help="steps per world per iteration")
    p.add_argument("--epochs", type=int, default=10)
    p.add_argument("--minibatch", type=int, default=512)
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--gamma", type=float, default=0.995)
    p.add_argument("--lam", type=float, default=0.95)
    p.add_argument("--clip", type=float, default=0.2)
    p.add_argument("--reward-scale", type=float, default=0.01)
    p.add_argument("--anneal", type=float, default=0.5, help="fraction of training to anneal shaping to 0")
    p.add_argument("--shaping-start", type=float, default=10.0, help="shaping weight at the start of training")
    p.add_argument("--ctrl-cost", type=float, default=0.01,
                   help="the game's ctrl_cost_weight, where it has one (unless set by --game-arg)")
    p.add_argument("--snapshot-every", type=int, default=10, help="iterations between opponent snapshots")
    p.add_argument("--delta", type=float, default=0.5,
                   help="opponents are drawn from the most recent fraction delta of the snapshot history")
    p.add_argument("--p-latest", type=float, default=0.0,
                   help="probability of the latest snapshot (else uniform over the delta window of the others)")
    p.add_argument("--groups", type=int, default=4, help="opponent groups per rollout")
    p.add_argument("--opponent-actions", choices=("mean", "sample"), default="mean",
                   help="frozen opponents play their mean action or sample from their policy")
    p.add_argument("--still-share", type=float, default=0.25, help="probability that a seat faces a still robot")
    p.add_argument("--zoo-opponent", default=None, metavar="ZOO_FILE",
                   help="a file of Bansal et al.'s agent zoo (agent-zoo/... of openai/multiagent-competition) as an "
                        "opponent: the game is played in its form=gym_compete, the zoo policy joins the pool and "
                        "the evaluations")
    p.add_argument("--zoo-share", type=float, default=0.5,
                   help="probability that a seat the zoo policy can play faces it (with --zoo-opponent; 1 with "
                        "--still-share 0: a fixed opponent)")
    p.add_argument("--zoo-actions", choices=("sample", "mean"), default="sample",
                   help="the zoo policy samples its actions (as the archive's main.py) or plays its mean")
    p.add_argument("--per-seat", action="store_true",
                   help="one learner per seat (agent_0, agent_1) in a symmetric game, each facing the other's "
                        "snapshots, instead of one learner playing every seat")
    p.add_argument("--hidden", type=int, default=64)
    p.add_argument("--init-log-std", type=float, default=-1.0, help="initial log std of the learner's actions")
    p.add_argument("--eval-every", type=int, default=50)
    p.add_argument("--eval-episodes", type=int, default=32, help="bouts against each baseline")
    p.add_argument("--eval-against", nargs="+", choices=("still", "random", "scripted", "zoo"), default=None,
                   help="the baselines every evaluation plays (default: all the game has, and the zoo opponent)")
    p.add_argument("--elo-bouts", type=int, default=16, help="bouts per Elo match")
    p.add_argument("--elo-opponents", type=int, default=2, help="earlier checkpoints each checkpoint plays")
    p.add_argument("--elo-k", type=float, default=16.0)
    p.add_argument("--log-every", type=int, default=10, help="iterations between progress lines")
    p.add_argument("--threads", type=int, default=None)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", type=Path, default=None, help="output folder (default runs/selfplay_<game>)")
    return p


QUICK = dict(total_steps=16_384, worlds=32, rollout=64, snapshot_every=2, eval_every=4, eval_episodes=16,
             minibatch=1024, elo_bouts=8, log_every=2)


def parse_args(argv: list[str] | None = None, parser: argparse.ArgumentParser | None = None) -> argparse.Namespace:
    parser = parser or build_parser()
    args = parser.parse_args(argv)
    if args.quick:  # smaller defaults; options given explicitly still win
        parser.set_defaults(**QUICK)
        args = parser.parse_args(argv)
    for name, low, high in (("delta", 0, 1), ("p_latest", 0, 1), ("still_share", 0, 1), ("anneal", 0, 1),
                            ("zoo_share", 0, 1)):
        value = getattr(args, name)
        if not low <= value <= high:
            parser.error(f"--{name.replace('_', '-')} should be in [{low}, {high}], got {value}")
    for name in ("total_steps", "worlds", "rollout", "epochs", "minibatch", "snapshot_every", "groups",
                 "eval_every", "eval_episodes", "elo_bouts", "log_every", "hidden"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} should be >= 1, got {getattr(args, name)}")
    try:
        spec = find_spec(args.game)
        overrides = parse_game_args(spec, args.game_arg)
    except ValueError as e:
        parser.error(str(e))
    if args.zoo_opponent is not None:
        from joltgym_marl import zoo

        if not Path(args.zoo_opponent).is_file():
            parser.error(f"--zoo-opponent should be a zoo file (agent-zoo/... of openai/multiagent-competition), "
                         f"got {args.zoo_opponent!r}: no such file")
        entry = zoo.entry_for_file(args.zoo_opponent)
        if entry is not None and find_spec(entry.game) != spec:
            parser.error(f"--zoo-opponent {args.zoo_opponent} plays {entry.game}, not {spec.env_id}")
        if entry is not None and args.robot is None and "robot" in spec.defaults():
            args.robot = entry.robot
        if "form" in spec.defaults():
            overrides.setdefault("form", "gym_compete")
    if "ctrl_cost_weight" in spec.defaults() and overrides.get("form", "default") == "default":
        overrides.setdefault("ctrl_cost_weight", args.ctrl_cost)
    args.game_kwargs = overrides
    if args.out is None:
        args.out = Path("runs") / f"selfplay_{spec.name}"
    return args
