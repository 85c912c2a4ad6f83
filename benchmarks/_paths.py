"""Import-path set-up shared by the benchmark suite's entry points.

The suite measures the checkout it sits in: its scripts run from the clone's
root (``python -m benchmarks.run``, ``python benchmarks/pool_vs_raw.py``) and
import ``benchmarks`` and ``joltgym_marl`` from there, whatever the current
directory or the way the script was started. The checkout's ``joltgym_marl``
finds its compiled extension itself: built in place in its folder, or else the
one of the installed distribution of the same version (see
``joltgym_marl/_native.py``). An older copy installed into site-packages is
therefore never measured in place of the code of the checkout.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def use_checkout() -> None:
    """Puts the clone's root first on ``sys.path`` (once)."""
    root = str(ROOT)
    kept = [p for p in sys.path if os.path.abspath(p or os.getcwd()) != root]
    sys.path[:] = [root, *kept]


def with_interpreter_tools(env: dict[str, str] | None = None) -> dict[str, str]:
    """``env`` (default ``os.environ``) with this interpreter's folder first on PATH:
    the ``cmake`` of the test extra is installed there, which may not be on PATH."""
    env = dict(os.environ if env is None else env)
    env["PATH"] = os.pathsep.join(filter(None, [str(Path(sys.executable).parent), env.get("PATH")]))
    return env
