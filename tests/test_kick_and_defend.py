"""kick_and_defend_v0: outcomes decided by placing the ball and the humanoids
(goal, wide, sent back, foul, the keeper's bonuses, time-out), and a
plain-``mujoco`` oracle of the game."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_array_equal

from joltgym_marl import Outcome, kick_and_defend_v0

from competition_oracle import Robots, load, simulate

NQ, NU = 24, 17
BALL_Q, KICKER_Q, KEEPER_Q = 0, 7, 7 + NQ  # qpos: the ball's free joint first
BALL_V = 0
ZERO = {"kicker_0": np.zeros(NU, np.float32), "keeper_0": np.zeros(NU, np.float32)}
LYING = (0.15, [0.7071068, 0.7071068, 0, 0])


def fresh(**kwargs):
    env = kick_and_defend_v0.parallel_env(shaping_weight=0.0, **kwargs)
    env.reset(seed=3)
    return env


def arrange(env, ball=None, ball_velocity=None, kicker=None, keeper=None):
    """Puts the ball (x, y, z) and the humanoids ((x, y) or "lying"); velocities zeroed unless given."""
    qpos, qvel = env.world.get_state()
    qvel[:] = 0.0
    if ball is not None:
        qpos[BALL_Q:BALL_Q + 3] = ball
    if ball_velocity is not None:
        qvel[BALL_V:BALL_V + 3] = ball_velocity
    for base, spot in ((KICKER_Q, kicker), (KEEPER_Q, keeper)):
        if spot == "lying":
            qpos[base + 2], qpos[base + 3:base + 7] = LYING
        elif spot is not None:
            qpos[base:base + 2] = spot
    env.world.set_state(qpos, qvel)


def test_roles_spaces_and_start():
    env = kick_and_defend_v0.parallel_env()
    obs, infos = env.reset(seed=0)
    assert env.possible_agents == ["kicker_0", "keeper_0"]
    assert env.observation_space("kicker_0").shape == env.observation_space("keeper_0").shape == (368,)
    qpos, _ = env.world.get_state()
    assert -3.6 < qpos[KICKER_Q] < -0.4 and 1.5 < qpos[KEEPER_Q] < 3.6 and -2 <= qpos[BALL_Q] <= 1
    assert_array_equal(obs["kicker_0"][:NQ], qpos[KICKER_Q:KICKER_Q + NQ].astype(np.float32))
    assert obs["kicker_0"][359] == np.float32(qpos[BALL_Q] - qpos[KICKER_Q])
    assert infos["kicker_0"]["ball_to_goal"] == 4.0 - qpos[BALL_Q]


def test_a_goal_wins_for_the_kicker():
    env = fresh()
    arrange(env, ball=(4.5, 1.0, 0.2))
    _, rewards, terms, _, infos = env.step(ZERO)
    assert all(terms.values())
    assert infos["kicker_0"]["outcome"] == Outcome.WIN and infos["keeper_0"]["outcome"] == Outcome.LOSS
    assert rewards == {"kicker_0": 1000.0, "keeper_0": -1000.0}


def test_a_wide_shot_past_the_line_wins_for_the_standing_keeper_with_its_bonus():
    env = fresh()
    arrange(env, ball=(4.5, 3.5, 0.2), keeper=(3.0, 0.0))
    _, rewards, terms, _, infos = env.step(ZERO)
    assert all(terms.values())
    assert infos["kicker_0"]["outcome"] == Outcome.LOSS and infos["keeper_0"]["outcome"] == Outcome.WIN
    assert rewards == {"kicker_0": -1000.0, "keeper_0": 1500.0}  # +500 for standing


def test_a_ball_sent_back_after_the_keeper_touched_it_gives_both_bonuses():
    env = fresh()
    # The keeper stands on the ball's path; the ball flies into it...
    arrange(env, ball=(2.3, 0.0, 1.1), ball_velocity=(3.0, 0.0, 0.0), keeper=(3.0, 0.0))
    for _ in range(20):
        _, rewards, terms, _, infos = env.step(ZERO)
        if any(terms.values()):
            break
    assert infos["keeper_0"]["keeper_touched_ball"] == 1.0
    # ...and once it rolls back toward the kicker, the bout is over.
    qpos, qvel = env.world.get_state()
    if env.agents:
        qvel[BALL_V:BALL_V + 3] = (-2.0, 0.0, 0.0)
        qpos[BALL_Q:BALL_Q + 3] = (1.0, 0.0, 0.2)
        env.world.set_state(qpos, qvel)
        _, rewards, terms, _, infos = env.step(ZERO)
    assert all(terms.values())
    assert infos["keeper_0"]["outcome"] == Outcome.WIN and infos["keeper_0"]["keeper_touched_ball"] == 1.0
    standing = env.world.get_state()[0][KEEPER_Q + 2] > 0.8
    assert rewards["keeper_0"] == 1500.0 + (500.0 if standing else 0.0)
    assert rewards["kicker_0"] == -1000.0


def test_the_keeper_leaving_its_area_is_a_foul():
    env = fresh()
    arrange(env, keeper=(1.0, 0.0))  # 3 m from the goal line
    _, rewards, terms, _, infos = env.step(ZERO)
    assert all(terms.values()) and infos["keeper_0"]["foul"] == 1.0
    assert infos["keeper_0"]["outcome"] == Outcome.LOSS and infos["kicker_0"]["outcome"] == Outcome.DRAW
    assert rewards == {"kicker_0": 0.0, "keeper_0": -1000.0}


def test_timeout_is_the_keepers_win_and_a_fallen_keeper_gets_no_standing_bonus():
    env = fresh(max_cycles=2)
    arrange(env, ball=(0.0, 0.0, 0.2), keeper="lying", kicker=(-2.0, 0.0))
    for _ in range(2):
        _, rewards, terms, truncs, infos = env.step(ZERO)
    assert all(truncs.values()) and not any(terms.values())
    assert infos["kicker_0"]["outcome"] == Outcome.LOSS and infos["keeper_0"]["outcome"] == Outcome.WIN
    assert rewards == {"kicker_0": -1000.0, "keeper_0": 1000.0}


@pytest.mark.parametrize("kwargs, match", [
    (dict(goal_x=3.0), "goal_x should be > 3.5"),
    (dict(keeper_area=0.0), "keeper_area should be > 0"),
    (dict(arena_file="humanoid_arena.xml"), "should have a body, geom and free joint named 'ball'"),
])
def test_bad_parameters_are_refused_by_name(kwargs, match):
    with pytest.raises(ValueError, match=match):
        kick_and_defend_v0.parallel_env(**kwargs)


def test_kick_and_defend_matches_a_plain_mujoco_oracle(tmp_path):
    env = kick_and_defend_v0.parallel_env(shaping_weight=0.9, max_cycles=1000)
    env.reset(seed=8)
    model, data = load(env.world, tmp_path)
    bots = Robots(model, "humanoid", "humanoid")
    ball_geom = model.geom("ball").id
    keeper_geoms = {g for g in range(model.ngeom) if model.geom_bodyid[g] in bots.bodies[1]}
    dt = model.opt.timestep * 5
    rng = np.random.default_rng(3)
    touched = False
    for t in range(300):
        actions = rng.uniform(-0.4, 0.4, size=(2, NU)).astype(np.float32)
        before = bots.com(data, 0)[0]
        simulate(model, data, actions)
        obs, rewards, terms, _, infos = env.step({"kicker_0": actions[0], "keeper_0": actions[1]})
        touched = touched or any(c.dist < 0 and {c.geom1, c.geom2} & {ball_geom} and
                                 ({c.geom1, c.geom2} - {ball_geom}) & keeper_geoms
                                 for c in data.contact[:data.ncon])
        ball, ball_v = data.qpos[0:3], data.qvel[0:3]
        goal = ball[0] > 4 and abs(ball[1]) <= 3
        keeper_win = (ball[0] > 4 or (ball_v[0] < 0 and np.hypot(ball_v[0], ball_v[1]) > 1)
                      or (bots.fallen(data, 0) and bots.fallen(data, 1)))
        foul = abs(4 - bots.root(data, 1)[0]) > 2.5
        if goal:
            outcome, result = [Outcome.WIN, Outcome.LOSS], [1000.0, -1000.0]
        elif keeper_win:
            bonus = (500.0 if touched else 0.0) + (500.0 if bots.root(data, 1)[2] > 0.8 else 0.0)
            outcome, result = [Outcome.LOSS, Outcome.WIN], [-1000.0, 1000.0 + bonus]
        elif foul:
            outcome, result = [Outcome.DRAW, Outcome.LOSS], [0.0, -1000.0]
        else:
            outcome, result = [Outcome.ONGOING, Outcome.ONGOING], [0.0, 0.0]
        gap = abs(4 - ball[0])
        kicker = bots.root(data, 0)
        to_ball = float(np.hypot(ball[0] - kicker[0], ball[1] - kicker[1]))
        for k, name in enumerate(["kicker_0", "keeper_0"]):
            me = bots.root(data, k)
            row = bots.obs(data, k, 1 - k) + [ball[0] - me[0], ball[1] - me[1], ball[2], *ball_v,
                                              4 - ball[0], 3 - ball[1], -3 - ball[1]]
            assert_array_equal(obs[name], np.array(row, np.float32), err_msg=f"{name} {t}")
            forward, ctrl, contact, survive = bots.shaping(data, k, actions[k],
                                                           bots.com(data, 0)[0] - before if k == 0 else 0.0, dt)
            ball_term = 0.9 * (-to_ball - gap if k == 0 else gap)
            total = result[k] + 0.9 * forward + -0.9 * ctrl + -0.9 * contact + 0.9 * survive + ball_term
            assert infos[name]["outcome"] == outcome[k], (name, t)
            assert infos[name]["keeper_touched_ball"] == float(touched)
            assert rewards[name] == float(np.float32(total)), (name, t)
        if not env.agents:
            break
    assert t > 5
