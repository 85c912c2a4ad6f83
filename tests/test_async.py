"""Asynchronous stepping of the WorldPool and the vector envs: send(actions, env_ids) / recv().

The oracle is synchronous stepping: each world's trajectory (observations,
rewards, flags, auto-resets) under async stepping must equal the one
``step_all`` gives it from the same seed and the same per-world actions,
whatever the batch size, thread count, order of sends and timing. Misuse
gets a clear exception and leaves the pool as it was; close, fork and the
synchronous calls with work in flight neither crash nor hang (those cases run
in subprocesses with a timeout).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from joltgym_marl import WorldPool
from joltgym_marl._native import core as _core
from joltgym_marl.registry import GAMES, SINGLE_AGENT_TASKS, ResetKind

WORKTREE = Path(__file__).resolve().parents[1]
TASK = SINGLE_AGENT_TASKS[0].name
GAME = GAMES[0].name
STEPS = 24


def actions_for(pool, steps: int, seed: int = 0) -> np.ndarray:
    """[steps, num_envs, num_agents, act_dim]: the action of world i at its step t."""
    rng = np.random.default_rng(seed)
    low, high = pool.action_low, pool.action_high
    return rng.uniform(low, high, size=(steps, pool.num_envs, pool.num_agents, pool.act_dim)).astype(np.float32)


def sync_trajectories(pool, actions, seed: int):
    """Per world, per step: (obs, rewards, terminations, truncations, reset_kind, final_obs or None)."""
    pool.reset_all(seed=seed)
    out = [[] for _ in range(pool.num_envs)]
    for t in range(len(actions)):
        pool.step_all(actions[t])
        for i in range(pool.num_envs):
            kind = int(pool.reset_kind[i])
            final = pool.final_obs[i].copy() if kind == ResetKind.AUTORESET else None
            out[i].append((pool.obs[i].copy(), pool.rewards[i].copy(), pool.terminations[i].copy(),
                           pool.truncations[i].copy(), kind, final))
    return out


def async_trajectories(pool, actions, seed: int, order_seed: int):
    """The same, stepping with async_reset/recv/send; sends in a shuffled order, split in two calls."""
    rng = np.random.default_rng(order_seed)
    steps = len(actions)
    count = np.zeros(pool.num_envs, dtype=int)
    out = [[] for _ in range(pool.num_envs)]
    pool.async_reset(seed=seed)
    started = np.zeros(pool.num_envs, dtype=bool)
    while True:
        if pool.in_flight < pool.batch_size:
            break
        ids, obs, rewards, terms, truncs = pool.recv()
        assert ids is pool.recv_env_ids and obs is pool.recv_obs
        ids = ids.copy()
        for k, i in enumerate(ids):
            if started[i]:
                kind = int(pool.recv_reset_kind[k])
                final = pool.recv_final_obs[k].copy() if kind == ResetKind.AUTORESET else None
                out[i].append((obs[k].copy(), rewards[k].copy(), terms[k].copy(), truncs[k].copy(), kind, final))
            else:
                assert pool.recv_reset_kind[k] == ResetKind.RESET
            started[i] = True
        todo = rng.permutation([i for i in ids if count[i] < steps])
        cut = int(rng.integers(0, len(todo) + 1))
        for part in (todo[:cut], todo[cut:]):
            if len(part):
                pool.send(np.stack([actions[count[i], i] for i in part]), part)
                count[part] += 1
    return out, count


def assert_same(sync, got, pool):
    for i in range(pool.num_envs):
        n = len(got[i])
        assert n > 0
        for t in range(n):
            for name, a, b in zip(("obs", "rewards", "terminations", "truncations", "reset_kind", "final_obs"),
                                  sync[i][t], got[i][t]):
                if a is None or b is None:
                    assert a is None and b is None, (i, t, name)
                else:
                    np.testing.assert_array_equal(a, b, err_msg=f"world {i}, step {t}, {name}")


@pytest.mark.parametrize("threads", [1, 2, 3])
@pytest.mark.parametrize("batch_size", [1, 3, 5, 7])
@pytest.mark.parametrize("mode", ["next_step", "same_step"])
def test_async_equals_sync_per_world(threads, batch_size, mode):
    """7 worlds (batch sizes that do not divide it), episodes of 6 steps (auto-resets)."""
    kwargs = dict(num_threads=threads, max_episode_steps=6, autoreset_mode=mode)
    with WorldPool(TASK, 7, **kwargs) as sync_pool, \
            WorldPool(TASK, 7, batch_size=batch_size, **kwargs) as pool:
        actions = actions_for(pool, STEPS)
        sync = sync_trajectories(sync_pool, actions, seed=11)
        got, count = async_trajectories(pool, actions, seed=11, order_seed=batch_size * 10 + threads)
        assert_same(sync, got, pool)
        # the run ends once fewer than batch_size worlds are left to step
        assert sum(len(g) for g in got) >= 7 * STEPS // 2
        assert any(k == ResetKind.AUTORESET if mode == "same_step" else k == ResetKind.RESET
                   for g in got for (*_, k, _f) in g)


@pytest.mark.parametrize("threads", [1, 2])
def test_async_equals_sync_for_a_game(threads):
    kwargs = dict(num_threads=threads, max_episode_steps=5, autoreset_mode="same_step")
    with WorldPool(GAME, 5, **kwargs) as sync_pool, WorldPool(GAME, 5, batch_size=2, **kwargs) as pool:
        assert pool.num_agents > 1
        actions = actions_for(pool, 12)
        sync = sync_trajectories(sync_pool, actions, seed=3)
        got, _ = async_trajectories(pool, actions, seed=3, order_seed=threads)
        assert_same(sync, got, pool)


def test_single_agent_actions_without_the_agent_axis():
    with WorldPool(TASK, 4, num_threads=2, batch_size=2) as a, WorldPool(TASK, 4, num_threads=2, batch_size=2) as b:
        a.async_reset(seed=0)
        b.async_reset(seed=0)
        for pool in (a, b):
            pool.recv()
            pool.recv()
        act = np.full((2, a.act_dim), 0.3, np.float32)
        a.send(act, [3, 1])
        b.send(act[:, None, :], np.array([3, 1], np.int32))
        ia, oa, *_ = a.recv()
        ib, ob, *_ = b.recv()
        assert sorted(ia) == sorted(ib) == [1, 3]
        np.testing.assert_array_equal(oa[np.argsort(ia)], ob[np.argsort(ib)])


def test_recv_buffers_are_the_pools_own_and_batch_shaped():
    with WorldPool(TASK, 6, num_threads=2, batch_size=4) as pool:
        names = ["recv_env_ids", "recv_obs", "recv_rewards", "recv_terminations", "recv_truncations",
                 "recv_infos", "recv_final_obs", "recv_final_infos", "recv_reset_kind", "recv_unstable",
                 "recv_elapsed_steps"]
        arrays = {n: getattr(pool, n) for n in names}
        assert all(len(a) == 4 for a in arrays.values())
        assert pool.batch_size == 4 and pool.in_flight == 0
        pool.async_reset(seed=1)
        assert pool.in_flight == 6
        out = pool.recv()
        assert list(out[0]) == [0, 1, 2, 3]  # async_reset hands out worlds in order
        np.testing.assert_array_equal(out[1], pool.obs[:4])
        for n, a in arrays.items():
            assert getattr(pool, n) is a, n
        assert out[1] is arrays["recv_obs"] and out[2] is arrays["recv_rewards"]
        assert pool.in_flight == 2


def test_batch_size_is_checked():
    with pytest.raises(ValueError, match="batch_size"):
        WorldPool(TASK, 4, batch_size=5)
    with pytest.raises(ValueError, match="batch_size"):
        WorldPool(TASK, 4, batch_size=0)
    with pytest.raises(TypeError, match="batch_size"):
        WorldPool(TASK, 4, batch_size=1.5)
    assert WorldPool(TASK, 4).batch_size == 4


def test_pickle_keeps_the_batch_size():
    import pickle

    with WorldPool(TASK, 4, batch_size=3) as pool:
        copy = pickle.loads(pickle.dumps(pool))
        assert copy.batch_size == 3
        copy.close()


# -- misuse --------------------------------------------------------------------------


@pytest.fixture
def pool():
    p = WorldPool(TASK, 5, num_threads=2, batch_size=2)
    yield p
    p.close()


def test_recv_with_nothing_in_flight(pool):
    pool.reset_all(seed=0)
    with pytest.raises(_core.StateError, match=r"recv\(\) called with no worlds in flight; expected send"):
        pool.recv()


def test_recv_with_fewer_than_batch_size_in_flight(pool):
    pool.reset_all(seed=0)
    pool.send(np.zeros((1, pool.act_dim), np.float32), [4])
    with pytest.raises(_core.StateError, match=r"batch_size=2 worlds, but only 1 are in flight; expected send\(\) of at least 1 more"):
        pool.recv()
    pool.send(np.zeros((1, pool.act_dim), np.float32), [0])
    ids = pool.recv()[0]
    assert sorted(ids) == [0, 4]


def test_send_before_reset(pool):
    with pytest.raises(_core.StateError, match="before it was reset; expected reset_all"):
        pool.send(np.zeros((1, pool.act_dim), np.float32), [0])
    assert pool.in_flight == 0


@pytest.mark.parametrize("ids, error, message", [
    ([5], IndexError, r"env_ids should be in \[0, 5\), got 5 at position 0"),
    ([0, -1], IndexError, r"env_ids should be in \[0, 5\), got -1 at position 1"),
    ([1, 1], ValueError, r"env_ids should be distinct, got world 1 twice in \[1, 1\]"),
    (np.array([4, 2, 4]), ValueError, r"env_ids should be distinct, got world 4 twice in \[4, 2, 4\]"),
    ([0.0], TypeError, r"env_ids should be a 1-D sequence of ints in \[0, 5\), got \[0.0\]"),
    ([True], TypeError, r"env_ids should be a 1-D sequence of ints"),
    ([[0]], TypeError, r"env_ids should be a 1-D sequence of ints"),
    ("ab", TypeError, r"env_ids should be a 1-D sequence of ints"),
    ([], ValueError, r"env_ids should hold 1 to 5 distinct world ids, got 0"),
])
def test_bad_env_ids(pool, ids, error, message):
    pool.reset_all(seed=0)
    with pytest.raises(error, match=message):
        pool.send(np.zeros((max(len(ids), 1), pool.act_dim), np.float32), ids)
    assert pool.in_flight == 0
    pool.send(np.zeros((5, pool.act_dim), np.float32), range(5))  # nothing was left half-sent
    assert pool.in_flight == 5


@pytest.mark.parametrize("shape, expected", [
    ((3, "d"), "(2, d)"),
    ((2, "d-1"), "(2, d)"),
    ((2, 2, "d"), "(2, 1, d)"),
])
def test_bad_action_shapes(pool, shape, expected):
    pool.reset_all(seed=0)
    d = pool.act_dim
    shape = tuple(d if x == "d" else d - 1 if x == "d-1" else x for x in shape)
    expected = expected.replace("d", str(d))
    with pytest.raises(ValueError, match=f"actions should have shape {re.escape(expected)}"):
        pool.send(np.zeros(shape, np.float32), [0, 1])
    assert pool.in_flight == 0


def test_non_finite_actions(pool):
    pool.reset_all(seed=0)
    bad = np.zeros((2, pool.act_dim), np.float32)
    bad[1, 2] = np.nan
    with pytest.raises(ValueError, match="actions"):
        pool.send(bad, [0, 1])
    assert pool.in_flight == 0


def test_send_to_a_world_in_flight(pool):
    pool.reset_all(seed=0)
    zeros = np.zeros((2, pool.act_dim), np.float32)
    pool.send(zeros, [0, 1])
    with pytest.raises(_core.StateError, match=r"send\(\) called on world 1, which is still in flight"):
        pool.send(zeros, [2, 1])
    assert pool.in_flight == 2  # world 2 was not sent either
    assert sorted(pool.recv()[0]) == [0, 1]
    pool.send(zeros, [2, 1])
    assert sorted(pool.recv()[0]) == [1, 2]


def test_sync_calls_with_work_in_flight(pool):
    pool.reset_all(seed=0)
    zeros = np.zeros((2, pool.act_dim), np.float32)
    pool.send(zeros, [0, 3])
    with pytest.raises(_core.StateError, match=r"step_all\(\) called while 2 worlds are in flight"):
        pool.step_all(np.zeros((5, pool.act_dim), np.float32))
    for call in (lambda: pool.reset_one(3), lambda: pool.get_state(3),
                 lambda: pool.set_state(3, *pool_state(pool, 1)),
                 lambda: pool.set_option("reset_noise_scale", 0.1, index=3) if "reset_noise_scale" in pool.episode_options else pool.get_state(3)):
        with pytest.raises(_core.StateError, match="world 3, which is in flight"):
            call()
    # a world not in flight can be used meanwhile
    pool.reset_one(1, seed=5)
    assert pool.get_state(1)[0].shape[0] > 0
    # reset_all waits for the worlds in flight and drops their results
    pool.reset_all(seed=0)
    assert pool.in_flight == 0
    pool.step_all(np.zeros((5, pool.act_dim), np.float32))


def test_a_refused_step_all_leaves_the_sent_actions():
    """step_all with worlds in flight is refused without writing over the
    actions they were sent with (one thread: they step in recv(), after the
    refused call; it used to copy its actions over theirs first)."""
    with WorldPool(TASK, 4, num_threads=1) as sync, WorldPool(TASK, 4, num_threads=1, batch_size=4) as pool:
        sent = actions_for(pool, 1)[0]
        sync.reset_all(seed=2)
        sync.step_all(sent)
        pool.reset_all(seed=2)
        pool.send(sent, range(4))
        with pytest.raises(_core.StateError, match="in flight"):
            pool.step_all(np.full_like(sent, 0.9))
        ids, obs, rewards, *_ = pool.recv()
        assert list(ids) == [0, 1, 2, 3]
        np.testing.assert_array_equal(obs, sync.obs)
        np.testing.assert_array_equal(rewards, sync.rewards)


def pool_state(pool, i):
    return pool.get_state(i)


def test_async_reset_while_in_flight(pool):
    pool.reset_all(seed=0)
    pool.send(np.zeros((3, pool.act_dim), np.float32), [0, 1, 2])
    pool.async_reset(seed=2)
    assert pool.in_flight == 5
    assert list(pool.recv()[0]) == [0, 1]


def test_closed_pool(pool):
    pool.close()
    with pytest.raises(_core.StateError, match="closed"):
        pool.recv()
    with pytest.raises(_core.StateError, match="closed"):
        pool.send(np.zeros((1, 6), np.float32), [0])
    with pytest.raises(_core.StateError, match="closed"):
        pool.async_reset()


def test_mujoco_errors_arrive_through_recv():
    """A world that fails in MuJoCo raises from the recv() that returns it; it then waits for a reset."""
    with WorldPool(TASK, 3, num_threads=2, batch_size=1) as pool:
        pool.reset_all(seed=0)
        qpos, qvel = pool.get_state(1)
        pool.set_state(1, qpos, np.full_like(qvel, 1e8))
        pool.send(np.zeros((1, pool.act_dim), np.float32), [1])
        try:
            pool.recv()
        except (_core.MujocoError, MemoryError):
            pass  # the world failed: a reset is required before it steps again
        except Warning:
            pass
        assert pool.in_flight == 0


# -- lifecycle with work in flight (subprocesses: a hang or crash fails the test) -------


def run_python(code: str, timeout: float = 120) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(WORKTREE))
    return subprocess.run([sys.executable, "-W", "error", "-c", textwrap.dedent(code)],
                          capture_output=True, text=True, timeout=timeout, env=env)


def describe(proc: subprocess.CompletedProcess) -> str:
    return f"exit code {proc.returncode}\nstdout: {proc.stdout[-2000:]}\nstderr: {proc.stderr[-2000:]}"


def test_close_and_exit_with_work_in_flight():
    proc = run_python(f"""
        import numpy as np
        from joltgym_marl import WorldPool
        for threads in (1, 2, 3):
            pool = WorldPool({TASK!r}, 64, num_threads=threads, batch_size=8, frame_skip=50)
            pool.reset_all(seed=0)
            pool.send(np.zeros((64, pool.act_dim), np.float32), range(64))
            pool.close()  # the workers stop after their current world
            assert pool.closed
            pool.close()
        pool = WorldPool({TASK!r}, 64, num_threads=2, batch_size=8, frame_skip=50)
        pool.reset_all(seed=0)
        pool.send(np.zeros((64, pool.act_dim), np.float32), range(64))
        print("exiting")  # and the interpreter exits with work in flight
    """)
    assert proc.returncode == 0 and "exiting" in proc.stdout, describe(proc)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_fork_with_work_in_flight():
    """In the child, the worlds in flight at the fork are lost: send to one names the fork,
    recv finds nothing in flight, and after reset_all the pool steps (sync and async) as usual."""
    proc = run_python(f"""
        import os, warnings
        warnings.simplefilter("ignore", DeprecationWarning)
        import numpy as np
        from joltgym_marl import WorldPool
        from joltgym_marl._native import core
        pool = WorldPool({TASK!r}, 16, num_threads=2, batch_size=4)
        pool.reset_all(seed=0)
        zeros = np.zeros((12, pool.act_dim), np.float32)
        pool.send(zeros, range(12))
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                assert pool.in_flight == 0, pool.in_flight
                try:
                    pool.send(zeros[:1], [3])
                    raise AssertionError("send to a lost world")
                except core.StateError as e:
                    assert "forked" in str(e), e
                try:
                    pool.step_all(np.zeros((16, pool.act_dim), np.float32))
                    raise AssertionError("step_all with lost worlds")
                except core.StateError as e:
                    assert "forked" in str(e), e
                pool.send(zeros[:4], [12, 13, 14, 15])  # never in flight: fine
                assert sorted(pool.recv()[0]) == [12, 13, 14, 15]
                pool.reset_all(seed=0)
                pool.step_all(np.zeros((16, pool.act_dim), np.float32))
                pool.async_reset(seed=0)
                for _ in range(4):
                    ids = pool.recv()[0].copy()
                    pool.send(zeros[:4], ids)
                pool.close()
                code = 0
            finally:
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status
        assert pool.in_flight == 12
        pool.recv(); pool.recv(); pool.recv()
        assert pool.in_flight == 0
        print("ok")
    """)
    assert proc.returncode == 0 and "ok" in proc.stdout, describe(proc)


def test_another_python_thread_runs_while_recv_waits():
    import threading
    import time

    with WorldPool(TASK, 8, num_threads=2, batch_size=8, frame_skip=400) as pool:
        pool.reset_all(seed=0)
        ticks = []
        stop = threading.Event()

        def tick():
            while not stop.is_set():
                ticks.append(1)
                time.sleep(0.0005)

        thread = threading.Thread(target=tick)
        thread.start()
        try:
            pool.send(np.zeros((8, pool.act_dim), np.float32), range(8))
            before = len(ticks)
            pool.recv()
            during = len(ticks) - before
        finally:
            stop.set()
            thread.join()
        assert during > 0


# -- the vector envs -------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["next_step", "same_step"])
@pytest.mark.parametrize("batch_size", [2, 5])
def test_native_vector_env_recv_equals_step(mode, batch_size):
    from gymnasium.vector import AutoresetMode

    from joltgym_marl.vector.native_vector_env import NativeVectorEnv

    mode = AutoresetMode.NEXT_STEP if mode == "next_step" else AutoresetMode.SAME_STEP
    kwargs = dict(num_threads=2, max_episode_steps=4, autoreset_mode=mode)
    sync = NativeVectorEnv(TASK, 5, **kwargs)
    env = NativeVectorEnv(TASK, 5, batch_size=batch_size, **kwargs)
    try:
        steps = 10
        actions = np.random.default_rng(0).uniform(-1, 1, (steps, 5, sync.single_action_space.shape[0])).astype(np.float32)
        obs0, _ = sync.reset(seed=7)
        ref = [sync.step(actions[t]) for t in range(steps)]
        env.async_reset(seed=7)
        count = np.zeros(5, int)
        seen = np.zeros(5, bool)
        checked = 0
        while env.pool.in_flight >= batch_size:
            obs, rew, term, trunc, info = env.recv()
            ids = info["env_id"]
            assert obs.shape == (batch_size, sync.single_observation_space.shape[0])
            for k, i in enumerate(ids):
                if not seen[i]:
                    np.testing.assert_array_equal(obs[k], obs0[i])
                    seen[i] = True
                    continue
                t = count[i] - 1
                r_obs, r_rew, r_term, r_trunc, r_info = ref[t]
                np.testing.assert_array_equal(obs[k], r_obs[i])
                assert rew[k] == r_rew[i] and term[k] == r_term[i] and trunc[k] == r_trunc[i]
                if "final_obs" in r_info and r_info["_final_obs"][i]:
                    np.testing.assert_array_equal(info["final_obs"][k], r_info["final_obs"][i])
                else:
                    assert "final_obs" not in info or not info["_final_obs"][k]
                checked += 1
            todo = [i for i in ids if count[i] < steps]
            if todo:
                env.send(np.stack([actions[count[i], i] for i in todo]), todo)
                count[todo] += 1
        assert checked >= 5 * steps // 2
    finally:
        sync.close()
        env.close()


def test_agent_vector_env_recv_equals_step():
    from joltgym_marl.vector.agent_vector_env import AgentVectorEnv

    sync = AgentVectorEnv(GAME, 3, num_threads=2, max_cycles=4)
    env = AgentVectorEnv(GAME, 3, num_threads=2, max_cycles=4, batch_size=2)
    try:
        agents, act_dim = sync.num_agents, sync.single_action_space.shape[0]
        steps = 9
        actions = np.random.default_rng(1).uniform(-1, 1, (steps, 3, agents, act_dim)).astype(np.float32)
        obs0, _ = sync.reset(seed=4)
        ref = [sync.step(actions[t].reshape(3 * agents, act_dim)) for t in range(steps)]
        env.async_reset(seed=4)
        count = np.zeros(3, int)
        seen = np.zeros(3, bool)
        checked = 0
        while env.pool.in_flight >= 2:
            obs, rew, term, trunc, infos = env.recv()
            assert obs.shape == (2 * agents, sync.single_observation_space.shape[0]) and len(infos) == 2 * agents
            for k, w in enumerate(infos.env_ids):
                rows = slice(k * agents, (k + 1) * agents)
                ref_rows = slice(w * agents, (w + 1) * agents)
                assert infos[k * agents]["env_id"] == w
                if not seen[w]:
                    np.testing.assert_array_equal(obs[rows], obs0[ref_rows])
                    seen[w] = True
                    continue
                r_obs, r_rew, r_term, r_trunc, r_infos = ref[count[w] - 1]
                np.testing.assert_array_equal(obs[rows], r_obs[ref_rows])
                np.testing.assert_array_equal(rew[rows], r_rew[ref_rows])
                np.testing.assert_array_equal(term[rows] | trunc[rows], r_term[ref_rows] | r_trunc[ref_rows])
                for a in range(agents):
                    mine, theirs = infos[k * agents + a], r_infos[w * agents + a]
                    assert ("terminal_observation" in mine) == ("terminal_observation" in theirs)
                    if "terminal_observation" in mine:
                        np.testing.assert_array_equal(mine["terminal_observation"], theirs["terminal_observation"])
                checked += 1
            todo = [w for w in infos.env_ids if count[w] < steps]
            if todo:
                env.send(np.concatenate([actions[count[w], w] for w in todo]), todo)
                count[todo] += 1
        assert checked >= 3 * steps // 2
        with pytest.raises(ValueError, match=r"actions should have shape \(%d, %d\)" % (agents, act_dim)):
            env.send(np.zeros((agents + 1, act_dim), np.float32), [0])
    finally:
        sync.close()
        env.close()
