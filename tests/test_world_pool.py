"""The native ``WorldPool``: determinism, auto-reset, zero-copy buffers, the GIL,
lifecycle and physics blow-ups.

Every rollout here is compared bit for bit (``assert_array_equal``, no
tolerance): a pool is deterministic given its seed and actions, whatever its
thread count or batch size.
"""

from __future__ import annotations

import gc
import os
import pickle
import subprocess
import sys
import threading
import time

import gymnasium
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode
from numpy.testing import assert_array_equal

import joltgym_marl
from joltgym_marl import ResetKind
from conftest import CORES, SINGLE_TASKS, main_thread_progress_during

from joltgym_marl import HalfCheetahCore, WorldPool

TASKS = SINGLE_TASKS  # every registered single-agent task
MODES = ["next_step", "same_step"]

# Everything a step writes, per world.
RECORDED = ["obs", "rewards", "terminations", "truncations", "infos", "reset_kind",
            "unstable", "elapsed_steps", "final_obs", "final_infos"]


# -- helpers ---------------------------------------------------------------------


def random_actions(pool, steps: int, num_worlds: int, seed: int) -> np.ndarray:
    """[steps, num_worlds, act_dim] float32 actions, uniform within the pool's bounds.

    World i's actions do not depend on ``num_worlds`` beyond i's position, so a
    stream drawn for 8 worlds sliced to 4 is what 4 worlds would get.
    """
    rng = np.random.default_rng(seed)
    low = np.asarray(pool.action_low, dtype=np.float64)
    high = np.asarray(pool.action_high, dtype=np.float64)
    return rng.uniform(low, high, size=(steps, num_worlds, pool.act_dim)).astype(np.float32)


def rollout(pool, seed: int, actions: np.ndarray) -> dict[str, np.ndarray]:
    """Resets with ``seed`` and steps through ``actions``; copies of every buffer per step."""
    obs0 = pool.reset_all(seed=seed).copy()
    record = {name: [] for name in RECORDED}
    for a in actions:
        pool.step_all(a)
        for name in RECORDED:
            record[name].append(getattr(pool, name).copy())
    out = {name: np.stack(values) for name, values in record.items()}
    out["obs0"] = obs0
    return out


def assert_rollouts_equal(a: dict, b: dict, worlds_a=slice(None), worlds_b=slice(None)) -> None:
    """Bit-identical rollouts (worlds selected along the world axis of each)."""
    assert_array_equal(a["obs0"][worlds_a], b["obs0"][worlds_b], err_msg="obs after reset_all")
    for name in RECORDED:
        if name in ("final_obs", "final_infos"):
            # Only meaningful on rows that ended in this call (reset_kind == ResetKind.AUTORESET).
            ended_a = a["reset_kind"][:, worlds_a] == ResetKind.AUTORESET
            ended_b = b["reset_kind"][:, worlds_b] == ResetKind.AUTORESET
            assert_array_equal(ended_a, ended_b)
            assert_array_equal(a[name][:, worlds_a][ended_a], b[name][:, worlds_b][ended_b],
                               err_msg=name)
            continue
        assert_array_equal(a[name][:, worlds_a], b[name][:, worlds_b], err_msg=name)


def process_threads() -> int:
    """Threads of this process, native ones included (Linux)."""
    gc.collect()  # a pool left to the garbage collector must not close mid-count
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("Threads:"):
                return int(line.split()[1])
    raise AssertionError("no Threads: line in /proc/self/status")


def wait_for_threads(expected: int, timeout: float = 5.0) -> int:
    """The process thread count, waiting briefly for exiting threads to be reaped."""
    deadline = time.monotonic() + timeout
    count = process_threads()
    while count != expected and time.monotonic() < deadline:
        time.sleep(0.01)
        count = process_threads()
    return count


needs_proc = pytest.mark.skipif(not os.path.exists("/proc/self/status"),
                                reason="needs /proc/self/status (Linux)")


def at_reset_columns(pool) -> np.ndarray:
    """Indices of the info columns that a reset writes."""
    cols = [offset + j for _, offset, size, at_reset in pool.info_fields if at_reset
            for j in range(size)]
    return np.asarray(cols, dtype=int)


# -- determinism -------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("task", TASKS)
def test_same_seed_same_rollout_whatever_the_thread_count(task, mode):
    with WorldPool(task, 8, num_threads=1, max_episode_steps=50, autoreset_mode=mode) as p1, \
         WorldPool(task, 8, num_threads=2, max_episode_steps=50, autoreset_mode=mode) as p2:
        assert (p1.num_threads, p2.num_threads) == (1, 2)
        actions = random_actions(p1, 200, 8, seed=11)
        a = rollout(p1, 1234, actions)
        b = rollout(p2, 1234, actions)
        # Rerunning the same pool from the same seed reproduces it too.
        c = rollout(p2, 1234, actions)
    assert_rollouts_equal(a, b)
    assert_rollouts_equal(a, c)
    # The rollout did cross episode boundaries (at step 50 at the latest).
    expected_kind = 1 if mode == "next_step" else 2
    assert (a["reset_kind"] == expected_kind).sum() >= 8 * 3
    assert (a["truncations"] | a["terminations"]).sum() >= 8 * 3


@pytest.mark.parametrize("task", TASKS)
def test_world_i_does_not_depend_on_batch_size(task):
    with WorldPool(task, 8, num_threads=2, max_episode_steps=50) as p8, \
         WorldPool(task, 4, num_threads=2, max_episode_steps=50) as p4:
        actions = random_actions(p8, 200, 8, seed=5)
        big = rollout(p8, 77, actions)
        small = rollout(p4, 77, actions[:, :4])
    assert_rollouts_equal(big, small, worlds_a=slice(0, 4))
    assert (big["reset_kind"] == ResetKind.RESET).any()


@pytest.mark.parametrize("task", TASKS)
def test_world_k_is_world_0_of_a_pool_seeded_seed_plus_k(task):
    seed = 900
    with WorldPool(task, 4, num_threads=2, max_episode_steps=50) as pool:
        actions = random_actions(pool, 150, 4, seed=8)
        whole = rollout(pool, seed, actions)
    for k in range(4):
        with WorldPool(task, 1, num_threads=1, max_episode_steps=50) as single:
            alone = rollout(single, seed + k, actions[:, k : k + 1])
        assert_rollouts_equal(whole, alone, worlds_a=slice(k, k + 1))


@pytest.mark.parametrize("task", TASKS)
def test_different_seed_gives_a_different_rollout(task):
    with WorldPool(task, 4, num_threads=2, max_episode_steps=50) as pool:
        actions = random_actions(pool, 30, 4, seed=1)
        a = rollout(pool, 0, actions)
        b = rollout(pool, 1, actions)
    # World i of seed 1 is world i+1 of seed 0, and nothing else lines up.
    assert_array_equal(a["obs0"][1:], b["obs0"][:-1])
    assert not np.array_equal(a["obs0"], b["obs0"])
    for i in range(4):
        assert not np.array_equal(a["obs0"][i], b["obs0"][i])
        assert not np.array_equal(a["obs"][:, i], b["obs"][:, i])
    # Distinct worlds of one pool start from distinct states.
    assert len({row.tobytes() for row in a["obs0"]}) == 4


def test_unseeded_resets_differ():
    with WorldPool("half_cheetah", 2, num_threads=1) as pool:
        first = pool.reset_all().copy()
        second = pool.reset_all().copy()
    assert not np.array_equal(first, second)


@pytest.mark.parametrize("dtype", [None, np.float32, np.float64])
@pytest.mark.parametrize("task", TASKS)
def test_outputs_are_finite_and_well_typed(task, dtype):
    # Single-agent tasks default to float64 observations and rewards (Gymnasium v5's dtypes).
    real = np.float64 if dtype is None else dtype
    with WorldPool(task, 4, num_threads=2, max_episode_steps=50, dtype=dtype) as pool:
        assert pool.dtype == real
        assert pool.obs.shape == (4, 1, pool.obs_dim) and pool.obs.dtype == real
        assert pool.rewards.shape == (4, 1) and pool.rewards.dtype == real
        assert pool.final_obs.dtype == pool.recv_obs.dtype == pool.recv_final_obs.dtype == real
        assert pool.recv_rewards.dtype == real
        assert pool.terminations.shape == pool.truncations.shape == (4, 1)
        assert pool.terminations.dtype == pool.truncations.dtype == np.bool_
        width = sum(size for _, _, size, _ in pool.info_fields)
        assert pool.infos.shape == (4, 1, width) and pool.infos.dtype == np.float64
        assert pool.final_obs.shape == pool.obs.shape
        assert pool.final_infos.shape == pool.infos.shape
        assert pool.reset_kind.shape == (4,) and pool.reset_kind.dtype == np.uint8
        assert pool.unstable.shape == (4,) and pool.unstable.dtype == np.bool_
        assert pool.elapsed_steps.shape == (4,)
        assert np.all(pool.action_low < pool.action_high)
        actions = random_actions(pool, 120, 4, seed=3)
        # The extreme actions of the box, too.
        actions[:10] = pool.action_high
        actions[10:20] = pool.action_low
        r = rollout(pool, 42, actions)
    for name in ("obs0", "obs", "rewards", "infos"):
        assert np.isfinite(r[name]).all(), name
    assert not r["unstable"].any()
    assert (r["elapsed_steps"] >= 0).all() and (r["elapsed_steps"] <= 50).all()


@pytest.mark.parametrize("mode", ["next_step", "same_step"])
@pytest.mark.parametrize("task", TASKS)
def test_float32_pool_is_the_float64_pool_rounded(task, mode):
    """dtype=np.float32 rounds the very values of the float64 layout, once."""
    actions = None
    runs = {}
    for dtype in (np.float64, np.float32):
        with WorldPool(task, 3, num_threads=2, max_episode_steps=15, autoreset_mode=mode, dtype=dtype) as pool:
            if actions is None:
                actions = random_actions(pool, 40, 3, seed=8)
            out = [pool.reset_all(seed=4).copy()]
            for a in actions:
                obs, rewards, *_ = pool.step_all(a)
                out += [obs.copy(), rewards.copy(), pool.final_obs.copy() * (pool.reset_kind == 2)[:, None, None]]
            runs[dtype] = out
    for wide, narrow in zip(runs[np.float64], runs[np.float32]):
        assert narrow.dtype == np.float32
        assert_array_equal(narrow, wide.astype(np.float32))


def test_dtype_is_checked():
    with pytest.raises(ValueError, match="dtype should be None, numpy.float32 or numpy.float64, got"):
        WorldPool("hopper", 1, dtype=np.int8)
    with WorldPool("sumo", 1) as game:
        assert game.dtype == np.float32  # games stay float32


@pytest.mark.parametrize("task", TASKS)
def test_pool_world_0_matches_a_single_core(task):
    """World 0 of a pool and a core seeded the same agree step for step, across resets."""
    seed, limit = 2024, 40
    core = CORES[task](max_episode_steps=limit)
    fields = core.info_fields
    with WorldPool(task, 3, num_threads=2, max_episode_steps=limit) as pool:
        assert (pool.obs_dim, pool.act_dim) == (core.obs_dim, core.act_dim)
        assert pool.info_fields == fields
        assert pool.dt == core.dt
        assert_array_equal(pool.action_low, core.action_low)
        assert_array_equal(pool.action_high, core.action_high)
        actions = random_actions(pool, 150, 3, seed=6)

        obs, info = core.reset(seed=seed)
        pool.reset_all(seed=seed)
        assert_array_equal(pool.obs[0, 0], obs)
        assert obs.dtype == pool.obs.dtype == np.float64
        for name, offset, size, at_reset in fields:
            assert (name in info) == at_reset
            if at_reset:
                assert_array_equal(pool.infos[0, 0, offset : offset + size], np.ravel(info[name]))

        core_done = False
        resets = 0
        for a in actions:
            pool.step_all(a)
            if core_done:  # the pool's NEXT_STEP reset; the core resets without a seed
                obs, info = core.reset()
                resets += 1
                assert pool.reset_kind[0] == ResetKind.RESET
                assert_array_equal(pool.obs[0, 0], obs)
                core_done = False
                continue
            obs, reward, terminated, truncated, info = core.step(a[0])
            assert pool.reset_kind[0] == ResetKind.STEPPED
            assert_array_equal(pool.obs[0, 0], obs)
            assert pool.rewards[0, 0] == reward
            assert bool(pool.terminations[0, 0]) is terminated
            assert bool(pool.truncations[0, 0]) is truncated
            assert pool.elapsed_steps[0] == core.elapsed_steps
            assert "physics_unstable" not in info
            for name, offset, size, _ in fields:
                assert_array_equal(pool.infos[0, 0, offset : offset + size], np.ravel(info[name]),
                                   err_msg=name)
            core_done = terminated or truncated
    assert resets >= 2


# -- auto-reset --------------------------------------------------------------------


def test_next_step_autoreset_resets_only_the_ended_world_on_the_next_call():
    n, limit, seed = 3, 5, 3
    with WorldPool("half_cheetah", n, num_threads=2, max_episode_steps=limit) as pool, \
         WorldPool("half_cheetah", n, num_threads=2, max_episode_steps=limit) as twin:
        actions = random_actions(pool, 20, n, seed=4)
        core = HalfCheetahCore(max_episode_steps=limit)
        core.reset(seed=seed)  # world 0's twin

        for p in (pool, twin):
            p.reset_all(seed=seed)
        assert_array_equal(pool.reset_kind, [1, 1, 1])
        assert_array_equal(pool.elapsed_steps, [0, 0, 0])
        for t in range(2):
            for p in (pool, twin):
                p.step_all(actions[t])
            core.step(actions[t][0])
        # Put world 1 out of phase.
        for p in (pool, twin):
            p.reset_one(1)
        assert_array_equal(pool.elapsed_steps, [2, 0, 2])

        t = 2
        for expected_elapsed in ([3, 1, 3], [4, 2, 4], [5, 3, 5]):
            pool.step_all(actions[t])
            twin.step_all(actions[t])
            core_out = core.step(actions[t][0])
            t += 1
            assert_array_equal(pool.elapsed_steps, expected_elapsed)
            assert_array_equal(pool.reset_kind, [0, 0, 0])
        # Worlds 0 and 2 hit the limit: truncated, not terminated.
        assert_array_equal(pool.truncations[:, 0], [True, False, True])
        assert not pool.terminations.any()
        assert core_out[3] is True
        last_obs = pool.obs.copy()

        # The next call resets worlds 0 and 2 (their actions are ignored) and
        # steps world 1.
        a = actions[t].copy()
        b = a.copy()
        b[[0, 2]] = -a[[0, 2]]
        pool.step_all(a)
        twin.step_all(b)
        t += 1
        assert_array_equal(pool.reset_kind, [1, 0, 1])
        assert_array_equal(pool.elapsed_steps, [0, 4, 0])
        assert_array_equal(pool.rewards[[0, 2], 0], [0.0, 0.0])
        assert pool.rewards[1, 0] != 0.0
        assert not pool.terminations.any() and not pool.truncations.any()
        assert not np.array_equal(pool.obs[0], last_obs[0])
        assert not np.array_equal(pool.obs[1], last_obs[1])
        reset_obs, _ = core.reset()  # the RNG stream continues as in the pool
        assert_array_equal(pool.obs[0, 0], reset_obs)
        for name in ("obs", "rewards", "terminations", "truncations", "elapsed_steps", "reset_kind"):
            assert_array_equal(getattr(pool, name), getattr(twin, name), err_msg=name)

        # Then world 1 ends and resets, while 0 and 2 step.
        pool.step_all(actions[t])
        t += 1
        assert_array_equal(pool.reset_kind, [0, 0, 0])
        assert_array_equal(pool.elapsed_steps, [1, 5, 1])
        assert_array_equal(pool.truncations[:, 0], [False, True, False])
        pool.step_all(actions[t])
        assert_array_equal(pool.reset_kind, [0, 1, 0])
        assert_array_equal(pool.elapsed_steps, [2, 0, 2])
        assert pool.rewards[1, 0] == 0.0


def _events_next_step(pool, seed, actions, count):
    """Per world, the first ``count`` events of a NEXT_STEP pool.

    Events are ("reset", obs, info) and ("step", obs, reward, terminated,
    truncated, info); world i's k-th *step* uses ``actions[i, k]``.
    """
    n = pool.num_envs
    pool.reset_all(seed=seed)
    events = [[("reset", pool.obs[i].copy(), pool.infos[i].copy())] for i in range(n)]
    used = np.zeros(n, dtype=int)
    pending = np.zeros(n, dtype=bool)
    while min(len(e) for e in events) < count:
        pool.step_all(actions[np.arange(n), used])
        for i in range(n):
            if pool.reset_kind[i] == ResetKind.RESET:
                assert pending[i]
                pending[i] = False
                events[i].append(("reset", pool.obs[i].copy(), pool.infos[i].copy()))
            else:
                assert pool.reset_kind[i] == ResetKind.STEPPED and not pending[i]
                term, trunc = bool(pool.terminations[i, 0]), bool(pool.truncations[i, 0])
                events[i].append(("step", pool.obs[i].copy(), pool.rewards[i].copy(), term, trunc,
                                  pool.infos[i].copy()))
                used[i] += 1
                pending[i] = term or trunc
    return [e[:count] for e in events]


def _events_same_step(pool, seed, actions, count):
    n = pool.num_envs
    pool.reset_all(seed=seed)
    events = [[("reset", pool.obs[i].copy(), pool.infos[i].copy())] for i in range(n)]
    used = 0
    while min(len(e) for e in events) < count:
        pool.step_all(actions[:, used])
        used += 1
        for i in range(n):
            kind = pool.reset_kind[i]
            term, trunc = bool(pool.terminations[i, 0]), bool(pool.truncations[i, 0])
            if kind == 0:
                assert not (term or trunc)
                assert pool.elapsed_steps[i] > 0
                events[i].append(("step", pool.obs[i].copy(), pool.rewards[i].copy(), term, trunc,
                                  pool.infos[i].copy()))
            else:
                # Ended and reset in this call: the flags and reward are the
                # ended episode's; its last obs/info are in final_*.
                assert kind == 2 and (term or trunc)
                assert pool.elapsed_steps[i] == 0
                events[i].append(("step", pool.final_obs[i].copy(), pool.rewards[i].copy(), term,
                                  trunc, pool.final_infos[i].copy()))
                events[i].append(("reset", pool.obs[i].copy(), pool.infos[i].copy()))
    return [e[:count] for e in events]


@pytest.mark.parametrize("task", ["humanoid", "half_cheetah"])
def test_same_step_equals_next_step_with_final_obs(task):
    """SAME_STEP's final_obs/final_infos are NEXT_STEP's last obs/info, and its new
    obs is NEXT_STEP's obs on the reset call: the RNG streams line up."""
    n, limit, seed, count = 4, 30, 17, 120
    with WorldPool(task, n, num_threads=2, max_episode_steps=limit, autoreset_mode="next_step") as nxt, \
         WorldPool(task, n, num_threads=2, max_episode_steps=limit, autoreset_mode="same_step") as same:
        actions = random_actions(nxt, count + 1, n, seed=21).transpose(1, 0, 2).copy()  # [n, K, act]
        cols = at_reset_columns(nxt)
        a = _events_next_step(nxt, seed, actions, count)
        b = _events_same_step(same, seed, actions, count)
    ends = {"terminated": 0, "truncated": 0}
    for i in range(n):
        for k, (ea, eb) in enumerate(zip(a[i], b[i])):
            where = f"world {i} event {k}"
            assert ea[0] == eb[0], where
            assert_array_equal(ea[1], eb[1], err_msg=where)
            if ea[0] == "reset":
                assert_array_equal(ea[2][:, cols], eb[2][:, cols], err_msg=where)
            else:
                assert_array_equal(ea[2], eb[2], err_msg=where)
                assert ea[3:5] == eb[3:5], where
                assert_array_equal(ea[5], eb[5], err_msg=where)
                ends["terminated"] += ea[3]
                ends["truncated"] += ea[4] and not ea[3]
    assert ends["truncated"] > 0
    if task == "humanoid":
        assert ends["terminated"] > 0


@pytest.mark.parametrize("mode", MODES)
def test_truncation_at_exactly_max_episode_steps(mode):
    with WorldPool("half_cheetah", 2, num_threads=2, autoreset_mode=mode) as pool:
        assert pool.max_episode_steps == 1000
        pool.reset_all(seed=0)
        rng = np.random.default_rng(0)
        for t in range(1, 1001):
            pool.step_all(rng.uniform(-1, 1, size=(2, 6)).astype(np.float32))
            assert not pool.terminations.any()
            if t < 1000:
                assert_array_equal(pool.elapsed_steps, [t, t])
                assert not pool.truncations.any(), t
                assert_array_equal(pool.reset_kind, [0, 0])
        assert pool.truncations.all()
        if mode == "next_step":
            assert_array_equal(pool.elapsed_steps, [1000, 1000])
            assert_array_equal(pool.reset_kind, [0, 0])
            pool.step_all(np.zeros((2, 6), np.float32))
            assert_array_equal(pool.reset_kind, [1, 1])
        else:
            assert_array_equal(pool.reset_kind, [2, 2])
        assert_array_equal(pool.elapsed_steps, [0, 0])
        pool.step_all(np.zeros((2, 6), np.float32))
        assert_array_equal(pool.elapsed_steps, [1, 1])
        assert not pool.truncations.any()


def test_core_truncates_at_exactly_max_episode_steps():
    core = HalfCheetahCore()
    assert core.max_episode_steps == 1000
    core.reset(seed=0)
    for t in range(1, 1001):
        _, _, terminated, truncated, _ = core.step(np.zeros(6, np.float32))
        assert core.elapsed_steps == t
        assert terminated is False
        assert truncated is (t == 1000)


def test_no_truncation_when_max_episode_steps_is_none():
    with WorldPool("half_cheetah", 1, num_threads=1, max_episode_steps=None) as pool:
        pool.reset_all(seed=0)
        for _ in range(1100):
            pool.step_all(np.zeros((1, 6), np.float32))
        assert not pool.truncations.any()
        assert pool.elapsed_steps[0] == 1100


def test_humanoid_falls_terminates_and_autoresets():
    n = 4
    with WorldPool("humanoid", n, num_threads=2) as pool:
        cols = {name: offset for name, offset, _, _ in pool.info_fields}
        pool.reset_all(seed=5)
        rng = np.random.default_rng(5)
        terminated_once = np.zeros(n, dtype=bool)
        pending = np.zeros(n, dtype=bool)
        for _ in range(300):
            pool.step_all(rng.uniform(pool.action_low, pool.action_high, size=(n, pool.act_dim))
                          .astype(np.float32))
            for i in range(n):
                if pending[i]:
                    assert pool.reset_kind[i] == ResetKind.RESET
                    assert pool.rewards[i, 0] == 0.0 and pool.elapsed_steps[i] == 0
                    assert not pool.terminations[i, 0] and not pool.truncations[i, 0]
                    # Back on its feet: the torso height (qpos[2]) is healthy.
                    assert 1.0 < pool.get_state(i)[0][2] < 2.0
                    pending[i] = False
                    continue
                assert pool.reset_kind[i] == ResetKind.STEPPED
                if pool.terminations[i, 0]:
                    assert not pool.truncations[i, 0]
                    assert pool.infos[i, 0, cols["reward_survive"]] == 0.0
                    z = pool.get_state(i)[0][2]
                    assert not (1.0 < z < 2.0)
                    terminated_once[i] = True
                    pending[i] = True
                else:
                    assert pool.infos[i, 0, cols["reward_survive"]] == 5.0
            if terminated_once.all() and not pending.any():
                break
    assert terminated_once.all()


def test_reset_one_resets_only_that_world():
    n = 3
    with WorldPool("ant", n, num_threads=2) as pool:
        pool.reset_all(seed=10)
        actions = random_actions(pool, 5, n, seed=0)
        for a in actions:
            pool.step_all(a)
        before = [pool.get_state(i) for i in range(n)]
        obs_before = pool.obs.copy()
        infos_before = pool.infos.copy()
        rewards_before = pool.rewards.copy()

        row = pool.reset_one(1)
        assert row.shape == (1, pool.obs_dim)
        assert np.shares_memory(row, pool.obs)
        assert_array_equal(row, pool.obs[1])
        assert_array_equal(pool.reset_kind, [0, 1, 0])
        assert_array_equal(pool.elapsed_steps, [5, 0, 5])
        assert pool.rewards[1, 0] == 0.0
        for i in (0, 2):
            assert_array_equal(pool.get_state(i)[0], before[i][0])
            assert_array_equal(pool.get_state(i)[1], before[i][1])
            assert_array_equal(pool.obs[i], obs_before[i])
            assert_array_equal(pool.infos[i], infos_before[i])
            assert_array_equal(pool.rewards[i], rewards_before[i])
        assert not np.array_equal(pool.obs[1], obs_before[1])

        # Stepping goes on for everyone.
        pool.step_all(actions[0])
        assert_array_equal(pool.reset_kind, [0, 0, 0])
        assert_array_equal(pool.elapsed_steps, [6, 1, 6])


def test_reset_one_with_seed_is_world_0_of_a_pool_seeded_the_same():
    with WorldPool("humanoid", 3, num_threads=2) as pool, \
         WorldPool("humanoid", 2, num_threads=1) as fresh:
        pool.reset_all(seed=1)
        pool.step_all(np.zeros((3, pool.act_dim), np.float32))
        row = pool.reset_one(2, seed=12345).copy()
        expected = fresh.reset_all(seed=12345)[0].copy()
        assert_array_equal(row, expected)
        assert_array_equal(pool.get_state(2)[0], fresh.get_state(0)[0])
        assert_array_equal(pool.get_state(2)[1], fresh.get_state(0)[1])
        # Same seed, same episode from there on.
        actions = random_actions(pool, 30, 3, seed=2)
        for a in actions:
            pool.step_all(a)
            fresh.step_all(np.stack([a[2], a[0]]))
            assert_array_equal(pool.obs[2], fresh.obs[0])
            assert_array_equal(pool.rewards[2], fresh.rewards[0])


def test_reset_one_without_seed_continues_the_stream():
    core = HalfCheetahCore()
    first, _ = core.reset(seed=99)
    second, _ = core.reset()
    with WorldPool("half_cheetah", 2, num_threads=1) as pool:
        pool.reset_all(seed=99)
        assert_array_equal(pool.obs[0, 0], first)
        assert_array_equal(pool.reset_one(0)[0], second)


# -- zero-copy ---------------------------------------------------------------------


def test_buffers_are_returned_by_identity():
    with WorldPool("half_cheetah", 4, num_threads=2, autoreset_mode="same_step") as pool:
        buffers = {name: getattr(pool, name) for name in RECORDED}
        # The attribute is the same object every time.
        for name, array in buffers.items():
            assert getattr(pool, name) is array, name
        obs = pool.reset_all(seed=0)
        assert obs is buffers["obs"]
        actions = np.zeros((4, 6), np.float32)
        for _ in range(3):
            out = pool.step_all(actions)
            assert isinstance(out, tuple) and len(out) == 4
            for got, name in zip(out, ("obs", "rewards", "terminations", "truncations")):
                assert got is buffers[name], name
                assert np.shares_memory(got, getattr(pool, name))
            # The buffers hold this step's results.
            assert pool.elapsed_steps[0] > 0
        assert pool.reset_all(seed=1) is buffers["obs"]
        row = pool.reset_one(3, seed=4)
        assert np.shares_memory(row, buffers["obs"])
        assert_array_equal(row, buffers["obs"][3])
        # 3-D actions are accepted too, with the same buffers out.
        assert pool.step_all(np.zeros((4, 1, 6), np.float32))[0] is buffers["obs"]
        for name, array in buffers.items():
            assert getattr(pool, name) is array, name
            assert array.flags.c_contiguous


def test_buffer_writes_are_visible_without_copies():
    with WorldPool("half_cheetah", 2, num_threads=1) as pool:
        view = pool.obs
        pool.reset_all(seed=0)
        snapshot = view.copy()
        pool.step_all(np.ones((2, 6), np.float32))
        # A reference taken before the step sees the step's observation.
        assert not np.array_equal(view, snapshot)
        assert view is pool.obs


def _make_vec(n, **kwargs):
    return gymnasium.make_vec("joltgym_marl/HalfCheetah-v0", num_envs=n,
                              vectorization_mode="vector_entry_point", num_threads=2, **kwargs)


def test_vector_env_without_copy_returns_the_native_buffers():
    env = _make_vec(3, copy=False)
    try:
        pool = env.unwrapped.pool
        obs, _ = env.reset(seed=0)
        assert np.shares_memory(obs, pool.obs)
        for _ in range(3):
            obs, rew, term, trunc, _ = env.step(np.zeros((3, 6), np.float32))
            assert np.shares_memory(obs, pool.obs)
            assert np.shares_memory(rew, pool.rewards)
            assert np.shares_memory(term, pool.terminations)
            assert np.shares_memory(trunc, pool.truncations)
            assert obs.shape == (3, 6 + 11) and rew.shape == term.shape == trunc.shape == (3,)
    finally:
        env.close()


def test_vector_env_copies_by_default():
    env = _make_vec(3)
    try:
        pool = env.unwrapped.pool
        obs, _ = env.reset(seed=0)
        assert not np.shares_memory(obs, pool.obs)
        assert env.observation_space.contains(obs)
        assert_array_equal(obs, pool.obs[:, 0])
        previous = obs
        for _ in range(3):
            obs, rew, term, trunc, _ = env.step(np.zeros((3, 6), np.float32))
            for out, buffer in ((obs, pool.obs), (rew, pool.rewards), (term, pool.terminations),
                                (trunc, pool.truncations)):
                assert not np.shares_memory(out, buffer)
                assert_array_equal(out, buffer.reshape(out.shape))
            assert env.observation_space.contains(obs)
            # What was returned earlier is not overwritten by later steps.
            assert not np.array_equal(previous, obs)
            previous = obs
    finally:
        env.close()


# -- the GIL -----------------------------------------------------------------------


def test_step_all_releases_the_gil():
    """A Python thread runs while another is inside one long step_all call."""
    n = 256
    # frame_skip=40 makes one step_all call take a few hundred milliseconds.
    with WorldPool("humanoid", n, num_threads=2, frame_skip=40) as pool:
        pool.reset_all(seed=0)
        actions = np.zeros((n, pool.act_dim), np.float32)

        rate, seconds, progress = main_thread_progress_during(lambda: pool.step_all(actions))

    assert seconds > 0.05, "step_all was too quick to tell anything"
    # Had step_all held the GIL, this thread could only have run in a switch
    # interval or two (5 ms each) around the call: about 3% of the call's
    # length. Released, it runs for most of it (it shares the CPUs with the
    # two native threads).
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    share = 0.1 if cpus >= 2 else 0.05
    assert progress > 1000
    assert progress > share * rate * seconds, (progress, rate, seconds)


# -- lifecycle ---------------------------------------------------------------------


@needs_proc
def test_create_and_close_many_pools_leaks_no_threads():
    py_threads = threading.active_count()
    native = process_threads()
    actions = np.zeros((8, 6), np.float32)
    for i in range(200):
        pool = WorldPool("half_cheetah", 8, num_threads=2)
        assert pool.num_threads == 2
        pool.reset_all(seed=i)
        pool.step_all(actions)
        pool.close()
        assert pool.closed
    assert threading.active_count() == py_threads
    assert wait_for_threads(native) == native


@needs_proc
def test_pools_own_native_threads_until_closed():
    native = process_threads()
    pools = [WorldPool("half_cheetah", 8, num_threads=3) for _ in range(4)]
    # num_threads counts the caller (and is capped at the CPUs): num_threads - 1 workers per pool.
    workers = pools[0].num_threads - 1
    assert pools[0].num_threads == min(3, len(os.sched_getaffinity(0)))
    assert process_threads() == native + 4 * workers
    for pool in pools:
        pool.close()
    assert wait_for_threads(native) == native


@needs_proc
def test_del_without_close_joins_the_threads():
    native = process_threads()
    pools = [WorldPool("half_cheetah", 8, num_threads=2) for _ in range(10)]
    for pool in pools:
        pool.reset_all(seed=0)
        pool.step_all(np.zeros((8, 6), np.float32))
    assert process_threads() == native + 10
    del pools, pool
    gc.collect()
    assert wait_for_threads(native) == native


def test_close_is_idempotent_and_context_manager_closes():
    pool = WorldPool("half_cheetah", 2, num_threads=2)
    assert not pool.closed
    pool.close()
    pool.close()
    assert pool.closed

    with WorldPool("half_cheetah", 2, num_threads=2) as pool:
        assert not pool.closed
        pool.reset_all(seed=0)
    assert pool.closed

    # Also when the block raises; the exception propagates.
    with pytest.raises(KeyError):
        with WorldPool("half_cheetah", 2, num_threads=2) as pool:
            raise KeyError("boom")
    assert pool.closed


def test_calls_after_close_raise():
    pool = WorldPool("half_cheetah", 2, num_threads=2)
    pool.reset_all(seed=0)
    qpos, qvel = pool.get_state(0)
    pool.close()
    calls = {
        "reset_all": lambda: pool.reset_all(seed=0),
        "reset_one": lambda: pool.reset_one(0),
        "step_all": lambda: pool.step_all(np.zeros((2, 6), np.float32)),
        "get_state": lambda: pool.get_state(0),
        "set_state": lambda: pool.set_state(0, qpos, qvel),
        "num_threads": lambda: pool.num_threads,
        "obs_dim": lambda: pool.obs_dim,
    }
    for name, call in calls.items():
        with pytest.raises(RuntimeError, match="WorldPool is closed") as info:
            call()
        assert isinstance(info.value, joltgym_marl.StateError), name
    # What does not need the worlds still answers.
    assert pool.num_envs == 2 and pool.task == "half_cheetah"
    assert pool.obs.shape == (2, 1, 17)
    pool.close()


def test_pickling_recreates_an_equivalent_pool():
    with WorldPool("ant", 3, num_threads=2, max_episode_steps=20, autoreset_mode="same_step",
                   ctrl_cost_weight=0.25) as pool:
        clone = pickle.loads(pickle.dumps(pool))
        try:
            assert type(clone) is WorldPool
            assert (clone.task, clone.num_envs, clone.num_threads) == ("ant", 3, 2)
            assert (clone.max_episode_steps, clone.autoreset_mode) == (20, "same_step")
            assert clone.kwargs == {"ctrl_cost_weight": 0.25}
            assert clone.obs is not pool.obs
            actions = random_actions(pool, 40, 3, seed=0)
            assert_rollouts_equal(rollout(pool, 8, actions), rollout(clone, 8, actions))
        finally:
            clone.close()


# -- physics blow-up ----------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
def test_unstable_physics_truncates_the_episode(mode, tmp_path, monkeypatch):
    # MuJoCo's instability warning is reported in `unstable`, never printed or
    # appended to MUJOCO_LOG.TXT in the working directory.
    monkeypatch.chdir(tmp_path)
    n = 3
    with WorldPool("half_cheetah", n, num_threads=2, autoreset_mode=mode) as pool:
        pool.reset_all(seed=0)
        actions = np.zeros((n, 6), np.float32)
        pool.step_all(actions)
        qpos, qvel = pool.get_state(1)
        # Finite but absurd velocities: MuJoCo flags the state as unstable.
        pool.set_state(1, qpos, np.full_like(qvel, 1e30))
        pool.step_all(actions)
        assert_array_equal(pool.unstable, [False, True, False])
        assert_array_equal(pool.truncations[:, 0], [False, True, False])
        assert not pool.terminations.any()
        assert np.isfinite(pool.obs).all() and np.isfinite(pool.rewards).all()
        assert np.isfinite(pool.infos).all()
        if mode == "next_step":
            assert_array_equal(pool.reset_kind, [0, 0, 0])
            assert pool.elapsed_steps[1] == 2
            pool.step_all(actions)
            # The reset call clears the flag.
            assert_array_equal(pool.reset_kind, [0, 1, 0])
            assert not pool.unstable.any()
        else:
            # Reported for the step that blew up, in the call that reset it.
            assert_array_equal(pool.reset_kind, [0, 2, 0])
            assert_array_equal(pool.unstable, [False, True, False])
            assert np.isfinite(pool.final_obs[1]).all()
        assert pool.elapsed_steps[1] == 0
        # The world is usable again.
        for _ in range(5):
            pool.step_all(actions)
        assert not pool.unstable.any()
        assert np.isfinite(pool.obs).all()
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("qvel_value", [1e10, 1e30, 1e200])
def test_unstable_physics_in_a_single_core(qvel_value, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    core = HalfCheetahCore()
    core.reset(seed=0)
    qpos, qvel = core.get_state()
    core.set_state(qpos, np.full_like(qvel, qvel_value))
    obs, reward, terminated, truncated, info = core.step(np.zeros(6, np.float32))
    assert info["physics_unstable"] is True
    assert truncated is True and terminated is False
    assert np.isfinite(obs).all() and np.isfinite(reward)
    # A new episode is stable again.
    core.reset()
    _, _, _, truncated, info = core.step(np.zeros(6, np.float32))
    assert "physics_unstable" not in info and truncated is False


def test_unstable_physics_in_the_vector_env(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    env = _make_vec(2, autoreset_mode=AutoresetMode.SAME_STEP)
    try:
        env.reset(seed=0)
        pool = env.unwrapped.pool
        qpos, qvel = pool.get_state(0)
        pool.set_state(0, qpos, np.full_like(qvel, 1e30))
        _, _, term, trunc, info = env.step(np.zeros((2, 6), np.float32))
        assert_array_equal(trunc, [True, False])
        assert_array_equal(term, [False, False])
        assert_array_equal(info["physics_unstable"], [True, False])
        assert_array_equal(info["_final_obs"], [True, False])
    finally:
        env.close()


def test_blow_up_does_not_crash_the_interpreter(tmp_path):
    code = """
import numpy as np, joltgym_marl as jm
with jm.WorldPool("humanoid", 4, num_threads=2) as pool:
    pool.reset_all(seed=0)
    for i in range(4):
        qpos, qvel = pool.get_state(i)
        pool.set_state(i, qpos * (1e3 if i % 2 else 1.0), np.full_like(qvel, 1e150 * (i + 1)))
    for _ in range(5):
        pool.step_all(np.ones((4, pool.act_dim), np.float32))
        assert np.isfinite(pool.obs).all()
print("ok")
"""
    proc = subprocess.run([sys.executable, "-W", "error", "-c", code], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().endswith("ok")
