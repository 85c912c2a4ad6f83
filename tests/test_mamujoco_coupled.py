"""CoupledHalfCheetah (1p1 and None) against a plain-mujoco computation.

Farama's own env cannot be the oracle here: on MuJoCo 4.0.0 its observation
raises IndexError (``data.ten_J`` is stored sparse, Farama indexes it as a
dense [ntendon, nv] matrix). The reference below is what Farama's code means
to compute: its MJCF asset loaded with ``mujoco``, Gymnasium's MujocoEnv
reset and step sequence (np_random noise, ctrl, 5 mj_step, rnePostConstraint),
Farama's reward and info, its observation with ten_J densified, and the
agents' observations by Farama's own ``build_obs`` on its own joint graph,
given a data view whose ``ten_J`` is dense.
"""

from __future__ import annotations

import os
import types

import mujoco
import numpy as np
import pytest
from gymnasium.utils import seeding

from joltgym_marl import mamujoco_v1
from mamujoco_oracle import farama_obsk

FARAMA_XML = os.path.join(os.path.dirname(farama_obsk.__file__), "assets", "coupled_half_cheetah.xml")
LIMIT = 60


class Reference:
    def __init__(self, agent_conf, obsk):
        self.model = mujoco.MjModel.from_xml_path(FARAMA_XML)
        self.data = mujoco.MjData(self.model)
        self.obsk = None if agent_conf is None else obsk
        if self.obsk is not None:
            parts, edges, self.globals = farama_obsk.get_parts_and_edges("CoupledHalfCheetah", agent_conf)
            self.k_dicts = [farama_obsk.get_joints_at_kdist(p, edges, k=obsk) for p in parts]
            cats = [["qpos", "qvel", "ten_J", "ten_length", "ten_velocity"], ["qpos"]]
            self.categories = [cats[min(k, 1)] for k in range(obsk + 1)]
        self.rng = None
        self.t = 0

    def dense_ten_j(self):
        m, d = self.model, self.data
        dense = np.zeros((m.ntendon, m.nv))
        for t in range(m.ntendon):
            for k in range(m.ten_J_rowadr[t], m.ten_J_rowadr[t] + m.ten_J_rownnz[t]):
                dense[t, m.ten_J_colind[k]] = d.ten_J[k]
        return dense

    def state(self):
        d, j = self.data, self.dense_ten_j()
        return np.concatenate([d.qpos.flat[1:9], d.qpos.flat[10:18], d.qvel.flat, j[0][:2], j[0][9:11],
                               d.ten_length, d.ten_velocity])

    def observations(self):
        if self.obsk is None:
            return {"agent_0": self.state()}
        d = self.data
        view = types.SimpleNamespace(qpos=d.qpos, qvel=d.qvel, ten_J=self.dense_ten_j(), ten_length=d.ten_length,
                                     ten_velocity=d.ten_velocity, qfrc_actuator=d.qfrc_actuator)
        return {f"agent_{i}": farama_obsk.build_obs(view, k, self.categories, self.globals, ("qpos", "qvel"))
                for i, k in enumerate(self.k_dicts)}

    def reset(self, seed=None):
        if seed is not None or self.rng is None:
            self.rng, _ = seeding.np_random(seed)
        m, d = self.model, self.data
        mujoco.mj_resetData(m, d)
        qpos = m.qpos0 + self.rng.uniform(low=-0.1, high=0.1, size=m.nq)
        qvel = np.zeros(m.nv) + self.rng.standard_normal(m.nv) * 0.1
        d.qpos[:], d.qvel[:] = qpos, qvel
        mujoco.mj_forward(m, d)
        self.t = 0
        return self.observations()

    def step(self, global_action):
        m, d = self.model, self.data
        half = len(d.qpos) // 2
        x1, x2 = d.qpos[0], d.qpos[half]
        d.ctrl[:] = global_action
        mujoco.mj_step(m, d, nstep=5)
        mujoco.mj_rnePostConstraint(m, d)
        dt = m.opt.timestep * 5
        v1, v2 = (d.qpos[0] - x1) / dt, (d.qpos[half] - x2) / dt
        c1 = 0.1 * np.square(global_action[:6]).sum()
        c2 = 0.1 * np.square(global_action[6:]).sum()
        forward = 1 * (v1 + v2) / 2.0
        reward = forward - (c1 + c2) / 2.0
        info = {"x_position1": d.qpos[0], "x_position2": d.qpos[half], "x_velocity1": v1, "x_velocity2": v2,
                "reward_run": forward, "reward_ctrl1": c1, "reward_ctrl2": c2}
        self.t += 1
        return self.observations(), reward, self.t >= LIMIT, info


def test_farama_oracle_is_broken_on_this_mujoco():
    """The reason for the plain-mujoco reference (if Farama fixes it, compare with it instead)."""
    from mamujoco_oracle import make_oracle

    with pytest.raises(IndexError):
        env = make_oracle("CoupledHalfCheetah", "1p1", 1)
        env.reset(seed=0)


@pytest.mark.parametrize(("conf", "obsk"), [("1p1", 0), ("1p1", 1), ("1p1", 2), (None, 1)])
def test_coupled_half_cheetah_equals_the_plain_mujoco_computation(conf, obsk):
    ours = mamujoco_v1.parallel_env("CoupledHalfCheetah", conf, agent_obsk=obsk, max_episode_steps=LIMIT)
    ref = Reference(conf, obsk)
    rng = np.random.default_rng(1)
    obs = ours.reset(seed=3)[0]
    expected = ref.reset(seed=3)
    ends = 0
    for t in range(150):
        for agent in expected:
            assert obs[agent].dtype == np.float64
            assert np.array_equal(obs[agent], expected[agent]), (t, agent, np.abs(obs[agent] - expected[agent]).max())
        assert np.array_equal(ours.state(), ref.state()), t
        actions = {a: rng.uniform(-1, 1, ours.action_space(a).shape).astype(np.float32) for a in ours.agents}
        global_action = ours.map_local_actions_to_global_action(actions)
        if conf is None:  # Farama passes agent_0's float32 action on as it is
            global_action = actions["agent_0"]
        obs, rew, term, trunc, infos = ours.step(actions)
        expected, e_rew, e_trunc, e_info = ref.step(global_action)
        assert rew["agent_0"] == e_rew and not term["agent_0"] and trunc["agent_0"] == e_trunc, t
        for key, value in e_info.items():
            assert infos["agent_0"][key] == value, (t, key)
        if e_trunc:
            ends += 1
            obs, expected = ours.reset()[0], ref.reset()
    assert ends == 2
