"""tests/mamujoco_suite/run.py, the runner of Farama's own MaMuJoCo suite
(which is not in this repository, nor in the gymnasium-robotics sdist): its
import swap and its counts, on a stand-in test file written here."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import joltgym_marl

ROOT = Path(__file__).resolve().parents[1]
RUNNER = ROOT / "tests" / "mamujoco_suite" / "run.py"

STAND_IN = '''
import pytest
from gymnasium_robotics import mamujoco_v1


def test_module():
    assert mamujoco_v1.__name__ == EXPECTED


@pytest.mark.parametrize("conf", ["2x3", "6x1"])
def test_env(conf):
    env = mamujoco_v1.parallel_env("HalfCheetah", conf)
    env.reset(seed=0)
    assert len(env.single_agent_env.action_space.sample()) == 6
'''


def run(tmp_path: Path, *args: str, imports: str = "from gymnasium_robotics import mamujoco_v1"):
    folder = tmp_path / "tests" / "envs" / "MaMuJoCo"
    folder.mkdir(parents=True, exist_ok=True)
    expected = "gymnasium_robotics.envs.multiagent_mujoco.mamujoco_v1" if "--oracle" in args \
        else "joltgym_marl.mamujoco_v1"
    text = STAND_IN.replace("from gymnasium_robotics import mamujoco_v1", imports)
    (folder / "test_MaMuJoCo.py").write_text(f"EXPECTED = {expected!r}\n{text}")
    package_root = Path(joltgym_marl.__file__).resolve().parents[1]
    env = dict(os.environ, PYTHONWARNINGS="ignore")
    return subprocess.run([sys.executable, str(RUNNER), str(tmp_path), "--package-root", str(package_root),
                           *args], capture_output=True, text=True, env=env, timeout=300)


def test_the_runner_swaps_only_the_import_and_counts(tmp_path):
    for args in [(), ("--oracle",)]:
        done = run(tmp_path, *args)
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        assert "test_env: 2/2" in done.stdout and "total: 3/3" in done.stdout, done.stdout[-2000:]


def test_the_runner_fails_loudly_when_the_import_is_not_there(tmp_path):
    done = run(tmp_path, imports="from gymnasium_robotics import mamujoco_v1 as other; mamujoco_v1 = None")
    assert done.returncode != 0
    assert "does not import gymnasium_robotics.mamujoco_v1 as mamujoco_v1" in done.stdout + done.stderr
    missing = subprocess.run([sys.executable, str(RUNNER), str(tmp_path / "nowhere")], capture_output=True,
                             text=True, timeout=60)
    assert missing.returncode == 2 and "should hold Gymnasium-Robotics' tests/envs/MaMuJoCo" in missing.stderr
