"""TorchRL's own wrappers on our envs (the ``torchrl`` extra): ``GymWrapper`` /
``GymEnv`` on every single-agent task and on the native vector env,
``PettingZooWrapper`` on every game; TorchRL's ``check_env_specs`` passes, and
rollouts equal those of the same wrappers on Gymnasium's ``-v5`` envs."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
from conftest import GAME_NAMES, GYM_IDS, REFERENCE_IDS, SINGLE_TASKS
from gymnasium.vector import AutoresetMode

import joltgym_marl
from joltgym_marl import MULTI_AGENT_ENVS

torch = pytest.importorskip("torch")
pytest.importorskip("torchrl")
from torchrl.envs import GymEnv, GymWrapper, PettingZooWrapper  # noqa: E402
from torchrl.envs.utils import check_env_specs  # noqa: E402

# TorchRL logs at INFO level on every check; it also warns that it was tested
# with another PettingZoo version.
pytestmark = pytest.mark.filterwarnings("ignore:PettingZoo in TorchRL is tested:UserWarning")
GAME_MODULES = {spec_name: MULTI_AGENT_ENVS[joltgym_marl.TASKS[spec_name].module_name] for spec_name in GAME_NAMES}


def replay(actions: torch.Tensor):
    """A TorchRL policy that plays ``actions[t]`` at step ``t``."""
    step = iter(range(len(actions)))

    def policy(td):
        td["action"] = actions[next(step)]
        return td

    return policy


def rollout(env, actions: torch.Tensor, seed: int):
    env.set_seed(seed)
    return env.rollout(len(actions), policy=replay(actions), break_when_any_done=False)


@pytest.mark.parametrize("task", SINGLE_TASKS)
def test_gym_wrapper_equals_its_run_on_gymnasiums_env(task):
    """check_env_specs on ``GymEnv(id)`` and ``GymWrapper(gymnasium.make(id))``;
    a seeded rollout (episodes truncated at 20 steps, reset by TorchRL) equals
    the one on Gymnasium's ``-v5`` env, observation for observation."""
    check_env_specs(GymEnv(GYM_IDS[task]), seed=0)
    ours = GymWrapper(gymnasium.make(GYM_IDS[task], max_episode_steps=20))
    theirs = GymWrapper(gymnasium.make(REFERENCE_IDS[task], max_episode_steps=20))
    check_env_specs(ours, seed=0)
    space = theirs._env.action_space
    actions = torch.as_tensor(np.random.default_rng(0).uniform(space.low, space.high, (50, *space.shape)),
                              dtype=torch.float32)
    a, b = rollout(ours, actions, 3), rollout(theirs, actions, 3)
    for key in ("observation", ("next", "observation"), ("next", "done"), ("next", "truncated")):
        torch.testing.assert_close(a[key], b[key], rtol=0, atol=0, msg=str(key))
    torch.testing.assert_close(a["next", "reward"], b["next", "reward"], rtol=0, atol=0)
    assert a["next", "done"].sum() >= 2
    ours.close()
    theirs.close()


def vector_env(task: str, n: int, mode: AutoresetMode, reference: bool = False):
    if reference:
        return gymnasium.make_vec(REFERENCE_IDS[task], num_envs=n, vectorization_mode="sync", max_episode_steps=9,
                                  vector_kwargs={"autoreset_mode": mode})
    return gymnasium.make_vec(GYM_IDS[task], num_envs=n, vectorization_mode="vector_entry_point",
                              max_episode_steps=9, autoreset_mode=mode, num_threads=2)


@pytest.mark.parametrize("task", ["hopper", "half_cheetah"])
def test_gym_wrapper_on_the_vector_env(task):
    """TorchRL batches a Gymnasium vector env in same-step auto-reset mode
    (it refuses next-step mode, ours as SyncVectorEnv): a batch of
    ``num_envs``, check_env_specs passes, and a seeded rollout equals the one
    on SyncVectorEnv, the ended episodes' last observations included."""
    n = 3
    for reference in (False, True):
        with pytest.raises(RuntimeError, match="auto-reset mode must be one of SAME_STEP or DISABLED"):
            GymWrapper(vector_env(task, n, AutoresetMode.NEXT_STEP, reference))
    ours = GymWrapper(vector_env(task, n, AutoresetMode.SAME_STEP))
    theirs = GymWrapper(vector_env(task, n, AutoresetMode.SAME_STEP, reference=True))
    assert ours.batch_size == torch.Size([n])
    check_env_specs(ours, seed=0)
    space = theirs._env.single_action_space
    actions = torch.as_tensor(np.random.default_rng(1).uniform(space.low, space.high, (30, n, *space.shape)),
                              dtype=torch.float32)
    a, b = rollout(ours, actions, 5), rollout(theirs, actions, 5)
    assert a.batch_size == torch.Size([n, 30])
    for key in ("observation", ("next", "observation"), ("next", "done"), ("next", "truncated")):
        torch.testing.assert_close(a[key], b[key], rtol=0, atol=0, msg=str(key))
    assert a["next", "done"].sum() >= n * 3
    ours.close()
    theirs.close()


@pytest.mark.parametrize("game", GAME_NAMES)
def test_pettingzoo_wrapper_on_every_game_with_nothing_in_between(game):
    """``PettingZooWrapper(game)`` as it is: reset infos carry every key step
    infos carry, all numeric (``outcome`` an :class:`joltgym_marl.Outcome`
    code), so TorchRL's info spec (built from reset()'s) fits every step: it
    passes check_env_specs and rolls out over episode ends, with one group
    per role (one of all agents for a symmetric game)."""
    module = GAME_MODULES[game]
    env = PettingZooWrapper(module.parallel_env(max_cycles=10), use_mask=False)
    check_env_specs(env, seed=0)
    # TorchRL groups agents by the name before "_<k>": one group for a
    # symmetric game, one per role for the role games.
    names = module.parallel_env(max_cycles=10).possible_agents
    groups = list(dict.fromkeys(a.rsplit("_", 1)[0] for a in names))
    assert list(env.group_map) == groups
    td = env.rollout(25, break_when_any_done=False)
    assert td["next", "done"].sum() == 2  # at steps 10 and 20
    for group in groups:
        agents = len(env.group_map[group])
        assert td["next", group, "reward"].shape == (25, agents, 1)
        assert torch.isfinite(td["next", group, "observation"]).all()
        info = td["next", group, "info"]
        if "outcome" in info.keys():
            outcomes = info["outcome"]
            assert set(outcomes.unique().tolist()) <= {int(o) for o in joltgym_marl.Outcome}
            # ended episodes (steps 10, 20) are decided; the others ongoing
            ongoing = outcomes[[t for t in range(25) if t not in (9, 19)]]
            assert (ongoing == joltgym_marl.Outcome.ONGOING).all()
    env.close()


def test_extras_pin_the_installed_versions():
    """The ``torchrl`` extra's exact pins are the versions these tests ran."""
    import importlib.metadata
    import re
    from pathlib import Path

    pyproject = (Path(__file__).resolve().parents[1] / "pyproject.toml").read_text()
    for package in ("torchrl", "tensordict"):
        pinned = re.search(rf'"{package}==([^"]+)"', pyproject).group(1)
        assert importlib.metadata.version(package) == pinned, package
