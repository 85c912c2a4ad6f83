"""The C++ core's own tests, built and run under AddressSanitizer + UBSan.

This builds the `native_tests` and `raw_step_limit` CMake targets in
build/sanitize (shared with tests/test_sanitized_extension.py and reused
between runs: see tests/sanitizers.py) and runs the tests with ctest, so the
README's test command exercises the native code under the sanitizers too.
"""

from __future__ import annotations

import os
import re
import subprocess

import pytest
from sanitizers import build, sanitizer_reports, tool


@pytest.mark.slow
def test_native_core_under_asan_and_ubsan():
    folder = build("native_tests", "raw_step_limit")
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=1:abort_on_error=1",
               UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1")
    ran = subprocess.run([tool("ctest"), "--output-on-failure", "-V"], cwd=folder, env=env,
                         capture_output=True, text=True)
    output = ran.stdout + ran.stderr
    assert ran.returncode == 0, output[-6000:]
    # Every native test ran and passed (the count grows with the tests).
    assert re.search(r"native: [1-9][0-9]* passed, 0 failed", output), output[-3000:]
    assert not sanitizer_reports(output), output[-6000:]
