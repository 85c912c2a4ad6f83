"""One resolver for task names: every name of every task, spelled loosely,
reaches the same task through every entry point; an unknown or partial name
raises a ValueError naming the close matches and every task."""

from __future__ import annotations

import re

import gymnasium
import pytest

import joltgym_marl
from joltgym_marl import MultiAgentEnv, SingleAgentCore, WorldPool, _core
from joltgym_marl.registry import GAMES, SINGLE_AGENT_TASKS, TASKS, resolve

SPECS = list(TASKS.values())


def camel(name: str) -> str:
    return "".join(word.capitalize() for word in name.split("_"))


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.name)
def test_the_one_rule_derives_every_name_from_the_native_name(spec):
    # docs/guides/cli_and_naming.md: title = the native name in CamelCase; ids and classes from the title.
    assert spec.title == camel(spec.name)
    if spec.is_game:
        assert spec.env_id == f"{spec.name}_v0" == spec.module_name
        assert spec.names == (spec.name, spec.title, spec.env_id)
        assert getattr(joltgym_marl, spec.module_name).parallel_env().metadata["name"] == spec.env_id
    else:
        assert spec.env_id == f"joltgym_marl/{spec.title}-v0" and spec.reference_id == f"{spec.title}-v5"
        assert spec.names == (spec.name, spec.title, spec.env_id, spec.reference_id, f"{spec.title}Core",
                              f"{spec.title}Env", f"{spec.title}VectorEnv")
        assert getattr(joltgym_marl, f"{spec.title}Core").task_name == spec.name
        assert gymnasium.spec(spec.env_id).entry_point == f"joltgym_marl.envs:{spec.title}Env"


def loose_spellings(name: str) -> set[str]:
    """A name as people type it: upper, lower, dashes, spaces, no separators."""
    words = re.findall(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])", name.replace("joltgym_marl/", ""))
    return {name, name.lower(), name.upper(), "-".join(w.lower() for w in words), " ".join(words),
            "".join(words), "_".join(w.lower() for w in words)}


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.name)
def test_every_spelling_of_every_name_resolves_to_its_task(spec):
    for name in spec.names:
        for spelling in loose_spellings(name):
            assert _core.resolve_task(spelling) == spec.name, spelling
            assert resolve(spelling) is spec
    assert resolve(f"joltgym_marl/{spec.name}") is spec  # the namespace is optional


def test_no_name_of_one_task_is_a_spelling_of_another():
    # Ambiguity would need two tasks sharing a name; the registry has none.
    owner = {}
    for spec in SPECS:
        for name in spec.names:
            key = re.sub(r"[^a-z0-9]", "", name.lower()).removeprefix("joltgymmarl")
            assert owner.setdefault(key, spec.name) == spec.name, (name, owner[key])


@pytest.mark.parametrize("name, close", [
    ("halfchetah", ["half_cheetah"]),
    ("HalfCheetah-v3", ["half_cheetah"]),
    ("humanod", ["humanoid"]),
    ("sumo_v1", ["sumo"]),
    ("walker", ["walker2d"]),
    ("cheetah", ["cheetah_race", "half_cheetah"]),
    ("pendulum", ["inverted_double_pendulum", "inverted_pendulum"]),
])
def test_a_typo_or_a_part_names_its_close_matches_and_every_task(name, close):
    with pytest.raises(ValueError) as info:
        WorldPool(name, 1)
    message = str(info.value)
    assert message.startswith(f"unknown task '{name}'; did you mean "), message
    suggested = message.split("did you mean ", 1)[1].split("?", 1)[0]
    assert set(re.findall(r"'([^']+)'", suggested)) == set(close), suggested
    assert "? expected one of: " + " ".join(f"'{n}'" for n in TASKS) in message


def test_an_unknown_name_lists_every_task_and_how_names_may_be_spelled():
    for name in ["nope", "", "joltgym_marl.envs.sumo_v0"]:
        with pytest.raises(ValueError, match=re.escape(f"unknown task '{name}'; expected one of: 'ant'")) as info:
            resolve(name)
        assert "in any case, with or without '_', '-' or ' '" in str(info.value)


def test_every_entry_point_takes_natural_spellings_and_keeps_the_native_name():
    single, game = SINGLE_AGENT_TASKS[0], GAMES[0]
    with WorldPool(single.title, 1) as pool:
        assert pool.task == single.name
    with WorldPool(f"{single.title}-v0", 1) as pool:
        assert pool.task == single.name
    with WorldPool(game.env_id.replace("_", "-"), 1) as pool:
        assert pool.task == game.name
    assert SingleAgentCore(single.title.upper()).task == single.name
    assert MultiAgentEnv(game.title).game == game.name
    vector = joltgym_marl.NativeVectorEnv(single.env_id, 1)
    assert vector.pool.task == single.name
    vector.close()


def test_resolve_by_kind_and_bad_arguments():
    single, game = SINGLE_AGENT_TASKS[0], GAMES[0]
    assert resolve(game.title, kind="game") is game
    with pytest.raises(ValueError, match=re.escape(f"{single.title!r} is the single-agent task {single.name!r}; "
                                                   f"expected a game: '{game.name}'")):
        resolve(single.title, kind="game")
    with pytest.raises(ValueError, match=re.escape("kind should be None or one of 'single_agent', 'game', "
                                                   "got 'robot'")):
        resolve(single.name, kind="robot")
    with pytest.raises(TypeError, match=re.escape("a task name should be a str, got int 3")):
        resolve(3)


def test_tasks_lists_every_registered_task_with_its_kind_and_ids():
    records = joltgym_marl.tasks()
    assert [r.name for r in records] == list(TASKS) == list(_core.tasks())
    for r in records:
        spec = TASKS[r.name]
        assert r.spec is spec and r.kind == spec.kind and r.names == spec.names and r.engines == spec.engines
        assert r.engines[0] == "mujoco" and set(r.engines) <= {"mujoco", "jolt"}
        if r.kind == "game":
            assert (r.gymnasium_id, r.core_class, r.vector_class) == (None, None, None)
            assert r.pettingzoo_module == spec.env_id and hasattr(joltgym_marl, r.pettingzoo_module)
        else:
            assert r.pettingzoo_module is None and r.gymnasium_id in gymnasium.registry
            assert hasattr(joltgym_marl, r.core_class) and r.reference_id == spec.reference_id
    assert {r.name for r in joltgym_marl.tasks("game")} == {s.name for s in GAMES}
    assert {r.name for r in joltgym_marl.tasks("single_agent")} == {s.name for s in SINGLE_AGENT_TASKS}
    assert joltgym_marl.task(GAMES[0].title.lower()) == joltgym_marl.tasks("game")[0]
    with pytest.raises(ValueError, match="kind should be None or one of 'single_agent', 'game', got 'games'"):
        joltgym_marl.tasks("games")
