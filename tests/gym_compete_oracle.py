"""A plain-``mujoco`` computation of gym-compete's per-agent observations (its
``gym_compete/new_envs`` agents and envs), for the games' ``form="gym_compete"``.

Written from gym-compete's source, not from the native code: each agent is found
as gym-compete finds it, by the scope of its names (``Agent._set_body``,
``_set_joint``: every body and joint whose name starts with ``<scope>/``), its
qpos and qvel are the contiguous ranges those give, ``get_other_qpos`` is the
world's qpos without the agent's own, and each class's ``_get_obs`` concatenates
as written there."""

from __future__ import annotations

import mujoco
import numpy as np

# The class each agent of a game plays (gym_compete/__init__.py), in our agent order.
ROLES = {
    ("sumo_v0", "ant"): ("AntFighter", "AntFighter"),
    ("sumo_v0", "humanoid"): ("HumanoidFighter", "HumanoidFighter"),
    ("run_to_goal_v0", "ant"): ("Ant", "Ant"),
    ("run_to_goal_v0", "humanoid"): ("Humanoid", "Humanoid"),
    ("you_shall_not_pass_v0", None): ("Humanoid", "HumanoidBlocker"),
    ("kick_and_defend_v0", None): ("HumanoidKicker", "HumanoidGoalKeeper"),
}
SCOPES = {"sumo_v0": "{robot}_{k}", "run_to_goal_v0": "agent_{k}", "you_shall_not_pass_v0": "humanoid_{k}",
          "kick_and_defend_v0": "humanoid_{k}"}


class Scope:
    """One agent located by the prefix of its names."""

    def __init__(self, model: mujoco.MjModel, scope: str):
        names = [model.body(b).name for b in range(model.nbody)]
        self.body_ids = [b for b, n in enumerate(names) if n.startswith(scope + "/")]
        joints = [j for j in range(model.njnt) if model.joint(j).name.startswith(scope + "/")]
        nqpos = {int(mujoco.mjtJoint.mjJNT_FREE): 7, int(mujoco.mjtJoint.mjJNT_BALL): 4}
        self.qpos_start = int(model.jnt_qposadr[joints[0]])
        self.qpos_end = int(model.jnt_qposadr[joints[-1]]) + nqpos.get(int(model.jnt_type[joints[-1]]), 1)
        dofs = [int(model.body_dofadr[b]) for b in self.body_ids if model.body_dofnum[b] > 0]
        last = [b for b in self.body_ids if model.body_dofnum[b] > 0][-1]
        self.qvel_start, self.qvel_end = dofs[0], dofs[-1] + int(model.body_dofnum[last])
        self.torso = model.body(scope + "/torso").id


def observation(model, data, game: str, robot: str | None, k: int, *, radius: float = 0.0,
                steps_left: float = 0.0) -> np.ndarray:
    """Agent k's observation as gym-compete builds it (float64)."""
    roles = ROLES[(game, robot)]
    scopes = [Scope(model, SCOPES[game].format(robot=robot, k=j)) for j in range(2)]
    me, other = scopes[k], scopes[1 - k]
    role = roles[k]
    qpos = data.qpos[me.qpos_start:me.qpos_end]
    qvel = data.qvel[me.qvel_start:me.qvel_end]
    cfrc = np.clip(data.cfrc_ext[me.body_ids], -1, 1)
    other_qpos = np.concatenate([data.qpos[:me.qpos_start], data.qpos[me.qpos_end:]])
    humanoid_block = [data.cinert[me.body_ids].ravel(), data.cvel[me.body_ids].ravel(),
                      data.qfrc_actuator[me.qvel_start:me.qvel_end]]
    if role in ("HumanoidKicker", "HumanoidGoalKeeper"):
        # Humanoid._get_obs_relative, then the kicker's ball block (TARGET +4, TARGET_Y 3).
        oq = data.qpos[other.qpos_start:other.qpos_end]
        ball = data.qpos[model.jnt_qposadr[model.joint("ball").id]:][:3]
        parts = [qpos[2:], qvel, *humanoid_block, cfrc.ravel(), oq[:2] - qpos[:2], oq[2:],
                 ball[:2] - qpos[:2], ball[2:3], [4 - ball[0]], [3 - ball[1]], [-3 - ball[1]]]
        return np.concatenate([np.ravel(p) for p in parts])
    if role.startswith("Humanoid"):
        parts = [qpos, qvel, *humanoid_block, cfrc.ravel(), other_qpos]
    else:
        parts = [qpos, qvel, cfrc.ravel(), other_qpos]
    if role.endswith("Fighter"):
        parts += [other_qpos[:2] - qpos[:2], data.xmat[me.torso]]
        dists = [radius - np.sqrt(np.sum(data.qpos[s.qpos_start:s.qpos_start + 2] ** 2)) for s in scopes]
        parts += [[radius], [dists[k]], [dists[1 - k]], [steps_left]]
    return np.concatenate([np.ravel(p) for p in parts])


def load(world, tmp_path, radius: float | None = None) -> tuple[mujoco.MjModel, mujoco.MjData]:
    """The native world's model and a data in its state; sumo: the platform of
    the radius nearest ``radius`` in place, as the game puts it."""
    path = tmp_path / "world.mjb"
    path.write_bytes(world.model_mjb())
    model = mujoco.MjModel.from_binary_path(str(path))
    data = mujoco.MjData(model)
    qpos, qvel = world.get_state()
    data.qpos[:], data.qvel[:] = qpos, qvel
    if radius is not None:
        platforms = [b for b in range(model.nbody) if model.body(b).name.startswith("platform_")]
        radii = [model.geom_size[model.body_geomadr[b]][0] for b in platforms]
        best = platforms[int(np.argmin(np.abs(np.array(radii) - radius)))]
        data.mocap_pos[model.body_mocapid[best]] = [0, 0, model.geom_size[model.body_geomadr[best]][1]]
    mujoco.mj_forward(model, data)
    mujoco.mj_rnePostConstraint(model, data)
    return model, data


def simulate(model, data, actions: np.ndarray, frame_skip: int = 5) -> None:
    data.ctrl[:] = actions.reshape(-1)
    for _ in range(frame_skip):
        mujoco.mj_step(model, data)
    mujoco.mj_rnePostConstraint(model, data)
