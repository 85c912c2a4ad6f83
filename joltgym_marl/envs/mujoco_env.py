"""The Gymnasium ``Env`` over a native single-agent core."""

from __future__ import annotations

from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from joltgym_marl._native import core as _core


class NativeMujocoEnv(gym.Env):
    """A Gymnasium env whose physics, observation and reward run natively.

    Subclasses name their task in ``task``. Keyword arguments are those of the
    matching Gymnasium ``*-v5`` env; unknown ones raise ``TypeError`` listing
    the allowed names. Episode length is left to Gymnasium's ``TimeLimit``
    (``max_episode_steps=1000`` in the registration), as for Gymnasium's own
    MuJoCo envs.
    """

    task: ClassVar[str] = ""
    metadata: ClassVar[dict[str, Any]] = {"render_modes": []}

    def __init__(self, render_mode: str | None = None, **kwargs: Any):
        if render_mode is not None:
            raise ValueError(
                f"render_mode should be None (rendering is not available yet), got {render_mode!r}"
            )
        self.render_mode = render_mode
        self._kwargs = dict(kwargs)
        self._core = _core.SingleAgentCore(self.task, max_episode_steps=None, **kwargs)
        self.metadata = {**type(self).metadata, "render_fps": int(np.round(1.0 / self._core.dt))}
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
        self._check_open()
        super().reset(seed=seed)
        if seed is None and not getattr(self, "_seeded", False):
            # First reset without a seed: draw one from Gymnasium's seeding so
            # that np_random and the native world agree on being random.
            seed = int(self.np_random.integers(2**63 - 1))
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

    def close(self) -> None:
        self._closed = True

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError(f"{type(self).__name__} is closed; expected an open env (create a new one)")

    def __reduce__(self):
        return (_restore, (type(self), self.render_mode, self._kwargs))


def _restore(cls, render_mode, kwargs):
    return cls(render_mode=render_mode, **kwargs)
