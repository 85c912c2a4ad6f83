"""Bansal et al.'s agent zoo in joltgym_marl's gym-compete-faithful games: win / tie / loss tables.

    python -m benchmarks.bansal_zoo --zoo DIR [--bouts 200] [--kick-bouts 1000] [--worlds 100]
                                    [--threads 2] [--games sumo_ants ...] [--zoo-actions sample|mean]
                                    [--seed 0] [--out runs/bansal_zoo/results.md] [--quick]

DIR is a local copy of the ``agent-zoo/`` folder of
https://github.com/openai/multiagent-competition (the archive has no licence:
joltgym_marl neither ships nor downloads it; clone it yourself). Every game
is played in its ``form="gym_compete"`` (scene, bodies, physics options,
resets, observations and rules of gym-compete), the zoo policies run in
NumPy (``joltgym_marl.zoo``), sampling their actions as the archive's
``main.py`` does (``--zoo-actions mean``: the mean action), batched over
``--worlds`` native worlds on ``--threads`` threads.

For every game: zoo vs zoo, every version pair that exists (sumo: every
unordered pair of versions, one file for both seats; kick-and-defend: every
kicker version against every keeper version; run-to-goal and
you-shall-not-pass: the pair of v1 files), and each zoo policy against a
still opponent (zero actions) and against uniform random actions: wins,
ties and losses of the first-named player with a 95% Wilson interval, over
``--bouts`` bouts; kick-and-defend v1 vs v1 over ``--kick-bouts`` bouts,
beside the published 669 / 314 / 17 (kicker wins / losses / ties of 1000 on
MuJoCo 1.31, HumanCompatibleAI/adversarial-policies PR #6). The issue's bars
are checked at the end: kick-and-defend v1 vs v1 within 4 points of 66.9%;
every sumo ant version beats a still opponent in >= half the bouts;
run-to-goal ants reach the goal first against a still one in >= 90%; the
you-shall-not-pass walker crosses against a still blocker in >= 80%.

``--quick``: 20 bouts per match and 40 for kick-and-defend v1 vs v1 (a smoke
run; its rates are noise).
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
import zlib

# One BLAS thread: the policies' small matrix products on many threads cost 50 times more than on
# one (measured on the 2-core machine under load); the cores go to the native physics threads.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
from dataclasses import dataclass
from pathlib import Path

GAME_KEYS = ("sumo_ants", "sumo_humans", "run_to_goal_ants", "run_to_goal_humans", "you_shall_not_pass",
             "kick_and_defend")
PUBLISHED_KICK = (669, 314, 17)  # kicker wins, losses, ties of 1000 (MuJoCo 1.31)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--zoo", type=Path, required=True, help="a local copy of agent-zoo/ (openai/multiagent-competition)")
    p.add_argument("--bouts", type=int, default=200, help="bouts per match")
    p.add_argument("--kick-bouts", type=int, default=1000, help="bouts of kick-and-defend v1 vs v1")
    p.add_argument("--worlds", type=int, default=100, help="native worlds stepped together")
    p.add_argument("--threads", type=int, default=None, help="native threads (default: the pool's)")
    p.add_argument("--games", nargs="+", choices=GAME_KEYS, default=list(GAME_KEYS))
    p.add_argument("--zoo-actions", choices=("sample", "mean"), default="sample")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", type=Path, default=None, help="also write the Markdown tables here")
    p.add_argument("--quick", action="store_true", help="20 bouts per match (40 for kick-and-defend v1 vs v1)")
    p.add_argument("--bars", action="store_true",
                   help="only the matches the bars are about (kick-and-defend v1 vs v1, sumo ants and run-to-goal "
                        "ants against a still opponent, the you-shall-not-pass walker against a still blocker)")
    return p


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    if n == 0:
        return 0.0, 1.0
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


@dataclass
class Match:
    game: str  # module name
    robot: str | None
    label: str  # what the row says
    players: list  # per seat: a ZooEntry, "still" or "random"
    bouts: int
    first_seat: int  # whose win / tie / loss the row reports
    key: str = ""  # for the bars


def matches(args, catalogue) -> list[Match]:
    from joltgym_marl import zoo

    out: list[Match] = []
    n = args.bouts

    def others(entry, kind):
        return [entry if s == entry.seat else kind for s in (0, 1)]

    for key in args.games:
        if key.startswith("sumo"):
            robot = "ant" if key == "sumo_ants" else "humanoid"
            entries = zoo.catalogue("sumo_v0", robot)
            for i, a in enumerate(entries):
                for b in entries[i:]:
                    out.append(Match("sumo_v0", robot, f"{a.name} vs {b.name}", [a, b], n, 0))
            for a in entries:
                for kind in ("still", "random"):
                    out.append(Match("sumo_v0", robot, f"{a.name} vs {kind}", [a, kind], n, 0, f"{key}:{kind}"))
        elif key.startswith("run_to_goal"):
            robot = "ant" if key == "run_to_goal_ants" else "humanoid"
            e0, e1 = sorted(zoo.catalogue("run_to_goal_v0", robot), key=lambda e: e.seat)
            out.append(Match("run_to_goal_v0", robot, f"{e0.name} vs {e1.name}", [e0, e1], n, 0))
            for e in (e0, e1):
                for kind in ("still", "random"):
                    out.append(Match("run_to_goal_v0", robot, f"{e.name} vs {kind}", others(e, kind), n, e.seat,
                                     f"{key}:{kind}"))
        elif key == "you_shall_not_pass":
            walker = zoo.find("you_shall_not_pass_v0", agent="walker_0")
            blocker = zoo.find("you_shall_not_pass_v0", agent="blocker_0")
            out.append(Match("you_shall_not_pass_v0", None, f"{walker.name} vs {blocker.name}",
                             [walker, blocker], n, walker.seat))
            for e in (walker, blocker):
                for kind in ("still", "random"):
                    out.append(Match("you_shall_not_pass_v0", None, f"{e.name} vs {kind}", others(e, kind), n,
                                     e.seat, f"{key}:{e.role}:{kind}"))
        else:
            kickers = zoo.catalogue("kick_and_defend_v0")
            keepers = [e for e in kickers if e.agent == "keeper_0"]
            kickers = [e for e in kickers if e.agent == "kicker_0"]
            for a in kickers:
                for b in keepers:
                    v11 = a.version == 1 and b.version == 1
                    out.append(Match("kick_and_defend_v0", None, f"{a.name} vs {b.name}", [a, b],
                                     args.kick_bouts if v11 else n, 0, f"{key}:v1v1" if v11 else ""))
            for e in (*kickers, *keepers):
                for kind in ("still", "random"):
                    out.append(Match("kick_and_defend_v0", None, f"{e.name} vs {kind}", others(e, kind), n, e.seat))
    return out


def match_seed(seed: int, match: Match) -> int:
    """The seed of one match: --seed plus a stable hash of the match itself, not of its place in the run,
    so a --games or --bars subset reproduces the full table's rows exactly."""
    return (seed + zlib.crc32(f"{match.game}|{match.robot}|{match.label}".encode())) % 2**30


def play(match: Match, args, seed: int):
    """(win, tie, loss) of the first-named seat, and the world steps taken."""
    import numpy as np

    import joltgym_marl
    from joltgym_marl import MULTI_AGENT_ENVS, zoo

    kwargs = {"form": "gym_compete"}
    if match.robot is not None and match.game in ("sumo_v0", "run_to_goal_v0"):
        kwargs["robot"] = match.robot
    worlds = max(1, min(args.worlds, match.bouts))
    env = MULTI_AGENT_ENVS[match.game].vec_env(worlds, num_threads=args.threads, copy=False, **kwargs)
    rng = np.random.default_rng(seed)
    stochastic = args.zoo_actions == "sample"
    try:
        pool = env.pool
        policies = []
        for seat, p in enumerate(match.players):
            if isinstance(p, zoo.ZooEntry):
                policy = zoo.load(p, args.zoo, num_worlds=worlds, stochastic=stochastic, seed=seed + 17 * seat)
                if policy.obs_dim != pool.obs_dim or policy.act_dim != pool.act_dim:
                    raise SystemExit(f"{p.name} takes {policy.obs_dim} observations and gives {policy.act_dim} "
                                     f"actions; {match.game} {kwargs} has {pool.obs_dim} and {pool.act_dim}: is "
                                     "the gym_compete form built?")
                policies.append(policy)
            else:
                policies.append(p)
        cols = {f[0]: f[1] for f in pool.info_fields}
        outcome = cols["outcome"]
        low, high = np.asarray(pool.action_low), np.asarray(pool.action_high)
        pool.reset_all(seed=seed)
        actions = np.zeros((worlds, pool.num_agents, pool.act_dim), np.float32)
        counts = np.zeros(3, np.int64)  # win, tie, loss of first_seat
        started, finished, steps = worlds, 0, 0
        counting = np.ones(worlds, dtype=bool)
        code_col = {int(joltgym_marl.Outcome.WIN): 0, int(joltgym_marl.Outcome.DRAW): 2,
                    int(joltgym_marl.Outcome.LOSS): 1}
        autoreset = joltgym_marl.ResetKind.AUTORESET
        while finished < match.bouts:
            obs = pool.obs
            for seat, p in enumerate(policies):
                if isinstance(p, zoo.ZooPolicy):
                    actions[:, seat] = p.act(obs[:, seat])
                elif p == "random":
                    actions[:, seat] = rng.uniform(low, high, (worlds, pool.act_dim))
                else:
                    actions[:, seat] = 0.0
            pool.step_all(actions)
            steps += worlds
            ended = np.flatnonzero(pool.reset_kind == autoreset)
            if len(ended):
                for p in policies:
                    if isinstance(p, zoo.ZooPolicy):
                        p.reset(ended)
                codes = pool.final_infos[ended, match.first_seat, outcome].astype(np.int64)
                for w, code in zip(ended, codes):
                    if counting[w]:
                        counts[code_col.get(int(code), 2)] += 1
                        finished += 1
                    counting[w] = started < match.bouts
                    started += int(counting[w])
    finally:
        env.close()
    return counts, steps


def main(argv: list[str] | None = None) -> None:
    args = build_parser().parse_args(argv)
    if args.quick:
        args.bouts, args.kick_bouts = min(args.bouts, 20), min(args.kick_bouts, 40)
    if args.bouts < 1 or args.kick_bouts < 1 or args.worlds < 1:
        build_parser().error("--bouts, --kick-bouts and --worlds should be >= 1")
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from joltgym_marl import zoo

    missing = [e.path for e in zoo.CATALOGUE if not e.file(args.zoo).is_file()]
    if missing:
        build_parser().error(f"--zoo {args.zoo} lacks {len(missing)} of the zoo's 19 files, e.g. {missing[0]} "
                             "(a copy of agent-zoo/ from https://github.com/openai/multiagent-competition)")
    todo = matches(args, zoo.CATALOGUE)
    if args.bars:
        bar_keys = ("kick_and_defend:v1v1", "sumo_ants:still", "run_to_goal_ants:still", "you_shall_not_pass:walker:still")
        todo = [m for m in todo if m.key in bar_keys]
    lines = [f"Bansal et al.'s zoo in joltgym_marl's form=gym_compete games ({args.zoo_actions} actions, "
             f"{args.worlds} worlds, seed {args.seed})", ""]
    print(lines[0], flush=True)
    results = {}
    start = time.perf_counter()
    current = None
    for m in todo:
        if m.game + str(m.robot) != current:
            current = m.game + str(m.robot)
            title = f"{m.game}" + (f" ({m.robot})" if m.robot and m.game in ("sumo_v0", "run_to_goal_v0") else "")
            header = [f"### {title}", "", "| match | bouts | win | tie | loss | win rate | 95% CI | time |",
                      "|---|---:|---:|---:|---:|---:|---|---:|"]
            print("\n".join(["", *header]), flush=True)
            lines += ["", *header]
        t0 = time.perf_counter()
        counts, steps = play(m, args, match_seed(args.seed, m))
        dt = time.perf_counter() - t0
        win, loss, tie = (int(x) for x in counts)
        lo, hi = wilson(win, m.bouts)
        row = (f"| {m.label} | {m.bouts} | {win} | {tie} | {loss} | {100 * win / m.bouts:.1f}% | "
               f"{100 * lo:.1f}-{100 * hi:.1f}% | {dt:.0f} s |")
        print(row, flush=True)
        lines.append(row)
        if m.key:
            results.setdefault(m.key, []).append((m.label, win, tie, loss, m.bouts))
    total = time.perf_counter() - start
    bars = ["", "### The bars", ""]
    if "kick_and_defend:v1v1" in results:
        _, win, tie, loss, n = results["kick_and_defend:v1v1"][0]
        pub = PUBLISHED_KICK
        ok = abs(100 * win / n - 100 * pub[0] / 1000) <= 4
        bars.append(f"- kick-and-defend v1 vs v1: kicker {win} / {loss} / {tie} (wins / losses / ties) of {n}, "
                    f"{100 * win / n:.1f}% vs published {pub[0]} / {pub[1]} / {pub[2]} of 1000 (66.9%): "
                    f"{'PASS' if ok else 'FAIL'} (within 4 points)")
    for key, what, bar in (("sumo_ants:still", "sumo ants beat a still opponent", 0.5),
                           ("run_to_goal_ants:still", "run-to-goal ants reach the goal against a still one", 0.9),
                           ("you_shall_not_pass:walker:still", "the walker crosses against a still blocker", 0.8)):
        if key in results:
            worst = min(results[key], key=lambda r: r[1] / r[4])
            ok = all(r[1] / r[4] >= bar for r in results[key])
            rates = ", ".join(f"{r[0].split(' vs ')[0]} {100 * r[1] / r[4]:.1f}%" for r in results[key])
            bars.append(f"- {what} (>= {100 * bar:.0f}%): {rates}: {'PASS' if ok else 'FAIL'} "
                        f"(lowest {worst[0]})")
    bars += ["", f"{len(todo)} matches in {total / 60:.1f} min"]
    print("\n".join(bars), flush=True)
    lines += bars
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
