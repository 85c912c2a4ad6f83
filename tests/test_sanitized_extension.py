"""The Python extension itself under AddressSanitizer + UBSan.

tests/test_native.py runs the C++ core's own tests under the sanitizers; this
runs Python test files against a `joltgym_marl._core` built with
-fsanitize=address,undefined, so that the bindings (argument conversion,
buffers, the pool's threads, lifecycle) are checked too, under the inputs
that the bad-input, entry-point, fuzz, lifecycle and fork tests give them.

How:

* `_core` is built in build/sanitize (tests/sanitizers.py, shared with
  tests/test_native.py) and copied, with a copy of the `joltgym_marl/`
  sources, into a temporary package folder; PYTHONPATH points there and the
  tests run from another folder, so that the sanitized extension is the one
  imported (the subprocess checks `joltgym_marl._core.__file__` before it
  runs pytest);
* the interpreter is not built with ASan, so ASan's runtime must be loaded
  first: `LD_PRELOAD=$(g++ -print-file-name=libasan.so)`, followed by
  libstdc++ (see tests/sanitizers.py, preload_for_python);
* pytest runs with --capture=sys: a sanitizer writes its report to file
  descriptor 2 and exits, which fd-level capture would swallow;
* `ASAN_OPTIONS=detect_leaks=0`: CPython does not free everything at exit
  (interned objects, static types, module state: leaks by design), so
  LeakSanitizer would report CPython, NumPy and every extension rather than
  us. Heap overflows, use-after-free and double frees are still reported;
  leaks of the C++ core are checked by test_native.py (detect_leaks=1);
* `UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1` (the build also has
  -fno-sanitize-recover=undefined): any undefined behaviour stops the run;
* the test fails on a non-zero exit or on any sanitizer report in the output
  (the tests that start their own interpreters inherit the environment, so
  those run sanitized too and fail on a report).

The test files: SUITES, plus those matching OPTIONAL_SUITES when present
(the model fuzz, lifecycle and fork tests), all of each file.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from sanitizers import ROOT, build, preload_for_python, sanitizer_reports

TESTS = ROOT / "tests"
# Bad input at every entry point; the pool's threads, buffers and
# auto-reset; the PettingZoo envs (AEC staging). About 1.5 minutes in all
# under ASan on two cores, after the build.
SUITES = ["test_bad_input.py", "test_entry_points.py", "test_world_pool.py", "test_pettingzoo.py",
          # Hostile use of the newer surfaces: pools dropped in flight, rendering
          # from threads, two threads on one Gymnasium env (step, do_simulation,
          # reset_model, reset, set_state racing), corrupt model indices,
          # signals, lying ints, the vector envs; and the SB3
          # adapters (the single-agent VecEnv and the agent rows).
          "test_hostile_use.py", "test_sb3_vec_env.py", "test_agent_vector_env.py",
          # The Jolt engine under its own asserts: every Jolt task, bad input and
          # hostile states (a world blowing up must end its episode, not abort).
          "test_jolt.py"]
# Run with the RLlib environment's interpreter (.venv-rllib, the same Python
# version, so the same sanitized extension loads): the RLlib adapter's batched
# env under hostile use (no Ray cluster is started).
RLLIB_SUITES = ["rllib/test_hostile_rllib.py"]
RLLIB_PYTHON = ROOT / ".venv-rllib" / "bin" / "python"
# Picked up when present: the model fuzz, lifecycle and fork tests (the
# pool's fork, exit, buffer and thread tests are in test_pool_robustness.py;
# MuJoCo's errors in test_mujoco_errors.py; async send/recv, with its
# lock-free queues, in test_async.py).
OPTIONAL_SUITES = ["test_*fuzz*.py", "test_*lifecycle*.py", "test_*fork*.py",
                   "test_pool_robustness.py", "test_mujoco_errors.py", "test_async.py"]

# Run in the subprocess: check that the sanitized extension is the one
# imported, then run pytest with the remaining arguments.
BOOT = textwrap.dedent("""
    import sys
    from pathlib import Path
    import joltgym_marl
    import joltgym_marl._core as core
    expected = Path(sys.argv[1])
    if Path(joltgym_marl.__file__).parent != expected.parent:
        sys.exit(f"joltgym_marl was imported from {joltgym_marl.__file__}, not from {expected.parent}")
    if Path(core.__file__) != expected:
        sys.exit(f"joltgym_marl._core is {core.__file__}, not the sanitized {expected}")
    print("sanitized extension:", core.__file__, flush=True)
    import pytest
    sys.exit(pytest.main(sys.argv[2:]))
""")


DOUBLE_FREE = textwrap.dedent("""
    import ctypes
    libc = ctypes.CDLL(None)
    libc.malloc.restype = ctypes.c_void_p
    libc.free.argtypes = [ctypes.c_void_p]
    pointer = libc.malloc(16)
    libc.free(pointer)
    libc.free(pointer)
""")


def selected_suites() -> list[Path]:
    files = [TESTS / name for name in SUITES]
    for pattern in OPTIONAL_SUITES:
        files += [path for path in sorted(TESTS.glob(pattern)) if path not in files]
    return files


def sanitized_package(extension: Path, where: Path) -> Path:
    """A folder with `joltgym_marl/` (the sources, and the sanitized extension
    instead of any other) and the assets beside it; returns the extension's copy."""
    package = where / "joltgym_marl"
    shutil.copytree(ROOT / "joltgym_marl", package, ignore=shutil.ignore_patterns("*.so", "*.pyd", "__pycache__"))
    (where / "assets").symlink_to(ROOT / "assets", target_is_directory=True)
    copy = package / extension.name
    shutil.copy2(extension, copy)
    return copy


@pytest.mark.slow
def test_python_suites_against_the_extension_built_under_asan_and_ubsan(tmp_path):
    folder = build("_core")
    extensions = sorted(folder.glob("_core*.so"))
    assert len(extensions) == 1, extensions
    site = tmp_path / "site"
    site.mkdir()
    extension = sanitized_package(extensions[0], site)
    data = extension.read_bytes()
    assert b"__asan_init" in data and b"__ubsan_handle" in data, f"{extension} is not instrumented"
    env = dict(os.environ, PYTHONPATH=str(site), LD_PRELOAD=preload_for_python(), ASAN_OPTIONS="detect_leaks=0",
               UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1", PYTHONDONTWRITEBYTECODE="1")
    # The set-up reports a memory error: a double free through libc, which
    # ASan intercepts in the whole process.
    freed = subprocess.run([sys.executable, "-c", DOUBLE_FREE], env=env, capture_output=True, text=True, timeout=60)
    assert freed.returncode != 0 and "attempting double-free" in freed.stderr, freed.stdout + freed.stderr
    assert sanitizer_reports(freed.stderr)
    # The build has Jolt, checking its own asserts (the PettingZoo and
    # bad-input suites step Jolt worlds under them).
    jolt = subprocess.run([sys.executable, "-c", "import joltgym_marl._core as c; print(c.jolt_available(), c.jolt_asserts())"],
                          cwd=site, env=env, capture_output=True, text=True, timeout=120)
    assert jolt.stdout.split() == ["True", "True"], jolt.stdout + jolt.stderr
    suites = selected_suites()
    # -n 0: in this process, which BOOT set up (the suite's addopts ask pytest-xdist for workers).
    command = [sys.executable, "-c", BOOT, str(extension), "-q", "-n", "0", "--capture=sys", "-p", "no:cacheprovider",
               "--rootdir", str(ROOT), "-c", str(ROOT / "pyproject.toml"), *map(str, suites)]
    # From a folder of its own: run from the clone's root, Python would import
    # the source folder's joltgym_marl (and whatever extension it has) first.
    workdir = tmp_path / "run"
    workdir.mkdir()
    started = time.monotonic()
    ran = subprocess.run(command, cwd=workdir, env=env, capture_output=True, text=True, timeout=1800)
    elapsed = time.monotonic() - started
    output = ran.stdout + ran.stderr
    summary = f"{[s.name for s in suites]} under ASan+UBSan: exit {ran.returncode} after {elapsed:.0f} s\n"
    assert f"sanitized extension: {extension}" in ran.stdout, summary + output[-6000:]
    reports = sanitizer_reports(output)
    assert not reports, summary + "\n".join(reports[:20]) + "\n" + output[-8000:]
    assert ran.returncode == 0, summary + output[-8000:]
    print(summary + ran.stdout.strip().splitlines()[-1])

    # The RLlib adapter, with the RLlib environment's interpreter.
    if not RLLIB_PYTHON.exists():
        pytest.fail(f"{RLLIB_PYTHON} is missing: run the README's set-up command 2, which makes .venv-rllib")
    command = [str(RLLIB_PYTHON), "-c", BOOT, str(extension), "-q", "--capture=sys", "-p", "no:cacheprovider",
               "-c", str(TESTS / "rllib" / "pytest.ini"), "--rootdir", str(TESTS / "rllib"),
               *[str(TESTS / name) for name in RLLIB_SUITES]]
    ran = subprocess.run(command, cwd=workdir, env=env, capture_output=True, text=True, timeout=1800)
    output = ran.stdout + ran.stderr
    summary = f"{RLLIB_SUITES} under ASan+UBSan ({RLLIB_PYTHON}): exit {ran.returncode}\n"
    assert f"sanitized extension: {extension}" in ran.stdout, summary + output[-6000:]
    reports = sanitizer_reports(output)
    assert not reports, summary + "\n".join(reports[:20]) + "\n" + output[-8000:]
    assert ran.returncode == 0 and " passed" in ran.stdout, summary + output[-8000:]
    print(summary + ran.stdout.strip().splitlines()[-1])
