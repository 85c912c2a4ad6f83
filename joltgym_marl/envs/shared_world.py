"""The PettingZoo ``ParallelEnv`` over a native shared world (``MultiAgentEnv``)."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces
from pettingzoo import ParallelEnv
from pettingzoo.utils.conversions import parallel_to_aec_wrapper

from joltgym_marl import rendering
from joltgym_marl._lifecycle import Reconstructible, WrapperRandom
from joltgym_marl._native import core as _core

_FLOAT32_MAX = float(np.finfo(np.float32).max)


def step_only_columns(decoder) -> np.ndarray:
    """The info row's columns that only a step writes (the reward terms,
    velocities): a game's reset infos carry them as 0, so that reset and step
    infos have the same keys (TorchRL builds its info spec from reset()'s)."""
    return np.array([c for _, offset, size, at_reset, *_ in decoder.fields if not at_reset
                     for c in range(offset, offset + size)], dtype=np.intp)


class SharedWorldEnv(Reconstructible, WrapperRandom, ParallelEnv):
    """Several robots in one native MuJoCo world, as a PettingZoo ``ParallelEnv``.

    One subclass per registered game is derived in :mod:`joltgym_marl.envs`
    (``game``, ``agent_prefix``, ``metadata``). All agents share one observation space and one action space
    (the same objects for every agent and every call), and an episode ends for
    all agents together, as SuperSuit's vectorization expects.
    """

    game: ClassVar[str] = ""
    agent_prefix: ClassVar[str] = "agent"
    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["rgb_array", "human"], "is_parallelizable": True}

    def __init__(self, max_cycles: int = 1000, render_mode: str | None = None, width: int = 640,
                 height: int = 480, **kwargs: Any):
        self._renderer = None
        # render_mode="human" is taken without a display (PettingZoo's render_test
        # constructs every env so, to read its render_modes); render() refuses it.
        rendering.check_render_mode(render_mode)
        self.render_mode = render_mode
        self.width, self.height = rendering.check_render_size(width, height)
        self._remember(max_cycles=max_cycles, render_mode=render_mode, width=width, height=height, **kwargs)
        self._world = _core.MultiAgentEnv(self.game, max_cycles=max_cycles, **kwargs)
        world = self._world
        self.max_cycles = max_cycles
        # A game whose parameters choose its agents' names (sumo_v0's robot) says so.
        self.agent_prefix = world.agent_prefix or type(self).agent_prefix
        # Games with roles name each agent (you_shall_not_pass_v0: walker_0, blocker_0).
        self.possible_agents = list(world.agent_names) or [f"{self.agent_prefix}_{i}"
                                                            for i in range(world.num_agents)]
        self.agents: list[str] = []
        self._index = {name: i for i, name in enumerate(self.possible_agents)}
        self.metadata = {**type(self).metadata, "render_modes": rendering.available_render_modes(),
                         "render_fps": int(np.round(1.0 / world.dt))}
        obs_space = spaces.Box(-np.inf, np.inf, shape=(world.obs_dim,), dtype=np.float32)
        act_space = spaces.Box(world.action_low, world.action_high, dtype=np.float32)
        self.observation_spaces = {agent: obs_space for agent in self.possible_agents}
        self.action_spaces = {agent: act_space for agent in self.possible_agents}
        self.state_space = spaces.Box(-np.inf, np.inf, shape=(world.state_dim,), dtype=np.float32)
        self._decoder = world.info_decoder
        self._step_only_columns = step_only_columns(self._decoder)
        self._episode_options = frozenset(world.episode_options)
        self._act_dim = world.act_dim
        self._closed = False
        self._started = False  # reset() has been called

    # -- PettingZoo API ------------------------------------------------------------

    def observation_space(self, agent: str) -> spaces.Box:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Box:
        return self.action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None):
        """Starts an episode. ``options`` may set the game's episode options
        (``self.world.episode_options``, e.g. sumo's ``shaping_weight``); they
        stay in effect for later episodes until set again. Other keys are
        ignored, as PettingZoo's API test expects of an env."""
        self._check_open()
        if options is not None and not isinstance(options, dict):
            raise TypeError(f"options should be a dict or None, got {type(options).__name__}")
        known = {k: v for k, v in (options or {}).items() if k in self._episode_options}
        obs, rows = self._world.reset(seed=seed, options=known or None)
        self.agents = list(self.possible_agents)
        self._started = True
        if seed is not None or self._np_random is None:
            self._seed_wrapper_random(seed)
        return self._per_agent(obs), self._infos(rows, reset=True)

    def step(self, actions: dict[str, Any]):
        self._check_open()
        if not self.agents:
            # After the episode ended, an empty step answers with empty dicts, as
            # PettingZoo's own envs and conversions do (SuperSuit's black_death
            # steps so once the last agent is done).
            if self._started and isinstance(actions, dict) and not actions:
                return {}, {}, {}, {}, {}
            raise RuntimeError("step() called with no live agents; expected reset() first "
                               "(the episode has ended or never started)")
        staged = self._gather(actions)
        obs, rewards, terminations, truncations, rows, unstable = self._world.step(staged)
        agents = self.agents
        observations = self._per_agent(obs)
        infos = self._infos(rows, reset=False)
        if unstable:
            for agent in agents:
                infos[agent]["physics_unstable"] = True
        reward_dict = {a: float(rewards[i]) for i, a in enumerate(agents)}
        term_dict = {a: bool(terminations[i]) for i, a in enumerate(agents)}
        trunc_dict = {a: bool(truncations[i]) for i, a in enumerate(agents)}
        if terminations.any() or truncations.any():
            self.agents = []
        return observations, reward_dict, term_dict, trunc_dict, infos

    def state(self) -> np.ndarray:
        self._check_open()
        return self._world.state()

    def render(self):
        """An RGB frame of the world (``render_mode="rgb_array"``; agents coloured
        distinctly, the camera following the game), or a viewer update (``"human"``)."""
        self._check_open()
        if self.render_mode is None:
            name = self.metadata.get("name", type(self).__name__)
            rendering.warn_no_render_mode(f'{name}.parallel_env(render_mode="rgb_array") '
                                          f'(or {name}.env(render_mode="rgb_array"))')
            return None
        renderer = rendering.lazy_renderer(self, lambda: rendering.renderer_for(
            self._world, self.width, self.height, agent_prefix=self.agent_prefix))
        qpos, qvel = self._world.get_state()
        if self.render_mode == "human":
            renderer.show(qpos, qvel)
            return None
        return renderer.render(qpos, qvel)

    def close(self) -> None:
        if self._renderer is not None:
            self._renderer.close()
            self._renderer = None
        self._closed = True

    # -- helpers -----------------------------------------------------------------

    @property
    def world(self):
        """The native ``MultiAgentEnv`` behind this env."""
        return self._world

    def _gather(self, actions: dict[str, Any]) -> np.ndarray:
        """The ``(num_agents, act_dim)`` float32 array of a parallel step's actions.

        Every action is validated (:meth:`check_action`) before any is staged,
        into a new array: a rejected step keeps nothing of its actions."""
        if not isinstance(actions, dict):
            raise TypeError(f"actions should be a dict of agent name -> action, got {type(actions).__name__}")
        unknown = [a for a in actions if a not in self._index]
        if unknown:
            raise KeyError(f"unknown agent(s) {unknown} in actions; expected agents {self.agents}")
        missing = [a for a in self.agents if a not in actions]
        if missing:
            raise KeyError(f"actions are missing agent(s) {missing}; expected one action for each of {self.agents}")
        # In agent order, so that the first bad agent is the one reported.
        checked = [(self._index[a], self.check_action(a, actions[a])) for a in self.possible_agents if a in actions]
        staged = np.zeros((len(self.possible_agents), self._act_dim), dtype=np.float32)
        for row, action in checked:
            staged[row] = action
        return staged

    def check_action(self, agent: str, action: Any) -> np.ndarray:
        """``action`` of ``agent`` as a new float32 array of shape ``(act_dim,)``, or
        ``TypeError`` (not a floating-point array) / ``ValueError`` (wrong shape, a
        NaN or infinite value, or a finite value beyond float32's range) naming the
        agent and the bad value. The AEC env checks each action when it is given,
        before PettingZoo's wrapper stores it for the end of the cycle."""
        try:
            array = np.asarray(action)
        except (TypeError, ValueError):  # ragged nested lists, objects NumPy cannot read
            raise TypeError(f"action of {agent} should be a float32 array of shape ({self._act_dim},), "
                            f"got {type(action).__name__}") from None
        if array.dtype.kind != "f":
            raise TypeError(f"action of {agent} should have a floating-point dtype (float32 or float64), "
                            f"got {array.dtype}")
        if array.shape != (self._act_dim,):
            raise ValueError(f"action of {agent} should have shape ({self._act_dim},), got {array.shape}")
        finite = np.isfinite(array)
        # Compared in the given precision: no cast (and no overflow warning) before the check.
        in_range = finite & (np.abs(np.where(finite, array, 0)) <= _FLOAT32_MAX)
        if not in_range.all():
            index = int(np.flatnonzero(~in_range)[0])
            beyond = " (out of float32 range)" if finite[index] else ""
            raise ValueError(f"action of {agent} should be finite, got {float(array[index]):g} at index "
                             f"({index},){beyond}")
        return array.astype(np.float32)  # always a copy: a later change to `action` does not reach the world

    def _per_agent(self, obs: np.ndarray) -> dict[str, np.ndarray]:
        return {agent: obs[i] for i, agent in enumerate(self.possible_agents)}

    def _infos(self, rows: np.ndarray, reset: bool) -> dict[str, dict[str, Any]]:
        # Reset infos carry every key step infos carry (TorchRL builds its info
        # spec from reset()'s): the step-only fields (reward terms, velocities)
        # read 0 before the first step.
        if reset:
            rows = rows.copy()
            rows[:, self._step_only_columns] = 0.0
        return dict(zip(self.possible_agents, self._decoder.rows(rows, reset=False)))


class SharedWorldAECEnv(parallel_to_aec_wrapper):
    """PettingZoo's AEC conversion of a :class:`SharedWorldEnv` (``raw_env``; ``env``
    adds PettingZoo's order-enforcing wrapper), checking each action when it is given.

    PettingZoo's ``parallel_to_aec_wrapper`` stores each agent's action and
    calls the parallel ``step`` when the cycle's last agent has acted. A bad
    action is rejected here, by the call that gives it (the ``TypeError`` /
    ``ValueError`` of :meth:`SharedWorldEnv.check_action`, naming the agent and
    the value), before it is stored: the same agent is still to act, nothing
    of the bad value is kept, and the next good actions proceed normally.
    """

    def step(self, action: Any) -> None:
        agent = self.agent_selection
        if not (self.terminations[agent] or self.truncations[agent]):
            action = self.env.check_action(agent, action)
        super().step(action)
