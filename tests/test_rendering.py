"""Rendering: rgb_array frames of every env, headless (EGL), without touching the physics."""

from __future__ import annotations

import functools
import threading

import gymnasium as gym
import numpy as np
import pytest
from pettingzoo.test import render_test

import joltgym_marl
from joltgym_marl import MULTI_AGENT_ENVS, SINGLE_AGENT_ENVS, cheetah_race_v0, sumo_v0

GYM_IDS = [env_id for env_id, _, _ in SINGLE_AGENT_ENVS]


def assert_frame(frame, height, width):
    assert isinstance(frame, np.ndarray) and frame.dtype == np.uint8
    assert frame.shape == (height, width, 3)
    assert frame.std() > 5  # not a constant image


@pytest.mark.parametrize("env_id", GYM_IDS)
def test_gymnasium_env_frames(env_id):
    env = gym.make(env_id, render_mode="rgb_array", width=160, height=120)
    env.reset(seed=0)
    first = env.render()
    assert_frame(first, 120, 160)
    again = env.render()
    np.testing.assert_array_equal(first, again)  # same state, same frame
    env.action_space.seed(0)
    for _ in range(20):
        env.step(env.action_space.sample())
    moved = env.render()
    assert_frame(moved, 120, 160)
    assert not np.array_equal(first, moved)
    env.close()


@pytest.mark.parametrize("name", sorted(MULTI_AGENT_ENVS))
def test_shared_world_frames_and_distinct_agent_colours(name):
    env = MULTI_AGENT_ENVS[name].parallel_env(render_mode="rgb_array", width=200, height=150)
    env.reset(seed=1)
    first = env.render()
    assert_frame(first, 150, 200)
    np.testing.assert_array_equal(first, env.render())
    for _ in range(15):
        env.step({a: env.action_space(a).sample() for a in env.agents})
    assert not np.array_equal(first, env.render())
    renderer = env._renderer
    colours = {tuple(np.round(renderer.model.geom_rgba[g], 3)) for g in range(renderer.model.ngeom)
               if renderer.model.body_rootid[renderer.model.geom_bodyid[g]] != 0}
    assert len(colours) >= env.world.num_agents  # each agent has its own colour
    env.close()


def test_rendering_does_not_change_the_simulation():
    actions = np.random.default_rng(0).uniform(-1, 1, (60, 4, 6)).astype(np.float32)

    def rollout(render_mode):
        env = cheetah_race_v0.parallel_env(num_agents=4, layout="shared_track", render_mode=render_mode,
                                           width=64, height=48)
        env.reset(seed=5)
        trace = []
        for t in range(60):
            obs, rewards, *_ = env.step({f"cheetah_{k}": actions[t, k] for k in range(4)})
            if render_mode:
                env.render()
            trace.append(np.concatenate([obs[a] for a in sorted(obs)] + [list(rewards.values())]))
        return np.array(trace)

    np.testing.assert_array_equal(rollout(None), rollout("rgb_array"))

    def single(render_mode):
        env = gym.make("joltgym_marl/Ant-v0", render_mode=render_mode, width=64, height=48)
        obs, _ = env.reset(seed=2)
        out = [obs]
        for t in range(40):
            obs, *_ = env.step(actions[t].ravel()[:8])
            if render_mode:
                env.render()
            out.append(obs)
        return np.array(out)

    np.testing.assert_array_equal(single(None), single("rgb_array"))


def test_rendering_a_pool_world_while_other_threads_step():
    envs = gym.make_vec("joltgym_marl/HalfCheetah-v0", num_envs=16, vectorization_mode="vector_entry_point",
                        num_threads=2, render_mode="rgb_array", render_world=3, width=96, height=64)
    envs.reset(seed=0)
    stop = threading.Event()
    errors = []

    def stepper():
        try:
            actions = np.zeros((16, 6), np.float32)
            while not stop.is_set():
                envs.step(actions + 0.5)
        except Exception as error:  # pragma: no cover - reported below
            errors.append(error)

    thread = threading.Thread(target=stepper)
    thread.start()
    try:
        frames = [envs.render() for _ in range(20)]
    finally:
        stop.set()
        thread.join()
    assert not errors
    for frame in frames:
        assert_frame(frame, 64, 96)
    assert len({frame.tobytes() for frame in frames}) > 1  # the world moved between renders
    envs.close()


def test_agent_vector_env_renders_a_chosen_world():
    venv = sumo_v0.vec_env(3, render_mode="rgb_array", render_world=2, num_threads=2)
    venv.reset(seed=0)
    venv.step(np.zeros((6, 8), np.float32))
    assert_frame(venv.render(), 480, 640)
    with pytest.raises(ValueError, match=r"render_world should be a world index in \[0, 3\), got 3"):
        sumo_v0.vec_env(3, render_mode="rgb_array", render_world=3)
    venv.close()


@pytest.mark.parametrize("name", sorted(MULTI_AGENT_ENVS))
def test_pettingzoo_render_test(name, monkeypatch):
    monkeypatch.delenv("DISPLAY", raising=False)
    module = MULTI_AGENT_ENVS[name]
    render_test(functools.partial(module.env, width=64, height=48))


def test_human_mode_without_a_display_fails_clearly(monkeypatch):
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    # A PettingZoo env takes it (PettingZoo's own render_test constructs every
    # env with render_mode="human" to read its render_modes, display or not),
    # lists only rgb_array then, and refuses the first render() before drawing.
    env = cheetah_race_v0.parallel_env(render_mode="human")
    env.reset(seed=0)
    assert env.metadata["render_modes"] == ["rgb_array"]
    with pytest.raises(RuntimeError, match="render_mode='human' needs a display, and this machine has none"):
        env.render()
    # Gymnasium envs construct, as v5's (whose metadata lists "human" on any
    # machine); their first render (reset renders in human mode) raises where
    # v5's aborts the process.
    env = joltgym_marl.envs.HalfCheetahEnv(render_mode="human")
    with pytest.raises(RuntimeError, match="render_mode='human' needs a display"):
        env.reset(seed=0)


def test_bad_render_arguments():
    with pytest.raises(ValueError, match="render_mode should be None, 'rgb_array' or 'human', got 'rgb'"):
        cheetah_race_v0.parallel_env(render_mode="rgb")
    # Refused by the constructor, not at the first render().
    with pytest.raises(ValueError, match=r"width should be in \[1, 16384\], got 0"):
        gym.make("joltgym_marl/HalfCheetah-v0", render_mode="rgb_array", width=0)
    assert joltgym_marl.HalfCheetahCore().reset(seed=0)  # the physics is unaffected by all this
