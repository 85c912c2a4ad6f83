"""Scripted baselines: weak, human-written policies for the self-play games.

A baseline is a robot's controller (how to walk in a direction, given its
joint angles: written once per robot, shared by every game of that robot) fed
by a game's adapter (where the robot's joints and its target are in that
game's observation). ``scripted_policy(game, robot, agent, game_kwargs)`` pairs them; a new
game of an existing robot needs only an adapter in ``ADAPTERS``.

* ``ant``: an open-loop trot (diagonal leg pairs alternate) steered toward a
  direction in the torso's frame, joint targets tracked by a PD law on the
  torque actuators. Sumo: walk at the opponent. Run-to-goal: walk at the goal
  line, sidestepping an opponent in the way.
* ``half_cheetah``: a sinusoidal bounding gait forward (the cheetah has no
  steering).
* ``humanoid``: a PD stance holding the standing pose, every game and role
  (walking a humanoid by script is beyond a weak baseline).

Not a script: selfplay.py and evaluate.py import it.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

# -- robot controllers ------------------------------------------------------------------------------

# Ant (ant.xml): legs at 45, 135, 225, 315 degrees; qpos order hip_1, ankle_1, ..., hip_4, ankle_4;
# actuator order hip_4, ankle_4, hip_1, ankle_1, hip_2, ankle_2, hip_3, ankle_3.
_ANT_LEG_ANGLE = np.deg2rad([45.0, 135.0, 225.0, 315.0])
_ANT_TANGENT = np.stack([-np.sin(_ANT_LEG_ANGLE), np.cos(_ANT_LEG_ANGLE)], 1)  # [4, 2]: a hip's positive swing
_ANT_ANKLE_SIGN = np.array([1.0, -1.0, -1.0, 1.0])  # ankle ranges: legs 1 and 4 positive, 2 and 3 negative
_ANT_PHASE = np.array([0.0, np.pi, 0.0, np.pi])  # trot: legs 1 and 3, then 2 and 4
_ANT_ACTUATOR_OF_JOINT = np.array([2, 3, 4, 5, 6, 7, 0, 1])  # joint j (qpos order) is driven by actuator [j]


@dataclass
class AntGait:
    """A trot toward a direction in the torso's frame."""

    period: int = 30  # env steps per gait cycle
    hip_amplitude: float = 0.5  # rad
    ankle_mid: float = 0.87  # rad (50 degrees)
    ankle_amplitude: float = 0.3  # rad
    kp: float = 2.0
    kd: float = 0.1

    def __call__(self, t: int, joint_q: np.ndarray, joint_qd: np.ndarray, direction: np.ndarray) -> np.ndarray:
        """Torques [n, 8] (actuator order) for joint angles and velocities [n, 8]
        (qpos order) and a direction [n, 2] (torso frame) to walk in."""
        d = direction / np.maximum(np.linalg.norm(direction, axis=1, keepdims=True), 1e-6)
        psi = 2 * np.pi * t / self.period + _ANT_PHASE  # [4]
        coeff = d @ _ANT_TANGENT.T  # [n, 4]: how much each hip swing moves the body along d
        hip = self.hip_amplitude * coeff * np.cos(psi)
        ankle = _ANT_ANKLE_SIGN * (self.ankle_mid + self.ankle_amplitude * np.sin(psi))
        target = np.empty_like(joint_q)
        target[:, 0::2], target[:, 1::2] = hip, ankle
        torque = self.kp * (target - joint_q) - self.kd * joint_qd
        actions = np.empty_like(torque)
        actions[:, _ANT_ACTUATOR_OF_JOINT] = torque
        return np.clip(actions, -1, 1).astype(np.float32)


@dataclass
class CheetahGait:
    """A bounding gait forward: thighs and shins swing in antiphase front to back."""

    period: int = 10
    amplitude: float = 0.8

    def __call__(self, t: int, n: int) -> np.ndarray:
        phase = 2 * np.pi * t / self.period
        # bthigh, bshin, bfoot, fthigh, fshin, ffoot
        row = self.amplitude * np.sin(phase + np.array([0.0, np.pi / 2, np.pi, np.pi, 3 * np.pi / 2, 0.0]))
        return np.tile(row.astype(np.float32), (n, 1))


# Humanoid (humanoid.xml): qpos order abdomen_z, abdomen_y, abdomen_x, then the hips, knees, shoulders
# and elbows; actuator order abdomen_y, abdomen_z, abdomen_x, then the same.
_HUMANOID_ACTUATOR_OF_JOINT = np.array([1, 0, 2, *range(3, 17)])


@dataclass
class HumanoidStance:
    """Holds the standing pose: a PD law toward zero joint angles (no balance
    feedback). A Humanoid-v5 body falls in about 45 steps with zero torques and
    stands about twice as long with this."""

    kp: float = 0.3
    kd: float = 0.03

    def __call__(self, joint_q: np.ndarray, joint_qd: np.ndarray) -> np.ndarray:
        """Actions [n, 17] (actuator order, in [-0.4, 0.4]) for joint angles and
        velocities [n, 17] (qpos order)."""
        torque = -self.kp * joint_q - self.kd * joint_qd
        actions = np.empty_like(torque)
        actions[:, _HUMANOID_ACTUATOR_OF_JOINT] = torque
        return np.clip(actions, -0.4, 0.4).astype(np.float32)


# -- game adapters ---------------------------------------------------------------------------------

Controller = Callable[[int, np.ndarray], np.ndarray]  # (step count, observations [n, obs]) -> actions


def _yaw(quat: np.ndarray) -> np.ndarray:
    """Heading [n] of unit quaternions [n, 4] (w, x, y, z): the rotation about z."""
    w, x, y, z = quat.T
    return np.arctan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z))


def _ant_sumo(agent: str, game_kwargs: dict) -> Controller:
    gait = AntGait()
    # sumo_v0 (Ants): [5:13] joint angles, [19:27] joint velocities, [27:29] the opponent's
    # horizontal position in the torso's frame: walk at it and push.
    return lambda t, obs: gait(t, obs[:, 5:13], obs[:, 19:27], obs[:, 27:29])


def _ant_run_to_goal(agent: str, game_kwargs: dict) -> Controller:
    gait = AntGait(hip_amplitude=0.8)
    # run_to_goal_v0 (Ants), world frame: [0:2] own x, y, [3:7] torso quaternion, [7:15] joint angles,
    # [21:29] joint velocities, [-3:-1] the opponent's x, y. agent_0 runs toward +x, agent_1 toward -x,
    # sidestepping an opponent standing ahead within 2 m (a lateral push ~ 2 / distance), the heading
    # turned into the torso's frame. With obs_frame="goal" agent_1 sees the world turned half a turn:
    # its goal is at +x too.
    goal_frame = game_kwargs.get("obs_frame", "world") == "goal"
    sign = 1.0 if agent.endswith("_0") or goal_frame else -1.0

    def act(t: int, obs: np.ndarray) -> np.ndarray:
        rel = obs[:, 0:2].astype(np.float64) - obs[:, -3:-1]
        dist = np.maximum(np.linalg.norm(rel, axis=1), 1e-3)
        ahead = (sign * rel[:, 0] < 0.5) & (dist < 2.0)
        heading = np.stack([np.full(len(obs), sign), np.where(ahead, 2.0 * rel[:, 1] / dist**2, 0.0)], 1)
        yaw = _yaw(obs[:, 3:7].astype(np.float64))
        c, s = np.cos(yaw), np.sin(yaw)
        direction = np.stack([c * heading[:, 0] + s * heading[:, 1], -s * heading[:, 0] + c * heading[:, 1]], 1)
        return gait(t, obs[:, 7:15], obs[:, 21:29], direction)

    return act


def _humanoid_stance(agent: str, game_kwargs: dict) -> Controller:
    stance = HumanoidStance()
    # Every humanoid game's observation starts with own qpos (24: root 7, joints 7:24) and qvel
    # (23: root 6, joints 30:47).
    return lambda t, obs: stance(obs[:, 7:24], obs[:, 30:47])


def _cheetah_race(agent: str, game_kwargs: dict) -> Controller:
    gait = CheetahGait()
    return lambda t, obs: gait(t, len(obs))


# (game, robot) -> factory of the controller of one agent (by its name: agent_0, walker_0...)
ADAPTERS: dict[tuple[str, str], Callable[[str, dict], Controller]] = {
    ("sumo", "ant"): _ant_sumo,
    ("run_to_goal", "ant"): _ant_run_to_goal,
    ("cheetah_race", "half_cheetah"): _cheetah_race,
    ("run_to_goal", "humanoid"): _humanoid_stance,
    ("sumo", "humanoid"): _humanoid_stance,
    ("you_shall_not_pass", "humanoid"): _humanoid_stance,
    ("kick_and_defend", "humanoid"): _humanoid_stance,
}


def has_scripted(game: str, robot: str) -> bool:
    return (game, robot) in ADAPTERS


def scripted_policy(game: str, robot: str, agent: str, game_kwargs: dict | None = None) -> Controller:
    """The scripted controller of the agent named ``agent`` in ``game`` played by ``robot``
    (``game_kwargs``: the game's keyword arguments, where the controller depends on them)."""
    try:
        factory = ADAPTERS[(game, robot)]
    except KeyError:
        known = ", ".join(f"{g}/{r}" for g, r in ADAPTERS)
        raise ValueError(f"no scripted baseline for game {game!r} with robot {robot!r}; expected one of "
                         f"{known} (add an adapter to ADAPTERS in examples/scripted.py)") from None
    return factory(agent, dict(game_kwargs or {}))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.parse_args()
    parser.print_help()
