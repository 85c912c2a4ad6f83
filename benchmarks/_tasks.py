"""The benchmarked tasks: every task of the native registry, nothing named here.

The suite and the two smaller scripts take their task lists, labels and ids
from :mod:`joltgym_marl.registry`, so a robot or a game registered natively is
benchmarked with no edit under ``benchmarks/``. Importing this module imports
``joltgym_marl`` (call ``benchmarks._paths.use_checkout()`` first).
"""

from __future__ import annotations

from typing import Any

from joltgym_marl.registry import GAMES, SINGLE_AGENT_TASKS, TASKS, TaskSpec

# Agents per world of the games that take a `num_agents` keyword argument.
DEFAULT_GAME_AGENTS = 4


def game_kwargs(spec: TaskSpec, agents: int | None = DEFAULT_GAME_AGENTS) -> dict[str, Any]:
    """The keyword arguments the suite builds ``spec`` with: ``num_agents=agents`` for a game
    that has that parameter, nothing otherwise (the task's defaults)."""
    if spec.is_game and agents is not None and any(p.name == "num_agents" for p in spec.params):
        return {"num_agents": agents}
    return {}


def limit_params(kwargs: dict[str, Any]) -> list[str]:
    """``kwargs`` as ``raw_step_limit --param name=value`` arguments."""
    out = []
    for name, value in kwargs.items():
        text = ("true" if value else "false") if isinstance(value, bool) else str(value)
        out.append(f"{name}={text}")
    return out


def portable(spec: TaskSpec, kwargs: dict[str, Any]) -> dict[str, Any]:
    """What a benchmark worker needs to build ``spec`` (JSON-able; workers that must not
    import ``joltgym_marl`` read the ids from here)."""
    return {"name": spec.name, "kind": spec.kind, "title": spec.title, "env_id": spec.env_id,
            "reference_id": spec.reference_id, "module": spec.module_name if spec.is_game else None,
            "max_episode_steps": spec.max_episode_steps, "kwargs": kwargs}


__all__ = ["DEFAULT_GAME_AGENTS", "GAMES", "SINGLE_AGENT_TASKS", "TASKS", "TaskSpec", "game_kwargs",
           "limit_params", "portable"]
