"""The agent-zoo loader (joltgym_marl.zoo) on files the suite writes itself in
the archive's format (a pickled flat float32 vector; random weights): the
archive's weights carry no licence and are never downloaded or shipped."""

from __future__ import annotations

import pickle
from pathlib import Path

import numpy as np
import pytest

from joltgym_marl import zoo

ARCHS = sorted({(e.kind, e.obs_dim, e.act_dim) for e in zoo.CATALOGUE})


def _write(tmp_path, kind, D, A, seed=0, name="p.pkl"):
    path = tmp_path / name
    zoo.write_params(path, zoo.random_params(kind, D, A, seed=seed))
    return path


def test_catalogue_lists_the_19_files():
    assert len(zoo.CATALOGUE) == 19
    assert len({e.path for e in zoo.CATALOGUE}) == 19
    assert len({e.name for e in zoo.CATALOGUE}) == 19
    counts = {}
    for e in zoo.CATALOGUE:
        counts[(e.game, e.robot)] = counts.get((e.game, e.robot), 0) + 1
    assert counts == {("sumo_v0", "ant"): 4, ("sumo_v0", "humanoid"): 3, ("run_to_goal_v0", "ant"): 2,
                      ("run_to_goal_v0", "humanoid"): 2, ("you_shall_not_pass_v0", "humanoid"): 2,
                      ("kick_and_defend_v0", "humanoid"): 6}
    # D and A as gym-compete's observation and action spaces give them
    dims = {(e.game, e.robot): (e.kind, e.obs_dim, e.act_dim) for e in zoo.CATALOGUE}
    assert dims[("sumo_v0", "ant")] == ("lstm", 137, 8)
    assert dims[("sumo_v0", "humanoid")] == ("lstm", 395, 17)
    assert dims[("kick_and_defend_v0", "humanoid")] == ("lstm", 384, 17)
    assert dims[("run_to_goal_v0", "ant")] == ("mlp", 122, 8)
    assert dims[("run_to_goal_v0", "humanoid")] == ("mlp", 380, 17)
    assert dims[("you_shall_not_pass_v0", "humanoid")] == ("mlp", 380, 17)
    # the archive's file sizes: sumo ants hold 299943 floats (1199933 bytes pickled)
    assert zoo.param_count("lstm", 137, 8) == 299943


def test_find():
    e = zoo.find("sumo_v0", version=3)
    assert e.path == "sumo/ants/agent_parameters-v3.pkl" and e.agent is None
    assert zoo.find("sumo", robot="humanoid", agent="humanoid_1").path == "sumo/humans/agent_parameters-v1.pkl"
    assert zoo.find("kick_and_defend_v0", agent="keeper_0", version=2).path == \
        "kick-and-defend/defender/agent2_parameters-v2.pkl"
    # gym-compete lists the blocker first: its agent1 file is the blocker
    assert zoo.find("you-shall-not-pass", agent="blocker_0").path == "you-shall-not-pass/agent1_parameters-v1pkl"
    assert zoo.find("run_to_goal_v0", agent="agent_1").path == "run-to-goal/ants/agent2_parameters-v1.pkl"
    with pytest.raises(ValueError, match=r"version should be one of \[1, 2, 3, 4\].*got 5"):
        zoo.find("sumo_v0", version=5)
    with pytest.raises(ValueError, match=r"agent should be one of 'keeper_0', 'kicker_0'.*got 'goalie'"):
        zoo.find("kick_and_defend_v0", agent="goalie")
    with pytest.raises(ValueError, match=r"game should be one of .*got 'chess'"):
        zoo.find("chess")
    with pytest.raises(ValueError, match=r"robot should be one of 'ant', 'humanoid', got 'cheetah'"):
        zoo.find("sumo_v0", robot="cheetah")


@pytest.mark.parametrize("kind,D,A", ARCHS)
def test_shapes_and_architecture_from_size(tmp_path, kind, D, A):
    path = _write(tmp_path, kind, D, A)
    assert zoo.read_params(path).dtype == np.float32
    policy = zoo.ZooPolicy.from_file(path, num_worlds=5)
    assert (policy.kind, policy.obs_dim, policy.act_dim) == (kind, D, A)
    obs = np.random.default_rng(1).normal(size=(5, D))
    act = policy.act(obs)
    assert act.shape == (5, A) and act.dtype == np.float32 and np.all(np.isfinite(act))


def test_normalisation(tmp_path):
    D = 6
    params = zoo.random_params("mlp", D, 2, seed=3)
    # obsfilter sum, sumsq, count start after the 3 retfilter scalars
    params[3:3 + D] = [10.0, -20.0, 0.0, 5.0, 1.0, 0.0]
    params[3 + D:3 + 2 * D] = [100.0 + 40.0, 400.0 + 10.0, 90.0, 25.0, 1.0, 0.0]
    params[3 + 2 * D] = 10.0
    policy = zoo.ZooPolicy(params, "mlp", D, 2)
    mean = np.array([1.0, -2.0, 0.0, 0.5, 0.1, 0.0])
    var = np.array([14.0, 41.0, 9.0, 2.5, 0.1, 0.0]) - mean ** 2
    std = np.sqrt(np.maximum(var, 1e-2))  # the last dimension's variance is 0: std 0.1
    np.testing.assert_allclose(policy.obs_mean, mean, rtol=1e-6)
    np.testing.assert_allclose(policy.obs_std, std, rtol=1e-6)
    x = np.array([[3.0, -2.0, 30.0, -9.0, 0.1, 0.02]])
    expected = np.clip((x - mean) / std, -5, 5)
    np.testing.assert_allclose(policy.normalize(x), expected, rtol=1e-5, atol=1e-6)
    assert policy.normalize(x)[0, 2] == 5.0 and policy.normalize(x)[0, 3] == -5.0


def test_deterministic_and_stochastic(tmp_path):
    path = _write(tmp_path, "lstm", 10, 3)
    arch = {"kind": "lstm", "obs_dim": 10, "act_dim": 3}
    obs = np.random.default_rng(0).normal(size=(4, 10))
    a = zoo.ZooPolicy.from_file(path, num_worlds=4, **arch).act(obs)
    b = zoo.ZooPolicy.from_file(path, num_worlds=4, **arch).act(obs)
    np.testing.assert_array_equal(a, b)
    s1 = zoo.ZooPolicy.from_file(path, **arch, num_worlds=4, stochastic=True, seed=7).act(obs)
    s2 = zoo.ZooPolicy.from_file(path, **arch, num_worlds=4, stochastic=True, seed=7).act(obs)
    s3 = zoo.ZooPolicy.from_file(path, **arch, num_worlds=4, stochastic=True, seed=8).act(obs)
    np.testing.assert_array_equal(s1, s2)
    assert not np.array_equal(s1, s3)
    # the noise is exp(logstd) * N(0, 1) around the mean
    many = zoo.ZooPolicy.from_file(path, **arch, num_worlds=4000, stochastic=True, seed=0)
    acts = many.act(np.repeat(obs[:1], 4000, axis=0))
    np.testing.assert_allclose(acts.mean(0), a[0], atol=0.05)
    np.testing.assert_allclose(acts.std(0), many.std, rtol=0.06)


def _tf_dense(x, w, b):
    return x @ w + b


def _sig(x):
    return 1.0 / (1.0 + np.exp(-x))


def test_hand_computed_mlp_step():
    D, A, H = 3, 2, 64
    params = zoo.random_params("mlp", D, A, seed=5)
    p = params.astype(np.float64)
    # offsets written out by hand: retfilter 3, obsfilter 2D+1, then vffc1 (D*H+H), vffc2 (H*H+H), vffinal (H+1)
    o = 3
    s, ss, n = p[o:o + D], p[o + D:o + 2 * D], p[o + 2 * D]
    o += 2 * D + 1
    o += D * H + H + H * H + H + H + 1  # skip the value network
    w1 = p[o:o + D * H].reshape(D, H); o += D * H
    b1 = p[o:o + H]; o += H
    w2 = p[o:o + H * H].reshape(H, H); o += H * H
    b2 = p[o:o + H]; o += H
    w3 = p[o:o + H * A].reshape(H, A); o += H * A
    b3 = p[o:o + A]; o += A
    assert o + A == p.size  # logstd last
    x = np.array([[0.3, -1.0, 2.0]])
    mean = s / n
    z = np.clip((x - mean) / np.sqrt(np.maximum(ss / n - mean ** 2, 1e-2)), -5, 5)
    expected = _tf_dense(np.tanh(_tf_dense(np.tanh(_tf_dense(z, w1, b1)), w2, b2)), w3, b3)
    got = zoo.ZooPolicy(params, "mlp", D, A).act(x)
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)


def _lstm_reference(p, D, A, xs):
    """gym-compete's LSTMPolicy policy branch, step by step, from hand-written offsets."""
    H = 128
    o = 3
    s, ss, n = p[o:o + D], p[o + D:o + 2 * D], p[o + 2 * D]
    o += 2 * D + 1
    o += D * H + H + 2 * H * 4 * H + 4 * H + H + 1  # the value branch: embed, lstmv, head
    we = p[o:o + D * H].reshape(D, H); o += D * H
    be = p[o:o + H]; o += H
    k = p[o:o + 2 * H * 4 * H].reshape(2 * H, 4 * H); o += 2 * H * 4 * H
    bk = p[o:o + 4 * H]; o += 4 * H
    wh = p[o:o + H * A].reshape(H, A); o += H * A
    bh = p[o:o + A]; o += A
    assert o + A == p.size
    mean = s / n
    std = np.sqrt(np.maximum(ss / n - mean ** 2, 1e-2))
    c = np.zeros(H)
    h = np.zeros(H)
    out = []
    for x in xs:
        z = np.clip((x - mean) / std, -5, 5)
        e = np.maximum(z @ we + be, 0.0)
        g = np.concatenate([e, h]) @ k + bk
        i, j, f, og = g[:H], g[H:2 * H], g[2 * H:3 * H], g[3 * H:]
        c = c * _sig(f + 1.0) + _sig(i) * np.tanh(j)
        h = np.tanh(c) * _sig(og)
        out.append(h @ wh + bh)
    return np.array(out)


def test_hand_computed_lstm_steps_and_state():
    D, A = 5, 3
    params = zoo.random_params("lstm", D, A, seed=11)
    xs = np.random.default_rng(2).normal(size=(4, D))
    expected = _lstm_reference(params.astype(np.float64), D, A, xs)
    policy = zoo.ZooPolicy(params, "lstm", D, A)
    got = np.array([policy.act(x[None])[0] for x in xs])
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)
    assert not np.allclose(got[0], got[1:])  # the state carries over
    policy.reset()
    np.testing.assert_allclose(policy.act(xs[:1]), expected[:1], rtol=1e-4, atol=1e-5)


def test_lstm_state_is_per_world_and_resets_by_mask():
    D, A = 4, 2
    params = zoo.random_params("lstm", D, A, seed=1)
    rng = np.random.default_rng(0)
    seqs = rng.normal(size=(3, 6, D))  # 3 worlds, 6 steps
    batch = zoo.ZooPolicy(params, "lstm", D, A, num_worlds=3)
    out = np.zeros((6, 3, A), np.float32)
    for t in range(6):
        # world 1 starts a new episode at step 3
        reset = np.array([False, t == 3, False])
        out[t] = batch.act(seqs[:, t], reset=reset)
    for w in range(3):
        single = zoo.ZooPolicy(params, "lstm", D, A)
        for t in range(6):
            if w == 1 and t == 3:
                single.reset()
            np.testing.assert_allclose(out[t, w], single.act(seqs[w, t][None])[0], rtol=1e-5, atol=1e-6)
    batch.reset([0, 2])
    assert not batch.h[[0, 2]].any() and batch.h[1].any()
    with pytest.raises(ValueError, match=r"reset mask should have shape \(3,\), got \(2,\)"):
        batch.reset(np.array([True, False]))
    with pytest.raises(ValueError, match=r"reset indices should be ints in \[0, 3\)"):
        batch.reset([5])


def test_bad_files(tmp_path):
    with pytest.raises(FileNotFoundError, match="no agent-zoo file at .*multiagent-competition"):
        zoo.read_params(tmp_path / "missing.pkl")
    junk = tmp_path / "junk.pkl"
    junk.write_bytes(b"not a pickle at all")
    with pytest.raises(zoo.ZooFormatError, match="is not an agent-zoo parameter file"):
        zoo.read_params(junk)
    wrong_dtype = tmp_path / "f64.pkl"
    with open(wrong_dtype, "wb") as f:
        pickle.dump(np.zeros(10), f, protocol=3)
    with pytest.raises(zoo.ZooFormatError, match=r"flat float32 vector, got shape \(10,\) dtype float64"):
        zoo.read_params(wrong_dtype)
    not_array = tmp_path / "list.pkl"
    with open(not_array, "wb") as f:
        pickle.dump([1.0, 2.0], f, protocol=3)
    with pytest.raises(zoo.ZooFormatError, match="should hold a NumPy array, got list"):
        zoo.read_params(not_array)
    size = tmp_path / "size.pkl"
    zoo.write_params(size, np.zeros(1234, np.float32))
    with pytest.raises(zoo.ZooFormatError, match=r"holds 1234 parameters, which is none of the zoo's architectures"):
        zoo.ZooPolicy.from_file(size)
    path = _write(tmp_path, "mlp", 122, 8)
    with pytest.raises(zoo.ZooFormatError, match=r"a lstm policy with obs_dim 137 and act_dim 8 has 299943 "
                                                 r"parameters, got"):
        zoo.ZooPolicy.from_file(path, kind="lstm", obs_dim=137, act_dim=8)
    with pytest.raises(ValueError, match="give all of kind, obs_dim and act_dim or none"):
        zoo.ZooPolicy.from_file(path, kind="mlp")
    with pytest.raises(ValueError, match="kind should be one of 'mlp', 'lstm', got 'gru'"):
        zoo.param_count("gru", 3, 2)


class _Evil:
    def __reduce__(self):
        return (print, ("pwned",))


def test_a_file_cannot_run_code(tmp_path, capsys):
    evil = tmp_path / "evil.pkl"
    with open(evil, "wb") as f:
        pickle.dump(_Evil(), f, protocol=3)
    with pytest.raises(zoo.ZooFormatError, match=r"references builtins.print; an agent-zoo file holds only"):
        zoo.read_params(evil)
    assert "pwned" not in capsys.readouterr().out


def test_bad_observations(tmp_path):
    policy = zoo.ZooPolicy.from_file(_write(tmp_path, "mlp", 122, 8), num_worlds=2)
    with pytest.raises(ValueError, match=r"observations should have shape \(2, 122\), got \(2, 121\)"):
        policy.act(np.zeros((2, 121)))
    with pytest.raises(ValueError, match=r"observations should be finite"):
        policy.act(np.full((2, 122), np.nan))
    with pytest.raises(ValueError, match="num_worlds should be a positive int, got 0"):
        zoo.ZooPolicy.from_file(_write(tmp_path, "mlp", 122, 8), num_worlds=0)


def test_load_entry_checks_the_architecture(tmp_path):
    entry = zoo.find("sumo_v0", version=1)
    target = tmp_path / entry.path
    target.parent.mkdir(parents=True)
    zoo.write_params(target, zoo.random_params("lstm", 137, 8))
    policy = zoo.load(entry, tmp_path, num_worlds=2)
    assert policy.name == "sumo_ants_v1" and policy.recurrent
    zoo.write_params(target, zoo.random_params("mlp", 122, 8))
    with pytest.raises(zoo.ZooFormatError, match="sumo_ants_v1: a lstm policy with obs_dim 137"):
        zoo.load(entry, tmp_path)
    with pytest.raises(ValueError, match="zoo_dir .* is needed to load sumo_ants_v1"):
        zoo.load(entry)


# -- you against a zoo policy: a Gymnasium env ------------------------------------------------------


def _default_form_policy(game, seed=0, **kwargs):
    """A zoo-format LSTM sized for the game's default form (the suite's own weights)."""
    from joltgym_marl import MULTI_AGENT_ENVS

    env = MULTI_AGENT_ENVS[game].parallel_env(**kwargs)
    agent = env.possible_agents[1]
    D, A = env.observation_space(agent).shape[0], env.action_space(agent).shape[0]
    env.close()
    return zoo.ZooPolicy(zoo.random_params("lstm", D, A, seed=seed, scale=0.1), "lstm", D, A, stochastic=True)


@pytest.mark.filterwarnings("ignore:.*A Box .* space (minimum|maximum) value is -?infinity:UserWarning")
def test_zoo_opponent_env_passes_check_env():
    from gymnasium.utils.env_checker import check_env

    env = zoo.ZooOpponentEnv("sumo_v0", _default_form_policy("sumo_v0"), form=None, max_cycles=50)
    assert env.agent == "ant_0" and env.opponent == "ant_1"
    check_env(env, skip_render_check=True)
    env.close()


def test_zoo_opponent_env_is_seeded_and_resets_the_lstm():
    env = zoo.ZooOpponentEnv("sumo_v0", _default_form_policy("sumo_v0"), form=None, max_cycles=30)

    def episode(seed):
        obs, _ = env.reset(seed=seed)
        assert not env.opponent_policy.h.any()  # a fresh LSTM state with each episode
        trace, done = [obs], False
        while not done:
            obs, reward, terminated, truncated, info = env.step(np.zeros(env.action_space.shape, np.float32))
            trace.append(info["opponent_action"])
            done = terminated or truncated
        return np.concatenate(trace)

    a, b, c = episode(3), episode(3), episode(4)
    np.testing.assert_array_equal(a, b)
    assert a.shape != c.shape or not np.array_equal(a, c)
    with pytest.raises(RuntimeError, match="before reset"):
        env.step(np.zeros(env.action_space.shape, np.float32))
    env.close()


def test_zoo_opponent_env_bad_arguments():
    policy = _default_form_policy("sumo_v0")
    with pytest.raises(ValueError, match=r"agent should be one of 'ant_0', 'ant_1', got 'ant_7'"):
        zoo.ZooOpponentEnv("sumo_v0", policy, form=None, agent="ant_7")
    small = zoo.ZooPolicy(zoo.random_params("mlp", 7, 8), "mlp", 7, 8)
    with pytest.raises(ValueError, match=r"takes 7 observations and gives 8 actions; ant_1 of sumo_v0"):
        zoo.ZooOpponentEnv("sumo_v0", small, form=None)


# -- the zoo in the games' gym-compete form ----------------------------------------------------------


def _zoo_copy(tmp_path, entry, seed=0):
    """The suite's own file in the archive's place for ``entry`` (random weights)."""
    target = tmp_path / "agent-zoo" / entry.path
    target.parent.mkdir(parents=True, exist_ok=True)
    zoo.write_params(target, zoo.random_params(entry.kind, entry.obs_dim, entry.act_dim, seed=seed, scale=0.1))
    return target


@pytest.mark.parametrize("entry", zoo.CATALOGUE, ids=lambda e: e.name)
def test_every_file_fits_its_seat_in_the_gym_compete_form(entry):
    from joltgym_marl import MULTI_AGENT_ENVS

    env = MULTI_AGENT_ENVS[entry.game].parallel_env(**entry.game_kwargs())
    agents = env.possible_agents if entry.agent is None else [entry.agent]
    for agent in agents:
        assert agent in env.possible_agents
        assert env.observation_space(agent).shape == (entry.obs_dim,)
        assert env.action_space(agent).shape == (entry.act_dim,)
    env.close()


@pytest.mark.filterwarnings("ignore:.*A Box .* space (minimum|maximum) value is -?infinity:UserWarning")
def test_zoo_opponent_env_on_the_gym_compete_form(tmp_path):
    from gymnasium.utils.env_checker import check_env

    keeper = _zoo_copy(tmp_path, zoo.find("kick_and_defend_v0", agent="keeper_0"))
    env = zoo.ZooOpponentEnv("kick_and_defend_v0", keeper, max_cycles=20)
    assert (env.agent, env.opponent) == ("kicker_0", "keeper_0")
    assert env.observation_space.shape == (384,) and env.action_space.shape == (17,)
    check_env(env, skip_render_check=True)
    with pytest.raises(ValueError, match="plays keeper_0; agent should be another of"):
        zoo.ZooOpponentEnv("kick_and_defend_v0", keeper, agent="keeper_0")
    sumo = _zoo_copy(tmp_path, zoo.find("sumo_v0", robot="humanoid", version=2))
    env = zoo.ZooOpponentEnv("sumo_v0", sumo, max_cycles=5)  # the file names the robot
    assert env.observation_space.shape == (395,) and env.agent == "humanoid_0"
    env.reset(seed=0)
    obs, reward, terminated, truncated, info = env.step(env.action_space.sample())
    assert "outcome" in info and info["opponent_action"].shape == (17,)


def test_bansal_zoo_benchmark_runs_on_the_suites_own_files(tmp_path):
    import os
    import subprocess
    import sys

    import joltgym_marl

    for i, entry in enumerate(zoo.CATALOGUE):
        _zoo_copy(tmp_path, entry, seed=i)
    root = Path(__file__).resolve().parents[1]
    env = dict(os.environ, PYTHONPATH=str(Path(joltgym_marl.__file__).resolve().parents[1]))
    proc = subprocess.run([sys.executable, "-m", "benchmarks.bansal_zoo", "--zoo", str(tmp_path / "agent-zoo"),
                           "--games", "you_shall_not_pass", "--bouts", "2", "--worlds", "2", "--bars",
                           "--out", str(tmp_path / "out.md")], cwd=root, env=env, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "| you_shall_not_pass_walker_v1 vs still | 2 |" in proc.stdout
    assert "the walker crosses against a still blocker (>= 80%)" in proc.stdout
    assert (tmp_path / "out.md").read_text().startswith("Bansal et al.'s zoo")
    missing = subprocess.run([sys.executable, "-m", "benchmarks.bansal_zoo", "--zoo", str(tmp_path / "nowhere")],
                             cwd=root, env=env, capture_output=True, text=True, timeout=120)
    assert missing.returncode == 2 and "lacks 19 of the zoo's 19 files" in missing.stderr


def test_bansal_zoo_match_seeds_do_not_depend_on_the_subset_run():
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from benchmarks import bansal_zoo

    full = bansal_zoo.build_parser().parse_args(["--zoo", "unused"])
    subset = bansal_zoo.build_parser().parse_args(["--zoo", "unused", "--games", "run_to_goal_ants"])
    seeds = {(m.game, m.robot, m.label): bansal_zoo.match_seed(0, m) for m in bansal_zoo.matches(full, zoo.CATALOGUE)}
    for m in bansal_zoo.matches(subset, zoo.CATALOGUE):
        assert bansal_zoo.match_seed(0, m) == seeds[(m.game, m.robot, m.label)]
    assert len(set(seeds.values())) == len(seeds)  # no two matches share a seed


def test_zoo_sensitivity_variants_change_only_what_they_name():
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[1]
    sys.path.insert(0, str(root))
    from benchmarks import zoo_sensitivity as zs

    scene = (root / "assets" / "gym_compete" / "sumo_ants.xml").read_text()
    assert zs.rewrite_scene(scene, "base") == scene
    assert '<option cone="elliptic" timestep="0.003"' in zs.rewrite_scene(scene, "elliptic")
    newton = zs.rewrite_scene(scene, "newton")
    assert 'solver="Newton"' in newton and 'solver="PGS"' not in newton
    linear = zs.rewrite_scene(scene, "solimp_linear")
    assert linear.count('solimp="0.9 0.95 0.001 0.5 1"') == scene.count("<geom ")
    with pytest.raises(ValueError, match="unknown variant 'pyramid'"):
        zs.rewrite_scene(scene, "pyramid")
    done = subprocess.run([sys.executable, "-m", "benchmarks.zoo_sensitivity", "--help"], cwd=root,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.startswith("usage:") and "solimp_linear" in done.stdout
