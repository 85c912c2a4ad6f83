"""Compiles a factorization into the index plan that the native core applies
after every step: each agent's observation (MaMuJoCo's k-hop rule) and the
global state (the robot's ``-v5`` observation), as one flat list of reads
from mjData, in float64.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from joltgym_marl._native import core as _core
from joltgym_marl.mamujoco.graphs import Joint, Term

SOURCES = list(_core.MAMUJOCO_PLAN_SOURCES)
OPS = list(_core.MAMUJOCO_PLAN_OPS)
BODY_WIDTH = {"cinert": 10, "cvel": 6, "cfrc_ext": 6}
CATEGORIES = ("qpos", "qvel", "qfrc_actuator", "cinert", "cvel", "cfrc_ext", "ten_J",
              "ten_length", "ten_velocity", "fingertip_dist")


@dataclass(frozen=True)
class Sizes:
    nq: int
    nv: int
    nbody: int
    ntendon: int

    def of(self, source: str) -> int:
        return {"qpos": self.nq, "qvel": self.nv, "qfrc_actuator": self.nv,
                "qfrc_constraint": self.nv, "cinert": 10 * self.nbody, "cvel": 6 * self.nbody,
                "cfrc_ext": 6 * self.nbody, "xpos": 3 * self.nbody, "ten_length": self.ntendon,
                "ten_velocity": self.ntendon, "ten_J": self.ntendon}[source]


class PlanBuilder:
    """Accumulates plan rows: (op, source, index, index2) and (low, high)."""

    def __init__(self, sizes: Sizes):
        self.sizes = sizes
        self.ops: list[tuple[int, int, int, int]] = []
        self.bounds: list[tuple[float, float]] = []

    def __len__(self) -> int:
        return len(self.ops)

    def _index(self, source: str, index: int) -> int:
        size = self.sizes.of(source)
        if not -size <= index < size:
            raise ValueError(f"index {index} of {source} is outside its {size} values")
        return index + size if index < 0 else index

    def add(self, term: Term) -> None:
        op, source, index, *rest = term
        index2, low, high = 0, 0.0, 0.0
        if source == "ten_J":
            index2 = int(rest[0])
            if not 0 <= index2 < self.sizes.nv:
                raise ValueError(f"ten_J column {index2} is outside the model's {self.sizes.nv} dofs")
        elif op == "diff":
            index2 = self._index(source, int(rest[0]))
        elif op == "clip":
            low, high = float(rest[0]), float(rest[1])
        index = int(index) if source == "ten_J" else self._index(source, int(index))
        self.ops.append((OPS.index(op), SOURCES.index(source), index, index2))
        self.bounds.append((low, high))

    def copy(self, source: str, indices) -> None:
        for i in indices:
            self.add(("copy", source, int(i)))

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        ops = np.asarray(self.ops, dtype=np.int64).reshape(-1, 4)
        bounds = np.asarray(self.bounds, dtype=np.float64).reshape(-1, 2)
        return ops, bounds


def joints_at_distance(part: Sequence[Joint], edges: Sequence[tuple[Joint, ...]], k: int,
                       ) -> list[list[Joint]]:
    """The joints at graph distance 0..k from an agent's own, each depth sorted
    by label, as MaMuJoCo does. Joints sharing a label (Pusher's) are ordered by
    actuator index: Farama leaves their order to Python's set iteration
    (memory addresses), which differs from run to run."""
    order = {}
    for e in [tuple(part), *edges]:
        for j in e:
            order.setdefault(id(j), len(order))

    def sort(nodes):
        return sorted(nodes, key=lambda j: (j.label, -1 if j.act is None else j.act, order[id(j)]))

    seen = {id(j): j for j in part}
    frontier = dict(seen)
    depths = [sort(frontier.values())]
    for _ in range(k):
        reached: dict[int, Joint] = {}
        for j in frontier.values():
            for e in edges:
                if any(x is j for x in e):
                    for x in e:
                        if x is not j and id(x) not in seen:
                            reached[id(x)] = x
        if not reached:  # every farther depth is empty too
            break
        seen.update(reached)
        frontier = reached
        depths.append(sort(reached.values()))
    return depths


def _joint_terms(plan: PlanBuilder, joint: Joint, category: str, used_bodies: dict[str, set],
                 is_global: bool) -> None:
    if category in joint.extra:
        for term in joint.extra[category]:
            plan.add(term)
        return
    if category in ("qpos", "qvel"):
        index = joint.qpos if category == "qpos" else joint.qvel
        if index is not None:
            plan.add(("copy", category, index))
        return
    if category == "qfrc_actuator":
        if joint.qvel is not None:
            plan.add(("copy", "qfrc_actuator", joint.qvel))
        return
    if category in BODY_WIDTH or is_global:
        width = BODY_WIDTH.get(category)
        if width is None:
            return
        seen = used_bodies.setdefault(category, set())
        for body in joint.bodies:
            if body in seen:
                continue
            seen.add(body)
            for c in range(width):
                flat = width * body + c
                if joint.body_clip is not None:
                    plan.add(("clip", category, flat, *joint.body_clip))
                else:
                    plan.add(("copy", category, flat))


def add_agent_observation(plan: PlanBuilder, depths: list[list[Joint]],
                          local_categories: Sequence[Sequence[str]], global_joints: Sequence[Joint],
                          global_categories: Sequence[str]) -> None:
    """MaMuJoCo's rule: local categories per depth for every joint there, each
    body read once per category; then the global joints' categories."""
    used: dict[str, set] = {}
    for k, joints in enumerate(depths):
        for joint in joints:
            for category in local_categories[k]:
                _joint_terms(plan, joint, category, used, is_global=False)
    used = {}
    for category in global_categories:
        for joint in global_joints:
            _joint_terms(plan, joint, category, used, is_global=True)


def add_state(plan: PlanBuilder, scenario: str, sizes: Sizes, bodies: list[str],
              kwargs: dict[str, Any]) -> None:
    """The robot's Gymnasium ``-v5`` observation (MaMuJoCo's ``state()``)."""
    nq, nv, nb = sizes.nq, sizes.nv, sizes.nbody
    exclude = bool(kwargs.get("exclude_current_positions_from_observation", True))
    body = {name: i for i, name in enumerate(bodies)}

    def flat(source: str, width: int, first_body: int):
        plan.copy(source, range(width * first_body, width * nb))

    if scenario in ("HalfCheetah", "Hopper", "Walker2d"):
        plan.copy("qpos", range(1 if exclude else 0, nq))
        if scenario == "HalfCheetah":
            plan.copy("qvel", range(nv))
        else:
            for i in range(nv):
                plan.add(("clip", "qvel", i, -10.0, 10.0))
    elif scenario in ("Swimmer", "ManySegmentSwimmer"):
        plan.copy("qpos", range(2 if exclude else 0, nq))
        plan.copy("qvel", range(nv))
    elif scenario in ("Ant", "ManySegmentAnt"):
        plan.copy("qpos", range(2 if exclude else 0, nq))
        plan.copy("qvel", range(nv))
        if kwargs.get("include_cfrc_ext_in_observation", True):
            low, high = kwargs.get("contact_force_range", (-1.0, 1.0))
            for i in range(6, 6 * nb):
                plan.add(("clip", "cfrc_ext", i, float(low), float(high)))
    elif scenario in ("Humanoid", "HumanoidStandup"):
        plan.copy("qpos", range(2 if exclude else 0, nq))
        plan.copy("qvel", range(nv))
        if kwargs.get("include_cinert_in_observation", True):
            flat("cinert", 10, 1)
        if kwargs.get("include_cvel_in_observation", True):
            flat("cvel", 6, 1)
        if kwargs.get("include_qfrc_actuator_in_observation", True):
            plan.copy("qfrc_actuator", range(6, nv))
        if kwargs.get("include_cfrc_ext_in_observation", True):
            flat("cfrc_ext", 6, 1)
    elif scenario == "Reacher":
        for op in ("cos", "sin"):
            for i in range(2):
                plan.add((op, "qpos", i))
        plan.copy("qpos", range(2, nq))
        plan.copy("qvel", range(2))
        for c in range(2):
            plan.add(("diff", "xpos", 3 * body["fingertip"] + c, 3 * body["target"] + c))
    elif scenario == "Pusher":
        plan.copy("qpos", range(7))
        plan.copy("qvel", range(7))
        for name in ("tips_arm", "object", "goal"):
            plan.copy("xpos", range(3 * body[name], 3 * body[name] + 3))
    elif scenario == "CoupledHalfCheetah":
        plan.copy("qpos", range(1, 9))
        plan.copy("qpos", range(10, 18))
        plan.copy("qvel", range(nv))
        for dof in (0, 1, 9, 10):
            plan.add(("copy", "ten_J", 0, dof))
        plan.add(("copy", "ten_length", 0))
        plan.add(("copy", "ten_velocity", 0))
    elif scenario == "InvertedPendulum":
        plan.copy("qpos", range(nq))
        plan.copy("qvel", range(nv))
    elif scenario == "InvertedDoublePendulum":
        plan.copy("qpos", range(1))
        for op in ("sin", "cos"):
            for i in range(1, nq):
                plan.add((op, "qpos", i))
        for i in range(nv):
            plan.add(("clip", "qvel", i, -10.0, 10.0))
        plan.add(("clip", "qfrc_constraint", 0, -10.0, 10.0))
    else:  # pragma: no cover - every scenario is listed above
        raise AssertionError(scenario)
