"""Gymnasium single-agent envs and PettingZoo shared-world games."""

from joltgym_marl.envs import cheetah_race_v0, sumo_v0
from joltgym_marl.envs.ant import AntEnv
from joltgym_marl.envs.half_cheetah import HalfCheetahEnv
from joltgym_marl.envs.humanoid import HumanoidEnv

# Every multi-agent env, by its PettingZoo name: the conformance tests run over
# this registry, so a new game is tested by being listed here.
MULTI_AGENT_ENVS = {"cheetah_race_v0": cheetah_race_v0, "sumo_v0": sumo_v0}

__all__ = ["MULTI_AGENT_ENVS", "AntEnv", "HalfCheetahEnv", "HumanoidEnv", "cheetah_race_v0", "sumo_v0"]
