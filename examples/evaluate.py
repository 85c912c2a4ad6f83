"""Evaluate saved policies: a self-play game's win/draw/loss table, or a
single-agent policy's returns on either physics engine.

    .venv/bin/python examples/evaluate.py CHECKPOINT [OPPONENT] [--episodes 200]
    .venv/bin/python examples/evaluate.py scripted still --game sumo_v0 --episodes 50
    .venv/bin/python examples/evaluate.py AGENT.pt --engine mujoco jolt --episodes 20

A single-agent policy is a checkpoint saved by cleanrl_ppo_continuous.py
--save-model, a linear policy (``policy.json``) written by the Java ARS trainer
(``joltgym.ars.Ars``, docs/guides/java.md: replayed in the trainer's order of
operations, so each episode's return is the Java evaluation's, bit for bit,
printed exactly under the table), or ``still``/``random`` with --env-id. It plays one episode in
each of --episodes worlds (episode i seeded --seed + i), deterministically (the
mean action, the observation normalizer frozen as training left it), on each
--engine (default: the engine it was trained on); the table gives the mean and
standard deviation over the episodes of the return and of the mean forward
velocity and the episode length. A policy trained on MuJoCo evaluated on Jolt (and the reverse) is a
sim-to-sim transfer: docs/guides/jolt.md.

In a game, each player is a checkpoint saved by selfplay.py (or selfplay_sumo.py),
``still`` (zero actions), ``random`` (uniform random actions), ``scripted``
(the game's scripted baseline, examples/scripted.py) or a file of Bansal et
al.'s agent zoo (``agent-zoo/...pkl`` of openai/multiagent-competition, which
you download yourself; docs/guides/zoo.md): a zoo file names its game and
robot, and the game is then played in its ``form=gym_compete``; zoo policies
sample their actions as the archive's main.py does (--zoo-actions mean: the
mean action). The first plays the
game's first agent (``ant_0``), the second every other agent; in an
asymmetric game each player must fit its seat's role (a walker checkpoint
first, a blocker second). The game is the first checkpoint's (or zoo file's), else --game.
Bouts run with deterministic policies and no reward shaping, batched on
native worlds; the table gives each player's wins, draws and losses with a
95% Wilson confidence interval of its win rate. --engine runs the game on that
engine (where the registry says the game runs on it).
"""

from __future__ import annotations

import os

# One BLAS thread for NumPy (a zoo policy's small matrix products on many threads cost 50 times more);
# set before NumPy is imported.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("first", help="checkpoint path, zoo file, 'still', 'random' or 'scripted'")
    parser.add_argument("second", nargs="?", default=None,
                        help="a game's second player: checkpoint path, zoo file, 'still', 'random' (default) or "
                             "'scripted'")
    parser.add_argument("--zoo-actions", choices=("sample", "mean"), default="sample",
                        help="zoo policies sample their actions (as the archive's main.py) or play their mean")
    parser.add_argument("--engine", nargs="+", choices=("mujoco", "jolt"), default=None,
                        help="the physics engine(s) to evaluate on (several: one table row each, single-agent "
                             "policies only; default: the policy's training engine, else mujoco)")
    parser.add_argument("--env-id", default=None,
                        help="the single-agent task for 'still' or 'random' (a joltgym_marl/... Gymnasium id)")
    parser.add_argument("--game", default=None, help="the game when no checkpoint names it (default sumo_v0)")
    parser.add_argument("--robot", default=None, help="the game's robot, where it has a robot argument")
    parser.add_argument("--game-arg", action="append", default=[], metavar="NAME=VALUE",
                        help="a game keyword argument (repeatable; default: the first checkpoint's)")
    parser.add_argument("--episodes", type=int, default=200)
    parser.add_argument("--worlds", type=int, default=50)
    parser.add_argument("--seed", type=int, default=12345)
    parser.add_argument("--threads", type=int, default=None)
    args = parser.parse_args()
    if args.episodes < 1 or args.worlds < 1:
        parser.error(f"--episodes and --worlds should be >= 1, got {args.episodes} and {args.worlds}")
    if args.env_id is not None or single_agent_checkpoint(args.first) or ars_policy(args.first) is not None:
        try:
            evaluate_single_agent(args)
        except ValueError as e:
            parser.error(str(e))
        return
    if args.engine is not None and len(args.engine) > 1:
        parser.error(f"a game runs on one --engine at a time, got {' '.join(args.engine)}")
    args.second = "random" if args.second is None else args.second
    # Imported after parsing: --help and bad arguments answer before torch is imported (seconds).
    from selfplay_common import (describe_game, find_spec, is_zoo_file, load_checkpoint_player, make_player,
                                 parse_game_args, play_bouts, wilson_interval)

    from joltgym_marl import zoo

    try:
        recorded = None
        for spec in (args.first, args.second):
            if spec in ("still", "random", "scripted") or not Path(spec).is_file():
                continue
            if is_zoo_file(spec):
                entry = zoo.entry_for_file(spec)
                if entry is not None:
                    recorded = {"game": entry.game, "game_kwargs": entry.game_kwargs()}
                    break
                continue
            recorded = load_checkpoint_player(spec)[1]
            break
        game_name = args.game or (recorded["game"] if recorded else "sumo_v0")
        kwargs = dict(recorded["game_kwargs"]) if recorded and find_spec(recorded["game"]) == find_spec(game_name) else {}
        kwargs.update(parse_game_args(find_spec(game_name), args.game_arg))
        if args.engine is not None:
            kwargs["engine"] = args.engine[0]
        robot = args.robot
        game = describe_game(game_name, robot, kwargs)
        stochastic = args.zoo_actions == "sample"
        first = make_player(args.first, game, 0, stochastic)
        others = [make_player(args.second, game, k, stochastic) for k in range(1, len(game.agents))]
    except ValueError as e:
        parser.error(str(e))
    counts = play_bouts(game, [first, *others], args.episodes, worlds=args.worlds, seed=args.seed,
                        num_threads=args.threads)
    names = [args.first, args.second]
    rows = [counts[0], counts[1:].sum(0) if len(game.agents) == 2 else counts[1]]
    seats = [game.agents[0], ", ".join(game.agents[1:])]
    width = max(len(n) for n in names + ["player"])
    print(f"{args.episodes} {game.name} bouts ({game.robot}), {names[0]} ({seats[0]}) vs {names[1]} ({seats[1]})")
    print(f"| {'player':<{width}} | win | draw | loss | win rate | 95% CI |")
    print(f"|{'-' * (width + 2)}|----:|-----:|-----:|---------:|--------|")
    for name, (win, draw, loss) in zip(names, rows):
        low, high = wilson_interval(win, args.episodes)
        print(f"| {name:<{width}} | {win:>3} | {draw:>4} | {loss:>4} | {100 * win / args.episodes:>7.1f}% | "
              f"{100 * low:.0f}-{100 * high:.0f}% |")


def single_agent_checkpoint(path: str) -> bool:
    """Whether ``path`` is a file saved by cleanrl_ppo_continuous.py --save-model (not a self-play checkpoint)."""
    if path in ("still", "random", "scripted") or not Path(path).is_file() or path.endswith("pkl"):
        return False  # a baseline, or a zoo file (agent-zoo/*.pkl; not torch's)
    import torch
    from cleanrl_ppo_continuous import CHECKPOINT_FORMAT

    try:
        data = torch.load(path, map_location="cpu", weights_only=True)  # ours hold tensors and plain values only
    except Exception:  # not a torch file, or not one of ours: the self-play loader says which
        return False
    return isinstance(data, dict) and data.get("format") == CHECKPOINT_FORMAT


# The format tag of the Java ARS trainer's policy files (java/src/main/java/joltgym/ars/LinearPolicy.java).
ARS_FORMAT = "joltgym_marl.ars_linear/1"


def ars_policy(path: str) -> dict | None:
    """The linear policy in ``path`` if it is a policy.json of the Java ARS trainer, else None."""
    if not path.endswith(".json") or not Path(path).is_file():
        return None
    import json

    try:
        data = json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and data.get("format") == ARS_FORMAT else None


def ars_actions(policy: dict):
    """``act(obs, space)`` of an ARS policy: clip(W ((x - mean) * inv_std), low, high), each sum in
    float64 over the observation in order, as the Java trainer computes it (so the actions, and the
    episodes, are bit-identical to its). Bounds of null: the trainer did not clip (its default, as
    the ARS paper's code), and neither does the replay."""
    import numpy as np

    weights, mean, inv_std = policy["weights"], policy["mean"], policy["inv_std"]
    low = policy["action_low"] or [-np.inf] * len(weights)
    high = policy["action_high"] or [np.inf] * len(weights)

    def act(obs, space):
        out = np.empty((len(obs), len(weights)))
        for r, row in enumerate(obs.tolist()):
            z = [(x - m) * s for x, m, s in zip(row, mean, inv_std)]
            for j, wj in enumerate(weights):
                acc = 0.0
                for w, v in zip(wj, z):
                    acc += w * v
                out[r, j] = min(max(acc, low[j]), high[j])
        return out

    return act


def check_engines(env_id: str, engines: list[str]) -> None:
    """ValueError unless ``env_id`` is a registered single-agent task that runs on every engine of ``engines``."""
    from joltgym_marl.registry import SINGLE_AGENT_TASKS

    spec = next((s for s in SINGLE_AGENT_TASKS if s.env_id == env_id), None)
    if spec is None:
        raise ValueError(f"--env-id should be one of {', '.join(s.env_id for s in SINGLE_AGENT_TASKS)}, "
                         f"got {env_id!r}")
    for engine in engines:
        if engine not in spec.engines:
            runs = [s.env_id for s in SINGLE_AGENT_TASKS if engine in s.engines]
            raise ValueError(f"{env_id} does not run on engine {engine!r} (it runs on {', '.join(spec.engines)}); "
                             f"engine {engine!r} runs {', '.join(runs)}")


def evaluate_single_agent(args) -> None:
    import numpy as np

    clip = True  # actions clipped to the action space, but for an ARS policy, which applies its own bounds

    if args.second is not None or args.game is not None or args.robot is not None or args.game_arg:
        raise ValueError("a single-agent policy plays alone: give no OPPONENT, --game, --robot or --game-arg "
                         f"(got {' '.join(str(x) for x in (args.second, args.game, args.robot, *args.game_arg) if x)})")
    if args.first in ("still", "random"):
        if args.env_id is None:
            raise ValueError(f"{args.first!r} needs --env-id (the task to play)")
        env_id, trained_on, about = args.env_id, "-", f"{args.first} actions"
        engines = args.engine or ["mujoco"]
        check_engines(env_id, engines)  # before torch is imported (seconds)
        rng = np.random.default_rng(args.seed)
        if args.first == "still":
            def act(obs, space):
                return np.zeros((len(obs), *space.shape))
        else:
            def act(obs, space):
                return rng.uniform(space.low, space.high, (len(obs), *space.shape))
    elif (policy := ars_policy(args.first)) is not None:
        env_id, trained_on = policy["env_id"], "mujoco"
        if args.env_id is not None and args.env_id != env_id:
            raise ValueError(f"{args.first} was trained on {env_id}, got --env-id {args.env_id}")
        engines = args.engine or ["mujoco"]
        check_engines(env_id, engines)
        about = f"linear policy, {policy.get('about', 'ARS')}"
        act = ars_actions(policy)
        clip = False  # ars_actions bounds the actions as the trainer did (not at all when it trained unclipped)
    else:
        if not Path(args.first).is_file():
            raise ValueError(f"policy {args.first!r} should be 'still', 'random' or a checkpoint file saved by "
                             "cleanrl_ppo_continuous.py --save-model")
        import torch
        from cleanrl_ppo_continuous import load_checkpoint, normalized

        agent, checkpoint = load_checkpoint(args.first)
        if args.env_id is not None and args.env_id != checkpoint["env_id"]:
            raise ValueError(f"{args.first} was trained on {checkpoint['env_id']}, got --env-id {args.env_id}")
        env_id, trained_on = checkpoint["env_id"], checkpoint["engine"]
        engines = args.engine or [trained_on]
        check_engines(env_id, engines)
        about = f"PPO trained on {trained_on} for {checkpoint['global_step']:,} steps, deterministic actions"

        def act(obs, space):
            # Row by row: a batched forward pass rounds differently for another batch size (by
            # ~1e-9), which a falling robot amplifies into another episode. One row at a time,
            # an episode depends on its seed alone, whatever --worlds batches it with.
            with torch.no_grad():
                return np.concatenate([agent.actor_mean(normalized(checkpoint, row[None])).numpy() for row in obs])
    from cleanrl_ppo_continuous import run_episodes

    name = Path(args.first).name
    print(f"{env_id}: {name} ({about}), {args.episodes} episodes (seeds {args.seed}-{args.seed + args.episodes - 1})")
    print("| policy | trained on | evaluated on | episodes | return (mean ± std) | episode length (mean ± std) "
          "| forward velocity, m/s (mean ± std) |")
    print("|---|---|---|---:|---:|---:|---:|")
    for engine in engines:
        returns, speeds, lengths = run_episodes(env_id, engine, args.episodes, args.seed, act,
                                                num_threads=args.threads, worlds=args.worlds, clip=clip)
        speed = "n/a" if np.isnan(speeds).all() else f"{speeds.mean():.2f} ± {speeds.std():.2f}"
        print(f"| {name} | {trained_on} | {engine} | {args.episodes} | {returns.mean():,.1f} ± {returns.std():,.1f} "
              f"| {lengths.mean():,.0f} ± {lengths.std():,.0f} | {speed} |", flush=True)
        if ars_policy(args.first) is not None:
            print(f"episode returns on {engine} (exact): {' '.join(repr(float(r)) for r in returns)}")

if __name__ == "__main__":
    main()
