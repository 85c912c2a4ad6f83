"""Registers the single-agent tasks with Gymnasium under the ``joltgym_marl/`` namespace."""

from __future__ import annotations

import gymnasium

# (gymnasium id, env class, vector env class)
SINGLE_AGENT_ENVS = [
    ("joltgym_marl/HalfCheetah-v0", "joltgym_marl.envs.half_cheetah:HalfCheetahEnv",
     "joltgym_marl.vector:HalfCheetahVectorEnv"),
    ("joltgym_marl/Humanoid-v0", "joltgym_marl.envs.humanoid:HumanoidEnv",
     "joltgym_marl.vector:HumanoidVectorEnv"),
    ("joltgym_marl/Ant-v0", "joltgym_marl.envs.ant:AntEnv",
     "joltgym_marl.vector:AntVectorEnv"),
]


def register_envs() -> None:
    for env_id, entry_point, vector_entry_point in SINGLE_AGENT_ENVS:
        if env_id in gymnasium.registry:
            continue
        gymnasium.register(
            id=env_id,
            entry_point=entry_point,
            vector_entry_point=vector_entry_point,
            max_episode_steps=1000,
        )
