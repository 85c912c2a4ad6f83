"""Any of Gymnasium's MuJoCo ``*-v5`` tasks on ``mujoco.batch``, the env part in NumPy.

What a user of MuJoCo's own batched stepping writes to get an RL env step:
write the actions into the bound ``ctrl``, ``batch.step(nstep=frame_skip)``,
then compute observations, rewards, terminations and truncations in NumPy
from bound fields, and reset the ended worlds with ``batch.reset`` plus the
task's reset noise. Imported only by the ``mujoco_batch`` benchmark worker (it
imports ``mujoco``).

The env is generic, so that every registered robot has this contender with
no code of its own: the model, the frame skip and the reset-noise scale come
from the Gymnasium env the task reproduces (``gymnasium.make(reference_id)``),
and the env part is the common core of the locomotion tasks:

* observation: ``qpos[1:]`` and ``qvel``;
* reward: the velocity of ``qpos[0]`` over the env step minus 0.1 times the
  squared action;
* terminated: a non-finite state; truncated: the registered episode length;
* ended worlds are reset in the same step (their row of the returned
  observation is the reset observation), qpos plus uniform noise and qvel
  plus normal noise of the task's scale, from one NumPy generator for the
  whole batch rather than one per world.

It leaves out every task-specific term (contact forces and costs, centre of
mass, health checks, fingertip distances, ...) and ``mj_rnePostConstraint``,
which Gymnasium calls after the frame skip and ``mujoco.batch`` has no batched
version of. So it does at most the work of a hand-written env of the task:
a ratio of ours over it is a lower bound of the ratio over a complete one.
"""

from __future__ import annotations

import gymnasium
import gymnasium.envs.mujoco  # noqa: F401  (registers the *-v5 envs; imports mujoco)
import mujoco
import numpy as np
from mujoco.batch import Batch

CTRL_COST_WEIGHT = 0.1
DEFAULT_RESET_NOISE = 0.1  # for a Gymnasium env that does not name its scale


def reference_model(reference_id: str):
    """Gymnasium's env of ``reference_id``: its model, frame skip and reset-noise scale."""
    env = gymnasium.make(reference_id).unwrapped
    scale = getattr(env, "_reset_noise_scale", DEFAULT_RESET_NOISE)
    return env, env.model, int(env.frame_skip), float(scale)


class BatchEnv:
    """``num_envs`` worlds of Gymnasium's ``reference_id`` on a ``mujoco.batch.Batch`` of
    ``num_threads`` threads, truncated after ``max_episode_steps`` steps."""

    def __init__(self, reference_id: str, num_envs: int, num_threads: int, max_episode_steps: int):
        # The Gymnasium env owns the model; keep it alive as long as the batch.
        self.reference, self.model, self.frame_skip, self.noise = reference_model(reference_id)
        self.num_envs = num_envs
        self.max_episode_steps = max_episode_steps
        self.batch = Batch(self.model, nsim=num_envs, nthread=num_threads)
        bind = self.batch.bind
        self.qpos, self.qvel, self.ctrl = bind("qpos"), bind("qvel"), bind("ctrl")
        self.dt = self.model.opt.timestep * self.frame_skip
        self.elapsed = np.zeros(num_envs, dtype=np.int64)
        self.rng = np.random.default_rng()

    def _obs(self, rows=slice(None)) -> np.ndarray:
        return np.concatenate([self.qpos[rows, 1:], self.qvel[rows]], axis=1)

    def _reset_rows(self, ids: np.ndarray) -> None:
        batch, scale, count = self.batch, self.noise, len(ids)
        batch.reset(ids=ids, stage=mujoco.mjtStage.mjSTAGE_NONE)
        self.qpos[ids] = self.model.qpos0 + self.rng.uniform(-scale, scale, (count, self.model.nq))
        self.qvel[ids] = scale * self.rng.standard_normal((count, self.model.nv))
        batch.forward(ids=ids)  # derived fields of the new states
        self.elapsed[ids] = 0

    def reset(self, seed: int | None = None) -> np.ndarray:
        if seed is not None:
            self.rng = np.random.default_rng(seed)
        self._reset_rows(np.arange(self.num_envs))
        return self._obs()

    def step(self, actions: np.ndarray):
        x_before = self.qpos[:, 0].copy()
        self.ctrl[:] = actions
        self.batch.step(nstep=self.frame_skip)
        velocity = (self.qpos[:, 0] - x_before) / self.dt
        reward = velocity - CTRL_COST_WEIGHT * np.square(actions).sum(axis=1)
        terminated = ~(np.isfinite(self.qpos).all(axis=1) & np.isfinite(self.qvel).all(axis=1))
        self.elapsed += 1
        truncated = self.elapsed >= self.max_episode_steps
        obs = self._obs()
        ended = np.flatnonzero(terminated | truncated)
        if len(ended):
            self._reset_rows(ended)
            obs[ended] = self._obs(ended)
        return obs, reward, terminated, truncated

    def close(self) -> None:
        self.reference.close()
