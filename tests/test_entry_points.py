"""One table over every entry point of every registered task, and the
behaviour every one of them owes its user, tested once:

* stepping before reset raises a ``StateError`` (a ``RuntimeError``) and
  leaves the world as it was;
* a wrong action shape, a non-float dtype or a NaN action raises (naming the
  bad value and what was expected) and leaves every world as it was: the next
  good step equals that of a twin that never saw the bad call;
* a closed env refuses to step or reset;
* pickling re-creates an equal env;
* the same seed gives the same rollout, another seed another one.

The table is generated from the native task registry: a new task is covered
by being registered.
"""

from __future__ import annotations

import pickle
import re
from dataclasses import dataclass
from collections.abc import Sequence
from typing import Any, Callable

import cloudpickle
import gymnasium
import numpy as np
import pytest
from conftest import CORES, IGNORE_ACTION_SCALE, IGNORE_INFINITE_BOX

import joltgym_marl
from joltgym_marl import MULTI_AGENT_ENVS, MultiAgentEnv, StateError, WorldPool
from joltgym_marl.registry import GAMES, SINGLE_AGENT_TASKS

WORLDS = 2


@dataclass
class Entry:
    """How to drive one entry point with one action array."""

    id: str
    make: Callable[[], Any]
    reset: Callable[[Any, int | None], Any]
    step: Callable[[Any, np.ndarray], Any]  # returns (obs, rewards, ...)
    action_shape: Callable[[Any], tuple]
    states: Callable[[Any], list]  # copies of every world's (qpos, qvel)
    close: Callable[[Any], None] | None
    before_reset: str  # the message (regex) of a step before reset
    closed: str = "is closed"
    usable_after_close: bool = False  # Gymnasium's MujocoEnv: close() releases the renderer only


def _pool_states(pool) -> list:
    return [pool.get_state(i) for i in range(pool.num_envs)]


def _single_agent_entries(spec) -> list[Entry]:
    core_cls = CORES[spec.name]
    never = "called before reset"
    return [
        Entry(f"{spec.core_class}", lambda: core_cls(), lambda e, s: e.reset(seed=s), lambda e, a: e.step(a),
              lambda e: (e.act_dim,), lambda e: [e.get_state()], None, never),
        Entry(f"{spec.env_id}:env", lambda: gymnasium.make(spec.env_id, disable_env_checker=True).unwrapped,
              lambda e, s: e.reset(seed=s), lambda e, a: e.step(a), lambda e: e.action_space.shape,
              lambda e: [e.get_state()], lambda e: e.close(), never, usable_after_close=True),
        Entry(f"{spec.env_id}:vector", lambda: gymnasium.make_vec(spec.env_id, num_envs=WORLDS, num_threads=2,
                                                                  vectorization_mode="vector_entry_point"),
              lambda e, s: e.reset(seed=s), lambda e, a: e.step(a), lambda e: e.action_space.shape,
              lambda e: _pool_states(e.unwrapped.pool), lambda e: e.close(), never),
        Entry(f"{spec.name}:pool", lambda: WorldPool(spec.name, WORLDS, num_threads=2),
              lambda e, s: e.reset_all(seed=s), lambda e, a: tuple(x.copy() for x in e.step_all(a)),
              lambda e: (e.num_envs, e.act_dim), _pool_states, lambda e: e.close(), never),
    ]


def _game_entries(spec) -> list[Entry]:
    module = MULTI_AGENT_ENVS[spec.module_name]

    def parallel_step(env, actions):
        return env.step({agent: actions[i] for i, agent in enumerate(env.possible_agents)})

    def parallel_shape(env):
        return (len(env.possible_agents), *env.action_space(env.possible_agents[0]).shape)

    never = "called before reset"
    return [
        Entry(f"{spec.module_name}:parallel_env", lambda: module.parallel_env(), lambda e, s: e.reset(seed=s),
              parallel_step, parallel_shape, lambda e: [e.world.get_state()], lambda e: e.close(),
              "called with no live agents; expected reset"),
        Entry(f"{spec.module_name}:MultiAgentEnv", lambda: MultiAgentEnv(spec.name), lambda e, s: e.reset(seed=s),
              lambda e, a: e.step(a), lambda e: (e.num_agents, e.act_dim), lambda e: [e.get_state()], None, never),
        Entry(f"{spec.module_name}:pool", lambda: WorldPool(spec.name, WORLDS, num_threads=2),
              lambda e, s: e.reset_all(seed=s), lambda e, a: tuple(x.copy() for x in e.step_all(a)),
              lambda e: (e.num_envs, e.num_agents, e.act_dim), _pool_states, lambda e: e.close(), never),
        Entry(f"{spec.module_name}:vec_env", lambda: module.vec_env(WORLDS, num_threads=2),
              lambda e, s: e.reset(seed=s), lambda e, a: e.step(a)[:4], lambda e: e.action_space.shape[:0] + (
                  e.num_envs, *e.single_action_space.shape), lambda e: _pool_states(e.pool), lambda e: e.close(), never),
    ]


ENTRIES = [entry for spec in SINGLE_AGENT_TASKS for entry in _single_agent_entries(spec)] + [
    entry for spec in GAMES for entry in _game_entries(spec)]
ENTRY_PARAMS = [pytest.param(entry, id=entry.id) for entry in ENTRIES]


def _actions(env, entry: Entry, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).uniform(-0.5, 0.5, entry.action_shape(env)).astype(np.float32)


def _assert_same(a, b, where: str) -> None:
    """Structural equality of step/reset outputs (arrays, dicts, tuples, scalars)."""
    if isinstance(a, dict):
        assert set(a) == set(b), where
        for key in a:
            _assert_same(a[key], b[key], f"{where}[{key!r}]")
    elif isinstance(a, Sequence) and not isinstance(a, str):  # tuples, lists, AgentInfos
        assert len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b)):
            _assert_same(x, y, f"{where}[{i}]")
    elif isinstance(a, np.ndarray) and a.dtype == object:
        assert len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b)):
            _assert_same(x, y, f"{where}[{i}]")
    elif isinstance(a, (np.ndarray, float, int, np.number)):
        np.testing.assert_array_equal(a, b, err_msg=where)
    else:
        assert a == b, where


def _assert_states_equal(before: list, after: list) -> None:
    for (qpos, qvel), (now_qpos, now_qvel) in zip(before, after):
        np.testing.assert_array_equal(now_qpos, qpos)
        np.testing.assert_array_equal(now_qvel, qvel)


def _closing(*envs):
    class _Closer:
        def __enter__(self):
            return envs

        def __exit__(self, *exc):
            for env in envs:
                close = getattr(env, "close", None)
                if close is not None:
                    close()

    return _Closer()


@pytest.mark.parametrize("entry", ENTRY_PARAMS)
def test_step_before_reset(entry):
    env = entry.make()
    with _closing(env):
        before = entry.states(env)
        with pytest.raises(RuntimeError, match=re.escape(entry.before_reset)) as caught:
            entry.step(env, _actions(env, entry, 0))
        if entry.before_reset != "called with no live agents; expected reset":
            assert isinstance(caught.value, StateError)
        _assert_states_equal(before, entry.states(env))


BAD_ACTIONS = {
    "shape": (lambda a: a[..., :-1], ValueError, r"should have shape \("),
    "int-dtype": (lambda a: a.astype(np.int32), TypeError, r"floating-point dtype .* got int32"),
    "nan": (lambda a: np.where(np.arange(a.size).reshape(a.shape) == a.size - 1, np.nan, a).astype(np.float32),
            ValueError, r"should be finite, got nan at index"),
}


@pytest.mark.parametrize("bad", list(BAD_ACTIONS))
@pytest.mark.parametrize("entry", ENTRY_PARAMS)
def test_bad_actions_raise_and_leave_the_worlds_unchanged(entry, bad):
    make_bad, exc, message = BAD_ACTIONS[bad]
    env, twin = entry.make(), entry.make()
    with _closing(env, twin):
        entry.reset(env, 3)
        entry.reset(twin, 3)
        good = _actions(env, entry, 1)
        _assert_same(entry.step(env, good), entry.step(twin, good), "warm-up step")
        before = entry.states(env)
        with pytest.raises(exc, match=message):
            entry.step(env, make_bad(_actions(env, entry, 2)))
        _assert_states_equal(before, entry.states(env))
        good = _actions(env, entry, 3)
        _assert_same(entry.step(env, good), entry.step(twin, good), "step after the bad call")


@pytest.mark.parametrize("entry", [p for p in ENTRY_PARAMS
                                   if p.values[0].close is not None and not p.values[0].usable_after_close])
def test_closed_envs_refuse_to_step_or_reset(entry):
    env = entry.make()
    entry.reset(env, 0)
    actions = _actions(env, entry, 0)
    entry.close(env)
    for call in (lambda: entry.step(env, actions), lambda: entry.reset(env, 0)):
        with pytest.raises(RuntimeError, match=entry.closed) as caught:
            call()
        assert isinstance(caught.value, StateError)
    entry.close(env)  # idempotent


@pytest.mark.parametrize("entry", [p for p in ENTRY_PARAMS if p.values[0].usable_after_close])
def test_closed_gymnasium_envs_stay_usable(entry):
    """As Gymnasium's MuJoCo envs (whose own test suite reuses closed envs)."""
    env, twin = entry.make(), entry.make()
    entry.reset(env, 0)
    entry.close(env)
    entry.close(env)  # idempotent
    _assert_same(entry.reset(env, 3), entry.reset(twin, 3), "reset after close")
    actions = _actions(env, entry, 0)
    _assert_same(entry.step(env, actions), entry.step(twin, actions), "step after close")


@pytest.mark.parametrize("dumps, loads", [(pickle.dumps, pickle.loads), (cloudpickle.dumps, cloudpickle.loads)],
                         ids=["pickle", "cloudpickle"])
@pytest.mark.parametrize("entry", ENTRY_PARAMS)
def test_pickled_envs_are_recreated_equal(entry, dumps, loads):
    env = entry.make()
    copy = loads(dumps(env))
    with _closing(env, copy):
        assert type(copy) is type(env)
        _assert_same(entry.reset(copy, 11), entry.reset(env, 11), "reset")
        actions = _actions(env, entry, 5)
        _assert_same(entry.step(copy, actions), entry.step(env, actions), "step")


@pytest.mark.parametrize("entry", ENTRY_PARAMS)
def test_same_seed_same_rollout_other_seed_other_rollout(entry):
    def rollout(seed):
        env = entry.make()
        with _closing(env):
            outputs = [entry.reset(env, seed)]
            for t in range(5):
                outputs.append(entry.step(env, _actions(env, entry, t)))
            return outputs, entry.states(env)

    first, first_states = rollout(21)
    again, again_states = rollout(21)
    _assert_same(first, again, "same seed")
    _assert_states_equal(first_states, again_states)
    _, other_states = rollout(22)
    assert any(not np.array_equal(a[0], b[0]) or not np.array_equal(a[1], b[1])
               for a, b in zip(first_states, other_states)), "another seed gave the same states"


@IGNORE_INFINITE_BOX
@IGNORE_ACTION_SCALE
@pytest.mark.parametrize("spec", [pytest.param(s, id=s.env_id) for s in SINGLE_AGENT_TASKS])
def test_gymnasium_check_env(spec):
    from gymnasium.utils.env_checker import check_env

    env = gymnasium.make(spec.env_id)
    try:
        check_env(env.unwrapped, skip_render_check=True)
    finally:
        env.close()


def test_the_table_covers_every_registered_task():
    covered = {entry.id.split(":")[0] for entry in ENTRIES}
    for spec in joltgym_marl.TASKS.values():
        assert {spec.core_class, spec.env_id} & covered or spec.module_name in covered, spec.name
