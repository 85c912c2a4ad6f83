"""Bad input is rejected with a precise exception and message, and leaves the world as it was.

After each rejected call the world is compared with an untouched twin that
went through the same valid calls: same state (``get_state``) and the same
result from a subsequent valid step. The cases that could take the interpreter
down run in a subprocess.
"""

from __future__ import annotations

import re
import subprocess
import tempfile
import sys
import textwrap

import gymnasium
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode
from numpy.testing import assert_array_equal

import joltgym_marl
from conftest import CORES, GYM_IDS, SINGLE_TASKS
from joltgym_marl.registry import TASKS

from joltgym_marl import AntCore, HalfCheetahCore, HumanoidCore, WorldPool
CHEETAH_PARAMS = ("xml_file, frame_skip, reset_noise_scale, exclude_current_positions_from_observation, "
                  "forward_reward_weight, ctrl_cost_weight, engine, jolt_substeps, jolt_velocity_iterations, "
                  "jolt_position_iterations")
N = 3  # worlds per pool


def lit(text: str) -> str:
    """A regex matching ``text`` literally (for ``pytest.raises(match=...)``)."""
    return re.escape(text)


# -- twins ---------------------------------------------------------------------------


def _warm_up_core(core) -> None:
    core.reset(seed=7)
    rng = np.random.default_rng(0)
    for _ in range(3):
        core.step(rng.uniform(core.action_low, core.action_high).astype(np.float32))


@pytest.fixture(params=SINGLE_TASKS)
def cores(request):
    """A core mid-episode and its untouched twin."""
    cls = CORES[request.param]
    core, twin = cls(), cls()
    _warm_up_core(core)
    _warm_up_core(twin)
    return core, twin


@pytest.fixture
def cheetahs():
    core, twin = HalfCheetahCore(), HalfCheetahCore()
    _warm_up_core(core)
    _warm_up_core(twin)
    return core, twin


def assert_core_untouched(core, twin) -> None:
    for got, expected in zip(core.get_state(), twin.get_state()):
        assert_array_equal(got, expected)
    assert_array_equal(core.get_obs(), twin.get_obs())
    assert core.elapsed_steps == twin.elapsed_steps
    action = np.linspace(-0.3, 0.3, core.act_dim).astype(np.float32)
    obs, reward, terminated, truncated, info = core.step(action)
    obs2, reward2, terminated2, truncated2, info2 = twin.step(action)
    assert_array_equal(obs, obs2)
    assert (reward, terminated, truncated) == (reward2, terminated2, truncated2)
    assert info.keys() == info2.keys()
    for key in info:
        assert_array_equal(info[key], info2[key])


POOL_BUFFERS = ["obs", "rewards", "terminations", "truncations", "infos", "reset_kind",
                "unstable", "elapsed_steps"]


def _warm_up_pool(pool) -> None:
    pool.reset_all(seed=7)
    rng = np.random.default_rng(0)
    for _ in range(3):
        pool.step_all(rng.uniform(pool.action_low, pool.action_high,
                                  size=(pool.num_envs, pool.act_dim)).astype(np.float32))


@pytest.fixture(params=["half_cheetah", "ant"])
def pools(request):
    """A pool mid-episode and its untouched twin."""
    pool = WorldPool(request.param, N, num_threads=2)
    twin = WorldPool(request.param, N, num_threads=2)
    _warm_up_pool(pool)
    _warm_up_pool(twin)
    yield pool, twin
    pool.close()
    twin.close()


@pytest.fixture
def cheetah_pools():
    pool = WorldPool("half_cheetah", N, num_threads=2)
    twin = WorldPool("half_cheetah", N, num_threads=2)
    _warm_up_pool(pool)
    _warm_up_pool(twin)
    yield pool, twin
    pool.close()
    twin.close()


def assert_pool_untouched(pool, twin) -> None:
    for i in range(pool.num_envs):
        for got, expected in zip(pool.get_state(i), twin.get_state(i)):
            assert_array_equal(got, expected)
    for name in POOL_BUFFERS:
        assert_array_equal(getattr(pool, name), getattr(twin, name), err_msg=name)
    actions = np.linspace(-0.3, 0.3, pool.num_envs * pool.act_dim, dtype=np.float32)
    actions = actions.reshape(pool.num_envs, pool.act_dim)
    pool.step_all(actions)
    twin.step_all(actions)
    for name in POOL_BUFFERS:
        assert_array_equal(getattr(pool, name), getattr(twin, name), err_msg=name)


def make_vec(n=N, **kwargs):
    return gymnasium.make_vec("joltgym_marl/HalfCheetah-v0", num_envs=n,
                              vectorization_mode="vector_entry_point", num_threads=2, **kwargs)


@pytest.fixture
def vec_envs():
    env, twin = make_vec(), make_vec()
    for e in (env, twin):
        e.reset(seed=3)
        e.step(np.full((N, 6), 0.2, np.float32))
    yield env, twin
    env.close()
    twin.close()


def assert_vec_untouched(env, twin) -> None:
    pool, pool2 = env.unwrapped.pool, twin.unwrapped.pool
    for i in range(N):
        for got, expected in zip(pool.get_state(i), pool2.get_state(i)):
            assert_array_equal(got, expected)
    action = np.full((N, 6), -0.1, np.float32)
    out, out2 = env.step(action), twin.step(action)
    for got, expected in zip(out[:4], out2[:4]):
        assert_array_equal(got, expected)


def run_python(code: str, *args: str, cwd=None) -> subprocess.CompletedProcess:
    """Runs ``code`` in a fresh interpreter with warnings as errors, as the test suite does.

    It runs outside the repository (``python -c`` puts its working directory
    first on sys.path, where the source tree's ``joltgym_marl`` would shadow the
    installed package and its compiled extension).
    """
    if cwd is None:
        cwd = tempfile.gettempdir()
    return subprocess.run([sys.executable, "-W", "error", "-c", textwrap.dedent(code), *args],
                          capture_output=True, text=True, timeout=120, cwd=cwd)


def assert_clean_exit(proc: subprocess.CompletedProcess) -> None:
    assert proc.returncode == 0, (
        f"exit code {proc.returncode} (negative: killed by signal {-proc.returncode})\n"
        f"stdout: {proc.stdout[-2000:]}\nstderr: {proc.stderr[-2000:]}"
    )


# -- actions: shape ------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(5,), (7,), (1, 6), (6, 1), (), (0,)])
def test_core_rejects_wrong_action_shape(cheetahs, shape):
    core, twin = cheetahs
    got = "(" + ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")"
    with pytest.raises(ValueError, match=lit(f"action should have shape (6,), got {got}")):
        core.step(np.zeros(shape, np.float32))
    assert_core_untouched(core, twin)


def test_core_wrong_action_size_for_each_task(cores):
    core, twin = cores
    d = core.act_dim
    with pytest.raises(ValueError, match=lit(f"action should have shape ({d},), got ({d + 1},)")):
        core.step(np.zeros(d + 1, np.float32))
    assert_core_untouched(core, twin)


@pytest.mark.parametrize("shape, expected", [
    ((N, 5), "(3, 6), got (3, 5)"),
    ((N + 1, 6), "(3, 6), got (4, 6)"),
    ((N - 1, 6), "(3, 6), got (2, 6)"),
    ((N, 1, 5), "(3, 1, 6), got (3, 1, 5)"),
    ((N, 2, 6), "(3, 1, 6), got (3, 2, 6)"),
    ((N * 6,), "(3, 1, 6), got (18,)"),
    ((6,), "(3, 1, 6), got (6,)"),
    ((1, N, 6), "(3, 1, 6), got (1, 3, 6)"),
])
def test_pool_rejects_wrong_action_shape(cheetah_pools, shape, expected):
    pool, twin = cheetah_pools
    with pytest.raises(ValueError, match=lit("actions should have shape " + expected)):
        pool.step_all(np.zeros(shape, np.float32))
    assert_pool_untouched(pool, twin)


def test_pool_wrong_action_size_for_each_task(pools):
    pool, twin = pools
    d = pool.act_dim
    with pytest.raises(ValueError, match=lit(f"actions should have shape ({N}, {d}), got ({N}, {d - 1})")):
        pool.step_all(np.zeros((N, d - 1), np.float32))
    assert_pool_untouched(pool, twin)


def test_vector_env_rejects_wrong_action_shape(vec_envs):
    env, twin = vec_envs
    with pytest.raises(ValueError, match=lit("actions should have shape (3, 6), got (3, 5)")):
        env.step(np.zeros((N, 5), np.float32))
    with pytest.raises(ValueError, match=lit("actions should have shape (3, 1, 6), got (6,)")):
        env.step(np.zeros(6, np.float32))
    assert_vec_untouched(env, twin)


def test_gym_env_rejects_wrong_action_shape():
    env = gymnasium.make("joltgym_marl/HalfCheetah-v0")
    try:
        env.reset(seed=0)
        state = env.unwrapped.get_state()
        with pytest.raises(ValueError, match=lit("action should have shape (6,), got (5,)")):
            env.step(np.zeros(5, np.float32))
        for got, expected in zip(env.unwrapped.get_state(), state):
            assert_array_equal(got, expected)
        env.step(np.zeros(6, np.float32))
    finally:
        env.close()


# -- actions: dtype ------------------------------------------------------------------

BAD_DTYPES = [
    (np.zeros(6, np.int64), "int64"),
    (np.zeros(6, np.int32), "int32"),
    (np.zeros(6, np.uint8), "uint8"),
    (np.zeros(6, bool), "bool"),
    (np.zeros(6, np.complex128), "complex128"),
    (np.zeros(6, np.complex64), "complex64"),
    (np.zeros(6, object), "object"),
    (np.array([0.0] * 6, dtype=object), "object"),
    ("abcdef", "<U6"),
    (np.array(list("abcdef")), "<U1"),
    (np.zeros(6, "S1"), "|S1"),
    ([0, 0, 0, 0, 0, 0], "int64"),
    ([True] * 6, "bool"),
    (None, "object"),
    ({"a": 1}, "object"),
]


@pytest.mark.parametrize("action, dtype", BAD_DTYPES, ids=[d for _, d in BAD_DTYPES])
def test_core_rejects_non_float_dtypes(cheetahs, action, dtype):
    core, twin = cheetahs
    message = f"action should have a floating-point dtype (float32 or float64), got {dtype}"
    with pytest.raises(TypeError, match=lit(message) + "$"):
        core.step(action)
    assert_core_untouched(core, twin)


@pytest.mark.parametrize("dtype", [np.int64, np.int32, bool, np.complex128, object, "U3"])
def test_pool_rejects_non_float_dtypes(cheetah_pools, dtype):
    pool, twin = cheetah_pools
    with pytest.raises(TypeError, match=lit("actions should have a floating-point dtype (float32 or "
                                            f"float64), got {np.dtype(dtype)}")):
        pool.step_all(np.zeros((N, 6), dtype))
    assert_pool_untouched(pool, twin)


def test_vector_env_rejects_non_float_dtypes(vec_envs):
    env, twin = vec_envs
    with pytest.raises(TypeError, match="floating-point dtype.*got int64"):
        env.step(np.zeros((N, 6), np.int64))
    assert_vec_untouched(env, twin)


def test_ragged_actions_are_rejected(cheetahs, cheetah_pools):
    core, twin = cheetahs
    with pytest.raises(TypeError, match=lit("action should be a float32 array of shape (6,), got list")):
        core.step([[0.0] * 6, [0.0] * 5])
    assert_core_untouched(core, twin)
    pool, ptwin = cheetah_pools
    with pytest.raises(TypeError, match=lit("actions should be a float32 array of shape (3, 1, 6), got list")):
        pool.step_all([[0.0] * 6, [0.0] * 6, [0.0] * 5])
    assert_pool_untouched(pool, ptwin)


@pytest.mark.parametrize("make", [
    lambda a: a.astype(np.float64),
    lambda a: a.astype(np.float16),
    lambda a: a.astype(">f4"),  # big-endian
    lambda a: np.repeat(a, 2)[::2],  # strided view
    lambda a: a[::-1].copy()[::-1],  # negative stride
    lambda a: a.tolist(),  # Python floats
    lambda a: np.require(a, requirements=["F"]),
    lambda a: _read_only(a),
], ids=["float64", "float16", "big-endian", "strided", "reversed", "list", "fortran", "read-only"])
def test_core_accepts_any_float_array_layout(cheetahs, make):
    core, twin = cheetahs
    action = np.array([0.5, -0.25, 0.125, -1.0, 1.0, 0.0], np.float32)  # exact in float16
    out = core.step(make(action))
    expected = twin.step(action)
    assert_array_equal(out[0], expected[0])
    assert out[1:4] == expected[1:4]


def _read_only(a):
    a = a.copy()
    a.flags.writeable = False
    return a


def test_pool_accepts_both_action_ranks_and_layouts(cheetah_pools):
    pool, twin = cheetah_pools
    actions = np.linspace(-1, 1, N * 6, dtype=np.float32).reshape(N, 6)
    for variant in (actions.reshape(N, 1, 6), actions.astype(np.float64),
                    np.asfortranarray(actions), actions.T.copy().T, actions.tolist()):
        pool.step_all(variant)
        twin.step_all(actions)
        for name in POOL_BUFFERS:
            assert_array_equal(getattr(pool, name), getattr(twin, name), err_msg=name)


# -- actions: non-finite values ----------------------------------------------------------


@pytest.mark.parametrize("value, shown", [(np.nan, "nan"), (np.inf, "inf"), (-np.inf, "-inf")])
@pytest.mark.parametrize("index", [0, 3, 5])
def test_core_rejects_non_finite_actions(cheetahs, value, shown, index):
    core, twin = cheetahs
    action = np.full(6, 0.1, np.float32)
    action[index] = value
    with pytest.raises(ValueError, match=lit(f"action should be finite, got {shown} at index ({index},)") + "$"):
        core.step(action)
    assert_core_untouched(core, twin)


def test_core_reports_the_first_non_finite_index(cheetahs):
    core, twin = cheetahs
    action = np.float32([0, 0, np.inf, np.nan, 0, 0])
    with pytest.raises(ValueError, match=lit("got inf at index (2,)")):
        core.step(action)
    assert_core_untouched(core, twin)


@pytest.mark.parametrize("value, shown", [(np.nan, "nan"), (np.inf, "inf"), (-np.inf, "-inf")])
@pytest.mark.parametrize("where", [(0, 0), (1, 3), (2, 5)])
def test_pool_rejects_non_finite_actions(cheetah_pools, value, shown, where):
    pool, twin = cheetah_pools
    i, j = where
    actions = np.full((N, 6), 0.1, np.float32)
    actions[i, j] = value
    with pytest.raises(ValueError, match=lit(f"actions should be finite, got {shown} at index ({i}, {j})")):
        pool.step_all(actions)
    with pytest.raises(ValueError, match=lit(f"actions should be finite, got {shown} at index ({i}, 0, {j})")):
        pool.step_all(actions.reshape(N, 1, 6))
    assert_pool_untouched(pool, twin)


def test_vector_env_rejects_non_finite_actions(vec_envs):
    env, twin = vec_envs
    actions = np.zeros((N, 6), np.float32)
    actions[2, 1] = np.nan
    with pytest.raises(ValueError, match=lit("actions should be finite, got nan at index (2, 1)")):
        env.step(actions)
    assert_vec_untouched(env, twin)


@pytest.mark.parametrize("value, shown", [(1e39, "1e+39"), (-1e300, "-1e+300"),
                                          (np.finfo(np.float64).max, "1.79769e+308")])
def test_float64_actions_beyond_float32_range(cheetahs, cheetah_pools, value, shown):
    # No NumPy cast (so no overflow RuntimeWarning): the value is range-checked
    # as float64 and reported as given.
    core, twin = cheetahs
    action = np.zeros(6, np.float64)
    action[4] = value
    with pytest.raises(ValueError, match=lit(f"action should be finite, got {shown} at index (4,) "
                                             "(out of float32 range)") + "$"):
        core.step(action)
    with pytest.raises(ValueError, match=lit(f"action should be finite, got {shown} at index (4,) "
                                             "(out of float32 range)") + "$"):
        core.step(action.tolist())
    assert_core_untouched(core, twin)
    pool, ptwin = cheetah_pools
    actions = np.zeros((N, 6), np.float64)
    actions[1, 2] = value
    with pytest.raises(ValueError, match=lit(f"actions should be finite, got {shown} at index (1, 2) "
                                             "(out of float32 range)") + "$"):
        pool.step_all(actions)
    with pytest.raises(ValueError, match=lit(f"actions should be finite, got {shown} at index (1, 0, 2) "
                                             "(out of float32 range)") + "$"):
        pool.step_all(actions.reshape(N, 1, 6))
    assert_pool_untouched(pool, ptwin)


def test_float32_max_as_float64_is_in_range(cheetahs):
    core, twin = cheetahs
    action = np.zeros(6, np.float64)
    action[0] = np.finfo(np.float32).max
    obs, *_ = core.step(action)
    assert np.isfinite(obs).all()


@pytest.mark.parametrize("value, shown", [(np.inf, "inf"), (-np.inf, "-inf"), (np.nan, "nan")])
def test_float64_infinity_is_not_called_out_of_range(cheetahs, cheetah_pools, value, shown):
    core, twin = cheetahs
    action = np.zeros(6, np.float64)
    action[1] = value
    with pytest.raises(ValueError, match=lit(f"action should be finite, got {shown} at index (1,)") + "$"):
        core.step(action)
    assert_core_untouched(core, twin)
    pool, ptwin = cheetah_pools
    actions = np.zeros((N, 6), np.float64)
    actions[2, 4] = value
    with pytest.raises(ValueError, match=lit(f"actions should be finite, got {shown} at index (2, 4)") + "$"):
        pool.step_all(actions)
    assert_pool_untouched(pool, ptwin)


@pytest.mark.parametrize("target", ["core", "pool"])
def test_float64_overflow_with_warnings_as_errors_does_not_crash(target):
    proc = run_python("""
        import sys
        import numpy as np
        import joltgym_marl as jm
        if sys.argv[1] == "core":
            env = jm.HalfCheetahCore()
            env.reset(seed=0)
            call = lambda: env.step(np.array([0, 0, 1e39, 0, 0, 0], dtype=np.float64))
        else:
            env = jm.WorldPool("half_cheetah", 2, num_threads=2)
            env.reset_all(seed=0)
            call = lambda: env.step_all(np.full((2, 6), 1e39))
        try:
            call()
        except ValueError as e:
            print("rejected:", e)
        else:
            raise SystemExit("accepted an out-of-range action")
    """, target)
    assert_clean_exit(proc)
    assert "rejected:" in proc.stdout
    assert "should be finite, got 1e+39 at index" in proc.stdout
    assert "(out of float32 range)" in proc.stdout


# -- keyword arguments ---------------------------------------------------------------------


def test_an_unknown_keyword_with_a_nul_in_its_name_is_shown_whole():
    # The message was cut at the NUL ("unexpected keyword argument 'a"): the rest of the
    # name, the closing quote and the list of allowed names were lost.
    message = lit(f"WorldPool('hopper') got an unexpected keyword argument 'a\\x00b'; allowed: ")
    with pytest.raises(TypeError, match=message + r"xml_file, frame_skip"):
        WorldPool("hopper", 1, **{"a\0b": 1})


def test_unknown_keyword_lists_the_allowed_names():
    message = lit(f"half_cheetah got an unexpected keyword argument 'foo'; allowed: {CHEETAH_PARAMS}")
    with pytest.raises(TypeError, match=message + "$"):
        HalfCheetahCore(foo=1)
    with pytest.raises(TypeError, match=message):
        gymnasium.make("joltgym_marl/HalfCheetah-v0", foo=1)
    message = lit(f"WorldPool('half_cheetah') got an unexpected keyword argument 'foo'; allowed: {CHEETAH_PARAMS}")
    with pytest.raises(TypeError, match=message + "$"):
        WorldPool("half_cheetah", 2, foo=1)
    with pytest.raises(TypeError, match=message):
        make_vec(2, foo=1)
    # Other tasks list their own names.
    with pytest.raises(TypeError, match=r"ant got an unexpected keyword argument 'gear'; allowed: .*main_body"):
        AntCore(gear=3)
    with pytest.raises(TypeError, match=r"unexpected keyword argument 'main_body'; allowed: .*"
                                        r"include_cinert_in_observation"):
        HumanoidCore(main_body=1)
    # Keywords of another task are unknown too.
    with pytest.raises(TypeError, match="unexpected keyword argument 'healthy_reward'"):
        WorldPool("half_cheetah", 2, healthy_reward=1.0)


BAD_KWARGS = [
    ("half_cheetah", {"frame_skip": 1.5}, TypeError, "frame_skip should be an int, got float 1.5"),
    ("half_cheetah", {"frame_skip": True}, TypeError, "frame_skip should be an int, got bool True"),
    ("half_cheetah", {"frame_skip": "5"}, TypeError, "frame_skip should be an int, got str '5'"),
    ("half_cheetah", {"frame_skip": 0}, ValueError, "frame_skip should be in [1, 1000], got 0"),
    ("half_cheetah", {"frame_skip": -3}, ValueError, "frame_skip should be in [1, 1000], got -3"),
    ("half_cheetah", {"ctrl_cost_weight": "x"}, TypeError, "ctrl_cost_weight should be a real number, got str 'x'"),
    ("half_cheetah", {"ctrl_cost_weight": None}, TypeError,
     "ctrl_cost_weight should be a real number, got NoneType None"),
    ("half_cheetah", {"ctrl_cost_weight": True}, TypeError, "ctrl_cost_weight should be a real number, got bool True"),
    ("half_cheetah", {"ctrl_cost_weight": float("nan")}, ValueError, "ctrl_cost_weight should be a finite number, got nan"),
    ("half_cheetah", {"forward_reward_weight": float("inf")}, ValueError,
     "forward_reward_weight should be a finite number, got inf"),
    ("half_cheetah", {"reset_noise_scale": -0.1}, ValueError, "reset_noise_scale should be >= 0"),
    ("half_cheetah", {"exclude_current_positions_from_observation": 1}, TypeError,
     "exclude_current_positions_from_observation should be a bool, got int 1"),
    ("half_cheetah", {"xml_file": 3}, TypeError, "xml_file should be a str or path, got int 3"),
    # A name, not a file: no "or path" (it used to say so).
    ("half_cheetah", {"engine": 3}, TypeError, "engine should be a str, got int 3"),
    ("humanoid", {"engine": None}, TypeError, "engine should be a str, got NoneType None"),
    ("humanoid", {"healthy_z_range": (2, 1)}, ValueError, "healthy_z_range should have low <= high, got (2, 1)"),
    ("humanoid", {"healthy_z_range": (1,)}, TypeError, "healthy_z_range should be a (low, high) pair of numbers, got (1,)"),
    ("humanoid", {"healthy_z_range": "ab"}, TypeError, "healthy_z_range should be a (low, high) pair of numbers, got 'ab'"),
    ("humanoid", {"healthy_z_range": (1, "2")}, TypeError, "healthy_z_range[1] should be a real number, got str '2'"),
    ("humanoid", {"healthy_z_range": (float("nan"), 2)}, ValueError,
     "healthy_z_range[0] should be a finite number, got nan"),
    ("humanoid", {"terminate_when_unhealthy": 1}, TypeError, "terminate_when_unhealthy should be a bool, got int 1"),
    ("humanoid", {"terminate_when_unhealthy": "yes"}, TypeError,
     "terminate_when_unhealthy should be a bool, got str 'yes'"),
    ("ant", {"terminate_when_unhealthy": None}, TypeError, "terminate_when_unhealthy should be a bool, got NoneType None"),
    ("ant", {"contact_force_range": (1, -1)}, ValueError, "contact_force_range should have low <= high, got (1, -1)"),
    ("ant", {"main_body": 1.5}, TypeError, "main_body should be a body index (int) or name (str), got float 1.5"),
    ("ant", {"main_body": True}, TypeError, "main_body should be a body index (int) or name (str), got bool True"),
    ("ant", {"main_body": 99}, ValueError, "main_body should be a body index in [0, 14) or a body name, got 99"),
    ("ant", {"main_body": -1}, ValueError, "main_body should be a body index in [0, 14) or a body name, got -1"),
    ("ant", {"main_body": "nope"}, ValueError, "model has no body named 'nope'"),
    # Real values are bounded (params.h: |x| <= 1e6; a range's low end may be -inf, its high end +inf).
    ("half_cheetah", {"ctrl_cost_weight": 1e308}, ValueError,
     "ctrl_cost_weight should be in [-1e+06, 1e+06], got 1e+308"),
    ("half_cheetah", {"forward_reward_weight": -1000001}, ValueError,
     "forward_reward_weight should be in [-1e+06, 1e+06], got -1000001"),
    ("ant", {"reset_noise_scale": 1e308}, ValueError, "reset_noise_scale should be in [-1e+06, 1e+06], got 1e+308"),
    ("hopper", {"healthy_z_range": (0.7, 1e7)}, ValueError,
     "healthy_z_range[1] should be in [-1e+06, 1e+06] or inf, got 10000000.0"),
    ("hopper", {"healthy_z_range": (0.7, float("-inf"))}, ValueError,
     "healthy_z_range[1] should be in [-1e+06, 1e+06] or inf, got -inf"),
    ("humanoid", {"healthy_z_range": (float("inf"), float("inf"))}, ValueError,
     "healthy_z_range[0] should be -inf or in [-1e+06, 1e+06], got inf"),
    ("ant", {"contact_force_range": (-1e308, 1.0)}, ValueError,
     "contact_force_range[0] should be -inf or in [-1e+06, 1e+06], got -1e+308"),
]


@pytest.mark.parametrize("task, kwargs, exc, message", BAD_KWARGS,
                         ids=[f"{t}-{next(iter(k))}={k[next(iter(k))]!r}" for t, k, _, _ in BAD_KWARGS])
def test_bad_keyword_values(task, kwargs, exc, message):
    with pytest.raises(exc, match=lit(message)):
        CORES[task](**kwargs)
    with pytest.raises(exc, match=lit(message)):
        WorldPool(task, 2, num_threads=2, **kwargs)
    with pytest.raises(exc, match=lit(message)):
        gymnasium.make(GYM_IDS[task], **kwargs)


def test_bad_keyword_values_in_the_vector_env():
    with pytest.raises(TypeError, match=lit("frame_skip should be an int, got float 1.5")):
        make_vec(2, frame_skip=1.5)
    with pytest.raises(ValueError, match=lit("frame_skip should be in [1, 1000], got 0")):
        make_vec(2, frame_skip=0)


def test_good_keyword_values_are_accepted():
    # Sanity for the table above: the same names with good values work, and
    # a body can be named or indexed.
    assert AntCore(main_body="torso").obs_dim == AntCore(main_body=1).obs_dim
    HumanoidCore(healthy_z_range=(1.0, 1.0), terminate_when_unhealthy=False)
    HalfCheetahCore(frame_skip=np.int64(2), ctrl_cost_weight=np.float32(0.5))
    HalfCheetahCore(exclude_current_positions_from_observation=np.bool_(False))


# Gymnasium's own infinite defaults stay accepted.
INFINITE_RANGES = [("hopper", "healthy_z_range", (0.7, np.inf)), ("humanoid", "contact_cost_range", (-np.inf, 10.0)),
                   ("humanoid_standup", "impact_cost_range", (-np.inf, 10.0))]


@pytest.mark.parametrize("task, name, value", INFINITE_RANGES)
def test_infinite_range_ends_are_accepted(task, name, value):
    assert TASKS[task].defaults()[name] == value
    CORES[task](**{name: value})
    CORES[task](**{name: (-np.inf, np.inf)})


@pytest.mark.parametrize("task", list(TASKS))
def test_every_default_is_within_its_bounds(task):
    """Every parameter given explicitly at its default is accepted (no task declares a
    default outside its own bounds)."""
    spec = TASKS[task]
    if spec.is_game:
        joltgym_marl.MultiAgentEnv(task, **spec.defaults())
    else:
        CORES[task](**spec.defaults())


MAX_REAL_PARAM = 1e6  # params.h: kMaxRealParam


def _extreme_values(kind):
    """±1e308 and the largest accepted magnitudes, and for ranges their pairs with infinities."""
    big, top, inf = 1e308, MAX_REAL_PARAM, np.inf
    if kind in ("float", "optional_float"):
        return [big, -big, top, -top, 0.0]
    return [(-big, big), (big, big), (-big, -big), (-big, 0.0), (0.0, big), (-top, top), (top, top),
            (-top, -top), (-inf, inf), (-inf, -top), (top, inf), (inf, inf), (-inf, -inf)]


def _finite_rollout(spec, kwargs, steps=20):
    """Resets, and takes `steps` random steps (resetting when an episode ends); True when
    every observation and reward was finite."""
    rng = np.random.default_rng(0)
    if spec.is_game:
        env = joltgym_marl.MultiAgentEnv(spec.name, **kwargs)
        outputs = [env.reset(seed=0)[0]]
        for _ in range(steps):
            actions = rng.uniform(env.action_low, env.action_high, (env.num_agents, env.act_dim))
            obs, rewards, terminations, truncations, _, _ = env.step(actions.astype(np.float32))
            outputs += [obs, rewards]
            if terminations.any() or truncations.any():
                outputs.append(env.reset()[0])
    else:
        env = CORES[spec.name](**kwargs)
        outputs = [env.reset(seed=0)[0]]
        for _ in range(steps):
            obs, reward, terminated, truncated, _ = env.step(
                rng.uniform(env.action_low, env.action_high).astype(np.float32))
            outputs += [obs, np.float64(reward)]
            if terminated or truncated:
                outputs.append(env.reset()[0])
    return all(np.isfinite(x).all() for x in outputs)


REAL_PARAMS = [pytest.param(spec, p, id=f"{spec.name}-{p.name}") for spec in TASKS.values()
               for p in spec.params if p.kind in ("float", "optional_float", "range")]


@pytest.mark.parametrize("spec, param", REAL_PARAMS)
def test_extreme_real_keywords_are_rejected_or_give_finite_results(spec, param):
    """Every real-valued keyword of every task at ±1e308, at the documented bound and
    with infinite range ends: either a ValueError naming the parameter (and the value),
    or an env whose reset and 20 random steps give finite observations and rewards.
    (±1e308 weights, scales and ranges used to be accepted and give inf/NaN.)"""
    accepted = []
    for value in _extreme_values(param.kind):
        try:
            finite = _finite_rollout(spec, {param.name: value})
        except ValueError as e:
            # (Some tasks' own checks name two parameters: "lane_spacing and start_spacing should be > 0".)
            assert param.name in str(e), e
            continue
        assert finite, f"{spec.name}({param.name}={value!r}) gave a non-finite observation or reward"
        accepted.append(value)
    assert not any(v in accepted for v in ([1e308, -1e308] if param.kind != "range" else
                                           [(-1e308, 1e308), (1e308, 1e308), (-1e308, -1e308)]))


@pytest.mark.parametrize("spec", [pytest.param(s, id=s.name) for s in TASKS.values() if s.is_game])
def test_episode_options_have_the_keyword_bounds(spec):
    world = joltgym_marl.MultiAgentEnv(spec.name)
    world.reset(seed=0)
    for option in world.episode_options:
        for value, shown in [(1e308, "1e+308"), (-2e6, "-2000000.0")]:
            with pytest.raises(ValueError, match=lit(f"option '{option}' should be in [-1e+06, 1e+06], "
                                                     f"got {shown}") + "$"):
                world.reset(seed=0, options={option: value})
        world.reset(seed=0, options={option: MAX_REAL_PARAM})


# -- pool construction -----------------------------------------------------------------------


@pytest.mark.parametrize("num_envs, exc, message", [
    (0, ValueError, "num_envs should be in [1, 1048576], got 0"),
    (-1, ValueError, "num_envs should be in [1, 1048576], got -1"),
    (1048577, ValueError, "num_envs should be in [1, 1048576], got 1048577"),
    (2**32 + 3, ValueError, "num_envs should be in [1, 1048576], got 4294967299"),
    (-(2**70), ValueError, "num_envs should be in [1, 1048576], got -1180591620717411303424"),
    (2.5, TypeError, "num_envs should be an int, got float 2.5"),
    (None, TypeError, "num_envs should be an int, got NoneType None"),
    (True, TypeError, "num_envs should be an int, got bool True"),
    ("2", TypeError, "num_envs should be an int, got str '2'"),
])
def test_bad_num_envs(num_envs, exc, message):
    with pytest.raises(exc, match=lit(message)):
        WorldPool("half_cheetah", num_envs)
    with pytest.raises(exc, match=lit(message)):
        make_vec(num_envs)


@pytest.mark.parametrize("num_threads, exc, message", [
    (0, ValueError, "num_threads should be >= 1, got 0"),
    (-2, ValueError, "num_threads should be >= 1, got -2"),
    (1.5, TypeError, "num_threads should be an int, got float 1.5"),
    ("2", TypeError, "num_threads should be an int, got str '2'"),
])
def test_bad_num_threads(num_threads, exc, message):
    with pytest.raises(exc, match=lit(message)):
        WorldPool("half_cheetah", 2, num_threads=num_threads)


@pytest.mark.parametrize("value, exc, message", [
    (-1, ValueError, "max_episode_steps should be >= 0, got -1"),
    (1.5, TypeError, "max_episode_steps should be an int, got float 1.5"),
    ("10", TypeError, "max_episode_steps should be an int, got str '10'"),
])
def test_bad_max_episode_steps(value, exc, message):
    with pytest.raises(exc, match=lit(message)):
        WorldPool("half_cheetah", 2, max_episode_steps=value)
    with pytest.raises(exc, match=lit(message)):
        HalfCheetahCore(max_episode_steps=value)


def test_bad_autoreset_mode_and_task():
    with pytest.raises(ValueError, match=lit("autoreset_mode should be 'next_step' or 'same_step', got 'bogus'")):
        WorldPool("half_cheetah", 2, autoreset_mode="bogus")
    with pytest.raises(ValueError, match=lit("autoreset_mode should be AutoresetMode.NEXT_STEP or "
                                             "AutoresetMode.SAME_STEP (or 'next_step', 'same_step'), got 'bogus'")):
        make_vec(2, autoreset_mode="bogus")
    with pytest.raises(ValueError, match=lit("got <AutoresetMode.DISABLED")):
        make_vec(2, autoreset_mode=AutoresetMode.DISABLED)
    with pytest.raises(TypeError):
        WorldPool("half_cheetah", 2, autoreset_mode=1)
    with pytest.raises(ValueError, match=lit("unknown task 'nope'; expected one of: ") + ".*'ant'.*'half_cheetah'"):
        WorldPool("nope", 2)
    with pytest.raises(ValueError, match=lit("unknown task 'nope'")):
        joltgym_marl.NativeVectorEnv("nope", 2)


def test_integer_arguments_beyond_int_range_are_rejected():
    # Compared as Python ints: no silent truncation (2**32 + 3 worlds becoming 3,
    # a 2**32 step limit becoming 0) and no pybind11 cast error.
    with pytest.raises(ValueError, match=lit("num_envs should be in [1, 1048576], got 4294967299")):
        pool = WorldPool("half_cheetah", 2**32 + 3, num_threads=1)
        pool.close()
    # Only the type and the echoed value are pinned for these: the bound in the
    # message is the ">= N" form, see the report on out-of-range messages.
    for value in (2**31, 2**32, 2**70):
        with pytest.raises(ValueError, match=lit("max_episode_steps should be ") + ".*" + lit(f", got {value}")):
            pool = WorldPool("half_cheetah", 1, num_threads=1, max_episode_steps=value)
            pool.close()
        with pytest.raises(ValueError, match=lit("max_episode_steps should be ") + ".*" + lit(f", got {value}")):
            HalfCheetahCore(max_episode_steps=value)
        with pytest.raises(ValueError, match=lit("num_threads should be ") + ".*" + lit(f", got {value}")):
            pool = WorldPool("half_cheetah", 1, num_threads=value)
            pool.close()
        with pytest.raises(ValueError, match=lit("frame_skip should be ") + ".*" + lit(f", got {value}")):
            HalfCheetahCore(frame_skip=value)
        with pytest.raises(ValueError, match=lit("frame_skip should be ") + ".*" + lit(f", got {value}")):
            WorldPool("half_cheetah", 1, num_threads=1, frame_skip=value)
    # The largest C int is still a valid step limit.
    assert HalfCheetahCore(max_episode_steps=2**31 - 1).max_episode_steps == 2**31 - 1
    with WorldPool("half_cheetah", 1, num_threads=1, max_episode_steps=2**31 - 1) as pool:
        pool.reset_all(seed=0)
        pool.step_all(np.zeros((1, 6), np.float32))
        assert not pool.truncations.any()


# -- indices ---------------------------------------------------------------------------------


@pytest.mark.parametrize("index, exc, message", [
    (-1, IndexError, "index should be in [0, 3), got -1"),
    (N, IndexError, "index should be in [0, 3), got 3"),
    (10**6, IndexError, "index should be in [0, 3), got 1000000"),
    (2**32, IndexError, "index should be in [0, 3), got 4294967296"),
    (2**32 + 1, IndexError, "index should be in [0, 3), got 4294967297"),
    (2**70, IndexError, "index should be in [0, 3), got 1180591620717411303424"),
    (-(2**70), IndexError, "index should be in [0, 3), got -1180591620717411303424"),
    (1.5, TypeError, "index should be an int in [0, 3), got 1.5"),
    ("0", TypeError, "index should be an int in [0, 3), got '0'"),
    (None, TypeError, "index should be an int in [0, 3), got None"),
    (np.float64(1.0), TypeError, "index should be an int in [0, 3), got np.float64(1.0)"),
    (np.True_, TypeError, "index should be an int in [0, 3), got np.True_"),
])
def test_bad_world_index(cheetah_pools, index, exc, message):
    pool, twin = cheetah_pools
    qpos, qvel = pool.get_state(0)
    for call in (lambda: pool.reset_one(index), lambda: pool.reset_one(index, seed=1),
                 lambda: pool.get_state(index), lambda: pool.set_state(index, qpos, qvel)):
        with pytest.raises(exc, match=lit(message)):
            call()
    assert_pool_untouched(pool, twin)


@pytest.mark.parametrize("index", [True, False])
def test_bool_world_index_is_a_type_error(cheetah_pools, index):
    pool, twin = cheetah_pools
    qpos, qvel = pool.get_state(0)
    for call in (lambda: pool.reset_one(index), lambda: pool.reset_one(index, seed=1),
                 lambda: pool.get_state(index), lambda: pool.set_state(index, qpos, qvel)):
        with pytest.raises(TypeError, match=lit(f"index should be an int in [0, 3), got {index}") + "$"):
            call()
    assert_pool_untouched(pool, twin)


def test_numpy_integer_index_is_accepted(cheetah_pools):
    pool, twin = cheetah_pools
    assert_array_equal(pool.reset_one(np.int64(2), seed=np.uint32(4)), twin.reset_one(2, seed=4))


# -- seeds -----------------------------------------------------------------------------------

BAD_SEEDS = [
    (-1, ValueError, "seed should be a non-negative int, got -1"),
    (np.int64(-2), ValueError, "seed should be a non-negative int, got np.int64(-2)"),
    (1.5, TypeError, "seed should be an int or None, got 1.5"),
    (np.float64(2.0), TypeError, "seed should be an int or None, got np.float64(2.0)"),
    ("3", TypeError, "seed should be an int or None, got '3'"),
    (True, TypeError, "seed should be an int or None, got True"),
    ([1], TypeError, "seed should be an int or None, got [1]"),
]


@pytest.mark.parametrize("seed, exc, message", BAD_SEEDS, ids=[repr(s) for s, _, _ in BAD_SEEDS])
def test_bad_seeds_for_a_core(cheetahs, seed, exc, message):
    core, twin = cheetahs
    with pytest.raises(exc, match=lit(message)):
        core.reset(seed=seed)
    assert_core_untouched(core, twin)


@pytest.mark.parametrize("seed, exc, message", BAD_SEEDS, ids=[repr(s) for s, _, _ in BAD_SEEDS])
def test_bad_seeds_for_a_pool(cheetah_pools, seed, exc, message):
    pool, twin = cheetah_pools
    with pytest.raises(exc, match=lit(message)):
        pool.reset_all(seed=seed)
    with pytest.raises(exc, match=lit(message)):
        pool.reset_one(1, seed=seed)
    assert_pool_untouched(pool, twin)


def test_bad_seeds_for_gymnasium_envs(vec_envs):
    env, twin = vec_envs
    with pytest.raises(gymnasium.error.Error, match="Seed must be greater or equal to zero"):
        env.reset(seed=-1)
    assert_vec_untouched(env, twin)
    single = gymnasium.make("joltgym_marl/HalfCheetah-v0")
    try:
        with pytest.raises(gymnasium.error.Error, match="Seed must be a python integer"):
            single.reset(seed=1.5)
    finally:
        single.close()


def test_large_seeds_are_accepted():
    core = HalfCheetahCore()
    # Any non-negative int, every bit of it (as NumPy's SeedSequence takes it):
    # 2**64 + 5 is not 5.
    assert not np.array_equal(core.reset(seed=2**64 + 5)[0], core.reset(seed=5)[0])
    assert_array_equal(core.reset(seed=np.uint64(2**64 - 1))[0], core.reset(seed=2**64 - 1)[0])
    core.reset(seed=2**1000 + 1)


@pytest.mark.parametrize("seeds, exc, message", [
    ([0, 1.5, 2], TypeError, "each seed should be an int or None, got float 1.5"),
    ([0, 1, "3"], TypeError, "each seed should be an int or None, got str '3'"),
    ([0, True, 2], TypeError, "each seed should be an int or None, got bool True"),
    ([0, 1, np.float64(1.0)], TypeError, "each seed should be an int or None, got float64 np.float64(1.0)"),
    ([0, -1, 2], ValueError, "each seed should be a non-negative int, got -1"),
    ([0, 1, -(2**70)], ValueError, "each seed should be a non-negative int, got -1180591620717411303424"),
])
def test_vector_env_seed_list_entries_are_validated(vec_envs, seeds, exc, message):
    # Every entry is checked before any world resets (a bad last entry leaves
    # the first worlds as they were).
    env, twin = vec_envs
    with pytest.raises(exc, match=lit(message) + "$"):
        env.reset(seed=seeds)
    with pytest.raises(exc, match=lit(message) + "$"):
        env.reset(seed=tuple(seeds))
    assert_vec_untouched(env, twin)


# -- model files -------------------------------------------------------------------------------


def test_missing_model_file():
    message = lit("MJCF file '/nonexistent/x.xml' does not exist (expected a readable model file)")
    with pytest.raises(FileNotFoundError, match=message):
        HalfCheetahCore(xml_file="/nonexistent/x.xml")
    with pytest.raises(FileNotFoundError, match=message):
        WorldPool("ant", 2, xml_file="/nonexistent/x.xml")
    with pytest.raises(FileNotFoundError, match=message):
        gymnasium.make("joltgym_marl/Humanoid-v0", xml_file="/nonexistent/x.xml")
    with pytest.raises(FileNotFoundError, match=message):
        make_vec(2, xml_file="/nonexistent/x.xml")


def test_other_unreadable_model_paths(tmp_path):
    # A bare name is looked up in the bundled assets.
    missing = joltgym_marl.ASSET_DIR / "nonexistent.xml"
    with pytest.raises(FileNotFoundError, match=lit(f"MJCF file '{missing}' does not exist")):
        HalfCheetahCore(xml_file="nonexistent.xml")
    with pytest.raises(ValueError, match=lit(f"MJCF file '{tmp_path}' is a directory (expected a readable model file)")):
        HalfCheetahCore(xml_file=tmp_path)  # a directory, given as a path object
    with pytest.raises(FileNotFoundError, match=lit("MJCF file '' does not exist")):
        HalfCheetahCore(xml_file="")


@pytest.mark.parametrize("text, mujoco_message", [
    ("this is not xml at all", "XML parse error"),
    ("<mujoco><worldbody><body></mujoco>", "XML_ERROR_MISMATCHED_ELEMENT"),
    ("<mujoco><bogus/></mujoco>", "Schema violation: unrecognized element"),
    ("", "empty file"),
])
def test_malformed_model_file(tmp_path, text, mujoco_message):
    path = tmp_path / "bad.xml"
    path.write_text(text)
    prefix = lit(f"MJCF file '{path}' could not be compiled: ")
    with pytest.raises(ValueError, match=prefix + r"(.|\n)*" + lit(mujoco_message)):
        HalfCheetahCore(xml_file=str(path))
    with pytest.raises(ValueError, match=prefix):
        WorldPool("humanoid", 2, xml_file=str(path))
    with pytest.raises(ValueError, match=prefix):
        gymnasium.make("joltgym_marl/Ant-v0", xml_file=str(path))


def test_model_missing_the_named_body():
    with pytest.raises(ValueError, match=lit("model has no body named 'nope'")):
        AntCore(main_body="nope")
    with pytest.raises(ValueError, match=lit("model has no body named 'nope'")):
        WorldPool("ant", 2, main_body="nope")


def test_model_without_bodies_is_rejected(tmp_path):
    path = tmp_path / "empty.xml"
    path.write_text("<mujoco/>")
    for cls in CORES.values():
        with pytest.raises(ValueError):
            cls(xml_file=str(path))


HINGE_ONLY = ("<mujoco><worldbody><body><joint name='j' type='hinge'/><geom size='1'/></body></worldbody>"
              "<actuator><motor joint='j'/></actuator></mujoco>")


@pytest.mark.parametrize("cls, rejected", [
    ("HalfCheetahCore", "HalfCheetah model should have a slide joint as the first joint, in the first "
                        "body, and at least one actuator; got "),
    ("AntCore", "Ant model should have a free joint as the first joint, in the first body, and at least "
                "one actuator; got "),
    ("HumanoidCore", "Humanoid model should have a free joint as the first joint, in the first body, and "
                     "at least one actuator; got "),
])
def test_model_without_a_free_root_joint_does_not_crash(tmp_path, cls, rejected):
    """A model without the root joint the task reads is rejected at construction
    (core, pool and gymnasium env alike), never run into memory corruption."""
    path = tmp_path / "hinge.xml"
    path.write_text(HINGE_ONLY)
    proc = run_python("""
        import sys
        import gymnasium
        import joltgym_marl as jm
        cls = getattr(jm, sys.argv[1])
        task = cls().task
        for make in (lambda: cls(xml_file=sys.argv[2]),
                     lambda: jm.WorldPool(task, 2, num_threads=2, xml_file=sys.argv[2]),
                     lambda: gymnasium.make(sys.argv[3], xml_file=sys.argv[2])):
            try:
                make()
            except ValueError as e:
                print("rejected:", e)
            else:
                raise SystemExit("accepted a model without the root joint")
        import gc; gc.collect()
    """, cls, str(path), GYM_IDS[getattr(joltgym_marl, cls)().task], cwd=tmp_path)
    assert_clean_exit(proc)
    expected = f"rejected: {rejected}a hinge joint first (in body 1) and 1 actuator(s)"
    assert proc.stdout.splitlines() == [expected] * 3, proc.stdout


# -- lifecycle ---------------------------------------------------------------------------------


def test_step_before_reset_pool():
    with WorldPool("half_cheetah", 2, num_threads=2) as pool, WorldPool("half_cheetah", 2, num_threads=2) as twin:
        message = lit("step_all() called before reset_all(); expected reset_all() first")
        with pytest.raises(joltgym_marl.StateError, match=message):
            pool.step_all(np.zeros((2, 6), np.float32))
        # Resetting only some worlds is not enough.
        pool.reset_one(0, seed=1)
        twin.reset_one(0, seed=1)
        with pytest.raises(joltgym_marl.StateError, match=message):
            pool.step_all(np.zeros((2, 6), np.float32))
        assert_array_equal(pool.elapsed_steps, [0, 0])
        for p in (pool, twin):
            p.reset_one(1, seed=2)
        assert_pool_untouched(pool, twin)


def test_calls_after_close_pool():
    pool = WorldPool("half_cheetah", N, num_threads=2)
    pool.reset_all(seed=0)
    qpos, qvel = pool.get_state(0)
    pool.close()
    message = lit("WorldPool is closed; expected an open pool (create a new one)")
    # Also with arguments that would be rejected on an open pool.
    for call in (lambda: pool.step_all(np.zeros((N, 6), np.float32)),
                 lambda: pool.step_all(np.zeros((1, 1), np.int64)),
                 lambda: pool.reset_all(seed=0),
                 lambda: pool.reset_one(0),
                 lambda: pool.reset_one(99),
                 lambda: pool.get_state(0),
                 lambda: pool.set_state(0, qpos, qvel),
                 lambda: pool.action_low,
                 lambda: pool.info_fields):
        with pytest.raises(RuntimeError, match=message):
            call()
    pool.close()


# -- set_state -----------------------------------------------------------------------------------


def _bad_states(nq, nv):
    ok_q, ok_v = np.zeros(nq), np.zeros(nv)
    k = min(3, nq - 1)
    nan_q = ok_q.copy()
    nan_q[k] = np.nan
    inf_v = ok_v.copy()
    inf_v[nv - 1] = -np.inf
    return [
        (np.zeros(nq - 1), ok_v, ValueError, f"qpos should have shape ({nq},), got ({nq - 1},)"),
        (np.zeros(nq + 1), ok_v, ValueError, f"qpos should have shape ({nq},), got ({nq + 1},)"),
        (np.zeros((1, nq)), ok_v, ValueError, f"qpos should have shape ({nq},), got (1, {nq})"),
        (0.0, ok_v, ValueError, f"qpos should have shape ({nq},), got ()"),
        (ok_q, np.zeros(nv + 2), ValueError, f"qvel should have shape ({nv},), got ({nv + 2},)"),
        (ok_q, np.zeros((nv, 1)), ValueError, f"qvel should have shape ({nv},), got ({nv}, 1)"),
        (nan_q, ok_v, ValueError, f"qpos should be finite, got nan at index {k}"),
        (ok_q, inf_v, ValueError, f"qvel should be finite, got -inf at index {nv - 1}"),
        (np.full(nq, "a"), ok_v, TypeError, f"qpos should be a real array of shape ({nq},), got <U1"),
        (np.zeros(nq, bool), ok_v, TypeError, f"qpos should be a real array of shape ({nq},), got bool"),
        (np.zeros(nq, complex), ok_v, TypeError, f"qpos should be a real array of shape ({nq},), got complex128"),
        (None, ok_v, TypeError, f"qpos should be a real array of shape ({nq},), got object"),
        (ok_q, [0.0] * (nv - 1) + ["x"], TypeError, f"qvel should be a real array of shape ({nv},), got <U"),
    ]


def test_bad_set_state_core(cores):
    core, twin = cores
    nq, nv = (len(x) for x in core.get_state())
    for qpos, qvel, exc, message in _bad_states(nq, nv):
        with pytest.raises(exc, match=lit(message)):
            core.set_state(qpos, qvel)
        # A good qpos with a bad qvel is not half applied.
        for got, expected in zip(core.get_state(), twin.get_state()):
            assert_array_equal(got, expected)
    assert_core_untouched(core, twin)


def test_bad_set_state_pool(pools):
    pool, twin = pools
    nq, nv = (len(x) for x in pool.get_state(0))
    for qpos, qvel, exc, message in _bad_states(nq, nv):
        with pytest.raises(exc, match=lit(message)):
            pool.set_state(1, qpos, qvel)
    assert_pool_untouched(pool, twin)


def test_set_state_accepts_int_and_float32_arrays(cheetahs):
    core, _ = cheetahs
    qpos, qvel = core.get_state()
    core.set_state(np.zeros(len(qpos), np.int32), qvel.astype(np.float32))
    got_q, got_v = core.get_state()
    assert_array_equal(got_q, np.zeros(len(qpos)))
    assert_array_equal(got_v, qvel.astype(np.float32).astype(np.float64))


# -- nothing crashes the interpreter -------------------------------------------------------------


@pytest.mark.parametrize("method", ["step_all", "step_all_float64", "set_state", "set_state_qvel"])
def test_closing_the_pool_during_argument_conversion_does_not_crash(method):
    proc = run_python("""
        import sys
        import numpy as np
        import joltgym_marl as jm
        pool = jm.WorldPool("half_cheetah", 4, num_threads=2)
        pool.reset_all(seed=0)
        qpos, qvel = pool.get_state(0)

        class ClosesThePool:
            def __init__(self, value):
                self.value = value
            def __array__(self, dtype=None, copy=None):
                pool.close()
                ClosesThePool.junk = [bytearray(b"\\xff" * 4096) for _ in range(2000)]
                return self.value

        try:
            if sys.argv[1] == "step_all":
                pool.step_all(ClosesThePool(np.zeros((4, 6), np.float32)))
            elif sys.argv[1] == "step_all_float64":
                pool.step_all(ClosesThePool(np.zeros((4, 6), np.float64)))
            elif sys.argv[1] == "set_state":
                pool.set_state(0, ClosesThePool(qpos), qvel)
            else:
                pool.set_state(0, qpos, ClosesThePool(qvel))
        except RuntimeError as e:
            print("rejected:", e)
        else:
            raise SystemExit("a closed pool stepped")
        assert pool.closed
    """, method)
    assert_clean_exit(proc)
    assert proc.stdout.splitlines() == [
        "rejected: WorldPool is closed; expected an open pool (create a new one)"], proc.stdout


def test_battery_of_bad_calls_in_a_fresh_interpreter(tmp_path):
    """The nastiest inputs, in one subprocess: it must finish normally."""
    proc = run_python("""
        import gc
        import numpy as np
        import joltgym_marl as jm

        rejected = 0
        def bad(call):
            global rejected
            try:
                call()
            except (TypeError, ValueError, IndexError, RuntimeError, FileNotFoundError):
                rejected += 1
            else:
                raise SystemExit(f"accepted: {call}")

        core = jm.HumanoidCore()
        bad(lambda: core.step(np.zeros(17, np.float32)))
        core.reset(seed=0)
        pool = jm.WorldPool("ant", 5, num_threads=2, autoreset_mode="same_step")
        bad(lambda: pool.step_all(np.zeros((5, 8), np.float32)))
        pool.reset_all(seed=0)
        huge = np.zeros((10**6, 8), np.float32)
        for action in (huge, np.zeros((0,), np.float32), np.zeros((5, 0, 8), np.float32),
                       np.empty((5, 8), dtype=object), np.zeros((5, 8), np.complex64),
                       np.full((5, 8), np.nan), memoryview(b"abc"), object(), lambda: 0,
                       np.zeros((5, 8), np.float32)[:, :, None][..., 0:0]):
            bad(lambda: pool.step_all(action))
            bad(lambda: core.step(action))
        for index in (-(2**31), 2**31, -1, 5, 2.0, "1", None, object()):
            bad(lambda: pool.reset_one(index))
            bad(lambda: pool.get_state(index))
        for seed in (-1, -(2**70), 0.0, "0", b"0", object(), [0], True):
            bad(lambda: pool.reset_all(seed=seed))
            bad(lambda: core.reset(seed=seed))
        qpos, qvel = pool.get_state(0)
        for q in (np.full(qpos.shape, np.inf), qpos[:-1], np.zeros((0,)), object()):
            bad(lambda: pool.set_state(0, q, qvel))
            bad(lambda: core.set_state(q, np.zeros(23)))
        bad(lambda: jm.WorldPool("ant", 2, xml_file="/dev/null"))
        bad(lambda: jm.WorldPool("ant", 2, xml_file="/"))
        bad(lambda: jm.WorldPool("humanoid", 2, frame_skip=-(2**20)))
        bad(lambda: jm.WorldPool("humanoid", 2, healthy_z_range=(float("inf"), float("-inf"))))
        # And the objects still work afterwards.
        for _ in range(20):
            pool.step_all(np.zeros((5, 8), np.float32))
            core.step(np.zeros(17, np.float32))
        assert np.isfinite(pool.obs).all()
        pool.close()
        bad(lambda: pool.step_all(np.zeros((5, 8), np.float32)))
        del pool, core
        gc.collect()
        print("rejected", rejected)
    """, cwd=tmp_path)
    assert_clean_exit(proc)
    assert int(proc.stdout.split()[-1]) > 50
