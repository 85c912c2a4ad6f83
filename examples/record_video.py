"""Record an episode of any joltgym_marl env to a GIF or an MP4, headless.

    .venv/bin/python examples/record_video.py cheetah_race_v0 --out race.gif --num-agents 4 --layout shared_track
    .venv/bin/python examples/record_video.py sumo_v0 --out sumo.gif --checkpoint runs/selfplay_sumo/checkpoints/latest.pt
    .venv/bin/python examples/record_video.py joltgym_marl/Humanoid-v0 --out humanoid.mp4

Actions are random unless a checkpoint is given: for sumo_v0 a checkpoint of
examples/selfplay_sumo.py plays ant_0 (``--opponent``: ``random``, ``still`` or
another checkpoint plays ant_1); for cheetah_race_v0 a Stable-Baselines3 model
saved by examples/train_race_sb3.py drives every cheetah. Each agent of a
shared world is drawn in its own colour; the camera follows the race leader or
shows the whole sumo ring. The file type follows --out (.gif or .mp4). When
the episode ends before --steps (a robot falls, a bout is decided), the last
line says so. The recording itself is joltgym_marl.recording, which
``python -m joltgym_marl record`` runs too.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("env", help="any name of a task: a game module (cheetah_race_v0, sumo_v0, run_to_goal_v0, ...), "
                               "a Gymnasium id such as joltgym_marl/Ant-v0, or a native name (python -m joltgym_marl "
                               "list)")
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
    args = p.parse_args()
    from joltgym_marl.recording import check_path
    from joltgym_marl.registry import resolve

    try:
        args.spec = resolve(args.env)
        check_path(args.out)
    except ValueError as error:
        p.error(str(error))
    return args


def policy_of(args: argparse.Namespace):
    """The actions: random (None), a sumo self-play checkpoint, or an SB3 model of every agent."""
    if not args.checkpoint:
        return None
    import numpy as np

    rng = np.random.default_rng(args.seed)
    if args.spec.name == "sumo":
        sys.path.insert(0, str(Path(__file__).parent))
        from sumo_common import load_player

        first, second = load_player(args.checkpoint), load_player(args.opponent)
        return lambda env, obs: {"ant_0": first.act(obs["ant_0"][None], rng)[0],
                                 "ant_1": second.act(obs["ant_1"][None], rng)[0]}
    from stable_baselines3 import PPO

    model = PPO.load(args.checkpoint, device="cpu")
    if args.spec.is_game:
        return lambda env, obs: {a: model.predict(obs[a], deterministic=True)[0] for a in env.agents}
    return lambda env, obs: model.predict(obs, deterministic=True)[0]


def main() -> None:
    args = parse_args()
    from joltgym_marl import recording

    kwargs = {name: value for name, value in (("num_agents", args.num_agents), ("layout", args.layout),
                                              ("robot", args.robot)) if value is not None}
    result = recording.record(args.spec.name, steps=args.steps, every=args.every, width=args.width,
                              height=args.height, seed=args.seed, policy=policy_of(args), **kwargs)
    recording.save(result, args.out)
    print(result.summary(args.out))


if __name__ == "__main__":
    main()
