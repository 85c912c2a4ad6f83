"""Shared pieces of the Gymnasium parity / API tests."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest

import joltgym_marl
from joltgym_marl.cores import CORE_CLASSES
from joltgym_marl.registry import GAMES, SINGLE_AGENT_TASKS, TASKS, TaskSpec

# The Ray RLlib tests run in their own environment (.venv-rllib), driven by
# tests/test_rllib.py; the BenchMARL tests in theirs (.venv-benchmarl), driven
# by tests/test_benchmarl.py.
collect_ignore = ["rllib", "benchmarl"]


def pytest_configure(config):
    # A line on the terminal while a single test runs for minutes (see heartbeat.py).
    import heartbeat

    heartbeat.register(config)


def pytest_collection_modifyitems(session, config, items):
    # The files with slow tests (sanitizer builds, training runs) first, each
    # file's tests in their own order: pytest-xdist hands whole files to its
    # workers in this order, so the longest start first instead of running
    # alone at the end.
    slow_files = {item.path for item in items if item.get_closest_marker("slow")}
    items.sort(key=lambda item: item.path not in slow_files)


# Everything below is derived from the native task registry: a task is tested
# by being registered.

# Our registered single-agent ids (a newly registered env is picked up automatically).
OUR_IDS = [spec.env_id for spec in SINGLE_AGENT_TASKS]
# Native names of the single-agent tasks and of the games.
SINGLE_TASKS = [spec.name for spec in SINGLE_AGENT_TASKS]
GAME_NAMES = [spec.name for spec in GAMES]
# task -> its *Core class, its Gymnasium id, Gymnasium's env it reproduces.
CORES = dict(CORE_CLASSES)
GYM_IDS = {spec.name: spec.env_id for spec in SINGLE_AGENT_TASKS}
REFERENCE_IDS = {spec.name: spec.reference_id for spec in SINGLE_AGENT_TASKS}


def spec_of(task_or_id: str) -> TaskSpec:
    """The registry entry of a native task name, a Gymnasium id or a game module name."""
    for spec in TASKS.values():
        if task_or_id in (spec.name, spec.env_id, spec.reference_id):
            return spec
    raise KeyError(task_or_id)


def non_default_kwargs(spec: TaskSpec) -> dict:
    """A configuration away from every default that the task (and Gymnasium's
    env) accepts: each bool flipped, each reward/cost weight halved."""
    kwargs = {}
    for p in spec.params:
        if p.kind == "bool":
            kwargs[p.name] = not p.default
        elif p.kind == "float" and ("weight" in p.name or p.name.endswith("_reward")) and p.default:
            kwargs[p.name] = p.default * 0.5
    return kwargs

# check_env (and the passive checker) warn that an unbounded Box is "probably
# too low/high"; Gymnasium's own MuJoCo envs have the same unbounded spaces.
# The message starts with ANSI colour codes, hence the leading ".*".
IGNORE_INFINITE_BOX = pytest.mark.filterwarnings(
    "ignore:.*A Box .* space (minimum|maximum) value is -?infinity:UserWarning"
)
# check_env also recommends a symmetric, normalized action space; the robots
# whose actuators are not in [-1, 1] (InvertedPendulum: [-3, 3]) get the same
# advice from Gymnasium's own env.
IGNORE_ACTION_SCALE = pytest.mark.filterwarnings(
    "ignore:.*we recommend using a symmetric and normalized space:UserWarning"
)


def oracle_id(our_id: str) -> str:
    """Gymnasium's own env that ``our_id`` mirrors (``joltgym_marl/X-v0`` -> ``X-v5``), from the registry."""
    return spec_of(our_id).reference_id


def make_oracle(gym_id: str, **kwargs) -> gymnasium.Env:
    """Gymnasium's unwrapped MuJoCo env (no TimeLimit, no checker)."""
    return gymnasium.make(gym_id, disable_env_checker=True, **kwargs).unwrapped


def random_actions(space: gymnasium.spaces.Box, count: int, seed: int, batch: tuple = ()) -> np.ndarray:
    """``count`` float32 actions drawn uniformly from ``space``'s bounds (seeded)."""
    rng = np.random.default_rng(seed)
    return rng.uniform(space.low, space.high, size=(count, *batch, *space.shape)).astype(np.float32)


def float32_observations(env: gymnasium.Env) -> gymnasium.Env:
    """Gymnasium's env with its observations (and space) cast to float32, as
    ours are: wrappers and trainers then see the very same numbers (SB3, for
    one, stores observations in the space's dtype)."""
    box = env.observation_space
    space = gymnasium.spaces.Box(box.low.astype(np.float32), box.high.astype(np.float32), dtype=np.float32)
    return gymnasium.wrappers.TransformObservation(env, lambda o: o.astype(np.float32), space)


def main_thread_progress_during(call) -> tuple[float, float, int]:
    """How far this thread gets while another thread runs ``call()``: its
    counting rate alone (counts/s), the call's seconds, and the counts made
    meanwhile. A call that holds the GIL leaves this thread a switch interval
    or two; one that releases it, most of its length."""
    import threading
    import time

    counter = [0]
    stop = time.perf_counter() + 0.1
    while time.perf_counter() < stop:
        counter[0] += 1
    rate = counter[0] / 0.1
    counter = [0]
    done, started, result = threading.Event(), threading.Event(), {}

    def worker():
        started.set()
        before, t0 = counter[0], time.perf_counter()
        call()
        result["seconds"], result["progress"] = time.perf_counter() - t0, counter[0] - before
        done.set()

    thread = threading.Thread(target=worker)
    thread.start()
    started.wait()
    while not done.is_set():
        counter[0] += 1
    thread.join()
    return rate, result["seconds"], result["progress"]
