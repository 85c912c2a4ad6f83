"""Gymnasium single-agent envs (and, later, PettingZoo games)."""

from joltgym_marl.envs.ant import AntEnv
from joltgym_marl.envs.half_cheetah import HalfCheetahEnv
from joltgym_marl.envs.humanoid import HumanoidEnv

__all__ = ["AntEnv", "HalfCheetahEnv", "HumanoidEnv"]
