"""Multi-agent PPO on CheetahRace in CleanRL's single-file style, one policy shared by every cheetah.

As in CleanRL's PettingZoo PPO, the parallel env becomes a flat vector env
in which every agent of every race is one row, and one policy (parameter
sharing) acts for all rows at once. The rows come from the native agent
vector env (``cheetah_race_v0.vec_env(..., base_class="gymnasium")``, the
races stepped natively) or, with ``--supersuit``, from SuperSuit's
``concat_vec_envs_v1(pettingzoo_env_to_vec_env_v1(parallel_env))``; both
auto-reset in the step that ends a race and put the ended race's last
observation in each row's ``info["terminal_observation"]``, from which a race
cut off at ``--max-cycles`` bootstraps its value.

Each iteration prints one progress line (global agent-steps, mean episodic
return of each cheetah's races that ended in it, mean forward velocity,
steps per second, losses).

    .venv/bin/python examples/cleanrl_ppo_race.py --num-agents 4 --total-timesteps 2000000
"""

from __future__ import annotations

import argparse
import random
import time


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="cleanrl_ppo_race.py", description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--exp-name", default="cleanrl_ppo_race", help="the name of this experiment")
    parser.add_argument("--seed", type=int, default=1, help="seed of the experiment")
    parser.add_argument("--torch-deterministic", action=argparse.BooleanOptionalAction, default=True,
                        help="torch.backends.cudnn.deterministic")
    parser.add_argument("--torch-threads", type=int, default=1,
                        help="torch's CPU threads (the races step on their own native threads)")
    parser.add_argument("--supersuit", action="store_true",
                        help="build the rows with SuperSuit's pipeline instead of the native agent vector env")
    parser.add_argument("--num-envs", type=int, default=16, help="number of races")
    parser.add_argument("--num-agents", type=int, default=4, help="cheetahs per race")
    parser.add_argument("--layout", default="lanes", choices=["lanes", "shared_track"], help="the race's layout")
    parser.add_argument("--max-cycles", type=int, default=1000, help="steps per race")
    parser.add_argument("--num-threads", type=int, default=None, help="native threads (default: the cores)")
    parser.add_argument("--total-timesteps", type=int, default=2_000_000, help="total agent-steps")
    parser.add_argument("--learning-rate", type=float, default=3e-4, help="the optimizer's learning rate")
    parser.add_argument("--num-steps", type=int, default=128, help="steps per race per rollout")
    parser.add_argument("--anneal-lr", action=argparse.BooleanOptionalAction, default=True,
                        help="anneal the learning rate linearly to zero")
    parser.add_argument("--gamma", type=float, default=0.99, help="the discount factor")
    parser.add_argument("--gae-lambda", type=float, default=0.95, help="lambda of the general advantage estimate")
    parser.add_argument("--num-minibatches", type=int, default=32, help="minibatches per epoch")
    parser.add_argument("--update-epochs", type=int, default=10, help="epochs per update")
    parser.add_argument("--norm-adv", action=argparse.BooleanOptionalAction, default=True,
                        help="normalize advantages per minibatch")
    parser.add_argument("--clip-coef", type=float, default=0.2, help="the surrogate clipping coefficient")
    parser.add_argument("--clip-vloss", action=argparse.BooleanOptionalAction, default=True,
                        help="clip the value loss")
    parser.add_argument("--ent-coef", type=float, default=0.0, help="entropy coefficient")
    parser.add_argument("--vf-coef", type=float, default=0.5, help="value-function coefficient")
    parser.add_argument("--max-grad-norm", type=float, default=0.5, help="gradient clipping norm")
    parser.add_argument("--target-kl", type=float, default=None, help="the target KL divergence threshold")
    parser.add_argument("--save-model", default=None, metavar="PATH", help="save the agent's weights here")
    args = parser.parse_args()
    args.num_rows = args.num_envs * args.num_agents
    args.batch_size = args.num_rows * args.num_steps
    args.minibatch_size = args.batch_size // args.num_minibatches
    args.num_iterations = args.total_timesteps // args.batch_size
    if args.minibatch_size < 1 or args.num_iterations < 1:
        parser.error(f"--total-timesteps ({args.total_timesteps}) should be at least --num-envs x --num-agents x "
                     f"--num-steps ({args.batch_size}), and that at least --num-minibatches ({args.num_minibatches})")
    return args


if __name__ == "__main__":
    # Arguments first: --help and bad arguments answer before torch is imported (that takes seconds).
    parse_args()

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.optim as optim  # noqa: E402
from torch.distributions.normal import Normal  # noqa: E402

from joltgym_marl import cheetah_race_v0  # noqa: E402


def make_envs(args: argparse.Namespace):
    game = dict(num_agents=args.num_agents, layout=args.layout, max_cycles=args.max_cycles)
    if args.supersuit:
        import supersuit as ss

        return ss.concat_vec_envs_v1(ss.pettingzoo_env_to_vec_env_v1(cheetah_race_v0.parallel_env(**game)),
                                     args.num_envs, num_cpus=0, base_class="gymnasium")
    return cheetah_race_v0.vec_env(args.num_envs, base_class="gymnasium", num_threads=args.num_threads, **game)


def layer_init(layer: nn.Linear, std: float = np.sqrt(2), bias_const: float = 0.0) -> nn.Linear:
    torch.nn.init.orthogonal_(layer.weight, std)
    torch.nn.init.constant_(layer.bias, bias_const)
    return layer


class Agent(nn.Module):
    """One policy for every cheetah (parameter sharing)."""

    def __init__(self, obs_dim: int, act_dim: int):
        super().__init__()
        self.critic = nn.Sequential(
            layer_init(nn.Linear(obs_dim, 64)), nn.Tanh(),
            layer_init(nn.Linear(64, 64)), nn.Tanh(),
            layer_init(nn.Linear(64, 1), std=1.0),
        )
        self.actor_mean = nn.Sequential(
            layer_init(nn.Linear(obs_dim, 64)), nn.Tanh(),
            layer_init(nn.Linear(64, 64)), nn.Tanh(),
            layer_init(nn.Linear(64, act_dim), std=0.01),
        )
        self.actor_logstd = nn.Parameter(torch.zeros(1, act_dim))

    def get_value(self, x: torch.Tensor) -> torch.Tensor:
        return self.critic(x)

    def get_action_and_value(self, x: torch.Tensor, action: torch.Tensor | None = None):
        mean = self.actor_mean(x)
        probs = Normal(mean, torch.exp(self.actor_logstd.expand_as(mean)))
        if action is None:
            action = probs.sample()
        return action, probs.log_prob(action).sum(1), probs.entropy().sum(1), self.critic(x)


def main() -> None:
    args = parse_args()
    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    torch.backends.cudnn.deterministic = args.torch_deterministic
    torch.set_num_threads(args.torch_threads)

    envs = make_envs(args)
    obs_dim = envs.observation_space.shape[0]  # one agent's spaces, as SuperSuit reports them
    act_dim = envs.action_space.shape[0]
    low, high = envs.action_space.low, envs.action_space.high
    R, T = args.num_rows, args.num_steps
    assert envs.num_envs == R, (envs.num_envs, R)
    pipeline = "SuperSuit concat_vec_envs_v1" if args.supersuit else "native agent vector env"
    print(f"{pipeline}: {args.num_envs} races x {args.num_agents} cheetahs = {R} rows, "
          f"{args.num_iterations} iterations of {args.batch_size} agent-steps", flush=True)
    agent = Agent(obs_dim, act_dim)
    optimizer = optim.Adam(agent.parameters(), lr=args.learning_rate, eps=1e-5)

    obs = torch.zeros((T, R, obs_dim))
    actions = torch.zeros((T, R, act_dim))
    logprobs = torch.zeros((T, R))
    rewards = torch.zeros((T, R))
    dones = torch.zeros((T, R))  # obs[t] is the first observation of a new race
    values = torch.zeros((T, R))

    global_step = 0
    start_time = time.time()
    next_obs, _ = envs.reset(seed=args.seed)
    next_obs = torch.as_tensor(next_obs)
    next_done = torch.zeros(R)
    episode_return = np.zeros(R)
    returns_seen: list[float] = []

    for iteration in range(1, args.num_iterations + 1):
        if args.anneal_lr:
            optimizer.param_groups[0]["lr"] = (1.0 - (iteration - 1.0) / args.num_iterations) * args.learning_rate
        iteration_returns: list[float] = []
        velocity_sum, velocity_count = 0.0, 0
        for step in range(T):
            global_step += R
            obs[step] = next_obs
            dones[step] = next_done
            with torch.no_grad():
                action, logprob, _, value = agent.get_action_and_value(next_obs)
                values[step] = value.flatten()
            actions[step] = action
            logprobs[step] = logprob

            next_obs, reward, terminated, truncated, infos = envs.step(np.clip(action.numpy(), low, high))
            ended = np.logical_or(terminated, truncated)
            reward = np.asarray(reward, dtype=np.float64)
            episode_return += reward
            # A race cut off by the time limit goes on in the value of its last observation.
            cut = np.flatnonzero(np.asarray(truncated) & ~np.asarray(terminated))
            if len(cut):
                with torch.no_grad():
                    last = torch.as_tensor(np.stack([infos[i]["terminal_observation"] for i in cut]))
                    reward[cut] += args.gamma * agent.get_value(last).flatten().numpy()
            for i in np.flatnonzero(ended):
                iteration_returns.append(float(episode_return[i]))
                episode_return[i] = 0.0
            velocity_sum += sum(info["x_velocity"] for info in infos)
            velocity_count += R
            rewards[step] = torch.as_tensor(reward, dtype=torch.float32)
            next_obs = torch.as_tensor(next_obs)
            next_done = torch.as_tensor(ended, dtype=torch.float32)

        with torch.no_grad():
            next_value = agent.get_value(next_obs).reshape(1, -1)
            advantages = torch.zeros_like(rewards)
            lastgaelam = 0
            for t in reversed(range(T)):
                if t == T - 1:
                    nextnonterminal, nextvalues = 1.0 - next_done, next_value
                else:
                    nextnonterminal, nextvalues = 1.0 - dones[t + 1], values[t + 1]
                delta = rewards[t] + args.gamma * nextvalues * nextnonterminal - values[t]
                advantages[t] = lastgaelam = delta + args.gamma * args.gae_lambda * nextnonterminal * lastgaelam
            returns = advantages + values

        b_obs = obs.reshape((-1, obs_dim))
        b_logprobs = logprobs.reshape(-1)
        b_actions = actions.reshape((-1, act_dim))
        b_advantages = advantages.reshape(-1)
        b_returns = returns.reshape(-1)
        b_values = values.reshape(-1)

        b_inds = np.arange(args.batch_size)
        clipfracs = []
        for _epoch in range(args.update_epochs):
            np.random.shuffle(b_inds)
            for start in range(0, args.batch_size, args.minibatch_size):
                mb_inds = b_inds[start:start + args.minibatch_size]
                _, newlogprob, entropy, newvalue = agent.get_action_and_value(b_obs[mb_inds], b_actions[mb_inds])
                logratio = newlogprob - b_logprobs[mb_inds]
                ratio = logratio.exp()
                with torch.no_grad():
                    approx_kl = ((ratio - 1) - logratio).mean()
                    clipfracs.append(((ratio - 1.0).abs() > args.clip_coef).float().mean().item())

                mb_advantages = b_advantages[mb_inds]
                if args.norm_adv:
                    mb_advantages = (mb_advantages - mb_advantages.mean()) / (mb_advantages.std() + 1e-8)
                pg_loss1 = -mb_advantages * ratio
                pg_loss2 = -mb_advantages * torch.clamp(ratio, 1 - args.clip_coef, 1 + args.clip_coef)
                pg_loss = torch.max(pg_loss1, pg_loss2).mean()

                newvalue = newvalue.view(-1)
                if args.clip_vloss:
                    v_loss_unclipped = (newvalue - b_returns[mb_inds]) ** 2
                    v_clipped = b_values[mb_inds] + torch.clamp(newvalue - b_values[mb_inds], -args.clip_coef,
                                                                args.clip_coef)
                    v_loss = 0.5 * torch.max(v_loss_unclipped, (v_clipped - b_returns[mb_inds]) ** 2).mean()
                else:
                    v_loss = 0.5 * ((newvalue - b_returns[mb_inds]) ** 2).mean()
                loss = pg_loss - args.ent_coef * entropy.mean() + v_loss * args.vf_coef

                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(agent.parameters(), args.max_grad_norm)
                optimizer.step()

            if args.target_kl is not None and approx_kl > args.target_kl:
                break

        returns_seen += iteration_returns
        mean_return = f"{np.mean(iteration_returns):.2f}" if iteration_returns else "n/a"
        sps = int(global_step / (time.time() - start_time))
        print(f"iteration {iteration}/{args.num_iterations} global_step={global_step} "
              f"episodes={len(iteration_returns)} episodic_return={mean_return} "
              f"x_velocity={velocity_sum / velocity_count:+.3f} SPS={sps} "
              f"value_loss={v_loss.item():.4f} policy_loss={pg_loss.item():.4f} "
              f"approx_kl={approx_kl.item():.5f} clipfrac={np.mean(clipfracs):.3f}", flush=True)

    if args.save_model:
        torch.save(agent.state_dict(), args.save_model)
        print(f"saved the agent to {args.save_model}")
    envs.close()
    print(f"done: {global_step} agent-steps, {len(returns_seen)} agent-episodes in {time.time() - start_time:.1f} s")


if __name__ == "__main__":
    main()
