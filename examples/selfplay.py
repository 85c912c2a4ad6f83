"""Self-play PPO for any registered game, on batched native worlds.

    .venv/bin/python examples/selfplay.py --game sumo_v0 --robot ant    # long-running (4M learner steps)
    .venv/bin/python examples/selfplay.py --game sumo_v0 --quick        # about a minute, barely trained

The game is read from the task registry (``joltgym_marl.registry.GAMES``) and
run through its module's ``vec_env``: a new game needs no change here. Each
role of the game (an agent's name without its ``_<k>`` index) gets its own
learner: a symmetric game (sumo's ``ant_0``/``ant_1``) has one, which plays
every seat in turn; an asymmetric one (``walker``/``blocker``) has one per
role, each facing snapshots of the other roles. --per-seat makes every seat a
role of its own: in run-to-goal, whose observations are in the world frame by
default, a shared policy must tell from them which way its goal lies
(--game-arg obs_frame=goal turns agent_1's view so its goal is at +x too).

The worlds are split into --groups groups; in each, one seat is the learner's
(its role and seat cycle over the groups) and every other seat is played, for
one rollout, by an opponent of that seat's role: a still robot (zero
actions) with probability --still-share, else a frozen snapshot of that
role's learner drawn uniformly from the most recent fraction --delta of its
history (Bansal et al. 2018; with --p-latest > 0 the latest snapshot is
picked with that probability first). --zoo-opponent ZOO_FILE adds a policy of
Bansal et al.'s agent zoo (joltgym_marl.zoo; the game is then played in its
form=gym_compete): a seat it can play faces it with probability --zoo-share
(after the still robot's draw), and every evaluation plays it too
(``vs zoo``); --zoo-share 1 --still-share 0 trains against it alone. A snapshot joins the history every
--snapshot-every iterations; snapshots play their mean action
(--opponent-actions).

The game's dense shaping (its ``shaping_weight`` episode option, where it has
one) starts at --shaping-start and is annealed linearly to 0 over the first
--anneal fraction of training; after that only the outcome counts. PPO takes
--epochs passes of --minibatch samples over every rollout (the physics is the
cost here, so each sample is used for many gradient steps).

Every --eval-every iterations each learner (deterministic) plays
--eval-episodes bouts against a still robot, random actions and the game's
scripted baseline (examples/scripted.py, where the game has one), its
checkpoint is saved, and the checkpoint plays --elo-bouts bouts against up to
--elo-opponents earlier checkpoints (the previous one first) and a still
robot to rate it: Elo ratings (K = --elo-k, updated bout by bout; the first
checkpoint and the still robot start at 1000, each later checkpoint at its
predecessor's rating) go to <out>/elo.json and <out>/elo.csv next to
<out>/checkpoints/. A line of progress is printed every --log-every
iterations; the log goes to <out>/log.csv and the learning curve (win rates
and Elo over training) to <out>/learning_curve.png, redrawn at every
evaluation.
"""

from __future__ import annotations

import os

# One BLAS thread for NumPy (a zoo policy's small matrix products on many threads cost 50 times more);
# set before NumPy is imported.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
import argparse
import csv
import json
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from selfplay_args import QUICK, build_parser, parse_args  # noqa: E402,F401  (torch-free)

if __name__ == "__main__":
    # Arguments first: --help and bad arguments answer before torch is imported (that takes seconds).
    parse_args()

import numpy as np  # noqa: E402
import torch  # noqa: E402

from selfplay_common import (AUTORESET, BASELINES, DRAW, LOSS, SHAPING_OPTION, WIN, ActorCritic,  # noqa: E402
                             EloTable, Game, Outcomes, Player, PolicyPlayer, RandomPlayer, RunningNorm,
                             ScriptedPlayer, StillPlayer, describe_game, make_zoo_player, play_bouts,
                             sample_recent, save_checkpoint, step_players)


@dataclass
class Learner:
    """One role's PPO learner, its rows (world, seat) and its snapshot history."""

    role: str
    policy: ActorCritic
    optimizer: torch.optim.Optimizer
    norm: RunningNorm
    worlds: np.ndarray  # the worlds where it plays this rollout ...
    seats: np.ndarray  # ... and its seat in each
    history: list[tuple[dict, dict]] = field(default_factory=list)
    checkpoints: list[tuple[str, int, PolicyPlayer]] = field(default_factory=list)  # (name, steps, player)
    results: dict[int, int] = field(default_factory=dict)

    def snapshot(self) -> tuple[dict, dict]:
        return {k: v.clone() for k, v in self.policy.state_dict().items()}, self.norm.state()

    def frozen(self, hidden: int, name: str, state: tuple[dict, dict] | None = None) -> PolicyPlayer:
        weights, stats = state or self.snapshot()
        policy = ActorCritic(self.policy.obs_dim, self.policy.act_dim, hidden)
        policy.load_state_dict(weights)
        policy.eval()
        return PolicyPlayer(policy, RunningNorm.from_state(stats), name, self.role)


class Trainer:
    def __init__(self, args: argparse.Namespace):
        self.args = args
        torch.manual_seed(args.seed)
        torch.set_num_threads(1)  # the physics uses the cores
        torch.distributions.Distribution.set_default_validate_args(False)  # shapes are ours: skip the checks
        self.rng = np.random.default_rng(args.seed)
        self.game = game = describe_game(args.game, args.robot, args.game_kwargs, args.max_cycles,
                                         per_seat=args.per_seat)
        self.out = args.out
        (self.out / "checkpoints").mkdir(parents=True, exist_ok=True)
        self.config = {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()}
        self.config.update(game=game.name, robot=game.robot, roles=game.role_names)
        (self.out / "config.json").write_text(json.dumps(self.config, indent=2))

        n = args.worlds
        roles = game.role_names
        groups = max(args.groups, len(roles))
        self.group_of = np.arange(n) * groups // n
        # Group g: the learner of role roles[g % R] in that role's seats in turn.
        self.group_seat = []
        for g in range(groups):
            seats = game.seats(roles[g % len(roles)])
            self.group_seat.append(seats[(g // len(roles)) % len(seats)])
        self.learners: dict[str, Learner] = {}
        for role in roles:
            seat = game.role_seat(role)
            policy = ActorCritic(game.obs_dims[seat], game.act_dims[seat], args.hidden, args.init_log_std)
            mine = [g for g in range(groups) if game.roles[self.group_seat[g]] == role]
            worlds = np.flatnonzero(np.isin(self.group_of, mine))
            if len(worlds) == 0:
                raise ValueError(f"--worlds {n} leaves the {role} learner no world; use more worlds")
            learner = Learner(role, policy, torch.optim.Adam(policy.parameters(), lr=args.lr),
                              RunningNorm(game.obs_dims[seat]), worlds,
                              np.array([self.group_seat[g] for g in self.group_of[worlds]]))
            learner.history.append(learner.snapshot())
            self.learners[role] = learner
        self.frozen_cache: dict[tuple[str, int], PolicyPlayer] = {}
        # The zoo opponent: one player per seat it can play (an LSTM keeps a state per world).
        self.zoo_players: dict[int, Player] = {}
        self.zoo_worlds: dict[int, np.ndarray] = {}
        if args.zoo_opponent is not None:
            stochastic = args.zoo_actions == "sample"
            errors = []
            for seat in range(len(game.agents)):
                try:
                    self.zoo_players[seat] = make_zoo_player(args.zoo_opponent, game, seat, stochastic)
                except ValueError as e:
                    errors.append(str(e))
            if not self.zoo_players:
                raise ValueError(errors[0])
        self.elo = EloTable(k=args.elo_k)
        self.prefix = (lambda role: "") if game.symmetric else (lambda role: f"{role}_")
        self.curve: list[dict] = []
        self.scripted = True
        try:
            for seat in range(len(game.agents)):
                ScriptedPlayer(game, seat)
        except ValueError:
            self.scripted = False

    # -- opponents ------------------------------------------------------------------------------

    def snapshot_player(self, role: str, index: int) -> PolicyPlayer:
        key = (role, index)
        if key not in self.frozen_cache:
            learner = self.learners[role]
            self.frozen_cache[key] = learner.frozen(self.args.hidden, f"{role} snapshot {index}",
                                                    learner.history[index])
        return self.frozen_cache[key]

    def draw_opponent(self, seat: int) -> Player:
        args, game = self.args, self.game
        role = game.roles[seat]
        if self.rng.random() < args.still_share:
            return StillPlayer(game.act_dims[seat])
        if seat in self.zoo_players and self.rng.random() < args.zoo_share:
            return self.zoo_players[seat]
        history = self.learners[role].history
        if args.p_latest > 0 and len(history) > 1:
            if self.rng.random() < args.p_latest:
                return self.snapshot_player(role, len(history) - 1)
            return self.snapshot_player(role, sample_recent(len(history) - 1, args.delta, self.rng))
        return self.snapshot_player(role, sample_recent(len(history), args.delta, self.rng))

    def draw_opponents(self) -> list[tuple[np.ndarray, int, Player]]:
        seat_players = []
        for g, learner_seat in enumerate(self.group_seat):
            worlds = np.flatnonzero(self.group_of == g)
            if len(worlds) == 0:
                continue
            for seat in range(len(self.game.agents)):
                if seat != learner_seat:
                    seat_players.append((worlds, seat, self.draw_opponent(seat)))
        # A zoo LSTM's state follows its worlds' episodes; worlds it takes over mid-episode start afresh.
        for seat, player in self.zoo_players.items():
            mine = [w for w_, s, p in seat_players if p is player and s == seat for w in w_]
            mine = np.array(sorted(mine), dtype=np.int64)
            fresh = np.setdiff1d(mine, self.zoo_worlds.get(seat, np.zeros(0, np.int64)))
            if len(fresh):
                player.episodes_ended(fresh)
            self.zoo_worlds[seat] = mine
        return seat_players

    # -- evaluation and Elo ---------------------------------------------------------------------

    def baselines(self) -> list[str]:
        """The opponents every evaluation plays: still, random, scripted (where the game has one), zoo."""
        found = [b for b in BASELINES if b != "scripted" or self.scripted] + (["zoo"] if self.zoo_players else [])
        return [b for b in found if self.args.eval_against is None or b in self.args.eval_against]

    def baseline(self, kind: str, seat: int) -> Player:
        game = self.game
        if kind == "zoo":
            return make_zoo_player(self.args.zoo_opponent, game, seat, self.args.zoo_actions == "sample")
        if kind == "still":
            return StillPlayer(game.act_dims[seat])
        if kind == "random":
            return RandomPlayer(game.act_low[seat], game.act_high[seat])
        return ScriptedPlayer(game, seat)

    def bouts(self, seat: int, player: Player, others, episodes: int, seed: int) -> np.ndarray:
        """``player`` at ``seat``, every other seat played by ``others(seat)``; its (win, draw, loss)."""
        players = [player if k == seat else others(k) for k in range(len(self.game.agents))]
        return play_bouts(self.game, players, episodes, worlds=min(64, episodes), seed=seed,
                          num_threads=self.args.threads)[seat]

    def evaluate(self, steps: int) -> dict:
        args, game = self.args, self.game
        point: dict = {"steps": steps}
        for role, learner in self.learners.items():
            seat = game.role_seat(role)
            baselines = [b for b in self.baselines()
                         if b != "zoo" or all(k in self.zoo_players for k in range(len(game.agents)) if k != seat)]
            name = f"{self.prefix(role)}" + ("untrained" if steps == 0 else f"step_{steps:09d}")
            player = learner.frozen(args.hidden, name)
            for i, kind in enumerate(baselines):
                counts = self.bouts(seat, player, lambda k, kind=kind: self.baseline(kind, k), args.eval_episodes,
                                    seed=args.seed * 7919 + steps + i)
                point[f"{role}/{kind}"] = counts.tolist()
            path = self.out / "checkpoints" / f"{name}.pt"
            save_checkpoint(path, learner.policy, learner.norm, game, role, self.config, steps)
            if steps > 0:
                save_checkpoint(self.out / "checkpoints" / f"{self.prefix(role)}latest.pt", learner.policy,
                                learner.norm, game, role, self.config, steps)
            learner.checkpoints.append((name, steps, player))
        self.rate(steps)
        for role, learner in self.learners.items():
            point[f"{role}/elo"] = self.elo.ratings[learner.checkpoints[-1][0]]
        self.curve.append(point)
        self.write_elo()
        return point

    def rate(self, steps: int) -> None:
        """Elo matches of each role's newest checkpoint: against a still robot, the
        opponents' checkpoint of the previous evaluation and earlier ones."""
        args, game = self.args, self.game
        for r, (role, learner) in enumerate(self.learners.items()):
            seat = game.role_seat(role)
            name, _, player = learner.checkpoints[-1]
            if len(learner.checkpoints) > 1:  # a new checkpoint starts where its predecessor stands
                self.elo.add(name, self.elo.ratings[learner.checkpoints[-2][0]])
            still_name = "still" if game.symmetric else f"{role}_still"
            self.elo.add(still_name)
            w, d, lo = self.bouts(seat, player, lambda k: StillPlayer(game.act_dims[k]), args.elo_bouts,
                                  seed=args.seed * 7919 + steps + 100 + r)
            self.elo.record(name, still_name, w, d, lo, steps=steps)
            # The opponents: checkpoints of the same evaluation points, other roles' in an asymmetric game.
            count = len(learner.checkpoints) - (1 if game.symmetric else 0)
            if count < 1:
                continue
            picks = [count - 1]
            earlier = list(range(count - 1))
            self.rng.shuffle(earlier)
            picks += earlier[:max(0, args.elo_opponents - 1)]
            for j, index in enumerate(picks):
                def others(k, index=index):
                    return self.learners[game.roles[k]].checkpoints[index][2]
                opponent = "+".join(dict.fromkeys(others(k).name for k in range(len(game.agents)) if k != seat))
                w, d, lo = self.bouts(seat, player, others, args.elo_bouts,
                                      seed=args.seed * 7919 + steps + 200 + 10 * r + j)
                self.elo.record(name, opponent, w, d, lo, steps=steps)

    def write_elo(self) -> None:
        self.elo.save(self.out / "elo.json")
        with (self.out / "elo.csv").open("w", newline="") as f:
            writer = csv.writer(f)
            writer.writerow(["checkpoint", "role", "steps", "elo"])
            for role, learner in self.learners.items():
                for name, steps, _ in learner.checkpoints:
                    writer.writerow([name, role, steps, round(self.elo.ratings[name], 1)])

    # -- training -------------------------------------------------------------------------------

    def run(self) -> None:
        args, game = self.args, self.game
        n, t_len = args.worlds, args.rollout
        options = {SHAPING_OPTION: args.shaping_start} if game.shaping else {}
        env = game.worlds(n, num_threads=args.threads, **options)
        pool = env.pool
        roles = ", ".join(self.learners)
        print(f"selfplay: {game.name} with {game.robot} robots ({', '.join(game.agents)}), "
              f"{args.total_steps:,} learner steps, {n} worlds on {pool.num_threads} native threads, "
              f"learners: {roles}; writing to {self.out}", flush=True)
        pool.reset_all(seed=args.seed)
        anneal = game.shaping and SHAPING_OPTION in pool.episode_options
        if game.shaping and not anneal:
            print(f"note: {game.name}'s {SHAPING_OPTION} is not an episode option: it stays at {args.shaping_start}")
        outcomes = Outcomes(pool)
        actions = np.zeros((n, pool.num_agents, pool.act_dim), np.float32)
        buffers = {}
        for role, learner in self.learners.items():
            m, od, ad = len(learner.worlds), learner.policy.obs_dim, learner.policy.act_dim
            buffers[role] = dict(obs=np.zeros((t_len, m, od), np.float32), act=np.zeros((t_len, m, ad), np.float32),
                                 logp=np.zeros((t_len, m), np.float32), val=np.zeros((t_len + 1, m), np.float32),
                                 rew=np.zeros((t_len, m), np.float32), done=np.zeros((t_len, m), np.float32))
        log_file = (self.out / "log.csv").open("w", newline="")
        log = csv.writer(log_file)
        roles = list(self.learners)
        baselines = self.baselines()
        log.writerow(["iteration", "steps", "steps_per_s", "shaping_weight"]
                     + [f"{r}_train_{x}" for r in roles for x in ("win", "draw", "loss")]
                     + [f"{r}_{b}_{x}" for r in roles for b in baselines for x in ("win", "draw", "loss")]
                     + [f"{r}_elo" for r in roles])

        iterations = max(1, args.total_steps // (n * t_len))
        point = self.evaluate(0)
        self.print_eval(0, 0, 0.0, point)
        steps, start = 0, time.perf_counter()
        eval_time = 0.0
        window = {role: {WIN: 0, DRAW: 0, LOSS: 0} for role in roles}
        for it in range(1, iterations + 1):
            weight = args.shaping_start * (max(0.0, 1.0 - (steps / args.total_steps) / args.anneal)
                                           if args.anneal > 0 else 0.0)
            if anneal:
                pool.set_option(SHAPING_OPTION, weight)
            opponents = self.draw_opponents()
            deterministic = args.opponent_actions == "mean"
            results = {role: {WIN: 0, DRAW: 0, LOSS: 0} for role in roles}
            obs = pool.obs
            for t in range(t_len):
                for role, learner in self.learners.items():
                    b = buffers[role]
                    raw = obs[learner.worlds, learner.seats, :learner.policy.obs_dim]
                    learner.norm.update(raw)
                    x_np = learner.norm(raw)
                    x = torch.from_numpy(x_np)
                    with torch.no_grad():
                        dist = learner.policy.dist(x)
                        action = dist.sample()
                        b["logp"][t] = dist.log_prob(action).sum(-1).numpy()
                        b["val"][t] = learner.policy.value(x).numpy()
                    b["obs"][t], b["act"][t] = x_np, action.numpy()
                    actions[learner.worlds, learner.seats, :learner.policy.act_dim] = action.clamp(-1, 1).numpy()
                step_players(game, pool, opponents, actions, self.rng, deterministic)
                pool.step_all(actions)
                ended = pool.reset_kind == AUTORESET
                ended_worlds = np.flatnonzero(ended)
                if len(ended_worlds):
                    for player in self.zoo_players.values():
                        player.episodes_ended(ended_worlds)
                codes = outcomes(ended_worlds) if len(ended_worlds) else None
                for role, learner in self.learners.items():
                    b = buffers[role]
                    b["rew"][t] = pool.rewards[learner.worlds, learner.seats] * args.reward_scale
                    b["done"][t] = ended[learner.worlds]
                    if codes is not None:
                        mine = np.isin(ended_worlds, learner.worlds)
                        seat_of = dict(zip(learner.worlds.tolist(), learner.seats.tolist()))
                        for i in np.flatnonzero(mine):
                            results[role][int(codes[i, seat_of[int(ended_worlds[i])]])] += 1
            steps += n * t_len
            for role, learner in self.learners.items():
                b = buffers[role]
                raw = obs[learner.worlds, learner.seats, :learner.policy.obs_dim]
                with torch.no_grad():
                    b["val"][t_len] = learner.policy.value(torch.from_numpy(learner.norm(raw))).numpy()
                self.update(learner, b)
                for k, v in results[role].items():
                    window[role][k] += v
            if it % args.snapshot_every == 0:
                for learner in self.learners.values():
                    learner.history.append(learner.snapshot())
            rate = steps / (time.perf_counter() - start - eval_time)
            row = [it, steps, round(rate), round(weight, 3)]
            for role in roles:
                games = max(1, sum(results[role].values()))
                row += [results[role][k] / games for k in (WIN, DRAW, LOSS)]
            if it % args.eval_every == 0 or it == iterations:
                t0 = time.perf_counter()
                point = self.evaluate(steps)
                eval_time += time.perf_counter() - t0
                row += [point[f"{r}/{b}"][k] / args.eval_episodes if f"{r}/{b}" in point else ""
                        for r in roles for b in baselines for k in range(3)]
                row += [round(point[f"{r}/elo"], 1) for r in roles]
                self.print_eval(it, steps, rate, point)
                # the curve so far, so a long run can be watched (and a stopped one still has one)
                plot_curve(self.curve, roles, baselines, self.learners, self.elo, game, self.out / "learning_curve.png")
            else:
                row += [""] * (len(roles) * (3 * len(baselines) + 1))
            if it % args.log_every == 0:
                parts = []
                for role in roles:
                    w = window[role]
                    games = sum(w.values())
                    label = "" if game.symmetric else f"{role} "
                    parts.append(f"{label}train W/D/L {w[WIN]}/{w[DRAW]}/{w[LOSS]}"
                                 + (f" ({100 * w[WIN] / games:.0f}% wins)" if games else ""))
                    window[role] = {WIN: 0, DRAW: 0, LOSS: 0}
                print(f"iter {it:4d}  steps {steps:>10,}  {rate:,.0f} steps/s  shaping {weight:.2f}  "
                      + "  ".join(parts), flush=True)
            log.writerow(row)
            log_file.flush()
        log_file.close()
        env.close()
        plot_curve(self.curve, roles, baselines, self.learners, self.elo, game, self.out / "learning_curve.png")
        elapsed = time.perf_counter() - start
        latest = ", ".join(str(self.out / "checkpoints" / f"{self.prefix(r)}latest.pt") for r in roles)
        print(f"done: {steps:,} learner steps in {elapsed:.0f} s ({eval_time:.0f} s of it evaluating); "
              f"log {self.out / 'log.csv'}, Elo {self.out / 'elo.csv'}, checkpoint {latest}")

    def update(self, learner: Learner, b: dict) -> None:
        args = self.args
        t_len = len(b["rew"])
        # GAE; an ended episode (win, loss, draw or timeout) is terminal.
        adv = np.zeros_like(b["rew"])
        last = np.zeros(adv.shape[1], np.float32)
        for t in reversed(range(t_len)):
            nonterminal = 1.0 - b["done"][t]
            delta = b["rew"][t] + args.gamma * b["val"][t + 1] * nonterminal - b["val"][t]
            last = delta + args.gamma * args.lam * nonterminal * last
            adv[t] = last
        ret = adv + b["val"][:t_len]
        policy = learner.policy
        b_obs = torch.from_numpy(b["obs"].reshape(-1, policy.obs_dim))
        b_act = torch.from_numpy(b["act"].reshape(-1, policy.act_dim))
        b_logp = torch.from_numpy(b["logp"].reshape(-1))
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
                learner.optimizer.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(policy.parameters(), 0.5)
                learner.optimizer.step()

    def print_eval(self, it: int, steps: int, rate: float, point: dict) -> None:
        parts = []
        for role in self.learners:
            label = "" if self.game.symmetric else f"[{role}] "
            scores = "  ".join(f"vs {b} W/D/L {'/'.join(str(c) for c in point[f'{role}/{b}'])}"
                               for b in (*BASELINES, "zoo") if f"{role}/{b}" in point)
            parts.append(f"{label}{scores}  Elo {point[f'{role}/elo']:.0f}")
        head = "untrained learner" if steps == 0 else f"eval iter {it:4d}  steps {steps:>10,}  {rate:,.0f} steps/s"
        print(f"{head}  " + "  ".join(parts), flush=True)


def plot_curve(curve: list[dict], roles: list[str], baselines: list[str], learners: dict[str, Learner],
               elo: EloTable, game: Game, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (top, bottom) = plt.subplots(2, 1, figsize=(7, 6), sharex=True)
    steps = [p["steps"] for p in curve]
    markers = {"still": "s", "random": "o", "scripted": "^", "zoo": "D"}
    for role in roles:
        label = "" if game.symmetric else f"{role} "
        for b in baselines:
            if any(f"{role}/{b}" not in p for p in curve):
                continue  # the zoo opponent plays only some roles
            wins = [100 * p[f"{role}/{b}"][0] / max(1, sum(p[f"{role}/{b}"])) for p in curve]
            top.plot(steps, wins, marker=markers[b], label=f"{label}vs {b}")
        bottom.plot([s for _, s, _ in learners[role].checkpoints],
                    [elo.ratings[name] for name, _, _ in learners[role].checkpoints], marker="o",
                    label=f"{label}checkpoints (final ratings)".strip())
    top.set_ylabel("win rate (%)")
    top.set_ylim(0, 100)
    top.legend(loc="best", fontsize=8)
    top.set_title(f"{game.name} ({game.robot}) self-play PPO")
    bottom.set_xlabel("learner env steps")
    bottom.set_ylabel("Elo")
    bottom.legend(loc="best", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def main(argv: list[str] | None = None, parser: argparse.ArgumentParser | None = None) -> None:
    args = parse_args(argv, parser)
    try:
        trainer = Trainer(args)
    except ValueError as e:
        (parser or build_parser()).error(str(e))
    trainer.run()


if __name__ == "__main__":
    main()
