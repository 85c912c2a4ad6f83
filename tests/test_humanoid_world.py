"""Humanoids in shared worlds: a Humanoid composed alone into the humanoid arena
(``assets/humanoid_arena.xml``, by the composer the games use) steps bit for bit
as Gymnasium's ``Humanoid-v5``, and two composed Humanoids touch each other."""

from __future__ import annotations

import gymnasium as gym
import mujoco
import numpy as np
import pytest
from numpy.testing import assert_array_equal

from joltgym_marl._native import core

FRAME_SKIP = 5


def composed(tmp_path, num_agents: int) -> mujoco.MjModel:
    path = tmp_path / f"humanoids{num_agents}.mjb"
    path.write_bytes(core._compose_world("humanoid_arena.xml", "humanoid.xml", "torso", "humanoid_",
                                         num_agents))
    return mujoco.MjModel.from_binary_path(str(path))


@pytest.mark.parametrize("seed", [0, 7])
def test_one_humanoid_arena_is_humanoid_v5_bit_for_bit(seed, tmp_path):
    model = composed(tmp_path, 1)
    data = mujoco.MjData(model)
    reference = gym.make("Humanoid-v5").unwrapped
    reference.reset(seed=seed)
    ref_model, ref_data = reference.model, reference.data
    assert (model.nq, model.nv, model.nu, model.nbody) == (ref_model.nq, ref_model.nv, ref_model.nu,
                                                           ref_model.nbody)
    # Inertials kept exact through the attach.
    assert_array_equal(model.body_mass, ref_model.body_mass)
    assert_array_equal(model.body_inertia, ref_model.body_inertia)
    assert model.opt.timestep == ref_model.opt.timestep
    data.qpos[:] = ref_data.qpos
    data.qvel[:] = ref_data.qvel
    mujoco.mj_forward(model, data)
    rng = np.random.default_rng(seed)
    actions = rng.uniform(-0.4, 0.4, size=(300, 17)).astype(np.float32)
    for t, action in enumerate(actions):
        reference.step(action)
        data.ctrl[:] = action
        for _ in range(FRAME_SKIP):
            mujoco.mj_step(model, data)
        mujoco.mj_rnePostConstraint(model, data)
        for field in ["qpos", "qvel", "cinert", "cvel", "qfrc_actuator", "cfrc_ext"]:
            assert_array_equal(getattr(data, field), getattr(ref_data, field), err_msg=f"{field} at step {t}")
        assert data.ncon == ref_data.ncon, f"contacts at step {t}"
    reference.close()


def test_two_composed_humanoids_touch_and_keep_their_self_collisions(tmp_path):
    model = composed(tmp_path, 2)
    data = mujoco.MjData(model)
    torso1 = model.joint("humanoid_1/root").qposadr[0]
    data.qpos[torso1:torso1 + 2] = [0.3, 0.0]  # overlapping the other humanoid
    mujoco.mj_forward(model, data)
    agent = {g: model.body(model.geom_bodyid[g]).name.split("/")[0] for g in range(model.ngeom)}
    pairs = {(agent[c.geom1], agent[c.geom2]) for c in data.contact[:data.ncon]}
    assert ("humanoid_0", "humanoid_1") in pairs or ("humanoid_1", "humanoid_0") in pairs
