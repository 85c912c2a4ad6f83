"""Step-for-step parity with Gymnasium's own ``*-v5`` MuJoCo envs (the oracle).

Both sides run the same MuJoCo 4.0.0 physics on the same model. After our
reset we copy Gymnasium's qpos/qvel into our core (both sides have then done
mj_resetData + set qpos/qvel + mj_forward), and from there on every step must
agree:

* observations bit for bit (float64, as Gymnasium's);
* reward exactly Gymnasium's (every term computed in NumPy's order of
  operations; the control cost of a float32 action in float32, as NumPy
  computes Gymnasium's);
* terminated/truncated on exactly the same steps;
* every info entry Gymnasium returns, equal and of the same type.
"""

from __future__ import annotations

import math

import gymnasium
import mujoco
import numpy as np
import pytest
from conftest import CORES, REFERENCE_IDS, SINGLE_TASKS, make_oracle, non_default_kwargs, random_actions, spec_of

from joltgym_marl import AntCore, HalfCheetahCore, HumanoidCore

STEPS = 1000


# Every registered task with its defaults and with a non-default configuration
# (derived from its parameters), then hand-picked configurations of some robots.
CASES = [
    case
    for task in SINGLE_TASKS
    for case in (
        pytest.param(REFERENCE_IDS[task], CORES[task], {}, id=spec_of(task).title),
        pytest.param(REFERENCE_IDS[task], CORES[task], non_default_kwargs(spec_of(task)),
                     id=f"{spec_of(task).title}-non-default"),
    )
] + [
    pytest.param(
        "HalfCheetah-v5",
        HalfCheetahCore,
        dict(exclude_current_positions_from_observation=False, ctrl_cost_weight=0.3,
             forward_reward_weight=0.7, reset_noise_scale=0.2),
        id="HalfCheetah-positions-weights",
    ),
    pytest.param(
        "Humanoid-v5",
        HumanoidCore,
        dict(include_cinert_in_observation=False, exclude_current_positions_from_observation=False,
             ctrl_cost_weight=0.05, contact_cost_weight=2e-6, contact_cost_range=(-math.inf, 0.5)),
        id="Humanoid-no-cinert-positions-costs",
    ),
    pytest.param(
        "Humanoid-v5",
        HumanoidCore,
        dict(include_cvel_in_observation=False, include_qfrc_actuator_in_observation=False,
             include_cfrc_ext_in_observation=False, terminate_when_unhealthy=False,
             healthy_reward=2.0, healthy_z_range=(1.1, 2.0), forward_reward_weight=2.0),
        id="Humanoid-small-obs-no-termination",
    ),
    pytest.param(
        "Ant-v5",
        AntCore,
        dict(main_body="torso", include_cfrc_ext_in_observation=False, ctrl_cost_weight=0.1),
        id="Ant-torso-no-cfrc",
    ),
    pytest.param(
        "Ant-v5",
        AntCore,
        dict(exclude_current_positions_from_observation=False, contact_force_range=(-0.5, 0.5),
             contact_cost_weight=1e-3, healthy_z_range=(0.3, 0.9), frame_skip=4, reset_noise_scale=0.15,
             main_body="aux_1"),
        id="Ant-positions-contact-range-frame-skip-aux-body",
    ),
]


def assert_info_matches(ours: dict, theirs: dict, where: str) -> None:
    assert set(ours) == set(theirs), f"{where}: info keys differ"
    for key, want in theirs.items():
        got = ours[key]
        assert type(got) is type(want), f"{where}: info[{key!r}] is a {type(got)}, v5's a {type(want)}"
        np.testing.assert_array_equal(got, want, err_msg=f"{where}: info[{key!r}]")


def check_reset(oracle, core, seed: int) -> None:
    """Resets both; checks our reset outputs, then syncs our state to Gymnasium's."""
    # 1. Our reset outputs are what Gymnasium's env reports for the same state.
    obs, info = core.reset(seed=seed)
    assert obs.dtype == np.float64 and obs.shape == (core.obs_dim,)
    qpos, qvel = core.get_state()
    mujoco.mj_resetData(oracle.model, oracle.data)
    oracle.set_state(qpos, qvel)
    np.testing.assert_array_equal(obs, oracle._get_obs())
    assert_info_matches(info, oracle._get_reset_info(), f"reset(seed={seed}) info")

    # 2. Gymnasium's own reset, copied into our core right after our reset.
    their_obs, their_info = oracle.reset(seed=seed)
    core.set_state(oracle.data.qpos, oracle.data.qvel)
    np.testing.assert_array_equal(core.get_obs(), their_obs)
    assert set(info) == set(their_info)


@pytest.mark.parametrize(("gym_id", "core_cls", "kwargs"), CASES)
def test_step_parity(gym_id, core_cls, kwargs):
    oracle = make_oracle(gym_id, **kwargs)
    core = core_cls(**kwargs, max_episode_steps=None)
    assert (core.obs_dim,) == oracle.observation_space.shape
    assert (core.act_dim,) == oracle.action_space.shape

    actions = random_actions(oracle.action_space, STEPS, seed=12345)
    episode = 0
    check_reset(oracle, core, seed=episode)
    terminations = 0
    for t, action in enumerate(actions):
        where = f"step {t} (episode {episode})"
        their_obs, their_rew, their_term, their_trunc, their_info = oracle.step(action)
        obs, rew, term, trunc, info = core.step(action)

        assert obs.dtype == np.float64
        np.testing.assert_array_equal(obs, their_obs, err_msg=where)
        assert isinstance(rew, float)  # the core's; the env gives v5's type (test_gymnasium_dropin)
        assert rew == their_rew, where
        assert (term, trunc) == (their_term, their_trunc), where
        assert_info_matches(info, their_info, where)

        if their_term:
            terminations += 1
            episode += 1
            check_reset(oracle, core, seed=episode)

    if gym_id == "Humanoid-v5" and kwargs.get("terminate_when_unhealthy", True):
        # Random actions topple the humanoid quickly: many episodes were compared.
        assert terminations >= 5


def test_time_limit_truncates_at_1000_like_gymnasium():
    ours = gymnasium.make("joltgym_marl/HalfCheetah-v0")
    theirs = gymnasium.make("HalfCheetah-v5")
    assert ours.spec.max_episode_steps == theirs.spec.max_episode_steps == 1000
    core = HalfCheetahCore()  # max_episode_steps=1000 by default
    assert core.max_episode_steps == 1000

    theirs.reset(seed=7)
    ours.reset(seed=7)
    core.reset(seed=7)
    qpos, qvel = theirs.unwrapped.data.qpos, theirs.unwrapped.data.qvel
    ours.unwrapped.set_state(qpos, qvel)
    core.set_state(qpos, qvel)

    for t, action in enumerate(random_actions(theirs.action_space, 1000, seed=3), start=1):
        their_obs, _, their_term, their_trunc, _ = theirs.step(action)
        obs, _, term, trunc, _ = ours.step(action)
        core_obs, _, core_term, core_trunc, _ = core.step(action)
        np.testing.assert_array_equal(obs, their_obs)
        np.testing.assert_array_equal(core_obs, obs)
        assert not (term or their_term or core_term)
        assert trunc == their_trunc == core_trunc == (t == 1000), f"step {t}"
    assert core.elapsed_steps == 1000


def sample_resets(reset, state, seeds: range) -> np.ndarray:
    rows = []
    for seed in seeds:
        reset(seed)
        rows.append(np.concatenate([np.array(v) for v in state()]))
    return np.array(rows)


@pytest.mark.parametrize("task", SINGLE_TASKS)
def test_reset_noise_distribution(task):
    """Our reset states follow Gymnasium's law, coordinate by coordinate (qpos
    then qvel): the same constant coordinates, the same bounds for bounded
    noise, means and spreads within sampling error."""
    oracle = make_oracle(REFERENCE_IDS[task])
    core = CORES[task]()
    seeds = range(300)
    ours = sample_resets(lambda s: core.reset(seed=s), core.get_state, seeds)
    theirs = sample_resets(lambda s: oracle.reset(seed=s), lambda: (oracle.data.qpos, oracle.data.qvel), seeds)
    assert ours.shape == theirs.shape
    for k in range(ours.shape[1]):
        a, b = ours[:, k], theirs[:, k]
        if np.ptp(b) == 0:
            assert np.ptp(a) == 0 and a[0] == b[0], f"coordinate {k} is constant in Gymnasium"
            continue
        spread = b.std()
        assert a.std() == pytest.approx(spread, rel=0.2), f"coordinate {k}: spread"
        assert abs(a.mean() - b.mean()) < 5 * spread / np.sqrt(len(seeds)) * np.sqrt(2), f"coordinate {k}: mean"
        # Bounded (uniform) noise stays in Gymnasium's bounds; normal noise has its tails.
        assert a.min() >= b.min() - 0.1 * spread and a.max() <= b.max() + 0.1 * spread or \
            np.abs(b - b.mean()).max() > 2.5 * spread, f"coordinate {k}: range"

    # Seeded: same seed, same state; different seeds, different states.
    core.reset(seed=3)
    np.testing.assert_array_equal(np.concatenate(core.get_state()), ours[3])
    assert len({row.tobytes() for row in ours}) == len(seeds)


@pytest.mark.parametrize("task", [t for t in SINGLE_TASKS
                                  if any(p.name == "reset_noise_scale" for p in spec_of(t).params)])
def test_reset_noise_scale_zero_is_deterministic(task):
    oracle = make_oracle(REFERENCE_IDS[task], reset_noise_scale=0.0)
    core = CORES[task](reset_noise_scale=0.0)
    their_obs, _ = oracle.reset(seed=1)
    obs, _ = core.reset(seed=2)  # different seed: no noise, so no difference
    np.testing.assert_array_equal(obs, their_obs)
    qpos, qvel = core.get_state()
    np.testing.assert_array_equal(qpos, oracle.init_qpos)
    np.testing.assert_array_equal(qvel, oracle.init_qvel)
