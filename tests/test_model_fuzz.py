"""Every task against every model file: shipped, malformed and mismatched.

Each registered task (``joltgym_marl.registry.TASKS``) is built with every
MJCF under ``assets/`` as its ``xml_file`` (and, for games, as its
``arena_file``) and with malformed files. Each case either constructs and
steps with finite observations of the declared size, or raises ValueError or
FileNotFoundError; never a crash, and nothing is printed to stdout or written
to the working directory (MuJoCo's own messages included). The cases run in a
subprocess per task, so that a crash fails the test instead of killing pytest.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import joltgym_marl
from joltgym_marl.registry import TASKS

WORKTREE = Path(__file__).resolve().parents[1]
ASSETS = sorted(Path(joltgym_marl.ASSET_DIR).glob("*.xml"))

# An Ant with three legs: a free-jointed torso like ant.xml's, 6 hinges, 6 motors.
THREE_LEGGED_ANT = """
<mujoco model="ant3">
  <compiler angle="degree"/>
  <option timestep="0.01"/>
  <worldbody>
    <geom name="floor" type="plane" size="40 40 40"/>
    <body name="torso" pos="0 0 0.75">
      <freejoint name="root"/>
      <geom type="sphere" size="0.25"/>
      {legs}
    </body>
  </worldbody>
  <actuator>{motors}</actuator>
</mujoco>
"""
LEG = """
      <body name="leg{k}" pos="0 0 0" euler="0 0 {yaw}">
        <joint name="hip{k}" type="hinge" axis="0 0 1" range="-30 30"/>
        <geom type="capsule" fromto="0 0 0 0.4 0 0" size="0.08"/>
        <body pos="0.4 0 0">
          <joint name="ankle{k}" type="hinge" axis="0 1 0" range="30 70"/>
          <geom type="capsule" fromto="0 0 0 0.4 0 -0.4" size="0.08"/>
        </body>
      </body>"""


def three_legged_ant() -> str:
    legs = "".join(LEG.format(k=k, yaw=120 * k) for k in range(3))
    motors = "".join(f'<motor joint="{j}{k}" ctrlrange="-1 1" gear="150"/>'
                     for k in range(3) for j in ("hip", "ankle"))
    return THREE_LEGGED_ANT.format(legs=legs, motors=motors)


def malformed_models(folder: Path) -> list[Path]:
    """Models no task can run, or that only some can: written into ``folder``."""
    ant = (WORKTREE / "assets" / "ant.xml").read_text()
    files = {
        "empty.xml": "<mujoco/>",
        "no_actuators.xml": "<mujoco><worldbody><body name='torso'><freejoint/><geom size='0.1'/>"
                            "</body></worldbody></mujoco>",
        "no_joints.xml": "<mujoco><worldbody><body name='torso'><geom size='0.1'/></body></worldbody>"
                         "<actuator/></mujoco>",
        "hinge_only.xml": "<mujoco><worldbody><body name='torso'><joint name='j' type='hinge'/>"
                          "<geom size='1'/></body></worldbody><actuator><motor joint='j'/></actuator>"
                          "</mujoco>",
        "truncated.xml": ant[: len(ant) // 2],
        "three_legged_ant.xml": three_legged_ant(),
        "two_robots.xml": "<mujoco><worldbody><body name='torso'><freejoint/><geom size='0.1'/>"
                          "<body><joint name='a' type='hinge'/><geom size='0.1'/></body></body>"
                          "<body name='other' pos='2 0 0'><freejoint/><geom size='0.1'/></body>"
                          "</worldbody><actuator><motor joint='a'/></actuator></mujoco>",
    }
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (folder / name).write_text(text)
    return [folder / name for name in files]


# The child: one line per case, JSON, so that the parent can tell which case
# crashed (the last "start" without an end).
CHILD = r"""
import json, sys, warnings
import numpy as np
import joltgym_marl as jm
from joltgym_marl.registry import TASKS

task, keys, files = sys.argv[1], sys.argv[2].split(","), sys.argv[3:]
spec = TASKS[task]

def emit(**record):
    sys.stderr.write(json.dumps(record) + "\n")
    sys.stderr.flush()

def run(make_kwargs):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with jm.WorldPool(task, 2, num_threads=2, **make_kwargs) as pool:
            pool.reset_all(seed=0)
            assert pool.obs.shape == (2, pool.num_agents, pool.obs_dim), pool.obs.shape
            assert np.isfinite(pool.obs).all(), "reset obs not finite"
            rng = np.random.default_rng(0)
            for _ in range(3):
                actions = rng.uniform(pool.action_low, pool.action_high,
                                      size=(2, pool.num_agents, pool.act_dim)).astype(np.float32)
                pool.step_all(actions)
                assert np.isfinite(pool.obs).all() or pool.unstable.any(), "step obs not finite"
            dims = (pool.num_agents, pool.obs_dim, pool.act_dim)
            nq, nv = (len(x) for x in pool.get_state(0))
        if spec.is_game:
            env = jm.MultiAgentEnv(task, **make_kwargs)
            obs, _ = env.reset(seed=1)
            assert obs.shape == (env.num_agents, env.obs_dim)
            out = env.step(np.zeros((env.num_agents, env.act_dim), np.float32))
            assert out[0].shape == obs.shape and np.isfinite(out[0]).all()
    return dims, nq, nv, [str(w.message)[:200] for w in caught]

for path in files:
    for key in keys:
        emit(event="start", key=key, file=path)
        try:
            dims, nq, nv, caught = run({key: path})
        except (ValueError, FileNotFoundError) as e:
            emit(event="rejected", key=key, file=path, error=type(e).__name__, message=str(e)[:300])
        else:
            emit(event="ok", key=key, file=path, dims=dims, nq=nq, nv=nv, warnings=caught)
emit(event="done")
"""


def run_task_cases(task: str, files: list[Path], cwd: Path) -> list[dict]:
    keys = ["xml_file", "arena_file"] if TASKS[task].is_game else ["xml_file"]
    env = dict(os.environ, PYTHONPATH=str(WORKTREE))
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(CHILD), task, ",".join(keys),
                           *map(str, files)], capture_output=True, text=True, timeout=600, cwd=cwd,
                          env=env)
    records, other = [], []
    for line in proc.stderr.splitlines():
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError:
            other.append(line)
    started = [r for r in records if r["event"] == "start"]
    last = started[-1] if started else None
    assert proc.returncode == 0 and records and records[-1]["event"] == "done", (
        f"{task}: exit code {proc.returncode} (negative: killed by signal {-proc.returncode}) "
        f"in case {last}\nstderr: {chr(10).join(other)[-3000:]}")
    assert proc.stdout == "", f"{task} printed to stdout:\n{proc.stdout[:3000]}"
    assert other == [], f"{task} wrote to stderr:\n{chr(10).join(other)[:3000]}"
    return [r for r in records if r["event"] in ("ok", "rejected")]


@pytest.mark.parametrize("task", sorted(TASKS))
def test_every_task_with_every_model_file(task, tmp_path):
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    files = ASSETS + malformed_models(tmp_path / "models")
    results = run_task_cases(task, files, cwd)
    keys = 2 if TASKS[task].is_game else 1
    assert len(results) == len(files) * keys
    # Nothing was written to the working directory (MUJOCO_LOG.TXT included).
    assert list(cwd.iterdir()) == []
    by_case = {(Path(r["file"]).name, r["key"]): r for r in results}
    # The task's own default model always runs, and runs without warnings.
    defaults = TASKS[task].defaults()
    for key in ("xml_file", "arena_file"):
        # '' is "the robot's file" (games with a ``robot`` parameter); their own tests run it.
        if defaults.get(key):
            ok = by_case[(defaults[key], key)]
            assert ok["event"] == "ok", ok
            assert ok["warnings"] == [], ok
    # Malformed models are rejected with a message naming the file.
    for name in ("empty.xml", "no_actuators.xml", "no_joints.xml", "truncated.xml"):
        r = by_case[(name, "xml_file")]
        assert r["event"] == "rejected", r
        assert name in r["message"] or "model" in r["message"], r
    for r in results:
        if r["event"] == "ok":
            num_agents, obs_dim, act_dim = r["dims"]
            assert obs_dim > 0 and act_dim > 0, r
            if TASKS[task].is_game and r["key"] == "xml_file":
                # Games take every size from the robot (the default arenas have no joints).
                robot_nq, robot_nv = r["nq"] // num_agents, r["nv"] // num_agents
                expected = {"sumo": robot_nq - 2 + robot_nv + 18,
                            "cheetah_race": robot_nq - 1 + robot_nv + 2 * (num_agents - 1)}
                if task in expected:
                    assert obs_dim == expected[task], r


def test_sumo_with_a_humanoid_sizes_the_observation_from_the_model():
    """The regression: 63 floats per agent were written into 45-float rows."""
    env = joltgym_marl.MultiAgentEnv("sumo", xml_file="humanoid.xml")
    qpos, qvel = env.get_state()
    nq, nv = len(qpos) // 2, len(qvel) // 2
    assert (nq, nv) == (24, 23)
    assert env.obs_dim == nq - 2 + nv + 18 == 63
    obs, _ = env.reset(seed=0)
    assert obs.shape == (2, 63) and np.isfinite(obs).all()
    qpos, _ = env.get_state()
    # Each agent's row starts with its own torso height and quaternion.
    np.testing.assert_array_equal(obs[0, :5], qpos[2:7].astype(np.float32))
    np.testing.assert_array_equal(obs[1, :5], qpos[nq + 2 : nq + 7].astype(np.float32))


def test_sumo_with_a_three_legged_ant_keeps_the_agents_apart(tmp_path):
    """A smaller robot used to shift agent 1's observation into agent 0's row."""
    path = tmp_path / "ant3.xml"
    path.write_text(three_legged_ant())
    env = joltgym_marl.MultiAgentEnv("sumo", xml_file=str(path))
    assert env.act_dim == 6
    assert env.obs_dim == 13 - 2 + 12 + 18
    obs, _ = env.reset(seed=0)
    for _ in range(5):
        obs, *_ = env.step(np.full((2, 6), 0.3, np.float32))
    qpos, qvel = env.get_state()
    for k in range(2):
        np.testing.assert_array_equal(obs[k, :11], qpos[13 * k + 2 : 13 * k + 13].astype(np.float32))
        np.testing.assert_array_equal(obs[k, 11:23], qvel[12 * k : 12 * k + 12].astype(np.float32))


@pytest.mark.parametrize("game, xml, message", [
    ("sumo", "half_cheetah.xml", "sumo robot MJCF '{path}' should have a free joint as its root joint; "
                                 "got a slide joint along (1.000000, 0.000000, 0.000000)"),
    ("cheetah_race", "hinge_only.xml", "cheetah_race robot MJCF '{path}' should have a free joint or a "
                                       "slide joint along x as its root joint; got a hinge joint"),
    ("sumo", "no_actuators.xml", "robot MJCF '{path}' should have at least one actuator; got 0"),
    ("sumo", "no_joints.xml", "robot MJCF '{path}' should have a root joint on body 'torso'; got no joints"),
    ("sumo", "two_robots.xml", "robot MJCF '{path}' should have every body under 'torso'; body 'other' "
                               "is not"),
    ("cheetah_race", "reacher.xml", "robot MJCF '{path}' has no body 'torso'"),
])
def test_games_name_the_robot_file_and_the_mismatch(tmp_path, game, xml, message):
    models = {p.name: p for p in malformed_models(tmp_path)}
    path = models.get(xml, Path(joltgym_marl.ASSET_DIR) / xml)
    with pytest.raises(ValueError) as info:
        joltgym_marl.MultiAgentEnv(game, xml_file=str(path))
    assert message.format(path=path) in str(info.value)
