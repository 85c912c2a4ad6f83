"""Builds the project's native programs on demand: the raw-engine limit
(``raw_step_limit``) and the C API (``libjoltgym_marl``).

Both come from one Release folder, build/capi, configured without Python
(MuJoCo's folder given directly) and with the same options as the tests'
C API build (tests/capi.py), so the core is compiled once for all of them.
A lock file beside the folder keeps concurrent builds (pytest-xdist workers,
two benchmark scripts) from interleaving in it.
"""

from __future__ import annotations

import fcntl
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from benchmarks._paths import ROOT, with_interpreter_tools

BUILD_DIR = ROOT / "build" / "capi"
CAPI_BUILD_DIR = BUILD_DIR


@contextmanager
def exclusive(folder: Path) -> Iterator[None]:
    """Holds ``<folder>.lock`` (an flock) while the body builds in ``folder``."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    with open(folder.parent / f"{folder.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def _build(target: str) -> Path:
    import mujoco  # only to locate its folder (libmujoco.so.*, include/)

    env = with_interpreter_tools()
    with exclusive(BUILD_DIR):
        subprocess.run(
            ["cmake", "-S", str(ROOT), "-B", str(BUILD_DIR), "-DCMAKE_BUILD_TYPE=Release",
             "-DJOLTGYM_BUILD_PYTHON=OFF", f"-DJOLTGYM_MUJOCO_DIR={Path(mujoco.__file__).parent}",
             # The options tests/capi.py configures this folder with, so neither rebuilds it.
             "-DJOLTGYM_WERROR=ON", "-DJOLTGYM_SANITIZE=OFF", "-DJOLTGYM_BUILD_NATIVE_TESTS=ON",
             "-UPython_EXECUTABLE"],
            check=True, stdout=subprocess.DEVNULL, env=env,
        )
        subprocess.run(["cmake", "--build", str(BUILD_DIR), "--target", target, "-j2"],
                       check=True, stdout=subprocess.DEVNULL, env=env)
    return BUILD_DIR


def raw_step_limit_binary() -> Path:
    """Builds the raw-engine limit program (every task of the native registry
    compiled in); returns its path."""
    return _build("raw_step_limit") / "raw_step_limit"


def capi_library() -> Path:
    """Builds libjoltgym_marl, the C API; returns its path."""
    return _build("joltgym_marl") / "libjoltgym_marl.so"
