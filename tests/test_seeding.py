"""Seeded runs are Gymnasium's seeded runs.

Gymnasium's MuJoCo envs draw their reset noise from ``np_random``, NumPy's
``Generator(PCG64(SeedSequence(seed)))``. Each native world draws the same
numbers from a generator written natively (``src/native/rng.h``), so:

* the generator equals NumPy's, output for output and draw for draw;
* ``reset(seed=s)`` and the unseeded resets after it give, for every
  single-agent task, the initial states of Gymnasium's ``-v5`` env;
* the vector env seeded ``s`` equals Gymnasium's ``SyncVectorEnv`` seeded ``s``
  world for world, auto-resets included;
* a seeded Stable-Baselines3 PPO run ends with the same weights on ours as on
  Gymnasium's env.

Seeds are taken as Gymnasium takes them: any non-negative int, every bit of it.
"""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
from conftest import CORES, GYM_IDS, REFERENCE_IDS, SINGLE_TASKS, random_actions
from gymnasium.vector import AutoresetMode

import joltgym_marl  # noqa: F401  (registers the envs)
from joltgym_marl import WorldPool, _core

SEEDS = [0, 1, 42, 2**32 - 1, 2**32, 2**63, 2**64 - 1, 2**64, 2**64 + 5, 2**100 + 7, 2**128 - 1,
         12345678901234567890123456789012345678901234567890]


# -- the generator against NumPy ---------------------------------------------------


@pytest.mark.parametrize("seed", SEEDS)
def test_raw_outputs_equal_numpy_pcg64(seed):
    np.testing.assert_array_equal(_core._rng_raw(seed, 4000), np.random.PCG64(seed).random_raw(4000))


def numpy_draws(seed: int, kinds: str, low: float, high: float) -> np.ndarray:
    g = np.random.default_rng(seed)
    calls = {"u": lambda: g.uniform(low, high), "r": g.random, "n": g.standard_normal}
    return np.array([calls[k]() for k in kinds])


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("order", ["uniform-then-normal", "alternating", "random"])
def test_draws_equal_numpy_generator(seed, order):
    """uniform(low, high), random() and standard_normal() interleaved: the same
    doubles, bit for bit."""
    n = 3000
    if order == "uniform-then-normal":
        kinds = "u" * n + "n" * n
    elif order == "alternating":
        kinds = "unr" * n
    else:
        kinds = "".join(np.random.default_rng(seed % 1000).choice(list("unr"), size=2 * n))
    for low, high in [(-0.1, 0.1), (-0.005, 0.005), (-0.3, 0.0), (0.0, 2 * np.pi)]:
        ours = _core._rng_draws(seed, kinds, low, high)
        np.testing.assert_array_equal(ours, numpy_draws(seed, kinds, low, high))


def test_standard_normal_tails_equal_numpy():
    """Enough normals that every ziggurat layer rejects and the tail beyond
    r = 3.654 is sampled many times."""
    for seed in (0, 2**64 + 5):
        ours = _core._rng_draws(seed, "n" * 1_000_000)
        theirs = np.random.default_rng(seed).standard_normal(1_000_000)
        assert (np.abs(theirs) > 3.6541528853610088).sum() > 100
        np.testing.assert_array_equal(ours, theirs)


def test_seed_is_every_bit_of_the_int():
    """2**64 is not 0 (the low 64 bits once were all that counted)."""
    assert not np.array_equal(_core._rng_raw(2**64, 4), _core._rng_raw(0, 4))
    assert not np.array_equal(_core._rng_raw(2**64 + 5, 4), _core._rng_raw(5, 4))
    assert np.array_equal(_core._rng_raw(np.uint64(7), 4), _core._rng_raw(7, 4))
    with pytest.raises(ValueError, match="non-negative"):
        _core._rng_raw(-1, 4)
    with pytest.raises(TypeError):
        _core._rng_raw(1.0, 4)


# -- single-agent resets -----------------------------------------------------------

RESET_SEEDS = [0, 7, 2**32 + 1, 2**64 + 5]


def states_after_resets(reset, state, seed: int, count: int = 6) -> list[np.ndarray]:
    """The state after reset(seed=seed), then after each of `count - 1` unseeded resets."""
    out = []
    for k in range(count):
        reset(seed if k == 0 else None)
        qpos, qvel = state()
        out.append(np.concatenate([np.array(qpos), np.array(qvel)]))
    return out


def gymnasium_states(env: gymnasium.Env, seed: int) -> list[np.ndarray]:
    data = env.unwrapped.data
    return states_after_resets(lambda s: env.reset(seed=s), lambda: (data.qpos, data.qvel), seed)


@pytest.mark.parametrize("task", SINGLE_TASKS)
def test_core_resets_equal_gymnasium(task):
    theirs = gymnasium.make(REFERENCE_IDS[task])
    core = CORES[task]()
    for seed in RESET_SEEDS:
        want = gymnasium_states(theirs, seed)
        got = states_after_resets(lambda s: core.reset(seed=s), core.get_state, seed)
        for k, (a, b) in enumerate(zip(got, want)):
            np.testing.assert_array_equal(a, b, err_msg=f"seed {seed}, reset {k}")


@pytest.mark.parametrize("task", SINGLE_TASKS)
def test_env_resets_equal_gymnasium(task):
    """Through ``gymnasium.make``: states and observations."""
    theirs = gymnasium.make(REFERENCE_IDS[task])
    ours = gymnasium.make(GYM_IDS[task])
    for seed in RESET_SEEDS:
        for k in range(4):
            s = seed if k == 0 else None
            their_obs, _ = theirs.reset(seed=s)
            obs, _ = ours.reset(seed=s)
            np.testing.assert_array_equal(obs, their_obs, err_msg=f"seed {seed}, reset {k}")
            np.testing.assert_array_equal(ours.unwrapped.get_state()[0], theirs.unwrapped.data.qpos)
            np.testing.assert_array_equal(ours.unwrapped.get_state()[1], theirs.unwrapped.data.qvel)
        assert ours.unwrapped.np_random_seed == theirs.unwrapped.np_random_seed == seed


def test_unseeded_first_reset_draws_fresh_entropy():
    """As Gymnasium: ``np_random`` (and the native world) seeded from fresh
    entropy, ``np_random_seed`` that entropy; the world's state is the one
    Gymnasium's env seeded with that entropy starts in."""
    a, b = gymnasium.make("joltgym_marl/Hopper-v0"), gymnasium.make("joltgym_marl/Hopper-v0")
    obs_a, _ = a.reset()
    obs_b, _ = b.reset()
    assert not np.array_equal(obs_a, obs_b)
    entropy = a.unwrapped.np_random_seed
    assert isinstance(entropy, int) and entropy >= 0
    theirs = gymnasium.make("Hopper-v5")
    their_obs, _ = theirs.reset(seed=entropy)
    np.testing.assert_array_equal(obs_a, their_obs)
    # ... and unseeded resets continue the stream, as Gymnasium's do.
    np.testing.assert_array_equal(a.reset()[0], theirs.reset()[0])


# -- the vector env against SyncVectorEnv ------------------------------------------


def vector_pair(task: str, num_envs: int, mode: AutoresetMode, limit: int):
    ours = gymnasium.make_vec(GYM_IDS[task], num_envs=num_envs, vectorization_mode="vector_entry_point",
                              max_episode_steps=limit, autoreset_mode=mode, num_threads=2)
    theirs = gymnasium.make_vec(REFERENCE_IDS[task], num_envs=num_envs, vectorization_mode="sync",
                                max_episode_steps=limit, vector_kwargs={"autoreset_mode": mode})
    return ours, theirs


@pytest.mark.parametrize("mode", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP], ids=["next_step", "same_step"])
@pytest.mark.parametrize("task", SINGLE_TASKS)
def test_vector_env_equals_sync_vector_env(task, mode):
    """Seeded the same, stepped with the same random actions over many short
    episodes (``max_episode_steps=7`` on both, and every termination the task
    has): the same observations and rewards (float64, bit for bit),
    terminations and truncations, world for world."""
    n, steps = 3, 40
    ours, theirs = vector_pair(task, n, mode, limit=7)
    actions = random_actions(theirs.single_action_space, steps, seed=5, batch=(n,))
    for seed in (0, 2**64 + 5):
        obs, _ = ours.reset(seed=seed)
        their_obs, _ = theirs.reset(seed=seed)
        np.testing.assert_array_equal(obs, their_obs)
        ended = 0
        for t, action in enumerate(actions):
            obs, rew, term, trunc, info = ours.step(action)
            their_obs, their_rew, their_term, their_trunc, their_info = theirs.step(action)
            where = f"seed {seed}, step {t}"
            np.testing.assert_array_equal(obs, their_obs, err_msg=where)
            np.testing.assert_array_equal(rew, their_rew, err_msg=where)
            assert obs.dtype == their_obs.dtype and rew.dtype == their_rew.dtype, where
            np.testing.assert_array_equal(term, their_term, err_msg=where)
            np.testing.assert_array_equal(trunc, their_trunc, err_msg=where)
            if mode == AutoresetMode.SAME_STEP and (term | trunc).any():
                for i in np.flatnonzero(term | trunc):
                    np.testing.assert_array_equal(info["final_obs"][i],
                                                  their_info["final_obs"][i], err_msg=where)
            ended += int((term | trunc).sum())
        assert ended >= 3 * n, "several episodes per world should have ended"
    # reset(seed=list), as SyncVectorEnv takes it.
    seeds = [3, None, 2**64]
    theirs.reset(seed=0)
    ours.reset(seed=0)
    obs, _ = ours.reset(seed=seeds)
    their_obs, _ = theirs.reset(seed=seeds)
    np.testing.assert_array_equal(obs, their_obs)
    ours.close()
    theirs.close()


def test_pool_seeds_world_i_with_seed_plus_i():
    """WorldPool seeded s: world i starts where a core seeded s + i does,
    the addition done on the whole int (2**64 - 1 + 1 is 2**64, not 0)."""
    base = 2**64 - 2
    with WorldPool("hopper", 4, num_threads=2) as pool:
        pool.reset_all(seed=base)
        for i in range(4):
            core = CORES["hopper"]()
            core.reset(seed=base + i)
            for got, want in zip(pool.get_state(i), core.get_state()):
                np.testing.assert_array_equal(got, want)


def test_pool_reset_one_without_seed_on_a_fresh_world_draws_entropy():
    """A world never seeded does not start from a fixed stream."""
    states = []
    for _ in range(2):
        with WorldPool("hopper", 2, num_threads=1) as pool:
            pool.reset_one(1)
            states.append(np.concatenate(pool.get_state(1)))
    assert not np.array_equal(states[0], states[1])


# -- Stable-Baselines3 ----------------------------------------------------------------


def ppo_run(env: gymnasium.Env) -> tuple[dict[str, np.ndarray], list[float]]:
    """The policy's parameters after a seeded PPO run, and the ``Monitor``'s episode returns."""
    from stable_baselines3 import PPO
    from stable_baselines3.common.monitor import Monitor

    monitor = Monitor(env)
    model = PPO("MlpPolicy", monitor, n_steps=512, batch_size=64, n_epochs=2, seed=0, device="cpu")
    model.learn(1024)
    weights = {name: p.detach().numpy().copy() for name, p in model.policy.state_dict().items()}
    return weights, monitor.get_episode_rewards()


@pytest.mark.parametrize("task", ["half_cheetah", "ant", "hopper"])
def test_seeded_ppo_ends_with_gymnasiums_weights_and_returns(task):
    """``PPO(..., seed=0)`` on ours and on Gymnasium's ``-v5`` env, each as is
    (no wrapper: ours returns v5's float64 observations and rewards, bit for
    bit): every policy parameter bit-identical after training, and the
    ``Monitor``'s episode returns identical. Torch runs on one thread in both
    runs, so that its reductions happen in the same order."""
    pytest.importorskip("stable_baselines3")
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # the same reduction order in both runs
    try:
        ours, our_returns = ppo_run(gymnasium.make(GYM_IDS[task]))
        theirs, their_returns = ppo_run(gymnasium.make(REFERENCE_IDS[task]))
    finally:
        torch.set_num_threads(threads)
    assert our_returns == their_returns and len(our_returns) >= 1
    assert ours.keys() == theirs.keys()
    for name in ours:
        np.testing.assert_array_equal(ours[name], theirs[name], err_msg=name)
