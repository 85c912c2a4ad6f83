"""The Jolt-vs-MuJoCo measurements (benchmarks/jolt_vs_mujoco.py, benchmarks/jolt_trajectories.py)
measure what they say: every locomotion robot the registry puts on Jolt, one shared start state,
the torso read by MuJoCo's kinematics of each world's state."""

from __future__ import annotations

import sys
from pathlib import Path

import mujoco
import numpy as np
import pytest

from joltgym_marl import _core
from joltgym_marl.registry import TASKS

# The benchmarks are a folder of the clone, not of the package: found after everything else on the
# path, so that the joltgym_marl this session tests stays the one imported above.
sys.path.append(str(Path(__file__).resolve().parents[1]))
from benchmarks.jolt_trajectories import trajectories  # noqa: E402
from benchmarks.jolt_vs_mujoco import Torso, free_running, locomotion_tasks, sine_gait  # noqa: E402

LOCOMOTION = locomotion_tasks()


def test_the_locomotion_robots_are_the_registry_s():
    expected = [name for name, spec in TASKS.items() if "jolt" in spec.engines and not spec.is_game
                and any(p.name == "forward_reward_weight" for p in spec.params)]
    assert LOCOMOTION == expected
    assert {"half_cheetah", "hopper", "walker2d"} <= set(LOCOMOTION)


@pytest.mark.parametrize("task", LOCOMOTION)
def test_torso_is_mujoco_s_own_forward_kinematics(task):
    """Torso(qpos) is the root body's position and up axis in a MuJoCo world of that state."""
    env = _core.SingleAgentCore(task)
    env.reset(seed=3)
    qpos = env.get_state()[0]
    model = Torso(env).model
    data = mujoco.MjData(model)
    data.qpos[:] = qpos
    mujoco.mj_forward(model, data)
    x, z, up = Torso(env)(qpos)
    assert (x, z, up) == pytest.approx((data.xpos[1][0], data.xpos[1][2], data.xmat[1][8]), abs=1e-12)
    # A reset robot stands upright, tilted at most by its reset noise: a free
    # root's quaternion gets U(-s, s) on each entry (the Ant's s = 0.1: up to
    # 2 atan(sqrt(2) s / (1 - s)), 0.31 rad); a planar root's pitch only s.
    noise = next(p.default for p in TASKS[task].params if p.name == "reset_noise_scale")
    free_root = model.jnt_type[0] == mujoco.mjtJoint.mjJNT_FREE
    tilt = 2 * np.arctan(np.sqrt(2) * noise / (1 - noise)) if free_root else noise
    assert up >= np.cos(tilt)


@pytest.mark.parametrize("task", LOCOMOTION)
def test_trajectories_start_from_one_state_under_one_gait(task):
    times, paths, joint = trajectories(task, seconds=0.2, seed=5)
    mujoco_path, jolt_path = paths["mujoco"], paths["jolt"]
    assert mujoco_path.shape == jolt_path.shape == (len(times), 3)
    assert times[0] == 0.0 and np.allclose(np.diff(times), free_running(task, "mujoco").dt)
    # The Jolt world starts where MuJoCo's does (to float precision), then the engines part.
    np.testing.assert_allclose(jolt_path[0], mujoco_path[0], atol=1e-5)
    assert np.abs(jolt_path[1:] - mujoco_path[1:]).max() > 0.0
    env = free_running(task, "jolt")
    assert model_joint_name(env, joint)
    gait = np.array([sine_gait(t, env) for t in range(50)])
    assert gait.shape == (50, env.act_dim) and np.abs(gait).max() <= np.max(env.action_high) + 1e-6
    assert np.array_equal(gait, [sine_gait(t, free_running(task, "mujoco")) for t in range(50)])


def model_joint_name(env, name: str) -> bool:
    """Whether ``name`` is a hinge below the root of ``env``'s model."""
    model = Torso(env).model
    joint = model.joint(name)
    return model.jnt_bodyid[joint.id] != 1 and model.jnt_type[joint.id] == mujoco.mjtJoint.mjJNT_HINGE


def test_free_running_turns_the_fall_off():
    """The behaviour table steps fallen robots on: a Hopper driven hard keeps running past its fall."""
    env = free_running("hopper", "jolt")
    env.reset(seed=0)
    for _ in range(300):
        _, _, terminated, truncated, _ = env.step(np.ones(env.act_dim, np.float32))
        assert not terminated and not truncated
    ending = _core.SingleAgentCore("hopper", engine="jolt")
    ending.reset(seed=0)
    ended = [ending.step(np.ones(ending.act_dim, np.float32))[2] for _ in range(300)]
    assert any(ended)
