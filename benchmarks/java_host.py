"""A Java host on the C API against the C++ limit and against Gymnasium over a pipe.

    python benchmarks/java_host.py [--task half_cheetah] [--worlds 64] [--threads 2]
                                   [--steps 1000] [--rounds 5] [--pipe-steps 200] [--no-pipe]

Each round runs, on the same task, worlds, threads and actions (16 sets of
uniform random actions, cycled):

* ``raw_step_limit --mode env``: the C++ limit, no Python, no Java
  (src/native/bench/raw_step_limit.cc; worlds run free on their threads);
* ``Rollout`` (examples/java/Rollout.java): Java through JNA on
  libjoltgym_marl, reading observations through direct ByteBuffers, run with
  the README's JVM flags (``-XX:TieredStopAtLevel=1 -XX:+UseSerialGC``);
* ``LibraryHost`` (benchmarks/java/LibraryHost.java): the same loop through
  the Java library's batched step (``joltgym.Pool``, java/: the actions
  staged in its direct buffer, ``step()``, rewards and flags read in place),
  same JVM flags;
* ``GymPipeHost`` (benchmarks/java/GymPipeHost.java), the route teams use
  today: Java writing actions to a Python subprocess that steps Gymnasium's
  ``HalfCheetah-v5`` envs (``--task`` is ignored there; ``--pipe-steps`` steps,
  as it is slow), reading observations, rewards and flags back.

Prints the median (and min-max) env-steps/s of each and the ratios of the
medians; the goal is Java / limit >= 0.95, for the raw example and for the
library. Needs a JDK (java, javac) and
JNA (/usr/share/java/jna.jar: Debian's libjna-java). Run it from the clone's root.
"""

from __future__ import annotations

import argparse
import json
import re
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
from benchmarks._tasks import SINGLE_AGENT_TASKS, TASKS  # noqa: E402

# As the README runs the example: C1 code only and the serial GC, so that the
# JVM's C2 compiler and GC threads do not take a core from the pool's workers.
JVM_FLAGS = ("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC")


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--task", choices=[s.name for s in SINGLE_AGENT_TASKS], default="half_cheetah",
                        help="a single-agent task of the native registry (default: %(default)s)")
    parser.add_argument("--worlds", type=int, default=64)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--pipe-steps", type=int, default=200, help="steps of the pipe route (default %(default)s)")
    parser.add_argument("--no-pipe", action="store_true", help="skip the Gymnasium-over-a-pipe route")
    args = parser.parse_args(argv)
    if min(args.worlds, args.threads, args.steps, args.rounds, args.pipe_steps) < 1:
        parser.error("--worlds, --threads, --steps, --rounds and --pipe-steps should be >= 1")
    return args


def java_tools() -> tuple[str, str]:
    java, javac = shutil.which("java"), shutil.which("javac")
    if not (java and javac and JNA_JAR.exists()):
        sys.exit("needs a JDK and JNA: apt-get install -y openjdk-17-jdk-headless libjna-java")
    return java, javac


def env_steps_per_sec(output: str) -> float:
    match = re.search(r"env-steps/s: ([0-9.]+)", output)
    if not match:
        raise RuntimeError(f"no env-steps/s in:\n{output}")
    return float(match.group(1))


def main(argv=None) -> None:
    args = parse_args(argv)
    java, javac = java_tools()
    from benchmarks._native_build import capi_library, raw_step_limit_binary

    import joltgym_marl

    binary = raw_step_limit_binary()
    library = capi_library()
    with tempfile.TemporaryDirectory(prefix="java_host_") as tmp:
        tmp = Path(tmp)
        actions_file = tmp / "actions.f32"
        write_actions(args.task, args.worlds, actions_file)
        classes = tmp / "classes"
        subprocess.run(["bash", str(ROOT / "java/build.sh"), str(tmp / "lib")], check=True, capture_output=True)
        jar = tmp / "lib" / "joltgym.jar"
        subprocess.run([javac, "-cp", f"{JNA_JAR}:{jar}", "-d", str(classes), str(ROOT / "examples/java/Rollout.java"),
                        str(ROOT / "benchmarks/java/GymPipeHost.java"), str(ROOT / "benchmarks/java/LibraryHost.java")],
                       check=True)
        raw = [str(binary), "--task", args.task, "--worlds", str(args.worlds), "--threads", str(args.threads),
               "--steps", str(args.steps), "--mode", "env", "--assets", str(joltgym_marl.ASSET_DIR),
               "--actions", str(actions_file), "--max-episode-steps", str(TASKS[args.task].max_episode_steps)]
        host = [java, *JVM_FLAGS, "-cp", f"{JNA_JAR}:{classes}", f"-Djna.library.path={library.parent}", "Rollout", args.task,
                str(args.worlds), str(args.steps), "0", str(args.threads), str(actions_file)]
        library_host = [java, *JVM_FLAGS, "-cp", f"{JNA_JAR}:{jar}:{classes}", f"-Djna.library.path={library.parent}",
                        "LibraryHost", args.task, str(args.worlds), str(args.steps), "0", str(args.threads),
                        str(actions_file)]
        pipe_actions = tmp / "pipe_actions.f32"
        if not args.no_pipe:
            # HalfCheetah-v5's action space is our half_cheetah's (the same model);
            # Gymnasium is not imported here (its MuJoCo writes MUJOCO_LOG.TXT).
            write_actions("half_cheetah", args.worlds, pipe_actions)
        pipe = [java, "-cp", str(classes), "GymPipeHost", sys.executable, str(ROOT / "benchmarks/_gym_pipe_worker.py"),
                str(args.worlds), str(args.pipe_steps), str(pipe_actions)]
        results: dict[str, list[float]] = {"C++ limit (raw env step)": [], "Java on the C API": [],
                                           "Java library (joltgym.Pool)": []}
        if not args.no_pipe:
            results["Java -> pipe -> Gymnasium"] = []
        for _ in range(args.rounds):
            out = subprocess.run(raw, check=True, capture_output=True, text=True).stdout
            results["C++ limit (raw env step)"].append(json.loads(out)["env_steps_per_sec"])
            out = subprocess.run(host, check=True, capture_output=True, text=True).stdout
            results["Java on the C API"].append(env_steps_per_sec(out))
            out = subprocess.run(library_host, check=True, capture_output=True, text=True).stdout
            results["Java library (joltgym.Pool)"].append(env_steps_per_sec(out))
            if not args.no_pipe:
                # In the temporary folder: Gymnasium's MuJoCo writes its warnings
                # (settotalmass) to MUJOCO_LOG.TXT in the working directory.
                out = subprocess.run(pipe, check=True, capture_output=True, text=True, cwd=tmp).stdout
                results["Java -> pipe -> Gymnasium"].append(env_steps_per_sec(out))

    print(f"{args.task}: {args.worlds} worlds, {args.threads} threads, {args.steps} steps "
          f"({args.pipe_steps} for the pipe) x {args.rounds} rounds, interleaved")
    print(f"{'contender':<30} {'median env-steps/s':>19} {'min':>10} {'max':>10}")
    for name, values in results.items():
        print(f"{name:<30} {statistics.median(values):>19,.0f} {min(values):>10,.0f} {max(values):>10,.0f}")
    host_rate = statistics.median(results["Java on the C API"])
    print(f"ratio Java on the C API / C++ limit = {host_rate / statistics.median(results['C++ limit (raw env step)']):.3f}")
    library_rate = statistics.median(results["Java library (joltgym.Pool)"])
    print(f"ratio Java library (joltgym.Pool) / C++ limit = "
          f"{library_rate / statistics.median(results['C++ limit (raw env step)']):.3f}")
    print(f"ratio Java library / Java on the C API (raw example) = {library_rate / host_rate:.3f}")
    if not args.no_pipe:
        print(f"ratio Java on the C API / Java -> pipe -> Gymnasium = "
              f"{host_rate / statistics.median(results['Java -> pipe -> Gymnasium']):.1f}")


if __name__ == "__main__":
    main()
