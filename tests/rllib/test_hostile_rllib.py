"""The batched RLlib env (WorldPoolMultiAgentEnv) under hostile use (issue 25):
the same rules as the one-world path, actions checked whole, pickling."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import joltgym_marl.rllib as jr


def make(**config):
    return jr.WorldPoolMultiAgentEnv("cheetah_race", 2, {"num_agents": 2, "max_cycles": 5, **config}, num_threads=1)


@pytest.mark.parametrize("max_cycles, error", [(0, ValueError), (-1, ValueError), (1.5, TypeError), (True, TypeError)])
def test_max_cycles_as_the_one_world_path_has_it(max_cycles, error):
    with pytest.raises(error, match="max_cycles should be"):
        make(max_cycles=max_cycles)


def test_step_checks_every_world_and_agent_before_stepping():
    env = make()
    try:
        env.reset(seed=0)
        agents = env.possible_agents
        good = [{a: np.zeros(6, np.float32) for a in agents} for _ in range(2)]
        before = env.pool.get_state(0)[0].copy()
        bad_cases = [
            ([{agents[0]: np.zeros(6, np.float32)}, good[1]], ValueError, r"actions\[0\] misses agents"),
            ([{**good[0], "intruder": np.zeros(6)}, good[1]], ValueError, r"actions\[0\] has unknown agents"),
            ([{a: 0.5 for a in agents}, good[1]], ValueError, r"should have shape \(6,\)"),
            ([good[0], {a: np.zeros(7) for a in agents}], ValueError, r"actions\[1\]\['.*'\] should have shape"),
            ([good[0], {a: np.array(["x"] * 6) for a in agents}], TypeError, "should be real numbers"),
            ([good[0], None], TypeError, r"actions\[1\] should be a dict"),
            (good[:1], ValueError, "a list of 2 per-world dicts, got 1 items"),
            ({"a": 1, "b": 2}, ValueError, "a list of 2 per-world dicts"),
        ]
        for actions, error, match in bad_cases:
            with pytest.raises(error, match=match):
                env.step(actions)
            np.testing.assert_array_equal(env.pool.get_state(0)[0], before)  # nothing stepped
        for _ in range(5):
            env.step(good)
        assert env.pool.truncations.all()
        # Worlds whose episode ended: their next step only resets them, so RLlib's empty dicts are fine.
        obs, *_ = env.step([{}, {}])
        assert set(obs[0]) == set(agents)
    finally:
        env.close()


def test_reset_options_are_all_checked_before_any_is_set():
    env = jr.WorldPoolMultiAgentEnv("sumo", 2, {"max_cycles": 5}, num_threads=1)
    try:
        env.reset(seed=0, options={"shaping_weight": 0.5})
        with pytest.raises(ValueError, match="unknown option 'nope'"):
            env.reset(seed=0, options={"shaping_weight": 0.25, "nope": 1})
        # shaping_weight 0.25 was not applied: the rewards are those of 0.5.
        env.reset(seed=0)
        a = [{k: np.full(8, 0.3, np.float32) for k in env.possible_agents}] * 2
        first = env.step(a)[1]
        env.reset(seed=0, options={"shaping_weight": 0.5})
        again = env.step(a)[1]
        assert first == again
    finally:
        env.close()


def test_the_batched_env_pickles_by_recreation():
    env = make()
    try:
        clone = pickle.loads(pickle.dumps(env))
        try:
            assert clone.num_envs == env.num_envs and clone.possible_agents == env.possible_agents
            assert clone.pool is not env.pool and clone.pool.max_episode_steps == 5
            np.testing.assert_array_equal(clone.reset(seed=3)[0][1][env.possible_agents[0]],
                                          env.reset(seed=3)[0][1][env.possible_agents[0]])
        finally:
            clone.close()
    finally:
        env.close()
