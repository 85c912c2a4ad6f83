"""Every PettingZoo conversion and SuperSuit wrapper across episode ends, on
every game configuration (tests/game_variants.py, Jolt included) and on
MaMuJoCo: after an episode ends, ``step({})`` answers with empty dicts, as
PettingZoo's own envs do; SuperSuit's ``black_death_v3`` steps so at every
episode end, alone and inside ``pettingzoo_env_to_vec_env_v1`` +
``concat_vec_envs_v1``. Episodes are a few steps long (``max_cycles``) so that
each test crosses several ends in well under a second.

PettingZoo's test functions themselves run over the same configurations in
tests/test_pettingzoo.py.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
import supersuit as ss
from pettingzoo.test import api_test, parallel_api_test
from pettingzoo.utils.conversions import aec_to_parallel, parallel_to_aec

from joltgym_marl import mamujoco_v1

from game_variants import VARIANTS

CYCLES = 3  # steps per episode
EPISODES = 3
EMPTY = ({}, {}, {}, {}, {})

MAMUJOCO = [pytest.param(("HalfCheetah", "2x3"), id="mamujoco-HalfCheetah-2x3"),
            pytest.param(("Ant", "4x2"), id="mamujoco-Ant-4x2"),
            pytest.param(("Walker2d", "2x3"), id="mamujoco-Walker2d-2x3")]


class Factory:
    """The constructors of one configuration, its episodes ``CYCLES`` steps long."""

    def __init__(self, module=None, kw=None, mamujoco=None):
        self.module, self.kw, self.mamujoco = module, dict(kw or {}), mamujoco
        if module is not None:
            self.kw["max_cycles"] = CYCLES

    def parallel(self):
        if self.mamujoco is not None:
            return mamujoco_v1.parallel_env(*self.mamujoco, max_episode_steps=CYCLES)
        return self.module.parallel_env(**self.kw)

    def aec(self):
        if self.mamujoco is not None:
            return mamujoco_v1.env(*self.mamujoco, max_episode_steps=CYCLES)
        return self.module.env(**self.kw)


CONFIGS = ([pytest.param(Factory(*p.values), id=p.id) for p in VARIANTS]
           + [pytest.param(Factory(mamujoco=p.values[0]), id=p.id) for p in MAMUJOCO])


def sample(env, rng):
    return {a: rng.uniform(-1, 1, env.action_space(a).shape).astype(env.action_space(a).dtype)
            for a in env.agents}


def play_episodes(env, episodes=EPISODES, seed=0):
    """Plays ``episodes`` episodes of a parallel env (wrapped or not); after
    each, the empty step answers with empty dicts. Returns the steps played."""
    rng = np.random.default_rng(seed)
    steps = 0
    for episode in range(episodes):
        obs, infos = env.reset(seed=seed + episode)
        assert set(obs) == set(env.agents) == set(env.possible_agents)
        while env.agents:
            obs, rewards, terms, truncs, infos = env.step(sample(env, rng))
            steps += 1
            assert set(rewards) == set(terms) == set(truncs)
            assert steps <= (episode + 1) * CYCLES * 4, "the episode does not end"
        assert env.step({}) == EMPTY
        assert env.step({}) == EMPTY
    return steps


@pytest.mark.parametrize("factory", CONFIGS)
def test_empty_step_after_the_episode_ended_returns_empty_dicts(factory):
    env = factory.parallel()
    assert play_episodes(env) == EPISODES * CYCLES


@pytest.mark.parametrize("factory", CONFIGS)
def test_aec_and_parallel_conversions_across_episode_ends(factory):
    # parallel -> AEC -> parallel, and the AEC env -> parallel: each through its episodes
    play_episodes(aec_to_parallel(parallel_to_aec(factory.parallel())))
    play_episodes(aec_to_parallel(factory.aec()))
    parallel_api_test(aec_to_parallel(factory.aec()), num_cycles=4 * CYCLES)


@pytest.mark.parametrize("factory", CONFIGS)
@pytest.mark.filterwarnings("ignore:Agent's m.* observation space value is -?infinity:UserWarning")
def test_parallel_to_aec_passes_pettingzoo_api_test(factory):
    api_test(parallel_to_aec(factory.parallel()), num_cycles=4 * CYCLES)


@pytest.mark.parametrize("factory", CONFIGS)
def test_black_death_across_episode_ends(factory):
    # black_death_v3 steps the env with no actions once its agents are done
    # (its own end test needs terminated *and* truncated): the empty step.
    env = ss.black_death_v3(factory.parallel())
    assert play_episodes(env) == EPISODES * (CYCLES + 1)


@pytest.mark.parametrize("factory", CONFIGS)
def test_black_death_in_supersuit_vector_envs_across_episode_ends(factory):
    base = factory.parallel()
    n_agents = len(base.possible_agents)
    vec = ss.pettingzoo_env_to_vec_env_v1(ss.black_death_v3(base))
    venv = ss.concat_vec_envs_v1(vec, 2, num_cpus=0, base_class="gymnasium")
    obs, _ = venv.reset(seed=0)
    assert obs.shape[0] == 2 * n_agents
    rng = np.random.default_rng(0)
    ends = 0
    for _ in range(EPISODES * (CYCLES + 1)):
        actions = rng.uniform(-1, 1, (2 * n_agents, *base.action_space(base.possible_agents[0]).shape)).astype(np.float32)
        obs, rewards, terms, truncs, infos = venv.step(actions)
        assert obs.shape[0] == rewards.shape[0] == 2 * n_agents
        ends += int(np.sum(terms | truncs))
    assert ends >= 2 * n_agents * (EPISODES - 1)
    venv.close()


def _box_wrappers(env):
    """SuperSuit's wrappers that apply to a Box observation and action space
    of unbounded observations (normalize_obs_v0 needs finite bounds; the image
    wrappers need images)."""
    agent = env.possible_agents[0]
    obs_shape = env.observation_space(agent).shape
    act_dim = env.action_space(agent).shape[0]
    return {
        "black_death_v3": ss.black_death_v3,
        "clip_actions_v0": ss.clip_actions_v0,
        "clip_reward_v0": lambda e: ss.clip_reward_v0(e, -1, 1),
        "delay_observations_v0": lambda e: ss.delay_observations_v0(e, 2),
        "dtype_v0": lambda e: ss.dtype_v0(e, np.float64),
        "flatten_v0": ss.flatten_v0,
        "frame_skip_v0": lambda e: ss.frame_skip_v0(e, (1, 2)),
        "frame_stack_v1": lambda e: ss.frame_stack_v1(e, 3),
        "frame_stack_v2": lambda e: ss.frame_stack_v2(e, 3),
        "max_observation_v0": lambda e: ss.max_observation_v0(e, 2),
        "nan_noop_v0": lambda e: ss.nan_noop_v0(e, np.zeros(act_dim, np.float32)),
        "nan_random_v0": ss.nan_random_v0,
        "nan_zeros_v0": ss.nan_zeros_v0,
        "observation_lambda_v0": lambda e: ss.observation_lambda_v0(e, lambda o, _: o * 2),
        "action_lambda_v1": lambda e: ss.action_lambda_v1(e, lambda a, _: np.clip(a, -1, 1), lambda s: s),
        "reward_lambda_v0": lambda e: ss.reward_lambda_v0(e, lambda r: r * 0.5),
        "reshape_v0": lambda e: ss.reshape_v0(e, (*obs_shape, 1)),
        "scale_actions_v0": lambda e: ss.scale_actions_v0(e, 0.5),
        "sticky_actions_v0": lambda e: ss.sticky_actions_v0(e, 0.25),
        "agent_indicator_v0": ss.agent_indicator_v0,
        "pad_observations_v0": ss.pad_observations_v0,
        "pad_action_space_v0": ss.pad_action_space_v0,
    }


WRAPPERS = sorted(_box_wrappers(mamujoco_v1.parallel_env("HalfCheetah", "2x3")))


@pytest.mark.parametrize("factory", CONFIGS)
# (frame_skip_v0 warns so on the empty step, whatever the env)
@pytest.mark.filterwarnings("ignore:No agents left in the environment!:UserWarning")
def test_supersuit_box_wrappers_across_episode_ends(factory):
    failures = []
    for name in WRAPPERS:
        base = factory.parallel()
        env = _box_wrappers(base)[name](base)
        try:
            played = play_episodes(env)
        except Exception as error:  # noqa: BLE001  (every wrapper is tried; all failures reported)
            failures.append(f"{name}: {type(error).__name__}: {error}")
            continue
        assert played >= EPISODES, name
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("factory", CONFIGS)
def test_frame_skip_draws_from_the_seeded_np_random(factory):
    """frame_skip_v0 draws its skips from ``env.unwrapped.np_random``, which
    reset(seed) seeds: two runs from one seed play the same episodes."""
    runs = []
    for _ in range(2):
        env = ss.frame_skip_v0(factory.parallel(), (1, 3))
        rng = np.random.default_rng(5)
        obs, _ = env.reset(seed=7)
        trace = [functools.reduce(lambda x, y: x + float(np.sum(y)), obs.values(), 0.0)]
        while env.agents:
            obs, *_ = env.step(sample(env, rng))
            trace.append(sum(float(np.sum(o)) for o in obs.values()))
        runs.append(trace)
    assert runs[0] == runs[1]
