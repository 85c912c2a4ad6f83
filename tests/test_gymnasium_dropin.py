"""Our envs as a drop-in for Gymnasium's MuJoCo ``-v5`` envs, with Gymnasium's
own envs as the oracle: what code written for ``gymnasium.make("Ant-v5")``
sees (dtypes, values bit for bit, info types, attributes, ``np_random``,
``close()``, rendering, the vector env), parametrized over the registry.

Gymnasium's own test suite, run against ours with only the env ids changed,
is ``tests/gymnasium_suite/run.py``; these are our tests of the same
behaviours.
"""

from __future__ import annotations

import os
import pickle

import gymnasium as gym
import mujoco
import numpy as np
import pytest
from gymnasium.envs.mujoco.mujoco_env import MujocoEnv
from gymnasium.utils.env_checker import data_equivalence
from gymnasium.utils.env_match import check_environments_match

import joltgym_marl  # noqa: F401  (registers the envs)
from joltgym_marl import _core, registration
from joltgym_marl.registry import SINGLE_AGENT_TASKS

SPECS = {spec.name: spec for spec in SINGLE_AGENT_TASKS}
NAMES = list(SPECS)
# Steps per rollout: enough for episodes to end (Hopper, Walker2d, the pendulums), short for humanoids.
STEPS = {"humanoid": 120, "humanoid_standup": 80}


def pair(name: str, **kwargs):
    spec = SPECS[name]
    return gym.make(spec.reference_id, **kwargs), gym.make(spec.env_id, **kwargs)


def rollout(env, seed: int, steps: int, actions_seed: int = 1):
    """Every value the env returns, resetting (unseeded) when an episode ends."""
    space = env.action_space
    space.seed(actions_seed)
    out = [env.reset(seed=seed)]
    for _ in range(steps):
        result = env.step(space.sample())
        out.append(result)
        if result[2] or result[3]:
            out.append(env.reset())
    return out


@pytest.mark.parametrize("name", NAMES)
def test_rollouts_equal_v5_exactly_dtypes_and_types_included(name):
    reference, ours = pair(name)
    a, b = rollout(reference, 3, STEPS.get(name, 300)), rollout(ours, 3, STEPS.get(name, 300))
    assert len(a) == len(b)
    for k, (x, y) in enumerate(zip(a, b)):
        assert data_equivalence(x, y, exact=True), (name, k, x, y)
    obs, reward = b[1][0], b[1][1]
    assert obs.dtype == np.float64 and ours.observation_space == reference.observation_space
    assert type(reward) is (int if name == "inverted_pendulum" else np.float64)


@pytest.mark.parametrize("name", NAMES)
def test_reward_is_the_sum_of_its_info_terms_as_v5(name):
    reference, ours = pair(name)
    space = ours.action_space
    space.seed(0)
    reference.reset(seed=5)
    ours.reset(seed=5)
    for _ in range(20):
        action = space.sample()
        _, r_a, *_, info_a = reference.step(action)
        _, r_b, *_, info_b = ours.step(action)
        terms = [k for k in info_a if k.startswith("reward_") or k.endswith("_penalty")]
        assert [type(info_b[k]) for k in terms] == [type(info_a[k]) for k in terms]
        assert [info_b[k] for k in terms] == [info_a[k] for k in terms]
        assert r_b == r_a


@pytest.mark.parametrize("name", NAMES)
def test_check_environments_match(name):
    reference, ours = pair(name)
    check_environments_match(reference, ours, num_steps=50, seed=7, info_comparison="equivalence")


@pytest.mark.parametrize("name", NAMES)
def test_float32_is_an_explicit_option(name):
    reference, ours = pair(name)
    ours32 = gym.make(SPECS[name].env_id, dtype=np.float32)
    assert ours32.observation_space.dtype == np.float32
    obs_a, _ = reference.reset(seed=1)
    obs_b, _ = ours32.reset(seed=1)
    assert obs_b.dtype == np.float32 and np.array_equal(obs_b, obs_a.astype(np.float32))
    action = ours.action_space.sample()
    assert np.array_equal(ours32.step(action)[0], reference.step(action)[0].astype(np.float32))
    with pytest.raises(ValueError, match="dtype should be numpy.float64 or numpy.float32, got"):
        gym.make(SPECS[name].env_id, dtype=np.int32)


def test_reward_thresholds_are_described_by_the_native_registry_and_equal_v5s():
    # They were a dict in registration.py, beside the registry that describes everything else of a task.
    assert not hasattr(registration, "REWARD_THRESHOLDS")
    native = _core.tasks()
    for spec in SINGLE_AGENT_TASKS:
        v5 = gym.spec(spec.reference_id).reward_threshold
        assert native[spec.name]["reward_threshold"] == spec.reward_threshold == v5, spec.name
        assert gym.spec(spec.env_id).reward_threshold == v5, spec.env_id
    # v5 has one for some robots and none for others: both kinds are carried.
    assert {spec.reward_threshold is None for spec in SINGLE_AGENT_TASKS} == {True, False}


@pytest.mark.parametrize("name", NAMES)
def test_spec_matches_v5(name):
    reference, ours = pair(name)
    assert ours.spec.reward_threshold == reference.spec.reward_threshold == SPECS[name].reward_threshold
    assert ours.spec.max_episode_steps == reference.spec.max_episode_steps
    assert ours.unwrapped.metadata["render_modes"] == reference.unwrapped.metadata["render_modes"]
    assert ours.unwrapped.metadata["render_fps"] == reference.unwrapped.metadata["render_fps"]


@pytest.mark.parametrize("name", NAMES)
def test_wrong_action_shape_says_gymnasiums_words_and_ours(name):
    env = gym.make(SPECS[name].env_id).unwrapped
    env.reset(seed=0)
    sample = env.action_space.sample()
    for bad in (sample[1:], np.append(sample, 0), 0.1, sample[None], sample[:, None]):
        with pytest.raises(ValueError, match=r"^Action dimension mismatch\. Expected \(\d+,\), found .*: action"):
            env.step(bad)
    with pytest.raises(ValueError, match="finite"):  # our protection stays: NaN actions raise
        env.step(np.full_like(sample, np.nan))


@pytest.mark.parametrize("name", NAMES)
def test_close_keeps_the_env_usable(name):
    env = gym.make(SPECS[name].env_id, render_mode="rgb_array")
    env.reset(seed=0)
    env.render()
    env.close()
    env.close()
    env.reset(seed=1)
    env.step(env.action_space.sample())
    assert env.render().shape == (480, 480, 3)


@pytest.mark.parametrize("name", NAMES)
def test_np_random_is_the_source_of_reset_noise(name):
    reference, ours = pair(name)
    for env in (reference, ours):
        env.reset(seed=11)
        env.unwrapped.np_random.random(3)  # a wrapper or a user draws from it
    assert data_equivalence(reference.reset(), ours.reset(), exact=True)
    for env in (reference, ours):
        env.unwrapped.np_random = np.random.default_rng(99)  # or assigns a new generator
    assert data_equivalence(reference.reset(), ours.reset(), exact=True)
    assert data_equivalence(reference.unwrapped.np_random.random(), ours.unwrapped.np_random.random())


def test_an_np_random_native_noise_cannot_take_is_refused_by_name():
    """The reset noise is PCG64's stream: another generator is refused, and a
    state that is not a pair of ints in [0, 2**128) is named (a str in it
    surfaced int()'s "invalid literal for int() with base 10: 'x'")."""
    env = gym.make("joltgym_marl/Hopper-v0")
    env.unwrapped.np_random = np.random.Generator(np.random.MT19937(0))
    with pytest.raises(ValueError, match=r"np_random should be a numpy Generator over PCG64 .* got 'MT19937'"):
        env.reset()
    core = env.unwrapped.core
    for bad, error, message in ((("x", 1), TypeError, r"rng_state's state should be an int in \[0, 2\*\*128\), got str"),
                                ((1, 2.5), TypeError, r"rng_state's inc should be an int .* got float"),
                                ((True, 1), TypeError, r"rng_state's state should be an int .* got bool"),
                                ((-1, 1), ValueError, r"rng_state's state should be an int in \[0, 2\*\*128\)"),
                                ((2**128, 1), ValueError, r"rng_state's state should be an int in \[0, 2\*\*128\)")):
        with pytest.raises(error, match=message):
            core.rng_state = bad
    core.rng_state = (np.uint64(5), 2**127 + 1)  # any integer type, by operator.index
    assert core.rng_state == (5, 2**127 + 1)


@pytest.mark.parametrize("name", NAMES)
def test_a_real_mujoco_env(name):
    reference, ours = pair(name)
    a, b = reference.unwrapped, ours.unwrapped
    assert isinstance(b, MujocoEnv)
    assert isinstance(b.model, mujoco.MjModel) and isinstance(b.data, mujoco.MjData)
    for attribute in ("frame_skip", "dt", "camera_id", "camera_name", "width", "height"):
        assert getattr(b, attribute) == getattr(a, attribute), attribute
    assert np.array_equal(b.init_qpos, a.init_qpos) and np.array_equal(b.init_qvel, a.init_qvel)
    assert getattr(b, "observation_structure", None) == getattr(a, "observation_structure", None)
    assert b.fullpath.endswith(a.fullpath.rsplit("/", 1)[-1])
    space = ours.action_space
    space.seed(2)
    reference.reset(seed=4)
    ours.reset(seed=4)
    for _ in range(10):
        action = space.sample()
        reference.step(action)
        ours.step(action)
        # read after each step: the live state, derived fields included
        for field in ("qpos", "qvel", "xpos", "xquat", "cfrc_ext", "site_xpos", "sensordata", "qfrc_actuator"):
            assert np.array_equal(getattr(b.data, field), getattr(a.data, field)), field
    assert np.array_equal(b.state_vector(), a.state_vector())
    body = a.model.body(1).name
    assert np.array_equal(b.get_body_com(body), a.get_body_com(body))
    assert np.array_equal(b._get_obs(), a._get_obs())
    # v5's own reset_model and do_simulation, on our live data
    ctrl = space.sample().astype(np.float64)
    a.do_simulation(ctrl, a.frame_skip)
    b.do_simulation(ctrl, b.frame_skip)
    assert np.array_equal(b.data.qpos, a.data.qpos) and np.array_equal(b._get_obs(), a._get_obs())
    obs_a, obs_b = a.reset_model(), b.reset_model()
    assert np.array_equal(b.state_vector(), a.state_vector())
    assert np.array_equal(obs_b, obs_a)  # (Humanoid's: with the last cfrc_ext, which reset_model keeps)
    for field in ("ctrl", "qacc_warmstart", "cfrc_ext", "qacc", "efc_force"):  # what set_state leaves or derives
        assert np.array_equal(getattr(b.data, field), getattr(a.data, field)), field
    assert b.data.time == a.data.time
    # more MuJoCo steps than ours makes per call (it steps in chunks that a signal can interrupt)
    a.do_simulation(ctrl, 2345)
    b.do_simulation(ctrl, 2345)
    assert np.array_equal(b.data.qpos, a.data.qpos) and np.array_equal(b.data.qvel, a.data.qvel)


@pytest.mark.parametrize("name", ["ant", "half_cheetah", "hopper", "humanoid", "swimmer", "walker2d"])
def test_each_envs_helpers_as_v5(name):
    reference, ours = pair(name)
    a, b = reference.unwrapped, ours.unwrapped
    space = ours.action_space
    space.seed(3)
    reference.reset(seed=2)
    ours.reset(seed=2)
    helpers = [h for h in ("healthy_reward", "is_healthy", "contact_forces", "contact_cost") if hasattr(a, h)]
    for _ in range(30):
        action = space.sample()
        reference.step(action)
        ours.step(action)
        assert data_equivalence(b.control_cost(action), a.control_cost(action), exact=True)
        for helper in helpers:
            assert data_equivalence(getattr(b, helper), getattr(a, helper), exact=True), helper


@pytest.mark.parametrize("name", ["ant", "hopper", "reacher"])
def test_a_new_timestep_takes_effect_as_on_v5(name):
    reference, ours = pair(name)
    for env in (reference, ours):
        env.unwrapped.model.opt.timestep = 0.005
    assert ours.unwrapped.dt == reference.unwrapped.dt
    a, b = rollout(reference, 0, 30), rollout(ours, 0, 30)
    assert all(data_equivalence(x, y, exact=True) for x, y in zip(a, b))


@pytest.mark.parametrize("name", NAMES)
def test_pickled_env_is_the_same_env(name):
    env = gym.make(SPECS[name].env_id, ctrl_cost_weight=0.3) if "ctrl_cost_weight" in SPECS[name].defaults() \
        else gym.make(SPECS[name].env_id)
    copy = pickle.loads(pickle.dumps(env))
    assert data_equivalence(rollout(env, 0, 20), rollout(copy, 0, 20), exact=True)


@pytest.mark.parametrize("name", NAMES)
def test_frames_equal_v5s(name):
    reference, ours = pair(name, render_mode="rgb_array")
    for env in (reference, ours):
        env.reset(seed=0)
    space = ours.action_space
    space.seed(0)
    for _ in range(3):
        action = space.sample()
        reference.step(action)
        ours.step(action)
    assert np.array_equal(ours.render(), reference.render())


def test_render_modes_and_kwargs_as_v5():
    for mode in ("depth_array", "rgbd_tuple"):
        reference, ours = pair("ant", render_mode=mode, camera_id=-1, max_geom=500,
                               default_camera_config={"distance": 3.0}, visual_options={2: True})
        reference.reset(seed=0)
        ours.reset(seed=0)
        assert data_equivalence(ours.render(), reference.render(), exact=True)
    # human mode constructs without a display, as v5's; the first render (reset
    # renders in human mode) needs one: v5's aborts the process there, ours raises
    env = gym.make("joltgym_marl/Ant-v0", render_mode="human")
    assert env.unwrapped.render_mode == "human"
    if not os.environ.get("DISPLAY"):
        with pytest.raises(RuntimeError, match="needs a display"):
            env.reset(seed=0)
    env.close()


@pytest.mark.parametrize("mode", [gym.vector.AutoresetMode.NEXT_STEP, gym.vector.AutoresetMode.SAME_STEP])
@pytest.mark.parametrize("name", ["hopper", "inverted_pendulum", "ant", "humanoid", "reacher"])
def test_make_vec_equals_sync_vector_env_of_v5(name, mode):
    spec = SPECS[name]
    n = 3
    ours = gym.make_vec(spec.env_id, n, vectorization_mode="vector_entry_point",
                        autoreset_mode=mode)
    reference = gym.vector.SyncVectorEnv([lambda: gym.make(spec.reference_id) for _ in range(n)],
                                         autoreset_mode=mode)
    assert ours.single_observation_space == reference.single_observation_space
    assert data_equivalence(ours.reset(seed=5), reference.reset(seed=5), exact=True)
    space = ours.action_space
    space.seed(5)
    for t in range(STEPS.get(name, 150)):
        action = space.sample()
        x, y = ours.step(action), reference.step(action)
        assert data_equivalence(x, y, exact=True), (t, x, y)


def test_custom_xml_file_relative_and_absolute(tmp_path, monkeypatch):
    """As Gymnasium's test_xml_file: a "./"-relative and an absolute model path."""
    source = (joltgym_marl.ASSET_DIR / "walker2d_v5.xml").read_text()
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "walker.xml").write_text(source)
    monkeypatch.chdir(tmp_path)
    for path in ("./models/walker.xml", str(tmp_path / "models" / "walker.xml")):
        env = gym.make("joltgym_marl/Walker2d-v0", xml_file=path).unwrapped
        assert isinstance(env, MujocoEnv) and env.fullpath == path
        assert env.data.qpos.size == 9
