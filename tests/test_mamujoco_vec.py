"""mamujoco_v1.vec_env: N MaMuJoCo worlds on the WorldPool. World i is
bit-identical to parallel_env seeded seed + i (observations, rewards, flags,
infos, state), for any thread count and batch size, stepping synchronously
or with send/recv; Gymnasium's NEXT_STEP autoreset; the padded
parameter-sharing layout."""

from __future__ import annotations

import re

import numpy as np
import pytest

from joltgym_marl import mamujoco_v1
from joltgym_marl._native import core as _core
from conftest import main_thread_progress_during

N = 5
STEPS = 90
LIMIT = {"max_episode_steps": 25}


def _actions(vec, steps, seed=0):
    rng = np.random.default_rng(seed)
    return [{a: rng.uniform(-1, 1, (vec.num_envs, d)).astype(np.float32)
             for a, d in zip(vec.possible_agents, vec.act_dims)} for _ in range(steps)]


def _single_world_rollouts(scenario, conf, actions, seed, obsk):
    """What vec_env's world i must return: parallel_env seeded seed + i, reset
    one step after its episode ends (NEXT_STEP: that step's actions are
    ignored, rewards 0, flags False)."""
    out = []
    for i in range(N):
        env = mamujoco_v1.parallel_env(scenario, conf, agent_obsk=obsk, **LIMIT)
        obs, _ = env.reset(seed=seed + i)
        rows = [(obs, {a: 0.0 for a in obs}, False, False, env.state())]
        done = False
        for act in actions:
            if done:
                obs, _ = env.reset()
                rows.append((obs, {a: 0.0 for a in obs}, False, False, env.state()))
                done = False
                continue
            obs, rew, term, trunc, _ = env.step({a: v[i] for a, v in act.items()})
            t, u = any(term.values()), any(trunc.values())
            rows.append((obs, rew, t, u, env.state()))
            done = t or u
        out.append(rows)
        env.close()
    return out


def _check_world_rows(vec_rows, expected):
    for t, (obs, rew, term, trunc, state) in enumerate(vec_rows):
        for i in range(N):
            e_obs, e_rew, e_term, e_trunc, e_state = expected[i][t]
            for agent in e_obs:
                assert np.array_equal(obs[agent][i], e_obs[agent]), (t, i, agent)
                assert rew[agent][i] == e_rew[agent], (t, i, agent, rew[agent][i], e_rew[agent])
                assert term[agent][i] == e_term and trunc[agent][i] == e_trunc, (t, i)
            assert np.array_equal(state[i], e_state), (t, i)


CASES = [("HalfCheetah", "6x1", 1), ("Hopper", "3x1", 2), ("Ant", "4x2", 1), ("Humanoid", "9|8", 0),
         ("CoupledHalfCheetah", "1p1", 1), ("ManySegmentAnt", "2x2", 1)]


@pytest.mark.parametrize(("scenario", "conf", "obsk"), CASES)
def test_world_i_equals_parallel_env_seeded_seed_plus_i_for_any_threads(scenario, conf, obsk):
    probe = mamujoco_v1.vec_env(scenario, conf, num_envs=N, num_threads=1, agent_obsk=obsk, **LIMIT)
    actions = _actions(probe, STEPS, seed=3)
    expected = _single_world_rollouts(scenario, conf, actions, 11, obsk)
    for threads in (1, 2, 3):
        vec = mamujoco_v1.vec_env(scenario, conf, num_envs=N, num_threads=threads, agent_obsk=obsk, **LIMIT)
        obs, infos = vec.reset(seed=11)
        no = {a: np.zeros(N, bool) for a in obs}
        rows = [(obs, {a: np.zeros(N) for a in obs}, no, no, vec.state())]
        for act in actions:
            obs, rew, term, trunc, infos = vec.step(act)
            rows.append((obs, rew, term, trunc, vec.state()))
        _check_world_rows(rows, expected)
        vec.close()
    probe.close()


def test_async_send_recv_matches_sync_for_any_batch_size():
    """Each world's results depend only on its own actions and seed: batched
    send/recv (recv returns the first batch_size worlds to finish) equals
    step() world for world."""
    sync = mamujoco_v1.vec_env("Walker2d", "2x3", num_envs=N, num_threads=2, **LIMIT)
    actions = _actions(sync, 40, seed=5)
    sync.reset(seed=2)
    reference = [sync.step(act) for act in actions]
    for batch in (1, 2, N):
        vec = mamujoco_v1.vec_env("Walker2d", "2x3", num_envs=N, num_threads=2, batch_size=batch, **LIMIT)
        vec.async_reset(seed=2)
        steps_done = np.zeros(N, int)
        got = {}
        while steps_done.min() < len(actions):
            obs, rew, term, trunc, infos, ids = vec.recv()
            for k, i in enumerate(ids.tolist()):
                if (i, 0) not in got:  # the reset of async_reset()
                    got[(i, 0)] = "reset"
                else:
                    steps_done[i] += 1
                    got.setdefault((i, steps_done[i]), ({a: obs[a][k] for a in obs}, rew["agent_0"][k],
                                                        term["agent_0"][k]))
            # every received world is sent again (past the end with zeros, ignored),
            # so that batch_size worlds are always in flight
            ids = ids.tolist()
            zero = {a: np.zeros(d, np.float32) for a, d in zip(vec.possible_agents, vec.act_dims)}
            vec.send({a: np.stack([actions[steps_done[i]][a][i] if steps_done[i] < len(actions) else zero[a]
                                   for i in ids]) for a in vec.possible_agents}, np.array(ids))
        for i in range(N):
            for t in range(1, len(actions) + 1):
                obs, rew, term = got[(i, t)]
                r_obs, r_rew, r_term, _, _ = reference[t - 1]
                for a in obs:
                    assert np.array_equal(obs[a], r_obs[a][i]), (batch, i, t, a)
                assert rew == r_rew["agent_0"][i] and term == r_term["agent_0"][i], (batch, i, t)
        vec.close()
    sync.close()


def test_next_step_autoreset_and_infos():
    vec = mamujoco_v1.vec_env("HalfCheetah", "2x3", num_envs=3, num_threads=1, max_episode_steps=3)
    vec.reset(seed=0)
    zero = {a: np.zeros((3, 3), np.float32) for a in vec.possible_agents}
    for _ in range(2):
        _, _, _, trunc, infos = vec.step(zero)
        assert not trunc["agent_0"].any()
    _, rew, _, trunc, infos = vec.step(zero)
    assert trunc["agent_0"].all() and trunc["agent_1"].all()
    obs, rew, term, trunc, infos = vec.step(zero)  # the reset step
    assert infos["_reset"].all() and (rew["agent_0"] == 0).all() and not trunc["agent_0"].any()
    assert (infos["elapsed_steps"] == 0).all()
    assert vec.metadata["autoreset_mode"] == "next_step"


def test_padded_parameter_sharing_layout():
    per_agent = mamujoco_v1.vec_env("Ant", "2x4", num_envs=4, num_threads=2)
    padded = mamujoco_v1.vec_env("Ant", "2x4", num_envs=4, num_threads=2, layout="padded")
    a_obs, _ = per_agent.reset(seed=9)
    p_obs, _ = padded.reset(seed=9)
    n = padded.num_agents
    assert p_obs.shape == (4, n, max(padded.obs_dims) + n) and p_obs.dtype == np.float64
    for i, agent in enumerate(padded.possible_agents):
        d = padded.obs_dims[i]
        assert np.array_equal(p_obs[:, i, :d], a_obs[agent])
        assert (p_obs[:, i, d:-n] == 0).all()
        assert np.array_equal(p_obs[:, i, -n:], np.tile(np.eye(n)[i], (4, 1)))
    rng = np.random.default_rng(0)
    acts = rng.uniform(-1, 1, (4, n, padded.padded_act_dim)).astype(np.float32)
    p = padded.step(acts)
    a = per_agent.step({agent: acts[:, i, :padded.act_dims[i]] for i, agent in enumerate(padded.possible_agents)})
    assert p[1].shape == (4, n) and np.array_equal(p[1][:, 0], a[1]["agent_0"])
    for i, agent in enumerate(padded.possible_agents):
        assert np.array_equal(p[0][:, i, :padded.obs_dims[i]], a[0][agent])
    with pytest.raises(ValueError, match=r"actions should have shape \(4, 2, 4\) \(worlds, agents, padded act_dim\)"):
        padded.step(np.zeros((4, 4), np.float32))
    assert padded.padded_observation_space.shape == (max(padded.obs_dims) + n,)


def test_vec_bad_input_and_spaces():
    vec = mamujoco_v1.vec_env("HalfCheetah", "2x3", num_envs=2, num_threads=1)
    assert vec.observation_space("agent_0") == mamujoco_v1.parallel_env("HalfCheetah", "2x3").observation_space("agent_0")
    with pytest.raises(_core.StateError, match=r"before reset"):
        vec.step({a: np.zeros((2, 3), np.float32) for a in vec.possible_agents})
    vec.reset(seed=0)
    with pytest.raises(ValueError, match=re.escape("action of agent_0 should have shape (2, 3), got (3,)")):
        vec.step({"agent_0": np.zeros(3, np.float32), "agent_1": np.zeros((2, 3), np.float32)})
    with pytest.raises(ValueError, match=r"layout should be one of \('per_agent', 'padded'\), got 'rows'"):
        mamujoco_v1.vec_env("HalfCheetah", "2x3", num_envs=2, layout="rows")
    with pytest.raises(ValueError, match=r"num_envs"):
        mamujoco_v1.vec_env("HalfCheetah", "2x3", num_envs=0)
    assert vec.state().shape == (2, 17)
    vec.close()
    vec.close()  # idempotent
    with pytest.raises(_core.StateError, match="closed"):
        vec.reset()



def test_other_seed_gives_other_worlds():
    vec = mamujoco_v1.vec_env("Hopper", "3x1", num_envs=2, num_threads=1)
    a, _ = vec.reset(seed=1)
    b, _ = vec.reset(seed=2)
    assert not np.array_equal(a["agent_0"], b["agent_0"])
    assert not np.array_equal(a["agent_0"][0], a["agent_0"][1])  # worlds 0 and 1: seeds 1 and 2
    assert np.array_equal(a["agent_0"][1], b["agent_0"][0])
    vec.close()


def test_step_releases_the_gil():
    """A Python thread runs while another is inside one long vec_env step
    (as tests/test_world_pool.py checks for the WorldPool)."""
    import os

    n = 128
    vec = mamujoco_v1.vec_env("Humanoid", "9|8", num_envs=n, num_threads=2, frame_skip=40)
    vec.reset(seed=0)
    acts = {a: np.zeros((n, d), np.float32) for a, d in zip(vec.possible_agents, vec.act_dims)}
    rate, seconds, progress = main_thread_progress_during(lambda: vec.step(acts))
    vec.close()
    assert seconds > 0.05, "the step was too quick to tell anything"
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    share = 0.1 if cpus >= 2 else 0.05
    assert progress > share * rate * seconds, (progress, rate, seconds)


def test_many_envs_built_and_closed():
    for _ in range(30):
        with mamujoco_v1.vec_env("Swimmer", "2x1", num_envs=4, num_threads=2) as vec:
            vec.reset(seed=0)
            vec.step({a: np.zeros((4, 1), np.float32) for a in vec.possible_agents})
        assert vec.pool.closed


def test_a_fork_with_worlds_in_flight_and_a_drop_in_flight():
    """The MaMuJoCo pool shares WorldPool's fork-aware mutex and drop order: in
    a forked child recv() says the worlds in flight were lost (it waited forever
    before), and a vec_env dropped with worlds in flight joins its workers
    before its buffers go (run in a subprocess, so a crash fails the test)."""
    import subprocess
    import sys
    import textwrap

    code = textwrap.dedent("""
        import os
        import numpy as np
        from joltgym_marl import mamujoco_v1, StateError

        v = mamujoco_v1.vec_env("HalfCheetah", "2x3", 8, num_threads=2, batch_size=4)
        v.reset(seed=0)
        v.send({a: np.zeros((8, 3), np.float32) for a in v.possible_agents}, list(range(8)))
        pid = os.fork()
        if pid == 0:
            try:
                v.recv()
                os._exit(3)
            except StateError as error:
                os._exit(0 if "were lost" in str(error) else 4)
        _, status = os.waitpid(pid, 0)
        assert os.WEXITSTATUS(status) == 0, status
        v.recv()  # the parent still receives its worlds
        for i in range(10):
            w = mamujoco_v1.vec_env("Humanoid", "9|8", 16, num_threads=2, batch_size=8)
            w.reset(seed=i)
            w.send({a: np.zeros((16, d), np.float32) for a, d in zip(w.possible_agents, w.act_dims)},
                   list(range(16)))
            del w
        print("ok")
    """)
    import joltgym_marl
    from pathlib import Path

    env = dict(__import__("os").environ, PYTHONPATH=str(Path(joltgym_marl.__file__).resolve().parents[1]))
    proc = subprocess.run([sys.executable, "-W", "error", "-c", code], capture_output=True, text=True,
                          timeout=300, env=env)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", (proc.returncode, proc.stdout, proc.stderr[-3000:])
