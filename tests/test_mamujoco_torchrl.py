"""TorchRL's PettingZooWrapper runs mamujoco_v1.parallel_env: check_env_specs
passes and a seeded rollout equals the same wrapper's on Farama's env."""

from __future__ import annotations

import numpy as np
import pytest
from pettingzoo.utils import BaseParallelWrapper

from joltgym_marl import mamujoco_v1
from mamujoco_oracle import make_oracle

torch = pytest.importorskip("torch")
pytest.importorskip("torchrl")
from torchrl.envs import PettingZooWrapper  # noqa: E402
from torchrl.envs.utils import check_env_specs  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore:PettingZoo in TorchRL is tested:UserWarning")


class ResetInfoKeys(BaseParallelWrapper):
    """Keeps the info entries that reset gives: TorchRL's PettingZooWrapper
    builds its info spec from the reset infos, and MaMuJoCo's step infos (as
    Farama's) carry more keys (the reward terms)."""

    def reset(self, seed=None, options=None):
        obs, infos = self.env.reset(seed=seed, options=options)
        self._keys = {a: list(info) for a, info in infos.items()}
        return obs, self._keep(infos)

    def step(self, actions):
        *out, infos = self.env.step(actions)
        return (*out, self._keep(infos))

    def state(self):
        return self.env.state()

    def _keep(self, infos):
        return {a: {k: info[k] for k in self._keys[a]} for a, info in infos.items()}


def test_pettingzoo_wrapper_runs_and_equals_farama():
    ours = PettingZooWrapper(ResetInfoKeys(mamujoco_v1.parallel_env("HalfCheetah", "2x3", max_episode_steps=10)),
                             use_mask=False, return_state=True)
    check_env_specs(ours, seed=0)
    assert list(ours.group_map) == ["agent"] and len(ours.group_map["agent"]) == 2
    theirs = PettingZooWrapper(ResetInfoKeys(make_oracle("HalfCheetah", "2x3", 1, max_episode_steps=10)),
                               use_mask=False, return_state=True)
    actions = torch.as_tensor(np.random.default_rng(0).uniform(-1, 1, (25, 2, 3)), dtype=torch.float32)
    rolls = []
    for env in (ours, theirs):
        env.set_seed(4)
        steps = iter(range(25))

        def policy(td):
            td["agent", "action"] = actions[next(steps)]
            return td

        rolls.append(env.rollout(25, policy=policy, break_when_any_done=False))
    a, b = rolls
    assert a["next", "done"].sum() == 2
    for key in (("agent", "observation"), ("next", "agent", "observation"), ("next", "state"), ("next", "done")):
        torch.testing.assert_close(a[key], b[key], rtol=0, atol=0, msg=str(key))
    torch.testing.assert_close(a["next", "agent", "reward"], b["next", "agent", "reward"], rtol=0, atol=0)
