"""Pieces shared by the sumo examples: the policy, checkpoints and matches.

The policy is a Gaussian MLP with a running observation normalizer; a
checkpoint is a dict saved by torch.save (policy weights, normalizer
statistics, the training configuration and step count).

Not a script: selfplay_sumo.py and evaluate.py import it.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from torch import nn

import joltgym_marl

OBS_DIM, ACT_DIM = 45, 8
WIN, LOSS, DRAW = joltgym_marl.Outcome.WIN, joltgym_marl.Outcome.LOSS, joltgym_marl.Outcome.DRAW
AUTORESET = joltgym_marl.ResetKind.AUTORESET  # a world whose episode ended and was reset in the call


class RunningNorm:
    """Running mean and variance of observations (Welford, batched)."""

    def __init__(self, dim: int):
        self.mean = np.zeros(dim)
        self.var = np.ones(dim)
        self.count = 1e-4

    def update(self, batch: np.ndarray) -> None:
        mean, var, n = batch.mean(0), batch.var(0), len(batch)
        delta = mean - self.mean
        total = self.count + n
        self.mean = self.mean + delta * n / total
        self.var = (self.var * self.count + var * n + delta**2 * self.count * n / total) / total
        self.count = total

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        return np.clip((obs - self.mean) / np.sqrt(self.var + 1e-8), -10, 10).astype(np.float32)

    def state(self) -> dict:
        return {"mean": self.mean.copy(), "var": self.var.copy(), "count": self.count}

    @classmethod
    def from_state(cls, state: dict) -> RunningNorm:
        norm = cls(len(state["mean"]))
        norm.mean, norm.var, norm.count = state["mean"].copy(), state["var"].copy(), state["count"]
        return norm


class ActorCritic(nn.Module):
    def __init__(self, hidden: int = 64, log_std: float = -0.5):
        super().__init__()
        self.actor = nn.Sequential(nn.Linear(OBS_DIM, hidden), nn.Tanh(), nn.Linear(hidden, hidden),
                                   nn.Tanh(), nn.Linear(hidden, ACT_DIM))
        self.critic = nn.Sequential(nn.Linear(OBS_DIM, hidden), nn.Tanh(), nn.Linear(hidden, hidden),
                                    nn.Tanh(), nn.Linear(hidden, 1))
        self.log_std = nn.Parameter(torch.full((ACT_DIM,), log_std))
        # Small last layer: the initial policy acts near zero.
        nn.init.orthogonal_(self.actor[-1].weight, 0.01)
        nn.init.zeros_(self.actor[-1].bias)

    def dist(self, obs: torch.Tensor) -> torch.distributions.Normal:
        return torch.distributions.Normal(self.actor(obs), self.log_std.exp())

    def value(self, obs: torch.Tensor) -> torch.Tensor:
        return self.critic(obs).squeeze(-1)


@dataclass
class Player:
    """Something that acts in sumo: a (frozen) policy, uniform random actions
    (``name="random"``), or zero actions (``name="still"``: an Ant that only
    holds its pose, and so can be beaten only by pushing it out)."""

    policy: ActorCritic | None
    norm: RunningNorm | None
    name: str = "random"

    def act(self, obs: np.ndarray, rng: np.random.Generator, deterministic: bool = True) -> np.ndarray:
        if self.policy is None:
            if self.name == "still":
                return np.zeros((len(obs), ACT_DIM), np.float32)
            return rng.uniform(-1, 1, (len(obs), ACT_DIM)).astype(np.float32)
        with torch.no_grad():
            dist = self.policy.dist(torch.from_numpy(self.norm(obs)))
            action = dist.mean if deterministic else dist.sample()
        return action.clamp(-1, 1).numpy()


def save_checkpoint(path: Path, policy: ActorCritic, norm: RunningNorm, config: dict, steps: int) -> None:
    torch.save({"policy": policy.state_dict(), "norm": norm.state(), "config": config, "steps": steps}, path)


def load_player(spec: str) -> Player:
    """``"random"``, ``"still"`` or a checkpoint path."""
    if spec in ("random", "still"):
        return Player(None, None, name=spec)
    data = torch.load(spec, map_location="cpu", weights_only=False)
    policy = ActorCritic(data["config"].get("hidden", 64))
    policy.load_state_dict(data["policy"])
    policy.eval()
    return Player(policy, RunningNorm.from_state(data["norm"]), name=str(spec))


def play_matches(first: Player, second: Player, episodes: int, *, worlds: int = 32, seed: int = 0,
                 num_threads: int | None = None, max_cycles: int = 500) -> dict[str, int]:
    """``episodes`` bouts of ``first`` (ant_0) against ``second`` (ant_1), no
    reward shaping; returns first's win/draw/loss counts."""
    worlds = min(worlds, episodes)
    rng = np.random.default_rng(seed)
    counts = {"win": 0, "draw": 0, "loss": 0}
    with joltgym_marl.WorldPool("sumo", worlds, num_threads=num_threads, max_episode_steps=max_cycles,
                                autoreset_mode="same_step", shaping_weight=0.0) as pool:
        obs = pool.reset_all(seed=seed)
        outcome_col = [f[1] for f in pool.info_fields if f[0] == "outcome"][0]
        started = worlds  # every world is playing an episode that counts
        finished = 0
        counting = np.ones(worlds, dtype=bool)
        actions = np.zeros((worlds, 2, ACT_DIM), np.float32)
        while finished < episodes:
            actions[:, 0] = first.act(obs[:, 0], rng)
            actions[:, 1] = second.act(obs[:, 1], rng)
            pool.step_all(actions)
            for w in np.flatnonzero(pool.reset_kind == AUTORESET):
                if counting[w]:
                    code = int(pool.final_infos[w, 0, outcome_col])
                    counts[{WIN: "win", DRAW: "draw", LOSS: "loss"}[code]] += 1
                    finished += 1
                # Start no more episodes than asked for.
                counting[w] = started < episodes
                started += int(counting[w])
    return counts


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.parse_args()
    parser.print_help()
