"""HalfCheetah, natively: Gymnasium's ``HalfCheetah-v5`` step for step.

================  ==========================================================
Action (6)        torques on bthigh, bshin, bfoot, fthigh, fshin, ffoot, in [-1, 1]
Observation (17)  qpos[1:] (rootz, rooty, 6 joint angles), qvel (9);
                  18 with ``exclude_current_positions_from_observation=False``
Reward            ``reward_forward`` = forward_reward_weight * x_velocity,
                  ``reward_ctrl`` = -ctrl_cost_weight * sum(action**2)
Info              x_position (also on reset), x_velocity, reward_forward, reward_ctrl
Termination       never; truncated after 1000 steps
Reset noise       qpos + U(-s, s), qvel + s * N(0, 1), s = reset_noise_scale (0.1)
================  ==========================================================

Keyword arguments (Gymnasium's names and defaults): ``xml_file="half_cheetah.xml"``,
``frame_skip=5``, ``forward_reward_weight=1.0``, ``ctrl_cost_weight=0.1``,
``reset_noise_scale=0.1``, ``exclude_current_positions_from_observation=True``.
"""

from __future__ import annotations

from joltgym_marl.envs.mujoco_env import NativeMujocoEnv


class HalfCheetahEnv(NativeMujocoEnv):
    __doc__ = __doc__
    task = "half_cheetah"
