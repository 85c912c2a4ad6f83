"""Rollout collection with a policy in the loop: sync vs async (send/recv) stepping, side by side.

    python benchmarks/policy_rollout.py [--task half_cheetah] [--worlds 64] [--threads 2]
                                        [--seconds 3] [--rounds 3] [--contenders ...]

Users step envs from a policy, not with zero actions. Each step here runs a
64x64 tanh MLP in torch on one thread (``torch.set_num_threads(1)``) on the
observations and samples Gaussian actions, for ``--worlds`` worlds of
``--task`` on ``--threads`` threads. Contenders:

* ``limit``: the C++ ``raw_step_limit --mode env`` (the whole env step, no
  Python, no policy): the ceiling;
* ``policy_only``: the policy alone on ``--worlds`` observations per call
  (no physics), for the bound physics + inference sets on a small machine;
* ``pool_sync``: ``WorldPool.step_all`` with the policy between steps (the
  threads idle while it runs);
* ``pool_async``: ``WorldPool`` with ``batch_size = worlds / 2``:
  ``recv()`` a half, run the policy on it while the native threads step the
  other half, ``send()`` it back;
* ``vector_sync`` / ``vector_async``: the same through ``NativeVectorEnv``
  (``copy=False``; ``step`` vs ``send``/``recv``);
* ``envpool_sync`` / ``envpool_async``: EnvPool's env of the task's
  Gymnasium id (batch ``worlds`` with ``step``, or ``worlds / 2`` with
  ``send``/``recv``), if EnvPool is installed and has it.

Every measurement runs in a fresh process (none imports ``mujoco``); rounds
are interleaved, the contender order rotated per round. Prints the median
(min-max) env-steps/s of each and its ratio to the limit and to
``envpool_async``, both as the median over rounds of the ratio measured in
the same round. Run it from the clone's root.
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

from benchmarks._tasks import SINGLE_AGENT_TASKS, TASKS  # noqa: E402

CONTENDERS = ["limit", "policy_only", "pool_sync", "pool_async", "vector_sync", "vector_async",
              "envpool_sync", "envpool_async"]

# argv: contender, task, worlds, threads, seconds, envpool id, root
_CHILD = r"""
import json, sys, time
sys.path.insert(0, sys.argv[7])
from benchmarks._paths import use_checkout
use_checkout()
import numpy as np
import torch
torch.set_num_threads(1)
contender, task, n, threads, seconds, peer_id = (sys.argv[1], sys.argv[2], int(sys.argv[3]),
                                                 int(sys.argv[4]), float(sys.argv[5]), sys.argv[6])
import joltgym_marl
probe = joltgym_marl.WorldPool(task, 1, num_threads=1)
obs_dim, act_dim = probe.obs_dim, probe.act_dim
low, high = torch.as_tensor(probe.action_low), torch.as_tensor(probe.action_high)
probe.close()
torch.manual_seed(0)
net = torch.nn.Sequential(torch.nn.Linear(obs_dim, 64), torch.nn.Tanh(), torch.nn.Linear(64, 64),
                          torch.nn.Tanh(), torch.nn.Linear(64, act_dim))
std = 0.3

@torch.no_grad()
def policy(obs):
    mean = net(torch.from_numpy(obs))
    return torch.clamp(torch.normal(mean, std), low, high).numpy()

def timed(step):
    # step() -> env-steps done; warm up, then run for `seconds`.
    end = time.perf_counter() + min(0.5, seconds / 4)
    while time.perf_counter() < end:
        step()
    done, start = 0, time.perf_counter()
    while True:
        done += step()
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            return done / elapsed

if contender == "policy_only":
    obs = np.random.default_rng(0).standard_normal((n, obs_dim)).astype(np.float32)
    def step():
        policy(obs)
        return n
elif contender in ("pool_sync", "pool_async"):
    batch = n if contender == "pool_sync" else max(1, n // 2)
    pool = joltgym_marl.WorldPool(task, n, num_threads=threads, batch_size=batch)
    if contender == "pool_sync":
        pool.reset_all(seed=0)
        flat = pool.obs.reshape(n, obs_dim)
        def step():
            pool.step_all(policy(flat))
            return n
    else:
        pool.async_reset(seed=0)
        flat = pool.recv_obs.reshape(batch, obs_dim)
        def step():
            ids = pool.recv()[0]
            pool.send(policy(flat), ids)
            return batch
elif contender in ("vector_sync", "vector_async"):
    from joltgym_marl.vector.native_vector_env import NativeVectorEnv
    batch = n if contender == "vector_sync" else max(1, n // 2)
    env = NativeVectorEnv(task, n, num_threads=threads, copy=False, batch_size=batch)
    if contender == "vector_sync":
        state = {"obs": env.reset(seed=0)[0]}
        def step():
            state["obs"] = env.step(policy(state["obs"]))[0]
            return n
    else:
        env.async_reset(seed=0)
        def step():
            obs, _, _, _, info = env.recv()
            env.send(policy(obs), info["env_id"])
            return batch
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
    try:
        import envpool
    except ImportError:
        return None
    spec = TASKS[task]
    known = set(envpool.list_all_envs())
    for candidate in (spec.reference_id, f"{spec.title}-v4"):
        if candidate and candidate in known:
            return candidate
    return None


def run_child(contender: str, task: str, worlds: int, threads: int, seconds: float, peer: str) -> float:
    root = str(Path(__file__).resolve().parents[1])
    done = subprocess.run([sys.executable, "-c", _CHILD, contender, task, str(worlds), str(threads),
                           str(seconds), peer or "", root], capture_output=True, text=True, cwd=root)
    if done.returncode != 0:
        raise SystemExit(f"{contender} failed:\n{done.stderr[-3000:]}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    if result["mujoco_imported"]:
        raise SystemExit(f"{contender}: expected no `import mujoco` in the measuring process")
    return result["rate"]


def run_limit(task: str, worlds: int, threads: int, seconds: float, binary: Path, actions_file: Path) -> float:
    from benchmarks.pool_vs_raw import run_raw

    # About `seconds` of stepping: a short probe sizes the run.
    probe = run_raw(binary, task, worlds, threads, 200, "env", actions_file, {})
    steps = max(200, int(probe * seconds / worlds))
    return run_raw(binary, task, worlds, threads, steps, "env", actions_file, {})


def parse_args(argv=None) -> argparse.Namespace:
    names = [spec.name for spec in SINGLE_AGENT_TASKS]
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    parser.add_argument("--task", choices=names, default="half_cheetah" if "half_cheetah" in names else names[0],
                        help="a single-agent task of the native registry (default: %(default)s)")
    parser.add_argument("--worlds", type=int, default=64)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--seconds", type=float, default=3.0, help="timed seconds per measurement")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--contenders", nargs="+", choices=CONTENDERS, default=CONTENDERS, metavar="NAME",
                        help=f"a subset of {', '.join(CONTENDERS)}")
    args = parser.parse_args(argv)
    if min(args.worlds, args.threads, args.rounds) < 1 or args.seconds <= 0:
        parser.error("--worlds, --threads, --rounds and --seconds should be positive")
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    contenders = list(args.contenders)
    peer = envpool_id(args.task)
    if peer is None:
        dropped = [c for c in contenders if c.startswith("envpool")]
        if dropped:
            print(f"EnvPool is not installed or has no env for {args.task}: skipping {', '.join(dropped)}")
        contenders = [c for c in contenders if not c.startswith("envpool")]
    rates: dict[str, list[float]] = {c: [] for c in contenders}
    per_round: list[dict[str, float]] = []
    with tempfile.TemporaryDirectory(prefix="policy_rollout_") as tmp:
        binary = actions_file = None
        if "limit" in contenders:
            from benchmarks._native_build import raw_step_limit_binary
            from benchmarks.pool_vs_raw import make_actions

            binary = raw_step_limit_binary()
            actions_file = Path(tmp) / "actions.f32"
            make_actions(args.task, args.worlds, {}).tofile(actions_file)
        for r in range(args.rounds):
            order = contenders[r % len(contenders):] + contenders[:r % len(contenders)]
            got = {}
            for c in order:
                if c == "limit":
                    got[c] = run_limit(args.task, args.worlds, args.threads, args.seconds, binary, actions_file)
                else:
                    got[c] = run_child(c, args.task, args.worlds, args.threads, args.seconds, peer)
                rates[c].append(got[c])
            per_round.append(got)
            print(f"round {r + 1}/{args.rounds}: " + "  ".join(f"{c} {got[c]:,.0f}" for c in contenders), flush=True)

    def ratio(c: str, base: str) -> str:
        if base not in rates or c == base:
            return "-"
        return f"{statistics.median(g[c] / g[base] for g in per_round):.3f}"

    print(f"\n{args.task}, {args.worlds} worlds, {args.threads} threads, a 64x64 tanh MLP policy (torch, 1 thread) "
          f"in the loop, {args.rounds} rounds of {args.seconds:g} s each, interleaved")
    print(f"| contender | env-steps/s (median) | min-max | / limit | / envpool_async |")
    print("|---|---:|---:|---:|---:|")
    for c in contenders:
        v = rates[c]
        print(f"| {c} | {statistics.median(v):,.0f} | {min(v):,.0f}-{max(v):,.0f} | {ratio(c, 'limit')} | "
              f"{ratio(c, 'envpool_async')} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
