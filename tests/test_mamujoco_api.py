"""mamujoco_v1: PettingZoo's own tests, the AEC form, pickling, rendering and
bad input (errors naming the value and the allowed ones)."""

from __future__ import annotations

import functools
import pickle
import re
import types

import cloudpickle
import numpy as np
import pytest
from pettingzoo.test import api_test, max_cycles_test, parallel_api_test, parallel_seed_test

from joltgym_marl import mamujoco_v1
from joltgym_marl._native import core as _core

API_CASES = [("HalfCheetah", "6x1", 1), ("Ant", "4x2", 2), ("Humanoid", "9|8", 0), ("Reacher", "2x1", 1),
             ("InvertedPendulum", None, 1), ("ManySegmentAnt", "3x1", 1)]


@pytest.mark.parametrize(("scenario", "conf", "obsk"), API_CASES)
def test_parallel_api_test(scenario, conf, obsk):
    env = mamujoco_v1.parallel_env(scenario, conf, agent_obsk=obsk, max_episode_steps=50)
    parallel_api_test(env, num_cycles=120)


@pytest.mark.parametrize(("scenario", "conf"), [("HalfCheetah", "2x3"), ("Hopper", "3x1")])
def test_parallel_seed_test(scenario, conf):
    parallel_seed_test(functools.partial(mamujoco_v1.parallel_env, scenario, conf, max_episode_steps=50),
                       num_cycles=60)


# PettingZoo's checkers warn that an unbounded Box is "probably too low/high";
# MuJoCo observations (Farama's spaces too) are unbounded.
@pytest.mark.filterwarnings("ignore:Agent's minimum observation space value is -infinity:UserWarning")
@pytest.mark.filterwarnings("ignore:Agent's maximum observation space value is infinity:UserWarning")
@pytest.mark.filterwarnings("ignore:Environment's minimum state space value is -infinity:UserWarning")
@pytest.mark.filterwarnings("ignore:Environment's maximum state space value is infinity:UserWarning")
def test_aec_api_test():
    api_test(mamujoco_v1.env("Walker2d", "2x3", max_episode_steps=30), num_cycles=60)


def _with_max_cycles(fn, scenario, conf):
    def make(max_cycles):
        return fn(scenario, conf, max_episode_steps=max_cycles)
    return make


def test_max_cycles_test():
    mod = types.SimpleNamespace(parallel_env=_with_max_cycles(mamujoco_v1.parallel_env, "Swimmer", "2x1"),
                                env=_with_max_cycles(mamujoco_v1.env, "Swimmer", "2x1"))
    max_cycles_test(mod)


def test_metadata_and_spaces_are_farama_shaped():
    env = mamujoco_v1.parallel_env("HalfCheetah", "2x3")
    assert env.metadata["name"] == "MaMuJoCo" and env.metadata["is_parallelizable"]
    assert env.possible_agents == ["agent_0", "agent_1"]
    assert env.observation_space("agent_0") is env.observation_space("agent_0")
    assert env.observation_space("agent_0").dtype == np.float64
    assert env.action_space("agent_1").dtype == np.float32
    obs, _ = env.reset(seed=0)
    assert env.state().shape == (17,)
    for agent, o in obs.items():
        assert env.observation_space(agent).contains(o)


def test_global_state_observation_option():
    env = mamujoco_v1.parallel_env("Ant", "2x4", agent_observation="global_state")
    obs, _ = env.reset(seed=2)
    for agent in env.possible_agents:
        assert np.array_equal(obs[agent], env.state())
        assert env.observation_space(agent).shape == env.state().shape
    local = mamujoco_v1.parallel_env("Ant", "2x4")
    assert local.observation_space("agent_0").shape != env.observation_space("agent_0").shape


@pytest.mark.parametrize("dumps", [pickle.dumps, cloudpickle.dumps])
def test_pickling_recreates_from_constructor_arguments(dumps):
    env = mamujoco_v1.parallel_env("Hopper", "3x1", agent_obsk=2, ctrl_cost_weight=0.01)
    copy = pickle.loads(dumps(env))
    assert copy.possible_agents == env.possible_agents
    a, _ = env.reset(seed=5)
    b, _ = copy.reset(seed=5)
    assert all(np.array_equal(a[k], b[k]) for k in a)
    vec = mamujoco_v1.vec_env("HalfCheetah", "2x3", num_envs=3, num_threads=1)
    vcopy = pickle.loads(dumps(vec))
    assert vcopy.num_envs == 3 and vcopy.possible_agents == vec.possible_agents


def test_rendering_rgb_array():
    env = mamujoco_v1.parallel_env("HalfCheetah", "2x3", render_mode="rgb_array")
    env.reset(seed=0)
    frame = env.render()
    assert frame.shape == (480, 480, 3) and frame.dtype == np.uint8 and frame.std() > 0
    env.close()


# The -v5 rendering keywords (Farama's env passes **kwargs to gymnasium.make).
FRAME_CASES = [("HalfCheetah", "6x1", dict(width=64, height=48)),
               ("Ant", "4x2", dict(camera_id=-1, width=80, height=60)),
               ("Walker2d", "2x3", dict(default_camera_config={"distance": 2.5}, width=50, height=40)),
               ("Swimmer", "2x1", dict(max_geom=200, width=32, height=32)),
               ("Hopper", "3x1", dict(width=40, height=40, camera_name="track")),
               ("ManySegmentSwimmer", "2x2", dict(width=40, height=30))]


@pytest.mark.parametrize(("scenario", "conf", "kwargs"), FRAME_CASES)
def test_frames_equal_faramas_with_the_v5_rendering_keywords(scenario, conf, kwargs):
    """Frames are Farama's, pixel for pixel, at the same state (they were
    refused with TypeError, and drawn by another camera)."""
    from gymnasium_robotics import mamujoco_v1 as farama

    ours = mamujoco_v1.parallel_env(scenario, conf, render_mode="rgb_array", **kwargs)
    ref = farama.parallel_env(scenario, conf, render_mode="rgb_array", **kwargs)
    ours.reset(seed=3)
    ref.reset(seed=3)
    rng = np.random.default_rng(0)
    for _ in range(5):
        actions = {a: rng.uniform(-1, 1, ours.action_space(a).shape).astype(np.float32) for a in ours.agents}
        ours.step(actions)
        ref.step(actions)
        frame = ours.render()
        # Gymnasium's renderer makes its context current once, when made: with
        # another env's context in use since (ours), the reference's must be
        # made current again or it draws black.
        ref.single_agent_env.unwrapped.mujoco_renderer._get_viewer("rgb_array").make_context_current()
        expected = ref.render()
        assert frame.shape == expected.shape and frame.dtype == expected.dtype
        assert np.array_equal(frame, expected)
    ours.close()
    ref.close()


@pytest.mark.parametrize(("kwargs", "error", "match"), [
    (dict(width=0), ValueError, "width"), (dict(height=-1), ValueError, "height"),
    (dict(width="64"), TypeError, "width"), (dict(height=None), TypeError, "height"),
    (dict(width=10**9), ValueError, "width"),
    (dict(camera_id=0, camera_name="track"), ValueError, "camera_id and camera_name"),
    (dict(default_camera_config="near"), ValueError, "default_camera_config"),
    (dict(default_camera_config=3), TypeError, "default_camera_config"),
    (dict(max_geom=0), ValueError, "max_geom"), (dict(max_geom=True), ValueError, "max_geom")])
def test_rendering_keywords_are_checked_at_construction(kwargs, error, match):
    with pytest.raises(error, match=match):
        mamujoco_v1.parallel_env("HalfCheetah", "2x3", render_mode="rgb_array", **kwargs)


def test_copy_data_into_refuses_what_is_not_a_data_of_the_model():
    import mujoco

    env = mamujoco_v1.parallel_env("HalfCheetah", "2x3")
    env.reset(seed=0)
    pool = env._core.pool
    with pytest.raises(TypeError, match="mujoco.MjData"):
        pool.copy_data_into(0, object())
    other = mujoco.MjModel.from_xml_string("<mujoco><worldbody><body><freejoint/><geom size='1'/></body></worldbody></mujoco>")
    with pytest.raises(ValueError, match="nq=7, expected 9"):
        pool.copy_data_into(0, mujoco.MjData(other))
    with pytest.raises(IndexError):
        pool.copy_data_into(1, mujoco.MjData(other))


def test_observations_are_new_arrays_each_step():
    env = mamujoco_v1.parallel_env("HalfCheetah", "6x1")
    obs0, _ = env.reset(seed=1)
    kept = {a: o.copy() for a, o in obs0.items()}
    env.step({a: env.action_space(a).sample() for a in env.agents})
    assert all(np.array_equal(obs0[a], kept[a]) for a in kept)


# -- bad input ---------------------------------------------------------------------

def test_unknown_scenario_lists_the_allowed_ones():
    with pytest.raises(ValueError, match=r"unknown scenario 'Cheetah'; allowed: Ant, HalfCheetah, .*ManySegmentAnt"):
        mamujoco_v1.parallel_env("Cheetah", "2x3")


def test_unknown_conf_lists_the_allowed_ones():
    with pytest.raises(ValueError, match=re.escape("agent_conf '5x1' is not valid for HalfCheetah; allowed: "
                                                   "'2x3', '6x1', '3x2', None")):
        mamujoco_v1.parallel_env("HalfCheetah", "5x1")
    with pytest.raises(ValueError, match=r"agent_conf 'ax2' is not valid for ManySegmentSwimmer; expected 'NxK'"):
        mamujoco_v1.parallel_env("ManySegmentSwimmer", "ax2")
    with pytest.raises(ValueError, match=r"agent_conf '2x1' is not valid for InvertedPendulum; allowed: None"):
        mamujoco_v1.parallel_env("InvertedPendulum", "2x1")


def test_bad_obsk_and_categories():
    with pytest.raises(ValueError, match=r"agent_obsk should be None or an int >= 0, got -1"):
        mamujoco_v1.parallel_env("HalfCheetah", "2x3", agent_obsk=-1)
    with pytest.raises(ValueError, match=r"local_categories has unknown category 'qacc'; allowed: qpos, qvel"):
        mamujoco_v1.parallel_env("HalfCheetah", "2x3", local_categories=[["qacc"], ["qpos"]])
    with pytest.raises(ValueError, match=r"should list the categories of each depth 0..2 \(agent_obsk=2\), got 1"):
        mamujoco_v1.parallel_env("HalfCheetah", "2x3", agent_obsk=2, local_categories=[["qpos"]])
    with pytest.raises(ValueError, match=r"agent_observation should be one of \('local', 'global_state'\)"):
        mamujoco_v1.parallel_env("HalfCheetah", "2x3", agent_observation="state")
    with pytest.raises(ValueError, match=r"global_categories should be a list of category names, got 'qpos'"):
        mamujoco_v1.parallel_env("HalfCheetah", "2x3", global_categories="qpos")
    with pytest.raises(ValueError, match=r"local_categories should be a list of category names per depth, got "
                                         r"\['qpos', \['qpos'\]\]"):
        mamujoco_v1.parallel_env("HalfCheetah", "2x3", local_categories=["qpos", ["qpos"]])


class LyingInt(int):
    __lt__ = __gt__ = __le__ = __ge__ = lambda self, other: False


def test_a_huge_obsk_is_the_whole_graph_at_once():
    # agent_obsk = 10**12 once looped 10**12 times (the process hung): depths
    # past the graph's size are empty, so any k beyond it observes what the
    # whole graph does, as Farama's env does, at once.
    whole = mamujoco_v1.parallel_env("HalfCheetah", "6x1", agent_obsk=6)
    for k in (10**12, LyingInt(10**9)):
        env = mamujoco_v1.parallel_env("HalfCheetah", "6x1", agent_obsk=k)
        assert env.agent_obsk == int(k) and type(env.agent_obsk) is int
        for agent in env.possible_agents:
            assert env.observation_space(agent) == whole.observation_space(agent)
    with pytest.raises(ValueError, match=r"agent_obsk should be None or an int >= 0, got -5"):
        mamujoco_v1.parallel_env("HalfCheetah", "2x3", agent_obsk=LyingInt(-5))


def test_a_many_segment_conf_is_bounded():
    # 100000x100000 once generated its MJCF until the OOM killer ended the process.
    with pytest.raises(ValueError, match=re.escape("agent_conf '100000x100000' asks ManySegmentSwimmer for "
                                                   "10000000000 segments; expected N x K <= 490")):
        mamujoco_v1.parallel_env("ManySegmentSwimmer", "100000x100000")


@pytest.mark.parametrize("scenario", ["ManySegmentSwimmer", "ManySegmentAnt"])
def test_the_segment_bound_is_what_mujoco_can_read(scenario):
    # The bound was 1000 while MuJoCo's XML reader stops at 500 nested elements: '600x1'
    # passed it and then failed to compile ("Element nesting is too deep"). The bound is now
    # the largest conf that compiles, in any split of its segments, and one more is refused.
    for conf, agents in (("490x1", 490), ("1x490", 1), ("49x10", 49)):
        env = mamujoco_v1.parallel_env(scenario, conf)
        env.reset(seed=0)
        assert len(env.possible_agents) == agents
        env.close()
    for conf, segments in (("491x1", 491), ("1x491", 491), ("600x1", 600)):
        with pytest.raises(ValueError, match=re.escape(f"asks {scenario} for {segments} segments; "
                                                       "expected N x K <= 490")):
            mamujoco_v1.parallel_env(scenario, conf)


def test_malformed_factorization():
    with pytest.raises(ValueError, match=r"agent_factorization should be a dict with keys 'partition'"):
        mamujoco_v1.parallel_env("HalfCheetah", "x", agent_factorization=[("bthigh",)])
    with pytest.raises(ValueError, match=r"names unknown joint 'bknee'; allowed: bfoot, bshin, bthigh"):
        mamujoco_v1.parallel_env("HalfCheetah", "x", agent_factorization={"partition": [("bknee",)]})
    with pytest.raises(ValueError, match=re.escape("give each of the 6 actuators to exactly one agent; actuators "
                                                   "given twice: [0], to none: [3, 4, 5]")):
        mamujoco_v1.parallel_env("HalfCheetah", "x", agent_factorization={
            "partition": [("bthigh", "bshin"), ("bthigh", "bfoot")]})
    with pytest.raises(ValueError, match=r"joint 'root_x' has no actuator"):
        mamujoco_v1.parallel_env("HalfCheetah", "x", agent_factorization={"partition": [("root_x",)]})


def test_unknown_robot_keyword_lists_the_allowed_ones():
    with pytest.raises(TypeError, match=r"ctrl_cost"):
        mamujoco_v1.parallel_env("HalfCheetah", "2x3", ctrl_cost=0.1)


def test_bad_actions_name_the_agent_and_value():
    env = mamujoco_v1.parallel_env("HalfCheetah", "2x3")
    with pytest.raises(_core.StateError, match=r"step\(\) before reset\(\)"):
        env.step({"agent_0": np.zeros(3, np.float32), "agent_1": np.zeros(3, np.float32)})
    env.reset(seed=0)
    good = np.zeros(3, np.float32)
    with pytest.raises(ValueError, match=re.escape("action of agent_1 should have shape (3,), got (2,)")):
        env.step({"agent_0": good, "agent_1": np.zeros(2, np.float32)})
    with pytest.raises(KeyError, match=r"missing agent\(s\) \['agent_1'\]"):
        env.step({"agent_0": good})
    with pytest.raises(KeyError, match=r"unknown agent\(s\) \['agent_9'\]"):
        env.step({"agent_0": good, "agent_1": good, "agent_9": good})
    with pytest.raises(ValueError, match=r"action of agent_0 should be finite, got nan at index \(1,\)"):
        env.step({"agent_0": np.array([0, np.nan, 0], np.float32), "agent_1": good})
    with pytest.raises(TypeError, match=r"action of agent_0 should have a floating-point dtype"):
        env.step({"agent_0": np.zeros(3, np.int64), "agent_1": good})
    # a rejected step changes nothing
    before = env.state()
    assert np.array_equal(before, env.state())
    env.close()
    with pytest.raises(_core.StateError, match="closed"):
        env.reset()


def test_step_after_episode_end_asks_for_reset():
    env = mamujoco_v1.parallel_env("HalfCheetah", "2x3", max_episode_steps=2)
    env.reset(seed=0)
    act = {a: np.zeros(3, np.float32) for a in env.possible_agents}
    env.step(act)
    _, _, _, trunc, _ = env.step(act)
    assert all(trunc.values()) and env.agents == []
    with pytest.raises(_core.StateError, match=r"after the episode ended; expected reset\(\)"):
        env.step(act)
    # An empty step answers with empty dicts, as PettingZoo's own envs do (SuperSuit's
    # black_death steps so once the episode is over); the world is untouched.
    state = env.state()
    assert env.step({}) == ({}, {}, {}, {}, {})
    np.testing.assert_array_equal(env.state(), state)
    fresh = mamujoco_v1.parallel_env("HalfCheetah", "2x3")
    with pytest.raises(_core.StateError, match=r"step\(\) before reset\(\)"):
        fresh.step({})


def test_an_action_beyond_float32_is_named():
    env = mamujoco_v1.parallel_env("HalfCheetah", "2x3")
    env.reset(seed=0)
    with pytest.raises(ValueError, match=r"action of agent_1 should be finite, got 1e\+300 at index \(2,\) \(out of float32 range\)"):
        env.step({"agent_0": np.zeros(3), "agent_1": np.array([0.0, 0.0, 1e300])})


def test_signature_matches_farama():
    import inspect

    from mamujoco_oracle import farama

    ours = list(inspect.signature(mamujoco_v1.parallel_env).parameters)
    theirs = list(inspect.signature(farama.parallel_env).parameters)
    assert [p for p in ours if p != "agent_observation"] == theirs
    with pytest.raises(ValueError, match=r"gym_env .* cannot be stepped natively; expected None"):
        mamujoco_v1.parallel_env("HalfCheetah", "2x3", gym_env=object())
