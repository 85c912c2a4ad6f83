"""Gymnasium single-agent envs and PettingZoo shared-world games, one per
registered task, derived from the native task registry.

* every single-agent task ``T`` gives ``<Title>Env`` (a Gymnasium ``Env``,
  registered as ``joltgym_marl/<Title>-v0``);
* every game gives a PettingZoo module ``<game>_v0`` (``joltgym_marl.envs.sumo_v0``,
  importable as ``from joltgym_marl import sumo_v0`` or ``import joltgym_marl.sumo_v0``) with ``parallel_env``,
  ``env`` (AEC, PettingZoo's wrappers applied), ``raw_env`` and ``vec_env``
  (natively batched agent vector env), and its ``ParallelEnv`` class.
"""

from __future__ import annotations

import inspect
import sys
import types
from typing import Any

from pettingzoo.utils.wrappers import OrderEnforcingWrapper

from joltgym_marl import _signatures
from joltgym_marl.envs.shared_world import SharedWorldAECEnv, SharedWorldEnv
from joltgym_marl.registry import GAMES, SINGLE_AGENT_TASKS, TaskSpec


def _env_class(spec: TaskSpec) -> type:
    from joltgym_marl.envs.mujoco_env import NativeMujocoEnv
    from joltgym_marl.envs.v5_helpers import HELPERS

    cls = type(spec.env_class, (NativeMujocoEnv, *HELPERS.get(spec.name, ())), {
        "__module__": __name__, "__qualname__": spec.env_class, "task": spec.name})
    return _signatures.declare(
        cls, spec, _signatures.SINGLE_ENV,
        f"The {spec.name!r} task as a Gymnasium ``MujocoEnv``: ``gymnasium.make({spec.env_id!r})`` "
        f"(episodes truncated at {spec.max_episode_steps} steps by Gymnasium's TimeLimit), a native "
        f"reproduction of Gymnasium's {spec.reference_id}.")


def _game_class(spec: TaskSpec) -> type:
    limit = spec.max_episode_steps

    def __init__(self, max_cycles: int | None = limit, render_mode: str | None = None,
                 width: int = 640, height: int = 480, **kwargs: Any):
        SharedWorldEnv.__init__(self, max_cycles=max_cycles, render_mode=render_mode, width=width,
                                height=height, **kwargs)

    cls = type(spec.env_class, (SharedWorldEnv,), {
        "__init__": __init__, "__module__": f"{__name__}.{spec.module_name}",
        "__qualname__": spec.env_class, "game": spec.name, "agent_prefix": spec.agent_prefix,
        "metadata": {"name": spec.module_name, "render_modes": [], "is_parallelizable": True}})
    return _signatures.declare(cls, spec, _signatures.GAME_ENV,
                               f"The {spec.name!r} game as a PettingZoo ``ParallelEnv`` "
                               f"({spec.module_name}.parallel_env).")


def _game_module(spec: TaskSpec) -> types.ModuleType:
    """The PettingZoo module of a game: ``parallel_env``, ``env``, ``raw_env``, ``vec_env``."""
    module = types.ModuleType(f"{__name__}.{spec.module_name}", f"{spec.doc.strip()}\n")
    game = _game_class(spec)

    def parallel_env(**kwargs: Any) -> SharedWorldEnv:
        return game(**kwargs)

    def raw_env(**kwargs: Any):
        return SharedWorldAECEnv(game(**kwargs))

    def env(**kwargs: Any):
        return OrderEnforcingWrapper(SharedWorldAECEnv(game(**kwargs)))

    def vec_env(num_worlds: int, *, base_class: str = "gymnasium", num_threads: int | None = None,
                max_cycles: int | None = spec.max_episode_steps, **kwargs: Any):
        from joltgym_marl.vector.agent_vector_env import make_agent_vec_env

        return make_agent_vec_env(spec.name, num_worlds, base_class=base_class, num_threads=num_threads,
                                  max_cycles=max_cycles, **kwargs)

    name = spec.module_name
    summaries = {
        parallel_env: f"The game as a PettingZoo ``ParallelEnv`` (``{name}.parallel_env()``).",
        raw_env: "The game as an AEC env, without wrappers (PettingZoo's parallel-to-AEC conversion, each "
                 "action checked when it is given).",
        env: "The game as an AEC env with PettingZoo's standard (order-enforcing) wrapper.",
    }
    for function, summary in summaries.items():
        _signatures.declare(function, spec, _signatures.GAME_ENV, summary)
    num_worlds = inspect.Parameter("num_worlds", inspect.Parameter.POSITIONAL_OR_KEYWORD)
    _signatures.declare(
        vec_env, spec, _signatures.AGENT_VECTOR,
        f"``num_worlds`` worlds of the game stepped natively, every agent of every world a row: the "
        f"one-line swap for ``supersuit.concat_vec_envs_v1(supersuit.pettingzoo_env_to_vec_env_v1("
        f"{name}.parallel_env(**kwargs)), num_worlds, base_class=base_class)`` (see "
        f":mod:`joltgym_marl.vector.agent_vector_env`).",
        positional=[num_worlds], positional_docs=[("num_worlds", "number of shared worlds (an int >= 1)")])
    for function in (parallel_env, raw_env, env, vec_env):
        function.__module__ = module.__name__
        function.__qualname__ = function.__name__  # picklable by reference, as a module function
        setattr(module, function.__name__, function)
    setattr(module, game.__name__, game)
    module.task_spec = spec
    module.__all__ = [game.__name__, "env", "parallel_env", "raw_env", "vec_env"]
    # Importable by path, as PettingZoo's env modules are: ``import
    # joltgym_marl.sumo_v0`` and ``from joltgym_marl.sumo_v0 import
    # parallel_env`` (the package's own name for it) as well as
    # ``joltgym_marl.envs.sumo_v0``.
    sys.modules[module.__name__] = module
    sys.modules[f"{__name__.rpartition('.')[0]}.{spec.module_name}"] = module
    return module


_ENV_CLASS_NAMES = {spec.env_class for spec in SINGLE_AGENT_TASKS}


def __getattr__(name: str) -> Any:
    # The Gymnasium env classes derive from gymnasium's MujocoEnv, whose module
    # imports MuJoCo's Python bindings: they are made on first use, so that
    # importing joltgym_marl (for a pool or a game) does not import them.
    if name in ("ENV_CLASSES", "NativeMujocoEnv") or name in _ENV_CLASS_NAMES:
        from joltgym_marl.envs.mujoco_env import NativeMujocoEnv

        classes = {spec.name: _env_class(spec) for spec in SINGLE_AGENT_TASKS}
        globals().update({cls.__name__: cls for cls in classes.values()},
                         ENV_CLASSES=classes, NativeMujocoEnv=NativeMujocoEnv)
        return globals()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# Every multi-agent env, by its PettingZoo name: the conformance tests run over
# this registry, so a new game is tested by being registered natively.
MULTI_AGENT_ENVS: dict[str, types.ModuleType] = {spec.module_name: _game_module(spec) for spec in GAMES}
globals().update(MULTI_AGENT_ENVS)

__all__ = ["ENV_CLASSES", "MULTI_AGENT_ENVS", "NativeMujocoEnv", "SharedWorldAECEnv", "SharedWorldEnv",
           *sorted(_ENV_CLASS_NAMES), *MULTI_AGENT_ENVS]
