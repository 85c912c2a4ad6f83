"""Self-play on Ant sumo with Ray RLlib: a learner against frozen snapshots of itself.

    .venv-rllib/bin/python examples/rllib_selfplay_sumo.py              # local Ray, 2 env runners
    .venv-rllib/bin/python examples/rllib_selfplay_sumo.py --address auto
    .venv-rllib/bin/python examples/rllib_selfplay_sumo.py --quick      # a short run (for the tests)

RLlib's multi-agent API does the league: the module ``main`` learns
(``policies_to_train=["main"]``); every ``--snapshot-every`` iterations a
frozen copy ``main_v<k>`` joins (``Algorithm.add_module`` with the learner's
weights), and each new bout seats ``main`` on a random side against a
snapshot drawn uniformly from the most recent fraction ``--delta`` of them
(as in Bansal et al. 2018). The batched env runner
(``joltgym_marl.rllib.WorldPoolEnvRunner``) maps each world's agents to their
modules when the bout starts and runs one forward pass per module over all
the worlds' rows. Sumo's shaping (``shaping_weight``) is annealed to zero
over the first half of training through the env runners' episode options.
Each iteration prints ``main``'s results in its finished bouts (win / draw /
loss against the snapshots) and the league size.
"""

from __future__ import annotations

import argparse
import os
import random
import time


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--address", default=None, help="Ray cluster to join ('auto' or host:port)")
    parser.add_argument("--env-runners", type=int, default=2)
    parser.add_argument("--worlds", type=int, default=32, help="bouts per env runner (default 32)")
    parser.add_argument("--iterations", type=int, default=60)
    parser.add_argument("--batch", type=int, default=8192, help="train batch in env steps (default 8192)")
    parser.add_argument("--snapshot-every", type=int, default=5, help="iterations between snapshots")
    parser.add_argument("--delta", type=float, default=0.5, help="opponents come from the newest fraction delta")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="a short run: 3 small iterations")
    args = parser.parse_args(argv)
    if args.quick:
        args.iterations, args.worlds, args.batch, args.snapshot_every = 3, 4, 512, 1
    if not 0.0 < args.delta <= 1.0:
        parser.error(f"--delta should be in (0, 1], got {args.delta}")
    return args


class League:
    """The snapshots and the seat/opponent draw for each new bout."""

    def __init__(self, delta: float, seed: int):
        self.snapshots = ["main_v0"]
        self.delta = delta
        self.rng = random.Random(seed)

    def mapping_fn(self):
        recent = self.snapshots[-max(1, int(round(self.delta * len(self.snapshots)))):]
        rng = self.rng

        def agent_to_module(agent_id, episode, **kwargs):
            # Seat of "main" and the opponent are fixed per bout (episode id).
            draw = random.Random(hash(episode.id_))
            main_seat = draw.randrange(2)
            opponent = recent[draw.randrange(len(recent))]
            return "main" if agent_id.endswith(f"_{main_seat}") else opponent

        del rng
        return agent_to_module


def build(args, league: League):
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.callbacks.callbacks import RLlibCallback
    from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig

    import joltgym_marl.rllib as jr
    from joltgym_marl import Outcome

    class Outcomes(RLlibCallback):
        def on_episode_end(self, *, episode, metrics_logger, **kwargs):
            for agent in ("ant_0", "ant_1"):
                if episode.module_for(agent) == "main":
                    outcome = episode.get_infos(-1)[agent].get("outcome", Outcome.DRAW)
                    for result in (Outcome.WIN, Outcome.DRAW, Outcome.LOSS):
                        metrics_logger.log_value(f"main_{result.label}", float(outcome == result),
                                                 reduce="mean", window=200)

    fragment = max(1, args.batch // max(1, args.env_runners * args.worlds))
    return (
        PPOConfig()
        .environment("joltgym_marl/sumo_v0", env_config={"max_cycles": 500})
        .env_runners(env_runner_cls=jr.WorldPoolEnvRunner, num_env_runners=args.env_runners,
                     num_envs_per_env_runner=args.worlds, rollout_fragment_length=fragment,
                     num_cpus_per_env_runner=1)
        .multi_agent(policies={"main", "main_v0"}, policy_mapping_fn=league.mapping_fn(),
                     policies_to_train=["main"])
        .rl_module(model_config=DefaultModelConfig(fcnet_hiddens=[64, 64], fcnet_activation="tanh"))
        .training(train_batch_size_per_learner=fragment * max(1, args.env_runners) * args.worlds,
                  minibatch_size=min(512, fragment * max(1, args.env_runners) * args.worlds), num_epochs=6,
                  lr=3e-4, gamma=0.995, lambda_=0.95)
        .callbacks(Outcomes)
        .debugging(seed=args.seed)
    )


def set_shaping(algo, weight: float) -> None:
    def apply(runner):
        pool = getattr(runner.env, "pool", None)
        if pool is not None:
            pool.set_option("shaping_weight", weight)

    algo.env_runner_group.foreach_env_runner(apply, local_env_runner=True)


def main(argv=None) -> int:
    args = parse_args(argv)
    os.environ.setdefault("RAY_DEDUP_LOGS", "0")
    import ray
    import torch
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    torch.set_num_threads(1)
    if args.address:
        ray.init(address=args.address, log_to_driver=False)
    else:
        ray.init(address="local", num_cpus=max(2, args.env_runners + 1), include_dashboard=False, log_to_driver=False)
    league = League(args.delta, args.seed)
    try:
        algo = build(args, league).build_algo()
        main_module = algo.get_module("main")
        algo.set_state({"learner_group": {"learner": {"rl_module": {"main_v0": main_module.get_state()}}}})
        start = time.perf_counter()
        for iteration in range(1, args.iterations + 1):
            set_shaping(algo, max(0.0, 1.0 - iteration / (0.5 * args.iterations)))
            result = algo.train()
            runners = result["env_runners"]
            rates = [runners.get(f"main_{k}", float("nan")) for k in ("win", "draw", "loss")]
            print(f"iter {iteration:3d}  env steps {int(runners.get('num_env_steps_sampled_lifetime', 0)):>8}"
                  f"  main W/D/L {rates[0]:.2f}/{rates[1]:.2f}/{rates[2]:.2f}"
                  f"  league {len(league.snapshots) + 1}  {time.perf_counter() - start:6.1f} s", flush=True)
            if iteration % args.snapshot_every == 0:
                name = f"main_v{len(league.snapshots)}"
                league.snapshots.append(name)
                main_module = algo.get_module("main")
                algo.add_module(module_id=name, module_spec=RLModuleSpec.from_module(main_module),
                                new_agent_to_module_mapping_fn=league.mapping_fn())
                algo.set_state({"learner_group": {"learner": {"rl_module": {name: main_module.get_state()}}}})
        algo.stop()
    finally:
        ray.shutdown()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
