"""Stable-Baselines3 PPO wall-clock to a fixed step count: our VecEnv against Gymnasium's envs in SB3's.

    .venv/bin/python benchmarks/sb3_training.py [--task half_cheetah] [--envs 16] [--threads 2]
                                                [--steps 65536] [--rounds 2]

The same PPO (``MlpPolicy``, 64x64, ``n_steps=256``, ``batch_size=1024``,
``n_epochs=4``, torch on one thread, seed 0) learns ``--steps`` env steps of
one single-agent task on

* ``ours``:       ``joltgym_marl.vector.make_sb3_vec_env(env_id, envs, num_threads=threads)``
  (the worlds in one native pool);
* ``dummy``:      SB3's ``DummyVecEnv`` of ``gymnasium.make(reference_id)`` (one process);
* ``subproc``:    SB3's ``SubprocVecEnv`` of the same (one process per env).

Each contender's whole ``learn()`` is timed (rollouts and updates), rounds
interleaved; the script prints the median seconds (min-max), env-steps/s and
the ratios of the medians. Run it from the clone's root.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks._paths import use_checkout  # noqa: E402

use_checkout()

CONTENDERS = ("ours", "dummy", "subproc")


def parse_args(argv=None) -> argparse.Namespace:
    from benchmarks._tasks import TASKS

    names = [spec.name for spec in TASKS.values() if not spec.is_game]
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--task", choices=names, default="half_cheetah" if "half_cheetah" in names else names[0])
    parser.add_argument("--envs", type=int, default=16, help="worlds / envs (default 16)")
    parser.add_argument("--threads", type=int, default=2, help="our native threads (default 2)")
    parser.add_argument("--steps", type=int, default=65536, help="env steps to learn (default 65536)")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--contenders", nargs="+", choices=CONTENDERS, default=list(CONTENDERS))
    return parser.parse_args(argv)


def make_venv(name: str, spec, args):
    import gymnasium
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

    from joltgym_marl.vector import make_sb3_vec_env

    if name == "ours":
        return make_sb3_vec_env(spec.env_id, args.envs, num_threads=args.threads)

    def one():
        return gymnasium.make(spec.reference_id)

    if name == "dummy":
        return DummyVecEnv([one] * args.envs)
    return SubprocVecEnv([one] * args.envs, start_method="forkserver")


def learn_seconds(name: str, spec, args) -> float:
    import torch
    from stable_baselines3 import PPO

    torch.set_num_threads(1)
    venv = make_venv(name, spec, args)
    n_steps = 256
    model = PPO("MlpPolicy", venv, n_steps=n_steps, batch_size=min(1024, n_steps * args.envs), n_epochs=4,
                seed=0, device="cpu", verbose=0)
    start = time.perf_counter()
    model.learn(total_timesteps=args.steps)
    elapsed = time.perf_counter() - start
    venv.close()
    return elapsed


def main(argv=None) -> int:
    args = parse_args(argv)
    from benchmarks._tasks import TASKS

    spec = TASKS[args.task]
    samples = {name: [] for name in args.contenders}
    for r in range(args.rounds):
        for name in args.contenders:
            samples[name].append(learn_seconds(name, spec, args))
            print(f"[round {r + 1}/{args.rounds}] {name}: {samples[name][-1]:.1f} s", file=sys.stderr, flush=True)
    print(f"{spec.env_id} vs {spec.reference_id}: SB3 PPO, {args.steps} env steps, {args.envs} envs, "
          f"{args.threads} native threads, {args.rounds} rounds, interleaved")
    print(f"{'contender':<10}{'median s':>10}{'min':>8}{'max':>8}{'env-steps/s':>13}")
    medians = {}
    for name, values in samples.items():
        medians[name] = statistics.median(values)
        print(f"{name:<10}{medians[name]:>10.1f}{min(values):>8.1f}{max(values):>8.1f}"
              f"{args.steps / medians[name]:>13,.0f}")
    if "ours" in medians:
        for name in medians:
            if name != "ours":
                print(f"speed-up ours vs {name} = {medians[name] / medians['ours']:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
