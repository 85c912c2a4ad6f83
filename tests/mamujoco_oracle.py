"""Farama's MaMuJoCo (gymnasium_robotics.mamujoco_v1), the parity oracle, and
rollouts of it and of ours from the same seed and actions."""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from gymnasium_robotics import mamujoco_v1 as farama  # noqa: E402
    from gymnasium_robotics.envs.multiagent_mujoco import obsk as farama_obsk  # noqa: E402

# Info terms that the native robots compute from a norm or a sum of squares in
# another order than NumPy's (np.linalg.norm / pairwise summation): equal to
# Farama's to within a few ulp, not bit for bit (see docs/guides/mamujoco.md).
ULP_TERMS = {"distance_from_origin", "reward_contact", "reward_dist", "reward_near"}
ULP_RTOL = 1e-14


def make_oracle(scenario, agent_conf, agent_obsk, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        env = farama.parallel_env(scenario, agent_conf, agent_obsk=agent_obsk, **kwargs)
    # Joints sharing a label (Pusher's) are ordered by Python's set iteration in
    # Farama's code (memory addresses: it changes from run to run); give the
    # oracle the same tie-break as ours (actuator index) so the test is stable.
    if getattr(env, "agent_obsk", None) is not None:
        for k_dict in env.k_dicts:
            for depth, nodes in k_dict.items():
                k_dict[depth] = sorted(nodes, key=lambda n: (n.label, -1 if n.act_ids is None else n.act_ids))
    return env


@dataclass
class Rollout:
    obs: list = field(default_factory=list)  # per step: {agent: array}
    rewards: list = field(default_factory=list)
    terminations: list = field(default_factory=list)
    truncations: list = field(default_factory=list)
    infos: list = field(default_factory=list)
    states: list = field(default_factory=list)
    ends: int = 0


def rollout(env, actions, seed):
    """Steps `env` through `actions` (a list of {agent: action}), resetting
    (unseeded: the streams continue) whenever the episode ends."""
    out = Rollout()
    obs, infos = env.reset(seed=seed)
    out.obs.append(obs)
    out.infos.append(infos)
    out.states.append(env.state())
    for act in actions:
        obs, rew, term, trunc, infos = env.step(act)
        out.obs.append(obs)
        out.rewards.append(rew)
        out.terminations.append(term)
        out.truncations.append(trunc)
        out.infos.append(infos)
        out.states.append(env.state())
        if any(term.values()) or any(trunc.values()):
            out.ends += 1
            obs, infos = env.reset()
            out.obs.append(obs)
            out.infos.append(infos)
            out.states.append(env.state())
    return out


def random_actions(env, steps, seed=0):
    rng = np.random.default_rng(seed)
    return [{a: rng.uniform(env.action_space(a).low, env.action_space(a).high).astype(np.float32)
             for a in env.possible_agents} for _ in range(steps)]


def assert_same_info(ours, theirs, where):
    assert set(ours) == set(theirs), f"{where}: info keys {sorted(ours)} != {sorted(theirs)}"
    for key, value in theirs.items():
        if key in ULP_TERMS:
            np.testing.assert_allclose(ours[key], value, rtol=ULP_RTOL, atol=0, err_msg=f"{where}: {key}")
        else:
            assert np.array_equal(ours[key], value), f"{where}: info {key}: {ours[key]!r} != {value!r}"


def assert_same_rollout(ours: Rollout, theirs: Rollout, reward_rtol=0.0):
    assert len(ours.obs) == len(theirs.obs) and ours.ends == theirs.ends
    for t, (a, b) in enumerate(zip(ours.obs, theirs.obs)):
        assert a.keys() == b.keys()
        for agent in b:
            assert a[agent].dtype == np.float64 == b[agent].dtype, (t, agent)
            assert np.array_equal(a[agent], b[agent]), f"obs {t} {agent}: max diff {np.abs(a[agent] - b[agent]).max()}"
    for t, (a, b) in enumerate(zip(ours.states, theirs.states)):
        assert a.dtype == b.dtype == np.float64 and np.array_equal(a, b), f"state {t}"
    for t, (a, b) in enumerate(zip(ours.rewards, theirs.rewards)):
        for agent in b:
            if reward_rtol:
                np.testing.assert_allclose(a[agent], b[agent], rtol=reward_rtol, atol=0, err_msg=f"reward {t}")
            else:
                assert a[agent] == b[agent], f"reward {t} {agent}: {a[agent]!r} != {b[agent]!r}"
    for name in ("terminations", "truncations"):
        for t, (a, b) in enumerate(zip(getattr(ours, name), getattr(theirs, name))):
            assert a == {k: bool(v) for k, v in b.items()}, f"{name} {t}"
    for t, (a, b) in enumerate(zip(ours.infos, theirs.infos)):
        for agent in b:
            assert_same_info(a[agent], b[agent], f"info {t} {agent}")
