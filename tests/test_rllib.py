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

import re
import subprocess
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RLLIB_PYTHON = ROOT / ".venv-rllib" / "bin" / "python"


RAY_PROCESS = re.compile(r"raylet|gcs_server|ray::")


def ray_processes() -> dict[int, str]:
    """The live Ray processes, pid -> command line. A zombie (state Z: a worker
    that exited but whose parent has not reaped it yet) is not running and is
    left out; under CPU load Ray's workers linger in that state for a while."""
    proc = subprocess.run(["ps", "-eo", "pid=,stat=,args="], capture_output=True, text=True, check=True)
    live = {}
    for line in proc.stdout.splitlines():
        pid, stat, args = (line.strip().split(None, 2) + ["", ""])[:3]
        if RAY_PROCESS.search(args) and not stat.startswith("Z"):
            live[int(pid)] = args
    return live


def new_ray_processes(before: dict[int, str], within_s: float = 60.0) -> dict[int, str]:
    """The Ray processes not in ``before`` that are still running after
    ``within_s`` seconds (Ray's shutdown ends its processes asynchronously)."""
    deadline = time.monotonic() + within_s
    while True:
        left = {pid: args for pid, args in ray_processes().items() if pid not in before}
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(1.0)


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
    left = new_ray_processes(before)
    assert not left, f"Ray processes outlived the RLlib tests: {left}"
