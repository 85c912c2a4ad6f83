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
import operator
import threading
from typing import Any, ClassVar

import gymnasium
import numpy as np
from pettingzoo.utils.env import ParallelEnv

from joltgym_marl import rendering
from joltgym_marl._lifecycle import Reconstructible, WrapperRandom
from joltgym_marl._native import core as _core
from joltgym_marl.mamujoco.assets import coupled_half_cheetah_path, many_segment_xml
from joltgym_marl.mamujoco.factorization import Factorization, exact_scenario, resolve
from joltgym_marl.mamujoco.rewards import RewardRecipe
from joltgym_marl.registry import TASKS

AGENT_OBSERVATIONS = ("local", "global_state")
LAYOUTS = ("per_agent", "padded")
_FLOAT32_MAX = float(np.finfo(np.float32).max)
_STEPPED = int(_core.ResetKind.STEPPED)


class _Core:
    """What parallel_env and vec_env share: the factorization, the native pool,
    and turning its buffers into MaMuJoCo's per-agent results."""

    def __init__(self, scenario, agent_conf, agent_obsk, agent_factorization, local_categories,
                 global_categories, kwargs, num_envs, num_threads, batch_size, agent_observation):
        if agent_observation not in AGENT_OBSERVATIONS:
            raise ValueError(f"agent_observation should be one of {AGENT_OBSERVATIONS}, got {agent_observation!r}")
        kwargs = dict(kwargs)
        scenario = exact_scenario(scenario)
        if isinstance(kwargs.get("engine"), str) and kwargs["engine"] == "jolt":
            # The per-agent plan reads MuJoCo's data (cfrc_ext, qfrc_actuator, ...) after each
            # MuJoCo step; validated and then stepped on MuJoCo all the same, it was silently exact.
            raise ValueError(f"MaMuJoCo ({scenario!r}) runs on engine='mujoco' only, got engine='jolt'; "
                             "expected engine='mujoco' (the default). The single-agent robots run on Jolt: "
                             "gymnasium.make('joltgym_marl/Ant-v0', engine='jolt')")
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
        elif isinstance(max_steps, (bool, np.bool_)) or not isinstance(max_steps, (int, np.integer)):
            # (int() would take 1.5 as 1 and "5" as 5)
            raise TypeError(f"max_episode_steps should be None or an int >= 1, got {max_steps!r:.100}")
        self.max_episode_steps = operator.index(max_steps)  # an exact int; the pool checks its range
        if self.max_episode_steps < 1:
            raise ValueError(f"max_episode_steps should be None or an int >= 1, got {self.max_episode_steps}")
        self.recipe = RewardRecipe(robot, self.f.robot_kwargs, self.f.agent_obsk is None)
        self.pool = _core.MaMuJoCoPool(robot, self.f.robot_kwargs, self.f.plan_ops, self.f.plan_bounds,
                                       num_envs=num_envs, num_threads=num_threads,
                                       max_episode_steps=self.max_episode_steps, batch_size=batch_size,
                                       reward=self.recipe.native())
        # Each world's values (its state() with them) as of its initial state, before any reset,
        # as Farama's state() answers then (the buffers held zeros).
        for i in range(self.pool.num_envs):
            self.pool.set_state(i, *self.pool.get_state(i))
        self.agent_observation = agent_observation
        self.fields = list(self.pool.info_fields)
        self.agents = list(self.f.possible_agents)
        self.state_slice = self.f.state_slice
        if agent_observation == "global_state":
            self.obs_slices = [self.state_slice] * len(self.agents)
        else:
            self.obs_slices = list(self.f.obs_slices)
        self.act_dims = [len(i) for i in self.f.action_indices]
        self._agent_keys = frozenset(self.agents)
        # Where each agent's action goes in the global one: a slice when its
        # actuators are consecutive (the usual case; cheaper than an index array).
        self._targets = []
        for agent, idx in zip(self.agents, self.f.action_indices):
            consecutive = len(idx) > 0 and np.array_equal(idx, np.arange(idx[0], idx[0] + len(idx)))
            self._targets.append((agent, slice(int(idx[0]), int(idx[0]) + len(idx)) if consecutive else idx,
                                  len(idx)))
        low, high = float(self.pool.action_low[0]), float(self.pool.action_high[0])
        self.action_spaces = {a: gymnasium.spaces.Box(low=low, high=high, shape=(d,), dtype=np.float32)
                              for a, d in zip(self.agents, self.act_dims)}
        self.observation_spaces = {
            a: gymnasium.spaces.Box(low=-np.inf, high=np.inf, shape=(s.stop - s.start,), dtype=np.float64)
            for a, s in zip(self.agents, self.obs_slices)}
        self.single = None  # the single-agent env of world 0, made on first use

    # -- the single-agent env (Farama's single_agent_env) --------------------------------

    def single_agent_env(self) -> gymnasium.Env:
        """World 0 as the scenario's Gymnasium env, its mjData the world's own
        (copied in now and after every later step and reset)."""
        if self.single is None:
            robot = self.f.robot
            if robot in TASKS:  # the -v5 drop-in: gymnasium.make("joltgym_marl/<Robot>-v0", **kwargs)
                self.single = gymnasium.make(TASKS[robot].env_id, max_episode_steps=self.max_episode_steps,
                                             disable_env_checker=True, **self.f.robot_kwargs)
            else:  # CoupledHalfCheetah: MaMuJoCo's own robot, with no Gymnasium env of its own
                self.single = _WorldMirror(self)
        self.sync_single_agent_env()
        return self.single

    def sync_single_agent_env(self) -> None:
        if self.single is not None:
            self.pool.copy_data_into(0, self.single.unwrapped.data)

    def close_single_agent_env(self) -> None:
        if self.single is not None:
            self.single.close()
            self.single = None

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
        """The [rows, act_dim] float32 global action of per-agent actions.
        Their values are checked where the pool copies them (finite, within
        float32's range): ``step``/``send`` name the agent of a bad one."""
        if not isinstance(actions, dict):
            raise TypeError(f"actions should be a dict of agent name -> action, got {type(actions).__name__}")
        if actions.keys() != self._agent_keys:
            unknown = [a for a in actions if a not in self._agent_keys]
            if unknown:
                raise KeyError(f"unknown agent(s) {unknown} in actions; expected agents {agents}")
            missing = [a for a in agents if a not in actions]
            raise KeyError(f"actions are missing agent(s) {missing}; expected one action for each of {agents}")
        n = 1 if rows is None else rows
        out = np.empty((n, self.f.act_dim), dtype=np.float32)
        try:  # the fast path: float arrays of the right shapes
            for agent, target, dim in self._targets:
                a = actions[agent]
                if a.dtype.kind != "f" or a.shape != ((dim,) if rows is None else (rows, dim)):
                    raise TypeError
                if a.dtype == np.float32:
                    out[:, target] = a
                else:  # (a value beyond float32's range becomes inf, refused natively)
                    with np.errstate(over="ignore", invalid="ignore"):
                        out[:, target] = a
            return out
        except (AttributeError, TypeError, ValueError):
            pass
        self.name_bad_action(actions, rows)
        for (agent, target, _), a in zip(self._targets, (actions[x] for x in self.agents)):
            out[:, target] = self.check_action(agent, a, rows)
        return out

    def name_bad_action(self, actions: dict[str, Any], rows: int | None) -> None:
        """Raises the TypeError / ValueError naming the first bad action, if one is."""
        for agent in self.agents:
            self.check_action(agent, actions[agent], rows)

    def apply(self, call, actions: dict[str, Any], agents: list[str], rows: int | None) -> np.ndarray:
        """``call(global_action)`` (the pool's step_all or send) on the gathered
        actions; a value the pool refuses is named by its agent."""
        g = self.gather(actions, agents, rows)
        try:
            call(g)
        except ValueError:
            self.name_bad_action(actions, rows)
            raise
        return g

    def observations(self, values: np.ndarray) -> dict[str, np.ndarray]:
        """values: [rows, plan width] -> {agent: [rows, obs_dim]} (copies)."""
        return {a: values[:, s].copy() for a, s in zip(self.agents, self.obs_slices)}

    def info_dicts(self, info_row: np.ndarray, reset: bool) -> dict[str, Any]:
        """One world's info dict (the reset one: the fields written at reset)."""
        out = {}
        for name, offset, size, at_reset in self.fields:
            if reset and not at_reset:
                continue
            out[name] = np.float64(info_row[offset]) if size == 1 else info_row[offset:offset + size].copy()
        return out


# The keywords of a -v5 env's renderer (MujocoEnv's), with v5's defaults.
RENDER_KEYWORDS = {"width": 480, "height": 480, "camera_id": None, "camera_name": None,
                   "default_camera_config": "v5", "max_geom": 1000, "visual_options": None}


def _render_options(robot: str, given: dict[str, Any]) -> dict[str, Any]:
    """The renderer's options: v5's defaults for `robot` where not given,
    checked now (a bad size is refused here, not at the first render())."""
    from joltgym_marl.envs.mujoco_env import v5_camera_config

    options = {**RENDER_KEYWORDS, **given}
    options["width"], options["height"] = rendering.check_render_size(options["width"], options["height"], 1, 16384)
    config = options["default_camera_config"]
    if isinstance(config, str):
        if config != "v5":
            raise ValueError(f"default_camera_config should be a dict or None, got {config!r:.100}")
        options["default_camera_config"] = v5_camera_config(robot)
    elif config is not None and not isinstance(config, dict):
        raise TypeError(f"default_camera_config should be a dict or None, got {config!r:.100}")
    max_geom = options["max_geom"]
    if isinstance(max_geom, (bool, np.bool_)) or not isinstance(max_geom, (int, np.integer)) or max_geom < 1:
        raise ValueError(f"max_geom should be an int >= 1, got {max_geom!r:.100}")
    rendering.check_camera_kind(options["camera_id"], options["camera_name"])
    return options


class _V5Renderer:
    """World 0 of a pool drawn by Gymnasium's MujocoRenderer, as the -v5 env
    that Farama's MaMuJoCo wraps draws itself: a MuJoCo model of the world
    and an MjData that receives a copy of the world's whole mjData before each
    frame (as the last step left it: its bodies' poses are those mj_step
    computed, which a mj_forward of qpos would not reproduce)."""

    def __init__(self, pool, options: dict[str, Any]):
        rendering.prefer_headless_gl()
        import mujoco
        from gymnasium.envs.mujoco.mujoco_rendering import MujocoRenderer

        self.model = rendering.model_from_mjb(mujoco, pool.model_mjb())
        self.model.vis.global_.offwidth = options["width"]
        self.model.vis.global_.offheight = options["height"]
        self.data = mujoco.MjData(self.model)
        self._pool = pool
        rendering.check_camera(self.model, options["camera_id"], options["camera_name"])
        self._renderer = MujocoRenderer(self.model, self.data, options["default_camera_config"],
                                        options["width"], options["height"], options["max_geom"],
                                        options["camera_id"], options["camera_name"],
                                        options["visual_options"] or {})

    def render(self, mode: str):
        self._pool.copy_data_into(0, self.data)
        # MujocoRenderer makes its context current only on the thread that
        # made it; a frame may be asked for on any thread (one at a time, under
        # the env's lock), so the context is made current here and released after.
        self._renderer._get_viewer(mode).make_context_current()
        try:
            return self._renderer.render(mode)
        finally:
            if mode != "human":
                rendering.release_gl_context()

    def close(self) -> None:
        self._renderer.close()


class _WorldMirror(gymnasium.Env):
    """World 0 of a robot that has no Gymnasium env (CoupledHalfCheetah), as
    much of one as reads it: its MuJoCo ``model`` and ``data`` (world 0's
    mjData), spaces, ``dt`` and ``_get_obs()`` (the state). Stepping it is
    refused: the MaMuJoCo env steps the world."""

    def __init__(self, core: _Core):
        import mujoco

        self.model = rendering.model_from_mjb(mujoco, core.pool.model_mjb())
        self.data = mujoco.MjData(self.model)
        self._core = core
        s = core.state_slice
        self.observation_space = gymnasium.spaces.Box(-np.inf, np.inf, (s.stop - s.start,), np.float64)
        self.action_space = gymnasium.spaces.Box(float(core.pool.action_low[0]), float(core.pool.action_high[0]),
                                                 (core.f.act_dim,), np.float32)
        self.dt = core.pool.dt

    def _get_obs(self) -> np.ndarray:
        return self._core.pool.obs[0, 0, self._core.state_slice].copy()

    def step(self, action):
        raise NotImplementedError("this is a view of the MaMuJoCo world; step the MaMuJoCo env instead")

    def reset(self, *, seed=None, options=None):
        raise NotImplementedError("this is a view of the MaMuJoCo world; reset the MaMuJoCo env instead")


class MaMuJoCoParallelEnv(Reconstructible, WrapperRandom, ParallelEnv):
    """Farama's MaMuJoCo ``parallel_env`` (``gymnasium_robotics.mamujoco_v1``),
    natively: the same signature, agents, spaces, observations (float64),
    rewards, ``state()``, mapping functions and metadata.

    ``agent_observation="global_state"`` gives every agent ``state()`` as its
    observation (HARL's default) instead of MaMuJoCo's local k-hop one.
    Keyword arguments go to the robot, as to Gymnasium's ``-v5`` env (and
    ``max_episode_steps``, as to ``gymnasium.make``). After the episode
    ended, ``step({})`` returns empty dicts (as PettingZoo's envs do) and a
    step with actions raises (call ``reset()``).
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
        # The robot's rendering keywords, as its -v5 env takes them (Farama's
        # env passes **kwargs to gymnasium.make): frames are drawn as v5 draws them.
        render_options = {name: kwargs.pop(name) for name in RENDER_KEYWORDS if name in kwargs}
        self._core = _Core(scenario, agent_conf, agent_obsk, agent_factorization, local_categories,
                           global_categories, kwargs, 1, 1, None, agent_observation)
        self._render_options = _render_options(self._core.f.robot, render_options)
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
        self._render_lock = threading.Lock()
        self._started = False
        self._seeded = False

    def observation_space(self, agent: str) -> gymnasium.spaces.Box:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> gymnasium.spaces.Box:
        return self.action_spaces[agent]

    @property
    def dt(self) -> float:
        return self._core.pool.dt

    @property
    def single_agent_env(self) -> gymnasium.Env:
        """The scenario's robot as a Gymnasium env (Farama's ``single_agent_env``):
        ``gymnasium.make("joltgym_marl/<Robot>-v0", **robot_kwargs)``, the -v5
        drop-in, made on first use. Its ``unwrapped.model`` and
        ``unwrapped.data`` are real MuJoCo objects holding this world's state:
        world's mjData is copied into it now and after every later step and
        reset. Stepping it steps a copy, not this env's world."""
        self._check_open()
        return self._core.single_agent_env()

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
            self._seed_wrapper_random(seed)
        self._started = True
        self.agents = list(self.possible_agents)
        self._core.sync_single_agent_env()
        info = self._core.info_dicts(self._infos()[0], True)
        return self._per_agent_obs(self._values()), {a: info for a in self.possible_agents}

    def _per_agent_obs(self, values: np.ndarray) -> dict[str, np.ndarray]:
        return {a: o[0] for a, o in self._core.observations(values).items()}

    def step(self, actions: dict[str, Any]):
        self._check_open()
        if not self._started:
            raise _core.StateError("step() before reset(); expected reset() first")
        if not self.agents:
            if isinstance(actions, dict) and not actions:  # as PettingZoo's envs answer an empty step
                return {}, {}, {}, {}, {}
            raise _core.StateError("step() after the episode ended; expected reset() first")
        pool = self._core.pool
        self._core.apply(pool.step_all, actions, self.agents, None)
        r = float(pool.rewards[0, 0])
        terminated = bool(pool.terminations[0, 0])
        truncated = bool(pool.truncations[0, 0])
        info = self._core.info_dicts(self._infos()[0], False)
        if pool.unstable[0]:  # a blow-up truncates the episode; say why (Farama's has no such end)
            info["physics_unstable"] = True
        self._core.sync_single_agent_env()
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

    def _check_agents(self, values: Any, what: str) -> None:
        if not isinstance(values, dict):
            raise TypeError(f"{what} should be a dict of agent name -> array, got {type(values).__name__}")
        missing = [a for a in self.possible_agents if a not in values]
        unknown = [a for a in values if a not in self.possible_agents]
        if missing or unknown:
            raise KeyError(f"{what} should have one entry per agent of {self.possible_agents}; missing "
                           f"{missing}, unknown {unknown}")

    def map_local_actions_to_global_action(self, actions: dict[str, np.ndarray]) -> np.ndarray:
        self._check_agents(actions, "actions")
        out = np.empty(self._core.f.act_dim)
        for i, agent in enumerate(self.possible_agents):
            idx = self._core.f.action_indices[i]
            try:
                value = np.asarray(actions[agent], dtype=np.float64)
            except (TypeError, ValueError) as error:
                raise TypeError(f"action of {agent} should be an array of numbers, got "
                                f"{type(actions[agent]).__name__} {actions[agent]!r:.100} ({error})") from None
            if value.shape != idx.shape:
                raise ValueError(f"action of {agent} should have shape {idx.shape}, got {value.shape}")
            out[idx] = value
        return out

    def map_global_action_to_local_actions(self, action: np.ndarray) -> dict[str, np.ndarray]:
        action = np.asarray(action)
        if action.shape != (self._core.f.act_dim,):
            raise ValueError(f"action should have shape ({self._core.f.act_dim},), got {action.shape}")
        return {a: action[idx] for a, idx in zip(self.possible_agents, self._core.f.action_indices)}

    def map_global_state_to_local_observations(self, global_state: np.ndarray) -> dict[str, np.ndarray]:
        """Each agent's observation in the state ``global_state`` (a ``state()``),
        right in every state: a value the state clips and the agent observes raw
        (Walker2d's joint velocities) is NaN when the state holds it at a clip
        bound, and so is a value the state leaves out (ManySegmentAnt's free
        joint x, y); every other value is the observation's (Farama's indexing
        gives the clipped value, or another one, instead)."""
        global_state = np.asarray(global_state)
        if global_state.shape != self.state_space.shape:
            raise ValueError(f"global_state should have shape {self.state_space.shape}, got {global_state.shape}")
        return self._core.f.mapping.to_local(global_state)

    def map_local_observations_to_global_state(self, local_observation: dict[str, np.ndarray]) -> np.ndarray:
        """The ``state()`` the agents' observations ``local_observation`` were made
        in: each state value from an agent's observation of it (clipped as the
        state clips it), NaN where they do not determine it. ValueError when the
        agents do not observe every value of the state (the ManySegment
        scenarios)."""
        self._check_agents(local_observation, "local_observation")
        values = {}
        for agent in self.possible_agents:
            value = np.asarray(local_observation[agent], dtype=np.float64)
            shape = self.observation_spaces[agent].shape
            if self._core.agent_observation == "global_state":
                shape = (self._core.f.mapping.local_dims[agent],)
            if value.shape != shape:
                raise ValueError(f"observation of {agent} should have shape {shape}, got {value.shape}")
            values[agent] = value
        return self._core.f.mapping.to_state(values)

    def _get_obs(self) -> dict[str, np.ndarray]:
        """Every agent's observation of the current state (Farama's ``_get_obs``)."""
        self._check_open()
        return self._per_agent_obs(self._values())

    @property
    def agent_action_partitions(self) -> list[tuple] | None:
        """Per agent, its joints (Farama's ``agent_action_partitions``; each
        joint's repr is its label); None without a factorization."""
        return self._core.f.partitions

    @property
    def mujoco_globals(self) -> list:
        """The global joints every agent observes (Farama's ``mujoco_globals``)."""
        return self._core.f.global_joints

    def _get_obs_agent(self, agent_id: int, data: Any = None) -> np.ndarray:
        """Agent ``agent_id``'s current observation (Farama's ``_get_obs_agent``;
        ``data`` other than None is refused: observations are built natively)."""
        if data is not None:
            raise ValueError("data should be None (observations are built natively from the world's state)")
        agent = self.possible_agents[operator.index(agent_id)]
        return self._get_obs()[agent]

    @property
    def k_dicts(self) -> list[dict[int, list]] | None:
        """Per agent, the joints at each graph distance 0..agent_obsk from its
        own (Farama's ``k_dicts``; each joint's repr is its label); None without
        a factorization (agent_conf=None)."""
        return self._core.f.k_dicts

    # -- rendering / lifecycle ------------------------------------------------------

    def render(self):
        self._check_open()
        if self.render_mode is None:
            gymnasium.logger.warn("render() without a render_mode; set render_mode='rgb_array'")
            return None
        # One frame at a time, from any thread: two threads' first render()
        # would make two renderers, and a close() meanwhile would drop it.
        with self._render_lock:
            self._check_open()
            if self.render_mode == "human" and not rendering.has_display():
                raise RuntimeError(rendering.NO_DISPLAY)
            if self._renderer is None:
                self._renderer = _V5Renderer(self._core.pool, self._render_options)
            return self._renderer.render(self.render_mode)

    def close(self) -> None:
        lock = getattr(self, "_render_lock", None)  # (absent if the constructor raised early)
        if lock is None:
            return
        with lock:
            if self._renderer is not None:
                self._renderer.close()
                self._renderer = None
            if not self._closed:
                self._core.close_single_agent_env()
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

    @property
    def single_agent_env(self) -> gymnasium.Env:
        """World 0 as the scenario's Gymnasium env (see
        ``MaMuJoCoParallelEnv.single_agent_env``): its mjData is world 0's,
        copied in now and after every later step and reset (not by
        ``recv``: world 0 may be in flight)."""
        self._check_open()
        return self._core.single_agent_env()

    def _results(self, values, info_rows, rewards, kinds, terms, truncs, elapsed, stepping=True, unstable=None):
        # Few NumPy calls per step (their fixed cost, not the copies, is what a
        # step of 64 worlds spends here): the info block is copied once and
        # each field is a view of that copy; each agent's rewards,
        # terminations and truncations are a row of one repeated block (rows
        # of their own: writing one agent's leaves the others').
        core = self._core
        stepped = kinds == _STEPPED
        all_stepped = bool(stepped.all())
        reward = rewards[:, 0] if stepping else np.zeros(len(kinds))  # (0 for the worlds reset)
        block = info_rows.copy()
        infos = {name: block[:, offset] if size == 1 else block[:, offset:offset + size]
                 for name, offset, size, _ in core.fields}
        if stepping:  # the control costs: -v5's dtype, 0 for the worlds reset
            for name in core.recipe.ctrl_fields:
                column = infos[name].astype(core.recipe.ctrl_dtype)
                infos[name] = column if all_stepped else np.where(stepped, column, column.dtype.type(0))
        infos["_reset"] = ~stepped
        infos["elapsed_steps"] = elapsed.copy()
        if unstable is not None and unstable.any():  # the worlds a blow-up truncated, as the vector envs say
            infos["physics_unstable"] = unstable.copy()
            infos["_physics_unstable"] = unstable.copy()
        n = self.num_agents
        if self.layout == "padded":
            return (self._padded_obs(values), np.repeat(reward[:, None], n, axis=1),
                    np.repeat(terms[:, :1], n, axis=1), np.repeat(truncs[:, :1], n, axis=1), infos)
        a = self.possible_agents
        return (core.observations(values), dict(zip(a, np.repeat(reward[None, :], n, axis=0))),
                dict(zip(a, np.repeat(terms[None, :, 0], n, axis=0))),
                dict(zip(a, np.repeat(truncs[None, :, 0], n, axis=0))), infos)

    def _padded_obs(self, values: np.ndarray) -> np.ndarray:
        rows, n = values.shape[0], self.num_agents
        out = np.zeros((rows, n, self.padded_obs_dim))
        width = self.padded_obs_dim - n
        for i, s in enumerate(self._core.obs_slices):
            out[:, i, :s.stop - s.start] = values[:, s]
            out[:, i, width + i] = 1.0
        return out

    def _apply(self, call, actions: Any, rows: int) -> np.ndarray:
        """``call`` (the pool's step_all or send) on the global action of ``actions``."""
        if self.layout == "padded":
            array = np.asarray(actions)
            shape = (rows, self.num_agents, self.padded_act_dim)
            if array.dtype.kind != "f":
                raise TypeError(f"actions should be a float array of shape {shape}, got dtype {array.dtype}")
            if array.shape != shape:
                raise ValueError(f"actions should have shape {shape} (worlds, agents, padded act_dim), "
                                 f"got {array.shape}")
            actions = {a: array[:, i, :d] for i, (a, d) in enumerate(zip(self.possible_agents, self.act_dims))}
        return self._core.apply(call, actions, self.possible_agents, rows)

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None):
        """Resets every world (world i seeded ``seed + i``); returns (obs, infos)."""
        self._check_open()
        pool = self._core.pool
        pool.reset_all(seed=seed)
        self._started = True
        self._core.sync_single_agent_env()
        obs, _, _, _, infos = self._results(pool.obs[:, 0, :], pool.infos[:, 0, :], pool.rewards, pool.reset_kind,
                                            pool.terminations, pool.truncations, pool.elapsed_steps, False)
        return obs, infos

    def step(self, actions: Any):
        """actions: {agent: [num_envs, act_dim]} (or [num_envs, num_agents,
        padded act_dim] with layout="padded"). Returns (obs, rewards,
        terminations, truncations, infos); a world whose episode ended in the
        previous step is reset by this one (Gymnasium's NEXT_STEP autoreset)."""
        self._check_open()
        if not self._started:
            raise _core.StateError("step() before reset(); expected reset() first")
        pool = self._core.pool
        self._apply(pool.step_all, actions, self.num_envs)
        self._core.sync_single_agent_env()
        return self._results(pool.obs[:, 0, :], pool.infos[:, 0, :], pool.rewards, pool.reset_kind,
                             pool.terminations, pool.truncations, pool.elapsed_steps, unstable=pool.unstable)

    def state(self) -> np.ndarray:
        """[num_envs, state_dim] float64: each world's state()."""
        self._check_open()
        pool = self._core.pool
        if pool.in_flight:
            # The worker threads are writing those rows (pool.get_state() refuses them too).
            raise _core.StateError(f"state() called while {pool.in_flight} world(s) are in flight (sent, not "
                                   "yet received); expected recv() first")
        return pool.obs[:, 0, self._core.state_slice].copy()

    # -- asynchronous stepping --------------------------------------------------------

    def async_reset(self, seed: int | None = None) -> None:
        """Resets every world; the next recv() calls return them."""
        self._check_open()
        self._core.pool.async_reset(seed=seed)
        self._started = True

    def send(self, actions: Any, env_ids: Any = None) -> None:
        """Queues one step of each world in ``env_ids`` (default: all), with
        actions of len(env_ids) rows; returns at once."""
        self._check_open()
        if not self._started:
            raise _core.StateError("send() before reset(); expected reset() or async_reset() first")
        ids = np.arange(self.num_envs) if env_ids is None else np.asarray(env_ids)
        if ids.ndim != 1:  # (len() of a 0-d array would raise its own TypeError)
            raise TypeError(f"env_ids should be a 1-D sequence of ints in [0, {self.num_envs}), got "
                            f"{env_ids!r:.100}")
        pool = self._core.pool
        self._apply(lambda x: pool.send(x, ids), actions, len(ids))

    def recv(self):
        """The first batch_size worlds to finish: (obs, rewards, terminations,
        truncations, infos, env_ids), rows in env_ids order."""
        self._check_open()
        pool = self._core.pool
        ids = pool.recv()[0].copy()
        return (*self._results(pool.recv_obs[:, 0, :], pool.recv_infos[:, 0, :], pool.recv_rewards,
                               pool.recv_reset_kind, pool.recv_terminations, pool.recv_truncations,
                               pool.recv_elapsed_steps, unstable=pool.recv_unstable), ids)

    def close(self) -> None:
        if not self._closed:
            self._core.close_single_agent_env()
            self._core.pool.close()
        self._closed = True

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
