"""sumo_v0 with robot="humanoid" (gym-compete's humanoid sumo) and the drawn ring
radius: outcomes decided by placing the humanoids, the curriculum option, and a
plain-``mujoco`` oracle of the whole game."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_array_equal

import joltgym_marl
from joltgym_marl import Outcome, sumo_v0

from competition_oracle import Robots, load, simulate

NQ, NU = 24, 17
ZERO = {f"humanoid_{k}": np.zeros(NU, np.float32) for k in range(2)}
LYING = (0.2, [0.7071068, 0.7071068, 0, 0])


def fresh(**kwargs):
    kwargs.setdefault("ring_radius", 2.0)
    env = sumo_v0.parallel_env(robot="humanoid", shaping_weight=0.0, **kwargs)
    env.reset(seed=2)
    return env


def place(env, **where):
    """where: k -> (x, y) or "lying"; velocities zeroed."""
    qpos, qvel = env.world.get_state()
    for k, spot in where.items():
        base = int(k[1:]) * NQ
        if spot == "lying":
            qpos[base + 2], qpos[base + 3:base + 7] = LYING
        else:
            qpos[base:base + 2] = spot
    qvel[:] = 0.0
    env.world.set_state(qpos, qvel)


def test_agents_are_humanoids_and_the_observation_follows_the_docstring():
    env = sumo_v0.parallel_env(robot="humanoid")
    obs, infos = env.reset(seed=0)
    assert env.possible_agents == ["humanoid_0", "humanoid_1"]
    assert env.observation_space("humanoid_0").shape == (374,)
    assert env.action_space("humanoid_0").shape == (NU,)
    qpos, _ = env.world.get_state()
    row = obs["humanoid_0"]
    assert_array_equal(row[:NQ], qpos[:NQ].astype(np.float32))
    assert_array_equal(row[356:359], qpos[NQ:NQ + 3].astype(np.float32))
    assert row[370] == np.float32(3.0) == np.float32(infos["humanoid_0"]["ring_radius"])
    assert row[373] == 1.0


def test_pushed_out_after_touching_loses_and_the_pusher_wins():
    env = fresh()
    place(env, x0=(1.75, 0.0), x1=(2.05, 0.0))  # humanoid_1 just outside, touching humanoid_0
    _, rewards, terms, _, infos = env.step(ZERO)
    assert all(terms.values())
    assert infos["humanoid_0"]["touched"] == 1.0
    assert infos["humanoid_0"]["outcome"] == Outcome.WIN and infos["humanoid_1"]["outcome"] == Outcome.LOSS
    assert rewards == {"humanoid_0": 1000.0, "humanoid_1": -1000.0}


def test_walking_out_untouched_loses_but_the_other_does_not_win():
    env = fresh()
    place(env, x1=(2.5, 0.0))
    _, rewards, terms, _, infos = env.step(ZERO)
    assert all(terms.values()) and infos["humanoid_0"]["touched"] == 0.0
    assert infos["humanoid_0"]["outcome"] == Outcome.DRAW and infos["humanoid_1"]["outcome"] == Outcome.LOSS
    assert rewards == {"humanoid_0": 0.0, "humanoid_1": -1000.0}


def test_a_fall_loses_and_a_touch_earlier_in_the_bout_counts():
    env = fresh()
    qpos0, _ = env.world.get_state()
    place(env, x0=(-0.15, 0.0), x1=(0.15, 0.0))  # touch now...
    _, _, terms, _, infos = env.step(ZERO)
    assert not any(terms.values()) and infos["humanoid_0"]["touched"] == 1.0
    place(env, x0=(-1.0, 0.0), x1=(1.0, 0.0))
    place(env, x0="lying")  # ...fall later
    _, rewards, terms, _, infos = env.step(ZERO)
    assert all(terms.values())
    assert infos["humanoid_0"]["outcome"] == Outcome.LOSS and infos["humanoid_1"]["outcome"] == Outcome.WIN
    assert rewards == {"humanoid_0": -1000.0, "humanoid_1": 1000.0}


def test_both_out_at_once_both_lose_and_timeout_is_a_draw():
    env = fresh()
    place(env, x0=(-3.0, 0.0), x1=(3.0, 0.0))
    _, rewards, _, _, infos = env.step(ZERO)
    assert infos["humanoid_0"]["outcome"] == infos["humanoid_1"]["outcome"] == Outcome.LOSS
    assert rewards == {"humanoid_0": -1000.0, "humanoid_1": -1000.0}
    env = fresh(max_cycles=3, draw_penalty=9.0)
    for _ in range(3):
        qpos, qvel = env.world.get_state()
        env.world.set_state(qpos, np.zeros_like(qvel))
        _, rewards, terms, truncs, infos = env.step(ZERO)
    assert all(truncs.values()) and not any(terms.values())
    assert infos["humanoid_0"]["outcome"] == infos["humanoid_1"]["outcome"] == Outcome.DRAW
    assert rewards == {"humanoid_0": -9.0, "humanoid_1": -9.0}


@pytest.mark.parametrize("robot, low, high", [("ant", 2.5, 4.5), ("humanoid", 1.5, 3.5)])
def test_drawn_radius_uses_the_robots_range_and_the_curriculum_option(robot, low, high):
    env = sumo_v0.parallel_env(robot=robot, ring_radius=None)
    prefix = env.possible_agents[0]
    radii = [env.reset(seed=s)[1][prefix]["ring_radius"] for s in range(40)]
    assert low <= min(radii) and max(radii) <= high and max(radii) - min(radii) > 0.5 * (high - low)
    _, infos = env.reset(seed=1, options={"ring_radius_limit": low + 0.1})
    assert low <= infos[prefix]["ring_radius"] <= low + 0.1
    _, infos = env.reset(seed=2)  # the option stays in effect
    assert infos[prefix]["ring_radius"] <= low + 0.1
    # The pool takes it per world.
    with joltgym_marl.WorldPool("sumo", 2, robot=robot, ring_radius=None) as pool:
        assert "ring_radius_limit" in pool.episode_options


@pytest.mark.parametrize("kwargs, match", [
    (dict(robot="dog"), "robot should be 'ant' or 'humanoid', got 'dog'"),
    (dict(ring_radius=None, min_ring_radius=3.0, max_ring_radius=2.0), "max_ring_radius should be >= min_ring_radius"),
    (dict(robot="humanoid", ring_radius=None, spawn_distance=1.6), "spawn_distance should be < min_ring_radius"),
])
def test_bad_parameters_are_refused_by_name(kwargs, match):
    with pytest.raises(ValueError, match=match):
        sumo_v0.parallel_env(**kwargs)


def test_humanoid_sumo_matches_a_plain_mujoco_oracle(tmp_path):
    env = sumo_v0.parallel_env(robot="humanoid", ring_radius=None, shaping_weight=0.6, max_cycles=1000)
    obs, infos = env.reset(seed=4)
    radius = infos["humanoid_0"]["ring_radius"]
    model, data = load(env.world, tmp_path)
    bots = Robots(model, "humanoid", "humanoid")
    rng = np.random.default_rng(1)
    touched = False
    for t in range(300):
        actions = rng.uniform(-0.4, 0.4, size=(2, NU)).astype(np.float32)
        simulate(model, data, actions)
        obs, rewards, terms, _, infos = env.step({f"humanoid_{k}": actions[k] for k in range(2)})
        touched = touched or bots.touching(data, 0, 1)
        xy = [bots.root(data, k)[:2] for k in range(2)]
        edge = [radius - float(np.hypot(*xy[k])) for k in range(2)]
        lost = [edge[k] < 0 or bots.root(data, k)[2] < 0.5 for k in range(2)]
        for k in range(2):
            name, o = f"humanoid_{k}", 1 - k
            row = bots.obs(data, k, o) + [*(xy[o] - xy[k]), *data.xmat[bots.torso[k]],
                                          radius, edge[k], edge[o], max(0.0, 1 - (t + 1) / 1000)]
            assert_array_equal(obs[name], np.array(row, dtype=np.float32), err_msg=f"obs {name} step {t}")
            if lost[k]:
                outcome, result = Outcome.LOSS, -1000.0
            elif any(lost):
                outcome, result = (Outcome.WIN, 1000.0) if touched else (Outcome.DRAW, 0.0)
            else:
                outcome, result = Outcome.ONGOING, 0.0
            _, ctrl, contact, survive = bots.shaping(data, k, actions[k], 0.0, 1.0)
            center = -0.6 * float(np.hypot(*xy[k]))
            total = result + center + -0.6 * ctrl + -0.6 * contact + 0.6 * survive
            assert infos[name]["outcome"] == outcome, t
            assert infos[name]["touched"] == float(touched)
            assert rewards[name] == float(np.float32(total)), t
        if not env.agents:
            break
    assert t > 5
