"""MaMuJoCo's joint graphs: for each scenario, its joints (what each observes
and which actuator it drives), the hyperedges between them, the global joints
and the named factorizations (``agent_conf``).

These are the graphs of Farama's ``gymnasium_robotics.mamujoco_v1`` (node
for node, so that observations match it value for value), written here as
data. The factorizations Farama dropped (HalfCheetah ``3x2``, Ant ``8x1``,
Humanoid ``17x1``, Walker2d ``6x1`` and ``3x2``) group the same joints as the
original MaMuJoCo code's descendants that HARL's tuned configs use.

A joint's observation terms are tuples ``(op, source, index[, index2 | low,
high])``: ``op`` one of copy, clip, sin, cos, diff; ``source`` an mjData
array (qpos, qvel, cinert, cvel, cfrc_ext, qfrc_actuator, ten_length,
ten_velocity, xpos, qfrc_constraint, ten_J); negative indices count from the
end of that array (as Python indexing does).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

Term = tuple  # (op, source, index, ...)


@dataclass(eq=False)  # identity: two joints with one label stay two nodes
class Joint:
    """One node of a scenario's graph."""

    label: str
    qpos: int | None
    qvel: int | None
    act: int | None
    bodies: tuple[int, ...] = ()
    body_clip: tuple[float, float] | None = None  # clip each body value (Ant's cfrc_ext)
    extra: dict[str, list[Term]] = field(default_factory=dict)  # per category, replaces the default

    def __repr__(self) -> str:
        return self.label


@dataclass
class Graph:
    joints: dict[str, Joint]  # every actuated joint, in actuator order of definition
    edges: list[tuple[Joint, ...]]  # hyperedges
    globals: list[Joint]
    confs: dict[str, list[tuple[str, ...]]]  # agent_conf -> agents' joint labels
    extra_confs: tuple[str, ...] = ()  # the confs Farama dropped

    def parts(self, conf: str) -> list[tuple[Joint, ...]]:
        return [tuple(self.joints[label] for label in part) for part in self.confs[conf]]


def _by_label(*joints: Joint) -> dict[str, Joint]:
    return {j.label: j for j in joints}


def _chain(joints: dict[str, Joint], *labels: str) -> list[tuple[Joint, ...]]:
    return [(joints[a], joints[b]) for a, b in zip(labels, labels[1:])]


def _clip(source: str, index: int, low: float, high: float) -> Term:
    return ("clip", source, index, low, high)


NONE: list[Term] = []  # a category switched off for a joint


def half_cheetah() -> Graph:
    names = ["bthigh", "bshin", "bfoot", "fthigh", "fshin", "ffoot"]
    joints = _by_label(*(Joint(n, i - 6, i - 6, i) for i, n in enumerate(names)))
    edges = _chain(joints, "bfoot", "bshin", "bthigh", "fthigh", "fshin", "ffoot")
    root = [Joint("root_x", 0, 0, None, extra={"qpos": NONE}), Joint("root_z", 1, 1, None),
            Joint("root_y", 2, 2, None)]
    confs = {
        "2x3": [("bthigh", "bshin", "bfoot"), ("fthigh", "fshin", "ffoot")],
        "6x1": [(n,) for n in names],
        "3x2": [("bfoot", "bshin"), ("bthigh", "ffoot"), ("fshin", "fthigh")],
    }
    return Graph(joints, edges, root, confs, ("3x2",))


def ant() -> Graph:
    torso = 1
    legs = {1: (2, 3, 4), 2: (5, 6, 7), 3: (8, 9, 10), 4: (11, 12, 13)}  # body ids per leg
    acts = {1: (2, 3), 2: (4, 5), 3: (6, 7), 4: (0, 1)}  # hip, ankle actuators
    js = []
    for leg in (1, 2, 3, 4):
        thigh, aux, foot = legs[leg]
        hip_act, ankle_act = acts[leg]
        q = -8 + 2 * (leg - 1)
        js.append(Joint(f"hip{leg}", q, q, hip_act, bodies=(torso, thigh), body_clip=(-1.0, 1.0)))
        js.append(Joint(f"ankle{leg}", q + 1, q + 1, ankle_act, bodies=(thigh, aux, foot),
                        body_clip=(-1.0, 1.0)))
    joints = _by_label(*js)
    j = joints
    edges = [(j["ankle4"], j["hip4"]), (j["ankle1"], j["hip1"]), (j["ankle2"], j["hip2"]),
             (j["ankle3"], j["hip3"]), (j["hip4"], j["hip1"], j["hip2"], j["hip3"])]
    root = [Joint("root", 0, 0, None, extra={
        "qpos": [("copy", "qpos", i) for i in range(2, 7)],
        "qvel": [("copy", "qvel", i) for i in range(6)]})]
    confs = {
        "2x4": [("hip1", "ankle1", "hip2", "ankle2"), ("hip3", "ankle3", "hip4", "ankle4")],
        "2x4d": [("hip1", "ankle1", "hip4", "ankle4"), ("hip2", "ankle2", "hip3", "ankle3")],
        "4x2": [("hip1", "ankle1"), ("hip2", "ankle2"), ("hip3", "ankle3"), ("hip4", "ankle4")],
        "8x1": [(n,) for n in ("hip1", "ankle1", "hip2", "ankle2", "hip3", "ankle3", "hip4", "ankle4")],
    }
    return Graph(joints, edges, root, confs, ("8x1",))


def hopper() -> Graph:
    names = ["thigh_joint", "leg_joint", "foot_joint"]
    joints = _by_label(*(Joint(n, i - 3, i - 3, i, extra={"qvel": [_clip("qvel", i - 3, -10.0, 10.0)]})
                         for i, n in enumerate(names)))
    edges = _chain(joints, "foot_joint", "leg_joint", "thigh_joint")
    root = [Joint("root_x", 0, 0, None, extra={"qpos": NONE, "qvel": [_clip("qvel", 0, -10.0, 10.0)]}),
            Joint("root_z", 1, 1, None, extra={"qvel": [_clip("qvel", 1, -10.0, 10.0)]}),
            Joint("root_y", 2, 2, None, extra={"qvel": [_clip("qvel", 2, -10.0, 10.0)]})]
    return Graph(joints, edges, root, {"3x1": [(n,) for n in names]})


def humanoid() -> Graph:
    torso, lwaist, pelvis = 1, 2, 3
    r_thigh, r_shin, r_foot, l_thigh, l_shin, l_foot = 4, 5, 6, 7, 8, 9
    r_upper, r_lower, l_upper, l_lower = 10, 11, 12, 13
    spec = [
        ("abdomen_y", (torso, lwaist, pelvis)), ("abdomen_z", (torso, lwaist, pelvis)),
        ("abdomen_x", (pelvis, r_thigh, l_thigh)),
        ("right_hip_x", (r_thigh, r_shin)), ("right_hip_z", (r_thigh, r_shin)),
        ("right_hip_y", (r_thigh, r_shin)), ("right_knee", (r_shin, r_foot)),
        ("left_hip_x", (l_thigh, l_shin)), ("left_hip_z", (l_thigh, l_shin)),
        ("left_hip_y", (l_thigh, l_shin)), ("left_knee", (l_shin, l_foot)),
        ("right_shoulder1", (torso, r_upper, r_lower)), ("right_shoulder2", (torso, r_upper, r_lower)),
        ("right_elbow", (r_lower,)),
        ("left_shoulder1", (torso, l_upper, l_lower)), ("left_shoulder2", (torso, l_upper, l_lower)),
        ("left_elbow", (l_lower,)),
    ]
    joints = _by_label(*(Joint(n, i - 17, i - 17, i, bodies=b) for i, (n, b) in enumerate(spec)))
    j = joints
    ab = (j["abdomen_x"], j["abdomen_y"], j["abdomen_z"])
    rh = (j["right_hip_x"], j["right_hip_y"], j["right_hip_z"])
    lh = (j["left_hip_x"], j["left_hip_y"], j["left_hip_z"])
    edges = [ab, rh, lh, (j["left_elbow"], j["left_shoulder1"], j["left_shoulder2"]),
             (j["right_elbow"], j["right_shoulder1"], j["right_shoulder2"]),
             (j["left_knee"], *lh), (j["right_knee"], *rh),
             (j["left_shoulder1"], j["left_shoulder2"], *ab),
             (j["right_shoulder1"], j["right_shoulder2"], *ab), (*ab, *lh), (*ab, *rh)]
    root = [Joint("root", None, None, None, extra={
        "qpos": [("copy", "qpos", i) for i in range(2, 7)],
        "qvel": [("copy", "qvel", i) for i in range(6)]})]
    upper = ("abdomen_x", "abdomen_y", "abdomen_z", "right_shoulder1", "right_shoulder2",
             "right_elbow", "left_shoulder1", "left_shoulder2", "left_elbow")
    lower = ("right_hip_x", "right_hip_y", "right_hip_z", "right_knee", "left_hip_x",
             "left_hip_y", "left_hip_z", "left_knee")
    seventeen = ("left_shoulder1", "left_shoulder2", "abdomen_x", "abdomen_y", "abdomen_z",
                 "right_shoulder1", "right_shoulder2", "right_elbow", "left_elbow", "left_hip_x",
                 "left_hip_y", "left_hip_z", "right_hip_x", "right_hip_y", "right_hip_z",
                 "right_knee", "left_knee")
    confs = {"9|8": [upper, lower], "17x1": [(n,) for n in seventeen]}
    return Graph(joints, edges, root, confs, ("17x1",))


def reacher() -> Graph:
    body0, body1, fingertip, target = 1, 2, 3, 4
    joint0 = Joint("joint0", -4, -4, 0, bodies=(body0, body1),
                   extra={"qpos": [("sin", "qpos", -4), ("cos", "qpos", -4)]})
    joint1 = Joint("joint1", -3, -3, 1, bodies=(body1, fingertip), extra={
        "fingertip_dist": [("diff", "xpos", 3 * fingertip + c, 3 * target + c) for c in range(3)],
        "qpos": [("sin", "qpos", -3), ("cos", "qpos", -3)]})
    joints = _by_label(joint0, joint1)
    root = [Joint("target_x", -2, -2, None, extra={"qvel": NONE}),
            Joint("target_y", -1, -1, None, extra={"qvel": NONE})]
    return Graph(joints, [(joint0, joint1)], root, {"2x1": [("joint0",), ("joint1",)]})


def pusher() -> Graph:
    # Farama labels the first two joints "r_wrist_roll_joint" too; kept, since
    # labels order each agent's joints (ties: definition order).
    labels = ["r_wrist_roll_joint", "r_wrist_roll_joint", "r_upper_arm_roll_joint",
              "r_elbow_flex_joint", "r_forearm_roll_joint", "r_wrist_flex_joint", "r_wrist_roll_joint"]
    keys = ["r_shoulder_pan_joint", "r_shoulder_lift_joint", "r_upper_arm_roll_joint",
            "r_elbow_flex_joint", "r_forearm_roll_joint", "r_wrist_flex_joint", "r_wrist_roll_joint"]
    js = [Joint(lab, i, i, i) for i, lab in enumerate(labels)]
    joints = dict(zip(keys, js))
    edges = [(a, b) for a, b in zip(js, js[1:])]
    tips_arm, obj, goal = 10, 11, 12  # body ids (checked against the model by name)

    def com(label: str, body: int) -> Joint:
        return Joint(label, None, None, None, extra={
            "qpos": [("copy", "xpos", 3 * body + c) for c in range(3)], "qvel": NONE})

    root = [com("tips_arm", tips_arm), com("object", obj), com("goal", goal)]
    confs = {"3p": [tuple(keys[:3]), (keys[3],), tuple(keys[4:])]}
    return Graph(joints, edges, root, confs)


def swimmer() -> Graph:
    rot2 = Joint("rot2", -2, -2, 0, extra={"qvel": [("copy", "qvel", 0), ("copy", "qvel", 3)]})
    rot3 = Joint("rot3", -1, -1, 1, extra={"qvel": [("copy", "qvel", 1), ("copy", "qvel", 4)]})
    joints = _by_label(rot2, rot3)
    root = [Joint("free_body_rot", 2, 2, None)]
    return Graph(joints, [(rot2, rot3)], root, {"2x1": [("rot2",), ("rot3",)]})


def walker2d() -> Graph:
    names = ["thigh_joint", "leg_joint", "foot_joint", "thigh_left_joint", "leg_left_joint",
             "foot_left_joint"]
    joints = _by_label(*(Joint(n, i - 6, i - 6, i) for i, n in enumerate(names)))
    j = joints
    edges = [(j["foot_joint"], j["leg_joint"]), (j["leg_joint"], j["thigh_joint"]),
             (j["foot_left_joint"], j["leg_left_joint"]), (j["leg_left_joint"], j["thigh_left_joint"]),
             (j["thigh_joint"], j["thigh_left_joint"])]
    root = [Joint("root_x", 0, 0, None, extra={"qpos": NONE}), Joint("root_z", 1, 1, None),
            Joint("root_y", 2, 2, None)]
    confs = {
        "2x3": [("foot_joint", "leg_joint", "thigh_joint"),
                ("foot_left_joint", "leg_left_joint", "thigh_left_joint")],
        "6x1": [(n,) for n in ("foot_joint", "leg_joint", "thigh_joint", "foot_left_joint",
                               "leg_left_joint", "thigh_left_joint")],
        "3x2": [("foot_joint", "leg_joint"), ("thigh_joint", "foot_left_joint"),
                ("leg_left_joint", "thigh_left_joint")],
    }
    return Graph(joints, edges, root, confs, ("6x1", "3x2"))


def many_segment_swimmer(n_segs: int, per_agent: int) -> Graph:
    js = [Joint(f"rot{i}", i - n_segs, i - n_segs, i) for i in range(n_segs)]
    joints = {j.label: j for j in js}
    edges = [(a, b) for a, b in zip(js, js[1:])]
    conf = f"{n_segs // per_agent}x{per_agent}"
    parts = [tuple(j.label for j in js[a * per_agent:(a + 1) * per_agent])
             for a in range(n_segs // per_agent)]
    return Graph(joints, edges, [], {conf: parts})


def many_segment_ant(n_segs: int, per_agent: int) -> Graph:
    joints: dict[str, Joint] = {}
    edges: list[tuple[Joint, ...]] = []
    previous: tuple[Joint, Joint] | None = None
    for s in range(n_segs):
        torso, thigh1, aux1, foot1, thigh2, aux2, foot2 = (1 + 7 * s + k for k in range(7))
        # Farama's indices: the last segment's joints are qpos[-4:], the one
        # before it reads qpos[0:4] (the free joint), and so on; kept for parity.
        q = -4 + 4 * (n_segs - 1 - s)
        hip1 = Joint(f"hip1_{s}", q, q, 2 + 4 * s, bodies=(torso, thigh1), body_clip=(-1.0, 1.0))
        ankle1 = Joint(f"ankle1_{s}", q + 1, q + 1, 3 + 4 * s, bodies=(thigh1, aux1, foot1),
                       body_clip=(-1.0, 1.0))
        hip2 = Joint(f"hip2_{s}", q + 2, q + 2, 0 + 4 * s, bodies=(torso, thigh2), body_clip=(-1.0, 1.0))
        ankle2 = Joint(f"ankle2_{s}", q + 3, q + 3, 1 + 4 * s, bodies=(thigh2, aux2, foot2),
                       body_clip=(-1.0, 1.0))
        for j in (hip1, ankle1, hip2, ankle2):
            joints[j.label] = j
        edges += [(ankle1, hip1), (ankle2, hip2), (hip1, hip2)]
        if previous is not None:
            # Farama links a segment to *copies* of the previous segment's hips
            # (deepcopy): nodes of their own, seen from this segment only.
            edges.append((*previous, hip1, hip2))
        previous = (Joint(hip1.label, hip1.qpos, hip1.qvel, hip1.act, hip1.bodies, hip1.body_clip),
                    Joint(hip2.label, hip2.qpos, hip2.qvel, hip2.act, hip2.bodies, hip2.body_clip))
    root = [Joint("free", 0, 0, None, extra={
        "qpos": [("copy", "qpos", i) for i in range(2, 7)],
        "qvel": [("copy", "qvel", i) for i in range(6)],
        "cfrc_ext": [_clip("cfrc_ext", i, -1.0, 1.0) for i in range(6)]})]
    n_agents = n_segs // per_agent
    parts = []
    for a in range(n_agents):
        labels: list[str] = []
        for s in range(a * per_agent, (a + 1) * per_agent):
            labels += [f"hip1_{s}", f"ankle1_{s}", f"hip2_{s}", f"ankle2_{s}"]
        parts.append(tuple(labels))
    return Graph(joints, edges, root, {f"{n_agents}x{per_agent}": parts})


def coupled_half_cheetah() -> Graph:
    tendon = 0
    tendon_terms = {
        # the tendon Jacobian's entries of both cheetahs' root x and z dofs
        "ten_J": [("copy", "ten_J", tendon, dof) for dof in (0, 1, 9, 10)],
        "ten_length": [("copy", "ten_length", tendon)],
        "ten_velocity": [("copy", "ten_velocity", tendon)],
    }
    names = ["bthigh", "bshin", "bfoot", "fthigh", "fshin", "ffoot"]
    js = []
    for c in (0, 1):
        for i, n in enumerate(names):
            js.append(Joint(f"{n}{c}", i - 6, i - 6, 6 * c + i,
                            extra=dict(tendon_terms) if n == "bthigh" else {}))
    joints = _by_label(*js)
    edges = []
    for c in (0, 1):
        edges += _chain(joints, *(f"{n}{c}" for n in ("bfoot", "bshin", "bthigh", "fthigh", "fshin", "ffoot")))
    root = [Joint("root_x0", 0, 0, None, extra={"qpos": NONE}), Joint("root_y0", 2, 2, None),
            Joint("root_z0", 1, 1, None), Joint("root_x1", 9, 9, None, extra={"qpos": NONE}),
            Joint("root_y1", 11, 11, None), Joint("root_z1", 10, 10, None)]
    confs = {"1p1": [tuple(f"{n}0" for n in names), tuple(f"{n}1" for n in names)]}
    return Graph(joints, edges, root, confs)


def graph(scenario: str, agent_conf: str | None) -> Graph:
    """The graph of a built-in scenario (the ManySegment ones sized by their conf)."""
    if scenario in ("ManySegmentSwimmer", "ManySegmentAnt"):
        n_agents, per_agent = parse_nxk(scenario, agent_conf)
        build = many_segment_swimmer if scenario == "ManySegmentSwimmer" else many_segment_ant
        return build(n_agents * per_agent, per_agent)
    return _BUILDERS[scenario]()


def parse_nxk(scenario: str, agent_conf: Any) -> tuple[int, int]:
    try:
        n_agents, per_agent = (int(x) for x in str(agent_conf).split("x"))
    except ValueError:
        n_agents = per_agent = 0
    if n_agents < 1 or per_agent < 1:
        raise ValueError(f"agent_conf {agent_conf!r} is not valid for {scenario}; expected "
                         "'NxK' with N agents of K segments each, N, K >= 1 (e.g. '10x2')")
    if n_agents * per_agent > MAX_SEGMENTS:
        raise ValueError(f"agent_conf {agent_conf!r} asks {scenario} for {n_agents * per_agent} segments; "
                         f"expected N x K <= {MAX_SEGMENTS} (each segment is a body nested in the one "
                         "before, and MuJoCo's XML reader takes at most 500 nested elements)")
    return n_agents, per_agent


# The robot's MJCF is generated segment by segment, each segment's body
# inside the previous one's: MuJoCo's XML reader (tinyxml2) refuses a
# document nested deeper than 500 elements, which ManySegmentSwimmer reaches
# past 495 segments and ManySegmentAnt past 493 (their outer elements and a
# segment's own children take the rest). The bound also keeps a conf of
# 10**10 segments from filling the memory before MuJoCo sees it.
MAX_SEGMENTS = 490


_BUILDERS = {
    "HalfCheetah": half_cheetah, "Ant": ant, "Hopper": hopper, "Humanoid": humanoid,
    "HumanoidStandup": humanoid, "Reacher": reacher, "Pusher": pusher, "Swimmer": swimmer,
    "Walker2d": walker2d, "CoupledHalfCheetah": coupled_half_cheetah,
}
