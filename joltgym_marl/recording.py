"""Short videos of a task, headless: ``python -m joltgym_marl record TASK``.

:func:`record` plays one episode of any task (a game through its
``parallel_env``, a single-agent task through ``gymnasium.make``) with
``render_mode="rgb_array"`` (:mod:`joltgym_marl.rendering`: MuJoCo's renderer,
each agent of a shared world in its own colour) and returns its frames and how
the episode went; :func:`save` writes them to a ``.gif`` or ``.mp4`` (with
Pillow for a GIF, the ffmpeg of imageio-ffmpeg for an MP4: ``pip install imageio-ffmpeg``).
Actions are random unless a ``policy`` is given.
"""

from __future__ import annotations

import errno
import math
import os
import re
import signal
import subprocess
import threading
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


def _check_options(steps, every, seed) -> None:
    for name, value, low in (("steps", steps, 1), ("every", every, 1), ("seed", seed, 0)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
            raise ValueError(f"{name} should be an int >= {low}, got {value!r}")


def _make_env(spec: TaskSpec, width: int, height: int, kwargs: dict[str, Any]):
    if spec.is_game:
        from joltgym_marl.envs import MULTI_AGENT_ENVS

        env = MULTI_AGENT_ENVS[spec.module_name].parallel_env(render_mode="rgb_array", width=width,
                                                              height=height, **kwargs)
        return env, env.unwrapped._world.dt
    import gymnasium

    import joltgym_marl  # noqa: F401  (registers the joltgym_marl/ ids)

    # Without Gymnasium's passive checker, which refuses to render at metadata["render_fps"] == 0
    # (a step longer than 2 s: frame_skip=1000); the frame rate of the video is worked out here.
    env = gymnasium.make(spec.env_id, render_mode="rgb_array", width=width, height=height,
                         disable_env_checker=True, **kwargs)
    return env, env.unwrapped.dt


def check(task: str, *, steps: int = 300, every: int = 2, width: int = 480, height: int = 320, seed: int = 0,
          **kwargs: Any) -> TaskSpec:
    """Raises what :func:`record` would raise for these arguments before it
    plays a step (an unknown task, a keyword argument or value the task
    refuses, a model file that is missing, a step too long to give a frame
    rate), without playing: a command line checks its arguments with it
    before an episode is recorded. Returns the task's spec."""
    _check_options(steps, every, seed)
    spec = resolve(task)
    env, dt = _make_env(spec, width, height, kwargs)
    try:
        _frame_rate(dt, every)
    finally:
        env.close()
    return spec


def record(task: str, *, steps: int = 300, every: int = 2, width: int = 480, height: int = 320, seed: int = 0,
           policy: Policy | None = None, **kwargs: Any) -> Recording:
    """One episode of ``task`` (any of its names), at most ``steps`` steps,
    keeping one frame in ``every`` steps; ``kwargs`` are the task's keyword
    arguments. ``policy(env, obs)`` gives the actions (default: random)."""
    _check_options(steps, every, seed)
    spec = resolve(task)
    if spec.is_game:
        return _record_game(spec, steps, every, width, height, seed, policy, kwargs)
    return _record_single(spec, steps, every, width, height, seed, policy, kwargs)


def _record_game(spec, steps, every, width, height, seed, policy, kwargs) -> Recording:
    env, dt = _make_env(spec, width, height, kwargs)
    try:
        fps = _frame_rate(dt, every)
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
    finally:
        env.close()
    return Recording(spec, frames, played, steps, fps, ended, outcomes)


def _record_single(spec, steps, every, width, height, seed, policy, kwargs) -> Recording:
    env, dt = _make_env(spec, width, height, kwargs)
    try:
        fps = _frame_rate(dt, every)
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
    finally:
        env.close()
    return Recording(spec, frames, played, steps, fps, ended)


def _frame_rate(dt: float, every: int) -> float:
    """Frames per second that play the episode in real time, one frame per
    ``every`` steps of ``dt`` seconds: worked out before the episode is played
    (not from ``metadata["render_fps"]``, a whole number that is 0 for a step
    longer than 2 s, e.g. ``frame_skip=1000``)."""
    fps = 1.0 / (float(dt) * every)
    if not (math.isfinite(fps) and fps > 0):
        raise ValueError(f"a step of {dt!r} s every {every} steps gives no frame rate to play the video at")
    return fps


def check_path(path: str | Path) -> Path:
    """``path`` as a Path, or ValueError if it is not a .gif or .mp4 file name."""
    path = Path(path)
    if path.suffix.lower() not in VIDEO_SUFFIXES:
        raise ValueError(f"the output should be a .gif or .mp4 file, got {str(path)!r}")
    return path


def save(recording: Recording, path: str | Path) -> Path:
    """Writes the frames to ``path`` (.gif or .mp4, by its suffix), creating its
    folder. A write that fails (a full disk, a folder that cannot be written,
    ffmpeg failing) raises OSError naming the path and the reason, and leaves
    no partial file behind: nothing counts as written until the file is
    complete and on disk."""
    path = check_path(path)
    if not recording.frames:
        raise ValueError("the recording has no frames to write")
    if not (math.isfinite(recording.fps) and recording.fps > 0):
        raise ValueError(f"the recording's fps should be a finite number > 0, got {recording.fps!r}")
    path.parent.mkdir(parents=True, exist_ok=True)
    existed = path.exists()
    try:
        if path.suffix.lower() == ".gif":
            _write_gif(recording.frames, path, recording.fps)
        else:
            _write_mp4(recording.frames, path, recording.fps)
    except BaseException:
        # A half-written video is no video: remove what this call created (a regular file only,
        # never what a symlink points at).
        if not existed and path.is_file() and not path.is_symlink():
            path.unlink()
        raise
    return path


def _write_gif(frames: list[np.ndarray], path: Path, fps: float) -> None:
    # Pillow (imageio's own GIF writer) called directly: imageio's writer, when the write fails,
    # raises again from its finalizer at garbage collection ("Exception ignored in ...").
    from PIL import Image

    images = [Image.fromarray(np.ascontiguousarray(frame)) for frame in frames]
    # GIF frame delays are whole centiseconds, at most 65535.
    duration = int(min(max(round(1000.0 / fps, -1), 20), 655350))
    with open(path, "wb") as out:
        images[0].save(out, format="GIF", save_all=True, append_images=images[1:], duration=duration, loop=0)
        out.flush()
        os.fsync(out.fileno())  # a full disk may only say so here


def _write_mp4(frames: list[np.ndarray], path: Path, fps: float) -> None:
    # ffmpeg run here rather than through imageio's writer, which ignores ffmpeg's exit status
    # (a full disk printed ffmpeg's errors, then "wrote N frames", exit 0).
    try:
        import imageio_ffmpeg
    except ImportError:
        raise ImportError("writing an .mp4 needs imageio-ffmpeg (pip install imageio-ffmpeg), "
                          "or write a .gif") from None
    height, width = frames[0].shape[:2]
    command = [imageio_ffmpeg.get_ffmpeg_exe(), "-nostdin", "-y", "-loglevel", "error",
               "-f", "rawvideo", "-pix_fmt", "rgb24", "-s", f"{width}x{height}", "-r", f"{fps:.6g}", "-i", "-",
               "-an", "-vf", "pad=ceil(iw/2)*2:ceil(ih/2)*2",  # yuv420p needs even sides
               "-c:v", "libx264", "-pix_fmt", "yuv420p", "-f", "mp4", str(path)]
    process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    errors: list[bytes] = []
    reader = threading.Thread(target=lambda: errors.append(process.stderr.read()), daemon=True)
    reader.start()
    try:
        try:
            for frame in frames:
                process.stdin.write(np.ascontiguousarray(frame, dtype=np.uint8).tobytes())
            process.stdin.close()
        except BrokenPipeError:
            pass  # ffmpeg quit early; its exit status and message say why
        code = process.wait()
    except BaseException:
        process.kill()
        process.wait()
        raise
    finally:
        reader.join()
    if code != 0:
        lines = b"".join(errors).decode("utf-8", "replace").strip().splitlines()
        if lines:  # ffmpeg's first error is the cause ("... header: No space left on device")
            reason = re.sub(r"^\[[^\]]*\]\s*", "", lines[0])
        elif code < 0:  # a signal: SIGXFSZ past a file size limit, SIGKILL from the OOM killer
            reason = f"ffmpeg was killed by {signal.Signals(-code).name} ({signal.strsignal(-code)})"
        else:
            reason = f"ffmpeg exited with status {code}"
        raise OSError(errno.EIO, f"ffmpeg could not write {str(path)!r}: {reason}")
    with open(path, "rb") as out:
        os.fsync(out.fileno())
