"""Jolt Physics as a second engine (``engine="jolt"``).

These tests need a build with Jolt (CMake's JOLTGYM_WITH_JOLT, see
docs/guides/jolt.md); CI builds with it. Without it they fail (they are not
skipped), with the error that says how to get Jolt.

What they pin: the registry says which tasks run on Jolt, and the others
refuse it by name; a Jolt HalfCheetah passes Gymnasium's check_env through
gymnasium.make and make_vec; its mjData mirror's poses are MuJoCo's forward
kinematics (after a reset to float precision, and of the state read back
after steps); pools are bit-identical for any thread count and across
resets (each reset restores a saved Jolt snapshot); and the physics is sane
next to MuJoCo's (rest height, no blow-up under random actions).
"""

from __future__ import annotations

import pickle

import gymnasium
import mujoco
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from numpy.testing import assert_allclose, assert_array_equal

import joltgym_marl
from joltgym_marl import HalfCheetahCore, WorldPool, _core
from joltgym_marl.registry import TASKS

from conftest import IGNORE_ACTION_SCALE, IGNORE_INFINITE_BOX

JOLT_TASKS = [name for name, spec in TASKS.items() if "jolt" in spec.engines]
JOLT_ROBOTS = [name for name in JOLT_TASKS if not TASKS[name].is_game]
MUJOCO_ONLY = [name for name, spec in TASKS.items() if "jolt" not in spec.engines]


def test_this_build_has_jolt():
    # CI builds with Jolt; a local build without it fails here first, and
    # every Jolt test below fails with the error saying how to get it.
    assert _core.jolt_available(), "built without Jolt: python tools/fetch_jolt.py, then rebuild"


def test_registry_says_which_tasks_run_on_jolt():
    assert "half_cheetah" in JOLT_TASKS
    for name in JOLT_TASKS:
        spec = TASKS[name]
        assert spec.engines == ("mujoco", "jolt")
        assert spec.defaults()["engine"] == "mujoco"
    for name in MUJOCO_ONLY:
        assert TASKS[name].engines == ("mujoco",)
        assert "engine" not in TASKS[name].defaults()


@pytest.mark.parametrize("task", MUJOCO_ONLY)
def test_tasks_without_jolt_refuse_it_by_name(task):
    kind = _core.MultiAgentEnv if TASKS[task].is_game else _core.SingleAgentCore
    with pytest.raises(ValueError, match=rf"task '{task}' does not run on engine 'jolt'.*'half_cheetah'"):
        kind(task, engine="jolt")
    with pytest.raises(ValueError, match=rf"task '{task}' does not run on engine 'jolt'"):
        WorldPool(task, 2, engine="jolt")
    # engine="mujoco" is every task's default, accepted by name.
    kind(task, engine="mujoco").reset(seed=0)


def test_unknown_engine_is_refused():
    with pytest.raises(ValueError, match="engine should be 'mujoco' or 'jolt', got 'bullet'"):
        HalfCheetahCore(engine="bullet")
    with pytest.raises(ValueError, match="engine should be 'mujoco' or 'jolt', got 'bullet'"):
        _core.SingleAgentCore("ant", engine="bullet")


def test_core_reports_its_engine_and_pickles():
    env = HalfCheetahCore(engine="jolt")
    assert env.engine == "jolt" and env.kwargs == {"engine": "jolt"}
    assert HalfCheetahCore().engine == "mujoco"
    twin = pickle.loads(pickle.dumps(env))
    assert twin.engine == "jolt"
    a, _ = env.reset(seed=3)
    b, _ = twin.reset(seed=3)
    assert_array_equal(a, b)


@IGNORE_INFINITE_BOX
@IGNORE_ACTION_SCALE
@pytest.mark.parametrize("task", JOLT_ROBOTS)
def test_check_env_on_jolt(task):
    env = gymnasium.make(TASKS[task].env_id, engine="jolt")
    check_env(env.unwrapped, skip_render_check=True)
    env.close()


def test_make_vec_on_jolt():
    env = gymnasium.make_vec("joltgym_marl/HalfCheetah-v0", num_envs=3, engine="jolt")
    obs, _ = env.reset(seed=0)
    for _ in range(5):
        obs, reward, *_ = env.step(env.action_space.sample())
    assert obs.shape == (3, 17) and np.isfinite(obs).all() and np.isfinite(reward).all()
    env.close()


def forward_kinematics(env, qpos) -> np.ndarray:
    """MuJoCo's body poses [nbody, 7] for ``qpos`` of ``env``'s model."""
    m = _model(env)
    d = mujoco.MjData(m)
    d.qpos[:] = qpos
    mujoco.mj_kinematics(m, d)
    return np.concatenate([d.xpos, d.xquat], axis=1)


_MODELS = {}


def _model(env) -> mujoco.MjModel:
    """The env's compiled model, from its MJB bytes (once per task)."""
    if env.task not in _MODELS:
        _MODELS[env.task] = mujoco.MjModel.from_binary_path(_write_mjb(env.model_mjb()))
    return _MODELS[env.task]


def _write_mjb(data: bytes) -> str:
    import tempfile

    with tempfile.NamedTemporaryFile(suffix=".mjb", delete=False) as f:
        f.write(data)
    return f.name


def same_rotation(q1, q2):
    """Quaternions up to sign: |<q1, q2>| per row."""
    return np.abs(np.sum(q1 * q2, axis=1))


def make_world(task: str, **kwargs):
    kind = _core.MultiAgentEnv if TASKS[task].is_game else _core.SingleAgentCore
    return kind(task, engine="jolt", **kwargs)


@pytest.mark.parametrize("task", JOLT_TASKS)
def test_mirror_poses_equal_mujoco_forward_kinematics_after_reset(task):
    env = make_world(task)
    for seed in range(5):
        env.reset(seed=seed)
        qpos, _ = env.get_state()
        fk = forward_kinematics(env, qpos)
        jolt = env.body_poses()
        assert_allclose(jolt[:, :3], fk[:, :3], atol=2e-6)  # float32 positions
        assert_allclose(same_rotation(jolt[:, 3:], fk[:, 3:]), 1.0, atol=1e-6)


@pytest.mark.parametrize("task", JOLT_TASKS)
def test_state_read_back_after_steps_reproduces_jolt_poses(task):
    """qpos written back into the mirror is the pose Jolt holds: MuJoCo's FK of
    it puts every body where Jolt has it, up to how far Jolt lets the joints
    come apart (4 substeps here keep that to millimetres; the default single
    substep allows about 2 cm under these random actions, see
    docs/guides/jolt.md)."""
    env = make_world(task, jolt_substeps=4)
    env.reset(seed=1)
    rng = np.random.default_rng(0)
    shape = (env.num_agents, env.act_dim) if TASKS[task].is_game else (env.act_dim,)
    for step in range(200):
        action = rng.uniform(env.action_low, env.action_high, size=shape).astype(np.float32)
        _, _, terminated, truncated, *_ = env.step(action)
        if np.any(terminated) or np.any(truncated):
            env.reset()
        if step % 20 == 19:
            qpos, _ = env.get_state()
            fk = forward_kinematics(env, qpos)
            jolt = env.body_poses()
            assert_allclose(jolt[:, :3], fk[:, :3], atol=5e-3)
            assert_allclose(same_rotation(jolt[:, 3:], fk[:, 3:]), 1.0, atol=1e-3)


def test_set_state_moves_the_jolt_bodies():
    env = HalfCheetahCore(engine="jolt")
    env.reset(seed=0)
    qpos, qvel = env.get_state()
    qpos = qpos.copy()
    qpos[0] += 1.5
    qpos[3] = 0.3
    env.set_state(qpos, qvel)
    assert_allclose(env.get_state()[0], qpos)
    fk = forward_kinematics(env, qpos)
    assert_allclose(env.body_poses()[:, :3], fk[:, :3], atol=2e-6)


def rollout(pool, seed, actions):
    out = [pool.reset_all(seed=seed).copy()]
    for a in actions:
        pool.step_all(a)
        out += [pool.obs.copy(), pool.rewards.copy(), pool.truncations | pool.terminations]
    return out


@pytest.mark.parametrize("task", JOLT_ROBOTS)
def test_pool_is_bit_identical_for_any_thread_count_and_across_resets(task):
    rng = np.random.default_rng(5)
    with WorldPool(task, 6, num_threads=1, max_episode_steps=40, engine="jolt") as p1, \
         WorldPool(task, 6, num_threads=2, max_episode_steps=40, engine="jolt") as p2:
        actions = rng.uniform(p1.action_low, p1.action_high, size=(100, 6, p1.act_dim)).astype(np.float32)
        a = rollout(p1, 7, actions)
        b = rollout(p2, 7, actions)
        c = rollout(p2, 7, actions)  # the same pool again: resets restore Jolt's snapshot
        d = rollout(p1, 8, actions)
    for x, y, z in zip(a, b, c):
        assert_array_equal(x, y)
        assert_array_equal(x, z)
    assert not np.array_equal(a[0], d[0])
    # Episodes ended (at 40 steps at the latest) and auto-reset within the rollout.
    assert sum(t.sum() for t in a[3::3]) >= 6 * 2
    # A world's results do not depend on its neighbours: world 3 alone.
    with WorldPool(task, 1, max_episode_steps=40, engine="jolt") as single:
        single.reset_one(0, seed=7 + 3)
        obs = []
        for act in actions:
            single.step_all(act[3:4])
            obs.append(single.obs[0].copy())
    assert_array_equal(np.stack(obs), np.stack(a[1::3])[:, 3])


def test_half_cheetah_on_jolt_rests_like_mujoco():
    heights = {}
    for engine in ("mujoco", "jolt"):
        env = HalfCheetahCore(engine=engine)
        env.reset(seed=0)
        for _ in range(200):
            env.step(np.zeros(6, np.float32))
        heights[engine] = env.get_state()[0][1]  # rootz
    # Both settle on their feet near the same height (Jolt's contacts are
    # rigid where MuJoCo's are soft).
    assert abs(heights["jolt"] - heights["mujoco"]) < 0.05, heights


def test_inverted_pendulum_on_jolt_falls_as_mujocos_does():
    """Same start, no action: the pole falls past 0.2 rad on the same step on both engines."""
    steps = {}
    for engine in ("mujoco", "jolt"):
        env = _core.SingleAgentCore("inverted_pendulum", engine=engine)
        env.reset(seed=0)
        for t in range(1000):
            if env.step(np.zeros(1, np.float32))[2]:
                break
        steps[engine] = t
    assert steps["jolt"] == steps["mujoco"] < 100, steps


def test_half_cheetah_on_jolt_survives_random_actions_and_moves():
    env = HalfCheetahCore(engine="jolt")
    env.reset(seed=0)
    rng = np.random.default_rng(1)
    for _ in range(1000):
        obs, reward, terminated, truncated, info = env.step(rng.uniform(-1, 1, 6).astype(np.float32))
        assert np.isfinite(obs).all() and np.isfinite(reward)
        assert not info.get("physics_unstable", False)
    # Joint angles stay inside MuJoCo's ranges (Jolt's limits are soft like MuJoCo's).
    m = _model(env)
    qpos, _ = env.get_state()
    for j in range(3, m.njnt):
        low, high = m.jnt_range[j]
        assert low - 0.2 < qpos[j] < high + 0.2, (j, qpos[j], (low, high))


def test_the_renderer_draws_jolt_worlds():
    """The renderer draws the mirror's state: a Jolt cheetah that has moved is drawn where it is."""
    frames = {}
    for engine in ("mujoco", "jolt"):
        env = gymnasium.make("joltgym_marl/HalfCheetah-v0", engine=engine, render_mode="rgb_array",
                             width=96, height=64)
        env.reset(seed=0)
        for _ in range(30):
            env.step(np.ones(6, np.float32))
        frames[engine] = env.render()
        env.close()
    for frame in frames.values():
        assert frame.shape == (64, 96, 3) and frame.std() > 1.0  # not blank
    # The two engines' cheetahs moved differently: the pictures differ.
    assert not np.array_equal(frames["mujoco"], frames["jolt"])
