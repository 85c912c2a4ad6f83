"""Builds the project's C++ benchmark target (``raw_step_limit``) on demand."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BUILD_DIR = ROOT / "build" / "native-bench"


def raw_step_limit_binary() -> Path:
    """Configures and builds the raw-engine limit program, returns its path."""
    binary = BUILD_DIR / "raw_step_limit"
    subprocess.run(
        ["cmake", "-S", str(ROOT), "-B", str(BUILD_DIR), "-DCMAKE_BUILD_TYPE=Release",
         f"-DPython_EXECUTABLE={sys.executable}", "-DJOLTGYM_BUILD_PYTHON=OFF",
         "-DJOLTGYM_BUILD_NATIVE_TESTS=ON"],
        check=True, stdout=subprocess.DEVNULL,
    )
    subprocess.run(["cmake", "--build", str(BUILD_DIR), "--target", "raw_step_limit", "-j2"],
                   check=True, stdout=subprocess.DEVNULL)
    return binary
