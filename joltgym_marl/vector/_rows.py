"""Flat views of a WorldPool's buffers, one row per agent of every world."""

from __future__ import annotations

from types import SimpleNamespace


def flat_rows(pool) -> SimpleNamespace:
    """Views (no copies) of ``pool``'s buffers with worlds and agents merged:
    row ``w * num_agents + a`` is agent ``a`` of world ``w``."""
    rows = pool.num_envs * pool.num_agents
    return SimpleNamespace(
        obs=pool.obs.reshape(rows, pool.obs_dim),
        rewards=pool.rewards.reshape(rows),
        terminations=pool.terminations.reshape(rows),
        truncations=pool.truncations.reshape(rows),
        infos=pool.infos.reshape(rows, -1),
        final_obs=pool.final_obs.reshape(rows, pool.obs_dim),
        final_infos=pool.final_infos.reshape(rows, -1),
    )
