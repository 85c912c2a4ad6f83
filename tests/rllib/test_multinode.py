"""Two Ray nodes on this machine (ray.cluster_utils.Cluster): PPO with one
batched env runner on each node; both nodes' samples reach the driver and
training steps."""

from __future__ import annotations

import numpy as np


def test_env_runners_on_two_nodes_sample_and_train():
    import ray
    import torch
    from ray.cluster_utils import Cluster
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig

    import joltgym_marl.rllib as jr

    torch.set_num_threads(1)
    # One CPU per node and one per env runner: the scheduler must put one
    # runner on each node.
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False})
    cluster.add_node(num_cpus=1)
    cluster.wait_for_nodes()
    ray.init(address=cluster.address, log_to_driver=False)
    try:
        assert len([n for n in ray.nodes() if n["Alive"]]) == 2
        config = (
            PPOConfig()
            .environment("joltgym_marl/cheetah_race_v0", env_config={"num_agents": 2, "max_cycles": 20})
            .env_runners(env_runner_cls=jr.WorldPoolEnvRunner, num_env_runners=2, num_envs_per_env_runner=4,
                         num_cpus_per_env_runner=1, rollout_fragment_length=16)
            .multi_agent(policies={"shared"}, policy_mapping_fn=lambda aid, ep, **kw: "shared")
            .rl_module(model_config=DefaultModelConfig(fcnet_hiddens=[16]))
            .training(train_batch_size_per_learner=128, minibatch_size=128, num_epochs=1)
        )
        algo = config.build_algo()
        nodes = algo.env_runner_group.foreach_env_runner(
            lambda runner: ray.get_runtime_context().get_node_id(), local_env_runner=False)
        assert len(nodes) == 2 and len(set(nodes)) == 2, nodes
        result = algo.train()
        assert result["env_runners"]["num_env_steps_sampled"] >= 128
        assert np.isfinite(result["learners"]["shared"]["total_loss"])
        # Each node's runner samples from its own native pool; the episodes
        # arrive at the driver.
        samples = algo.env_runner_group.foreach_env_runner(
            lambda runner: (ray.get_runtime_context().get_node_id(),
                            sum(e.env_steps() for e in runner.sample(num_timesteps=32))),
            local_env_runner=False)
        assert {node for node, _ in samples} == set(nodes)
        assert all(steps == 32 for _, steps in samples)
        algo.stop()
    finally:
        ray.shutdown()
        cluster.shutdown()
