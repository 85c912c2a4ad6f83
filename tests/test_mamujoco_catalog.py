"""MaMuJoCo in the library's self-description: ``joltgym_marl.tasks("mamujoco")``,
``python -m joltgym_marl list`` and ``info`` show every scenario with its
confs and per-agent dims, read from the one scenario table; the dims are
those of Farama's env (the oracle) where Farama has the conf, and of our
``parallel_env`` for the confs Farama dropped."""

from __future__ import annotations

import json

import pytest

import joltgym_marl
from joltgym_marl import mamujoco_v1
from joltgym_marl.mamujoco import catalog, graphs
from mamujoco_oracle import make_oracle
from test_cli import cli


def _dims(env):
    return (tuple(env.action_space(a).shape[0] for a in env.possible_agents),
            tuple(env.observation_space(a).shape[0] for a in env.possible_agents), env.state().shape[0])


def test_tasks_lists_every_scenario_and_conf():
    records = joltgym_marl.tasks("mamujoco")
    assert [r.scenario for r in records] == list(mamujoco_v1.SCENARIOS)
    for r in records:
        assert r.kind == "mamujoco" and r.module == "mamujoco_v1"
        confs = [c.agent_conf for c in r.confs]
        assert (confs[-1] is None) != r.any_nxk  # every scenario takes None, but ManySegment's (N, K unsaid)
        if r.scenario in ("InvertedPendulum", "InvertedDoublePendulum"):
            assert confs == [None]
        elif not r.any_nxk:
            g = graphs.graph(r.scenario, None)
            assert confs[:-1] == list(g.confs)
            assert [c.agent_conf for c in r.confs if not c.in_farama] == list(g.extra_confs)
    # the registry's own listing is unchanged
    assert all(r.kind in ("single_agent", "game") for r in joltgym_marl.tasks())
    with pytest.raises(ValueError, match=r"kind should be None or one of 'single_agent', 'game', got 'robots' "
                                         r"\(or 'mamujoco' for the MaMuJoCo scenarios\)"):
        joltgym_marl.tasks("robots")


@pytest.mark.parametrize("scenario", mamujoco_v1.SCENARIOS)
def test_listed_dims_are_the_envs(scenario):
    record = catalog.scenario(scenario)
    for c in record.confs:
        conf = c.agent_conf
        if c.in_farama and scenario != "CoupledHalfCheetah":  # (Farama's raises on our MuJoCo: test_mamujoco_coupled)
            env = make_oracle(scenario, conf, 1)
            env.reset(seed=0)
        else:
            env = mamujoco_v1.parallel_env(scenario, conf)
            env.reset(seed=0)
        actions, obs, state = _dims(env)
        assert (c.agents, c.action_dims, c.obs_dims, c.state_dim) == (len(actions), actions, obs, state), (
            scenario, conf)
        env.close()


def test_list_and_info_show_the_scenarios(tmp_path):
    out = cli("list", cwd=tmp_path).stdout
    for r in joltgym_marl.tasks("mamujoco"):
        row = next(line for line in out.splitlines() if line.split()[:2] == [r.scenario, r.robot])
        for c in r.confs:
            if c.agent_conf is not None:
                assert f"{c.agent_conf}{'' if c.in_farama else '*'} ({c.agents}: obs " \
                       f"{catalog.dims_text(c.obs_dims)})" in row, row
    only = cli("list", "--kind", "mamujoco", cwd=tmp_path).stdout
    assert only.startswith(f"{len(mamujoco_v1.SCENARIOS)} MaMuJoCo scenarios") and "single-agent" not in only
    records = json.loads(cli("list", "--kind", "mamujoco", "--json", cwd=tmp_path).stdout)
    assert [r["scenario"] for r in records] == list(mamujoco_v1.SCENARIOS)
    assert records[1]["confs"][1] == {"agent_conf": "6x1", "agents": 6, "action_dims": [1] * 6,
                                      "obs_dims": [9, 9, 8, 9, 9, 8], "state_dim": 17, "in_farama": True}
    # A robot's info lists its scenarios; a scenario that is no task's name has its own.
    info = cli("info", "HalfCheetah", cwd=tmp_path).stdout
    assert "MaMuJoCo HalfCheetah: mamujoco_v1.parallel_env('HalfCheetah', agent_conf)" in info
    assert "6x1         6       1 each       9, 9, 8, 9, 9, 8         17" in info and "3x2 *" in info
    info = cli("info", "many-segment-ant", cwd=tmp_path).stdout
    assert info.startswith("MaMuJoCo ManySegmentAnt") and "any 'NxK'" in info
    record = json.loads(cli("info", "CoupledHalfCheetah", "--json", cwd=tmp_path).stdout)
    assert record["robot"] == "coupled_half_cheetah" and record["confs"][0]["obs_dims"] == [28, 28]
    done = cli("info", "ManySegmentCheetah", cwd=tmp_path, check=False)
    assert done.returncode == 2 and "unknown task 'ManySegmentCheetah'" in done.stderr
