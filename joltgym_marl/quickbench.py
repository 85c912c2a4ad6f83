"""A quick side-by-side throughput figure of one task (``python -m joltgym_marl bench``).

A single-agent task is stepped three ways, each for about ``seconds`` of
wall clock with random actions drawn beforehand:

1. its ``gymnasium.make(id)`` env, one world in a Python loop (the drop-in);
2. its native vector env, ``worlds`` worlds on ``threads`` threads;
3. Gymnasium's own env of the task it reproduces (``<Title>-v5``), one world
   in a Python loop: the reference the other two are compared with. It is
   measured last, because importing MuJoCo's Python bindings (which
   Gymnasium's env does) slows every later native step (see ``_native``).

A game is stepped as one world through ``parallel_env`` (plain PettingZoo
code: the reference) and as ``worlds`` worlds through ``vec_env``. Rates count
env steps (games: agent steps, one per agent per world step); only ``step``
calls are timed, resets of ended episodes included. These are quick figures:
the benchmark suite (``python -m benchmarks.run``) measures against the
physical limit, with warm-up and interleaved rounds.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from joltgym_marl.registry import TaskSpec, resolve


@dataclass(frozen=True)
class Figure:
    """One measured way of stepping a task."""

    label: str
    rate: float  # steps per second (agent steps for games)
    steps: int  # steps timed (agent steps for games)
    seconds: float
    reference: bool = False  # the row the others are compared with


def timed(step: Callable[[int], int], seconds: float) -> tuple[float, int, float]:
    """Calls ``step(t)`` (returning the steps it made) for about ``seconds``;
    (steps per second, steps, seconds)."""
    steps, t = 0, 0
    start = time.perf_counter()
    deadline = start + seconds
    while True:
        steps += step(t)
        t += 1
        now = time.perf_counter()
        if now >= deadline:
            break
    elapsed = now - start
    return steps / elapsed, steps, elapsed


def _random_actions(low: np.ndarray, high: np.ndarray, shape: tuple[int, ...], seed: int) -> np.ndarray:
    low = np.maximum(low, -1.0)
    high = np.minimum(high, 1.0)
    return np.random.default_rng(seed).uniform(low, high, shape).astype(np.float32)


def game_figures(spec: TaskSpec, *, worlds: int, threads: int | None, seconds: float, seed: int = 0,
                 **kwargs) -> list[Figure]:
    """One world through ``parallel_env`` (the reference), then ``worlds`` worlds through ``vec_env``."""
    from joltgym_marl.envs import MULTI_AGENT_ENVS

    module = MULTI_AGENT_ENVS[spec.module_name]
    env = module.parallel_env(**kwargs)
    env.reset(seed=seed)
    agents = list(env.possible_agents)
    space = env.action_space(agents[0])
    actions = _random_actions(space.low, space.high, (256, len(agents), space.shape[0]), seed)

    def parallel_step(t: int) -> int:
        if not env.agents:
            env.reset()
        env.step({agent: actions[t % 256, i] for i, agent in enumerate(agents)})
        return len(agents)

    rate, steps, elapsed = timed(parallel_step, seconds)
    env.close()
    figures = [Figure(f"{spec.module_name}.parallel_env, 1 world, Python loop", rate, steps, elapsed, True)]

    venv = module.vec_env(worlds, num_threads=threads, **kwargs)
    venv.reset(seed=seed)
    batch = _random_actions(space.low, space.high, (16, venv.num_envs, space.shape[0]), seed)

    def vector_step(t: int) -> int:
        venv.step(batch[t % 16])
        return venv.num_envs

    rate, steps, elapsed = timed(vector_step, seconds)
    figures.append(Figure(f"{spec.module_name}.vec_env, {worlds} worlds on {venv.pool.num_threads} threads",
                          rate, steps, elapsed))
    venv.close()
    return figures


def single_agent_figures(spec: TaskSpec, *, worlds: int, threads: int | None, seconds: float, seed: int = 0,
                         reference: bool = True, **kwargs) -> list[Figure]:
    """Our Gymnasium env and vector env, then (``reference``) Gymnasium's own env of the task."""
    import gymnasium

    import joltgym_marl  # noqa: F401  (registers the joltgym_marl/ ids)
    from joltgym_marl.vector import NativeVectorEnv

    def loop(env) -> Callable[[int], int]:
        env.reset(seed=seed)
        space = env.action_space
        actions = _random_actions(space.low, space.high, (256, *space.shape), seed)

        def step(t: int) -> int:
            _, _, terminated, truncated, _ = env.step(actions[t % 256])
            if terminated or truncated:
                env.reset()
            return 1

        return step

    figures = []
    env = gymnasium.make(spec.env_id, **kwargs)
    rate, steps, elapsed = timed(loop(env), seconds)
    env.close()
    figures.append(Figure(f"gymnasium.make({spec.env_id!r}), 1 world, Python loop", rate, steps, elapsed))

    venv = NativeVectorEnv(spec.name, worlds, num_threads=threads, **kwargs)
    venv.reset(seed=seed)
    space = venv.single_action_space
    batch = _random_actions(space.low, space.high, (16, worlds, *space.shape), seed)

    def vector_step(t: int) -> int:
        venv.step(batch[t % 16])
        return worlds

    rate, steps, elapsed = timed(vector_step, seconds)
    figures.append(Figure(f"NativeVectorEnv({spec.name!r}), {worlds} worlds on {venv.pool.num_threads} "
                          f"threads", rate, steps, elapsed))
    venv.close()

    if reference and spec.reference_id:
        try:
            theirs = gymnasium.make(spec.reference_id, **kwargs)
        except Exception as error:  # noqa: BLE001  (Gymnasium's MuJoCo envs need the mujoco package)
            print(f"(Gymnasium's {spec.reference_id} could not be made, so there is no reference: {error})")
        else:
            rate, steps, elapsed = timed(loop(theirs), seconds)
            theirs.close()
            figures.append(Figure(f"Gymnasium's {spec.reference_id}, 1 world, Python loop (the reference)",
                                  rate, steps, elapsed, True))
    return figures


def check(task: str, *, threads: int | None = None, **kwargs) -> TaskSpec:
    """Raises what :func:`figures` would raise for these keyword arguments
    (an unknown task, a keyword or value the task refuses, a missing model
    file), having built one world of the task, before anything is measured."""
    spec = resolve(task)
    if spec.is_game:
        from joltgym_marl.envs import MULTI_AGENT_ENVS

        MULTI_AGENT_ENVS[spec.module_name].vec_env(1, num_threads=threads, **kwargs).close()
    else:
        from joltgym_marl.vector import NativeVectorEnv

        NativeVectorEnv(spec.name, 1, num_threads=threads, **kwargs).close()
    return spec


def figures(task: str, *, worlds: int = 64, threads: int | None = None, seconds: float = 1.0, seed: int = 0,
            **kwargs) -> list[Figure]:
    """The side-by-side figures of ``task`` (any of its names)."""
    spec = resolve(task)
    if spec.is_game:
        return game_figures(spec, worlds=worlds, threads=threads, seconds=seconds, seed=seed, **kwargs)
    return single_agent_figures(spec, worlds=worlds, threads=threads, seconds=seconds, seed=seed, **kwargs)


def table(spec: TaskSpec, rows: list[Figure]) -> str:
    """The figures as aligned text: rate, and the ratio to the reference row."""
    unit = "agent-steps/s" if spec.is_game else "env-steps/s"
    reference = next((r for r in rows if r.reference), None)
    width = max(len(r.label) for r in rows)
    lines = [f"{spec.name}: {unit}, random actions, step() calls only, about {rows[0].seconds:.1f} s each, "
             f"on {os.cpu_count()} logical cores"]
    for r in rows:
        ratio = f"{r.rate / reference.rate:6.1f}x" if reference is not None and reference.rate > 0 else ""
        lines.append(f"  {r.label:<{width}}  {r.rate:>12,.0f}  {ratio}")
    if reference is not None:
        lines.append(f"  (x: times the rate of {reference.label.split(',')[0]})")
    lines.append("Quick figures; the benchmark suite (python -m benchmarks.run, from a clone) measures each "
                 "against the physical limit.")
    return "\n".join(lines)
