"""Short videos of a task, headless: ``python -m joltgym_marl record TASK``.

:func:`record` plays one episode of any task (a game through its
``parallel_env``, a single-agent task through ``gymnasium.make``) with
``render_mode="rgb_array"`` (:mod:`joltgym_marl.rendering`: MuJoCo's renderer,
each agent of a shared world in its own colour) and returns its frames and how
the episode went; :func:`save` writes them to a ``.gif`` or ``.mp4`` (with
imageio, and imageio-ffmpeg for MP4: ``pip install imageio imageio-ffmpeg``).
Actions are random unless a ``policy`` is given.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from joltgym_marl.registry import TaskSpec, resolve

VIDEO_SUFFIXES = (".gif", ".mp4")


@dataclass
class Recording:
    """The frames of one episode and how it went."""

    spec: TaskSpec
    frames: list[np.ndarray]
    steps: int  # env steps played
    requested_steps: int
    fps: float  # frames per second that play the episode in real time
    ended: str | None = None  # "terminated" or "truncated" if the episode ended before requested_steps
    outcomes: dict[str, Any] = field(default_factory=dict)  # a game's result per agent (an Outcome), where it has one

    @property
    def ended_early(self) -> bool:
        return self.ended is not None and self.steps < self.requested_steps

    def summary(self, path: str | Path) -> str:
        """What was written, and whether the episode ended early: one line."""
        line = f"wrote {len(self.frames)} frames ({self.steps} steps) of {self.spec.env_id} to {path}"
        if self.ended_early:
            how = {"terminated": "terminated", "truncated": "was truncated (its time limit)"}[self.ended]
            line += f"; the episode {how} after {self.steps} of the {self.requested_steps} steps asked for"
            if self.outcomes:
                line += " (" + ", ".join(f"{agent}: {getattr(result, 'label', result)}"
                                         for agent, result in self.outcomes.items()) + ")"
        return line


Policy = Callable[[Any, Any], Any]  # (env, observation(s)) -> action (a game: a dict of agent -> action)


def record(task: str, *, steps: int = 300, every: int = 2, width: int = 480, height: int = 320, seed: int = 0,
           policy: Policy | None = None, **kwargs: Any) -> Recording:
    """One episode of ``task`` (any of its names), at most ``steps`` steps,
    keeping one frame in ``every`` steps; ``kwargs`` are the task's keyword
    arguments. ``policy(env, obs)`` gives the actions (default: random)."""
    for name, value, low in (("steps", steps, 1), ("every", every, 1)):
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise ValueError(f"{name} should be an int >= {low}, got {value!r}")
    spec = resolve(task)
    if spec.is_game:
        return _record_game(spec, steps, every, width, height, seed, policy, kwargs)
    return _record_single(spec, steps, every, width, height, seed, policy, kwargs)


def _record_game(spec, steps, every, width, height, seed, policy, kwargs) -> Recording:
    from joltgym_marl.envs import MULTI_AGENT_ENVS

    env = MULTI_AGENT_ENVS[spec.module_name].parallel_env(render_mode="rgb_array", width=width, height=height,
                                                          **kwargs)
    try:
        observations, _ = env.reset(seed=seed)
        for k, agent in enumerate(env.possible_agents):
            env.action_space(agent).seed(seed + k)
        act = policy or (lambda e, obs: {a: e.action_space(a).sample() for a in e.agents})
        frames = [env.render()]
        played, ended, outcomes = 0, None, {}
        for t in range(steps):
            observations, _, terminations, truncations, infos = env.step(act(env, observations))
            played += 1
            if t % every == 0:
                frames.append(env.render())
            if not env.agents:
                ended = "terminated" if any(terminations.values()) else "truncated"
                outcomes = {a: info["outcome"] for a, info in infos.items() if "outcome" in info}
                break
        fps = env.metadata["render_fps"] / every
    finally:
        env.close()
    return Recording(spec, frames, played, steps, fps, ended, outcomes)


def _record_single(spec, steps, every, width, height, seed, policy, kwargs) -> Recording:
    import gymnasium

    import joltgym_marl  # noqa: F401  (registers the joltgym_marl/ ids)

    env = gymnasium.make(spec.env_id, render_mode="rgb_array", width=width, height=height, **kwargs)
    try:
        observation, _ = env.reset(seed=seed)
        env.action_space.seed(seed)
        act = policy or (lambda e, obs: e.action_space.sample())
        frames = [env.render()]
        played, ended = 0, None
        for t in range(steps):
            observation, _, terminated, truncated, _ = env.step(act(env, observation))
            played += 1
            if t % every == 0:
                frames.append(env.render())
            if terminated or truncated:
                ended = "terminated" if terminated else "truncated"
                break
        fps = env.metadata["render_fps"] / every
    finally:
        env.close()
    return Recording(spec, frames, played, steps, fps, ended)


def check_path(path: str | Path) -> Path:
    """``path`` as a Path, or ValueError if it is not a .gif or .mp4 file name."""
    path = Path(path)
    if path.suffix.lower() not in VIDEO_SUFFIXES:
        raise ValueError(f"the output should be a .gif or .mp4 file, got {str(path)!r}")
    return path


def save(recording: Recording, path: str | Path) -> Path:
    """Writes the frames to ``path`` (.gif or .mp4, by its suffix), creating its folder."""
    path = check_path(path)
    try:
        import imageio.v2 as imageio
    except ImportError:
        raise ImportError("writing a video needs imageio (and imageio-ffmpeg for .mp4): "
                          "pip install imageio imageio-ffmpeg") from None
    path.parent.mkdir(parents=True, exist_ok=True)
    # Opened once here, so a path that cannot be written raises its OSError before imageio's
    # writer exists (whose finalizer would print a second traceback at garbage collection).
    path.open("wb").close()
    if path.suffix.lower() == ".gif":
        # imageio's GIF writer (Pillow) takes each frame's duration in milliseconds.
        imageio.mimsave(path, recording.frames, duration=1000.0 / recording.fps, loop=0)
    else:
        imageio.mimsave(path, recording.frames, fps=recording.fps)
    return path
