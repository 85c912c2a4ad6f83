"""Bansal et al.'s agent zoo as opponents: the 19 pretrained policies of
"Emergent Complexity via Multi-Agent Competition" (openai/multiagent-competition,
``agent-zoo/``), run in NumPy, batched over worlds.

The archive carries no licence, so joltgym_marl neither ships nor downloads
the weights: clone https://github.com/openai/multiagent-competition yourself
and pass the path of a file under its ``agent-zoo/`` (or the folder itself to
:func:`find`). The policies see the games' ``form="gym_compete"``
observations (each agent's vector exactly as gym-compete builds it).

Format (from the archive's ``policy.py``/``main.py``): each ``.pkl`` is a pickled
flat float32 vector of the policy's TensorFlow variables in creation order:

* ``retfilter`` sum, sumsq, count (3 scalars; unused for acting);
* ``obsfilter`` sum (D), sumsq (D), count (1): observations are normalised as
  ``clip((x - mean) / sqrt(max(var, 1e-2)), -5, 5)`` with ``mean = sum / count``,
  ``var = sumsq / count - mean**2``;
* the value network, then the policy network, then ``logstd`` (A):

  - MLP (run-to-goal, you-shall-not-pass): two 64-unit tanh layers and a linear
    head, each a ``[in, out]`` weight then a bias (``vffc1, vffc2, vffinal``,
    then ``polfc1, polfc2, polfinal``);
  - LSTM (sumo, kick-and-defend): a D->128 ReLU layer, a 128-unit LSTM
    (TensorFlow's ``BasicLSTMCell``: kernel ``[256, 512]`` over ``[x, h]``, bias
    ``[512]``, gates i, j, f, o, forget bias 1) and a 128->1 value head; the
    same three for the policy, with a 128->A head.

Actions are ``mean + exp(logstd) * N(0, 1)`` (``stochastic=True``, how the
archive's ``main.py`` plays) or ``mean``, unclipped (the physics clamps the
controls). Only the policy branch is evaluated: the value network never
changes an action.

The files are read without running pickle code: a restricted unpickler allows
only NumPy's array reconstruction (``_reconstruct``, ``ndarray``, ``dtype``).
"""

from __future__ import annotations

import io
import os
import pickle
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

__all__ = [
    "CATALOGUE",
    "ZooEntry",
    "ZooFormatError",
    "ZooOpponentEnv",
    "ZooPolicy",
    "catalogue",
    "entry_for_file",
    "find",
    "layout",
    "load",
    "param_count",
    "random_params",
    "read_params",
    "write_params",
]

LSTM_HIDDEN = 128
MLP_HIDDEN = 64
KINDS = ("mlp", "lstm")


class ZooFormatError(ValueError):
    """A file that is not an agent-zoo parameter vector of the expected shape."""


# --------------------------------------------------------------------------- catalogue


@dataclass(frozen=True)
class ZooEntry:
    """One file of the archive's ``agent-zoo/`` and where it plays in joltgym_marl.

    ``game`` and ``robot`` are the PettingZoo module and its ``robot`` keyword
    (``None`` for a game of one robot); ``agent`` is the agent name the policy
    plays, ``None`` for sumo (one policy for either seat); ``seat`` is that
    agent's index in ``possible_agents``; ``role`` is gym-compete's name for it."""

    game: str
    robot: str | None
    role: str
    agent: str | None
    seat: int | None
    version: int
    path: str  # relative to agent-zoo/
    kind: str  # "mlp" or "lstm"
    obs_dim: int
    act_dim: int

    @property
    def name(self) -> str:
        """A short id: ``"sumo_ants_v1"``, ``"kick_and_defend_kicker_v2"``."""
        stem = {"sumo_v0": "sumo", "run_to_goal_v0": "run_to_goal", "kick_and_defend_v0": "kick_and_defend",
                "you_shall_not_pass_v0": "you_shall_not_pass"}[self.game]
        who = f"{self.robot}s" if self.game in ("sumo_v0",) else (
            f"{self.robot}s_{self.role}" if self.game == "run_to_goal_v0" else self.role)
        return f"{stem}_{who}_v{self.version}"

    def file(self, zoo_dir: str | os.PathLike) -> Path:
        """This entry's file under a local copy of ``agent-zoo/`` (``zoo_dir``)."""
        return Path(zoo_dir) / self.path

    def game_kwargs(self) -> dict[str, Any]:
        """The keyword arguments of the game's gym-compete form this policy plays."""
        kwargs: dict[str, Any] = {"form": "gym_compete"}
        if self.robot is not None and self.game in ("sumo_v0", "run_to_goal_v0"):
            kwargs["robot"] = self.robot
        return kwargs


def _entries() -> tuple[ZooEntry, ...]:
    out = []
    for v in (1, 2, 3, 4):
        out.append(ZooEntry("sumo_v0", "ant", "fighter", None, None, v,
                            f"sumo/ants/agent_parameters-v{v}.pkl", "lstm", 137, 8))
    for v in (1, 2, 3):
        out.append(ZooEntry("sumo_v0", "humanoid", "fighter", None, None, v,
                            f"sumo/humans/agent_parameters-v{v}.pkl", "lstm", 395, 17))
    for robot, folder, dims in (("ant", "ants", (122, 8)), ("humanoid", "humans", (380, 17))):
        for seat in (0, 1):
            out.append(ZooEntry("run_to_goal_v0", robot, f"runner{seat + 1}", f"agent_{seat}", seat, 1,
                                f"run-to-goal/{folder}/agent{seat + 1}_parameters-v1.pkl", "mlp", *dims))
    # gym-compete's you-shall-not-pass lists the blocker first (agent1 files), the walker second;
    # joltgym_marl's lists walker_0 first.
    out.append(ZooEntry("you_shall_not_pass_v0", "humanoid", "blocker", "blocker_0", 1, 1,
                        "you-shall-not-pass/agent1_parameters-v1pkl", "mlp", 380, 17))
    out.append(ZooEntry("you_shall_not_pass_v0", "humanoid", "walker", "walker_0", 0, 1,
                        "you-shall-not-pass/agent2_parameters-v1.pkl", "mlp", 380, 17))
    for v in (1, 2, 3):
        out.append(ZooEntry("kick_and_defend_v0", "humanoid", "kicker", "kicker_0", 0, v,
                            f"kick-and-defend/kicker/agent1_parameters-v{v}.pkl", "lstm", 384, 17))
    for v in (1, 2, 3):
        out.append(ZooEntry("kick_and_defend_v0", "humanoid", "keeper", "keeper_0", 1, v,
                            f"kick-and-defend/defender/agent2_parameters-v{v}.pkl", "lstm", 384, 17))
    return tuple(out)


CATALOGUE: tuple[ZooEntry, ...] = _entries()
"""The 19 files of ``agent-zoo/``: game, robot, role, seat, version, path, kind, D and A."""

_GAME_ALIASES = {"sumo": "sumo_v0", "run_to_goal": "run_to_goal_v0", "kick_and_defend": "kick_and_defend_v0",
                 "you_shall_not_pass": "you_shall_not_pass_v0"}


def _game_name(game: str) -> str:
    if not isinstance(game, str):
        raise TypeError(f"game should be a str such as 'sumo_v0', got {type(game).__name__} {game!r}")
    key = game.strip().lower().replace("-", "_")
    key = _GAME_ALIASES.get(key, key)
    games = sorted({e.game for e in CATALOGUE})
    if key not in games:
        raise ValueError(f"game should be one of {', '.join(map(repr, games))}, got {game!r}")
    return key


def catalogue(game: str | None = None, robot: str | None = None) -> list[ZooEntry]:
    """The catalogue's entries, of one game (and robot) if given."""
    entries = list(CATALOGUE)
    if game is not None:
        g = _game_name(game)
        entries = [e for e in entries if e.game == g]
    if robot is not None:
        robots = sorted({e.robot for e in entries if e.robot})
        if robot not in robots:
            raise ValueError(f"robot should be one of {', '.join(map(repr, robots))}, got {robot!r}")
        entries = [e for e in entries if e.robot == robot]
    return entries


def find(game: str, *, agent: str | None = None, robot: str | None = None, version: int = 1) -> ZooEntry:
    """The catalogue entry for ``agent`` (an agent name: ``"kicker_0"``) of
    ``game`` with ``robot`` (sumo, run-to-goal; default ``"ant"``), version
    ``version``. Sumo's policies play either seat (``agent`` may be omitted)."""
    g = _game_name(game)
    if robot is None:
        robot = "ant" if g in ("sumo_v0", "run_to_goal_v0") else "humanoid"
    entries = catalogue(g, robot)
    if g != "sumo_v0":
        agents = sorted({e.agent for e in entries})
        if agent not in agents:
            raise ValueError(f"agent should be one of {', '.join(map(repr, agents))} for {g} with robot "
                             f"{robot!r}, got {agent!r}")
        entries = [e for e in entries if e.agent == agent]
    elif agent is not None and agent not in (f"{robot}_0", f"{robot}_1"):
        raise ValueError(f"agent should be None, {robot + '_0'!r} or {robot + '_1'!r} for sumo_v0 with robot "
                         f"{robot!r}, got {agent!r}")
    versions = sorted(e.version for e in entries)
    match = [e for e in entries if e.version == version]
    if not match:
        raise ValueError(f"version should be one of {versions} for {g} {robot} {agent or ''}".rstrip()
                         + f", got {version!r}")
    return match[0]


# --------------------------------------------------------------------------- reading a file


def _reconstruct_function():
    # NumPy's array-unpickling helper, from an array's own reduce (no module path needed:
    # numpy 1 calls it numpy.core.multiarray._reconstruct, numpy 2 numpy._core.multiarray).
    return np.zeros(1).__reduce__()[0]


class _ArrayUnpickler(pickle.Unpickler):
    """Unpickles a NumPy array and nothing else: any other global is refused,
    so a file cannot run code."""

    _ALLOWED = {
        ("numpy.core.multiarray", "_reconstruct"), ("numpy._core.multiarray", "_reconstruct"),
        ("numpy", "ndarray"), ("numpy", "dtype"),
    }

    def find_class(self, module: str, name: str):
        if (module, name) not in self._ALLOWED:
            raise ZooFormatError(f"the file references {module}.{name}; an agent-zoo file holds only a NumPy "
                                 f"array (numpy.core.multiarray._reconstruct, numpy.ndarray, numpy.dtype)")
        if name == "_reconstruct":
            return _reconstruct_function()
        return {"ndarray": np.ndarray, "dtype": np.dtype}[name]


def read_params(path: str | os.PathLike) -> np.ndarray:
    """The flat float32 parameter vector of an agent-zoo ``.pkl`` file, read
    without executing pickle code. Raises ``FileNotFoundError`` or
    :class:`ZooFormatError` (a ``ValueError``) naming the file."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no agent-zoo file at {str(path)!r} (get the files from "
                                f"https://github.com/openai/multiagent-competition, folder agent-zoo/)")
    data = path.read_bytes()
    try:
        obj = _ArrayUnpickler(io.BytesIO(data)).load()
    except ZooFormatError as e:
        raise ZooFormatError(f"{path}: {e}") from None
    except Exception as e:  # truncated or not a pickle at all
        raise ZooFormatError(f"{path} is not an agent-zoo parameter file (a pickled float32 vector): "
                             f"{type(e).__name__}: {e}") from None
    if not isinstance(obj, np.ndarray):
        raise ZooFormatError(f"{path} should hold a NumPy array, got {type(obj).__name__}")
    if obj.ndim != 1 or obj.dtype != np.float32:
        raise ZooFormatError(f"{path} should hold a flat float32 vector, got shape {obj.shape} dtype {obj.dtype}")
    if not np.all(np.isfinite(obj)):
        raise ZooFormatError(f"{path} holds non-finite parameters")
    return np.ascontiguousarray(obj)


# --------------------------------------------------------------------------- layout


def layout(kind: str, obs_dim: int, act_dim: int) -> list[tuple[str, tuple[int, ...]]]:
    """The variables of a zoo policy in file order: (name, shape)."""
    if kind not in KINDS:
        raise ValueError(f"kind should be one of {', '.join(map(repr, KINDS))}, got {kind!r}")
    for name, value in (("obs_dim", obs_dim), ("act_dim", act_dim)):
        if not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError(f"{name} should be a positive int, got {value!r}")
    D, A = int(obs_dim), int(act_dim)
    out: list[tuple[str, tuple[int, ...]]] = [
        ("retfilter/sum", ()), ("retfilter/sumsq", ()), ("retfilter/count", ()),
        ("obsfilter/sum", (D,)), ("obsfilter/sumsq", (D,)), ("obsfilter/count", ()),
    ]
    if kind == "mlp":
        H = MLP_HIDDEN
        for branch, head in (("vf", 1), ("pol", A)):
            out += [(f"{branch}fc1/w", (D, H)), (f"{branch}fc1/b", (H,)),
                    (f"{branch}fc2/w", (H, H)), (f"{branch}fc2/b", (H,)),
                    (f"{branch}final/w", (H, head)), (f"{branch}final/b", (head,))]
    else:
        H = LSTM_HIDDEN
        for branch, head in (("v", 1), ("p", A)):
            out += [(f"{branch}/embed/w", (D, H)), (f"{branch}/embed/b", (H,)),
                    (f"{branch}/lstm/kernel", (2 * H, 4 * H)), (f"{branch}/lstm/bias", (4 * H,)),
                    (f"{branch}/head/w", (H, head)), (f"{branch}/head/b", (head,))]
    out.append(("logstd", (1, A)))
    return out


def param_count(kind: str, obs_dim: int, act_dim: int) -> int:
    """How many floats a zoo file of this architecture holds."""
    return sum(int(np.prod(shape, dtype=np.int64)) for _, shape in layout(kind, obs_dim, act_dim))


def _known_architectures() -> dict[int, tuple[str, int, int]]:
    archs = {(e.kind, e.obs_dim, e.act_dim) for e in CATALOGUE}
    return {param_count(*a): a for a in sorted(archs)}


def _split(params: np.ndarray, kind: str, obs_dim: int, act_dim: int) -> dict[str, np.ndarray]:
    out, start = {}, 0
    for name, shape in layout(kind, obs_dim, act_dim):
        size = int(np.prod(shape, dtype=np.int64))
        out[name] = params[start:start + size].reshape(shape)
        start += size
    return out


# --------------------------------------------------------------------------- the policy


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return (0.5 * (np.tanh(0.5 * x) + 1.0)).astype(np.float32, copy=False)


class ZooPolicy:
    """One zoo policy acting for ``num_worlds`` worlds at once.

    ``act(obs)`` takes ``[num_worlds, obs_dim]`` observations (the games'
    ``form="gym_compete"`` vectors) and returns ``[num_worlds, act_dim]``
    float32 actions. An LSTM policy keeps a state per world: call
    ``reset(worlds)`` (a boolean mask or indices; all when omitted) when those
    worlds start a new episode, or pass ``reset=dones`` to :meth:`act` with the
    previous step's done flags. ``stochastic`` samples ``mean + exp(logstd) *
    N(0, 1)`` from the policy's own generator (``seed``); otherwise the mean."""

    def __init__(self, params: np.ndarray, kind: str, obs_dim: int, act_dim: int, *, num_worlds: int = 1,
                 stochastic: bool = False, seed: int | None = None, name: str = "zoo policy"):
        expected = param_count(kind, obs_dim, act_dim)
        params = np.asarray(params)
        if params.ndim != 1 or params.dtype != np.float32:
            raise ZooFormatError(f"params should be a flat float32 vector, got shape {params.shape} "
                                 f"dtype {params.dtype}")
        if params.size != expected:
            raise ZooFormatError(f"{name}: a {kind} policy with obs_dim {obs_dim} and act_dim {act_dim} has "
                                 f"{expected} parameters, got {params.size}")
        if not isinstance(num_worlds, (int, np.integer)) or isinstance(num_worlds, bool) or num_worlds < 1:
            raise ValueError(f"num_worlds should be a positive int, got {num_worlds!r}")
        self.kind, self.obs_dim, self.act_dim = kind, int(obs_dim), int(act_dim)
        self.name = name
        self.num_worlds = int(num_worlds)
        self.stochastic = bool(stochastic)
        self._rng = np.random.default_rng(seed)
        v = _split(params, kind, obs_dim, act_dim)
        self.variables = v
        count = v["obsfilter/count"].astype(np.float32)
        if not count > 0:
            raise ZooFormatError(f"{name}: the observation filter's count should be positive, got {float(count)}")
        self.obs_mean = (v["obsfilter/sum"] / count).astype(np.float32)
        var = (v["obsfilter/sumsq"] / count - np.square(self.obs_mean)).astype(np.float32)
        self.obs_std = np.sqrt(np.maximum(var, np.float32(1e-2))).astype(np.float32)
        self.logstd = v["logstd"][0].astype(np.float32)
        self.std = np.exp(self.logstd)
        if kind == "lstm":
            self._embed_w, self._embed_b = v["p/embed/w"], v["p/embed/b"]
            self._kernel, self._bias = v["p/lstm/kernel"], v["p/lstm/bias"]
            self._head_w, self._head_b = v["p/head/w"], v["p/head/b"]
            self.c = np.zeros((self.num_worlds, LSTM_HIDDEN), np.float32)
            self.h = np.zeros((self.num_worlds, LSTM_HIDDEN), np.float32)
        else:
            self._layers = [(v["polfc1/w"], v["polfc1/b"]), (v["polfc2/w"], v["polfc2/b"])]
            self._head_w, self._head_b = v["polfinal/w"], v["polfinal/b"]

    @classmethod
    def from_file(cls, path: str | os.PathLike, *, kind: str | None = None, obs_dim: int | None = None,
                  act_dim: int | None = None, **kwargs: Any) -> "ZooPolicy":
        """The policy in a zoo file. The architecture is recognised from the
        vector's length (the archive's five architectures differ in size);
        give ``kind``, ``obs_dim`` and ``act_dim`` for any other."""
        params = read_params(path)
        given = (kind, obs_dim, act_dim)
        known = _known_architectures()
        if all(x is None for x in given):
            if params.size not in known:
                sizes = ", ".join(f"{n} ({k}, D={d}, A={a})" for n, (k, d, a) in known.items())
                raise ZooFormatError(f"{path} holds {params.size} parameters, which is none of the zoo's "
                                     f"architectures: {sizes}; pass kind, obs_dim and act_dim")
            kind, obs_dim, act_dim = known[params.size]
        elif any(x is None for x in given):
            raise ValueError(f"give all of kind, obs_dim and act_dim or none of them, got kind={kind!r}, "
                             f"obs_dim={obs_dim!r}, act_dim={act_dim!r}")
        kwargs.setdefault("name", str(path))
        return cls(params, kind, obs_dim, act_dim, **kwargs)

    @property
    def recurrent(self) -> bool:
        return self.kind == "lstm"

    def reset(self, worlds: Any = None) -> None:
        """Zero the LSTM state of ``worlds`` (a boolean mask of length
        ``num_worlds`` or indices; every world when None). An MLP has none."""
        if self.kind != "lstm":
            return
        if worlds is None:
            self.c[:] = 0.0
            self.h[:] = 0.0
            return
        idx = np.asarray(worlds)
        if idx.dtype == bool:
            if idx.shape != (self.num_worlds,):
                raise ValueError(f"a reset mask should have shape ({self.num_worlds},), got {idx.shape}")
        elif idx.size and (not np.issubdtype(idx.dtype, np.integer) or idx.min() < -self.num_worlds
                           or idx.max() >= self.num_worlds):
            raise ValueError(f"reset indices should be ints in [0, {self.num_worlds}), got {worlds!r}")
        self.c[idx] = 0.0
        self.h[idx] = 0.0

    def normalize(self, obs: Any) -> np.ndarray:
        """The policy's view of ``obs``: clip((x - mean) / std, -5, 5), float32."""
        x = np.asarray(obs, dtype=np.float32)
        if x.shape[-1:] != (self.obs_dim,):
            raise ValueError(f"{self.name}: observations should have last dimension {self.obs_dim}, got shape "
                             f"{x.shape}")
        return np.clip((x - self.obs_mean) / self.obs_std, -5.0, 5.0).astype(np.float32, copy=False)

    def _rows(self, worlds: Any) -> np.ndarray | slice:
        if worlds is None:
            return slice(None)
        idx = np.asarray(worlds)
        if idx.ndim != 1 or not np.issubdtype(idx.dtype, np.integer) or (
                idx.size and (idx.min() < 0 or idx.max() >= self.num_worlds)):
            raise ValueError(f"worlds should be a 1-d array of ints in [0, {self.num_worlds}), got {worlds!r}")
        return idx

    def mean_action(self, obs: Any, worlds: Any = None) -> np.ndarray:
        """The policy's mean action for ``obs`` ``[num_worlds, obs_dim]`` (or
        ``[len(worlds), obs_dim]`` for those worlds only); advances those
        worlds' LSTM state."""
        rows = self._rows(worlds)
        n = self.num_worlds if worlds is None else len(rows)
        x = np.asarray(obs)
        if x.ndim != 2 or x.shape != (n, self.obs_dim):
            raise ValueError(f"{self.name}: observations should have shape ({n}, {self.obs_dim}), got {x.shape}")
        z = self.normalize(x)
        if not np.all(np.isfinite(z)):
            raise ValueError(f"{self.name}: observations should be finite")
        if self.kind == "mlp":
            for w, b in self._layers:
                z = np.tanh(z @ w + b)
            return (z @ self._head_w + self._head_b).astype(np.float32, copy=False)
        e = np.maximum(z @ self._embed_w + self._embed_b, np.float32(0.0))
        gates = np.concatenate([e, self.h[rows]], axis=1) @ self._kernel + self._bias
        i, j, f, o = np.split(gates, 4, axis=1)
        c = self.c[rows] * _sigmoid(f + np.float32(1.0)) + _sigmoid(i) * np.tanh(j)
        h = np.tanh(c) * _sigmoid(o)
        self.c[rows] = c
        self.h[rows] = h
        return (h @ self._head_w + self._head_b).astype(np.float32, copy=False)

    def act(self, obs: Any, reset: Any = None, *, worlds: Any = None,
            rng: np.random.Generator | None = None) -> np.ndarray:
        """Actions for ``obs`` (``[num_worlds, obs_dim]``, or one row per index
        of ``worlds``); ``reset`` (a boolean mask over all worlds, e.g. the
        previous step's dones, or indices) zeroes those worlds' LSTM state
        first. A stochastic policy draws its noise from ``rng`` if given, else
        from its own generator."""
        if reset is not None:
            self.reset(reset)
        mean = self.mean_action(obs, worlds)
        if not self.stochastic:
            return mean
        noise = (rng or self._rng).standard_normal(mean.shape).astype(np.float32)
        return (mean + self.std * noise).astype(np.float32, copy=False)

    def resize(self, num_worlds: int) -> None:
        """Act for ``num_worlds`` worlds from now on; the states of the worlds
        kept are kept, new worlds start from zero."""
        if not isinstance(num_worlds, (int, np.integer)) or isinstance(num_worlds, bool) or num_worlds < 1:
            raise ValueError(f"num_worlds should be a positive int, got {num_worlds!r}")
        if self.kind == "lstm":
            c = np.zeros((num_worlds, LSTM_HIDDEN), np.float32)
            h = np.zeros((num_worlds, LSTM_HIDDEN), np.float32)
            keep = min(num_worlds, self.num_worlds)
            c[:keep], h[:keep] = self.c[:keep], self.h[:keep]
            self.c, self.h = c, h
        self.num_worlds = int(num_worlds)

    def __call__(self, obs: Any) -> np.ndarray:
        return self.act(obs)

    def __repr__(self) -> str:
        return (f"ZooPolicy({self.name!r}, kind={self.kind!r}, obs_dim={self.obs_dim}, act_dim={self.act_dim}, "
                f"num_worlds={self.num_worlds}, stochastic={self.stochastic})")


def load(path: str | os.PathLike | ZooEntry, zoo_dir: str | os.PathLike | None = None, *, num_worlds: int = 1,
         stochastic: bool = False, seed: int | None = None) -> ZooPolicy:
    """A :class:`ZooPolicy` from a zoo file (a path), or from a catalogue
    entry and the local copy of ``agent-zoo/`` it lives in (``zoo_dir``). An
    entry's architecture is checked against the file's."""
    if isinstance(path, ZooEntry):
        if zoo_dir is None:
            raise ValueError(f"zoo_dir (a local copy of agent-zoo/) is needed to load {path.name}")
        entry = path
        return ZooPolicy.from_file(entry.file(zoo_dir), kind=entry.kind, obs_dim=entry.obs_dim,
                                   act_dim=entry.act_dim, num_worlds=num_worlds, stochastic=stochastic,
                                   seed=seed, name=entry.name)
    if zoo_dir is not None:
        path = Path(zoo_dir) / path
    return ZooPolicy.from_file(path, num_worlds=num_worlds, stochastic=stochastic, seed=seed)


def write_params(path: str | os.PathLike, params: np.ndarray) -> None:
    """Write ``params`` (a flat float32 vector) as the archive stores them: a
    pickled NumPy array. For tests and for one's own policies in this format."""
    params = np.asarray(params)
    if params.ndim != 1 or params.dtype != np.float32:
        raise ValueError(f"params should be a flat float32 vector, got shape {params.shape} dtype {params.dtype}")
    with open(path, "wb") as f:
        pickle.dump(params, f, protocol=3)


def random_params(kind: str, obs_dim: int, act_dim: int, seed: int = 0, scale: float = 0.3) -> np.ndarray:
    """A parameter vector of the zoo's format with random weights and a
    plausible observation filter (positive counts, sumsq >= sum**2 / count)."""
    rng = np.random.default_rng(seed)
    parts = []
    for name, shape in layout(kind, obs_dim, act_dim):
        size = int(np.prod(shape, dtype=np.int64))
        if name.endswith("count"):
            parts.append(np.full(size, 1000.0))
        elif name == "obsfilter/sum":
            mean = rng.normal(0.0, 1.0, size)
            parts.append(mean * 1000.0)
        elif name == "obsfilter/sumsq":
            std = rng.uniform(0.05, 3.0, size)
            parts.append((np.square(mean) + np.square(std)) * 1000.0)
        elif name.startswith("retfilter"):
            parts.append(np.ones(size))
        elif name == "logstd":
            parts.append(rng.uniform(-1.0, 0.0, size))
        else:
            parts.append(rng.normal(0.0, scale, size))
    return np.concatenate(parts).astype(np.float32)


# --------------------------------------------------------------------------- you against a zoo policy


def entry_for_file(path: str | os.PathLike) -> ZooEntry | None:
    """The catalogue entry whose archive path ``path`` ends with (None if none does)."""
    text = Path(path).as_posix()
    for e in CATALOGUE:
        if text == e.path or text.endswith("/" + e.path):
            return e
    return None


class ZooOpponentEnv(gymnasium.Env):
    """A single-agent Gymnasium env: you play one agent of a game, a zoo
    policy plays the other (the adversarial-policies setting).

    ``ZooOpponentEnv("kick_and_defend_v0", "agent-zoo/kick-and-defend/defender/agent2_parameters-v1.pkl")``
    lets you kick against the v1 keeper. ``zoo`` is a zoo file (a path) or a
    :class:`ZooPolicy`; ``agent`` is the agent you play (default: the one the
    zoo policy does not: its catalogue entry tells, else the second agent
    plays the zoo); ``form`` the game's form (``"gym_compete"``: the zoo's
    observations; ``None``: the game's default form, for your own policy in
    the zoo's format); other keyword arguments go to the game's
    ``parallel_env``. The opponent's LSTM state is reset with each episode;
    ``stochastic`` (default True, how the archive's ``main.py`` plays) draws
    its noise from the env's ``np_random``, so ``reset(seed=s)`` fixes the
    episode. ``info`` is your agent's, with the opponent's action under
    ``"opponent_action"``; ``info["outcome"]`` is the game's result code."""

    metadata = {"render_modes": ["rgb_array"]}

    def __init__(self, game: str, zoo: str | os.PathLike | ZooPolicy, *, agent: str | None = None,
                 robot: str | None = None, form: str | None = "gym_compete", stochastic: bool = True,
                 max_cycles: int | None = None, render_mode: str | None = None, **game_kwargs: Any):
        from joltgym_marl import MULTI_AGENT_ENVS  # here: joltgym_marl's own import needs no zoo
        from joltgym_marl.registry import resolve

        self._args = dict(game=game, zoo=zoo, agent=agent, robot=robot, form=form, stochastic=stochastic,
                          max_cycles=max_cycles, render_mode=render_mode, **game_kwargs)
        module = resolve(game, kind="game").module_name
        kwargs = dict(game_kwargs)
        if form is not None:
            kwargs["form"] = form
        if robot is not None:
            kwargs["robot"] = robot
        if max_cycles is not None:
            kwargs["max_cycles"] = max_cycles
        if isinstance(zoo, ZooPolicy):
            self.opponent_policy, entry = zoo, None
        else:
            entry = entry_for_file(zoo)
            self.opponent_policy = load(zoo, stochastic=stochastic)
            if entry is not None and "robot" not in kwargs and entry.game == module and entry.robot and \
                    module in ("sumo_v0", "run_to_goal_v0"):
                kwargs["robot"] = entry.robot
        if self.opponent_policy.num_worlds != 1:
            self.opponent_policy.resize(1)
        self.stochastic = self.opponent_policy.stochastic
        self.env = MULTI_AGENT_ENVS[module].parallel_env(render_mode=render_mode, **kwargs)
        agents = list(self.env.possible_agents)
        if agent is not None and agent not in agents:
            raise ValueError(f"agent should be one of {', '.join(map(repr, agents))}, got {agent!r}")
        if entry is not None and entry.game == module and entry.agent is not None:
            if agent == entry.agent:
                raise ValueError(f"{entry.path} plays {entry.agent}; agent should be another of "
                                 f"{', '.join(map(repr, agents))}, got {agent!r}")
            opponent = entry.agent
            agent = agent or next(a for a in agents if a != opponent)
        else:
            agent = agent or agents[0]
            opponent = next(a for a in agents if a != agent)
        if len(agents) != 2:
            raise ValueError(f"{module} has {len(agents)} agents; a zoo opponent plays two-agent games")
        self.agent, self.opponent = agent, opponent
        seen = self.env.observation_space(opponent).shape[0]
        if seen != self.opponent_policy.obs_dim or self.env.action_space(opponent).shape[0] != \
                self.opponent_policy.act_dim:
            raise ValueError(f"{self.opponent_policy.name} takes {self.opponent_policy.obs_dim} observations and "
                             f"gives {self.opponent_policy.act_dim} actions; {opponent} of {module} "
                             f"({kwargs}) sees {seen} and takes "
                             f"{self.env.action_space(opponent).shape[0]}")
        obs_space = self.env.observation_space(agent)
        self.observation_space = spaces.Box(obs_space.low, obs_space.high, dtype=np.float32)
        act_space = self.env.action_space(agent)
        self.action_space = spaces.Box(act_space.low, act_space.high, dtype=np.float32)
        self.render_mode = render_mode
        self._opp_obs: np.ndarray | None = None

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        obs, infos = self.env.reset(seed=seed, options=options)
        self.opponent_policy.reset()
        self._opp_obs = obs[self.opponent]
        return obs[self.agent], dict(infos[self.agent])

    def step(self, action: Any):
        if self._opp_obs is None:
            raise RuntimeError("step() called before reset() or after the episode ended; expected reset() first")
        theirs = self.opponent_policy.act(self._opp_obs[None], rng=self.np_random)[0]
        obs, rewards, terms, truncs, infos = self.env.step({self.agent: action, self.opponent: theirs})
        self._opp_obs = obs[self.opponent]
        info = dict(infos[self.agent])
        info["opponent_action"] = theirs
        if terms[self.agent] or truncs[self.agent]:
            self._opp_obs = None
        return obs[self.agent], rewards[self.agent], terms[self.agent], truncs[self.agent], info

    def render(self):
        return self.env.render()

    def close(self):
        self.env.close()

    def __reduce__(self):
        return (_make_zoo_env, (self._args,))



def _make_zoo_env(args: dict[str, Any]) -> ZooOpponentEnv:
    args = dict(args)
    return ZooOpponentEnv(args.pop("game"), args.pop("zoo"), **args)
