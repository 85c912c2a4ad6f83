"""The SB3 ``VecEnv`` of the single-agent tasks against SB3's ``DummyVecEnv``
of Gymnasium's ``-v5`` envs, the oracle: the same observations, rewards,
dones, infos (``terminal_observation``, ``TimeLimit.truncated``, reward terms),
``reset_infos``, world for world; SB3's wrappers on it equal the same wrappers
on ``DummyVecEnv``; a seeded PPO run ends with the same weights.

SB3 has no checker for ``VecEnv`` objects (``env_checker.check_env`` takes a
``gymnasium.Env``); the contract is checked here against ``DummyVecEnv``.
"""

from __future__ import annotations

import pickle

import gymnasium
import numpy as np
import pytest
from conftest import GYM_IDS, REFERENCE_IDS, SINGLE_TASKS, random_actions

import joltgym_marl  # noqa: F401  (registers the envs)
from joltgym_marl import StateError
from joltgym_marl.vector import make_sb3_vec_env

pytest.importorskip("stable_baselines3")
from stable_baselines3.common.vec_env import (  # noqa: E402
    DummyVecEnv,
    VecFrameStack,
    VecMonitor,
    VecNormalize,
)


def dummy_vec_env(task: str, n: int, **make_kwargs) -> DummyVecEnv:
    return DummyVecEnv([lambda: gymnasium.make(REFERENCE_IDS[task], **make_kwargs)] * n)


def assert_infos_equal(ours: dict, theirs: dict, where: str) -> None:
    assert ours.keys() == theirs.keys(), where
    for key, value in theirs.items():
        if isinstance(value, (bool, np.bool_, str)):
            assert ours[key] == value, f"{where}: {key}"
        else:
            np.testing.assert_allclose(ours[key], value, rtol=1e-6, atol=1e-6, err_msg=f"{where}: {key}")


@pytest.mark.parametrize("task", SINGLE_TASKS)
def test_steps_equal_dummy_vec_env(task):
    """Seeded alike, stepped with the same random actions over many short
    episodes (truncated at 7 steps, and every termination the task has)."""
    n, steps = 3, 40
    ours = make_sb3_vec_env(GYM_IDS[task], n, max_episode_steps=7, num_threads=2)
    theirs = dummy_vec_env(task, n, max_episode_steps=7)
    actions = random_actions(theirs.action_space, steps, seed=5, batch=(n,))
    for seed in (0, 2**64 + 5):
        assert ours.seed(seed) == theirs.seed(seed)
        obs, their_obs = ours.reset(), theirs.reset()
        np.testing.assert_array_equal(obs, their_obs)
        for i in range(n):
            assert_infos_equal(ours.reset_infos[i], theirs.reset_infos[i], f"reset, world {i}")
        ended = 0
        for t, action in enumerate(actions):
            obs, rewards, dones, infos = ours.step(action)
            their_obs, their_rewards, their_dones, their_infos = theirs.step(action)
            where = f"seed {seed}, step {t}"
            assert obs.dtype == their_obs.dtype == np.float64 and dones.dtype == np.bool_
            assert rewards.dtype == their_rewards.dtype == np.float32  # as DummyVecEnv buffers them
            np.testing.assert_array_equal(obs, their_obs, err_msg=where)
            np.testing.assert_array_equal(rewards, their_rewards, err_msg=where)
            np.testing.assert_array_equal(dones, their_dones, err_msg=where)
            assert isinstance(infos, list) and len(infos) == n
            for i in range(n):
                assert_infos_equal(infos[i], their_infos[i], f"{where}, world {i}")
                if dones[i]:
                    assert_infos_equal(ours.reset_infos[i], theirs.reset_infos[i], f"{where}, reset info {i}")
            ended += int(dones.sum())
        assert ended >= 3 * n, "several episodes per world should have ended"
    ours.close()
    theirs.close()


@pytest.mark.parametrize("wrap", ["VecNormalize", "VecFrameStack", "VecMonitor"])
def test_sb3_wrappers_equal_their_dummy_vec_env_runs(wrap):
    """Each SB3 wrapper gives the same outputs on ours as on DummyVecEnv,
    terminal observations included (VecNormalize normalizes them, VecFrameStack
    stacks them, VecMonitor adds the episode's return and length)."""
    task, n = "hopper", 4
    wrappers = {
        "VecNormalize": lambda v: VecNormalize(v, gamma=0.9),
        "VecFrameStack": lambda v: VecFrameStack(v, n_stack=3),
        "VecMonitor": VecMonitor,
    }
    ours = wrappers[wrap](make_sb3_vec_env(GYM_IDS[task], n, max_episode_steps=9, num_threads=2))
    theirs = wrappers[wrap](dummy_vec_env(task, n, max_episode_steps=9))
    ours.seed(3)
    theirs.seed(3)
    np.testing.assert_allclose(ours.reset(), theirs.reset(), rtol=1e-5, atol=1e-5)
    episodes = 0
    for t, action in enumerate(random_actions(theirs.action_space, 30, seed=1, batch=(n,))):
        obs, rewards, dones, infos = ours.step(action)
        their_obs, their_rewards, their_dones, their_infos = theirs.step(action)
        np.testing.assert_allclose(obs, their_obs, rtol=1e-5, atol=1e-5, err_msg=f"step {t}")
        np.testing.assert_allclose(rewards, their_rewards, rtol=1e-5, atol=1e-5, err_msg=f"step {t}")
        np.testing.assert_array_equal(dones, their_dones)
        for i in np.flatnonzero(dones):
            np.testing.assert_allclose(infos[i]["terminal_observation"], their_infos[i]["terminal_observation"],
                                       rtol=1e-5, atol=1e-5)
            if wrap == "VecMonitor":
                assert infos[i]["episode"]["l"] == their_infos[i]["episode"]["l"]
                np.testing.assert_allclose(infos[i]["episode"]["r"], their_infos[i]["episode"]["r"], rtol=1e-5)
            episodes += 1
    assert episodes >= n
    if wrap == "VecNormalize":
        np.testing.assert_allclose(ours.obs_rms.mean, theirs.obs_rms.mean, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(ours.ret_rms.var, theirs.ret_rms.var, rtol=1e-5)
    ours.close()
    theirs.close()


def ppo_weights(venv, **kwargs) -> dict[str, np.ndarray]:
    from stable_baselines3 import PPO

    model = PPO("MlpPolicy", venv, n_steps=128, batch_size=64, n_epochs=2, seed=0, device="cpu", **kwargs)
    model.learn(2 * 128 * venv.num_envs)
    return {name: p.detach().numpy().copy() for name, p in model.policy.state_dict().items()}


@pytest.mark.parametrize("task", ["half_cheetah", "hopper", "ant"])
def test_seeded_ppo_equals_dummy_vec_env_run(task):
    """``PPO(..., seed=0)`` on ours and on ``DummyVecEnv`` of Gymnasium's ``-v5``
    envs (three worlds, episodes truncated at 100 steps so that bootstrapping
    from ``terminal_observation`` happens): every parameter bit-identical.
    Torch on one thread, so that its reductions run in the same order."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        ours = ppo_weights(make_sb3_vec_env(GYM_IDS[task], 3, max_episode_steps=100, num_threads=2))
        theirs = ppo_weights(dummy_vec_env(task, 3, max_episode_steps=100))
    finally:
        torch.set_num_threads(threads)
    assert ours.keys() == theirs.keys()
    for name in ours:
        np.testing.assert_array_equal(ours[name], theirs[name], err_msg=name)


@pytest.mark.filterwarnings("ignore:rich is experimental")  # tqdm's, on every SB3 progress bar
def test_ppo_learns_with_vec_normalize_and_progress_bar():
    """The usual stack: VecNormalize over the native env, PPO with SB3's
    progress bar (tqdm and rich), saved and loaded."""
    from stable_baselines3 import PPO

    venv = VecNormalize(make_sb3_vec_env("joltgym_marl/InvertedPendulum-v0", 8, num_threads=2))
    model = PPO("MlpPolicy", venv, n_steps=64, batch_size=128, seed=1, device="cpu")
    model.learn(2 * 64 * 8, progress_bar=True)
    assert model.num_timesteps == 2 * 64 * 8
    assert len(model.ep_info_buffer) == 0  # no Monitor: SB3 records nothing, as on DummyVecEnv
    venv.close()


# -- the rest of the VecEnv contract -----------------------------------------------------


@pytest.fixture
def venv():
    env = make_sb3_vec_env("joltgym_marl/Hopper-v0", 4, num_threads=2)
    yield env
    env.close()


def test_attributes_and_methods(venv):
    assert venv.num_envs == 4 and venv.render_mode is None and venv.metadata == {"render_modes": []}
    assert venv.observation_space == gymnasium.spaces.Box(-np.inf, np.inf, (11,), np.float64)  # v5's
    assert venv.get_attr("render_mode") == [None] * 4
    assert venv.get_attr("observation_space", indices=[1, 2]) == [venv.observation_space] * 2
    assert venv.has_attr("spec") and not venv.has_attr("no_such_attribute")
    venv.set_attr("my_flag", 3)
    assert venv.get_attr("my_flag", indices=0) == [3]
    with pytest.raises(ValueError, match=r"should address all 4 worlds .* got indices \[0\]"):
        venv.set_attr("my_flag", 4, indices=[0])
    assert venv.env_is_wrapped(gymnasium.Wrapper) == [False] * 4
    venv.seed(0)
    venv.reset()
    qpos, qvel = venv.env_method("get_state", indices=[2])[0]
    twin = make_sb3_vec_env("hopper", 3)
    twin.seed(2)
    twin.reset()
    np.testing.assert_array_equal(qpos, twin.env_method("get_state", indices=0)[0][0])
    venv.env_method("set_state", qpos * 0, qvel * 0, indices=[0, 1])
    for q, v in venv.env_method("get_state", indices=[0, 1]):
        assert not q.any() and not v.any()
    with pytest.raises(AttributeError, match=r"one of \['get_state', 'set_state', 'render'\], got 'close'"):
        venv.env_method("close")
    with pytest.raises(IndexError, match=r"indices should be ints in \[0, 4\), got 7"):
        venv.get_attr("render_mode", indices=[7])
    assert venv.get_images() == [None] * 4
    twin.close()


def test_seed_semantics_match_dummy_vec_env(venv):
    """Seeds apply at the next reset only; a second reset continues each
    world's stream; seed(None) draws a random base seed (from NumPy's global
    generator, as SB3 does); non-consecutive seeds reset world by world."""
    theirs = dummy_vec_env("hopper", 4)
    for seed in (5, None):
        np.random.seed(11)
        mine = venv.seed(seed)
        np.random.seed(11)
        assert mine == theirs.seed(seed)
        for _ in range(2):
            np.testing.assert_array_equal(venv.reset(), theirs.reset())
    venv._seeds = theirs._seeds = [4, 1, None, 9]
    np.testing.assert_array_equal(venv.reset()[[0, 1, 3]], theirs.reset()[[0, 1, 3]])
    for bad in (-1, 1.5, True):
        with pytest.raises(ValueError, match="seed should be a non-negative int or None"):
            venv.seed(bad)


def test_bad_use_is_a_clear_error(venv):
    with pytest.raises(ValueError, match=r"Gymnasium id or native name .* got 'Hopper-v5'"):
        make_sb3_vec_env("Hopper-v5", 2)
    with pytest.raises(ValueError, match="got 'sumo'"):
        make_sb3_vec_env("sumo", 2)
    with pytest.raises(ValueError, match="render_mode should be None or 'rgb_array', got 'human'"):
        make_sb3_vec_env("hopper", 2, render_mode="human")
    with pytest.raises(TypeError):
        make_sb3_vec_env("hopper", 2, no_such_kwarg=1)
    for bad in (0, -3, 2.5, True, "x"):
        with pytest.raises(ValueError, match=r"max_episode_steps should be an int"):
            make_sb3_vec_env("hopper", 2, max_episode_steps=bad)
    with pytest.raises(ValueError, match="num_envs should be in"):
        make_sb3_vec_env("hopper", 0)
    venv.seed(0)
    venv.reset()
    with pytest.raises(StateError, match="without step_async"):
        venv.step_wait()
    before = venv.env_method("get_state")
    with pytest.raises(ValueError, match=r"\(4, 3\)"):
        venv.step(np.zeros((4, 2), np.float32))
    with pytest.raises(ValueError):
        venv.step(np.full((4, 3), np.nan, np.float32))
    for (q0, v0), (q1, v1) in zip(before, venv.env_method("get_state")):
        np.testing.assert_array_equal(q0, q1)
        np.testing.assert_array_equal(v0, v1)
    venv.close()
    venv.close()  # idempotent
    with pytest.raises(StateError, match="closed"):
        venv.reset()
    with pytest.raises(StateError, match="closed"):
        venv.step(np.zeros((4, 3), np.float32))


def test_pickles_and_renders():
    import cloudpickle

    venv = make_sb3_vec_env("joltgym_marl/HalfCheetah-v0", 2, render_mode="rgb_array", width=64, height=48,
                            ctrl_cost_weight=0.3)
    for dumps in (pickle.dumps, cloudpickle.dumps):
        copy = pickle.loads(dumps(venv))
        assert type(copy) is type(venv) and copy.num_envs == 2 and copy.pool is not venv.pool
        copy.close()
    venv.seed(0)
    venv.reset()
    frames = venv.get_images()
    assert len(frames) == 2 and frames[0].shape == (48, 64, 3) and frames[0].dtype == np.uint8
    from stable_baselines3.common.vec_env.base_vec_env import tile_images

    np.testing.assert_array_equal(venv.render(), tile_images(frames))  # SB3's tiling of every world's frame
    assert not (frames[0] == 0).all()
    assert venv.metadata == {"render_modes": ["human", "rgb_array"]}
    venv.close()
