"""Gymnasium API conformance: env checker, registration, spaces, constructor
arguments, ``make_vec`` (against Gymnasium's own ``SyncVectorEnv``) and pickling."""

from __future__ import annotations

import inspect
import pickle

import gymnasium
import numpy as np
import pytest
from conftest import (CORES, IGNORE_ACTION_SCALE, IGNORE_INFINITE_BOX, OUR_IDS, SINGLE_TASKS, make_oracle, non_default_kwargs,
                      oracle_id, random_actions, spec_of)
from gymnasium.envs.mujoco.mujoco_env import MujocoEnv
from gymnasium.envs.registration import load_env_creator
from gymnasium.utils.env_checker import check_env
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

import joltgym_marl
from joltgym_marl import AntCore

MODES = [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP]

# Gymnasium keyword arguments that configure its own renderer's camera; ours
# takes render_mode, width and height (its camera follows the robot) and
# rejects these.
RENDERING_KWARGS = {"default_camera_config", "camera_id", "camera_name", "max_geom", "visual_options"}

def env_class(env_id: str) -> type:
    return load_env_creator(gymnasium.spec(env_id).entry_point)


def make_vec(env_id: str, mode=AutoresetMode.NEXT_STEP, num_envs: int = 3, **kwargs) -> VectorEnv:
    return gymnasium.make_vec(env_id, num_envs=num_envs, vectorization_mode="vector_entry_point",
                              num_threads=2, autoreset_mode=mode, **kwargs)


def assert_same(ours, theirs, where: str = "") -> None:
    """Deep equality of arrays / (vector) infos, with dtype-insensitive values.

    Vector info entries are compared where their ``_key`` mask is set only:
    Gymnasium leaves the other entries unspecified (see
    ``test_vector_env_masked_out_info_entries_are_zero``).
    """
    if isinstance(theirs, dict):
        assert isinstance(ours, dict), where
        assert sorted(ours) == sorted(theirs), where
        for key in theirs:
            mask = theirs.get(f"_{key}") if not key.startswith("_") else None
            if mask is not None and isinstance(theirs[key], np.ndarray) and theirs[key].dtype != object:
                assert ours[key].shape == theirs[key].shape, f"{where}[{key!r}]"
                assert_same(ours[key][mask], theirs[key][mask], f"{where}[{key!r}][mask]")
            else:
                assert_same(ours[key], theirs[key], f"{where}[{key!r}]")
    elif isinstance(theirs, np.ndarray) and theirs.dtype == object:
        assert isinstance(ours, np.ndarray) and ours.shape == theirs.shape, where
        for i, (a, b) in enumerate(zip(ours, theirs)):
            if b is None:
                assert a is None, f"{where}[{i}]"
            else:
                assert_same(a, b, f"{where}[{i}]")
    else:
        ours, theirs = np.asarray(ours), np.asarray(theirs)
        assert ours.shape == theirs.shape, where
        assert ours.dtype.kind == theirs.dtype.kind, where
        np.testing.assert_array_equal(ours, theirs, err_msg=where)


def assert_vector_info_convention(infos: dict, num_envs: int) -> None:
    """Gymnasium's vector info: each ``key`` a batch over envs, with a bool ``_key`` mask."""
    for key, value in infos.items():
        if key.startswith("_"):
            assert key[1:] in infos, key
            assert value.dtype == np.bool_ and value.shape == (num_envs,), key
            continue
        assert f"_{key}" in infos, key
        if isinstance(value, dict):
            assert_vector_info_convention(value, num_envs)
        else:
            assert isinstance(value, np.ndarray) and value.shape[0] == num_envs, key


# -- single env -------------------------------------------------------------------


@IGNORE_INFINITE_BOX
@IGNORE_ACTION_SCALE
@pytest.mark.parametrize("env_id", OUR_IDS)
def test_check_env(env_id):
    # As Gymnasium checks its MuJoCo envs: metadata lists "human", as v5's, and a
    # human render needs a display (frames are tested in test_gymnasium_dropin).
    check_env(gymnasium.make(env_id).unwrapped, skip_render_check=True)


@pytest.mark.parametrize("env_id", OUR_IDS)
def test_registration(env_id):
    spec = gymnasium.spec(env_id)
    assert spec.max_episode_steps == spec_of(env_id).max_episode_steps
    assert spec.vector_entry_point is not None
    env = gymnasium.make(env_id)
    assert isinstance(env, gymnasium.wrappers.TimeLimit)
    assert env.spec.max_episode_steps == gymnasium.spec(oracle_id(env_id)).max_episode_steps


@pytest.mark.parametrize("non_default", [False, True], ids=["defaults", "non-default"])
@pytest.mark.parametrize("env_id", OUR_IDS)
def test_spaces_match_gymnasium(env_id, non_default):
    kwargs = non_default_kwargs(spec_of(env_id)) if non_default else {}
    ours = env_class(env_id)(**kwargs)
    theirs = make_oracle(oracle_id(env_id), **kwargs)

    obs_space, their_obs_space = ours.observation_space, theirs.observation_space
    assert obs_space.dtype == np.float64 and obs_space == their_obs_space  # v5's dtype
    assert obs_space.shape == their_obs_space.shape
    np.testing.assert_array_equal(obs_space.low, their_obs_space.low)
    np.testing.assert_array_equal(obs_space.high, their_obs_space.high)

    act_space, their_act_space = ours.action_space, theirs.action_space
    assert act_space.dtype == np.float32
    assert act_space == their_act_space  # shape, bounds and dtype
    assert ours.dt == theirs.dt
    assert ours.metadata["render_fps"] == theirs.metadata["render_fps"]

    obs, _ = ours.reset(seed=0)
    assert obs in obs_space and obs.dtype == np.float64


def gymnasium_keyword_defaults(gym_id: str) -> dict:
    """Keyword names and defaults of Gymnasium's v5 ``__init__`` plus the
    rendering keywords it forwards to ``MujocoEnv``."""
    cls = load_env_creator(gymnasium.spec(gym_id).entry_point)
    names = {}
    for sig, skip in ((inspect.signature(MujocoEnv.__init__), {"model_path", "frame_skip", "observation_space"}),
                      (inspect.signature(cls.__init__), set())):
        for p in sig.parameters.values():
            if p.name == "self" or p.name in skip or p.kind in (p.VAR_KEYWORD, p.VAR_POSITIONAL):
                continue
            assert p.default is not inspect.Parameter.empty, p.name
            names[p.name] = p.default
    return names


@pytest.mark.parametrize("env_id", OUR_IDS)
def test_constructor_keywords_match_gymnasium(env_id):
    cls = env_class(env_id)
    defaults = gymnasium_keyword_defaults(oracle_id(env_id))
    assert RENDERING_KWARGS | {"render_mode", "width", "height", "xml_file", "frame_skip"} <= set(defaults)

    accepted, rejected = set(), set()
    for name, value in defaults.items():
        try:
            cls(**{name: value})
        except TypeError as error:
            assert name in str(error)
            rejected.add(name)
        else:
            accepted.add(name)
    assert rejected == set()  # every v5 keyword, the rendering ones included
    assert accepted == set(defaults)

    # Gymnasium's defaults are ours: passing them all explicitly changes nothing.
    explicit = cls(**{name: defaults[name] for name in accepted})
    implicit = cls()
    obs_a, info_a = explicit.reset(seed=5)
    obs_b, info_b = implicit.reset(seed=5)
    np.testing.assert_array_equal(obs_a, obs_b)
    assert_same(info_a, info_b)
    for action in random_actions(implicit.action_space, 30, seed=0):
        out_a, out_b = explicit.step(action), implicit.step(action)
        np.testing.assert_array_equal(out_a[0], out_b[0])
        assert out_a[1:4] == out_b[1:4]
        assert_same(out_a[4], out_b[4])
        if out_a[2]:
            break

    with pytest.raises(TypeError, match="no_such_keyword"):
        cls(no_such_keyword=1)
    with pytest.raises(ValueError, match=r"render_mode should be None or one of \['human', 'rgb_array', 'depth_array', 'rgbd_tuple'\], got 'rgb'"):
        cls(render_mode="rgb")


# -- vector env -------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES, ids=lambda m: m.value)
@pytest.mark.parametrize("env_id", OUR_IDS)
def test_make_vec_vector_entry_point(env_id, mode):
    env = make_vec(env_id, mode, num_envs=3)
    single = gymnasium.make(env_id, disable_env_checker=True)
    assert isinstance(env, VectorEnv)
    assert type(env).__module__.startswith("joltgym_marl.")
    assert env.num_envs == 3
    assert env.metadata["autoreset_mode"] == mode
    assert env.single_observation_space == single.observation_space
    assert env.single_action_space == single.action_space
    assert env.observation_space == batch_space(single.observation_space, 3)
    assert env.action_space == batch_space(single.action_space, 3)

    obs, infos = env.reset(seed=0)
    assert obs.shape == (3, *single.observation_space.shape) and obs.dtype == np.float64
    assert obs in env.observation_space
    assert_vector_info_convention(infos, 3)
    # Reset info: every reset-time field (none for some robots, as in Gymnasium), for every env.
    reset_fields = {name for name, _, _, at_reset in env.unwrapped.pool.info_fields if at_reset}
    assert {key for key in infos if not key.startswith("_")} == reset_fields
    assert all(mask.all() for key, mask in infos.items() if key.startswith("_"))

    obs, rewards, terminations, truncations, infos = env.step(env.action_space.sample())
    assert obs in env.observation_space
    assert rewards.shape == terminations.shape == truncations.shape == (3,)
    assert terminations.dtype == truncations.dtype == np.bool_
    assert_vector_info_convention(infos, 3)
    single.reset(seed=0)
    *_, step_info = single.step(single.action_space.sample())
    assert {key for key in infos if not key.startswith("_")} >= set(step_info)
    env.close()
    single.close()


# (env id, max_episode_steps, steps): short episodes for every robot, and a
# Humanoid left to fall, so that envs terminate at different steps.
VECTOR_CASES = [pytest.param(env_id, 5, 23, id=f"{env_id.split('/')[1]}-limit5") for env_id in OUR_IDS]
VECTOR_CASES.append(pytest.param("joltgym_marl/Humanoid-v0", 1000, 120, id="Humanoid-falls"))


@pytest.mark.parametrize("mode", MODES, ids=lambda m: m.value)
@pytest.mark.parametrize(("env_id", "limit", "steps"), VECTOR_CASES)
def test_vector_env_matches_sync_vector_env(env_id, limit, steps, mode):
    """Our native vector env steps exactly like Gymnasium's SyncVectorEnv of our single env."""
    ours = make_vec(env_id, mode, num_envs=3, max_episode_steps=limit)
    fields = ours.unwrapped.pool.info_fields
    reset_key = next((f"_{name}" for name, _, _, at_reset in fields if at_reset), None)
    step_key = next(f"_{name}" for name, _, _, at_reset in fields if not at_reset)
    theirs = gymnasium.make_vec(env_id, num_envs=3, vectorization_mode="sync",
                                vector_kwargs=dict(autoreset_mode=mode), max_episode_steps=limit)
    assert theirs.metadata["autoreset_mode"] == ours.metadata["autoreset_mode"] == mode

    obs, infos = ours.reset(seed=42)
    their_obs, their_infos = theirs.reset(seed=42)
    assert_same(obs, their_obs, "reset obs")
    assert_same(infos, their_infos, "reset infos")

    done_before = np.zeros(3, dtype=bool)
    dones = terminated = 0
    for t, actions in enumerate(random_actions(ours.single_action_space, steps, seed=1, batch=(3,))):
        out = ours.step(actions)
        their_out = theirs.step(actions)
        for name, a, b in zip(("obs", "rewards", "terminations", "truncations", "infos"), out, their_out):
            assert_same(a, b, f"step {t} {name}")
        obs, rewards, terms, truncs, infos = out
        done = terms | truncs
        dones += done.sum()
        terminated += terms.sum()

        if mode == AutoresetMode.NEXT_STEP:
            # The step after a done is the reset: reward 0, not done, only reset info.
            assert np.all(rewards[done_before] == 0)
            assert not np.any(done[done_before])
            if done_before.any():
                assert not infos.get(step_key, np.zeros(3, bool))[done_before].any()
                if reset_key is not None:
                    assert infos[reset_key].all()
            assert "final_obs" not in infos
        else:
            assert ("final_obs" in infos) == done.any()
            if done.any():
                np.testing.assert_array_equal(infos["_final_obs"], done)
                np.testing.assert_array_equal(infos["_final_info"], done)
                assert infos["final_info"][step_key][done].all()
                assert all((o is None) == (not d) for o, d in zip(infos["final_obs"], done))
                # The returned obs of a done env is already the next episode's first.
                for i in np.flatnonzero(done):
                    assert not np.array_equal(infos["final_obs"][i], obs[i])
        done_before = done

    assert dones > 0
    if limit > steps // 2:
        assert terminated > 0  # the falling Humanoid case
    ours.close()
    theirs.close()


def staggered_pair(mode):
    """Ours and Gymnasium's SyncVectorEnv (of our env), 5-step episodes,
    with env 0 reset (``options["reset_mask"]``) two steps after the others."""
    env_id = OUR_IDS[0]
    ours = make_vec(env_id, mode, num_envs=3, max_episode_steps=5)
    theirs = gymnasium.make_vec(env_id, num_envs=3, vectorization_mode="sync",
                                vector_kwargs=dict(autoreset_mode=mode), max_episode_steps=5)
    actions = random_actions(ours.single_action_space, 16, seed=2, batch=(3,))

    def run(env):
        outputs = [env.reset(seed=8)]
        for t, action in enumerate(actions):
            if t == 2:
                outputs.append(env.reset(seed=100, options={"reset_mask": np.array([True, False, False])}))
            outputs.append(env.step(action))
        env.close()
        return outputs

    return run(ours), run(theirs)


@pytest.mark.parametrize("mode", MODES, ids=lambda m: m.value)
def test_vector_env_partial_reset_matches_sync_vector_env(mode):
    ours, theirs = staggered_pair(mode)
    for k, (out, their_out) in enumerate(zip(ours, theirs)):
        for a, b in zip(out, their_out):
            assert_same(a, b, f"call {k}")
    # The staggering really happened: some step has envs both stepping and resetting.
    key = "_x_velocity" if mode == AutoresetMode.NEXT_STEP else "_final_obs"
    assert any(len(out) == 5 and key in out[4] and 0 < out[4][key].sum() < 3 for out in ours)


@pytest.mark.parametrize("mode", MODES, ids=lambda m: m.value)
def test_vector_env_masked_out_info_entries_are_zero(mode):
    ours, _ = staggered_pair(mode)
    for out in ours:
        infos = out[-1]
        for group in (infos, infos.get("final_info", {})):
            for key, value in group.items():
                if not key.startswith("_") and key != "final_obs" and not isinstance(value, dict):
                    assert not np.any(value[~group[f"_{key}"]]), key


@pytest.mark.parametrize("mode", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP, "SameStep"],
                         ids=["NextStep-enum", "SameStep-enum", "SameStep-str"])
def test_vector_env_accepts_autoreset_modes(mode):
    env = make_vec(OUR_IDS[0], mode, num_envs=2)
    assert env.metadata["autoreset_mode"] == AutoresetMode(mode)
    env.close()
    with pytest.raises(ValueError, match="autoreset_mode"):
        make_vec(OUR_IDS[0], AutoresetMode.DISABLED, num_envs=2)


# -- pickling -------------------------------------------------------------------

try:
    import cloudpickle
except ImportError:  # pragma: no cover - optional
    cloudpickle = None

PICKLERS = [pytest.param(pickle, id="pickle"),
            pytest.param(cloudpickle, id="cloudpickle",
                         marks=pytest.mark.skipif(cloudpickle is None, reason="cloudpickle not installed"))]


def roundtrip(pickler, obj):
    return pickler.loads(pickler.dumps(obj))


@pytest.mark.parametrize("pickler", PICKLERS)
@pytest.mark.parametrize("env_id", OUR_IDS)
def test_pickle_gymnasium_env(env_id, pickler):
    kwargs = non_default_kwargs(spec_of(env_id))
    env = gymnasium.make(env_id, **kwargs)
    env.reset(seed=0)
    copy = roundtrip(pickler, env)
    assert type(copy.unwrapped) is type(env.unwrapped)
    assert copy.unwrapped is not env.unwrapped
    assert copy.unwrapped.core.kwargs == env.unwrapped.core.kwargs == kwargs
    assert copy.observation_space == env.observation_space
    assert copy.action_space == env.action_space
    obs, info = env.reset(seed=11)
    copy_obs, copy_info = copy.reset(seed=11)
    np.testing.assert_array_equal(obs, copy_obs)
    assert_same(copy_info, info)
    action = env.action_space.sample()
    np.testing.assert_array_equal(env.step(action)[0], copy.step(action)[0])


@pytest.mark.parametrize("pickler", PICKLERS)
@pytest.mark.parametrize("env_id", OUR_IDS)
def test_pickle_vector_env(env_id, pickler):
    kwargs = non_default_kwargs(spec_of(env_id))
    env = make_vec(env_id, AutoresetMode.SAME_STEP, num_envs=2, max_episode_steps=9, **kwargs)
    copy = roundtrip(pickler, env)
    assert type(copy) is type(env)
    assert copy.num_envs == 2
    assert copy.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    assert copy.single_observation_space == env.single_observation_space
    assert copy.pool.kwargs == env.pool.kwargs == kwargs
    assert copy.pool.max_episode_steps == 9 and copy.pool.num_threads == env.pool.num_threads
    obs, _ = env.reset(seed=4)
    copy_obs, _ = copy.reset(seed=4)
    np.testing.assert_array_equal(obs, copy_obs)
    env.close()
    copy.close()


@pytest.mark.parametrize("pickler", PICKLERS)
@pytest.mark.parametrize("task", SINGLE_TASKS)
def test_pickle_core(task, pickler):
    core_cls, kwargs = CORES[task], non_default_kwargs(spec_of(task))
    core = core_cls(**kwargs, max_episode_steps=77)
    core.reset(seed=1)
    copy = roundtrip(pickler, core)
    assert type(copy) is core_cls
    assert copy.kwargs == kwargs
    assert copy.max_episode_steps == 77
    assert (copy.obs_dim, copy.act_dim, copy.dt) == (core.obs_dim, core.act_dim, core.dt)
    obs, info = core.reset(seed=9)
    copy_obs, copy_info = copy.reset(seed=9)
    np.testing.assert_array_equal(obs, copy_obs)
    assert_same(copy_info, info)

    default_copy = roundtrip(pickler, core_cls())
    assert default_copy.kwargs == {}
    assert default_copy.max_episode_steps == spec_of(task).max_episode_steps


@pytest.mark.parametrize("pickler", PICKLERS)
def test_pickle_world_pool(pickler):
    pool = joltgym_marl.WorldPool("ant", 3, num_threads=2, max_episode_steps=50,
                                  autoreset_mode="same_step", ctrl_cost_weight=0.2)
    copy = roundtrip(pickler, pool)
    assert type(copy) is joltgym_marl.WorldPool
    assert (copy.task, copy.num_envs, copy.num_threads, copy.max_episode_steps, copy.autoreset_mode) == (
        "ant", 3, 2, 50, "same_step")
    assert copy.kwargs == {"ctrl_cost_weight": 0.2}
    obs = pool.reset_all(seed=3).copy()
    np.testing.assert_array_equal(copy.reset_all(seed=3), obs)
    pool.close()
    copy.close()


@pytest.mark.parametrize("make", [lambda: AntCore(ctrl_cost_weight=0.3),
                                  lambda: joltgym_marl.WorldPool("ant", 2, num_threads=1, ctrl_cost_weight=0.3)],
                         ids=["core", "pool"])
def test_pickling_leaves_kwargs_unchanged(make):
    obj = make()
    pickle.dumps(obj)
    assert obj.kwargs == {"ctrl_cost_weight": 0.3}
    obj.kwargs["ctrl_cost_weight"] = 9.0  # a copy: must not reach what pickling re-creates
    assert roundtrip(pickle, obj).kwargs == {"ctrl_cost_weight": 0.3}
