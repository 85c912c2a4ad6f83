"""The README's task tables list every registered task (derived from the
native registry, so a task registered without its README row fails here),
and list nothing that is not registered."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from joltgym_marl.registry import GAMES, SINGLE_AGENT_TASKS, TASKS

README = Path(__file__).resolve().parents[1] / "README.md"


def _table_rows() -> list[str]:
    return [line for line in README.read_text().splitlines() if line.startswith("|")]


@pytest.mark.parametrize("spec", [pytest.param(s, id=s.name) for s in SINGLE_AGENT_TASKS])
def test_every_single_agent_task_has_a_row(spec):
    rows = [row for row in _table_rows() if f"`{spec.env_id}`" in row]
    assert rows, f"README has no table row for {spec.env_id}"
    assert any(f"`{spec.core_class}`" in row for row in rows), f"the row of {spec.env_id} names no {spec.core_class}"
    assert any(f"{spec.max_episode_steps}" in row for row in rows), \
        f"the row of {spec.env_id} does not give its {spec.max_episode_steps}-step truncation"


@pytest.mark.parametrize("spec", [pytest.param(s, id=s.name) for s in GAMES])
def test_every_game_has_a_row(spec):
    assert any(f"`{spec.module_name}`" in row for row in _table_rows()), f"README has no table row for {spec.module_name}"


def test_tables_name_only_registered_tasks():
    known = {spec.env_id for spec in TASKS.values()}
    for row in _table_rows():
        for named in re.findall(r"`(joltgym_marl/[A-Za-z0-9]+-v\d+)`", row):
            assert named in known, f"README's table names {named}, which is not registered"
