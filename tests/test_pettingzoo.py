"""PettingZoo conformance of every registered multi-agent env, the module
conventions, and bad input at every entry point.

The conformance and convention tests run over
``joltgym_marl.envs.MULTI_AGENT_ENVS``: a new game is covered by being
registered there. Bad input is checked with pinned messages, and after each
rejected call the world must be exactly as before (its qpos/qvel, its step
count, its live agents) and the next valid step must equal an untouched twin's.
"""

from __future__ import annotations

import functools
import importlib
import pickle
import re
import types

import cloudpickle
import numpy as np
import pytest
from gymnasium import spaces
from numpy.testing import assert_array_equal
from pettingzoo import AECEnv, ParallelEnv
from pettingzoo.test import (
    api_test,
    max_cycles_test,
    parallel_api_test,
    parallel_seed_test,
    seed_test,
    state_test,
)

import joltgym_marl
from joltgym_marl import MultiAgentEnv, StateError, WorldPool, cheetah_race_v0
from joltgym_marl.envs import MULTI_AGENT_ENVS
from joltgym_marl.registry import TASKS

# PettingZoo's checkers warn that an unbounded Box is "probably too low/high";
# MuJoCo locomotion observations (and our global state) are unbounded.
IGNORE_INFINITE_OBS_LOW = pytest.mark.filterwarnings(
    "ignore:Agent's minimum observation space value is -infinity:UserWarning")
IGNORE_INFINITE_OBS_HIGH = pytest.mark.filterwarnings(
    "ignore:Agent's maximum observation space value is infinity:UserWarning")
IGNORE_INFINITE_STATE_LOW = pytest.mark.filterwarnings(
    "ignore:Environment's minimum state space value is -infinity:UserWarning")
IGNORE_INFINITE_STATE_HIGH = pytest.mark.filterwarnings(
    "ignore:Environment's maximum state space value is infinity:UserWarning")

# Extra configurations of particular games; the default configuration of every
# registered game is always tested.
EXTRA_VARIANTS = {
    "cheetah_race_v0": {
        "3-shared_track": dict(num_agents=3, layout="shared_track"),
        "1-finish_line": dict(num_agents=1, finish_line=0.3, max_cycles=400),
    },
    "sumo_v0": {"humanoid": dict(robot="humanoid"), "drawn_ring": dict(ring_radius=None),
                "gym_compete": dict(form="gym_compete"),
                "gym_compete-humanoid": dict(form="gym_compete", robot="humanoid")},
    "run_to_goal_v0": {"humanoid": dict(robot="humanoid"), "gym_compete": dict(form="gym_compete"),
                       "gym_compete-humanoid": dict(form="gym_compete", robot="humanoid")},
    "you_shall_not_pass_v0": {"gym_compete": dict(form="gym_compete")},
    "kick_and_defend_v0": {"gym_compete": dict(form="gym_compete")},
}


def _variants(include=lambda kw: True):
    out = []
    for name, module in MULTI_AGENT_ENVS.items():
        out.append(pytest.param(module, {}, id=name))
        spec = next(s for s in TASKS.values() if s.env_id == name)
        if "jolt" in spec.engines:  # every game that runs on Jolt is tested on it too
            out.append(pytest.param(module, {"engine": "jolt"}, id=f"{name}-jolt"))
        for label, kw in EXTRA_VARIANTS.get(name, {}).items():
            if include(kw):
                out.append(pytest.param(module, kw, id=f"{name}-{label}"))
    return out


VARIANTS = _variants()
# max_cycles_test expects the episode to last exactly max_cycles: no finish line.
VARIANTS_WITHOUT_FINISH = _variants(lambda kw: "finish_line" not in kw)
NAMED_MODULES = [pytest.param(name, module, id=name) for name, module in MULTI_AGENT_ENVS.items()]

GAME = "cheetah_race"
CHEETAH_PARAMS = ("num_agents, layout, lane_spacing, start_spacing, finish_line, finish_bonus, "
                  "forward_reward_weight, ctrl_cost_weight, reset_noise_scale, frame_skip, xml_file, "
                  "arena_file, engine, jolt_substeps, jolt_velocity_iterations, jolt_position_iterations")
NO_LIVE_AGENTS = "step() called with no live agents; expected reset() first (the episode has ended or never started)"


# -- helpers ---------------------------------------------------------------------


def random_actions(env, rng) -> dict[str, np.ndarray]:
    return {a: rng.uniform(-1, 1, size=env.action_space(a).shape).astype(np.float32) for a in env.agents}


def snapshot(env):
    qpos, qvel = env.world.get_state()
    return qpos, qvel, env.world.elapsed_steps, list(env.agents)


def assert_unchanged(env, snap) -> None:
    qpos, qvel, elapsed, agents = snap
    now_qpos, now_qvel = env.world.get_state()
    assert_array_equal(now_qpos, qpos)
    assert_array_equal(now_qvel, qvel)
    assert env.world.elapsed_steps == elapsed
    assert env.agents == agents


def assert_same_data(a, b, where: str = "") -> None:
    """Exact equality of nested dicts / tuples / arrays / scalars, types included."""
    assert type(a) is type(b), (where, type(a), type(b))
    if isinstance(a, dict):
        assert list(a) == list(b), where
        for key in a:
            assert_same_data(a[key], b[key], f"{where}[{key!r}]")
    elif isinstance(a, (tuple, list)):
        assert len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b)):
            assert_same_data(x, y, f"{where}[{i}]")
    elif isinstance(a, np.ndarray):
        assert a.dtype == b.dtype and a.shape == b.shape, where
        assert_array_equal(a, b, err_msg=where)
    else:
        assert a == b or (a != a and b != b), (where, a, b)


def game_of(module) -> str:
    return module.parallel_env().world.game


def allowed_params(game: str) -> str:
    return ", ".join(p["name"] for p in joltgym_marl._core.tasks()[game]["params"])


# -- PettingZoo's own test suite ----------------------------------------------------------


@pytest.mark.parametrize("module, kw", VARIANTS)
def test_parallel_api_test(module, kw):
    parallel_api_test(module.parallel_env(**kw), num_cycles=1000)


@pytest.mark.parametrize("module, kw", VARIANTS)
@IGNORE_INFINITE_OBS_LOW
@IGNORE_INFINITE_OBS_HIGH
def test_api_test(module, kw):
    api_test(module.env(**kw), num_cycles=1000)


@pytest.mark.parametrize("module, kw", VARIANTS)
def test_parallel_seed_test(module, kw):
    # (PettingZoo's parallel check stops after one step, `any(terminations1)` being over the
    # dict's keys; test_reset_with_a_seed_is_reproducible below compares whole rollouts.)
    parallel_seed_test(functools.partial(module.parallel_env, **kw))


@pytest.mark.parametrize("module, kw", VARIANTS)
def test_seed_test(module, kw):
    seed_test(functools.partial(module.env, **kw))


def seeded(make, default_seed: int = 0):
    """``make(**kwargs)``'s env with its unseeded resets seeded ``default_seed`` and its
    action spaces seeded: PettingZoo's max_cycles_test resets and samples
    without seeds, and some games can end early by chance (a kick-and-defend
    ball sent back at the first step, about 1 episode in 600)."""
    def factory(**kwargs):
        env = make(**kwargs)
        reset = env.reset

        def seeded_reset(seed=None, options=None):
            return reset(seed=default_seed if seed is None else seed, options=options)

        env.reset = seeded_reset
        for k, agent in enumerate(env.possible_agents):
            env.action_space(agent).seed(default_seed + k)
        return env
    return factory


@pytest.mark.parametrize("module, kw", VARIANTS_WITHOUT_FINISH)
def test_max_cycles_test(module, kw):
    shim = types.SimpleNamespace(parallel_env=seeded(functools.partial(module.parallel_env, **kw)),
                                 env=seeded(functools.partial(module.env, **kw)))
    max_cycles_test(shim)


@pytest.mark.parametrize("module, kw", VARIANTS)
@IGNORE_INFINITE_STATE_LOW
@IGNORE_INFINITE_STATE_HIGH
def test_state_test(module, kw):
    state_test(module.env(**kw), module.parallel_env(**kw))


# -- module conventions ---------------------------------------------------------------


@pytest.mark.parametrize("name, module", NAMED_MODULES)
def test_module_is_importable_by_its_name(name, module):
    assert getattr(joltgym_marl, name) is module
    assert importlib.import_module(f"joltgym_marl.envs.{name}") is module
    exec(f"from joltgym_marl import {name} as imported", namespace := {})
    assert namespace["imported"] is module
    for constructor in ["parallel_env", "env", "raw_env"]:
        assert callable(getattr(module, constructor)), constructor
    assert isinstance(module.parallel_env(), ParallelEnv)
    assert isinstance(module.env(), AECEnv)
    assert isinstance(module.raw_env(), AECEnv)


def test_cheetah_race_import_from_the_package():
    from joltgym_marl import cheetah_race_v0 as imported

    assert imported is cheetah_race_v0 is MULTI_AGENT_ENVS["cheetah_race_v0"]
    assert callable(imported.vec_env)


@pytest.mark.parametrize("name, module", NAMED_MODULES)
def test_metadata(name, module):
    par = module.parallel_env()
    for env in [par, module.env(), module.raw_env()]:
        assert env.metadata["name"] == name
        assert env.metadata["is_parallelizable"] is True
        assert isinstance(env.metadata["render_modes"], list)
    assert str(module.env()) == name
    fps = par.metadata["render_fps"]
    assert isinstance(fps, int) and fps == round(1.0 / par.world.dt)
    assert par.render_mode is None
    with pytest.warns(UserWarning, match="without specifying any render mode"):  # as PettingZoo's envs
        assert par.render() is None
    # The class-level metadata is not mutated by instances.
    assert "render_fps" not in type(par).metadata


@pytest.mark.parametrize("name, module", NAMED_MODULES)
def test_render_modes(name, module):
    for mode in [None, *module.parallel_env().metadata["render_modes"]]:
        assert module.parallel_env(render_mode=mode).render_mode == mode
        module.env(render_mode=mode)
    assert "rgb_array" in module.parallel_env().metadata["render_modes"]
    for mode in ["ansi", "rgb", "depth_array"]:
        message = f"render_mode should be None, 'rgb_array' or 'human', got {mode!r}"
        for constructor in [module.parallel_env, module.env, module.raw_env]:
            with pytest.raises(ValueError, match=re.escape(message)):
                constructor(render_mode=mode)


@pytest.mark.parametrize("module, kw", VARIANTS)
def test_agents_and_spaces(module, kw):
    env = module.parallel_env(**kw)
    n = env.world.num_agents
    prefix = env.agent_prefix  # the class default, or the one the parameters chose (sumo robot)
    # Games with roles name their agents (walker, blocker); the others are "<prefix>_<k>".
    assert env.possible_agents == (list(env.world.agent_names) or [f"{prefix}_{i}" for i in range(n)])
    assert env.max_num_agents == n
    assert env.agents == []
    obs, infos = env.reset(seed=0)
    assert env.agents == env.possible_agents and env.agents is not env.possible_agents
    assert env.num_agents == n
    assert list(obs) == list(infos) == env.possible_agents
    obs_space = env.observation_space(env.possible_agents[0])
    act_space = env.action_space(env.possible_agents[0])
    assert isinstance(obs_space, spaces.Box) and isinstance(act_space, spaces.Box)
    assert obs_space.shape == (env.world.obs_dim,) and obs_space.dtype == np.float32
    assert act_space.shape == (env.world.act_dim,) and act_space.dtype == np.float32
    aec = module.env(**kw)
    aec.reset(seed=0)
    for agent in env.possible_agents:
        # One object for every agent and every call (PettingZoo's seeding relies on it).
        assert env.observation_space(agent) is obs_space is env.observation_spaces[agent]
        assert env.action_space(agent) is act_space is env.action_spaces[agent]
        assert env.observation_space(agent) is env.observation_space(agent)
        assert aec.observation_space(agent) is aec.observation_space(agent)
        assert aec.action_space(agent) is aec.action_space(agent)
        assert obs[agent].dtype == np.float32 and obs_space.contains(obs[agent])
    rng = np.random.default_rng(0)
    obs, rewards, terms, truncs, infos = env.step(random_actions(env, rng))
    env.reset(seed=1)
    assert env.observation_space(env.possible_agents[-1]) is obs_space
    assert env.action_space(env.possible_agents[-1]) is act_space
    for agent in env.possible_agents:
        assert obs_space.contains(obs[agent])
        assert type(rewards[agent]) is float
        assert type(terms[agent]) is bool and type(truncs[agent]) is bool
        assert isinstance(infos[agent], dict)


@pytest.mark.parametrize("n", [1, 2, 5, 8])
def test_cheetah_agent_names(n):
    env = cheetah_race_v0.parallel_env(num_agents=n)
    assert env.possible_agents == [f"cheetah_{i}" for i in range(n)]
    aec = cheetah_race_v0.env(num_agents=n)
    aec.reset(seed=0)
    assert aec.possible_agents == env.possible_agents == aec.agents
    assert aec.agent_selection == "cheetah_0"
    assert env.observation_space("cheetah_0").shape == (17 + 2 * (n - 1),)


@pytest.mark.parametrize("module, kw", VARIANTS)
def test_state(module, kw):
    env = module.parallel_env(**kw)
    env.reset(seed=3)
    rng = np.random.default_rng(3)
    for _ in range(3):
        state = env.state()
        assert isinstance(state, np.ndarray) and state.dtype == np.float32
        assert state.shape == env.state_space.shape
        assert env.state_space.contains(state)
        qpos, qvel = env.world.get_state()
        assert_array_equal(state, np.concatenate([qpos, qvel]).astype(np.float32))
        env.step(random_actions(env, rng))
    aec = module.env(**kw)
    aec.reset(seed=3)
    assert aec.state().shape == aec.state_space.shape


@pytest.mark.parametrize("module, kw", VARIANTS)
def test_reset_with_a_seed_is_reproducible(module, kw):
    def rollout(env, seed, steps=40):
        out = [env.reset(seed=seed)]
        rng = np.random.default_rng(seed)
        for _ in range(steps):
            if not env.agents:
                break
            out.append(env.step(random_actions(env, rng)))
        return out

    a, b = module.parallel_env(**kw), module.parallel_env(**kw)
    first = rollout(a, 5)
    assert_same_data(first, rollout(b, 5), "second env")
    assert_same_data(first, rollout(a, 5), "same env, reset again")
    other = rollout(b, 6)
    assert not np.array_equal(first[0][0][a.possible_agents[0]], other[0][0][a.possible_agents[0]])
    # An unseeded reset continues the seeded stream: reproducible, but a new episode.
    a.reset(seed=9)
    b.reset(seed=9)
    obs_a, _ = a.reset()
    obs_b, _ = b.reset()
    assert_same_data(obs_a, obs_b)
    assert not np.array_equal(obs_a[a.possible_agents[0]], a.reset(seed=9)[0][a.possible_agents[0]])
    # The AEC env follows the same seeds.
    aec = module.env(**kw)
    aec.reset(seed=5)
    for agent in aec.possible_agents:
        assert_array_equal(aec.observe(agent), first[0][0][agent])


@pytest.mark.parametrize("dumps, loads", [(pickle.dumps, pickle.loads), (cloudpickle.dumps, cloudpickle.loads)],
                         ids=["pickle", "cloudpickle"])
@pytest.mark.parametrize("module, kw", VARIANTS)
def test_pickling(module, kw, dumps, loads):
    kw = dict(kw, max_cycles=kw.get("max_cycles", 17))
    par = module.parallel_env(**kw)
    copy = loads(dumps(par))
    assert type(copy) is type(par)
    assert copy.possible_agents == par.possible_agents and copy.max_cycles == par.max_cycles
    assert copy.world.kwargs == par.world.kwargs and copy.world.max_cycles == par.world.max_cycles
    assert_same_data(copy.reset(seed=4), par.reset(seed=4))
    rng = np.random.default_rng(0)
    actions = random_actions(par, rng)
    assert_same_data(copy.step(actions), par.step(actions))
    # A pickled env comes back as a new env of the same configuration (no live episode).
    again = loads(dumps(par))
    assert again.agents == []
    assert_same_data(again.reset(seed=4)[0], par.reset(seed=4)[0])

    aec = module.env(**kw)
    aec_copy = loads(dumps(aec))
    assert type(aec_copy) is type(aec) and type(aec_copy.unwrapped) is type(aec.unwrapped)
    aec.reset(seed=8)
    aec_copy.reset(seed=8)
    for _ in range(2 * len(aec.possible_agents)):
        assert aec.agent_selection == aec_copy.agent_selection
        assert_same_data(aec.last(), aec_copy.last())
        action = np.full(aec.action_space(aec.agent_selection).shape, 0.25, dtype=np.float32)
        aec.step(action)
        aec_copy.step(action)
    raw_copy = loads(dumps(module.raw_env(**kw)))
    assert raw_copy.possible_agents == par.possible_agents


# -- bad input: construction ---------------------------------------------------------------


CONSTRUCTORS = {
    "parallel_env": ("MultiAgentEnv", lambda **kw: cheetah_race_v0.parallel_env(**kw)),
    "env": ("MultiAgentEnv", lambda **kw: cheetah_race_v0.env(**kw)),
    "raw_env": ("MultiAgentEnv", lambda **kw: cheetah_race_v0.raw_env(**kw)),
    "vec_env": ("WorldPool", lambda **kw: cheetah_race_v0.vec_env(2, **kw)),
    "vec_env-sb3": ("WorldPool", lambda **kw: cheetah_race_v0.vec_env(2, base_class="stable_baselines3", **kw)),
    "MultiAgentEnv": ("MultiAgentEnv", lambda **kw: MultiAgentEnv(GAME, **kw)),
    "WorldPool": ("WorldPool", lambda **kw: WorldPool(GAME, 2, **kw)),
}
BAD_KWARGS = [
    pytest.param(dict(num_agents=0), ValueError, "num_agents should be in [1, 8], got 0", id="num_agents=0"),
    pytest.param(dict(num_agents=9), ValueError, "num_agents should be in [1, 8], got 9", id="num_agents=9"),
    pytest.param(dict(num_agents=-3), ValueError, "num_agents should be in [1, 8], got -3", id="num_agents=-3"),
    pytest.param(dict(num_agents=2.5), TypeError, "num_agents should be an int, got float 2.5", id="num_agents=2.5"),
    pytest.param(dict(num_agents=True), TypeError, "num_agents should be an int, got bool True", id="num_agents=True"),
    pytest.param(dict(num_agents="2"), TypeError, "num_agents should be an int, got str '2'", id="num_agents='2'"),
    pytest.param(dict(layout="circle"), ValueError, "layout should be 'lanes' or 'shared_track', got 'circle'",
                 id="layout"),
    pytest.param(dict(layout="Lanes"), ValueError, "layout should be 'lanes' or 'shared_track', got 'Lanes'",
                 id="layout-case"),
    pytest.param(dict(finish_line=0.0), ValueError, "finish_line should be > 0 metres or None, got 0.0",
                 id="finish_line"),
    pytest.param(dict(start_spacing=0.0), ValueError, "lane_spacing and start_spacing should be > 0",
                 id="start_spacing"),
    pytest.param(dict(warp_speed=9), TypeError,
                 "{owner}('cheetah_race') got an unexpected keyword argument 'warp_speed'; allowed: " + CHEETAH_PARAMS,
                 id="unknown-kwarg"),
]


@pytest.mark.parametrize("kw, exc, message", BAD_KWARGS)
@pytest.mark.parametrize("entry", list(CONSTRUCTORS))
def test_bad_construction_arguments(entry, kw, exc, message):
    owner, make = CONSTRUCTORS[entry]
    with pytest.raises(exc, match=re.escape(message.format(owner=owner)) + "$"):
        make(**kw)


@pytest.mark.parametrize("name, module", NAMED_MODULES)
def test_unknown_kwargs_list_the_allowed_names_for_every_game(name, module):
    game = game_of(module)
    message = (f"MultiAgentEnv('{game}') got an unexpected keyword argument 'warp_speed'; "
               f"allowed: {allowed_params(game)}")
    for constructor in [module.parallel_env, module.env, module.raw_env]:
        with pytest.raises(TypeError, match=re.escape(message) + "$"):
            constructor(warp_speed=1)


def test_cheetah_race_parameters_are_the_documented_ones():
    assert allowed_params(GAME) == CHEETAH_PARAMS


@pytest.mark.parametrize("entry", ["parallel_env", "env", "raw_env", "MultiAgentEnv"])
@pytest.mark.parametrize("value, exc, message", [
    (0, ValueError, "max_cycles should be >= 1, got 0"),
    (-5, ValueError, "max_cycles should be >= 1, got -5"),
    (2.0, TypeError, "max_cycles should be an int, got float 2.0"),
], ids=["0", "-5", "2.0"])
def test_bad_max_cycles(entry, value, exc, message):
    with pytest.raises(exc, match=re.escape(message) + "$"):
        CONSTRUCTORS[entry][1](max_cycles=value)


@pytest.mark.parametrize("entry", ["vec_env", "vec_env-sb3"])
@pytest.mark.parametrize("value, exc, message", [
    (0, ValueError, "max_cycles should be >= 1, got 0"),
    (-1, ValueError, "max_cycles should be >= 1, got -1"),
    (2.0, TypeError, "max_cycles should be an int or None, got float 2.0"),
    (True, TypeError, "max_cycles should be an int or None, got bool True"),
], ids=["0", "-1", "2.0", "True"])
def test_bad_max_cycles_in_the_vector_env(entry, value, exc, message):
    """The same rule as the PettingZoo env's max_cycles (the pool alone would take 0 as "no limit")."""
    with pytest.raises(exc, match=re.escape(message) + "$"):
        CONSTRUCTORS[entry][1](max_cycles=value)


def test_no_max_cycles_means_no_truncation():
    env = cheetah_race_v0.vec_env(2, num_agents=2, max_cycles=None)
    assert env.pool.max_episode_steps == 0
    assert cheetah_race_v0.parallel_env(max_cycles=None).world.max_cycles == 0


def test_unknown_base_class():
    with pytest.raises(ValueError, match=re.escape(
            "base_class should be 'gymnasium' or 'stable_baselines3', got 'rllib'")):
        cheetah_race_v0.vec_env(2, base_class="rllib")


# -- bad input: the parallel env's step ------------------------------------------------------


def _with(agent, value):
    return lambda good: {**good, agent: value}


def _nan_at(agent, index, value=np.nan, dtype=np.float32):
    def make(good):
        action = np.array(good[agent], dtype=dtype)
        action[index] = value
        return {**good, agent: action}
    return make


AGENTS_3 = "['cheetah_0', 'cheetah_1', 'cheetah_2']"
STEP_CASES = [
    pytest.param(_with("cheetah_9", np.zeros(6, np.float32)), KeyError,
                 f"unknown agent(s) ['cheetah_9'] in actions; expected agents {AGENTS_3}", id="unknown-agent"),
    pytest.param(_with(0, np.zeros(6, np.float32)), KeyError,
                 f"unknown agent(s) [0] in actions; expected agents {AGENTS_3}", id="non-string-agent"),
    pytest.param(lambda good: {a: v for a, v in good.items() if a != "cheetah_1"}, KeyError,
                 f"actions are missing agent(s) ['cheetah_1']; expected one action for each of {AGENTS_3}",
                 id="missing-agent"),
    pytest.param(lambda good: {}, KeyError,
                 f"actions are missing agent(s) {AGENTS_3}; expected one action for each of {AGENTS_3}",
                 id="no-actions"),
    pytest.param(_with("cheetah_1", np.zeros(5, np.float32)), ValueError,
                 "action of cheetah_1 should have shape (6,), got (5,)", id="short-action"),
    pytest.param(_with("cheetah_1", np.zeros(7)), ValueError,
                 "action of cheetah_1 should have shape (6,), got (7,)", id="long-action"),
    pytest.param(_with("cheetah_0", np.zeros((1, 6), np.float32)), ValueError,
                 "action of cheetah_0 should have shape (6,), got (1, 6)", id="batched-action"),
    pytest.param(_with("cheetah_2", 0.5), ValueError,
                 "action of cheetah_2 should have shape (6,), got ()", id="scalar-action"),
    pytest.param(_with("cheetah_2", np.zeros(6, np.int64)), TypeError,
                 "action of cheetah_2 should have a floating-point dtype (float32 or float64), got int64",
                 id="int-action"),
    pytest.param(_with("cheetah_2", [0, 1, 0, 1, 0, 1]), TypeError,
                 "action of cheetah_2 should have a floating-point dtype (float32 or float64), got int64",
                 id="int-list-action"),
    pytest.param(_with("cheetah_0", np.zeros(6, bool)), TypeError,
                 "action of cheetah_0 should have a floating-point dtype (float32 or float64), got bool",
                 id="bool-action"),
    pytest.param(_with("cheetah_0", np.zeros(6, np.complex64)), TypeError,
                 "action of cheetah_0 should have a floating-point dtype (float32 or float64), got complex64",
                 id="complex-action"),
    pytest.param(_with("cheetah_0", None), TypeError,
                 "action of cheetah_0 should have a floating-point dtype (float32 or float64), got object",
                 id="none-action"),
    pytest.param(_nan_at("cheetah_1", 4), ValueError, "action of cheetah_1 should be finite, got nan at index (4,)",
                 id="nan"),
    pytest.param(_nan_at("cheetah_2", 0, np.inf, np.float64), ValueError,
                 "action of cheetah_2 should be finite, got inf at index (0,)", id="inf-float64"),
    pytest.param(_nan_at("cheetah_0", 5, -np.inf), ValueError,
                 "action of cheetah_0 should be finite, got -inf at index (5,)", id="minus-inf"),
    pytest.param(lambda good: _nan_at("cheetah_2", 0)(_nan_at("cheetah_1", 3)(good)), ValueError,
                 "action of cheetah_1 should be finite, got nan at index (3,)", id="first-nan-reported"),
    pytest.param(_with("cheetah_1", [[0.0] * 6, [0.0] * 5]), TypeError,
                 "action of cheetah_1 should be a float32 array of shape (6,), got list", id="ragged-action"),
    pytest.param(lambda good: list(good.values()), TypeError,
                 "actions should be a dict of agent name -> action, got list", id="list-of-actions"),
    pytest.param(lambda good: np.stack(list(good.values())), TypeError,
                 "actions should be a dict of agent name -> action, got ndarray", id="array-of-actions"),
]


@pytest.fixture
def race_pair():
    """Two identical 3-agent shared-track races, reset with one seed and stepped once alike."""
    envs = [cheetah_race_v0.parallel_env(num_agents=3, layout="shared_track", max_cycles=50) for _ in range(2)]
    rng = np.random.default_rng(0)
    for env in envs:
        env.reset(seed=21)
    actions = random_actions(envs[0], rng)
    for env in envs:
        env.step(actions)
    return envs


@pytest.mark.parametrize("make_bad, exc, message", STEP_CASES)
def test_parallel_step_rejects_bad_actions_and_leaves_the_world_unchanged(race_pair, make_bad, exc, message):
    env, twin = race_pair
    good = random_actions(env, np.random.default_rng(1))
    snap = snapshot(env)
    with pytest.raises(exc, match=re.escape(message)):
        env.step(make_bad(good))
    assert_unchanged(env, snap)
    assert_same_data(env.step(good), twin.step(good))
    assert_same_data(env.state(), twin.state())


@pytest.mark.parametrize("value, shown", [(1e300, "1e+300"), (-3.5e38, "-3.5e+38")])
def test_parallel_step_rejects_float64_beyond_float32_range_like_the_native_step(race_pair, value, shown):
    """A finite float64 beyond float32's range is named as given (no NumPy cast to inf, no
    overflow RuntimeWarning, which the warnings-as-errors config would turn into an error)."""
    env, twin = race_pair
    good = random_actions(env, np.random.default_rng(1))
    snap = snapshot(env)
    expected = f"action of cheetah_1 should be finite, got {shown} at index (2,) (out of float32 range)"
    with pytest.raises(ValueError, match=re.escape(expected)):
        env.step(_nan_at("cheetah_1", 2, value, np.float64)(good))
    assert_unchanged(env, snap)
    assert_same_data(env.step(good), twin.step(good))


def test_parallel_step_float64_actions_act_as_their_float32_rounding(race_pair):
    env, twin = race_pair
    rng = np.random.default_rng(5)
    wide = {a: rng.uniform(-1, 1, size=6) for a in env.agents}
    narrow = {a: v.astype(np.float32) for a, v in wide.items()}
    assert_same_data(env.step(wide), twin.step(narrow))


def test_native_step_message_for_float64_beyond_float32_range():
    world = MultiAgentEnv(GAME, num_agents=3)
    world.reset(seed=0)
    actions = np.zeros((3, 6))
    actions[1, 2] = 1e300
    with pytest.raises(ValueError, match=re.escape(
            "actions should be finite, got 1e+300 at index (1, 2) (out of float32 range)")):
        world.step(actions)


def test_parallel_step_after_the_episode_ended():
    env, twin = (cheetah_race_v0.parallel_env(num_agents=2, max_cycles=3) for _ in range(2))
    rng = np.random.default_rng(0)
    for e in (env, twin):
        e.reset(seed=3)
    for _ in range(3):
        actions = random_actions(env, rng)
        out = env.step(actions)
        twin.step(actions)
    assert all(out[3].values()) and env.agents == []
    snap = snapshot(env)
    full = {a: np.zeros(6, np.float32) for a in env.possible_agents}
    for bad in [full, {}]:
        with pytest.raises(RuntimeError, match=re.escape(NO_LIVE_AGENTS)):
            env.step(bad)
        assert_unchanged(env, snap)
    assert env.world.elapsed_steps == 3
    assert_same_data(env.reset(seed=4), twin.reset(seed=4))
    assert_same_data(env.step(full), twin.step(full))


@pytest.mark.parametrize("seed, exc, message", [
    (-1, ValueError, "seed should be a non-negative int, got -1"),
    (1.5, TypeError, "seed should be an int or None, got 1.5"),
    ("7", TypeError, "seed should be an int or None, got '7'"),
], ids=["-1", "1.5", "'7'"])
def test_parallel_reset_rejects_bad_seeds(race_pair, seed, exc, message):
    env, twin = race_pair
    snap = snapshot(env)
    with pytest.raises(exc, match=re.escape(message)):
        env.reset(seed=seed)
    assert_unchanged(env, snap)
    good = random_actions(env, np.random.default_rng(2))
    assert_same_data(env.step(good), twin.step(good))


# -- bad input: the AEC env -----------------------------------------------------------------


def aec_pair(**kw):
    envs = [cheetah_race_v0.env(num_agents=3, **kw) for _ in range(2)]
    for env in envs:
        env.reset(seed=13)
    return envs


def aec_world(env):
    return env.unwrapped.world


def test_aec_step_before_reset():
    env = cheetah_race_v0.env(num_agents=2)
    qpos, qvel = aec_world(env).get_state()
    with pytest.raises(AssertionError, match=re.escape("reset() needs to be called before step.")):
        env.step(np.zeros(6, np.float32))
    assert_array_equal(aec_world(env).get_state()[0], qpos)
    assert aec_world(env).elapsed_steps == 0


@pytest.mark.parametrize("bad, exc, message", [
    (np.zeros(5, np.float32), ValueError, "action of cheetah_2 should have shape (6,), got (5,)"),
    (np.zeros(6, np.int32), TypeError,
     "action of cheetah_2 should have a floating-point dtype (float32 or float64), got int32"),
    (np.array([0, 0, np.nan, 0, 0, 0], np.float32), ValueError,
     "action of cheetah_2 should be finite, got nan at index (2,)"),
], ids=["shape", "dtype", "nan"])
def test_aec_rejects_a_bad_last_action_and_leaves_the_world_unchanged(bad, exc, message):
    env, twin = aec_pair()
    rng = np.random.default_rng(0)
    good = [rng.uniform(-1, 1, 6).astype(np.float32) for _ in range(3)]
    for action in good[:2]:
        env.step(action)
        twin.step(action)
    world = aec_world(env)
    qpos, qvel = world.get_state()
    with pytest.raises(exc, match=re.escape(message)):
        env.step(bad)
    assert_array_equal(world.get_state()[0], qpos)
    assert_array_equal(world.get_state()[1], qvel)
    assert world.elapsed_steps == 0
    assert env.agent_selection == "cheetah_2"
    # Retrying the last agent with a valid action completes the cycle like the twin's.
    env.step(good[2])
    twin.step(good[2])
    for agent in env.possible_agents:
        assert_same_data(env.observe(agent), twin.observe(agent))
    assert_same_data(env.last(), twin.last())
    assert_array_equal(aec_world(env).get_state()[0], aec_world(twin).get_state()[0])


def test_aec_non_finite_first_action_is_rejected_when_given():
    """The call that gives a bad action raises; PettingZoo's wrapper never stores it
    (it used to be reported only when the cycle completed, and stayed stored, failing
    every later cycle until reset())."""
    env, twin = aec_pair()
    world = aec_world(env)
    qpos, _ = world.get_state()
    with pytest.raises(ValueError, match=re.escape("action of cheetah_0 should be finite, got inf at index (3,)")):
        env.step(np.array([0, 0, 0, np.inf, 0, 0], np.float32))
    assert env.agent_selection == "cheetah_0"
    for _ in range(3):
        env.step(np.zeros(6, np.float32))
        twin.step(np.zeros(6, np.float32))
    assert world.elapsed_steps == 1
    assert not np.array_equal(world.get_state()[0], qpos)
    assert_array_equal(world.get_state()[0], aec_world(twin).get_state()[0])
    assert_same_data(env.last(), twin.last())


def test_aec_after_the_episode_ended():
    env, twin = aec_pair(max_cycles=2)
    zeros = np.zeros(6, np.float32)
    for _ in range(2 * 3):
        env.step(zeros)
        twin.step(zeros)
    assert all(env.truncations.values()) and env.agent_selection == "cheetah_0"
    world = aec_world(env)
    qpos, qvel = world.get_state()
    # A finished agent takes only None (PettingZoo's rule; its wrapper is not usable after
    # that assertion, so it is checked on a third env).
    other, _ = aec_pair(max_cycles=2)
    for _ in range(2 * 3):
        other.step(zeros)
    with pytest.raises(AssertionError):
        other.step(zeros)
    assert_array_equal(aec_world(other).get_state()[0], qpos)
    assert aec_world(other).elapsed_steps == 2
    for _ in range(3):
        env.step(None)
    assert env.agents == []
    env.step(None)  # PettingZoo logs "step() called after all agents are terminated" and does nothing
    assert_array_equal(world.get_state()[0], qpos)
    assert_array_equal(world.get_state()[1], qvel)
    assert world.elapsed_steps == 2
    env.reset(seed=1)
    twin.reset(seed=1)
    assert_same_data(env.last(), twin.last())


# -- bad input: one bad action, in every game ---------------------------------------------------

BAD_VALUES = [
    pytest.param(np.nan, np.float32, "nan", "", id="nan"),
    pytest.param(np.inf, np.float32, "inf", "", id="inf"),
    pytest.param(-np.inf, np.float64, "-inf", "", id="minus-inf-float64"),
    pytest.param(1e300, np.float64, "1e+300", " (out of float32 range)", id="beyond-float32"),
]


def _sample(space, rng) -> np.ndarray:
    return rng.uniform(space.low, space.high).astype(np.float32)


def _spoil(action, value, dtype, index) -> np.ndarray:
    bad = action.astype(dtype)
    bad[index] = value
    return bad


@pytest.mark.parametrize("value, dtype, shown, note", BAD_VALUES)
@pytest.mark.parametrize("name, module", NAMED_MODULES)
def test_aec_bad_action_is_rejected_when_given_and_never_kept(name, module, value, dtype, shown, note):
    """Agents step in turn and one agent's action is bad: that call raises (naming
    the agent and the value), the world is unchanged, the same agent is still to act,
    and its good action then completes the cycle exactly as in an untouched twin,
    cycle after cycle. (The AEC env used to store the bad action and fail every
    later cycle until reset().) Each agent of the cycle is the bad one in turn."""
    env, twin = module.env(), module.env()
    env.reset(seed=0)
    twin.reset(seed=0)
    world = aec_world(env)
    space = env.action_space(env.possible_agents[0])
    rng = np.random.default_rng(0)
    for cycle, bad_agent in enumerate(env.possible_agents * 2):
        index = cycle % space.shape[0]
        for agent in env.possible_agents:
            assert env.agent_selection == twin.agent_selection == agent
            good = _sample(space, rng)
            if agent == bad_agent:
                qpos, qvel = world.get_state()
                steps = world.elapsed_steps
                message = f"action of {agent} should be finite, got {shown} at index ({index},){note}"
                with pytest.raises(ValueError, match=re.escape(message) + "$"):
                    env.step(_spoil(good, value, dtype, index))
                assert env.agent_selection == agent
                assert_array_equal(world.get_state()[0], qpos)
                assert_array_equal(world.get_state()[1], qvel)
                assert world.elapsed_steps == steps
            given = good.copy()
            env.step(given)
            given[:] = np.nan  # what the env keeps is its own checked copy
            twin.step(good)
        assert world.elapsed_steps == aec_world(twin).elapsed_steps == cycle + 1
        for a, b in zip(world.get_state(), aec_world(twin).get_state()):
            assert_array_equal(a, b)
        for agent in env.possible_agents:
            assert_same_data(env.observe(agent), twin.observe(agent))
        assert_same_data(env.last(), twin.last())


@pytest.mark.parametrize("value, dtype, shown, note", BAD_VALUES)
@pytest.mark.parametrize("name, module", NAMED_MODULES)
def test_parallel_bad_action_is_rejected_naming_the_agent_and_never_kept(name, module, value, dtype, shown, note):
    env, twin = module.parallel_env(), module.parallel_env()
    env.reset(seed=0)
    twin.reset(seed=0)
    space = env.action_space(env.possible_agents[0])
    rng = np.random.default_rng(0)
    for cycle, bad_agent in enumerate(env.possible_agents * 2):
        index = cycle % space.shape[0]
        good = {agent: _sample(space, rng) for agent in env.agents}
        snap = snapshot(env)
        message = f"action of {bad_agent} should be finite, got {shown} at index ({index},){note}"
        with pytest.raises(ValueError, match=re.escape(message) + "$"):
            env.step({**good, bad_agent: _spoil(good[bad_agent], value, dtype, index)})
        assert_unchanged(env, snap)
        assert_same_data(env.step(good), twin.step(good))
        assert_same_data(env.state(), twin.state())


# -- bad input: the native MultiAgentEnv ------------------------------------------------------------


def native_pair():
    worlds = [MultiAgentEnv(GAME, max_cycles=100, num_agents=3) for _ in range(2)]
    for world in worlds:
        world.reset(seed=8)
    return worlds


@pytest.mark.parametrize("bad, exc, message", [
    (np.zeros((2, 6), np.float32), ValueError, "actions should have shape (3, 6), got (2, 6)"),
    (np.zeros(18, np.float32), ValueError, "actions should have shape (3, 6), got (18,)"),
    (np.zeros((3, 6), np.int64), TypeError,
     "actions should have a floating-point dtype (float32 or float64), got int64"),
    (None, TypeError, "actions should have a floating-point dtype (float32 or float64), got object"),
    (np.where(np.arange(18).reshape(3, 6) == 10, np.nan, 0.0).astype(np.float32), ValueError,
     "actions should be finite, got nan at index (1, 4)"),
    (np.where(np.arange(18).reshape(3, 6) == 12, -np.inf, 0.0), ValueError,
     "actions should be finite, got -inf at index (2, 0)"),
], ids=["rows", "flat", "int", "none", "nan", "minus-inf"])
def test_native_step_rejects_bad_actions_and_leaves_the_world_unchanged(bad, exc, message):
    world, twin = native_pair()
    qpos, qvel = world.get_state()
    with pytest.raises(exc, match=re.escape(message)):
        world.step(bad)
    assert_array_equal(world.get_state()[0], qpos)
    assert_array_equal(world.get_state()[1], qvel)
    assert world.elapsed_steps == 0
    good = np.random.default_rng(0).uniform(-1, 1, (3, 6)).astype(np.float32)
    assert_same_data(world.step(good), twin.step(good))


# -- bad input: the native vector env ---------------------------------------------------------------


def vec_pair(base_class):
    envs = [cheetah_race_v0.vec_env(2, num_agents=3, max_cycles=50, base_class=base_class, num_threads=1)
            for _ in range(2)]
    for env in envs:
        if base_class == "gymnasium":
            env.reset(seed=5)
        else:
            env.seed(5)
            env.reset()
    return envs


def vec_step(env, actions):
    out = env.step(actions)
    return tuple(out[:-1]) + (list(out[-1]),)


def pool_states(env):
    return [env.pool.get_state(i) for i in range(env.num_worlds)]


@pytest.mark.parametrize("base_class", ["gymnasium", "stable_baselines3"])
@pytest.mark.parametrize("bad, exc, message", [
    (np.zeros((3, 6), np.float32), ValueError, "actions should have shape (6, 6), got (3, 6)"),
    (np.zeros((2, 3, 6), np.float32), ValueError, "actions should have shape (6, 6), got (2, 3, 6)"),
    (np.zeros((6, 6), np.int32), TypeError,
     "actions should have a floating-point dtype (float32 or float64), got int32"),
    (np.where(np.arange(36).reshape(6, 6) == 33, np.nan, 0.0).astype(np.float32), ValueError,
     "actions should be finite, got nan at index (1, 2, 3)"),
], ids=["rows", "worlds-agents", "int", "nan"])
def test_vector_env_rejects_bad_actions_and_leaves_the_worlds_unchanged(base_class, bad, exc, message):
    env, twin = vec_pair(base_class)
    before = pool_states(env)
    with pytest.raises(exc, match=re.escape(message)):
        env.step(bad)
    for (qpos, qvel), (now_qpos, now_qvel) in zip(before, pool_states(env)):
        assert_array_equal(now_qpos, qpos)
        assert_array_equal(now_qvel, qvel)
    assert_array_equal(env.pool.elapsed_steps, [0, 0])
    good = np.random.default_rng(0).uniform(-1, 1, (6, 6)).astype(np.float32)
    assert_same_data(vec_step(env, good), vec_step(twin, good))
