"""BenchMARL: every game and every MaMuJoCo conf as a BenchMARL task, in one import.

    import joltgym_marl.benchmarl  # noqa: F401  (or: from joltgym_marl.benchmarl import GameTask, MaMuJoCoTask)
    from benchmarl.algorithms import MappoConfig
    from benchmarl.experiment import Experiment, ExperimentConfig
    from benchmarl.models.mlp import MlpConfig
    from joltgym_marl.benchmarl import MaMuJoCoTask

    task = MaMuJoCoTask.HALFCHEETAH_2X3.get_task()  # or get_task(config={"max_episode_steps": 200})
    Experiment(task=task, algorithm_config=MappoConfig.get_from_yaml(), model_config=MlpConfig.get_from_yaml(),
               critic_model_config=MlpConfig.get_from_yaml(), seed=0, config=ExperimentConfig.get_from_yaml()).run()

Two task families (BenchMARL ``Task`` enums), derived from the registries, so
a newly registered game or conf is a task with no edit here:

* :class:`GameTask`: one member per game (``GameTask.CHEETAH_RACE``,
  ``SUMO``, ``YOU_SHALL_NOT_PASS``, ``KICK_AND_DEFEND``, ``RUN_TO_GOAL``);
  config: ``max_cycles`` and the game's keyword arguments;
* :class:`MaMuJoCoTask`: one member per MaMuJoCo scenario and conf of the
  catalog, Farama's and the original code's (HARL's) alike:
  ``<SCENARIO>_<CONF>`` with the conf's ``|`` as ``_`` (``HALFCHEETAH_6X1``,
  ``HUMANOID_9_8``, ``ANT_8X1``), and ``<SCENARIO>`` alone for the conf
  ``None`` (one agent observing the whole state); config: ``scenario``,
  ``agent_conf``, ``agent_obsk``, ``max_episode_steps``, ``return_state`` and
  any other keyword of ``mamujoco_v1.parallel_env``.

Each runs on the natively batched TorchRL env (:mod:`joltgym_marl.torchrl`):
BenchMARL's ``n_envs_per_worker`` environments are the worlds of ONE env
(BenchMARL sees a batched env and wraps it in no ``SerialEnv``), stepped on
``num_threads`` native threads (config; default: the machine's cores).
Observations are float32 (``dtype`` in the config), as BenchMARL's models
take them: no ``DoubleToFloat`` transform is needed. ``get_task(config)``
takes a partial config over the defaults.

Importing this module also enters both families in BenchMARL's task
registry (``benchmarl.environments.task_config_registry``, as
``"joltgym_marl/cheetah_race"`` and ``"joltgym_mamujoco/halfcheetah_2x3"``).
"""

from __future__ import annotations

import copy
import re
from typing import Any, Callable

try:
    import benchmarl.environments as _benchmarl_environments
    from benchmarl.environments.common import Task, TaskClass
    from torchrl.data import Composite
    from torchrl.envs import EnvBase
except ImportError as error:  # pragma: no cover - depends on the environment
    raise ImportError(
        "joltgym_marl.benchmarl needs BenchMARL: pip install 'joltgym_marl[benchmarl]' (BenchMARL pins "
        f"torchrl<0.12: its own environment, see docs/guides/torchrl_benchmarl.md); importing it failed with: {error}"
    ) from error

from joltgym_marl.mamujoco import catalog
from joltgym_marl.registry import GAMES, TASKS
from joltgym_marl.torchrl import BatchedGameEnv, BatchedMaMuJoCoEnv

__all__ = ["GameTask", "GameTaskClass", "MaMuJoCoTask", "MaMuJoCoTaskClass", "member_name"]


def member_name(scenario: str, agent_conf: str | None) -> str:
    """The ``MaMuJoCoTask`` member of a scenario and conf: ``("HalfCheetah", "2x3")`` -> ``"HALFCHEETAH_2X3"``."""
    if agent_conf is None:
        return scenario.upper()
    return f"{scenario}_{re.sub(r'[^0-9A-Za-z]+', '_', agent_conf)}".upper()


class _BatchedTaskClass(TaskClass):
    """What both families share: the specs read off the batched env, without
    its batch dimension (as BenchMARL's VMAS tasks give them)."""

    def supports_continuous_actions(self) -> bool:
        return True

    def supports_discrete_actions(self) -> bool:
        return False

    def has_render(self, env: EnvBase) -> bool:
        return False

    def group_map(self, env: EnvBase) -> dict[str, list[str]]:
        return env.group_map

    def observation_spec(self, env: EnvBase) -> Composite:
        spec = env.full_observation_spec_unbatched.clone()
        if "state" in spec.keys():
            del spec["state"]
        return spec

    def info_spec(self, env: EnvBase) -> Composite | None:
        return None

    def state_spec(self, env: EnvBase) -> Composite | None:
        spec = env.full_observation_spec_unbatched
        if "state" in spec.keys():
            return Composite({"state": spec["state"].clone()})
        return None

    def action_spec(self, env: EnvBase) -> Composite:
        return env.full_action_spec_unbatched

    def action_mask_spec(self, env: EnvBase) -> Composite | None:
        return None

    def _env_kwargs(self, continuous_actions: bool) -> dict[str, Any]:
        if not continuous_actions:
            raise ValueError(f"{self.name}: the actions are continuous; expected an algorithm with continuous "
                             "actions (continuous_actions=True)")
        return copy.deepcopy(self.config)


class GameTaskClass(_BatchedTaskClass):
    """A game as a BenchMARL task (config: ``max_cycles``, ``num_threads``,
    ``dtype`` and the game's keyword arguments)."""

    def get_env_fun(self, num_envs: int, continuous_actions: bool, seed: int | None,
                    device: Any) -> Callable[[], EnvBase]:
        kwargs = self._env_kwargs(continuous_actions)
        game = kwargs.pop("game", self.name.lower())
        return lambda: BatchedGameEnv(game, num_envs, seed=seed, device=device, **kwargs)

    def max_steps(self, env: EnvBase) -> int:
        return env.max_cycles

    @staticmethod
    def env_name() -> str:
        return "joltgym_marl"


class MaMuJoCoTaskClass(_BatchedTaskClass):
    """A MaMuJoCo scenario and conf as a BenchMARL task (config: ``scenario``,
    ``agent_conf``, ``agent_obsk``, ``max_episode_steps``, ``return_state``,
    ``num_threads``, ``dtype`` and ``mamujoco_v1.parallel_env``'s other keywords)."""

    def get_env_fun(self, num_envs: int, continuous_actions: bool, seed: int | None,
                    device: Any) -> Callable[[], EnvBase]:
        kwargs = self._env_kwargs(continuous_actions)
        scenario, conf = kwargs.pop("scenario"), kwargs.pop("agent_conf")
        return lambda: BatchedMaMuJoCoEnv(scenario, conf, num_envs, seed=seed, device=device, **kwargs)

    def max_steps(self, env: EnvBase) -> int:
        return env.max_episode_steps

    @staticmethod
    def env_name() -> str:
        return "joltgym_mamujoco"


def _game_defaults(spec) -> dict[str, Any]:
    return {"game": spec.name, "max_cycles": spec.max_episode_steps, "num_threads": None, "dtype": "float32"}


def _mamujoco_defaults(scenario: str, agent_conf: str | None) -> dict[str, Any]:
    robot = catalog.scenario(scenario).robot
    steps = TASKS[robot].max_episode_steps if robot in TASKS else 1000
    return {"scenario": scenario, "agent_conf": agent_conf, "agent_obsk": 1, "max_episode_steps": steps,
            "return_state": False, "num_threads": None, "dtype": "float32"}


_DEFAULTS: dict[tuple[str, str], dict[str, Any]] = {}


def _family(name: str, task_class: type[TaskClass], members: dict[str, dict[str, Any]], doc: str) -> type[Task]:
    """A BenchMARL ``Task`` enum with ``members`` (name -> default config)."""
    family = Task(name, [(member, None) for member in members], module=__name__, qualname=name)
    family.__doc__ = doc
    family.associated_class = staticmethod(lambda: task_class)
    env = task_class.env_name()
    for member, config in members.items():
        _DEFAULTS[env, member] = config

    def default_config(self) -> dict[str, Any]:
        """This task's default config (a new dict)."""
        return copy.deepcopy(_DEFAULTS[self.env_name(), self.name])

    def get_task(self, config: dict[str, Any] | None = None) -> TaskClass:
        """The task with ``config`` over its defaults (BenchMARL's own tasks load a yaml file)."""
        full = self.default_config()
        full.update(config or {})
        return self.associated_class()(name=self.name, config=full)

    def get_from_yaml(self, path: str | None = None) -> TaskClass:
        """The task with its defaults, or with a yaml file's config over them."""
        if path is None:
            return self.get_task()
        from benchmarl.utils import _read_yaml_config

        return self.get_task(_read_yaml_config(path))

    family.default_config = default_config
    family.get_task = get_task
    family.get_from_yaml = get_from_yaml
    for member in family:
        _benchmarl_environments.task_config_registry[f"{env}/{member.name.lower()}"] = member
    return family


GameTask = _family(
    "GameTask", GameTaskClass, {spec.name.upper(): _game_defaults(spec) for spec in GAMES},
    "Every game of the native registry as a BenchMARL task (``GameTask.CHEETAH_RACE.get_task()``).")

MaMuJoCoTask = _family(
    "MaMuJoCoTask", MaMuJoCoTaskClass,
    {member_name(s.scenario, c.agent_conf): _mamujoco_defaults(s.scenario, c.agent_conf)
     for s in catalog.scenarios() for c in s.confs},
    "Every MaMuJoCo scenario and conf of the catalog, Farama's and HARL's, as a BenchMARL task "
    "(``MaMuJoCoTask.HALFCHEETAH_2X3.get_task()``).")
