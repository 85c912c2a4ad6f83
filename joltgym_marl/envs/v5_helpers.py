"""The helpers each Gymnasium ``-v5`` env class has beside the ``MujocoEnv``
API (``control_cost``, ``healthy_reward``, ``is_healthy``, ``contact_forces``,
``contact_cost``), computed from the live ``data`` and the env's keyword
arguments with v5's formulas, so that they return what v5's return, of the
same types. The step itself never calls them: the native task computes the
same terms.
"""

from __future__ import annotations

import numpy as np


class ControlCost:
    """``control_cost(action)``: the weighted squared norm of the action."""

    def control_cost(self, action):
        return self._options["ctrl_cost_weight"] * np.sum(np.square(action))


class ControlCostOfCtrl:
    """Humanoid's ``control_cost``: of ``data.ctrl`` (whatever the action)."""

    def control_cost(self, action):
        return self._options["ctrl_cost_weight"] * np.sum(np.square(self.data.ctrl))


class HealthyReward:
    """``healthy_reward``: the reward per step while healthy, else 0."""

    @property
    def healthy_reward(self):
        return self.is_healthy * self._options["healthy_reward"]


class AntHelpers(ControlCost, HealthyReward):
    @property
    def is_healthy(self):
        state = self.state_vector()
        low, high = self._options["healthy_z_range"]
        return np.isfinite(state).all() and low <= state[2] <= high

    @property
    def contact_forces(self):
        low, high = self._options["contact_force_range"]
        return np.clip(self.data.cfrc_ext, low, high)

    @property
    def contact_cost(self):
        return self._options["contact_cost_weight"] * np.sum(np.square(self.contact_forces))


class HopperHelpers(ControlCost, HealthyReward):
    @property
    def is_healthy(self):
        z, angle = self.data.qpos[1:3]
        rest = self.state_vector()[2:]
        (s_low, s_high), (z_low, z_high), (a_low, a_high) = (
            self._options[k] for k in ("healthy_state_range", "healthy_z_range", "healthy_angle_range"))
        inside = np.all(np.logical_and(s_low < rest, rest < s_high))
        return all((inside, z_low < z < z_high, a_low < angle < a_high))


class Walker2dHelpers(ControlCost, HealthyReward):
    @property
    def is_healthy(self):
        z, angle = self.data.qpos[1:3]
        (z_low, z_high), (a_low, a_high) = (self._options[k] for k in ("healthy_z_range", "healthy_angle_range"))
        return (z_low < z < z_high) and (a_low < angle < a_high)


class HumanoidHelpers(ControlCostOfCtrl, HealthyReward):
    @property
    def is_healthy(self):
        low, high = self._options["healthy_z_range"]
        return low < self.data.qpos[2] < high

    @property
    def contact_cost(self):
        low, high = self._options["contact_cost_range"]
        return np.clip(self._options["contact_cost_weight"] * np.sum(np.square(self.data.cfrc_ext)), low, high)


HELPERS: dict[str, tuple[type, ...]] = {
    "ant": (AntHelpers,),
    "half_cheetah": (ControlCost,),
    "hopper": (HopperHelpers,),
    "humanoid": (HumanoidHelpers,),
    "swimmer": (ControlCost,),
    "walker2d": (Walker2dHelpers,),
}
