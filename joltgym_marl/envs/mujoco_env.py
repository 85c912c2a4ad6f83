"""The Gymnasium ``Env`` over a native single-agent core."""

from __future__ import annotations

from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from joltgym_marl import rendering
from joltgym_marl._lifecycle import Reconstructible
from joltgym_marl._native import core as _core
from joltgym_marl.registry import TASKS


class NativeMujocoEnv(Reconstructible, gym.Env):
    """A Gymnasium env whose physics, observation and reward run natively.

    Subclasses (one per registered single-agent task, derived in
    :mod:`joltgym_marl.envs`) name their task in ``task``. Keyword arguments are those of the
    matching Gymnasium ``*-v5`` env; unknown ones raise ``TypeError`` listing
    the allowed names. Episode length is left to Gymnasium's ``TimeLimit``
    (``max_episode_steps=1000`` in the registration), as for Gymnasium's own
    MuJoCo envs.
    """

    task: ClassVar[str] = ""
    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["rgb_array", "human"]}

    def __init__(self, render_mode: str | None = None, width: int = 480, height: int = 480,
                 **kwargs: Any):
        rendering.check_render_mode(render_mode)
        rendering.require_display_for_human(render_mode)
        self.render_mode = render_mode
        self.width, self.height = width, height
        self._remember(render_mode=render_mode, width=width, height=height, **kwargs)
        self._core = _core.SingleAgentCore(self.task, max_episode_steps=None, **kwargs)
        self._renderer = None
        self.metadata = {**type(self).metadata, "render_modes": rendering.available_render_modes(),
                         "render_fps": int(np.round(1.0 / self._core.dt))}
        self.observation_space = spaces.Box(
            low=-np.inf, high=np.inf, shape=(self._core.obs_dim,), dtype=np.float32
        )
        self.action_space = spaces.Box(
            low=self._core.action_low, high=self._core.action_high, dtype=np.float32
        )
        self._closed = False

    @property
    def dt(self) -> float:
        """Simulated seconds per step."""
        return self._core.dt

    @property
    def core(self):
        """The native single-world core behind this env."""
        return self._core

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        """Starts an episode. The reset noise is drawn natively from the numbers
        Gymnasium's env draws from ``np_random``: ``reset(seed=s)`` and the
        unseeded resets after it give the initial states of Gymnasium's ``-v5``
        env seeded ``s``. The first reset without a seed seeds both from fresh
        entropy, as Gymnasium does (``np_random_seed`` is that entropy)."""
        self._check_open()
        if seed is None and not getattr(self, "_seeded", False):
            seed = np.random.SeedSequence().entropy
        super().reset(seed=seed)
        if seed is not None:
            self._seeded = True
        return self._core.reset(seed=seed)

    def step(self, action):
        self._check_open()
        return self._core.step(action)

    def get_state(self) -> tuple[np.ndarray, np.ndarray]:
        """Copies of ``(qpos, qvel)``."""
        return self._core.get_state()

    def set_state(self, qpos, qvel) -> None:
        """Sets ``qpos``/``qvel`` and runs ``mj_forward``, like Gymnasium's ``set_state``."""
        self._check_open()
        self._core.set_state(qpos, qvel)

    def render(self):
        """An RGB frame (``render_mode="rgb_array"``), or a viewer update (``"human"``)."""
        self._check_open()
        if self.render_mode is None:
            env_id = self.spec.id if self.spec is not None else TASKS[self.task].env_id
            rendering.warn_no_render_mode(f'gymnasium.make("{env_id}", render_mode="rgb_array")')
            return None
        if self._renderer is None:
            self._renderer = rendering.renderer_for(self._core, self.width, self.height)
        qpos, qvel = self._core.get_state()
        if self.render_mode == "human":
            self._renderer.show(qpos, qvel)
            return None
        return self._renderer.render(qpos, qvel)

    def close(self) -> None:
        if self._renderer is not None:
            self._renderer.close()
            self._renderer = None
        self._closed = True
