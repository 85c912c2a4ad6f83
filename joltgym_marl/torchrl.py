"""TorchRL: the worlds of one native pool as ONE batched TorchRL env.

:class:`BatchedGameEnv` (a game: ``cheetah_race``, ``sumo``, ...) and
:class:`BatchedMaMuJoCoEnv` (a MaMuJoCo scenario and conf) are
``torchrl.envs.EnvBase`` subclasses whose ``batch_size`` is ``[num_worlds]``:
one ``step`` is one native call that steps every world on the pool's threads
(the GIL released), so a TorchRL collector steps N worlds in one call, where
``ParallelEnv(N, lambda: PettingZooWrapper(env))`` runs N processes.

The tensordicts have the layout of TorchRL's ``PettingZooWrapper`` on the same
env (a test holds the two side by side):

* agents are grouped as ``PettingZooWrapper`` groups a parallel env by
  default (agents named ``<group>_<k>`` share the group ``<group>``; others get
  a group each), or by ``group_map`` (a dict or a ``MarlGroupMapType``);
* per group: ``(group, "observation")`` ``[N, n, obs_dim]``, ``(group,
  "action")`` ``[N, n, act_dim]`` float32 within the action bounds, ``(group,
  "reward")`` ``[N, n, 1]`` float32, and ``(group, "done" | "terminated" |
  "truncated")`` ``[N, n, 1]``; ``"done"``, ``"terminated"`` and
  ``"truncated"`` ``[N, 1]`` at the root (an episode ends for every agent of a
  world together); MaMuJoCo adds ``"state"`` ``[N, state_dim]`` with
  ``return_state=True``;
* agents of one group whose observation (or action) sizes differ (MaMuJoCo's
  HalfCheetah 6x1: 9, 9, 8, 9, 9, 8) are padded with zeros to the group's
  widest (an action's extra entries are ignored), so each group is one dense
  tensor; ``PettingZooWrapper`` makes a lazily stacked, ragged group there.

Observations are gathered from the pool's buffers (viewed once as tensors with
``torch.from_numpy``) by one indexing call per group, which is also the one
copy a step makes of them: a rollout keeps every step's tensors, so they cannot
be the buffers the next step overwrites. ``dtype`` chooses float32 (BenchMARL's
models) or float64 (MaMuJoCo's default, identical to Farama's values).

Episodes end as the pool ends them (the task's termination, ``max_cycles`` /
``max_episode_steps``, a physics blow-up); the pool does not reset an ended
world by itself before TorchRL asks: TorchRL's ``reset`` with a partial
``"_reset"`` mask (what ``step_and_maybe_reset`` and the collectors pass)
resets only the masked worlds, each continuing its own random stream.
``set_seed(seed)`` resets every world, world ``i`` seeded ``seed + i``, as
``PettingZooWrapper(env).set_seed(seed + i)`` would.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

try:
    import torch
    from tensordict import TensorDict, TensorDictBase
    from torchrl.data import Bounded, Categorical, Composite, Unbounded
    from torchrl.envs import EnvBase
    from torchrl.envs.utils import MarlGroupMapType, check_marl_grouping
except ImportError as error:  # pragma: no cover - depends on the environment
    raise ImportError(
        "joltgym_marl.torchrl needs TorchRL: pip install 'joltgym_marl[torchrl]' (torchrl, tensordict; "
        f"torch's CPU build first); importing it failed with: {error}"
    ) from error

from joltgym_marl._checks import as_int, as_seed
from joltgym_marl._native import core as _core
from joltgym_marl.registry import GAMES, TASKS

__all__ = ["BatchedGameEnv", "BatchedMaMuJoCoEnv", "BatchedMarlEnv", "default_group_map"]

_DTYPES = {"float32": torch.float32, "float64": torch.float64}


def default_group_map(agents: Sequence[str]) -> dict[str, list[str]]:
    """The groups ``PettingZooWrapper`` makes of a parallel env's agents: an
    agent named ``<group>_<k>`` (``k`` an integer) joins ``<group>``; any other
    name is a group of its own."""
    groups: dict[str, list[str]] = {}
    for agent in agents:
        head, _, tail = agent.rpartition("_")
        try:
            int(tail)
        except ValueError:
            head = ""
        groups.setdefault(head or agent, []).append(agent)
    return groups


def _as_dtype(dtype: Any) -> torch.dtype:
    if isinstance(dtype, torch.dtype) and dtype in _DTYPES.values():
        return dtype
    try:
        name = np.dtype(dtype).name
    except TypeError:
        name = None
    if name in _DTYPES:
        return _DTYPES[name]
    raise ValueError(f"dtype should be torch.float32 or torch.float64 (or 'float32' / 'float64'), got {dtype!r}")


class _Group:
    """Where one group's observations come from and its actions go.

    ``obs_index_np``: for each (agent, entry) of the group's padded
    ``[n, obs_dim]`` observation, its column in the pool's observation row
    (padding: column 0, zeroed after the gather where ``obs_pad``);
    ``obs_block``: the same as a slice, when it is one.
    ``act_src_np`` / ``act_dst_np``: the entries of the group's flattened
    ``[n, act_dim]`` action that are real, and their columns in the pool's
    action row; ``act_block``: the columns as a slice, when the real entries
    are all of them in order.
    """

    def __init__(self, name: str, agents: list[str], rows: list[int], obs_cols: list[np.ndarray],
                 act_cols: list[np.ndarray], lows: list[np.ndarray], highs: list[np.ndarray]):
        self.name, self.agents, self.rows = name, agents, rows
        self.n = len(agents)
        self.obs_dim = max(len(c) for c in obs_cols)
        self.act_dim = max(len(c) for c in act_cols)
        index = np.zeros((self.n, self.obs_dim), dtype=np.int64)
        pad = np.ones((self.n, self.obs_dim), dtype=bool)
        for k, cols in enumerate(obs_cols):
            index[k, :len(cols)] = cols
            pad[k, :len(cols)] = False
        self.obs_index_np = index.reshape(-1)
        self.obs_pad = pad if pad.any() else None
        self.obs_pad_np = pad
        src, dst = [], []
        low = np.full((self.n, self.act_dim), -1.0, dtype=np.float32)
        high = np.full((self.n, self.act_dim), 1.0, dtype=np.float32)
        for k, cols in enumerate(act_cols):
            src.extend(k * self.act_dim + np.arange(len(cols)))
            dst.extend(cols)
            low[k, :len(cols)], high[k, :len(cols)] = lows[k], highs[k]
        self.act_src_np = np.asarray(src, dtype=np.int64)
        self.act_dst_np = np.asarray(dst, dtype=np.int64)
        # Real entries first and going to consecutive columns: a slice, not a scatter.
        n_real = len(src)
        self.act_block = (slice(int(dst[0]), int(dst[0]) + n_real)
                          if n_real and np.array_equal(self.act_src_np, np.arange(n_real))
                          and np.array_equal(self.act_dst_np, np.arange(dst[0], dst[0] + n_real)) else None)
        self.low, self.high = torch.from_numpy(low), torch.from_numpy(high)
        first = int(index[0, 0])
        # A group that is a plain block of the row (no padding, in order): a slice, not a gather.
        self.obs_block = (slice(first, first + index.size)
                          if self.obs_pad is None and np.array_equal(index.reshape(-1),
                                                                     np.arange(first, first + index.size))
                          else None)


class BatchedMarlEnv(EnvBase):
    """The TorchRL env over a native pool; see the module's docstring. Made by
    :class:`BatchedGameEnv` and :class:`BatchedMaMuJoCoEnv`."""

    _pool: Any  # (set by the subclasses' constructors, before _setup)

    def _setup(self, *args: Any) -> None:
        try:
            self._build(*args)
        except BaseException:
            self._pool.close()  # a rejected constructor leaves no pool (nor threads) behind
            raise

    def _build(self, agents: list[str], obs_cols: list[np.ndarray], act_cols: list[np.ndarray],
               lows: list[np.ndarray], highs: list[np.ndarray], group_map: Any, dtype: torch.dtype,
               obs_array: np.ndarray, act_width: int, act_shape: tuple[int, ...], state: slice | None,
               seed: int | None) -> None:
        pool = self._pool
        n_worlds = pool.num_envs
        if group_map is None:
            group_map = default_group_map(agents)
        elif isinstance(group_map, MarlGroupMapType):
            group_map = group_map.get_group_map(list(agents))
        elif isinstance(group_map, Mapping):
            group_map = {str(g): list(members) for g, members in group_map.items()}
        else:
            raise TypeError(f"group_map should be None, a dict of group -> agent names or a MarlGroupMapType, "
                            f"got {type(group_map).__name__}")
        check_marl_grouping(group_map, list(agents))
        self.group_map = group_map
        self.agent_names = list(agents)
        self.dtype = dtype
        self.num_worlds = n_worlds
        position = {a: i for i, a in enumerate(agents)}
        self._groups = []
        for name, members in group_map.items():
            rows = [position[a] for a in members]
            self._groups.append(_Group(name, members, rows, [obs_cols[r] for r in rows],
                                       [act_cols[r] for r in rows], [lows[r] for r in rows],
                                       [highs[r] for r in rows]))
        # The pool's observation rows (one per world), viewed once.
        self._obs_np = obs_array.reshape(n_worlds, -1)
        self._np_dtype = np.float32 if dtype == torch.float32 else np.float64
        self._state = state
        self._group_batch = {g.name: torch.Size((n_worlds, g.n)) for g in self._groups}
        # The actions the pool reads: one float32 row per world.
        self._actions = np.zeros((n_worlds, act_width), dtype=np.float32)
        self._act_shape = act_shape
        # One group holding every action entry in order: its tensor is the row itself.
        only = self._groups[0] if len(self._groups) == 1 else None
        self._direct_actions = (only is not None and only.act_dim * only.n == act_width
                                and only.act_block == slice(0, act_width))
        self._make_specs()
        if seed is not None:
            self.set_seed(seed)

    # -- specs ----------------------------------------------------------------------

    def _make_specs(self) -> None:
        n_worlds = self.num_worlds
        b = (n_worlds,)
        observation = Composite(shape=b)
        action = Composite(shape=b)
        reward = Composite(shape=b)
        done = Composite({key: Categorical(2, shape=(*b, 1), dtype=torch.bool)
                          for key in ("done", "terminated", "truncated")}, shape=b)
        for g in self._groups:
            shape = (*b, g.n)
            observation[g.name] = Composite(
                {"observation": Unbounded(shape=(*shape, g.obs_dim), dtype=self.dtype)}, shape=shape)
            action[g.name] = Composite(
                {"action": Bounded(low=g.low.expand(*b, g.n, g.act_dim).clone(),
                                   high=g.high.expand(*b, g.n, g.act_dim).clone(),
                                   shape=(*shape, g.act_dim), dtype=torch.float32)}, shape=shape)
            reward[g.name] = Composite({"reward": Unbounded(shape=(*shape, 1), dtype=torch.float32)},
                                       shape=shape)
            done[g.name] = Composite({key: Categorical(2, shape=(*shape, 1), dtype=torch.bool)
                                      for key in ("done", "terminated", "truncated")}, shape=shape)
        if self._state is not None:
            observation["state"] = Unbounded(shape=(*b, self._state.stop - self._state.start), dtype=self.dtype)
        self.observation_spec = observation
        self.action_spec = action
        self.reward_spec = reward
        self.done_spec = done

    # -- stepping ---------------------------------------------------------------------
    #
    # The per-step glue is NumPy on the pool's arrays (a NumPy call costs a
    # fraction of a torch call at these sizes), wrapped by torch.from_numpy
    # once made; the TensorDicts are built unchecked (TensorDict._new_unsafe,
    # as TorchRL's own GymLikeEnv does): their shapes are the specs', by
    # construction.

    def _observation(self, g: _Group) -> np.ndarray:
        rows = self._obs_np
        if g.obs_block is not None:
            obs = rows[:, g.obs_block].astype(self._np_dtype)  # (a copy)
        else:
            obs = rows.take(g.obs_index_np, axis=1).astype(self._np_dtype, copy=False)
            if g.obs_pad is not None:
                obs.reshape(self.num_worlds, g.n, g.obs_dim)[:, g.obs_pad_np] = 0
        return obs.reshape(self.num_worlds, g.n, g.obs_dim)

    def _output(self, stepped: bool) -> TensorDictBase:
        n_worlds = self.num_worlds
        # done, terminated, truncated of each world, side by side: every done
        # key is a view of one such block (distinct entries of it).
        flags = np.zeros((n_worlds, 3), dtype=bool)
        if stepped:
            pool = self._pool
            flags[:, 1] = pool.terminations[:, 0]
            flags[:, 2] = pool.truncations[:, 0]
            np.logical_or(flags[:, 1], flags[:, 2], out=flags[:, 0])
        root = torch.from_numpy(flags)
        out: dict[str, Any] = {"done": root[:, 0:1], "terminated": root[:, 1:2], "truncated": root[:, 2:3]}
        batch = self._group_batch
        for g in self._groups:
            block = torch.from_numpy(np.repeat(flags[:, None, :], g.n, axis=1))
            entries = {"observation": torch.from_numpy(self._observation(g)),
                       "done": block[..., 0:1], "terminated": block[..., 1:2], "truncated": block[..., 2:3]}
            if stepped:
                entries["reward"] = torch.from_numpy(self._group_reward(g))
            out[g.name] = TensorDict._new_unsafe(entries, batch_size=batch[g.name])
        if self._state is not None:
            out["state"] = torch.from_numpy(self._obs_np[:, self._state].astype(self._np_dtype))
        td = TensorDict._new_unsafe(out, batch_size=self.batch_size)
        return td if self.device is None or self.device.type == "cpu" else td.to(self.device)

    def _group_reward(self, g: _Group) -> np.ndarray:
        raise NotImplementedError

    def _step(self, tensordict: TensorDictBase) -> TensorDictBase:
        pool = self._check_open()
        if self._direct_actions:
            g = self._groups[0]
            actions = tensordict.get((g.name, "action"))
            array = actions.detach().to("cpu", torch.float32).contiguous().numpy().reshape(self._act_shape)
        else:
            row = self._actions
            for g in self._groups:
                a = tensordict.get((g.name, "action")).detach().to("cpu", torch.float32).numpy()
                a = a.reshape(self.num_worlds, -1)
                if g.act_block is not None:
                    row[:, g.act_block] = a[:, :g.act_block.stop - g.act_block.start]
                else:
                    row[:, g.act_dst_np] = a[:, g.act_src_np]
            array = row.reshape(self._act_shape)
        pool.step_all(array)
        return self._output(stepped=True)

    def _reset(self, tensordict: TensorDictBase | None = None, **kwargs: Any) -> TensorDictBase:
        pool = self._check_open()
        mask = self._reset_mask(tensordict)
        if mask is None:
            pool.reset_all(seed=None)  # every world's stream continues (set_seed seeds them)
        else:
            for i in torch.nonzero(mask).flatten().tolist():
                pool.reset_one(i)
        return self._output(stepped=False)

    def _reset_mask(self, tensordict: TensorDictBase | None) -> torch.Tensor | None:
        """The worlds a partial reset resets (None: all of them)."""
        if tensordict is None:
            return None
        keys = ["_reset"] + [(g.name, "_reset") for g in self._groups]
        masks = [tensordict.get(key, None) for key in keys]
        masks = [m.reshape(self.num_worlds, -1).any(-1) for m in masks if m is not None]
        if not masks:
            return None
        mask = masks[0]
        for m in masks[1:]:
            mask = mask | m
        return None if bool(mask.all()) else mask

    def _set_seed(self, seed: int | None) -> None:
        # As PettingZooWrapper: the seed starts an episode now (world i: seed + i);
        # the next reset() starts the next one of each world's stream.
        seed = as_seed(seed)
        self._check_open().reset_all(seed=seed)

    # -- lifecycle ------------------------------------------------------------------------

    def _check_open(self):
        pool = self._pool
        if pool.closed:
            raise _core.StateError(f"{type(self).__name__} is closed; expected an open env (create a new one)")
        return pool

    @property
    def pool(self):
        """The native pool behind this env (``WorldPool`` or ``MaMuJoCoPool``)."""
        return self._pool

    def close(self, *, raise_if_closed: bool = True) -> None:
        pool = self.__dict__.get("_pool")
        if pool is not None:
            pool.close()
        super().close(raise_if_closed=raise_if_closed)


class BatchedGameEnv(BatchedMarlEnv):
    """``num_worlds`` worlds of a game (``"cheetah_race"``, ``"sumo_v0"``, any of
    its names) as one TorchRL env, batch ``[num_worlds]``.

    Args:
        game: the game.
        num_worlds: worlds in the batch (an int >= 1).
        num_threads: native threads (default: the machine's cores).
        max_cycles: steps before an episode is truncated (default: the game's).
        dtype: observations' dtype, ``torch.float32`` (default, the game's
            spaces) or ``torch.float64``.
        group_map: agent groups (default: as ``PettingZooWrapper`` groups the
            game's ``parallel_env``).
        seed: if given, ``set_seed(seed)`` now.
        device: TorchRL's device of the env (CPU tensors are moved there).
        **kwargs: the game's keyword arguments (``num_agents``, ``robot``, ...).
    """

    def __init__(self, game: str, num_worlds: int, *, num_threads: int | None = None,
                 max_cycles: int | None = None, dtype: Any = torch.float32, group_map: Any = None,
                 seed: int | None = None, device: Any = None, **kwargs: Any):
        name = _game_name(game)
        num_worlds = as_int(num_worlds, "num_worlds", 1)
        dtype = _as_dtype(dtype)
        if max_cycles is None:
            max_cycles = TASKS[name].max_episode_steps
        max_cycles = as_int(max_cycles, "max_cycles", 1)
        self._pool = _core.WorldPool(name, num_worlds, num_threads=num_threads, max_episode_steps=max_cycles,
                                     autoreset_mode="next_step",
                                     dtype=np.float32 if dtype == torch.float32 else np.float64, **kwargs)
        super().__init__(device=device, batch_size=torch.Size([num_worlds]))
        pool = self._pool
        self.game = name
        self.max_cycles = max_cycles
        prefix = pool.agent_prefix or TASKS[name].agent_prefix
        agents = list(pool.agent_names) or [f"{prefix}_{i}" for i in range(pool.num_agents)]
        d, a = pool.obs_dim, pool.act_dim
        obs_cols = [np.arange(k * d, (k + 1) * d) for k in range(len(agents))]
        act_cols = [np.arange(k * a, (k + 1) * a) for k in range(len(agents))]
        lows = [np.asarray(pool.action_low, dtype=np.float32)] * len(agents)
        highs = [np.asarray(pool.action_high, dtype=np.float32)] * len(agents)
        self._setup(agents, obs_cols, act_cols, lows, highs, group_map, dtype, pool.obs, len(agents) * a,
                    (num_worlds, len(agents), a), None, seed)
        # Each group's rows of the reward buffer: a slice where they are consecutive.
        self._reward_rows = {g.name: slice(g.rows[0], g.rows[-1] + 1)
                             if g.rows == list(range(g.rows[0], g.rows[-1] + 1)) else np.asarray(g.rows)
                             for g in self._groups}

    def _group_reward(self, g: _Group) -> np.ndarray:
        rewards = self._pool.rewards[:, self._reward_rows[g.name]]
        return rewards.astype(np.float32)[:, :, None]  # (a copy)


class BatchedMaMuJoCoEnv(BatchedMarlEnv):
    """``num_worlds`` worlds of a MaMuJoCo scenario (``mamujoco_v1.vec_env``'s)
    as one TorchRL env, batch ``[num_worlds]``; world ``i`` is
    ``mamujoco_v1.parallel_env(scenario, agent_conf, ...)`` seeded ``seed + i``.

    Args:
        scenario, agent_conf: as ``mamujoco_v1.parallel_env`` (``"HalfCheetah"``, ``"6x1"``).
        num_worlds: worlds in the batch (an int >= 1).
        num_threads: native threads (default: the machine's cores).
        dtype: observations' (and state's) dtype: ``torch.float64`` (default:
            Farama's values exactly) or ``torch.float32`` (BenchMARL's models).
        return_state: add the global ``"state"`` (as ``PettingZooWrapper(...,
            return_state=True)``).
        group_map: agent groups (default: one group ``"agent"``, as
            ``PettingZooWrapper`` groups ``agent_0 ... agent_{n-1}``).
        seed: if given, ``set_seed(seed)`` now.
        device: TorchRL's device of the env.
        **options: the other keywords of ``mamujoco_v1.parallel_env``
            (``agent_obsk``, ``agent_factorization``, ``local_categories``,
            ``global_categories``, ``agent_observation``, ``max_episode_steps``
            and the robot's keyword arguments).
    """

    def __init__(self, scenario: str, agent_conf: str | None, num_worlds: int, *, num_threads: int | None = None,
                 dtype: Any = torch.float64, return_state: bool = False, group_map: Any = None,
                 seed: int | None = None, device: Any = None, agent_obsk: int | None = 1,
                 agent_factorization: dict[str, Any] | None = None,
                 local_categories: list[list[str]] | None = None,
                 global_categories: tuple[str, ...] | None = None, agent_observation: str = "local",
                 **kwargs: Any):
        from joltgym_marl.mamujoco.env import _Core

        num_worlds = as_int(num_worlds, "num_worlds", 1)
        dtype = _as_dtype(dtype)
        if not isinstance(return_state, (bool, np.bool_)):
            raise TypeError(f"return_state should be True or False, got {return_state!r}")
        core = _Core(scenario, agent_conf, agent_obsk, agent_factorization, local_categories, global_categories,
                     kwargs, num_worlds, num_threads, None, agent_observation)
        self._pool = core.pool
        super().__init__(device=device, batch_size=torch.Size([num_worlds]))
        self.scenario, self.agent_conf = scenario, agent_conf
        self.max_episode_steps = core.max_episode_steps
        agents = list(core.agents)
        obs_cols = [np.arange(s.start, s.stop) for s in core.obs_slices]
        act_cols = [np.asarray(i, dtype=np.int64) for i in core.f.action_indices]
        lows = [core.action_spaces[a].low for a in agents]
        highs = [core.action_spaces[a].high for a in agents]
        pool = core.pool
        self._setup(agents, obs_cols, act_cols, lows, highs, group_map, dtype, pool.obs[:, 0, :],
                    core.f.act_dim, (num_worlds, core.f.act_dim), core.state_slice if return_state else None, seed)

    def _group_reward(self, g: _Group) -> np.ndarray:
        # MaMuJoCo's reward is the world's, shared by every agent.
        return np.repeat(self._pool.rewards[:, None, :1].astype(np.float32), g.n, axis=1)


def _game_name(game: str) -> str:
    from joltgym_marl.registry import resolve

    spec = resolve(game)
    if not spec.is_game:
        names = ", ".join(s.name for s in GAMES)
        raise ValueError(f"game should be one of the games ({names}), got {game!r} (a single-agent task)")
    return spec.name
