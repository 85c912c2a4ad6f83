"""WorldPool throughput in a process that imports ``mujoco`` against one that does not, side by side.

    python benchmarks/mujoco_import.py [--task TASK] [--worlds 64] [--threads 2]
                                       [--steps 1000] [--rounds 7] [--unshielded]

Importing MuJoCo's Python bindings sets MuJoCo's process-wide profiling timer
(``mjcb_time``), which every ``mj_step`` then calls dozens of times; the core
keeps it off its own worlds (``src/native/quiet_timer.h``). Each round starts
two fresh processes, in an order alternating per round: one that imports
``mujoco`` (and makes and steps an ``MjData`` of its own) before building the
pool, and one that never does; each runs ``WorldPool.step_all`` for
``--steps`` steps after a warm-up, with the same actions. Prints the median
(min-max) env-steps/s of each and the median over rounds of the ratio
with/without (the goal: >= 0.97), the same ratio per CPU-second of the
measuring process (on a shared machine the wall-clock one is noisy), and checks that the importing process's own
``MjData`` still has working timers. ``--unshielded`` adds a third process
that imports ``mujoco`` with the shield turned off (a test hook of the
extension): the cost the shield removes. ``--task`` is any task of the native
registry (default: its first single-agent task). Run it from the clone's root.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks._paths import use_checkout  # noqa: E402

use_checkout()

from benchmarks._tasks import DEFAULT_GAME_AGENTS, SINGLE_AGENT_TASKS, TASKS, game_kwargs  # noqa: E402

# Run in a fresh interpreter: argv = [task, worlds, threads, steps, import_mujoco, kwargs_json].
_CHILD = r"""
import json, sys, time
sys.path.insert(0, sys.argv[7])
from benchmarks._paths import use_checkout
use_checkout()
import numpy as np
task, worlds, threads, steps, variant = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
with_mujoco = variant != "without"
kwargs = json.loads(sys.argv[6])
timer_ok = None
if with_mujoco:
    import mujoco
    model = mujoco.MjModel.from_xml_string(
        "<mujoco><worldbody><body><freejoint/><geom size='.1'/></body></worldbody></mujoco>")
    data = mujoco.MjData(model)
import joltgym_marl
if variant == "unshielded":  # the core stops keeping mujoco's timer off its worlds
    joltgym_marl._core._test_mujoco_timer_shield(False)
pool = joltgym_marl.WorldPool(task, worlds, num_threads=threads, **kwargs)
pool.reset_all(seed=0)
rng = np.random.default_rng(0)
actions = rng.uniform(pool.action_low, pool.action_high,
                      size=(16, worlds, pool.num_agents, pool.act_dim)).astype(np.float32)
for k in range(max(50, steps // 10)):
    pool.step_all(actions[k % 16])
start, cpu_start = time.perf_counter(), time.process_time()
for k in range(steps):
    pool.step_all(actions[k % 16])
seconds, cpu_seconds = time.perf_counter() - start, time.process_time() - cpu_start
if with_mujoco:  # mujoco's own users keep their profiling
    mujoco.mj_step(model, data)
    timer_ok = bool(data.timer[mujoco.mjtTimer.mjTIMER_STEP].duration > 0)
pool.close()
print(json.dumps({"rate": worlds * steps / seconds, "cpu_rate": worlds * steps / cpu_seconds,
                  "mujoco_timer_ok": timer_ok,
                  "mujoco_imported": "mujoco" in sys.modules}))
"""


VARIANTS = {"without": "without import mujoco", "with": "with import mujoco",
            "unshielded": "with, shield off"}


def measure(task: str, worlds: int, threads: int, steps: int, variant: str, kwargs: dict) -> dict:
    root = str(Path(__file__).resolve().parents[1])
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, task, str(worlds), str(threads), str(steps),
         variant, json.dumps(kwargs), root],
        capture_output=True, text=True, check=False, cwd=root)
    if done.returncode != 0:
        raise SystemExit(f"the measuring process failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--task", choices=list(TASKS), default=SINGLE_AGENT_TASKS[0].name,
                        help="a task of the native registry (default: %(default)s)")
    parser.add_argument("--worlds", type=int, default=64)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--steps", type=int, default=1000, help="timed step_all calls per measurement")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--unshielded", action="store_true",
                        help="also measure a process that imports mujoco with the core's timer shield "
                             "turned off (a test hook): what the shield saves")
    parser.add_argument("--game-agents", type=int, default=DEFAULT_GAME_AGENTS,
                        help="agents per world for a game with a num_agents parameter")
    return parser.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    kwargs = game_kwargs(TASKS[args.task], args.game_agents)
    variants = ["without", "with"] + (["unshielded"] if args.unshielded else [])
    rates: dict[str, list[float]] = {v: [] for v in variants}
    ratios: dict[str, list[float]] = {v: [] for v in variants[1:]}
    cpu_ratios: dict[str, list[float]] = {v: [] for v in variants[1:]}
    timers_ok = True
    for r in range(args.rounds):
        order = variants[r % len(variants):] + variants[:r % len(variants)]
        got, cpu = {}, {}
        for variant in order:
            result = measure(args.task, args.worlds, args.threads, args.steps, variant, kwargs)
            if result["mujoco_imported"] != (variant != "without"):
                raise SystemExit(f"expected mujoco imported={variant != 'without'} in the measuring process")
            if variant != "without":
                timers_ok = timers_ok and bool(result["mujoco_timer_ok"])
            got[variant], cpu[variant] = result["rate"], result["cpu_rate"]
            rates[variant].append(result["rate"])
        for v in variants[1:]:
            ratios[v].append(got[v] / got["without"])
            cpu_ratios[v].append(cpu[v] / cpu["without"])
        print(f"round {r + 1}/{args.rounds}: " + "  ".join(f"{v} {got[v]:,.0f}" for v in variants) + "  ratio/without: "
              + "  ".join(f"{v} {ratios[v][-1]:.3f} (per CPU-s {cpu_ratios[v][-1]:.3f})" for v in variants[1:]),
              flush=True)
    print(f"\n{args.task}, {args.worlds} worlds, {args.threads} threads, {args.steps} steps x {args.rounds} rounds "
          "(env-steps/s, median (min-max)):")
    for v in variants:
        print(f"  {VARIANTS[v]:22s} {statistics.median(rates[v]):>10,.0f} ({min(rates[v]):,.0f}-{max(rates[v]):,.0f})")
    for v in variants[1:]:
        goal = "; goal >= 0.97" if v == "with" else ""
        print(f"  ratio {VARIANTS[v]} / without (median of per-round ratios): {statistics.median(ratios[v]):.3f} "
              f"(min {min(ratios[v]):.3f}, max {max(ratios[v]):.3f}){goal}")
        print(f"    per CPU-second of the process (less sensitive to a busy machine): "
              f"{statistics.median(cpu_ratios[v]):.3f} (min {min(cpu_ratios[v]):.3f}, max {max(cpu_ratios[v]):.3f})")
    print(f"  mujoco's own MjData timers in the importing process: {'working' if timers_ok else 'BROKEN'}")
    return 0 if timers_ok else 1


if __name__ == "__main__":
    sys.exit(main())
