"""Farama's MaMuJoCo as a BenchMARL task, as a user writes it today (BenchMARL
has no MaMuJoCo family): the peer of benchmarks/benchmarl_frames.py, and its
timing callback. Needs BenchMARL (the ``.venv-benchmarl`` environment); a
module of its own so that BenchMARL can pickle the task and the callback by
reference."""

from __future__ import annotations

import time
import warnings

from benchmarl.environments.common import TaskClass
from benchmarl.experiment.callback import Callback
from pettingzoo.utils import BaseParallelWrapper
from torchrl.envs import DoubleToFloat, PettingZooWrapper


class ResetInfoKeys(BaseParallelWrapper):
    """Keeps the step infos' keys to reset's: TorchRL's PettingZooWrapper
    builds its info spec from reset, and Farama's step infos carry more keys."""

    def reset(self, seed=None, options=None):
        obs, infos = self.env.reset(seed=seed, options=options)
        self._keys = {a: list(info) for a, info in infos.items()}
        return obs, infos

    def step(self, actions):
        *out, infos = self.env.step(actions)
        return (*out, {a: {k: info[k] for k in self._keys[a]} for a, info in infos.items()})


def make(scenario: str, conf: str, seed, device) -> PettingZooWrapper:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from gymnasium_robotics import mamujoco_v1

        env = mamujoco_v1.parallel_env(scenario, conf)
    return PettingZooWrapper(ResetInfoKeys(env), use_mask=False, seed=seed, device=device)


class FaramaMaMuJoCo(TaskClass):
    """config: ``scenario``, ``agent_conf``. Unbatched: BenchMARL vectorizes it
    (SerialEnv, or ParallelEnv with parallel_collection); float64
    observations, so DoubleToFloat."""

    def get_env_fun(self, num_envs, continuous_actions, seed, device):
        scenario, conf = self.config["scenario"], self.config["agent_conf"]
        return lambda: make(scenario, conf, seed, device)

    def supports_continuous_actions(self):
        return True

    def supports_discrete_actions(self):
        return False

    def max_steps(self, env):
        return 1000

    def has_render(self, env):
        return False

    def group_map(self, env):
        return env.group_map

    def observation_spec(self, env):
        spec = env.observation_spec.clone()
        for group in self.group_map(env):
            for key in list(spec[group].keys()):
                if key != "observation":
                    del spec[group][key]
        return spec

    def info_spec(self, env):
        return None

    def state_spec(self, env):
        return None

    def action_spec(self, env):
        return env.full_action_spec

    def action_mask_spec(self, env):
        return None

    def get_env_transforms(self, env):
        return [DoubleToFloat()]

    @staticmethod
    def env_name():
        return "farama_mamujoco"


class IterationTimes(Callback):
    """perf_counter marks: "start", then per iteration "collected" and one
    "trained" per group (a callback BenchMARL can pickle)."""

    def __init__(self):
        super().__init__()
        self.marks: list[tuple[str, float]] = [("start", time.perf_counter())]

    def on_batch_collected(self, batch):
        self.marks.append(("collected", time.perf_counter()))

    def on_train_end(self, training_td, group):
        self.marks.append(("trained", time.perf_counter()))
