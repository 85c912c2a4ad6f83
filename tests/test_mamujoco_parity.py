"""MaMuJoCo parity: our mamujoco_v1.parallel_env against Farama's (the oracle)
from the same seed and actions, for every built-in scenario/conf and
agent_obsk 0, 1, 2: per-agent observations (values and dtype), state(),
rewards, terminations, truncations and infos, over a few hundred steps
across episode ends (max_episode_steps=60 on both, so that every case ends
episodes by time as well as by termination)."""

from __future__ import annotations

import numpy as np
import pytest

from joltgym_marl import mamujoco_v1
from mamujoco_oracle import (assert_same_rollout, farama_obsk, make_oracle, random_actions,
                                   rollout)

STEPS = 150
LIMIT = {"max_episode_steps": 60}
# Robots whose reward includes a norm or a contact cost (see ULP_TERMS).
ULP_REWARD = {"Ant", "Humanoid", "Reacher", "Pusher", "ManySegmentAnt"}

CASES = [
    ("HalfCheetah", "2x3"), ("HalfCheetah", "6x1"), ("Ant", "2x4"), ("Ant", "2x4d"), ("Ant", "4x2"),
    ("Hopper", "3x1"), ("Humanoid", "9|8"), ("HumanoidStandup", "9|8"), ("Reacher", "2x1"),
    ("Swimmer", "2x1"), ("Walker2d", "2x3"), ("Pusher", "3p"),
    ("ManySegmentSwimmer", "3x2"), ("ManySegmentAnt", "2x2"),
]
NONE_CASES = ["HalfCheetah", "Ant", "Hopper", "Humanoid", "HumanoidStandup", "Reacher", "Swimmer",
              "Walker2d", "Pusher", "InvertedPendulum", "InvertedDoublePendulum"]


def _check(scenario, conf, obsk, steps=STEPS, ours_kwargs=None, oracle_kwargs=None):
    ours = mamujoco_v1.parallel_env(scenario, conf, agent_obsk=obsk, **LIMIT, **(ours_kwargs or {}))
    theirs = make_oracle(scenario, conf, obsk, **LIMIT, **(oracle_kwargs or {}))
    assert ours.possible_agents == theirs.possible_agents
    for agent in ours.possible_agents:
        assert ours.observation_space(agent) == theirs.observation_space(agent), agent
        assert ours.action_space(agent) == theirs.action_space(agent), agent
    actions = random_actions(ours, steps, seed=hash((scenario, conf)) % 1000)
    a, b = rollout(ours, actions, seed=7), rollout(theirs, actions, seed=7)
    assert b.ends >= 2, "the case should cross episode ends"
    assert_same_rollout(a, b, reward_rtol=1e-14 if scenario in ULP_REWARD else 0.0)
    ours.close()
    theirs.close()


@pytest.mark.parametrize("obsk", [0, 1, 2])
@pytest.mark.parametrize(("scenario", "conf"), CASES, ids=[f"{s}-{c}" for s, c in CASES])
def test_parity(scenario, conf, obsk):
    _check(scenario, conf, obsk)


@pytest.mark.parametrize("scenario", NONE_CASES)
def test_parity_single_agent_conf(scenario):
    """agent_conf=None: one agent observing state() and acting on every actuator."""
    _check(scenario, None, 1, steps=130)


# The factorizations Farama dropped, checked against Farama's own graph given
# the same grouping as a custom agent_factorization.
EXTRA = {
    ("HalfCheetah", "3x2"): [("bfoot", "bshin"), ("bthigh", "ffoot"), ("fshin", "fthigh")],
    ("Ant", "8x1"): [(n,) for n in ("hip1", "ankle1", "hip2", "ankle2", "hip3", "ankle3", "hip4", "ankle4")],
    ("Humanoid", "17x1"): [(n,) for n in (
        "left_shoulder1", "left_shoulder2", "abdomen_x", "abdomen_y", "abdomen_z", "right_shoulder1",
        "right_shoulder2", "right_elbow", "left_elbow", "left_hip_x", "left_hip_y", "left_hip_z",
        "right_hip_x", "right_hip_y", "right_hip_z", "right_knee", "left_knee")],
    ("HumanoidStandup", "17x1"): None,  # as Humanoid's
    ("Walker2d", "6x1"): [(n,) for n in ("foot_joint", "leg_joint", "thigh_joint", "foot_left_joint",
                                         "leg_left_joint", "thigh_left_joint")],
    ("Walker2d", "3x2"): [("foot_joint", "leg_joint"), ("thigh_joint", "foot_left_joint"),
                          ("leg_left_joint", "thigh_left_joint")],
}


def _farama_factorization(scenario, groups):
    parts, edges, globals_ = farama_obsk.get_parts_and_edges(scenario, None)
    nodes = {n.label: n for n in parts[0]}
    return {"partition": [tuple(nodes[label] for label in g) for g in groups], "edges": edges,
            "globals": globals_}


@pytest.mark.parametrize("obsk", [0, 1, 2])
@pytest.mark.parametrize(("scenario", "conf"), list(EXTRA), ids=[f"{s}-{c}" for s, c in EXTRA])
def test_parity_extra_factorizations(scenario, conf, obsk):
    groups = EXTRA[(scenario, conf)] or EXTRA[("Humanoid", conf)]
    _check(scenario, conf, obsk, steps=130,
           oracle_kwargs={"agent_factorization": _farama_factorization(scenario, groups)})


def test_custom_factorization_by_label_equals_farama_nodes():
    """agent_factorization given by joint labels (ours) or as Farama's Node /
    HyperEdge objects (both accepted) equals Farama's custom factorization."""
    groups = [("bthigh", "fthigh"), ("bshin", "fshin"), ("bfoot", "ffoot")]
    fact = _farama_factorization("HalfCheetah", groups)
    by_label = {"partition": groups,
                "edges": [[n.label for n in e.nodes] for e in fact["edges"]],
                "globals": [n.label for n in fact["globals"]]}
    for ours_fact in (by_label, fact):
        _check("HalfCheetah", "custom", 1, steps=130, ours_kwargs={"agent_factorization": ours_fact},
               oracle_kwargs={"agent_factorization": fact})


def test_parity_custom_categories():
    # (not cvel: Farama's observation mapping raises IndexError for Ant's cvel)
    cats = [["qpos", "qvel", "cfrc_ext"], ["qvel", "cfrc_ext"], ["qpos"]]
    kw = {"local_categories": cats, "global_categories": ("qvel", "qpos")}
    _check("Ant", "4x2", 2, steps=130, ours_kwargs=kw, oracle_kwargs=kw)


def test_parity_robot_kwargs():
    """Keyword arguments reach the robot as in -v5."""
    kw = {"ctrl_cost_weight": 0.3, "reset_noise_scale": 0.2, "exclude_current_positions_from_observation": False}
    _check("HalfCheetah", "2x3", 1, steps=130, ours_kwargs=kw, oracle_kwargs=kw)


def test_observation_mappings_match_farama():
    ours = mamujoco_v1.parallel_env("HalfCheetah", "6x1", agent_obsk=1)
    theirs = make_oracle("HalfCheetah", "6x1", 1)
    for agent in ours.possible_agents:
        assert np.array_equal(ours.observation_factorization[agent], theirs.observation_factorization[agent])
    obs, _ = ours.reset(seed=1)
    state = ours.state()
    mapped = ours.map_global_state_to_local_observations(state)
    for agent in ours.possible_agents:
        assert np.array_equal(mapped[agent], obs[agent])
    global_action = np.linspace(-1, 1, 6)
    local = ours.map_global_action_to_local_actions(global_action)
    assert {a: v.tolist() for a, v in local.items()} == \
        {a: v.tolist() for a, v in theirs.map_global_action_to_local_actions(global_action).items()}
    assert np.array_equal(ours.map_local_actions_to_global_action(local), global_action)
