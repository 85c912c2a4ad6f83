"""The benchmark suite: every registered task is measured, every script starts, outputs land where they should.

The quick run (``python -m benchmarks.run --quick``, as CI runs it) is the
heavy test. The peers (EnvPool, SuperSuit, Gymnasium's MuJoCo envs) are test
requirements: a missing one fails the suite with a message naming it, which
fails this test rather than skipping it. Every task list here comes from the
native task registry, as the suite's own does.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from joltgym_marl.registry import GAMES, SINGLE_AGENT_TASKS, TASKS

ROOT = Path(__file__).resolve().parents[1]

# Every contender of the suite; each must report a positive rate somewhere in a quick run.
CONTENDERS = [
    "limit", "core", "vector", "pool", "pool_mujoco", "agent_vec", "gym_loop", "gym_sync", "gym_async", "mj_batch",
    "envpool_sync", "envpool_async", "supersuit_0", "supersuit_T",
]
# The figure of ours that each task's target compares with its limit.
OURS = {spec.name: "agent_vec" if spec.is_game else "vector" for spec in TASKS.values()}

# Each script as the README runs it from the clone's root, and the task names its --help must list.
SCRIPTS = {
    "run": ([sys.executable, "-m", "benchmarks.run"], list(TASKS)),
    "pool_vs_raw": ([sys.executable, "benchmarks/pool_vs_raw.py"], list(TASKS)),
    "mujoco_import": ([sys.executable, "benchmarks/mujoco_import.py"], list(TASKS)),
    "policy_rollout": ([sys.executable, "benchmarks/policy_rollout.py"], list(TASKS)),
    "agent_vec_vs_supersuit": ([sys.executable, "benchmarks/agent_vec_vs_supersuit.py"],
                               [spec.name for spec in GAMES]),
    "sb3_training": ([sys.executable, "benchmarks/sb3_training.py"], [spec.name for spec in SINGLE_AGENT_TASKS]),
    "java_host": ([sys.executable, "benchmarks/java_host.py"], [spec.name for spec in TASKS.values()
                                                                if not spec.is_game]),
    "java_ffm": ([sys.executable, "benchmarks/java_ffm.py"], [spec.name for spec in SINGLE_AGENT_TASKS]),
    "_gym_pipe_worker": ([sys.executable, "benchmarks/_gym_pipe_worker.py"], []),
    "mamujoco_vs_farama": ([sys.executable, "benchmarks/mamujoco_vs_farama.py"], []),
    "torchrl_batched": ([sys.executable, "benchmarks/torchrl_batched.py"], []),
}


def env_with_tools() -> dict:
    env = dict(os.environ)
    # cmake installed by the test extra lives next to this interpreter.
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    return env


def git(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True)


@pytest.mark.parametrize("script", list(SCRIPTS))
def test_script_help_runs_from_the_clone_root(script):
    command, names = SCRIPTS[script]
    done = subprocess.run([*command, "--help"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.startswith("usage:"), done.stdout[:500]
    for name in names:  # the task choices come from the registry
        assert name in done.stdout, (script, name)


def test_default_output_is_untracked_and_explicit_out_is_kept():
    code = ("from benchmarks.run import parse_args\n"
            "for argv in (['--quick'], [], ['--only', 'targets'], ['--out', 'benchmarks/results']):\n"
            "    print(parse_args(argv).out)\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    quick, full, targets, explicit = [Path(line) for line in done.stdout.split()]
    committed = (ROOT / "benchmarks" / "results").resolve()
    for default in (quick, full, targets):
        resolved = (ROOT / default).resolve()
        assert committed != resolved and committed not in resolved.parents, default
        assert ROOT.resolve() in resolved.parents, default
        # Untracked: git ignores it, so a run never shows up in `git status`.
        assert git("check-ignore", "-q", str(resolved / "results.json")).returncode == 0, default
    assert len({quick, full, targets}) == 3
    assert (ROOT / explicit).resolve() == committed


def test_envpool_worker_maps_titles_and_reports_a_missing_task_as_unavailable(monkeypatch):
    """The EnvPool worker runs each single-agent task under EnvPool's id of the same title,
    and answers "not available" (not an error) for a task EnvPool lacks."""
    monkeypatch.syspath_prepend(str(ROOT))
    from benchmarks._tasks import portable

    specs = [portable(spec, {}) for spec in TASKS.values()]
    missing = dict(specs[0], name="no_such_robot", kind="single_agent", title="NoSuchRobot",
                   reference_id="NoSuchRobot-v5")
    requests = [{"op": "available", "tasks": [*specs, missing]}, {"op": "quit"}]
    done = subprocess.run([sys.executable, "-m", "benchmarks._worker", "envpool"], cwd=ROOT,
                          input="".join(json.dumps(r) + "\n" for r in requests),
                          capture_output=True, text=True, timeout=300)
    hello, answer = [json.loads(line) for line in done.stdout.splitlines()]
    assert hello["ok"], hello
    assert answer["ok"], answer
    available = answer["available"]
    for spec in SINGLE_AGENT_TASKS:
        entry = available[spec.name]
        assert entry.get("id") in (spec.reference_id, f"{spec.title}-v4") or "reason" in entry, entry
    for spec in GAMES:
        assert "id" not in available[spec.name]
    assert "id" not in available["no_such_robot"]
    assert "NoSuchRobot-v5" in available["no_such_robot"]["reason"]


def policy_rollout(*args: str) -> subprocess.CompletedProcess:
    """``benchmarks/policy_rollout.py`` at a tiny size (1 round of 0.1 s, 2 worlds)."""
    return subprocess.run([sys.executable, "benchmarks/policy_rollout.py", "--worlds", "2", "--seconds", "0.1",
                           "--rounds", "1", *args], cwd=ROOT, env=env_with_tools(), capture_output=True,
                          text=True, timeout=900)


def rollout_rates(stdout: str) -> dict[str, float]:
    """The median of each contender's row of the printed table."""
    return {name: float(rate.replace(",", "")) for name, rate in
            re.findall(r"^\| (\w+) \| ([\d,]+) \| ", stdout, re.MULTILINE)}


@pytest.mark.slow
@pytest.mark.parametrize("game", [spec.name for spec in GAMES if spec.name == "cheetah_race"])
def test_policy_rollout_runs_every_contender_of_a_game(game):
    """The race with the policy in the loop: the limit (agent-steps), ours sync and async
    (pool and agent vector env) and SuperSuit each measure a rate, in agent-steps/s;
    the single-agent peers are skipped with the reason."""
    done = policy_rollout("--task", game, "--game-agents", "2")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    rates = rollout_rates(done.stdout)
    assert set(rates) == {"limit", "limit_policy", "policy_only", "pool_sync", "pool_async", "vector_sync",
                          "vector_async", "supersuit"}, done.stdout
    assert all(rate > 0 for rate in rates.values()), rates
    assert "| contender | agent-steps/s (median) | min-max | / limit | / limit_policy | / supersuit |" in done.stdout
    assert "num_agents=2, 2 worlds (2 agents each: 4 policy rows per step)" in done.stdout
    for peer in ("gymnasium_sync", "envpool_sync", "envpool_async"):
        assert re.search(rf"^skipping {peer}: {game} is a game", done.stdout, re.MULTILINE), peer


@pytest.mark.parametrize("task", [spec.name for spec in SINGLE_AGENT_TASKS if spec.name == "half_cheetah"])
def test_policy_rollout_runs_gymnasium_sync_on_a_robot(task):
    """Gymnasium's SyncVectorEnv of the reference env (its process imports mujoco, which is
    allowed there only) next to ours; SuperSuit is skipped for a single-agent task."""
    done = policy_rollout("--task", task, "--contenders", "gymnasium_sync", "pool_async", "supersuit")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    rates = rollout_rates(done.stdout)
    assert set(rates) == {"gymnasium_sync", "pool_async"} and all(r > 0 for r in rates.values()), done.stdout
    assert "| contender | env-steps/s (median) |" in done.stdout
    assert re.search(rf"^skipping supersuit: {task} is a single-agent task", done.stdout, re.MULTILINE)


@pytest.mark.slow
def test_quick_benchmark_suite_measures_every_registered_task(tmp_path):
    before = git("status", "--porcelain", "--", "benchmarks/results")
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.run", "--quick", "--out", str(tmp_path)],
        cwd=ROOT, env=env_with_tools(), capture_output=True, text=True, timeout=900,
    )
    assert done.returncode == 0, f"exit {done.returncode}\n{done.stdout[-3000:]}\n{done.stderr[-6000:]}"
    # The committed results are untouched by a run that did not ask for them.
    assert git("status", "--porcelain", "--", "benchmarks/results").stdout == before.stdout
    # Progress on stderr: every measurement says which task and contender, and how far the run is.
    progress = re.findall(r"^\[throughput \d+/\d+\] (\S+) .* \((\d+)/(\d+), [\d.]+ min so far, about "
                          r"[\d.]+ min left\)$", done.stderr, re.MULTILINE)
    assert {task for task, _, _ in progress} == set(TASKS), done.stderr[-3000:]
    assert [int(k) for _, k, _ in progress] == list(range(1, len(progress) + 1))
    assert {int(n) for *_, n in progress} == {len(progress)}

    results = json.loads((tmp_path / "results.json").read_text())
    assert results["errors"] == []
    assert results["meta"]["skipped"] == {}
    assert [t["name"] for t in results["meta"]["tasks"]] == list(TASKS)
    rows = results["throughput"]
    for contender in CONTENDERS:
        rates = [r["median"] for r in rows if r["contender"] == contender]
        assert rates, f"no figure for {contender}"
        assert all(rate is not None and rate > 0 for rate in rates), (contender, rates)
    for task, ours in OURS.items():
        for contender in ("limit", ours):
            assert any(r["task"] == task and r["contender"] == contender and r["median"] > 0 for r in rows), \
                (task, contender)
    # A peer that lacks a task is recorded as such, never as a failed measurement.
    for entry in results["unavailable"]:
        assert entry["task"] in TASKS and entry["reason"], entry
        assert not any(r["task"] == entry["task"] and r["contender"] == entry["contender"] for r in rows)

    # The target table: one row per task, ours and the pool over the limit of the same rounds.
    table = {row["task"]: row for row in results["target_table"]}
    assert list(table) == list(TASKS)
    settings = results["meta"]["settings"]
    for task, row in table.items():
        assert row["contender"] == OURS[task]
        assert (row["worlds"], row["threads"]) == (settings["target_worlds"], settings["target_threads"])
        assert row["limit"]["median"] > 0 and row["ours"]["median"] > 0
        assert row["ratio"] > 0 and row["met"] is None  # quick sizes cannot meet the targets: no verdict
        if not TASKS[task].is_game:
            assert row["pool_ratio"] is not None and row["pool_ratio"] > 0, task
    assert all(t["ratio"] is not None and t["ratio"] > 0 for t in results["targets"])

    assert all(r["median"] > 0 for r in results["scaling"]["throughput"])
    assert results["scaling"]["throughput"] and results["scaling"]["memory"]
    assert all(m["rss_after"] > 0 and m["construct_seconds"] > 0 for m in results["scaling"]["memory"])

    for name in ("throughput.png", "scaling.png", "results.md"):
        assert (tmp_path / name).stat().st_size > 0, name
    markdown = (tmp_path / "results.md").read_text()
    assert "## Targets" in markdown and "## Throughput" in markdown and "NOT MET" not in markdown
    for spec in TASKS.values():
        assert f"### {spec.title} (" in markdown and f"| {spec.title} |" in markdown, spec.title
    assert "## Targets" in done.stdout  # the Markdown is printed too

    # The limit program (built by the run) knows every registered task.
    listed = subprocess.run([str(ROOT / "build" / "capi" / "raw_step_limit"), "--list"],
                            capture_output=True, text=True, timeout=60)
    assert listed.returncode == 0, listed.stderr
    assert sorted(line.split() for line in listed.stdout.splitlines()) == sorted(
        [s.name, s.kind] for s in TASKS.values())


@pytest.mark.slow
def test_end_to_end_section_runs_every_part(tmp_path):
    """``--only end_to_end`` (quick sizes): the policy-in-the-loop rollouts of
    HalfCheetah, Humanoid, Ant and the cheetah race and the SB3 training
    comparison, each with a rate for every contender that applies, in end_to_end.md."""
    done = subprocess.run([sys.executable, "-m", "benchmarks.run", "--quick", "--only", "end_to_end",
                           "--out", str(tmp_path)], cwd=ROOT, capture_output=True, text=True, timeout=1200,
                          env=env_with_tools())
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    text = (tmp_path / "end_to_end.md").read_text()
    robots = [t for t in ("half_cheetah", "humanoid", "ant") if t in TASKS]
    games = [t for t in ("cheetah_race",) if t in TASKS]
    for task in robots + games:
        assert f"policy_rollout.py --task {task}" in text
    expected = {"limit": robots + games, "limit_policy": robots + games, "pool_sync": robots + games, "pool_async": robots + games,
                "vector_sync": robots + games, "vector_async": robots + games, "gymnasium_sync": robots,
                "envpool_sync": robots, "envpool_async": robots, "supersuit": games}
    for contender, tasks in expected.items():
        assert len(re.findall(rf"^\| {contender} \| [\d,]+ ", text, re.MULTILINE)) == len(tasks), contender
    assert len(re.findall(r"^\| contender \| agent-steps/s ", text, re.MULTILINE)) == len(games)
    for contender in ("ours", "dummy", "subproc"):
        assert re.search(rf"^{contender} +[\d.]+ ", text, re.MULTILINE), contender
    assert re.search(r"speed-up ours vs dummy = \d+\.\d\dx", text)


@pytest.mark.slow
def test_torchrl_section_measures_both_routes(tmp_path):
    """``--only torchrl`` (quick sizes): frames/s of TorchRL's ParallelEnv of
    PettingZooWrapper on Farama's MaMuJoCo and of our batched env, their
    ratios, and where our step's time goes, in torchrl.md."""
    done = subprocess.run([sys.executable, "-m", "benchmarks.run", "--quick", "--only", "torchrl",
                           "--out", str(tmp_path)], cwd=ROOT, capture_output=True, text=True, timeout=1200)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    text = (tmp_path / "torchrl.md").read_text()
    assert re.search(r"^\| HalfCheetah \| 6x1 \| [\d,]+ \([\d,]+\) \| [\d,]+ \([\d,]+\) \| [\d,]+ \([\d,]+\) \| "
                     r"[\d.]+x \| [\d.]+x \|$", text, re.MULTILINE), text
    assert len(re.findall(r"^\| HalfCheetah 6x1 \| ours.* \| [\d.]+ \| [\d.]+ \(\d+%\) \| ", text, re.MULTILINE)) == 2, text


def _synthetic_results(quick: bool) -> dict:
    """The suite's results for one task of each kind, assembled from made-up rates (the limit at 100)."""
    from benchmarks import _report
    from benchmarks.run import CONTENDERS

    tasks = [{"name": s.name, "label": s.title, "kind": s.kind, "agents": 2 if s.is_game else 1, "kwargs": {},
              "env_id": s.env_id, "reference_id": s.reference_id} for s in (SINGLE_AGENT_TASKS[0], GAMES[0])]
    grid = {}
    worlds, threads = (8, 2) if quick else (_report.TARGET_WORLDS, _report.TARGET_THREADS)
    for t in tasks:
        ours = "agent_vec" if t["kind"] == "game" else "vector"
        grid[(t["name"], "limit", worlds, threads)] = [100.0]
        grid[(t["name"], ours, worlds, threads)] = [99.0]
        grid[(t["name"], "core", 1, 1)] = [50.0]
        grid[(t["name"], "limit", 1, 1)] = [100.0]
    machine = {"cpu": "test cpu", "logical_cores": 2, "usable_cores": 2, "python": "3", "versions": {}}
    settings = {"quick": quick, "only": None, "rounds": 1, "budget_seconds": 0.05, "warmup_seconds": 0.01,
                "tasks": [t["name"] for t in tasks], "peer_tasks": [t["name"] for t in tasks], "async_cap": 8,
                "target_worlds": worlds, "target_threads": threads}
    return _report.assemble(grid=grid, scaling={}, memory=[], tasks=tasks, contenders=CONTENDERS, machine=machine,
                            settings=settings, worker_versions={}, peer_ids={}, unavailable=[], errors=[],
                            skipped={}, started=0.0, duration=60.0)


def test_quick_report_shows_figures_without_verdicts():
    from benchmarks import _report

    quick = _synthetic_results(quick=True)
    assert all(row["met"] is None for row in quick["target_table"] + quick["targets"])
    text = _report.markdown(quick)
    assert _report.QUICK_NOTE in text
    assert "| task | limit | ours | ours / limit | WorldPool.step_all / limit |\n" in text
    for word in ("| verdict |", "NOT MET", "| met", "goal >="):
        assert word not in text.split("## Throughput")[0], word
    assert f"| {SINGLE_AGENT_TASKS[0].title} | 100 | 99 | 0.99 |" in text  # the figures stay
    assert "Other comparisons (single core" in text

    full = _synthetic_results(quick=False)
    assert all(row["met"] is not None for row in full["target_table"])
    text = _report.markdown(full)
    assert _report.QUICK_NOTE not in text and "| goal | verdict |" in text and "| met |" in text
