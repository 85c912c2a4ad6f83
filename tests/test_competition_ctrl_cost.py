"""The competition games' ``ctrl_cost_weight``: None keeps the robot's reference
weight (Ant 0.5, Humanoid 0.1); a value replaces it in ``reward_ctrl`` and in the
reward, scaled by ``shaping_weight`` like every shaping term."""

from __future__ import annotations

import numpy as np
import pytest

from joltgym_marl import kick_and_defend_v0, run_to_goal_v0, sumo_v0, you_shall_not_pass_v0

CASES = [  # (module, keyword arguments, the reference weight)
    (run_to_goal_v0, {"robot": "ant"}, 0.5),
    (run_to_goal_v0, {"robot": "humanoid"}, 0.1),
    (you_shall_not_pass_v0, {}, 0.1),
    (kick_and_defend_v0, {}, 0.1),
    (sumo_v0, {"robot": "humanoid"}, 0.1),
]


def ctrl_terms(module, kwargs, **extra):
    env = module.parallel_env(shaping_weight=2.0, **kwargs, **extra)
    env.reset(seed=1)
    rng = np.random.default_rng(0)
    actions = {a: rng.uniform(env.action_space(a).low, env.action_space(a).high).astype(np.float32)
               for a in env.agents}
    _, _, _, _, infos = env.step(actions)
    env.close()
    return {a: (infos[a]["reward_ctrl"], float(np.sum(np.square(actions[a], dtype=np.float64)))) for a in actions}


@pytest.mark.parametrize("module, kwargs, reference", CASES, ids=lambda c: getattr(c, "__name__", None))
@pytest.mark.parametrize("weight", [None, 0.0, 0.01])
def test_reward_ctrl_uses_the_given_weight_or_the_robots(module, kwargs, reference, weight):
    extra = {} if weight is None else {"ctrl_cost_weight": weight}
    expected_weight = reference if weight is None else weight
    for agent, (term, squares) in ctrl_terms(module, kwargs, **extra).items():
        assert term == pytest.approx(-2.0 * expected_weight * squares, rel=1e-6, abs=1e-12), agent


@pytest.mark.parametrize("module, kwargs", [(run_to_goal_v0, {}), (you_shall_not_pass_v0, {}),
                                            (kick_and_defend_v0, {})])
def test_a_negative_ctrl_cost_weight_is_refused_by_name(module, kwargs):
    with pytest.raises(ValueError, match=r"ctrl_cost_weight should be >= 0 or None, got -0\.5"):
        module.parallel_env(ctrl_cost_weight=-0.5, **kwargs)
