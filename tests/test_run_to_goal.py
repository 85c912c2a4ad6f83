"""run_to_goal_v0: every outcome decided by placing the robots in decisive states,
and the game recomputed step by step by a plain-``mujoco`` oracle."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_array_equal

from joltgym_marl import Outcome, run_to_goal_v0
from joltgym_marl._native import core

from competition_oracle import Robots, load, simulate

NQ = {"ant": 15, "humanoid": 24}
NU = {"ant": 8, "humanoid": 17}
# A fallen robot: Ant upside down on its back, Humanoid lying on its side.
FALLEN = {"ant": (0.26, [0, 1, 0, 0]), "humanoid": (0.2, [0.7071068, 0.7071068, 0, 0])}
ROBOTS = ["ant", "humanoid"]


def fresh(robot, **kwargs):
    env = run_to_goal_v0.parallel_env(robot=robot, **kwargs)
    env.reset(seed=5)
    return env


def zero(robot):
    return {f"agent_{k}": np.zeros(NU[robot], np.float32) for k in range(2)}


def place(env, robot, k, x=None, fallen=False):
    qpos, qvel = env.world.get_state()
    base = k * NQ[robot]
    if x is not None:
        qpos[base] = x
    if fallen:
        qpos[base + 2], qpos[base + 3:base + 7] = FALLEN[robot]
    qvel[:] = 0.0
    env.world.set_state(qpos, qvel)


@pytest.mark.parametrize("robot", ROBOTS)
@pytest.mark.parametrize("winner", [0, 1])
def test_crossing_the_opposite_goal_line_wins(robot, winner):
    env = fresh(robot, shaping_weight=0.0)
    place(env, robot, winner, x=5.0 if winner == 0 else -5.0)
    _, rewards, terms, truncs, infos = env.step(zero(robot))
    loser = 1 - winner
    assert terms == {"agent_0": True, "agent_1": True} and not any(truncs.values())
    assert infos[f"agent_{winner}"]["outcome"] == Outcome.WIN and infos[f"agent_{loser}"]["outcome"] == Outcome.LOSS
    assert rewards[f"agent_{winner}"] == 1000.0 and rewards[f"agent_{loser}"] == -1000.0
    assert infos[f"agent_{winner}"]["distance_to_goal"] < 0 < infos[f"agent_{loser}"]["distance_to_goal"]
    assert env.agents == []


@pytest.mark.parametrize("robot", ROBOTS)
def test_crossing_ones_own_goal_line_does_not_win(robot):
    env = fresh(robot, shaping_weight=0.0)
    place(env, robot, 0, x=-5.0)  # agent_0 runs the wrong way, past the line behind it
    _, rewards, terms, _, infos = env.step(zero(robot))
    assert not any(terms.values()) and infos["agent_0"]["outcome"] == Outcome.ONGOING
    assert rewards == {"agent_0": 0.0, "agent_1": 0.0}


@pytest.mark.parametrize("robot", ROBOTS)
def test_both_crossing_in_one_step_is_a_draw(robot):
    env = fresh(robot, shaping_weight=0.0, draw_penalty=3.0)
    qpos, qvel = env.world.get_state()
    qpos[0] = 5.0
    qpos[NQ[robot]] = -5.0
    env.world.set_state(qpos, qvel)
    _, rewards, terms, _, infos = env.step(zero(robot))
    assert all(terms.values())
    assert infos["agent_0"]["outcome"] == infos["agent_1"]["outcome"] == Outcome.DRAW
    assert rewards == {"agent_0": -3.0, "agent_1": -3.0}


@pytest.mark.parametrize("robot", ROBOTS)
def test_both_fallen_ends_in_a_draw_and_one_fallen_plays_on(robot):
    env = fresh(robot, shaping_weight=0.0)
    place(env, robot, 0, fallen=True)
    _, _, terms, _, infos = env.step(zero(robot))
    assert not any(terms.values()) and infos["agent_0"]["outcome"] == Outcome.ONGOING
    env = fresh(robot, shaping_weight=0.0)
    place(env, robot, 0, fallen=True)
    place(env, robot, 1, fallen=True)
    _, rewards, terms, _, infos = env.step(zero(robot))
    assert all(terms.values())
    assert infos["agent_0"]["outcome"] == infos["agent_1"]["outcome"] == Outcome.DRAW
    assert rewards == {"agent_0": 0.0, "agent_1": 0.0}


def test_timeout_is_a_draw():
    env = fresh("ant", max_cycles=10, shaping_weight=0.0, draw_penalty=2.0)
    for t in range(10):
        _, rewards, terms, truncs, infos = env.step(zero("ant"))
        if t < 9:
            assert infos["agent_0"]["outcome"] == Outcome.ONGOING
    assert all(truncs.values()) and not any(terms.values())
    assert infos["agent_0"]["outcome"] == infos["agent_1"]["outcome"] == Outcome.DRAW
    assert rewards == {"agent_0": -2.0, "agent_1": -2.0}


@pytest.mark.parametrize("robot", ROBOTS)
def test_agents_face_each_other_and_spaces_follow_the_docstring(robot):
    env = run_to_goal_v0.parallel_env(robot=robot)
    obs, infos = env.reset(seed=0)
    dim = {"ant": 110, "humanoid": 359}[robot]
    assert env.observation_space("agent_0").shape == (dim,)
    assert env.action_space("agent_1").shape == (NU[robot],)
    assert obs["agent_0"][0] < 0 < obs["agent_1"][0]           # own x
    assert_array_equal(obs["agent_0"][-3:], obs["agent_1"][:3])  # the opponent's torso position
    assert infos["agent_0"]["distance_to_goal"] == pytest.approx(5.0, abs=0.2)


def half_turned(robot, qpos, qvel):
    """The world turned 180 degrees about z with the two robots' places
    swapped: what agent_1 lives through, seen as agent_0."""
    nq, nv = NQ[robot], {"ant": 14, "humanoid": 23}[robot]
    q, v = qpos.copy(), qvel.copy()
    for k in range(2):
        src, dst = (1 - k) * nq, k * nq
        q[dst:dst + nq] = qpos[src:src + nq]
        q[dst:dst + 2] *= -1
        w, x, y, z = qpos[src + 3:src + 7]
        q[dst + 3:dst + 7] = (z, y, -x, -w)
        v[k * nv:(k + 1) * nv] = qvel[(1 - k) * nv:(2 - k) * nv]
        v[k * nv:k * nv + 2] *= -1
    return q, v


@pytest.mark.parametrize("robot", ROBOTS)
def test_goal_frame_shows_agent_1_the_game_as_agent_0_sees_it(robot):
    """With obs_frame="goal", agent_1's observation of a state equals
    agent_0's observation of the same state turned 180 degrees with the
    robots swapped: one policy plays both seats."""
    env = run_to_goal_v0.parallel_env(robot=robot, obs_frame="goal", reset_noise_scale=0.0)
    obs, _ = env.reset(seed=0)
    np.testing.assert_allclose(obs["agent_1"], obs["agent_0"], atol=1e-12)  # the start is symmetric
    rng = np.random.default_rng(1)
    for _ in range(15):  # feet on the ground: contact forces in the observation
        obs, *_ = env.step({a: rng.uniform(-0.4, 0.4, NU[robot]).astype(np.float32) for a in env.agents})
    turned = run_to_goal_v0.parallel_env(robot=robot, obs_frame="goal")
    turned.reset(seed=0)
    turned.world.set_state(*half_turned(robot, *env.world.get_state()))
    actions = {a: rng.uniform(-0.4, 0.4, NU[robot]).astype(np.float32) for a in env.agents}
    obs, *_ = env.step(actions)
    seen, *_ = turned.step({"agent_0": actions["agent_1"], "agent_1": actions["agent_0"]})
    assert np.abs(obs["agent_1"][-6 * 13 - 3:-3]).max() > 0.01  # contact forces are compared too
    np.testing.assert_allclose(obs["agent_1"], seen["agent_0"], atol=1e-4)
    default, _ = run_to_goal_v0.parallel_env(robot=robot, reset_noise_scale=0.0).reset(seed=0)
    assert default["agent_1"][0] == 1.0 and default["agent_1"][6] == 1.0  # "world" (default): unturned


@pytest.mark.parametrize("kwargs, match", [
    (dict(robot="dog"), "robot should be 'ant' or 'humanoid', got 'dog'"),
    (dict(obs_frame="ego"), "obs_frame should be 'world' or 'goal', got 'ego'"),
    (dict(goal_x=0.5), "goal_x should be > spawn_x"),
    (dict(spawn_x=-1.0), "spawn_x should be > 0"),
    (dict(reset_noise_scale=-0.1), "reset_noise_scale should be >= 0"),
])
def test_bad_parameters_are_refused_by_name(kwargs, match):
    with pytest.raises(ValueError, match=match):
        run_to_goal_v0.parallel_env(**kwargs)


@pytest.mark.parametrize("robot", ROBOTS)
def test_run_to_goal_matches_a_plain_mujoco_oracle(robot, tmp_path):
    """Observation, reward terms, outcome and termination recomputed from the
    documented rules on the world's own compiled model, step by step."""
    env = run_to_goal_v0.parallel_env(robot=robot, shaping_weight=0.7, max_cycles=1000)
    obs, _ = env.reset(seed=11)
    model, data = load(env.world, tmp_path)
    bots = Robots(model, "agent", robot)
    dt = model.opt.timestep * 5
    goal = 4.0

    def to_goal(k):
        x = bots.com(data, k)[0]
        return goal - x if k == 0 else x + goal

    rng = np.random.default_rng(0)
    high = env.action_space("agent_0").high
    steps = 0
    for t in range(400):
        actions = (rng.uniform(-1, 1, size=(2, NU[robot])) * high * 1.3).astype(np.float32)
        actions = np.clip(actions, -high, high)
        before = [to_goal(k) for k in range(2)]
        simulate(model, data, actions)
        obs, rewards, terms, truncs, infos = env.step({f"agent_{k}": actions[k] for k in range(2)})
        steps += 1
        reached = [to_goal(k) < 0 for k in range(2)]
        fallen = [bots.fallen(data, k) for k in range(2)]
        if reached[0] != reached[1]:
            outcome = [Outcome.WIN if reached[k] else Outcome.LOSS for k in range(2)]
        elif reached[0] or all(fallen):
            outcome = [Outcome.DRAW, Outcome.DRAW]
        else:
            outcome = [Outcome.ONGOING, Outcome.ONGOING]
        for k in range(2):
            name = f"agent_{k}"
            assert_array_equal(obs[name], np.array(bots.obs(data, k, 1 - k), dtype=np.float32),
                               err_msg=f"obs of {name} at step {t}")
            forward, ctrl, contact, survive = bots.shaping(data, k, actions[k], before[k] - to_goal(k), dt)
            result = {Outcome.WIN: 1000.0, Outcome.LOSS: -1000.0, Outcome.DRAW: -0.0, Outcome.ONGOING: 0.0}[outcome[k]]
            terms_k = [0.7 * forward, -0.7 * ctrl, -0.7 * contact, 0.7 * survive]
            assert infos[name]["outcome"] == outcome[k], t
            for key, value in zip(["reward_forward", "reward_ctrl", "reward_contact", "reward_survive"], terms_k):
                assert infos[name][key] == value, (key, t)
            total = result + terms_k[0] + terms_k[1] + terms_k[2] + terms_k[3]
            assert rewards[name] == float(np.float32(total)), t
            assert terms[name] == (outcome[k] != Outcome.ONGOING)
        if not env.agents:
            break
    assert steps > 5
