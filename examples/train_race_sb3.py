"""Stable-Baselines3 PPO with parameter sharing on CheetahRace.

    .venv/bin/python examples/train_race_sb3.py               # native agent vector env
    .venv/bin/python examples/train_race_sb3.py --supersuit   # the SuperSuit pipeline instead
    .venv/bin/python examples/train_race_sb3.py --quick       # a short run (for CI)

Every cheetah of every race is one row of the vector env, so one policy is
trained on all agents at once (parameter sharing). Before and after training
the script measures the policy's mean forward velocity (info["x_velocity"],
m/s, deterministic actions) over a few hundred steps of fresh races, and how
far training moved the policy's actions on the observations of the first
measurement.
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--supersuit", action="store_true", help="train through SuperSuit's pipeline")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--timesteps", type=int, default=1_000_000)
    parser.add_argument("--worlds", type=int, default=16)
    parser.add_argument("--agents", type=int, default=4)
    parser.add_argument("--layout", default="lanes")
    parser.add_argument("--max-cycles", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--save", type=Path, default=Path("runs/race_ppo.zip"))
    parser.add_argument("--progress-bar", action=argparse.BooleanOptionalAction, default=True,
                        help="show SB3's progress bar while training (needs tqdm and rich)")
    args = parser.parse_args()
    if args.quick:
        args.timesteps, args.worlds = 8_192, 4
    return args


if __name__ == "__main__":
    # Arguments first: --help and bad arguments answer before torch and SB3 are imported (seconds).
    parse_args()

import numpy as np  # noqa: E402
import supersuit as ss  # noqa: E402
import torch  # noqa: E402
from stable_baselines3 import PPO  # noqa: E402
from stable_baselines3.common.vec_env import VecMonitor  # noqa: E402

from joltgym_marl import cheetah_race_v0  # noqa: E402


def make_env(args: argparse.Namespace, supersuit: bool):
    game = dict(num_agents=args.agents, layout=args.layout, max_cycles=args.max_cycles)
    if supersuit:
        return ss.concat_vec_envs_v1(ss.pettingzoo_env_to_vec_env_v1(cheetah_race_v0.parallel_env(**game)),
                                     args.worlds, num_cpus=0, base_class="stable_baselines3")
    return cheetah_race_v0.vec_env(args.worlds, base_class="stable_baselines3", **game)


def mean_forward_velocity(model: PPO, args: argparse.Namespace, steps: int) -> tuple[float, np.ndarray]:
    """Mean info["x_velocity"] over every row and step of fresh native races,
    and the observations the policy saw there."""
    env = cheetah_race_v0.vec_env(8, base_class="stable_baselines3", num_agents=args.agents,
                                  layout=args.layout, max_cycles=args.max_cycles)
    env.seed(10_000)
    obs = env.reset()
    total, count, seen = 0.0, 0, []
    for _ in range(steps):
        seen.append(obs)
        actions, _ = model.predict(obs, deterministic=True)
        obs, _, _, infos = env.step(actions)
        total += sum(info["x_velocity"] for info in infos)
        count += len(infos)
    env.close()
    return total / count, np.concatenate(seen)


def main() -> None:
    args = parse_args()
    torch.set_num_threads(1)
    warnings.filterwarnings("ignore", "rich is experimental")  # tqdm's, on every SB3 progress bar

    env = VecMonitor(make_env(args, args.supersuit))
    # SuperSuit's SB3 wrapper has no working seed() (it fails on its
    # ConcatVecEnv), so only the native pipeline is seeded.
    seed = None if args.supersuit else args.seed
    if seed is not None:
        env.seed(seed)
    torch.manual_seed(args.seed)
    model = PPO("MlpPolicy", env, n_steps=256, batch_size=1024, n_epochs=10, learning_rate=3e-4,
                gamma=0.99, gae_lambda=0.95, seed=seed, device="cpu", verbose=0)
    eval_steps = 50 if args.quick else 500
    before, probe = mean_forward_velocity(model, args, eval_steps)
    probe_actions = model.predict(probe, deterministic=True)[0]
    print(f"pipeline: {'SuperSuit concat_vec_envs_v1' if args.supersuit else 'native agent vector env'}, "
          f"{args.worlds} races x {args.agents} cheetahs = {env.num_envs} rows")
    print(f"mean forward velocity before training: {before:+.3f} m/s")
    start = time.perf_counter()
    model.learn(total_timesteps=args.timesteps, progress_bar=args.progress_bar)
    seconds = time.perf_counter() - start
    after, _ = mean_forward_velocity(model, args, eval_steps)
    change = np.abs(model.predict(probe, deterministic=True)[0] - probe_actions).mean()
    print(f"trained {args.timesteps:,} agent-steps in {seconds:.0f} s ({args.timesteps / seconds:,.0f} steps/s)")
    print(f"mean forward velocity after training:  {after:+.3f} m/s")
    print(f"policy change: mean |action after - before| = {change:.2e} over the {len(probe):,} observations "
          f"of the first measurement")
    args.save.parent.mkdir(parents=True, exist_ok=True)
    model.save(args.save)
    env.close()


if __name__ == "__main__":
    main()
