"""A shared-world race: four HalfCheetahs in one MuJoCo world, then 64 races at once.

    python -m joltgym_marl demo          (or, in a clone: .venv/bin/python examples/demo.py)

Each cheetah runs a different open-loop gait (a sine wave per joint); the race
is a PettingZoo ParallelEnv, so the loop below is plain PettingZoo code. Then
the same game runs as 64 worlds (--worlds) x 4 agents through the native agent
vector env, the way a trainer would use it, and its throughput is put beside
that of one race stepped through parallel_env, as the first part did.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

# (frequency in Hz, phase step between joints): some gaits run, some stumble.
GAITS = [(1.0, 0.0), (1.5, 3.0), (2.0, 0.0), (3.0, 2.0)]


def gait_action(t: float, frequency: float, phase: float) -> np.ndarray:
    angle = 2 * np.pi * frequency * t
    back = [np.sin(angle + k * phase) for k in range(3)]
    front = [np.sin(angle + np.pi + k * phase) for k in range(3)]
    return np.array(back + front, dtype=np.float32)


def race() -> None:
    from joltgym_marl import cheetah_race_v0

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


def batched(num_worlds: int = 64, steps: int = 300, venv=None) -> None:
    from joltgym_marl import cheetah_race_v0

    if venv is None:
        venv = cheetah_race_v0.vec_env(num_worlds, num_agents=4)
    venv.reset(seed=0)
    # A few batches of actions, reused: steps x worlds of them could be more than the memory holds.
    actions = np.random.default_rng(0).uniform(-1, 1, (min(steps, 64), venv.num_envs, 6)).astype(np.float32)
    start = time.perf_counter()
    for t in range(steps):
        venv.step(actions[t % len(actions)])
    rate = steps * venv.num_envs / (time.perf_counter() - start)
    threads = venv.pool.num_threads
    venv.close()

    # What the batch is measured against: the first world's actions for one
    # race, stepped in a plain PettingZoo loop as in the first part.
    env = cheetah_race_v0.parallel_env(num_agents=4)
    env.reset(seed=0)
    agents = list(env.possible_agents)
    start = time.perf_counter()
    for t in range(steps):
        if not env.agents:
            env.reset()
        env.step({agent: actions[t % len(actions), i] for i, agent in enumerate(agents)})
    single = steps * len(agents) / (time.perf_counter() - start)
    env.close()
    print(f"{num_worlds} races x 4 agents on {threads} native threads: {rate:,.0f} agent-steps/s "
          f"(random actions, {steps} vec_env.step() calls timed), {rate / single:.1f}x one race stepped "
          f"through parallel_env in a Python loop ({single:,.0f} agent-steps/s)")


def main(argv: list[str] | None = None, prog: str | None = None) -> None:
    parser = build_parser(prog)
    args = parser.parse_args(argv)
    run(args)


def build_parser(prog: str | None = None, parser: argparse.ArgumentParser | None = None) -> argparse.ArgumentParser:
    if parser is None:
        parser = argparse.ArgumentParser(prog=prog, description=__doc__,
                                         formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--worlds", type=_count("--worlds", MAX_WORLDS), default=64,
                        help=f"races run at once in the batched part, 1 to {MAX_WORLDS} (default 64)")
    parser.add_argument("--steps", type=_count("--steps", 10_000_000), default=300,
                        help="steps of the batched part (default 300)")
    return parser


# The largest batch a WorldPool takes (world_pool.cc).
MAX_WORLDS = 1 << 20


def _count(name: str, high: int):
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = None
        if value is None or not 1 <= value <= high:
            raise argparse.ArgumentTypeError(f"should be an int in [1, {high}], got {text!r}")
        return value

    return parse


def run(args: argparse.Namespace) -> None:
    from joltgym_marl import cheetah_race_v0

    # The batch is built first, so that one the machine cannot hold is refused before the race
    # has run, not after it.
    try:
        venv = cheetah_race_v0.vec_env(args.worlds, num_agents=4)
    except MemoryError:
        raise SystemExit(f"demo: not enough memory for --worlds {args.worlds} races of 4 HalfCheetahs") from None
    try:
        race()
        batched(args.worlds, args.steps, venv)
    finally:
        venv.close()


if __name__ == "__main__":
    main()
