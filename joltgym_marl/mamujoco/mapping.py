"""MaMuJoCo's mappings between ``state()`` and the agents' local
observations, derived from the compiled plan, right in every state.

Farama maps by indexing ``state()`` with ``observation_factorization``,
which is right only where an agent observes exactly a value that ``state()``
holds. Two kinds of value break that after the first step:

* a value the state clips and the agent reads raw (Walker2d's and Hopper's
  joint velocities, clipped to [-10, 10] in ``state()``): while the state's
  value is inside the clip range the two are equal; at its bounds the raw
  value is not known from the state;
* a value the agent reads that ``state()`` leaves out (ManySegmentAnt's
  segments read the free joint's x and y, as Farama's indices have them).

Here each local value is derived from the state value of the same mjData
entry, through both clips (the agent's and the state's): exactly, or NaN
where the state does not determine it (a clipped state value at its bound,
a value the state leaves out). The other way round, each state value comes
from an agent value of the same entry (clipped as the state clips it), NaN
where every such agent value is clipped at a bound the state's range exceeds.
"""

from __future__ import annotations

import numpy as np

from joltgym_marl.mamujoco.plan import OPS

_COPY, _CLIP = OPS.index("copy"), OPS.index("clip")


def _entry(op_row: np.ndarray, bounds_row: np.ndarray) -> tuple[tuple, float, float]:
    """(the mjData entry a plan row reads, the row's clip range): a copy and a
    clip of one entry share the entry; other ops are entries of their own."""
    op, source, index, index2 = (int(x) for x in op_row)
    if op == _CLIP:
        return (source, index, index2), float(bounds_row[0]), float(bounds_row[1])
    if op == _COPY:
        return (source, index, index2), -np.inf, np.inf
    return (op, source, index, index2), -np.inf, np.inf


class ObservationMapping:
    """The mappings of one factorization (``ops``/``bounds``: the plan)."""

    def __init__(self, ops: np.ndarray, bounds: np.ndarray, obs_slices: list[slice], state_slice: slice,
                 agents: list[str]):
        self.agents = list(agents)
        self.state_dim = state_slice.stop - state_slice.start
        state_entries = {}
        for k in range(state_slice.start, state_slice.stop):
            key, low, high = _entry(ops[k], bounds[k])
            state_entries.setdefault(key, (k - state_slice.start, low, high))
        # state -> local: per agent, per value, the state index (-1: not in the
        # state) and both clip ranges.
        self.local = {}
        self.local_dims = {}
        candidates: dict[int, list[tuple[int, int, float, float]]] = {}
        for a, (agent, s) in enumerate(zip(self.agents, obs_slices)):
            n = s.stop - s.start
            self.local_dims[agent] = n
            index = np.full(n, -1, dtype=np.int64)
            clip = np.tile([-np.inf, np.inf], (n, 1))
            state_clip = np.tile([-np.inf, np.inf], (n, 1))
            for j, k in enumerate(range(s.start, s.stop)):
                key, low, high = _entry(ops[k], bounds[k])
                clip[j] = (low, high)
                if key in state_entries:
                    index[j], state_low, state_high = state_entries[key]
                    state_clip[j] = (state_low, state_high)
                    candidates.setdefault(int(index[j]), []).append((a, j, low, high))
            self.local[agent] = (index, clip, state_clip)
        # local -> state: per state value, its candidate agent values in order,
        # the one whose clip range covers the state's first.
        self.covered = len(candidates) == self.state_dim
        self.factorization = {agent: index for agent, (index, _, _) in self.local.items()} \
            if all((index >= 0).all() for index, _, _ in self.local.values()) else None
        if self.covered:
            width = max(len(c) for c in candidates.values())
            self._cand = np.zeros((self.state_dim, width, 2), dtype=np.int64)
            self._cand_clip = np.tile([np.inf, -np.inf], (self.state_dim, width, 1))  # empty: never used
            self._cand_valid = np.zeros((self.state_dim, width), dtype=bool)
            self._state_clip = np.zeros((self.state_dim, 2))
            for key, (i, low, high) in state_entries.items():
                self._state_clip[i] = (low, high)
            for i, cands in candidates.items():
                low, high = self._state_clip[i]
                cands = sorted(cands, key=lambda c: not (c[2] <= low and c[3] >= high))
                for c, (a, j, cl, ch) in enumerate(cands):
                    self._cand[i, c] = (a, j)
                    self._cand_clip[i, c] = (cl, ch)
                    self._cand_valid[i, c] = True

    def to_local(self, state: np.ndarray) -> dict[str, np.ndarray]:
        """Each agent's observation in ``state`` (NaN where the state does not determine it)."""
        out = {}
        for agent, (index, clip, state_clip) in self.local.items():
            value = state[np.maximum(index, 0)].astype(np.float64)
            low, high = clip[:, 0], clip[:, 1]
            # a state value at a bound of its clip stands for any value beyond
            # it: known only if the agent's own clip maps all of those to one
            unknown = (index < 0) | ((value <= state_clip[:, 0]) & (state_clip[:, 0] > low)) \
                | ((value >= state_clip[:, 1]) & (state_clip[:, 1] < high))
            value = np.clip(value, low, high)
            value[unknown] = np.nan
            out[agent] = value
        return out

    def to_state(self, local: dict[str, np.ndarray]) -> np.ndarray:
        """The state the agents' observations ``local`` were made in (NaN where they do not determine it)."""
        if not self.covered:
            raise ValueError("the agents' observations do not cover state(); it cannot be mapped back")
        width = max(self.local_dims.values())
        table = np.full((len(self.agents), width), np.nan)
        for a, agent in enumerate(self.agents):
            table[a, :self.local_dims[agent]] = local[agent]
        values = table[self._cand[..., 0], self._cand[..., 1]]  # [state, candidates]
        low, high = self._cand_clip[..., 0], self._cand_clip[..., 1]
        state_low, state_high = self._state_clip[:, :1], self._state_clip[:, 1:]
        known = self._cand_valid & ~(((values <= low) & (low > state_low)) | ((values >= high) & (high < state_high)))
        first = np.argmax(known, axis=1)
        rows = np.arange(self.state_dim)
        out = np.clip(values[rows, first], self._state_clip[:, 0], self._state_clip[:, 1])
        out[~known[rows, first]] = np.nan
        return out
