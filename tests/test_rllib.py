"""The Ray RLlib tests (tests/rllib/), run in the RLlib environment.

RLlib pins ``gymnasium==1.2.2`` and the ``test`` extra takes the newest
Gymnasium, so the README's test command makes a second environment,
``.venv-rllib`` (the ``rllib`` extra and pytest), and this test runs
``tests/rllib`` there, against the package installed in it: the adapter and
the batched env runner against the one-world env, PPO training, a two-node
Ray cluster, and the example and benchmark scripts. Afterwards no Ray process
may be left running.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RLLIB_PYTHON = ROOT / ".venv-rllib" / "bin" / "python"


def ray_processes() -> list[str]:
    proc = subprocess.run(["pgrep", "-af", "raylet|gcs_server|ray::"], capture_output=True, text=True)
    return [line for line in proc.stdout.splitlines() if "pgrep" not in line]


@pytest.mark.slow
def test_rllib_suite_passes_in_its_environment():
    if not RLLIB_PYTHON.exists():
        pytest.fail(f"{RLLIB_PYTHON} is missing: run the README's set-up command 2, which makes .venv-rllib")
    before = ray_processes()
    proc = subprocess.run([str(RLLIB_PYTHON), "-m", "pytest", "-c", "tests/rllib/pytest.ini", "tests/rllib",
                           "-q", "-p", "no:randomly"],
                          cwd=ROOT, capture_output=True, text=True, timeout=2400)
    # Exit code 5 (no tests collected) fails here as any other non-zero code does.
    assert proc.returncode == 0, f"exit code {proc.returncode}\n{proc.stdout[-6000:]}{proc.stderr[-3000:]}"
    assert " passed" in proc.stdout and " failed" not in proc.stdout, proc.stdout[-3000:]
    assert ray_processes() == before, "Ray processes outlived the RLlib tests"
