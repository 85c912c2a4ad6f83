"""PPO for continuous actions on natively batched worlds, in CleanRL's single-file style.

The vector env comes from ``gymnasium.make_vec`` (the task's native vector
entry point: every world stepped in C++, the GIL released), wrapped in
Gymnasium's own vector wrappers as CleanRL wraps its envs:
RecordEpisodeStatistics, ClipAction, NormalizeObservation (observations then
clipped to [-10, 10]), NormalizeReward (rewards then clipped to [-10, 10]).

The env auto-resets on the step after an episode ends (Gymnasium's NEXT_STEP
mode, which NormalizeObservation requires): that step's action is ignored and
the transition from a last observation to a first one is masked out of the
loss. A truncated episode bootstraps from the value of its last observation.

Each iteration prints one progress line (global step, mean episodic return of
the episodes that ended in it, their mean forward velocity where the task
reports one, steps per second, losses). ``--engine jolt`` trains on Jolt
Physics (the tasks that run on it: docs/guides/jolt.md). ``--save-model``
writes a checkpoint that examples/evaluate.py replays on either engine: the
agent's weights with the frozen observation normalizer, the env id, the
engine and the training configuration. ``--curve`` writes the learning curve
(return and forward velocity against world steps; ``--csv`` its numbers),
with a uniformly random policy's return measured first for reference.

    .venv/bin/python examples/cleanrl_ppo_continuous.py --env-id joltgym_marl/Hopper-v0 --total-timesteps 1000000
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

CHECKPOINT_FORMAT = "cleanrl_ppo_continuous/1"  # the "format" entry of a --save-model checkpoint


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="cleanrl_ppo_continuous.py", description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--exp-name", default="cleanrl_ppo_continuous", help="the name of this experiment")
    parser.add_argument("--seed", type=int, default=1, help="seed of the experiment")
    parser.add_argument("--torch-deterministic", action=argparse.BooleanOptionalAction, default=True,
                        help="torch.backends.cudnn.deterministic")
    parser.add_argument("--torch-threads", type=int, default=1,
                        help="torch's CPU threads (the worlds step on their own native threads)")
    parser.add_argument("--env-id", default="joltgym_marl/HalfCheetah-v0", help="a joltgym_marl/... Gymnasium id")
    parser.add_argument("--engine", choices=("mujoco", "jolt"), default="mujoco", help="the physics engine")
    parser.add_argument("--total-timesteps", type=int, default=1_000_000, help="total env steps")
    parser.add_argument("--learning-rate", type=float, default=3e-4, help="the optimizer's learning rate")
    parser.add_argument("--num-envs", type=int, default=16, help="number of native worlds")
    parser.add_argument("--num-threads", type=int, default=None, help="native threads (default: the cores)")
    parser.add_argument("--num-steps", type=int, default=128, help="steps per world per rollout")
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
    parser.add_argument("--save-model", default=None, metavar="PATH",
                        help="save the agent (weights, observation normalizer, env id, engine) here")
    parser.add_argument("--curve", default=None, metavar="PNG", help="write the learning curve here")
    parser.add_argument("--csv", default=None, metavar="CSV", help="write the curve's numbers here")
    parser.add_argument("--random-episodes", type=int, default=16,
                        help="episodes of the random-policy baseline (measured when --curve or --csv is given)")
    args = parser.parse_args(argv)
    args.batch_size = args.num_envs * args.num_steps
    args.minibatch_size = args.batch_size // args.num_minibatches
    args.num_iterations = args.total_timesteps // args.batch_size
    if args.minibatch_size < 1 or args.num_iterations < 1:
        parser.error(f"--total-timesteps ({args.total_timesteps}) should be at least --num-envs x --num-steps "
                     f"({args.batch_size}), and that at least --num-minibatches ({args.num_minibatches})")
    if args.random_episodes < 1:
        parser.error(f"--random-episodes should be >= 1, got {args.random_episodes}")
    return args


if __name__ == "__main__":
    # Arguments first: --help and bad arguments answer before torch is imported (that takes seconds).
    parse_args()

import gymnasium as gym  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.optim as optim  # noqa: E402
from torch.distributions.normal import Normal  # noqa: E402

import joltgym_marl  # noqa: E402,F401  (registers the joltgym_marl/... ids)

sys.path.insert(0, str(Path(__file__).resolve().parent))
from learning_curves import plot_learning_curve, write_curve_csv  # noqa: E402

OBS_CLIP = 10.0  # normalized observations are clipped to [-OBS_CLIP, OBS_CLIP]


def make_envs(args: argparse.Namespace) -> gym.vector.VectorEnv:
    envs = gym.make_vec(args.env_id, num_envs=args.num_envs, vectorization_mode="vector_entry_point",
                        num_threads=args.num_threads, engine=args.engine)
    envs = gym.wrappers.vector.RecordEpisodeStatistics(envs)
    envs = gym.wrappers.vector.ClipAction(envs)
    envs = gym.wrappers.vector.NormalizeObservation(envs)
    envs = gym.wrappers.vector.TransformObservation(envs, lambda obs: np.clip(obs, -OBS_CLIP, OBS_CLIP))
    envs = gym.wrappers.vector.NormalizeReward(envs, gamma=args.gamma)
    envs = gym.wrappers.vector.TransformReward(envs, lambda reward: np.clip(reward, -10, 10))
    return envs


def layer_init(layer: nn.Linear, std: float = np.sqrt(2), bias_const: float = 0.0) -> nn.Linear:
    torch.nn.init.orthogonal_(layer.weight, std)
    torch.nn.init.constant_(layer.bias, bias_const)
    return layer


class Agent(nn.Module):
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


def observation_normalizer(envs: gym.vector.VectorEnv) -> gym.wrappers.vector.NormalizeObservation:
    """The NormalizeObservation wrapper in ``envs``'s chain (make_envs puts one there)."""
    env = envs
    while not isinstance(env, gym.wrappers.vector.NormalizeObservation):
        env = env.env
    return env


def save_checkpoint(path: str, agent: Agent, envs: gym.vector.VectorEnv, args: argparse.Namespace,
                    global_step: int) -> None:
    normalizer = observation_normalizer(envs)
    torch.save({
        "format": CHECKPOINT_FORMAT,
        "agent": agent.state_dict(),
        "env_id": args.env_id,
        "engine": args.engine,
        "obs_dim": envs.single_observation_space.shape[0],
        "act_dim": envs.single_action_space.shape[0],
        "obs_mean": torch.as_tensor(normalizer.obs_rms.mean, dtype=torch.float64),  # tensors: torch.load's
        "obs_var": torch.as_tensor(normalizer.obs_rms.var, dtype=torch.float64),  # weights_only mode reads them
        "obs_epsilon": float(normalizer.epsilon),
        "obs_clip": OBS_CLIP,
        "global_step": global_step,
        "config": {k: v for k, v in vars(args).items() if isinstance(v, (int, float, str, bool, type(None)))},
    }, path)


def load_checkpoint(path: str) -> tuple[Agent, dict]:
    """The agent (in eval mode) and the checkpoint ``save_checkpoint`` wrote; ValueError if ``path`` is not one."""
    try:
        checkpoint = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:  # a file torch cannot read at all
        raise ValueError(f"{path} should be a checkpoint saved by cleanrl_ppo_continuous.py --save-model, "
                         f"got a file torch.load cannot read ({type(e).__name__}: {e})") from e
    if not isinstance(checkpoint, dict) or checkpoint.get("format") != CHECKPOINT_FORMAT:
        found = checkpoint.get("format") if isinstance(checkpoint, dict) else type(checkpoint).__name__
        raise ValueError(f"{path} should be a checkpoint saved by cleanrl_ppo_continuous.py --save-model "
                         f"(format {CHECKPOINT_FORMAT!r}), got format {found!r}")
    agent = Agent(checkpoint["obs_dim"], checkpoint["act_dim"])
    agent.load_state_dict(checkpoint["agent"])
    agent.eval()
    return agent, checkpoint


def normalized(checkpoint: dict, obs: np.ndarray) -> torch.Tensor:
    """Observations as the agent saw them in training: the frozen running statistics, then the clip."""
    z = (obs - checkpoint["obs_mean"].numpy()) / np.sqrt(checkpoint["obs_var"].numpy() + checkpoint["obs_epsilon"])
    return torch.as_tensor(np.clip(z, -checkpoint["obs_clip"], checkpoint["obs_clip"]), dtype=torch.float32)


def run_episodes(env_id: str, engine: str, episodes: int, seed: int, act, num_threads: int | None = None,
                 worlds: int | None = None, clip: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``episodes`` episodes, episode i in a world seeded ``seed + i``, on batches of at most
    ``worlds`` native worlds (default: all at once), actions from ``act(obs, action_space)``
    (then clipped to the space, unless ``clip`` is false: the env then pays its control cost on
    the actions as given, and MuJoCo clamps the controls): each episode's return, mean forward
    velocity (NaN where the task reports none) and length. The native worlds do not depend on the batching: with an
    ``act`` that treats rows alone, neither does an episode."""
    worlds = episodes if worlds is None else max(1, min(worlds, episodes))
    totals, speeds, lengths = np.zeros(episodes), np.zeros(episodes), np.zeros(episodes, np.int64)
    envs = gym.make_vec(env_id, num_envs=worlds, vectorization_mode="vector_entry_point",
                        num_threads=num_threads, engine=engine)
    try:
        space = envs.single_action_space
        for first in range(0, episodes, worlds):
            n = min(worlds, episodes - first)
            obs, _ = envs.reset(seed=seed + first)
            total, speed, steps = np.zeros(worlds), np.zeros(worlds), np.zeros(worlds)
            alive = np.arange(worlds) < n  # a last, smaller batch leaves its other worlds out
            while alive.any():
                actions = act(obs, space)
                if clip:
                    actions = np.clip(actions, space.low, space.high)
                obs, reward, terminated, truncated, infos = envs.step(actions)
                total += np.where(alive, reward, 0.0)
                speed += np.where(alive, infos.get("x_velocity", np.full(worlds, np.nan)), 0.0)
                steps += alive
                alive &= ~(terminated | truncated)
            totals[first:first + n], speeds[first:first + n] = total[:n], (speed / np.maximum(steps, 1))[:n]
            lengths[first:first + n] = steps[:n]
    finally:
        envs.close()
    return totals, speeds, lengths


def random_policy_return(args: argparse.Namespace) -> float:
    rng = np.random.default_rng(args.seed)
    totals, _, _ = run_episodes(args.env_id, args.engine, args.random_episodes, args.seed + 10_000,
                             lambda obs, space: rng.uniform(space.low, space.high, (len(obs), *space.shape)),
                             args.num_threads)
    return float(totals.mean())


def main() -> None:
    args = parse_args()
    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    torch.backends.cudnn.deterministic = args.torch_deterministic
    torch.set_num_threads(args.torch_threads)
    device = torch.device("cpu")

    baseline = None
    if args.curve or args.csv:
        baseline = random_policy_return(args)
        print(f"random policy: mean return {baseline:.1f} over {args.random_episodes} episodes", flush=True)
    envs = make_envs(args)
    obs_dim = envs.single_observation_space.shape[0]
    act_dim = envs.single_action_space.shape[0]
    print(f"{args.env_id} on {args.engine}: {args.num_envs} native worlds, {args.num_iterations} iterations of "
          f"{args.batch_size} steps", flush=True)
    agent = Agent(obs_dim, act_dim).to(device)
    optimizer = optim.Adam(agent.parameters(), lr=args.learning_rate, eps=1e-5)

    T, N = args.num_steps, args.num_envs
    obs = torch.zeros((T, N, obs_dim), device=device)
    actions = torch.zeros((T, N, act_dim), device=device)
    logprobs = torch.zeros((T, N), device=device)
    rewards = torch.zeros((T, N), device=device)
    terminations = torch.zeros((T, N), device=device)  # the episode ended in a terminal state at step t
    dones = torch.zeros((T, N), device=device)  # the episode ended (terminated or truncated) at step t
    valid = torch.zeros((T, N), device=device)  # step t is a real transition (not an auto-reset step)
    values = torch.zeros((T, N), device=device)

    global_step = 0
    start_time = time.time()
    next_obs, _ = envs.reset(seed=args.seed)
    next_obs = torch.as_tensor(next_obs, dtype=torch.float32, device=device)  # v5's float64 -> the network's
    after_end = np.zeros(N, dtype=bool)  # the next step of these worlds is their auto-reset
    returns_seen: list[float] = []
    speed_sum, speed_steps = np.zeros(N), np.zeros(N)  # each world's episode so far: sum of x velocities, steps
    curve = []  # per iteration: global step, seconds, mean return and forward velocity of the episodes that ended

    for iteration in range(1, args.num_iterations + 1):
        if args.anneal_lr:
            optimizer.param_groups[0]["lr"] = (1.0 - (iteration - 1.0) / args.num_iterations) * args.learning_rate
        iteration_returns: list[float] = []
        iteration_speeds: list[float] = []
        for step in range(T):
            global_step += N
            obs[step] = next_obs
            valid[step] = torch.as_tensor(~after_end, dtype=torch.float32)
            with torch.no_grad():
                action, logprob, _, value = agent.get_action_and_value(next_obs)
                values[step] = value.flatten()
            actions[step] = action
            logprobs[step] = logprob

            stepped = ~after_end
            next_obs, reward, terminated, truncated, infos = envs.step(action.cpu().numpy())
            after_end = terminated | truncated
            if "x_velocity" in infos:  # (absent on a step where every world resets)
                speed_sum += np.where(stepped, infos["x_velocity"], 0.0)
                speed_steps += stepped
                ended = after_end & (speed_steps > 0)
                iteration_speeds += (speed_sum[ended] / speed_steps[ended]).tolist()
            speed_sum[after_end], speed_steps[after_end] = 0.0, 0
            rewards[step] = torch.as_tensor(reward, dtype=torch.float32, device=device)
            terminations[step] = torch.as_tensor(terminated, dtype=torch.float32, device=device)
            dones[step] = torch.as_tensor(after_end, dtype=torch.float32, device=device)
            next_obs = torch.as_tensor(next_obs, dtype=torch.float32, device=device)
            if "episode" in infos:
                iteration_returns += [float(r) for r in infos["episode"]["r"][infos["_episode"]]]

        # Generalized advantage estimate. After step t the world holds
        # obs[t + 1] (its last observation if the episode ended at t): a
        # truncated episode bootstraps from its value, a terminated one does
        # not, and no advantage flows back over an episode's end.
        with torch.no_grad():
            next_value = agent.get_value(next_obs).reshape(1, -1)
            advantages = torch.zeros_like(rewards, device=device)
            lastgaelam = 0
            for t in reversed(range(T)):
                following = next_value if t == T - 1 else values[t + 1]
                delta = rewards[t] + args.gamma * following * (1.0 - terminations[t]) - values[t]
                advantages[t] = lastgaelam = delta + args.gamma * args.gae_lambda * (1.0 - dones[t]) * lastgaelam
            returns = advantages + values

        b_obs = obs.reshape((-1, obs_dim))
        b_logprobs = logprobs.reshape(-1)
        b_actions = actions.reshape((-1, act_dim))
        b_advantages = advantages.reshape(-1)
        b_returns = returns.reshape(-1)
        b_values = values.reshape(-1)
        b_valid = valid.reshape(-1)

        b_inds = np.arange(args.batch_size)
        clipfracs = []
        for _epoch in range(args.update_epochs):
            np.random.shuffle(b_inds)
            for start in range(0, args.batch_size, args.minibatch_size):
                mb_inds = b_inds[start:start + args.minibatch_size]
                mask = b_valid[mb_inds]
                count = mask.sum().clamp(min=1.0)

                _, newlogprob, entropy, newvalue = agent.get_action_and_value(b_obs[mb_inds], b_actions[mb_inds])
                logratio = newlogprob - b_logprobs[mb_inds]
                ratio = logratio.exp()
                with torch.no_grad():
                    approx_kl = (((ratio - 1) - logratio) * mask).sum() / count
                    clipfracs.append(float((((ratio - 1.0).abs() > args.clip_coef).float() * mask).sum() / count))

                mb_advantages = b_advantages[mb_inds]
                if args.norm_adv:
                    mean = (mb_advantages * mask).sum() / count
                    std = ((((mb_advantages - mean) ** 2) * mask).sum() / count).sqrt()
                    mb_advantages = (mb_advantages - mean) / (std + 1e-8)

                pg_loss1 = -mb_advantages * ratio
                pg_loss2 = -mb_advantages * torch.clamp(ratio, 1 - args.clip_coef, 1 + args.clip_coef)
                pg_loss = (torch.max(pg_loss1, pg_loss2) * mask).sum() / count

                newvalue = newvalue.view(-1)
                if args.clip_vloss:
                    v_loss_unclipped = (newvalue - b_returns[mb_inds]) ** 2
                    v_clipped = b_values[mb_inds] + torch.clamp(newvalue - b_values[mb_inds], -args.clip_coef,
                                                                args.clip_coef)
                    v_loss_clipped = (v_clipped - b_returns[mb_inds]) ** 2
                    v_loss = 0.5 * (torch.max(v_loss_unclipped, v_loss_clipped) * mask).sum() / count
                else:
                    v_loss = 0.5 * (((newvalue - b_returns[mb_inds]) ** 2) * mask).sum() / count

                entropy_loss = (entropy * mask).sum() / count
                loss = pg_loss - args.ent_coef * entropy_loss + v_loss * args.vf_coef

                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(agent.parameters(), args.max_grad_norm)
                optimizer.step()

            if args.target_kl is not None and approx_kl > args.target_kl:
                break

        returns_seen += iteration_returns
        mean_return = f"{np.mean(iteration_returns):.2f}" if iteration_returns else "n/a"
        mean_speed = f"{np.mean(iteration_speeds):.3f}" if iteration_speeds else "n/a"
        elapsed = time.time() - start_time
        curve.append((global_step, elapsed, float(np.mean(iteration_returns)) if iteration_returns else np.nan,
                      float(np.mean(iteration_speeds)) if iteration_speeds else np.nan))
        sps = int(global_step / elapsed)
        print(f"iteration {iteration}/{args.num_iterations} global_step={global_step} "
              f"episodes={len(iteration_returns)} episodic_return={mean_return} "
              f"forward_velocity={mean_speed} SPS={sps} "
              f"value_loss={v_loss.item():.4f} policy_loss={pg_loss.item():.4f} "
              f"approx_kl={approx_kl.item():.5f} clipfrac={np.mean(clipfracs):.3f}", flush=True)

    if args.save_model:
        save_checkpoint(args.save_model, agent, envs, args, global_step)
        print(f"saved the agent to {args.save_model}")
    envs.close()
    if args.csv:
        write_curve_csv(args.csv, ["world_steps", "seconds", "mean_return", "mean_forward_velocity",
                                   "random_policy_return"], ([*row, baseline] for row in curve))
        print(f"wrote {args.csv}")
    if args.curve:
        name = args.env_id.split("/")[-1]
        plot_learning_curve(args.curve, [c[0] for c in curve], [c[2] for c in curve], baseline,
                            "PPO (CleanRL-style, stochastic policy)",
                            f"{name} on {'Jolt' if args.engine == 'jolt' else 'MuJoCo'}, {args.num_envs} worlds, "
                            f"{curve[-1][1] / 60:.1f} min",
                            velocities=None if np.isnan([c[3] for c in curve]).all() else [c[3] for c in curve])
        print(f"wrote {args.curve}")
    print(f"done: {global_step} steps, {len(returns_seen)} episodes in {time.time() - start_time:.1f} s")


if __name__ == "__main__":
    main()
