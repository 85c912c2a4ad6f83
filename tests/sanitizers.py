"""The native code built under AddressSanitizer + UndefinedBehaviorSanitizer.

One CMake build folder, build/sanitize (kept between runs), configured the
same way by every test that needs it: -DJOLTGYM_SANITIZE=ON (every object of
the core, the C++ tests and the Python extension compiled and linked with
-fsanitize=address,undefined), -DJOLTGYM_WERROR=ON, and Jolt Physics with its
own asserts on (-DJOLTGYM_WITH_JOLT=ON -DJOLTGYM_JOLT_ASSERTS=ON: a failed
Jolt assert prints what failed and aborts; Jolt's library is built once with
them into its cache, beside the release one). tests/test_native.py
builds and runs the C++ tests from it; tests/test_sanitized_extension.py
builds the `_core` extension from it and runs Python test files against it.
Sharing the folder compiles the sanitized core once for both.

cmake and pybind11 come from the test extra (installed next to this
interpreter); the environment variable pybind11_DIR overrides the latter.
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BUILD = ROOT / "build" / "sanitize"

# What a sanitizer prints when it finds something or fails (besides exiting
# non-zero): "ERROR: AddressSanitizer: heap-use-after-free", "AddressSanitizer:
# CHECK failed", UBSan's "...: runtime error: ...", "SUMMARY: ...".
REPORT_MARKERS = ("AddressSanitizer", "LeakSanitizer", "UndefinedBehaviorSanitizer", "runtime error:")


def tool(name: str) -> str:
    """A tool installed next to this interpreter (the test extra's cmake), else on PATH."""
    beside = Path(sys.executable).parent / name
    found = str(beside) if beside.exists() else shutil.which(name)
    if found is None:
        pytest.fail(f"{name} is needed to build the sanitized native code (pip install cmake)")
    return found


def pybind11_cmake_dir() -> str:
    """pybind11's CMake folder: the environment variable pybind11_DIR if set, else
    that of the pybind11 installed for this interpreter (the test extra's)."""
    if os.environ.get("pybind11_DIR"):
        return os.environ["pybind11_DIR"]
    proc = subprocess.run([sys.executable, "-m", "pybind11", "--cmakedir"], capture_output=True, text=True)
    if proc.returncode != 0:
        pytest.fail("pybind11 is needed to build the sanitized extension (it is in the test extra: "
                    f"pip install pybind11); `{sys.executable} -m pybind11 --cmakedir` said: {proc.stderr[-500:]}")
    return proc.stdout.strip()


def build(*targets: str) -> Path:
    """Configures build/sanitize (always with the same options) and builds `targets`; returns the folder."""
    configure = [
        tool("cmake"), "-S", str(ROOT), "-B", str(BUILD), "-DCMAKE_BUILD_TYPE=RelWithDebInfo",
        f"-DPython_EXECUTABLE={sys.executable}", f"-Dpybind11_DIR={pybind11_cmake_dir()}",
        "-DJOLTGYM_BUILD_PYTHON=ON", "-DJOLTGYM_BUILD_NATIVE_TESTS=ON", "-DJOLTGYM_SANITIZE=ON",
        "-DJOLTGYM_WERROR=ON", "-DJOLTGYM_WITH_JOLT=ON", "-DJOLTGYM_JOLT_ASSERTS=ON",
    ]
    command = [tool("cmake"), "--build", str(BUILD), "-j2"]
    for target in targets:
        command += ["--target", target]
    with exclusive(BUILD):
        configured = subprocess.run(configure, capture_output=True, text=True)
        assert configured.returncode == 0, configured.stdout[-4000:] + configured.stderr[-4000:]
        built = subprocess.run(command, capture_output=True, text=True)
        assert built.returncode == 0, built.stdout[-4000:] + built.stderr[-4000:]
    return BUILD


@contextmanager
def exclusive(folder: Path) -> Iterator[None]:
    """Holds ``<folder>.lock`` (an flock) while the body builds in ``folder``:
    test files that share a build folder may run at once (pytest-xdist)."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    with open(folder.parent / f"{folder.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def compiler_runtime(library: str) -> Path:
    """A runtime library (``libasan.so``, ``libstdc++.so``) of the compiler the
    build used, as ``<compiler> -print-file-name=<library>`` reports it (GCC)."""
    cache = (BUILD / "CMakeCache.txt").read_text()
    match = re.search(r"^CMAKE_CXX_COMPILER:\w+=(.+)$", cache, re.MULTILINE)
    compiler = match.group(1).strip() if match else "g++"
    proc = subprocess.run([compiler, f"-print-file-name={library}"], capture_output=True, text=True)
    path = Path(proc.stdout.strip())
    if proc.returncode != 0 or not path.is_absolute() or not path.exists():
        pytest.fail(f"{compiler} -print-file-name={library} did not name a file (got {proc.stdout.strip()!r}); "
                    "the sanitized build expects GCC and its libasan")
    return path.resolve()


def preload_for_python() -> str:
    """LD_PRELOAD for an interpreter (not built with ASan) that loads a sanitized extension.

    ASan's runtime must be the first library loaded, hence libasan. And libstdc++
    right after it: ASan resolves the real ``__cxa_throw`` for its interceptor when
    it starts, and the interpreter does not link libstdc++ (the extension brings it
    in later, by dlopen), so without it the first C++ exception thrown (any
    rejected argument) stops the process with "AddressSanitizer: CHECK failed:
    ... real___cxa_throw != 0".
    """
    return " ".join(str(compiler_runtime(name)) for name in ("libasan.so", "libstdc++.so"))


def sanitizer_reports(output: str) -> list[str]:
    """The lines of `output` where a sanitizer reported something."""
    return [line for line in output.splitlines() if any(marker in line for marker in REPORT_MARKERS)]
