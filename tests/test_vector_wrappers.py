"""Gymnasium's own vector wrappers on the native vector env, each against the
same wrapper on Gymnasium's ``SyncVectorEnv`` of the ``-v5`` envs (the oracle):
``RecordEpisodeStatistics``, ``ClipAction``, ``NormalizeObservation``,
``NormalizeReward``, and CleanRL's whole stack of them
(``examples/cleanrl_ppo_continuous.py``)."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
from conftest import GYM_IDS, REFERENCE_IDS
from gymnasium.vector import AutoresetMode
from gymnasium.wrappers import vector as wrappers

import joltgym_marl  # noqa: F401  (registers the envs)


def cleanrl_stack(envs):
    envs = wrappers.RecordEpisodeStatistics(envs)
    envs = wrappers.ClipAction(envs)
    envs = wrappers.NormalizeObservation(envs)
    envs = wrappers.TransformObservation(envs, lambda obs: np.clip(obs, -10, 10))
    envs = wrappers.NormalizeReward(envs, gamma=0.99)
    return wrappers.TransformReward(envs, lambda reward: np.clip(reward, -10, 10))


WRAPPERS = {
    "RecordEpisodeStatistics": wrappers.RecordEpisodeStatistics,
    "ClipAction": wrappers.ClipAction,
    "NormalizeObservation": wrappers.NormalizeObservation,
    "NormalizeReward": wrappers.NormalizeReward,
    "cleanrl_stack": cleanrl_stack,
}


def pair(task: str, n: int, mode: AutoresetMode, limit: int):
    ours = gymnasium.make_vec(GYM_IDS[task], num_envs=n, vectorization_mode="vector_entry_point",
                              max_episode_steps=limit, autoreset_mode=mode, num_threads=2)
    theirs = gymnasium.make_vec(REFERENCE_IDS[task], num_envs=n, vectorization_mode="sync",
                                max_episode_steps=limit, vector_kwargs={"autoreset_mode": mode})
    return ours, theirs


@pytest.mark.parametrize("mode", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP], ids=["next_step", "same_step"])
@pytest.mark.parametrize("name", list(WRAPPERS))
def test_wrapper_on_ours_equals_wrapper_on_sync_vector_env(name, mode):
    """Hopper (episodes end by falling and at 9 steps), actions drawn from
    twice the action range (ClipAction has something to clip): observations,
    rewards, flags and the wrapper's statistics agree step for step."""
    n, steps = 4, 60
    ours, theirs = pair("hopper", n, mode, limit=9)
    if name in ("NormalizeObservation", "cleanrl_stack") and mode == AutoresetMode.SAME_STEP:
        # Gymnasium's NormalizeObservation takes next-step auto-reset only; it
        # refuses ours as it refuses SyncVectorEnv.
        for envs in (ours, theirs):
            with pytest.raises(ValueError, match="NEXT_STEP"):
                WRAPPERS[name](envs)
        return
    low, high = theirs.single_action_space.low, theirs.single_action_space.high
    ours, theirs = WRAPPERS[name](ours), WRAPPERS[name](theirs)
    actions = np.random.default_rng(2).uniform(2 * low, 2 * high, size=(steps, n, len(low))).astype(np.float32)
    obs, _ = ours.reset(seed=7)
    their_obs, _ = theirs.reset(seed=7)
    # Ours returns v5's float64 values bit for bit, so the wrappers' statistics agree exactly.
    np.testing.assert_array_equal(obs, their_obs)
    episodes = 0
    for t, action in enumerate(actions):
        obs, rewards, terminated, truncated, infos = ours.step(action)
        their_obs, their_rewards, their_terminated, their_truncated, their_infos = theirs.step(action)
        where = f"step {t}"
        assert obs.dtype == their_obs.dtype and rewards.dtype == their_rewards.dtype, where
        np.testing.assert_array_equal(obs, their_obs, err_msg=where)
        np.testing.assert_array_equal(rewards, their_rewards, err_msg=where)
        np.testing.assert_array_equal(terminated, their_terminated, err_msg=where)
        np.testing.assert_array_equal(truncated, their_truncated, err_msg=where)
        assert ("episode" in infos) == ("episode" in their_infos), where
        if "episode" in infos:
            np.testing.assert_array_equal(infos["_episode"], their_infos["_episode"], err_msg=where)
            done = infos["_episode"]
            np.testing.assert_array_equal(infos["episode"]["r"][done], their_infos["episode"]["r"][done])
            np.testing.assert_array_equal(infos["episode"]["l"][done], their_infos["episode"]["l"][done])
            episodes += int(done.sum())
        if mode == AutoresetMode.SAME_STEP and "final_obs" in their_infos:
            for i in np.flatnonzero(their_infos["_final_obs"]):
                np.testing.assert_allclose(infos["final_obs"][i], their_infos["final_obs"][i], rtol=1e-5, atol=1e-5)
    if name in ("RecordEpisodeStatistics", "cleanrl_stack"):
        assert episodes >= 2 * n
        if name == "RecordEpisodeStatistics":
            assert list(ours.return_queue) == pytest.approx(list(theirs.return_queue), rel=1e-5)
    if name == "NormalizeObservation":
        np.testing.assert_allclose(ours.obs_rms.mean, theirs.obs_rms.mean, rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(ours.obs_rms.var, theirs.obs_rms.var, rtol=1e-4, atol=1e-5)
    if name == "NormalizeReward":
        np.testing.assert_allclose(ours.return_rms.var, theirs.return_rms.var, rtol=1e-4)
    ours.close()
    theirs.close()


def test_clip_action_clips_out_of_range_actions():
    """Like Gymnasium's MuJoCo envs, ours takes actions outside the action
    space (the comparisons above step both with such actions) and charges
    their control cost; under ClipAction the worlds get the clipped action, and
    the control cost is that of the clipped action."""
    ours, theirs = pair("half_cheetah", 2, AutoresetMode.NEXT_STEP, limit=50)
    big = np.full((2, 6), 5.0, np.float32)
    ours.reset(seed=0)
    np.testing.assert_allclose(ours.step(big)[4]["reward_ctrl"], -0.1 * 6 * 5.0**2, rtol=1e-6)
    clipped = wrappers.ClipAction(ours)
    clipped.reset(seed=0)
    np.testing.assert_allclose(clipped.step(big)[4]["reward_ctrl"], -0.1 * 6 * 1.0**2, rtol=1e-6)
    clipped.close()
    theirs.close()
