"""MuJoCo vs Jolt trajectories: one robot, one initial state, one open-loop action sequence.

    .venv/bin/python -m benchmarks.jolt_trajectories --out runs/jolt_vs_mujoco_trajectory.png

For each locomotion robot that runs on Jolt (default: all of them; --tasks to
choose), one world per engine starts from the same state (the MuJoCo world's
reset with --seed, written into the Jolt world with set_state) with the task's
early termination off, and both take the same actions: the open-loop sine gait
of benchmarks/jolt_vs_mujoco.py (2 Hz, the same on both engines). The figure
plots, against time, the torso's height and x position and the first joint
below the root (the back thigh, the thigh); the script prints, per robot, when
the two engines first part (torso heights 1 cm apart, torso x 10 cm apart, the
joint angles 0.1 rad apart) and how far apart the torsos end.
"""

from __future__ import annotations

import argparse


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--tasks", nargs="+", default=None,
                        help="locomotion robots on Jolt (default: every one the registry lists)")
    parser.add_argument("--seconds", type=float, default=4.0, help="simulated time per robot")
    parser.add_argument("--seed", type=int, default=0, help="the reset seed of the shared initial state")
    parser.add_argument("--out", default="runs/jolt_vs_mujoco_trajectory.png", help="the PNG to write")
    args = parser.parse_args(argv)
    if not args.seconds > 0:
        parser.error(f"--seconds should be > 0, got {args.seconds}")
    return args


if __name__ == "__main__":
    parse_args()  # --help answers before MuJoCo and matplotlib are imported

from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

from benchmarks.jolt_vs_mujoco import Torso, free_running, locomotion_tasks, sine_gait  # noqa: E402

ENGINES = ("mujoco", "jolt")


def trajectories(task: str, seconds: float, seed: int) -> tuple[np.ndarray, dict[str, np.ndarray], str]:
    """Times (s), per engine an array [steps + 1, 3] of (torso x, torso z, joint angle), and the joint's name."""
    envs = {engine: free_running(task, engine) for engine in ENGINES}
    envs["mujoco"].reset(seed=seed)
    qpos, qvel = envs["mujoco"].get_state()
    envs["jolt"].reset(seed=seed)
    envs["jolt"].set_state(qpos, qvel)
    torso = Torso(envs["mujoco"])
    model = torso.model
    joint = next(j for j in range(model.njnt) if model.jnt_bodyid[j] != torso.root)  # first joint below the root
    address = model.jnt_qposadr[joint]
    dt = envs["mujoco"].dt
    steps = max(1, round(seconds / dt))
    out = {}
    for engine, env in envs.items():
        rows = []
        for t in range(steps + 1):
            q = env.get_state()[0]
            x, z, _ = torso(q)
            rows.append((x, z, q[address]))
            if t < steps:
                env.step(sine_gait(t, env))
        out[engine] = np.array(rows)
    return np.arange(steps + 1) * dt, out, model.joint(joint).name


def main() -> None:
    args = parse_args()
    tasks = args.tasks or locomotion_tasks()
    unknown = [t for t in tasks if t not in locomotion_tasks()]
    if unknown:
        raise SystemExit(f"--tasks should be among {', '.join(locomotion_tasks())}, got {', '.join(unknown)}")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(len(tasks), 3, figsize=(11, 2.6 * len(tasks)), squeeze=False)
    print("| task | torso heights 1 cm apart after | torso x 10 cm apart after | joint angles 0.1 rad apart after "
          f"| torso x apart at {args.seconds:g} s (m) |")
    print("|---|---:|---:|---:|---:|")
    for row, task in enumerate(tasks):
        times, paths, joint = trajectories(task, args.seconds, args.seed)
        gap = np.abs(paths["jolt"] - paths["mujoco"])
        parted = []
        for k, bound in ((1, 0.01), (0, 0.1), (2, 0.1)):
            apart = np.flatnonzero(gap[:, k] > bound)
            parted.append(f"{times[apart[0]]:.2f} s" if len(apart) else "never")
        print(f"| {task} | {' | '.join(parted)} | {gap[-1, 0]:.2f} |")
        labels = ("torso x (m)", "torso height (m)", f"{joint} angle (rad)")
        for k, label in enumerate(labels):
            ax = axes[row, k]
            for engine, style in zip(ENGINES, ("-", "--")):
                ax.plot(times, paths[engine][:, k], style, label="MuJoCo" if engine == "mujoco" else "Jolt")
            ax.set_title(f"{task}: {label}", fontsize=10)
            if row == len(tasks) - 1:
                ax.set_xlabel("time (s)")
        axes[row, 0].legend(loc="upper left", fontsize=8)
    fig.suptitle("Same initial state, same open-loop sine gait (2 Hz): MuJoCo vs Jolt", fontsize=11)
    fig.tight_layout()
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.out, dpi=80)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
