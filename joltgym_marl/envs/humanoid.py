"""Humanoid, natively: Gymnasium's ``Humanoid-v5`` step for step.

================  ==========================================================
Action (17)       abdomen, hip, knee, shoulder and elbow torques, in [-0.4, 0.4]
Observation (348) qpos[2:] (22), qvel (23), cinert[1:] (130), cvel[1:] (78),
                  qfrc_actuator[6:] (17), cfrc_ext[1:] (78); each of the last four
                  blocks can be dropped with ``include_<block>_in_observation=False``
Reward            ``reward_forward`` = 1.25 * x_velocity of the centre of mass,
                  ``reward_survive`` = 5 while healthy,
                  ``reward_ctrl`` = -0.1 * sum(ctrl**2),
                  ``reward_contact`` = -clip(5e-7 * sum(cfrc_ext**2), -inf, 10)
Info              x_position, y_position, tendon_length, tendon_velocity,
                  distance_from_origin (these also on reset), x_velocity,
                  y_velocity and the four reward terms
Termination       torso z outside (1.0, 2.0); truncated after 1000 steps
Reset noise       qpos and qvel + U(-s, s), s = reset_noise_scale (0.01)
================  ==========================================================

Keyword arguments (Gymnasium's names and defaults): ``xml_file="humanoid.xml"``,
``frame_skip=5``, ``forward_reward_weight=1.25``, ``ctrl_cost_weight=0.1``,
``contact_cost_weight=5e-7``, ``contact_cost_range=(-inf, 10.0)``,
``healthy_reward=5.0``, ``terminate_when_unhealthy=True``,
``healthy_z_range=(1.0, 2.0)``, ``reset_noise_scale=1e-2``,
``exclude_current_positions_from_observation=True``,
``include_cinert_in_observation=True``, ``include_cvel_in_observation=True``,
``include_qfrc_actuator_in_observation=True``, ``include_cfrc_ext_in_observation=True``.
"""

from __future__ import annotations

from joltgym_marl.envs.mujoco_env import NativeMujocoEnv


class HumanoidEnv(NativeMujocoEnv):
    __doc__ = __doc__
    task = "humanoid"
    camera = (5.0, -15.0, 90.0)
