"""BenchMARL frames/s: the same MAPPO experiment on our MaMuJoCo task and on
Farama's MaMuJoCo, side by side.

    .venv-benchmarl/bin/python benchmarks/benchmarl_frames.py [--case HalfCheetah:2x3] [--worlds 10]
                                                              [--frames-per-batch 6000] [--iterations 4] [--rounds 2]

Runs in the BenchMARL environment (README: ``.venv-benchmarl``). Both sides
run BenchMARL 1.5.2's MAPPO with its default MLPs and experiment config
(``--worlds`` environments, ``--frames-per-batch`` frames per iteration,
``--minibatch-iters`` minibatch iterations), seed 0, no evaluation or logging:

* ``ours``: ``joltgym_marl.benchmarl.MaMuJoCoTask.<SCENARIO>_<CONF>`` (one
  batched env of ``--worlds`` worlds on ``--threads`` native threads, float32);
* ``farama`` (``benchmarks/_benchmarl_farama.py``): what a BenchMARL user writes for Farama's
  ``gymnasium_robotics.mamujoco_v1`` today (BenchMARL has no MaMuJoCo
  family): a ``TaskClass`` over TorchRL's ``PettingZooWrapper`` (a wrapper
  keeps the step infos' keys to reset's), ``DoubleToFloat`` for its float64
  observations, and BenchMARL's own vectorization of an unbatched env: a
  ``SerialEnv`` of ``--worlds`` envs (``--parallel-collection``: a
  ``ParallelEnv``, one process each).

Each contender runs in a fresh process per round, rounds interleaved. The
first iteration (warm-up) is not timed. Reported: collection frames/s (the
collector's time per batch) and experiment frames/s (collection plus
BenchMARL's training of each iteration), medians over rounds, and the
ratios. Run it from the clone's root.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks._paths import use_checkout  # noqa: E402

use_checkout()

KINDS = ("farama", "ours")


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--case", default="HalfCheetah:2x3", metavar="SCENARIO:CONF")
    parser.add_argument("--worlds", type=int, default=10, help="BenchMARL's on_policy_n_envs_per_worker (default 10)")
    parser.add_argument("--threads", type=int, default=2, help="our native threads (default 2)")
    parser.add_argument("--frames-per-batch", type=int, default=6000)
    parser.add_argument("--minibatch-iters", type=int, default=45, help="BenchMARL's default 45")
    parser.add_argument("--minibatch-size", type=int, default=400)
    parser.add_argument("--iterations", type=int, default=4, help="iterations per run, the first untimed")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--parallel-collection", action="store_true",
                        help="Farama's route: BenchMARL's ParallelEnv (one process per env) instead of SerialEnv")
    parser.add_argument("--worker", choices=KINDS, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if min(args.worlds, args.threads, args.frames_per_batch, args.rounds) < 1 or args.iterations < 2:
        parser.error("sizes should be >= 1 and --iterations >= 2")
    return args


def worker(kind: str, args) -> dict[str, float]:
    import warnings

    warnings.filterwarnings("ignore")
    import torch
    from benchmarl.algorithms import MappoConfig
    from benchmarl.experiment import Experiment, ExperimentConfig
    from benchmarl.models.mlp import MlpConfig

    torch.set_num_threads(1)
    scenario, conf = args.case.split(":")
    if kind == "ours":
        from joltgym_marl.benchmarl import MaMuJoCoTask, member_name

        task = MaMuJoCoTask[member_name(scenario, conf)].get_task({"num_threads": args.threads})
    else:
        from benchmarks._benchmarl_farama import FaramaMaMuJoCo

        task = FaramaMaMuJoCo(name=f"{scenario}_{conf}".upper(), config={"scenario": scenario, "agent_conf": conf})

    from benchmarks._benchmarl_farama import IterationTimes

    times = IterationTimes()
    with tempfile.TemporaryDirectory(prefix="benchmarl_frames_") as folder:
        config = ExperimentConfig.get_from_yaml()
        config.loggers, config.create_json, config.render, config.evaluation = [], False, False, False
        config.checkpoint_at_end, config.checkpoint_interval, config.save_folder = False, 0, folder
        config.max_n_iters, config.max_n_frames = args.iterations, None
        config.on_policy_collected_frames_per_batch = args.frames_per_batch
        config.on_policy_n_envs_per_worker = args.worlds
        config.on_policy_n_minibatch_iters = args.minibatch_iters
        config.on_policy_minibatch_size = args.minibatch_size
        config.parallel_collection = bool(args.parallel_collection)
        experiment = Experiment(task=task, algorithm_config=MappoConfig.get_from_yaml(),
                                model_config=MlpConfig.get_from_yaml(), critic_model_config=MlpConfig.get_from_yaml(),
                                seed=0, config=config, callbacks=[times])
        times.marks[0] = ("start", time.perf_counter())
        experiment.run()
        frames = experiment.total_frames // args.iterations
    # Iteration k: from the last "trained" mark of iteration k-1 to its own "collected" mark (collection),
    # then to its last "trained" mark (training). The first iteration is the warm-up.
    ends, collected, last = [], [], None
    for what, t in times.marks:
        if what == "collected":
            collected.append(t)
            if last is not None:
                ends.append(last)
        elif what == "trained":
            last = t
    ends.append(last)
    starts = [times.marks[0][1], *ends[:-1]]
    collection = sum(c - s for s, c in zip(starts[1:], collected[1:]))
    whole = ends[-1] - ends[0]
    timed = args.iterations - 1
    return {"collection_fps": frames * timed / collection, "experiment_fps": frames * timed / whole}


def run_worker(kind: str, args) -> dict[str, float]:
    command = [sys.executable, __file__, "--worker", kind, "--case", args.case, "--worlds", str(args.worlds),
               "--threads", str(args.threads), "--frames-per-batch", str(args.frames_per_batch),
               "--minibatch-iters", str(args.minibatch_iters), "--minibatch-size", str(args.minibatch_size),
               "--iterations", str(args.iterations)] + (["--parallel-collection"] if args.parallel_collection else [])
    out = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    return {k: float(v) for k, v in (item.split("=") for item in out.strip().splitlines()[-1].split())}


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.worker:
        print(" ".join(f"{k}={v}" for k, v in worker(args.worker, args).items()))
        return 0
    import os

    results: dict[str, list[dict[str, float]]] = {k: [] for k in KINDS}
    for _ in range(args.rounds):
        for kind in KINDS:
            results[kind].append(run_worker(kind, args))
            print(kind, results[kind][-1], file=sys.stderr, flush=True)
    med = {k: {m: statistics.median(r[m] for r in v) for m in ("collection_fps", "experiment_fps")}
           for k, v in results.items()}
    scenario, conf = args.case.split(":")
    farama = "ParallelEnv" if args.parallel_collection else "SerialEnv"
    load = os.getloadavg()[0]
    print(f"BenchMARL 1.5.2 MAPPO on MaMuJoCo {scenario} {conf}: {args.worlds} envs, {args.frames_per_batch} frames "
          f"per iteration, {args.minibatch_iters} minibatch iterations of {args.minibatch_size}; {args.iterations} "
          f"iterations (the first untimed), median of {args.rounds} rounds; Farama's route: BenchMARL's {farama} of "
          f"PettingZooWrapper envs; ours: 1 batched env on {args.threads} native threads. Load average "
          f"{load:.1f} on {os.cpu_count()} CPUs.\n")
    print("| frames/s | Farama's MaMuJoCo | ours | ours / Farama |\n|---|---:|---:|---:|")
    for metric, label in (("collection_fps", "collection"), ("experiment_fps", "experiment (collection + training)")):
        a, b = med["farama"][metric], med["ours"][metric]
        print(f"| {label} | {a:,.0f} | {b:,.0f} | {b / a:.1f}x |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
