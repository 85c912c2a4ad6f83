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
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from joltgym_marl._native import core as _core

if TYPE_CHECKING:
    from joltgym_marl.mamujoco.catalog import ScenarioRecord


@dataclass(frozen=True)
class Param:
    """One keyword argument of a task."""

    name: str
    kind: str  # float, int, bool, range, str, body, optional_float
    default: Any
    doc: str
    min: float | int | None = None  # the bounds the value is checked against (numbers and ranges)
    max: float | int | None = None

    @property
    def allowed(self) -> str:
        """The values this argument takes, in words (the doc may narrow them further)."""
        bounds = _bounds(self.min, self.max, self.kind)
        if self.kind == "float":
            return f"a float{bounds}" if bounds else "a finite float"
        if self.kind == "optional_float":
            return f"a float{bounds} or None"
        if self.kind == "int":
            return f"an int{bounds}"
        if self.kind == "bool":
            return "True or False"
        if self.kind == "range":
            return f"a (low, high) pair of floats, low <= high{', each' + bounds if bounds else ''}"
        if self.kind == "body":
            return "a body name (str) or index (int)"
        return "a str"

    def describe(self) -> str:
        """``name=default``: meaning (allowed values), one line."""
        return f"{self.name}={self.default!r}: {self.doc} ({self.allowed})"


# The default bounds of the native checks (params.h): an int within +-2**30, a
# real within +-1e6. Bounds a task declares itself are worth saying.
_DEFAULT_INT_BOUNDS = (-(1 << 30), 1 << 30)
_DEFAULT_REAL_BOUNDS = (-1e6, 1e6)


def _bounds(low, high, kind: str) -> str:
    if low is None or high is None:
        return ""
    if (low, high) == (_DEFAULT_INT_BOUNDS if kind == "int" else _DEFAULT_REAL_BOUNDS):
        return ""
    if kind == "int" and high == _DEFAULT_INT_BOUNDS[1]:
        return f" >= {low}"
    if kind != "int" and high == _DEFAULT_REAL_BOUNDS[1]:
        return f" >= {low:g}"
    return f" in [{low:g}, {high:g}]" if kind != "int" else f" in [{low}, {high}]"


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
    names: tuple[str, ...] = ()  # every name the task answers to (task_names.h): name, title, ids, classes
    engines: tuple[str, ...] = ("mujoco",)  # physics engines it runs on (the `engine` keyword)
    reward_threshold: float | None = None  # the return that counts as solved (Gymnasium's, of reference_id)

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
        params = tuple(Param(p["name"], p["kind"], p["default"], p["doc"], p.get("min"), p.get("max"))
                       for p in entry["params"])
        for p in params:
            assert p.name.isidentifier() and not keyword.iskeyword(p.name), p.name
        specs[name] = TaskSpec(entry["name"], entry["kind"], entry["title"], entry["env_id"],
                               entry["reference_id"], entry["agent_prefix"],
                               entry["max_episode_steps"], entry["doc"], params,
                               tuple(entry.get("names", (entry["name"],))),
                               tuple(entry.get("engines", ("mujoco",))), entry.get("reward_threshold"))
    return specs


TASKS: dict[str, TaskSpec] = _load()
"""Every registered task by native name."""

SINGLE_AGENT_TASKS: list[TaskSpec] = [s for s in TASKS.values() if not s.is_game]
GAMES: list[TaskSpec] = [s for s in TASKS.values() if s.is_game]


KINDS = {"single_agent": "single-agent task", "game": "game"}
"""The kinds of task, and what a sentence calls one."""


def resolve(name: str, kind: str | None = None) -> TaskSpec:
    """The task ``name`` names: its native name (``"half_cheetah"``) or any
    other of its names, spelled loosely: title (``"HalfCheetah"``), Gymnasium
    or PettingZoo id (``"joltgym_marl/HalfCheetah-v0"``, ``"sumo_v0"``), the
    Gymnasium env it reproduces (``"HalfCheetah-v5"``) or a class name
    (``"HalfCheetahCore"``), in any case, with or without ``_``, ``-`` or
    spaces between the words (``"half-cheetah"``). One native resolver does
    this for every entry point (``WorldPool("HalfCheetah")`` too).

    ``kind`` (``"single_agent"`` or ``"game"``) asks for a task of that kind.
    Raises ``ValueError`` naming the close matches and every task (or every
    task of the kind asked for) when ``name`` names none of them."""
    if kind is not None and kind not in KINDS:
        raise ValueError(f"kind should be None or one of {', '.join(map(repr, KINDS))}, got {kind!r}")
    if not isinstance(name, str):
        raise TypeError(f"a task name should be a str, got {type(name).__name__} {name!r}")
    spec = TASKS[_core.resolve_task(name)]
    if kind is not None and spec.kind != kind:
        allowed = ", ".join(repr(s.name) for s in TASKS.values() if s.kind == kind)
        raise ValueError(f"{name!r} is the {KINDS[spec.kind]} {spec.name!r}; expected a {KINDS[kind]}: "
                         f"{allowed}")
    return spec


@dataclass(frozen=True)
class TaskRecord:
    """One task and its ids, as :func:`joltgym_marl.tasks` lists it.

    Every id follows from ``name`` and ``title`` by one rule
    (docs/guides/cli_and_naming.md); the fields that do not apply to a kind
    are None (a game has no Gymnasium id, a robot no PettingZoo module)."""

    name: str  # the native name: WorldPool(name), SingleAgentCore(name), MultiAgentEnv(name)
    kind: str  # "single_agent" or "game"
    title: str  # the class-name stem: "HalfCheetah", "Sumo"
    gymnasium_id: str | None  # gymnasium.make(gymnasium_id): "joltgym_marl/HalfCheetah-v0"
    reference_id: str | None  # the Gymnasium env it reproduces step for step: "HalfCheetah-v5"
    pettingzoo_module: str | None  # from joltgym_marl import <pettingzoo_module>: "sumo_v0"
    core_class: str | None  # joltgym_marl.<core_class>: one native world, "HalfCheetahCore"
    env_class: str  # the Gymnasium Env class (joltgym_marl.envs) or the game's ParallelEnv class
    vector_class: str | None  # joltgym_marl.vector.<vector_class>: gymnasium.make_vec's entry point
    max_episode_steps: int  # truncation (a game's max_cycles)
    engines: tuple[str, ...]  # the physics engines that run it
    names: tuple[str, ...] = field(repr=False, default=())  # every name it answers to (resolve)
    params: tuple[Param, ...] = field(repr=False, default=())  # its keyword arguments

    @property
    def spec(self) -> TaskSpec:
        """The registry's full description (docstring table included)."""
        return TASKS[self.name]


def _record(spec: TaskSpec, entry: dict[str, Any]) -> TaskRecord:
    game = spec.is_game
    return TaskRecord(
        name=spec.name, kind=spec.kind, title=spec.title,
        gymnasium_id=None if game else spec.env_id, reference_id=spec.reference_id or None,
        pettingzoo_module=spec.module_name if game else None, core_class=None if game else spec.core_class,
        env_class=spec.env_class, vector_class=None if game else spec.vector_class,
        max_episode_steps=spec.max_episode_steps,
        engines=spec.engines, names=spec.names, params=spec.params)


def tasks(kind: str | None = None) -> list[TaskRecord] | list[ScenarioRecord]:
    """Every registered task (of ``kind``, ``"single_agent"`` or ``"game"``, if
    given), with its kind and ids, in the native registry's order: the
    single-agent robots, the shared-world games and whatever is registered
    natively later, read from the native registry each call.

    ``kind="mamujoco"`` lists the MaMuJoCo scenarios instead
    (:class:`joltgym_marl.mamujoco.catalog.ScenarioRecord`: each factorizes
    one of the single-agent robots, so they are not tasks of their own): the
    robot, and per agent_conf the agents, action and observation dims."""
    if kind == "mamujoco":
        from joltgym_marl.mamujoco import catalog

        return catalog.scenarios()
    if kind is not None and kind not in KINDS:
        raise ValueError(f"kind should be None or one of {', '.join(map(repr, KINDS))}, got {kind!r} "
                         "(or 'mamujoco' for the MaMuJoCo scenarios)")
    entries = _core.tasks()
    return [_record(spec, entries[spec.name]) for spec in TASKS.values() if kind in (None, spec.kind)]


def task(name: str) -> TaskRecord:
    """The record of the task ``name`` names (any of its names, see :func:`resolve`)."""
    spec = resolve(name)
    return _record(spec, _core.tasks()[spec.name])


def keyword_lines(spec: TaskSpec, leading: list[tuple[str, Any, str]] = ()) -> list[str]:
    """One line per keyword argument: ``leading`` ones (``(name, default,
    meaning)``, those of the entry point) first, then the task's."""
    taken = {name for name, _, _ in leading}
    return ([f"    {name}={default!r}: {meaning}" for name, default, meaning in leading]
            + [f"    {p.describe()}" for p in spec.params if p.name not in taken])


def docstring(spec: TaskSpec, preamble: str = "", leading: list[tuple[str, Any, str]] = ()) -> str:
    """A docstring: the task's table, then its keyword arguments with their
    defaults, meanings and allowed values."""
    return (f"{spec.doc.strip()}\n\n{preamble}Keyword arguments (defaults shown):\n"
            + "\n".join(keyword_lines(spec, leading)) + "\n")


def _int_enum(native) -> type[enum.IntEnum]:
    """A Python IntEnum of a native enum's names and values (NumPy compares
    its members to integer arrays as plain ints)."""
    return enum.IntEnum(native.__name__, {name: int(value) for name, value in native.__members__.items()},
                        module=__name__)


ResetKind = _int_enum(_core.ResetKind)
"""What a pool call did to each world (``WorldPool.reset_kind``): STEPPED,
RESET (reset by this call), AUTORESET (its episode ended and it was reset in
the same call; ``final_obs``/``final_infos`` hold the ended episode)."""

class Outcome(enum.IntEnum):
    """A game's result for one agent: the ``outcome`` info field, an int code
    (that of ``src/native/outcome.h``) that keeps its label. NumPy, TorchRL
    and JSON take it as the int; ``outcome.label`` is its lower-case name
    (``"win"``), ``Outcome.from_label("win")`` the way back."""

    ONGOING = 0
    WIN = 1
    LOSS = 2
    DRAW = 3

    @property
    def label(self) -> str:
        return self.name.lower()

    @classmethod
    def from_label(cls, label: str) -> Outcome:
        try:
            return cls[label.upper()]
        except (KeyError, AttributeError):
            raise ValueError(f"an outcome label should be one of {[m.label for m in cls]}, got {label!r}") from None


assert {m.name: int(m) for m in Outcome} == {n: int(v) for n, v in _core.Outcome.__members__.items()}
assert [m.label for m in Outcome] == list(_core.OUTCOME_LABELS)

_LABEL_ENUMS: dict[tuple[str, ...], type[enum.IntEnum]] = {tuple(m.label for m in Outcome): Outcome}


def label_enum(field: str, labels: list[str]) -> type[enum.IntEnum]:
    """The IntEnum an info field of labels decodes to (the native info
    decoder asks): :class:`Outcome` for a game's outcome; for other labels an
    IntEnum named after the field, its members the upper-case labels."""
    key = tuple(labels)
    if key not in _LABEL_ENUMS:
        name = "".join(word.title() for word in field.split("_"))
        _LABEL_ENUMS[key] = enum.IntEnum(name, {label.upper(): i for i, label in enumerate(labels)},
                                         module=__name__)
    return _LABEL_ENUMS[key]


__all__ = ["GAMES", "KINDS", "Outcome", "label_enum", "Param", "ResetKind", "SINGLE_AGENT_TASKS", "TASKS", "TaskSpec", "docstring",
           "TaskRecord", "keyword_lines", "resolve", "task", "tasks"]
