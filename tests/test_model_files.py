"""Model paths and files that MuJoCo must never be handed.

A path with a NUL byte (C would read a different, shorter path), a FIFO or
device as the model or as a file it includes (MuJoCo would block reading it,
holding the GIL, or read forever) and a timestep that makes dt zero or
negative are rejected with a ValueError naming the file.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import gymnasium
import pytest

import joltgym_marl
from joltgym_marl import HalfCheetahCore, MultiAgentEnv, WorldPool

WORKTREE = Path(__file__).resolve().parents[1]
ASSETS = WORKTREE / "assets"


def with_timestep(folder: Path, name: str, timestep: str) -> Path:
    text = (ASSETS / name).read_text()
    assert text.count('timestep="0.01"') == 1, name
    path = folder / f"{Path(name).stem}_ts{timestep}.xml"
    path.write_text(text.replace('timestep="0.01"', f'timestep="{timestep}"'))
    return path


@pytest.mark.parametrize("timestep", ["0", "-0.01"])
def test_non_positive_timestep_is_a_value_error(tmp_path, timestep):
    path = with_timestep(tmp_path, "half_cheetah.xml", timestep)
    message = f"MJCF file '{path}' has timestep {float(timestep):g} (<option timestep=...>); " \
              "expected a positive, finite timestep"
    for make in (lambda: HalfCheetahCore(xml_file=str(path)),
                 lambda: WorldPool("half_cheetah", 2, num_threads=2, xml_file=str(path)),
                 lambda: gymnasium.make("joltgym_marl/HalfCheetah-v0", xml_file=str(path))):
        with pytest.raises(ValueError) as info:
            make()
        assert message in str(info.value)


def test_a_game_arena_with_a_zero_timestep_is_a_value_error(tmp_path):
    path = with_timestep(tmp_path, "race_arena.xml", "0")
    with pytest.raises(ValueError, match="has timestep 0 "):
        MultiAgentEnv("cheetah_race", arena_file=str(path))
    # A robot's own timestep does not matter: the arena's governs the world.
    robot = with_timestep(tmp_path, "half_cheetah.xml", "0")
    env = MultiAgentEnv("cheetah_race", xml_file=str(robot))
    assert env.dt > 0


@pytest.mark.parametrize("make", [
    lambda p: HalfCheetahCore(xml_file=p),
    lambda p: WorldPool("ant", 2, num_threads=2, xml_file=p),
    lambda p: MultiAgentEnv("sumo", arena_file=p),
], ids=["core", "pool", "game"])
def test_a_path_with_a_nul_byte_is_rejected(make):
    # "ant.xml\0..." would otherwise load the bundled ant.xml.
    with pytest.raises(ValueError, match=r"MJCF file path '.*ant\.xml\\0junk' contains a NUL byte; "
                                         r"expected a path without NUL bytes"):
        make(str(joltgym_marl.ASSET_DIR / "ant.xml") + "\0junk")


def run_python(code: str, *args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(WORKTREE))
    return subprocess.run([sys.executable, "-W", "error", "-c", textwrap.dedent(code), *args],
                          capture_output=True, text=True, timeout=timeout, env=env)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs os.mkfifo")
@pytest.mark.parametrize("where", ["include", "model", "mesh"])
def test_a_fifo_is_rejected_instead_of_hanging(tmp_path, where):
    fifo = tmp_path / "pipe.xml"
    os.mkfifo(fifo)
    cheetah = (ASSETS / "half_cheetah.xml").read_text()
    if where == "model":
        model = fifo
    elif where == "include":
        model = tmp_path / "model.xml"
        model.write_text(cheetah.replace("<worldbody>", '<include file="pipe.xml"/><worldbody>', 1))
    else:
        model = tmp_path / "model.xml"
        model.write_text(cheetah.replace("<asset>", '<asset><mesh name="m" file="pipe.xml"/>', 1))
    # A hang would hold the GIL: the subprocess (and its timeout) is the judge.
    proc = run_python("""
        import sys
        import joltgym_marl as jm
        try:
            jm.HalfCheetahCore(xml_file=sys.argv[1])
        except ValueError as e:
            print("rejected:", e)
    """, str(model))
    assert proc.returncode == 0, proc.stderr
    kind = "is a FIFO; expected a regular model file" if where == "model" else \
        f"refers to '{fifo}'"
    assert proc.stdout.startswith("rejected: MJCF file '"), proc.stdout
    assert kind in proc.stdout, proc.stdout
    if where != "model":
        assert "which is a FIFO; expected a regular file" in proc.stdout


def test_an_include_of_a_regular_file_still_works(tmp_path):
    cheetah = (ASSETS / "half_cheetah.xml").read_text()
    (tmp_path / "extra.xml").write_text("<mujoco><option gravity='0 0 -9.81'/></mujoco>")
    model = tmp_path / "model.xml"
    model.write_text(cheetah.replace("<worldbody>", '<include file="extra.xml"/><worldbody>', 1))
    core = HalfCheetahCore(xml_file=str(model))
    core.reset(seed=0)
