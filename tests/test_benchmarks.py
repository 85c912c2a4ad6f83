"""The benchmark suite's quick mode: every contender runs and every output is written.

Runs ``python -m benchmarks.run --quick`` from the repository root, as CI
does. The peers (EnvPool, SuperSuit, Gymnasium's MuJoCo envs) are test
requirements: a missing one fails the suite with a message naming it, which
fails this test rather than skipping it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# Every contender of the suite; each must report a positive rate somewhere.
CONTENDERS = [
    "limit", "core", "vector", "agent_vec", "gym_loop", "gym_sync", "gym_async", "mj_batch",
    "envpool_sync", "envpool_async", "supersuit_0", "supersuit_T",
]
TASKS = ["half_cheetah", "humanoid", "ant", "cheetah_race"]


@pytest.mark.slow
def test_quick_benchmark_suite_runs_every_contender(tmp_path):
    env = dict(os.environ)
    # cmake installed by the test extra lives next to this interpreter.
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.run", "--quick", "--out", str(tmp_path)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=900,
    )
    assert done.returncode == 0, f"exit {done.returncode}\n{done.stdout[-3000:]}\n{done.stderr[-6000:]}"

    results = json.loads((tmp_path / "results.json").read_text())
    assert results["errors"] == []
    assert results["meta"]["skipped"] == {}
    rows = results["throughput"]
    for contender in CONTENDERS:
        rates = [r["median"] for r in rows if r["contender"] == contender]
        assert rates, f"no figure for {contender}"
        assert all(rate is not None and rate > 0 for rate in rates), (contender, rates)
    for task in TASKS:
        assert any(r["task"] == task and r["contender"] == "limit" and r["median"] > 0 for r in rows), task
    assert all(r["median"] > 0 for r in results["scaling"]["throughput"])
    assert results["scaling"]["throughput"] and results["scaling"]["memory"]
    assert all(m["rss_after"] > 0 and m["construct_seconds"] > 0 for m in results["scaling"]["memory"])
    assert results["targets"] and all(t["ratio"] is not None and t["ratio"] > 0 for t in results["targets"])

    for name in ("throughput.png", "scaling.png", "results.md"):
        assert (tmp_path / name).stat().st_size > 0, name
    markdown = (tmp_path / "results.md").read_text()
    assert "## Targets" in markdown and "## Throughput" in markdown
    assert "## Targets" in done.stdout  # the Markdown is printed too
