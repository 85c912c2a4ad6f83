"""The newer surfaces under hostile use (issue 25): async pools dropped in
flight, rendering from threads, lying int subclasses, forks, runaway native
calls, the RLlib / SB3 adapters, the vector envs' constructors and options.

Anything that could crash or hang runs in a subprocess with a timeout, so
that it fails the test instead of the test run.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import gymnasium
import numpy as np
import pytest

from joltgym_marl import WorldPool, mamujoco_v1


def run_python(code: str, *, timeout: float = 180) -> subprocess.CompletedProcess:
    """``code`` in a fresh interpreter (warnings as errors) importing the package
    this test process imported (the sanitized copy, in the sanitized run)."""
    import joltgym_marl

    package_root = str(Path(joltgym_marl.__file__).resolve().parents[1])
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [package_root, os.environ.get("PYTHONPATH")])))
    return subprocess.run([sys.executable, "-W", "error", "-c", textwrap.dedent(code)],
                          capture_output=True, text=True, timeout=timeout, env=env)


def describe(proc: subprocess.CompletedProcess) -> str:
    return (f"exit code {proc.returncode} (negative: killed by signal {-proc.returncode})\n"
            f"stdout: {proc.stdout[-3000:]}\nstderr: {proc.stderr[-3000:]}")


class Evil(int):
    """An int whose comparisons lie: every range check written with < or > passes."""

    __lt__ = __gt__ = __le__ = __ge__ = lambda self, other: False  # noqa: E731


# -- 1. a pool dropped with worlds in flight ---------------------------------------


def test_a_pool_dropped_with_worlds_in_flight_joins_its_workers_first():
    proc = run_python("""
        import gc
        import numpy as np
        from joltgym_marl import WorldPool
        for i in range(30):
            p = WorldPool("humanoid", 16, num_threads=2)
            p.reset_all(seed=i)
            p.send(np.zeros((16, 17), np.float32), list(range(16)))
            del p
        # The same through the garbage collector (a reference cycle), and with
        # a batch received and the rest still in flight.
        for i in range(10):
            p = WorldPool("ant", 8, num_threads=2, batch_size=2)
            p.reset_all(seed=i)
            p.send(np.zeros((8, 8), np.float32), list(range(8)))
            p.recv()
            p.cycle = p
            del p
            gc.collect()
        print("ok")
    """)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", describe(proc)


# -- 3. int subclasses that lie ------------------------------------------------------


def test_lying_int_subclasses_are_range_checked_by_value():
    with WorldPool("half_cheetah", 4, num_threads=1) as pool:
        pool.reset_all(seed=0)
        before = pool.get_state(0)
        for call in (lambda: pool.get_state(Evil(10**7)), lambda: pool.reset_one(Evil(10**7)),
                     lambda: pool.set_state(Evil(-1), *before), lambda: pool.get_state(Evil(-5)),
                     lambda: pool.set_option("ctrl_cost_weight", 0.1, index=Evil(4))
                     if "ctrl_cost_weight" in pool.episode_options else pool.reset_one(Evil(4))):
            with pytest.raises(IndexError, match=r"index should be in \[0, 4\), got"):
                call()
        np.testing.assert_array_equal(pool.get_state(0)[0], before[0])
        # A lying value inside the range is taken by its value.
        np.testing.assert_array_equal(pool.get_state(Evil(0))[0], before[0])
    for kwargs, match in (({"frame_skip": Evil(0)}, r"frame_skip should be in \[1, "),
                          ({"frame_skip": Evil(-3)}, r"frame_skip should be in \[1, "),
                          ({"frame_skip": Evil(2**40)}, r"frame_skip should be in \[1, ")):
        with pytest.raises(ValueError, match=match):
            WorldPool("half_cheetah", 2, **kwargs)
    for kwargs, match in (({"num_envs": Evil(0)}, "num_envs should be in"),
                          ({"num_envs": 2, "num_threads": Evil(0)}, "num_threads should be >= 1"),
                          ({"num_envs": 2, "batch_size": Evil(9)}, r"batch_size should be in \[1, 2\]"),
                          ({"num_envs": 2, "max_episode_steps": Evil(-1)}, "max_episode_steps should be >= 0")):
        with pytest.raises(ValueError, match=match):
            WorldPool("half_cheetah", **kwargs)
    with WorldPool("half_cheetah", 2) as pool:
        with pytest.raises(ValueError, match="seed should be a non-negative int"):
            pool.reset_all(seed=Evil(-1))
        with pytest.raises(ValueError, match="seed should be a non-negative int"):
            pool.reset_one(0, seed=Evil(-1))


# -- 2. rendering from threads ----------------------------------------------------------

RENDER_FROM_THREADS = """
    import threading
    import numpy as np
    import joltgym_marl
    from joltgym_marl import kick_and_defend_v0, run_to_goal_v0
    from joltgym_marl.vector import NativeVectorEnv

    def make(which):
        if which == "native":
            env = NativeVectorEnv("half_cheetah", 2, num_threads=1, render_mode="rgb_array", width=64, height=48)
            env.reset(seed=0)
        elif which == "parallel":
            env = run_to_goal_v0.parallel_env(render_mode="rgb_array", width=64, height=48)
            env.reset(seed=0)
        else:
            env = kick_and_defend_v0.vec_env(2, num_threads=1, render_mode="rgb_array")
            env.reset(seed=0)
        return env

    for which in ("native", "parallel", "vec"):
        env = make(which)
        frames, errors = [], []

        def render(count):
            try:
                for _ in range(count):
                    frames.append(env.render())
            except BaseException as error:  # noqa: BLE001 - reported below
                errors.append(repr(error))

        # The first frame on another thread than the env's, then two threads at once.
        first = threading.Thread(target=render, args=(1,))
        first.start(); first.join()
        threads = [threading.Thread(target=render, args=(15,)) for _ in range(2)]
        for t in threads: t.start()
        for t in threads: t.join()
        render(1)  # and on the main thread again
        assert not errors, (which, errors[:3])
        assert len(frames) == 32, (which, len(frames))
        # The state did not change: every frame is the same picture.
        for frame in frames[1:]:
            assert frame.dtype == np.uint8 and frame.std() > 1, which
            np.testing.assert_array_equal(frame, frames[0])
        env.close()
        print(which, "ok", frames[0].shape)
"""


def test_rendering_from_any_thread_one_frame_at_a_time():
    proc = run_python(RENDER_FROM_THREADS, timeout=300)
    assert proc.returncode == 0 and proc.stdout.count(" ok ") == 3, describe(proc)


# -- 5. runaway native calls --------------------------------------------------------------


def test_frame_skip_is_bounded():
    for task in ("half_cheetah", "sumo", "cheetah_race"):
        with pytest.raises(ValueError, match=r"frame_skip should be in \[1, 1000\], got 1048576"):
            WorldPool(task, 1, frame_skip=2**20)
    with WorldPool("half_cheetah", 1, frame_skip=1000) as pool:  # the largest sane value still works
        pool.reset_all(seed=0)
        pool.step_all(np.zeros((1, 6), np.float32))
        assert np.isfinite(pool.obs).all()


INTERRUPTED = """
    import signal, time
    import numpy as np
    from joltgym_marl import WorldPool

    pool = WorldPool("humanoid", {num_envs}, num_threads={threads}, frame_skip=1000)
    pool.reset_all(seed=0)
    before = [pool.get_state(i)[0].copy() for i in range(pool.num_envs)]

    class Alarm(Exception):
        pass

    def on_alarm(signum, frame):
        raise Alarm()

    signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, 0.3)
    started = time.monotonic()
    try:
        pool.step_all(np.zeros((pool.num_envs, 17), np.float32))
    except Alarm:
        elapsed = time.monotonic() - started
    else:
        raise SystemExit("step_all was not interrupted")
    # Each world stepped whole, is as it was, or (those under way) stopped half-way and waits
    # for its reset; after the reset the pool works.
    stepped = sum(not np.array_equal(pool.get_state(i)[0], before[i]) for i in range(pool.num_envs))
    assert 0 < stepped < pool.num_envs, stepped
    pool.reset_all(seed=1)
    assert np.isfinite(pool.obs).all()

    # A handler that calls back into the interrupted pool is refused (not a deadlock).
    def reenter(signum, frame):
        pool.get_state(0)

    signal.signal(signal.SIGALRM, reenter)
    signal.setitimer(signal.ITIMER_REAL, 0.3)
    try:
        pool.step_all(np.zeros((pool.num_envs, 17), np.float32))
    except RuntimeError as error:
        assert "signal handler" in str(error), error
    else:
        raise SystemExit("the reentrant handler was not refused")
    pool.reset_all(seed=2)
    # Ctrl-C: the default handler's KeyboardInterrupt.
    signal.signal(signal.SIGALRM, lambda s, f: signal.raise_signal(signal.SIGINT))
    signal.setitimer(signal.ITIMER_REAL, 0.3)
    try:
        pool.step_all(np.zeros((pool.num_envs, 17), np.float32))
    except KeyboardInterrupt:
        pass
    else:
        raise SystemExit("Ctrl-C did not interrupt step_all")
    pool.close()
    print("interrupted after", round(elapsed, 2))
"""


@pytest.mark.parametrize("threads", [1, 2])
def test_a_long_step_all_is_interrupted_by_a_signal(threads):
    # 200 humanoid worlds of 1000 mj_steps each: far longer than the alarm.
    proc = run_python(INTERRUPTED.format(num_envs=200, threads=threads), timeout=240)
    assert proc.returncode == 0 and "interrupted after" in proc.stdout, describe(proc)
    elapsed = float(proc.stdout.split("interrupted after")[1])
    assert elapsed < 3.0, proc.stdout


# -- 7. the agent SB3 VecEnv --------------------------------------------------------------


def test_the_agent_sb3_vec_env_checks_its_arguments():
    from joltgym_marl.vector.agent_vector_env import make_agent_vec_env

    env = make_agent_vec_env("cheetah_race", 2, base_class="stable_baselines3", num_threads=1)
    try:
        rows = env.num_envs  # 2 worlds x 2 agents
        assert env.get_attr("num_worlds", indices=[0, -1]) == [2, 2]
        for indices, error, match in ((rows, IndexError, rf"indices should be ints in \[0, {rows}\), got {rows} \(negative"),
                                      ([0, 99], IndexError, rf"indices should be ints in \[0, {rows}\), got 99"),
                                      ("0", TypeError, "indices should be None, an int or a sequence of ints"),
                                      ([True], TypeError, "indices should be ints"),
                                      (Evil(10**7), IndexError, "indices should be ints in")):
            with pytest.raises(error, match=match):
                env.get_attr("num_worlds", indices=indices)
            with pytest.raises(error, match=match):
                env.env_is_wrapped(object, indices=indices)
        with pytest.raises(ValueError, match="set_attr\\('tag'\\) should address all 4 rows"):
            env.set_attr("tag", 1, indices=[0])
        assert not hasattr(env, "tag")
        env.set_attr("tag", 1)
        assert env.get_attr("tag") == [1] * rows
        for seed, error in ((-1, ValueError), (Evil(-1), ValueError), (1.5, TypeError), (True, TypeError)):
            with pytest.raises(error, match="seed should be"):
                env.seed(seed)
        env.reset()
        with pytest.raises(RuntimeError, match=r"step_wait\(\) was called without step_async"):
            env.step_wait()
        env.step_async(np.zeros((rows, 6), np.float32))
        obs, rewards, dones, infos = env.step_wait()
        assert obs.shape == (rows, env.observation_space.shape[0]) and len(infos) == rows
        with pytest.raises(RuntimeError, match=r"step_wait\(\) was called without step_async"):
            env.step_wait()  # the actions were used once
    finally:
        env.close()


# -- 8. vector env constructors, autoreset_mode, mixed recv batches ----------------------------


CONSTRUCTOR_GC = """
    import gc
    import joltgym_marl._core as core
    from joltgym_marl.vector import AgentVectorEnv, NativeVectorEnv
    kept = []  # the exceptions, and through their tracebacks the half-built envs (as a debugger keeps them)
    for make in (lambda: NativeVectorEnv("cheetah_race", 2, num_threads=2),          # 2 agents
                 lambda: NativeVectorEnv("half_cheetah", 2, num_threads=2, render_world=5),
                 lambda: AgentVectorEnv("cheetah_race", 2, num_threads=2, render_world=5)):
        try:
            make()
        except ValueError as error:
            print("refused:", str(error)[:60])
            kept.append(error)
    pools = [o for o in gc.get_objects() if isinstance(o, core.WorldPool) and not o.closed]
    assert not pools, f"{len(pools)} pools left open by rejected constructors"
    kept.clear()
    gc.collect()
    print("open pools:", len(pools))
"""


def test_a_rejected_vector_env_constructor_leaves_nothing_behind():
    proc = run_python(CONSTRUCTOR_GC)
    assert proc.returncode == 0 and proc.stdout.count("refused:") == 3, describe(proc)
    # No second traceback from the garbage collector (an exception ignored in __del__).
    assert "Exception ignored" not in proc.stderr and "Traceback" not in proc.stderr, describe(proc)


def test_autoreset_mode_in_the_native_spelling():
    from gymnasium.vector import AutoresetMode

    from joltgym_marl.vector import AgentVectorEnv, NativeVectorEnv

    env = NativeVectorEnv("half_cheetah", 2, num_threads=1, autoreset_mode="same_step")
    assert env.autoreset_mode is AutoresetMode.SAME_STEP and env.pool.autoreset_mode == "same_step"
    env.close()
    env = NativeVectorEnv("half_cheetah", 2, num_threads=1, autoreset_mode="next_step")
    assert env.autoreset_mode is AutoresetMode.NEXT_STEP
    env.close()
    with pytest.raises(ValueError, match="autoreset_mode should be"):
        NativeVectorEnv("half_cheetah", 2, autoreset_mode="sometimes")
    env = AgentVectorEnv("cheetah_race", 2, num_threads=1, autoreset_mode="same_step")
    assert env.metadata["autoreset_mode"] is AutoresetMode.SAME_STEP
    env.close()
    with pytest.raises(ValueError, match="autoreset_mode should be AutoresetMode.SAME_STEP"):
        AgentVectorEnv("cheetah_race", 2, autoreset_mode="next_step")


def test_agent_vector_env_recv_decodes_reset_and_stepped_worlds_each_as_theirs():
    from joltgym_marl.vector import AgentVectorEnv

    env = AgentVectorEnv("sumo", 4, num_threads=1, batch_size=3)
    try:
        env.async_reset(seed=0)
        env.recv()  # worlds 0, 1, 2: reset
        env.send(np.zeros((6, env.single_action_space.shape[0]), np.float32), [0, 1, 2])
        # World 3 (reset, done since async_reset) and worlds 0, 1, 2 (stepped)
        # are in flight: the next batch mixes world 3 with two stepped ones.
        seen = {}
        _, _, _, _, infos = env.recv()
        assert 3 in infos.env_ids.tolist()
        for k, world in enumerate(infos.env_ids):
            seen[int(world)] = infos[k * env.num_agents]
        env.send(np.zeros((4, env.single_action_space.shape[0]), np.float32),
                 [w for w in (0, 1, 2) if w in seen])
        for _ in range(1):
            _, _, _, _, infos = env.recv()
            for k, world in enumerate(infos.env_ids):
                seen.setdefault(int(world), infos[k * env.num_agents])
        reset_keys = set(env.pool.info_decoder.row(env.pool.infos[0, 0], reset=True))
        step_keys = set(env.pool.info_decoder.row(env.pool.infos[0, 0], reset=False))
        assert reset_keys < step_keys
        # A reset world's rows carry every key a step gives, the step-only ones 0 (as
        # the game's parallel_env), not the values its buffer row held from before.
        assert set(seen[3]) - {"env_id"} == step_keys
        assert all(seen[3][key] == 0 for key in step_keys - reset_keys)
        for world in (0, 1, 2):
            assert set(seen[world]) - {"env_id"} == step_keys, world
    finally:
        env.close()


# -- 9. render arguments at construction ----------------------------------------------------


@pytest.mark.parametrize("size, error", [(0, ValueError), (-1, ValueError), (10**9, ValueError),
                                         ("64", TypeError), (None, TypeError), (64.0, TypeError),
                                         (Evil(10**9), ValueError)])
def test_render_sizes_are_checked_by_every_constructor(size, error):
    import gymnasium as gym

    from joltgym_marl import cheetah_race_v0
    from joltgym_marl.vector import NativeVectorEnv, make_sb3_vec_env

    makers = [lambda **k: gym.make("joltgym_marl/HalfCheetah-v0", render_mode="rgb_array", **k),
              lambda **k: cheetah_race_v0.parallel_env(render_mode="rgb_array", **k),
              lambda **k: NativeVectorEnv("half_cheetah", 1, num_threads=1, render_mode="rgb_array", **k),
              lambda **k: make_sb3_vec_env("half_cheetah", 1, num_threads=1, render_mode="rgb_array", **k)]
    for make in makers:
        for name in ("width", "height"):
            with pytest.raises(error, match=f"{name} should be"):
                make(**{name: size})


# -- 10. option names and values, files ------------------------------------------------------


def test_option_names_and_values_are_checked_whole():
    with WorldPool("sumo", 2, num_threads=1, ring_radius=None) as pool:  # a ring drawn per episode
        pool.reset_all(seed=0)
        assert {"shaping_weight", "ring_radius_limit"} <= set(pool.episode_options)
        for name in ("shaping_weight\0junk", "shaping_weight\0", "\0"):
            with pytest.raises(ValueError, match="unknown option"):
                pool.set_option(name, 0.5)
        with pytest.raises(ValueError, match="an option name should be text that UTF-8 can encode"):
            pool.set_option("shaping\ud800", 0.5)
        with pytest.raises(TypeError, match="name should be a str"):
            pool.set_option(b"shaping_weight", 0.5)
        for value in (1 + 0j, np.complex128(1), complex(0.5, 0), True, np.bool_(False), "0.5", None,
                      10**400, float("nan")):
            with pytest.raises(ValueError, match="option 'shaping_weight' should be a finite real number"):
                pool.set_option("shaping_weight", value)
        # ring_radius_limit below min_ring_radius would be clamped up to it.
        low = pool.kwargs.get("min_ring_radius", 2.5)
        for limit in (0.0, -1.0, low - 0.5):
            with pytest.raises(ValueError, match=r"option 'ring_radius_limit' should be in \[2.5, "):
                pool.set_option("ring_radius_limit", limit)
        pool.set_option("ring_radius_limit", low)
        # set_options: every option checked before any is set.
        with pytest.raises(ValueError, match="unknown option 'nope'"):
            pool.set_options({"shaping_weight": 0.25, "nope": 1.0})
    with pytest.raises(ValueError, match="a keyword argument name should be text that UTF-8 can encode"):
        WorldPool("sumo", 1, **{"\ud800": 1})


def test_a_directory_as_xml_file_is_named_as_one(tmp_path):
    with pytest.raises(ValueError, match=f"MJCF file '{tmp_path}' is a directory"):
        WorldPool("half_cheetah", 1, xml_file=str(tmp_path))
    with pytest.raises(FileNotFoundError, match="does not exist"):
        WorldPool("half_cheetah", 1, xml_file=str(tmp_path / "missing.xml"))
    long_path = "/" + "x" * 1_000_000 + ".xml"
    with pytest.raises(FileNotFoundError) as caught:
        WorldPool("half_cheetah", 1, xml_file=long_path)
    assert len(str(caught.value)) < 1000 and "bytes cut" in str(caught.value)
    undecodable = os.fsdecode(b"/no/such/\xff.xml")  # a surrogate escape, as os.listdir gives it
    with pytest.raises(FileNotFoundError, match=r"MJCF file '/no/such/\\xff.xml' does not exist"):
        WorldPool("half_cheetah", 1, xml_file=undecodable)


# -- 11. misaligned arrays, set_state on an ended world ----------------------------------------


def misaligned(values: np.ndarray) -> np.ndarray:
    """A copy of `values` at an odd address (NumPy flags it not aligned)."""
    raw = np.zeros(values.nbytes + 1, np.uint8)
    view = raw[1:].view(values.dtype).reshape(values.shape)
    view[...] = values
    assert not view.flags.aligned
    return view


def test_misaligned_arrays_are_read_by_copy():
    with WorldPool("half_cheetah", 2, num_threads=1) as pool:
        pool.reset_all(seed=0)
        qpos, qvel = pool.get_state(0)
        pool.set_state(1, misaligned(qpos + 0.01), misaligned(qvel))
        np.testing.assert_allclose(pool.get_state(1)[0], qpos + 0.01)
        actions = np.full((2, 6), 0.5, np.float32)
        pool.step_all(misaligned(actions))
        reference = WorldPool("half_cheetah", 2, num_threads=1)
        reference.reset_all(seed=0)
        reference.set_state(1, qpos + 0.01, qvel)
        reference.step_all(actions)
        np.testing.assert_array_equal(pool.obs, reference.obs)
        reference.close()
        pool.send(misaligned(actions), misaligned(np.array([1, 0], np.int64)))
        ids = pool.recv()[0]
        assert sorted(ids.tolist()) == [0, 1]
        decoder = pool.info_decoder
        rows = misaligned(np.ascontiguousarray(pool.infos[:, 0, :]))
        assert decoder.rows(rows, reset=False) == decoder.rows(np.ascontiguousarray(pool.infos[:, 0, :]), reset=False)
        # Bytes that are not 0 or 1 in a bool mask, and values no integer holds.
        mask = np.frombuffer(bytes([2, 0]), dtype=np.bool_)
        rows = np.full((2, pool.infos.shape[2]), 1e300)
        rows[1] = np.nan
        decoder.columns(rows, mask, mask)
        decoder.rows(rows, reset=True)


def test_set_state_on_a_world_waiting_for_its_auto_reset_is_refused():
    with WorldPool("inverted_pendulum", 1, num_threads=1, max_episode_steps=2) as pool:
        pool.reset_all(seed=0)
        pool.step_all(np.zeros((1, 1), np.float32))
        pool.step_all(np.zeros((1, 1), np.float32))
        assert pool.truncations.all()
        qpos, qvel = pool.get_state(0)
        with pytest.raises(RuntimeError, match=r"set_state\(\) called on world 0, whose episode ended"):
            pool.set_state(0, qpos, qvel)
        pool.reset_one(0)
        pool.set_state(0, qpos * 0, qvel * 0)
        np.testing.assert_array_equal(pool.get_state(0)[0], qpos * 0)
    with WorldPool("inverted_pendulum", 1, num_threads=1, max_episode_steps=2, autoreset_mode="same_step") as pool:
        pool.reset_all(seed=0)
        pool.step_all(np.zeros((1, 1), np.float32))
        pool.step_all(np.zeros((1, 1), np.float32))
        qpos, qvel = pool.get_state(0)
        pool.set_state(0, qpos, qvel)  # same_step: the world was reset already, its state is kept


# -- 12. memory --------------------------------------------------------------------------------


def test_a_pool_that_cannot_fit_in_memory_is_refused_with_the_figure():
    proc = run_python("""
        import resource
        from joltgym_marl import WorldPool

        def vm_size():  # what is mapped already (terabytes under ASan, whose shadow is reserved)
            with open("/proc/self/status") as f:
                return int(next(l for l in f if l.startswith("VmSize")).split()[1]) * 1024

        resource.setrlimit(resource.RLIMIT_AS, (vm_size() + 2 * 1024**3, resource.RLIM_INFINITY))
        try:
            WorldPool("humanoid", 2**20)
        except MemoryError as error:
            print(error)
        else:
            raise SystemExit("accepted")
        with WorldPool("humanoid", 64) as pool:  # what fits is still accepted
            pool.reset_all(seed=0)
    """)
    assert proc.returncode == 0, describe(proc)
    assert "num_envs=1048576 needs about" in proc.stdout and "per world of this task" in proc.stdout, describe(proc)


def test_a_huge_unknown_task_name_is_not_echoed_whole():
    """A 100,000-character task name (pasted by mistake) gets the usual
    "unknown task" error with the name cut, on every entry point."""
    import gymnasium

    import joltgym_marl

    name = "half_cheetah" + "x" * 100_000
    attempts = [lambda: WorldPool(name, 1), lambda: joltgym_marl.resolve(name), lambda: joltgym_marl.task(name)]
    for attempt in attempts:
        with pytest.raises(ValueError, match=r"unknown task 'half_cheetahx+.*\d+ bytes cut.*'") as caught:
            attempt()
        assert len(str(caught.value)) < 3000, len(str(caught.value))
    with pytest.raises(gymnasium.error.Error):
        gymnasium.make(name)


def test_a_huge_do_simulation_is_interrupted_by_a_signal():
    """do_simulation(ctrl, 10**9) (hours of MuJoCo steps) used to hang the
    interpreter, deaf to Ctrl-C and alarms; now an alarm's exception ends it
    within a second and the env keeps working. do_simulation still steps
    exactly as v5's does (tests/test_gymnasium_dropin.py)."""
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent("""
        import signal, time
        import gymnasium, numpy as np
        import joltgym_marl

        class Alarm(Exception):
            pass

        def ring(signum, frame):
            raise Alarm()

        env = gymnasium.make("joltgym_marl/Ant-v0")
        env.reset(seed=0)
        signal.signal(signal.SIGALRM, ring)
        signal.setitimer(signal.ITIMER_REAL, 0.5)
        start = time.monotonic()
        try:
            env.unwrapped.do_simulation(np.zeros(8), 10**9)
        except Alarm:
            print("interrupted after", round(time.monotonic() - start, 2), "s")
        env.reset(seed=1)
        env.step(np.zeros(8))
        print("still usable")
    """)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "interrupted after" in proc.stdout and "still usable" in proc.stdout, proc.stdout


def test_an_unsigned_env_id_beyond_int64_is_named_as_given():
    """np.uint64 ids above int64's range wrapped to -1 in the message."""
    pool = WorldPool("hopper", 2, num_threads=1)
    try:
        pool.reset_all(seed=0)
        for ids, shown in (([2**64 - 1], "18446744073709551615 at position 0"),
                           ([0, 2**63], "9223372036854775808 at position 1")):
            with pytest.raises(IndexError, match=rf"env_ids should be in \[0, 2\), got {shown}"):
                pool.send(np.zeros((len(ids), 3), np.float32), np.array(ids, dtype=np.uint64))
        assert pool.in_flight == 0
        pool.send(np.zeros((1, 3), np.float32), np.array([1], dtype=np.uint64))  # a valid one still works
        assert pool.in_flight == 1
    finally:
        pool.close()


def test_jolt_settings_with_another_engine_are_refused():
    """jolt_substeps=4 with engine='mujoco' used to be silently ignored."""
    import gymnasium

    import joltgym_marl  # noqa: F401  (registers the envs)

    with pytest.raises(ValueError, match=r"jolt_substeps=4 only applies to engine='jolt'; got engine='mujoco'"):
        WorldPool("half_cheetah", 1, jolt_substeps=4)
    with pytest.raises(ValueError, match=r"jolt_velocity_iterations=20 only applies to engine='jolt'"):
        gymnasium.make("joltgym_marl/HalfCheetah-v0", jolt_velocity_iterations=20)
    WorldPool("half_cheetah", 1, jolt_substeps=1).close()  # the default, given explicitly, is fine


@pytest.mark.parametrize("make", [
    lambda **kw: gymnasium.make("joltgym_marl/HalfCheetah-v0", render_mode="rgb_array", width=32, height=32, **kw),
    lambda **kw: mamujoco_v1.parallel_env("HalfCheetah", "2x3", render_mode="rgb_array", width=32, height=32, **kw)])
def test_a_camera_the_model_does_not_have_is_refused(make):
    """A fixed camera id out of range ended the process (MuJoCo's fatal error in
    mjv_cameraFrustum, exit 1) at the first render; an unknown camera name drew
    the free camera silently. Both are refused, naming the model's cameras;
    their types are checked at construction."""
    for kwargs, match in ((dict(camera_id=10**9), r"camera_id should be -1 \(the free camera\) or one of the model's 1 cameras"),
                          (dict(camera_id=-2), "got -2"),
                          (dict(camera_name="nope"), r"camera_name should name one of the model's cameras \['track'\]")):
        env = make(**kwargs)
        env.reset(seed=0)
        with pytest.raises(ValueError, match=match):
            env.render()
        env.close()
    with pytest.raises(TypeError, match="camera_id should be None or an int, got str '0'"):
        make(camera_id="0")
    with pytest.raises(TypeError, match="camera_name should be None or a str"):
        make(camera_name=3)
    env = make(camera_name="track")
    env.reset(seed=0)
    assert env.render().shape == (32, 32, 3)
    env.close()


def test_a_friction_cone_mujoco_would_crash_on_is_refused():
    """model.opt.cone = 7 ended the process with a segmentation fault on the
    next step (MuJoCo indexes by it unchecked; v5's env crashes too): refused
    by step and do_simulation with ValueError naming it, on either engine."""
    for engine in ("mujoco", "jolt"):
        env = gymnasium.make("joltgym_marl/HalfCheetah-v0", engine=engine)
        env.reset(seed=0)
        model = env.unwrapped.model
        for field, value in (("cone", 7), ("cone", -1), ("jacobian", 9)):
            setattr(model.opt, field, value)
            with pytest.raises(ValueError, match=rf"model\.opt\.{field} should be .* got {value}"):
                env.step(np.zeros(6, np.float32))
            with pytest.raises(ValueError, match=rf"model\.opt\.{field} should be"):
                env.unwrapped.do_simulation(np.zeros(6), 1)
            setattr(model.opt, field, 0)
        model.opt.cone = 1  # an elliptic cone is fine
        env.step(np.zeros(6, np.float32))


@pytest.mark.parametrize("field, value", [("body_parentid", 1000), ("jnt_qposadr", 100000), ("jnt_dofadr", -1),
                                          ("geom_bodyid", 99), ("actuator_trnid", 500)])
def test_an_index_array_pointing_outside_the_model_is_refused(field, value):
    """model.body_parentid[:] = 1000 corrupted the heap at the next step (glibc
    aborted the process: "corrupted size vs. prev_size"; v5's env crashes too),
    and jnt_qposadr[:] = 100000 froze the observation silently. MuJoCo's own
    check of the model's references now runs before each call on a model a
    user holds: ValueError naming the array, the world unchanged."""
    code = f"""
import gymnasium, numpy as np, joltgym_marl
env = gymnasium.make("joltgym_marl/Ant-v0")
env.reset(seed=0)
model = env.unwrapped.model
before = np.array(model.{field}, copy=True)
state = env.unwrapped.get_state()
model.{field}[...] = {value}
for call in (lambda: env.step(np.zeros(8, np.float32)), lambda: env.unwrapped.do_simulation(np.zeros(8), 1),
             lambda: env.reset(seed=1)):
    try:
        call()
        print("accepted")
    except ValueError as error:
        assert "{field} out of bounds" in str(error), error
        print("refused")
assert (env.unwrapped.get_state()[0] == state[0]).all()
model.{field}[...] = before
env.step(np.zeros(8, np.float32))
print("usable again")
"""
    proc = run_python(code)
    assert proc.returncode == 0, describe(proc)
    assert proc.stdout.split() == ["refused"] * 3 + ["usable", "again"], describe(proc)


def test_a_blow_up_in_a_world_whose_last_step_blew_up_is_reported_too():
    """MuJoCo answers a bad state by resetting the data, which zeroes its
    warning counts before counting the new one: a second blow-up in a row
    (a user stepping on after a physics_unstable truncation) left the count at
    1 and went unreported, the world silently back at its reference state."""
    env = gymnasium.make("joltgym_marl/HalfCheetah-v0")
    env.reset(seed=0)
    data = env.unwrapped.data
    for _ in range(3):
        data.qpos[3] = np.nan
        _, _, _, truncated, info = env.step(np.zeros(6, np.float32))
        assert truncated and info.get("physics_unstable"), info
    for _ in range(3):  # and steps that do not blow up are not reported
        _, _, _, truncated, info = env.step(np.zeros(6, np.float32))
        assert not truncated and "physics_unstable" not in info


# -- issue 34: two threads on one Gymnasium env, odd options --------------------------

THREAD_RACE = """
    import threading
    import gymnasium, numpy as np
    import joltgym_marl

    env = gymnasium.make("joltgym_marl/Humanoid-v0", engine={engine!r}).unwrapped
    env.reset(seed=0)
    zeros = np.zeros(env.action_space.shape, np.float32)
    calls = {{
        "step": lambda: env.step(zeros),
        "do_simulation": lambda: env.do_simulation(zeros, 20),
        "reset_model": env.reset_model,
        "reset": env.reset,
        "set_state": lambda: env.set_state(env.init_qpos, env.init_qvel),
    }}
    errors = []

    def hammer(name):
        for _ in range({rounds}):
            try:
                calls[name]()
            except Exception as error:  # any Python error is an answer; a crash is not
                errors.append(repr(error))

    for pair in {pairs!r}:
        threads = [threading.Thread(target=hammer, args=(name,)) for name in pair]
        for t in threads: t.start()
        for t in threads: t.join()
        print(pair, "survived")
    print("errors:", sorted(set(errors))[:5])
"""
RACING_PAIRS = [("step", "do_simulation"), ("step", "reset_model"), ("do_simulation", "do_simulation"),
                ("do_simulation", "reset"), ("do_simulation", "set_state"), ("reset_model", "reset_model")]


@pytest.mark.parametrize("engine", ["mujoco", "jolt"])
def test_two_threads_on_one_gymnasium_env_do_not_crash(engine):
    """step() racing do_simulation() or reset_model(), do_simulation() racing
    itself, reset() or set_state() on one env from two threads ended the process
    with a segmentation fault (MuJoCo's mj_step and mj_forward release the GIL,
    so the Python-side paths stepped the data another thread was stepping):
    they now run natively with the GIL held, as step() does, one at a time.
    (In the sanitized run this runs under ASan too.)"""
    proc = run_python(THREAD_RACE.format(engine=engine, rounds=150, pairs=RACING_PAIRS), timeout=600)
    assert proc.returncode == 0, describe(proc)
    assert proc.stdout.count("survived") == len(RACING_PAIRS), describe(proc)
    assert "errors: []" in proc.stdout, describe(proc)  # serialized, not refused


@pytest.mark.parametrize("engine", ["mujoco", "jolt"])
@pytest.mark.parametrize("timestep", [0.0, -0.01, np.nan, np.inf])
def test_a_timestep_that_is_not_positive_and_finite_is_refused_on_either_engine(engine, timestep):
    """model.opt.timestep = 0 on MuJoCo gave a NaN reward (0 / 0 velocity) with no
    physics_unstable while Jolt flagged it: both refuse it now, naming the value,
    as a model file with such a timestep is refused, and go on once it is set back."""
    env = gymnasium.make("joltgym_marl/HalfCheetah-v0", engine=engine)
    env.reset(seed=0)
    model = env.unwrapped.model
    model.opt.timestep = timestep
    for call in (lambda: env.step(np.zeros(6, np.float32)), lambda: env.unwrapped.do_simulation(np.zeros(6), 5),
                 lambda: env.reset(seed=0)):
        with pytest.raises(ValueError, match=r"model.opt.timestep should be a positive, finite number of "
                                             rf"seconds, got {timestep!r}"):
            call()
    model.opt.timestep = 0.01
    env.reset(seed=0)
    _, reward, _, truncated, info = env.step(np.zeros(6, np.float32))
    assert np.isfinite(reward) and not truncated and "physics_unstable" not in info


@pytest.mark.parametrize("engine", ["mujoco", "jolt"])
def test_do_simulation_takes_n_frames_as_v5_does(engine):
    """v5's do_simulation(ctrl, 0) (or a negative count) steps nothing and True
    steps once; on Jolt 0 and -1 raised ValueError."""
    env = gymnasium.make("joltgym_marl/HalfCheetah-v0", engine=engine).unwrapped
    reference = gymnasium.make("HalfCheetah-v5").unwrapped
    for e in (env, reference):
        e.reset(seed=0)
    for frames in (0, -1, True, np.int64(3), 2):
        times = []
        for e in (env, reference):
            e.do_simulation(np.full(6, 0.5), frames)
            times.append(e.data.time)
        assert times[0] == pytest.approx(times[1]), (frames, times)
    for e in (env, reference):
        with pytest.raises(TypeError):
            e.do_simulation(np.zeros(6), 1.5)


RENDER_CORRUPT = """
    import gymnasium, numpy as np
    import joltgym_marl

    for field in {fields!r}:
        for first_render in (False, True):
            env = gymnasium.make("joltgym_marl/HalfCheetah-v0", render_mode="rgb_array", width=32,
                                 height=32).unwrapped
            env.reset(seed=0)
            if first_render:
                env.render()
            array = getattr(env.model, field)
            kept = array.copy()
            array[...] = 2**30
            for call in (lambda: env.step(np.zeros(6, np.float32)), env.render):
                try:
                    call()
                except ValueError as error:
                    assert field in str(error), error
                else:
                    raise SystemExit(field + ": not refused")
            array[...] = kept
            env.step(np.zeros(6, np.float32))
            assert env.render().shape == (32, 32, 3)
            env.close()
        print(field, "refused")
"""
INDEX_FIELDS = ["geom_bodyid", "geom_matid", "mat_texid", "geom_type", "dof_treeid", "jnt_actuatorid",
                "light_texid"]


def test_render_and_step_refuse_an_index_pointing_outside_the_model():
    """render() with model.geom_bodyid, geom_matid or mat_texid set to 2**30
    ended the process with a segmentation fault, even after step() had refused
    the model; step() did not catch mat_texid at all (nor geom_type, dof_treeid,
    jnt_actuatorid: MuJoCo's own reference check leaves them out). Both check
    what they read first, naming the field; the env works again once it is set back."""
    proc = run_python(RENDER_CORRUPT.format(fields=INDEX_FIELDS), timeout=300)
    assert proc.returncode == 0, describe(proc)
    assert proc.stdout.count("refused") == len(INDEX_FIELDS), describe(proc)
