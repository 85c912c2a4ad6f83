"""MAPPO with BenchMARL on our tasks: MaMuJoCo HalfCheetah 2x3 and the cheetah race.

    .venv-benchmarl/bin/python examples/benchmarl_mappo.py [--tasks halfcheetah_2x3 cheetah_race]
                                                           [--frames 300000] [--out runs/benchmarl_mappo]

Runs in the BenchMARL environment (README: ``.venv-benchmarl``; BenchMARL pins
torchrl<0.12). The one line that makes our tasks BenchMARL's is ``import
joltgym_marl.benchmarl``: ``MaMuJoCoTask.HALFCHEETAH_2X3`` and
``GameTask.CHEETAH_RACE`` are BenchMARL tasks whose ``--worlds`` environments
are the worlds of ONE natively batched TorchRL env. BenchMARL's own MAPPO,
MLP and experiment configs (its yaml defaults, but for the sizes below), its
collector and its loss; for each task the script prints the mean episode
return of each iteration and, at the end, the first and last, and draws the
curve (``<out>/<task>.png``, with a uniformly random policy's return dashed;
the numbers in ``<out>/<task>.csv``).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

TASKS = ("halfcheetah_2x3", "cheetah_race")


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="benchmarl_mappo.py", description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--tasks", nargs="+", default=list(TASKS),
                        help="BenchMARL task names: a MaMuJoCoTask member (halfcheetah_2x3, ant_4x2, ...) or a "
                             "GameTask member (cheetah_race, sumo, ...), in lower case")
    parser.add_argument("--frames", type=int, default=300_000, help="world steps per task")
    parser.add_argument("--frames-per-batch", type=int, default=6000, help="world steps per iteration")
    parser.add_argument("--worlds", type=int, default=16, help="worlds of the batched env (n_envs_per_worker)")
    parser.add_argument("--threads", type=int, default=None, help="native threads (default: the cores)")
    parser.add_argument("--minibatch-iters", type=int, default=45, help="BenchMARL's on_policy_n_minibatch_iters")
    parser.add_argument("--minibatch-size", type=int, default=400)
    parser.add_argument("--max-steps", type=int, default=None, help="episode length (default: the task's)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="runs/benchmarl_mappo", help="folder of the curves (PNG, CSV)")
    parser.add_argument("--quick", action="store_true", help="a smoke run: tiny sizes, 3 iterations per task")
    args = parser.parse_args(argv)
    if args.quick:
        args.frames, args.frames_per_batch, args.worlds = 3 * 240, 240, 8
        args.minibatch_iters, args.minibatch_size, args.max_steps = 1, 120, args.max_steps or 20
    return args


if __name__ == "__main__":
    ARGS = parse_args()  # --help (and a bad argument) answers before torch is imported

import torch  # noqa: E402
from benchmarl.algorithms import MappoConfig  # noqa: E402
from benchmarl.experiment import Experiment, ExperimentConfig  # noqa: E402
from benchmarl.experiment.callback import Callback  # noqa: E402
from benchmarl.models.mlp import MlpConfig  # noqa: E402

import joltgym_marl.benchmarl  # noqa: E402,F401  (the one import: our tasks in BenchMARL)
from joltgym_marl.benchmarl import GameTask, MaMuJoCoTask  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from learning_curves import plot_learning_curve, write_curve_csv  # noqa: E402


def task_of(name: str, args):
    """The BenchMARL task of a member name, with the sizes of the command line."""
    key = name.upper()
    if key in MaMuJoCoTask.__members__:
        member, steps_key = MaMuJoCoTask[key], "max_episode_steps"
    elif key in GameTask.__members__:
        member, steps_key = GameTask[key], "max_cycles"
    else:
        names = ", ".join(m.lower() for m in [*MaMuJoCoTask.__members__, *GameTask.__members__])
        raise SystemExit(f"benchmarl_mappo.py: unknown task {name!r}; expected one of: {names}")
    config = {"num_threads": args.threads}
    if args.max_steps:
        config[steps_key] = args.max_steps
    return member.get_task(config)


class Curve(Callback):
    """The mean return (BenchMARL's, over the episodes that ended) of each iteration."""

    def __init__(self):
        super().__init__()
        self.rows: list[tuple[int, float]] = []
        self.start = time.perf_counter()

    def on_batch_collected(self, batch):
        e = self.experiment
        self.rows.append((e.total_frames, e.mean_return))
        print(f"iter {len(self.rows):4d}  frames {e.total_frames:8d}  mean return {e.mean_return:9.2f}  "
              f"({time.perf_counter() - self.start:.0f} s)", flush=True)


def random_return(task, args) -> float:
    """A uniformly random policy's mean episode return (one episode per world)."""
    env = task.get_env_fun(num_envs=args.worlds, continuous_actions=True, seed=args.seed + 1000, device="cpu")()
    td = env.rollout(task.max_steps(env), break_when_any_done=False)
    done = td["next", "done"].squeeze(-1)
    total = 0.0
    for group in env.group_map:
        reward = td["next", group, "reward"].mean(dim=(-2, -1))  # mean over the group's agents
        total += float(reward.sum(-1).mean())  # (the episode: the whole rollout)
    env.close()
    assert bool(done[:, -1].all())
    return total / len(env.group_map)


def experiment_config(args, folder: str) -> ExperimentConfig:
    config = ExperimentConfig.get_from_yaml()
    config.loggers, config.create_json, config.render, config.evaluation = [], False, False, False
    config.checkpoint_at_end, config.checkpoint_interval = False, 0
    config.save_folder = folder
    config.max_n_frames, config.max_n_iters = args.frames, None
    config.on_policy_collected_frames_per_batch = args.frames_per_batch
    config.on_policy_n_envs_per_worker = args.worlds
    config.on_policy_n_minibatch_iters = args.minibatch_iters
    config.on_policy_minibatch_size = args.minibatch_size
    return config


def run(name: str, args) -> tuple[float, float]:
    task = task_of(name, args)
    baseline = random_return(task, args)
    curve = Curve()
    with tempfile.TemporaryDirectory(prefix="benchmarl_") as folder:
        experiment = Experiment(task=task, algorithm_config=MappoConfig.get_from_yaml(),
                                model_config=MlpConfig.get_from_yaml(), critic_model_config=MlpConfig.get_from_yaml(),
                                seed=args.seed, config=experiment_config(args, folder), callbacks=[curve])
        print(f"== {name}: MAPPO, {args.frames} frames, {args.worlds} worlds of one batched env; groups "
              f"{experiment.group_map}; random policy's return {baseline:.2f}", flush=True)
        experiment.run()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    write_curve_csv(str(out / f"{name}.csv"), ["frames", "mean_return"], curve.rows)
    frames, returns = zip(*curve.rows)
    plot_learning_curve(str(out / f"{name}.png"), frames, returns, baseline, "BenchMARL MAPPO",
                        f"BenchMARL MAPPO on joltgym_marl: {name}")
    ended = [r for r in returns if r == r]  # (NaN: no episode ended in that iteration)
    first, last = (ended[0], ended[-1]) if ended else (float("nan"), float("nan"))
    print(f"{name}: mean return {first:.2f} (first iteration with an episode end) -> {last:.2f} (last); random "
          f"policy {baseline:.2f}; curve {out / (name + '.png')}", flush=True)
    return first, last


def main(args) -> int:
    torch.set_num_threads(1)
    for name in args.tasks:
        run(name, args)
    return 0


if __name__ == "__main__":
    sys.exit(main(ARGS))
