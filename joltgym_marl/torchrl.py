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

    ``obs_index``: for each (agent, entry) of the group's padded
    ``[n, obs_dim]`` observation, its column in the pool's observation row
    (padding: column 0, zeroed after the gather by ``obs_pad``).
    ``act_src`` / ``act_dst``: the entries of the group's flattened ``[n,
    act_dim]`` action that are real, and their columns in the pool's action row.
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
        self.obs_index = torch.from_numpy(index.reshape(-1))
        self.obs_pad = torch.from_numpy(pad) if pad.any() else None
        src, dst = [], []
        low = np.full((self.n, self.act_dim), -1.0, dtype=np.float32)
        high = np.full((self.n, self.act_dim), 1.0, dtype=np.float32)
        for k, cols in enumerate(act_cols):
            src.extend(k * self.act_dim + np.arange(len(cols)))
            dst.extend(cols)
            low[k, :len(cols)], high[k, :len(cols)] = lows[k], highs[k]
        self.act_src = torch.as_tensor(src, dtype=torch.int64)
        self.act_dst = torch.as_tensor(dst, dtype=torch.int64)
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

    # (set by the subclasses' constructors, before _setup)
    _pool: Any
    _closed_pool = False

    def _setup(self, agents: list[str], obs_cols: list[np.ndarray], act_cols: list[np.ndarray],
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
        # The pool's buffers as tensors, made once: each world's observation
        # row, rewards, terminations and truncations.
        self._obs_rows = torch.from_numpy(obs_array.reshape(n_worlds, -1))
        self._rewards = torch.from_numpy(pool.rewards)
        self._terminations = torch.from_numpy(pool.terminations)
        self._truncations = torch.from_numpy(pool.truncations)
        self._state = state
        # The actions the pool reads: one float32 row per world.
        self._actions = np.zeros((n_worlds, act_width), dtype=np.float32)
        self._actions_t = torch.from_numpy(self._actions)
        self._act_shape = act_shape
        # One group holding every action entry in order: its tensor is the row itself.
        only = self._groups[0] if len(self._groups) == 1 else None
        self._direct_actions = (only is not None and only.act_dim * only.n == act_width
                                and torch.equal(only.act_src, torch.arange(act_width))
                                and torch.equal(only.act_dst, torch.arange(act_width)))
        self._seed_next: int | None = None
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

    def _observation(self, g: _Group) -> torch.Tensor:
        rows = self._obs_rows
        if g.obs_block is not None:
            obs = rows[:, g.obs_block]
            obs = obs.to(self.dtype, copy=True)
        else:
            obs = rows.index_select(1, g.obs_index).to(self.dtype)
            if g.obs_pad is not None:
                obs = obs.view(self.num_worlds, g.n, g.obs_dim).masked_fill_(g.obs_pad, 0)
        return obs.view(self.num_worlds, g.n, g.obs_dim)

    def _output(self, stepped: bool) -> TensorDictBase:
        n_worlds = self.num_worlds
        if stepped:
            terminated = self._terminations[:, :1].clone()
            truncated = self._truncations[:, :1].clone()
            done = terminated | truncated
        else:
            terminated = torch.zeros((n_worlds, 1), dtype=torch.bool)
            truncated = torch.zeros((n_worlds, 1), dtype=torch.bool)
            done = torch.zeros((n_worlds, 1), dtype=torch.bool)
        out: dict[str, Any] = {"done": done, "terminated": terminated, "truncated": truncated}
        for g in self._groups:
            shape = (n_worlds, g.n, 1)
            entries = {"observation": self._observation(g),
                       "done": done.unsqueeze(1).expand(shape).clone(),
                       "terminated": terminated.unsqueeze(1).expand(shape).clone(),
                       "truncated": truncated.unsqueeze(1).expand(shape).clone()}
            if stepped:
                entries["reward"] = self._group_reward(g)
            out[g.name] = TensorDict(entries, batch_size=(n_worlds, g.n))
        if self._state is not None:
            out["state"] = self._obs_rows[:, self._state].to(self.dtype, copy=True)
        return TensorDict(out, batch_size=(n_worlds,), device=self.device)

    def _group_reward(self, g: _Group) -> torch.Tensor:
        raise NotImplementedError

    def _step(self, tensordict: TensorDictBase) -> TensorDictBase:
        pool = self._check_open()
        if self._direct_actions:
            g = self._groups[0]
            actions = tensordict.get((g.name, "action")).detach()
            if actions.dtype != torch.float32:
                actions = actions.to(torch.float32)
            array = actions.contiguous().numpy().reshape(self._act_shape)
        else:
            row = self._actions_t
            for g in self._groups:
                a = tensordict.get((g.name, "action")).detach().reshape(self.num_worlds, -1)
                row[:, g.act_dst] = a[:, g.act_src].to(torch.float32)
            array = self._actions.reshape(self._act_shape)
        pool.step_all(array)
        return self._output(stepped=True)

    def _reset(self, tensordict: TensorDictBase | None = None, **kwargs: Any) -> TensorDictBase:
        pool = self._check_open()
        mask = self._reset_mask(tensordict)
        if mask is None:
            seed, self._seed_next = self._seed_next, None
            pool.reset_all(seed=seed)
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
        self._agent_rows = {g.name: torch.as_tensor(g.rows) for g in self._groups}
        self._all_rows = {g.name: g.rows == list(range(len(agents))) for g in self._groups}

    def _group_reward(self, g: _Group) -> torch.Tensor:
        rewards = self._rewards if self._all_rows[g.name] else self._rewards[:, self._agent_rows[g.name]]
        return rewards.to(torch.float32, copy=True).unsqueeze(-1)


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

    def _group_reward(self, g: _Group) -> torch.Tensor:
        # MaMuJoCo's reward is the world's, shared by every agent.
        return self._rewards[:, :1].to(torch.float32, copy=True).unsqueeze(1).expand(self.num_worlds, g.n, 1).clone()


def _game_name(game: str) -> str:
    from joltgym_marl.registry import resolve

    spec = resolve(game)
    if not spec.is_game:
        names = ", ".join(s.name for s in GAMES)
        raise ValueError(f"game should be one of the games ({names}), got {game!r} (a single-agent task)")
    return spec.name
