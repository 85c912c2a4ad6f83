"""A Stable-Baselines3 ``VecEnv`` over the native ``WorldPool``, for every
registered single-agent task.

``make_sb3_vec_env("joltgym_marl/HalfCheetah-v0", 8)`` behaves as SB3's
``DummyVecEnv`` of eight ``gymnasium.make("HalfCheetah-v5")`` envs (float64
observations, float32 rewards, as DummyVecEnv buffers them; ``dtype=np.float32``
for float32 observations), with the worlds stepped natively:

* ``seed(s)`` (which ``PPO(..., seed=s)`` calls) seeds world ``i`` with
  ``s + i`` at the next ``reset()``, as ``DummyVecEnv`` seeds its envs; the
  native worlds draw Gymnasium's reset noise, so a seeded SB3 run on it equals
  one on ``DummyVecEnv`` (``tests/test_sb3_vec_env.py``);
* same-step auto-reset: an ended world's info holds ``terminal_observation``,
  every info ``TimeLimit.truncated`` (truncated and not terminated), the
  ended step's reward terms, and ``reset_infos[i]`` the new episode's info;
* ``get_attr``/``set_attr`` act on the env itself (every world of a pool has
  the same attributes), ``env_method`` calls the per-world methods
  ``get_state``, ``set_state`` and ``render`` world by world, and
  ``env_is_wrapped`` is ``False`` (the worlds are not Gymnasium envs);
* ``render_mode="rgb_array"``: ``get_images()`` renders each world and
  ``render()`` tiles them, as for ``DummyVecEnv``.

SB3 is an optional dependency, so the class is built on first use.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

from joltgym_marl import rendering
from joltgym_marl._checks import as_indices, as_int, as_seed
from joltgym_marl._lifecycle import restore
from joltgym_marl._native import core as _core
from joltgym_marl.registry import SINGLE_AGENT_TASKS, ResetKind, TaskSpec
from joltgym_marl.vector._rows import flat_rows

# Methods that ``env_method`` calls once per addressed world, with its index.
_WORLD_METHODS = ("get_state", "set_state", "render")


def task_spec(env: str) -> TaskSpec:
    """The single-agent task named by its Gymnasium id or its native name."""
    for spec in SINGLE_AGENT_TASKS:
        if env in (spec.env_id, spec.name):
            return spec
    known = ", ".join(repr(s.env_id) for s in SINGLE_AGENT_TASKS)
    raise ValueError(f"env should be a single-agent task's Gymnasium id or native name ({known}), got {env!r}")


_CLASS = None


def _sb3_class() -> type:
    global _CLASS
    if _CLASS is not None:
        return _CLASS
    from stable_baselines3.common.vec_env.base_vec_env import VecEnv

    class SB3VecEnv(VecEnv):
        """``num_envs`` native worlds of one single-agent task as an SB3 ``VecEnv``.

        Args:
            env: the task's Gymnasium id (``"joltgym_marl/Hopper-v0"``) or native name (``"hopper"``).
            num_envs: number of worlds.
            num_threads: native threads (default: the machine's cores, at most ``num_envs``).
            max_episode_steps: truncation length (default Gymnasium's for the task; ``None``: never).
            render_mode: ``None`` or ``"rgb_array"`` (``get_images`` renders every world).
            width, height: frame size.
            **kwargs: the task's keyword arguments (those of its Gymnasium env).
        """

        def __init__(self, env: str, num_envs: int, *, num_threads: int | None = None,
                     max_episode_steps: int | None | str = "default", render_mode: str | None = None,
                     width: int = 480, height: int = 480, dtype: Any = np.float64, **kwargs: Any):
            spec = task_spec(env)
            if render_mode not in (None, "rgb_array"):
                raise ValueError(f"render_mode should be None or 'rgb_array', got {render_mode!r}")
            if isinstance(max_episode_steps, str):
                if max_episode_steps != "default":
                    raise ValueError(f"max_episode_steps should be an int, None or 'default', "
                                     f"got {max_episode_steps!r}")
                max_episode_steps = spec.max_episode_steps
            elif max_episode_steps is not None:
                try:
                    max_episode_steps = as_int(max_episode_steps, "max_episode_steps", 1)
                except (TypeError, ValueError):
                    raise ValueError(f"max_episode_steps should be an int >= 1 or None (never truncate), "
                                     f"got {max_episode_steps!r}") from None
            width, height = rendering.check_render_size(width, height)
            dtype = np.dtype(dtype)
            self._args = dict(env=env, num_envs=num_envs, num_threads=num_threads,
                              max_episode_steps=max_episode_steps, render_mode=render_mode,
                              width=width, height=height, dtype=dtype.name, **kwargs)
            self.task = spec
            # Gymnasium's spec of the task (VecMonitor reads its id), as a DummyVecEnv's envs have.
            self.spec = gymnasium.registry.get(spec.env_id)
            self._pool = _core.WorldPool(spec.name, num_envs, num_threads=num_threads,
                                         max_episode_steps=max_episode_steps, autoreset_mode="same_step",
                                         dtype=dtype, **kwargs)
            pool = self._pool
            flat = flat_rows(pool)
            self._obs, self._rewards = flat.obs, flat.rewards
            self._terminations, self._truncations = flat.terminations, flat.truncations
            self._infos, self._final_obs, self._final_infos = flat.infos, flat.final_obs, flat.final_infos
            self._decoder = pool.info_decoder
            self._actions: np.ndarray | None = None
            self._renderer = None
            self._render_size = (width, height)
            self.render_mode = render_mode  # read by VecEnv.__init__ through get_attr
            VecEnv.__init__(self, pool.num_envs,
                            spaces.Box(-np.inf, np.inf, shape=(pool.obs_dim,), dtype=dtype),
                            spaces.Box(pool.action_low, pool.action_high, dtype=np.float32))

        # -- the VecEnv API ------------------------------------------------------

        def reset(self):
            pool = self._open()
            seeds = self._seeds
            if all(s is None for s in seeds):
                pool.reset_all()
            elif seeds[0] is not None and all(s == seeds[0] + i for i, s in enumerate(seeds)):
                pool.reset_all(seed=seeds[0])  # world i gets seeds[0] + i
            else:
                for i, s in enumerate(seeds):
                    pool.reset_one(i, seed=s)
            # Seeds and options are used once, as by DummyVecEnv. Options are
            # ignored, as Gymnasium's MuJoCo envs ignore them.
            self._reset_seeds()
            self._reset_options()
            self._actions = None
            self.reset_infos = self._decoder.rows(self._infos, reset=True)
            return self._obs.copy()

        def step_async(self, actions: np.ndarray) -> None:
            self._open()
            self._actions = actions

        def step_wait(self):
            pool = self._open()
            if self._actions is None:
                raise _core.StateError("step_wait() was called without step_async(actions) before it")
            actions, self._actions = self._actions, None
            pool.step_all(actions)
            terminated, truncated = self._terminations, self._truncations
            dones = terminated | truncated
            infos = self._decoder.rows(self._infos)
            time_limit = truncated & ~terminated
            for i, info in enumerate(infos):
                info["TimeLimit.truncated"] = bool(time_limit[i])
            ended = np.flatnonzero(pool.reset_kind == ResetKind.AUTORESET)
            for i in ended:
                # The row now holds the new episode's reset info; the ended
                # step's info is in final_infos.
                self.reset_infos[i] = self._decoder.row(self._infos[i], reset=True)
                info = self._decoder.row(self._final_infos[i])
                info["TimeLimit.truncated"] = bool(time_limit[i])
                info["terminal_observation"] = self._final_obs[i].copy()
                infos[i] = info
            for i in np.flatnonzero(pool.unstable):
                infos[i]["physics_unstable"] = True
            return self._obs.copy(), self._rewards.astype(np.float32), dones, infos

        def seed(self, seed: int | None = None) -> Sequence[int | None]:
            try:
                seed = as_seed(seed)
            except (TypeError, ValueError):
                raise ValueError(f"seed should be a non-negative int or None, got {seed!r}") from None
            return super().seed(seed)

        def close(self) -> None:
            if self._renderer is not None:
                self._renderer.close()
                self._renderer = None
            self._pool.close()

        def get_attr(self, attr_name: str, indices=None) -> list[Any]:
            return [getattr(self, attr_name)] * len(self._indices(indices))

        def set_attr(self, attr_name: str, value: Any, indices=None) -> None:
            if len(self._indices(indices)) != self.num_envs:
                raise ValueError(f"set_attr({attr_name!r}) should address all {self.num_envs} worlds "
                                 f"(their attributes are shared), got indices {indices!r}")
            setattr(self, attr_name, value)

        def env_method(self, method_name: str, *method_args, indices=None, **method_kwargs) -> list[Any]:
            if method_name not in _WORLD_METHODS:
                raise AttributeError(f"env_method calls a per-world method, one of {list(_WORLD_METHODS)}, "
                                     f"got {method_name!r}")
            method = getattr(self, "_world_" + method_name)
            return [method(i, *method_args, **method_kwargs) for i in self._indices(indices)]

        def env_is_wrapped(self, wrapper_class, indices=None) -> list[bool]:
            return [False] * len(self._indices(indices))

        def get_images(self) -> Sequence[np.ndarray | None]:
            if self.render_mode != "rgb_array":
                return [None] * self.num_envs
            return [self._world_render(i) for i in range(self.num_envs)]

        # -- per world -----------------------------------------------------------

        def _world_get_state(self, index: int):
            return self._open().get_state(index)

        def _world_set_state(self, index: int, qpos, qvel) -> None:
            self._open().set_state(index, qpos, qvel)

        def _world_render(self, index: int):
            pool = self._open()
            if self.render_mode is None:
                return None
            renderer = rendering.lazy_renderer(self, lambda: rendering.renderer_for(pool, *self._render_size))
            return renderer.render(*pool.get_state(index))

        # -- helpers -------------------------------------------------------------

        @property
        def pool(self):
            """The native ``WorldPool`` behind this env."""
            return self._pool

        def _open(self):
            if self._pool.closed:
                raise _core.StateError(f"{type(self).__name__} is closed; expected an open env (create a new one)")
            return self._pool

        def _indices(self, indices) -> list[int]:
            return as_indices(indices, self.num_envs)

        def __reduce__(self):
            # A class made on first use: pickled through the factory, not by reference.
            return (restore, (make_sb3_vec_env, self._args))

        def __repr__(self) -> str:
            return f"SB3VecEnv({self.task.env_id!r}, num_envs={self.num_envs})"

    _CLASS = SB3VecEnv
    return SB3VecEnv


def make_sb3_vec_env(env: str, num_envs: int, **kwargs: Any):
    """An SB3 ``VecEnv`` of ``num_envs`` native worlds of a single-agent task:
    the native stand-in for ``DummyVecEnv([lambda: gymnasium.make(id)] * num_envs)``.
    See ``SB3VecEnv`` (this module's docstring) for the arguments."""
    return _sb3_class()(env, num_envs, **kwargs)
