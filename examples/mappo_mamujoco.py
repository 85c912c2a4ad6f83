"""MAPPO on MaMuJoCo, natively batched, in CleanRL's single-file style.

The env is ``joltgym_marl.mamujoco_v1.vec_env`` in its padded
parameter-sharing layout: per world, one row per agent, each agent's
observation zero-padded to the widest agent's plus a one-hot agent id, and
actions padded likewise. One actor (a Gaussian MLP) is shared by every agent;
the critic is centralized: one value per world from ``state()`` (the robot's
full -v5 observation), since the agents share the team reward.

Observations and the state are normalized with running statistics (then
clipped to [-10, 10]) and rewards scaled by a running estimate of the return's
standard deviation, as CleanRL's MuJoCo PPO does. The env auto-resets on the
step after an episode ends (NEXT_STEP): that step's actions are ignored and
its transition is masked out of the loss; an episode cut by the time limit
bootstraps from the value of its last state.

Each iteration prints one progress line; ``--curve`` writes the learning
curve (and ``--csv`` its numbers), with the return of a uniformly random
policy measured first for reference.

    .venv/bin/python examples/mappo_mamujoco.py --scenario HalfCheetah --agent-conf 2x3 --minutes 10 \\
        --curve docs/media/mappo_mamujoco_halfcheetah_2x3.png
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="mappo_mamujoco.py", description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--scenario", default="HalfCheetah")
    parser.add_argument("--agent-conf", default="2x3")
    parser.add_argument("--agent-obsk", type=int, default=1)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--num-envs", type=int, default=16, help="native worlds")
    parser.add_argument("--num-threads", type=int, default=None, help="native threads (default: the cores)")
    parser.add_argument("--torch-threads", type=int, default=1)
    parser.add_argument("--num-steps", type=int, default=128, help="steps per world per rollout")
    parser.add_argument("--total-timesteps", type=int, default=2_000_000, help="world steps (upper bound)")
    parser.add_argument("--minutes", type=float, default=10.0, help="wall-clock budget (stops first)")
    parser.add_argument("--learning-rate", type=float, default=3e-4)
    parser.add_argument("--gamma", type=float, default=0.99)
    parser.add_argument("--gae-lambda", type=float, default=0.95)
    parser.add_argument("--num-minibatches", type=int, default=8)
    parser.add_argument("--update-epochs", type=int, default=10)
    parser.add_argument("--clip-coef", type=float, default=0.2)
    parser.add_argument("--ent-coef", type=float, default=0.0)
    parser.add_argument("--vf-coef", type=float, default=0.5)
    parser.add_argument("--max-grad-norm", type=float, default=0.5)
    parser.add_argument("--random-episodes", type=int, default=16, help="episodes of the random-policy baseline")
    parser.add_argument("--curve", default=None, help="write the learning curve PNG here")
    parser.add_argument("--csv", default=None, help="write the curve's numbers here")
    return parser.parse_args(argv)


if __name__ == "__main__":
    parse_args()  # --help (and a bad argument) answers before torch is imported

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.optim as optim  # noqa: E402
from torch.distributions.normal import Normal  # noqa: E402

from joltgym_marl import mamujoco_v1  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from learning_curves import plot_learning_curve, write_curve_csv  # noqa: E402


class RunningMeanStd:
    def __init__(self, shape):
        self.mean, self.var, self.count = np.zeros(shape), np.ones(shape), 1e-4

    def update(self, x: np.ndarray) -> None:
        x = x.reshape(-1, *self.mean.shape)
        mean, var, n = x.mean(0), x.var(0), x.shape[0]
        delta, total = mean - self.mean, self.count + n
        self.mean = self.mean + delta * n / total
        self.var = (self.var * self.count + var * n + delta ** 2 * self.count * n / total) / total
        self.count = total

    def normalize(self, x: np.ndarray) -> np.ndarray:
        return np.clip((x - self.mean) / np.sqrt(self.var + 1e-8), -10, 10)


def layer(i, o, std=np.sqrt(2)):
    lin = nn.Linear(i, o)
    nn.init.orthogonal_(lin.weight, std)
    nn.init.constant_(lin.bias, 0.0)
    return lin


class Actor(nn.Module):
    def __init__(self, obs_dim, act_dim):
        super().__init__()
        self.mean = nn.Sequential(layer(obs_dim, 64), nn.Tanh(), layer(64, 64), nn.Tanh(), layer(64, act_dim, 0.01))
        self.logstd = nn.Parameter(torch.zeros(act_dim))

    def dist(self, obs):
        mean = self.mean(obs)
        return Normal(mean, self.logstd.expand_as(mean).exp())


class Critic(nn.Module):
    def __init__(self, state_dim):
        super().__init__()
        self.v = nn.Sequential(layer(state_dim, 64), nn.Tanh(), layer(64, 64), nn.Tanh(), layer(64, 1, 1.0))

    def forward(self, state):
        return self.v(state).squeeze(-1)


def random_policy_return(args) -> float:
    env = mamujoco_v1.vec_env(args.scenario, args.agent_conf, num_envs=args.random_episodes,
                              num_threads=args.num_threads, agent_obsk=args.agent_obsk, layout="padded")
    env.reset(seed=args.seed + 10_000)
    rng = np.random.default_rng(args.seed)
    totals, alive = np.zeros(env.num_envs), np.ones(env.num_envs, bool)
    while alive.any():
        act = rng.uniform(-1, 1, (env.num_envs, env.num_agents, env.padded_act_dim)).astype(np.float32)
        _, rew, term, trunc, _ = env.step(act)
        totals += np.where(alive, rew[:, 0], 0.0)
        alive &= ~(term[:, 0] | trunc[:, 0])
    env.close()
    return float(totals.mean())


def main(argv=None):
    args = parse_args(argv)
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.torch_threads)
    baseline = random_policy_return(args)
    print(f"random policy: mean return {baseline:.1f} over {args.random_episodes} episodes", flush=True)

    env = mamujoco_v1.vec_env(args.scenario, args.agent_conf, num_envs=args.num_envs, num_threads=args.num_threads,
                              agent_obsk=args.agent_obsk, layout="padded")
    n, agents, od, ad, sd = env.num_envs, env.num_agents, env.padded_obs_dim, env.padded_act_dim, env.state_dim
    # each agent acts on its first act_dims[i] entries; the padding is masked out of the log-probabilities
    act_mask = torch.zeros(agents, ad)
    for i, d in enumerate(env.act_dims):
        act_mask[i, :d] = 1.0
    actor, critic = Actor(od, ad), Critic(sd)
    optimizer = optim.Adam(list(actor.parameters()) + list(critic.parameters()), lr=args.learning_rate, eps=1e-5)
    obs_rms, state_rms, ret_rms = RunningMeanStd((od,)), RunningMeanStd((sd,)), RunningMeanStd(())
    T = args.num_steps
    buf_obs = torch.zeros(T, n, agents, od)
    buf_state = torch.zeros(T + 1, n, sd)
    buf_act = torch.zeros(T, n, agents, ad)
    buf_logp = torch.zeros(T, n, agents)
    buf_rew, buf_term, buf_done, buf_valid = (torch.zeros(T, n) for _ in range(4))
    buf_value = torch.zeros(T + 1, n)

    raw_obs, _ = env.reset(seed=args.seed)
    raw_state = env.state()
    valid = np.ones(n, bool)  # False on the reset step after an episode end
    returns_running, ep_return = np.zeros(n), np.zeros(n)
    curve = []  # (world steps, seconds, mean return of episodes ended in the iteration)
    start, global_step, iteration = time.time(), 0, 0
    while global_step < args.total_timesteps and time.time() - start < args.minutes * 60:
        iteration += 1
        finished = []
        for t in range(T):
            obs_rms.update(raw_obs)
            state_rms.update(raw_state)
            obs = torch.as_tensor(obs_rms.normalize(raw_obs), dtype=torch.float32)
            state = torch.as_tensor(state_rms.normalize(raw_state), dtype=torch.float32)
            with torch.no_grad():
                dist = actor.dist(obs)
                action = dist.sample()
                logp = (dist.log_prob(action) * act_mask).sum(-1)
                value = critic(state)
            buf_obs[t], buf_state[t], buf_act[t], buf_logp[t], buf_value[t] = obs, state, action, logp, value
            buf_valid[t] = torch.as_tensor(valid, dtype=torch.float32)
            raw_obs, rew, term, trunc, infos = env.step(np.clip(action.numpy(), -1, 1))
            raw_state = env.state()
            r, te, tr = rew[:, 0], term[:, 0], trunc[:, 0]
            stepped = ~infos["_reset"]
            ep_return += np.where(stepped, r, 0.0)
            done = (te | tr) & stepped
            finished += ep_return[done].tolist()
            ep_return[done] = 0.0
            returns_running = returns_running * args.gamma + r
            if stepped.any():  # (every world resets at once after a time limit)
                ret_rms.update(returns_running[stepped])
            returns_running[done] = 0.0
            buf_rew[t] = torch.as_tensor(r / np.sqrt(ret_rms.var + 1e-8), dtype=torch.float32).clamp(-10, 10)
            buf_term[t] = torch.as_tensor(te, dtype=torch.float32)
            buf_done[t] = torch.as_tensor(done, dtype=torch.float32)
            valid = ~done
            global_step += int(stepped.sum())
        with torch.no_grad():
            buf_state[T] = torch.as_tensor(state_rms.normalize(raw_state), dtype=torch.float32)
            buf_value[T] = critic(buf_state[T])
            adv = torch.zeros(T, n)
            last = torch.zeros(n)
            for t in reversed(range(T)):
                # the next stored state is this step's result (the last state after an episode end)
                next_value = buf_value[t + 1] * (1.0 - buf_term[t])
                delta = buf_rew[t] + args.gamma * next_value - buf_value[t]
                next_valid = buf_valid[t + 1] if t + 1 < T else torch.as_tensor(valid, dtype=torch.float32)
                last = delta + args.gamma * args.gae_lambda * (1.0 - buf_done[t]) * next_valid * last
                last = last * buf_valid[t]
                adv[t] = last
            ret = adv + buf_value[:T]
        b_obs, b_act, b_logp = buf_obs.reshape(T * n, agents, od), buf_act.reshape(T * n, agents, ad), \
            buf_logp.reshape(T * n, agents)
        b_state, b_adv, b_ret, b_valid = buf_state[:T].reshape(T * n, sd), adv.reshape(-1), ret.reshape(-1), \
            buf_valid.reshape(-1)
        idx_valid = torch.nonzero(b_valid > 0).squeeze(-1)
        mb = max(1, len(idx_valid) // args.num_minibatches)
        for _ in range(args.update_epochs):
            perm = idx_valid[torch.randperm(len(idx_valid))]
            for k in range(0, len(perm), mb):
                i = perm[k:k + mb]
                dist = actor.dist(b_obs[i])
                logp = (dist.log_prob(b_act[i]) * act_mask).sum(-1)
                ratio = (logp - b_logp[i]).exp()  # [mb, agents]
                a = b_adv[i]
                a = ((a - a.mean()) / (a.std() + 1e-8)).unsqueeze(-1)
                pg = torch.max(-a * ratio, -a * ratio.clamp(1 - args.clip_coef, 1 + args.clip_coef)).mean()
                v_loss = 0.5 * ((critic(b_state[i]) - b_ret[i]) ** 2).mean()
                entropy = (dist.entropy() * act_mask).sum(-1).mean()
                loss = pg + args.vf_coef * v_loss - args.ent_coef * entropy
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(list(actor.parameters()) + list(critic.parameters()), args.max_grad_norm)
                optimizer.step()
        elapsed = time.time() - start
        mean_ret = float(np.mean(finished)) if finished else float("nan")
        curve.append((global_step, elapsed, mean_ret))
        print(f"iter {iteration} step {global_step} time {elapsed:.0f}s return {mean_ret:.1f} "
              f"({len(finished)} episodes) sps {global_step / elapsed:.0f} pg {pg.item():.3f} v {v_loss.item():.3f}",
              flush=True)
    env.close()
    if args.csv:
        write_curve_csv(args.csv, ["world_steps", "seconds", "mean_return", "random_policy_return"],
                        ([*row, baseline] for row in curve))
    if args.curve:
        plot_learning_curve(args.curve, [c[0] for c in curve], [c[2] for c in curve], baseline,
                            "MAPPO (shared actor, critic on state())",
                            f"MaMuJoCo {args.scenario} {args.agent_conf}, {args.num_envs} worlds, "
                            f"{curve[-1][1] / 60:.1f} min" if curve else "")
        print(f"wrote {args.curve}")
    return curve, baseline


if __name__ == "__main__":
    main()
