"""The C API (include/joltgym_marl.h) under hostile use (issue 25): a fork
with worlds in flight, JSON numbers, unbounded input echoed in messages, pools
that cannot fit in memory. The library is built as tests/test_capi.py builds
it (tests/capi.py); risky cases run in a subprocess with a timeout."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from capi import CapiError, Library, build_library

TESTS = Path(__file__).resolve().parent


@pytest.fixture(scope="module")
def library_path() -> Path:
    given = os.environ.get("JOLTGYM_CAPI_LIBRARY")
    return Path(given) if given else build_library() / "libjoltgym_marl.so"


@pytest.fixture(scope="module")
def lib(library_path) -> Library:
    return Library(library_path)


def run_with_library(code: str, library_path: Path, timeout: float = 120) -> subprocess.CompletedProcess:
    script = "import sys\nsys.path.insert(0, %r)\nfrom capi import CapiError, Library\nlib = Library(%r)\n" % (
        str(TESTS), str(library_path)) + textwrap.dedent(code)
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=timeout)


def test_recv_in_a_forked_child_with_worlds_in_flight_is_a_state_error(library_path):
    proc = run_with_library("""
        import os
        import numpy as np
        pool = lib.create("humanoid", 8, num_threads=2)
        lib.reset(pool, seed=0)
        lib.send(pool, np.zeros((8, 1, 17), np.float32), list(range(8)))
        child = os.fork()
        if child == 0:
            try:
                lib.recv(pool)
            except CapiError as error:
                ok = error.status == "JG_ERR_STATE" and "forked" in error.message
                print("child:", error.status, error.message, flush=True)
                # The pool is usable again after a reset, in the child.
                lib.reset(pool, seed=1)
                lib.step(pool, np.zeros((8, 1, 17), np.float32))
                os._exit(0 if ok else 3)
            os._exit(4)
        _, status = os.waitpid(child, 0)
        print("child exit", os.waitstatus_to_exitcode(status))
        ids, _ = lib.recv(pool)  # the parent still receives its worlds
        print("parent got", sorted(ids.tolist()))
        lib.close(pool)
    """, library_path, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "child exit 0" in proc.stdout and "JG_ERR_STATE" in proc.stdout, proc.stdout + proc.stderr
    assert "parent got [0, 1, 2, 3, 4, 5, 6, 7]" in proc.stdout, proc.stdout


@pytest.mark.parametrize("document", ['{"frame_skip": 01}', '{"frame_skip": -01}', '{"frame_skip": 00}',
                                      '{"ctrl_cost_weight": 01.5}'])
def test_json_numbers_with_leading_zeros_are_refused(lib, document):
    with pytest.raises(CapiError) as caught:
        lib.create_json("half_cheetah", 1, document)
    assert caught.value.status == "JG_ERR_VALUE" and "leading zero" in caught.value.message
    pool = lib.create_json("half_cheetah", 1, '{"frame_skip": 0.5e1}'.replace("0.5e1", "5"))
    lib.close(pool)


def test_messages_quote_unbounded_input_cut(lib):
    long_path = "/" + "p" * (20 << 20) + ".xml"
    for kwargs_json in ('{"xml_file": "%s"}' % long_path, '{"%s": 1}' % ("k" * (1 << 20)),
                        '{"ctrl_cost_weight": "%s"}' % ("v" * (1 << 20))):
        with pytest.raises(CapiError) as caught:
            lib.create_json("half_cheetah", 1, kwargs_json)
        assert len(caught.value.message) < 5000, (caught.value.status, len(caught.value.message))
        assert "bytes cut" in caught.value.message
    with pytest.raises(CapiError) as caught:
        lib.create_json("half_cheetah", 1, '{"frame_skip": 2000}')
    assert "frame_skip should be in [1, 1000], got 2000" in caught.value.message


def test_a_nul_in_a_keyword_name_is_shown_not_cut(lib):
    # '{"\\u0000": 1}' gave "got an unexpected keyword argument '" and nothing more.
    with pytest.raises(CapiError) as caught:
        lib.create_json("half_cheetah", 1, '{"a\\u0000b": 1}')
    assert caught.value.status == "JG_ERR_TYPE", caught.value.status
    assert "unexpected keyword argument 'a\\x00b'; allowed: xml_file" in caught.value.message, caught.value.message


def test_a_pool_that_cannot_fit_is_refused_with_the_figure(library_path):
    proc = run_with_library("""
        import resource
        resource.setrlimit(resource.RLIMIT_AS, (2 * 1024**3, resource.RLIM_INFINITY))
        try:
            lib.create("humanoid", 2**20)
        except CapiError as error:
            print(error.status, error.message)
        pool = lib.create("humanoid", 64)
        lib.reset(pool, seed=0)
        lib.close(pool)
        print("small ok")
    """, library_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "JG_ERR_OUT_OF_MEMORY num_envs=1048576 needs about" in proc.stdout and "small ok" in proc.stdout, proc.stdout


def test_a_fork_while_another_thread_is_inside_a_pool(library_path):
    """A parent thread inside jg_pool_step at the fork never leaves it in the
    child: the child's calls on that pool are not busy, its close does not
    wait forever, and it can make new pools (the handle table's lock too)."""
    proc = run_with_library("""
        import os, threading, time, warnings
        import numpy as np
        warnings.simplefilter("ignore", DeprecationWarning)  # fork() with threads: what this test does
        pool = lib.create("humanoid", 32, num_threads=1, frame_skip="1000")
        lib.reset(pool, seed=0)
        actions = np.zeros((32, 1, 17), np.float32)
        inside = threading.Event()
        def long_step():
            inside.set()
            lib.step(pool, actions)  # seconds: 32 worlds x 1000 MuJoCo steps on one thread
        stepper = threading.Thread(target=long_step)
        stepper.start()
        inside.wait()
        time.sleep(0.3)
        try:
            lib.step(pool, actions)
        except CapiError as error:
            print("parent meanwhile:", error.status, flush=True)
        child = os.fork()
        if child == 0:
            try:
                lib.reset(pool, seed=1)
                lib.step(pool, np.zeros((32, 1, 17), np.float32))
                other = lib.create("hopper", 2)
                lib.reset(other, seed=0)
                lib.close(other)
                lib.close(pool)
                print("child ok", flush=True)
                os._exit(0)
            except BaseException as error:
                print("child failed:", error, flush=True)
                os._exit(3)
        _, status = os.waitpid(child, 0)
        print("child exit", os.waitstatus_to_exitcode(status), flush=True)
        stepper.join()
        lib.step(pool, actions)  # the parent's pool is fine
        lib.close(pool)
        print("parent ok")
    """, library_path, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "parent meanwhile: JG_ERR_BUSY" in proc.stdout, proc.stdout  # the fork happened inside the call
    assert "child ok" in proc.stdout and "child exit 0" in proc.stdout, proc.stdout + proc.stderr
    assert "parent ok" in proc.stdout, proc.stdout


@pytest.mark.parametrize("task", ["reacher", "pusher", "half_cheetah"])
def test_engine_mujoco_is_taken_for_every_task_as_python_takes_it(lib, task):
    """The C API refused engine="mujoco" for the MuJoCo-only tasks (Reacher,
    Pusher) as an unknown keyword while Python accepted it; an engine they do
    not run on, or one that is not a string, is refused as Python refuses it."""
    from joltgym_marl import WorldPool

    pool = lib.create_json(task, 1, '{"engine": "mujoco"}')
    lib.close(pool)
    with WorldPool(task, 1, num_threads=1, engine="mujoco"):
        pass
    for document, status, message in (('{"engine": 3}', "JG_ERR_TYPE", "engine should be a str, got int 3"),
                                      ('{"engine": "bullet"}', "JG_ERR_VALUE",
                                       "engine should be 'mujoco' or 'jolt', got 'bullet'")):
        with pytest.raises(CapiError) as caught:
            lib.create_json(task, 1, document)
        assert caught.value.status == status and message in caught.value.message, caught.value.message
    if task != "half_cheetah":
        with pytest.raises(CapiError) as caught:
            lib.create_json(task, 1, '{"engine": "jolt"}')
        assert f"task '{task}' does not run on engine 'jolt'" in caught.value.message, caught.value.message
