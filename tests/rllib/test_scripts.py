"""The RLlib example and benchmark scripts, run as the README runs them."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run(*args: str, timeout: int = 900) -> str:
    proc = subprocess.run([sys.executable, *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, f"{args}\n{proc.stdout[-3000:]}{proc.stderr[-4000:]}"
    return proc.stdout


def test_example_trains_and_reports_the_velocity():
    out = run("examples/rllib_race.py", "--quick")
    before = re.search(r"mean forward velocity before training: ([-+.\d]+) m/s", out)
    after = re.search(r"mean forward velocity after training:  ([-+.\d]+) m/s", out)
    assert before and after, out
    iterations = re.findall(r"^iter +\d+ +env steps +(\d+)", out, re.MULTILINE)
    assert len(iterations) == 3 and int(iterations[-1]) >= 3 * 1024, out


def test_selfplay_example_grows_its_league():
    out = run("examples/rllib_selfplay_sumo.py", "--quick")
    rows = re.findall(r"^iter +(\d+) .*main W/D/L ([\d.]+|nan)/([\d.]+|nan)/([\d.]+|nan) +league (\d+)", out,
                      re.MULTILINE)
    assert [int(r[0]) for r in rows] == [1, 2, 3], out
    assert [int(r[4]) for r in rows] == [2, 3, 4], out  # main + snapshots, one added per iteration


def test_benchmark_measures_every_contender():
    out = run("benchmarks/rllib_sampling.py", "--worlds", "4", "--steps", "8", "--rounds", "1")
    for name in ("pool", "per_world", "pettingzoo", "supersuit"):
        assert re.search(rf"^{name} +[\d,]+", out, re.MULTILINE), out
    assert re.search(r"ratio pool / pettingzoo = \d+\.\d\d", out), out


def test_scripts_have_help():
    for script in ("examples/rllib_race.py", "examples/rllib_selfplay_sumo.py", "benchmarks/rllib_sampling.py"):
        assert "usage:" in run(script, "--help")
