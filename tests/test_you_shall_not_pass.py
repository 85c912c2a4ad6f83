"""you_shall_not_pass_v0: outcomes decided by placing the walker and the blocker,
role row blocks of the batched env, and a plain-``mujoco`` oracle of the game."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_array_equal

from joltgym_marl import Outcome, you_shall_not_pass_v0

from competition_oracle import Robots, load, simulate

NQ, NU = 24, 17
ZERO = {"walker_0": np.zeros(NU, np.float32), "blocker_0": np.zeros(NU, np.float32)}
LYING = (0.15, [0.7071068, 0.7071068, 0, 0])


def fresh(**kwargs):
    env = you_shall_not_pass_v0.parallel_env(shaping_weight=0.0, **kwargs)
    env.reset(seed=1)
    return env


def place(env, walker=None, blocker=None):
    qpos, qvel = env.world.get_state()
    for k, spot in ((0, walker), (1, blocker)):
        base = k * NQ
        if spot == "lying":
            qpos[base + 2], qpos[base + 3:base + 7] = LYING
        elif spot is not None:
            qpos[base:base + 2] = spot
    qvel[:] = 0.0
    env.world.set_state(qpos, qvel)


def test_roles_and_spaces():
    env = you_shall_not_pass_v0.parallel_env()
    obs, infos = env.reset(seed=0)
    assert env.possible_agents == ["walker_0", "blocker_0"]
    assert env.observation_space("walker_0").shape == env.observation_space("blocker_0").shape == (359,)
    assert env.action_space("blocker_0").shape == (NU,)
    assert obs["walker_0"][0] < 0 < obs["blocker_0"][0]
    assert_array_equal(obs["walker_0"][-3:], obs["blocker_0"][:3])
    assert infos["walker_0"]["walker_distance_to_line"] == pytest.approx(5.0, abs=0.1)


def test_walker_crossing_the_line_wins():
    env = fresh()
    place(env, walker=(4.5, 0.0))
    _, rewards, terms, _, infos = env.step(ZERO)
    assert all(terms.values())
    assert infos["walker_0"]["outcome"] == Outcome.WIN and infos["blocker_0"]["outcome"] == Outcome.LOSS
    assert rewards == {"walker_0": 1000.0, "blocker_0": -1000.0}


def test_walker_fallen_while_the_blocker_stands_the_blocker_wins():
    env = fresh()
    place(env, walker="lying")
    _, rewards, terms, _, infos = env.step(ZERO)
    assert all(terms.values())
    assert infos["walker_0"]["outcome"] == Outcome.LOSS and infos["blocker_0"]["outcome"] == Outcome.WIN
    assert rewards == {"walker_0": -1000.0, "blocker_0": 1000.0}


def test_both_fallen_the_walker_loses_and_the_blocker_does_not_win():
    env = fresh()
    place(env, walker="lying", blocker="lying")
    _, rewards, terms, _, infos = env.step(ZERO)
    assert all(terms.values())
    assert infos["walker_0"]["outcome"] == Outcome.LOSS and infos["blocker_0"]["outcome"] == Outcome.DRAW
    assert rewards == {"walker_0": -1000.0, "blocker_0": 0.0}


def test_blocker_fallen_alone_plays_on_and_timeout_loses_for_the_walker():
    env = fresh(max_cycles=3)
    place(env, blocker="lying")
    _, _, terms, _, infos = env.step(ZERO)
    assert not any(terms.values()) and infos["walker_0"]["outcome"] == Outcome.ONGOING
    for _ in range(2):
        qpos, qvel = env.world.get_state()
        env.world.set_state(qpos, np.zeros_like(qvel))
        _, rewards, terms, truncs, infos = env.step(ZERO)
    assert all(truncs.values()) and not any(terms.values())
    assert infos["walker_0"]["outcome"] == Outcome.LOSS and infos["blocker_0"]["outcome"] == Outcome.DRAW
    assert rewards == {"walker_0": -1000.0, "blocker_0": 0.0}


def test_role_rows_give_one_block_per_role():
    env = you_shall_not_pass_v0.vec_env(3, num_threads=1)
    assert env.agent_names == ["walker_0", "blocker_0"]
    assert_array_equal(env.role_rows("walker_0"), [0, 2, 4])
    assert_array_equal(env.role_rows("blocker_0"), [1, 3, 5])
    obs, _ = env.reset(seed=0)
    assert (obs[env.role_rows("walker_0"), 0] < 0).all() and (obs[env.role_rows("blocker_0"), 0] > 0).all()
    with pytest.raises(ValueError, match=r"agent should be one of \['walker_0', 'blocker_0'\], got 'keeper'"):
        env.role_rows("keeper")
    env.close()


def test_you_shall_not_pass_matches_a_plain_mujoco_oracle(tmp_path):
    env = you_shall_not_pass_v0.parallel_env(shaping_weight=0.8, max_cycles=1000)
    env.reset(seed=6)
    model, data = load(env.world, tmp_path)
    bots = Robots(model, "humanoid", "humanoid")
    dt = model.opt.timestep * 5
    rng = np.random.default_rng(2)
    for t in range(300):
        actions = rng.uniform(-0.4, 0.4, size=(2, NU)).astype(np.float32)
        before = 4.0 - bots.com(data, 0)[0]
        simulate(model, data, actions)
        obs, rewards, terms, _, infos = env.step({"walker_0": actions[0], "blocker_0": actions[1]})
        to_line = 4.0 - bots.com(data, 0)[0]
        down = [not bots.root(data, k)[2] >= 0.3 for k in range(2)]
        if to_line < 0:
            outcome, result = [Outcome.WIN, Outcome.LOSS], [1000.0, -1000.0]
        elif down[0]:
            outcome = [Outcome.LOSS, Outcome.DRAW if down[1] else Outcome.WIN]
            result = [-1000.0, 0.0 if down[1] else 1000.0]
        else:
            outcome, result = [Outcome.ONGOING, Outcome.ONGOING], [0.0, 0.0]
        gap = abs(bots.root(data, 0)[0] - 4.0)
        for k, name in enumerate(["walker_0", "blocker_0"]):
            assert_array_equal(obs[name], np.array(bots.obs(data, k, 1 - k), np.float32), err_msg=f"{name} {t}")
            forward, ctrl, contact, survive = bots.shaping(data, k, actions[k],
                                                           before - to_line if k == 0 else 0.0, dt)
            total = (result[k] + 0.8 * forward + -0.8 * ctrl + -0.8 * contact + 0.8 * survive
                     + 0.8 * (-gap if k == 0 else gap))
            assert infos[name]["outcome"] == outcome[k], t
            assert rewards[name] == float(np.float32(total)), (name, t)
        if not env.agents:
            break
    assert t > 5
