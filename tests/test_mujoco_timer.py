"""MuJoCo's profiling timer (mjcb_time) is kept off our worlds, and mujoco's own users keep it.

Importing ``mujoco`` sets MuJoCo's process-wide timer callback, which every
``mj_step`` calls dozens of times; the core wraps it in a forwarder that
returns 0 on threads running our worlds and calls the original elsewhere (see
src/native/quiet_timer.h). Functional checks, in fresh interpreters (the
callback is process-wide): our pools and cores never call the callback, on
any thread; mujoco's own MjData still gets its timers from it; a callback set
later (``mujoco.set_mjcb_time``) is wrapped in turn; an unset one stays unset.
The speed itself is measured by ``benchmarks/mujoco_import.py``, not here.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from joltgym_marl.registry import GAMES, SINGLE_AGENT_TASKS

WORKTREE = Path(__file__).resolve().parents[1]
TASK = SINGLE_AGENT_TASKS[0].name
GAME = GAMES[0].name


def run_python(code: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(WORKTREE))
    return subprocess.run([sys.executable, "-W", "error", "-c", textwrap.dedent(code)],
                          capture_output=True, text=True, timeout=180, env=env)


def check(code: str) -> None:
    proc = run_python(code)
    assert proc.returncode == 0 and "ok" in proc.stdout.split(), (
        f"exit code {proc.returncode}\nstdout: {proc.stdout[-2000:]}\nstderr: {proc.stderr[-3000:]}")


PRELUDE = f"""
    import ctypes, glob, os
    import numpy as np
    import mujoco
    import joltgym_marl
    from joltgym_marl._native import core

    lib = ctypes.CDLL(glob.glob(os.path.join(os.path.dirname(mujoco.__file__), "libmujoco.so*"))[0])

    def mjcb_time():
        return ctypes.c_void_p.in_dll(lib, "mjcb_time").value or 0

    def step_ours(steps=5):
        with joltgym_marl.WorldPool({TASK!r}, 8, num_threads=3, batch_size=4) as pool:
            pool.reset_all(seed=0)
            for _ in range(steps):
                pool.step_all(np.zeros((8, pool.act_dim), np.float32))
            pool.async_reset(seed=1)
            for _ in range(steps):
                ids = pool.recv()[0].copy()
                pool.send(np.zeros((4, pool.act_dim), np.float32), ids)
        core_env = joltgym_marl.SingleAgentCore({TASK!r})
        core_env.reset(seed=0)
        for _ in range(steps):
            core_env.step(np.zeros(core_env.act_dim, np.float32))
        game = core.MultiAgentEnv({GAME!r})
        game.reset(seed=0)
        for _ in range(steps):
            game.step(np.zeros((game.num_agents, game.act_dim), np.float32))

    model = mujoco.MjModel.from_xml_string(
        "<mujoco><worldbody><body><freejoint/><geom size='.1'/></body></worldbody></mujoco>")
    data = mujoco.MjData(model)
    STEP = mujoco.mjtTimer.mjTIMER_STEP
"""


def test_mujoco_users_keep_their_timers_and_our_worlds_skip_them():
    check(PRELUDE + """
    original = mjcb_time()
    assert original != 0, "importing mujoco set no timer (did MuJoCo change?)"
    assert core._mujoco_timer_state() == (False, 0)
    step_ours()
    shielded, forwarded = core._mujoco_timer_state()
    assert shielded and forwarded == original, (shielded, forwarded, original)
    assert mjcb_time() != original  # our forwarder
    before = data.timer[STEP].duration
    for _ in range(20):
        mujoco.mj_step(model, data)
    assert data.timer[STEP].number == 20
    assert data.timer[STEP].duration > before  # mujoco's own profiling still runs
    print("ok")
    """)


def test_a_timer_set_later_is_wrapped_and_never_called_by_our_worlds():
    check(PRELUDE + """
    import threading
    calls = []
    def timer():
        calls.append(threading.get_ident())
        return float(len(calls))
    step_ours(1)
    mujoco.set_mjcb_time(timer)  # replaces our forwarder
    assert not core._mujoco_timer_state()[0]
    step_ours()  # wraps it again on the first call, and never calls it
    assert calls == [], len(calls)
    assert core._mujoco_timer_state()[0]
    mujoco.mj_step(model, data)  # mujoco's own step reaches it through the forwarder
    assert len(calls) > 0 and data.timer[STEP].duration > 0
    n = len(calls)
    step_ours()
    assert len(calls) == n
    print("ok")
    """)


def test_the_benchmark_hook_turns_the_shield_off_and_on():
    check(PRELUDE + """
    calls = []
    def timer():
        calls.append(1)
        return float(len(calls))
    mujoco.set_mjcb_time(timer)
    core._test_mujoco_timer_shield(False)   # the callback is mujoco's again, our worlds call it
    step_ours(1)
    assert not core._mujoco_timer_state()[0] and len(calls) > 0
    core._test_mujoco_timer_shield(True)
    step_ours(1)
    n = len(calls)
    step_ours()
    assert core._mujoco_timer_state()[0] and len(calls) == n
    print("ok")
    """)


def test_an_unset_timer_stays_unset():
    check(PRELUDE + """
    lib_timer = ctypes.c_void_p.in_dll(lib, "mjcb_time")
    lib_timer.value = None
    step_ours()
    assert mjcb_time() == 0 and not core._mujoco_timer_state()[0]
    mujoco.mj_step(model, data)
    print("ok")
    """)


def test_without_mujoco_nothing_is_installed():
    proc = run_python(f"""
        import sys
        import numpy as np
        import joltgym_marl
        from joltgym_marl._native import core
        with joltgym_marl.WorldPool({TASK!r}, 4, num_threads=2) as pool:
            pool.reset_all(seed=0)
            pool.step_all(np.zeros((4, pool.act_dim), np.float32))
        assert "mujoco" not in sys.modules
        assert core._mujoco_timer_state() == (False, 0)
        print("ok")
    """)
    assert proc.returncode == 0 and "ok" in proc.stdout, proc.stderr[-3000:]
