"""MaMuJoCo's state <-> local observation mappings, pinned over whole
episodes against the observations actually returned, for every scenario and
conf; and the rest of Farama's public surface that clients read
(``single_agent_env``, ``k_dicts``, ``_get_obs``)."""

from __future__ import annotations

import re

import gymnasium
import numpy as np
import pytest

import joltgym_marl
from joltgym_marl import mamujoco_v1

from mamujoco_oracle import make_oracle

STEPS = 100
LEAVES_OUT = ("ManySegmentAnt", "Reacher")  # scenarios whose agents observe values state() leaves out
PARTIAL = ("ManySegmentAnt", "ManySegmentSwimmer", "CoupledHalfCheetah")  # no agent observes some state value
CLIPS_VELOCITIES = ("Walker2d", "Hopper", "InvertedDoublePendulum")  # state() clips them to +-10
CONFS = [(r.scenario, c.agent_conf) for r in joltgym_marl.tasks("mamujoco") for c in r.confs]
CONFS += [("ManySegmentAnt", "3x1"), ("ManySegmentSwimmer", "5x4"), ("ManySegmentSwimmer", "6x1")]
CASES = [pytest.param(s, c, 1, id=f"{s}-{c}") for s, c in CONFS]
CASES += [pytest.param(s, c, k, id=f"{s}-{c}-k{k}") for s, c in
          [("Walker2d", "2x3"), ("ManySegmentAnt", "2x3"), ("ManySegmentAnt", "3x1")]
          for k in (0, 2)]


def episodes(env, steps=STEPS, seed=0):
    """(obs, state) after the reset and every step of ``steps`` steps of random
    actions, reset at each episode end."""
    rng = np.random.default_rng(seed)
    obs, _ = env.reset(seed=seed)
    yield obs, env.state()
    for _ in range(steps):
        if not env.agents:
            obs, _ = env.reset()
        else:
            obs, *_ = env.step({a: rng.uniform(-1, 1, env.action_space(a).shape).astype(np.float32)
                                for a in env.agents})
        yield obs, env.state()


@pytest.mark.parametrize("scenario, conf, k", CASES)
def test_mappings_are_right_in_every_state_of_whole_episodes(scenario, conf, k):
    env = mamujoco_v1.parallel_env(scenario, conf, agent_obsk=k)
    covered = True
    always_unknown = None
    unknown_seen = 0
    for obs, state in episodes(env):
        mapped = env.map_global_state_to_local_observations(state)
        assert set(mapped) == set(obs)
        unknown = {}
        for agent, o in obs.items():
            m = mapped[agent]
            assert m.shape == o.shape and m.dtype == np.float64
            known = ~np.isnan(m)
            np.testing.assert_array_equal(m[known], o[known], err_msg=f"{agent}")
            unknown[agent] = ~known
            unknown_seen += int((~known).sum())
        if always_unknown is None:
            always_unknown = unknown
        always_unknown = {a: always_unknown[a] & unknown[a] for a in obs}
        # Beyond the values the state leaves out, a value is unknown only where
        # the state holds it clipped at a bound (the joint velocities, at +-10).
        for agent, o in obs.items():
            clipped = unknown[agent] & ~always_unknown[agent]
            assert (np.abs(o[clipped]) >= 10).all(), agent
        if covered:
            try:
                back = env.map_local_observations_to_global_state(obs)
            except ValueError as error:
                assert scenario in PARTIAL and conf is not None and "do not cover state()" in str(error)
                covered = False
            else:
                np.testing.assert_array_equal(back, state)  # every value, every state
    structural = sum(int(u.sum()) for u in always_unknown.values())
    # Values state() leaves out: the ManySegmentAnt segments reading the free
    # joint's x and y (Farama's indices), Reacher's fingertip-target z distance.
    assert (structural > 0) == (scenario in LEAVES_OUT and conf is not None), structural
    if scenario not in CLIPS_VELOCITIES:
        assert unknown_seen == structural * (STEPS + 1)  # nothing else unknown: all exact


def test_walker2d_velocities_beyond_the_clip_are_unknown_not_wrong():
    """Walker2d's joint velocities pass +-10 within a few steps: Farama's
    mapping gives the clipped state value as the observation (wrong by up to
    ~20); ours gives NaN there and the exact value everywhere else."""
    ours = mamujoco_v1.parallel_env("Walker2d", "2x3")
    theirs = make_oracle("Walker2d", "2x3", 1)
    rng = np.random.default_rng(3)
    ours.reset(seed=3)
    theirs.reset(seed=3)
    farama_wrong = nan_seen = 0
    for _ in range(200):
        if not ours.agents:
            break
        actions = {a: rng.uniform(-1, 1, 3).astype(np.float32) for a in ours.agents}
        obs, *_ = ours.step(actions)
        theirs_obs, *_ = theirs.step(actions)
        farama = theirs.map_global_state_to_local_observations(theirs.state())
        mapped = ours.map_global_state_to_local_observations(ours.state())
        for agent in obs:
            np.testing.assert_array_equal(obs[agent], theirs_obs[agent])
            farama_wrong += int(np.sum(farama[agent] != theirs_obs[agent]))
            nan = np.isnan(mapped[agent])
            nan_seen += int(nan.sum())
            np.testing.assert_array_equal(np.isnan(mapped[agent]), farama[agent] != obs[agent])
    assert farama_wrong > 0 and nan_seen == farama_wrong


def test_mappings_check_their_input():
    env = mamujoco_v1.parallel_env("Walker2d", "2x3")
    env.reset(seed=0)
    with pytest.raises(ValueError, match=re.escape("global_state should have shape (17,), got (3,)")):
        env.map_global_state_to_local_observations(np.zeros(3))
    with pytest.raises(KeyError, match=re.escape("missing ['agent_1'], unknown []")):
        env.map_local_observations_to_global_state({"agent_0": np.zeros(12)})
    with pytest.raises(ValueError, match=re.escape("observation of agent_0 should have shape (12,), got (3,)")):
        env.map_local_observations_to_global_state({"agent_0": np.zeros(3), "agent_1": np.zeros(12)})
    msa = mamujoco_v1.parallel_env("ManySegmentAnt", "2x3")
    obs, _ = msa.reset(seed=0)
    with pytest.raises(ValueError, match=re.escape("the agents' observations do not cover state()")):
        msa.map_local_observations_to_global_state(obs)


@pytest.mark.parametrize("scenario, conf", [("Walker2d", "2x3"), ("Ant", "4x2"), ("HalfCheetah", "6x1")])
def test_observation_factorization_reads_the_state_value_of_each_observed_value(scenario, conf):
    env = mamujoco_v1.parallel_env(scenario, conf)
    theirs = make_oracle(scenario, conf, 1)
    for agent in env.possible_agents:
        np.testing.assert_array_equal(env.observation_factorization[agent], theirs.observation_factorization[agent])
    assert mamujoco_v1.parallel_env("ManySegmentAnt", "2x3").observation_factorization is None


@pytest.mark.parametrize("scenario, conf", [("Ant", "2x4"), ("HalfCheetah", "6x1"), ("Hopper", "3x1"),
                                            ("Walker2d", "2x3"), ("ManySegmentAnt", "3x1"),
                                            ("ManySegmentSwimmer", "10x2"), ("Humanoid", "9|8"),
                                            ("Pusher", "3p")])  # (Farama's CoupledHalfCheetah raises)
def test_k_dicts_read_as_faramas(scenario, conf):
    for k in range(4):
        ours = mamujoco_v1.parallel_env(scenario, conf, agent_obsk=k)
        theirs = make_oracle(scenario, conf, k)
        assert str(ours.k_dicts) == str(theirs.k_dicts)
    assert mamujoco_v1.parallel_env("Ant", None).k_dicts is None


def test_get_obs_is_the_current_observation():
    env = mamujoco_v1.parallel_env("Ant", "2x4")
    for obs, _ in episodes(env, steps=5):
        current = env._get_obs()
        assert current.keys() == obs.keys()
        for agent in obs:
            np.testing.assert_array_equal(current[agent], obs[agent])


@pytest.mark.parametrize("scenario, conf", [("HalfCheetah", "2x3"), ("ManySegmentAnt", "2x3"),
                                            ("Walker2d", None), ("CoupledHalfCheetah", "1p1")])
def test_single_agent_env_holds_the_current_state(scenario, conf):
    env = mamujoco_v1.parallel_env(scenario, conf, max_episode_steps=20)
    single = None
    for obs, state in episodes(env, steps=30):
        if single is None:
            single = env.single_agent_env  # taken once, read after every later step
            assert env.single_agent_env is single
        unwrapped = single.unwrapped
        np.testing.assert_array_equal(unwrapped._get_obs(), state)
        assert single.action_space.shape == (sum(env.action_space(a).shape[0] for a in env.possible_agents),)
        assert single.observation_space.shape == state.shape
        # the data is MuJoCo's own, derived fields included
        assert unwrapped.data.xpos.shape == (unwrapped.model.nbody, 3)
        assert unwrapped.dt == env.dt
    if scenario != "CoupledHalfCheetah":
        assert single.spec.id == joltgym_marl.task(env._core.f.robot).gymnasium_id
        assert isinstance(single.unwrapped, gymnasium.envs.mujoco.MujocoEnv)
    env.close()


def test_vec_env_single_agent_env_is_world_0():
    env = mamujoco_v1.vec_env("Ant", "2x4", 3)
    env.reset(seed=4)
    single = env.single_agent_env
    rng = np.random.default_rng(0)
    for _ in range(5):
        env.step({a: rng.uniform(-1, 1, (3, 4)).astype(np.float32) for a in env.possible_agents})
        np.testing.assert_array_equal(single.unwrapped._get_obs(), env.state()[0])
    env.close()


@pytest.mark.parametrize("scenario, conf", [("Ant", "2x4d"), ("Walker2d", "2x3"), ("ManySegmentAnt", "2x3"),
                                            ("HalfCheetah", None)])
def test_partitions_globals_and_get_obs_agent_as_faramas(scenario, conf):
    ours = mamujoco_v1.parallel_env(scenario, conf)
    theirs = make_oracle(scenario, conf, 1)
    if conf is None:
        assert ours.agent_action_partitions is None
    else:
        assert str(ours.agent_action_partitions) == str(theirs.agent_action_partitions)
        assert str(ours.mujoco_globals) == str(theirs.mujoco_globals)
    obs, _ = ours.reset(seed=0)
    for i, agent in enumerate(ours.possible_agents):
        np.testing.assert_array_equal(ours._get_obs_agent(i), obs[agent])
