"""Native vector envs."""

from joltgym_marl.vector.agent_vector_env import AgentInfos, AgentVectorEnv, make_agent_vec_env
from joltgym_marl.vector.native_vector_env import (
    AntVectorEnv,
    HalfCheetahVectorEnv,
    HumanoidVectorEnv,
    NativeVectorEnv,
)

__all__ = ["AgentInfos", "AgentVectorEnv", "make_agent_vec_env", "AntVectorEnv", "HalfCheetahVectorEnv", "HumanoidVectorEnv", "NativeVectorEnv"]
