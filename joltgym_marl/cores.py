"""Single-world native cores, one class per registered single-agent task
(``HalfCheetahCore``, ``HopperCore``, ...), derived from the task registry.

Each is one MuJoCo world of a task, stepped natively::

    core = HalfCheetahCore(ctrl_cost_weight=0.2)
    obs, info = core.reset(seed=0)
    obs, reward, terminated, truncated, info = core.step(action)

They accept the keyword arguments of the matching Gymnasium ``*-v5`` env
(plus ``max_episode_steps``, default Gymnasium's; ``None`` disables
truncation), expose ``obs_dim``, ``act_dim``, ``get_state()`` /
``set_state(qpos, qvel)``, and pickle by being re-created from their arguments.
"""

from __future__ import annotations

from joltgym_marl import _signatures
from joltgym_marl._native import core as _core
from joltgym_marl.registry import SINGLE_AGENT_TASKS, TaskSpec

SingleAgentCore = _core.SingleAgentCore


def _core_class(spec: TaskSpec) -> type:
    task, limit = spec.name, spec.max_episode_steps

    def __init__(self, *, max_episode_steps: int | None = limit, **kwargs):
        SingleAgentCore.__init__(self, task, max_episode_steps=max_episode_steps, **kwargs)

    cls = type(spec.core_class, (SingleAgentCore,), {
        "__init__": __init__, "__module__": __name__, "__qualname__": spec.core_class, "task_name": task})
    return _signatures.declare(
        cls, spec, _signatures.CORE,
        f"One native world of the '{task}' task: reset(seed=None) -> (obs, info), step(action) -> "
        f"(obs, reward, terminated, truncated, info), obs_dim, act_dim, get_state() / set_state(qpos, qvel).")


CORE_CLASSES: dict[str, type] = {spec.name: _core_class(spec) for spec in SINGLE_AGENT_TASKS}
globals().update({cls.__name__: cls for cls in CORE_CLASSES.values()})

__all__ = ["CORE_CLASSES", "SingleAgentCore", *(cls.__name__ for cls in CORE_CLASSES.values())]
