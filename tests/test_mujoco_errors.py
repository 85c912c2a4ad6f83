"""MuJoCo's errors and warnings become Python exceptions and warnings.

MuJoCo's default handlers print to stdout, append to MUJOCO_LOG.TXT in the
working directory and, on an error (out of stack memory in a step, an
allocation failure), call exit(1). The core catches them on the thread that
raised them: an error raises MemoryError (out of memory) or
joltgym_marl.MujocoError (a RuntimeError) from the call, worker threads'
errors included, and leaves the world failed until it is reset; a warning is
raised as joltgym_marl.MujocoWarning on the calling thread after the call;
the physics-instability warnings stay what they were (``unstable`` /
``physics_unstable``, episode truncated), not Python warnings.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pytest

import joltgym_marl
from joltgym_marl import HalfCheetahCore, WorldPool

WORKTREE = Path(__file__).resolve().parents[1]
ASSETS = WORKTREE / "assets"


def run_python(code: str, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    """``code`` in a fresh interpreter, warnings as errors, importing this tree's package."""
    env = dict(os.environ, PYTHONPATH=str(WORKTREE))
    return subprocess.run([sys.executable, "-W", "error", "-c", textwrap.dedent(code), *args],
                          capture_output=True, text=True, timeout=300, cwd=cwd, env=env)


def small_memory_ant(folder: Path, memory: str = "16K") -> Path:
    """ant.xml with a stack too small for a step with a few contacts (it compiles and resets)."""
    text = (ASSETS / "ant.xml").read_text()
    assert text.count('<mujoco model="ant">') == 1
    path = folder / f"ant_{memory}.xml"
    path.write_text(text.replace('<mujoco model="ant">', f'<mujoco model="ant"><size memory="{memory}"/>'))
    return path


def unlimited_cheetah(folder: Path) -> Path:
    """half_cheetah.xml without ctrlrange: a huge action is MuJoCo's bad-ctrl warning."""
    text = (ASSETS / "half_cheetah.xml").read_text()
    old = '<motor ctrllimited="true" ctrlrange="-1 1"/>'
    assert text.count(old) == 1
    path = folder / "cheetah_unlimited.xml"
    path.write_text(text.replace(old, '<motor ctrllimited="false"/>'))
    return path


def test_out_of_memory_in_a_step_raises_and_the_world_waits_for_a_reset(tmp_path):
    model = small_memory_ant(tmp_path)
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    proc = run_python("""
        import sys
        import numpy as np
        import joltgym_marl as jm

        def expect(exc, call):
            try:
                call()
            except exc as e:
                return str(e)
            raise SystemExit(f"expected {exc.__name__}")

        def run_until_error(step):
            for _ in range(200):
                step()
            raise SystemExit("no MuJoCo error in 200 steps")

        core = jm.AntCore(xml_file=sys.argv[1])
        core.reset(seed=0)
        message = expect(MemoryError, lambda: run_until_error(lambda: core.step(np.ones(8, np.float32))))
        print("core:", message.splitlines()[0])
        assert "mj_stackAlloc: out of memory" in message and "must be reset (reset())" in message
        print("core again:", expect(jm.StateError, lambda: core.step(np.ones(8, np.float32))))
        print("core set_state:", expect(jm.StateError, lambda: core.set_state(*core.get_state())))
        core.reset(seed=1)
        core.step(np.zeros(8, np.float32))

        # In a pool the error happens on a worker thread and is raised here.
        pool = jm.WorldPool("ant", 4, num_threads=2, xml_file=sys.argv[1])
        pool.reset_all(seed=0)
        message = expect(MemoryError, lambda: run_until_error(
            lambda: pool.step_all(np.ones((4, 8), np.float32))))
        print("pool:", message.splitlines()[0])
        assert "These worlds must be reset" in message or "This world must be reset" in message
        print("pool again:", expect(jm.StateError, lambda: pool.step_all(np.ones((4, 8), np.float32))))
        pool.reset_all(seed=0)
        pool.step_all(np.zeros((4, 8), np.float32))
        assert np.isfinite(pool.obs).all()
        pool.close()
        print("ok")
    """, str(model), cwd=cwd)
    assert proc.returncode == 0, (proc.returncode, proc.stdout[-3000:], proc.stderr[-3000:])
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("core: MuJoCo error during step(): mj_stackAlloc: out of memory")
    assert lines[1] == ("core again: step() called after a MuJoCo error in this world; "
                        "expected reset() first")
    assert lines[2].startswith("core set_state: set_state() called after a MuJoCo error")
    assert lines[3].startswith("pool: MuJoCo error during step_all() in world")
    assert lines[4].startswith("pool again: step_all() called after a MuJoCo error in world ")
    assert lines[4].endswith(") first") and "reset_all() or reset_one(" in lines[4]
    assert lines[5:] == ["ok"]
    assert proc.stderr == ""
    assert list(cwd.iterdir()) == []  # no MUJOCO_LOG.TXT


def test_mujoco_error_is_a_runtime_error_and_warning_a_runtime_warning():
    assert issubclass(joltgym_marl.MujocoError, RuntimeError)
    assert issubclass(joltgym_marl.MujocoWarning, RuntimeWarning)


def test_a_mujoco_warning_is_a_python_warning_after_the_call(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    model = unlimited_cheetah(tmp_path)
    core = HalfCheetahCore(xml_file=str(model))
    core.reset(seed=0)
    with pytest.warns(joltgym_marl.MujocoWarning,
                      match=r"^MuJoCo warning during step\(\): Nan, Inf or huge value in CTRL"):
        core.step(np.full(6, 1e20, np.float32))
    with WorldPool("half_cheetah", 3, num_threads=2, xml_file=str(model)) as pool:
        pool.reset_all(seed=0)
        actions = np.zeros((3, 6), np.float32)
        actions[1:] = 1e20
        # Worker threads' warnings are raised once, naming the worlds.
        with pytest.warns(joltgym_marl.MujocoWarning) as record:
            pool.step_all(actions)
        assert len(record) == 1
        assert str(record[0].message).startswith(
            "MuJoCo warning during step_all() in worlds 1, 2: Nan, Inf or huge value in CTRL")
    assert list(tmp_path.iterdir()) == [model]


def test_warnings_as_errors_raise_after_the_call(tmp_path):
    model = unlimited_cheetah(tmp_path)
    core = HalfCheetahCore(xml_file=str(model))
    core.reset(seed=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", joltgym_marl.MujocoWarning)
        with pytest.raises(joltgym_marl.MujocoWarning):
            core.step(np.full(6, 1e20, np.float32))
    # The step itself happened; the world goes on.
    assert core.elapsed_steps == 1
    core.step(np.zeros(6, np.float32))


def test_instability_is_reported_in_info_not_as_a_warning(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    core = HalfCheetahCore()
    core.reset(seed=0)
    qpos, qvel = core.get_state()
    core.set_state(qpos, np.full_like(qvel, 1e30))
    with warnings.catch_warnings():
        # A bad-qacc warning turned into a Python warning would raise here.
        warnings.simplefilter("error")
        *_, truncated, info = core.step(np.zeros(6, np.float32))
    assert truncated and info["physics_unstable"] is True
    assert list(tmp_path.iterdir()) == []


def test_nothing_reaches_stdout_or_the_working_directory(tmp_path):
    """Composition notes (attach conflicts such as 'nkey: parent has 0 (default), child has
    5'), a blow-up and a MuJoCo error: all silent on stdout and on disk."""
    model = small_memory_ant(tmp_path)
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    proc = run_python("""
        import sys
        import numpy as np
        import joltgym_marl as jm
        env = jm.MultiAgentEnv("cheetah_race", xml_file="humanoid.xml")
        env.reset(seed=0)
        env.step(np.zeros((2, env.act_dim), np.float32))
        race = jm.MultiAgentEnv("cheetah_race", xml_file="hopper.xml", num_agents=3)
        race.reset(seed=0)
        with jm.WorldPool("humanoid", 2, num_threads=2) as pool:
            pool.reset_all(seed=0)
            qpos, qvel = pool.get_state(1)
            pool.set_state(1, qpos, np.full_like(qvel, 1e30))
            pool.step_all(np.zeros((2, pool.act_dim), np.float32))
            assert pool.unstable[1]
        core = jm.AntCore(xml_file=sys.argv[1])
        core.reset(seed=0)
        try:
            for _ in range(200):
                core.step(np.ones(8, np.float32))
        except MemoryError:
            pass
    """, str(model), cwd=cwd)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout == ""
    assert proc.stderr == ""
    assert list(cwd.iterdir()) == []
