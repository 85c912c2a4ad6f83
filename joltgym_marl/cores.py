"""Single-world native cores: ``HalfCheetahCore``, ``HumanoidCore``, ``AntCore``.

Each is one MuJoCo world of a task, stepped natively::

    core = HalfCheetahCore(ctrl_cost_weight=0.2)
    obs, info = core.reset(seed=0)
    obs, reward, terminated, truncated, info = core.step(action)

They accept the keyword arguments of the matching Gymnasium ``*-v5`` env
(plus ``max_episode_steps``, default 1000; ``None`` disables truncation),
expose ``obs_dim``, ``act_dim``, ``get_state()`` / ``set_state(qpos, qvel)``,
and pickle by being re-created from their arguments.
"""

from __future__ import annotations

from joltgym_marl._native import core as _core

SingleAgentCore = _core.SingleAgentCore


def _make_core_class(task: str, class_name: str) -> type:
    params = _core.tasks()[task]["params"]
    lines = "\n".join(f"    {name}: {doc}" for name, doc in params)

    def __init__(self, **kwargs):
        SingleAgentCore.__init__(self, task, **kwargs)

    doc = (
        f"One native world of the '{task}' task.\n\nKeyword arguments:\n"
        f"    max_episode_steps: truncate after this many steps (None: never)\n{lines}\n"
    )
    return type(class_name, (SingleAgentCore,), {"__init__": __init__, "__doc__": doc,
                                                  "__module__": __name__, "task_name": task})


HalfCheetahCore = _make_core_class("half_cheetah", "HalfCheetahCore")
HumanoidCore = _make_core_class("humanoid", "HumanoidCore")
AntCore = _make_core_class("ant", "AntCore")

__all__ = ["AntCore", "HalfCheetahCore", "HumanoidCore", "SingleAgentCore"]
