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
from capi import BUILD, ROOT, BufferSizes, Buffers, CapiError, InfoField, Library, ParamInfo, TaskInfo, build_library
from conftest import GAME_NAMES, SINGLE_TASKS, non_default_kwargs, spec_of

from joltgym_marl import _core
from joltgym_marl.registry import TASKS

ALL_TASKS = SINGLE_TASKS + GAME_NAMES
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
    assert lib.lib.jg_abi_version() == 1
    header = (ROOT / "include" / "joltgym_marl.h").read_text()
    assert "#define JG_ABI_VERSION 1" in header
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


def _json_number(x: float):
    return ("inf" if x > 0 else "-inf") if math.isinf(x) else x


# --- pools: dims, bounds, info layout -----------------------------------------------------


@pytest.mark.parametrize("task", ALL_TASKS)
def test_dims_bounds_and_info_layout_are_pythons(lib, task):
    pool = _core.WorldPool(task, 3, num_threads=1)
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
@pytest.mark.parametrize(("seed", "threads", "mode"), [(0, 1, "next_step"), (12345, 2, "same_step")])
def test_rollouts_are_bit_identical_to_world_pool(lib, task, seed, threads, mode):
    num_envs, steps, limit = 5, 40, 15  # several episodes end (truncation) and restart
    pool = _core.WorldPool(task, num_envs, num_threads=1, max_episode_steps=limit, autoreset_mode=mode)
    handle = lib.create(task, num_envs, num_threads=threads, max_episode_steps=limit, autoreset_mode=mode)
    try:
        views = lib.buffers(handle)
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


@pytest.mark.parametrize("task", ALL_TASKS)
def test_keyword_arguments_as_strings_and_json_are_pythons(lib, task):
    kwargs = non_default_kwargs(spec_of(task))
    pool = _core.WorldPool(task, 2, num_threads=1, **kwargs)
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
    pool = _core.WorldPool("hopper", 3, num_threads=1, max_episode_steps=4, autoreset_mode="same_step")
    try:
        lib.reset(handle, 5)
        pool.reset_all(seed=5)
        own = lib.buffers(handle)
        mine = {name: np.full_like(array, 7) for name, array in own.items()}
        b = Buffers(**{name: array.ctypes.data_as(kind)
                       for (name, kind), array in zip(Buffers._fields_, mine.values())})
        sizes = BufferSizes(**{name: array.size for name, array in mine.items()})
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
                         (ValueError, "JG_ERR_VALUE"), (RuntimeError, "JG_ERR_STATE")):
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


@pytest.mark.parametrize("task", ALL_TASKS)
def test_bad_keyword_arguments_say_what_python_says(lib, task):
    for kwargs in bad_kwargs(task):
        kind, message = python_error(lambda: _core.WorldPool(task, 2, **kwargs))
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
        kind, message = python_error(lambda: _core.WorldPool("ant", args["num_envs"], **config))
        with pytest.raises(CapiError) as e:
            lib.create("ant", args["num_envs"], **config)
        assert (e.value.status, e.value.message) == (status_of(kind), message)
    kind, message = python_error(lambda: _core.WorldPool("no_such_task", 2))
    with pytest.raises(CapiError) as e:
        lib.create("no_such_task", 2)
    assert (e.value.status, e.value.message) == ("JG_ERR_VALUE", message)


def test_bad_steps_say_what_python_says(lib):
    pool = _core.WorldPool("half_cheetah", 2, num_threads=1)
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
    with _core.WorldPool("half_cheetah", 3, num_threads=2, xml_file=str(model)) as pool:
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
        with _core.WorldPool("ant", 4, num_threads=1, xml_file=model) as pool:
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


# --- examples: C and Java, same returns as Python ----------------------------------------------


def linear_policy_returns(task: str, num_envs: int, steps: int, seed: int) -> list[tuple[int, int, int]]:
    """(world, step, return bits) of each finished episode under the examples'
    fixed linear policy, computed with the Python module."""
    pool = _core.WorldPool(task, num_envs, max_episode_steps=1000)
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


def compile_c_example(lib: Library, where: Path) -> Path:
    compiler = shutil.which("cc") or shutil.which("gcc")
    assert compiler, "a C compiler (cc) is needed to build examples/c"
    exe = where / "rollout"
    command = [compiler, "-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", "-ffp-contract=off",
               str(ROOT / "examples" / "c" / "rollout.c"), f"-I{ROOT / 'include'}", f"-L{lib.path.parent}",
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
    (leak checking on), then this file's bad-input tests through ctypes
    against that library."""
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
                "test_caller_buffers_receive_the_results", "test_rollouts_are_bit_identical_to_world_pool"]
    env = dict(os.environ, JOLTGYM_CAPI_LIBRARY=str(library), LD_PRELOAD=preload_for_python(),
               ASAN_OPTIONS="detect_leaks=0", UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1",
               PYTHONDONTWRITEBYTECODE="1")
    command = [sys.executable, "-m", "pytest", "-q", "--capture=sys", "-p", "no:cacheprovider",
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
