"""MaMuJoCo, as Farama's ``gymnasium_robotics.mamujoco_v1``, natively batched.

``parallel_env(scenario, agent_conf, agent_obsk=1, ...)`` is a PettingZoo
``ParallelEnv`` with Farama's signature, agents, spaces, observations,
rewards and ``state()``; ``env(...)`` its AEC form; ``vec_env(scenario,
agent_conf, num_envs, ...)`` runs ``num_envs`` worlds on native threads.
See docs/guides/mamujoco.md.
"""

from __future__ import annotations

from typing import Any

from pettingzoo.utils.conversions import parallel_to_aec_wrapper
from pettingzoo.utils.wrappers import OrderEnforcingWrapper

from joltgym_marl.mamujoco.env import AGENT_OBSERVATIONS, LAYOUTS, MaMuJoCoParallelEnv, MaMuJoCoVecEnv
from joltgym_marl.mamujoco.factorization import SCENARIOS

parallel_env = MaMuJoCoParallelEnv
raw_parallel_env = MaMuJoCoParallelEnv


def raw_env(*args: Any, **kwargs: Any) -> parallel_to_aec_wrapper:
    """The AEC form (PettingZoo's conversion of :func:`parallel_env`)."""
    return parallel_to_aec_wrapper(MaMuJoCoParallelEnv(*args, **kwargs))


def env(*args: Any, **kwargs: Any) -> OrderEnforcingWrapper:
    """The AEC form with PettingZoo's order-enforcing wrapper (as Farama's ``env``)."""
    return OrderEnforcingWrapper(raw_env(*args, **kwargs))


def vec_env(scenario: str, agent_conf: str | None, num_envs: int, num_threads: int | None = None,
            batch_size: int | None = None, **options: Any) -> MaMuJoCoVecEnv:
    """``num_envs`` MaMuJoCo worlds on the WorldPool: world i is bit-identical to
    ``parallel_env`` seeded ``seed + i``, for any thread count and batch size.
    ``options``: parallel_env's (agent_obsk, agent_factorization, categories,
    agent_observation, robot keyword arguments) and ``layout="padded"``."""
    return MaMuJoCoVecEnv(scenario, agent_conf, num_envs, num_threads, batch_size, **options)


__all__ = ["AGENT_OBSERVATIONS", "LAYOUTS", "SCENARIOS", "env", "parallel_env", "raw_env",
           "raw_parallel_env", "vec_env"]
