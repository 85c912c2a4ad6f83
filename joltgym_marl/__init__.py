"""joltgym_marl: multi-agent and single-agent locomotion on batched native MuJoCo worlds.

``import joltgym_marl`` registers ``joltgym_marl/HalfCheetah-v0``,
``joltgym_marl/Humanoid-v0`` and ``joltgym_marl/Ant-v0`` with Gymnasium (for
``gymnasium.make`` and ``gymnasium.make_vec``). Shared-world games are PettingZoo
envs: ``from joltgym_marl import cheetah_race_v0, sumo_v0``.
"""

from joltgym_marl import rendering as _rendering

_rendering.prefer_headless_gl()

from joltgym_marl._native import ASSET_DIR  # noqa: E402
from joltgym_marl._native import core as _core
from joltgym_marl.cores import AntCore, HalfCheetahCore, HumanoidCore, SingleAgentCore
from joltgym_marl.envs import MULTI_AGENT_ENVS, cheetah_race_v0, sumo_v0
from joltgym_marl.registration import SINGLE_AGENT_ENVS, register_envs
from joltgym_marl.vector import NativeVectorEnv

WorldPool = _core.WorldPool
MultiAgentEnv = _core.MultiAgentEnv
StateError = _core.StateError

__version__ = "0.1.0"

register_envs()

__all__ = [
    "ASSET_DIR",
    "AntCore",
    "HalfCheetahCore",
    "HumanoidCore",
    "MULTI_AGENT_ENVS",
    "MultiAgentEnv",
    "NativeVectorEnv",
    "SINGLE_AGENT_ENVS",
    "SingleAgentCore",
    "StateError",
    "WorldPool",
    "__version__",
    "cheetah_race_v0",
    "sumo_v0",
]
