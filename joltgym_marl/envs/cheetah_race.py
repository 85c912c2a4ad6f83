"""CheetahRace: 1 to 8 HalfCheetahs racing in one shared MuJoCo world.

=================  ============================================================
Agents             ``cheetah_0`` ... ``cheetah_{N-1}`` (``num_agents``, default 2)
Layouts            ``"lanes"`` (default): side by side, ``lane_spacing`` (1 m) apart,
                   never touching; ``"shared_track"``: one plane, agent k starting
                   ``k * start_spacing`` (1.5 m) behind agent 0, so bodies collide
Action (6)         HalfCheetah torques (bthigh, bshin, bfoot, fthigh, fshin, ffoot) in [-1, 1]
Observation        17 + 2 (N - 1), float32: the agent's HalfCheetah observation
                   (qpos[1:], qvel), then for every other agent in ascending index
                   order its x position relative to this agent and its x velocity
Reward             ``reward_forward`` = forward_reward_weight (1) * x velocity,
                   ``reward_ctrl`` = -ctrl_cost_weight (0.1) * sum(action**2),
                   ``reward_finish`` = finish_bonus (100) for the first agent
                   ``finish_line`` metres past its start (when finish_line is set)
Info               x_position, rank (1 = leading; both also on reset), x_velocity,
                   reward_forward, reward_ctrl, reward_finish
Episode end        for all agents together: terminated at the finish, truncated
                   after ``max_cycles`` (1000) steps
State              qpos and qvel of the whole world (float32)
=================  ============================================================

A race with one agent is exactly ``HalfCheetah-v5``.
"""

from __future__ import annotations

import functools
from typing import Any

from pettingzoo.utils.conversions import parallel_to_aec, parallel_to_aec_wrapper

from joltgym_marl.envs.shared_world import SharedWorldEnv


class CheetahRace(SharedWorldEnv):
    __doc__ = __doc__
    game = "cheetah_race"
    agent_prefix = "cheetah"
    info_decoders = {"rank": int}
    metadata = {"name": "cheetah_race_v0", "render_modes": [], "is_parallelizable": True}

    def __init__(
        self,
        num_agents: int = 2,
        layout: str = "lanes",
        max_cycles: int = 1000,
        finish_line: float | None = None,
        finish_bonus: float = 100.0,
        render_mode: str | None = None,
        **kwargs: Any,
    ):
        super().__init__(max_cycles=max_cycles, render_mode=render_mode, num_agents=num_agents,
                         layout=layout, finish_line=finish_line, finish_bonus=finish_bonus, **kwargs)

    def make_renderer(self, width: int, height: int):
        return race_renderer(self.world.model_mjb(), width, height, num_agents=self.world.num_agents)


def race_renderer(model_mjb: bytes, width: int, height: int, *, num_agents: int):
    """Side view following the race leader, each cheetah in its own colour."""
    from joltgym_marl import rendering

    return rendering.WorldRenderer(
        model_mjb, width, height, agent_prefixes=[f"cheetah_{k}/" for k in range(num_agents)],
        follow=rendering.follow_leader("cheetah_", num_agents), distance=3.0 + 0.8 * num_agents,
        elevation=-20.0, azimuth=90.0)


def parallel_env(**kwargs: Any) -> CheetahRace:
    """The race as a PettingZoo ``ParallelEnv``."""
    return CheetahRace(**kwargs)


def vec_env(num_worlds: int, *, base_class: str = "gymnasium", num_threads: int | None = None,
            **kwargs: Any):
    """``num_worlds`` races stepped natively, every agent a row: the one-line swap for
    ``supersuit.concat_vec_envs_v1(supersuit.pettingzoo_env_to_vec_env_v1(parallel_env(**kwargs)),
    num_worlds, base_class=base_class)`` (see :mod:`joltgym_marl.vector.agent_vector_env`)."""
    from joltgym_marl.vector.agent_vector_env import make_agent_vec_env

    if base_class == "gymnasium":
        kwargs.setdefault("renderer", functools.partial(race_renderer, num_agents=kwargs.get("num_agents", 2)))
    return make_agent_vec_env(CheetahRace.game, num_worlds, base_class=base_class,
                              num_threads=num_threads, info_decoders=CheetahRace.info_decoders,
                              **kwargs)


def raw_env(**kwargs: Any):
    """The race as an AEC env, without wrappers."""
    return parallel_to_aec_wrapper(CheetahRace(**kwargs))


def env(**kwargs: Any):
    """The race as an AEC env with PettingZoo's standard (order-enforcing) wrapper."""
    return parallel_to_aec(CheetahRace(**kwargs))
