"""The C API (include/joltgym_marl.h, libjoltgym_marl) against the Python module.

The library is built by CMake without Python (tests/capi.py) and driven
through ctypes. It shares the core with `joltgym_marl._core`, so the checks
are bit-identical results (every buffer, every task of the registry, several
seeds and thread counts, both auto-reset modes), the same registry, the same
error messages as the Python exceptions, and that no bad input crashes it.
The examples (examples/c, examples/java) are built and run here too, and the
error paths run under ASan + UBSan (test_error_paths_under_asan_and_ubsan).

JOLTGYM_CAPI_LIBRARY=<path> uses a library built elsewhere (the sanitized run
uses it).
"""

from __future__ import annotations

import ctypes
import json
import math
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest
from capi import (BUILD, ROOT, STATUS, BufferSizes, Buffers, CapiError, InfoField, Library, ParamInfo, TaskInfo,
                  build_library, layout_fields)
from conftest import GAME_NAMES, SINGLE_TASKS, non_default_kwargs, spec_of

from joltgym_marl import _core
from joltgym_marl.registry import SINGLE_AGENT_TASKS, TASKS

ALL_TASKS = SINGLE_TASKS + GAME_NAMES


class _Pools:
    """Python's WorldPool in the C API's layout (float32 observations and
    rewards; Python's robots default to float64, Gymnasium v5's dtype)."""

    @staticmethod
    def WorldPool(*args, **kwargs):  # noqa: N802  (the class it stands for)
        kwargs.setdefault("dtype", np.float32)
        return _core.WorldPool(*args, **kwargs)
JNA_JAR = Path("/usr/share/java/jna.jar")


@pytest.fixture(scope="module")
def lib() -> Library:
    given = os.environ.get("JOLTGYM_CAPI_LIBRARY")
    path = Path(given) if given else build_library() / "libjoltgym_marl.so"
    return Library(path)


def python_kwargs_to_json(kwargs: dict) -> str:
    return json.dumps({k: list(v) if isinstance(v, tuple) else v for k, v in kwargs.items()})


def assert_same_buffers(pool: _core.WorldPool, views: dict, where: str) -> None:
    pairs = {"obs": pool.obs, "reward": pool.rewards, "terminated": pool.terminations,
             "truncated": pool.truncations, "info": pool.infos, "reset_kind": pool.reset_kind,
             "unstable": pool.unstable, "elapsed": pool.elapsed_steps}
    if pool.autoreset_mode == "same_step":
        pairs.update(final_obs=pool.final_obs, final_info=pool.final_infos)
    for name, ours in pairs.items():
        theirs = views[name]
        assert theirs.dtype == ours.dtype and theirs.shape == ours.shape, (name, theirs.dtype, ours.dtype)
        # Bitwise (NaN-safe) equality.
        assert theirs.tobytes() == ours.tobytes(), f"{name} differs at {where}"


# --- the library --------------------------------------------------------------------


def test_abi_and_versions(lib):
    assert lib.lib.jg_abi_version() == 4
    header = (ROOT / "include" / "joltgym_marl.h").read_text()
    assert "#define JG_ABI_VERSION 4" in header
    assert lib.lib.jg_mujoco_version().decode() == _core.mujoco_version()
    import importlib.metadata

    assert lib.lib.jg_version().decode() == importlib.metadata.version("joltgym_marl")


def test_built_without_python():
    cache = (BUILD / "CMakeCache.txt").read_text() if not os.environ.get("JOLTGYM_CAPI_LIBRARY") else None
    if cache is None:
        pytest.skip("JOLTGYM_CAPI_LIBRARY given: the library was built elsewhere")
    assert "JOLTGYM_BUILD_PYTHON:BOOL=OFF" in cache and "Python_EXECUTABLE" not in cache
    needed = subprocess.run(["ldd", str(BUILD / "libjoltgym_marl.so")], capture_output=True, text=True).stdout
    assert "libpython" not in needed and "libmujoco" in needed


def test_only_the_c_functions_are_exported(lib):
    out = subprocess.run(["nm", "-D", "--defined-only", str(lib.path)], capture_output=True, text=True).stdout
    ours = [line.split()[-1] for line in out.splitlines() if "joltgym" in line]
    assert not ours, ours[:5]
    exported = {line.split()[-1] for line in out.splitlines() if line.split()[-1].startswith("jg_")}
    header = (ROOT / "include" / "joltgym_marl.h").read_text()
    assert exported and all(f" {name}(" in header for name in exported), exported


# --- the registry ---------------------------------------------------------------------


def test_registry_is_pythons(lib):
    ours = _core.tasks()
    theirs = lib.tasks()
    assert list(theirs) == sorted(ours)
    count = ctypes.c_int32()
    lib.call("jg_task_count", ctypes.byref(count))
    assert count.value == len(ours)
    for index, name in enumerate(sorted(ours)):
        text = ctypes.c_char_p()
        lib.call("jg_task_name", index, ctypes.byref(text))
        assert text.value.decode() == name
        entry, mine = ours[name], theirs[name]
        for key in ("name", "kind", "title", "env_id", "reference_id", "agent_prefix", "max_episode_steps"):
            assert mine[key] == entry[key], (name, key)
        info = TaskInfo()
        lib.call("jg_task_info_get", name.encode(), ctypes.byref(info))
        assert info.doc.decode() == entry["doc"] and info.num_params == len(entry["params"])
        assert [p["name"] for p in mine["params"]] == [p["name"] for p in entry["params"]]
        for k, (p, q) in enumerate(zip(mine["params"], entry["params"])):
            default = q["default"]
            expected = ([_json_number(x) for x in default] if isinstance(default, tuple)
                        else _json_number(default) if isinstance(default, float) else default)
            assert p["kind"] == q["kind"] and p["doc"] == q["doc"] and p["default"] == expected, (name, p, q)
            param = ParamInfo()
            lib.call("jg_task_param", name.encode(), k, ctypes.byref(param))
            assert json.loads(param.default_json) == expected and param.kind.decode() == q["kind"]


def test_task_names_resolve_as_in_python(lib):
    # One resolver (TaskRegistry::Find): any spelling of any name of a task, as WorldPool takes it.
    spec = SINGLE_AGENT_TASKS[0]
    for name in (spec.title, spec.env_id, spec.title.upper()):
        handle = lib.create(name, 1)
        try:
            info = TaskInfo()
            lib.call("jg_task_info_get", name.encode(), ctypes.byref(info))
            assert info.doc.decode() == spec.doc
        finally:
            lib.close(handle)
    with pytest.raises(CapiError) as e:
        lib.create(spec.title[:-1] + "x", 1)
    assert e.value.status == "JG_ERR_VALUE"
    with pytest.raises(ValueError) as python:
        _core.resolve_task(spec.title[:-1] + "x")
    assert str(python.value) in str(e.value)


def _json_number(x: float):
    return ("inf" if x > 0 else "-inf") if math.isinf(x) else x


# --- pools: dims, bounds, info layout -----------------------------------------------------


@pytest.mark.parametrize("task", ALL_TASKS)
def test_dims_bounds_and_info_layout_are_pythons(lib, task):
    pool = _Pools.WorldPool(task, 3, num_threads=1)
    handle = lib.create(task, 3, num_threads=1)
    try:
        d = lib.dims(handle)
        assert (d.num_envs, d.num_agents, d.obs_dim, d.act_dim, d.info_width, d.num_threads, d.dt) == (
            3, pool.num_agents, pool.obs_dim, pool.act_dim, pool.infos.shape[-1], pool.num_threads, pool.dt)
        low = np.zeros(d.act_dim, np.float32)
        high = np.zeros(d.act_dim, np.float32)
        lib.call("jg_pool_action_bounds", handle, low.ctypes.data, high.ctypes.data, d.act_dim)
        assert low.tobytes() == pool.action_low.tobytes() and high.tobytes() == pool.action_high.tobytes()
        fields = []
        for i in range(d.num_info_fields):
            f = InfoField()
            lib.call("jg_pool_info_field", handle, i, ctypes.byref(f))
            labels = []
            for k in range(f.num_labels):
                text = ctypes.c_char_p()
                lib.call("jg_pool_info_label", handle, i, k, ctypes.byref(text))
                labels.append(text.value.decode())
            fields.append((f.name.decode(), f.offset, f.size, bool(f.at_reset), f.kind, labels))
        expected = [(name, offset, size, at_reset, kind, list(labels))
                    for name, offset, size, at_reset, kind, labels in pool.info_decoder.fields]
        kinds = {"real": 0, "integer": 1, "label": 2}
        expected = [(n, o, s, r, kinds.get(k, k) if isinstance(k, str) else int(k), ls)
                    for n, o, s, r, k, ls in expected]
        assert fields == expected
    finally:
        lib.close(handle)
        pool.close()


# --- pools: bit-identical to WorldPool -------------------------------------------------------


@pytest.mark.parametrize("task", ALL_TASKS)
@pytest.mark.parametrize(("seed", "threads", "mode", "dtype"), [
    (0, 1, "next_step", "float32"), (12345, 2, "same_step", "float32"), (77, 2, "same_step", "float64")])
def test_rollouts_are_bit_identical_to_world_pool(lib, task, seed, threads, mode, dtype):
    """Both layouts: float32, and float64 (Python's default for the robots,
    Gymnasium v5's dtypes), equal to Python's WorldPool of that dtype."""
    num_envs, steps, limit = 5, 40, 15  # several episodes end (truncation) and restart
    pool = _Pools.WorldPool(task, num_envs, num_threads=1, max_episode_steps=limit, autoreset_mode=mode,
                            dtype=np.dtype(dtype))
    handle = lib.create(task, num_envs, num_threads=threads, max_episode_steps=limit, autoreset_mode=mode,
                        dtype=None if dtype == "float32" else dtype)
    try:
        assert lib.dims(handle).real_size == np.dtype(dtype).itemsize
        views = lib.buffers(handle)
        assert views["obs"].dtype == views["reward"].dtype == np.dtype(dtype)
        pool.reset_all(seed=seed)
        lib.reset(handle, seed)
        assert_same_buffers(pool, views, "reset")
        rng = np.random.default_rng(seed)
        low, high = pool.action_low, pool.action_high
        for t in range(steps):
            actions = rng.uniform(low, high, (num_envs, pool.num_agents, pool.act_dim)).astype(np.float32)
            pool.step_all(actions)
            lib.step(handle, actions)
            assert_same_buffers(pool, views, f"step {t}")
        # Unseeded resets continue each world's stream in both.
        pool.reset_one(2)
        lib.reset_one(handle, 2)
        pool.reset_all()
        lib.reset(handle)
        assert_same_buffers(pool, views, "unseeded resets")
        pool.reset_one(1, seed=seed + 7)
        lib.reset_one(handle, 1, seed + 7)
        assert_same_buffers(pool, views, "seeded reset_one")
    finally:
        lib.close(handle)
        pool.close()


def test_engine_is_a_key_of_the_c_api(lib):
    """engine="jolt" as a JSON key: the same Jolt rollout as Python's pool, bit for bit."""
    pool = _Pools.WorldPool("half_cheetah", 3, num_threads=1, max_episode_steps=20, engine="jolt")
    handle = lib.create_json("half_cheetah", 3, json.dumps({"engine": "jolt"}), num_threads=2,
                             max_episode_steps=20)
    try:
        views = lib.buffers(handle)
        pool.reset_all(seed=4)
        lib.reset(handle, 4)
        assert_same_buffers(pool, views, "reset")
        rng = np.random.default_rng(4)
        for t in range(30):
            actions = rng.uniform(-1, 1, (3, 1, pool.act_dim)).astype(np.float32)
            pool.step_all(actions)
            lib.step(handle, actions)
            assert_same_buffers(pool, views, f"step {t}")
    finally:
        lib.close(handle)
        pool.close()


@pytest.mark.parametrize("task", ALL_TASKS)
def test_keyword_arguments_as_strings_and_json_are_pythons(lib, task):
    kwargs = non_default_kwargs(spec_of(task))
    pool = _Pools.WorldPool(task, 2, num_threads=1, **kwargs)
    as_strings = lib.create(task, 2, num_threads=1, **{k: json.dumps(v) for k, v in kwargs.items()})
    as_json = lib.create_json(task, 2, python_kwargs_to_json(kwargs), num_threads=1)
    try:
        pool.reset_all(seed=3)
        actions = np.full((2, pool.num_agents, pool.act_dim), 0.3, np.float32)
        for handle in (as_strings, as_json):
            lib.reset(handle, 3)
            for _ in range(5):
                lib.step(handle, actions)
        for _ in range(5):
            pool.step_all(actions)
        assert_same_buffers(pool, lib.buffers(as_strings), "key/value strings")
        assert_same_buffers(pool, lib.buffers(as_json), "JSON")
    finally:
        lib.close(as_strings)
        lib.close(as_json)
        pool.close()


def test_a_bare_string_value_is_a_string(lib):
    handle = lib.create("half_cheetah", 1, xml_file="half_cheetah.xml")
    lib.close(handle)


# --- buffers ----------------------------------------------------------------------------


def test_pool_buffers_stay_put_and_are_written_in_place(lib):
    handle = lib.create("half_cheetah", 4, num_threads=2)
    try:
        first = Buffers()
        lib.call("jg_pool_buffers", handle, ctypes.byref(first))
        views = lib.buffers(handle)
        lib.reset(handle, 1)
        before = views["obs"].copy()
        lib.step(handle, np.full((4, 1, 6), 0.5, np.float32))
        assert not np.array_equal(before, views["obs"])  # the same memory, new contents
        again = Buffers()
        lib.call("jg_pool_buffers", handle, ctypes.byref(again))
        for name, _ in Buffers._fields_:
            assert ctypes.cast(getattr(first, name), ctypes.c_void_p).value == \
                ctypes.cast(getattr(again, name), ctypes.c_void_p).value, name
    finally:
        lib.close(handle)


def test_caller_buffers_receive_the_results(lib):
    handle = lib.create("hopper", 3, num_threads=1, max_episode_steps=4, autoreset_mode="same_step")
    pool = _Pools.WorldPool("hopper", 3, num_threads=1, max_episode_steps=4, autoreset_mode="same_step")
    try:
        lib.reset(handle, 5)
        pool.reset_all(seed=5)
        own = lib.buffers(handle)
        mine = {name: np.full_like(array, 7) for name, array in own.items()}
        b, sizes = lib.caller_buffers(handle, mine)
        lib.call("jg_pool_use_buffers", handle, ctypes.byref(b), ctypes.byref(sizes))
        assert_same_buffers(pool, mine, "after switching (contents copied over)")
        actions = np.full((3, 1, 3), 0.2, np.float32)
        for t in range(6):
            lib.step(handle, actions)
            pool.step_all(actions)
            assert_same_buffers(pool, mine, f"caller's buffers, step {t}")
        frozen = own["obs"].copy()
        lib.step(handle, actions)
        pool.step_all(actions)
        assert np.array_equal(own["obs"], frozen)  # the pool's own are no longer written
        lib.call("jg_pool_use_buffers", handle, None, None)
        assert_same_buffers(pool, own, "back to the pool's own (contents copied back)")
        # One field alone; a short one is refused with the sizes named.
        b = Buffers(reward=mine["reward"].ctypes.data_as(ctypes.POINTER(ctypes.c_float)))
        short = BufferSizes(reward=2)
        with pytest.raises(CapiError, match=r"reward buffer should hold at least 3 floats, got 2") as e:
            lib.call("jg_pool_use_buffers", handle, ctypes.byref(b), ctypes.byref(short))
        assert e.value.status == "JG_ERR_VALUE"
    finally:
        lib.close(handle)
        pool.close()


# --- bad input: the Python exception's words, never a crash -------------------------------------


def python_error(make) -> tuple[type, str]:
    with pytest.raises(Exception) as e:
        make()
    return type(e.value), str(e.value)


def status_of(kind: type) -> str:
    """The C status of a Python exception type."""
    for base, status in ((FileNotFoundError, "JG_ERR_FILE_NOT_FOUND"), (TypeError, "JG_ERR_TYPE"),
                         (ValueError, "JG_ERR_VALUE"), (IndexError, "JG_ERR_INDEX"),
                         (RuntimeError, "JG_ERR_STATE")):
        if issubclass(kind, base):
            return status
    raise AssertionError(kind)


def bad_kwargs(task: str) -> list[dict]:
    """Bad keyword arguments derived from the task's ParamSpecs."""
    out = [{"no_such_argument": 1}]
    for p in TASKS[task].params:
        if p.kind == "float":
            out += [{p.name: "heavy"}, {p.name: 1e7}, {p.name: True}]
        elif p.kind == "int":
            out += [{p.name: 2.5}, {p.name: -(1 << 40)}, {p.name: 10 ** 30}]
        elif p.kind == "bool":
            out += [{p.name: 1}]
        elif p.kind == "range":
            # Lists: what a JSON array is in Python (a tuple's repr would differ).
            out += [{p.name: [2.0, 1.0]}, {p.name: [1.0]}, {p.name: [-1e9, 1.0]}, {p.name: ["a", 1.0]}]
        elif p.kind == "str":
            out += [{p.name: 3}, {p.name: "/no/such/model.xml"}]
        elif p.kind == "optional_float":
            out += [{p.name: "x"}]
    return out


def test_the_float64_layout_in_callers_buffers_and_its_mistakes(lib):
    """A float64 pool writes obs64/reward64/final_obs64 (its float32 fields
    are NULL), into the caller's memory too; a field of the other layout, a
    short buffer or an unknown dtype is refused and changes nothing."""
    config = dict(num_threads=1, max_episode_steps=4, autoreset_mode="same_step")
    handle = lib.create("hopper", 3, dtype="float64", **config)
    pool = _Pools.WorldPool("hopper", 3, dtype=np.float64, **config)
    float32 = lib.create("hopper", 3, **config)
    try:
        lib.reset(handle, 5)
        pool.reset_all(seed=5)
        own = lib.buffers(handle)  # views() also checks that the float32 fields are NULL
        mine = {name: np.full_like(array, 7) for name, array in own.items()}
        b, sizes = lib.caller_buffers(handle, mine)
        lib.call("jg_pool_use_buffers", handle, ctypes.byref(b), ctypes.byref(sizes))
        actions = np.full((3, 1, 3), 0.2, np.float32)
        for t in range(6):
            lib.step(handle, actions)
            pool.step_all(actions)
            assert_same_buffers(pool, mine, f"caller's float64 buffers, step {t}")
        wrong = np.zeros(own["obs"].size, np.float32)
        refusals = [
            (handle, Buffers(obs=wrong.ctypes.data_as(ctypes.POINTER(ctypes.c_float))), BufferSizes(obs=wrong.size),
             r"obs buffer given to a pool of the float64 layout; expected NULL \(its obs64, reward64 and "
             r"final_obs64 are used instead\)"),
            (handle, Buffers(obs64=mine["obs"].ctypes.data_as(ctypes.POINTER(ctypes.c_double))),
             BufferSizes(obs64=5), r"obs64 buffer should hold at least 33 doubles, got 5"),
            (float32, Buffers(reward64=mine["reward"].ctypes.data_as(ctypes.POINTER(ctypes.c_double))),
             BufferSizes(reward64=3), r"reward64 buffer given to a pool of the float32 layout; expected NULL "
             r"\(its obs, reward and final_obs are used instead\)")]
        for target, given, given_sizes, message in refusals:
            with pytest.raises(CapiError, match=message) as e:
                lib.call("jg_pool_use_buffers", target, ctypes.byref(given), ctypes.byref(given_sizes))
            assert e.value.status == "JG_ERR_VALUE"
        lib.step(handle, actions)
        pool.step_all(actions)
        assert_same_buffers(pool, mine, "after the refusals: still the caller's buffers")
        lib.call("jg_pool_use_buffers", handle, None, None)
        assert_same_buffers(pool, own, "back to the pool's own (contents copied back)")
    finally:
        for h in (handle, float32):
            lib.close(h)
        pool.close()
    for bad in ("float16", "", "FLOAT64", "float64 ", "double"):
        with pytest.raises(CapiError, match=rf"dtype should be 'float32' \(or NULL\) or 'float64', got '{bad}'") as e:
            lib.create("hopper", 1, dtype=bad)
        assert e.value.status == "JG_ERR_VALUE"
    assert lib.dims(h := lib.create("hopper", 1, dtype="float32")).real_size == 4
    lib.close(h)


@pytest.mark.parametrize("task", ALL_TASKS)
def test_bad_keyword_arguments_say_what_python_says(lib, task):
    for kwargs in bad_kwargs(task):
        kind, message = python_error(lambda: _Pools.WorldPool(task, 2, **kwargs))
        for create in (lambda: lib.create(task, 2, **{k: json.dumps(v) for k, v in kwargs.items()}),
                       lambda: lib.create_json(task, 2, python_kwargs_to_json(kwargs))):
            with pytest.raises(CapiError) as e:
                create()
            assert (e.value.status, e.value.message) == (status_of(kind), message), kwargs


def test_bad_pool_settings_say_what_python_says(lib):
    cases = [(dict(num_envs=0), {}), (dict(num_envs=1 << 21), {}),
             (dict(num_envs=2), dict(autoreset_mode="sometimes")),
             (dict(num_envs=2), dict(max_episode_steps=-1))]
    for args, config in cases:
        kind, message = python_error(lambda: _Pools.WorldPool("ant", args["num_envs"], **config))
        with pytest.raises(CapiError) as e:
            lib.create("ant", args["num_envs"], **config)
        assert (e.value.status, e.value.message) == (status_of(kind), message)
    kind, message = python_error(lambda: _Pools.WorldPool("no_such_task", 2))
    with pytest.raises(CapiError) as e:
        lib.create("no_such_task", 2)
    assert (e.value.status, e.value.message) == ("JG_ERR_VALUE", message)


def test_bad_steps_say_what_python_says(lib):
    pool = _Pools.WorldPool("half_cheetah", 2, num_threads=1)
    handle = lib.create("half_cheetah", 2, num_threads=1)
    try:
        good = np.zeros((2, 1, 6), np.float32)
        kind, message = python_error(lambda: pool.step_all(good))
        with pytest.raises(CapiError) as e:
            lib.step(handle, good)
        assert (e.value.status, e.value.message) == ("JG_ERR_STATE", message)
        pool.reset_all(seed=0)
        lib.reset(handle, 0)
        bad = good.copy()
        bad[1, 0, 4] = np.nan
        kind, message = python_error(lambda: pool.step_all(bad))
        with pytest.raises(CapiError) as e:
            lib.step(handle, bad)
        assert (e.value.status, e.value.message) == ("JG_ERR_VALUE", message)
        with pytest.raises(CapiError, match=r"actions should have shape \(2, 1, 6\) \(12 float32 values\), "
                                            r"got 11 values") as e:
            lib.call("jg_pool_step", handle, good.ctypes.data, 11)
        with pytest.raises(CapiError, match="got NULL"):
            lib.call("jg_pool_step", handle, None, 12)
        with pytest.raises(CapiError, match=r"index should be in \[0, 2\), got 2") as e:
            lib.reset_one(handle, 2)
        assert e.value.status == "JG_ERR_INDEX"
        # Nothing changed: the next good step matches Python's.
        pool.step_all(good)
        lib.step(handle, good)
        assert_same_buffers(pool, lib.buffers(handle), "after the rejected calls")
    finally:
        lib.close(handle)
        pool.close()


def test_null_unknown_and_stale_handles(lib):
    d = ctypes.byref(ctypes.c_int32())
    with pytest.raises(CapiError, match=r"pool handle is 0 \(null\)") as e:
        lib.dims(0)
    assert e.value.status == "JG_ERR_HANDLE"
    with pytest.raises(CapiError, match="is not a handle this library gave out") as e:
        lib.dims((77 << 32) | 99)
    assert e.value.status == "JG_ERR_HANDLE"
    del d
    handle = lib.create("swimmer", 2)
    lib.reset(handle, 0)
    lib.close(handle)
    calls = [lambda: lib.reset(handle), lambda: lib.reset_one(handle, 0), lambda: lib.dims(handle),
             lambda: lib.buffers(handle), lambda: lib.step(handle, np.zeros((2, 1, 2), np.float32)),
             lambda: lib.call("jg_pool_use_buffers", handle, None, None)]
    for call in calls:
        with pytest.raises(CapiError, match=r"WorldPool is closed; expected an open pool \(create a new one\)") as e:
            call()
        assert e.value.status == "JG_ERR_STATE"
    with pytest.raises(CapiError, match="WorldPool is already closed") as e:
        lib.close(handle)
    assert e.value.status == "JG_ERR_STATE"
    # The slot is reused by the next pool under a new generation: the stale
    # handle does not reach it.
    fresh = lib.create("swimmer", 2)
    try:
        assert fresh != handle and (fresh & 0xFFFFFFFF) == (handle & 0xFFFFFFFF)
        with pytest.raises(CapiError, match="WorldPool is closed"):
            lib.reset(handle)
        lib.reset(fresh, 0)
    finally:
        lib.close(fresh)


def test_null_pointers(lib):
    handle = lib.create("swimmer", 2)
    try:
        for name, args in [("jg_pool_dims", (handle, None)), ("jg_pool_buffers", (handle, None)),
                           ("jg_pool_info_field", (handle, 0, None)), ("jg_task_count", (None,)),
                           ("jg_tasks_json", (None,)), ("jg_task_info_get", (None, None)),
                           ("jg_pool_action_bounds", (handle, None, None, 2))]:
            with pytest.raises(CapiError, match="should not be NULL") as e:
                lib.call(name, *args)
            assert e.value.status == "JG_ERR_NULL", name
        out = ctypes.c_uint64()
        with pytest.raises(CapiError, match="task should not be NULL"):
            lib.call("jg_pool_create", None, 2, None, None, None, 0, ctypes.byref(out))
        with pytest.raises(CapiError, match="keys should not be NULL"):
            lib.call("jg_pool_create", b"swimmer", 2, None, None, None, 1, ctypes.byref(out))
    finally:
        lib.close(handle)


def test_two_threads_in_one_pool_get_busy_never_a_crash(lib):
    handle = lib.create("humanoid", 32, num_threads=1)
    actions = np.zeros((32, 1, 17), np.float32)
    lib.reset(handle, 0)
    statuses: list[str] = []

    def run():
        for _ in range(30):
            try:
                lib.step(handle, actions)
                statuses.append("JG_OK")
            except CapiError as error:
                statuses.append(error.status)
                assert "another thread is inside this pool" in error.message

    threads = [threading.Thread(target=run) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    lib.close(handle)
    assert set(statuses) <= {"JG_OK", "JG_ERR_BUSY"} and "JG_OK" in statuses, statuses


def test_close_while_another_thread_steps(lib):
    for _ in range(5):
        handle = lib.create("ant", 16, num_threads=2)
        lib.reset(handle, 0)
        seen: list[str] = []

        def run():
            for _ in range(200):
                try:
                    lib.step(handle, np.zeros((16, 1, 8), np.float32))
                    seen.append("JG_OK")
                except CapiError as error:
                    seen.append(error.status)
                    if error.status == "JG_ERR_STATE":
                        return

        thread = threading.Thread(target=run)
        thread.start()
        lib.close(handle)
        thread.join()
        assert set(seen) <= {"JG_OK", "JG_ERR_BUSY", "JG_ERR_STATE"}, seen


def test_mujoco_warnings_are_pythons_words(lib, tmp_path, monkeypatch):
    from test_mujoco_errors import unlimited_cheetah

    monkeypatch.chdir(tmp_path)
    model = unlimited_cheetah(tmp_path)
    actions = np.zeros((3, 1, 6), np.float32)
    actions[1:] = 1e20
    with _Pools.WorldPool("half_cheetah", 3, num_threads=2, xml_file=str(model)) as pool:
        pool.reset_all(seed=0)
        with pytest.warns(_core.MujocoWarning) as record:
            pool.step_all(actions)
    handle = lib.create("half_cheetah", 3, num_threads=2, xml_file=json.dumps(str(model)))
    try:
        lib.reset(handle, 0)
        assert lib.warnings() == ""
        lib.step(handle, actions)  # a warning is not a failure
        assert lib.warnings() == "".join(f"{r.message}\n" for r in record)
        lib.step(handle, np.zeros_like(actions))
        assert lib.warnings() == ""
    finally:
        lib.close(handle)
    assert list(tmp_path.iterdir()) == [model]  # nothing written (no MUJOCO_LOG.TXT)


def test_mujoco_errors_are_pythons_words_and_the_world_waits_for_a_reset(lib, tmp_path):
    from test_mujoco_errors import small_memory_ant

    model = str(small_memory_ant(tmp_path))
    actions = np.ones((4, 1, 8), np.float32)

    def python_messages() -> list[str]:
        messages = []
        with _Pools.WorldPool("ant", 4, num_threads=1, xml_file=model) as pool:
            pool.reset_all(seed=0)
            for _ in range(200):
                try:
                    pool.step_all(actions)
                except MemoryError as error:
                    messages.append(str(error))
                    break
            messages.append(python_error(lambda: pool.step_all(actions))[1])
        return messages

    expected = python_messages()
    assert len(expected) == 2, expected
    handle = lib.create("ant", 4, num_threads=1, xml_file=json.dumps(model))
    try:
        lib.reset(handle, 0)
        got = []
        for _ in range(200):
            try:
                lib.step(handle, actions)
            except CapiError as error:
                assert error.status == "JG_ERR_OUT_OF_MEMORY"
                got.append(error.message)
                break
        with pytest.raises(CapiError) as e:
            lib.step(handle, actions)
        assert e.value.status == "JG_ERR_STATE"
        got.append(e.value.message)
        assert got == expected
        lib.reset(handle, 0)  # a reset brings the worlds back
        lib.step(handle, np.zeros_like(actions))
        assert np.isfinite(lib.buffers(handle)["obs"]).all()
    finally:
        lib.close(handle)


# --- asynchronous stepping: send/recv, bit-identical to Python's and to step_all ---------------

ASYNC_TASK = SINGLE_TASKS[0]
ASYNC_GAME = GAME_NAMES[0]
# The C batch buffers' fields and their Python names (recv_* for a batch, the pool's for a step).
RECV_NAMES = {"obs": "recv_obs", "reward": "recv_rewards", "terminated": "recv_terminations",
              "truncated": "recv_truncations", "info": "recv_infos", "final_obs": "recv_final_obs",
              "final_info": "recv_final_infos", "reset_kind": "recv_reset_kind", "unstable": "recv_unstable",
              "elapsed": "recv_elapsed_steps"}
STEP_NAMES = {"obs": "obs", "reward": "rewards", "terminated": "terminations", "truncated": "truncations",
              "info": "infos", "final_obs": "final_obs", "final_info": "final_infos", "reset_kind": "reset_kind",
              "unstable": "unstable", "elapsed": "elapsed_steps"}


def world_record(rows: dict, k: int) -> dict:
    """Row k of a set of buffers, as bytes (NaN-safe bitwise comparison); the
    final obs/info only where the row was auto-reset (elsewhere they are stale)."""
    autoreset = int(rows["reset_kind"][k]) == _core.ResetKind.AUTORESET
    return {name: rows[name][k].tobytes() for name in STEP_NAMES
            if autoreset or name not in ("final_obs", "final_info")}


class PythonAsync:
    """Python's WorldPool send/recv, in the C driver's shape."""

    def __init__(self, pool):
        self.pool = pool

    def async_reset(self, seed):
        self.pool.async_reset(seed=seed)

    def in_flight(self):
        return self.pool.in_flight

    def recv(self):
        ids = self.pool.recv()[0]
        return ids, {name: getattr(self.pool, python) for name, python in RECV_NAMES.items()}

    def send(self, actions, ids):
        self.pool.send(actions, ids)


class CAsync:
    def __init__(self, lib, handle):
        self.lib, self.handle = lib, handle

    def async_reset(self, seed):
        self.lib.async_reset(self.handle, seed)

    def in_flight(self):
        return self.lib.in_flight(self.handle)

    def recv(self):
        return self.lib.recv(self.handle)

    def send(self, actions, ids):
        self.lib.send(self.handle, actions, ids)


def async_run(pool, actions, seed: int, order_seed: int, batch_size: int):
    """Per world, its records (reset first) under async_reset/recv/send, each
    received world sent on with its next action (shuffled, split into two
    sends) until `steps` each; and the sequence of ids received."""
    rng = np.random.default_rng(order_seed)
    steps, num_envs = actions.shape[:2]
    count = np.zeros(num_envs, int)
    out = [[] for _ in range(num_envs)]
    received = []
    pool.async_reset(seed)
    while pool.in_flight() >= batch_size:
        ids, rows = pool.recv()
        ids = ids.copy()
        received += ids.tolist()
        for k, i in enumerate(ids):
            out[i].append(world_record(rows, k))
        todo = rng.permutation([i for i in ids if count[i] < steps])
        cut = int(rng.integers(0, len(todo) + 1))
        for part in (todo[:cut], todo[cut:]):
            if len(part):
                pool.send(np.stack([actions[count[i], i] for i in part]), part.astype(np.int32))
                count[part] += 1
    return out, received


def sync_run(pool, actions, seed: int):
    """Per world, its records (reset first) under reset_all/step_all."""
    rows = {name: getattr(pool, python) for name, python in STEP_NAMES.items()}
    pool.reset_all(seed=seed)
    out = [[world_record(rows, i)] for i in range(pool.num_envs)]
    for t in range(len(actions)):
        pool.step_all(actions[t])
        for i in range(pool.num_envs):
            out[i].append(world_record(rows, i))
    return out


@pytest.mark.parametrize(("task", "num_envs", "threads", "batch_size", "mode", "dtype"), [
    (ASYNC_TASK, 7, 1, 1, "next_step", "float32"), (ASYNC_TASK, 7, 2, 3, "same_step", "float32"),
    (ASYNC_TASK, 7, 2, 5, "next_step", "float32"), (ASYNC_TASK, 7, 1, 7, "same_step", "float32"),
    (ASYNC_GAME, 5, 1, 2, "same_step", "float32"), (ASYNC_GAME, 5, 2, 3, "next_step", "float32"),
    (ASYNC_TASK, 7, 2, 3, "same_step", "float64"), (ASYNC_GAME, 5, 1, 2, "same_step", "float64")])
def test_async_rollouts_are_bit_identical_to_python_and_to_step(lib, task, num_envs, threads, batch_size, mode,
                                                                dtype):
    """Each world's records through C send/recv equal those through Python's
    send/recv and through step_all (same seed, same per-world actions), with
    episodes of 6 steps (auto-resets), batch sizes that do not divide the
    worlds, shuffled and split sends; with one thread the order is fixed, and
    C and Python receive the same ids in the same order."""
    config = dict(num_threads=threads, max_episode_steps=6, autoreset_mode=mode)
    sync_pool = _Pools.WorldPool(task, num_envs, dtype=np.dtype(dtype), **config)
    py_pool = _Pools.WorldPool(task, num_envs, batch_size=batch_size, dtype=np.dtype(dtype), **config)
    handle = lib.create(task, num_envs, batch_size=batch_size, dtype=dtype, **config)
    try:
        assert lib.dims(handle).batch_size == batch_size
        steps = 16
        rng = np.random.default_rng(batch_size)
        actions = rng.uniform(sync_pool.action_low, sync_pool.action_high,
                              (steps, num_envs, sync_pool.num_agents, sync_pool.act_dim)).astype(np.float32)
        sync = sync_run(sync_pool, actions, seed=9)
        order_seed = 10 * batch_size + threads
        theirs, py_order = async_run(PythonAsync(py_pool), actions, 9, order_seed, batch_size)
        ours, c_order = async_run(CAsync(lib, handle), actions, 9, order_seed, batch_size)
        for i in range(num_envs):
            assert len(ours[i]) >= 2, (i, len(ours[i]))
            assert ours[i] == sync[i][:len(ours[i])], f"world {i}: C send/recv differs from step_all"
            assert theirs[i] == sync[i][:len(theirs[i])], f"world {i}: Python send/recv differs from step_all"
        assert sum(len(o) for o in ours) >= num_envs * steps // 2
        if threads == 1:
            assert c_order == py_order
            assert ours == theirs
            assert lib.in_flight(handle) == py_pool.in_flight
    finally:
        lib.close(handle)
        py_pool.close()
        sync_pool.close()


def test_batch_buffers_stay_put_and_can_be_the_callers(lib):
    """recv's ids and rows are the pool's batch buffers (the same addresses
    every call, jg_pool_batch_buffers' too), or the caller's memory."""
    own = lib.create(ASYNC_TASK, 6, num_threads=1, batch_size=4, max_episode_steps=3, autoreset_mode="same_step")
    mine = lib.create(ASYNC_TASK, 6, num_threads=1, batch_size=4, max_episode_steps=3, autoreset_mode="same_step")
    try:
        ids0, rows0 = lib.batch_buffers(own)
        first = Buffers()
        first_ids = ctypes.POINTER(ctypes.c_int32)()
        lib.call("jg_pool_batch_buffers", own, ctypes.byref(first_ids), ctypes.byref(first))
        d = lib.dims(own)
        arrays = {name: np.full_like(array, 7) for name, array in rows0.items()}
        my_ids = np.full(5, -1, np.int32)  # room for more than batch_size
        b, sizes = lib.caller_buffers(mine, arrays)
        lib.call("jg_pool_use_batch_buffers", mine, my_ids.ctypes.data, my_ids.size, ctypes.byref(b),
                 ctypes.byref(sizes))
        assert (my_ids[:4] == 0).all() and (my_ids[4] == -1)  # contents copied over (zeros)
        for handle in (own, mine):
            lib.async_reset(handle, 3)
        actions = np.full((4, 1, d.act_dim), 0.25, np.float32)
        for _ in range(6):
            a_ids, a_rows = lib.recv(own)
            b_ids, b_rows = lib.recv(mine)
            assert a_ids.ctypes.data == ctypes.cast(first_ids, ctypes.c_void_p).value
            assert b_ids.ctypes.data == my_ids.ctypes.data and b_rows["obs"].ctypes.data == arrays["obs"].ctypes.data
            assert a_ids.tolist() == b_ids.tolist()
            for k in range(4):
                assert world_record(a_rows, k) == world_record(arrays, k)
            lib.send(own, actions, a_ids.copy())
            lib.send(mine, actions, b_ids.copy())
        for field, _, name in layout_fields(d.real_size):
            assert ctypes.cast(getattr(first, field), ctypes.c_void_p).value == rows0[name].ctypes.data, name
        # Back to the pool's own (contents copied back); a short buffer is refused.
        lib.call("jg_pool_use_batch_buffers", mine, None, 0, None, None)
        back_ids, back_rows = lib.batch_buffers(mine)
        assert back_ids.tolist() == my_ids[:4].tolist() and back_rows["obs"].tobytes() == arrays["obs"].tobytes()
        with pytest.raises(CapiError, match=r"env_ids buffer should hold at least 4 int32s, got 3") as e:
            lib.call("jg_pool_use_batch_buffers", mine, my_ids.ctypes.data, 3, None, None)
        assert e.value.status == "JG_ERR_VALUE"
        short = BufferSizes(obs=5)
        with pytest.raises(CapiError, match=r"obs buffer should hold at least \d+ floats, got 5"):
            lib.call("jg_pool_use_batch_buffers", mine, None, 0, ctypes.byref(Buffers(obs=b.obs)),
                     ctypes.byref(short))
        with pytest.raises(CapiError, match="sizes should not be NULL") as e:
            lib.call("jg_pool_use_batch_buffers", mine, None, 0, ctypes.byref(b), None)
        assert e.value.status == "JG_ERR_NULL"
    finally:
        lib.close(own)
        lib.close(mine)


def test_bad_batch_sizes_say_what_python_says(lib):
    for batch_size in (5, 1 << 30):
        kind, message = python_error(lambda: _Pools.WorldPool(ASYNC_TASK, 4, batch_size=batch_size))
        with pytest.raises(CapiError) as e:
            lib.create(ASYNC_TASK, 4, batch_size=batch_size)
        assert (e.value.status, e.value.message) == (status_of(kind), message)
    kind, message = python_error(lambda: _Pools.WorldPool(ASYNC_TASK, 4, batch_size=-1))
    with pytest.raises(CapiError) as e:
        lib.create(ASYNC_TASK, 4, batch_size=-1)
    assert (e.value.status, e.value.message) == (status_of(kind), message + " (or 0 for num_envs)")
    handle = lib.create_json(ASYNC_TASK, 4, None, batch_size=0)  # 0: num_envs, as Python's None
    try:
        assert lib.dims(handle).batch_size == 4
    finally:
        lib.close(handle)


def test_bad_async_calls_say_what_python_says(lib):
    """Every misuse of send/recv gets the words of Python's exception, and
    changes nothing: the next good calls give Python's results."""
    pool = _Pools.WorldPool(ASYNC_TASK, 5, num_threads=2, batch_size=2)
    handle = lib.create(ASYNC_TASK, 5, num_threads=2, batch_size=2)
    a, d = pool.num_agents, pool.act_dim

    def zeros(rows):
        return np.zeros((rows, a, d), np.float32)

    def same(python_call, c_call):
        kind, message = python_error(python_call)
        with pytest.raises(CapiError) as e:
            c_call()
        assert (e.value.status, e.value.message) == (status_of(kind), message)
        return message

    try:
        assert "before it was reset" in same(lambda: pool.send(zeros(1), [0]), lambda: lib.send(handle, zeros(1), [0]))
        assert "no worlds in flight" in same(pool.recv, lambda: lib.recv(handle))
        pool.reset_all(seed=4)
        lib.reset(handle, 4)
        for ids in ([5], [0, -1], [1, 1], [], [0, 1, 2, 3, 4, 0], [2, 0, 2]):
            rows = max(len(ids), 1)
            same(lambda: pool.send(zeros(rows), ids), lambda: lib.send(handle, zeros(rows), ids))
        bad = zeros(2)
        bad[1, 0, 2] = np.nan
        assert "finite" in same(lambda: pool.send(bad, [0, 1]), lambda: lib.send(handle, bad, [0, 1]))
        bad[1, 0, 2] = -np.inf
        same(lambda: pool.send(bad, [0, 1]), lambda: lib.send(handle, bad, [0, 1]))
        # Sizes and pointers (no Python counterpart for NULL: its own words).
        python_message = python_error(lambda: pool.send(zeros(3), [0, 1]))[1]
        with pytest.raises(CapiError) as e:
            lib.send(handle, zeros(3), [0, 1])
        prefix = python_message.split(", got")[0]
        assert e.value.status == "JG_ERR_VALUE" and e.value.message.startswith(prefix + " ("), e.value.message
        ids = np.array([0, 1], np.int32)
        with pytest.raises(CapiError, match=r"actions should have shape \(2, 1, \d+\) \(\d+ float32 values\), "
                                            r"got NULL") as e:
            lib.call("jg_pool_send", handle, None, 2 * d, ids.ctypes.data, 2)
        assert e.value.status == "JG_ERR_VALUE"
        with pytest.raises(CapiError, match="env_ids should not be NULL") as e:
            lib.call("jg_pool_send", handle, zeros(2).ctypes.data, 2 * d, None, 2)
        assert e.value.status == "JG_ERR_NULL"
        with pytest.raises(CapiError, match="count should not be NULL") as e:
            lib.call("jg_pool_in_flight", handle, None)
        assert e.value.status == "JG_ERR_NULL"
        with pytest.raises(CapiError, match=r"env_ids should hold 1 to 5 distinct world ids, got -1"):
            lib.call("jg_pool_send", handle, zeros(1).ctypes.data, d, ids.ctypes.data, ctypes.c_size_t(-1))
        assert lib.in_flight(handle) == pool.in_flight == 0  # nothing was half-sent
        # Worlds in flight: no second send, no step, no reset_one of them, no buffer switch.
        pool.send(zeros(2), [0, 1])
        lib.send(handle, zeros(2), [0, 1])
        assert "world 1, which is still in flight" in same(lambda: pool.send(zeros(2), [2, 1]),
                                                           lambda: lib.send(handle, zeros(2), [2, 1]))
        assert lib.in_flight(handle) == pool.in_flight == 2  # world 2 was not sent either
        five = np.full((5, a, d), 0.5, np.float32)
        assert "2 worlds are in flight" in same(lambda: pool.step_all(five), lambda: lib.step(handle, five))
        assert "which is in flight" in same(lambda: pool.reset_one(1), lambda: lib.reset_one(handle, 1))
        with pytest.raises(CapiError, match=r"jg_pool_use_buffers\(\) called while 2 worlds are in flight") as e:
            lib.call("jg_pool_use_buffers", handle, None, None)
        assert e.value.status == "JG_ERR_STATE"
        # The refused step did not touch the actions of the worlds in flight.
        recv_both_and_compare(lib, pool, handle)
        pool.send(zeros(1), [4])
        lib.send(handle, zeros(1), [4])
        assert "only 1 are in flight" in same(pool.recv, lambda: lib.recv(handle))
        pool.send(np.full((1, a, d), 0.3, np.float32), [2])
        lib.send(handle, np.full((1, a, d), 0.3, np.float32), [2])
        recv_both_and_compare(lib, pool, handle)
        # reset_all drops the worlds in flight; then everything steps as before.
        pool.send(zeros(2), [0, 3])
        lib.send(handle, zeros(2), [0, 3])
        pool.reset_all(seed=1)
        lib.reset(handle, 1)
        assert lib.in_flight(handle) == pool.in_flight == 0
        pool.step_all(five)
        lib.step(handle, five)
        assert_same_buffers(pool, lib.buffers(handle), "step after the refused calls")
        # After close: every async call on the stale handle.
        pool.send(zeros(2), [0, 3])
        lib.send(handle, zeros(2), [0, 3])
        pool.close()
        lib.close(handle)  # with work in flight: no error
        for python_call, c_call in [(pool.recv, lambda: lib.recv(handle)),
                                    (lambda: pool.send(zeros(1), [0]), lambda: lib.send(handle, zeros(1), [0])),
                                    (pool.async_reset, lambda: lib.async_reset(handle)),
                                    (lambda: pool.in_flight, lambda: lib.in_flight(handle))]:
            assert "WorldPool is closed" in same(python_call, c_call)
        for name, args in [("jg_pool_batch_buffers", (handle, None, None)),
                           ("jg_pool_use_batch_buffers", (handle, None, 0, None, None))]:
            with pytest.raises(CapiError, match="WorldPool is closed") as e:
                lib.call(name, *args)
            assert e.value.status == "JG_ERR_STATE"
    finally:
        pool.close()
        try:
            lib.close(handle)
        except CapiError:
            pass


def recv_both_and_compare(lib, pool, handle):
    """recv from the Python pool and the C one (2 threads: in any order), and the same rows per world."""
    py_ids = pool.recv()[0].copy()
    py_rows = {name: getattr(pool, python).copy() for name, python in RECV_NAMES.items()}
    c_ids, c_rows = lib.recv(handle)
    assert sorted(py_ids) == sorted(c_ids)
    for k, i in enumerate(c_ids):
        assert world_record(c_rows, k) == world_record(py_rows, py_ids.tolist().index(i)), f"world {i}"


def test_close_with_work_in_flight(lib):
    """Closing (or never closing) with worlds in flight neither crashes nor hangs."""
    for threads in (1, 2):
        handle = lib.create(ASYNC_TASK, 16, num_threads=threads, batch_size=4, frame_skip="50")
        d = lib.dims(handle)
        lib.reset(handle, 0)
        lib.send(handle, np.zeros((16, d.num_agents, d.act_dim), np.float32), np.arange(16))
        lib.close(handle)
        with pytest.raises(CapiError, match="WorldPool is already closed"):
            lib.close(handle)
    done = subprocess.run([sys.executable, "-c", EXIT_IN_FLIGHT, str(lib.path), str(Path(__file__).parent),
                           ASYNC_TASK], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip().endswith("exiting"), done.stdout[-2000:] + done.stderr[-3000:]


EXIT_IN_FLIGHT = r"""
import sys, numpy as np
sys.path.insert(0, sys.argv[2])
from capi import Library
lib = Library(sys.argv[1])
handle = lib.create(sys.argv[3], 32, num_threads=2, batch_size=8, frame_skip="50")
d = lib.dims(handle)
lib.reset(handle, 0)
lib.send(handle, np.zeros((32, d.num_agents, d.act_dim), np.float32), np.arange(32))
print("exiting")  # and the process exits with work in flight, the pool never closed
"""


def test_a_refused_step_leaves_the_sent_actions(lib):
    """step_all while worlds are in flight is refused without writing over
    the actions they were sent with (one thread: they step in recv, after the
    refused call): each world's result is step_all's with the sent actions."""
    sync = _Pools.WorldPool(ASYNC_TASK, 4, num_threads=1)
    handle = lib.create(ASYNC_TASK, 4, num_threads=1, batch_size=4)
    try:
        shape = (4, sync.num_agents, sync.act_dim)
        sent = np.random.default_rng(0).uniform(sync.action_low, sync.action_high, shape).astype(np.float32)
        sync.reset_all(seed=2)
        sync.step_all(sent)
        lib.reset(handle, 2)
        lib.send(handle, sent, np.arange(4))
        with pytest.raises(CapiError, match="in flight"):
            lib.step(handle, np.full(shape, 0.9, np.float32))
        ids, rows = lib.recv(handle)
        assert ids.tolist() == [0, 1, 2, 3]
        assert rows["obs"].tobytes() == sync.obs.tobytes() and rows["reward"].tobytes() == sync.rewards.tobytes()
    finally:
        lib.close(handle)
        sync.close()


def test_another_thread_during_send_and_recv_gets_busy_or_state_never_a_crash(lib):
    """One thread drives send/recv while another queries and tries to step
    the same pool: each call of the other thread either runs (in_flight,
    batch_buffers) or is refused (JG_ERR_BUSY, or JG_ERR_STATE for a step
    with work in flight); the driver retries on JG_ERR_BUSY and loses nothing."""
    handle = lib.create(ASYNC_TASK, 8, num_threads=2, batch_size=4)
    d = lib.dims(handle)
    actions = np.zeros((4, d.num_agents, d.act_dim), np.float32)
    everything = np.zeros((8, d.num_agents, d.act_dim), np.float32)
    seen: list[str] = []
    received = []
    done = threading.Event()

    def retry(call):
        while True:
            try:
                return call()
            except CapiError as error:
                assert error.status == "JG_ERR_BUSY", error

    def drive():
        try:
            retry(lambda: lib.async_reset(handle, 0))
            for _ in range(60):
                ids = retry(lambda: lib.recv(handle))[0].copy()
                received.extend(ids.tolist())
                retry(lambda: lib.send(handle, actions, ids))
        finally:
            done.set()

    def meddle():
        while not done.is_set():
            for call in (lambda: lib.in_flight(handle), lambda: lib.batch_buffers(handle),
                         lambda: lib.step(handle, everything)):
                try:
                    call()
                    seen.append("JG_OK")
                except CapiError as error:
                    seen.append(error.status)

    threads = [threading.Thread(target=drive), threading.Thread(target=meddle)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    try:
        assert len(received) == 60 * 4 and lib.in_flight(handle) == 8
        # (which of them each call met depends on timing: any is fine)
        assert set(seen) <= {"JG_OK", "JG_ERR_BUSY", "JG_ERR_STATE"}, set(seen)
    finally:
        lib.close(handle)


def test_mujoco_errors_arrive_through_recv_in_pythons_words(lib, tmp_path):
    from test_mujoco_errors import small_memory_ant

    model = str(small_memory_ant(tmp_path))
    actions = np.ones((4, 1, 8), np.float32)
    ids = np.arange(4, dtype=np.int32)

    def python_messages() -> list[str]:
        messages = []
        with _Pools.WorldPool("ant", 4, num_threads=1, batch_size=4, xml_file=model) as pool:
            pool.async_reset(seed=0)
            pool.recv()
            for _ in range(200):
                pool.send(actions, ids)
                try:
                    pool.recv()
                except MemoryError as error:
                    messages.append(str(error))
                    break
            assert pool.in_flight == 0
            messages.append(python_error(lambda: pool.send(actions, ids))[1])
        return messages

    expected = python_messages()
    assert len(expected) == 2, expected
    handle = lib.create("ant", 4, num_threads=1, batch_size=4, xml_file=json.dumps(model))
    try:
        lib.async_reset(handle, 0)
        lib.recv(handle)
        got = []
        for _ in range(200):
            lib.send(handle, actions, ids)
            out = ctypes.POINTER(ctypes.c_int32)()
            status = lib.lib.jg_pool_recv(handle, ctypes.byref(out), None)
            if status != 0:
                assert STATUS[status] == "JG_ERR_OUT_OF_MEMORY"
                got.append(lib.error())
                assert sorted(np.ctypeslib.as_array(out, shape=(4,))) == [0, 1, 2, 3]  # received all the same
                break
        assert lib.in_flight(handle) == 0
        with pytest.raises(CapiError) as e:
            lib.send(handle, actions, ids)
        assert e.value.status == "JG_ERR_STATE"
        got.append(e.value.message)
        assert got == expected
        lib.async_reset(handle, 0)  # a reset brings the worlds back
        lib.recv(handle)
        lib.send(handle, np.zeros_like(actions), ids)
        assert np.isfinite(lib.recv(handle)[1]["obs"]).all()
    finally:
        lib.close(handle)


# --- examples: C and Java, same returns as Python ----------------------------------------------


def linear_policy_returns(task: str, num_envs: int, steps: int, seed: int,
                          dtype: str = "float32") -> list[tuple[int, int, int]]:
    """(world, step, return bits) of each finished episode under the examples'
    fixed linear policy, computed with the Python module's pool of that dtype."""
    pool = _Pools.WorldPool(task, num_envs, max_episode_steps=1000, dtype=np.dtype(dtype))
    n, a, od, ad = num_envs, pool.num_agents, pool.obs_dim, pool.act_dim
    w = np.array([[((j * od + k) % 7 - 3) / 10.0 for k in range(od)] for j in range(ad)])
    low, high = pool.action_low.astype(np.float64), pool.action_high.astype(np.float64)
    pool.reset_all(seed=seed)
    returns = np.zeros(n)
    out = []
    for t in range(steps):
        obs = pool.obs.reshape(n * a, od).astype(np.float64)
        acc = np.zeros((n * a, ad))
        for k in range(od):  # the same sums in the same order as the C and Java loops
            acc = acc + w[:, k][None, :] * obs[:, k][:, None]
        actions = np.minimum(np.maximum(acc, low), high).astype(np.float32).reshape(n, a, ad)
        pool.step_all(actions)
        for i in range(n):
            if pool.reset_kind[i] == _core.ResetKind.RESET:
                continue
            returns[i] += float(pool.rewards[i, 0])
            if pool.terminations[i, 0] or pool.truncations[i, 0]:
                out.append((i, t + 1, int(np.float64(returns[i]).view(np.uint64))))
                returns[i] = 0.0
    pool.close()
    return out


def parse_episodes(stdout: str) -> list[tuple[int, int, int]]:
    episodes = []
    for line in stdout.splitlines():
        if line.startswith("episode "):
            fields = dict(item.split("=") for item in line.split()[1:])
            episodes.append((int(fields["world"]), int(fields["step"]), int(fields["bits"], 16)))
    return episodes


def compile_c_example(lib: Library, where: Path, name: str = "rollout") -> Path:
    compiler = shutil.which("cc") or shutil.which("gcc")
    assert compiler, "a C compiler (cc) is needed to build examples/c"
    exe = where / name
    command = [compiler, "-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", "-ffp-contract=off",
               str(ROOT / "examples" / "c" / f"{name}.c"), f"-I{ROOT / 'include'}", f"-L{lib.path.parent}",
               "-ljoltgym_marl", f"-Wl,-rpath,{lib.path.parent}", "-o", str(exe)]
    built = subprocess.run(command, capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    return exe


def test_c_example_returns_are_pythons(lib, tmp_path):
    exe = compile_c_example(lib, tmp_path)
    assert "usage: rollout" in subprocess.run([str(exe), "--help"], capture_output=True, text=True).stdout
    # A truncation at 1000 steps; 1010 steps include the next episode's start.
    ran = subprocess.run([str(exe), "half_cheetah", "8", "1010", "11", "2"], capture_output=True, text=True,
                         timeout=600)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "env-steps/s:" in ran.stdout
    episodes = parse_episodes(ran.stdout)
    assert len(episodes) == 8
    assert episodes == linear_policy_returns("half_cheetah", 8, 1010, 11)
    # Early terminations (Hopper falls): episodes of different lengths.
    ran = subprocess.run([str(exe), "hopper", "4", "300", "3", "1"], capture_output=True, text=True, timeout=600)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert parse_episodes(ran.stdout) == linear_policy_returns("hopper", 4, 300, 3)
    # The float64 layout (obs64, reward64): Python's float64 pool's returns, not the float32 ones.
    ran = subprocess.run([str(exe), "hopper", "4", "300", "3", "1", "float64"], capture_output=True, text=True,
                         timeout=600)
    assert ran.returncode == 0 and ", float64" in ran.stdout, ran.stdout + ran.stderr
    wide = parse_episodes(ran.stdout)
    assert wide == linear_policy_returns("hopper", 4, 300, 3, "float64")
    assert wide != linear_policy_returns("hopper", 4, 300, 3)
    ran = subprocess.run([str(exe), "hopper", "1", "1", "0", "1", "float16"], capture_output=True, text=True)
    assert ran.returncode == 1 and "dtype should be 'float32' (or NULL) or 'float64', got 'float16'" in ran.stderr


def test_c_async_example_returns_are_pythons(lib, tmp_path):
    """examples/c/async_rollout.c: the same episodes and returns as the
    synchronous loop (in the order worlds finish)."""
    exe = compile_c_example(lib, tmp_path, "async_rollout")
    assert "usage: async_rollout" in subprocess.run([str(exe), "--help"], capture_output=True, text=True).stdout
    for args in (["half_cheetah", "8", "1010", "11", "2", "3"], ["hopper", "4", "300", "3", "1", "2"],
                 ["hopper", "5", "300", "3", "2", "1"], ["hopper", "16", "200", "3", "2", "7"]):
        ran = subprocess.run([str(exe), *args], capture_output=True, text=True, timeout=600)
        assert ran.returncode == 0, ran.stdout + ran.stderr
        assert f"batch {args[-1]}" in ran.stdout and "env-steps/s:" in ran.stdout
        episodes = parse_episodes(ran.stdout)
        assert episodes, ran.stdout
        assert sorted(episodes) == sorted(linear_policy_returns(args[0], int(args[1]), int(args[2]), int(args[3])))
    ran = subprocess.run([str(exe), "hopper", "4", "10", "0", "1", "5"], capture_output=True, text=True)
    assert ran.returncode == 1 and "batch_size should be in [1, 4], got 5" in ran.stderr


def java_tools() -> tuple[str, str]:
    java, javac = shutil.which("java"), shutil.which("javac")
    if not (java and javac and JNA_JAR.exists()):
        pytest.fail("the Java example needs a JDK and JNA: apt-get install -y openjdk-17-jdk-headless libjna-java "
                    "(.ci/run installs them)")
    return java, javac


def compile_java_example(where: Path) -> tuple[str, Path]:
    java, javac = java_tools()
    classes = where / "classes"
    built = subprocess.run([javac, "-Xlint:all", "-Werror", "-cp", str(JNA_JAR), "-d", str(classes),
                            str(ROOT / "examples" / "java" / "Rollout.java")], capture_output=True, text=True)
    assert built.returncode == 0, built.stdout + built.stderr
    return java, classes


def run_java(java: str, classes: Path, lib: Library, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([java, "-cp", f"{JNA_JAR}:{classes}", f"-Djna.library.path={lib.path.parent}", "Rollout",
                           *args], capture_output=True, text=True, timeout=900)


def test_java_example_returns_are_pythons(lib, tmp_path):
    java, classes = compile_java_example(tmp_path)
    assert "usage: Rollout" in run_java(java, classes, lib, "--help").stdout
    ran = run_java(java, classes, lib, "half_cheetah", "64", "1000", "0")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "64 worlds" in ran.stdout and "env-steps/s:" in ran.stdout
    episodes = parse_episodes(ran.stdout)
    assert len(episodes) == 64
    assert episodes == linear_policy_returns("half_cheetah", 64, 1000, 0)
    ran = run_java(java, classes, lib, "hopper", "4", "300", "3", "1")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert parse_episodes(ran.stdout) == linear_policy_returns("hopper", 4, 300, 3)


# --- under the sanitizers ---------------------------------------------------------------------


@pytest.mark.slow
def test_error_paths_under_asan_and_ubsan(tmp_path):
    """The C error-path program against the library built with ASan + UBSan
    (leak checking on), then this file's bad-input tests (the asynchronous
    calls' too) through ctypes against that library."""
    from sanitizers import build, compiler_runtime, preload_for_python, sanitizer_reports

    folder = build("joltgym_marl")
    library = folder / "libjoltgym_marl.so"
    assert b"__asan_init" in library.read_bytes()
    compiler = shutil.which("cc") or shutil.which("gcc")
    exe = tmp_path / "capi_error_paths"
    built = subprocess.run([compiler, "-std=c11", "-g", "-O1", "-fsanitize=address,undefined",
                            "-fno-sanitize-recover=undefined", "-fno-omit-frame-pointer",
                            str(ROOT / "src" / "capi" / "tests" / "capi_error_paths.c"), f"-I{ROOT / 'include'}",
                            f"-L{folder}", "-ljoltgym_marl", f"-Wl,-rpath,{folder}", "-lpthread", "-lm",
                            "-o", str(exe)], capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=1", UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1")
    ran = subprocess.run([str(exe)], capture_output=True, text=True, timeout=600, env=env)
    output = ran.stdout + ran.stderr
    assert not sanitizer_reports(output), output[-6000:]
    assert ran.returncode == 0 and "0 failure(s)" in ran.stdout, output[-6000:]
    assert compiler_runtime("libasan.so").exists()

    selected = ["test_bad_keyword_arguments_say_what_python_says", "test_bad_pool_settings_say_what_python_says",
                "test_bad_steps_say_what_python_says", "test_null_unknown_and_stale_handles", "test_null_pointers",
                "test_two_threads_in_one_pool_get_busy_never_a_crash", "test_close_while_another_thread_steps",
                "test_caller_buffers_receive_the_results", "test_rollouts_are_bit_identical_to_world_pool",
                # asynchronous stepping
                "test_bad_async_calls_say_what_python_says", "test_bad_batch_sizes_say_what_python_says",
                "test_batch_buffers_stay_put_and_can_be_the_callers", "test_close_with_work_in_flight",
                "test_a_refused_step_leaves_the_sent_actions",
                "test_another_thread_during_send_and_recv_gets_busy_or_state_never_a_crash",
                "test_async_rollouts_are_bit_identical_to_python_and_to_step"]
    env = dict(os.environ, JOLTGYM_CAPI_LIBRARY=str(library), LD_PRELOAD=preload_for_python(),
               ASAN_OPTIONS="detect_leaks=0", UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1",
               PYTHONDONTWRITEBYTECODE="1")
    command = [sys.executable, "-m", "pytest", "-q", "-n", "0", "--capture=sys", "-p", "no:cacheprovider",
               "--rootdir", str(ROOT), "-c", str(ROOT / "pyproject.toml"), str(Path(__file__)),
               "-k", " or ".join(selected)]
    ran = subprocess.run(command, capture_output=True, text=True, timeout=1800, env=env, cwd=ROOT)
    output = ran.stdout + ran.stderr
    assert not sanitizer_reports(output), output[-8000:]
    assert ran.returncode == 0, output[-8000:]
    assert " passed" in ran.stdout and " failed" not in ran.stdout, output[-3000:]


TWO_COPIES = r"""
import sys, numpy as np
sys.path.insert(0, sys.argv[2])
from capi import Library
from joltgym_marl import _core
import mujoco
lib = Library(sys.argv[1])
pool = _core.WorldPool("half_cheetah", 4, num_threads=2)
handle = lib.create("half_cheetah", 4, num_threads=2)
pool.reset_all(seed=0)
lib.reset(handle, seed=0)
actions = np.zeros((4, 6), dtype=np.float32)
for _ in range(5):  # each copy's shield sees the other's forwarder in turn
    pool.step_all(actions)
    lib.step(handle, actions.reshape(4, 1, 6))
model = mujoco.MjModel.from_xml_string("<mujoco><worldbody><body><freejoint/><geom size='.1'/></body></worldbody></mujoco>")
data = mujoco.MjData(model)
for _ in range(10):
    mujoco.mj_forward(model, data)
    mujoco.mj_step(model, data)
assert data.timer[mujoco.mjtTimer.mjTIMER_STEP].duration >= 0
lib.close(handle)
print("ok")
"""


def test_two_copies_of_the_core_and_mujoco_share_the_timer_without_a_loop(lib):
    """The Python extension and libjoltgym_marl in one process each keep
    MuJoCo's timer off their threads; before the fix each forwarded to the
    other's forwarder and mujoco's own mj_forward spun forever."""
    done = subprocess.run([sys.executable, "-c", TWO_COPIES, str(lib.path), str(Path(__file__).parent)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip().endswith("ok"), done.stdout[-2000:] + done.stderr[-3000:]
