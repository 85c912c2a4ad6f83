"""The task tables of the README and of the guides list every registered task
(derived from the native registry, so a task registered without its row fails
here), and list nothing that is not registered. The README has both tables;
the Gymnasium guide has the robots', the PettingZoo guide the games'. (Each
task's own page is generated from the registry: tests/test_docs_site.py.)"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from joltgym_marl.registry import GAMES, SINGLE_AGENT_TASKS, TASKS

ROOT = Path(__file__).resolve().parents[1]
ROBOT_TABLES = ["README.md", "docs/guides/gymnasium.md"]
GAME_TABLES = ["README.md", "docs/guides/pettingzoo.md"]


def _table_rows(page: str) -> list[str]:
    return [line for line in (ROOT / page).read_text().splitlines() if line.startswith("|")]


@pytest.mark.parametrize("page", ROBOT_TABLES)
@pytest.mark.parametrize("spec", [pytest.param(s, id=s.name) for s in SINGLE_AGENT_TASKS])
def test_every_single_agent_task_has_a_row(spec, page):
    rows = [row for row in _table_rows(page) if f"`{spec.env_id}`" in row]
    assert rows, f"{page} has no table row for {spec.env_id}"
    assert any(f"`{spec.core_class}`" in row for row in rows), f"the row of {spec.env_id} names no {spec.core_class}"
    assert any(f"{spec.max_episode_steps}" in row for row in rows), \
        f"the row of {spec.env_id} does not give its {spec.max_episode_steps}-step truncation"


@pytest.mark.parametrize("page", GAME_TABLES)
@pytest.mark.parametrize("spec", [pytest.param(s, id=s.name) for s in GAMES])
def test_every_game_has_a_row(spec, page):
    assert any(f"`{spec.module_name}`" in row for row in _table_rows(page)), \
        f"{page} has no table row for {spec.module_name}"


@pytest.mark.parametrize("page", sorted(set(ROBOT_TABLES + GAME_TABLES)))
def test_tables_name_only_registered_tasks(page):
    known = {spec.env_id for spec in TASKS.values()}
    for row in _table_rows(page):
        for named in re.findall(r"`(joltgym_marl/[A-Za-z0-9]+-v\d+)`", row):
            assert named in known, f"{page}'s table names {named}, which is not registered"


@pytest.mark.parametrize("spec", [pytest.param(s, id=s.name) for s in TASKS.values()])
def test_the_readme_says_which_engines_each_task_runs_on(spec):
    """The README's tables end with an engines column: the registry's (TaskSpec.engines)."""
    key = f"`{spec.env_id}`" if not spec.is_game else f"`{spec.module_name}`"
    rows = [row for row in _table_rows("README.md") if row.startswith(f"| {key}")]
    assert len(rows) == 1, f"README.md should have one table row starting with {key}, has {len(rows)}"
    engines = rows[0].rstrip(" |").rsplit("|", 1)[1].strip()
    assert engines == ", ".join(spec.engines), f"README.md says {key} runs on {engines!r}, the registry {spec.engines}"
