"""The example scripts run, in their --quick modes, as a user would run them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"


def run(script: str, *args: str, cwd: Path) -> str:
    proc = subprocess.run([sys.executable, str(EXAMPLES / script), *args], cwd=cwd,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc.stdout


def test_demo(tmp_path):
    out = run("demo.py", cwd=tmp_path)
    assert "cheetah_race_v0: 4 HalfCheetahs in one world" in out
    assert "agent-steps/s" in out


@pytest.mark.slow
def test_selfplay_sumo_quick(tmp_path):
    out = run("selfplay_sumo.py", "--quick", "--out", str(tmp_path / "run"), cwd=tmp_path)
    assert "untrained learner vs random" in out and "done:" in out
    checkpoint = tmp_path / "run" / "checkpoints" / "latest.pt"
    assert checkpoint.exists()
    assert (tmp_path / "run" / "learning_curve.png").stat().st_size > 0
    table = run("evaluate.py", str(checkpoint), "random", "--episodes", "8", "--worlds", "8", cwd=tmp_path)
    lines = [line for line in table.splitlines() if line.startswith("| ")]
    assert len(lines) == 3  # header and one row per player
    first = [int(x) for x in lines[1].split("|")[2:5]]
    second = [int(x) for x in lines[2].split("|")[2:5]]
    assert sum(first) == 8 and first == second[::-1]


@pytest.mark.slow
@pytest.mark.parametrize("pipeline", [[], ["--supersuit"]], ids=["native", "supersuit"])
def test_train_race_sb3_quick(tmp_path, pipeline):
    out = run("train_race_sb3.py", "--quick", "--save", str(tmp_path / "race.zip"), *pipeline, cwd=tmp_path)
    assert "mean forward velocity before training" in out
    assert "mean forward velocity after training" in out
    assert (tmp_path / "race.zip").exists()


@pytest.mark.parametrize("env, extra", [
    ("cheetah_race_v0", ["--num-agents", "3", "--layout", "shared_track", "--out", "race.gif"]),
    ("sumo_v0", ["--out", "sumo.mp4"]),
    ("joltgym_marl/Ant-v0", ["--out", "ant.gif"]),
])
def test_record_video(tmp_path, env, extra):
    out = run("record_video.py", env, "--steps", "12", "--width", "96", "--height", "64", *extra, cwd=tmp_path)
    path = tmp_path / extra[-1]
    assert f"to {path.name}" in out and path.stat().st_size > 1000
    import imageio.v2 as imageio

    if path.suffix == ".gif":
        frames = imageio.mimread(path)
    else:
        reader = imageio.get_reader(path)
        frames = [reader.get_data(i) for i in range(reader.count_frames())]
        reader.close()
    assert len(frames) >= 5 and frames[0].shape[:2] == (64, 96)
    assert not all((f == frames[0]).all() for f in frames[1:])
