"""Jolt vs MuJoCo on the same robots: throughput, the solver trade-off, behaviour.

    .venv/bin/python -m benchmarks.jolt_vs_mujoco [--steps 2000] [--tasks half_cheetah] [--tables 1 3]

Prints three Markdown tables (docs/guides/jolt.md quotes them):

1. env-steps/s per task on each engine and their ratio, 1 world on 1 thread
   and 64 worlds on 2 threads (WorldPool.step_all with random actions,
   auto-reset on; a robot that falls also with its termination off; the
   median of --rounds rounds, each measuring the four in turn), Jolt's rate
   per thread against the design's headline per core, with the load average
   before and after;
2. Jolt's iterations/substeps trade-off on HalfCheetah: env-steps/s (64
   worlds, 2 threads) against how far the joints come apart, measured as the
   largest distance between a body where Jolt holds it and where MuJoCo's
   forward kinematics of the read-back qpos puts it (random actions, 1000
   steps);
3. what the two engines do with the same robot, for every locomotion robot
   that runs on Jolt (a task with a forward reward; HalfCheetah, Hopper,
   Walker2d today): the torso's height after 2 s of zero action, the distance
   an open-loop sine gait (the same actions on both engines) covers in 1000
   steps, how many of 20 random-action episodes of 1000 steps flip the torso
   (its up axis points down: |pitch| > 90 degrees for a planar robot), these
   three with the task's termination off, and the mean length of 20
   random-action episodes with it on (the task's own early end: a fall).

benchmarks/jolt_trajectories.py plots the two engines' trajectories from one
state under one open-loop action sequence.
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


def locomotion_tasks() -> list[str]:
    """The single-agent robots on Jolt that walk, run or swim (their reward has a forward term)."""
    return [name for name, spec in TASKS.items() if "jolt" in spec.engines and not spec.is_game
            and "forward_reward_weight" in spec.defaults()]


def free_running(task: str, engine: str, **kwargs) -> _core.SingleAgentCore:
    """The task's single world with its early termination (a fall) turned off, where it has one."""
    if "terminate_when_unhealthy" in TASKS[task].defaults():
        kwargs.setdefault("terminate_when_unhealthy", False)
    return _core.SingleAgentCore(task, engine=engine, **kwargs)


class Torso:
    """The root body's pose, by MuJoCo's forward kinematics of a world's qpos (the same on both engines)."""

    def __init__(self, env):
        self.model = load_model(env)
        self.data = mujoco.MjData(self.model)
        self.root = 1  # the first body under the world: the torso (the cart of a pendulum)

    def __call__(self, qpos: np.ndarray) -> tuple[float, float, float]:
        """(x, z, up): the torso's position and the world-z component of its up axis."""
        self.data.qpos[:] = qpos
        mujoco.mj_kinematics(self.model, self.data)
        x, _, z = self.data.xpos[self.root]
        return float(x), float(z), float(self.data.xmat[self.root][8])


def sine_gait(t: int, env) -> np.ndarray:
    """An open-loop gait at 2 Hz: actuator k's phase is 0.5 (k mod 3) rad, plus pi on every other
    leg of three actuators (HalfCheetah's and Walker2d's two legs in antiphase)."""
    k = np.arange(env.act_dim)
    phase = 0.5 * (k % 3) + np.pi * ((k // 3) % 2)
    return (np.asarray(env.action_high) * np.sin(2 * np.pi * 2.0 * t * env.dt + phase)).astype(np.float32)


def behaviour(task: str, engine: str) -> tuple[float, float, int, float]:
    """Resting torso height (m), the sine gait's distance (m), flips of 20 random episodes, and the
    mean length (steps) of 20 random episodes with the task's termination on."""
    env = free_running(task, engine)
    torso = Torso(env)
    zero = np.zeros(env.act_dim, np.float32)
    env.reset(seed=0)
    for _ in range(round(2.0 / env.dt)):
        env.step(zero)
    rest = torso(env.get_state()[0])[1]
    env.reset(seed=0)
    start = torso(env.get_state()[0])[0]
    for t in range(1000):
        env.step(sine_gait(t, env))
    distance = torso(env.get_state()[0])[0] - start
    low, high = np.asarray(env.action_low), np.asarray(env.action_high)
    flips = 0
    rng = np.random.default_rng(2)
    for episode in range(20):
        env.reset(seed=100 + episode)
        flipped = False
        for _ in range(1000):
            env.step(rng.uniform(low, high).astype(np.float32))
            flipped = flipped or torso(env.get_state()[0])[2] < 0.0
        flips += flipped
    ending = _core.SingleAgentCore(task, engine=engine)
    rng = np.random.default_rng(3)
    lengths = []
    for episode in range(20):
        ending.reset(seed=100 + episode)
        for length in range(1, ending.max_episode_steps + 1):
            _, _, terminated, truncated, _ = ending.step(rng.uniform(low, high).astype(np.float32))
            if terminated or truncated:
                break
        lengths.append(length)
    return rest, distance, flips, float(np.mean(lengths))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=2000, help="pool steps per measurement")
    parser.add_argument("--tasks", nargs="*", default=None,
                        help="single-agent tasks (default: every robot that runs on Jolt)")
    parser.add_argument("--rounds", type=int, default=3,
                        help="interleaved rounds of the throughput table (the median is printed)")
    parser.add_argument("--tables", nargs="+", type=int, choices=(1, 2, 3), default=(1, 2, 3),
                        help="which tables to measure (1 throughput, 2 solver trade-off, 3 behaviour)")
    args = parser.parse_args()
    tasks = args.tasks or [name for name, spec in TASKS.items()
                           if "jolt" in spec.engines and not spec.is_game]

    if 1 in args.tables:
        throughput_table(tasks, args.steps, args.rounds)
    if 2 in args.tables:
        solver_table(args.steps)
    if 3 in args.tables:
        behaviour_table(tasks)


# The design this project grew from (JoltGym): about 73K env-steps/s of HalfCheetah and Humanoid at 256
# worlds on all the cores of an Apple laptop, whose core count it did not record (8 to 12 on the M-series).
HEADLINE_RATE = 73_000
HEADLINE_CORES = (8, 12)


def interleaved_rates(task: str, steps: int, rounds: int, **kwargs) -> dict[tuple[str, int], float]:
    """Median env-steps/s of each engine at 1 world (1 thread) and 64 worlds (2 threads), the four
    measurements taken in turn in every round, so a change in the machine's load falls on all of them."""
    samples: dict[tuple[str, int], list[float]] = {}
    for _ in range(rounds):
        for engine in ("mujoco", "jolt"):
            samples.setdefault((engine, 1), []).append(
                steps_per_second(task, 1, 1, steps, engine=engine, **kwargs))
            samples.setdefault((engine, 64), []).append(
                steps_per_second(task, 64, 2, max(steps // 16, 50), engine=engine, **kwargs))
    return {key: float(np.median(rates)) for key, rates in samples.items()}


def throughput_table(tasks: list[str], steps: int, rounds: int = 3) -> None:
    low, high = (HEADLINE_RATE / cores for cores in reversed(HEADLINE_CORES))
    print(f"load average before: {os.getloadavg()[0]:.2f}; median of {rounds} interleaved rounds")
    print(f"design headline: {HEADLINE_RATE:,} env-steps/s at 256 worlds on an Apple laptop's "
          f"{HEADLINE_CORES[0]} to {HEADLINE_CORES[1]} cores = {low:,.0f} to {high:,.0f} per core")
    print("| task | MuJoCo, 1 world | Jolt, 1 world | Jolt / MuJoCo | MuJoCo, 64 worlds | Jolt, 64 worlds "
          "| Jolt / MuJoCo | Jolt per thread (64 worlds) | per thread / headline per core |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for task in tasks:
        # A robot that falls under random actions resets every few dozen steps: measured again
        # with its termination off, the rows compare the engines' physics alone.
        variants = [("", {})]
        if "terminate_when_unhealthy" in TASKS[task].defaults():
            variants.append((" (termination off)", {"terminate_when_unhealthy": False}))
        for label, kwargs in variants:
            rate = interleaved_rates(task, steps, rounds, **kwargs)
            per_thread = rate["jolt", 64] / 2
            print(f"| {task}{label} | {rate['mujoco', 1]:,.0f} | {rate['jolt', 1]:,.0f} "
                  f"| {rate['jolt', 1] / rate['mujoco', 1]:.2f} | {rate['mujoco', 64]:,.0f} "
                  f"| {rate['jolt', 64]:,.0f} | {rate['jolt', 64] / rate['mujoco', 64]:.2f} "
                  f"| {per_thread:,.0f} | {per_thread / high:.2f} to {per_thread / low:.2f} |", flush=True)
    print(f"load average after: {os.getloadavg()[0]:.2f}\n")


def solver_table(steps: int) -> None:
    print("| substeps | velocity iterations | position iterations | env-steps/s (64 worlds, 2 threads) "
          "| joint drift (mm) |")
    print("|---:|---:|---:|---:|---:|")
    for substeps, velocity, position in [(1, 4, 1), (1, 10, 2), (1, 20, 4), (2, 10, 2), (4, 10, 2)]:
        kwargs = dict(jolt_substeps=substeps, jolt_velocity_iterations=velocity,
                      jolt_position_iterations=position)
        rate = steps_per_second("half_cheetah", 64, 2, max(steps // 16, 50), engine="jolt", **kwargs)
        drift = joint_drift("half_cheetah", **kwargs)
        print(f"| {substeps} | {velocity} | {position} | {rate:,.0f} | {1000 * drift:.2f} |", flush=True)
    print()


def behaviour_table(tasks: list[str]) -> None:
    print("| task | engine | torso height after 2 s at rest (m) | sine gait, 1000 steps (m) "
          "| flips in 20 random episodes | random episode length (steps) |")
    print("|---|---|---:|---:|---:|---:|")
    for task in [t for t in tasks if t in locomotion_tasks()]:
        for engine in ("mujoco", "jolt"):
            rest, distance, flips, length = behaviour(task, engine)
            print(f"| {task} | {engine} | {rest:.3f} | {distance:.2f} | {flips} | {length:.0f} |", flush=True)


if __name__ == "__main__":
    main()
