"""What the README's command 1 installs, by itself, is enough for the README.

Command 1 is ``python3 -m venv .venv && .venv/bin/pip install . && ...``: the
project with its runtime dependencies and no extras. Every other test runs in
command 2's environment, which has the test extras too, so a runtime
dependency missing from ``[project] dependencies`` (``imageio``, which
Gymnasium's MuJoCo renderer imports: ``gym.make`` failed after command 1
alone) went unseen there. Here a fresh venv gets only the wheel that set-up
built (``build/wheelhouse/``, tools/setup_tests.sh), without extras, and runs
every ```python block of the README, the CLI's first commands and
``engine="jolt"``, from the clone's root as a user would. pip's cache makes
the install a matter of seconds after the first time.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def readme_python_blocks() -> list[str]:
    return re.findall(r"^```python[^\n]*\n(.*?)^```[ \t]*$", README, re.MULTILINE | re.DOTALL)


def the_wheel() -> Path:
    wheels = sorted((ROOT / "build" / "wheelhouse").glob("joltgym_marl-*.whl"))
    if not wheels:
        pytest.fail("no wheel in build/wheelhouse/: tools/setup_tests.sh (README command 2) builds it")
    return wheels[-1]


def clean_env(venv: Path) -> dict[str, str]:
    """The environment of a shell that has only ``venv``: nothing of this test session's."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")
           and not k.startswith(("PYTEST_", "COV_"))}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    return env


@pytest.fixture(scope="module")
def command_one_venv(tmp_path_factory) -> Path:
    wheel = the_wheel()
    venv = tmp_path_factory.mktemp("command_one") / ".venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    # The wheel alone, no extras: what `pip install .` puts in .venv.
    done = subprocess.run([str(venv / "bin" / "pip"), "install", "-q", str(wheel)], env=clean_env(venv),
                          capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return venv


def run(venv: Path, *args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    done = subprocess.run([str(venv / "bin" / "python"), *args], cwd=ROOT, env=clean_env(venv),
                          capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"{args}\n{done.stdout[-3000:]}{done.stderr[-3000:]}"
    return done


@pytest.mark.slow
def test_command_one_alone_runs_the_readme_the_cli_and_jolt(command_one_venv, tmp_path):
    venv = command_one_venv
    installed = run(venv, "-m", "pip", "list", "--format", "freeze").stdout
    # Only the runtime dependencies: none of the extras' packages came along.
    for extra_only in ("pytest", "torch", "stable-baselines3", "supersuit", "imageio-ffmpeg"):
        assert not re.search(rf"^{extra_only}==", installed, re.MULTILINE | re.IGNORECASE), extra_only
    blocks = readme_python_blocks()
    assert len(blocks) >= 3
    for block in blocks:
        run(venv, "-c", block)
    # The extension is the venv's, whichever folder the package's Python files come from.
    where = run(venv, "-c", "import joltgym_marl._core as c; print(c.__file__)").stdout
    assert where.startswith(str(venv)), where
    assert "usage: python -m joltgym_marl bench" in run(venv, "-m", "joltgym_marl", "bench", "--help").stdout
    listing = run(venv, "-m", "joltgym_marl", "list").stdout
    assert "sumo_v0" in listing and "Engines: mujoco, jolt." in listing, listing[-500:]
    assert "on mujoco, jolt" in run(venv, "-m", "joltgym_marl", "info", "ant").stdout
    # The bench puts ours beside Gymnasium's own env (gymnasium[mujoco]); record writes a GIF.
    out = run(venv, "-m", "joltgym_marl", "bench", "hopper", "--worlds", "2", "--threads", "1",
              "--seconds", "0.05").stdout
    assert "Gymnasium's Hopper-v5, 1 world, Python loop (the reference)" in out, out
    out = run(venv, "-m", "joltgym_marl", "record", "sumo", "--steps", "4", "--width", "32", "--height", "32",
              "--out", str(tmp_path / "sumo.gif")).stdout
    assert out.startswith("wrote 3 frames") and (tmp_path / "sumo.gif").stat().st_size > 0, out
    # Jolt is in the default build (command 1 fetches its pinned source by name).
    run(venv, "-c", "import gymnasium as gym, joltgym_marl\n"
                    "assert joltgym_marl._core.jolt_available()\n"
                    "env = gym.make('joltgym_marl/HalfCheetah-v0', engine='jolt')\n"
                    "env.reset(seed=0)\n"
                    "obs, reward, *_ = env.step(env.action_space.sample())\n"
                    "assert obs.shape == (17,), obs.shape\n")
