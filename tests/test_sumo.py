"""Sumo's outcome logic, checked by putting the Ants in decisive states."""

from __future__ import annotations

import numpy as np
import pytest

import joltgym_marl
from joltgym_marl import Outcome, sumo_v0

ZERO = {"ant_0": np.zeros(8, np.float32), "ant_1": np.zeros(8, np.float32)}


def fresh(**kwargs):
    env = sumo_v0.parallel_env(**kwargs)
    env.reset(seed=3)
    return env


def torso(env, k):
    """qpos slice of ant k's free joint (x, y, z, quaternion)."""
    qpos, qvel = env.world.get_state()
    base = k * 15  # each Ant: 7 free-joint + 8 hinge coordinates
    return qpos, qvel, base


def test_pushing_an_ant_out_of_the_ring_decides_the_bout():
    env = fresh(ring_radius=3.0, shaping_weight=0.0)
    qpos, qvel, base = torso(env, 1)
    qpos[base:base + 2] = [3.5, 0.0]  # ant_1's torso outside the ring
    env.world.set_state(qpos, qvel)
    obs, rewards, terms, truncs, infos = env.step(ZERO)
    assert terms == {"ant_0": True, "ant_1": True} and not any(truncs.values())
    assert infos["ant_0"]["outcome"] == Outcome.WIN and infos["ant_1"]["outcome"] == Outcome.LOSS
    assert rewards == {"ant_0": 1000.0, "ant_1": -1000.0}
    assert infos["ant_1"]["distance_to_edge"] < 0 < infos["ant_0"]["distance_to_edge"]
    assert env.agents == []


def test_a_flipped_ant_has_fallen_and_loses():
    env = fresh(shaping_weight=0.0, win_reward=50.0)
    qpos, qvel, base = torso(env, 0)
    qpos[base + 2] = 0.26                      # torso on the floor...
    qpos[base + 3:base + 7] = [0, 1, 0, 0]     # ...upside down
    env.world.set_state(qpos, qvel)
    _, rewards, terms, _, infos = env.step(ZERO)
    assert all(terms.values())
    assert infos["ant_0"]["outcome"] == Outcome.LOSS and infos["ant_1"]["outcome"] == Outcome.WIN
    assert rewards == {"ant_0": -50.0, "ant_1": 50.0}


def test_both_out_at_once_is_a_draw():
    env = fresh(shaping_weight=0.0, draw_penalty=7.0)
    qpos, qvel, _ = torso(env, 0)
    qpos[0:2] = [5.0, 0.0]
    qpos[15:17] = [-5.0, 0.0]
    env.world.set_state(qpos, qvel)
    _, rewards, terms, _, infos = env.step(ZERO)
    assert all(terms.values())
    assert infos["ant_0"]["outcome"] == infos["ant_1"]["outcome"] == Outcome.DRAW
    assert rewards == {"ant_0": -7.0, "ant_1": -7.0}


def test_timeout_is_a_draw_with_the_penalty():
    env = fresh(max_cycles=20, shaping_weight=0.0, draw_penalty=5.0)
    for t in range(20):
        _, rewards, terms, truncs, infos = env.step(ZERO)
        if t < 19:
            assert infos["ant_0"]["outcome"] == Outcome.ONGOING and rewards["ant_0"] == 0.0
    assert all(truncs.values()) and not any(terms.values())
    assert infos["ant_0"]["outcome"] == infos["ant_1"]["outcome"] == Outcome.DRAW
    assert rewards == {"ant_0": -5.0, "ant_1": -5.0}


def test_shaping_terms_and_their_weight_and_annealing_by_reset_option():
    env = fresh(shaping_weight=1.0)
    qpos, qvel, _ = torso(env, 0)
    direction = qpos[15:17] - qpos[0:2]
    qvel[0:2] = 2.0 * direction / np.linalg.norm(direction)  # ant_0 runs at ant_1
    env.world.set_state(qpos, qvel)
    action = {"ant_0": np.full(8, 0.5, np.float32), "ant_1": np.zeros(8, np.float32)}
    _, rewards, _, _, infos = env.step(action)
    info = infos["ant_0"]
    assert info["reward_approach"] > 0.5
    assert info["reward_ctrl"] == pytest.approx(-0.1 * 8 * 0.25)
    total = info["reward_outcome"] + info["reward_approach"] + info["reward_push"] + info["reward_ctrl"]
    assert rewards["ant_0"] == pytest.approx(total, rel=1e-6)
    # Annealed through reset options: the weight scales every shaping term.
    env.reset(seed=3, options={"shaping_weight": 0.25})
    env.world.set_state(qpos, qvel)
    _, _, _, _, infos = env.step(action)
    assert infos["ant_0"]["reward_approach"] == pytest.approx(0.25 * info["reward_approach"], rel=1e-6)
    assert infos["ant_0"]["reward_ctrl"] == pytest.approx(0.25 * info["reward_ctrl"], rel=1e-6)
    with pytest.raises(ValueError, match="option 'shaping_weight' should be a finite real number, got nan"):
        env.reset(options={"shaping_weight": float("nan")})


def test_observation_layout_in_own_frame():
    env = sumo_v0.parallel_env()
    obs, _ = env.reset(seed=11)
    qpos, _, _ = torso(env, 0)
    for k in range(2):
        me, other = qpos[15 * k:15 * k + 7], qpos[15 * (1 - k):15 * (1 - k) + 7]
        o = obs[f"ant_{k}"]
        assert o.shape == (45,)
        np.testing.assert_allclose(o[:13], qpos[15 * k + 2:15 * k + 15], rtol=1e-6)
        # Opponent distance is frame-independent; both see the same distance.
        assert np.linalg.norm(o[27:30]) == pytest.approx(np.linalg.norm(other[:3] - me[:3]), rel=1e-5)
        # The opponent starts in front (facing each other): positive x in own frame.
        assert o[27] > 0.5
        assert o[44] == 1.0
        assert o[42] == pytest.approx(3.0 - np.hypot(*me[:2]), rel=1e-5)


def test_spawn_phase_varies_and_ants_face_each_other():
    env = sumo_v0.parallel_env()
    angles = []
    for seed in range(20):
        env.reset(seed=seed)
        qpos, _, _ = torso(env, 0)
        angles.append(np.arctan2(qpos[1], qpos[0]))
        assert np.hypot(*qpos[0:2]) == pytest.approx(1.0, abs=0.15)
        assert np.hypot(*qpos[15:17]) == pytest.approx(1.0, abs=0.15)
    assert np.ptp(angles) > 3.0


def test_the_pool_batches_sumo_and_takes_the_option():
    with joltgym_marl.WorldPool("sumo", 4, num_threads=2, max_episode_steps=500) as pool:
        pool.reset_all(seed=0)
        assert pool.episode_options == ["shaping_weight"]
        pool.set_option("shaping_weight", 0.0)
        pool.step_all(np.zeros((4, 2, 8), np.float32))
        approach = [f[1] for f in pool.info_fields if f[0] == "reward_approach"][0]
        assert not pool.infos[:, :, approach].any()
        with pytest.raises(ValueError, match="unknown option 'bogus'; allowed: shaping_weight"):
            pool.set_option("bogus", 1.0)
