"""Self-play PPO on batched native sumo worlds, in one file.

    .venv/bin/python examples/selfplay_sumo.py          # the full run (about 23 min on 2 cores)
    .venv/bin/python examples/selfplay_sumo.py --quick  # about a minute, barely trained (for CI)

The learner plays ant_0 of every world; ant_1 is played by frozen snapshots of
the learner drawn from an opponent pool: for each group of worlds at every
rollout, a still Ant (zero actions) with probability --still-share, else the
latest snapshot with probability --p-latest, else a uniformly drawn older one.
Snapshots play their mean action (--opponent-actions mean), so the first ones
stand almost still: a target that can be beaten only by walking up to it and
pushing it out, which is what the learner must find first.

The worlds' ``shaping_weight`` (on moving toward the opponent, pushing it
outward and the control cost, whose own weight is --ctrl-cost) starts at
--shaping-start and is annealed linearly to 0 over the first --anneal fraction
of training through that episode option; after that only the outcome counts. PPO
takes --epochs passes of --minibatch samples over every rollout: the physics is
the cost here, so each sample is used for many gradient steps.

Every --eval-every iterations the learner (deterministic) plays
--eval-episodes bouts against a uniform-random opponent, against the pool and
against a still Ant; the log goes to <out>/log.csv, checkpoints to
<out>/checkpoints/, and the learning curve to <out>/learning_curve.png.
"""

from __future__ import annotations

import argparse
import csv
import json
import time
from pathlib import Path

import numpy as np
import torch

import joltgym_marl
from sumo_common import (ACT_DIM, AUTORESET, DRAW, LOSS, OBS_DIM, WIN, ActorCritic, Player, RunningNorm,
                         play_matches, save_checkpoint)


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help="a one-minute smoke run")
    p.add_argument("--total-steps", type=int, default=4_000_000, help="learner env steps")
    p.add_argument("--worlds", type=int, default=64)
    p.add_argument("--rollout", type=int, default=128, help="steps per world per iteration")
    p.add_argument("--epochs", type=int, default=10)
    p.add_argument("--minibatch", type=int, default=512)
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--gamma", type=float, default=0.995)
    p.add_argument("--lam", type=float, default=0.95)
    p.add_argument("--clip", type=float, default=0.2)
    p.add_argument("--reward-scale", type=float, default=0.01)
    p.add_argument("--anneal", type=float, default=0.5, help="fraction of training to anneal shaping to 0")
    p.add_argument("--snapshot-every", type=int, default=10, help="iterations between opponent snapshots")
    p.add_argument("--p-latest", type=float, default=0.5)
    p.add_argument("--groups", type=int, default=4, help="opponent groups per rollout")
    p.add_argument("--opponent-actions", choices=("mean", "sample"), default="mean",
                   help="frozen opponents play their mean action or sample from their policy")
    p.add_argument("--still-share", type=float, default=0.25, help="probability that a group faces a still Ant")
    p.add_argument("--hidden", type=int, default=64)
    p.add_argument("--shaping-start", type=float, default=10.0, help="shaping weight at the start of training")
    p.add_argument("--ctrl-cost", type=float, default=0.01, help="the worlds' ctrl_cost_weight")
    p.add_argument("--init-log-std", type=float, default=-1.0, help="initial log std of the learner's actions")
    p.add_argument("--eval-every", type=int, default=50)
    p.add_argument("--eval-episodes", type=int, default=64)
    p.add_argument("--threads", type=int, default=None)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", type=Path, default=Path("runs/selfplay_sumo"))
    args = p.parse_args()
    if args.quick:
        args.total_steps, args.worlds, args.rollout = 16_384, 32, 64
        args.snapshot_every, args.eval_every, args.eval_episodes = 2, 4, 16
        args.minibatch = 1024
    return args


def main() -> None:
    args = parse_args()
    torch.manual_seed(args.seed)
    torch.set_num_threads(1)  # the physics uses the cores
    rng = np.random.default_rng(args.seed)
    out = args.out
    (out / "checkpoints").mkdir(parents=True, exist_ok=True)
    config = {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()}
    (out / "config.json").write_text(json.dumps(config, indent=2))

    n, t_len = args.worlds, args.rollout
    policy = ActorCritic(args.hidden, args.init_log_std)
    optimizer = torch.optim.Adam(policy.parameters(), lr=args.lr)
    norm = RunningNorm(OBS_DIM)
    snapshots: list[tuple[dict, dict]] = [(
        {k: v.clone() for k, v in policy.state_dict().items()}, norm.state())]

    def snapshot_player(index: int) -> Player:
        weights, stats = snapshots[index]
        frozen = ActorCritic(args.hidden)
        frozen.load_state_dict(weights)
        return Player(frozen, RunningNorm.from_state(stats), name=f"snapshot {index}")

    def draw_opponents() -> list[Player]:
        picks = []
        for _ in range(args.groups):
            if rng.random() < args.still_share:
                picks.append(Player(None, None, "still"))
                continue
            latest = len(snapshots) == 1 or rng.random() < args.p_latest
            picks.append(snapshot_player(len(snapshots) - 1 if latest else int(rng.integers(len(snapshots) - 1))))
        return picks

    pool = joltgym_marl.WorldPool("sumo", n, num_threads=args.threads, max_episode_steps=500,
                                  autoreset_mode="same_step", shaping_weight=args.shaping_start,
                                  ctrl_cost_weight=args.ctrl_cost)
    obs = pool.reset_all(seed=args.seed)
    outcome_col = [f[1] for f in pool.info_fields if f[0] == "outcome"][0]
    group_of = np.arange(n) * args.groups // n

    buf_obs = np.zeros((t_len, n, OBS_DIM), np.float32)
    buf_act = np.zeros((t_len, n, ACT_DIM), np.float32)
    buf_logp = np.zeros((t_len, n), np.float32)
    buf_val = np.zeros((t_len + 1, n), np.float32)
    buf_rew = np.zeros((t_len, n), np.float32)
    buf_done = np.zeros((t_len, n), np.float32)
    actions = np.zeros((n, 2, ACT_DIM), np.float32)

    log_path = out / "log.csv"
    log_file = log_path.open("w", newline="")
    log = csv.writer(log_file)
    log.writerow(["iteration", "steps", "shaping_weight", "train_win", "train_draw", "train_loss",
                  "random_win", "random_draw", "random_loss", "pool_win", "pool_draw", "pool_loss",
                  "still_win", "still_draw", "still_loss", "steps_per_s"])
    curve: list[tuple[int, float]] = []

    def evaluate(steps: int) -> tuple[dict, dict, dict]:
        policy.eval()
        learner = Player(policy, RunningNorm.from_state(norm.state()), name="learner")
        vs_random = play_matches(learner, Player(None, None, "random"), args.eval_episodes, seed=steps,
                                 num_threads=args.threads)
        vs_pool = play_matches(learner, snapshot_player(int(rng.integers(len(snapshots)))),
                               args.eval_episodes, seed=steps + 1, num_threads=args.threads)
        vs_still = play_matches(learner, Player(None, None, "still"), args.eval_episodes,
                                seed=steps + 2, num_threads=args.threads)
        policy.train()
        return vs_random, vs_pool, vs_still

    iterations = max(1, args.total_steps // (n * t_len))
    steps, start = 0, time.perf_counter()
    save_checkpoint(out / "checkpoints" / "untrained.pt", policy, norm, config, 0)
    vs_random, vs_pool, vs_still = evaluate(0)
    curve.append((0, vs_random["win"] / args.eval_episodes, vs_still["win"] / args.eval_episodes))
    print(f"untrained learner vs random: {vs_random}   vs pool: {vs_pool}   vs still: {vs_still}")
    for it in range(1, iterations + 1):
        weight = args.shaping_start * (max(0.0, 1.0 - (steps / args.total_steps) / args.anneal)
                                       if args.anneal > 0 else 0.0)
        pool.set_option("shaping_weight", weight)
        opponents = draw_opponents()
        results = {WIN: 0, DRAW: 0, LOSS: 0}
        policy.eval()
        for t in range(t_len):
            learner_obs = obs[:, 0].copy()
            norm.update(learner_obs)
            x = torch.from_numpy(norm(learner_obs))
            with torch.no_grad():
                dist = policy.dist(x)
                action = dist.sample()
                buf_logp[t] = dist.log_prob(action).sum(-1).numpy()
                buf_val[t] = policy.value(x).numpy()
            buf_obs[t], buf_act[t] = norm(learner_obs), action.numpy()
            actions[:, 0] = action.clamp(-1, 1).numpy()
            for g, opponent in enumerate(opponents):
                rows = group_of == g
                actions[rows, 1] = opponent.act(obs[rows, 1], rng, deterministic=args.opponent_actions == "mean")
            pool.step_all(actions)
            buf_rew[t] = pool.rewards[:, 0] * args.reward_scale
            ended = pool.reset_kind == AUTORESET
            buf_done[t] = ended
            for w in np.flatnonzero(ended):
                results[int(pool.final_infos[w, 0, outcome_col])] += 1
        with torch.no_grad():
            buf_val[t_len] = policy.value(torch.from_numpy(norm(obs[:, 0].copy()))).numpy()
        steps += n * t_len
        policy.train()

        # GAE; an ended episode (win, loss, draw or timeout) is terminal.
        adv = np.zeros((t_len, n), np.float32)
        last = np.zeros(n, np.float32)
        for t in reversed(range(t_len)):
            nonterminal = 1.0 - buf_done[t]
            delta = buf_rew[t] + args.gamma * buf_val[t + 1] * nonterminal - buf_val[t]
            last = delta + args.gamma * args.lam * nonterminal * last
            adv[t] = last
        ret = adv + buf_val[:t_len]
        b_obs = torch.from_numpy(buf_obs.reshape(-1, OBS_DIM))
        b_act = torch.from_numpy(buf_act.reshape(-1, ACT_DIM))
        b_logp = torch.from_numpy(buf_logp.reshape(-1))
        b_adv = torch.from_numpy(adv.reshape(-1))
        b_ret = torch.from_numpy(ret.reshape(-1))
        total = len(b_obs)
        for _ in range(args.epochs):
            order = torch.randperm(total)
            for lo in range(0, total, args.minibatch):
                idx = order[lo:lo + args.minibatch]
                dist = policy.dist(b_obs[idx])
                logp = dist.log_prob(b_act[idx]).sum(-1)
                ratio = (logp - b_logp[idx]).exp()
                a = b_adv[idx]
                a = (a - a.mean()) / (a.std() + 1e-8)
                policy_loss = -torch.min(ratio * a, ratio.clamp(1 - args.clip, 1 + args.clip) * a).mean()
                value_loss = 0.5 * (policy.value(b_obs[idx]) - b_ret[idx]).pow(2).mean()
                loss = policy_loss + 0.5 * value_loss
                optimizer.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(policy.parameters(), 0.5)
                optimizer.step()

        if it % args.snapshot_every == 0:
            snapshots.append(({k: v.clone() for k, v in policy.state_dict().items()}, norm.state()))
        games = max(1, sum(results.values()))
        rate = steps / (time.perf_counter() - start)
        row = [it, steps, round(weight, 3), results[WIN] / games, results[DRAW] / games, results[LOSS] / games]
        if it % args.eval_every == 0 or it == iterations:
            vs_random, vs_pool, vs_still = evaluate(steps)
            curve.append((steps, vs_random["win"] / args.eval_episodes, vs_still["win"] / args.eval_episodes))
            save_checkpoint(out / "checkpoints" / f"step_{steps:09d}.pt", policy, norm, config, steps)
            save_checkpoint(out / "checkpoints" / "latest.pt", policy, norm, config, steps)
            row += [vs_random[k] / args.eval_episodes for k in ("win", "draw", "loss")]
            row += [vs_pool[k] / args.eval_episodes for k in ("win", "draw", "loss")]
            row += [vs_still[k] / args.eval_episodes for k in ("win", "draw", "loss")]
            print(f"iter {it:4d}  steps {steps:>9,}  shaping {weight:.2f}  "
                  f"vs random W/D/L {vs_random['win']}/{vs_random['draw']}/{vs_random['loss']}  "
                  f"vs pool {vs_pool['win']}/{vs_pool['draw']}/{vs_pool['loss']}  "
                  f"vs still {vs_still['win']}/{vs_still['draw']}/{vs_still['loss']}  {rate:,.0f} steps/s",
                  flush=True)
        else:
            row += [""] * 9
        log.writerow(row + [round(rate)])
        log_file.flush()
    log_file.close()
    pool.close()
    plot_curve(curve, out / "learning_curve.png")
    print(f"done: {steps:,} learner steps in {time.perf_counter() - start:.0f} s; "
          f"log {log_path}, checkpoint {out / 'checkpoints' / 'latest.pt'}")


def plot_curve(curve: list[tuple[int, float, float]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    steps, wins, still = zip(*curve)
    fig, ax = plt.subplots(figsize=(6, 3.5))
    ax.plot(steps, [100 * w for w in wins], marker="o", label="vs random actions")
    ax.plot(steps, [100 * w for w in still], marker="s", label="vs a still Ant")
    ax.axhline(60, color="grey", linestyle="--", linewidth=1)
    ax.legend(loc="lower right")
    ax.set_xlabel("learner env steps")
    ax.set_ylabel("win rate (%)")
    ax.set_ylim(0, 100)
    ax.set_title("sumo_v0 self-play PPO")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


if __name__ == "__main__":
    main()
