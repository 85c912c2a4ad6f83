"""A MaMuJoCo configuration resolved once: the robot, its agents, which
actuators each drives, and the compiled observation plan (each agent's slice
and the state's slice of the plan's output)."""

from __future__ import annotations

import operator

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from joltgym_marl._native import core as _core
from joltgym_marl.mamujoco import graphs
from joltgym_marl.mamujoco.graphs import Graph, Joint
from joltgym_marl.mamujoco.mapping import ObservationMapping
from joltgym_marl.mamujoco.plan import (CATEGORIES, PlanBuilder, Sizes, add_agent_observation,
                                        add_state, joints_at_distance)

# scenario -> the native single-agent task it factorizes
ROBOTS = {
    "Ant": "ant", "HalfCheetah": "half_cheetah", "Hopper": "hopper",
    "HumanoidStandup": "humanoid_standup", "Humanoid": "humanoid", "Reacher": "reacher",
    "Swimmer": "swimmer", "Pusher": "pusher", "Walker2d": "walker2d",
    "InvertedPendulum": "inverted_pendulum", "InvertedDoublePendulum": "inverted_double_pendulum",
    "ManySegmentSwimmer": "swimmer", "ManySegmentAnt": "ant",
    "CoupledHalfCheetah": "coupled_half_cheetah",  # MaMuJoCo's own robot (not in the task registry)
}
SCENARIOS = tuple(ROBOTS)
NO_FACTORIZATION = ("InvertedPendulum", "InvertedDoublePendulum")  # agent_conf=None only


def default_local_categories(scenario: str, obsk: int | None) -> list[list[str]]:
    """Farama's defaults: what each depth of the joint graph observes."""
    if obsk is None:
        return [[]]
    if scenario in ("Ant", "ManySegmentAnt"):
        per_depth = [["qpos", "qvel", "cfrc_ext"], ["qpos"]]
    elif scenario in ("Humanoid", "HumanoidStandup"):
        per_depth = [["qpos", "qvel", "cinert", "cvel", "qfrc_actuator", "cfrc_ext"], ["qpos"]]
    elif scenario == "CoupledHalfCheetah":
        per_depth = [["qpos", "qvel", "ten_J", "ten_length", "ten_velocity"], ["qpos"]]
    elif scenario == "Reacher":
        per_depth = [["qpos", "qvel", "fingertip_dist"], ["qpos"]]
    else:
        per_depth = [["qpos", "qvel"], ["qpos"]]
    return [per_depth[min(k, len(per_depth) - 1)] for k in range(obsk + 1)]


@lru_cache(maxsize=64)
def _model_info(robot: str, frozen_kwargs: tuple) -> dict[str, Any]:
    return dict(_core.mamujoco_model_info(robot, dict(frozen_kwargs)))


def model_info(robot: str, kwargs: dict[str, Any]) -> dict[str, Any]:
    try:
        key = tuple(sorted(kwargs.items()))
        hash(key)
    except TypeError:
        return dict(_core.mamujoco_model_info(robot, kwargs))
    return _model_info(robot, key)


def _names(value: Any) -> bool:
    """A list or tuple of str (category names)."""
    return isinstance(value, (list, tuple)) and all(isinstance(c, str) for c in value)


def _names_per_depth(value: Any) -> bool:
    return isinstance(value, (list, tuple)) and all(_names(depth) for depth in value)


def _check_categories(value: Any, what: str) -> None:
    for c in value:
        if c not in CATEGORIES:
            raise ValueError(f"{what} has unknown category {c!r}; allowed: {', '.join(CATEGORIES)}")


@dataclass
class Factorization:
    scenario: str
    agent_conf: str | None
    agent_obsk: int | None
    robot: str
    robot_kwargs: dict[str, Any]
    possible_agents: list[str]
    action_indices: list[np.ndarray]  # per agent: its actions' indices in the global action
    obs_slices: list[slice]  # per agent, into the plan's output
    state_slice: slice
    # Farama's: per agent, the state index of each observed value (clipped
    # there for some); None if some observed value is not part of state()
    observation_factorization: dict[str, np.ndarray] | None
    plan_ops: np.ndarray
    plan_bounds: np.ndarray
    act_dim: int
    local_categories: list[list[str]]
    global_categories: tuple[str, ...]
    agent_joints: list[list[str]]  # joint labels per agent (partition order)
    mapping: ObservationMapping  # state() <-> local observations, right in every state
    k_dicts: list[dict[int, list[Joint]]] | None  # Farama's: per agent, the joints at each depth 0..obsk
    partitions: list[tuple[Joint, ...]] | None  # Farama's agent_action_partitions
    global_joints: list[Joint]  # Farama's mujoco_globals


def _custom_parts(graph: Graph, factorization: Any) -> tuple[list, list, list]:
    """agent_factorization: {"partition": [[joint, ...], ...], "edges": [[joint, ...], ...],
    "globals": [joint, ...]}, joints given by label (or as Farama's Node objects)."""
    if not isinstance(factorization, dict) or set(factorization) - {"partition", "edges", "globals"} \
            or "partition" not in factorization:
        raise ValueError("agent_factorization should be a dict with keys 'partition' (required), "
                         f"'edges' and 'globals', got {factorization!r:.200}")
    by_label: dict[str, Joint] = {}
    duplicated = set()
    for j in list(graph.joints.values()) + list(graph.globals):
        if j.label in by_label and by_label[j.label] is not j:
            duplicated.add(j.label)
        by_label[j.label] = j

    def joint(x: Any) -> Joint:
        label = x if isinstance(x, str) else getattr(x, "label", None)
        label = str.__str__(label) if isinstance(label, str) else None  # (a str subclass's == is not trusted)
        if label in duplicated:
            raise ValueError(f"joint label {label!r} names several joints of this scenario; "
                             "use agent_conf for it")
        if label not in by_label:
            raise ValueError(f"agent_factorization names unknown joint {x!r}; allowed: "
                             f"{', '.join(sorted(by_label))}")
        return by_label[label]

    def joints(value: Any, what: str, kinds: tuple[type, ...] = (list, tuple)) -> tuple[Joint, ...]:
        # A list or tuple (a str's characters are no joints; a generator would be used up).
        value = getattr(value, "nodes", value)  # Farama's HyperEdge (its nodes: a set)
        if isinstance(value, (str, bytes)) or not isinstance(value, kinds):
            raise ValueError(f"agent_factorization's {what} should be a list of joint labels, got "
                             f"{value!r:.200}")
        return tuple(joint(x) for x in value)

    def groups(key: str, default: Any, kinds: tuple[type, ...] = (list, tuple)) -> list[Any]:
        value = factorization.get(key, default)
        if isinstance(value, (str, bytes)) or not isinstance(value, kinds):
            raise ValueError(f"agent_factorization's {key!r} should be a list of lists of joint labels, got "
                             f"{value!r:.200}")
        return list(value)

    parts = [joints(part, f"partition[{k}]") for k, part in enumerate(groups("partition", None))]
    for k, part in enumerate(parts):
        if not part:
            raise ValueError(f"agent_factorization's partition[{k}] is empty; expected each agent to be "
                             "given at least one joint")
    edges = [joints(e, f"edges[{k}]", (list, tuple, set, frozenset))
             for k, e in enumerate(groups("edges", graph.edges, (list, tuple, set, frozenset)))]
    globals_ = list(joints(factorization.get("globals", graph.globals), "'globals'"))
    return parts, edges, globals_


def exact_scenario(scenario: Any) -> str:
    """``scenario`` as an exact str (a subclass's == and hash are not trusted),
    or TypeError."""
    if not isinstance(scenario, str):
        raise TypeError(f"scenario should be a str, one of {', '.join(SCENARIOS)}; got {scenario!r:.100}")
    return str.__str__(scenario)


def resolve(scenario: str, agent_conf: str | None, agent_obsk: int | None,
            agent_factorization: dict | None, local_categories: Sequence[Sequence[str]] | None,
            global_categories: Sequence[str] | None, kwargs: dict[str, Any],
            xml_file: str | None = None) -> Factorization:
    scenario = exact_scenario(scenario)
    if scenario not in ROBOTS:
        raise ValueError(f"unknown scenario {scenario!r}; allowed: {', '.join(SCENARIOS)}")
    if agent_conf is not None:
        if not isinstance(agent_conf, str):
            raise TypeError(f"agent_conf should be None or a str (such as '2x3'), got {agent_conf!r:.100}")
        agent_conf = str.__str__(agent_conf)
    if agent_obsk is not None:
        # An exact int (an int subclass's own comparisons are not trusted), then
        # compared as one.
        given = agent_obsk
        agent_obsk = operator.index(given) if isinstance(given, (int, np.integer)) and \
            not isinstance(given, (bool, np.bool_)) else None
        if agent_obsk is None or agent_obsk < 0:
            raise ValueError(f"agent_obsk should be None or an int >= 0, got {given!r}")
        agent_obsk = int(agent_obsk)
    robot = ROBOTS[scenario]
    robot_kwargs = dict(kwargs)
    if xml_file is not None:
        robot_kwargs["xml_file"] = xml_file
    obsk = None if agent_conf is None else agent_obsk  # as Farama: no conf, one agent
    graph = None
    parts, global_joints = None, []
    if obsk is not None:
        if scenario in NO_FACTORIZATION:
            raise ValueError(f"agent_conf {agent_conf!r} is not valid for {scenario}; allowed: None")
        if agent_factorization is None:
            graph = graphs.graph(scenario, agent_conf)
            if agent_conf not in graph.confs:
                allowed = ", ".join(repr(c) for c in [*graph.confs, None])
                raise ValueError(f"agent_conf {agent_conf!r} is not valid for {scenario}; allowed: {allowed}")
            parts, edges, global_joints = graph.parts(agent_conf), graph.edges, graph.globals
        else:
            graph = graphs.graph(scenario, agent_conf) if scenario.startswith("ManySegment") \
                else graphs.graph(scenario, None)
            parts, edges, global_joints = _custom_parts(graph, agent_factorization)
    info = model_info(robot, robot_kwargs)
    sizes = Sizes(info["nq"], info["nv"], info["nbody"], info["ntendon"])
    nu = info["nu"]
    if local_categories is None:
        # Depths past the graph's joint count are empty: no need to list their
        # categories (agent_obsk=10**9 is the whole graph, and takes no longer).
        depth_bound = None if obsk is None else min(obsk, sum(len(p) for p in parts) + len(edges) + 1)
        local_categories = default_local_categories(scenario, depth_bound)
    else:
        if not _names_per_depth(local_categories):
            raise ValueError("local_categories should be a list of category names per depth, got "
                             f"{local_categories!r:.200}")
        local_categories = [[str.__str__(c) for c in depth] for depth in local_categories]
        for c in local_categories:
            _check_categories(c, "local_categories")
        if obsk is not None and len(local_categories) < obsk + 1:
            raise ValueError(f"local_categories should list the categories of each depth 0..{obsk} "
                             f"(agent_obsk={obsk}), got {len(local_categories)} depth(s)")
    if global_categories is not None and not _names(global_categories):  # (a str's characters are no categories)
        raise ValueError(f"global_categories should be a list of category names, got {global_categories!r:.200}")
    global_categories = ("qpos", "qvel") if global_categories is None else \
        tuple(str.__str__(c) for c in global_categories)
    _check_categories(global_categories, "global_categories")

    plan = PlanBuilder(sizes)
    obs_slices, action_indices, agent_joints = [], [], []
    if obsk is None:
        parts = k_dicts = None
        action_indices.append(np.arange(nu))
        agent_joints.append([])
    else:
        acts = [j.act for part in parts for j in part]
        for part in parts:
            for j in part:
                if j.act is None:
                    raise ValueError(f"joint {j.label!r} has no actuator and cannot be given to an agent")
        duplicates = sorted({a for a in acts if acts.count(a) > 1})
        missing = sorted(set(range(nu)) - set(acts))
        if duplicates or missing:
            raise ValueError(f"agent_factorization should give each of the {nu} actuators to exactly one "
                             f"agent; actuators given twice: {duplicates}, to none: {missing}")
        k_dicts = []
        for part in parts:
            start = len(plan)
            depths = joints_at_distance(part, edges, obsk)
            add_agent_observation(plan, depths, local_categories, global_joints, global_categories)
            obs_slices.append(slice(start, len(plan)))
            action_indices.append(np.array([j.act for j in part], dtype=np.int64))
            agent_joints.append([j.label for j in part])
            # Farama's keys 0..obsk, past the graph's size (where every depth is empty) cut short
            last = min(obsk, sum(len(p) for p in parts) + len(edges) + 1)
            k_dicts.append({k: depths[k] if k < len(depths) else [] for k in range(last + 1)})
    start = len(plan)
    add_state(plan, scenario, sizes, info["body_names"], robot_kwargs)
    state_slice = slice(start, len(plan))
    if state_slice.stop - state_slice.start != info["obs_dim"]:
        raise ValueError(f"{scenario} with these keyword arguments has a {info['obs_dim']}-value observation, "
                         f"which MaMuJoCo's state() does not reproduce ({state_slice.stop - state_slice.start} "
                         "values); the keyword arguments that change the observation are not supported")
    if obsk is None:
        obs_slices.append(state_slice)
    n_agents = len(action_indices)
    possible_agents = [f"agent_{i}" for i in range(n_agents)]
    ops, bounds = plan.arrays()
    mapping = ObservationMapping(ops, bounds, obs_slices, state_slice, possible_agents)
    return Factorization(scenario, agent_conf, obsk, robot, robot_kwargs, possible_agents, action_indices,
                         obs_slices, state_slice, mapping.factorization, ops, bounds, nu,
                         local_categories, global_categories, agent_joints, mapping, k_dicts,
                         None if parts is None else [tuple(p) for p in parts], list(global_joints))
