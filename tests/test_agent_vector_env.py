"""``cheetah_race_v0.vec_env``: the native stand-in for SuperSuit's
``concat_vec_envs_v1(pettingzoo_env_to_vec_env_v1(parallel_env(...)), ...)``.

* Step for step equal to SuperSuit's pipeline over our PettingZoo env (both
  base classes): observations, rewards, episode ends and per-row infos;
* trains with Stable-Baselines3's PPO, as does SuperSuit's multi-process
  pipeline over our (pickled) parallel env; SB3 ``VecEnv`` API sanity;
* zero-copy buffers with ``copy=False``;
* ``AgentInfos`` is a real ``Sequence`` of snapshots.
"""

from __future__ import annotations

import pickle
from collections.abc import Sequence

import cloudpickle
import numpy as np
import pytest
import supersuit
from gymnasium.vector import AutoresetMode, VectorEnv
from numpy.testing import assert_array_equal
from stable_baselines3 import PPO
from stable_baselines3.common import env_checker
from stable_baselines3.common.monitor import Monitor
from stable_baselines3.common.utils import check_for_correct_spaces
from stable_baselines3.common.vec_env import VecCheckNan, VecEnv, VecMonitor

from joltgym_marl import cheetah_race_v0
from joltgym_marl.envs import MULTI_AGENT_ENVS
from joltgym_marl.vector import AgentInfos, AgentVectorEnv

WORLDS, AGENTS, MAX_CYCLES = 3, 4, 7
ROWS = WORLDS * AGENTS
OUR_EXTRA_INFO = "TimeLimit.truncated"
CONFIGS = [
    pytest.param({}, id="lanes"),
    # Terminations at different steps in different worlds, besides the truncations.
    pytest.param(dict(layout="shared_track", finish_line=0.1), id="shared_track-finish_line"),
]


# -- helpers ---------------------------------------------------------------------


def supersuit_env(base_class: str, num_cpus: int = 0, worlds: int = WORLDS, **kw):
    parallel = cheetah_race_v0.parallel_env(num_agents=AGENTS, max_cycles=MAX_CYCLES, **kw)
    return supersuit.concat_vec_envs_v1(supersuit.pettingzoo_env_to_vec_env_v1(parallel), worlds,
                                        num_cpus=num_cpus, base_class=base_class)


def native_env(base_class: str, worlds: int = WORLDS, **kw):
    return cheetah_race_v0.vec_env(worlds, num_agents=AGENTS, max_cycles=MAX_CYCLES, num_threads=2,
                                   base_class=base_class, **kw)


def assert_value_equal(ours, theirs, where: str) -> None:
    if isinstance(theirs, np.ndarray):
        assert isinstance(ours, np.ndarray) and ours.dtype == theirs.dtype, where
        assert_array_equal(ours, theirs, err_msg=where)
    else:
        assert type(ours) is type(theirs), (where, ours, theirs)
        assert ours == theirs, (where, ours, theirs)


def assert_infos_match(ours, theirs, where: str, dones=None, terminations=None, truncations=None) -> None:
    """Per-row infos: SuperSuit's keys and values exactly, plus our TimeLimit.truncated on done rows."""
    assert len(ours) == len(theirs) == ROWS, where
    for row, (mine, ref) in enumerate(zip(ours, theirs)):
        at = f"{where}, row {row}"
        extra = set(mine) - set(ref)
        assert extra <= {OUR_EXTRA_INFO}, (at, extra)
        assert [k for k in mine if k != OUR_EXTRA_INFO] == list(ref), at
        for key, value in ref.items():
            assert_value_equal(mine[key], value, f"{at}[{key!r}]")
        done = dones is not None and bool(dones[row])
        assert ("terminal_observation" in ref) == done, at
        assert (OUR_EXTRA_INFO in mine) == done, at
        if done:
            assert mine[OUR_EXTRA_INFO] is bool(truncations[row] and not terminations[row]), at


def action_stream(steps: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).uniform(-1, 1, size=(steps, ROWS, 6)).astype(np.float32)


# -- SuperSuit equivalence ---------------------------------------------------------------


@pytest.mark.parametrize("kw", CONFIGS)
def test_gymnasium_base_matches_supersuit_step_for_step(kw):
    theirs = supersuit_env("gymnasium", **kw)
    ours = native_env("gymnasium", **kw)
    assert isinstance(ours, VectorEnv) and isinstance(ours, AgentVectorEnv)
    assert ours.num_envs == theirs.num_envs == ROWS
    assert ours.observation_space == theirs.observation_space
    assert ours.action_space == theirs.action_space
    assert ours.single_observation_space == ours.observation_space
    assert ours.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    for seed in [0, 41]:
        obs, infos = ours.reset(seed=seed)
        ref_obs, ref_infos = theirs.reset(seed=seed)
        assert_value_equal(obs, ref_obs, f"reset obs, seed {seed}")
        assert_infos_match(infos, ref_infos, f"reset infos, seed {seed}")
        counts = {"terminated": 0, "truncated": 0}
        for t, actions in enumerate(action_stream(20, seed)):
            obs, rewards, terms, truncs, infos = ours.step(actions)
            ref_obs, ref_rewards, ref_terms, ref_truncs, ref_infos = theirs.step(actions)
            where = f"seed {seed}, step {t}"
            assert_value_equal(obs, ref_obs, f"obs, {where}")
            assert_value_equal(rewards, ref_rewards, f"rewards, {where}")
            # SuperSuit hands out uint8 flags; ours are Gymnasium's bool.
            assert terms.dtype == truncs.dtype == np.bool_
            assert_array_equal(terms, ref_terms.astype(bool), err_msg=f"terminations, {where}")
            assert_array_equal(truncs, ref_truncs.astype(bool), err_msg=f"truncations, {where}")
            assert_infos_match(infos, ref_infos, where, dones=terms | truncs, terminations=terms,
                               truncations=truncs)
            counts["terminated"] += int(terms.any())
            counts["truncated"] += int(truncs.any())
        assert counts["truncated"] > 0
        if kw.get("finish_line"):
            assert counts["terminated"] > 0


@pytest.mark.parametrize("kw", CONFIGS)
def test_sb3_base_matches_supersuit_step_for_step(kw):
    theirs = supersuit_env("stable_baselines3", **kw)
    ours = native_env("stable_baselines3", **kw)
    assert isinstance(ours, VecEnv)
    assert ours.num_envs == theirs.num_envs == ROWS
    assert ours.observation_space == theirs.observation_space
    assert ours.action_space == theirs.action_space
    for seed in [3, 8]:
        # SuperSuit's SB3 wrapper cannot seed (its .seed() calls ConcatVecEnv.seed, which does
        # not exist): seed the ConcatVecEnv underneath directly, the way its reset() would.
        ref_obs, ref_infos = theirs.venv.reset(seed=seed)
        assert ours.seed(seed) == [seed + w for w in range(WORLDS)]
        obs = ours.reset()
        assert_value_equal(obs, ref_obs, f"reset obs, seed {seed}")
        assert_infos_match(ours.reset_infos, ref_infos, f"reset infos, seed {seed}")
        dones_seen = 0
        for t, actions in enumerate(action_stream(20, seed)):
            obs, rewards, dones, infos = ours.step(actions)
            ref_obs, ref_rewards, ref_dones, ref_infos = theirs.step(actions)
            where = f"seed {seed}, step {t}"
            assert_value_equal(obs, ref_obs, f"obs, {where}")
            assert_value_equal(rewards, ref_rewards, f"rewards, {where}")
            assert dones.dtype == np.bool_
            assert_array_equal(dones, ref_dones.astype(bool), err_msg=f"dones, {where}")
            terms = np.array([i.get(OUR_EXTRA_INFO) is False for i in infos])
            truncs = np.array([i.get(OUR_EXTRA_INFO) is True for i in infos])
            assert_infos_match(infos, ref_infos, where, dones=dones, terminations=terms, truncations=truncs)
            dones_seen += int(dones.any())
        assert dones_seen > 0


@pytest.mark.parametrize("base_class", ["gymnasium", "stable_baselines3"])
def test_unseeded_reset_continues_the_seeded_streams_like_supersuit(base_class):
    """After reset(seed=s), reset() continues every world's stream (Gymnasium's and
    SuperSuit's rule): reproducible, and the same as SuperSuit's."""
    theirs = supersuit_env("gymnasium")
    ours = native_env(base_class)
    theirs.reset(seed=12)
    if base_class == "gymnasium":
        ours.reset(seed=12)
        obs, _ = ours.reset()
    else:
        ours.seed(12)
        ours.reset()
        obs = ours.reset()
    assert_value_equal(obs, theirs.reset()[0], "unseeded reset after reset(seed=12)")
    # Auto-resets draw from the same streams: after steps across episode ends, still equal.
    for actions in action_stream(MAX_CYCLES + 3, 12):
        ours.step(actions)
        theirs.step(actions)
    obs = ours.reset()[0] if base_class == "gymnasium" else ours.reset()
    assert_value_equal(obs, theirs.reset()[0], "unseeded reset after auto-resets")


def test_sb3_multiprocess_supersuit_over_our_env_matches_the_native_env():
    """num_cpus=2 pickles our parallel env into worker processes; the result is the same race."""
    theirs = supersuit_env("stable_baselines3", num_cpus=2, worlds=2)
    try:
        ours = native_env("stable_baselines3", worlds=2)
        ref_obs, _ = theirs.venv.reset(seed=17)
        ours.seed(17)
        assert_value_equal(ours.reset(), ref_obs, "reset obs")
        for t, actions in enumerate(action_stream(10, 17)[:, :2 * AGENTS]):
            obs, rewards, dones, _ = ours.step(actions)
            ref_obs, ref_rewards, ref_dones, _ = theirs.step(actions)
            assert_value_equal(obs, ref_obs, f"obs, step {t}")
            assert_value_equal(rewards, ref_rewards, f"rewards, step {t}")
            assert_array_equal(dones, ref_dones.astype(bool))
    finally:
        theirs.close()


# -- Stable-Baselines3 ---------------------------------------------------------------------


def parameters(model) -> list:
    return [p.detach().clone() for p in model.policy.parameters()]


def assert_trained(before: list, model) -> None:
    """PPO collected rollouts from the env and took gradient steps on them: the
    policy's weights moved (they would not if no rollout completed)."""
    after = parameters(model)
    assert model.num_timesteps > 0
    assert any(not (a == b).all() for a, b in zip(before, after)), "PPO did not update the policy"


@pytest.mark.slow
def test_ppo_trains_on_supersuit_multiprocess_over_our_parallel_env():
    theirs = supersuit_env("stable_baselines3", num_cpus=2, worlds=2)
    try:
        model = PPO("MlpPolicy", theirs, n_steps=32, batch_size=64, n_epochs=1, device="cpu")
        before = parameters(model)
        model.learn(1000)
        assert_trained(before, model)
    finally:
        theirs.close()


def test_ppo_trains_on_the_native_env():
    ours = native_env("stable_baselines3")
    model = PPO("MlpPolicy", ours, n_steps=32, batch_size=64, n_epochs=1, device="cpu", seed=0)
    before = parameters(model)
    model.learn(1000)
    assert_trained(before, model)
    actions, _ = model.predict(ours.reset(), deterministic=True)
    assert actions.shape == (ROWS, 6)
    ours.close()


def test_sb3_vec_env_api():
    env = native_env("stable_baselines3")
    assert env.num_envs == ROWS and env.num_worlds == WORLDS and env.num_agents == AGENTS
    obs_space, act_space = env.observation_space, env.action_space
    assert obs_space.shape == (17 + 2 * (AGENTS - 1),) and act_space.shape == (6,)
    check_for_correct_spaces(env, obs_space, act_space)
    assert env_checker._check_unsupported_spaces(env, obs_space, act_space) is False
    env.seed(0)
    obs = env.reset()
    assert obs.shape == (ROWS, *obs_space.shape) and obs.dtype == np.float32
    for row in obs:
        env_checker._check_obs(row, obs_space, "reset")
    assert len(env.reset_infos) == ROWS
    # every key a step gives (the step-only ones 0), as the game's parallel_env
    step_keys = {"x_position", "rank", "x_velocity", "reward_forward", "reward_ctrl", "reward_finish"}
    assert all(set(info) == step_keys for info in env.reset_infos)
    assert all(info["reward_forward"] == 0.0 for info in env.reset_infos)
    env.step_async(np.zeros((ROWS, 6), np.float32))
    obs, rewards, dones, infos = env.step_wait()
    for row in obs:
        env_checker._check_obs(row, obs_space, "step")
    assert rewards.shape == dones.shape == (ROWS,) and rewards.dtype == np.float32
    assert len(infos) == ROWS and isinstance(infos, Sequence)
    # Attribute access, per row.
    assert env.get_attr("render_mode") == [None] * ROWS
    assert env.get_attr("num_worlds", indices=[0, 5]) == [WORLDS, WORLDS]
    assert env.get_attr("num_agents", indices=3) == [AGENTS]
    assert env.has_attr("num_worlds") and not env.has_attr("no_such_attribute")
    env.set_attr("custom_tag", "x")
    assert env.get_attr("custom_tag", indices=range(2)) == ["x", "x"]
    assert env.env_method("seed", 100, indices=[1, 2]) == [[100, 101, 102]] * 2
    assert env.env_is_wrapped(Monitor) == [False] * ROWS
    assert env.env_is_wrapped(Monitor, indices=[0, 4]) == [False, False]
    # SB3's own wrappers run over it.
    checked = VecMonitor(VecCheckNan(env, raise_exception=True))
    checked.seed(1)
    checked.reset()
    episodes = []
    for _ in range(2 * MAX_CYCLES):
        _, _, dones, infos = checked.step(np.full((ROWS, 6), 0.5, np.float32))
        episodes += [info["episode"] for info, done in zip(infos, dones) if done]
    assert len(episodes) == 2 * ROWS
    assert all(ep["l"] == MAX_CYCLES for ep in episodes)
    env.close()


def test_sb3_done_rows_carry_terminal_observation_and_time_limit_flag():
    env = native_env("stable_baselines3")
    env.seed(2)
    env.reset()
    for t in range(MAX_CYCLES):
        obs, _, dones, infos = env.step(np.zeros((ROWS, 6), np.float32))
        assert dones.all() == (t == MAX_CYCLES - 1)
    for row, info in enumerate(infos):
        assert info[OUR_EXTRA_INFO] is True
        terminal = info["terminal_observation"]
        assert terminal.shape == obs[row].shape and terminal.dtype == np.float32
        assert not np.array_equal(terminal, obs[row])  # obs is already the next episode's first


@pytest.mark.parametrize("base_class", ["gymnasium", "stable_baselines3"])
@pytest.mark.parametrize("dumps, loads", [(pickle.dumps, pickle.loads), (cloudpickle.dumps, cloudpickle.loads)],
                         ids=["pickle", "cloudpickle"])
def test_vector_env_pickles_to_the_same_configuration(base_class, dumps, loads):
    env = native_env(base_class, layout="shared_track")
    copy = loads(dumps(env))
    # (The SB3 class is created per instance by a factory: compare names, not identity.)
    assert type(copy).__qualname__ == type(env).__qualname__ and copy.num_envs == env.num_envs
    assert isinstance(copy, VectorEnv if base_class == "gymnasium" else VecEnv)
    assert copy.pool.kwargs == env.pool.kwargs
    if base_class == "gymnasium":
        assert_array_equal(copy.reset(seed=6)[0], env.reset(seed=6)[0])
    else:
        env.seed(6)
        copy.seed(6)
        assert_array_equal(copy.reset(), env.reset())
    actions = action_stream(1, 6)[0]
    assert_array_equal(copy.step(actions)[0], env.step(actions)[0])


# -- zero copy --------------------------------------------------------------------------


@pytest.mark.parametrize("base_class", ["gymnasium", "stable_baselines3"])
def test_copy_false_returns_the_native_buffers(base_class):
    env = native_env(base_class, copy=False)
    pool = env.pool
    if base_class == "gymnasium":
        obs, _ = env.reset(seed=0)
    else:
        obs = env.reset()
    assert np.shares_memory(obs, pool.obs)
    out = env.step(np.zeros((ROWS, 6), np.float32))
    assert np.shares_memory(out[0], pool.obs)
    assert np.shares_memory(out[1], pool.rewards)
    if base_class == "gymnasium":
        assert np.shares_memory(out[2], pool.terminations)
        assert np.shares_memory(out[3], pool.truncations)
    # The returned array is a view that the next step overwrites.
    first = out[0]
    before = first.copy()
    env.step(np.ones((ROWS, 6), np.float32))
    assert not np.array_equal(first, before)
    assert_array_equal(first, pool.obs.reshape(ROWS, -1))


@pytest.mark.parametrize("base_class", ["gymnasium", "stable_baselines3"])
def test_copy_true_is_the_default_and_returns_private_arrays(base_class):
    env = native_env(base_class)
    pool = env.pool
    if base_class == "gymnasium":
        obs, _ = env.reset(seed=0)
    else:
        obs = env.reset()
    assert not np.shares_memory(obs, pool.obs)
    out = env.step(np.zeros((ROWS, 6), np.float32))
    for array in out[:-1]:
        for buffer in [pool.obs, pool.rewards, pool.terminations, pool.truncations]:
            assert not np.shares_memory(array, buffer)
    kept = out[0].copy()
    env.step(np.ones((ROWS, 6), np.float32))
    assert_array_equal(out[0], kept)


def test_copy_false_gives_the_same_values_as_copy_true():
    shared, private = native_env("gymnasium", copy=False), native_env("gymnasium")
    assert_array_equal(shared.reset(seed=4)[0], private.reset(seed=4)[0])
    for t, actions in enumerate(action_stream(10, 4)):
        out, ref = shared.step(actions), private.step(actions)
        for a, b in zip(out[:-1], ref[:-1]):
            assert_array_equal(a, b, err_msg=f"step {t}")
        for row, (mine, theirs) in enumerate(zip(out[-1], ref[-1])):
            assert list(mine) == list(theirs)
            for key in theirs:
                assert_value_equal(mine[key], theirs[key], f"step {t}, row {row}, {key}")


# -- AgentInfos --------------------------------------------------------------------------


@pytest.fixture
def infos_at_episode_end():
    """A step's infos where every world has just ended (same-step reset), plus the env."""
    env = native_env("gymnasium", copy=False)
    env.reset(seed=9)
    for _ in range(MAX_CYCLES):
        out = env.step(np.zeros((ROWS, 6), np.float32))
    assert out[3].all()
    return out[-1], env


def test_agent_infos_is_a_sequence(infos_at_episode_end):
    infos, _ = infos_at_episode_end
    assert isinstance(infos, AgentInfos) and isinstance(infos, Sequence)
    assert len(infos) == ROWS
    items = list(infos)
    assert len(items) == ROWS and all(isinstance(i, dict) for i in items)
    assert [infos[i] for i in range(ROWS)] == items
    assert infos[-1] is infos[ROWS - 1] and infos[-ROWS] is infos[0]
    assert infos[0] is infos[0]  # built once, then cached
    assert infos[2:5] == items[2:5]
    assert infos[::-3] == items[::-3]
    assert infos[-2:] == items[-2:]
    assert infos[5:2] == [] and infos[:] == items
    assert isinstance(infos[1:3], list)
    assert list(reversed(infos)) == items[::-1]
    assert items[3] in infos
    assert infos.index(items[3]) == 3 and infos.count(items[3]) == 1
    for bad in [ROWS, ROWS + 7, -ROWS - 1]:
        with pytest.raises(IndexError, match=rf"info index should be in \[0, {ROWS}\), got"):
            infos[bad]
    assert repr(infos).startswith("AgentInfos([{")


def test_agent_infos_index_types_behave_like_a_list(infos_at_episode_end):
    infos, _ = infos_at_episode_end
    items = list(infos)
    assert infos[np.int64(4)] is items[4]
    assert infos[np.int32(-1)] is items[-1]
    for bad in ["0", None, (1,)]:
        with pytest.raises(TypeError):
            items[bad]
        with pytest.raises(TypeError):
            infos[bad]


def test_agent_infos_rejects_float_indices_like_a_list(infos_at_episode_end):
    infos, _ = infos_at_episode_end
    infos[1]  # row 1 is now cached (a float 1.0 would hash like it)
    for bad in [1.0, 2.0, np.float64(3.0), 1.5]:
        with pytest.raises(TypeError):
            [0, 1, 2, 3][bad]
        with pytest.raises(TypeError):
            infos[bad]


def test_agent_infos_rows_hold_the_documented_entries(infos_at_episode_end):
    infos, env = infos_at_episode_end
    for row, info in enumerate(infos):
        assert list(info)[:6] == ["x_position", "rank", "x_velocity", "reward_forward", "reward_ctrl",
                                  "reward_finish"]
        assert type(info["rank"]) is int and 1 <= info["rank"] <= AGENTS
        assert all(type(info[k]) is float for k in ["x_position", "x_velocity", "reward_forward",
                                                    "reward_ctrl", "reward_finish"])
        assert info["terminal_observation"].shape == (env.single_observation_space.shape[0],)
        assert info[OUR_EXTRA_INFO] is True
    # Ranks of each world are a permutation of 1..agents.
    for w in range(WORLDS):
        assert sorted(infos[w * AGENTS + a]["rank"] for a in range(AGENTS)) == list(range(1, AGENTS + 1))


def test_agent_infos_are_snapshots_of_their_step(infos_at_episode_end):
    """Read after later steps (copy=False: the native buffers moved on), a step's infos still
    describe that step."""
    infos, env = infos_at_episode_end
    twin = native_env("gymnasium")
    twin.reset(seed=9)
    for _ in range(MAX_CYCLES):
        ref = twin.step(np.zeros((ROWS, 6), np.float32))[-1]
    expected = [dict(i) for i in ref]
    for _ in range(3):
        env.step(np.ones((ROWS, 6), np.float32))
    got = list(infos)
    assert len(got) == len(expected)
    for mine, theirs in zip(got, expected):
        assert list(mine) == list(theirs)
        for key in theirs:
            assert_value_equal(mine[key], theirs[key], key)


# -- every registered game -------------------------------------------------------------------


@pytest.mark.parametrize("module", [pytest.param(m, id=name) for name, m in MULTI_AGENT_ENVS.items()])
def test_every_game_vec_env_matches_supersuit(module):
    worlds, max_cycles = 2, 5
    parallel = module.parallel_env(max_cycles=max_cycles)
    theirs = supersuit.concat_vec_envs_v1(supersuit.pettingzoo_env_to_vec_env_v1(parallel), worlds,
                                          num_cpus=0, base_class="gymnasium")
    ours = module.vec_env(worlds, max_cycles=max_cycles, num_threads=2)
    rows = worlds * len(parallel.possible_agents)
    assert ours.num_envs == theirs.num_envs == rows
    assert ours.observation_space == theirs.observation_space
    assert ours.action_space == theirs.action_space
    obs, infos = ours.reset(seed=31)
    ref_obs, ref_infos = theirs.reset(seed=31)
    assert_value_equal(obs, ref_obs, "reset obs")
    assert [dict(i) for i in infos] == ref_infos
    space = ours.action_space
    rng = np.random.default_rng(31)
    for t in range(2 * max_cycles + 2):
        actions = rng.uniform(space.low, space.high, size=(rows, *space.shape)).astype(np.float32)
        out, ref = ours.step(actions), theirs.step(actions)
        for name, a, b in zip(["obs", "rewards"], out[:2], ref[:2]):
            assert_value_equal(a, b, f"{name}, step {t}")
        assert_array_equal(out[2], ref[2].astype(bool))
        assert_array_equal(out[3], ref[3].astype(bool))
        for row, (mine, their) in enumerate(zip(out[4], ref[4])):
            assert [k for k in mine if k != OUR_EXTRA_INFO] == list(their), (t, row)
            for key, value in their.items():
                assert_value_equal(mine[key], value, f"step {t}, row {row}, {key}")
