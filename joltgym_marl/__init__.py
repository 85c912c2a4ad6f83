"""joltgym_marl: multi-agent and single-agent locomotion on batched native MuJoCo worlds.

Every task is described once, in the native task registry
(``joltgym_marl.registry.TASKS``). ``import joltgym_marl`` registers each
single-agent task with Gymnasium as ``joltgym_marl/<Title>-v0`` (for
``gymnasium.make`` and ``gymnasium.make_vec``) and exports its ``<Title>Core``;
each shared-world game is a PettingZoo module: ``from joltgym_marl import
cheetah_race_v0, sumo_v0``. ``joltgym_marl.tasks()`` lists every task with its
kind and ids; ``python -m joltgym_marl`` lists, describes, demonstrates,
benchmarks and records them.
"""

from joltgym_marl import rendering as _rendering

_rendering.prefer_headless_gl()

from joltgym_marl._native import ASSET_DIR  # noqa: E402
from joltgym_marl._native import core as _core  # noqa: E402
from joltgym_marl.cores import CORE_CLASSES, SingleAgentCore  # noqa: E402
from joltgym_marl.envs import MULTI_AGENT_ENVS  # noqa: E402
from joltgym_marl.registration import SINGLE_AGENT_ENVS, register_envs  # noqa: E402
from joltgym_marl.registry import TASKS, Outcome, ResetKind, TaskRecord, resolve, task, tasks  # noqa: E402
from joltgym_marl.vector import NativeVectorEnv  # noqa: E402

WorldPool = _core.WorldPool
MultiAgentEnv = _core.MultiAgentEnv
StateError = _core.StateError
MujocoError = _core.MujocoError  # a RuntimeError; MemoryError when MuJoCo ran out of memory
MujocoWarning = _core.MujocoWarning  # a RuntimeWarning

globals().update({cls.__name__: cls for cls in CORE_CLASSES.values()})
globals().update(MULTI_AGENT_ENVS)

__version__ = "0.1.0"

register_envs()

__all__ = [
    "ASSET_DIR",
    "MULTI_AGENT_ENVS",
    "MujocoError",
    "MujocoWarning",
    "MultiAgentEnv",
    "NativeVectorEnv",
    "Outcome",
    "ResetKind",
    "SINGLE_AGENT_ENVS",
    "SingleAgentCore",
    "StateError",
    "TASKS",
    "TaskRecord",
    "WorldPool",
    "__version__",
    "resolve",
    "task",
    "tasks",
    *(cls.__name__ for cls in CORE_CLASSES.values()),
    *MULTI_AGENT_ENVS,
]
