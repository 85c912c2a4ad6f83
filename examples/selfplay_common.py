"""Pieces shared by the self-play examples: games read from the task registry,
the policy, players, batched bouts, Elo ratings and the opponent sampler.

* ``describe_game(game, robot, overrides)`` reads a registered game (any entry
  of ``joltgym_marl.registry.GAMES``): its agents, their roles and spaces, its
  robot, the annealable shaping option and how an episode's outcome is told.
  A role is an agent's name without its ``_<k>`` index: sumo's ``ant_0`` and
  ``ant_1`` share the role ``ant`` (a symmetric game, one learner), a game
  with agents ``walker`` and ``blocker`` has two roles (one learner each).
* A player acts for one role: a frozen policy (a checkpoint), ``still`` (zero
  actions), ``random`` (uniform actions), ``scripted`` (examples/scripted.py)
  or a policy of Bansal et al.'s agent zoo (a zoo file, ``joltgym_marl.zoo``;
  it plays the game's ``form="gym_compete"``).
* ``play_bouts`` plays players against each other on batched native worlds
  (no reward shaping) and counts every agent's wins, draws and losses.
* ``expected_score``/``elo_update``/``EloTable``: Elo ratings; ``sample_recent``:
  Bansal et al. (2018)'s opponent sampling, uniform over the most recent
  fraction delta of a history.

A checkpoint is a dict saved by torch.save: policy weights, observation
normalizer, game, role, sizes, training configuration and step count.

Not a script: selfplay.py, selfplay_sumo.py, evaluate.py and record_video.py import it.
"""

from __future__ import annotations

import argparse
import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if __name__ == "__main__":  # not a script: say what it holds, before torch is imported (seconds)
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.parse_args()
    parser.print_help()
    raise SystemExit(0)

import numpy as np
import torch
from torch import nn

import joltgym_marl
from joltgym_marl import MULTI_AGENT_ENVS
from joltgym_marl.registry import GAMES, TaskSpec

from selfplay_args import find_spec, parse_game_args  # noqa: E402,F401  (their home: selfplay_args.py)

WIN, LOSS, DRAW = int(joltgym_marl.Outcome.WIN), int(joltgym_marl.Outcome.LOSS), int(joltgym_marl.Outcome.DRAW)
AUTORESET = joltgym_marl.ResetKind.AUTORESET  # a world whose episode ended and was reset in the call
RESULT_NAMES = {WIN: "win", DRAW: "draw", LOSS: "loss"}
SHAPING_OPTION = "shaping_weight"  # the games' annealable dense-shaping weight (an episode option)
BASELINES = ("still", "random", "scripted")

_INDEX_SUFFIX = re.compile(r"_\d+$")


def role_of(agent: str) -> str:
    """An agent's role: its name without the ``_<k>`` index (``ant_1`` -> ``ant``)."""
    return _INDEX_SUFFIX.sub("", agent)


# -- games ------------------------------------------------------------------------------------------

def robot_of(spec: TaskSpec, kwargs: dict[str, Any]) -> str:
    """The robot a game is played by: its ``robot`` argument, else its model file's stem."""
    defaults = spec.defaults()
    if "robot" in defaults:
        return str(kwargs.get("robot", defaults["robot"]))
    return Path(str(kwargs.get("xml_file", defaults.get("xml_file", spec.agent_prefix)))).stem


@dataclass
class Game:
    """What the trainer and the bouts need to know about a registered game."""

    spec: TaskSpec
    kwargs: dict[str, Any]  # the game's keyword arguments (besides max_cycles)
    robot: str
    agents: list[str]
    roles: list[str]  # each agent's role
    obs_dims: list[int]  # each agent's observation size
    act_dims: list[int]
    act_low: list[np.ndarray]
    act_high: list[np.ndarray]
    max_cycles: int

    @property
    def name(self) -> str:
        return self.spec.env_id

    @property
    def role_names(self) -> list[str]:
        return list(dict.fromkeys(self.roles))

    @property
    def symmetric(self) -> bool:
        return len(self.role_names) == 1

    @property
    def shaping(self) -> bool:
        # form="gym_compete" is gym-compete's game as it was: its own rewards, no shaping option
        return SHAPING_OPTION in self.spec.defaults() and self.kwargs.get("form", "default") == "default"

    def seats(self, role: str) -> list[int]:
        return [i for i, r in enumerate(self.roles) if r == role]

    def role_seat(self, role: str) -> int:
        seats = self.seats(role)
        if not seats:
            raise ValueError(f"{self.name} has no role {role!r}; expected one of {', '.join(self.role_names)}")
        return seats[0]

    def worlds(self, num_worlds: int, *, num_threads: int | None = None, **options: Any):
        """``num_worlds`` batched worlds of the game: the game module's ``vec_env``
        (same-step auto-reset), stepped through its ``WorldPool``."""
        return MULTI_AGENT_ENVS[self.spec.module_name].vec_env(
            num_worlds, num_threads=num_threads, max_cycles=self.max_cycles, copy=False,
            **{**self.kwargs, **options})


def describe_game(game: str, robot: str | None = None, overrides: dict[str, Any] | None = None,
                  max_cycles: int | None = None, per_seat: bool = False) -> Game:
    """The registered ``game`` (with ``robot`` and keyword ``overrides``). With
    ``per_seat`` every agent is a role of its own (``agent_0``, ``agent_1``): a
    symmetric game then has one learner per seat, as gym-compete keeps one set of
    parameters per agent."""
    spec = find_spec(game)
    kwargs = dict(overrides or {})
    defaults = spec.defaults()
    if robot is not None:
        if "robot" in defaults:
            kwargs["robot"] = robot
        elif robot != robot_of(spec, kwargs):
            raise ValueError(f"{spec.env_id} is played by {robot_of(spec, kwargs)!r} only (it has no robot "
                             f"argument); got robot {robot!r}")
    env = MULTI_AGENT_ENVS[spec.module_name].parallel_env(**kwargs)
    try:
        agents = list(env.possible_agents)
        obs_dims = [int(np.prod(env.observation_space(a).shape)) for a in agents]
        act_spaces = [env.action_space(a) for a in agents]
    finally:
        env.close()
    roles = list(agents) if per_seat else [role_of(a) for a in agents]
    return Game(spec, kwargs, robot_of(spec, kwargs), agents, roles, obs_dims,
                [int(np.prod(s.shape)) for s in act_spaces], [s.low.astype(np.float32) for s in act_spaces],
                [s.high.astype(np.float32) for s in act_spaces],
                spec.max_episode_steps if max_cycles is None else max_cycles)


class Outcomes:
    """Every agent's result (WIN, DRAW, LOSS) for the worlds whose episode just
    ended: the game's ``outcome`` info field where it has one; else, for a race
    (``rank``), the leader wins an episode that terminated (others lose) and a
    timeout is a draw; else every ended episode is a draw."""

    def __init__(self, pool):
        cols = {f[0]: f[1] for f in pool.info_fields}
        self.pool = pool
        self.outcome_col = cols.get("outcome")
        self.rank_col = cols.get("rank")

    def __call__(self, worlds: np.ndarray) -> np.ndarray:
        pool = self.pool
        if self.outcome_col is not None:
            return pool.final_infos[worlds, :, self.outcome_col].astype(np.int64)
        out = np.full((len(worlds), pool.num_agents), DRAW, np.int64)
        if self.rank_col is not None:
            decided = pool.terminations[worlds].any(1)
            first = pool.final_infos[worlds, :, self.rank_col] == 1
            out[decided] = np.where(first[decided], WIN, LOSS)
        return out


# -- policy and players -----------------------------------------------------------------------------

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
    """A Gaussian MLP policy and a separate MLP value function."""

    def __init__(self, obs_dim: int, act_dim: int, hidden: int = 64, log_std: float = -0.5):
        super().__init__()
        self.obs_dim, self.act_dim = obs_dim, act_dim
        self.actor = nn.Sequential(nn.Linear(obs_dim, hidden), nn.Tanh(), nn.Linear(hidden, hidden),
                                   nn.Tanh(), nn.Linear(hidden, act_dim))
        self.critic = nn.Sequential(nn.Linear(obs_dim, hidden), nn.Tanh(), nn.Linear(hidden, hidden),
                                    nn.Tanh(), nn.Linear(hidden, 1))
        self.log_std = nn.Parameter(torch.full((act_dim,), log_std))
        # Small last layer: the initial policy acts near zero.
        nn.init.orthogonal_(self.actor[-1].weight, 0.01)
        nn.init.zeros_(self.actor[-1].bias)

    def dist(self, obs: torch.Tensor) -> torch.distributions.Normal:
        return torch.distributions.Normal(self.actor(obs), self.log_std.exp())

    def value(self, obs: torch.Tensor) -> torch.Tensor:
        return self.critic(obs).squeeze(-1)


class Player:
    """Something that acts for one role: ``act(obs [n, obs_dim]) -> actions [n, act_dim]``.

    A ``stateful`` player (a recurrent policy) keeps a state per world: it is
    given the worlds its rows belong to (``act(..., worlds=)``) and told which
    worlds started a new episode (``episodes_ended``)."""

    name: str = "player"
    role: str | None = None  # the role it was trained for (None: any)
    stateful: bool = False

    def episodes_ended(self, worlds: np.ndarray | None = None) -> None:
        """Forget the state of ``worlds`` (every world when None)."""

    def act(self, obs: np.ndarray, rng: np.random.Generator, deterministic: bool = True) -> np.ndarray:
        raise NotImplementedError


class PolicyPlayer(Player):
    def __init__(self, policy: ActorCritic, norm: RunningNorm, name: str, role: str | None = None):
        self.policy, self.norm, self.name, self.role = policy, norm, name, role

    def act(self, obs: np.ndarray, rng: np.random.Generator, deterministic: bool = True) -> np.ndarray:
        with torch.no_grad():
            dist = self.policy.dist(torch.from_numpy(self.norm(obs)))
            action = dist.mean if deterministic else dist.sample()
        return action.clamp(-1, 1).numpy()


class StillPlayer(Player):
    """Zero actions: a robot that only holds its pose."""

    name = "still"

    def __init__(self, act_dim: int):
        self.act_dim = act_dim

    def act(self, obs, rng, deterministic=True):
        return np.zeros((len(obs), self.act_dim), np.float32)


class RandomPlayer(Player):
    """Uniform random actions in the action space."""

    name = "random"

    def __init__(self, low: np.ndarray, high: np.ndarray):
        self.low, self.high = low, high

    def act(self, obs, rng, deterministic=True):
        return rng.uniform(self.low, self.high, (len(obs), len(self.low))).astype(np.float32)


class ScriptedPlayer(Player):
    """The game's scripted baseline for the agent at a seat (examples/scripted.py);
    its gait clock advances one step per call."""

    name = "scripted"

    def __init__(self, game: Game, seat: int):
        from scripted import scripted_policy

        self.controller = scripted_policy(game.spec.name, game.robot, game.agents[seat], game.kwargs)
        self.role, self.t = game.roles[seat], 0

    def act(self, obs, rng, deterministic=True):
        actions = self.controller(self.t, obs)
        self.t += 1
        return actions


class ZooPlayer(Player):
    """A policy of Bansal et al.'s agent zoo (a file of the archive's ``agent-zoo/``,
    ``joltgym_marl.zoo``), for the game's ``form="gym_compete"``. It samples its
    actions as the archive's ``main.py`` does (``stochastic``, with the bouts'
    random generator) or plays their mean; an LSTM policy keeps its state per world."""

    stateful = True

    def __init__(self, path: str, stochastic: bool = True):
        from joltgym_marl import zoo

        self.entry = zoo.entry_for_file(path)
        self.policy = zoo.load(path, stochastic=stochastic)
        self.name = f"zoo:{self.entry.name if self.entry else Path(path).name}"
        self.role = None
        self.path = str(path)

    def act(self, obs, rng, deterministic=True, worlds=None):
        if worlds is None:
            worlds = np.arange(len(obs))
        worlds = np.asarray(worlds)
        if len(worlds) and worlds.max() >= self.policy.num_worlds:
            self.policy.resize(int(worlds.max()) + 1)
        return self.policy.act(obs, worlds=worlds, rng=rng)

    def episodes_ended(self, worlds=None):
        if worlds is None:
            self.policy.reset()
        else:
            worlds = np.asarray(worlds)
            self.policy.reset(worlds[worlds < self.policy.num_worlds])


def is_zoo_file(spec: str) -> bool:
    """Whether ``spec`` names a file of the agent zoo (its archive name, or any ``*pkl`` file)."""
    from joltgym_marl import zoo

    return Path(spec).is_file() and (zoo.entry_for_file(spec) is not None or spec.endswith("pkl"))


def make_zoo_player(spec: str, game: Game, seat: int, stochastic: bool = True) -> ZooPlayer:
    """A zoo file's player for ``game``'s agent ``seat``, checked against the catalogue and the game's sizes."""
    from joltgym_marl import zoo

    try:
        player = ZooPlayer(spec, stochastic)
    except (zoo.ZooFormatError, FileNotFoundError) as e:
        raise ValueError(str(e)) from None
    entry = player.entry
    if entry is not None and entry.agent is not None and entry.agent != game.agents[seat]:
        raise ValueError(f"zoo file {spec} plays {entry.agent} of {entry.game}; it cannot play "
                         f"{game.agents[seat]}")
    if player.policy.obs_dim != game.obs_dims[seat] or player.policy.act_dim != game.act_dims[seat]:
        hint = "" if game.kwargs.get("form") == "gym_compete" else " (the zoo plays the game's form=gym_compete)"
        raise ValueError(f"zoo file {spec} has observation/action sizes {player.policy.obs_dim}/"
                         f"{player.policy.act_dim}; agent {game.agents[seat]} of {game.name} has "
                         f"{game.obs_dims[seat]}/{game.act_dims[seat]}{hint}")
    return player


def save_checkpoint(path: Path, policy: ActorCritic, norm: RunningNorm, game: Game, role: str, config: dict,
                    steps: int) -> None:
    torch.save({"policy": policy.state_dict(), "norm": norm.state(), "game": game.name,
                "game_kwargs": game.kwargs, "robot": game.robot, "role": role, "obs_dim": policy.obs_dim,
                "act_dim": policy.act_dim, "config": config, "steps": steps}, path)


def load_checkpoint_player(path: str) -> tuple[PolicyPlayer, dict]:
    """A checkpoint's deterministic player and the checkpoint dict. Checkpoints
    of the former selfplay_sumo.py (no game recorded) are sumo_v0 Ant policies."""
    try:
        data = torch.load(path, map_location="cpu", weights_only=False)
    except Exception as e:  # not a torch file at all
        raise ValueError(f"{path} is not a self-play checkpoint ({type(e).__name__}: {e})") from None
    if not isinstance(data, dict) or "policy" not in data or "norm" not in data:
        raise ValueError(f"{path} is not a self-play checkpoint (expected a dict with 'policy' and 'norm')")
    weights = data["policy"]
    obs_dim = data.get("obs_dim", weights["actor.0.weight"].shape[1])
    act_dim = data.get("act_dim", weights["actor.4.weight"].shape[0])
    policy = ActorCritic(obs_dim, act_dim, data["config"].get("hidden", 64))
    policy.load_state_dict(weights)
    policy.eval()
    data.setdefault("game", "sumo_v0")
    data.setdefault("game_kwargs", {})
    return PolicyPlayer(policy, RunningNorm.from_state(data["norm"]), str(path), data.get("role")), data


def make_player(spec: str, game: Game, seat: int, stochastic: bool = True) -> Player:
    """``still``, ``random``, ``scripted``, a checkpoint path or a zoo file (sampling
    its actions if ``stochastic``), to play ``game``'s agent ``seat``."""
    role = game.roles[seat]
    if spec == "still":
        return StillPlayer(game.act_dims[seat])
    if spec == "random":
        return RandomPlayer(game.act_low[seat], game.act_high[seat])
    if spec == "scripted":
        return ScriptedPlayer(game, seat)
    if not Path(spec).is_file():
        raise ValueError(f"player {spec!r} should be 'still', 'random', 'scripted', a checkpoint file or a zoo file")
    if is_zoo_file(spec):
        return make_zoo_player(spec, game, seat, stochastic)
    player, data = load_checkpoint_player(spec)
    if find_spec(data["game"]).env_id != game.name:
        raise ValueError(f"checkpoint {spec} plays {data['game']}, not {game.name}")
    if player.role is not None and player.role not in (role, game.agents[seat]):
        raise ValueError(f"checkpoint {spec} plays the role {player.role!r}; agent {game.agents[seat]} "
                         f"has the role {role!r}")
    if player.policy.obs_dim != game.obs_dims[seat] or player.policy.act_dim != game.act_dims[seat]:
        raise ValueError(f"checkpoint {spec} has observation/action sizes {player.policy.obs_dim}/"
                         f"{player.policy.act_dim}; agent {game.agents[seat]} has {game.obs_dims[seat]}/"
                         f"{game.act_dims[seat]}")
    return player


def load_player(spec: str) -> Player:
    """A sumo_v0 player (``random``, ``still``, ``scripted`` or a checkpoint path),
    as examples/record_video.py uses it."""
    game = describe_game(load_checkpoint_player(spec)[1]["game"]) if Path(spec).is_file() else describe_game("sumo")
    return make_player(spec, game, 0)


# -- bouts ------------------------------------------------------------------------------------------

def step_players(game: Game, pool, seat_players: list[tuple[np.ndarray, int, Player]], actions: np.ndarray,
                 rng: np.random.Generator, deterministic: bool = True) -> None:
    """Fill ``actions[worlds, seat]`` of each ``(worlds, seat, player)`` from the pool's observations."""
    obs = pool.obs
    for worlds, seat, player in seat_players:
        rows = obs[worlds, seat, :game.obs_dims[seat]]
        if player.stateful:
            act = player.act(rows, rng, deterministic, worlds=worlds)
        else:
            act = player.act(rows, rng, deterministic)
        actions[worlds, seat, :game.act_dims[seat]] = act


def play_bouts(game: Game, players: list[Player], episodes: int, *, worlds: int = 64, seed: int = 0,
               num_threads: int | None = None) -> np.ndarray:
    """``episodes`` bouts with ``players[k]`` playing agent ``k``, deterministic
    policies, no reward shaping; returns counts [agents, 3] of (win, draw, loss)."""
    if len(players) != len(game.agents):
        raise ValueError(f"{game.name} has {len(game.agents)} agents; got {len(players)} players")
    worlds = max(1, min(worlds, episodes))
    rng = np.random.default_rng(seed)
    counts = np.zeros((len(game.agents), 3), np.int64)
    options = {SHAPING_OPTION: 0.0} if game.shaping else {}
    env = game.worlds(worlds, num_threads=num_threads, **options)
    try:
        pool = env.pool
        pool.reset_all(seed=seed)
        outcomes = Outcomes(pool)
        every = np.arange(worlds)
        seat_players = [(every, k, p) for k, p in enumerate(players)]
        stateful = [p for p in players if p.stateful]
        if len({id(p) for p in stateful}) != len(stateful):
            raise ValueError("a stateful player (a zoo LSTM) keeps one state per world: give each seat its own")
        for p in stateful:
            p.episodes_ended()
        actions = np.zeros((worlds, pool.num_agents, pool.act_dim), np.float32)
        started, finished = worlds, 0
        counting = np.ones(worlds, dtype=bool)
        column = {WIN: 0, DRAW: 1, LOSS: 2}
        while finished < episodes:
            step_players(game, pool, seat_players, actions, rng)
            pool.step_all(actions)
            ended = np.flatnonzero(pool.reset_kind == AUTORESET)
            if len(ended):
                for p in stateful:
                    p.episodes_ended(ended)
                results = outcomes(ended)
                for i, w in enumerate(ended):
                    if counting[w]:
                        for k, code in enumerate(results[i]):
                            counts[k, column[int(code)]] += 1
                        finished += 1
                    counting[w] = started < episodes  # start no more episodes than asked for
                    started += int(counting[w])
    finally:
        env.close()
    return counts


def wilson_interval(successes: float, n: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval of a proportion (95% for z = 1.96)."""
    if n == 0:
        return 0.0, 1.0
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


# -- Elo and opponent sampling ----------------------------------------------------------------------

ELO_START = 1000.0


def expected_score(rating_a: float, rating_b: float) -> float:
    """A's expected score against B: 1 / (1 + 10 ** ((R_B - R_A) / 400))."""
    return 1.0 / (1.0 + 10.0 ** ((rating_b - rating_a) / 400.0))


def elo_update(rating_a: float, rating_b: float, score_a: float, k: float = 16.0) -> tuple[float, float]:
    """Both ratings after one game in which A scored ``score_a`` (1 win, 0.5 draw, 0 loss)."""
    change = k * (score_a - expected_score(rating_a, rating_b))
    return rating_a + change, rating_b - change


@dataclass
class EloTable:
    """Ratings updated bout by bout (wins, draws and losses interleaved, so a
    match's order does not favour one side); every match is kept."""

    k: float = 16.0
    ratings: dict[str, float] = field(default_factory=dict)
    matches: list[dict] = field(default_factory=list)

    def add(self, name: str, rating: float = ELO_START) -> None:
        self.ratings.setdefault(name, rating)

    def record(self, a: str, b: str, wins: int, draws: int, losses: int, **extra: Any) -> None:
        wins, draws, losses = int(wins), int(draws), int(losses)
        self.add(a)
        self.add(b)
        scores = [1.0] * wins + [0.5] * draws + [0.0] * losses
        order = np.argsort(_interleave(wins, draws, losses), kind="stable")
        for i in order:
            self.ratings[a], self.ratings[b] = elo_update(self.ratings[a], self.ratings[b], scores[i], self.k)
        self.matches.append({"a": a, "b": b, "wins": wins, "draws": draws, "losses": losses, **extra})

    def save(self, path: Path) -> None:
        path.write_text(json.dumps({"k": self.k, "start": ELO_START, "ratings": self.ratings,
                                    "matches": self.matches}, indent=1))


def _interleave(*counts: int) -> np.ndarray:
    """A sort key spreading each kind of result evenly over the sequence."""
    keys = [(i + 0.5) / c for c in counts for i in range(c)]
    return np.array(keys)


def sample_recent(history_length: int, delta: float, rng: np.random.Generator) -> int:
    """An index drawn uniformly from the most recent fraction ``delta`` of a
    history of ``history_length`` snapshots (Bansal et al. 2018): from
    ``[floor((1 - delta) * n), n)``; delta = 0 is the latest only, 1 the whole history."""
    if history_length < 1:
        raise ValueError(f"history_length should be >= 1, got {history_length}")
    if not 0.0 <= delta <= 1.0:
        raise ValueError(f"delta should be in [0, 1], got {delta}")
    low = min(int(math.floor((1.0 - delta) * history_length)), history_length - 1)
    return int(rng.integers(low, history_length))

