"""``python -m joltgym_marl``: list, info, demo, bench and record, tried as a
careless user would (typos, partial names, missing arguments, bad values)."""

from __future__ import annotations

import json
import os
import re
import resource
import subprocess
import sys
from pathlib import Path

import pytest

import joltgym_marl
from joltgym_marl.registry import GAMES, SINGLE_AGENT_TASKS, TASKS

ROOT = Path(__file__).resolve().parents[1]
COMMANDS = ["list", "info", "demo", "bench", "record"]


def cli(*args: str, cwd: Path, check: bool = True, timeout: float = 600) -> subprocess.CompletedProcess:
    # The same package as this session (a source tree or the installed one), from any folder.
    package_parent = str(Path(joltgym_marl.__file__).resolve().parents[1])
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (package_parent, os.environ.get("PYTHONPATH"))
                                                      if p))
    done = subprocess.run([sys.executable, "-m", "joltgym_marl", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=timeout)
    if check:
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done


@pytest.mark.parametrize("args", [[], *[[c] for c in COMMANDS]], ids=["main", *COMMANDS])
def test_help_is_fast_and_says_what_each_command_does(tmp_path, args):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = cli(*args, "--help", cwd=tmp_path)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    elapsed = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    assert done.stdout.startswith(f"usage: python -m joltgym_marl {' '.join(args)}".rstrip()), done.stdout[:300]
    if not args:
        for command in COMMANDS:
            assert re.search(rf"^\s+{command}\s+\S", done.stdout, re.MULTILINE), command
    assert not list(tmp_path.iterdir())
    # CPU seconds, not wall time (a loaded machine stretches the wall clock, not the work):
    # about 0.4 s measured.
    assert elapsed < 5.0, elapsed


def test_version_names_the_package_and_mujoco(tmp_path):
    out = cli("--version", cwd=tmp_path).stdout
    assert out == f"joltgym_marl {joltgym_marl.__version__} (MuJoCo {joltgym_marl._core.mujoco_version()})\n"


def test_no_command_or_an_unknown_one_says_what_exists(tmp_path):
    done = cli(cwd=tmp_path, check=False)
    assert done.returncode == 2 and "the following arguments are required: COMMAND" in done.stderr
    done = cli("lsit", cwd=tmp_path, check=False)
    assert done.returncode == 2
    assert "invalid choice: 'lsit'" in done.stderr and "'list'" in done.stderr


def test_list_shows_every_registered_task_with_its_ids(tmp_path):
    out = cli("list", cwd=tmp_path).stdout
    for spec in TASKS.values():
        row = next(line for line in out.splitlines() if line.split()[:1] == [spec.name])
        assert spec.env_id in row
        if not spec.is_game:
            assert spec.reference_id in row and spec.core_class in row
    assert f"{len(SINGLE_AGENT_TASKS)} single-agent tasks" in out and f"{len(GAMES)} shared-world games" in out
    games = cli("list", "--kind", "game", cwd=tmp_path).stdout
    assert all(spec.name in games for spec in GAMES) and "single-agent" not in games
    records = json.loads(cli("list", "--json", cwd=tmp_path).stdout)
    assert [r["name"] for r in records] == list(TASKS)
    assert records[0]["params"][0]["name"] == TASKS[records[0]["name"]].params[0].name
    done = cli("list", "--kind", "robots", cwd=tmp_path, check=False)
    assert done.returncode == 2 and "invalid choice: 'robots'" in done.stderr


@pytest.mark.parametrize("spec", [SINGLE_AGENT_TASKS[0], GAMES[0]], ids=lambda s: s.kind)
def test_info_takes_any_spelling_and_shows_ids_table_and_keyword_arguments(tmp_path, spec):
    for name in (spec.name, spec.title, spec.env_id, spec.title.lower().replace("_", "-")):
        out = cli("info", name, cwd=tmp_path).stdout
        assert out.startswith(f"{spec.name}: a ")
        assert spec.env_id in out and spec.doc.strip().splitlines()[0] in out
        for p in spec.params:
            assert f"  {p.describe()}" in out
    record = json.loads(cli("info", spec.title, "--json", cwd=tmp_path).stdout)
    assert record["name"] == spec.name and record["kind"] == spec.kind and record["doc"] == spec.doc


def test_info_of_an_unknown_or_partial_name_names_the_close_matches(tmp_path):
    done = cli("info", "cheetah", cwd=tmp_path, check=False)
    assert done.returncode == 2 and not done.stdout
    assert done.stderr.startswith("python -m joltgym_marl: unknown task 'cheetah'; did you mean "
                                  "'cheetah_race' or 'half_cheetah'? expected one of: 'ant'"), done.stderr
    assert "Traceback" not in done.stderr
    done = cli("info", cwd=tmp_path, check=False)
    assert done.returncode == 2 and "the following arguments are required: TASK" in done.stderr


def test_demo_races_then_batches_and_says_what_the_rate_is_measured_against(tmp_path):
    out = cli("demo", "--worlds", "4", "--steps", "30", cwd=tmp_path).stdout
    assert "cheetah_race_v0: 4 HalfCheetahs in one world" in out
    assert re.search(r"\ncheetah_\d (wins|leads at the time limit) after \d+ steps", out), out
    assert re.search(r"\n4 races x 4 agents on \d+ native threads: [\d,]+ agent-steps/s \(random actions, 30 "
                     r"vec_env.step\(\) calls timed\), [\d.]+x one race stepped through parallel_env in a Python "
                     r"loop \([\d,]+ agent-steps/s\)", out), out
    done = cli("demo", "--worlds", "0", cwd=tmp_path, check=False)
    assert done.returncode == 2 and "argument --worlds: should be an int in [1, 1048576], got '0'" in done.stderr


def test_bench_puts_ours_beside_gymnasiums_reference_and_a_game_beside_parallel_env(tmp_path):
    spec = SINGLE_AGENT_TASKS[0]
    out = cli("bench", spec.title, "--worlds", "4", "--threads", "1", "--seconds", "0.1", cwd=tmp_path).stdout
    assert f"gymnasium.make('{spec.env_id}'), 1 world, Python loop" in out
    assert f"NativeVectorEnv('{spec.name}'), 4 worlds on 1 threads" in out
    assert re.search(rf"Gymnasium's {re.escape(spec.reference_id)}, 1 world, Python loop \(the reference\)\s+"
                     r"[\d,]+\s+1\.0x", out), out
    assert f"(x: times the rate of Gymnasium's {spec.reference_id})" in out
    game = GAMES[0]
    out = cli("bench", game.env_id, "--worlds", "2", "--seconds", "0.1", cwd=tmp_path).stdout
    assert re.search(rf"{game.module_name}.parallel_env, 1 world, Python loop\s+[\d,]+\s+1\.0x", out), out
    assert f"{game.module_name}.vec_env, 2 worlds on" in out and "agent-steps/s" in out
    done = cli("bench", game.name, "--param", "no_such=1", "--seconds", "0.1", cwd=tmp_path, check=False)
    assert done.returncode == 2 and "no_such" in done.stderr and "Traceback" not in done.stderr


def test_record_writes_a_gif_and_says_when_the_episode_ended_early(tmp_path):
    import imageio.v2 as imageio

    game = next(spec for spec in GAMES if "num_agents" in spec.defaults())
    out = cli("record", game.title, "--steps", "6", "--width", "64", "--height", "48", "--param", "num_agents=3",
              cwd=tmp_path).stdout
    path = tmp_path / f"{game.name}.gif"
    assert out == f"wrote 4 frames (6 steps) of {game.env_id} to {game.name}.gif\n", out
    frames = imageio.mimread(path)
    assert len(frames) == 4 and frames[0].shape[:2] == (48, 64)
    # A robot that falls at once: its episode ends before the steps asked for, and the line says so.
    out = cli("record", "hopper", "--steps", "400", "--every", "50", "--width", "32", "--height", "32",
              "--param", "healthy_z_range=(10.0, 20.0)", "--out", "hop.gif", cwd=tmp_path).stdout
    assert re.fullmatch(r"wrote \d+ frames \(\d+ steps\) of joltgym_marl/Hopper-v0 to hop.gif; the episode "
                        r"terminated after \d+ of the 400 steps asked for\n", out), out


def test_record_refuses_bad_input_with_the_bad_value(tmp_path):
    done = cli("record", "sumo", "--out", "sumo.avi", cwd=tmp_path, check=False)
    assert done.returncode == 2 and "should be a .gif or .mp4 file, got 'sumo.avi'" in done.stderr
    done = cli("record", "sumo", "--steps", "0", cwd=tmp_path, check=False)
    assert done.returncode == 2 and "argument --steps: should be an int in [1, 1000000], got 0" in done.stderr
    done = cli("record", "sumo", "--param", "ring_radius", cwd=tmp_path, check=False)
    assert done.returncode == 2 and "--param should be NAME=VALUE (e.g. ring_radius=3.5), got 'ring_radius'" in done.stderr
    done = cli("record", "sumo", "--param", "robot=spider", cwd=tmp_path, check=False)
    assert done.returncode == 2 and "spider" in done.stderr and "Traceback" not in done.stderr
    assert not list(tmp_path.iterdir())


def test_record_to_a_path_that_cannot_be_written_says_so_before_recording(tmp_path):
    # --out /proc/x.gif recorded the whole video, then printed a FileNotFoundError traceback
    # (and imageio's writer a second one at exit).
    (tmp_path / "folder.gif").mkdir()
    for out in ("/proc/x.gif", str(tmp_path / "a-file" / "x.gif"), "folder.gif", "folder.gif/"):
        (tmp_path / "a-file").write_text("not a folder")
        done = cli("record", "hopper", "--steps", "2", "--out", out, cwd=tmp_path, check=False)
        assert done.returncode == 1, done
        assert f"record: --out '{out}' cannot be written: " in done.stderr
        assert "Traceback" not in done.stderr and "wrote" not in done.stdout


def cli_with_file_size_limit(limit: int, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    """The CLI with RLIMIT_FSIZE = ``limit`` bytes (SIGXFSZ ignored, so that a write past it fails
    with EFBIG, as a full disk fails with ENOSPC): a full disk without root, ffmpeg included."""
    import resource
    import signal

    def limited():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    package_parent = str(Path(joltgym_marl.__file__).resolve().parents[1])
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (package_parent, os.environ.get("PYTHONPATH"))
                                                      if p))
    return subprocess.run([sys.executable, "-m", "joltgym_marl", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=600, preexec_fn=limited)


@pytest.mark.parametrize("suffix", [".mp4", ".gif"])
def test_record_onto_a_full_disk_fails_with_one_line_and_leaves_no_file(tmp_path, suffix):
    # An .mp4 that ffmpeg could not write printed "wrote 51 frames" and exited 0 (imageio's writer
    # ignores ffmpeg's exit status), leaving a truncated file; a .gif added imageio's
    # "Exception ignored in PluginV3.__del__" traceback to the error.
    args = ["record", "reacher", "--steps", "20", "--every", "1", "--width", "1280", "--height", "960"]
    full = cli(*args, "--out", f"whole{suffix}", cwd=tmp_path).stdout
    assert full.startswith("wrote 21 frames")
    limit = 4096  # below the video (nothing else is written: the renderer reads its model from memory)
    assert (tmp_path / f"whole{suffix}").stat().st_size > limit
    done = cli_with_file_size_limit(limit, *args, "--out", f"cut{suffix}", cwd=tmp_path)
    assert done.returncode == 1 and not done.stdout, done
    assert done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.startswith(f"python -m joltgym_marl record: --out 'cut{suffix}' cannot be written: ")
    assert ("File too large" in done.stderr or "SIGXFSZ (File size limit exceeded)" in done.stderr), done.stderr
    assert "frames recorded are lost" in done.stderr
    assert not (tmp_path / f"cut{suffix}").exists()
    # A device that is full from the first byte: the same line, and the device is left alone.
    (tmp_path / f"dev{suffix}").symlink_to("/dev/full")
    done = cli("record", "reacher", "--steps", "2", "--out", f"dev{suffix}", cwd=tmp_path, check=False)
    assert done.returncode == 1 and done.stderr.count("\n") == 1 and "No space left on device" in done.stderr, done
    assert (tmp_path / f"dev{suffix}").is_symlink()


def test_usage_errors_are_one_line_and_exit_2_before_anything_runs(tmp_path):
    cases = [
        # (arguments, what the line says)
        (["info", "\udcff\udcfe"], "should be UTF-8 text, got '\\\\xff\\\\xfe'"),
        (["record", "hopper", "--param", "xml_file=/missing.xml"], "'/missing.xml' does not exist"),
        (["record", "hopper", "--seed", "-1"], "argument --seed: should be an int >= 0, got -1"),
        (["record", "hopper", "--steps", "1e9"], "argument --steps: should be an int in [1, 1000000], got '1e9'"),
        (["record", "hopper", "--width", "0"], "argument --width: should be an int in [1, 8192], got 0"),
        (["record", "hopper", "--width", "8000", "--height", "8000", "--every", "1"], "GiB of memory"),
        (["record", "sumo", "--param", "\udcff=1"], "argument --param: should be UTF-8 text, got '\\\\xff=1'"),
        (["record", "sumo", "--param", "ring_radius=3", "--param", "ring_radius=4"], "--param ring_radius is given twice"),
        (["bench", "--seconds", "inf"], "argument --seconds: should be a number of seconds in (0, 3600], got 'inf'"),
        (["bench", "--seconds", "nan"], "got 'nan'"),
        (["bench", "--seconds", "0"], "got '0'"),
        (["bench", "--worlds", "2000000"], "argument --worlds: should be an int in [1, 1048576], got 2000000"),
        (["bench", "--threads", "0"], "argument --threads: should be an int in [1, 1024], got 0"),
        (["bench", "sumo", "--param", "xml_file=/missing.xml"], "/missing.xml"),
        (["bench", "sumo", "--param", "ring_radius=-1"], "ring_radius"),
        (["demo", "--worlds", "2000000"], "argument --worlds: should be an int in [1, 1048576], got '2000000'"),
        (["demo", "--steps", "0"], "argument --steps: should be an int in [1, 10000000], got '0'"),
        (["info", "cheetah"], "unknown task 'cheetah'"),
        (["record", "cheetah"], "unknown task 'cheetah'"),
        (["record", "sumo", "--out", "sumo.avi"], "should be a .gif or .mp4 file, got 'sumo.avi'"),
    ]
    for args, says in cases:
        done = cli(*args, cwd=tmp_path, check=False)
        lines = [line for line in done.stderr.splitlines() if not line.startswith("usage:")
                 and not line.startswith(" ")]
        assert done.returncode == 2 and not done.stdout, (args, done)
        assert len(lines) == 1 and says in lines[0], (args, done.stderr)
        assert "Traceback" not in done.stderr
    assert not list(tmp_path.iterdir())


def test_record_with_a_step_of_seconds_keeps_its_frames(tmp_path):
    # frame_skip=1000 makes a step 10 s long: render_fps (a whole number) was 0, and the write
    # divided by it after the episode had been recorded, losing its frames to a ZeroDivisionError.
    done = cli("record", "sumo", "--steps", "4", "--width", "32", "--height", "32", "--param", "frame_skip=1000",
               "--out", "slow.gif", cwd=tmp_path, check=False)
    assert done.returncode == 0 and done.stdout.startswith("wrote 3 frames (4 steps)"), done
    from PIL import Image

    with Image.open(tmp_path / "slow.gif") as gif:
        assert gif.n_frames == 3 and gif.info["duration"] >= 20
    done = cli("record", "swimmer", "--steps", "4", "--width", "32", "--height", "32", "--param", "frame_skip=1000",
               "--out", "slow.mp4", cwd=tmp_path, check=False)
    assert done.returncode == 0 and done.stdout.startswith("wrote 3 frames (4 steps)"), done


def test_list_and_info_name_only_the_engines_this_build_has(monkeypatch, capsys):
    from joltgym_marl import _core, cli as cli_module

    spec = next(s for s in TASKS.values() if "jolt" in s.engines)
    monkeypatch.setattr(_core, "jolt_available", lambda: True)
    cli_module.main(["info", spec.name])
    assert f"{spec.name}: a " in (out := capsys.readouterr().out) and "on mujoco, jolt\n" in out
    # A build whose Jolt source could not be fetched printed "engines: mujoco, jolt" all the same.
    monkeypatch.setattr(_core, "jolt_available", lambda: False)
    cli_module.main(["info", spec.name])
    out = capsys.readouterr().out
    assert "on mujoco (and jolt in a build with Jolt Physics, which this one is not" in out
    cli_module.main(["list"])
    assert "Engines: mujoco (and jolt in a build with Jolt Physics, which this one is not" in capsys.readouterr().out
