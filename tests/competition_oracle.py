"""Plain-``mujoco`` re-computations of the competition games' pieces (the
observation, the reference's shaping), shared by the games' oracle tests.

Everything is located by name in the compiled model (``<prefix>_<k>/torso`` and
its joints, actuators and bodies), not through the native index maps, and the
arithmetic follows each game's docstring in float64 (Python floats)."""

from __future__ import annotations

import math

import mujoco
import numpy as np

ANT = dict(humanoid=False, forward=1.0, ctrl=0.5, contact=0.5e-3, clipped=True, cap=math.inf, alive=1.0,
           standing=0.28, fall=0.28)
HUMANOID = dict(humanoid=True, forward=0.25, ctrl=0.1, contact=0.5e-6, clipped=False, cap=10.0, alive=5.0,
                standing=1.0, fall=0.8)
RULES = {"ant": ANT, "humanoid": HUMANOID}


class Robots:
    """Agents ``<prefix>_<k>`` of one robot kind in a compiled shared world."""

    def __init__(self, model: mujoco.MjModel, prefix: str, robot: str, num_agents: int = 2):
        self.model, self.rules, self.n = model, RULES[robot], num_agents
        self.qpos, self.qvel, self.bodies, self.torso = [], [], [], []
        free = mujoco.mjtJoint.mjJNT_FREE
        for k in range(num_agents):
            torso = model.body(f"{prefix}_{k}/torso").id
            bodies = [b for b in range(model.nbody) if model.body_rootid[b] == torso]
            joints = [j for j in range(model.njnt) if model.jnt_bodyid[j] in bodies]
            nq = sum(7 if model.jnt_type[j] == free else 1 for j in joints)
            nv = sum(6 if model.jnt_type[j] == free else 1 for j in joints)
            self.qpos.append(np.arange(model.jnt_qposadr[joints[0]], model.jnt_qposadr[joints[0]] + nq))
            self.qvel.append(np.arange(model.jnt_dofadr[joints[0]], model.jnt_dofadr[joints[0]] + nv))
            self.bodies.append(bodies)
            self.torso.append(torso)

    def root(self, data, k):
        return data.qpos[self.qpos[k][:3]]

    def com(self, data, k):
        return data.subtree_com[self.torso[k]]

    def standing(self, data, k, floor=0.0):
        return data.qpos[self.qpos[k][2]] - floor >= self.rules["standing"]

    def fallen(self, data, k, floor=0.0):
        z = data.qpos[self.qpos[k][2]] - floor
        return not (z >= self.rules["fall"])

    def obs(self, data, k, o) -> list[float]:
        b = self.bodies[k]
        row = [*data.qpos[self.qpos[k]], *data.qvel[self.qvel[k]]]
        if self.rules["humanoid"]:
            row += [*data.cinert[b].ravel(), *data.cvel[b].ravel(), *data.qfrc_actuator[self.qvel[k]]]
        row += [*np.clip(data.cfrc_ext[b].ravel(), -1.0, 1.0)]
        row += [*self.root(data, o)]
        return row

    def shaping(self, data, k, action, progress, dt, floor=0.0):
        """(forward, ctrl, contact, survive), the costs positive."""
        r = self.rules
        forward = r["forward"] * progress / dt
        sq = 0.0
        for a in action:
            sq += float(a) * float(a)
        ctrl = r["ctrl"] * sq
        csq = 0.0
        for f in data.cfrc_ext[self.bodies[k]].ravel():
            v = min(max(f, -1.0), 1.0) if r["clipped"] else f
            csq += v * v
        contact = min(r["contact"] * csq, r["cap"])
        survive = r["alive"] if self.standing(data, k, floor) else -r["alive"]
        return forward, ctrl, contact, survive

    def touching(self, data, k, j) -> bool:
        own = {g for g in range(self.model.ngeom) if self.model.geom_bodyid[g] in self.bodies[k]}
        other = {g for g in range(self.model.ngeom) if self.model.geom_bodyid[g] in self.bodies[j]}
        for c in data.contact[:data.ncon]:
            if c.dist < 0 and ((c.geom1 in own and c.geom2 in other) or (c.geom2 in own and c.geom1 in other)):
                return True
        return False


def load(world, tmp_path) -> tuple[mujoco.MjModel, mujoco.MjData]:
    """The native world's compiled model and a data in its current state."""
    path = tmp_path / "world.mjb"
    path.write_bytes(world.model_mjb())
    model = mujoco.MjModel.from_binary_path(str(path))
    data = mujoco.MjData(model)
    qpos, qvel = world.get_state()
    data.qpos[:], data.qvel[:] = qpos, qvel
    mujoco.mj_forward(model, data)
    return model, data


def simulate(model, data, actions: np.ndarray, frame_skip: int = 5) -> None:
    data.ctrl[:] = actions.reshape(-1)
    for _ in range(frame_skip):
        mujoco.mj_step(model, data)
    mujoco.mj_rnePostConstraint(model, data)
