"""``cheetah_race_v0``: see :mod:`joltgym_marl.envs.cheetah_race`."""

from joltgym_marl.envs.cheetah_race import CheetahRace, env, parallel_env, raw_env, vec_env

__all__ = ["CheetahRace", "env", "parallel_env", "raw_env", "vec_env"]
