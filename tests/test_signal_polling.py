"""Long native calls notice signals (issue 25, item 5's residual): a
WorldPool's recv() of a large batch, a pool of one world's step_all(), and a
single world's step() (on MuJoCo and on Jolt), each of frame_skip=1000
humanoid timesteps, are stopped by a SIGALRM (or Ctrl-C) handler that raises, and the object stays
usable afterwards. Each runs in a fresh interpreter with a timeout (a call
that ignores the signal runs for tens of seconds, or hangs)."""

from __future__ import annotations

import pytest

from test_hostile_use import describe, run_python

RECV = """
    import signal, time
    import numpy as np
    from joltgym_marl import WorldPool

    class Alarm(Exception):
        pass

    def on_alarm(signum, frame):
        raise Alarm()

    n = 40
    pool = WorldPool("humanoid", n, num_threads={threads}, frame_skip=1000, batch_size=n)
    pool.reset_all(seed=0)
    pool.recv_env_ids[:] = -7
    pool.send(np.zeros((n, 17), np.float32), np.arange(n))
    signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, 0.3)
    started = time.monotonic()
    try:
        pool.recv()
    except Alarm:
        elapsed = time.monotonic() - started
    else:
        raise SystemExit("recv was not interrupted")
    # Nothing was received: the batch buffers are as they were, every world
    # is still in flight, and the next recv() returns them all.
    assert (pool.recv_env_ids == -7).all(), pool.recv_env_ids
    assert pool.in_flight == n, pool.in_flight
    signal.signal(signal.SIGALRM, signal.SIG_DFL)
    ids = pool.recv()[0]
    assert sorted(ids.tolist()) == list(range(n)), ids
    assert pool.in_flight == 0 and np.isfinite(pool.recv_obs).all()

    # A handler that calls back into the pool is refused (not a deadlock).
    def reenter(signum, frame):
        pool.get_state(0)

    pool.reset_all(seed=1)  # (the worlds fell: their next step would only reset them)
    pool.send(np.zeros((n, 17), np.float32), np.arange(n))
    signal.signal(signal.SIGALRM, reenter)
    signal.setitimer(signal.ITIMER_REAL, 0.3)
    try:
        pool.recv()
    except RuntimeError as error:
        assert "signal handler" in str(error), error
    else:
        raise SystemExit("the reentrant handler was not refused")
    # Ctrl-C.
    pool.recv()
    pool.reset_all(seed=2)
    pool.send(np.zeros((n, 17), np.float32), np.arange(n))
    signal.signal(signal.SIGALRM, lambda s, f: signal.raise_signal(signal.SIGINT))
    signal.setitimer(signal.ITIMER_REAL, 0.3)
    try:
        pool.recv()
    except KeyboardInterrupt:
        pass
    else:
        raise SystemExit("Ctrl-C did not interrupt recv")
    signal.signal(signal.SIGALRM, signal.SIG_DFL)
    pool.recv()
    pool.close()
    print("interrupted after", round(elapsed, 2))
"""


@pytest.mark.parametrize("threads", [1, 2])
def test_a_long_recv_is_interrupted_by_a_signal(threads):
    # 40 humanoid worlds of 1000 timesteps each: seconds, far longer than the alarm.
    proc = run_python(RECV.format(threads=threads), timeout=300)
    assert proc.returncode == 0 and "interrupted after" in proc.stdout, describe(proc)
    assert float(proc.stdout.split("interrupted after")[1]) < 3.0, proc.stdout


SINGLE_WORLD = """
    import signal, time
    import numpy as np
    from joltgym_marl import WorldPool, _core

    class Alarm(Exception):
        pass

    def on_alarm(signum, frame):
        raise Alarm()

    def interrupt(step, what):
        # Steps until the alarm: a frame_skip=1000 humanoid step is most of
        # the loop's time, so the alarm lands inside one.
        signal.signal(signal.SIGALRM, on_alarm)
        signal.setitimer(signal.ITIMER_REAL, 0.25)
        started = time.monotonic()
        try:
            for _ in range(200):
                step()
        except Alarm:
            pass
        else:
            raise SystemExit(what + " was not interrupted")
        signal.signal(signal.SIGALRM, signal.SIG_DFL)
        return time.monotonic() - started

    def interrupted_mid_step(world, step, again):
        # The alarm usually lands inside a step (most of the loop's time); on
        # a loaded machine it can land between two, where nothing is
        # half-done: then the world steps on, and it is tried again.
        for _ in range(5):
            elapsed = interrupt(lambda: step(world), type(world).__name__)
            try:
                step(world)
            except RuntimeError as error:
                assert "interrupted half-way" in str(error) and "reset" in str(error), error
                return elapsed
            again(world)
        raise SystemExit(type(world).__name__ + " stepped from a half-done step")

    for make, step, again in (
            (lambda: _core.SingleAgentCore("humanoid", frame_skip=1000),
             lambda w: w.step(np.zeros(17, np.float32)), lambda w: w.reset(seed=1)),
            (lambda: _core.MultiAgentEnv("sumo", robot="humanoid", frame_skip=1000),
             lambda w: w.step(np.zeros((2, 17), np.float32)), lambda w: w.reset(seed=1)),
            # On Jolt too: its updates are polled as MuJoCo's timesteps are.
            (lambda: _core.SingleAgentCore("humanoid", frame_skip=1000, engine="jolt"),
             lambda w: w.step(np.zeros(17, np.float32)), lambda w: w.reset(seed=1)),
            (lambda: WorldPool("humanoid", 1, frame_skip=1000),
             lambda w: w.step_all(np.zeros((1, 1, 17), np.float32)), lambda w: w.reset_all(seed=1))):
        world = make()
        again(world)
        # The world was stopped mid-step: it says so until it is reset.
        elapsed = interrupted_mid_step(world, step, again)
        again(world)
        step(world)
        # A handler that calls back into the world during a step is refused;
        # one that lands between two steps (a loaded machine) may reset it,
        # and arms the alarm again.
        def reenter(signum, frame):
            again(world)
            signal.setitimer(signal.ITIMER_REAL, 0.05)
        signal.signal(signal.SIGALRM, reenter)
        signal.setitimer(signal.ITIMER_REAL, 0.25)
        try:
            for _ in range(200):
                step(world)
        except RuntimeError as error:
            assert "signal handler" in str(error), error
        else:
            raise SystemExit("the reentrant handler was not refused")
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, signal.SIG_DFL)
        again(world)
        step(world)
        print(type(world).__name__, "interrupted after", round(elapsed, 2))
"""


def test_a_long_single_world_step_is_interrupted_by_a_signal():
    proc = run_python(SINGLE_WORLD, timeout=300)
    assert proc.returncode == 0 and proc.stdout.count("interrupted after") == 4, describe(proc)


POOL_OF_SLOW_WORLDS = """
    import signal
    import gymnasium, numpy as np
    from joltgym_marl import WorldPool
    from joltgym_marl.vector import NativeVectorEnv

    class Alarm(Exception):
        pass

    def on_alarm(signum, frame):
        raise Alarm()

    # About two minutes per world-step (a Humanoid on Jolt at its slowest settings).
    slow = dict(engine="jolt", frame_skip=1000, jolt_substeps=64, jolt_velocity_iterations=255,
                jolt_position_iterations=255)
    makers = {{
        "WorldPool": lambda: WorldPool("humanoid", 2, num_threads={threads}, **slow),
        "NativeVectorEnv": lambda: NativeVectorEnv("humanoid", 2, num_threads={threads}, **slow),
        "make_vec": lambda: gymnasium.make_vec("joltgym_marl/Humanoid-v0", num_envs=2, num_threads={threads},
                                               **slow),
    }}
    signal.signal(signal.SIGALRM, on_alarm)
    for name, make in makers.items():
        env = make()
        pool = env if name == "WorldPool" else env.unwrapped.pool
        (env.reset_all if name == "WorldPool" else env.reset)(seed=0)
        step = env.step_all if name == "WorldPool" else env.step
        signal.setitimer(signal.ITIMER_REAL, 0.3)
        try:
            step(np.zeros((2, 17), np.float32))
        except Alarm:
            pass
        else:
            raise SystemExit(name + ": the step was not interrupted")
        signal.setitimer(signal.ITIMER_REAL, 0)
        # The worlds stopped half-way wait for a reset; after it the pool steps again.
        try:
            pool.step_all(np.zeros((2, 17), np.float32))
        except RuntimeError as error:
            assert "interrupted half-way" in str(error), error
        else:
            raise SystemExit(name + ": a world stopped half-way stepped on")
        env.close()
        print(name, "interrupted")
    fast = WorldPool("humanoid", 2, num_threads={threads}, engine="jolt")
    fast.reset_all(seed=0)
    fast.step_all(np.zeros((2, 17), np.float32))
    print("done")
"""


@pytest.mark.parametrize("threads", [1, 2])
def test_a_pool_of_slow_jolt_worlds_is_interrupted_inside_a_world_step(threads):
    """A WorldPool, NativeVectorEnv or make_vec of 2+ worlds polled for signals
    only between worlds: with a Humanoid on Jolt at frame_skip=1000,
    jolt_substeps=64 and 255 solver iterations a world-step takes about two
    minutes, deaf to SIGALRM and Ctrl-C. Each world's step now polls inside
    itself, as a single world's does (on the caller's thread; the workers stop
    at the caller's word); the worlds stopped half-way wait for their reset.
    (Unpatched, this runs for over ten minutes: the timeout fails it.)"""
    proc = run_python(POOL_OF_SLOW_WORLDS.format(threads=threads), timeout=240)
    assert proc.returncode == 0 and "done" in proc.stdout, describe(proc)
    assert proc.stdout.count(" interrupted") == 3, describe(proc)
