"""The Gymnasium ``Env`` over a native single-agent core: a ``MujocoEnv``.

Code written for ``gymnasium.make("Ant-v5")`` runs unchanged on
``gymnasium.make("joltgym_marl/Ant-v0")``: the env is a
``gymnasium.envs.mujoco.MujocoEnv`` with the same observations (float64),
rewards (``np.float64``; ``int`` for InvertedPendulum), info values (NumPy
scalars of v5's types), keyword arguments, rendering and attributes.

The physics runs natively. ``model`` and ``data`` are real
``mujoco.MjModel`` / ``mujoco.MjData`` objects, made the first time anything
reads them (or renders): the native world then hands its state over to them
and steps *them* from then on, so they hold the current state whenever they
are read, derived fields (``xpos``, ``cfrc_ext``, ``sensordata``) included,
a change to the model (``model.opt.timestep``, a friction) takes effect as on
v5, and no step pays for a copy. Until then MuJoCo's Python bindings are not
even imported.

Reset noise is drawn from ``env.np_random`` (a PCG64 generator, Gymnasium's
default): its state is handed to the native generator, which draws NumPy's
very numbers, and handed back after.
"""

from __future__ import annotations

import os
import threading
from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces
from gymnasium.envs.mujoco.mujoco_env import MujocoEnv

from joltgym_marl import rendering
from joltgym_marl._lifecycle import Reconstructible
from joltgym_marl._native import ASSET_DIR
from joltgym_marl._native import core as _core

RENDER_MODES = ["human", "rgb_array", "depth_array", "rgbd_tuple"]

# The default free-camera settings of each Gymnasium v5 env (its default_camera_config).
DEFAULT_CAMERA_CONFIGS: dict[str, dict[str, Any] | None] = {
    "ant": {"distance": 4.0},
    "half_cheetah": {"distance": 4.0},
    "hopper": {"trackbodyid": 2, "distance": 3.0, "lookat": (0.0, 0.0, 1.15), "elevation": -20.0},
    "humanoid": {"trackbodyid": 1, "distance": 4.0, "lookat": (0.0, 0.0, 2.0), "elevation": -20.0},
    "humanoid_standup": {"trackbodyid": 1, "distance": 4.0, "lookat": (0.0, 0.0, 0.8925),
                         "elevation": -20.0},
    "inverted_double_pendulum": None,  # (v5 defines a config but defaults to none)
    "inverted_pendulum": {"trackbodyid": 0, "distance": 2.04},
    "pusher": {"trackbodyid": -1, "distance": 4.0},
    "reacher": {"trackbodyid": 0},
    "swimmer": None,
    "walker2d": {"trackbodyid": 2, "distance": 4.0, "lookat": (0.0, 0.0, 1.15), "elevation": -20.0},
}

# The reward's Python type in Gymnasium v5 (np.float64 unless listed).
REWARD_TYPES: dict[str, type] = {"inverted_pendulum": int}

# Envs whose v5 class has ``observation_structure``, and how to read it off the
# observation's parts: (skipped qpos, then blocks of (name, size)).
_NO_STRUCTURE = {"inverted_double_pendulum", "pusher", "reacher"}


def v5_camera_config(task: str) -> dict[str, Any] | None:
    """A fresh copy of the v5 env's default camera config (arrays as v5 has them)."""
    config = DEFAULT_CAMERA_CONFIGS.get(task)
    if config is None:
        return None
    return {k: np.array(v) if isinstance(v, tuple) else v for k, v in config.items()}


def expand_model_path(xml_file: str) -> str:
    """Gymnasium's rule: "./", "/" and "~" paths as given, bare names in the assets."""
    if xml_file.startswith(".") or xml_file.startswith("/"):
        return xml_file
    if xml_file.startswith("~"):
        return os.path.expanduser(xml_file)
    return os.path.join(str(ASSET_DIR), xml_file)


def check_render_mode(render_mode: str | None) -> None:
    if render_mode is not None and render_mode not in RENDER_MODES:
        raise ValueError(f"render_mode should be None or one of {RENDER_MODES}, got {render_mode!r}")


# do_simulation's MuJoCo steps per call between signal checks (about 10-50 ms).
_SIMULATION_CHUNK = 1000
# The mjData fields v5's reset_model (set_state: qpos, qvel, mj_forward) leaves
# as they were and MuJoCo's reset data would clear: inputs of mj_forward and
# what only mj_rnePostConstraint writes.
_KEPT_BY_RESET_MODEL = ("ctrl", "act", "qacc_warmstart", "qfrc_applied", "xfrc_applied", "mocap_pos",
                        "mocap_quat", "userdata", "plugin_state", "cacc", "cfrc_int", "cfrc_ext")


class NativeMujocoEnv(Reconstructible, MujocoEnv):
    """A Gymnasium ``MujocoEnv`` whose physics, observation and reward run natively.

    Subclasses (one per registered single-agent task, derived in
    :mod:`joltgym_marl.envs`) name their task in ``task``. Keyword arguments
    are those of the matching Gymnasium ``*-v5`` env, rendering ones included
    (``render_mode``, ``width``, ``height``, ``camera_id``, ``camera_name``,
    ``default_camera_config``, ``max_geom``, ``visual_options``); unknown ones
    raise ``TypeError`` listing the allowed names. ``dtype=np.float32`` gives
    float32 observations (v5's are float64, the default). Episode length is
    left to Gymnasium's ``TimeLimit`` (``max_episode_steps=1000`` in the
    registration), as for Gymnasium's own MuJoCo envs.
    """

    task: ClassVar[str] = ""
    metadata: ClassVar[dict[str, Any]] = {"render_modes": RENDER_MODES}

    def __init__(self, render_mode: str | None = None, width: int = 480, height: int = 480,
                 camera_id: int | None = None, camera_name: str | None = None,
                 default_camera_config: dict[str, Any] | None | str = "v5",
                 max_geom: int = 1000, visual_options: dict[int, bool] | None = None,
                 dtype: Any = np.float64, **kwargs: Any):
        check_render_mode(render_mode)
        width, height = rendering.check_render_size(width, height, 1, 16384)
        rendering.check_camera_kind(camera_id, camera_name)
        self._dtype = np.dtype(dtype)
        if self._dtype not in (np.dtype(np.float64), np.dtype(np.float32)):
            raise ValueError(f"dtype should be numpy.float64 or numpy.float32, got {dtype!r}")
        if isinstance(default_camera_config, str):
            if default_camera_config != "v5":
                raise ValueError("default_camera_config should be a dict or None, "
                                 f"got {default_camera_config!r}")
            default_camera_config = v5_camera_config(self.task)
        self._remember(render_mode=render_mode, width=width, height=height, camera_id=camera_id,
                       camera_name=camera_name, default_camera_config=default_camera_config,
                       max_geom=max_geom, visual_options=visual_options, dtype=self._dtype.name, **kwargs)
        self._core = _core.SingleAgentCore(self.task, max_episode_steps=None, **kwargs)
        self._options = {**_defaults(self.task), **self._core.kwargs}  # v5's keyword arguments, for the helpers
        self.render_mode = render_mode
        self.width, self.height = width, height
        self.camera_id, self.camera_name = camera_id, camera_name
        self._render_options = (default_camera_config, max_geom, visual_options or {})
        self._mujoco: tuple[Any, Any] | None = None  # (MjModel, MjData) once read
        self._materialize_lock = threading.Lock()
        self._renderer = None
        self.fullpath = expand_model_path(self._core.kwargs.get("xml_file", _defaults(self.task)["xml_file"]))
        self.frame_skip = self._core.frame_skip
        self.init_qpos, self.init_qvel = self._core.get_state()
        self.metadata = {**type(self).metadata, "render_fps": int(np.round(1.0 / self.dt))}
        self.observation_space = spaces.Box(-np.inf, np.inf, shape=(self._core.obs_dim,), dtype=self._dtype)
        self.action_space = spaces.Box(low=self._core.action_low, high=self._core.action_high, dtype=np.float32)
        self._action_shape = (self._core.act_dim,)
        self._reward_type = REWARD_TYPES.get(self.task, np.float64)
        structure = observation_structure(self.task, self._core)
        if structure is not None:
            self.observation_structure = structure

    # -- the live MuJoCo objects ----------------------------------------------------

    def _materialize(self) -> tuple[Any, Any]:
        if self._mujoco is None:
            with self._materialize_lock:  # two threads' first reads make one pair
                return self._materialize_once()
        return self._mujoco

    def _materialize_once(self) -> tuple[Any, Any]:
        if self._mujoco is None:
            from joltgym_marl import rendering

            rendering.prefer_headless_gl()
            import mujoco

            model = rendering.model_from_mjb(mujoco, self._core.model_mjb())
            # As MujocoEnv: grow (never shrink) the offscreen buffer to the frame size.
            model.vis.global_.offwidth = max(model.vis.global_.offwidth, self.width)
            model.vis.global_.offheight = max(model.vis.global_.offheight, self.height)
            data = mujoco.MjData(model)
            self._core.adopt_mujoco(model, data)
            self._mujoco = (model, data)
        return self._mujoco

    @property
    def model(self):
        """The ``mujoco.MjModel`` the world runs on (changes to it take effect)."""
        return self._materialize()[0]

    @property
    def data(self):
        """The ``mujoco.MjData`` the world runs on: the current state, always."""
        return self._materialize()[1]

    @property
    def mujoco_renderer(self):
        """Gymnasium's ``MujocoRenderer`` of this env (made on first use)."""
        if self._renderer is None:
            from gymnasium.envs.mujoco.mujoco_rendering import MujocoRenderer

            for name, value in (("width", self.width), ("height", self.height)):
                if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not 1 <= value <= 16384:
                    raise ValueError(f"{name} should be an int in [1, 16384], got {value!r}")
            model, data = self._materialize()
            rendering.check_camera(model, self.camera_id, self.camera_name)
            camera_config, max_geom, visual_options = self._render_options
            self._renderer = MujocoRenderer(model, data, camera_config, self.width, self.height, max_geom,
                                            self.camera_id, self.camera_name, visual_options)
        return self._renderer

    @property
    def dt(self) -> float:
        """Simulated seconds per step: ``model.opt.timestep * frame_skip``."""
        return self._core.dt

    @property
    def core(self):
        """The native single-world core behind this env."""
        return self._core

    # -- Gymnasium API -------------------------------------------------------------

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        """Starts an episode, its noise drawn from ``self.np_random`` (seeded by
        ``seed``, as Gymnasium's env): ``reset(seed=s)`` and the unseeded resets
        after it give the initial states of Gymnasium's ``-v5`` env seeded ``s``."""
        super(MujocoEnv, self).reset(seed=seed)
        obs, info = self._reset_from_np_random(options)
        if self.render_mode == "human":
            self.render()
        return self._obs(obs), info

    def reset_model(self) -> np.ndarray:
        """Resets the robot (its noise from ``np_random``); returns the observation.

        As v5's, which only sets ``qpos``/``qvel`` and runs ``mj_forward``: what
        that leaves alone stays (the controls, the time, the solver's warm
        start, the contact forces of the last ``mj_rnePostConstraint``), so a
        ``do_simulation`` after it steps bit for bit as v5's does.
        (``reset()`` starts from MuJoCo's reset data, as v5's.)"""
        data = self._materialize()[1]
        kept = {name: np.copy(getattr(data, name)) for name in _KEPT_BY_RESET_MODEL}
        time = data.time
        self._reset_from_np_random(None)  # MuJoCo's reset data, the noise, mj_forward
        for name, value in kept.items():
            getattr(data, name)[:] = value
        data.time = time
        # v5's set_state (mj_forward), with the kept controls and warm start: natively, with the
        # GIL held (mujoco.mj_forward releases it, and another thread's step on the same data
        # crashed the process).
        self._core.set_state(data.qpos.copy(), data.qvel.copy())
        return self._get_obs()

    def _reset_from_np_random(self, options):
        generator = self.np_random.bit_generator
        state = generator.state
        if state.get("bit_generator") != "PCG64":
            raise ValueError("env.np_random should be a numpy Generator over PCG64 (Gymnasium's default) "
                             f"for the native reset noise, got {state.get('bit_generator')!r}")
        self._core.rng_state = (state["state"]["state"], state["state"]["inc"])
        obs, info = self._core.reset(options=options)
        state["state"]["state"], state["state"]["inc"] = self._core.rng_state
        generator.state = state
        return obs, info

    def step(self, action):
        try:
            obs, reward, terminated, truncated, info = self._core.step(action)
        except ValueError as error:
            found = np.shape(action)
            if found != self._action_shape:
                raise ValueError(f"Action dimension mismatch. Expected {self._action_shape}, found {found}: "
                                 f"{error}") from None
            raise
        if self.render_mode == "human":
            self.render()
        return self._obs(obs), self._reward_type(reward), terminated, truncated, info

    def _obs(self, obs: np.ndarray) -> np.ndarray:
        return obs if self._dtype == np.float64 else obs.astype(self._dtype)

    def _get_obs(self) -> np.ndarray:
        """The observation of the current state (after ``do_simulation`` or a
        change to ``data``, as v5's ``_get_obs``)."""
        return self._obs(self._core.observe())

    def _step_mujoco_simulation(self, ctrl, n_frames) -> None:
        """``do_simulation``'s stepping, as v5's (``mj_step`` on ``model``/``data``,
        then ``mj_rnePostConstraint``), natively on the world's engine and with
        the GIL held, as ``step`` does: another thread's ``step``, ``reset`` or
        ``do_simulation`` on this env waits for it instead of stepping the same
        ``data`` at once (MuJoCo's ``mj_step`` releases the GIL: two threads on
        one ``data`` crashed the process). It runs in calls of at most
        ``_SIMULATION_CHUNK`` timesteps, each polling signals as a step does,
        so a huge ``n_frames`` (``do_simulation(ctrl, 10**9)``: hours) is
        interrupted by Ctrl-C or an alarm instead of hanging the interpreter.
        ``n_frames`` that is not an int goes to MuJoCo as is, which answers as
        on v5; ``n_frames <= 0`` steps nothing, as v5's (``nstep`` below 1 is a
        no-op there too)."""
        data = self._materialize()[1]
        self._core.check_model()  # options MuJoCo would crash on (v5's would)
        data.ctrl[:] = ctrl
        if not isinstance(n_frames, (int, np.integer)):
            self._core.simulate(n_frames)  # raises TypeError naming n_frames (v5's mj_step does)
            return
        remaining = int(n_frames)  # (True is 1, as on v5)
        if remaining <= 0:
            self._core.simulate(0)
        while remaining > 0:
            chunk = min(remaining, _SIMULATION_CHUNK)
            self._core.simulate(chunk)
            remaining -= chunk

    def get_state(self) -> tuple[np.ndarray, np.ndarray]:
        """Copies of ``(qpos, qvel)``."""
        return self._core.get_state()

    def set_state(self, qpos, qvel) -> None:
        """Sets ``qpos``/``qvel`` and runs ``mj_forward``, like Gymnasium's ``set_state``."""
        self._core.set_state(qpos, qvel)

    def render(self):
        """A frame as v5 renders it (``rgb_array``, ``depth_array``, ``rgbd_tuple``),
        or a viewer update (``human``, which needs a display: without one, v5's
        aborts the process, ours raises RuntimeError). Without a render mode it
        warns and returns None, as Gymnasium's other envs do (v5's raises
        AttributeError("Unexpected mode: None"))."""
        if self.render_mode is None:
            from joltgym_marl import rendering
            from joltgym_marl.registry import TASKS

            env_id = self.spec.id if self.spec is not None else TASKS[self.task].env_id
            rendering.warn_no_render_mode(f'gymnasium.make("{env_id}", render_mode="rgb_array")')
            return None
        if self.render_mode == "human":
            from joltgym_marl import rendering

            if not rendering.has_display():
                raise RuntimeError(rendering.NO_DISPLAY)
        # What MuJoCo's renderer reads of a model a user may have changed (an index array
        # pointing outside the model crashed the process), checked before it is read.
        self._materialize()
        self._core.check_model()
        return self.mujoco_renderer.render(self.render_mode)

    def close(self) -> None:
        """Releases the renderer; the env stays usable, as v5's."""
        if self._renderer is not None:
            self._renderer.close()
            self._renderer = None


def observation_structure(task: str, core) -> dict[str, int] | None:
    """v5's ``observation_structure`` for the env's options, or None where v5 has none."""
    if task in _NO_STRUCTURE:
        return None
    qpos, qvel = core.get_state()
    nq, nv = qpos.size, qvel.size
    if task == "inverted_pendulum":
        return {"qpos": nq, "qvel": nv}
    options = {**_defaults(task), **core.kwargs}
    skipped = 1 if task in ("half_cheetah", "hopper", "walker2d") else 2
    skipped = skipped if options.get("exclude_current_positions_from_observation", True) else 0
    structure = {"skipped_qpos": skipped, "qpos": nq - skipped, "qvel": nv}
    rest = core.obs_dim - (nq - skipped) - nv
    if task == "ant":
        structure["cfrc_ext"] = rest
    elif task in ("humanoid", "humanoid_standup"):
        # Per body but the world: cinert 10, cvel 6, cfrc_ext 6; qfrc_actuator[6:];
        # no tendon values (v5's humanoids observe none).
        per_body = {name: size * bool(options.get(f"include_{name}_in_observation", True))
                    for name, size in (("cinert", 10), ("cvel", 6), ("cfrc_ext", 6))}
        actuator = (nv - 6) * bool(options.get("include_qfrc_actuator_in_observation", True))
        total = sum(per_body.values())
        bodies = (rest - actuator) // total if total else 0
        structure.update(cinert=per_body["cinert"] * bodies, cvel=per_body["cvel"] * bodies,
                         qfrc_actuator=actuator, cfrc_ext=per_body["cfrc_ext"] * bodies,
                         ten_length=0, ten_velocity=0)
    return structure


def _defaults(task: str) -> dict[str, Any]:
    from joltgym_marl.registry import TASKS

    return TASKS[task].defaults()
