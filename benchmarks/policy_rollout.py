"""Rollout collection with a policy in the loop: sync vs async (send/recv) stepping, side by side.

    python benchmarks/policy_rollout.py [--task half_cheetah] [--worlds 64] [--threads 2]
                                        [--seconds 3] [--rounds 3] [--game-agents 4]
                                        [--contenders ...]

Users step envs from a policy, not with zero actions. Each step here runs a
64x64 tanh MLP in torch on one thread (``torch.set_num_threads(1)``) on the
observations and samples Gaussian actions, for ``--worlds`` worlds of
``--task`` (any task of the native registry) on ``--threads`` threads. For a
game (``--task cheetah_race``; ``--game-agents`` per world for a game with a
``num_agents`` parameter) every agent of every world is one policy row and
the unit is agent-steps/s (policy rows per second). Contenders:

* ``limit``: the C++ ``raw_step_limit --mode env`` (the whole env step, no
  Python, no policy) on 16 sets of uniform random actions, cycled, as in
  ``python -m benchmarks.run``: the ceiling the targets name;
* ``limit_policy``: the same program on 16 consecutive steps of actions the
  policy took in the loop (recorded from a pool after 100 steps), cycled. The
  physics costs what the trajectories make it cost: the policy's small
  actions move the robot otherwise than uniform ones (HalfCheetah steps about
  12% slower on them), so this is the ceiling for the policy's own motion.
  Both limits time their steps after 100 untimed steps per world;
* ``policy_only``: the policy alone on the observations of one step of
  every world (``worlds * agents`` rows; no physics), for the bound physics +
  inference sets on a small machine;
* ``pool_sync``: ``WorldPool.step_all`` with the policy between steps (the
  threads idle while it runs);
* ``pool_async``: ``WorldPool`` with ``batch_size = worlds / 2``:
  ``recv()`` a half, run the policy on it while the native threads step the
  other half, ``send()`` it back;
* ``vector_sync`` / ``vector_async``: the same through ``NativeVectorEnv``
  (a game: its agent vector env, ``<game>.vec_env(worlds, copy=False)``);
  ``step`` vs ``send``/``recv``;
* ``gymnasium_sync``: Gymnasium's ``SyncVectorEnv`` of the task's Gymnasium
  reference env (``HalfCheetah-v5``), single-agent tasks;
* ``envpool_sync`` / ``envpool_async``: EnvPool's env of the task's
  Gymnasium id (batch ``worlds`` with ``step``, or ``worlds / 2`` with
  ``send``/``recv``), single-agent tasks, if EnvPool is installed and has it;
* ``supersuit``: the game as users vectorize a PettingZoo env,
  ``concat_vec_envs_v1(pettingzoo_env_to_vec_env_v1(<game>.parallel_env()),
  worlds, num_cpus=0, base_class="gymnasium")``, games only.

A contender that does not apply to the task is skipped with the reason
printed. Every measurement runs in a fresh process (none imports ``mujoco``,
except ``gymnasium_sync``, whose envs are built on it); rounds are
interleaved, the contender order rotated per round. Prints the median
(min-max) rate of each and its ratio to the limit and to the peer
(``envpool_async`` for a single-agent task, ``supersuit`` for a game), both
as the median over rounds of the ratio measured in the same round. Run it
from the clone's root.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks._paths import use_checkout  # noqa: E402

use_checkout()

from benchmarks._tasks import DEFAULT_GAME_AGENTS, SINGLE_AGENT_TASKS, TASKS, game_kwargs  # noqa: E402

CONTENDERS = ["limit", "limit_policy", "policy_only", "pool_sync", "pool_async", "vector_sync", "vector_async",
              "gymnasium_sync", "envpool_sync", "envpool_async", "supersuit"]
SINGLE_AGENT_ONLY = ("gymnasium_sync", "envpool_sync", "envpool_async")
GAME_ONLY = ("supersuit",)
# Untimed steps per world before a limit's clock starts (as the suite's limit).
LIMIT_WARMUP_STEPS = 100
# Contenders whose process imports MuJoCo's Python bindings by nature (Gymnasium's MuJoCo envs).
IMPORTS_MUJOCO = ("gymnasium_sync",)

# argv: one JSON object {contender, task, kwargs, worlds, threads, seconds, peer, root}
_CHILD = r"""
import json, sys, time
args = json.loads(sys.argv[1])
sys.path.insert(0, args["root"])
from benchmarks._paths import use_checkout
use_checkout()
import numpy as np
import torch
torch.set_num_threads(1)
contender, task, kwargs, peer_id = args["contender"], args["task"], args["kwargs"], args["peer"]
n, threads, seconds = args["worlds"], args["threads"], args["seconds"]
import joltgym_marl
from joltgym_marl.registry import TASKS
spec = TASKS[task]
probe = joltgym_marl.WorldPool(task, 1, num_threads=1, **kwargs)
agents, obs_dim, act_dim = probe.num_agents, probe.obs_dim, probe.act_dim
low, high = torch.as_tensor(probe.action_low), torch.as_tensor(probe.action_high)
probe.close()
rows = n * agents  # policy rows per step of every world: env-steps (agent-steps for a game)
torch.manual_seed(0)
net = torch.nn.Sequential(torch.nn.Linear(obs_dim, 64), torch.nn.Tanh(), torch.nn.Linear(64, 64),
                          torch.nn.Tanh(), torch.nn.Linear(64, act_dim))
std = 0.3

@torch.no_grad()
def policy(obs):
    # obs: [rows, obs_dim] (float64 for a robot, as Gymnasium v5's; float32 for a
    # game) -> actions [rows, act_dim] float32
    mean = net(torch.as_tensor(obs, dtype=torch.float32))
    return torch.clamp(torch.normal(mean, std), low, high).numpy()

def timed(step):
    # step() -> policy rows stepped; warm up, then run for `seconds`.
    end = time.perf_counter() + min(0.5, seconds / 4)
    while time.perf_counter() < end:
        step()
    done, start = 0, time.perf_counter()
    while True:
        done += step()
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            return done / elapsed

if contender == "record":  # the policy's actions: 100 steps in, then 16 steps recorded
    pool = joltgym_marl.WorldPool(task, n, num_threads=threads, max_episode_steps=spec.max_episode_steps,
                                  **kwargs)
    pool.reset_all(seed=0)
    flat = pool.obs.reshape(rows, obs_dim)
    recorded = np.zeros((16, n, agents, act_dim), np.float32)
    for t in range(100 + 16):
        actions = policy(flat).reshape(n, agents, act_dim)
        if t >= 100:
            recorded[t - 100] = actions
        pool.step_all(actions)
    recorded.tofile(args["out"])
    print(json.dumps({"rate": 0.0, "mujoco_imported": "mujoco" in sys.modules}))
    raise SystemExit(0)
if contender == "policy_only":
    obs = np.random.default_rng(0).standard_normal((rows, obs_dim)).astype(np.float32)
    def step():
        policy(obs)
        return rows
elif contender in ("pool_sync", "pool_async"):
    batch = n if contender == "pool_sync" else max(1, n // 2)
    pool = joltgym_marl.WorldPool(task, n, num_threads=threads, batch_size=batch,
                                  max_episode_steps=spec.max_episode_steps, **kwargs)
    if contender == "pool_sync":
        pool.reset_all(seed=0)
        flat = pool.obs.reshape(rows, obs_dim)
        def step():
            pool.step_all(policy(flat).reshape(n, agents, act_dim))
            return rows
    else:
        pool.async_reset(seed=0)
        flat = pool.recv_obs.reshape(batch * agents, obs_dim)
        def step():
            ids = pool.recv()[0]
            pool.send(policy(flat).reshape(batch, agents, act_dim), ids)
            return batch * agents
elif contender in ("vector_sync", "vector_async"):
    batch = n if contender == "vector_sync" else max(1, n // 2)
    if spec.is_game:  # the game's agent vector env: every agent of every world a row
        env = joltgym_marl.MULTI_AGENT_ENVS[spec.module_name].vec_env(
            n, copy=False, num_threads=threads, batch_size=batch, **kwargs)
        world_ids = lambda info: info.env_ids
    else:
        from joltgym_marl.vector.native_vector_env import NativeVectorEnv
        env = NativeVectorEnv(task, n, num_threads=threads, copy=False, batch_size=batch)
        world_ids = lambda info: info["env_id"]
    if contender == "vector_sync":
        state = {"obs": env.reset(seed=0)[0]}
        def step():
            state["obs"] = env.step(policy(state["obs"]))[0]
            return rows
    else:
        env.async_reset(seed=0)
        def step():
            obs, _, _, _, info = env.recv()
            env.send(policy(obs), world_ids(info))
            return len(obs)
elif contender == "gymnasium_sync":
    import gymnasium
    env = gymnasium.vector.SyncVectorEnv([lambda: gymnasium.make(peer_id) for _ in range(n)])
    state = {"obs": env.reset(seed=0)[0].astype(np.float32)}
    def step():
        state["obs"] = env.step(policy(state["obs"]))[0].astype(np.float32)
        return rows
elif contender == "supersuit":
    import supersuit
    game = joltgym_marl.MULTI_AGENT_ENVS[spec.module_name]
    env = supersuit.concat_vec_envs_v1(supersuit.pettingzoo_env_to_vec_env_v1(game.parallel_env(**kwargs)),
                                       n, num_cpus=0, base_class="gymnasium")
    state = {"obs": np.asarray(env.reset(seed=0)[0], dtype=np.float32)}
    def step():
        state["obs"] = np.asarray(env.step(policy(state["obs"]))[0], dtype=np.float32)
        return rows
elif contender in ("envpool_sync", "envpool_async"):
    import envpool
    batch = n if contender == "envpool_sync" else max(1, n // 2)
    env = envpool.make_gymnasium(peer_id, num_envs=n, num_threads=threads, batch_size=batch, seed=0)
    if contender == "envpool_sync":
        state = {"obs": env.reset()[0].astype(np.float32)}
        def step():
            state["obs"] = env.step(policy(state["obs"]))[0].astype(np.float32)
            return n
    else:
        env.async_reset()
        def step():
            obs, _, _, _, info = env.recv()
            env.send(policy(obs.astype(np.float32)), info["env_id"])
            return batch
else:
    raise SystemExit(f"unknown contender {contender}")
rate = timed(step)
print(json.dumps({"rate": rate, "mujoco_imported": "mujoco" in sys.modules}))
"""


def envpool_id(task: str) -> str | None:
    """EnvPool's env of a single-agent task (its Gymnasium reference id, else ``<Title>-v4``), or None."""
    spec = TASKS[task]
    if spec.is_game:
        return None
    try:
        import envpool
    except ImportError:
        return None
    known = set(envpool.list_all_envs())
    for candidate in (spec.reference_id, f"{spec.title}-v4"):
        if candidate and candidate in known:
            return candidate
    return None


def gymnasium_id(task: str) -> str | None:
    """The Gymnasium reference env of a single-agent task (``HalfCheetah-v5``), if Gymnasium registers it."""
    spec = TASKS[task]
    if spec.is_game or not spec.reference_id:
        return None
    import gymnasium

    return spec.reference_id if spec.reference_id in gymnasium.registry else None


def skip_reason(contender: str, task: str, peers: dict[str, str | None]) -> str | None:
    """Why ``contender`` does not run on ``task`` (None: it does)."""
    spec = TASKS[task]
    if spec.is_game and contender in SINGLE_AGENT_ONLY:
        return f"{task} is a game (no Gymnasium or EnvPool env)"
    if not spec.is_game and contender in GAME_ONLY:
        return f"{task} is a single-agent task (not a PettingZoo game)"
    if contender == "gymnasium_sync" and peers["gymnasium"] is None:
        return f"Gymnasium (with its MuJoCo envs) has no {spec.reference_id or 'reference env'} for {task}"
    if contender.startswith("envpool") and peers["envpool"] is None:
        return f"EnvPool is not installed or has no env for {task}"
    if contender == "supersuit":
        try:
            import supersuit  # noqa: F401
        except ImportError:
            return "SuperSuit is not installed"
    return None


def run_child(contender: str, task: str, kwargs: dict, worlds: int, threads: int, seconds: float,
              peer: str | None, out: Path | None = None) -> float:
    root = str(Path(__file__).resolve().parents[1])
    request = {"contender": contender, "task": task, "kwargs": kwargs, "worlds": worlds, "threads": threads,
               "seconds": seconds, "peer": peer or "", "root": root, "out": str(out or "")}
    done = subprocess.run([sys.executable, "-c", _CHILD, json.dumps(request)], capture_output=True, text=True,
                          cwd=root)
    if done.returncode != 0:
        raise SystemExit(f"{contender} failed:\n{done.stderr[-3000:]}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    if result["mujoco_imported"] and contender not in IMPORTS_MUJOCO:
        raise SystemExit(f"{contender}: expected no `import mujoco` in the measuring process")
    return result["rate"]


def run_limit(task: str, kwargs: dict, agents: int, worlds: int, threads: int, seconds: float, binary: Path,
              actions_file: Path) -> float:
    """The limit's env-steps/s (agent-steps/s for a game, ``agents`` per world)."""
    from benchmarks.pool_vs_raw import run_raw

    unit = "agent_steps_per_sec" if TASKS[task].is_game else "env_steps_per_sec"
    # About `seconds` of stepping: a short probe sizes the run.
    probe = run_raw(binary, task, worlds, threads, 200, "env", actions_file, kwargs, unit=unit)
    steps = max(200, int(probe * seconds / (worlds * agents)))
    return run_raw(binary, task, worlds, threads, steps, "env", actions_file, kwargs, unit=unit,
                   warmup_steps=LIMIT_WARMUP_STEPS)


def parse_args(argv=None) -> argparse.Namespace:
    names = list(TASKS)
    default = "half_cheetah" if "half_cheetah" in names else SINGLE_AGENT_TASKS[0].name
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    parser.add_argument("--task", choices=names, default=default, metavar="TASK",
                        help=f"a task of the native registry (default: %(default)s): {', '.join(names)}")
    parser.add_argument("--worlds", type=int, default=64)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--seconds", type=float, default=3.0, help="timed seconds per measurement")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--game-agents", type=int, default=DEFAULT_GAME_AGENTS,
                        help="agents per world of a game that takes num_agents (default %(default)s)")
    parser.add_argument("--contenders", nargs="+", choices=CONTENDERS, default=CONTENDERS, metavar="NAME",
                        help=f"a subset of {', '.join(CONTENDERS)} (those that do not apply to the task "
                             "are skipped, with the reason printed)")
    args = parser.parse_args(argv)
    if min(args.worlds, args.threads, args.rounds, args.game_agents) < 1 or args.seconds <= 0:
        parser.error("--worlds, --threads, --rounds, --game-agents and --seconds should be positive")
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    spec = TASKS[args.task]
    kwargs = game_kwargs(spec, args.game_agents)
    peers = {"envpool": envpool_id(args.task), "gymnasium": gymnasium_id(args.task)}
    contenders = []
    for c in dict.fromkeys(args.contenders):
        reason = skip_reason(c, args.task, peers)
        if reason is None:
            contenders.append(c)
        else:
            print(f"skipping {c}: {reason}")
    if not contenders:
        raise SystemExit(f"none of the contenders {', '.join(args.contenders)} applies to {args.task} "
                         "(reasons above)")
    peer_of = {c: peers["gymnasium"] if c.startswith("gymnasium") else peers["envpool"] for c in contenders}
    from benchmarks.pool_vs_raw import make_actions

    actions = make_actions(args.task, args.worlds, kwargs)  # [16, worlds, agents, act_dim]
    agents = actions.shape[2]
    rates: dict[str, list[float]] = {c: [] for c in contenders}
    per_round: list[dict[str, float]] = []
    with tempfile.TemporaryDirectory(prefix="policy_rollout_") as tmp:
        binary = None
        actions_files = {"limit": Path(tmp) / "actions.f32", "limit_policy": Path(tmp) / "policy_actions.f32"}
        if "limit" in contenders or "limit_policy" in contenders:
            from benchmarks._native_build import raw_step_limit_binary

            binary = raw_step_limit_binary()
            actions.tofile(actions_files["limit"])
        if "limit_policy" in contenders:
            run_child("record", args.task, kwargs, args.worlds, args.threads, args.seconds, None,
                      out=actions_files["limit_policy"])
        for r in range(args.rounds):
            order = contenders[r % len(contenders):] + contenders[:r % len(contenders)]
            got = {}
            for c in order:
                if c in actions_files:
                    got[c] = run_limit(args.task, kwargs, agents, args.worlds, args.threads, args.seconds, binary,
                                       actions_files[c])
                else:
                    got[c] = run_child(c, args.task, kwargs, args.worlds, args.threads, args.seconds, peer_of[c])
                rates[c].append(got[c])
            per_round.append(got)
            print(f"round {r + 1}/{args.rounds}: " + "  ".join(f"{c} {got[c]:,.0f}" for c in contenders), flush=True)

    def ratio(c: str, base: str) -> str:
        if base not in rates or c == base:
            return "-"
        return f"{statistics.median(g[c] / g[base] for g in per_round):.3f}"

    # The peer each row is compared with: EnvPool async for a robot, SuperSuit for a game.
    peer = "supersuit" if spec.is_game else "envpool_async"
    unit = "agent-steps/s" if spec.is_game else "env-steps/s"
    setting = "".join(f", {k}={v}" for k, v in kwargs.items())
    rows = f" ({agents} agents each: {args.worlds * agents} policy rows per step)" if spec.is_game else ""
    print(f"\n{args.task}{setting}, {args.worlds} worlds{rows}, {args.threads} threads, a 64x64 tanh MLP policy "
          f"(torch, 1 thread) in the loop, {args.rounds} rounds of {args.seconds:g} s each, interleaved")
    print(f"| contender | {unit} (median) | min-max | / limit | / limit_policy | / {peer} |")
    print("|---|---:|---:|---:|---:|---:|")
    for c in contenders:
        v = rates[c]
        print(f"| {c} | {statistics.median(v):,.0f} | {min(v):,.0f}-{max(v):,.0f} | {ratio(c, 'limit')} | "
              f"{ratio(c, 'limit_policy')} | {ratio(c, peer)} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
