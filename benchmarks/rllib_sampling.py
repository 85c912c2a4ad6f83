"""RLlib env-runner sampling throughput: our batched runner against RLlib's PettingZoo and SuperSuit routes.

    .venv-rllib/bin/python benchmarks/rllib_sampling.py [--game cheetah_race] [--worlds 64]
                                                        [--runners 2] [--steps 64] [--rounds 5]

Runs in the RLlib environment (README: ``.venv-rllib``). Every contender is a
PPO config on the same game (``--agents`` per world for a game with a
``num_agents`` parameter) with ``--runners`` remote env runners of one CPU
each, ``--worlds`` worlds per runner, the same RLModule (a 64x64 MLP, torch
on one thread) and one shared policy for all agents; the time is that of
``sample(num_timesteps=worlds * steps)`` on all runners at once, so it counts
everything an env runner does per step (connectors, the module's forward
pass, episode bookkeeping, the env):

* ``pool``: ``env_runner_cls=joltgym_marl.rllib.WorldPoolEnvRunner`` (the
  worlds of a runner in one native ``WorldPool`` on one thread);
* ``per_world``: RLlib's ``MultiAgentEnvRunner`` over ``joltgym_marl.rllib.GameEnv``
  (one native world per env, RLlib's ``SyncVectorMultiAgentEnv``);
* ``pettingzoo``: RLlib's ``MultiAgentEnvRunner`` over RLlib's own
  ``ParallelPettingZooEnv(<game>_v0.parallel_env())``, the route RLlib documents
  for PettingZoo envs;
* ``supersuit``: RLlib's ``SingleAgentEnvRunner`` over SuperSuit's pipeline
  (``concat_vec_envs_v1(pettingzoo_env_to_vec_env_v1(parallel_env), worlds)``,
  every agent a row, given to RLlib as a vector entry point).

Rounds are interleaved; the script prints the median agent-steps/s (min-max)
of each and the ratios of the medians. Run it from the clone's root.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

CONTENDERS = ("pool", "per_world", "pettingzoo", "supersuit")


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--game", default="cheetah_race", help="a game of the native registry (default: %(default)s)")
    parser.add_argument("--agents", type=int, default=2, help="agents per world, if the game takes num_agents")
    parser.add_argument("--worlds", type=int, default=64, help="worlds per env runner (default 64)")
    parser.add_argument("--runners", type=int, default=2, help="remote env runners, one CPU each (default 2)")
    parser.add_argument("--steps", type=int, default=64, help="env steps per world and round (default 64)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--contenders", nargs="+", choices=CONTENDERS, default=list(CONTENDERS))
    return parser.parse_args(argv)


def game_config(args) -> dict:
    from joltgym_marl.registry import TASKS

    spec = TASKS[args.game]
    config = {"max_cycles": spec.max_episode_steps}
    if any(p.name == "num_agents" for p in spec.params):
        config["num_agents"] = args.agents
    return config


class _SuperSuitRows:
    """SuperSuit's ConcatVecEnv as the gymnasium VectorEnv RLlib's single-agent
    runner reads (single_* spaces, infos as a dict); its same-step auto-reset
    is left as it is (the benchmark measures throughput, not learning)."""

    metadata = {"autoreset_mode": "SameStep"}

    def __new__(cls, venv):
        import gymnasium
        from gymnasium.vector.utils import batch_space

        class Rows(gymnasium.vector.VectorEnv):
            def __init__(self, inner):
                self.inner = inner
                self.num_envs = inner.num_envs
                self.single_observation_space = inner.observation_space
                self.single_action_space = inner.action_space
                self.observation_space = batch_space(inner.observation_space, self.num_envs)
                self.action_space = batch_space(inner.action_space, self.num_envs)
                self.metadata = {"autoreset_mode": gymnasium.vector.AutoresetMode.SAME_STEP}

            def reset(self, *, seed=None, options=None):
                obs, _ = self.inner.reset(seed=seed)
                return obs, {}

            def step(self, actions):
                obs, rewards, terminated, truncated, _ = self.inner.step(actions)
                return obs, rewards, terminated, truncated, {}

            def close_extras(self, **kwargs):
                self.inner.close()

        return Rows(venv)


def register_peers(args) -> None:
    """The PettingZoo and SuperSuit routes, registered with RLlib by name."""
    import supersuit as ss
    from ray.rllib.env.wrappers.pettingzoo_env import ParallelPettingZooEnv
    from ray.tune.registry import register_env

    from joltgym_marl import envs
    from joltgym_marl.registry import TASKS

    module = getattr(envs, TASKS[args.game].module_name)
    config = game_config(args)

    def pettingzoo(env_config):
        return ParallelPettingZooEnv(module.parallel_env(**config))

    def supersuit(env_config):
        one = module.parallel_env(**config)
        agents = len(one.possible_agents)
        rows = env_config.get("num_envs", agents)
        return _SuperSuitRows(ss.concat_vec_envs_v1(ss.pettingzoo_env_to_vec_env_v1(one), rows // agents,
                                                    num_cpus=0, base_class="gymnasium"))

    register_env("bench_pettingzoo", pettingzoo)
    register_env("bench_supersuit", supersuit)


def build(name: str, args):
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig

    import joltgym_marl.rllib as jr

    config = game_config(args)
    agents = config.get("num_agents", 2)
    base = (PPOConfig()
            .rl_module(model_config=DefaultModelConfig(fcnet_hiddens=[64, 64], fcnet_activation="tanh"))
            .training(train_batch_size_per_learner=args.worlds * args.steps * args.runners,
                      minibatch_size=min(128, args.worlds * args.steps * args.runners))
            .env_runners(num_env_runners=args.runners, num_cpus_per_env_runner=1,
                         rollout_fragment_length=args.steps))
    shared = {"policies": {"shared"}, "policy_mapping_fn": lambda aid, ep, **kw: "shared"}
    if name == "pool":
        base.environment(jr.env_name(args.game), env_config={**config, "num_threads": 1})
        base.env_runners(env_runner_cls=jr.WorldPoolEnvRunner, num_envs_per_env_runner=args.worlds)
        base.multi_agent(**shared)
    elif name == "per_world":
        base.environment(jr.env_name(args.game), env_config=config)
        base.env_runners(num_envs_per_env_runner=args.worlds)
        base.multi_agent(**shared)
    elif name == "pettingzoo":
        base.environment("bench_pettingzoo")
        base.env_runners(num_envs_per_env_runner=args.worlds)
        base.multi_agent(**shared)
    else:  # supersuit: every agent of every world is one row of a single-agent vector env
        base.environment("bench_supersuit")
        base.env_runners(num_envs_per_env_runner=args.worlds * agents, gym_env_vectorize_mode="vector_entry_point")
        base.training(train_batch_size_per_learner=args.worlds * agents * args.steps * args.runners)
    return base.build_algo(), agents


def sample_rate(algo, name: str, agents: int, steps_per_runner: int) -> float:
    def run(runner):
        episodes = runner.sample(num_timesteps=steps_per_runner)
        return sum(e.env_steps() for e in episodes)

    start = time.perf_counter()
    env_steps = algo.env_runner_group.foreach_env_runner(run, local_env_runner=False)
    elapsed = time.perf_counter() - start
    total = sum(env_steps)
    # Multi-agent runners count env steps of whole worlds; SuperSuit's rows are agents.
    return (total if name == "supersuit" else total * agents) / elapsed


def main(argv=None) -> int:
    args = parse_args(argv)
    os.environ.setdefault("RAY_DEDUP_LOGS", "0")
    import ray

    ray.init(address="local", num_cpus=args.runners * len(args.contenders) + 1, include_dashboard=False, log_to_driver=False)
    try:
        register_peers(args)
        algos = {}
        for name in args.contenders:
            algo, agents = build(name, args)
            per_runner = args.worlds * args.steps * (agents if name == "supersuit" else 1)
            algos[name] = (algo, agents, per_runner)
            sample_rate(algo, name, agents, per_runner)  # warm-up
        samples = {name: [] for name in args.contenders}
        for r in range(args.rounds):
            for name, (algo, agents, per_runner) in algos.items():
                samples[name].append(sample_rate(algo, name, agents, per_runner))
            print(f"[round {r + 1}/{args.rounds}] " + "  ".join(f"{n} {samples[n][-1]:,.0f}" for n in samples),
                  file=sys.stderr, flush=True)
        for algo, _, _ in algos.values():
            algo.stop()
    finally:
        ray.shutdown()
    print(f"{args.game}: {args.runners} env runners x {args.worlds} worlds, {args.steps} steps per world "
          f"x {args.rounds} rounds, interleaved")
    print(f"{'contender':<12}{'median agent-steps/s':>22}{'min':>11}{'max':>11}")
    medians = {}
    for name, values in samples.items():
        medians[name] = statistics.median(values)
        print(f"{name:<12}{medians[name]:>22,.0f}{min(values):>11,.0f}{max(values):>11,.0f}")
    if "pool" in medians:
        for name in medians:
            if name != "pool":
                print(f"ratio pool / {name} = {medians['pool'] / medians[name]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
