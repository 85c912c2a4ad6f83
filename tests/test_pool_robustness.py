"""WorldPool against hostile use: threads, reentrancy, fork, exit and its buffers.

Each case that could hang or take the interpreter down runs in a subprocess
with a timeout, so that it fails the test instead of the test run.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import numpy as np
import pytest

from joltgym_marl import WorldPool

WORKTREE = Path(__file__).resolve().parents[1]
BUFFERS = ["obs", "rewards", "terminations", "truncations", "infos", "final_obs", "final_infos",
           "reset_kind", "unstable", "elapsed_steps"]


def run_python(code: str, *args: str, timeout: float = 120, cwd=None) -> subprocess.CompletedProcess:
    """``code`` in a fresh interpreter (warnings as errors) that imports this tree's package."""
    env = dict(os.environ, PYTHONPATH=str(WORKTREE))
    return subprocess.run([sys.executable, "-W", "error", "-c", textwrap.dedent(code), *args],
                          capture_output=True, text=True, timeout=timeout, env=env, cwd=cwd)


def describe(proc: subprocess.CompletedProcess) -> str:
    return (f"exit code {proc.returncode} (negative: killed by signal {-proc.returncode})\n"
            f"stdout: {proc.stdout[-2000:]}\nstderr: {proc.stderr[-2000:]}")


# -- the buffers belong to the pool ------------------------------------------------


def test_buffers_cannot_be_resized_under_the_pool():
    with WorldPool("half_cheetah", 4, num_threads=2) as pool:
        arrays = {name: getattr(pool, name) for name in BUFFERS}
        for name, array in arrays.items():
            for refcheck in (True, False):
                with pytest.raises(ValueError, match="cannot resize this array: it does not own its data"):
                    array.resize((1,), refcheck=refcheck)
            assert array.flags.writeable and array.flags.c_contiguous, name
        pool.reset_all(seed=0)
        for _ in range(3):
            out = pool.step_all(np.ones((4, 6), np.float32))
        for name, array in arrays.items():
            assert getattr(pool, name) is array, name
        assert out[0] is arrays["obs"] and np.isfinite(arrays["obs"]).all()
        assert arrays["obs"].shape == (4, 1, 17)


def test_a_view_outlives_the_pool():
    pool = WorldPool("half_cheetah", 2, num_threads=2)
    pool.reset_all(seed=0)
    obs, row = pool.obs, pool.reset_one(1, seed=3)
    expected = obs.copy()
    pool.close()
    del pool
    import gc
    gc.collect()
    # The memory is the views' as long as they live.
    np.testing.assert_array_equal(obs, expected)
    np.testing.assert_array_equal(row, expected[1])
    obs[:] = 1.0
    assert (row == 1.0).all()


# -- actions and states are read from the pool's own copy --------------------------


def test_actions_cannot_change_after_the_check():
    """A thread flips NaN into the caller's array while step_all runs with the GIL released."""
    n = 32
    with WorldPool("half_cheetah", n, num_threads=2, frame_skip=10) as pool:
        pool.reset_all(seed=0)
        actions = np.zeros((n, 6), np.float32)
        stop = threading.Event()

        def flip():
            while not stop.is_set():
                actions[n - 1, 5] = np.nan
                actions[n - 1, 5] = 0.0

        thread = threading.Thread(target=flip)
        thread.start()
        stepped = rejected = took_nan = 0
        try:
            for _ in range(600):
                try:
                    pool.step_all(actions)
                except ValueError as e:
                    assert "actions should be finite, got nan at index (31, 5)" in str(e)
                    rejected += 1
                    continue
                stepped += 1
                took_nan += not np.isfinite(pool.rewards).all()
        finally:
            stop.set()
            thread.join()
    assert took_nan == 0, f"{took_nan} of {stepped} steps took NaN actions unchecked"
    assert stepped > 0


def test_set_state_inputs_cannot_change_after_the_check():
    """set_state waits for the pool's lock (GIL released) while another thread steps;
    meanwhile a third flips inf into the caller's qvel."""
    n = 64
    with WorldPool("half_cheetah", n, num_threads=2, frame_skip=50) as pool:
        pool.reset_all(seed=0)
        qpos, qvel = (x.copy() for x in pool.get_state(2))
        good = qvel.copy()
        actions = np.zeros((n, 6), np.float32)
        stop, go, stepping, done = (threading.Event() for _ in range(4))

        def step():
            while go.wait() and not stop.is_set():
                go.clear()
                stepping.set()
                pool.step_all(actions)
                done.set()

        def flip():
            while not stop.is_set():
                qvel[3] = np.inf
                qvel[3] = good[3]

        threads = [threading.Thread(target=step), threading.Thread(target=flip)]
        for t in threads:
            t.start()
        accepted = 0
        try:
            for _ in range(40):
                done.clear()
                go.set()
                stepping.wait()
                stepping.clear()
                try:
                    pool.set_state(2, qpos, qvel)
                except ValueError as e:
                    assert "qvel should be finite, got inf at index 3" in str(e)
                else:
                    accepted += 1
                    np.testing.assert_array_equal(pool.get_state(2)[1], good)
                    assert np.isfinite(pool.obs[2]).all()
                done.wait()
        finally:
            stop.set()
            go.set()
            for t in threads:
                t.join()
    assert accepted > 0


# -- set_option converts its value before locking ----------------------------------


@pytest.mark.parametrize("reentry", ["set_option", "step_all", "close"])
def test_set_option_with_a_reentrant_float_does_not_deadlock(reentry):
    proc = run_python("""
        import sys
        import numpy as np
        import joltgym_marl as jm

        pool = jm.WorldPool("sumo", 2, num_threads=2)
        pool.reset_all(seed=0)

        class Reentrant(int):
            def __float__(self):
                if sys.argv[1] == "set_option":
                    pool.set_option("shaping_weight", 0.25)
                elif sys.argv[1] == "step_all":
                    pool.step_all(np.zeros((2, 2, 8), np.float32))
                else:
                    pool.close()
                return 0.5

        try:
            pool.set_option("shaping_weight", Reentrant(1))
            pool.set_option("shaping_weight", Reentrant(1), index=1)
        except RuntimeError as e:
            print("rejected:", e)
        print("done", pool.closed)
    """, reentry, timeout=60)
    assert proc.returncode == 0, describe(proc)
    if reentry == "close":
        assert proc.stdout.splitlines() == [
            "rejected: WorldPool is closed; expected an open pool (create a new one)", "done True"]
    else:
        assert proc.stdout.splitlines() == ["done False"]


# -- interpreter exit with a daemon thread inside step_all -------------------------


@pytest.mark.parametrize("frame_skip, delay", [(1, "0.05"), (5, "0.13"), (20, "0.3")])
def test_exit_while_a_daemon_thread_is_stepping(frame_skip, delay):
    proc = run_python("""
        import sys, threading, time
        import numpy as np
        import joltgym_marl as jm

        n = 256
        pool = jm.WorldPool("humanoid", n, num_threads=2, frame_skip=int(sys.argv[1]))
        pool.reset_all(seed=0)
        actions = np.zeros((n, pool.act_dim), np.float32)
        started = threading.Event()

        def loop():
            started.set()
            while True:
                pool.step_all(actions)

        threading.Thread(target=loop, daemon=True).start()
        started.wait()
        time.sleep(float(sys.argv[2]))
        print("exiting")
    """, str(frame_skip), delay, timeout=120)
    assert proc.returncode == 0, describe(proc)
    assert proc.stdout == "exiting\n"


def test_a_pool_used_from_a_finalizer_at_exit():
    """Objects in reference cycles are collected while the interpreter
    finalizes, by the main thread, which runs their ``__del__`` (TorchRL's envs
    close what they wrap there): stepping and closing a pool from one works and
    the process exits (the main thread once parked forever when it took the
    GIL back there)."""
    proc = run_python("""
        import numpy as np
        import joltgym_marl as jm

        class Holder:
            def __init__(self):
                self.pool = jm.WorldPool("hopper", 4, num_threads=2)
                self.pool.reset_all(seed=0)
                self.cycle = self

            def __del__(self):
                self.pool.step_all(np.zeros((4, 3), np.float32))
                self.pool.close()
                print("closed in __del__", flush=True)

        Holder()
        print("exiting", flush=True)
    """, timeout=60)
    assert proc.returncode == 0, describe(proc)
    assert proc.stdout == "exiting\nclosed in __del__\n"


# -- threads: creation failures and the CPU cap ---------------------------------------


def cpus() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def process_threads() -> int:
    with open("/proc/self/status") as f:
        return int(next(line for line in f if line.startswith("Threads:")).split()[1])


def test_num_threads_is_capped_at_the_cpus_and_num_envs():
    with WorldPool("half_cheetah", 64, num_threads=64) as pool:
        assert pool.num_threads == min(64, cpus())
    with WorldPool("half_cheetah", 64) as pool:
        assert pool.num_threads == cpus()
    with WorldPool("half_cheetah", 1, num_threads=64) as pool:
        assert pool.num_threads == 1


@pytest.mark.skipif(cpus() < 2 or not os.path.exists("/proc/self/status"),
                    reason="needs 2 CPUs (a worker thread) and /proc")
def test_a_thread_that_cannot_start_raises_after_joining_the_others():
    from joltgym_marl import _core
    before = process_threads()
    _core._test_fail_thread_starts(1)
    try:
        with pytest.raises(RuntimeError, match=r"could not start native worker thread 1 of 1 \("
                                               r"Resource temporarily unavailable\); expected the "
                                               r"system to allow 1 more threads"):
            WorldPool("half_cheetah", 4, num_threads=2)
    finally:
        _core._test_fail_thread_starts(0)
    assert process_threads() == before
    with WorldPool("half_cheetah", 4, num_threads=2) as pool:
        pool.reset_all(seed=0)
        pool.step_all(np.zeros((4, 6), np.float32))


@pytest.mark.skipif(cpus() < 2, reason="needs 2 CPUs (a worker thread)")
@pytest.mark.skipif("asan" in os.environ.get("LD_PRELOAD", ""),
                    reason="the sanitizer runtime's shadow memory does not fit an address-space limit")
def test_an_address_space_limit_raises_instead_of_crashing():
    """Under RLIMIT_AS (which binds root too, unlike RLIMIT_NPROC) thread stacks,
    MuJoCo's compiler and its allocations fail: each is an exception, never an abort."""
    proc = run_python("""
        import resource
        import numpy as np
        import joltgym_marl as jm

        def vm_size():
            with open("/proc/self/status") as f:
                return int(next(l for l in f if l.startswith("VmSize")).split()[1]) * 1024

        outcomes = []
        for slack_mb in (1, 4, 6, 12, 24):
            resource.setrlimit(resource.RLIMIT_AS, (vm_size() + slack_mb * 2**20,
                                                    resource.RLIM_INFINITY))
            try:
                with jm.WorldPool("half_cheetah", 2, num_threads=2) as pool:
                    pool.reset_all(seed=0)
                    pool.step_all(np.zeros((2, 6), np.float32))
                outcomes.append("ok")
            except (RuntimeError, MemoryError) as e:
                outcomes.append(type(e).__name__)
            resource.setrlimit(resource.RLIMIT_AS, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
        with jm.WorldPool("half_cheetah", 2, num_threads=2) as pool:
            pool.reset_all(seed=0)
        print(" ".join(outcomes))
    """, timeout=120)
    assert proc.returncode == 0, describe(proc)
    assert set(proc.stdout.split()) <= {"ok", "RuntimeError", "MemoryError"}, proc.stdout


# -- fork -----------------------------------------------------------------------------

FORK_CHILD = """
    import os, sys, warnings
    import numpy as np
    import joltgym_marl as jm
    warnings.simplefilter("ignore", DeprecationWarning)  # 3.12+: fork() of a threaded process

    mode = sys.argv[1]
    pool = jm.WorldPool("half_cheetah", 4, num_threads=2)
    pool.reset_all(seed=0)
    actions = np.full((4, 6), 0.3, np.float32)
    pool.step_all(actions)

    def child():
        if mode in ("use", "mp"):
            for _ in range(3):
                pool.step_all(actions)
            print("child", pool.obs.tobytes().hex()[:64], flush=True)
            pool.close()
        elif mode == "close":
            pool.close()
        # "finalize": the interpreter tears the pool down at exit

    if mode == "mp":
        import multiprocessing
        process = multiprocessing.get_context("fork").Process(target=child)
        process.start()
        process.join(60)
        assert process.exitcode == 0, process.exitcode
    else:
        pid = os.fork()
        if pid == 0:
            child()
            if mode == "finalize":
                sys.exit(0)
            os._exit(0)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0, status
    # The parent's pool is untouched and still works.
    for _ in range(3):
        pool.step_all(actions)
    print("parent", pool.obs.tobytes().hex()[:64], flush=True)
    pool.close()
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
@pytest.mark.parametrize("mode", ["use", "close", "finalize", "mp"])
def test_a_pool_in_a_forked_child(mode):
    proc = run_python(FORK_CHILD, mode, timeout=120)
    assert proc.returncode == 0, describe(proc)
    lines = proc.stdout.splitlines()
    assert lines[-1].startswith("parent ")
    if mode in ("use", "mp"):
        # The child restarted the workers and computed what the parent did.
        assert lines == ["child " + lines[-1].split()[1], lines[-1]]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_fork_while_another_thread_is_inside_the_pool():
    """At the fork another thread holds the pool's lock and its workers are busy:
    the child must not wait for either."""
    proc = run_python("""
        import os, threading, time, warnings
        import numpy as np
        import joltgym_marl as jm
        warnings.simplefilter("ignore", DeprecationWarning)

        pool = jm.WorldPool("humanoid", 64, num_threads=2, frame_skip=20)
        pool.reset_all(seed=0)
        actions = np.zeros((64, pool.act_dim), np.float32)
        stop = threading.Event()

        def loop():
            while not stop.is_set():
                pool.step_all(actions)

        thread = threading.Thread(target=loop)
        thread.start()
        time.sleep(0.1)
        pid = os.fork()
        if pid == 0:
            pool.step_all(actions)
            pool.reset_all(seed=1)
            pool.step_all(actions)
            print("child", bool(np.isfinite(pool.obs).all()), flush=True)
            pool.close()
            os._exit(0)
        stop.set()
        thread.join()
        _, status = os.waitpid(pid, 0)
        print("parent", os.waitstatus_to_exitcode(status))
        pool.close()
    """, timeout=120)
    assert proc.returncode == 0, describe(proc)
    assert proc.stdout.splitlines() == ["child True", "parent 0"]
