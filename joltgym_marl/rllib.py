"""Ray RLlib (new API stack) for every registered game.

Importing this module registers each game of the native registry with RLlib
under ``"joltgym_marl/<game>_v0"`` (e.g. ``"joltgym_marl/cheetah_race_v0"``),
so an RLlib config needs only that name::

    import joltgym_marl.rllib  # registers the games
    from ray.rllib.algorithms.ppo import PPOConfig

    config = PPOConfig().environment("joltgym_marl/cheetah_race_v0", env_config={"max_cycles": 200})

Two ways to run the worlds on RLlib's env runners:

* **one world per env** (RLlib's default ``MultiAgentEnvRunner``): each env is
  a :class:`GameEnv`, an RLlib ``MultiAgentEnv`` over one native shared world;
  ``num_envs_per_env_runner`` copies are stepped one after the other by
  RLlib's ``SyncVectorMultiAgentEnv``;
* **batched** (``env_runner_cls=WorldPoolEnvRunner``): each env runner steps
  all its ``num_envs_per_env_runner`` worlds at once in one native
  :class:`~joltgym_marl.WorldPool` (:class:`WorldPoolMultiAgentEnv`), on
  ``env_config["num_threads"]`` native threads (default: the env runner's
  ``num_cpus_per_env_runner``), with the GIL released.

Both give RLlib the same thing: per-world dicts keyed by agent name, the game's
per-agent spaces, ``"__all__"`` flags, and the game's info keys. World ``i`` of
env runner ``k`` is seeded ``seed + i`` when RLlib passes a seed.

``env_config`` holds the game's keyword arguments (those of
``<game>_v0.parallel_env``) plus ``max_cycles`` and, for the batched runner,
``num_threads``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from gymnasium import spaces

try:
    from ray.rllib.callbacks.utils import make_callback
    from ray.rllib.core.columns import Columns
    from ray.rllib.env.multi_agent_env import MultiAgentEnv
    from ray.rllib.env.multi_agent_env_runner import MultiAgentEnvRunner
    from ray.rllib.env.vector.vector_multi_agent_env import VectorMultiAgentEnv
    from ray.rllib.utils.metrics import (
        NUM_AGENT_STEPS_SAMPLED,
        NUM_AGENT_STEPS_SAMPLED_LIFETIME,
        NUM_ENV_STEPS_SAMPLED,
        NUM_ENV_STEPS_SAMPLED_LIFETIME,
        NUM_EPISODES,
        NUM_EPISODES_LIFETIME,
        NUM_MODULE_STEPS_SAMPLED,
        NUM_MODULE_STEPS_SAMPLED_LIFETIME,
        WEIGHTS_SEQ_NO,
    )
    from ray.rllib.utils.spaces.space_utils import clip_action, unsquash_action
    from ray.tune.registry import register_env
except ImportError as error:  # pragma: no cover - depends on the environment
    raise ImportError(
        "joltgym_marl.rllib needs Ray RLlib: pip install 'joltgym_marl[rllib]' "
        f"(ray[rllib]); importing it failed with: {error}"
    ) from error

from joltgym_marl._checks import as_int
from joltgym_marl._native import core as _core
from joltgym_marl.registry import GAMES, ResetKind, TaskSpec

PREFIX = "joltgym_marl/"
"""RLlib env names are ``PREFIX + "<game>_v0"``."""

# Keys of env_config that are not the game's keyword arguments.
_RUNNER_KEYS = ("num_threads",)


def env_name(game: str | TaskSpec) -> str:
    """The RLlib env name of a game: ``"cheetah_race"`` -> ``"joltgym_marl/cheetah_race_v0"``."""
    spec = _spec(game)
    return PREFIX + spec.module_name


def _spec(game: str | TaskSpec) -> TaskSpec:
    if isinstance(game, TaskSpec):
        return game
    if not isinstance(game, str):
        raise TypeError(f"game should be a game name (str), got {type(game).__name__} {game!r}")
    name = game[len(PREFIX):] if game.startswith(PREFIX) else game
    for spec in GAMES:
        if name in (spec.name, spec.module_name):
            return spec
    known = sorted(PREFIX + s.module_name for s in GAMES)
    raise ValueError(f"unknown game {game!r}; expected one of {known} (or the bare game names)")


def _game_kwargs(spec: TaskSpec, config: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """Splits an env_config into the game's keyword arguments and the runner's."""
    if config is None:
        config = {}
    if not hasattr(config, "items"):
        raise TypeError(f"env_config should be a dict, got {type(config).__name__} {config!r}")
    game_kwargs, runner = {}, {}
    allowed = {p.name for p in spec.params} | {"max_cycles"}
    for key, value in dict(config).items():
        if key in _RUNNER_KEYS:
            runner[key] = value
        elif key in allowed:
            game_kwargs[key] = value
        else:
            raise ValueError(f"unknown env_config key {key!r} for {env_name(spec)}; expected some of "
                             f"{sorted(allowed | set(_RUNNER_KEYS))}")
    return game_kwargs, runner


class GameEnv(MultiAgentEnv):
    """One native shared world of a registered game as an RLlib ``MultiAgentEnv``.

    Args:
        game: a game name (``"cheetah_race"``, ``"cheetah_race_v0"`` or
            ``"joltgym_marl/cheetah_race_v0"``).
        config: the game's keyword arguments and ``max_cycles`` (RLlib passes
            its ``env_config`` here).
    """

    def __init__(self, game: str, config: dict[str, Any] | None = None):
        super().__init__()
        self.spec_ = spec = _spec(game)
        game_kwargs, _ = _game_kwargs(spec, config)
        from joltgym_marl import envs

        self._env = getattr(envs, spec.module_name).parallel_env(**game_kwargs)
        self.possible_agents = list(self._env.possible_agents)
        self.agents = []
        self.observation_spaces = {a: self._env.observation_space(a) for a in self.possible_agents}
        self.action_spaces = {a: self._env.action_space(a) for a in self.possible_agents}
        self.metadata = dict(self._env.metadata)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        obs, infos = self._env.reset(seed=seed, options=options)
        self.agents = list(self._env.agents)
        return obs, infos

    def step(self, action_dict: dict[str, Any]):
        obs, rewards, terminations, truncations, infos = self._env.step(action_dict)
        terminations["__all__"] = all(terminations.values())
        truncations["__all__"] = all(truncations.values())
        self.agents = list(self._env.agents)
        return obs, rewards, terminations, truncations, infos

    def close(self):
        self._env.close()

    @property
    def parallel_env(self):
        """The PettingZoo ``ParallelEnv`` behind this env."""
        return self._env


class _WorldView(MultiAgentEnv):
    """What RLlib's env runner reads of one sub-env of a vector env: its agents
    and spaces (it steps the vector env, never the sub-env)."""

    def __init__(self, possible_agents, observation_spaces, action_spaces, metadata):
        super().__init__()
        self.possible_agents = list(possible_agents)
        self.agents = list(possible_agents)
        self.observation_spaces = observation_spaces
        self.action_spaces = action_spaces
        self.metadata = metadata

    def reset(self, *, seed=None, options=None):
        raise NotImplementedError("a WorldPoolMultiAgentEnv sub-env is stepped through its vector env")

    def step(self, action_dict):
        raise NotImplementedError("a WorldPoolMultiAgentEnv sub-env is stepped through its vector env")


class WorldPoolMultiAgentEnv(VectorMultiAgentEnv):
    """``num_envs`` worlds of a game in one native ``WorldPool``, as RLlib's
    ``VectorMultiAgentEnv`` (lists of per-world agent dicts, ``"next_step"``
    auto-reset: the step after a world's episode ended resets it and returns
    its first observation, zero rewards and no flags).

    Args:
        game: a game name.
        num_envs: worlds.
        config: the game's keyword arguments, ``max_cycles`` and ``num_threads``.
    """

    def __init__(self, game: str, num_envs: int, config: dict[str, Any] | None = None,
                 num_threads: int | None = None, autoreset_mode: str = "next_step"):
        super().__init__()
        self._pool = None
        self.spec_ = spec = _spec(game)
        game_kwargs, runner = _game_kwargs(spec, config)
        # Pickled by re-creation from these (the pool and its decoder are native).
        self._args = (game, num_envs, None if config is None else dict(config), num_threads, autoreset_mode)
        max_cycles = game_kwargs.pop("max_cycles", spec.max_episode_steps)
        if max_cycles is not None:
            # As the per-world path (the PettingZoo env) has it; the pool alone
            # would take 0 as "no limit", and its episodes would never end.
            max_cycles = as_int(max_cycles, "max_cycles", 1)
        threads = runner.get("num_threads", num_threads)
        self._pool = pool = _core.WorldPool(spec.name, num_envs, num_threads=threads,
                                            max_episode_steps=max_cycles, autoreset_mode=autoreset_mode,
                                            **game_kwargs)
        self.num_envs = pool.num_envs
        # A game may name its agents per instance (sumo's robot, the role games).
        prefix = pool.agent_prefix or spec.agent_prefix
        self.possible_agents = list(pool.agent_names) or [f"{prefix}_{k}" for k in range(pool.num_agents)]
        obs_space = spaces.Box(-np.inf, np.inf, shape=(pool.obs_dim,), dtype=np.float32)
        act_space = spaces.Box(pool.action_low, pool.action_high, dtype=np.float32)
        self.single_observation_spaces = {a: obs_space for a in self.possible_agents}
        self.single_action_spaces = {a: act_space for a in self.possible_agents}
        self.single_observation_space = spaces.Dict(self.single_observation_spaces)
        self.single_action_space = spaces.Dict(self.single_action_spaces)
        self.metadata = {"autoreset_mode": autoreset_mode, "render_modes": []}
        self.render_mode = None
        self.envs = [_WorldView(self.possible_agents, self.single_observation_spaces,
                                self.single_action_spaces, self.metadata) for _ in range(self.num_envs)]
        self._actions = np.zeros((pool.num_envs, pool.num_agents, pool.act_dim), dtype=np.float32)
        self._decoder = pool.info_decoder
        self._all_false = {a: False for a in self.possible_agents}
        self._agent_set = frozenset(self.possible_agents)
        self._ended = np.zeros(self.num_envs, dtype=bool)  # NEXT_STEP: worlds whose next step resets them

    def __reduce__(self):
        return (_restore_pool_env, self._args)

    @property
    def pool(self):
        """The native ``WorldPool`` behind this env."""
        return self._pool

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        if options:
            self._pool.set_options(dict(options))  # every option checked before any is set
        self._pool.reset_all(seed=seed)
        self._ended[:] = False
        return self._observations(), self._infos(reset=True)

    def step(self, actions: list[dict[str, Any]]):
        if self._pool.autoreset_mode != "next_step":
            raise RuntimeError("step() needs autoreset_mode='next_step' (RLlib's); this env was made "
                               f"with {self._pool.autoreset_mode!r} for WorldPoolEnvRunner's batched path")
        if isinstance(actions, Mapping) or not hasattr(actions, "__len__") or len(actions) != self.num_envs:
            got = f"{len(actions)} items" if hasattr(actions, "__len__") else type(actions).__name__
            raise ValueError(f"actions should be a list of {self.num_envs} per-world dicts, got {got}")
        buffer = self._actions
        act_dim = buffer.shape[2]
        staged = np.zeros_like(buffer)  # the pool's buffer is written only once all actions are checked
        for i, world_actions in enumerate(actions):
            if not isinstance(world_actions, Mapping):
                raise TypeError(f"actions[{i}] should be a dict of agent actions, got "
                                f"{type(world_actions).__name__}")
            unknown = set(world_actions) - self._agent_set
            if unknown:
                raise ValueError(f"actions[{i}] has unknown agents {sorted(map(str, unknown))}; expected "
                                 f"{self.possible_agents}")
            if self._ended[i]:
                continue  # a world being reset: its actions are not used (RLlib sends none)
            missing = [a for a in self.possible_agents if a not in world_actions]
            if missing:
                raise ValueError(f"actions[{i}] misses agents {missing}; expected an action for each of "
                                 f"{self.possible_agents}")
            for k, agent in enumerate(self.possible_agents):
                action = np.asarray(world_actions[agent])
                if action.shape != (act_dim,):
                    raise ValueError(f"actions[{i}][{agent!r}] should have shape ({act_dim},), got "
                                     f"{action.shape}")
                if action.dtype.kind not in "fiu":
                    raise TypeError(f"actions[{i}][{agent!r}] should be real numbers, got dtype {action.dtype}")
                staged[i, k] = action
        buffer[...] = staged
        pool = self._pool
        pool.step_all(buffer)
        self._ended[:] = (pool.terminations | pool.truncations).any(axis=1)
        observations = self._observations()
        reset_kind = pool.reset_kind
        rewards = pool.rewards.tolist()
        terminated = pool.terminations.tolist()
        truncated = pool.truncations.tolist()
        agents = self.possible_agents
        reward_dicts, term_dicts, trunc_dicts = [], [], []
        for i in range(self.num_envs):
            reward_dicts.append(dict(zip(agents, rewards[i])))
            term = dict(zip(agents, terminated[i]))
            trunc = dict(zip(agents, truncated[i]))
            term["__all__"] = all(terminated[i])
            trunc["__all__"] = all(truncated[i])
            term_dicts.append(term)
            trunc_dicts.append(trunc)
        infos = self._infos(reset=False, reset_kind=reset_kind)
        return observations, reward_dicts, term_dicts, trunc_dicts, infos

    def _observations(self) -> list[dict[str, np.ndarray]]:
        obs = self._pool.obs.copy()  # [worlds, agents, obs_dim], one copy per step
        agents = self.possible_agents
        return [dict(zip(agents, world)) for world in obs]

    def _infos(self, *, reset: bool, reset_kind: np.ndarray | None = None) -> list[dict[str, dict]]:
        rows = self._pool.infos
        agents = self.possible_agents
        out = []
        for i in range(self.num_envs):
            was_reset = reset or (reset_kind is not None and reset_kind[i] == ResetKind.AUTORESET)
            out.append(dict(zip(agents, self._decoder.rows(rows[i], reset=bool(was_reset)))))
        return out

    def close_extras(self, **kwargs: Any):
        if self._pool is not None:
            self._pool.close()


def _restore_pool_env(game, num_envs, config, num_threads, autoreset_mode):
    return WorldPoolMultiAgentEnv(game, num_envs, config, num_threads=num_threads, autoreset_mode=autoreset_mode)


class WorldPoolEnvRunner(MultiAgentEnvRunner):
    """RLlib's multi-agent env runner with the worlds of a joltgym_marl game
    stepped in one native ``WorldPool`` (``num_envs_per_env_runner`` worlds).

    Use: ``config.env_runners(env_runner_cls=WorldPoolEnvRunner, num_envs_per_env_runner=64)``.

    Sampling takes a batched path: each step runs one forward pass per
    RLModule over the rows of all worlds' agents mapped to it, samples the
    actions from its action distribution (as RLlib's ``GetActions``
    connector does), unsquashes or clips them for the env (as
    ``NormalizeAndClipActions`` does), steps the pool once, and records the
    step into RLlib's ``MultiAgentEpisode`` objects; metrics are logged once
    per ``sample()`` call. RLlib's env-to-module and module-to-env connector
    pipelines are not run per step, so this path is taken only with RLlib's
    default pipelines and a stateless RLModule; with custom connectors (or an
    env that is not a joltgym_marl game) it samples exactly as
    ``MultiAgentEnvRunner`` does (still on the pool, for a game).
    """

    def make_env(self):
        env = self.config.env
        self._fast = False
        if not (isinstance(env, str) and env.startswith(PREFIX)):
            return super().make_env()
        if self.env is not None:
            self.env.close()
            self.env = None
        config = dict(self.config.env_config or {})
        threads = config.pop("num_threads", None)
        if threads is None:
            threads = max(1, int(self.config.num_cpus_per_env_runner or 1))
        self._fast = (self.config._env_to_module_connector is None
                      and self.config._module_to_env_connector is None)
        self.env = WorldPoolMultiAgentEnv(env, self.config.num_envs_per_env_runner, config,
                                          num_threads=threads,
                                          autoreset_mode="same_step" if self._fast else "next_step")
        self.num_envs = self.env.num_envs
        self._needs_initial_reset = True
        make_callback(
            "on_environment_created",
            callbacks_objects=self._callbacks,
            callbacks_functions=self.config.callbacks_on_environment_created,
            kwargs=dict(env_runner=self, metrics_logger=self.metrics, env=self.env.unwrapped,
                        env_context=self.config.env_config),
        )

    # -- the batched sampling path --------------------------------------------

    def _sample(self, *, num_timesteps=None, num_episodes=None, explore, random_actions=False,
                force_reset=False):
        if not getattr(self, "_fast", False) or (self.module is not None and any(
                self.module[m].is_stateful() for m in self.module.keys())):
            return super()._sample(num_timesteps=num_timesteps, num_episodes=num_episodes,
                                   explore=explore, random_actions=random_actions,
                                   force_reset=force_reset)
        import torch

        env = self.env
        pool = env.pool
        agents = env.possible_agents
        num_agents = len(agents)
        if force_reset or num_episodes is not None or self._needs_initial_reset:
            self._fast_reset()
        if num_episodes is not None:
            self._needs_initial_reset = True
        by_agent_steps = self.config.count_steps_by != "env_steps"
        done_episodes = []
        env_ts = agent_ts = eps = 0
        module_steps: dict[str, int] = {}
        ended_count = 0
        act_shape = (self.num_envs, num_agents, pool.act_dim)
        while (eps < num_episodes) if num_timesteps is None else (
                (agent_ts if by_agent_steps else env_ts) < num_timesteps):
            obs = pool.obs.reshape(self.num_envs * num_agents, pool.obs_dim)
            if random_actions:
                actions = np.stack([env.single_action_spaces[a].sample()
                                    for _ in range(self.num_envs) for a in agents])
                extra = {}
                env_actions = actions
            else:
                actions, extra = self._fast_actions(obs, explore, torch)
                env_actions = self._for_env(actions)
            pool.step_all(env_actions.reshape(act_shape))
            # Everything recorded below is a copy: the pool's buffers change next step.
            next_obs = pool.obs.copy()
            rewards = pool.rewards.tolist()
            terminated = pool.terminations.tolist()
            truncated = pool.truncations.tolist()
            ended = pool.reset_kind == ResetKind.AUTORESET
            final_obs = pool.final_obs.copy() if ended.any() else None
            infos = self._fast_infos(ended)
            seq = self._weights_seq_no
            for w in range(self.num_envs):
                episode = self._ongoing_episodes[w]
                base = w * num_agents
                step_obs = final_obs[w] if ended[w] else next_obs[w]
                emo = {}
                for k, agent in enumerate(agents):
                    row = base + k
                    emo[agent] = {key: value[row] for key, value in extra.items()}
                    emo[agent][WEIGHTS_SEQ_NO] = seq
                term = dict(zip(agents, terminated[w]))
                trunc = dict(zip(agents, truncated[w]))
                term["__all__"] = all(terminated[w])
                trunc["__all__"] = all(truncated[w])
                episode.add_env_step(
                    observations=dict(zip(agents, step_obs)),
                    actions={agent: actions[base + k] for k, agent in enumerate(agents)},
                    rewards=dict(zip(agents, rewards[w])),
                    infos=infos[w],
                    terminateds=term,
                    truncateds=trunc,
                    extra_model_outputs=emo,
                )
                for module_id in self._modules_of[w]:
                    module_steps[module_id] = module_steps.get(module_id, 0) + 1
                env_ts += 1
                agent_ts += num_agents
                self._make_on_episode_callback("on_episode_step", w, self._ongoing_episodes)
                if ended[w]:
                    eps += 1
                    ended_count += 1
                    self._make_on_episode_callback("on_episode_end", w, self._ongoing_episodes)
                    self._prune_zero_len_sa_episodes(episode)
                    done_episodes.append(episode)
                    old_id = episode.id_
                    self._new_episode(w, self._ongoing_episodes)
                    self._start_episode(w, next_obs[w], self._reset_infos(w))
                    self._shared_data.setdefault("vector_env_episodes_map", {})[old_id] = \
                        self._ongoing_episodes[w].id_
            if num_episodes is not None and eps >= num_episodes:
                break
        self._fast_metrics(env_ts, module_steps, ended_count, agents)
        if self.episodes_to_numpy:
            for episode in done_episodes:
                episode.to_numpy()
        self._done_episodes_for_metrics.extend(done_episodes)
        ongoing = []
        if num_timesteps is not None:
            continuations = [e.cut(len_lookback_buffer=self.config.episode_lookback_horizon)
                             for e in self._ongoing_episodes]
            for episode in self._ongoing_episodes:
                if episode.env_t == 0:
                    continue
                episode.validate()
                self._ongoing_episodes_for_metrics[episode.id_].append(episode)
                self._prune_zero_len_sa_episodes(episode)
                ongoing.append(episode.to_numpy() if self.episodes_to_numpy else episode)
            self._ongoing_episodes = continuations
        return done_episodes + ongoing

    def _fast_reset(self):
        self._ongoing_episodes = [None] * self.num_envs
        self._shared_data = {}
        self._modules_of = [()] * self.num_envs
        self._ongoing_episodes_for_metrics.clear()
        pool = self.env.pool
        pool.reset_all(seed=self._seed if self._needs_initial_reset else None)
        obs = pool.obs.copy()
        for w in range(self.num_envs):
            self._new_episode(w, self._ongoing_episodes)
            self._start_episode(w, obs[w], self._reset_infos(w))
        self._needs_initial_reset = False

    def _start_episode(self, w: int, obs: np.ndarray, infos: dict) -> None:
        agents = self.env.possible_agents
        episode = self._ongoing_episodes[w]
        episode.add_env_reset(observations=dict(zip(agents, obs)), infos=infos)
        self._modules_of[w] = tuple(episode.module_for(a) for a in agents)
        self._row_modules = None  # regrouped at the next forward pass
        self._make_on_episode_callback("on_episode_start", w, self._ongoing_episodes)

    def _reset_infos(self, w: int) -> dict:
        env = self.env
        rows = env.pool.infos[w]
        return dict(zip(env.possible_agents, env._decoder.rows(rows, reset=True)))

    def _fast_infos(self, ended: np.ndarray) -> list[dict]:
        env = self.env
        pool = env.pool
        rows = np.where(ended[:, None, None], pool.final_infos, pool.infos)
        return [dict(zip(env.possible_agents, env._decoder.rows(rows[w], reset=False)))
                for w in range(self.num_envs)]

    def _groups(self) -> dict[str, np.ndarray]:
        if getattr(self, "_row_modules", None) is None:
            groups: dict[str, list[int]] = {}
            num_agents = len(self.env.possible_agents)
            for w, modules in enumerate(self._modules_of):
                for k, module_id in enumerate(modules):
                    groups.setdefault(module_id, []).append(w * num_agents + k)
            self._row_modules = {m: np.asarray(rows) for m, rows in groups.items()}
        return self._row_modules

    def _fast_actions(self, obs: np.ndarray, explore: bool, torch):
        rows_total = obs.shape[0]
        actions = np.empty((rows_total, self.env.pool.act_dim), dtype=np.float32)
        extra: dict[str, np.ndarray] = {}
        with torch.no_grad():
            for module_id, rows in self._groups().items():
                module = self.module[module_id]
                batch = {Columns.OBS: torch.from_numpy(obs[rows])}
                out = module.forward_exploration(batch) if explore else module.forward_inference(batch)
                if Columns.ACTIONS in out:
                    sampled = out[Columns.ACTIONS]
                else:
                    dist_cls = (module.get_exploration_action_dist_cls() if explore
                                else module.get_inference_action_dist_cls())
                    dist = dist_cls.from_logits(out[Columns.ACTION_DIST_INPUTS])
                    if not explore:
                        dist = dist.to_deterministic()
                    sampled = dist.sample()
                    if Columns.ACTION_LOGP not in out:
                        out[Columns.ACTION_LOGP] = dist.logp(sampled)
                actions[rows] = sampled.numpy()
                for key, value in out.items():
                    if key == Columns.ACTIONS or not isinstance(value, torch.Tensor):
                        continue
                    column = extra.get(key)
                    array = value.numpy()
                    if column is None:
                        column = extra[key] = np.zeros((rows_total, *array.shape[1:]), dtype=array.dtype)
                    column[rows] = array
        return actions, extra

    def _for_env(self, actions: np.ndarray) -> np.ndarray:
        space = next(iter(self.env.single_action_spaces.values()))
        if self.config.normalize_actions:
            return np.asarray(unsquash_action(actions, space), dtype=np.float32)
        if self.config.clip_actions:
            return np.asarray(clip_action(actions, space), dtype=np.float32)
        return actions

    def _fast_metrics(self, env_steps: int, module_steps: dict, episodes: int, agents) -> None:
        if env_steps <= 0:
            return
        log = self.metrics.log_value
        log(NUM_ENV_STEPS_SAMPLED, env_steps, reduce="sum")
        log(NUM_ENV_STEPS_SAMPLED_LIFETIME, env_steps, reduce="lifetime_sum", with_throughput=True)
        self._log_env_steps(metric=self._metrics_num_env_steps_sampled, num_steps=env_steps)
        if episodes:
            log(NUM_EPISODES, episodes, reduce="sum")
            log(NUM_EPISODES_LIFETIME, episodes, reduce="lifetime_sum")
        for agent in agents:
            log((NUM_AGENT_STEPS_SAMPLED, str(agent)), env_steps, reduce="sum")
            log((NUM_AGENT_STEPS_SAMPLED_LIFETIME, str(agent)), env_steps, reduce="lifetime_sum")
        for module_id, steps in module_steps.items():
            log((NUM_MODULE_STEPS_SAMPLED, module_id), steps, reduce="sum")
            log((NUM_MODULE_STEPS_SAMPLED_LIFETIME, module_id), steps, reduce="lifetime_sum")


def register() -> list[str]:
    """Registers every game with RLlib (done on import); returns the names."""
    names = []
    for spec in GAMES:
        name = env_name(spec)
        register_env(name, lambda config, _spec=spec: GameEnv(_spec.name, config))
        names.append(name)
    return names


ENV_NAMES: list[str] = register()
"""The RLlib env names of every registered game."""


def _register_again() -> None:
    # Tune's registry lives in the Ray cluster's key-value store, so a
    # registration does not survive ray.shutdown(): register the games again
    # whenever this process (re)connects to a cluster.
    register()


try:
    import ray._private.worker as _ray_worker

    if _register_again not in _ray_worker._post_init_hooks:
        _ray_worker._post_init_hooks.append(_register_again)
except (ImportError, AttributeError):  # pragma: no cover - a Ray without the hook list
    pass
