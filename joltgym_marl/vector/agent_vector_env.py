"""Every agent of every shared world as one row: a native stand-in for SuperSuit.

``AgentVectorEnv`` offers what ``supersuit.concat_vec_envs_v1(
supersuit.pettingzoo_env_to_vec_env_v1(parallel_env), num_envs, ...)`` offers,
with the worlds stepped natively by a ``WorldPool``:

* ``num_envs = worlds * agents`` rows, world-major (row ``w * agents + a`` is
  agent ``a`` of world ``w``), observation and action spaces of one agent;
* ``reset(seed)`` seeds world ``w`` with ``seed + w`` (as SuperSuit seeds its
  sub-envs), so both pipelines produce the same observations;
* same-step auto-reset: a world whose episode ended is reset in the same
  call; each of its rows' info holds ``terminal_observation`` (and
  ``TimeLimit.truncated`` for SB3's bootstrapping), merged with the reset info.

``base_class="gymnasium"`` gives a ``gymnasium.vector.VectorEnv`` returning
``(obs, rewards, terminations, truncations, infos)`` with ``infos`` a list of
per-row dicts; ``base_class="stable_baselines3"`` gives an SB3 ``VecEnv``.
No Python loop runs over worlds or agents on the step path: the per-row info
dicts are built when they are read.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv

from joltgym_marl import rendering
from joltgym_marl._checks import as_index, as_indices, as_int, as_seed
from joltgym_marl._lifecycle import Reconstructible, restore
from joltgym_marl._native import core as _core
from joltgym_marl.envs.shared_world import step_only_columns
from joltgym_marl.registry import TASKS, ResetKind
from joltgym_marl.vector._rows import flat_rows


class AgentInfos(Sequence):
    """The per-row info dicts of one step, materialized on access."""

    def __init__(self, decoder, rows: np.ndarray, agents: int, *, reset: bool | np.ndarray = False,
                 ended: np.ndarray | None = None, final_obs: np.ndarray | None = None,
                 truncated: np.ndarray | None = None, terminated: np.ndarray | None = None,
                 unstable: np.ndarray | None = None, env_ids: np.ndarray | None = None):
        self._decoder = decoder  # the task's InfoDecoder
        self._rows = rows  # [num_rows, info_width], a snapshot
        self._reset = reset if isinstance(reset, bool) else np.array(reset, dtype=bool)  # or per world
        self._agents = agents
        self._ended = ended  # [worlds] or None
        self._final_obs = final_obs  # [num_rows, obs_dim] snapshot or None
        self._truncated = truncated
        self._terminated = terminated
        self._unstable = unstable
        # After recv(): the world of each batch row block ([batch_size]); the
        # rows' dicts hold it as "env_id".
        self.env_ids = env_ids
        self._cache: dict[int, dict[str, Any]] = {}

    def __len__(self) -> int:
        return len(self._rows)

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if isinstance(index, (bool, np.bool_)):
            raise TypeError(f"info indices should be integers or slices, not {type(index).__name__}")
        try:
            index = operator.index(index)
        except TypeError:
            raise TypeError(f"info indices should be integers or slices, not {type(index).__name__}") from None
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(f"info index should be in [0, {len(self)}), got {index}")
        info = self._cache.get(index)
        if info is None:
            info = self._build(index)
            self._cache[index] = info
        return info

    def _build(self, index: int) -> dict[str, Any]:
        world = index // self._agents
        reset = self._reset if isinstance(self._reset, bool) else bool(self._reset[world])
        row = self._rows[index]
        ended = self._ended is not None and self._ended[world]
        # A reset row has every key a step gives, the step-only ones 0 (as the
        # game's parallel_env); so has an ended world's row: SuperSuit merges the
        # new episode's reset infos over the terminal step's.
        if reset or ended:
            row = row.copy()
            row[step_only_columns(self._decoder)] = 0.0
        info = self._decoder.row(row, reset=False)
        if self.env_ids is not None:
            info["env_id"] = int(self.env_ids[world])
        if ended:
            info["terminal_observation"] = self._final_obs[index]
            info["TimeLimit.truncated"] = bool(self._truncated[index] and not self._terminated[index])
        if self._unstable is not None and self._unstable[world]:
            info["physics_unstable"] = True
        return info

    def __repr__(self) -> str:
        return f"AgentInfos({list(self)!r})"


class _AgentRows:
    """The pool and the flat row views shared by both base classes."""

    def _setup(self, game: str, num_worlds: int, num_threads: int | None, max_cycles: int | None,
               copy: bool, kwargs: dict[str, Any]) -> int:
        # Same rule as the PettingZoo env's max_cycles (the pool itself would
        # take 0 as "no limit").
        if max_cycles is not None:
            try:
                max_cycles = as_int(max_cycles, "max_cycles", 1)
            except TypeError:
                raise TypeError(f"max_cycles should be an int or None, got {type(max_cycles).__name__} "
                                f"{max_cycles!r}") from None
        self._pool = _core.WorldPool(game, num_worlds, num_threads=num_threads,
                                     max_episode_steps=max_cycles, autoreset_mode="same_step",
                                     **kwargs)
        pool = self._pool
        self.num_worlds = pool.num_envs
        self.num_agents = pool.num_agents
        rows = self.num_worlds * self.num_agents
        self._copy = copy
        self._decoder = pool.info_decoder
        flat = flat_rows(pool)
        self._obs, self._rewards = flat.obs, flat.rewards
        self._terminations, self._truncations = flat.terminations, flat.truncations
        self._infos, self._final_obs = flat.infos, flat.final_obs
        self._action_shape = (self.num_worlds, self.num_agents, pool.act_dim)
        prefix = pool.agent_prefix or TASKS[pool.task].agent_prefix
        self.agent_names = list(pool.agent_names) or [f"{prefix}_{i}" for i in range(self.num_agents)]
        self.agent_observation_space = spaces.Box(-np.inf, np.inf, shape=(pool.obs_dim,), dtype=np.float32)
        self.agent_action_space = spaces.Box(pool.action_low, pool.action_high, dtype=np.float32)
        return rows

    def _check_open(self):
        if self._pool is None or self._pool.closed:
            raise _core.StateError(f"{type(self).__name__} is closed; expected an open env (create a new one)")
        return self._pool

    def _reset_rows(self, seed: int | None):
        pool = self._check_open()
        pool.reset_all(seed=seed)
        infos = AgentInfos(self._decoder, self._infos.copy(), self.num_agents, reset=True)
        return self._obs.copy() if self._copy else self._obs, infos

    def _async_reset_rows(self, seed: int | None) -> None:
        self._check_open().async_reset(seed=seed)

    def _send_rows(self, actions, world_ids) -> None:
        pool = self._check_open()
        array = np.asarray(actions)
        count = len(np.asarray(world_ids).reshape(-1))
        rows, act_dim = count * self.num_agents, self._action_shape[2]
        if array.shape != (rows, act_dim):
            raise ValueError(f"actions should have shape ({rows}, {act_dim}) (num_agents={self.num_agents} "
                             f"rows per world of env_id), got {array.shape}")
        pool.send(array.reshape(count, self.num_agents, act_dim), world_ids)

    def _recv_rows(self):
        pool = self._check_open()
        ids = pool.recv()[0].copy()
        b, agents = pool.batch_size, self.num_agents
        rows = b * agents
        obs = pool.recv_obs.reshape(rows, -1)
        rewards = pool.recv_rewards.reshape(rows)
        terminations = pool.recv_terminations.reshape(rows)
        truncations = pool.recv_truncations.reshape(rows)
        ended = pool.recv_reset_kind == ResetKind.AUTORESET
        any_ended = bool(ended.any())
        infos = AgentInfos(
            self._decoder, pool.recv_infos.reshape(rows, -1).copy(), agents,
            # Per world: a batch may mix worlds reset (async_reset) and stepped.
            reset=pool.recv_reset_kind == ResetKind.RESET,
            ended=ended if any_ended else None,
            final_obs=pool.recv_final_obs.reshape(rows, -1).copy() if any_ended else None,
            truncated=truncations.copy(), terminated=terminations.copy(),
            unstable=pool.recv_unstable.copy() if pool.recv_unstable.any() else None,
            env_ids=ids,
        )
        if self._copy:
            return obs.copy(), rewards.copy(), terminations.copy(), truncations.copy(), infos
        return obs, rewards, terminations, truncations, infos

    def _step_rows(self, actions):
        pool = self._check_open()
        array = np.asarray(actions)
        rows = self.num_worlds * self.num_agents
        if array.shape != (rows, self._action_shape[2]):
            raise ValueError(f"actions should have shape ({rows}, {self._action_shape[2]}), got {array.shape}")
        pool.step_all(array.reshape(self._action_shape))
        ended = pool.reset_kind == ResetKind.AUTORESET
        any_ended = bool(ended.any())
        infos = AgentInfos(
            self._decoder, self._infos.copy(), self.num_agents,
            ended=ended if any_ended else None,
            final_obs=self._final_obs.copy() if any_ended else None,
            truncated=self._truncations.copy(), terminated=self._terminations.copy(),
            unstable=pool.unstable.copy() if pool.unstable.any() else None,
        )
        if self._copy:
            return (self._obs.copy(), self._rewards.copy(), self._terminations.copy(),
                    self._truncations.copy(), infos)
        return self._obs, self._rewards, self._terminations, self._truncations, infos

    def role_rows(self, agent: str) -> np.ndarray:
        """The rows of ``agent`` (a name of ``agent_names``: ``"walker_0"``, ``"ant_1"``) in every
        world, ascending: row ``w * num_agents + a``. A learner on one side of an asymmetric game
        and a frozen opponent on the other each read and act on their own block of rows."""
        if agent not in self.agent_names:
            raise ValueError(f"agent should be one of {self.agent_names}, got {agent!r}")
        index = self.agent_names.index(agent)
        return np.arange(index, self.num_worlds * self.num_agents, self.num_agents)

    @property
    def pool(self):
        """The native ``WorldPool`` behind this env."""
        return self._pool


class AgentVectorEnv(_AgentRows, Reconstructible, VectorEnv):
    """Agents of ``num_worlds`` native shared worlds as a flat Gymnasium vector env.

    Args:
        game: native game name (``"cheetah_race"``).
        num_worlds: number of shared worlds.
        num_threads: native threads (default: the machine's cores).
        max_cycles: episode length (default 1000).
        copy: return copies of the arrays (default) or the native buffers.
        batch_size: worlds returned by each ``recv()`` of asynchronous
            stepping (default ``num_worlds``); see ``send``/``recv``.
        **kwargs: the game's keyword arguments (``num_agents``, ``layout``, ...).
    """

    metadata = {"render_modes": ["rgb_array"], "autoreset_mode": AutoresetMode.SAME_STEP}

    def __init__(self, game: str, num_worlds: int, *, num_threads: int | None = None,
                 max_cycles: int | None = 1000, copy: bool = True, batch_size: int | None = None,
                 render_mode: str | None = None, render_world: int = 0,
                 autoreset_mode: AutoresetMode | str = AutoresetMode.SAME_STEP, **kwargs: Any):
        # Set first: a constructor that raises leaves an object whose __del__
        # (VectorEnv's, which calls close()) still finds what close() reads.
        self._pool = None
        self._renderer = None
        if render_mode not in (None, "rgb_array"):
            raise ValueError(f"render_mode should be None or 'rgb_array', got {render_mode!r}")
        if autoreset_mode not in (AutoresetMode.SAME_STEP, "same_step", AutoresetMode.SAME_STEP.value):
            raise ValueError("autoreset_mode should be AutoresetMode.SAME_STEP (or 'same_step'): the agent rows "
                             f"reset an ended world in the same step, as SuperSuit does; got {autoreset_mode!r}")
        self._remember(game=game, num_worlds=num_worlds, num_threads=num_threads, max_cycles=max_cycles,
                       copy=copy, batch_size=batch_size, render_mode=render_mode,
                       render_world=render_world, **kwargs)
        self.num_envs = self._setup(game, num_worlds, num_threads, max_cycles, copy,
                                    dict(kwargs, batch_size=batch_size))
        try:
            self.render_world = rendering.check_render_world(render_world, self.num_worlds)
        except BaseException:
            self._pool.close()  # a rejected constructor leaves no pool (nor threads) behind
            raise
        self.batch_size = self._pool.batch_size
        self.render_mode = render_mode
        # SuperSuit's ConcatVecEnv reports one agent's spaces as the env's spaces.
        self.observation_space = self.single_observation_space = self.agent_observation_space
        self.action_space = self.single_action_space = self.agent_action_space

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        return self._reset_rows(seed)

    def step(self, actions):
        return self._step_rows(actions)

    # -- asynchronous stepping (EnvPool's send/recv, by world) ------------------------

    def async_reset(self, *, seed: int | None = None) -> None:
        """Resets every world (world w seeded ``seed + w``) and puts them all in
        flight: the following ``recv()`` calls return their first observations,
        ``batch_size`` worlds at a time, in order."""
        self._async_reset_rows(seed)

    def send(self, actions, env_id) -> None:
        """Queues one step of each world in ``env_id``; ``actions`` has
        ``len(env_id) * num_agents`` rows, world-major (row ``k * num_agents +
        a`` is agent ``a`` of world ``env_id[k]``). Returns at once: the native
        threads step the worlds while the caller runs."""
        self._send_rows(actions, env_id)

    def recv(self):
        """The first ``batch_size`` worlds in flight to finish, as
        ``(obs, rewards, terminations, truncations, infos)`` with
        ``batch_size * num_agents`` rows, world-major; ``infos.env_ids`` holds
        the world of each block of rows (each row's dict: ``"env_id"``).
        Same-step auto-reset as in ``step``."""
        return self._recv_rows()

    def render(self):
        """A frame of world ``render_world`` (``render_mode="rgb_array"``); the
        state is copied under the pool's lock, so this is safe while another
        thread steps."""
        pool = self._check_open()
        if self.render_mode is None:
            module = TASKS[pool.task].module_name
            rendering.warn_no_render_mode(f'{module}.vec_env({self.num_worlds}, render_mode="rgb_array")')
            return None
        prefix = pool.agent_prefix or TASKS[pool.task].agent_prefix
        renderer = rendering.lazy_renderer(self, lambda: rendering.renderer_for(pool, 640, 480, agent_prefix=prefix))
        return renderer.render(*pool.get_state(self.render_world))

    def close_extras(self, **kwargs: Any) -> None:
        if self._renderer is not None:
            self._renderer.close()
            self._renderer = None
        if self._pool is not None:
            self._pool.close()



def _sb3_class():
    from stable_baselines3.common.vec_env.base_vec_env import VecEnv

    class SB3AgentVecEnv(_AgentRows, VecEnv):
        """Agents of native shared worlds as a Stable-Baselines3 ``VecEnv``."""

        def __init__(self, game: str, num_worlds: int, *, num_threads: int | None = None,
                     max_cycles: int | None = 1000, copy: bool = True, **kwargs: Any):
            self._args = dict(game=game, num_worlds=num_worlds, num_threads=num_threads,
                              max_cycles=max_cycles, copy=copy, **kwargs)
            rows = self._setup(game, num_worlds, num_threads, max_cycles, copy, kwargs)
            self.render_mode = None
            VecEnv.__init__(self, rows, self.agent_observation_space, self.agent_action_space)
            self._seed: int | None = None
            self._actions = None

        def reset(self):
            obs, infos = self._reset_rows(self._seed)
            self._seed = None
            self.reset_infos = list(infos)
            return obs

        def step_async(self, actions) -> None:
            self._actions = actions

        def step_wait(self):
            if self._actions is None:
                raise _core.StateError("step_wait() was called without step_async(actions) before it")
            actions, self._actions = self._actions, None
            obs, rewards, terminations, truncations, infos = self._step_rows(actions)
            return obs, rewards, terminations | truncations, infos

        def seed(self, seed: int | None = None):
            seed = as_seed(seed)
            self._seed = seed
            return [None if seed is None else seed + i for i in range(self.num_worlds)]

        def close(self) -> None:
            self._pool.close()

        def get_attr(self, attr_name, indices=None):
            return [getattr(self, attr_name)] * len(self._indices(indices))

        def set_attr(self, attr_name, value, indices=None) -> None:
            if len(set(self._indices(indices))) != self.num_envs:
                raise ValueError(f"set_attr({attr_name!r}) should address all {self.num_envs} rows "
                                 f"(their attributes are shared), got indices {indices!r}")
            setattr(self, attr_name, value)

        def env_method(self, method_name, *args, indices=None, **kwargs):
            method = getattr(self, method_name)
            return [method(*args, **kwargs)] * len(self._indices(indices))

        def env_is_wrapped(self, wrapper_class, indices=None):
            return [False] * len(self._indices(indices))

        def _indices(self, indices) -> list[int]:
            return as_indices(indices, self.num_envs)

        def __reduce__(self):
            # A class made on first use: pickled through the factory, not by reference.
            return (restore, (_sb3_agent_vec_env, self._args))

    return SB3AgentVecEnv


def _sb3_agent_vec_env(**kwargs: Any):
    return make_agent_vec_env(base_class="stable_baselines3", **kwargs)


def make_agent_vec_env(game: str, num_worlds: int, *, base_class: str = "gymnasium", **kwargs: Any):
    """``AgentVectorEnv`` (``base_class="gymnasium"``) or its SB3 ``VecEnv`` twin
    (``base_class="stable_baselines3"``): the one-line swap for SuperSuit's
    ``concat_vec_envs_v1(pettingzoo_env_to_vec_env_v1(env), num_worlds, base_class=...)``."""
    if base_class == "gymnasium":
        return AgentVectorEnv(game, num_worlds, **kwargs)
    if base_class == "stable_baselines3":
        return _sb3_class()(game, num_worlds, **kwargs)
    raise ValueError(f"base_class should be 'gymnasium' or 'stable_baselines3', got {base_class!r}")
