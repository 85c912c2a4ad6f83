"""Scripted baselines: weak, human-written policies for the self-play games.

A baseline is a robot's controller (how to walk in a direction, given its
joint angles: written once per robot, shared by every game of that robot) fed
by a game's adapter (where the robot's joints and its target are in that
game's observation). ``scripted_policy(game, robot, role)`` pairs them; a new
game of an existing robot needs only an adapter in ``ADAPTERS``.

* ``ant``: an open-loop trot (diagonal leg pairs alternate) steered toward a
  direction in the torso's frame, joint targets tracked by a PD law on the
  torque actuators.
* ``half_cheetah``: a sinusoidal bounding gait forward (the cheetah has no
  steering).

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


# -- game adapters ---------------------------------------------------------------------------------

Controller = Callable[[int, np.ndarray], np.ndarray]  # (step count, observations [n, obs]) -> actions


def _ant_sumo(role: str) -> Controller:
    gait = AntGait()
    # sumo_v0 (Ants): [5:13] joint angles, [19:27] joint velocities, [27:29] the opponent's
    # horizontal position in the torso's frame: walk at it and push.
    return lambda t, obs: gait(t, obs[:, 5:13], obs[:, 19:27], obs[:, 27:29])


def _cheetah_race(role: str) -> Controller:
    gait = CheetahGait()
    return lambda t, obs: gait(t, len(obs))


# (game, robot) -> factory of the controller of one role
ADAPTERS: dict[tuple[str, str], Callable[[str], Controller]] = {
    ("sumo", "ant"): _ant_sumo,
    ("cheetah_race", "half_cheetah"): _cheetah_race,
}


def has_scripted(game: str, robot: str) -> bool:
    return (game, robot) in ADAPTERS


def scripted_policy(game: str, robot: str, role: str) -> Controller:
    """The scripted controller of ``role`` in ``game`` played by ``robot``."""
    try:
        factory = ADAPTERS[(game, robot)]
    except KeyError:
        known = ", ".join(f"{g}/{r}" for g, r in ADAPTERS)
        raise ValueError(f"no scripted baseline for game {game!r} with robot {robot!r}; expected one of "
                         f"{known} (add an adapter to ADAPTERS in examples/scripted.py)") from None
    return factory(role)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.parse_args()
    parser.print_help()
