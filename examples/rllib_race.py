"""Ray RLlib PPO on CheetahRace, with the worlds batched in native pools on RLlib's env runners.

    .venv-rllib/bin/python examples/rllib_race.py                  # local Ray, 2 env runners
    .venv-rllib/bin/python examples/rllib_race.py --address auto   # join a running cluster
    .venv-rllib/bin/python examples/rllib_race.py --per-world      # RLlib's own runner, one env per world
    .venv-rllib/bin/python examples/rllib_race.py --quick          # a short run (for the tests)

Each env runner steps ``--worlds`` races in one native ``WorldPool``
(``joltgym_marl.rllib.WorldPoolEnvRunner``); every cheetah is driven by one
shared PPO policy (parameter sharing through RLlib's multi-agent API). The
only thing the RLlib config says about the env is its name,
``"joltgym_marl/cheetah_race_v0"``. Before and after training the script
measures the policy's mean forward velocity (``info["x_velocity"]``, m/s,
deterministic actions) over fresh races; it must rise.
"""

from __future__ import annotations

import argparse
import os
import time


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--address", default=None,
                        help="Ray cluster to join ('auto' or host:port); default: start a local one")
    parser.add_argument("--env-runners", type=int, default=2, help="RLlib env runners (default 2)")
    parser.add_argument("--worlds", type=int, default=32, help="races per env runner (default 32)")
    parser.add_argument("--agents", type=int, default=2, help="cheetahs per race (default 2)")
    parser.add_argument("--max-cycles", type=int, default=200, help="race length in steps (default 200)")
    parser.add_argument("--iterations", type=int, default=40, help="PPO iterations (default 40)")
    parser.add_argument("--batch", type=int, default=8192, help="train batch size in env steps (default 8192)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--per-world", action="store_true",
                        help="RLlib's MultiAgentEnvRunner with one GameEnv per world instead of the pool")
    parser.add_argument("--eval-steps", type=int, default=200, help="steps of each velocity measurement")
    parser.add_argument("--quick", action="store_true", help="a short run: 3 small iterations")
    args = parser.parse_args(argv)
    if args.quick:
        args.iterations, args.worlds, args.batch, args.max_cycles, args.eval_steps = 3, 8, 1024, 64, 64
    return args


def build_config(args: argparse.Namespace):
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig

    import joltgym_marl.rllib as jr

    runners = {} if args.per_world else {"env_runner_cls": jr.WorldPoolEnvRunner}
    fragment = max(1, args.batch // max(1, args.env_runners * args.worlds))
    return (
        PPOConfig()
        .environment("joltgym_marl/cheetah_race_v0",
                     env_config={"num_agents": args.agents, "max_cycles": args.max_cycles})
        .env_runners(num_env_runners=args.env_runners, num_envs_per_env_runner=args.worlds,
                     rollout_fragment_length=fragment, num_cpus_per_env_runner=1, **runners)
        .multi_agent(policies={"shared"}, policy_mapping_fn=lambda agent_id, episode, **kw: "shared")
        .rl_module(model_config=DefaultModelConfig(fcnet_hiddens=[64, 64], fcnet_activation="tanh",
                                                   vf_share_layers=False))
        .training(train_batch_size_per_learner=fragment * max(1, args.env_runners) * args.worlds,
                  minibatch_size=512, num_epochs=6, lr=3e-4, gamma=0.99, lambda_=0.95,
                  entropy_coeff=0.0, vf_loss_coeff=0.5)
        .debugging(seed=args.seed)
    )


def mean_forward_velocity(module, args: argparse.Namespace, seed: int) -> float:
    """Mean info["x_velocity"] of every cheetah over ``eval_steps`` steps of 8
    fresh races, actions the policy's deterministic ones (its mean)."""
    import numpy as np
    import torch
    from ray.rllib.core.columns import Columns

    from joltgym_marl import cheetah_race_v0

    env = cheetah_race_v0.vec_env(8, num_threads=1, num_agents=args.agents, max_cycles=args.max_cycles)
    obs, _ = env.reset(seed=seed)
    low, high = env.single_action_space.low, env.single_action_space.high
    dist_cls = module.get_inference_action_dist_cls()
    velocities = []
    with torch.no_grad():
        for _ in range(args.eval_steps):
            out = module.forward_inference({Columns.OBS: torch.from_numpy(obs)})
            actions = dist_cls.from_logits(out[Columns.ACTION_DIST_INPUTS]).to_deterministic().sample().numpy()
            # RLlib's normalize_actions: the policy acts in [-1, 1], unsquashed to the bounds.
            actions = np.clip(low + (actions + 1.0) * (high - low) / 2.0, low, high).astype(np.float32)
            obs, _, _, _, infos = env.step(actions)
            velocities.extend(info["x_velocity"] for info in infos)
    env.close()
    return float(np.mean(velocities))


def main(argv=None) -> int:
    args = parse_args(argv)
    os.environ.setdefault("RAY_DEDUP_LOGS", "0")
    import ray
    import torch

    torch.set_num_threads(1)
    if args.address:
        ray.init(address=args.address, log_to_driver=False)
    else:
        ray.init(address="local", num_cpus=max(2, args.env_runners + 1), include_dashboard=False, log_to_driver=False)
    try:
        algo = build_config(args).build_algo()
        before = mean_forward_velocity(algo.get_module("shared"), args, seed=10_000)
        print(f"mean forward velocity before training: {before:+.3f} m/s", flush=True)
        start = time.perf_counter()
        for iteration in range(1, args.iterations + 1):
            result = algo.train()
            runners = result["env_runners"]
            returns = runners.get("module_episode_returns_mean", {}).get("shared", float("nan"))
            print(f"iter {iteration:3d}  env steps {int(runners.get('num_env_steps_sampled_lifetime', 0)):>8}"
                  f"  mean return per cheetah {returns:8.2f}  {time.perf_counter() - start:6.1f} s", flush=True)
        after = mean_forward_velocity(algo.get_module("shared"), args, seed=10_000)
        print(f"mean forward velocity after training:  {after:+.3f} m/s", flush=True)
        print(f"velocity rose: {after > before} ({after - before:+.3f} m/s)")
        algo.stop()
    finally:
        ray.shutdown()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
