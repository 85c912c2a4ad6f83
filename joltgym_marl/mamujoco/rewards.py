"""Each robot's float64 reward as Gymnasium ``-v5`` computes it for the
action MaMuJoCo hands it, computed natively (MaMuJoCoTask's RewardRecipe,
src/native/mamujoco/mamujoco_task.h) from this description.

MaMuJoCo hands its robot a float64 global action, so ``-v5`` computes the
control cost in float64; the native robot tasks (fed float32 actions) compute
it in float32, as Gymnasium does for a float32 action. So the MaMuJoCo task
recomputes the control cost as ``-v5`` does and assembles the reward from it
and the robot's float64 terms (forward, healthy, contact, ...), operation for
operation, for rewards equal to Farama's bit for bit; the cost goes to the
info's ``reward_ctrl`` (Humanoid Standup's ``reward_quadctrl``,
CoupledHalfCheetah's ``reward_ctrl1`` / ``reward_ctrl2``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from joltgym_marl.registry import TASKS

# robot -> its control-cost weight keyword
_CTRL = {
    "half_cheetah": "ctrl_cost_weight", "ant": "ctrl_cost_weight", "hopper": "ctrl_cost_weight",
    "walker2d": "ctrl_cost_weight", "swimmer": "ctrl_cost_weight", "humanoid": "ctrl_cost_weight",
    "humanoid_standup": "ctrl_cost_weight", "reacher": "reward_control_weight",
    "pusher": "reward_control_weight", "coupled_half_cheetah": "ctrl_cost_weight",
}
_DEFAULT_WEIGHTS = {"coupled_half_cheetah": {"ctrl_cost_weight": 0.1}}


class RewardRecipe:
    """What the native reward needs: the robot's formula, its control-cost
    weight, and whether the action is float32 (then so is the cost)."""

    def __init__(self, robot: str, kwargs: dict[str, Any], float32_action: bool):
        self.robot = robot
        # With agent_conf=None MaMuJoCo passes agent_0's (float32) action on as
        # it is, so -v5 computes the control cost in float32 (the Humanoids' from
        # data.ctrl: float64 either way).
        self.float32_action = float32_action and robot not in ("humanoid", "humanoid_standup")
        name = _CTRL.get(robot)
        self.weight = None
        if name is not None:
            defaults = _DEFAULT_WEIGHTS[robot] if robot in _DEFAULT_WEIGHTS else TASKS[robot].defaults()
            self.weight = float(kwargs.get(name, defaults[name]))

    def native(self) -> tuple[str, float, bool]:
        """MaMuJoCoPool's ``reward`` argument."""
        return (self.robot, 0.0 if self.weight is None else self.weight, self.float32_action)

    @property
    def ctrl_dtype(self) -> type:
        """The dtype of the control cost -v5 reports (float32 for a float32 action)."""
        return np.float32 if self.float32_action else np.float64

    @property
    def ctrl_fields(self) -> tuple[str, ...]:
        """The info fields holding the control cost."""
        if self.weight is None:
            return ()
        if self.robot == "coupled_half_cheetah":
            return ("reward_ctrl1", "reward_ctrl2")
        return ("reward_quadctrl",) if self.robot == "humanoid_standup" else ("reward_ctrl",)
