"""The Python side of the route teams use today: Gymnasium envs in a Python
process that a Java program drives over a pipe (benchmarks/java/GymPipeHost.java).

    python benchmarks/_gym_pipe_worker.py --envs 64 [--env-id HalfCheetah-v5] [--seed 0]

Protocol (little-endian, binary, on stdin/stdout): the worker first writes a
header line "<obs_dim> <act_dim>\\n" and the reset observations (float32
[envs, obs_dim]); then, for every float32 [envs, act_dim] block of actions it
reads, it steps each env (resetting an env whose episode ended, as a vector
env does) and writes observations (float32 [envs, obs_dim]), rewards (float32
[envs]) and terminated/truncated flags (uint8 [envs, 2]). EOF on stdin ends it.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--envs", type=int, default=64)
    parser.add_argument("--env-id", default="HalfCheetah-v5")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    import gymnasium

    envs = [gymnasium.make(args.env_id) for _ in range(args.envs)]
    obs_dim = envs[0].observation_space.shape[0]
    act_dim = envs[0].action_space.shape[0]
    out, inp = sys.stdout.buffer, sys.stdin.buffer
    obs = np.stack([env.reset(seed=args.seed + i)[0] for i, env in enumerate(envs)]).astype(np.float32)
    out.write(f"{obs_dim} {act_dim}\n".encode())
    out.write(obs.tobytes())
    out.flush()
    rewards = np.zeros(args.envs, np.float32)
    flags = np.zeros((args.envs, 2), np.uint8)
    block = 4 * args.envs * act_dim
    while True:
        data = inp.read(block)
        if len(data) < block:
            return
        actions = np.frombuffer(data, np.float32).reshape(args.envs, act_dim)
        for i, env in enumerate(envs):
            o, r, terminated, truncated, _ = env.step(actions[i])
            if terminated or truncated:
                o, _ = env.reset()
            obs[i], rewards[i], flags[i] = o, r, (terminated, truncated)
        out.write(obs.tobytes())
        out.write(rewards.tobytes())
        out.write(flags.tobytes())
        out.flush()


if __name__ == "__main__":
    main()
