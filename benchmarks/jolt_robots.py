"""Jolt vs MuJoCo on the robots added to Jolt last: speed, joints, behaviour, contact forces.

    .venv/bin/python -m benchmarks.jolt_robots [--steps 1000] [--tasks ant humanoid]
        [--planar swimmer inverted_double_pendulum]

Prints five Markdown tables (docs/guides/jolt.md quotes them):

1. benchmarks/jolt_vs_mujoco.py's throughput table (env-steps/s per engine,
   1 world on 1 thread and 64 worlds on 2 threads, random actions, auto-reset
   on, interleaved rounds) for the free-root robots (--tasks) and Swimmer and
   InvertedDoublePendulum (--planar);
2. joint drift per task and Jolt solver setting: the largest distance
   between a body where Jolt holds it and where MuJoCo's forward kinematics
   of the read-back qpos puts it, over 1000 random-action steps (and the
   median step's);
3. behaviour: the torso's height after 4 s of zero action, how many zero-
   action steps the robot stays healthy (Humanoid falls), and how many of 20
   random-action episodes of 1000 steps turn the torso upside down (its up
   axis below the horizon);
4. contact forces at rest: the sum of cfrc_ext's forces over the bodies, as
   a fraction of the weight, averaged over the last 2 s of 6 s of zero
   action (1 on both engines when cfrc_ext carries the weight), and its
   step-to-step spread;
5. Swimmer and InvertedDoublePendulum: the distance an open-loop sine gait
   swims in 1000 steps, and how many steps the double pendulum stays up
   with zero action (mean of 20 seeds).
"""

from __future__ import annotations

import argparse

import numpy as np


def rest(task: str, engine: str) -> tuple[float, int, float, float]:
    """Torso height after 4 s, healthy zero-action steps, and the contact force's mean and spread / weight."""
    from joltgym_marl import _core

    from benchmarks.jolt_vs_mujoco import load_model

    env = _core.SingleAgentCore(task, engine=engine)
    env.reset(seed=0)
    healthy = 0
    while healthy < 1000 and not env.step(np.zeros(env.act_dim, np.float32))[2]:
        healthy += 1
    kwargs = dict(terminate_when_unhealthy=False)
    if task == "ant":
        kwargs["contact_force_range"] = (-np.inf, np.inf)
    env = _core.SingleAgentCore(task, engine=engine, **kwargs)
    m = load_model(env)
    weight = m.body_subtreemass[0] * -m.opt.gravity[2]
    env.reset(seed=0)
    steps = int(round(6.0 / env.dt))
    height, totals = 0.0, []
    for t in range(steps):
        obs = env.step(np.zeros(env.act_dim, np.float32))[0]
        if t == int(round(4.0 / env.dt)):
            height = float(env.get_state()[0][2])
        tail = obs[27:] if task == "ant" else obs[-6 * (m.nbody - 1):]
        totals.append(tail.reshape(-1, 6)[:, 5].sum() / weight)
    window = np.array(totals[-int(round(2.0 / env.dt)):])
    return height, healthy, float(window.mean()), float(window.std())


def flips(task: str, engine: str, episodes: int = 20) -> int:
    from joltgym_marl import _core

    env = _core.SingleAgentCore(task, engine=engine, terminate_when_unhealthy=False)
    rng = np.random.default_rng(2)
    count = 0
    for episode in range(episodes):
        env.reset(seed=100 + episode)
        flipped = False
        for _ in range(1000):
            env.step(rng.uniform(env.action_low, env.action_high).astype(np.float32))
            w, x, y, _ = env.get_state()[0][3:7]
            flipped = flipped or 1.0 - 2.0 * (x * x + y * y) < 0.0  # the torso's z axis, world z component
        count += flipped
    return count


def drift(task: str, steps: int = 1000, **kwargs) -> tuple[float, float]:
    """Largest and median-step body gap (m) between Jolt and MuJoCo's FK of the read-back qpos."""
    import mujoco

    from joltgym_marl import _core

    from benchmarks.jolt_vs_mujoco import load_model

    env = _core.SingleAgentCore(task, engine="jolt", terminate_when_unhealthy=False, **kwargs)
    m = load_model(env)
    d = mujoco.MjData(m)
    env.reset(seed=0)
    rng = np.random.default_rng(1)
    gaps = []
    for _ in range(steps):
        env.step(rng.uniform(env.action_low, env.action_high).astype(np.float32))
        d.qpos[:] = env.get_state()[0]
        mujoco.mj_kinematics(m, d)
        gaps.append(float(np.abs(env.body_poses()[:, :3] - d.xpos).max()))
    return max(gaps), float(np.median(gaps))


def planar(engine: str) -> tuple[float, float]:
    from joltgym_marl import _core

    env = _core.SingleAgentCore("swimmer", engine=engine)
    env.reset(seed=0)
    for t in range(1000):
        action = np.sin(2 * np.pi * 0.5 * t * env.dt + np.array([0.0, np.pi / 2])).astype(np.float32)
        _, _, _, _, info = env.step(action)
    distance = float(info["x_position"])
    env = _core.SingleAgentCore("inverted_double_pendulum", engine=engine)
    up = []
    for seed in range(20):
        env.reset(seed=seed)
        steps = 0
        while steps < 1000 and not env.step(np.zeros(1, np.float32))[2]:
            steps += 1
        up.append(steps)
    return distance, float(np.mean(up))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1000, help="pool steps per throughput measurement")
    parser.add_argument("--tasks", nargs="*", default=["ant", "humanoid"], help="free-root robots to measure")
    parser.add_argument("--planar", nargs="*", default=["swimmer", "inverted_double_pendulum"],
                        help="other robots whose throughput to measure")
    args = parser.parse_args()

    from benchmarks.jolt_vs_mujoco import throughput_table

    throughput_table(args.tasks + args.planar, args.steps)

    print("| task | substeps | velocity iterations | position iterations | joint drift, worst (mm) "
          "| median step (mm) |")
    print("|---|---:|---:|---:|---:|---:|")
    for task in args.tasks:
        for substeps, velocity, position in [(1, 10, 2), (1, 20, 4), (1, 40, 2), (2, 10, 2), (4, 10, 2)]:
            worst, median = drift(task, jolt_substeps=substeps, jolt_velocity_iterations=velocity,
                                  jolt_position_iterations=position)
            print(f"| {task} | {substeps} | {velocity} | {position} | {1000 * worst:.1f} | {1000 * median:.1f} |",
                  flush=True)

    print("\n| task | engine | torso height after 4 s at rest (m) | zero-action steps healthy "
          "| random-action episodes that flip (of 20) |")
    print("|---|---|---:|---:|---:|")
    contact = []
    for task in args.tasks:
        for engine in ("mujoco", "jolt"):
            height, healthy, mean, spread = rest(task, engine)
            contact.append((task, engine, mean, spread))
            print(f"| {task} | {engine} | {height:.3f} | {healthy} | {flips(task, engine)} |", flush=True)

    print("\n| task | engine | contact force / weight at rest (mean of 2 s) | step-to-step spread |")
    print("|---|---|---:|---:|")
    for task, engine, mean, spread in contact:
        print(f"| {task} | {engine} | {mean:.5f} | {spread:.5f} |", flush=True)

    print("\n| engine | Swimmer: sine gait, 1000 steps (m) | InvertedDoublePendulum: zero-action steps up (mean of 20) |")
    print("|---|---:|---:|")
    for engine in ("mujoco", "jolt"):
        distance, up = planar(engine)
        print(f"| {engine} | {distance:.2f} | {up:.1f} |", flush=True)


if __name__ == "__main__":
    main()
