"""The competition games' ``form="gym_compete"``: gym-compete's scenes, bodies
(MuJoCo 1.31's masses), resets, per-agent observations and rules.

Oracles: a plain-``mujoco`` computation of gym-compete's observation from the same
model and state (tests/gym_compete_oracle.py), stepped beside the game; MuJoCo
1.31's capsule rule (a cylinder of length L + r) for every body's mass; the
single env for the batched pool. PettingZoo's API tests run over every form in
tests/test_pettingzoo.py (EXTRA_VARIANTS)."""

from __future__ import annotations

import math

import mujoco
import numpy as np
import pytest
from numpy.testing import assert_array_equal

from gym_compete_oracle import load, observation, simulate
from joltgym_marl import kick_and_defend_v0, run_to_goal_v0, sumo_v0, you_shall_not_pass_v0

FORMS = [
    pytest.param(sumo_v0, "ant", 137, 8, id="sumo-ants"),
    pytest.param(sumo_v0, "humanoid", 395, 17, id="sumo-humans"),
    pytest.param(run_to_goal_v0, "ant", 122, 8, id="run-to-goal-ants"),
    pytest.param(run_to_goal_v0, "humanoid", 380, 17, id="run-to-goal-humans"),
    pytest.param(you_shall_not_pass_v0, None, 380, 17, id="you-shall-not-pass"),
    pytest.param(kick_and_defend_v0, None, 384, 17, id="kick-and-defend"),
]


def make(module, robot, **kwargs):
    if robot is not None:
        kwargs["robot"] = robot
    return module.parallel_env(form="gym_compete", **kwargs)


@pytest.mark.parametrize("module, robot, obs_dim, act_dim", FORMS)
def test_observations_are_gym_competes_vectors_step_for_step(module, robot, obs_dim, act_dim, tmp_path):
    env = make(module, robot)
    game = module.__name__.rsplit(".", 1)[-1]
    obs, infos = env.reset(seed=3)
    agents = list(env.agents)
    assert env.observation_space(agents[0]).shape == (obs_dim,)
    assert env.action_space(agents[0]).shape == (act_dim,)
    radius = infos[agents[0]].get("ring_radius")
    model, data = load(env.world, tmp_path, radius)
    rng = np.random.default_rng(0)
    high = env.action_space(agents[0]).high
    for t in range(40):
        extra = dict(radius=radius or 0.0, steps_left=500 - t)
        for k, agent in enumerate(agents):
            expected = observation(model, data, game, robot, k, **extra).astype(np.float32)
            assert_array_equal(obs[agent], expected, err_msg=f"{agent} after {t} steps")
        if not env.agents:
            break
        actions = rng.uniform(-high, high, size=(2, act_dim)).astype(np.float32)
        simulate(model, data, actions)
        obs, *_ = env.step({a: actions[k] for k, a in enumerate(agents)})
    assert t >= 5


def mass_131(model: mujoco.MjModel, body: int, density: float) -> float:
    """Body mass from its geoms by MuJoCo 1.31's rule: a capsule of radius r and
    half-length h weighs as a cylinder of length 2h + r."""
    total = 0.0
    for g in range(model.body_geomadr[body], model.body_geomadr[body] + model.body_geomnum[body]):
        r, h = model.geom_size[g][:2]
        if model.geom_type[g] == mujoco.mjtGeom.mjGEOM_CAPSULE:
            total += density * math.pi * r * r * (2 * h + r)
        elif model.geom_type[g] == mujoco.mjtGeom.mjGEOM_SPHERE:
            total += density * 4 / 3 * math.pi * r ** 3
        else:
            raise AssertionError(f"unexpected geom type {model.geom_type[g]}")
    return total


@pytest.mark.parametrize("module, robot, obs_dim, act_dim", FORMS)
def test_bodies_carry_mujoco_131_masses(module, robot, obs_dim, act_dim, tmp_path):
    env = make(module, robot)
    path = tmp_path / "world.mjb"
    path.write_bytes(env.world.model_mjb())
    model = mujoco.MjModel.from_binary_path(str(path))
    density = 5.0 if robot == "ant" else 1000.0
    prefix = env.agent_prefix
    bodies = [b for b in range(model.nbody) if model.body(b).name.startswith(f"{prefix}_")]
    assert len(bodies) == 26
    for b in bodies:
        assert model.body_mass[b] == pytest.approx(mass_131(model, b, density), rel=1e-9), model.body(b).name
    if robot != "ant":
        # The figures the zoo's normalisation statistics carry (torso, pelvis, thigh).
        for name, kg in (("torso", 8.322), ("pelvis", 5.853), ("right_thigh", 4.525), ("left_thigh", 4.525)):
            assert model.body(f"{prefix}_0/{name}").mass[0] == pytest.approx(kg, abs=6e-4)


@pytest.mark.parametrize("module, robot, obs_dim, act_dim", FORMS)
def test_the_pool_equals_single_envs_for_the_same_seeds(module, robot, obs_dim, act_dim):
    kwargs = {"form": "gym_compete", **({"robot": robot} if robot else {})}
    vec = module.vec_env(3, num_threads=2, copy=False, **kwargs)
    try:
        pool = vec.pool
        pool.reset_all(seed=11)
        singles = [module.parallel_env(**kwargs) for _ in range(3)]
        first = [s.reset(seed=11 + i)[0] for i, s in enumerate(singles)]
        agents = singles[0].possible_agents
        for i in range(3):
            for k, a in enumerate(agents):
                assert_array_equal(pool.obs[i, k], first[i][a])
        rng = np.random.default_rng(2)
        high = singles[0].action_space(agents[0]).high
        for t in range(12):
            actions = rng.uniform(-high, high, size=(3, 2, act_dim)).astype(np.float32)
            pool.step_all(actions)
            for i, s in enumerate(singles):
                if not s.agents:
                    continue
                obs, rewards, *_ = s.step({a: actions[i, k] for k, a in enumerate(agents)})
                if s.agents:
                    for k, a in enumerate(agents):
                        assert_array_equal(pool.obs[i, k], obs[a], err_msg=f"world {i} {a} step {t}")
                        assert pool.rewards[i, k] == np.float32(rewards[a])
    finally:
        vec.close()


def test_other_seeds_differ_and_sumo_draws_the_platform_each_episode():
    env = make(sumo_v0, "ant")
    radii = {env.reset(seed=s)[1]["ant_0"]["ring_radius"] for s in range(8)}
    assert len(radii) == 8 and all(2.5 <= r <= 4.5 for r in radii)
    a = env.reset(seed=1)[0]["ant_0"]
    b = env.reset(seed=2)[0]["ant_0"]
    assert not np.array_equal(a, b)
    # The drop: torsos start at z = 2.5 (+- 0.1), above the 0.5 m platform.
    qpos, _ = env.world.get_state()
    assert 2.4 <= qpos[2] <= 2.6 and 2.4 <= qpos[15 + 2] <= 2.6


def settle(env, actions=None, steps=1):
    act_dim = env.action_space(env.agents[0]).shape[0]
    for _ in range(steps):
        out = env.step({a: np.zeros(act_dim, np.float32) for a in env.agents})
    return out


def test_sumo_leaving_the_ring_untouched_is_no_win_for_the_other():
    env = make(sumo_v0, "ant")
    _, infos = env.reset(seed=0)
    radius = infos["ant_0"]["ring_radius"]
    qpos, qvel = env.world.get_state()
    qpos[15:17] = [radius + 0.5, 0.0]  # ant_1 beyond the edge, far from ant_0
    qpos[15 + 2] = 0.8 + 0.5  # still above the fall height
    env.world.set_state(qpos, qvel)
    _, rewards, terms, _, infos = settle(env)
    assert infos["ant_1"]["outcome"].label == "loss" and infos["ant_1"]["reward_outcome"] == -1000
    assert infos["ant_0"]["outcome"].label == "draw" and infos["ant_0"]["reward_outcome"] == 0
    assert all(terms.values())


def test_sumo_after_a_touch_leaving_the_ring_loses_to_the_other():
    env = make(sumo_v0, "ant")
    env.reset(seed=0)
    qpos, qvel = env.world.get_state()
    qpos[0:3] = [0.0, 0.0, 1.0]
    qpos[15:18] = [0.45, 0.0, 1.0]  # torso spheres (r 0.25) overlapping: a touch
    env.world.set_state(qpos, qvel)
    _, _, terms, _, infos = settle(env)
    assert infos["ant_0"]["touched"] == 1.0 and not any(terms.values())
    qpos, qvel = env.world.get_state()
    qpos[15:17] = [infos["ant_0"]["ring_radius"] + 1.0, 0.0]
    env.world.set_state(qpos, qvel)
    _, rewards, terms, _, infos = settle(env)
    assert (infos["ant_0"]["outcome"].label, infos["ant_1"]["outcome"].label) == ("win", "loss")
    assert infos["ant_0"]["reward_outcome"] == 1000


def test_you_shall_not_pass_roles_and_crossing():
    env = make(you_shall_not_pass_v0, None)
    env.reset(seed=0)
    qpos, qvel = env.world.get_state()
    # gym-compete's walker starts at x = +1 and walks to x = -4; its blocker at x = -1.
    assert qpos[0] == pytest.approx(1.0, abs=0.1) and qpos[24] == pytest.approx(-1.0, abs=0.1)
    qpos[0] = -4.5
    env.world.set_state(qpos, qvel)
    _, _, terms, _, infos = settle(env)
    assert (infos["walker_0"]["outcome"].label, infos["blocker_0"]["outcome"].label) == ("win", "loss")
    assert all(terms.values())


def test_kick_and_defend_goal_and_keeper_foul():
    env = make(kick_and_defend_v0, None)
    env.reset(seed=0)
    qpos, qvel = env.world.get_state()
    qpos[0:3] = [4.6, 0.0, 0.4]  # the ball (the scene's first joint) past the line, between the posts
    qvel[0:3] = [1.0, 0.0, 0.0]
    env.world.set_state(qpos, qvel)
    _, _, terms, _, infos = settle(env)
    assert (infos["kicker_0"]["outcome"].label, infos["keeper_0"]["outcome"].label) == ("win", "loss")
    env.reset(seed=0)
    qpos, qvel = env.world.get_state()
    qpos[7 + 24] = 0.5  # the keeper 3.5 m from its line: a foul, nobody wins
    env.world.set_state(qpos, qvel)
    _, rewards, terms, _, infos = settle(env)
    assert (infos["kicker_0"]["outcome"].label, infos["keeper_0"]["outcome"].label) == ("draw", "draw")
    assert infos["keeper_0"]["reward_outcome"] == -1000 and all(terms.values())


@pytest.mark.parametrize("kwargs, match", [
    (dict(form="gym"), r"form should be 'default' or 'gym_compete', got 'gym'"),
    (dict(form="gym_compete", ring_radius=2.0), r"ring_radius does not apply to form='gym_compete'"),
    (dict(form="gym_compete", engine="jolt"), r"form='gym_compete' runs on engine='mujoco' only"),
])
def test_bad_form_arguments_are_refused_by_name(kwargs, match):
    with pytest.raises(ValueError, match=match):
        sumo_v0.parallel_env(**kwargs)


def test_the_committed_scenes_are_what_the_generator_writes(tmp_path):
    import importlib.util
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    spec = importlib.util.spec_from_file_location("make_scenes", root / "tools" / "make_gym_compete_scenes.py")
    make_scenes = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(make_scenes)
    make_scenes.main(["--out", str(tmp_path)])
    committed = sorted(p.name for p in (root / "assets" / "gym_compete").glob("*.xml"))
    assert committed == sorted(p.name for p in tmp_path.glob("*.xml"))
    for name in committed:
        assert (tmp_path / name).read_text() == (root / "assets" / "gym_compete" / name).read_text(), name


@pytest.mark.parametrize("module, robot, obs_dim, act_dim", FORMS)
def test_reset_noise_is_on_every_coordinate_of_the_world(module, robot, obs_dim, act_dim, tmp_path):
    env = make(module, robot)
    env.reset(seed=5)
    path = tmp_path / "world.mjb"
    path.write_bytes(env.world.model_mjb())
    model = mujoco.MjModel.from_binary_path(str(path))
    qpos, qvel = env.world.get_state()
    moved = np.abs(qpos - model.qpos0)
    # x, y the game places itself (sumo: both agents; kick-and-defend: agents and ball).
    placed = set()
    if module in (sumo_v0, kick_and_defend_v0):
        roots = [model.jnt_qposadr[j] for j in range(model.njnt) if model.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE]
        placed = {i for r in roots for i in (r, r + 1)} | ({2} if module is kick_and_defend_v0 else set())
    free = [i for i in range(model.nq) if i not in placed]
    assert np.all(moved[free] <= 0.1) and np.all(moved[free] > 0)
    quat = qpos[model.jnt_qposadr[[j for j in range(model.njnt) if model.jnt_type[j] == 0][0]] + 3:][:4]
    assert abs(np.linalg.norm(quat) - 1) > 1e-6  # left unnormalised, as gym-compete does
    assert np.all(qvel != 0) and np.abs(qvel).max() < 1.0


def test_the_time_limit_settles_the_result_and_ends_the_episode():
    env = make(you_shall_not_pass_v0, None, max_cycles=None)  # no truncation: the game's own 500 steps
    env.reset(seed=0)
    zeros = {a: np.zeros(17, np.float32) for a in env.agents}
    for t in range(500):
        qpos, qvel = env.world.get_state()
        qpos[2] = 1.4  # the walker kept up (it would fall with zero torques)
        env.world.set_state(qpos, qvel)
        _, _, terms, truncs, infos = env.step(zeros)
        if any(terms.values()):
            break
    assert t == 499 and not any(truncs.values())
    assert (infos["walker_0"]["outcome"].label, infos["blocker_0"]["outcome"].label) == ("loss", "win")
    env = make(sumo_v0, "ant", max_cycles=3)
    obs, _ = env.reset(seed=0)
    assert obs["ant_0"][-1] == 3  # the steps left, a raw count
    for t in range(3):
        obs, _, terms, truncs, infos = env.step({a: np.zeros(8, np.float32) for a in env.agents})
    assert obs["ant_0"][-1] == 0 and all(truncs.values()) and infos["ant_0"]["outcome"].label == "draw"
