"""Record an episode of any joltgym_marl env to a GIF or an MP4, headless.

    .venv/bin/python examples/record_video.py cheetah_race_v0 --out race.gif --num-agents 4 --layout shared_track
    .venv/bin/python examples/record_video.py sumo_v0 --out sumo.gif --checkpoint runs/selfplay_sumo/checkpoints/latest.pt
    .venv/bin/python examples/record_video.py joltgym_marl/Humanoid-v0 --out humanoid.mp4

Actions are random unless a checkpoint is given: for sumo_v0 a checkpoint of
examples/selfplay_sumo.py plays ant_0 (``--opponent``: ``random``, ``still`` or
another checkpoint plays ant_1); for cheetah_race_v0 a Stable-Baselines3 model
saved by examples/train_race_sb3.py drives every cheetah. Each agent of a
shared world is drawn in its own colour; the camera follows the race leader or
shows the whole sumo ring. The file type follows --out (.gif or .mp4).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import imageio.v2 as imageio
import numpy as np

import joltgym_marl  # noqa: F401  (registers the Gymnasium ids)
from joltgym_marl import MULTI_AGENT_ENVS


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("env", help="a game module (cheetah_race_v0, sumo_v0, run_to_goal_v0, ...) or a Gymnasium id "
                               "such as joltgym_marl/Ant-v0")
    p.add_argument("--out", type=Path, required=True, help="output .gif or .mp4")
    p.add_argument("--checkpoint", default=None)
    p.add_argument("--opponent", default="random", help="sumo: ant_1's player")
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--every", type=int, default=2, help="keep one frame in this many steps")
    p.add_argument("--width", type=int, default=480)
    p.add_argument("--height", type=int, default=320)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--num-agents", type=int, default=None, help="cheetah_race_v0: number of cheetahs")
    p.add_argument("--layout", default=None, help="cheetah_race_v0: lanes or shared_track")
    p.add_argument("--robot", default=None, help="run_to_goal_v0 / sumo_v0: ant or humanoid")
    return p.parse_args()


def record_game(args: argparse.Namespace) -> list[np.ndarray]:
    kwargs = dict(render_mode="rgb_array", width=args.width, height=args.height)
    if args.num_agents is not None:
        kwargs["num_agents"] = args.num_agents
    if args.layout is not None:
        kwargs["layout"] = args.layout
    if args.robot is not None:
        kwargs["robot"] = args.robot
    env = MULTI_AGENT_ENVS[args.env].parallel_env(**kwargs)
    observations, _ = env.reset(seed=args.seed)
    rng = np.random.default_rng(args.seed)
    act = lambda obs: {a: env.action_space(a).sample() for a in env.agents}  # noqa: E731
    if args.checkpoint and args.env == "sumo_v0":
        sys.path.insert(0, str(Path(__file__).parent))
        from sumo_common import load_player

        first, second = load_player(args.checkpoint), load_player(args.opponent)
        act = lambda obs: {"ant_0": first.act(obs["ant_0"][None], rng)[0],  # noqa: E731
                           "ant_1": second.act(obs["ant_1"][None], rng)[0]}
    elif args.checkpoint:
        from stable_baselines3 import PPO

        model = PPO.load(args.checkpoint, device="cpu")
        act = lambda obs: {a: model.predict(obs[a], deterministic=True)[0] for a in env.agents}  # noqa: E731
    frames = [env.render()]
    for t in range(args.steps):
        if not env.agents:
            break
        observations, _, _, _, _ = env.step(act(observations))
        if t % args.every == 0:
            frames.append(env.render())
    env.close()
    return frames


def record_gym(args: argparse.Namespace) -> list[np.ndarray]:
    import gymnasium as gym

    env = gym.make(args.env, render_mode="rgb_array", width=args.width, height=args.height)
    env.reset(seed=args.seed)
    env.action_space.seed(args.seed)
    frames = [env.render()]
    for t in range(args.steps):
        _, _, terminated, truncated, _ = env.step(env.action_space.sample())
        if t % args.every == 0:
            frames.append(env.render())
        if terminated or truncated:
            break
    env.close()
    return frames


def main() -> None:
    args = parse_args()
    frames = record_game(args) if args.env in MULTI_AGENT_ENVS else record_gym(args)
    fps = 20 // max(1, args.every) * 2
    args.out.parent.mkdir(parents=True, exist_ok=True)
    if args.out.suffix == ".gif":
        imageio.mimsave(args.out, frames, duration=1.0 / fps, loop=0)
    else:
        imageio.mimsave(args.out, frames, fps=fps)
    print(f"wrote {len(frames)} frames of {args.env} to {args.out}")


if __name__ == "__main__":
    main()
