"""Builds the project's C++ benchmark target (``raw_step_limit``) on demand."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from benchmarks._paths import ROOT, with_interpreter_tools

BUILD_DIR = ROOT / "build" / "native-bench"


def raw_step_limit_binary() -> Path:
    """Configures and builds the raw-engine limit program (with every task of the
    native registry compiled in), returns its path."""
    binary = BUILD_DIR / "raw_step_limit"
    env = with_interpreter_tools()
    subprocess.run(
        ["cmake", "-S", str(ROOT), "-B", str(BUILD_DIR), "-DCMAKE_BUILD_TYPE=Release",
         f"-DPython_EXECUTABLE={sys.executable}", "-DJOLTGYM_BUILD_PYTHON=OFF",
         "-DJOLTGYM_BUILD_NATIVE_TESTS=ON"],
        check=True, stdout=subprocess.DEVNULL, env=env,
    )
    subprocess.run(["cmake", "--build", str(BUILD_DIR), "--target", "raw_step_limit", "-j2"],
                   check=True, stdout=subprocess.DEVNULL, env=env)
    return binary


CAPI_BUILD_DIR = ROOT / "build" / "capi"


def capi_library() -> Path:
    """Configures (without Python: MuJoCo's folder given directly) and builds
    libjoltgym_marl, the C API; returns its path."""
    import mujoco  # only to locate its folder (libmujoco.so.*, include/)

    env = with_interpreter_tools()
    subprocess.run(
        ["cmake", "-S", str(ROOT), "-B", str(CAPI_BUILD_DIR), "-DCMAKE_BUILD_TYPE=Release",
         "-DJOLTGYM_BUILD_PYTHON=OFF", f"-DJOLTGYM_MUJOCO_DIR={Path(mujoco.__file__).parent}",
         # The options tests/capi.py configures this folder with, so neither rebuilds it.
         "-DJOLTGYM_WERROR=ON", "-DJOLTGYM_SANITIZE=OFF"],
        check=True, stdout=subprocess.DEVNULL, env=env,
    )
    subprocess.run(["cmake", "--build", str(CAPI_BUILD_DIR), "--target", "joltgym_marl", "-j2"],
                   check=True, stdout=subprocess.DEVNULL, env=env)
    return CAPI_BUILD_DIR / "libjoltgym_marl.so"
