"""The MaMuJoCo scenarios as the library describes itself
(``joltgym_marl.tasks("mamujoco")``, ``python -m joltgym_marl list`` and
``info``): each scenario, the native robot it factorizes, and per conf the
agents, their action dims and observation dims, read from the one scenario
table (:data:`joltgym_marl.mamujoco.factorization.ROBOTS` and the joint
graphs' confs) by resolving each conf as ``parallel_env`` does."""

from __future__ import annotations

import functools
from dataclasses import dataclass

from joltgym_marl.mamujoco import graphs
from joltgym_marl.mamujoco.assets import coupled_half_cheetah_path, many_segment_xml
from joltgym_marl.mamujoco.factorization import NO_FACTORIZATION, ROBOTS, SCENARIOS, Factorization, resolve

# The ManySegment robots take any "NxK": the catalog shows one example.
EXAMPLE_CONFS = {"ManySegmentSwimmer": "10x2", "ManySegmentAnt": "2x3"}


def robot_xml(scenario: str, agent_conf: str | None) -> str | None:
    """The MJCF a scenario's robot is built from when it is not the robot's own
    (the generated ManySegment models, CoupledHalfCheetah's), else None."""
    if scenario.startswith("ManySegment"):
        return many_segment_xml(scenario, agent_conf)
    if scenario == "CoupledHalfCheetah":
        return coupled_half_cheetah_path()
    return None


@dataclass(frozen=True)
class ConfRecord:
    """One agent_conf of a scenario, at the default observation setting (agent_obsk=1)."""

    agent_conf: str | None  # "6x1"; None: one agent observing state()
    agents: int
    action_dims: tuple[int, ...]  # per agent
    obs_dims: tuple[int, ...]  # per agent, agent_obsk=1, default categories
    state_dim: int  # state()'s
    in_farama: bool  # False: a conf of the original MaMuJoCo code that Farama dropped (HARL's)


@dataclass(frozen=True)
class ScenarioRecord:
    """One MaMuJoCo scenario: ``mamujoco_v1.parallel_env(scenario, conf)``."""

    scenario: str  # "HalfCheetah"
    robot: str  # the native single-agent task it factorizes ("half_cheetah")
    confs: tuple[ConfRecord, ...]
    any_nxk: bool  # the ManySegment robots: any "NxK" (confs shows EXAMPLE_CONFS' one)
    kind: str = "mamujoco"
    module: str = "mamujoco_v1"


def _conf_record(f: Factorization, in_farama: bool) -> ConfRecord:
    return ConfRecord(f.agent_conf, len(f.possible_agents), tuple(len(i) for i in f.action_indices),
                      tuple(s.stop - s.start for s in f.obs_slices), f.state_slice.stop - f.state_slice.start,
                      in_farama)


def confs_of(scenario: str) -> list[tuple[str | None, bool]]:
    """(agent_conf, in Farama's table) for each conf of ``scenario``, None last
    (the ManySegment robots: their example "NxK" only)."""
    if scenario in NO_FACTORIZATION:
        return [(None, True)]
    if scenario in EXAMPLE_CONFS:  # (None would not say how many segments)
        return [(EXAMPLE_CONFS[scenario], True)]
    g = graphs.graph(scenario, None)
    return [(c, c not in g.extra_confs) for c in g.confs] + [(None, True)]


@functools.lru_cache(maxsize=None)
def scenario(name: str) -> ScenarioRecord:
    """The record of the scenario ``name`` (ValueError listing them if unknown)."""
    if name not in ROBOTS:
        raise ValueError(f"unknown MaMuJoCo scenario {name!r}; expected one of: {', '.join(SCENARIOS)}")
    records = []
    for conf, in_farama in confs_of(name):
        f = resolve(name, conf, 1, None, None, None, {}, robot_xml(name, conf))
        records.append(_conf_record(f, in_farama))
    return ScenarioRecord(name, ROBOTS[name], tuple(records), name in EXAMPLE_CONFS)


def scenarios() -> list[ScenarioRecord]:
    """Every built-in scenario, in ``mamujoco_v1.SCENARIOS``' order."""
    return [scenario(name) for name in SCENARIOS]


def find(name: str) -> ScenarioRecord | None:
    """The scenario ``name`` names, spelled in any case, with or without ``_``,
    ``-`` or spaces (``"many-segment-ant"``), or None."""
    key = "".join(ch for ch in name.lower() if ch not in "_- ")
    for s in SCENARIOS:
        if s.lower() == key:
            return scenario(s)
    return None


def dims_text(values: tuple[int, ...]) -> str:
    """``(9, 9, 9)`` -> ``"9 each"``; otherwise the values, comma-separated."""
    if len(set(values)) == 1 and len(values) > 1:
        return f"{values[0]} each"
    return ", ".join(map(str, values))
