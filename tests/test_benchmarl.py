"""The BenchMARL tests (tests/benchmarl/), run in the BenchMARL environment.

BenchMARL 1.5.2 pins ``torchrl<0.12`` and the ``torchrl`` extra takes 0.14.1,
so the README's test command makes a third environment, ``.venv-benchmarl``
(the ``benchmarl`` extra and pytest), and this test runs ``tests/benchmarl``
there, against the package installed in it: the task families, the batched
env under TorchRL 0.11, a short MAPPO experiment (the example's smoke run) and
the frames/s benchmark at a tiny size.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCHMARL_PYTHON = ROOT / ".venv-benchmarl" / "bin" / "python"


@pytest.mark.slow
def test_benchmarl_suite_passes_in_its_environment():
    if not BENCHMARL_PYTHON.exists():
        pytest.fail(f"{BENCHMARL_PYTHON} is missing: run the README's set-up command 2, which makes .venv-benchmarl")
    proc = subprocess.run([str(BENCHMARL_PYTHON), "-m", "pytest", "-c", "tests/benchmarl/pytest.ini", "tests/benchmarl",
                           "-q", "-p", "no:randomly"], cwd=ROOT, capture_output=True, text=True, timeout=1800)
    # Exit code 5 (no tests collected) fails here as any other non-zero code does.
    assert proc.returncode == 0, f"exit code {proc.returncode}\n{proc.stdout[-6000:]}{proc.stderr[-3000:]}"
    assert " passed" in proc.stdout and " failed" not in proc.stdout, proc.stdout[-3000:]
