"""Jolt vs MuJoCo on the same robots: throughput, the solver trade-off, behaviour.

    .venv/bin/python -m benchmarks.jolt_vs_mujoco [--steps 2000] [--tasks half_cheetah]

Prints three Markdown tables (docs/guides/jolt.md quotes them):

1. env-steps/s per task and engine, 1 world on 1 thread and 64 worlds on 2
   threads (WorldPool.step_all with random actions, auto-reset on);
2. Jolt's iterations/substeps trade-off on HalfCheetah: env-steps/s (64
   worlds, 2 threads) against how far the joints come apart, measured as the
   largest distance between a body where Jolt holds it and where MuJoCo's
   forward kinematics of the read-back qpos puts it (random actions, 1000
   steps);
3. what the two engines do with the same robot: resting height after 2 s of
   zero action, the distance an open-loop sine gait covers in 1000 steps, and
   how many of 20 random-action episodes flip the torso (|rooty| > pi/2).
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

import mujoco
import numpy as np

from joltgym_marl import WorldPool, _core
from joltgym_marl.registry import TASKS


def steps_per_second(task: str, num_envs: int, num_threads: int, steps: int, **kwargs) -> float:
    with WorldPool(task, num_envs, num_threads=num_threads, **kwargs) as pool:
        rng = np.random.default_rng(0)
        actions = rng.uniform(pool.action_low, pool.action_high,
                              size=(64, num_envs, pool.act_dim)).astype(np.float32)
        pool.reset_all(seed=0)
        for k in range(50):  # warm-up
            pool.step_all(actions[k % 64])
        start = time.perf_counter()
        for k in range(steps):
            pool.step_all(actions[k % 64])
        return num_envs * steps / (time.perf_counter() - start)


def load_model(env) -> mujoco.MjModel:
    with tempfile.NamedTemporaryFile(suffix=".mjb", delete=False) as f:
        f.write(env.model_mjb())
    try:
        return mujoco.MjModel.from_binary_path(f.name)
    finally:
        os.unlink(f.name)


def joint_drift(task: str, steps: int = 1000, **kwargs) -> float:
    """Largest body-position gap (m) between Jolt and MuJoCo's FK of the read-back qpos."""
    env = _core.SingleAgentCore(task, engine="jolt", **kwargs)
    m = load_model(env)
    d = mujoco.MjData(m)
    env.reset(seed=0)
    rng = np.random.default_rng(1)
    worst = 0.0
    for _ in range(steps):
        env.step(rng.uniform(env.action_low, env.action_high).astype(np.float32))
        d.qpos[:] = env.get_state()[0]
        mujoco.mj_kinematics(m, d)
        worst = max(worst, float(np.abs(env.body_poses()[:, :3] - d.xpos).max()))
    return worst


def behaviour(engine: str) -> tuple[float, float, int]:
    env = _core.SingleAgentCore("half_cheetah", engine=engine)
    env.reset(seed=0)
    for _ in range(40):
        env.step(np.zeros(6, np.float32))
    rest = float(env.get_state()[0][1]) + 0.7  # rootz is relative to the torso's start at 0.7 m
    env.reset(seed=0)
    phase = np.array([0.0, 0.5, 1.0, np.pi, np.pi + 0.5, np.pi + 1.0])
    for t in range(1000):
        action = np.sin(2 * np.pi * 2.0 * t * env.dt + phase).astype(np.float32)
        _, _, _, _, info = env.step(action)
    distance = float(info["x_position"])
    flips = 0
    rng = np.random.default_rng(2)
    for episode in range(20):
        env.reset(seed=100 + episode)
        flipped = False
        for _ in range(1000):
            env.step(rng.uniform(-1, 1, 6).astype(np.float32))
            flipped = flipped or abs(env.get_state()[0][2]) > np.pi / 2
        flips += flipped
    return rest, distance, flips


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=2000, help="pool steps per measurement")
    parser.add_argument("--tasks", nargs="*", default=None,
                        help="single-agent tasks (default: every robot that runs on Jolt)")
    args = parser.parse_args()
    tasks = args.tasks or [name for name, spec in TASKS.items()
                           if "jolt" in spec.engines and not spec.is_game]

    print("| task | engine | 1 world, 1 thread | 64 worlds, 2 threads |")
    print("|---|---|---:|---:|")
    for task in tasks:
        for engine in ("mujoco", "jolt"):
            one = steps_per_second(task, 1, 1, args.steps, engine=engine)
            many = steps_per_second(task, 64, 2, max(args.steps // 16, 50), engine=engine)
            print(f"| {task} | {engine} | {one:,.0f} | {many:,.0f} |", flush=True)

    print("\n| substeps | velocity iterations | position iterations | env-steps/s (64 worlds, 2 threads) "
          "| joint drift (mm) |")
    print("|---:|---:|---:|---:|---:|")
    for substeps, velocity, position in [(1, 4, 1), (1, 10, 2), (1, 20, 4), (2, 10, 2), (4, 10, 2)]:
        kwargs = dict(jolt_substeps=substeps, jolt_velocity_iterations=velocity,
                      jolt_position_iterations=position)
        rate = steps_per_second("half_cheetah", 64, 2, max(args.steps // 16, 50), engine="jolt", **kwargs)
        drift = joint_drift("half_cheetah", **kwargs)
        print(f"| {substeps} | {velocity} | {position} | {rate:,.0f} | {1000 * drift:.2f} |", flush=True)

    print("\n| HalfCheetah | resting torso height (m) | sine gait, 1000 steps (m) | flips in 20 random episodes |")
    print("|---|---:|---:|---:|")
    for engine in ("mujoco", "jolt"):
        rest, distance, flips = behaviour(engine)
        print(f"| {engine} | {rest:.3f} | {distance:.2f} | {flips} |", flush=True)


if __name__ == "__main__":
    main()
