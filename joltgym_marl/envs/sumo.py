"""Sumo: two Ants push each other out of a ring, in one shared MuJoCo world.

=================  ============================================================
Agents             ``ant_0``, ``ant_1``
Start              torsos ``spawn_distance`` (1 m) from the centre on opposite
                   sides, facing each other, at a random phase; Ant-v5 reset noise
Action (8)         Ant-v5 hip and ankle torques in [-1, 1]
Observation (45)   float32, in the agent's own torso frame where noted:
                   [0:13] own qpos[2:] (torso z, quaternion, 8 joint angles);
                   [13:27] own qvel; [27:30] opponent position (own frame);
                   [30:33] opponent forward axis, [33:36] its up axis (own frame);
                   [36:39] opponent linear and [39:42] angular velocity (own frame);
                   [42] own and [43] opponent distance to the ring's edge;
                   [44] fraction of the episode left
Outcome            an Ant loses when its torso leaves the ring (``ring_radius``,
                   3 m, horizontally) or falls (torso below ``fall_height``,
                   0.3 m); the other wins; both at once, or no result after
                   ``max_cycles`` (500) steps: a draw
Reward             ``reward_outcome``: +``win_reward`` (1000) win, -win_reward loss,
                   -``draw_penalty`` (100) draw; plus ``shaping_weight`` (1) x
                   (``reward_approach``: own velocity toward the opponent,
                   ``reward_push``: rate the opponent's distance from the centre grows,
                   ``reward_ctrl``: -``ctrl_cost_weight`` (0.1) x sum(action**2))
Info               ``outcome`` ("ongoing", "win", "loss", "draw"), the reward
                   terms, ``distance_to_edge``, ``opponent_distance_to_edge``
Episode end        for both agents together: terminated on a result, truncated
                   at ``max_cycles``
Annealing          ``reset(options={"shaping_weight": w})`` (or the keyword
                   argument) sets the shaping weight for the following episodes
=================  ============================================================
"""

from __future__ import annotations

import functools
from typing import Any

from pettingzoo.utils.conversions import parallel_to_aec, parallel_to_aec_wrapper

from joltgym_marl.envs.shared_world import SharedWorldEnv

OUTCOMES = ("ongoing", "win", "loss", "draw")


def decode_outcome(value: float) -> str:
    """The native outcome code as its name."""
    return OUTCOMES[int(value)]


class Sumo(SharedWorldEnv):
    __doc__ = __doc__
    game = "sumo"
    agent_prefix = "ant"
    info_decoders = {"outcome": decode_outcome}
    metadata = {"name": "sumo_v0", "render_modes": [], "is_parallelizable": True}

    def __init__(self, max_cycles: int = 500, ring_radius: float = 3.0, shaping_weight: float = 1.0,
                 win_reward: float = 1000.0, draw_penalty: float = 100.0,
                 render_mode: str | None = None, **kwargs: Any):
        super().__init__(max_cycles=max_cycles, render_mode=render_mode, ring_radius=ring_radius,
                         shaping_weight=shaping_weight, win_reward=win_reward,
                         draw_penalty=draw_penalty, **kwargs)
        self._ring_radius = ring_radius

    def make_renderer(self, width: int, height: int):
        return sumo_renderer(self.world.model_mjb(), width, height, ring_radius=self._ring_radius)


def sumo_renderer(model_mjb: bytes, width: int, height: int, *, ring_radius: float = 3.0):
    """The whole ring from above at an angle, the Ants in two colours."""
    from joltgym_marl import rendering

    return rendering.WorldRenderer(
        model_mjb, width, height, agent_prefixes=["ant_0/", "ant_1/"],
        follow=rendering.follow_origin, distance=3.2 * ring_radius, elevation=-45.0, azimuth=90.0)


def parallel_env(**kwargs: Any) -> Sumo:
    """Sumo as a PettingZoo ``ParallelEnv``."""
    return Sumo(**kwargs)


def vec_env(num_worlds: int, *, base_class: str = "gymnasium", num_threads: int | None = None,
            max_cycles: int | None = 500, **kwargs: Any):
    """``num_worlds`` bouts stepped natively, each agent a row (see
    :mod:`joltgym_marl.vector.agent_vector_env`)."""
    from joltgym_marl.vector.agent_vector_env import make_agent_vec_env

    if base_class == "gymnasium":
        kwargs.setdefault("renderer", functools.partial(sumo_renderer,
                                                        ring_radius=kwargs.get("ring_radius", 3.0)))
    return make_agent_vec_env(Sumo.game, num_worlds, base_class=base_class, num_threads=num_threads,
                              max_cycles=max_cycles, info_decoders=Sumo.info_decoders, **kwargs)


def raw_env(**kwargs: Any):
    """Sumo as an AEC env, without wrappers."""
    return parallel_to_aec_wrapper(Sumo(**kwargs))


def env(**kwargs: Any):
    """Sumo as an AEC env with PettingZoo's standard (order-enforcing) wrapper."""
    return parallel_to_aec(Sumo(**kwargs))
