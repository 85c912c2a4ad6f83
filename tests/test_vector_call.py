"""``call``, ``get_attr`` and ``set_attr`` of the native vector env
(``gymnasium.make_vec(..., vectorization_mode="vector_entry_point")``),
against Gymnasium's ``SyncVectorEnv`` of the ``-v5`` envs as the oracle."""

from __future__ import annotations

import re

import gymnasium
import numpy as np
import pytest

import joltgym_marl  # noqa: F401  (registers joltgym_marl/<Name>-v0)

N = 3


@pytest.fixture(params=["Hopper", "Ant"])
def pair(request):
    ours = gymnasium.make_vec(f"joltgym_marl/{request.param}-v0", N, vectorization_mode="vector_entry_point")
    ref = gymnasium.make_vec(f"{request.param}-v5", N, vectorization_mode="sync")
    for env in (ours, ref):
        env.reset(seed=11)
    yield ours, ref
    ours.close()
    ref.close()


def step_both(ours, ref, steps=3, seed=0):
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        action = rng.uniform(-1, 1, ours.action_space.shape).astype(np.float32)
        out, expected = ours.step(action), ref.step(action)
    np.testing.assert_array_equal(out[0], expected[0])
    return out


def test_get_attr_and_call_read_each_worlds_state_as_sync_vector_env(pair):
    ours, ref = pair
    step_both(ours, ref)
    for name in ("dt", "frame_skip", "render_mode"):
        assert ours.get_attr(name) == ref.get_attr(name), name
    for name in ("state_vector", "_get_obs"):
        got, expected = ours.call(name), ref.call(name)
        assert isinstance(got, tuple) and len(got) == N
        np.testing.assert_array_equal(np.stack(got), np.stack(expected))
    for data, expected in zip(ours.get_attr("data"), ref.get_attr("data")):
        np.testing.assert_array_equal(data.qpos, expected.qpos)
        np.testing.assert_array_equal(data.xpos, expected.xpos)  # derived fields too
    # the worlds step on as if nothing was read
    step_both(ours, ref, seed=1)


def test_call_set_state_reaches_the_worlds(pair):
    ours, ref = pair
    step_both(ours, ref)
    data = ref.get_attr("data")[1]
    qpos, qvel = data.qpos + 0.01, data.qvel.copy()
    for env in (ours, ref):
        assert env.call("set_state", qpos, qvel) == (None,) * N
    for data in ours.get_attr("data"):
        np.testing.assert_array_equal(data.qpos, qpos)
    step_both(ours, ref, seed=2)  # every world steps on from the state set


def test_set_attr_as_sync_vector_env(pair):
    ours, ref = pair
    for env in (ours, ref):
        env.set_attr("tag", ["a", "b", "c"])
    assert ours.get_attr("tag") == ref.get_attr("tag") == ("a", "b", "c")
    for env in (ours, ref):
        env.set_attr("tag", 7)
    assert ours.get_attr("tag") == ref.get_attr("tag") == (7,) * N
    message = (f"Values must be a list or tuple with length equal to the number of environments. "
               f"Got `2` values for {N} environments.")
    for env in (ours, ref):
        with pytest.raises(ValueError, match=re.escape(message)):
            env.set_attr("tag", [1, 2])


def test_an_unknown_attribute_raises_as_sync_vector_env(pair):
    ours, ref = pair
    for env in (ours, ref):
        with pytest.raises(AttributeError, match="no_such_attribute"):
            env.get_attr("no_such_attribute")


def test_closed_vector_env_refuses_call():
    env = gymnasium.make_vec("joltgym_marl/Hopper-v0", 2, vectorization_mode="vector_entry_point")
    env.reset(seed=0)
    assert env.get_attr("dt") == (env.pool.dt,) * 2
    env.close()
    with pytest.raises(joltgym_marl.StateError, match="closed"):
        env.get_attr("dt")
