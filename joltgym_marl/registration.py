"""Registers every single-agent task with Gymnasium (``gymnasium.make`` and
``gymnasium.make_vec``) under the ``joltgym_marl/`` namespace, from the
native task registry (each task's registration line: its id, entry points,
max_episode_steps and reward_threshold)."""

from __future__ import annotations

import gymnasium

from joltgym_marl.registry import SINGLE_AGENT_TASKS

# (gymnasium id, env entry point, vector entry point), one per registered task.
SINGLE_AGENT_ENVS = [
    (spec.env_id, f"joltgym_marl.envs:{spec.env_class}", f"joltgym_marl.vector:{spec.vector_class}")
    for spec in SINGLE_AGENT_TASKS
]


def register_envs() -> None:
    for spec in SINGLE_AGENT_TASKS:
        if spec.env_id in gymnasium.registry:
            continue
        gymnasium.register(
            id=spec.env_id,
            entry_point=f"joltgym_marl.envs:{spec.env_class}",
            vector_entry_point=f"joltgym_marl.vector:{spec.vector_class}",
            max_episode_steps=spec.max_episode_steps,
            reward_threshold=spec.reward_threshold,
        )
