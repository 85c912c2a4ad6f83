"""Each robot's float64 reward in Gymnasium ``-v5``'s order of operations,
from the native info terms and the float64 control cost of the global action.

MaMuJoCo hands its robot a float64 global action, so ``-v5`` computes the
control cost in float64; the native tasks (fed float32 actions) compute it
in float32, as Gymnasium does for a float32 action. So the control cost is
recomputed here, as ``-v5`` does, and the reward assembled from it and the
native float64 terms (forward, healthy, contact, ...), operation for
operation, for bit-identical rewards.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from joltgym_marl.registry import TASKS

# robot -> (control-cost weight keyword, how the cost is written)
_CTRL = {
    "half_cheetah": "ctrl_cost_weight", "ant": "ctrl_cost_weight", "hopper": "ctrl_cost_weight",
    "walker2d": "ctrl_cost_weight", "swimmer": "ctrl_cost_weight", "humanoid": "ctrl_cost_weight",
    "humanoid_standup": "ctrl_cost_weight", "reacher": "reward_control_weight",
    "pusher": "reward_control_weight", "coupled_half_cheetah": "ctrl_cost_weight",
}
_DEFAULT_WEIGHTS = {"coupled_half_cheetah": {"ctrl_cost_weight": 0.1}}


class RewardRecipe:
    """Computes [num_envs] float64 rewards (and the info's reward_ctrl) of one step."""

    def __init__(self, robot: str, kwargs: dict[str, Any], fields: dict[str, int], float32_action: bool):
        self.robot = robot
        # With agent_conf=None MaMuJoCo passes agent_0's (float32) action on as
        # it is, so -v5 computes the control cost in float32 (the Humanoids' from
        # data.ctrl: float64 either way).
        self.float32_action = float32_action and robot not in ("humanoid", "humanoid_standup")
        name = _CTRL.get(robot)
        self.weight = None
        if name is not None:
            defaults = _DEFAULT_WEIGHTS[robot] if robot in _DEFAULT_WEIGHTS else TASKS[robot].defaults()
            self.weight = kwargs.get(name, defaults[name])
        self.f = fields

    def control(self, actions64: np.ndarray) -> np.ndarray | None:
        """The info's ``reward_ctrl`` ([num_envs]), as -v5 computes it: in float32
        for a float32 action (then the sums that follow stay float32 too)."""
        if self.weight is None:
            return None
        square = np.square(actions64.astype(np.float32) if self.float32_action else actions64)
        if self.robot == "coupled_half_cheetah":  # each cheetah's cost, [rows, 2] (positive, as Farama's info)
            half = square.shape[1] // 2
            return np.stack([self.weight * square[:, :half].sum(axis=1),
                             self.weight * square[:, half:].sum(axis=1)], axis=1)
        if self.robot in ("reacher", "pusher"):
            return -square.sum(axis=1) * self.weight
        return -(self.weight * np.sum(square, axis=1))

    def reward(self, info: np.ndarray, ctrl: np.ndarray | None) -> np.ndarray:
        """``info``: [num_envs, width] native info rows; ``ctrl``: control()."""
        f = self.f

        def term(name):
            return info[:, f[name]]

        r = self.robot
        if r in ("half_cheetah", "swimmer"):
            return term("reward_forward") - (-ctrl)
        if r in ("hopper", "walker2d"):
            return (term("reward_forward") + term("reward_survive")) - (-ctrl)
        if r in ("ant", "humanoid"):
            return (term("reward_forward") + term("reward_survive")) - ((-ctrl) + (-term("reward_contact")))
        if r == "humanoid_standup":
            return ((term("reward_linup") - (-ctrl)) - (-term("reward_impact"))) + 1
        if r == "reacher":
            return term("reward_dist") + ctrl
        if r == "pusher":
            return (term("reward_dist") + ctrl) + term("reward_near")
        if r == "coupled_half_cheetah":
            return term("reward_run") - (ctrl[:, 0] + ctrl[:, 1]) / 2.0
        if r == "inverted_pendulum":
            return term("reward_survive")
        if r == "inverted_double_pendulum":
            return (term("reward_survive") - (-term("distance_penalty"))) - (-term("velocity_penalty"))
        raise AssertionError(r)

    @property
    def ctrl_fields(self) -> tuple[str, ...]:
        """The info fields control() gives, in its column order."""
        if self.weight is None:
            return ()
        if self.robot == "coupled_half_cheetah":
            return ("reward_ctrl1", "reward_ctrl2")
        return ("reward_quadctrl",) if self.robot == "humanoid_standup" else ("reward_ctrl",)
