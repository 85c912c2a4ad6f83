"""The C++ core's own tests, built and run under AddressSanitizer + UBSan.

This builds the `native_tests` CMake target with -DJOLTGYM_SANITIZE=ON and
-DJOLTGYM_WERROR=ON in build/sanitize (reused between runs) and runs it with
ctest, so the README's test command exercises the native code under the
sanitizers too.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_native_core_under_asan_and_ubsan():
    # The test extra installs cmake next to this interpreter.
    beside = Path(sys.executable).parent / "cmake"
    cmake = str(beside) if beside.exists() else shutil.which("cmake")
    ctest = str(beside.with_name("ctest")) if beside.exists() else shutil.which("ctest")
    if cmake is None or ctest is None:
        pytest.fail("cmake and ctest are needed to build the native tests (pip install cmake)")
    build = ROOT / "build" / "sanitize"
    configure = [
        cmake, "-S", str(ROOT), "-B", str(build), "-DCMAKE_BUILD_TYPE=RelWithDebInfo",
        f"-DPython_EXECUTABLE={sys.executable}", "-DJOLTGYM_BUILD_PYTHON=OFF",
        "-DJOLTGYM_BUILD_NATIVE_TESTS=ON", "-DJOLTGYM_SANITIZE=ON", "-DJOLTGYM_WERROR=ON",
    ]
    subprocess.run(configure, check=True, capture_output=True, text=True)
    built = subprocess.run([cmake, "--build", str(build), "-j2"], capture_output=True, text=True)
    assert built.returncode == 0, built.stdout[-4000:] + built.stderr[-4000:]
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=1:abort_on_error=1",
               UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1")
    ran = subprocess.run([ctest, "--output-on-failure", "-V"], cwd=build, env=env,
                         capture_output=True, text=True)
    output = ran.stdout + ran.stderr
    assert ran.returncode == 0, output[-6000:]
    assert "native: 7 passed, 0 failed" in output, output[-3000:]
    assert "runtime error" not in output and "AddressSanitizer" not in output
