"""What MuJoCo 4.0's solver choices cost the zoo: the bar matches of benchmarks/bansal_zoo.py replayed in
variants of the gym-compete scenes that differ in one physics option each.

    python -m benchmarks.zoo_sensitivity --zoo DIR [--variants base elliptic newton solimp_linear]
                                         [--matches kick sumo rtg ysnp] [--bouts 200] [--kick-bouts 300]
                                         [--worlds 100] [--threads 2] [--seed 0] [--out FILE]

gym-compete ran on MuJoCo 1.31, whose constraint solver cannot be run any more, so the difference between
1.31's physics and 4.0's cannot be measured directly. What can be measured is how much the zoo's rates move
when the choices that stand in for 1.31's are changed: this script copies the asset folder to a temporary
one, rewrites the six ``assets/gym_compete/*.xml`` scenes for each variant and plays the same matches, with
the same seeds, in each:

- ``base``: the scenes as shipped (PGS, 1000 iterations, pyramidal friction cones, MuJoCo 4.0's default
  five-parameter ``solimp`` 0.9 0.95 0.001 0.5 2);
- ``elliptic``: elliptic friction cones in place of pyramidal ones;
- ``newton``: the Newton solver in place of PGS (the scenes' iteration count kept);
- ``solimp_linear``: ``solimp`` 0.9 0.95 0.001 0.5 1 on every geom (a linear impedance ramp over the
  width, in place of 4.0's power-2 sigmoid: the two extra parameters 1.31's three-parameter ``solimp``
  did not have).

The matches are the issue's bars: ``kick`` kick-and-defend kicker v1 vs keeper v1, ``sumo`` sumo ants v1 vs
a still ant, ``rtg`` run-to-goal ants runner 1 vs a still ant, ``ysnp`` the you-shall-not-pass walker vs a
still blocker. Each row prints the win / tie / loss of the first-named player with a 95% Wilson interval.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

ROOT = Path(__file__).resolve().parent.parent
VARIANTS = ("base", "elliptic", "newton", "solimp_linear")
MATCH_KEYS = {"kick": ("kick_and_defend", "kick_and_defend:v1v1"),
              "sumo": ("sumo_ants", "sumo_ants:still"),
              "rtg": ("run_to_goal_ants", "run_to_goal_ants:still"),
              "ysnp": ("you_shall_not_pass", "you_shall_not_pass:walker:still")}


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--zoo", type=Path, required=True, help="a local copy of agent-zoo/ (openai/multiagent-competition)")
    p.add_argument("--variants", nargs="+", choices=VARIANTS, default=list(VARIANTS))
    p.add_argument("--matches", nargs="+", choices=list(MATCH_KEYS), default=list(MATCH_KEYS))
    p.add_argument("--bouts", type=int, default=200, help="bouts per match")
    p.add_argument("--kick-bouts", type=int, default=300, help="bouts of kick-and-defend v1 vs v1")
    p.add_argument("--worlds", type=int, default=100, help="native worlds stepped together")
    p.add_argument("--threads", type=int, default=None, help="native threads (default: the pool's)")
    p.add_argument("--zoo-actions", choices=("sample", "mean"), default="sample")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", type=Path, default=None, help="also write the Markdown table here")
    return p


def rewrite_scene(xml: str, variant: str) -> str:
    """One scene's text in a variant; raises if the scene does not have what the variant changes."""
    if variant == "base":
        return xml
    option = re.search(r"<option [^>]*/>", xml)
    if option is None:
        raise ValueError("a gym_compete scene without an <option .../> element")
    tag = option.group(0)
    if variant == "elliptic":
        new = tag.replace("<option ", '<option cone="elliptic" ', 1)
    elif variant == "newton":
        if 'solver="PGS"' not in tag:
            raise ValueError(f"expected solver=\"PGS\" in {tag}")
        new = tag.replace('solver="PGS"', 'solver="Newton"')
    elif variant == "solimp_linear":
        if "solimp=" in xml:
            raise ValueError("the scene already sets solimp somewhere; this variant assumes the defaults")
        return re.sub(r"<geom ", '<geom solimp="0.9 0.95 0.001 0.5 1" ', xml)
    else:
        raise ValueError(f"unknown variant {variant!r}; expected one of {VARIANTS}")
    return xml.replace(tag, new, 1)


def variant_assets(variant: str, into: Path) -> Path:
    """A copy of the asset folder whose gym_compete scenes are rewritten for the variant."""
    from joltgym_marl import _native

    src = Path(_native.ASSET_DIR)
    dst = into / variant
    shutil.copytree(src, dst)
    for scene in sorted((dst / "gym_compete").glob("*.xml")):
        scene.write_text(rewrite_scene(scene.read_text(), variant))
    return dst


def main(argv: list[str] | None = None) -> None:
    args = build_parser().parse_args(argv)
    if args.bouts < 1 or args.kick_bouts < 1 or args.worlds < 1:
        build_parser().error("--bouts, --kick-bouts and --worlds should be >= 1")
    sys.path.insert(0, str(ROOT))
    from benchmarks import bansal_zoo
    from joltgym_marl import _native, zoo

    missing = [e.path for e in zoo.CATALOGUE if not e.file(args.zoo).is_file()]
    if missing:
        build_parser().error(f"--zoo {args.zoo} lacks {len(missing)} of the zoo's 19 files, e.g. {missing[0]}")
    bz_args = bansal_zoo.build_parser().parse_args(
        ["--zoo", str(args.zoo), "--bouts", str(args.bouts), "--kick-bouts", str(args.kick_bouts),
         "--worlds", str(args.worlds), "--zoo-actions", args.zoo_actions, "--seed", str(args.seed),
         "--games", *[MATCH_KEYS[k][0] for k in args.matches]]
        + (["--threads", str(args.threads)] if args.threads else []))
    wanted = {MATCH_KEYS[k][1] for k in args.matches}
    # The first match of each bar (sumo ants v1, run-to-goal runner 1): one per key.
    todo, seen = [], set()
    for m in bansal_zoo.matches(bz_args, zoo.CATALOGUE):
        if m.key in wanted and m.key not in seen:
            todo.append(m)
            seen.add(m.key)
    header = ["| match | variant | bouts | win | tie | loss | win rate | 95% CI | time |",
              "|---|---|---:|---:|---:|---:|---:|---|---:|"]
    lines = [f"The zoo's bar matches in variants of the gym-compete scenes ({args.zoo_actions} actions, "
             f"{args.worlds} worlds, seed {args.seed})", "", *header]
    print("\n".join(lines), flush=True)
    original = _native.ASSET_DIR
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="zoo_sensitivity_") as tmp:
        dirs = {v: variant_assets(v, Path(tmp)) for v in args.variants}
        try:
            for m in todo:
                for v in args.variants:
                    _native._core.set_asset_dir(str(dirs[v]))
                    t0 = time.perf_counter()
                    counts, _ = bansal_zoo.play(m, bz_args, bansal_zoo.match_seed(args.seed, m))
                    win, loss, tie = (int(x) for x in counts)
                    lo, hi = bansal_zoo.wilson(win, m.bouts)
                    row = (f"| {m.label} | {v} | {m.bouts} | {win} | {tie} | {loss} | {100 * win / m.bouts:.1f}% | "
                           f"{100 * lo:.1f}-{100 * hi:.1f}% | {time.perf_counter() - t0:.0f} s |")
                    print(row, flush=True)
                    lines.append(row)
        finally:
            _native._core.set_asset_dir(str(original))
    tail = f"\n{len(todo) * len(args.variants)} runs in {(time.perf_counter() - start) / 60:.1f} min"
    print(tail, flush=True)
    lines.append(tail)
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
