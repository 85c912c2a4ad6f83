"""``--help`` of every script in examples/ and benchmarks/ (and of ``python -m
joltgym_marl``) answers at once: argparse parses before torch, Ray, SB3 or any
peer library is imported. Measured idle on this 2-core machine: each under
0.7 s (those that import joltgym_marl) or 0.3 s (those that do not); the bound
below is generous, for a loaded machine, and the import log is the exact check."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

import joltgym_marl

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("torch", "ray", "stable_baselines3", "supersuit", "envpool", "matplotlib", "imageio", "tensordict",
         "torchrl")


def scripts() -> list[tuple[str, list[str]]]:
    found = [(f"examples/{p.name}", [str(p)]) for p in sorted((ROOT / "examples").glob("*.py"))]
    for p in sorted((ROOT / "benchmarks").glob("*.py")):
        text = p.read_text()  # the scripts with a command line (benchmarks/_worker.py speaks a pipe protocol)
        if 'if __name__ == "__main__"' in text and "argparse" in text:
            found.append((f"benchmarks/{p.name}", ["-m", f"benchmarks.{p.stem}"]))
    found.append(("python -m joltgym_marl", ["-m", "joltgym_marl"]))
    return found


def cpu_seconds(before) -> float:
    """User + system CPU time of the children waited for since ``before`` (a getrusage)."""
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


SCRIPTS = scripts()


@pytest.mark.parametrize("name, command", SCRIPTS, ids=[name for name, _ in SCRIPTS])
def test_help_returns_at_once_without_importing_a_heavy_library(tmp_path, name, command):
    package_parent = str(Path(joltgym_marl.__file__).resolve().parents[1])
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (package_parent, str(ROOT),
                                                                  os.environ.get("PYTHONPATH")) if p))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run([sys.executable, "-X", "importtime", *command, "--help"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120)
    elapsed = cpu_seconds(before)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.startswith("usage:"), done.stdout[:300]
    imported = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}
    assert not imported & set(HEAVY), sorted(imported & set(HEAVY))
    # CPU seconds, not wall time: a loaded machine (CI) stretches the wall clock, not the work.
    assert elapsed < 5.0, f"{name} --help took {elapsed:.1f} s of CPU"
