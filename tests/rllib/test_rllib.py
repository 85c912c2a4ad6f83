"""joltgym_marl.rllib: every registered game on RLlib's new API stack.

Oracles: RLlib's own multi-agent env checker, our PettingZoo env stepped
world by world (the batched env and the batched env runner must reproduce it
bit for bit), and RLlib's PPO training on top.
"""

from __future__ import annotations

import numpy as np
import pytest
from ray.rllib.core.columns import Columns
from ray.rllib.utils.pre_checks.env import check_multiagent_environments

import joltgym_marl.rllib as jr
from joltgym_marl.registry import GAMES

GAME_NAMES = [spec.name for spec in GAMES]
SMALL = {"cheetah_race": {"num_agents": 2}, "sumo_humanoid": {"robot": "humanoid"}}
# Every game, and sumo with humanoids (agents named by the instance: humanoid_k).
GAME_CASES = GAME_NAMES + ["sumo_humanoid"] if "sumo" in GAME_NAMES else GAME_NAMES


def small_config(game: str, max_cycles: int = 12) -> dict:
    return {**SMALL.get(game, {}), "max_cycles": max_cycles}


def game_of(case: str) -> str:
    return "sumo" if case == "sumo_humanoid" else case


# -- registration and the one-world env -----------------------------------------------


def test_every_game_is_registered_under_its_name(ray_local):
    assert jr.ENV_NAMES == [f"joltgym_marl/{spec.module_name}" for spec in GAMES]
    from ray.tune.registry import ENV_CREATOR, _global_registry

    for name in jr.ENV_NAMES:
        assert _global_registry.contains(ENV_CREATOR, name)
        env = _global_registry.get(ENV_CREATOR, name)({"max_cycles": 5})
        assert isinstance(env, jr.GameEnv)
        env.close()


@pytest.mark.parametrize("bad, message", [
    ("joltgym_marl/no_such_game_v0", "unknown game 'joltgym_marl/no_such_game_v0'"),
    (3, "game should be a game name"),
])
def test_unknown_games_are_named(bad, message):
    with pytest.raises((ValueError, TypeError), match=message):
        jr.GameEnv(bad)


def test_unknown_env_config_keys_are_named():
    with pytest.raises(ValueError, match="unknown env_config key 'num_cheetahs'.*expected some of"):
        jr.GameEnv("cheetah_race", {"num_cheetahs": 3})
    with pytest.raises(TypeError, match="env_config should be a dict"):
        jr.WorldPoolMultiAgentEnv("cheetah_race", 2, [1, 2])


@pytest.mark.parametrize("game", GAME_CASES)
def test_game_env_passes_rllibs_checker(game):
    env = jr.GameEnv(game_of(game), small_config(game))
    check_multiagent_environments(env)
    obs, infos = env.reset(seed=1)
    assert set(obs) == set(env.possible_agents) == set(infos)
    for _ in range(12):
        obs, rewards, terminated, truncated, infos = env.step(
            {a: env.action_spaces[a].sample() for a in env.agents})
        assert "__all__" in terminated and "__all__" in truncated
        if terminated["__all__"] or truncated["__all__"]:
            break
    assert truncated["__all__"] or terminated["__all__"]
    env.close()


# -- the batched env against the one-world env ----------------------------------------


def _replay_worlds(game: str, seed: int, actions: list[np.ndarray], num_worlds: int, max_cycles: int):
    """Observations and rewards of each world stepped alone through GameEnv,
    RLlib's "next_step" auto-reset applied by hand."""
    out = []
    for w in range(num_worlds):
        env = jr.GameEnv(game_of(game), small_config(game, max_cycles))
        obs, _ = env.reset(seed=seed + w)
        agents = env.possible_agents
        trace = [np.stack([obs[a] for a in agents])]
        rewards = []
        done = False
        for step in actions:
            if done:
                obs, _ = env.reset()
                rew = {a: 0.0 for a in agents}
                done = False
            else:
                obs, rew, term, trunc, _ = env.step({a: step[w, k] for k, a in enumerate(agents)})
                done = term["__all__"] or trunc["__all__"]
            trace.append(np.stack([obs[a] for a in agents]))
            rewards.append([rew[a] for a in agents])
        out.append((np.stack(trace), np.asarray(rewards, dtype=np.float32)))
        env.close()
    return out


@pytest.mark.parametrize("game", GAME_CASES)
@pytest.mark.parametrize("threads", [1, 2])
def test_pool_env_equals_worlds_stepped_alone(game, threads):
    num_worlds, max_cycles, seed = 3, 7, 40
    env = jr.WorldPoolMultiAgentEnv(game_of(game), num_worlds, small_config(game, max_cycles), num_threads=threads)
    agents = env.possible_agents
    assert agents == jr.GameEnv(game_of(game), small_config(game)).possible_agents
    rng = np.random.default_rng(0)
    obs, infos = env.reset(seed=seed)
    trace = [[np.stack([o[a] for a in agents])] for o in obs]
    rewards = [[] for _ in range(num_worlds)]
    space = env.single_action_spaces[agents[0]]
    actions = []
    for _ in range(20):
        step = rng.uniform(space.low, space.high, size=(num_worlds, len(agents), space.shape[0])).astype(np.float32)
        actions.append(step)
        obs, rew, term, trunc, infos = env.step([{a: step[w, k] for k, a in enumerate(agents)}
                                                 for w in range(num_worlds)])
        assert len(obs) == num_worlds and all("__all__" in t for t in term)
        for w in range(num_worlds):
            trace[w].append(np.stack([obs[w][a] for a in agents]))
            rewards[w].append([rew[w][a] for a in agents])
    env.close()
    for w, (alone_obs, alone_rewards) in enumerate(_replay_worlds(game, seed, actions, num_worlds, max_cycles)):
        np.testing.assert_array_equal(np.stack(trace[w]), alone_obs)
        np.testing.assert_array_equal(np.asarray(rewards[w], dtype=np.float32), alone_rewards)


def test_pool_env_rejects_a_wrong_number_of_worlds():
    env = jr.WorldPoolMultiAgentEnv("cheetah_race", 2, small_config("cheetah_race"))
    env.reset(seed=0)
    with pytest.raises(ValueError, match="list of 2 per-world dicts, got 3"):
        env.step([{}, {}, {}])
    env.close()


# -- the batched env runner ------------------------------------------------------------


def _config(runner_cls, worlds: int, max_cycles: int, fragment: int, **env_runners):
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig

    return (
        PPOConfig()
        .environment("joltgym_marl/cheetah_race_v0", env_config=small_config("cheetah_race", max_cycles))
        .env_runners(num_env_runners=0, num_envs_per_env_runner=worlds, rollout_fragment_length=fragment,
                     **({"env_runner_cls": runner_cls} if runner_cls else {}), **env_runners)
        .multi_agent(policies={"shared"}, policy_mapping_fn=lambda aid, ep, **kw: "shared")
        .rl_module(model_config=DefaultModelConfig(fcnet_hiddens=[16]))
        .training(train_batch_size_per_learner=worlds * fragment, minibatch_size=worlds * fragment,
                  num_epochs=1)
        .debugging(seed=3)
    )


def test_batched_runner_records_exactly_what_the_worlds_do(ray_local):
    """One world through WorldPoolEnvRunner's batched path; every recorded
    episode is replayed on GameEnv from the same seed with the actions the
    env received (the policy's, unsquashed to the bounds): same observations,
    rewards and flags, bit for bit."""
    from ray.rllib.utils.spaces.space_utils import unsquash_action

    algo = _config(jr.WorldPoolEnvRunner, worlds=1, max_cycles=9, fragment=25).build_algo()
    runner = algo.env_runner
    assert isinstance(runner.env, jr.WorldPoolMultiAgentEnv)
    episodes = runner.sample(num_timesteps=25, explore=True)
    episodes += runner.sample(num_timesteps=25, explore=True)
    algo.stop()
    env = jr.GameEnv("cheetah_race", small_config("cheetah_race", 9))
    space = env.action_spaces["cheetah_0"]
    seed = runner._seed if runner._seed is not None else None
    obs, _ = env.reset(seed=seed)
    steps = 0
    for episode in episodes:
        for agent, sa in episode.agent_episodes.items():
            assert len(sa) > 0
        agents = env.possible_agents
        first = {a: episode.agent_episodes[a].get_observations(0) for a in agents}
        for a in agents:
            np.testing.assert_array_equal(first[a], obs[a])
        length = len(episode.agent_episodes[agents[0]])
        for t in range(length):
            actions = {a: np.asarray(unsquash_action(episode.agent_episodes[a].get_actions(t), space),
                                     dtype=np.float32) for a in agents}
            obs, rewards, term, trunc, _ = env.step(actions)
            steps += 1
            for a in agents:
                sa = episode.agent_episodes[a]
                np.testing.assert_array_equal(sa.get_observations(t + 1), obs[a])
                assert np.float32(sa.get_rewards(t)) == np.float32(rewards[a])
                assert Columns.ACTION_LOGP in sa.extra_model_outputs
        if episode.is_done:
            assert trunc["__all__"] or term["__all__"]
            obs, _ = env.reset()
    assert steps == 50
    env.close()


def test_batched_runner_counts_and_metrics(ray_local):
    algo = _config(jr.WorldPoolEnvRunner, worlds=4, max_cycles=10, fragment=16).build_algo()
    runner = algo.env_runner
    episodes = runner.sample(num_timesteps=64, explore=True)
    assert sum(e.env_steps() for e in episodes) == 64
    metrics = runner.get_metrics()
    assert metrics["num_env_steps_sampled"] == 64
    assert metrics["num_module_steps_sampled"]["shared"] == 128
    assert metrics["num_episodes"] == 4  # 16 steps per world of 10-step episodes: one ended in each
    algo.stop()


def test_batched_path_steps_as_fast_path_off(ray_local):
    """With a custom connector the runner falls back to RLlib's own sampling
    loop (on the pool env, next-step auto-reset) and still trains."""
    from ray.rllib.connectors.env_to_module import FlattenObservations

    config = _config(jr.WorldPoolEnvRunner, worlds=2, max_cycles=10, fragment=16,
                     env_to_module_connector=lambda env, spaces=None, device=None: FlattenObservations(
                         multi_agent=True))
    algo = config.build_algo()
    assert algo.env_runner._fast is False
    assert algo.env_runner.env.pool.autoreset_mode == "next_step"
    result = algo.train()
    assert result["env_runners"]["num_env_steps_sampled"] == 32
    algo.stop()


@pytest.mark.parametrize("runner_cls", [jr.WorldPoolEnvRunner, None], ids=["pool", "per-world"])
def test_ppo_trains_with_remote_env_runners(ray_local, runner_cls):
    config = _config(runner_cls, worlds=4, max_cycles=20, fragment=16)
    config.env_runners(num_env_runners=1)
    algo = config.build_algo()
    for _ in range(2):
        result = algo.train()
    runners = result["env_runners"]
    assert runners["num_env_steps_sampled_lifetime"] >= 128
    learner = result["learners"]["shared"]
    assert np.isfinite(learner["total_loss"])
    algo.stop()

