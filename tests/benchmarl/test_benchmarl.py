"""joltgym_marl.benchmarl in BenchMARL's environment (torchrl 0.11): one import
gives BenchMARL every game and every MaMuJoCo conf; the batched env passes
TorchRL 0.11's check_env_specs; a BenchMARL MAPPO experiment runs on our
tasks (the example, at its smoke size); the frames/s benchmark runs."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from benchmarl.environments import task_config_registry
from torchrl.envs.utils import check_env_specs

import joltgym_marl.benchmarl  # noqa: F401
from joltgym_marl.benchmarl import GameTask, MaMuJoCoTask, member_name
from joltgym_marl.mamujoco import catalog
from joltgym_marl.registry import GAMES

ROOT = Path(__file__).resolve().parents[2]


def test_every_game_and_every_conf_is_a_task():
    assert [m.name for m in GameTask] == [spec.name.upper() for spec in GAMES]
    confs = [(s.scenario, c.agent_conf, c.in_farama) for s in catalog.scenarios() for c in s.confs]
    assert [m.name for m in MaMuJoCoTask] == [member_name(s, c) for s, c, _ in confs]
    assert any(not farama for *_, farama in confs)  # HARL's confs are there too (Ant 8x1, ...)
    assert MaMuJoCoTask.HUMANOID_9_8.get_task().config["agent_conf"] == "9|8"
    assert task_config_registry["joltgym_mamujoco/halfcheetah_2x3"] is MaMuJoCoTask.HALFCHEETAH_2X3
    assert task_config_registry["joltgym_marl/sumo"] is GameTask.SUMO
    task = MaMuJoCoTask.ANT_4X2.get_task({"max_episode_steps": 50})
    assert task.config["max_episode_steps"] == 50 and task.config["scenario"] == "Ant"
    assert MaMuJoCoTask.ANT_4X2.get_task().config["max_episode_steps"] == 1000


@pytest.mark.parametrize("member", [*GameTask, MaMuJoCoTask.HALFCHEETAH_6X1, MaMuJoCoTask.HUMANOID_9_8,
                                    MaMuJoCoTask.SWIMMER], ids=lambda m: m.name)
def test_task_envs_pass_check_env_specs_in_float32(member):
    steps = "max_cycles" if member in list(GameTask) else "max_episode_steps"
    task = member.get_task({steps: 5, "num_threads": 1})
    env = task.get_env_fun(num_envs=3, continuous_actions=True, seed=0, device="cpu")()
    assert env.batch_size == torch.Size([3])
    check_env_specs(env, seed=0)
    for group in task.group_map(env):
        spec = task.observation_spec(env)[group, "observation"]
        assert spec.dtype == torch.float32 and spec.shape[0] == len(env.group_map[group])
    td = env.rollout(12, break_when_any_done=False)
    assert td["next", "done"].sum() == 3 * 2
    env.close()


def test_example_runs_mappo_on_both_tasks(tmp_path):
    """BenchMARL's MAPPO through Experiment.run() on MaMuJoCo HalfCheetah 2x3 and
    the cheetah race: 3 iterations each, a return per iteration, and the curves."""
    proc = subprocess.run([sys.executable, "examples/benchmarl_mappo.py", "--quick", "--out", str(tmp_path)],
                          cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-4000:]
    for name in ("halfcheetah_2x3", "cheetah_race"):
        match = re.search(rf"^{name}: mean return ([-\d.]+) .* -> ([-\d.]+) \(last\); random policy ([-\d.]+)",
                          proc.stdout, re.MULTILINE)
        assert match, proc.stdout[-3000:]
        assert (tmp_path / f"{name}.png").stat().st_size > 0
        rows = (tmp_path / f"{name}.csv").read_text().splitlines()
        assert rows[0] == "frames,mean_return" and [r.split(",")[0] for r in rows[1:]] == ["240", "480", "720"]


def test_frames_benchmark_runs_both_sides():
    proc = subprocess.run([sys.executable, "benchmarks/benchmarl_frames.py", "--worlds", "2", "--frames-per-batch",
                           "60", "--minibatch-iters", "1", "--minibatch-size", "30", "--iterations", "2",
                           "--rounds", "1"], cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-4000:]
    assert re.search(r"^\| collection \| [\d,]+ \| [\d,]+ \| \d+\.\dx \|$", proc.stdout, re.MULTILINE), proc.stdout
