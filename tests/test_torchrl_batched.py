"""joltgym_marl.torchrl: N worlds of one native pool as ONE TorchRL env.

TorchRL's ``check_env_specs`` passes on every game and on MaMuJoCo confs; the
batched env's world ``i`` equals TorchRL's own ``PettingZooWrapper`` on the
one-world env seeded ``seed + i`` (our game's ``parallel_env``; for MaMuJoCo,
Farama's module), step for step across episode ends that fall at different
steps in different worlds; a ``SyncDataCollector`` steps every world in one
call; a partial ``_reset`` resets only the masked worlds.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from conftest import GAME_NAMES
from pettingzoo.utils import BaseParallelWrapper

import joltgym_marl
from joltgym_marl import MULTI_AGENT_ENVS
from mamujoco_oracle import make_oracle

torch = pytest.importorskip("torch")
pytest.importorskip("torchrl")
with warnings.catch_warnings():  # (TorchRL 0.14 warns about its own deprecated class while importing)
    warnings.simplefilter("ignore", DeprecationWarning)
    from torchrl.collectors import Collector  # noqa: E402  (TorchRL 0.14's SyncDataCollector)
from torchrl.envs import PettingZooWrapper  # noqa: E402
from torchrl.envs.utils import MarlGroupMapType, check_env_specs  # noqa: E402

from joltgym_marl.torchrl import BatchedGameEnv, BatchedMaMuJoCoEnv, default_group_map  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore:PettingZoo in TorchRL is tested:UserWarning")

# Confs with one group of equal agents, ragged ones (padded), roles of
# different sizes, one agent (conf None), a generated robot and a coupled pair.
MAMUJOCO_CONFS = [("HalfCheetah", "2x3"), ("HalfCheetah", "6x1"), ("Ant", "4x2"), ("Hopper", "3x1"),
                  ("Humanoid", "9|8"), ("Walker2d", "3x2"), ("Pusher", "3p"), ("Swimmer", None),
                  ("ManySegmentSwimmer", "10x2"), ("CoupledHalfCheetah", "1p1")]


class ResetInfoKeys(BaseParallelWrapper):
    """Keeps the numeric info entries that reset gives: TorchRL's
    PettingZooWrapper builds its info spec from the reset infos (the batched
    env carries no infos; this makes the oracle run)."""

    def reset(self, seed=None, options=None):
        obs, infos = self.env.reset(seed=seed, options=options)
        self._keys = {a: [k for k, v in info.items() if not isinstance(v, str)] for a, info in infos.items()}
        return obs, self._keep(infos)

    def step(self, actions):
        *out, infos = self.env.step(actions)
        return (*out, self._keep(infos))

    def state(self):
        return self.env.state()

    def _keep(self, infos):
        return {a: {k: info[k] for k in self._keys[a]} for a, info in infos.items()}


def replay(actions: dict):
    """A policy that plays ``actions[group][t]`` at step t."""
    step = iter(range(len(next(iter(actions.values())))))

    def policy(td):
        t = next(step)
        for group, a in actions.items():
            td[group, "action"] = a[t]
        return td

    return policy


def random_actions(env, steps: int, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    out = {}
    for group in env.group_map:
        spec = env.full_action_spec[group, "action"]
        low, high = spec.space.low.numpy(), spec.space.high.numpy()
        out[group] = torch.as_tensor(rng.uniform(low, high, (steps, *spec.shape)), dtype=torch.float32)
    return out


def equal_to_wrapped_worlds(ours, make_world, steps: int, seed: int, group_map=None, keys=("observation",)):
    """Our rollout equals, world by world, PettingZooWrapper's on the one-world env seeded seed + i."""
    actions = random_actions(ours, steps, seed)
    ours.set_seed(seed)
    a = ours.rollout(steps, policy=replay(actions), break_when_any_done=False)
    for i in range(ours.num_worlds):
        theirs = PettingZooWrapper(ResetInfoKeys(make_world()), use_mask=False, group_map=group_map)
        assert theirs.group_map == ours.group_map
        theirs.set_seed(seed + i)
        b = theirs.rollout(steps, policy=replay({g: x[:, i] for g, x in actions.items()}),
                           break_when_any_done=False)
        for group in ours.group_map:
            for key in [(group, k) for k in keys] + [("next", group, k) for k in (*keys, "reward", "done")]:
                torch.testing.assert_close(a[key][i], b[key], rtol=0, atol=0, msg=f"world {i} {key}")
        for key in ("done", ("next", "done"), ("next", "terminated"), ("next", "truncated")):
            torch.testing.assert_close(a[key][i], b[key], rtol=0, atol=0, msg=f"world {i} {key}")
        theirs.close()
    return a


@pytest.mark.parametrize("game", GAME_NAMES)
def test_every_game_passes_check_env_specs_and_equals_pettingzoo_wrapper(game):
    module = MULTI_AGENT_ENVS[joltgym_marl.TASKS[game].module_name]
    ours = BatchedGameEnv(game, 3, num_threads=2, max_cycles=8)
    assert ours.batch_size == torch.Size([3])
    assert ours.group_map == default_group_map(ours.agent_names)
    check_env_specs(ours, seed=0)
    a = equal_to_wrapped_worlds(ours, lambda: module.parallel_env(max_cycles=8), 20, seed=5)
    assert a["next", "done"].sum() >= 3 * 2
    ours.close()


@pytest.mark.parametrize(("scenario", "conf"), MAMUJOCO_CONFS, ids=[f"{s}-{c}" for s, c in MAMUJOCO_CONFS])
def test_mamujoco_confs_pass_check_env_specs(scenario, conf):
    env = BatchedMaMuJoCoEnv(scenario, conf, 3, num_threads=2, max_episode_steps=6, return_state=True)
    check_env_specs(env, seed=0)
    td = env.rollout(14, break_when_any_done=False)
    assert td["next", "done"].sum() == 3 * 2
    assert td["next", "state"].dtype == torch.float64
    env.close()
    env = BatchedMaMuJoCoEnv(scenario, conf, 2, num_threads=1, dtype=torch.float32)
    check_env_specs(env, seed=0)
    assert env.full_observation_spec["agent", "observation"].dtype == torch.float32
    env.close()


def test_mamujoco_equals_farama_through_pettingzoo_wrapper_across_uneven_episode_ends():
    """Hopper falls after a different number of random steps in each world: the
    partial resets TorchRL asks for (one world at a time) restart exactly the
    episodes Farama's env restarts, each world on its own seed + i stream."""
    make = lambda: make_oracle("Hopper", "3x1", 1)  # noqa: E731
    ours = BatchedMaMuJoCoEnv("Hopper", "3x1", 4, num_threads=2, group_map=MarlGroupMapType.ONE_GROUP_PER_AGENT)
    a = equal_to_wrapped_worlds(ours, make, 70, seed=11, group_map=MarlGroupMapType.ONE_GROUP_PER_AGENT)
    ends = a["next", "done"].squeeze(-1)
    assert ends.sum() >= 4
    assert len({tuple(torch.nonzero(row).flatten().tolist()) for row in ends}) > 1  # uneven ends
    ours.close()


def test_mamujoco_one_group_equals_farama_with_state():
    ours = BatchedMaMuJoCoEnv("HalfCheetah", "2x3", 3, num_threads=2, max_episode_steps=7, return_state=True)
    equal_to_wrapped_worlds(ours, lambda: make_oracle("HalfCheetah", "2x3", 1, max_episode_steps=7), 16, seed=2)
    actions = random_actions(ours, 9, 0)
    ours.set_seed(3)
    a = ours.rollout(9, policy=replay(actions), break_when_any_done=False)
    theirs = PettingZooWrapper(ResetInfoKeys(make_oracle("HalfCheetah", "2x3", 1, max_episode_steps=7)),
                               use_mask=False, return_state=True)
    theirs.set_seed(4)
    b = theirs.rollout(9, policy=replay({g: x[:, 1] for g, x in actions.items()}), break_when_any_done=False)
    torch.testing.assert_close(a["next", "state"][1], b["next", "state"], rtol=0, atol=0)
    ours.close()


def test_ragged_group_is_padded_with_zeros():
    """HalfCheetah 6x1's agents observe 9, 9, 8, 9, 9, 8 values: one group of
    [6, 9], each agent's own values first, zeros after; its 1-wide actions are
    the first entry of each row (the group's action is 1 wide here too)."""
    env = BatchedMaMuJoCoEnv("HalfCheetah", "6x1", 2, num_threads=1, seed=0)
    per_agent = BatchedMaMuJoCoEnv("HalfCheetah", "6x1", 2, num_threads=1, seed=0,
                                   group_map=MarlGroupMapType.ONE_GROUP_PER_AGENT)
    td, td1 = env.reset(), per_agent.reset()
    obs = td["agent", "observation"]
    assert obs.shape == (2, 6, 9)
    for k, agent in enumerate(per_agent.agent_names):
        own = td1[agent, "observation"][:, 0]
        torch.testing.assert_close(obs[:, k, :own.shape[-1]], own, rtol=0, atol=0)
        assert (obs[:, k, own.shape[-1]:] == 0).all()
    # Ant 8x1 (HARL's): ragged observations, one group, and a step runs.
    ant = BatchedMaMuJoCoEnv("Ant", "8x1", 2, num_threads=1, seed=0)
    assert ant.full_observation_spec["agent", "observation"].shape == (2, 8, 32)
    ant.rollout(3)
    for e in (env, per_agent, ant):
        e.close()


def test_ragged_actions_are_scattered_to_their_actuators():
    """Humanoid 9|8 in one group: the group's action is 9 wide; the second
    agent's 9th entry is ignored. The step equals per-agent groups' step."""
    one = BatchedMaMuJoCoEnv("Humanoid", "9|8", 2, num_threads=1, seed=1)
    two = BatchedMaMuJoCoEnv("Humanoid", "9|8", 2, num_threads=1, seed=1,
                             group_map=MarlGroupMapType.ONE_GROUP_PER_AGENT)
    assert one.full_action_spec["agent", "action"].shape == (2, 2, 9)
    action = torch.rand(2, 2, 9) * 0.8 - 0.4
    td = one.reset()
    td["agent", "action"] = action
    td2 = two.reset()
    td2["agent_0", "action"] = action[:, :1, :9]
    td2["agent_1", "action"] = action[:, 1:, :8]
    a, b = one.step(td), two.step(td2)
    torch.testing.assert_close(a["next", "agent", "observation"][:, 1, :170], b["next", "agent_1", "observation"][:, 0])
    torch.testing.assert_close(a["next", "agent", "reward"][:, 0], b["next", "agent_0", "reward"][:, 0])
    one.close()
    two.close()


def test_collector_steps_every_world_in_one_call():
    """A Collector's (TorchRL 0.14's SyncDataCollector) batch of frames_per_batch = worlds x T is T calls of
    the pool's step, each stepping every world."""
    env = BatchedGameEnv("cheetah_race", 8, num_threads=2, max_cycles=50, num_agents=3)
    calls = []
    pool = env.pool

    class Counting:  # the pool, counting its steps
        def __getattr__(self, name):
            return getattr(pool, name)

        def step_all(self, actions):
            calls.append(np.asarray(actions).shape)
            return pool.step_all(actions)

    collector = Collector(env, None, frames_per_batch=8 * 30, total_frames=8 * 60)
    env._pool = Counting()
    batches = [b.clone() for b in collector]
    collector.shutdown()
    env._pool = pool
    assert len(batches) == 2
    assert batches[0].batch_size == torch.Size([8, 30])
    assert calls == [(8, 3, 6)] * 60
    assert batches[1]["next", "done"].sum() == 8  # the episodes of 50 steps end at step 50
    assert torch.isfinite(batches[1]["next", "cheetah", "reward"]).all()
    env.close()


def test_partial_reset_resets_only_the_masked_worlds():
    env = BatchedGameEnv("sumo", 4, num_threads=2, seed=0)
    td = env.reset()
    for _ in range(5):
        td = env.rand_step(td)["next"]
    steps = env.pool.elapsed_steps.copy()
    before = td["ant", "observation"].clone()
    mask = torch.tensor([[True], [False], [False], [True]])
    td.set("_reset", mask)
    out = env.reset(td)
    assert list(env.pool.elapsed_steps) == [0, steps[1], steps[2], 0]
    torch.testing.assert_close(out["ant", "observation"][1:3], before[1:3], rtol=0, atol=0)
    assert not torch.equal(out["ant", "observation"][0], before[0])
    env.close()


def test_seed_gives_world_i_seed_plus_i():
    a = BatchedGameEnv("cheetah_race", 3, num_threads=1, seed=7)
    b = BatchedGameEnv("cheetah_race", 1, num_threads=1, seed=9)
    torch.testing.assert_close(a.reset()["cheetah", "observation"][2], b.reset()["cheetah", "observation"][0])
    c = BatchedGameEnv("cheetah_race", 3, num_threads=2, seed=8)
    assert not torch.equal(a.reset()["cheetah", "observation"], c.reset()["cheetah", "observation"])
    for e in (a, b, c):
        e.close()


def test_observations_are_fresh_tensors_each_step():
    """A rollout keeps every step: the tensors handed out are not the pool's buffers."""
    env = BatchedGameEnv("cheetah_race", 2, num_threads=1, seed=0)
    td = env.rollout(4)
    obs = td["next", "cheetah", "observation"]
    assert not torch.equal(obs[:, 0], obs[:, 1])
    assert not np.shares_memory(obs.numpy(), env.pool.obs)
    env.close()


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="dtype should be torch.float32 or torch.float64"):
        BatchedGameEnv("sumo", 2, dtype=torch.int32)
    with pytest.raises(ValueError, match="game should be one of the games"):
        BatchedGameEnv("half_cheetah", 2)
    with pytest.raises(ValueError, match="num_worlds should be >= 1"):
        BatchedGameEnv("sumo", 0)
    with pytest.raises(TypeError, match="group_map should be None, a dict"):
        BatchedGameEnv("sumo", 2, group_map=["ant_0"])
    with pytest.raises(Exception, match="ant_1"):  # TorchRL's check_marl_grouping names the missing agent
        BatchedGameEnv("sumo", 2, group_map={"ant": ["ant_0"]})
    with pytest.raises(ValueError, match="seed"):
        BatchedGameEnv("sumo", 2, seed=-1)
    with pytest.raises(TypeError, match="unknown keyword|unexpected keyword|bogus"):
        BatchedGameEnv("sumo", 2, bogus=1)
    env = BatchedGameEnv("sumo", 2, num_threads=1, seed=0)
    env.close()
    with pytest.raises(joltgym_marl.StateError, match="closed"):
        env.reset()
