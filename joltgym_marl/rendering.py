"""Frames of native worlds with MuJoCo's own renderer, headless by default.

Rendering never touches the simulation: the renderer keeps its own copy of the
compiled model (the very MJB the native world runs) and its own MjData, into
which it copies the world's qpos/qvel and runs mj_forward before drawing.
Agents of shared worlds are coloured distinctly (in the renderer's copy only).

On a machine without a display, MuJoCo is pointed at EGL (Mesa's software
rasterizer works) unless MUJOCO_GL is already set. Importing MuJoCo's Python
bindings happens only when a renderer is created; see docs/DESIGN.md for why
joltgym_marl otherwise never imports them.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import Any

import numpy as np

from joltgym_marl._checks import as_index, as_int

AGENT_COLORS = [
    (0.90, 0.40, 0.10, 1.0),  # orange
    (0.10, 0.45, 0.85, 1.0),  # blue
    (0.30, 0.70, 0.20, 1.0),  # green
    (0.60, 0.25, 0.70, 1.0),  # purple
    (0.95, 0.75, 0.10, 1.0),  # yellow
    (0.20, 0.75, 0.80, 1.0),  # cyan
    (0.75, 0.15, 0.20, 1.0),  # red
    (0.45, 0.45, 0.45, 1.0),  # grey
]

RENDER_MODES = ("rgb_array", "human")


def has_display() -> bool:
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def available_render_modes() -> list[str]:
    """``rgb_array`` always; ``human`` only where a display exists."""
    return ["rgb_array", "human"] if has_display() else ["rgb_array"]


def check_render_mode(render_mode: str | None) -> None:
    if render_mode is not None and render_mode not in RENDER_MODES:
        raise ValueError(f"render_mode should be None, 'rgb_array' or 'human', got {render_mode!r}")


NO_RENDER_MODE = "You are calling render method without specifying any render mode."


def warn_no_render_mode(example: str) -> None:
    """What Gymnasium's and PettingZoo's envs do when ``render()`` is called on
    an env made without a render mode: warn (through ``gymnasium.logger``,
    pointing at the caller of ``render``) and return None. ``example`` shows
    how to make the env with one."""
    from gymnasium import logger

    logger.warn(f"{NO_RENDER_MODE} You can specify the render_mode at initialization, e.g. {example}",
                stacklevel=3)


def prefer_headless_gl() -> None:
    """Points MuJoCo at EGL where there is no display (MuJoCo reads MUJOCO_GL
    once, when its Python bindings are first imported)."""
    if "MUJOCO_GL" not in os.environ and not has_display():
        os.environ["MUJOCO_GL"] = "egl"


NO_DISPLAY = ("render_mode='human' needs a display, and this machine has none (DISPLAY is not set); "
              "use render_mode='rgb_array' for frames, or examples/record_video.py for a video")


def check_render_world(index, num_worlds: int) -> int:
    """The world a vector env renders: an int in [0, num_worlds)."""
    try:
        return as_index(index, num_worlds, "render_world")
    except (TypeError, IndexError):
        raise ValueError(f"render_world should be a world index in [0, {num_worlds}), got {index!r}") from None


MIN_SIZE, MAX_SIZE = 16, 4096


def check_render_size(width, height, low: int = MIN_SIZE, high: int = MAX_SIZE) -> tuple[int, int]:
    """A frame size every constructor checks up front (not at the first render):
    ints in [low, high] (by default [16, 4096]; the Gymnasium v5 envs take
    Gymnasium's renderer's range, [1, 16384])."""
    return tuple(as_int(value, name, low, high) for name, value in (("width", width), ("height", height)))


def check_camera_kind(camera_id, camera_name) -> None:
    """The types of v5's camera keywords, checked at construction (the model's
    cameras are checked against them by check_camera, when the renderer is made)."""
    if camera_id is not None and (isinstance(camera_id, (bool, np.bool_)) or not isinstance(camera_id, (int, np.integer))):
        raise TypeError(f"camera_id should be None or an int, got {type(camera_id).__name__} {camera_id!r:.100}")
    if camera_name is not None and not isinstance(camera_name, str):
        raise TypeError(f"camera_name should be None or a str, got {type(camera_name).__name__} {camera_name!r:.100}")
    if camera_id is not None and camera_name is not None:
        raise ValueError("camera_id and camera_name cannot both be given (as in Gymnasium's MujocoEnv)")


def check_camera(model, camera_id, camera_name) -> None:
    """Refuses a camera `model` does not have, before Gymnasium's renderer is
    made: MuJoCo ends the process on a fixed camera id out of range, and
    Gymnasium's renderer silently draws the free camera for an unknown name."""
    check_camera_kind(camera_id, camera_name)
    names = [model.camera(i).name for i in range(model.ncam)]
    if camera_id is not None and not -1 <= camera_id < model.ncam:
        cameras = f"one of the model's {model.ncam} cameras, 0 to {model.ncam - 1}" if model.ncam else "(the model has no camera)"
        raise ValueError(f"camera_id should be -1 (the free camera) or {cameras}, got {camera_id}")
    if camera_name is not None and camera_name not in names:
        raise ValueError(f"camera_name should name one of the model's cameras {names}, got {camera_name!r:.100}")


def require_display_for_human(render_mode: str | None) -> None:
    """Gymnasium envs refuse human mode up front where no display exists."""
    if render_mode == "human" and not has_display():
        raise RuntimeError(NO_DISPLAY)


_LAZY_LOCK = threading.Lock()


def lazy_renderer(owner: Any, make: Callable[[], WorldRenderer], attribute: str = "_renderer") -> WorldRenderer:
    """``owner``'s renderer, made on first use: once, however many threads render at once."""
    renderer = getattr(owner, attribute)
    if renderer is None:
        with _LAZY_LOCK:
            renderer = getattr(owner, attribute)
            if renderer is None:
                renderer = make()
                setattr(owner, attribute, renderer)
    return renderer


def release_gl_context() -> None:
    """Makes no OpenGL context current on the calling thread. A context is
    current on at most one thread (EGL answers EGL_BAD_ACCESS to a second),
    so a renderer releases its context after each use: the next frame may be
    drawn on any thread."""
    backend = os.environ.get("MUJOCO_GL", "").lower()
    if backend == "egl":
        from mujoco import egl

        if egl.EGL_DISPLAY is not None:
            egl.EGL.eglMakeCurrent(egl.EGL_DISPLAY, egl.EGL.EGL_NO_SURFACE, egl.EGL.EGL_NO_SURFACE,
                                   egl.EGL.EGL_NO_CONTEXT)
    elif backend == "osmesa":
        from mujoco import osmesa

        osmesa.osmesa.OSMesaMakeCurrent(None, None, osmesa.GL.GL_FLOAT, 0, 0)
        osmesa._current_context.ref = None
    elif backend in ("glfw", ""):
        try:
            import glfw
        except ImportError:
            return
        glfw.make_context_current(None)


def _import_mujoco():
    prefer_headless_gl()
    import mujoco

    return mujoco


def model_from_mjb(mujoco, model_mjb: bytes):
    """A ``mujoco.MjModel`` from a compiled model's bytes, read from memory (MuJoCo's
    virtual file system): no temporary file, which a full disk or ``/tmp`` would refuse."""
    return mujoco.MjModel.from_binary_path("model.mjb", {"model.mjb": bytes(model_mjb)})


class WorldRenderer:
    """Draws one native world from its state.

    Args:
        model_mjb: the world's compiled model (``model_mjb()`` of a core, pool
            or shared world).
        width, height: frame size in pixels.
        agent_prefixes: body-name prefixes of the agents to colour (shared worlds).
        follow: maps the renderer's MjData to the camera's look-at point.
        distance, elevation, azimuth: the free camera's placement.
    """

    def __init__(self, model_mjb: bytes, width: int = 640, height: int = 480, *,
                 agent_prefixes: list[str] | None = None,
                 follow: Callable[[Any], np.ndarray] | None = None,
                 distance: float = 4.0, elevation: float = -20.0, azimuth: float = 90.0):
        width, height = check_render_size(width, height)
        # One frame at a time: the renderer's MjData, scene and GL context are
        # its own, shared by every thread that renders with it.
        self._lock = threading.Lock()
        mujoco = _import_mujoco()
        self._mujoco = mujoco
        self.model = model_from_mjb(mujoco, model_mjb)
        self.model.vis.global_.offwidth = max(int(width), self.model.vis.global_.offwidth)
        self.model.vis.global_.offheight = max(int(height), self.model.vis.global_.offheight)
        # An agent is the subtree under its prefixed root body (unnamed bodies
        # of the robot, such as Ant's lower legs, belong to it too).
        roots = [[b for b in range(1, self.model.nbody)
                  if self.model.body_parentid[b] == 0 and self.model.body(b).name.startswith(prefix)]
                 for prefix in (agent_prefixes or [])]
        self.agent_roots = roots
        for k, agent_roots in enumerate(roots):
            color = AGENT_COLORS[k % len(AGENT_COLORS)]
            for g in range(self.model.ngeom):
                root = self.model.body_rootid[self.model.geom_bodyid[g]]
                if root in agent_roots and self.model.geom_rgba[g, 3] > 0:
                    self.model.geom_rgba[g] = color
                    self.model.geom_matid[g] = -1
        self.data = mujoco.MjData(self.model)
        self.width, self.height = int(width), int(height)
        try:
            self._renderer = mujoco.Renderer(self.model, self.height, self.width)
        except Exception as error:
            raise RuntimeError(
                f"could not create an OpenGL context for rendering ({error}); on a machine without a "
                "display set MUJOCO_GL=egl (or osmesa) before anything imports mujoco "
                "(import joltgym_marl first, or export MUJOCO_GL=egl)"
            ) from error
        finally:
            release_gl_context()  # mujoco.Renderer made its context current on this thread
        self._follow = follow or (lambda data: data.xpos[1].copy())
        self.camera = mujoco.MjvCamera()
        self.camera.type = mujoco.mjtCamera.mjCAMERA_FREE
        self.camera.distance, self.camera.elevation, self.camera.azimuth = distance, elevation, azimuth
        self._viewer = None

    def set_follow(self, follow: Callable[[Any], np.ndarray]) -> None:
        """Sets the map from the renderer's MjData to the camera's look-at point."""
        self._follow = follow

    def _load(self, qpos: np.ndarray, qvel: np.ndarray) -> None:
        self.data.qpos[:] = qpos
        self.data.qvel[:] = qvel
        self._mujoco.mj_forward(self.model, self.data)

    def render(self, qpos: np.ndarray, qvel: np.ndarray) -> np.ndarray:
        """An (height, width, 3) uint8 frame of the state (qpos, qvel). Any
        thread may call it; calls from several threads take turns."""
        with self._lock:
            if self._renderer is None:
                from joltgym_marl._native import core

                raise core.StateError("render() called after the renderer was closed; expected an open renderer")
            self._load(qpos, qvel)
            self.camera.lookat[:] = self._follow(self.data)
            self._renderer.update_scene(self.data, self.camera)
            try:
                return self._renderer.render().copy()
            finally:
                release_gl_context()

    def show(self, qpos: np.ndarray, qvel: np.ndarray) -> None:
        """Shows the state in MuJoCo's interactive viewer (needs a display)."""
        if not has_display():
            raise RuntimeError(NO_DISPLAY)
        with self._lock:
            self._load(qpos, qvel)
            if self._viewer is None:
                import mujoco.viewer

                self._viewer = mujoco.viewer.launch_passive(self.model, self.data)
            self._viewer.sync()

    def close(self) -> None:
        with self._lock:
            if self._viewer is not None:
                self._viewer.close()
                self._viewer = None
            if self._renderer is not None:
                try:
                    self._renderer.close()
                finally:
                    self._renderer = None
                    release_gl_context()


def follow_torso(data) -> np.ndarray:
    """Look at the first robot's root body."""
    return data.xpos[1].copy()


def follow_origin(data) -> np.ndarray:
    return np.zeros(3)


def _follow_leader(roots: list[int]):
    """Look at the agent furthest along x (y at the middle of the field)."""
    def follow(data) -> np.ndarray:
        xs = data.xpos[roots]
        lookat = xs[np.argmax(xs[:, 0])].copy()
        lookat[1] = xs[:, 1].mean()
        return lookat

    return follow


def renderer_for(native, width: int, height: int, *, agent_prefix: str = "") -> WorldRenderer:
    """The renderer of a native core, shared world or pool, placed by its task's
    camera (``native.camera``, set by the task in C++); agents of a game
    (bodies named ``f"{agent_prefix}_{k}/..."``) get distinct colours."""
    camera = native.camera
    prefixes = [f"{agent_prefix}_{k}/" for k in range(native.num_agents)] if agent_prefix else None
    renderer = WorldRenderer(native.model_mjb(), width, height, agent_prefixes=prefixes,
                             distance=camera["distance"], elevation=camera["elevation"],
                             azimuth=camera["azimuth"])
    target = camera["target"]
    if target == "fixed":
        lookat = np.array(camera["lookat"], dtype=np.float64)
        renderer.set_follow(lambda data: lookat.copy())
    elif target == "leader" and renderer.agent_roots:
        renderer.set_follow(_follow_leader([roots[0] for roots in renderer.agent_roots]))
    else:
        renderer.set_follow(follow_torso)
    return renderer
