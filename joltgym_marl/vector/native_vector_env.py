"""A Gymnasium ``VectorEnv`` over the native ``WorldPool``.

All ``num_envs`` worlds step in C++ on ``num_threads`` native threads with the
GIL released; observations, rewards and flags come back in arrays allocated
once. Auto-reset follows Gymnasium 1.x: ``AutoresetMode.NEXT_STEP`` (default)
or ``AutoresetMode.SAME_STEP`` (the ended episode's observation and info in
``info["final_obs"]`` / ``info["final_info"]``).
"""

from __future__ import annotations

import inspect
from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from joltgym_marl import _signatures, rendering
from joltgym_marl._checks import as_seed
from joltgym_marl._lifecycle import Reconstructible
from joltgym_marl._native import core as _core
from joltgym_marl.registry import SINGLE_AGENT_TASKS, TASKS, ResetKind, TaskSpec
from joltgym_marl.vector._rows import flat_rows

_MODES = {AutoresetMode.NEXT_STEP: "next_step", AutoresetMode.SAME_STEP: "same_step"}
# WorldPool's and the C API's spelling, taken here too.
_NATIVE_NAMES = {name: mode for mode, name in _MODES.items()}


def _parse_mode(mode: Any) -> AutoresetMode:
    if isinstance(mode, str):
        try:
            mode = _NATIVE_NAMES.get(mode) or AutoresetMode(mode)
        except ValueError:
            pass
    if mode not in _MODES:
        raise ValueError(
            "autoreset_mode should be AutoresetMode.NEXT_STEP or AutoresetMode.SAME_STEP (or 'next_step', "
            f"'same_step'), got {mode!r}"
        )
    return mode


class NativeVectorEnv(Reconstructible, VectorEnv):
    """``num_envs`` native worlds of one single-agent task as a Gymnasium vector env.

    Args:
        task: native task name (``joltgym_marl.registry.SINGLE_AGENT_TASKS``).
        num_envs: number of worlds (>= 1).
        num_threads: native worker threads, counting the caller (default: the
            machine's cores, never more than ``num_envs``).
        max_episode_steps: truncation length (default 1000; ``None``: never).
        autoreset_mode: ``AutoresetMode.NEXT_STEP`` or ``AutoresetMode.SAME_STEP``.
        copy: return copies of the observation/reward/flag arrays (the default,
            as Gymnasium's ``SyncVectorEnv``); ``False`` returns the native
            buffers themselves, which the next step overwrites.
        batch_size: worlds returned by each ``recv()`` of asynchronous
            stepping (default ``num_envs``); see ``send``/``recv``.
        dtype: of observations and rewards: ``numpy.float64`` (the default,
            Gymnasium v5's: a ``SyncVectorEnv`` of the ``-v5`` envs gives the
            same arrays) or ``numpy.float32`` (half the bandwidth; values
            rounded once).
        **kwargs: the task's keyword arguments (those of the Gymnasium env).
    """

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["rgb_array", "human"],
                                          "autoreset_mode": AutoresetMode.NEXT_STEP}

    def __init__(
        self,
        task: str,
        num_envs: int,
        *,
        num_threads: int | None = None,
        max_episode_steps: int | None = 1000,
        autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
        copy: bool = True,
        batch_size: int | None = None,
        dtype: Any = np.float64,
        render_mode: str | None = None,
        render_world: int = 0,
        width: int = 480,
        height: int = 480,
        **kwargs: Any,
    ):
        # Set first: a constructor that raises leaves an object whose __del__
        # (VectorEnv's, which calls close()) still finds what close() reads.
        self._pool = None
        self._renderer = None
        rendering.check_render_mode(render_mode)
        rendering.require_display_for_human(render_mode)
        self._render_size = rendering.check_render_size(width, height)
        mode = _parse_mode(autoreset_mode)
        dtype = _parse_dtype(dtype)
        self._remember(task=task, num_envs=num_envs, num_threads=num_threads,
                       max_episode_steps=max_episode_steps, autoreset_mode=mode, copy=copy,
                       batch_size=batch_size, dtype=dtype.name, render_mode=render_mode,
                       render_world=render_world, width=width, height=height, **kwargs)
        pool = _core.WorldPool(
            task,
            num_envs,
            num_threads=num_threads,
            max_episode_steps=max_episode_steps,
            autoreset_mode=_MODES[mode],
            batch_size=batch_size,
            dtype=dtype,
            **kwargs,
        )
        try:
            self._build(pool, task, copy, render_mode, render_world, mode, dtype)
        except BaseException:
            pool.close()  # a rejected constructor leaves no pool (nor threads) behind
            raise

    def _build(self, pool, task: str, copy: bool, render_mode: str | None, render_world: Any,
               mode: AutoresetMode, dtype: np.dtype) -> None:
        if pool.num_agents != 1:
            raise ValueError(
                f"task {task!r} has {pool.num_agents} agents; NativeVectorEnv expects a single-agent task"
            )
        self.render_world = rendering.check_render_world(render_world, pool.num_envs)
        self._pool = pool
        self.num_envs = pool.num_envs
        self.copy = copy
        self.render_mode = render_mode
        self.autoreset_mode = mode  # as Gymnasium's SyncVectorEnv has it (TorchRL's GymWrapper reads it)
        self.metadata = {**type(self).metadata, "autoreset_mode": mode,
                         "render_modes": rendering.available_render_modes(),
                         "render_fps": int(np.round(1.0 / pool.dt))}
        self.single_observation_space = spaces.Box(-np.inf, np.inf, shape=(pool.obs_dim,), dtype=dtype)
        self.single_action_space = spaces.Box(pool.action_low, pool.action_high, dtype=np.float32)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)

        n = self.num_envs
        # Views of the native buffers without the agent axis; no copies.
        flat = flat_rows(pool)
        self._obs, self._rewards = flat.obs, flat.rewards
        self._terminations, self._truncations = flat.terminations, flat.truncations
        self._infos, self._final_obs, self._final_infos = flat.infos, flat.final_obs, flat.final_infos
        self._decoder = pool.info_decoder
        self._all = np.ones(n, dtype=bool)
        self.batch_size = pool.batch_size
        b = self.batch_size
        self._recv_obs = pool.recv_obs.reshape(b, pool.obs_dim)
        self._recv_rewards = pool.recv_rewards.reshape(b)
        self._recv_terminations = pool.recv_terminations.reshape(b)
        self._recv_truncations = pool.recv_truncations.reshape(b)
        self._recv_infos = pool.recv_infos.reshape(b, -1)
        self._recv_final_obs = pool.recv_final_obs.reshape(b, pool.obs_dim)
        self._recv_final_infos = pool.recv_final_infos.reshape(b, -1)
        self._batch_all = np.ones(b, dtype=bool)

    # -- Gymnasium API ---------------------------------------------------------

    def reset(self, *, seed: int | list[int | None] | None = None, options: dict[str, Any] | None = None):
        pool = self._open()
        mask = None if options is None else options.get("reset_mask")
        if isinstance(seed, (list, tuple, np.ndarray)):
            if len(seed) != self.num_envs:
                raise ValueError(f"seed should be an int, None or a list of {self.num_envs} seeds, got {len(seed)} seeds")
            seeds = [_check_seed(s) for s in seed]  # all checked before any world resets
            super().reset()
            for i, s in enumerate(seeds):
                pool.reset_one(i, seed=s)
            reset_rows = self._all
        elif mask is not None:
            mask = np.asarray(mask)
            if mask.dtype != np.bool_ or mask.shape != (self.num_envs,):
                raise ValueError(
                    f"options['reset_mask'] should be a bool array of shape ({self.num_envs},), "
                    f"got {mask.dtype} {mask.shape}"
                )
            super().reset(seed=seed)
            for i in np.flatnonzero(mask):
                pool.reset_one(int(i), seed=None if seed is None else int(seed) + int(i))
            reset_rows = mask
        else:
            super().reset(seed=seed)
            pool.reset_all(seed=seed)
            reset_rows = self._all
        infos = self._decoder.columns(self._infos, reset_rows)
        return self._out(self._obs), infos

    def step(self, actions):
        pool = self._open()
        pool.step_all(actions)
        kind = pool.reset_kind
        if not kind.any():  # the common case: every world stepped, none ended
            infos = self._decoder.columns(self._infos, self._all, self._all)
        else:
            infos = self._decoder.columns(self._infos, self._all, kind == ResetKind.STEPPED)
            ended = kind == ResetKind.AUTORESET
            if ended.any():
                final_obs = np.full(self.num_envs, None, dtype=object)
                for i in np.flatnonzero(ended):
                    final_obs[i] = self._final_obs[i].copy()
                infos["final_obs"] = final_obs
                infos["_final_obs"] = ended
                infos["final_info"] = self._decoder.columns(self._final_infos, ended, ended)
                infos["_final_info"] = ended
        if pool.unstable.any():
            infos["physics_unstable"] = pool.unstable.copy()
            infos["_physics_unstable"] = pool.unstable.copy()
        return (
            self._out(self._obs),
            self._out(self._rewards),
            self._out(self._terminations),
            self._out(self._truncations),
            infos,
        )

    # -- asynchronous stepping (EnvPool's send/recv) -------------------------------

    def async_reset(self, *, seed: int | None = None) -> None:
        """Resets every world (world i seeded ``seed + i``) and puts them all in
        flight: the following ``recv()`` calls return their first observations,
        ``batch_size`` worlds at a time, in order."""
        pool = self._open()
        super().reset(seed=seed)
        pool.async_reset(seed=seed)

    def send(self, actions, env_id) -> None:
        """Queues one step of each world in ``env_id`` (actions
        ``[len(env_id), act_dim]``, row k for world ``env_id[k]``) and returns
        at once: the native threads step them while the caller runs (its
        policy, say). A world is in flight until a ``recv()`` returns it."""
        self._open().send(actions, env_id)

    def recv(self):
        """The first ``batch_size`` worlds in flight to finish, as
        ``(obs, rewards, terminations, truncations, infos)`` with rows in the
        order of ``infos["env_id"]``. Auto-reset works as in ``step``: each
        world's trajectory equals the one ``step`` gives it."""
        pool = self._open()
        ids = pool.recv()[0]
        kind = pool.recv_reset_kind
        if not kind.any():
            infos = self._decoder.columns(self._recv_infos, self._batch_all, self._batch_all)
        else:
            infos = self._decoder.columns(self._recv_infos, self._batch_all, kind == ResetKind.STEPPED)
            ended = kind == ResetKind.AUTORESET
            if ended.any():
                final_obs = np.full(self.batch_size, None, dtype=object)
                for k in np.flatnonzero(ended):
                    final_obs[k] = self._recv_final_obs[k].copy()
                infos["final_obs"] = final_obs
                infos["_final_obs"] = ended
                infos["final_info"] = self._decoder.columns(self._recv_final_infos, ended, ended)
                infos["_final_info"] = ended
        if pool.recv_unstable.any():
            infos["physics_unstable"] = pool.recv_unstable.copy()
            infos["_physics_unstable"] = pool.recv_unstable.copy()
        infos["env_id"] = ids.copy()
        return (
            self._out(self._recv_obs),
            self._out(self._recv_rewards),
            self._out(self._recv_terminations),
            self._out(self._recv_truncations),
            infos,
        )

    # -- SyncVectorEnv's call / get_attr / set_attr -------------------------------

    def call(self, name: str, *args: Any, **kwargs: Any) -> tuple[Any, ...]:
        """Per world, ``name`` of the task's Gymnasium env in that world's state,
        called with ``args`` and ``kwargs`` if callable, as ``SyncVectorEnv.call``
        (a tuple, world order). Each world has a Gymnasium env of the task (the
        same keyword arguments; made on first use) whose ``unwrapped.data``
        receives the world's mjData before the call; a call that changes its
        ``qpos``/``qvel`` (``set_state``) writes them back into the world."""
        pool = self._open()
        results = []
        for i, env in enumerate(self._world_envs()):
            pool.copy_data_into(i, env.unwrapped.data)
            attribute = env.get_wrapper_attr(name)
            if callable(attribute):
                data = env.unwrapped.data
                qpos, qvel = data.qpos.copy(), data.qvel.copy()
                results.append(attribute(*args, **kwargs))
                if not (np.array_equal(qpos, data.qpos) and np.array_equal(qvel, data.qvel)):
                    pool.set_state(i, data.qpos.copy(), data.qvel.copy())
            else:
                results.append(attribute)
        return tuple(results)

    def get_attr(self, name: str) -> tuple[Any, ...]:
        """Per world, the attribute ``name`` of its Gymnasium env (see :meth:`call`)."""
        return self.call(name)

    def set_attr(self, name: str, values: list[Any] | tuple[Any, ...] | Any) -> None:
        """Sets ``name`` on each world's Gymnasium env (see :meth:`call`), as
        ``SyncVectorEnv.set_attr``: ``values`` one per world (a list or tuple)
        or one for all; :meth:`get_attr` returns them. The native step reads
        the task's keyword arguments as they were at construction: setting a
        reward weight here does not change the worlds' rewards."""
        self._open()
        if not isinstance(values, (list, tuple)):
            values = [values for _ in range(self.num_envs)]
        if len(values) != self.num_envs:
            raise ValueError(
                "Values must be a list or tuple with length equal to the number of environments. "
                f"Got `{len(values)}` values for {self.num_envs} environments."
            )
        for env, value in zip(self._world_envs(), values):
            env.set_wrapper_attr(name, value)

    _VECTOR_ONLY = ("task", "num_envs", "num_threads", "max_episode_steps", "autoreset_mode", "copy",
                    "batch_size", "render_world")

    def _world_envs(self) -> list:
        """One Gymnasium env of the task per world, made on first use."""
        envs = getattr(self, "_world_env_list", None)
        if envs is None:
            import gymnasium

            kwargs = {k: v for k, v in self._init_kwargs.items() if k not in self._VECTOR_ONLY}
            limit = self._init_kwargs["max_episode_steps"]
            env_id = TASKS[self._pool.task].env_id
            envs = self._world_env_list = [
                gymnasium.make(env_id, disable_env_checker=True,
                               **({"max_episode_steps": limit} if limit is not None else {}), **kwargs)
                for _ in range(self.num_envs)]
        return envs

    def render(self):
        """A frame of world ``render_world`` (``render_mode="rgb_array"``), or a
        viewer update (``"human"``). Safe while another thread steps the pool:
        the state is copied under the pool's lock."""
        pool = self._open()
        if self.render_mode is None:
            rendering.warn_no_render_mode(f'gymnasium.make_vec("{TASKS[pool.task].env_id}", {self.num_envs}, '
                                          f'vectorization_mode="vector_entry_point", render_mode="rgb_array")')
            return None
        renderer = rendering.lazy_renderer(self, lambda: rendering.renderer_for(pool, *self._render_size))
        qpos, qvel = pool.get_state(self.render_world)
        if self.render_mode == "human":
            renderer.show(qpos, qvel)
            return None
        return renderer.render(qpos, qvel)

    def close_extras(self, **kwargs: Any) -> None:
        for env in getattr(self, "_world_env_list", None) or ():
            env.close()
        self._world_env_list = None
        if self._renderer is not None:
            self._renderer.close()
            self._renderer = None
        if self._pool is not None:
            self._pool.close()

    # -- helpers -------------------------------------------------------------------

    @property
    def pool(self):
        """The native ``WorldPool`` behind this env."""
        return self._pool

    def _open(self):
        self._closed = self._pool is None or self._pool.closed
        self._check_open()
        return self._pool

    def _out(self, array: np.ndarray) -> np.ndarray:
        return array.copy() if self.copy else array

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._init_kwargs['task']!r}, num_envs={self.num_envs})"


def _parse_dtype(dtype: Any) -> np.dtype:
    try:
        parsed = np.dtype(dtype)
    except TypeError:
        parsed = None
    if parsed not in (np.dtype(np.float64), np.dtype(np.float32)):
        raise ValueError(f"dtype should be numpy.float64 or numpy.float32, got {dtype!r}")
    return parsed


def _check_seed(seed: Any) -> int | None:
    return as_seed(seed, "each seed")


def _vector_class(spec: TaskSpec) -> type:
    task, limit = spec.name, spec.max_episode_steps

    def __init__(self, num_envs: int = 1, *, max_episode_steps: int | None = limit, **kwargs: Any):
        NativeVectorEnv.__init__(self, task, num_envs, max_episode_steps=max_episode_steps, **kwargs)

    def __reduce__(self):
        kwargs = dict(self._init_kwargs)
        del kwargs["task"]
        return (_restore, (type(self), kwargs))

    cls = type(spec.vector_class, (NativeVectorEnv,), {
        "__init__": __init__, "__reduce__": __reduce__, "__module__": __name__,
        "__qualname__": spec.vector_class})
    num_envs = inspect.Parameter("num_envs", inspect.Parameter.POSITIONAL_OR_KEYWORD, default=1)
    return _signatures.declare(
        cls, spec, _signatures.VECTOR,
        f"``num_envs`` native worlds of the {task!r} task as a Gymnasium ``VectorEnv`` "
        f"(``gymnasium.make_vec({spec.env_id!r}, num_envs)``'s vector entry point).",
        positional=[num_envs], positional_docs=[("num_envs", "number of worlds (an int >= 1, default 1)")])


def _restore(cls, kwargs):
    return cls(**kwargs)


VECTOR_CLASSES: dict[str, type] = {spec.name: _vector_class(spec) for spec in SINGLE_AGENT_TASKS}
globals().update({cls.__name__: cls for cls in VECTOR_CLASSES.values()})
