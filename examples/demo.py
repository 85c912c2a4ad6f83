"""A shared-world race: four HalfCheetahs in one MuJoCo world, then 64 races at once.

    .venv/bin/python examples/demo.py

Each cheetah runs a different open-loop gait (a sine wave per joint); the race
is a PettingZoo ParallelEnv, so the loop below is plain PettingZoo code. Then
the same game runs as 64 worlds (--worlds) x 4 agents through the native agent
vector env, the way a trainer would use it.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from joltgym_marl import cheetah_race_v0

# (frequency in Hz, phase step between joints): some gaits run, some stumble.
GAITS = [(1.0, 0.0), (1.5, 3.0), (2.0, 0.0), (3.0, 2.0)]


def gait_action(t: float, frequency: float, phase: float) -> np.ndarray:
    angle = 2 * np.pi * frequency * t
    back = [np.sin(angle + k * phase) for k in range(3)]
    front = [np.sin(angle + np.pi + k * phase) for k in range(3)]
    return np.array(back + front, dtype=np.float32)


def race() -> None:
    env = cheetah_race_v0.parallel_env(num_agents=4, layout="lanes", finish_line=10.0, max_cycles=1000)
    observations, infos = env.reset(seed=0)
    dt = 1.0 / env.metadata["render_fps"]
    print(f"{env.metadata['name']}: {len(env.agents)} HalfCheetahs in one world, finish line at 10 m")
    step = 0
    while env.agents:
        actions = {agent: gait_action(step * dt, *GAITS[i]) for i, agent in enumerate(env.agents)}
        observations, rewards, terminations, truncations, infos = env.step(actions)
        step += 1
        if step % 50 == 0 or not env.agents:
            standings = sorted(infos, key=lambda agent: infos[agent]["rank"])
            line = "  ".join(f"{agent} {infos[agent]['x_position']:6.2f} m" for agent in standings)
            print(f"  t = {step * dt:5.2f} s  {line}")
    winner = min(infos, key=lambda agent: infos[agent]["rank"])
    finished = any(terminations.values())
    print(f"{winner} {'wins' if finished else 'leads at the time limit'} after {step} steps "
          f"(finish bonus {infos[winner]['reward_finish']:.0f})")
    env.close()


def batched(num_worlds: int = 64, steps: int = 300) -> None:
    venv = cheetah_race_v0.vec_env(num_worlds, num_agents=4)
    venv.reset(seed=0)
    actions = np.random.default_rng(0).uniform(-1, 1, (steps, venv.num_envs, 6)).astype(np.float32)
    start = time.perf_counter()
    for t in range(steps):
        venv.step(actions[t])
    rate = steps * venv.num_envs / (time.perf_counter() - start)
    print(f"{num_worlds} races x 4 agents on {venv.pool.num_threads} native threads: "
          f"{rate:,.0f} agent-steps/s")
    venv.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--worlds", type=int, default=64, help="races run at once in the batched part")
    parser.add_argument("--steps", type=int, default=300, help="steps of the batched part")
    args = parser.parse_args()
    race()
    batched(args.worlds, args.steps)
