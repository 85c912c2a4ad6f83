"""Import-path set-up shared by the benchmark suite's entry points.

The suite runs from a source checkout (``python -m benchmarks.run`` with the
repository root as the working directory), so the root is on ``sys.path`` and
its ``joltgym_marl/`` folder, which holds no compiled extension in a regular
(non-editable) install, would shadow the installed package. Moving the root to
the end of ``sys.path`` lets an installed ``joltgym_marl`` win while
``benchmarks`` stays importable from the checkout (an editable install maps the
package to the checkout anyway).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def prefer_installed_package() -> None:
    root = str(ROOT)
    kept = [p for p in sys.path if os.path.abspath(p or os.getcwd()) != root]
    sys.path[:] = [*kept, root]
