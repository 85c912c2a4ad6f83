"""Gymnasium's ``*-v5`` locomotion tasks on ``mujoco.batch``, the rest in NumPy.

What a user of MuJoCo's own batched stepping writes to get an RL env step:
write the actions into the bound ``ctrl``, ``batch.step(nstep=frame_skip)``,
then compute observations, rewards, terminations and truncations in NumPy from
bound fields, and reset the ended worlds with ``batch.reset`` plus the task's
reset noise. Imported only by the ``mujoco_batch`` benchmark worker (it imports
``mujoco``).

Honest differences from Gymnasium's envs (and from joltgym_marl), none of which
makes this contender slower:

* Gymnasium calls ``mujoco.mj_rnePostConstraint`` after the frame skip so that
  ``cfrc_ext`` (external contact forces on bodies) is current; ``mujoco.batch``
  has no batched version of it, and ``mj_step`` alone does not compute
  ``cfrc_ext``. So the Humanoid and Ant observations and contact costs here
  read the bound ``cfrc_ext`` without ``mj_rnePostConstraint``: as bound, that
  field is not refreshed by stepping (it reads zeros), which skips that work.
* Ended worlds are reset in the same step (their row of the returned
  observation is the reset observation), and the reset noise comes from one
  NumPy generator for the whole batch rather than one per world.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import gymnasium.envs.mujoco
import mujoco
import numpy as np
from mujoco.batch import Batch


@dataclass(frozen=True)
class TaskSpec:
    xml: str
    frame_skip: int
    reset_noise: float
    velocity_noise: str  # "normal": qvel + scale * N(0, 1); "uniform": qvel + U(-scale, scale)


SPECS = {
    "half_cheetah": TaskSpec("half_cheetah.xml", 5, 0.1, "normal"),
    "humanoid": TaskSpec("humanoid.xml", 5, 1e-2, "uniform"),
    "ant": TaskSpec("ant.xml", 5, 0.1, "normal"),
}

MAX_EPISODE_STEPS = 1000


def gymnasium_asset(name: str) -> str:
    return os.path.join(os.path.dirname(gymnasium.envs.mujoco.__file__), "assets", name)


class BatchEnv:
    """``num_envs`` worlds of one task on a ``mujoco.batch.Batch`` of ``num_threads`` threads."""

    def __init__(self, task: str, num_envs: int, num_threads: int):
        self.task = task
        self.spec = SPECS[task]
        self.model = mujoco.MjModel.from_xml_path(gymnasium_asset(self.spec.xml))
        self.num_envs = num_envs
        self.batch = Batch(self.model, nsim=num_envs, nthread=num_threads)
        bind = self.batch.bind
        self.qpos, self.qvel, self.ctrl = bind("qpos"), bind("qvel"), bind("ctrl")
        if task == "humanoid":
            self.cinert, self.cvel = bind("cinert"), bind("cvel")
            self.qfrc_actuator, self.cfrc_ext = bind("qfrc_actuator"), bind("cfrc_ext")
            self.xipos = bind("xipos")
            self.body_mass = self.model.body_mass.copy()
            self.total_mass = self.body_mass.sum()
        elif task == "ant":
            self.cfrc_ext, self.xpos = bind("cfrc_ext"), bind("xpos")
        self.dt = self.model.opt.timestep * self.spec.frame_skip
        self.elapsed = np.zeros(num_envs, dtype=np.int64)
        self.rng = np.random.default_rng()

    # -- the pieces a user writes --------------------------------------------------

    def _x(self) -> np.ndarray:
        """The x position the forward reward differentiates."""
        if self.task == "half_cheetah":
            return self.qpos[:, 0].copy()
        if self.task == "humanoid":  # centre of mass, from the bodies' inertial frames
            return self.xipos[:, :, 0] @ self.body_mass / self.total_mass
        return self.xpos[:, 1, 0].copy()  # the ant's torso

    def _obs(self, rows=slice(None)) -> np.ndarray:
        if self.task == "half_cheetah":
            return np.concatenate([self.qpos[rows, 1:], self.qvel[rows]], axis=1)
        n = self.qpos[rows].shape[0]
        if self.task == "humanoid":
            return np.concatenate([
                self.qpos[rows, 2:], self.qvel[rows],
                self.cinert[rows, 1:].reshape(n, -1), self.cvel[rows, 1:].reshape(n, -1),
                self.qfrc_actuator[rows, 6:], self.cfrc_ext[rows, 1:].reshape(n, -1),
            ], axis=1)
        return np.concatenate([
            self.qpos[rows, 2:], self.qvel[rows],
            np.clip(self.cfrc_ext[rows, 1:], -1.0, 1.0).reshape(n, -1),
        ], axis=1)

    def _reset_rows(self, ids: np.ndarray) -> None:
        batch, scale, count = self.batch, self.spec.reset_noise, len(ids)
        batch.reset(ids=ids, stage=mujoco.mjtStage.mjSTAGE_NONE)
        self.qpos[ids] = self.model.qpos0 + self.rng.uniform(-scale, scale, (count, self.model.nq))
        if self.spec.velocity_noise == "normal":
            self.qvel[ids] = scale * self.rng.standard_normal((count, self.model.nv))
        else:
            self.qvel[ids] = self.rng.uniform(-scale, scale, (count, self.model.nv))
        batch.forward(ids=ids)  # derived fields (cinert, xpos, ...) of the new states
        self.elapsed[ids] = 0

    def reset(self, seed: int | None = None) -> np.ndarray:
        if seed is not None:
            self.rng = np.random.default_rng(seed)
        self._reset_rows(np.arange(self.num_envs))
        return self._obs()

    def step(self, actions: np.ndarray):
        x_before = self._x()
        self.ctrl[:] = actions
        self.batch.step(nstep=self.spec.frame_skip)
        velocity = (self._x() - x_before) / self.dt
        squared_action = np.square(actions).sum(axis=1)
        terminated = np.zeros(self.num_envs, dtype=bool)
        if self.task == "half_cheetah":
            reward = velocity - 0.1 * squared_action
        elif self.task == "humanoid":
            z = self.qpos[:, 2]
            terminated = ~((z > 1.0) & (z < 2.0))
            contact = np.minimum(5e-7 * np.square(self.cfrc_ext).sum(axis=(1, 2)), 10.0)
            reward = 1.25 * velocity + 5.0 * ~terminated - 0.1 * squared_action - contact
        else:
            z = self.qpos[:, 2]
            finite = np.isfinite(self.qpos).all(axis=1) & np.isfinite(self.qvel).all(axis=1)
            terminated = ~(finite & (z >= 0.2) & (z <= 1.0))
            contact = 5e-4 * np.square(np.clip(self.cfrc_ext, -1.0, 1.0)).sum(axis=(1, 2))
            reward = velocity + 1.0 * ~terminated - 0.5 * squared_action - contact
        self.elapsed += 1
        truncated = self.elapsed >= MAX_EPISODE_STEPS
        obs = self._obs()
        ended = np.flatnonzero(terminated | truncated)
        if len(ended):
            self._reset_rows(ended)
            obs[ended] = self._obs(ended)
        return obs, reward, terminated, truncated
