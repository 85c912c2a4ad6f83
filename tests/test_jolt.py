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
import re

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


def test_core_reports_its_engine():
    env = HalfCheetahCore(engine="jolt")
    assert env.engine == "jolt" and env.kwargs == {"engine": "jolt"}
    assert HalfCheetahCore().engine == "mujoco"


@pytest.mark.parametrize("task", JOLT_TASKS)
def test_jolt_worlds_pickle(task):
    env = make_world(task)
    twin = pickle.loads(pickle.dumps(env))
    assert twin.engine == "jolt" and twin.kwargs == {"engine": "jolt"}
    a = env.reset(seed=3)[0]
    b = twin.reset(seed=3)[0]
    assert_array_equal(a, b)
    action = np.full(_action_shape(env, task), 0.3, np.float32)
    assert_array_equal(env.step(action)[0], twin.step(action)[0])


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


def _action_shape(env, task):
    return (env.num_agents, env.act_dim) if TASKS[task].is_game else (env.act_dim,)


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


@pytest.mark.parametrize("task", JOLT_TASKS)
def test_pool_is_bit_identical_for_any_thread_count_and_across_resets(task):
    rng = np.random.default_rng(5)
    with WorldPool(task, 6, num_threads=1, max_episode_steps=40, engine="jolt") as p1, \
         WorldPool(task, 6, num_threads=2, max_episode_steps=40, engine="jolt") as p2:
        agents = (p1.num_agents,) if TASKS[task].is_game else ()
        actions = rng.uniform(p1.action_low, p1.action_high,
                              size=(100, 6, *agents, p1.act_dim)).astype(np.float32)
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


@pytest.mark.parametrize("task", JOLT_ROBOTS)
def test_every_jolt_robot_renders(task):
    env = gymnasium.make(TASKS[task].env_id, engine="jolt", render_mode="rgb_array", width=64, height=48)
    env.reset(seed=0)
    env.step(env.action_space.sample())
    frame = env.render()
    env.close()
    assert frame.shape == (48, 64, 3) and frame.std() > 1.0


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


# --- bad input and hostile states ------------------------------------------------


@pytest.mark.parametrize("task", JOLT_TASKS)
def test_jolt_worlds_refuse_bad_input_and_survive_hostile_states(task):
    env = make_world(task)
    env.reset(seed=0)
    shape = _action_shape(env, task)
    bad = np.zeros(shape, np.float32)
    bad.flat[0] = np.nan
    with pytest.raises(ValueError, match="NaN|nan|finite"):
        env.step(bad)
    with pytest.raises(ValueError, match="jolt_substeps"):
        make_world(task, jolt_substeps=0)
    with pytest.raises(ValueError, match="jolt_velocity_iterations"):
        make_world(task, jolt_velocity_iterations=1000)
    # A hostile but finite state: joints far outside their ranges, huge
    # velocities. The world must not crash or hang; it either stays finite or
    # reports the blow-up.
    qpos, qvel = env.get_state()
    rng = np.random.default_rng(0)
    m = _model(env)
    for j in range(m.njnt):
        if m.jnt_type[j] == mujoco.mjtJoint.mjJNT_HINGE:
            qpos[m.jnt_qposadr[j]] = rng.uniform(-10, 10)
    qvel = rng.normal(0, 1e3, qvel.shape)
    env.set_state(qpos, qvel)
    for _ in range(20):
        obs, reward, terminated, truncated, *rest = env.step(np.zeros(shape, np.float32))
        assert np.isfinite(obs).all() and np.isfinite(reward).all()  # a blow-up resets the data
        if np.any(terminated) or np.any(truncated):
            env.reset(seed=1)
    env.reset(seed=2)
    assert np.isfinite(env.step(np.zeros(shape, np.float32))[0]).all()


# --- contact forces (cfrc_ext) -----------------------------------------------------

# Where each task's observation holds cfrc_ext[1:] (Ant with an unclipped
# contact_force_range; Humanoid's last 78 entries).
CONTACT_TASKS = {
    "ant": (dict(contact_force_range=(-np.inf, np.inf), terminate_when_unhealthy=False), 27),
    "humanoid": (dict(terminate_when_unhealthy=False), -78),
}


def contact_forces(task: str, obs: np.ndarray) -> np.ndarray:
    """cfrc_ext[1:] as the task observes it: [nbody - 1, 6], torque then force."""
    return obs[CONTACT_TASKS[task][1]:].reshape(-1, 6)


def resting(task: str, engine: str, steps: int, window: int):
    """The world after `steps` steps of zero action, and the mean cfrc_ext[1:] over the last `window`."""
    env = _core.SingleAgentCore(task, engine=engine, **CONTACT_TASKS[task][0])
    env.reset(seed=0)
    forces = []
    for _ in range(steps):
        obs = env.step(np.zeros(env.act_dim, np.float32))[0]
        forces.append(contact_forces(task, obs))
    return env, np.mean(forces[-window:], axis=0)


@pytest.mark.parametrize("task", sorted(CONTACT_TASKS))
def test_contact_forces_carry_the_weight_at_rest(task):
    """A robot at rest on the floor: its contact forces sum to its weight,
    straight up, with no net torque about its centre of mass (MuJoCo's
    cfrc_ext is the torque about the subtree centre of mass, then the force).

    Tolerance: over the 2 s window the robot's momentum barely changes, so
    the mean contact force is the weight up to that change and Jolt's float32
    velocities; MuJoCo meets it to 1e-5 of the weight and Jolt to 1e-4 here
    (the robots settle in 4 s and 10 s); 2e-3 of the weight (and of the
    weight times a metre for the torque) leaves room for other machines.
    """
    steps = {"ant": 600, "humanoid": 1000}[task]
    for engine in ("mujoco", "jolt"):
        env, forces = resting(task, engine, steps, window=200 if task == "ant" else 400)
        m = _model(env)
        weight = m.body_subtreemass[0] * -m.opt.gravity[2]
        total = forces.sum(axis=0)
        assert_allclose(total[3:], [0, 0, weight], atol=2e-3 * weight, err_msg=engine)
        assert_allclose(total[:3], 0, atol=2e-3 * weight, err_msg=engine)


def test_contact_forces_act_where_the_feet_touch_the_floor():
    """The convention, checked against MuJoCo's: on both engines each loaded
    body of a resting Ant is a lower leg, and its force's line of action
    (from the torque about the subtree centre of mass) meets the floor
    inside that leg's capsule; the bodies off the floor get none."""
    loaded = {}
    for engine in ("mujoco", "jolt"):
        env, forces = resting("ant", engine, 600, window=200)
        m = _model(env)
        d = mujoco.MjData(m)
        d.qpos[:] = env.get_state()[0]
        mujoco.mj_kinematics(m, d)
        mujoco.mj_comPos(m, d)
        weight = m.body_subtreemass[0] * -m.opt.gravity[2]
        centre = d.subtree_com[0]
        loaded[engine] = set()
        for b, wrench in enumerate(forces, start=1):
            torque, force = wrench[:3], wrench[3:]
            if force[2] < 0.1 * weight:
                assert np.abs(wrench).max() < 1e-3 * weight, (engine, b, wrench)
                continue
            loaded[engine].add(b)
            # The point on the floor (z = 0) where torque = (point - centre) x force.
            rz = -centre[2]
            ry = (torque[0] + rz * force[1]) / force[2]
            rx = (rz * force[0] - torque[1]) / force[2]
            point = centre + np.array([rx, ry, rz])
            g = m.body_geomadr[b]
            half = d.geom_xmat[g].reshape(3, 3)[:, 2] * m.geom_size[g, 1]
            a, c = d.geom_xpos[g] - half, d.geom_xpos[g] + half
            t = np.clip(np.dot(point - a, c - a) / np.dot(c - a, c - a), 0, 1)
            gap = np.linalg.norm(point - (a + t * (c - a)))
            assert gap < m.geom_size[g, 0] + 0.03, (engine, b, gap)
    lower_legs = {b for b in range(1, m.nbody) if m.body_parentid[b] != 0 and m.body_parentid[m.body_parentid[b]] != 0
                  and m.body_jntnum[b] == 1 and m.body_jntnum[m.body_parentid[b]] == 1}
    assert loaded["mujoco"] == loaded["jolt"] == lower_legs


def test_actuator_forces_in_the_mirror_are_mujocos():
    """qfrc_actuator (in Humanoid's observation) is MuJoCo's own mj_fwdActuation of
    the controls on both engines: the same action gives the same entries."""
    rng = np.random.default_rng(3)
    action = rng.uniform(-0.4, 0.4, 17).astype(np.float32)
    action[0] = 5.0  # beyond ctrlrange: clamped as MuJoCo does
    segments = {}
    for engine in ("mujoco", "jolt"):
        env = _core.SingleAgentCore("humanoid", engine=engine)
        env.reset(seed=0)
        obs = env.step(action)[0]
        segments[engine] = obs[-78 - 17:-78]
    assert_array_equal(segments["jolt"], segments["mujoco"])
    assert segments["jolt"][0] != 0


def test_humanoid_on_jolt_holds_its_joints_together():
    """Two- and three-hinge bodies (abdomen, hips, shoulders) are one HingeJoint
    each: under random actions the read-back angles put every body within
    a centimetre of where Jolt holds it, and inside MuJoCo's ranges."""
    env = _core.SingleAgentCore("humanoid", engine="jolt", terminate_when_unhealthy=False)
    m = _model(env)
    d = mujoco.MjData(m)
    env.reset(seed=0)
    rng = np.random.default_rng(1)
    for _ in range(300):
        env.step(rng.uniform(-0.4, 0.4, 17).astype(np.float32))
        d.qpos[:] = env.get_state()[0]
        mujoco.mj_kinematics(m, d)
        assert np.abs(env.body_poses()[:, :3] - d.xpos).max() < 0.01
    qpos = env.get_state()[0]
    for j in range(1, m.njnt):
        low, high = m.jnt_range[j]
        assert low - 0.2 < qpos[m.jnt_qposadr[j]] < high + 0.2, (j, qpos[m.jnt_qposadr[j]], (low, high))


@pytest.mark.parametrize("task, tolerance", [("humanoid", 0.1), ("ant", 0.2)])
def test_one_step_in_the_air_moves_the_joints_as_mujoco_does(task, tolerance):
    """MuJoCo as the oracle of the joints' dynamics: from the same state high
    above the floor (no contact), one step of the same random action gives
    the same velocities up to Jolt's iterative solver. It pins the
    multi-hinge joints' axes, the actuators' generalized forces, armature,
    damping, springs and the soft limits (Humanoid's knees start 2 degrees
    past theirs); a wrong axis or a torque on the wrong coordinate is off by
    far more. Measured: 6 % for Humanoid, 13 % for Ant, whose armature (a
    hundred times a leg's inertia) converges slowest."""
    velocities = {}
    for engine in ("mujoco", "jolt"):
        env = _core.SingleAgentCore(task, engine=engine, terminate_when_unhealthy=False, reset_noise_scale=0.0)
        env.reset(seed=0)
        qpos, qvel = env.get_state()
        qpos[2] += 3.0
        if task == "ant":  # ankles inside their ranges (qpos0 is outside)
            qpos[7:] = [0, 0.7, 0, -0.7, 0, -0.7, 0, 0.7]
        env.set_state(qpos, np.zeros_like(qvel))
        action = np.random.default_rng(0).uniform(env.action_low, env.action_high).astype(np.float32)
        env.step(action)
        velocities[engine] = env.get_state()[1]
    error = np.linalg.norm(velocities["jolt"] - velocities["mujoco"]) / np.linalg.norm(velocities["mujoco"])
    assert error < tolerance, (error, velocities)


def test_swimmer_coasts_through_the_fluid_as_mujocos_does():
    """MuJoCo's inertia-box fluid forces, applied per body by the Jolt world:
    from the same moving state with no action, one step slows the swimmer as
    MuJoCo's does (measured: 5 %)."""
    velocities = {}
    for engine in ("mujoco", "jolt"):
        env = _core.SingleAgentCore("swimmer", engine=engine, reset_noise_scale=0.0)
        env.reset(seed=0)
        qpos, _ = env.get_state()
        start = np.array([0.3, -0.2, 0.5, 1.0, -1.0])
        env.set_state(qpos, start)
        env.step(np.zeros(2, np.float32))
        velocities[engine] = env.get_state()[1]
    error = np.linalg.norm(velocities["jolt"] - velocities["mujoco"]) / np.linalg.norm(velocities["mujoco"])
    assert error < 0.1, velocities
    assert np.linalg.norm(start - velocities["jolt"]) > 0.3  # the fluid did slow it


def test_inverted_double_pendulum_reads_the_carts_limit_force():
    """qfrc_constraint[0] (the observation's last entry, clipped to 10) is the
    cart's limit force: zero in the middle of the rail, and on both engines
    pushing back (negative) within the first steps after the cart is driven
    into the upper end."""
    for engine in ("mujoco", "jolt"):
        env = _core.SingleAgentCore("inverted_double_pendulum", engine=engine, reset_noise_scale=0.0)
        env.reset(seed=0)
        assert env.step(np.zeros(1, np.float32))[0][-1] == 0.0
        qpos, qvel = env.get_state()
        qpos[0], qvel[:] = 0.95, 0.0
        qvel[0] = 1.0
        env.set_state(qpos, qvel)
        forces = [env.step(np.zeros(1, np.float32))[0][-1] for _ in range(3)]
        assert min(forces) == -10.0 and max(forces) <= 0.0, (engine, forces)


def test_timestep_and_gravity_changes_take_effect_on_jolt():
    """On Jolt, model.opt.timestep and .gravity changed between steps used to
    be ignored (a timestep of 0 gave an infinite reward, -1 stepped as if
    unchanged): they take effect as on MuJoCo, and a timestep <= 0 or a
    non-finite one, or non-finite gravity, ends the episode as a blow-up."""
    import gymnasium

    env = gymnasium.make("joltgym_marl/HalfCheetah-v0", engine="jolt")
    env.reset(seed=0)
    model = env.unwrapped.model
    start = env.unwrapped.data.qpos.copy()
    model.opt.gravity[:] = (0.0, 0.0, 9.81)  # upwards: the cheetah rises
    for _ in range(20):
        env.step(np.zeros(6))
    assert env.unwrapped.data.qpos[1] > start[1] + 0.05
    env.reset(seed=0)
    model.opt.gravity[:] = (0.0, 0.0, np.nan)
    _, reward, terminated, truncated, info = env.step(np.zeros(6))
    assert truncated and info["physics_unstable"]
    # A timestep <= 0 or not finite is refused, on either engine (test_hostile_use.py).
    for value in (0.0, -1.0, np.nan):
        env.reset(seed=0)
        model.opt.timestep = value
        with pytest.raises(ValueError, match="model.opt.timestep should be a positive, finite"):
            env.step(np.zeros(6))
        model.opt.timestep = 0.01
    env.reset(seed=0)
    model.opt.gravity[:] = (0.0, 0.0, -9.81)
    model.opt.timestep = 0.01
    assert np.isfinite(env.step(np.zeros(6))[1])


@pytest.mark.parametrize("engine", ["mujoco", "jolt"])
def test_a_state_written_into_data_takes_effect_on_either_engine(engine):
    """A user who writes env.unwrapped.data.qpos / qvel between steps (as v5's
    users do) moves the robot on MuJoCo; on Jolt the write used to be thrown
    away by the next step while the reward was computed from it (a phantom
    5 m jump: reward -99). Now both engines start the step from the written
    state, and a non-finite or huge one is a blow-up on both: the episode ends
    with physics_unstable, and the observation and reward are finite (the data
    reset to the model's reference state, as MuJoCo does; on Jolt a state of
    1e300 left NaN in both)."""
    env = gymnasium.make("joltgym_marl/HalfCheetah-v0", engine=engine)
    env.reset(seed=0)
    data = env.unwrapped.data
    data.qpos[0], data.qvel[0] = 5.0, 3.0
    _, reward, _, truncated, _ = env.step(np.zeros(6, np.float32))
    assert data.qpos[0] > 5.1 and data.qvel[0] > 2.5, (data.qpos[0], data.qvel[0])
    assert 2.0 < reward < 4.0 and not truncated  # the forward velocity, about 3 m/s
    for value in (np.nan, 1e300):  # a blow-up, before the step or during it
        env.reset(seed=0)
        data.qpos[3] = value
        obs, reward, _, truncated, info = env.step(np.zeros(6, np.float32))
        assert truncated and info["physics_unstable"], value
        assert np.isfinite(obs).all() and np.isfinite(reward) and np.isfinite(data.qpos).all(), value
    env.reset(seed=0)  # and the world goes on
    assert np.isfinite(env.step(np.zeros(6, np.float32))[0]).all()


def test_do_simulation_steps_the_jolt_world():
    """v5's do_simulation ran mujoco.mj_step on the Jolt world's mirror: its
    result was thrown away by the next step (the robot teleported back). It
    now advances the Jolt world itself, and the next step goes on from there."""
    env = gymnasium.make("joltgym_marl/HalfCheetah-v0", engine="jolt")
    env.reset(seed=0)
    unwrapped = env.unwrapped
    x0 = unwrapped.data.qpos[0]
    unwrapped.do_simulation(np.ones(6), 200)
    x = unwrapped.data.qpos[0]
    assert abs(x - x0) > 0.05
    assert_array_equal(unwrapped.get_state()[0], unwrapped.data.qpos)
    _, reward, *_ = env.step(np.zeros(6, np.float32))
    assert abs(unwrapped.data.qpos[0] - x) < 0.05 and abs(reward) < 2.0  # no jump back
    with pytest.raises(TypeError, match="n_frames"):
        unwrapped.do_simulation(np.zeros(6), 1.5)
    # As v5's: n_frames <= 0 steps nothing (it used to raise here), True is one timestep.
    for frames, steps in ((0, 0), (-1, 0), (True, 1), (np.int64(2), 2)):
        time = unwrapped.data.time
        unwrapped.do_simulation(np.zeros(6), frames)
        assert unwrapped.data.time == pytest.approx(time + steps * unwrapped.model.opt.timestep), frames


@pytest.mark.parametrize("field", ["body_mass", "geom_size", "geom_friction", "actuator_gear", "dof_damping",
                                   "jnt_range", "body_pos"])
def test_a_model_change_jolt_cannot_follow_is_refused_not_ignored(field):
    """Jolt builds its bodies from the model once: a change to a mass, a size,
    a friction, a gear, a damping, a range or a body's position used to be
    silently ignored (the rollout stayed bit for bit the unchanged one's). It
    is refused with the field's name, the world unchanged, and set back it is
    accepted again; timestep, gravity and ctrlrange changes still take effect."""
    env = gymnasium.make("joltgym_marl/HalfCheetah-v0", engine="jolt")
    env.reset(seed=0)
    model = env.unwrapped.model
    before = np.array(getattr(model, field), copy=True)
    state = env.unwrapped.get_state()
    getattr(model, field)[-1] *= 1.5  # the last body, joint or geom: the front foot's
    with pytest.raises(ValueError, match=rf"model\.{field} was changed; engine='jolt' builds"):
        env.step(np.zeros(6, np.float32))
    assert_array_equal(env.unwrapped.get_state()[0], state[0])
    getattr(model, field)[:] = before
    env.step(np.zeros(6, np.float32))
    model.actuator_ctrlrange[0] = (-0.5, 0.5)
    model.opt.timestep = 0.005
    env.step(np.zeros(6, np.float32))



@pytest.mark.parametrize("engine", ["mujoco", "jolt"])
def test_a_push_in_xfrc_applied_lifts_the_ant_on_either_engine(engine):
    """data.xfrc_applied (a perturbation test's push) did nothing on Jolt: 500 N
    upwards on the torso lifted MuJoCo's Ant, not Jolt's. Jolt applies it now (at
    the body's centre of mass); qfrc_applied, which it does not apply, is refused
    by name rather than ignored."""
    import gymnasium

    env = gymnasium.make("joltgym_marl/Ant-v0", engine=engine).unwrapped
    env.reset(seed=0)
    z0 = env.data.qpos[2]
    env.data.xfrc_applied[env.model.body("torso").id, 2] = 500.0
    for _ in range(10):
        env.step(np.zeros(8, np.float32))
    assert env.data.qpos[2] > z0 + 5.0, (engine, z0, env.data.qpos[2])  # (about 68 m on both)
    env.data.xfrc_applied[:] = 0.0
    env.reset(seed=0)
    env.data.qfrc_applied[6] = 1.0
    if engine == "jolt":
        with pytest.raises(ValueError, match=r"data.qfrc_applied\[6\] = 1.0: engine='jolt' does not apply"):
            env.step(np.zeros(8, np.float32))
        env.data.qfrc_applied[:] = 0.0
    env.step(np.zeros(8, np.float32))


@pytest.mark.parametrize("field, value", [("dof_frictionloss", 1.0), ("geom_condim", 1), ("geom_margin", 0.1),
                                          ("opt.disableflags", 1 << 6), ("opt.enableflags", 1),
                                          ("opt.density", 1000.0), ("opt.viscosity", 0.1), ("opt.wind", 5.0)])
def test_options_jolt_does_not_model_are_refused_by_name(field, value):
    """opt.disableflags (gravity, contact), dof_frictionloss, geom_condim,
    geom_margin, and the fluid options on a robot made without a fluid neither
    took effect on Jolt nor raised (docs/guides/jolt.md promised one or the
    other): each is refused by name until set back."""
    import gymnasium

    env = gymnasium.make("joltgym_marl/Ant-v0", engine="jolt").unwrapped
    env.reset(seed=0)
    owner, name = (env.model.opt, field[4:]) if field.startswith("opt.") else (env.model, field)
    kept = np.copy(getattr(owner, name))
    if np.ndim(kept):
        getattr(owner, name)[...] = value
    else:
        setattr(owner, name, value)
    with pytest.raises(ValueError, match=rf"model.{re.escape(field)} was changed; engine='jolt'"):
        env.step(np.zeros(8, np.float32))
    if np.ndim(kept):
        getattr(owner, name)[...] = kept
    else:
        setattr(owner, name, kept)
    env.step(np.zeros(8, np.float32))


def test_actuator_force_limits_take_effect_on_jolt():
    """actuator_forcerange / forcelimited were ignored on Jolt: a motor's force is
    now clamped to its range, read live, as MuJoCo clamps it."""
    import gymnasium

    def rollout(action, limit):
        env = gymnasium.make("joltgym_marl/Ant-v0", engine="jolt").unwrapped
        env.reset(seed=0)
        if limit:
            env.model.actuator_forcelimited[:] = 1
            env.model.actuator_forcerange[:] = 0.0
        for _ in range(20):
            env.step(np.full(8, action, np.float32))
        return env.data.qpos.copy()

    assert_array_equal(rollout(1.0, limit=True), rollout(0.0, limit=False))
    assert not np.array_equal(rollout(1.0, limit=False), rollout(0.0, limit=False))
