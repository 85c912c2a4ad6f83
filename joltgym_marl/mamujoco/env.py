"""MaMuJoCo (Farama's ``gymnasium_robotics.mamujoco_v1``) over the native
single-agent robots: one world as a PettingZoo ``ParallelEnv``, or
``num_envs`` worlds batched on the WorldPool.

Observations are built natively: the factorization is compiled once into an
index plan (:mod:`joltgym_marl.mamujoco.plan`) that the core applies after
every reset and step, in float64, from mjData. The native pool is the
WorldPool binding over that task: its ``obs`` rows are the plan's output
(each agent's observation, then ``state()``), its ``infos`` the robot's
info fields.
"""

from __future__ import annotations

import functools
from typing import Any, ClassVar

import gymnasium
import numpy as np
from pettingzoo.utils.env import ParallelEnv

from joltgym_marl import rendering
from joltgym_marl._lifecycle import Reconstructible
from joltgym_marl._native import core as _core
from joltgym_marl.mamujoco.assets import coupled_half_cheetah_path, many_segment_xml
from joltgym_marl.mamujoco.factorization import Factorization, resolve
from joltgym_marl.mamujoco.rewards import RewardRecipe
from joltgym_marl.registry import TASKS

AGENT_OBSERVATIONS = ("local", "global_state")
LAYOUTS = ("per_agent", "padded")
_FLOAT32_MAX = float(np.finfo(np.float32).max)


class _Core:
    """What parallel_env and vec_env share: the factorization, the native pool,
    and turning its buffers into MaMuJoCo's per-agent results."""

    def __init__(self, scenario, agent_conf, agent_obsk, agent_factorization, local_categories,
                 global_categories, kwargs, num_envs, num_threads, batch_size, agent_observation):
        if agent_observation not in AGENT_OBSERVATIONS:
            raise ValueError(f"agent_observation should be one of {AGENT_OBSERVATIONS}, got {agent_observation!r}")
        kwargs = dict(kwargs)
        max_steps = kwargs.pop("max_episode_steps", None)
        xml = None
        if scenario.startswith("ManySegment"):
            xml = many_segment_xml(scenario, agent_conf)
        elif scenario == "CoupledHalfCheetah" and "xml_file" not in kwargs:
            xml = coupled_half_cheetah_path()
        self.f: Factorization = resolve(scenario, agent_conf, agent_obsk, agent_factorization,
                                        local_categories, global_categories, kwargs, xml)
        robot = self.f.robot
        if max_steps is None:
            max_steps = TASKS[robot].max_episode_steps if robot in TASKS else 1000
        self.max_episode_steps = int(max_steps)
        self.pool = _core.MaMuJoCoPool(robot, self.f.robot_kwargs, self.f.plan_ops, self.f.plan_bounds,
                                       num_envs=num_envs, num_threads=num_threads,
                                       max_episode_steps=self.max_episode_steps, batch_size=batch_size)
        self.agent_observation = agent_observation
        self.fields = list(self.pool.info_fields)
        fields = {name: offset for name, offset, size, at_reset in self.fields}
        self.recipe = RewardRecipe(robot, self.f.robot_kwargs, fields, self.f.agent_obsk is None)
        self.agents = list(self.f.possible_agents)
        self.state_slice = self.f.state_slice
        if agent_observation == "global_state":
            self.obs_slices = [self.state_slice] * len(self.agents)
        else:
            self.obs_slices = list(self.f.obs_slices)
        self.act_dims = [len(i) for i in self.f.action_indices]
        low, high = float(self.pool.action_low[0]), float(self.pool.action_high[0])
        self.action_spaces = {a: gymnasium.spaces.Box(low=low, high=high, shape=(d,), dtype=np.float32)
                              for a, d in zip(self.agents, self.act_dims)}
        self.observation_spaces = {
            a: gymnasium.spaces.Box(low=-np.inf, high=np.inf, shape=(s.stop - s.start,), dtype=np.float64)
            for a, s in zip(self.agents, self.obs_slices)}

    def check_action(self, agent: str, action: Any, rows: int | None) -> np.ndarray:
        """``action`` as float32, or TypeError / ValueError naming the agent and the value."""
        dim = self.act_dims[self.agents.index(agent)]
        shape = (dim,) if rows is None else (rows, dim)
        try:
            array = np.asarray(action)
        except (TypeError, ValueError):
            raise TypeError(f"action of {agent} should be a float array of shape {shape}, "
                            f"got {type(action).__name__}") from None
        if array.dtype.kind != "f":
            raise TypeError(f"action of {agent} should have a floating-point dtype (float32 or float64), "
                            f"got {array.dtype}")
        if array.shape != shape:
            raise ValueError(f"action of {agent} should have shape {shape}, got {array.shape}")
        finite = np.isfinite(array)
        ok = finite & (np.abs(np.where(finite, array, 0)) <= _FLOAT32_MAX)
        if not ok.all():
            index = tuple(int(i) for i in np.argwhere(~ok)[0])
            beyond = " (out of float32 range)" if finite[index] else ""
            raise ValueError(f"action of {agent} should be finite, got {float(array[index]):g} at index "
                             f"{index}{beyond}")
        return array.astype(np.float32)

    def gather(self, actions: Any, agents: list[str], rows: int | None) -> np.ndarray:
        """The [rows, act_dim] float32 global action of per-agent actions."""
        if not isinstance(actions, dict):
            raise TypeError(f"actions should be a dict of agent name -> action, got {type(actions).__name__}")
        unknown = [a for a in actions if a not in self.agents]
        if unknown:
            raise KeyError(f"unknown agent(s) {unknown} in actions; expected agents {agents}")
        missing = [a for a in agents if a not in actions]
        if missing:
            raise KeyError(f"actions are missing agent(s) {missing}; expected one action for each of {agents}")
        n = 1 if rows is None else rows
        out = np.empty((n, self.f.act_dim), dtype=np.float32)
        try:  # the fast path: float arrays of the right shapes, all finite within float32's range
            with np.errstate(over="ignore", invalid="ignore"):
                for i, agent in enumerate(self.agents):
                    a = actions[agent]
                    if a.dtype.kind != "f" or a.shape != ((self.act_dims[i],) if rows is None
                                                          else (rows, self.act_dims[i])):
                        raise TypeError
                    out[:, self.f.action_indices[i]] = a
                if np.isfinite(out).all():
                    return out
        except (AttributeError, TypeError, ValueError):
            pass
        for i, agent in enumerate(self.agents):  # the first bad action, named
            out[:, self.f.action_indices[i]] = self.check_action(agent, actions[agent], rows)
        return out

    def observations(self, values: np.ndarray) -> dict[str, np.ndarray]:
        """values: [rows, plan width] -> {agent: [rows, obs_dim]} (copies)."""
        return {a: values[:, s].copy() for a, s in zip(self.agents, self.obs_slices)}

    def rewards(self, info: np.ndarray, actions: np.ndarray | None, stepped: np.ndarray | None):
        """[rows] float64 rewards and the [rows] float64 reward_ctrl (None for
        robots without a control cost); 0 for worlds that were reset."""
        ctrl = self.recipe.control(actions.astype(np.float64)) if actions is not None else None
        if actions is None:
            return np.zeros(info.shape[0]), None
        reward = self.recipe.reward(info, ctrl)
        if stepped is not None and not stepped.all():
            reward = np.where(stepped, reward, 0.0)
        return reward, ctrl

    def info_dicts(self, info_row: np.ndarray, reset: bool, ctrl: np.ndarray | None) -> dict[str, Any]:
        """One world's info dict; ``ctrl``: its row of RewardRecipe.control()."""
        out = {}
        for name, offset, size, at_reset in self.fields:
            if reset and not at_reset:
                continue
            out[name] = np.float64(info_row[offset]) if size == 1 else info_row[offset:offset + size].copy()
        if ctrl is not None and not reset:
            for k, name in enumerate(self.recipe.ctrl_fields):
                out[name] = np.float64(np.atleast_1d(ctrl)[k])
        return out


class _RenderTarget:
    """What the renderer needs of a native core (one world of the pool)."""

    def __init__(self, pool):
        self._pool = pool
        self.camera = pool.camera
        self.num_agents = 1

    def model_mjb(self):
        return self._pool.model_mjb()


class MaMuJoCoParallelEnv(Reconstructible, ParallelEnv):
    """Farama's MaMuJoCo ``parallel_env`` (``gymnasium_robotics.mamujoco_v1``),
    natively: the same signature, agents, spaces, observations (float64),
    rewards, ``state()``, mapping functions and metadata.

    ``agent_observation="global_state"`` gives every agent ``state()`` as its
    observation (HARL's default) instead of MaMuJoCo's local k-hop one.
    Keyword arguments go to the robot, as to Gymnasium's ``-v5`` env (and
    ``max_episode_steps``, as to ``gymnasium.make``). Stepping after the
    episode ended raises (call ``reset()``): the world is reset natively.
    """

    metadata: ClassVar[dict[str, Any]] = {
        "render_modes": ["human", "rgb_array"],
        "name": "MaMuJoCo",
        "is_parallelizable": True,
        "has_manual_policy": False,
    }

    def __init__(self, scenario: str, agent_conf: str | None, agent_obsk: int | None = 1,
                 agent_factorization: dict[str, Any] | None = None,
                 local_categories: list[list[str]] | None = None,
                 global_categories: tuple[str, ...] | None = None, render_mode: str | None = None,
                 gym_env: Any = None, agent_observation: str = "local", **kwargs: Any):
        if gym_env is not None:
            raise ValueError("gym_env (a Python MujocoEnv) cannot be stepped natively; expected None (give the "
                             "scenario's robot another model with xml_file=... instead)")
        rendering.check_render_mode(render_mode)
        self._remember(scenario=scenario, agent_conf=agent_conf, agent_obsk=agent_obsk,
                       agent_factorization=agent_factorization, local_categories=local_categories,
                       global_categories=global_categories, render_mode=render_mode,
                       agent_observation=agent_observation, **kwargs)
        self._core = _Core(scenario, agent_conf, agent_obsk, agent_factorization, local_categories,
                           global_categories, kwargs, 1, 1, None, agent_observation)
        f = self._core.f
        self.scenario, self.agent_conf = scenario, agent_conf
        self.agent_obsk = f.agent_obsk
        self.local_categories = f.local_categories
        self.global_categories = f.global_categories
        self.render_mode = render_mode
        self.possible_agents = list(self._core.agents)
        self.agents = list(self.possible_agents)
        self.observation_spaces = self._core.observation_spaces
        self.action_spaces = self._core.action_spaces
        self.observation_factorization = f.observation_factorization
        s = self._core.state_slice
        self.state_space = gymnasium.spaces.Box(-np.inf, np.inf, (s.stop - s.start,), np.float64)
        self.metadata = {**type(self).metadata, "render_fps": int(np.round(1.0 / self._core.pool.dt))}
        self._renderer = None
        self._started = False
        self._seeded = False

    def observation_space(self, agent: str) -> gymnasium.spaces.Box:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> gymnasium.spaces.Box:
        return self.action_spaces[agent]

    @property
    def dt(self) -> float:
        return self._core.pool.dt

    def _values(self) -> np.ndarray:
        return self._core.pool.obs[:, 0, :]

    def _infos(self) -> np.ndarray:
        return self._core.pool.infos[:, 0, :]

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None):
        self._check_open()
        # options: accepted and unused, as Gymnasium's -v5 robots do
        if seed is None and not self._seeded:
            seed = np.random.SeedSequence().entropy
        self._core.pool.reset_all(seed=seed)
        if seed is not None:
            self._seeded = True
        self._started = True
        self.agents = list(self.possible_agents)
        info = self._core.info_dicts(self._infos()[0], True, None)
        return self._per_agent_obs(self._values()), {a: info for a in self.possible_agents}

    def _per_agent_obs(self, values: np.ndarray) -> dict[str, np.ndarray]:
        return {a: o[0] for a, o in self._core.observations(values).items()}

    def step(self, actions: dict[str, Any]):
        self._check_open()
        if not self._started:
            raise _core.StateError("step() before reset(); expected reset() first")
        if not self.agents:
            raise _core.StateError("step() after the episode ended; expected reset() first")
        global_action = self._core.gather(actions, self.agents, None)
        pool = self._core.pool
        pool.step_all(global_action)
        infos = self._infos()
        reward, ctrl = self._core.rewards(infos, global_action, None)
        r = float(reward[0])
        terminated = bool(pool.terminations[0, 0])
        truncated = bool(pool.truncations[0, 0])
        info = self._core.info_dicts(infos[0], False, None if ctrl is None else ctrl[0])
        agents = self.possible_agents
        observations = self._per_agent_obs(self._values())
        if terminated or truncated:
            self.agents = []
        return (observations, {a: r for a in agents}, {a: terminated for a in agents},
                {a: truncated for a in agents}, {a: info for a in agents})

    def state(self) -> np.ndarray:
        self._check_open()
        return self._values()[0, self._core.state_slice].copy()

    # -- Farama's mapping functions ----------------------------------------------

    def map_local_actions_to_global_action(self, actions: dict[str, np.ndarray]) -> np.ndarray:
        out = np.full(self._core.f.act_dim, np.nan)
        for i, agent in enumerate(self.possible_agents):
            out[self._core.f.action_indices[i]] = np.asarray(actions[agent], dtype=np.float64)
        if np.isnan(out).any():
            raise ValueError("actions should give a value to every actuator")
        return out

    def map_global_action_to_local_actions(self, action: np.ndarray) -> dict[str, np.ndarray]:
        action = np.asarray(action)
        if action.shape != (self._core.f.act_dim,):
            raise ValueError(f"action should have shape ({self._core.f.act_dim},), got {action.shape}")
        return {a: action[idx] for a, idx in zip(self.possible_agents, self._core.f.action_indices)}

    def _check_mappable(self):
        if self.observation_factorization is None:
            raise ValueError("this factorization observes values that are not part of state(); "
                             "the observation mappings are unavailable")

    def map_global_state_to_local_observations(self, global_state: np.ndarray) -> dict[str, np.ndarray]:
        self._check_mappable()
        global_state = np.asarray(global_state)
        return {a: global_state[idx] for a, idx in self.observation_factorization.items()}

    def map_local_observations_to_global_state(self, local_observation: dict[str, np.ndarray]) -> np.ndarray:
        self._check_mappable()
        out = np.full(self._core.state_slice.stop - self._core.state_slice.start, np.nan)
        for agent, idx in self.observation_factorization.items():
            out[idx] = local_observation[agent]
        if np.isnan(out).any():
            raise ValueError("the agents' observations do not cover state(); it cannot be mapped back")
        return out

    # -- rendering / lifecycle ------------------------------------------------------

    def render(self):
        self._check_open()
        if self.render_mode is None:
            gymnasium.logger.warn("render() without a render_mode; set render_mode='rgb_array'")
            return None
        if self._renderer is None:
            self._renderer = rendering.renderer_for(_RenderTarget(self._core.pool), 480, 480)
        qpos, qvel = self._core.pool.get_state(0)
        if self.render_mode == "human":
            self._renderer.show(qpos, qvel)
            return None
        return self._renderer.render(qpos, qvel)

    def close(self) -> None:
        if self._renderer is not None:
            self._renderer.close()
            self._renderer = None
        if not self._closed:
            self._core.pool.close()
        self._closed = True

    @property
    def unwrapped(self):
        return self


class MaMuJoCoVecEnv(Reconstructible):
    """``num_envs`` MaMuJoCo worlds on the WorldPool (see :func:`vec_env`)."""

    metadata: ClassVar[dict[str, Any]] = {"name": "MaMuJoCo", "autoreset_mode": "next_step"}

    def __init__(self, scenario: str, agent_conf: str | None, num_envs: int, num_threads: int | None = None,
                 batch_size: int | None = None, agent_obsk: int | None = 1,
                 agent_factorization: dict[str, Any] | None = None,
                 local_categories: list[list[str]] | None = None,
                 global_categories: tuple[str, ...] | None = None, agent_observation: str = "local",
                 layout: str = "per_agent", **kwargs: Any):
        if layout not in LAYOUTS:
            raise ValueError(f"layout should be one of {LAYOUTS}, got {layout!r}")
        self._remember(scenario=scenario, agent_conf=agent_conf, num_envs=num_envs, num_threads=num_threads,
                       batch_size=batch_size, agent_obsk=agent_obsk, agent_factorization=agent_factorization,
                       local_categories=local_categories, global_categories=global_categories,
                       agent_observation=agent_observation, layout=layout, **kwargs)
        self._core = _Core(scenario, agent_conf, agent_obsk, agent_factorization, local_categories,
                           global_categories, kwargs, num_envs, num_threads, batch_size, agent_observation)
        self.layout = layout
        self.num_envs = self._core.pool.num_envs
        self.num_threads = self._core.pool.num_threads
        self.batch_size = self._core.pool.batch_size
        self.possible_agents = list(self._core.agents)
        self.agents = list(self.possible_agents)
        self.num_agents = len(self.possible_agents)
        self.max_episode_steps = self._core.max_episode_steps
        n = self.num_agents
        self.obs_dims = [s.stop - s.start for s in self._core.obs_slices]
        self.act_dims = list(self._core.act_dims)
        self.state_dim = self._core.state_slice.stop - self._core.state_slice.start
        # padded parameter-sharing layout: agent rows, obs padded + one-hot id
        self.padded_obs_dim = max(self.obs_dims) + n
        self.padded_act_dim = max(self.act_dims)
        self._pad_src = [np.arange(s.start, s.stop) for s in self._core.obs_slices]
        self._last_actions: np.ndarray | None = None
        self._started = False

    def observation_space(self, agent: str) -> gymnasium.spaces.Box:
        """One world's space of ``agent`` (as parallel_env's)."""
        return self._core.observation_spaces[agent]

    def action_space(self, agent: str) -> gymnasium.spaces.Box:
        return self._core.action_spaces[agent]

    @functools.cached_property
    def padded_observation_space(self) -> gymnasium.spaces.Box:
        return gymnasium.spaces.Box(-np.inf, np.inf, (self.padded_obs_dim,), np.float64)

    @functools.cached_property
    def padded_action_space(self) -> gymnasium.spaces.Box:
        sp = self._core.action_spaces[self.possible_agents[0]]
        return gymnasium.spaces.Box(float(sp.low[0]), float(sp.high[0]), (self.padded_act_dim,), np.float32)

    @property
    def pool(self):
        """The native MaMuJoCoPool."""
        return self._core.pool

    def _results(self, values, info_rows, actions, kinds, terms, truncs, elapsed):
        core = self._core
        stepped = kinds == int(_core.ResetKind.STEPPED)
        reward, ctrl = core.rewards(info_rows, actions, stepped)
        infos = {}
        for name, offset, size, at_reset in core.fields:
            col = info_rows[:, offset] if size == 1 else info_rows[:, offset:offset + size]
            infos[name] = col.copy()
        if ctrl is not None:
            columns = ctrl.reshape(len(stepped), -1)
            for k, name in enumerate(core.recipe.ctrl_fields):
                infos[name] = np.where(stepped, columns[:, k], 0.0)
        infos["_reset"] = ~stepped
        infos["elapsed_steps"] = elapsed.copy()
        term = terms[:, 0].copy()
        trunc = truncs[:, 0].copy()
        if self.layout == "padded":
            return (self._padded_obs(values), np.repeat(reward[:, None], self.num_agents, axis=1),
                    np.repeat(term[:, None], self.num_agents, axis=1),
                    np.repeat(trunc[:, None], self.num_agents, axis=1), infos)
        obs = core.observations(values)
        a = self.possible_agents
        return (obs, {x: reward.copy() for x in a}, {x: term.copy() for x in a},
                {x: trunc.copy() for x in a}, infos)

    def _padded_obs(self, values: np.ndarray) -> np.ndarray:
        rows, n = values.shape[0], self.num_agents
        out = np.zeros((rows, n, self.padded_obs_dim))
        width = self.padded_obs_dim - n
        for i, s in enumerate(self._core.obs_slices):
            out[:, i, :s.stop - s.start] = values[:, s]
            out[:, i, width + i] = 1.0
        return out

    def _global_actions(self, actions: Any, rows: int) -> np.ndarray:
        if self.layout == "padded":
            array = np.asarray(actions)
            shape = (rows, self.num_agents, self.padded_act_dim)
            if array.dtype.kind != "f":
                raise TypeError(f"actions should be a float array of shape {shape}, got dtype {array.dtype}")
            if array.shape != shape:
                raise ValueError(f"actions should have shape {shape} (worlds, agents, padded act_dim), "
                                 f"got {array.shape}")
            actions = {a: array[:, i, :d] for i, (a, d) in enumerate(zip(self.possible_agents, self.act_dims))}
        return self._core.gather(actions, self.possible_agents, rows)

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None):
        """Resets every world (world i seeded ``seed + i``); returns (obs, infos)."""
        self._check_open()
        pool = self._core.pool
        pool.reset_all(seed=seed)
        self._started = True
        obs, _, _, _, infos = self._results(pool.obs[:, 0, :], pool.infos[:, 0, :], None, pool.reset_kind,
                                            pool.terminations, pool.truncations, pool.elapsed_steps)
        return obs, infos

    def step(self, actions: Any):
        """actions: {agent: [num_envs, act_dim]} (or [num_envs, num_agents,
        padded act_dim] with layout="padded"). Returns (obs, rewards,
        terminations, truncations, infos); a world whose episode ended in the
        previous step is reset by this one (Gymnasium's NEXT_STEP autoreset)."""
        self._check_open()
        if not self._started:
            raise _core.StateError("step() before reset(); expected reset() first")
        g = self._global_actions(actions, self.num_envs)
        pool = self._core.pool
        pool.step_all(g)
        return self._results(pool.obs[:, 0, :], pool.infos[:, 0, :], g, pool.reset_kind, pool.terminations,
                             pool.truncations, pool.elapsed_steps)

    def state(self) -> np.ndarray:
        """[num_envs, state_dim] float64: each world's state()."""
        self._check_open()
        return self._core.pool.obs[:, 0, self._core.state_slice].copy()

    # -- asynchronous stepping --------------------------------------------------------

    def async_reset(self, seed: int | None = None) -> None:
        """Resets every world; the next recv() calls return them."""
        self._check_open()
        self._core.pool.async_reset(seed=seed)
        self._started = True
        self._pending = {}

    def send(self, actions: Any, env_ids: Any = None) -> None:
        """Queues one step of each world in ``env_ids`` (default: all), with
        actions of len(env_ids) rows; returns at once."""
        self._check_open()
        if not self._started:
            raise _core.StateError("send() before reset(); expected reset() or async_reset() first")
        ids = np.arange(self.num_envs) if env_ids is None else np.asarray(env_ids)
        g = self._global_actions(actions, len(ids))
        self._core.pool.send(g, ids)
        pending = getattr(self, "_pending", {})
        for k, i in enumerate(ids.tolist()):
            pending[i] = g[k]
        self._pending = pending

    def recv(self):
        """The first batch_size worlds to finish: (obs, rewards, terminations,
        truncations, infos, env_ids), rows in env_ids order."""
        self._check_open()
        pool = self._core.pool
        ids = pool.recv()[0].copy()
        pending = getattr(self, "_pending", {})
        kinds = pool.recv_reset_kind
        acts = np.zeros((len(ids), self._core.f.act_dim), dtype=np.float32)
        for k, i in enumerate(ids.tolist()):
            a = pending.pop(i, None)
            if a is not None:
                acts[k] = a
        return (*self._results(pool.recv_obs[:, 0, :], pool.recv_infos[:, 0, :], acts, kinds,
                               pool.recv_terminations, pool.recv_truncations, pool.recv_elapsed_steps), ids)

    def close(self) -> None:
        if not self._closed:
            self._core.pool.close()
        self._closed = True

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
