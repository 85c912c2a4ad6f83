"""Real signatures and docstrings for the classes and functions derived from
the task registry, so that ``help()``, ``inspect.signature`` and editors show
every keyword argument with its default and meaning.

The derived constructors take the task's keyword arguments as ``**kwargs``
and hand them to the native core, which checks them (unknown names raise a
``TypeError`` listing the allowed ones). What they accept is declared here,
from the registry's parameters, as ``__signature__`` and in ``__doc__``.
"""

from __future__ import annotations

import inspect
from typing import Any

from gymnasium.vector import AutoresetMode

from joltgym_marl.registry import TaskSpec, docstring

# (name, default, meaning) of the keyword arguments an entry point adds to a
# task's own; a default of _LIMIT is the task's max_episode_steps.
_LIMIT = object()

RENDER = [
    ("render_mode", None, "None (render() warns and returns None), 'rgb_array' (render() returns an "
                          "(height, width, 3) uint8 frame) or 'human' (a viewer window; needs a display)"),
]
SINGLE_ENV = [
    *RENDER,
    ("width", 480, "frame width in pixels, 16 to 4096"),
    ("height", 480, "frame height in pixels, 16 to 4096"),
]
GAME_ENV = [
    ("max_cycles", _LIMIT, "steps per episode before every agent is truncated (an int >= 1); None: never"),
    *RENDER,
    ("width", 640, "frame width in pixels, 16 to 4096"),
    ("height", 480, "frame height in pixels, 16 to 4096"),
]
CORE = [
    ("max_episode_steps", _LIMIT, "steps per episode before truncation (an int >= 0; 0 or None: never)"),
]
VECTOR = [
    ("num_threads", None, "native worker threads, counting the caller (an int >= 1); None: the machine's "
                          "cores, never more than the worlds"),
    ("max_episode_steps", _LIMIT, "steps per episode before truncation (an int >= 0; 0 or None: never)"),
    ("autoreset_mode", AutoresetMode.NEXT_STEP, "Gymnasium's AutoresetMode.NEXT_STEP or "
                                                "AutoresetMode.SAME_STEP (or 'next_step', 'same_step')"),
    ("copy", True, "True: return copies of the result arrays; False: the native buffers themselves, which "
                   "the next step overwrites"),
    ("batch_size", None, "worlds returned by each recv() of asynchronous stepping (1 to num_envs); "
                         "None: num_envs"),
    ("render_mode", None, "None (render() warns and returns None), 'rgb_array' or 'human' (needs a display)"),
    ("render_world", 0, "the world render() draws, 0 to num_envs - 1"),
    ("width", 480, "frame width in pixels, 16 to 4096"),
    ("height", 480, "frame height in pixels, 16 to 4096"),
]
AGENT_VECTOR = [
    ("base_class", "gymnasium", "'gymnasium' (a Gymnasium VectorEnv) or 'stable_baselines3' (an SB3 VecEnv)"),
    ("num_threads", None, "native worker threads (an int >= 1); None: the machine's cores, never more than "
                          "the worlds"),
    ("max_cycles", _LIMIT, "steps per episode before truncation (an int >= 1); None: never"),
    ("copy", True, "True: return copies of the result arrays; False: the native buffers themselves"),
    ("batch_size", None, "worlds returned by each recv() of asynchronous stepping; None: num_worlds "
                         "(base_class='gymnasium' only)"),
    ("render_mode", None, "None (render() warns and returns None) or 'rgb_array' (base_class='gymnasium' "
                          "only)"),
    ("render_world", 0, "the world render() draws, 0 to num_worlds - 1 (base_class='gymnasium' only)"),
]


def leading(spec: TaskSpec, entries: list[tuple[str, Any, str]]) -> list[tuple[str, Any, str]]:
    """``entries`` with their task-dependent defaults filled in."""
    return [(name, spec.max_episode_steps if default is _LIMIT else default, meaning)
            for name, default, meaning in entries]


def signature(spec: TaskSpec, entries: list[tuple[str, Any, str]], *,
              positional: list[inspect.Parameter] = (), method: bool = False) -> inspect.Signature:
    """``(positional..., *, <entries>, <the task's keyword arguments>)``, with
    ``self`` first for a method."""
    params = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)] if method else []
    params += list(positional)
    taken = {p.name for p in params}
    for name, default, _ in leading(spec, entries):
        if name not in taken:
            params.append(inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default))
            taken.add(name)
    params += [inspect.Parameter(p.name, inspect.Parameter.KEYWORD_ONLY, default=p.default)
               for p in spec.params if p.name not in taken]
    return inspect.Signature(params)


def document(spec: TaskSpec, entries: list[tuple[str, Any, str]], summary: str,
             positional: list[tuple[str, str]] = ()) -> str:
    """A docstring: ``summary``, the positional arguments, the task's table and
    every keyword argument with its default, meaning and allowed values."""
    args = "".join(f"    {name}: {meaning}\n" for name, meaning in positional)
    preamble = f"{summary.strip()}\n\n" + (f"Arguments:\n{args}\n" if args else "")
    return preamble + docstring(spec, leading=leading(spec, entries))


def declare(target: Any, spec: TaskSpec, entries: list[tuple[str, Any, str]], summary: str, *,
            positional: list[inspect.Parameter] = (), positional_docs: list[tuple[str, str]] = ()) -> Any:
    """Sets ``__signature__`` and ``__doc__`` of a function or class (and of a
    class's ``__init__``, if it defines one)."""
    target.__signature__ = signature(spec, entries, positional=positional)
    target.__doc__ = document(spec, entries, summary, positional_docs)
    init = target.__dict__.get("__init__") if isinstance(target, type) else None
    if init is not None:
        init.__signature__ = signature(spec, entries, positional=positional, method=True)
    return target
