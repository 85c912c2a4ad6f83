"""``sumo_v0``: see :mod:`joltgym_marl.envs.sumo`."""

from joltgym_marl.envs.sumo import OUTCOMES, Sumo, env, parallel_env, raw_env, vec_env

__all__ = ["OUTCOMES", "Sumo", "env", "parallel_env", "raw_env", "vec_env"]
