"""The example scripts run, in their --quick modes, as a user would run them."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import joltgym_marl

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"


def run(script: str, *args: str, cwd: Path) -> str:
    # A script puts its own folder first on sys.path, so it would import the
    # installed joltgym_marl even when this session tests the source tree:
    # PYTHONPATH makes it import the same package as this session.
    package_parent = str(Path(joltgym_marl.__file__).resolve().parents[1])
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (package_parent, os.environ.get("PYTHONPATH")) if p))
    proc = subprocess.run([sys.executable, str(EXAMPLES / script), *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc.stdout


@pytest.mark.parametrize("script", sorted(p.name for p in EXAMPLES.glob("*.py")))
def test_help(tmp_path, script):
    out = run(script, "--help", cwd=tmp_path)
    assert out.startswith(f"usage: {script}"), out[:500]
    assert len(out.splitlines()) > 3  # and what it does, from its docstring
    assert not list(tmp_path.iterdir())  # --help does nothing else


def test_demo(tmp_path):
    out = run("demo.py", cwd=tmp_path)  # as the README's set-up command 1 runs it
    assert "cheetah_race_v0: 4 HalfCheetahs in one world" in out
    assert re.search(r"\ncheetah_\d (wins|leads at the time limit) after \d+ steps", out), out
    assert re.search(r"\n64 races x 4 agents on \d+ native threads: [\d,]+ agent-steps/s", out), out


def win_draw_loss(table: str) -> tuple[int, int, int]:
    """The first player's row of evaluate.py's table."""
    rows = [line for line in table.splitlines() if line.startswith("| ")]
    assert len(rows) == 3, table  # header and one row per player
    win, draw, loss = (int(x) for x in rows[1].split("|")[2:5])
    return win, draw, loss


@pytest.mark.slow
def test_selfplay_sumo_quick(tmp_path):
    out = run("selfplay_sumo.py", "--quick", "--out", str(tmp_path / "run"), cwd=tmp_path)
    assert "untrained learner  vs still W/D/L" in out and "done:" in out
    checkpoint = tmp_path / "run" / "checkpoints" / "latest.pt"
    assert checkpoint.exists()
    assert (tmp_path / "run" / "learning_curve.png").stat().st_size > 0
    evaluate = ("--episodes", "8", "--worlds", "8")
    # A random Ant throws itself over within a few dozen steps; the checkpoint's
    # policy (barely trained: it acts near zero) keeps its feet and wins. A
    # checkpoint that loaded as garbage, or outcomes counted wrongly, would not.
    win, draw, loss = win_draw_loss(run("evaluate.py", str(checkpoint), "random", *evaluate, cwd=tmp_path))
    assert win + draw + loss == 8 and win >= 6, (win, draw, loss)
    # Two still Ants never leave the ring: every bout is a draw at max_cycles.
    assert win_draw_loss(run("evaluate.py", "still", "still", *evaluate, cwd=tmp_path)) == (0, 8, 0)


@pytest.mark.slow
@pytest.mark.parametrize("pipeline", [[], ["--supersuit"]], ids=["native", "supersuit"])
def test_train_race_sb3_quick(tmp_path, pipeline):
    out = run("train_race_sb3.py", "--quick", "--save", str(tmp_path / "race.zip"), *pipeline, cwd=tmp_path)
    assert "4 races x 4 cheetahs = 16 rows" in out
    assert re.search(r"mean forward velocity before training: [-+]\d+\.\d+ m/s", out), out
    assert re.search(r"mean forward velocity after training: +[-+]\d+\.\d+ m/s", out), out
    # Training moved the policy: its deterministic actions on the same
    # observations changed (a run whose updates never reached the policy, or
    # that saw no rows, would leave them exactly as they were).
    change = float(re.search(r"policy change: mean \|action after - before\| = (\S+) over the 1,600 ", out).group(1))
    assert change > 1e-4, out
    from stable_baselines3 import PPO

    model = PPO.load(tmp_path / "race.zip", device="cpu")
    assert model.observation_space.shape == (17 + 2 * 3,) and model.action_space.shape == (6,)


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
