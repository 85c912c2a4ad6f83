"""Native vector envs."""

from joltgym_marl.vector.native_vector_env import (
    AntVectorEnv,
    HalfCheetahVectorEnv,
    HumanoidVectorEnv,
    NativeVectorEnv,
)

__all__ = ["AntVectorEnv", "HalfCheetahVectorEnv", "HumanoidVectorEnv", "NativeVectorEnv"]
