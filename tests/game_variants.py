"""The game configurations the PettingZoo-facing tests run over: every
registered game's default configuration, the same on Jolt where the game runs
on it, and the extra configurations below (cheetah_race from 1 to 8 agents,
the humanoid robots of sumo and run_to_goal, the gym-compete form of
every competition game). A new game is covered by being
registered natively."""

from __future__ import annotations

import pytest

from joltgym_marl.envs import MULTI_AGENT_ENVS
from joltgym_marl.registry import TASKS

EXTRA_VARIANTS = {
    "cheetah_race_v0": {
        "3-shared_track": dict(num_agents=3, layout="shared_track"),
        "1-finish_line": dict(num_agents=1, finish_line=0.3, max_cycles=400),
        "4": dict(num_agents=4),
        "8": dict(num_agents=8),
    },
    "sumo_v0": {"humanoid": dict(robot="humanoid"), "drawn_ring": dict(ring_radius=None),
                "gym_compete": dict(form="gym_compete"),
                "gym_compete-humanoid": dict(form="gym_compete", robot="humanoid")},
    "run_to_goal_v0": {"humanoid": dict(robot="humanoid"), "gym_compete": dict(form="gym_compete"),
                       "gym_compete-humanoid": dict(form="gym_compete", robot="humanoid")},
    "you_shall_not_pass_v0": {"gym_compete": dict(form="gym_compete")},
    "kick_and_defend_v0": {"gym_compete": dict(form="gym_compete")},
}


def variants(include=lambda kw: True) -> list:
    """``pytest.param(module, kwargs, id=...)`` per configuration (those ``include`` accepts)."""
    out = []
    for name, module in MULTI_AGENT_ENVS.items():
        out.append(pytest.param(module, {}, id=name))
        spec = next(s for s in TASKS.values() if s.env_id == name)
        if "jolt" in spec.engines:  # every game that runs on Jolt is tested on it too
            out.append(pytest.param(module, {"engine": "jolt"}, id=f"{name}-jolt"))
        for label, kw in EXTRA_VARIANTS.get(name, {}).items():
            if include(kw):
                out.append(pytest.param(module, kw, id=f"{name}-{label}"))
    return out


VARIANTS = variants()
# max_cycles_test expects the episode to last exactly max_cycles: no finish line.
VARIANTS_WITHOUT_FINISH = variants(lambda kw: "finish_line" not in kw)
