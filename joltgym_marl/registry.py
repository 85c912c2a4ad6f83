"""The task registry, as read from the native core: the single source of truth.

Every task (a single-agent robot or a shared-world game) is described once, by
its C++ file's registration line. From that description this package derives
the ``*Core`` classes, the Gymnasium envs and vector envs and their
registration, the PettingZoo game modules, and the tests and benchmarks derive
their parametrization from it too. Adding a robot is one C++ file and one MJCF.
"""

from __future__ import annotations

import enum
import keyword
from dataclasses import dataclass
from typing import Any

from joltgym_marl._native import core as _core


@dataclass(frozen=True)
class Param:
    """One keyword argument of a task."""

    name: str
    kind: str  # float, int, bool, range, str, body, optional_float
    default: Any
    doc: str


@dataclass(frozen=True)
class TaskSpec:
    """What the native registry says about one task."""

    name: str  # native name: "half_cheetah", "sumo"
    kind: str  # "single_agent" or "game"
    title: str  # class-name stem: "HalfCheetah"
    env_id: str  # "joltgym_marl/HalfCheetah-v0" or "sumo_v0"
    reference_id: str  # Gymnasium's env it reproduces ("HalfCheetah-v5"), or ""
    agent_prefix: str  # games: agent names are f"{agent_prefix}_{k}"
    max_episode_steps: int  # truncation (a game's default max_cycles)
    doc: str  # the docstring table
    params: tuple[Param, ...]
    engines: tuple[str, ...] = ("mujoco",)  # physics engines it runs on (the `engine` keyword)

    @property
    def is_game(self) -> bool:
        return self.kind == "game"

    @property
    def core_class(self) -> str:
        return f"{self.title}Core"

    @property
    def env_class(self) -> str:
        return f"{self.title}Env" if not self.is_game else self.title

    @property
    def vector_class(self) -> str:
        return f"{self.title}VectorEnv"

    @property
    def module_name(self) -> str:
        """A game's PettingZoo module name (``sumo_v0``)."""
        return self.env_id

    def defaults(self) -> dict[str, Any]:
        return {p.name: p.default for p in self.params}


def _load() -> dict[str, TaskSpec]:
    specs = {}
    for name, entry in _core.tasks().items():
        params = tuple(Param(p["name"], p["kind"], p["default"], p["doc"]) for p in entry["params"])
        for p in params:
            assert p.name.isidentifier() and not keyword.iskeyword(p.name), p.name
        specs[name] = TaskSpec(entry["name"], entry["kind"], entry["title"], entry["env_id"],
                               entry["reference_id"], entry["agent_prefix"],
                               entry["max_episode_steps"], entry["doc"], params,
                               tuple(entry.get("engines", ("mujoco",))))
    return specs


TASKS: dict[str, TaskSpec] = _load()
"""Every registered task by native name."""

SINGLE_AGENT_TASKS: list[TaskSpec] = [s for s in TASKS.values() if not s.is_game]
GAMES: list[TaskSpec] = [s for s in TASKS.values() if s.is_game]


def docstring(spec: TaskSpec, preamble: str = "") -> str:
    """A class docstring: the task's table, then its keyword arguments."""
    lines = [f"    {p.name}={p.default!r}: {p.doc}" for p in spec.params]
    return f"{spec.doc.strip()}\n\n{preamble}Keyword arguments (defaults shown):\n" + "\n".join(lines) + "\n"


def _int_enum(native) -> type[enum.IntEnum]:
    """A Python IntEnum of a native enum's names and values (NumPy compares
    its members to integer arrays as plain ints)."""
    return enum.IntEnum(native.__name__, {name: int(value) for name, value in native.__members__.items()},
                        module=__name__)


ResetKind = _int_enum(_core.ResetKind)
"""What a pool call did to each world (``WorldPool.reset_kind``): STEPPED,
RESET (reset by this call), AUTORESET (its episode ended and it was reset in
the same call; ``final_obs``/``final_infos`` hold the ended episode)."""

Outcome = _int_enum(_core.Outcome)
"""A game's result for one agent (the ``outcome`` info field, decoded to its
lower-case name by the info decoder): ONGOING, WIN, LOSS, DRAW."""

__all__ = ["GAMES", "Outcome", "Param", "ResetKind", "SINGLE_AGENT_TASKS", "TASKS", "TaskSpec", "docstring"]
