"""The Java library (java/: Env, Pool, ParallelEnv over the C API through JNA) and its JUnit 5 suite.

The library and its tests are built with plain javac + jar (java/build.sh;
JDK 17, JNA and JUnit 5's console launcher from Debian: openjdk-17-jdk-headless,
libjna-java, junit5). Python records what the Java side must reproduce, into
one folder the JUnit suite reads (-Djoltgym.reference):

* every task of the registry in both layouts: the bytes of every buffer of
  Python's WorldPool at a seeded reset and at each step of the same actions
  (PoolParityTest);
* episodes of Gymnasium's own ``Hopper-v5``, ``HalfCheetah-v5`` and
  ``Walker2d-v5`` (EnvTest: bit for bit);
* frames of ``render_mode="rgb_array"`` (FrameTest: pixel for pixel, the
  free camera of the v5 envs and a model camera);
* Python's words for bad input (ErrorsTest).

The games, closing, use after close and two-thread misuse are JUnit tests of
their own; the ARS trainer runs in a short form here and its policy file is
replayed by examples/evaluate.py to the same returns, bit for bit.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from capi import ROOT, build_library
from conftest import GAME_NAMES, SINGLE_TASKS

from joltgym_marl import _core

JNA_JAR = Path("/usr/share/java/jna.jar")
JUNIT_JAR = Path("/usr/share/java/junit-platform-console-standalone.jar")
# As the guide runs Java on a small machine: C1 code and the serial GC leave the cores to the pool.
JVM_FLAGS = ["-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC"]

pytestmark = pytest.mark.skipif(
    not (shutil.which("java") and shutil.which("javac") and JNA_JAR.exists() and JUNIT_JAR.exists()),
    reason="needs Debian's openjdk-17-jdk-headless, libjna-java and junit5 (set-up command 2 installs them)")


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> dict[str, Path]:
    library = build_library()  # build/capi, without Python
    out = tmp_path_factory.mktemp("java")
    ran = subprocess.run(["bash", str(ROOT / "java" / "build.sh"), str(out)], capture_output=True, text=True)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    return {"library": library, "jar": out / "joltgym.jar", "tests": out / "joltgym-tests.jar"}


def java(built: dict, *args: str, cwd: Path | None = None, properties: dict | None = None,
         timeout: float = 900) -> subprocess.CompletedProcess:
    props = [f"-D{k}={v}" for k, v in (properties or {}).items()]
    command = ["java", *JVM_FLAGS, f"-Djna.library.path={built['library']}", *props,
               "-cp", f"{built['jar']}:{JNA_JAR}", *args]
    return subprocess.run(command, capture_output=True, text=True, cwd=cwd, timeout=timeout)


# --- what Python records ----------------------------------------------------------------------


def record_pools(folder: Path, manifest: list[str]) -> None:
    """Every task in both layouts: reset and steps of Python's WorldPool, every buffer's bytes."""
    for i, task in enumerate(SINGLE_TASKS + GAME_NAMES):
        for dtype in ("float32", "float64"):
            mode = ("next_step", "same_step")[i % 2]
            num_envs, limit, seed, steps = 3, 7, 11 + i, 12  # episodes end and restart
            pool = _core.WorldPool(task, num_envs, num_threads=1, max_episode_steps=limit, autoreset_mode=mode,
                                   dtype=np.dtype(dtype))
            rng = np.random.default_rng(seed)
            parts = []

            def results():
                for array in (pool.obs, pool.rewards, pool.terminations, pool.truncations, pool.infos,
                              pool.reset_kind, pool.elapsed_steps):
                    parts.append(np.ascontiguousarray(array).tobytes())

            try:
                pool.reset_all(seed=seed)
                results()
                for _ in range(steps):
                    actions = rng.uniform(pool.action_low, pool.action_high,
                                          (num_envs, pool.num_agents, pool.act_dim)).astype(np.float32)
                    parts.append(actions.tobytes())
                    pool.step_all(actions)
                    results()
            finally:
                pool.close()
            assert pool_elapsed_is_int32(), "the recording assumes int32 elapsed steps"
            name = f"pool_{task}_{dtype}.bin"
            (folder / name).write_bytes(b"".join(parts))
            manifest.append(f"pool {task} {dtype} {mode} {num_envs} {limit} {seed} {steps} {name}")


def pool_elapsed_is_int32() -> bool:
    pool = _core.WorldPool("swimmer", 1, num_threads=1)
    try:
        return pool.elapsed_steps.dtype == np.int32 and pool.reset_kind.dtype == np.uint8
    finally:
        pool.close()


def record_gymnasium_episodes(folder: Path, manifest: list[str]) -> None:
    """Episodes of Gymnasium's own MuJoCo envs (not ours): obs, reward and flags per step."""
    import gymnasium

    for env_id, seed, steps in (("Hopper-v5", 4, 60), ("HalfCheetah-v5", 5, 30), ("Walker2d-v5", 6, 40)):
        env = gymnasium.make(env_id)
        try:
            obs, _ = env.reset(seed=seed)
            rng = np.random.default_rng(seed)
            parts = [np.asarray(obs, np.float64).tobytes()]
            taken = 0
            for _ in range(steps):
                action = rng.uniform(-1.5, 1.5, env.action_space.shape).astype(np.float32)  # some clipped
                obs, reward, terminated, truncated, _ = env.step(action)
                parts += [action.tobytes(), np.asarray(obs, np.float64).tobytes(),
                          np.float64(reward).tobytes(), bytes([terminated, truncated])]
                taken += 1
                if terminated or truncated:
                    break
        finally:
            env.close()
        name = f"env_{env_id}.bin"
        (folder / name).write_bytes(b"".join(parts))
        manifest.append(f"env {env_id} {seed} {taken} {name}")


def record_frames(folder: Path, manifest: list[str]) -> None:
    """render_mode="rgb_array" frames of our Gymnasium envs after a reset and after some steps."""
    import gymnasium

    import joltgym_marl  # noqa: F401  (registers the joltgym_marl/... ids)

    for env_id, camera_id, seed, steps in (("joltgym_marl/HalfCheetah-v0", -1, 1, 7),
                                           ("joltgym_marl/Hopper-v0", -1, 2, 9),
                                           ("joltgym_marl/Hopper-v0", 0, 3, 5)):
        width, height = 96, 64
        env = gymnasium.make(env_id, render_mode="rgb_array", width=width, height=height,
                             camera_id=None if camera_id == -1 else camera_id)
        try:
            env.reset(seed=seed)
            parts = [np.ascontiguousarray(env.render()).tobytes()]
            rng = np.random.default_rng(seed)
            for _ in range(steps):
                action = rng.uniform(-1, 1, env.action_space.shape).astype(np.float32)
                parts.append(action.tobytes())
                env.step(action)
            parts.append(np.ascontiguousarray(env.render()).tobytes())
        finally:
            env.close()
        name = f"frame_{env_id.replace('/', '_')}_{camera_id}.bin"
        (folder / name).write_bytes(b"".join(parts))
        manifest.append(f"frame {env_id} {seed} {width} {height} {camera_id} {steps} {name}")


def python_error(call) -> str:
    try:
        call()
    except Exception as e:  # noqa: BLE001  (the words are what we compare)
        return str(e)
    raise AssertionError("no error")


def record_errors(folder: Path) -> None:
    def stepped(actions):
        pool = _core.WorldPool("hopper", 2, num_threads=1)
        try:
            if actions is not None:
                pool.reset_all(seed=0)
                pool.step_all(actions)
            else:
                pool.step_all(np.zeros((2, 1, 3), np.float32))
        finally:
            pool.close()

    nan = np.zeros((2, 1, 3), np.float32)
    nan[0, 0, 1] = np.nan
    words = {
        "unknown_task": python_error(lambda: _core.WorldPool("half_cheetahx", 1)),
        "unknown_kwarg": python_error(lambda: _core.WorldPool("half_cheetah", 1, forward_reward_weigth=1.0)),
        "bad_kwarg_value": python_error(lambda: _core.WorldPool("half_cheetah", 1, reset_noise_scale="big")),
        "zero_envs": python_error(lambda: _core.WorldPool("hopper", 0)),
        "step_before_reset": python_error(lambda: stepped(None)),
        "nan_action": python_error(lambda: stepped(nan)),
    }
    # java.util.Properties' format: escape backslashes and line breaks.
    lines = [f"{k}={v.replace(chr(92), chr(92) * 2).replace(chr(10), chr(92) + 'n')}" for k, v in words.items()]
    (folder / "errors.properties").write_text("\n".join(lines) + "\n", encoding="latin-1", errors="strict")


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("reference")
    manifest: list[str] = []
    record_pools(folder, manifest)
    record_gymnasium_episodes(folder, manifest)
    record_frames(folder, manifest)
    record_errors(folder)
    (folder / "manifest.txt").write_text("\n".join(manifest) + "\n")
    return folder


# --- the tests --------------------------------------------------------------------------------------


def test_build_script_help_is_fast():
    ran = subprocess.run(["bash", str(ROOT / "java" / "build.sh"), "--help"], capture_output=True, text=True,
                         timeout=10)
    assert ran.returncode == 0 and "javac" in ran.stdout


def test_junit_suite_passes(built, reference, tmp_path):
    """The whole JUnit suite (java/src/test/java) through Debian's console launcher."""
    reports = tmp_path / "reports"
    command = ["java", *JVM_FLAGS, f"-Djna.library.path={built['library']}", f"-Djoltgym.reference={reference}",
               "-jar", str(JUNIT_JAR), "--disable-banner", "--details=tree", "--fail-if-no-tests",
               "--class-path", f"{built['tests']}:{built['jar']}:{JNA_JAR}",
               "--select-package", "joltgym", f"--reports-dir={reports}"]
    ran = subprocess.run(command, capture_output=True, text=True, timeout=1200, cwd=tmp_path)
    summary = ran.stdout[-6000:] + ran.stderr[-3000:]
    assert ran.returncode == 0, summary
    found = re.search(r"(\d+) tests successful", ran.stdout)
    failed = re.search(r"(\d+) tests failed", ran.stdout)
    skipped = re.search(r"(\d+) tests skipped", ran.stdout)
    assert found and int(found.group(1)) >= 50, summary  # every task x layout, episodes, frames, games, ...
    assert failed and int(failed.group(1)) == 0, summary
    assert skipped and int(skipped.group(1)) == 0, summary  # the reference folder reached every test
    for name in ("PoolParityTest", "EnvTest", "FrameTest", "GamesTest", "ErrorsTest", "ThreadsTest", "AsyncTest",
                 "ArsTest"):
        assert name in ran.stdout, f"{name} did not run:\n{summary}"


def test_examples_run_and_write_frames(built, tmp_path):
    ran = java(built, "joltgym.examples.QuickStart")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "episode return" in ran.stdout and "outcomes [" in ran.stdout
    ran = java(built, "joltgym.examples.RenderFrames", "Hopper-v5", "2", "3", str(tmp_path / "frames"), "80", "60")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    from PIL import Image

    frames = sorted((tmp_path / "frames").glob("frame_*.png"))
    assert [f.name for f in frames] == ["frame_000.png", "frame_001.png"]
    with Image.open(frames[0]) as image:
        assert image.size == (80, 60)
        pixels = np.asarray(image.convert("RGB")).reshape(-1, 3)
        assert len(np.unique(pixels, axis=0)) > 10  # a scene, not a blank
    for main in ("joltgym.examples.QuickStart", "joltgym.examples.RenderFrames", "joltgym.ars.Ars"):
        ran = java(built, main, "--help")
        assert ran.returncode == 0 and "usage" in ran.stdout.lower(), ran.stdout + ran.stderr


@pytest.mark.parametrize("broken", ["no_symbols", "not_a_library"])
def test_render_without_egl_is_an_exception_naming_the_packages(built, tmp_path, broken):
    """A machine without a usable libEGL.so.1: a stand-in found first on LD_LIBRARY_PATH, either a
    library without EGL's functions or a file that is no library at all. render() is then a
    JoltgymException that says why and which packages give EGL; the JVM exits through it, never
    a crash."""
    lib = tmp_path / "lib"
    lib.mkdir()
    if broken == "no_symbols":
        source = tmp_path / "stand_in.c"
        source.write_text("int joltgym_not_egl(void) { return 0; }\n")
        subprocess.run(["cc", "-shared", "-fPIC", "-o", str(lib / "libEGL.so.1"), str(source)], check=True)
        why = "libEGL.so.1 has no eglGetProcAddress"
    else:
        (lib / "libEGL.so.1").write_text("not a library\n")
        why = "cannot open libEGL.so.1"
    command = ["java", *JVM_FLAGS, f"-Djna.library.path={built['library']}", "-cp", f"{built['jar']}:{JNA_JAR}",
               "joltgym.examples.RenderFrames", "Hopper-v5", "1", "1", str(tmp_path / "frames"), "80", "60"]
    ran = subprocess.run(command, capture_output=True, text=True, cwd=tmp_path, timeout=300,
                         env={**os.environ, "LD_LIBRARY_PATH": str(lib)})
    assert ran.returncode == 1, ran.stdout + ran.stderr
    assert "joltgym.JoltgymException: JG_ERR_STATE: " + why in ran.stderr, ran.stderr
    assert "apt-get install libegl1 libgl1-mesa-dri" in ran.stderr, ran.stderr
    assert not list(tmp_path.glob("hs_err_pid*.log")), "the JVM crashed"


@pytest.mark.parametrize("clip", ["no", "yes"])
def test_ars_policy_replays_in_python_to_the_same_returns(built, tmp_path, clip):
    """A short ARS run in Java; examples/evaluate.py replays its policy.json on the same seeds:
    every episode's return equal bit for bit to the Java evaluation's. A large step makes actions
    beyond the action space's bounds, so the replay must pass them on unclipped exactly when the
    trainer did (its default, as the paper's code; the file's bounds are then null)."""
    out = tmp_path / "ars"
    ran = java(built, "joltgym.ars.Ars", "--task", "hopper", "--episodes", "16", "--directions", "4", "--top", "2",
               "--step-size", "1", "--final-episodes", "3", "--final-seed", "500", "--clip-actions", clip,
               "--out", str(out))
    assert ran.returncode == 0, ran.stdout + ran.stderr
    saved = json.loads((out / "policy.json").read_text())
    if clip == "no":
        assert saved["action_low"] is None and saved["action_high"] is None
    else:
        assert saved["action_low"] == [-1.0] * 3 and saved["action_high"] == [1.0] * 3
    curve = (out / "curve.csv").read_text().splitlines()
    assert curve[0] == "iteration,episodes,steps,eval_return_mean,eval_return_std,seconds"
    assert [row.split(",")[1] for row in curve[1:]] == ["8", "16"]
    java_returns = [float(x) for x in re.search(r"final returns \(seeds 500\+i\): (.*)", ran.stdout).group(1).split()]
    assert len(java_returns) == 3
    replay = subprocess.run([sys.executable, str(ROOT / "examples" / "evaluate.py"), str(out / "policy.json"),
                             "--episodes", "3", "--seed", "500", "--worlds", "3", "--threads", "1"],
                            capture_output=True, text=True, cwd=tmp_path, timeout=600,
                            env={**os.environ, "PYTHONWARNINGS": "ignore"})
    assert replay.returncode == 0, replay.stdout + replay.stderr
    python_returns = [float(x) for x in
                      re.search(r"episode returns on mujoco \(exact\): (.*)", replay.stdout).group(1).split()]
    assert python_returns == java_returns, (python_returns, java_returns)


def test_evaluate_refuses_an_ars_policy_for_another_task(built, tmp_path):
    policy = tmp_path / "policy.json"
    policy.write_text('{"format": "joltgym_marl.ars_linear/1", "env_id": "joltgym_marl/Hopper-v0", "weights": [], '
                      '"mean": [], "inv_std": [], "action_low": [], "action_high": []}')
    ran = subprocess.run([sys.executable, str(ROOT / "examples" / "evaluate.py"), str(policy), "--env-id",
                          "joltgym_marl/Ant-v0"], capture_output=True, text=True, timeout=120)
    assert ran.returncode == 2 and "was trained on joltgym_marl/Hopper-v0" in ran.stderr, ran.stderr


def test_c_render_checks_its_arguments(built):
    """jg_pool_render (ABI 4) through ctypes: null pointers, a wrong size, a bad world or a
    closed pool are statuses with Python-style words, never a crash; a good call fills the frame."""
    import ctypes

    from capi import CapiError, Library

    class RenderConfig(ctypes.Structure):
        _fields_ = [("width", ctypes.c_int32), ("height", ctypes.c_int32), ("camera_id", ctypes.c_int32),
                    ("camera_name", ctypes.c_char_p)]

    lib = Library(built["library"] / "libjoltgym_marl.so")
    render = lib.lib.jg_pool_render
    render.restype = ctypes.c_int
    render.argtypes = [ctypes.c_uint64, ctypes.c_int32, ctypes.POINTER(RenderConfig), ctypes.c_void_p,
                       ctypes.c_size_t]
    handle = lib.create("hopper", 2, num_threads=1)
    config = RenderConfig(16, 12, -1, None)
    frame = np.zeros((12, 16, 3), np.uint8)
    try:
        lib.reset(handle, 0)
        for args, status, words in (((handle, 0, None, frame.ctypes.data, frame.size), "JG_ERR_NULL", "config"),
                                    ((handle, 0, ctypes.byref(config), None, frame.size), "JG_ERR_NULL", "rgb"),
                                    ((handle, 0, ctypes.byref(config), frame.ctypes.data, 5), "JG_ERR_VALUE",
                                     "height * width * 3 = 576 bytes, got 5"),
                                    ((handle, 2, ctypes.byref(config), frame.ctypes.data, frame.size), "JG_ERR_INDEX",
                                     "index should be in [0, 2), got 2")):
            with pytest.raises(CapiError) as e:
                lib.call("jg_pool_render", *args)
            assert e.value.status == status and words in e.value.message, e.value
        lib.call("jg_pool_render", handle, 1, ctypes.byref(config), frame.ctypes.data, frame.size)
        assert len(np.unique(frame.reshape(-1, 3), axis=0)) > 5  # a scene
    finally:
        lib.close(handle)
    with pytest.raises(CapiError) as e:
        lib.call("jg_pool_render", handle, 0, ctypes.byref(config), frame.ctypes.data, frame.size)
    assert e.value.status == "JG_ERR_STATE" and "closed" in e.value.message
