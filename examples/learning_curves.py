"""The learning-curve files of the training examples: one CSV writer and one plot.

* ``write_curve_csv(path, header, rows)``: the curve's numbers, one row per
  iteration.
* ``plot_learning_curve(path, steps, returns, baseline, label, title,
  velocities=None)``: the mean episode return against world steps, with a
  uniformly random policy's return as a dashed line (or another baseline,
  named by ``baseline_label``; ``more`` adds (label, steps, returns) runs,
  e.g. other seeds); given ``velocities``
  (the episodes' mean forward velocity), a second panel below plots them.
  Iterations in which no episode ended (NaN) are left out.

Not a script: mappo_mamujoco.py, cleanrl_ppo_continuous.py and plot_ars.py import it.
"""

from __future__ import annotations

import argparse
import csv
from collections.abc import Iterable, Sequence

if __name__ == "__main__":  # not a script: say what it holds (matplotlib is imported only to plot)
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.parse_args()
    parser.print_help()
    raise SystemExit(0)

import numpy as np


def write_curve_csv(path: str, header: Sequence[str], rows: Iterable[Sequence]) -> None:
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(header)
        writer.writerows(rows)


def plot_learning_curve(path: str, steps: Sequence[float], returns: Sequence[float], baseline: float, label: str,
                        title: str, velocities: Sequence[float] | None = None, baseline_label: str | None = None,
                        more: Sequence[tuple[str, Sequence[float], Sequence[float]]] = ()) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    steps, returns = np.asarray(steps, float), np.asarray(returns, float)
    panels = 1 if velocities is None else 2
    fig, axes = plt.subplots(panels, 1, figsize=(6, 3.6 if panels == 1 else 5.6), sharex=True, squeeze=False)
    ax = axes[0, 0]
    ok = ~np.isnan(returns)
    ax.plot(steps[ok], returns[ok], label=label)
    for other_label, other_steps, other_returns in more:  # more runs (seeds) on the same axes
        other_steps, other_returns = np.asarray(other_steps, float), np.asarray(other_returns, float)
        fine = ~np.isnan(other_returns)
        ax.plot(other_steps[fine], other_returns[fine], label=other_label)
    ax.axhline(baseline, color="gray", ls="--",
               label=baseline_label if baseline_label is not None else f"random policy ({baseline:.0f})")
    ax.set_ylabel("episode return")
    ax.set_title(title)
    ax.legend(loc="upper left")
    if velocities is not None:
        velocities = np.asarray(velocities, float)
        ok = ~np.isnan(velocities)
        low = axes[1, 0]
        low.plot(steps[ok], velocities[ok], color="tab:green")
        low.axhline(0.0, color="gray", lw=0.8)
        low.set_ylabel("forward velocity (m/s)")
    axes[-1, 0].set_xlabel("world steps")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
