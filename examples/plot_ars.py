"""Plot the learning curve of the Java ARS trainer (joltgym.ars.Ars, java/).

    .venv/bin/python examples/plot_ars.py runs/ars_half_cheetah_0/curve.csv [more curve.csv ...]
        [--out curve.png] [--threshold 3430]

Each curve.csv (one row per evaluation: iteration, training episodes and
steps, the mean and standard deviation of the evaluation returns, seconds)
becomes one line of the mean evaluation return against training world steps,
through examples/learning_curves.py's plot; a dashed line marks --threshold
(default: the ARS paper's HalfCheetah figure, 3430). Several files (seeds)
give one line each.
"""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))


def read_curve(path: str) -> dict[str, list[float]]:
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows or "eval_return_mean" not in rows[0]:
        raise ValueError(f"{path} is not a curve.csv of joltgym.ars.Ars (no eval_return_mean column)")
    return {key: [float(row[key]) for row in rows] for key in rows[0]}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("curves", nargs="+", help="curve.csv files written by joltgym.ars.Ars")
    parser.add_argument("--out", default="ars_curve.png")
    parser.add_argument("--threshold", type=float, default=3430.0)
    parser.add_argument("--title", default="ARS V2-t in pure Java (joltgym.ars.Ars)")
    args = parser.parse_args(argv)
    try:
        curves = [(path, read_curve(path)) for path in args.curves]
    except (OSError, ValueError) as e:
        parser.error(str(e))
    from learning_curves import plot_learning_curve

    def label(path: str) -> str:  # runs/ars_x_0/curve.csv -> ars_x_0; seed0.csv -> seed0
        return Path(path).parent.name if Path(path).name == "curve.csv" else Path(path).stem

    (first, c), rest = curves[0], curves[1:]
    plot_learning_curve(args.out, c["steps"], c["eval_return_mean"], args.threshold, label(first), args.title,
                        baseline_label=f"threshold ({args.threshold:.0f})",
                        more=[(label(p), o["steps"], o["eval_return_mean"]) for p, o in rest])
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
