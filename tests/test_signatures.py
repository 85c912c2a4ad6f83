"""Every constructor derived from the registry has a real signature: its
keyword arguments with their defaults (the registry's), and a docstring that
gives each one's meaning and allowed values, as help() and editors show them;
and what the signature declares is what the constructor accepts."""

from __future__ import annotations

import inspect
import pydoc

import gymnasium
import pytest

import joltgym_marl
from joltgym_marl import MULTI_AGENT_ENVS
from joltgym_marl.cores import CORE_CLASSES
from joltgym_marl.envs import ENV_CLASSES
from joltgym_marl.registry import GAMES, SINGLE_AGENT_TASKS
from joltgym_marl.vector import VECTOR_CLASSES


def entry_points():
    for spec in SINGLE_AGENT_TASKS:
        yield spec, "core", CORE_CLASSES[spec.name], {"max_episode_steps"}
        yield spec, "env", ENV_CLASSES[spec.name], {"render_mode", "width", "height"}
        yield spec, "vector", VECTOR_CLASSES[spec.name], {"num_envs", "num_threads", "max_episode_steps",
                                                          "autoreset_mode", "copy", "batch_size", "render_mode",
                                                          "render_world", "width", "height"}
    for spec in GAMES:
        module = MULTI_AGENT_ENVS[spec.module_name]
        own = {"max_cycles", "render_mode", "width", "height"}
        for name in ("parallel_env", "env", "raw_env"):
            yield spec, name, getattr(module, name), own
        yield spec, "class", getattr(module, spec.env_class), own
        yield spec, "vec_env", module.vec_env, {"num_worlds", "base_class", "num_threads", "max_cycles", "copy",
                                                "batch_size", "render_mode", "render_world"}


ENTRY_POINTS = list(entry_points())
IDS = [f"{spec.name}:{kind}" for spec, kind, _, _ in ENTRY_POINTS]


@pytest.mark.parametrize("spec, kind, target, own", ENTRY_POINTS, ids=IDS)
def test_signature_lists_every_keyword_argument_with_its_registry_default(spec, kind, target, own):
    sig = inspect.signature(target)
    params = sig.parameters
    assert not any(p.kind in (p.VAR_KEYWORD, p.VAR_POSITIONAL) for p in params.values()), sig
    assert "self" not in params
    assert set(params) == own | {p.name for p in spec.params}, sig
    for p in spec.params:
        assert params[p.name].default == p.default and params[p.name].kind is inspect.Parameter.KEYWORD_ONLY
    limit = "max_cycles" if spec.is_game else "max_episode_steps"
    if limit in params:
        assert params[limit].default == spec.max_episode_steps


@pytest.mark.parametrize("spec, kind, target, own", ENTRY_POINTS, ids=IDS)
def test_docstring_gives_each_argument_its_meaning_and_allowed_values(spec, kind, target, own):
    doc = inspect.getdoc(target)
    assert spec.doc.strip().splitlines()[0] in doc  # the task's table
    for p in spec.params:
        assert f"{p.name}={p.default!r}: {p.doc} ({p.allowed})" in doc
    for name in own - {"num_envs", "num_worlds"}:
        assert f"\n    {name}=" in doc, name
    text = pydoc.render_doc(target, renderer=pydoc.plaintext)
    assert f"{target.__name__}{inspect.signature(target)}" in text  # help() shows the real signature


@pytest.mark.parametrize("spec, kind, target, own", ENTRY_POINTS, ids=IDS)
def test_the_declared_defaults_are_accepted_and_an_unknown_keyword_is_refused(spec, kind, target, own):
    sig = inspect.signature(target)
    kwargs = {name: p.default for name, p in sig.parameters.items() if p.default is not inspect.Parameter.empty}
    if kind == "vec_env":
        args, kwargs["num_threads"] = (1,), 1
    elif kind == "vector":
        kwargs.update(num_envs=1, num_threads=1)
        args = ()
    else:
        args = ()
    env = target(*args, **kwargs)
    if hasattr(env, "close"):  # a *Core has no close: it owns no threads
        env.close()
    with pytest.raises(TypeError, match="bogus_option"):
        target(*args, bogus_option=1)


def test_help_of_a_game_function_shows_keywords_not_kwargs():
    module = MULTI_AGENT_ENVS[GAMES[0].module_name]
    text = pydoc.render_doc(module.parallel_env, renderer=pydoc.plaintext)
    assert "parallel_env(*, max_cycles=" in text and "(**kwargs" not in text


# -- render() without a render mode warns, as Gymnasium's and PettingZoo's envs do --------------

def render_surfaces():
    spec, game = SINGLE_AGENT_TASKS[0], GAMES[0]
    module = MULTI_AGENT_ENVS[game.module_name]
    return {
        "gymnasium.make": (lambda: gymnasium.make(spec.env_id), f'gymnasium.make("{spec.env_id}", '
                                                                f'render_mode="rgb_array")'),
        "make_vec": (lambda: gymnasium.make_vec(spec.env_id, 2, vectorization_mode="vector_entry_point"),
                     f'gymnasium.make_vec("{spec.env_id}", 2'),
        "NativeVectorEnv": (lambda: joltgym_marl.NativeVectorEnv(spec.name, 2), f'"{spec.env_id}", 2'),
        "parallel_env": (module.parallel_env, f'{game.module_name}.parallel_env(render_mode="rgb_array")'),
        "env": (module.env, f'{game.module_name}.env(render_mode="rgb_array")'),
        "raw_env": (module.raw_env, f'{game.module_name}.env(render_mode="rgb_array")'),
        "vec_env": (lambda: module.vec_env(2), f'{game.module_name}.vec_env(2, render_mode="rgb_array")'),
    }


@pytest.mark.parametrize("surface", list(render_surfaces()))
def test_render_without_a_render_mode_warns_and_returns_none(surface):
    make, example = render_surfaces()[surface]
    env = make()
    env.reset(seed=0)
    with pytest.warns(UserWarning) as caught:
        assert env.render() is None
    messages = [str(w.message) for w in caught]
    assert any("You are calling render method without specifying any render mode" in m and example in m
               for m in messages), messages
    env.close()


def test_sb3_surfaces_render_without_a_mode_warn_as_sb3_does():
    from joltgym_marl.vector import make_sb3_vec_env

    module = MULTI_AGENT_ENVS[GAMES[0].module_name]
    for venv in (make_sb3_vec_env(SINGLE_AGENT_TASKS[0].name, 2), module.vec_env(2, base_class="stable_baselines3")):
        venv.reset()
        with pytest.warns(UserWarning, match="no `render_mode` was passed to the env constructor"):
            assert venv.render() is None
        venv.close()
