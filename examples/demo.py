"""A short tour: one native HalfCheetah through Gymnasium, then 64 worlds at once.

    python examples/demo.py
"""

from __future__ import annotations

import time

import gymnasium as gym
import numpy as np

import joltgym_marl  # noqa: F401  (registers the joltgym_marl/ envs)


def single_env() -> None:
    env = gym.make("joltgym_marl/HalfCheetah-v0")
    obs, info = env.reset(seed=0)
    total, steps = 0.0, 0
    while True:
        obs, reward, terminated, truncated, info = env.step(env.action_space.sample())
        total += reward
        steps += 1
        if terminated or truncated:
            break
    print(f"HalfCheetah, random policy: {steps} steps, return {total:.1f}, "
          f"final x = {info['x_position']:.2f} m")
    env.close()


def vector_env(num_envs: int = 64, steps: int = 500) -> None:
    envs = gym.make_vec("joltgym_marl/HalfCheetah-v0", num_envs=num_envs,
                        vectorization_mode="vector_entry_point")
    envs.reset(seed=0)
    actions = np.random.default_rng(0).uniform(-1, 1, (steps, num_envs, 6)).astype(np.float32)
    start = time.perf_counter()
    for t in range(steps):
        envs.step(actions[t])
    rate = steps * num_envs / (time.perf_counter() - start)
    print(f"{num_envs} HalfCheetah worlds on {envs.pool.num_threads} native threads: "
          f"{rate:,.0f} env-steps/s")
    envs.close()


if __name__ == "__main__":
    single_env()
    vector_env()
