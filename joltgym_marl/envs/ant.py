"""Ant, natively: Gymnasium's ``Ant-v5`` step for step.

================  ==========================================================
Action (8)        hip and ankle torques of the four legs, in [-1, 1]
Observation (105) qpos[2:] (13), qvel (14), cfrc_ext[1:] clipped to
                  contact_force_range (78); 27 without contact forces
Reward            ``reward_forward`` = x_velocity of ``main_body``,
                  ``reward_survive`` = 1 while healthy,
                  ``reward_ctrl`` = -0.5 * sum(action**2),
                  ``reward_contact`` = -5e-4 * sum(clip(cfrc_ext)**2)
Info              x_position, y_position, distance_from_origin (these also on
                  reset), x_velocity, y_velocity and the four reward terms
Termination       state not finite, or torso z outside [0.2, 1.0]; truncated
                  after 1000 steps
Reset noise       qpos + U(-s, s), qvel + s * N(0, 1), s = reset_noise_scale (0.1)
================  ==========================================================

Keyword arguments (Gymnasium's names and defaults): ``xml_file="ant.xml"``,
``frame_skip=5``, ``forward_reward_weight=1``, ``ctrl_cost_weight=0.5``,
``contact_cost_weight=5e-4``, ``healthy_reward=1.0``, ``main_body=1``,
``terminate_when_unhealthy=True``, ``healthy_z_range=(0.2, 1.0)``,
``contact_force_range=(-1.0, 1.0)``, ``reset_noise_scale=0.1``,
``exclude_current_positions_from_observation=True``,
``include_cfrc_ext_in_observation=True``.
"""

from __future__ import annotations

from joltgym_marl.envs.mujoco_env import NativeMujocoEnv


class AntEnv(NativeMujocoEnv):
    __doc__ = __doc__
    task = "ant"
    camera = (5.0, -30.0, 90.0)
