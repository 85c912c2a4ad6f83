"""Shared pieces of the Gymnasium parity / API tests."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest

import joltgym_marl

# Our registered single-agent ids (a newly registered env is picked up automatically).
OUR_IDS = [env_id for env_id, *_ in joltgym_marl.SINGLE_AGENT_ENVS]

# check_env (and the passive checker) warn that an unbounded Box is "probably
# too low/high"; Gymnasium's own MuJoCo envs have the same unbounded spaces.
# The message starts with ANSI colour codes, hence the leading ".*".
IGNORE_INFINITE_BOX = pytest.mark.filterwarnings(
    "ignore:.*A Box .* space (minimum|maximum) value is -?infinity:UserWarning"
)


def oracle_id(our_id: str) -> str:
    """Gymnasium's own env that ``our_id`` mirrors: ``joltgym_marl/X-v0`` -> ``X-v5``."""
    name = our_id.split("/", 1)[1]
    return name.rsplit("-v", 1)[0] + "-v5"


def make_oracle(gym_id: str, **kwargs) -> gymnasium.Env:
    """Gymnasium's unwrapped MuJoCo env (no TimeLimit, no checker)."""
    return gymnasium.make(gym_id, disable_env_checker=True, **kwargs).unwrapped


def random_actions(space: gymnasium.spaces.Box, count: int, seed: int, batch: tuple = ()) -> np.ndarray:
    """``count`` float32 actions drawn uniformly from ``space``'s bounds (seeded)."""
    rng = np.random.default_rng(seed)
    return rng.uniform(space.low, space.high, size=(count, *batch, *space.shape)).astype(np.float32)
