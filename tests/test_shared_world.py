"""The native shared world (``MultiAgentEnv`` / ``WorldPool`` running ``cheetah_race``)
against independent references, bit for bit:

* a race with one agent is ``HalfCheetahCore`` (itself HalfCheetah-v5);
* a plain-Python MuJoCo loop on the very model the world runs
  (``model_mjb()``): same qpos/qvel after every step, and the race's
  observation, reward and info recomputed in NumPy from the docstring's spec;
* contacts between agents: present in ``shared_track``, absent in ``lanes``;
* the finish line;
* a ``WorldPool`` of races is a set of independent ``MultiAgentEnv``s (world i
  seeded ``seed + i``), auto-resets included, whatever the thread count.
"""

from __future__ import annotations

import mujoco
import numpy as np
import pytest
from numpy.testing import assert_array_equal

import joltgym_marl
from joltgym_marl import ResetKind
from joltgym_marl import HalfCheetahCore, MultiAgentEnv, WorldPool
from joltgym_marl import cheetah_race_v0

CheetahRace = cheetah_race_v0.CheetahRace

GAME = "cheetah_race"
ROBOT_NQ = 9  # HalfCheetah: rootx, rootz, rooty + 6 hinges
ROBOT_NV = 9
ROBOT_NU = 6
FRAME_SKIP = 5
INFO_KEYS = ["x_position", "rank", "x_velocity", "reward_forward", "reward_ctrl", "reward_finish"]
RESET_INFO_KEYS = ["x_position", "rank"]


# -- helpers ---------------------------------------------------------------------


def info_dict(world, row: np.ndarray, reset: bool = False) -> dict[str, float]:
    """One agent's info row of a native world as {name: value}."""
    out = {}
    for name, offset, size, at_reset in world.info_fields:
        assert size == 1
        if reset and not at_reset:
            continue
        out[name] = row[offset]
    return out


class Reference:
    """A plain-Python MuJoCo copy of a native shared world, stepped in lockstep.

    The model is the world's own compiled model (``model_mjb()``); the data
    starts from the world's state after reset (mj_resetData + qpos/qvel +
    mj_forward, as the native reset does). Agent k's joints, dofs and
    actuators are located by name (``cheetah_k/...``), not by the native
    index maps, and its start x is taken from the layout's spec.
    """

    def __init__(self, world, tmp_path, start_x: list[float], forward_weight: float = 1.0,
                 ctrl_weight: float = 0.1, finish_line: float | None = None, finish_bonus: float = 100.0):
        path = tmp_path / "world.mjb"
        path.write_bytes(world.model_mjb())
        self.model = mujoco.MjModel.from_binary_path(str(path))
        self.data = mujoco.MjData(self.model)
        self.n = world.num_agents
        self.start_x = list(start_x)
        self.forward_weight = forward_weight
        self.ctrl_weight = ctrl_weight
        self.finish_line = finish_line
        self.finish_bonus = finish_bonus
        self.finished = False
        self.dt = self.model.opt.timestep * FRAME_SKIP
        m = self.model
        self.qpos_base, self.qvel_base = [], []
        for k in range(self.n):
            joint = m.joint(f"cheetah_{k}/rootx").id
            self.qpos_base.append(int(m.jnt_qposadr[joint]))
            self.qvel_base.append(int(m.jnt_dofadr[joint]))
            names = [m.actuator(k * ROBOT_NU + i).name for i in range(ROBOT_NU)]
            assert all(name.startswith(f"cheetah_{k}/") for name in names), names
            # The torso sits at the agent's start (its frame) plus the robot's own offset.
            torso = m.body(f"cheetah_{k}/torso").id
            assert m.body_pos[torso][0] == start_x[k]
        assert m.nq == self.n * ROBOT_NQ and m.nv == self.n * ROBOT_NV and m.nu == self.n * ROBOT_NU
        qpos, qvel = world.get_state()
        self.data.qpos[:] = qpos
        self.data.qvel[:] = qvel
        mujoco.mj_forward(m, self.data)

    def x(self, k: int) -> float:
        return self.start_x[k] + float(self.data.qpos[self.qpos_base[k]])

    def rank(self, k: int) -> int:
        xs = [self.x(j) for j in range(self.n)]
        return 1 + sum(1 for j in range(self.n) if xs[j] > xs[k] or (xs[j] == xs[k] and j < k))

    def obs(self) -> np.ndarray:
        """The docstring's observation: own qpos[1:], qvel, then others' (x_j - x_k, xdot_j)."""
        d = self.data
        rows = []
        for k in range(self.n):
            p, v = self.qpos_base[k], self.qvel_base[k]
            row = [*d.qpos[p + 1:p + ROBOT_NQ], *d.qvel[v:v + ROBOT_NV]]
            for j in range(self.n):
                if j != k:
                    row += [self.x(j) - self.x(k), d.qvel[self.qvel_base[j]]]
            rows.append(np.array(row, dtype=np.float64).astype(np.float32))
        return np.stack(rows)

    def step(self, actions: np.ndarray):
        """ctrl <- actions (agent-major), frame_skip mj_step, mj_rnePostConstraint; the race's
        rewards, terminations and info dicts."""
        before = [self.x(k) for k in range(self.n)]
        self.data.ctrl[:] = actions.reshape(-1)
        for _ in range(FRAME_SKIP):
            mujoco.mj_step(self.model, self.data)
        mujoco.mj_rnePostConstraint(self.model, self.data)
        winner = -1
        if self.finish_line is not None and not self.finished:
            best = -np.inf
            for k in range(self.n):
                progress = self.x(k) - self.start_x[k]
                if progress >= self.finish_line and progress > best:
                    best, winner = progress, k
            self.finished = winner >= 0
        rewards, infos = [], []
        for k in range(self.n):
            velocity = (self.x(k) - before[k]) / self.dt
            forward = self.forward_weight * velocity
            # HalfCheetah-v5's control cost, as NumPy computes it for a float32
            # action (float32 throughout).
            ctrl_cost = float(self.ctrl_weight * np.sum(np.square(actions[k])))
            bonus = self.finish_bonus if k == winner else 0.0
            rewards.append(np.float32(forward - ctrl_cost + bonus))
            infos.append(dict(x_position=self.x(k), rank=self.rank(k), x_velocity=velocity,
                              reward_forward=forward, reward_ctrl=-ctrl_cost, reward_finish=bonus))
        terminated = np.full(self.n, winner >= 0)
        return np.array(rewards, dtype=np.float32), terminated, infos

    def agent_of_geom(self, geom: int) -> int | None:
        """k for a geom of ``cheetah_k/...``'s bodies, None for the arena."""
        name = self.model.body(self.model.geom_bodyid[geom]).name
        if not name.startswith("cheetah_"):
            return None
        return int(name.split("/", 1)[0].removeprefix("cheetah_"))

    def contact_pairs(self) -> list[tuple[int | None, int | None]]:
        return [(self.agent_of_geom(c.geom1), self.agent_of_geom(c.geom2))
                for c in self.data.contact[:self.data.ncon]]

    def inter_agent_contacts(self) -> int:
        return sum(1 for a, b in self.contact_pairs() if a is not None and b is not None and a != b)

    def intra_agent_contacts(self) -> int:
        return sum(1 for a, b in self.contact_pairs() if a is not None and a == b)


def kick(world, speeds, index=None) -> None:
    """Sets each agent's forward (root x) velocity: a deterministic way to get runners over a
    finish line (random torques mostly shuffle in place). ``world`` is a MultiAgentEnv, or a
    WorldPool with ``index``."""
    qpos, qvel = world.get_state() if index is None else world.get_state(index)
    for k, speed in enumerate(speeds):
        qvel[k * ROBOT_NV] = speed
    if index is None:
        world.set_state(qpos, qvel)
    else:
        world.set_state(index, qpos, qvel)


def start_positions(layout: str, n: int, start_spacing: float = 1.5) -> list[float]:
    return [-start_spacing * k for k in range(n)] if layout == "shared_track" else [0.0] * n


def assert_state_equal(world, ref: Reference, where: str) -> None:
    qpos, qvel = world.get_state()
    assert_array_equal(qpos, ref.data.qpos, err_msg=f"qpos {where}")
    assert_array_equal(qvel, ref.data.qvel, err_msg=f"qvel {where}")


# -- one agent is HalfCheetah ------------------------------------------------------


@pytest.mark.parametrize("seed", [0, 12345])
def test_one_agent_race_is_half_cheetah_bit_for_bit(seed):
    race = MultiAgentEnv(GAME, max_cycles=1000, num_agents=1)
    core = HalfCheetahCore(max_episode_steps=1000)
    obs, rows = race.reset(seed=seed)
    core_obs, core_info = core.reset(seed=seed)
    # The game is float32 (PettingZoo's side), the core float64 (Gymnasium v5's): rounded once.
    assert obs.shape == (1, 17) and obs.dtype == np.float32 and core_obs.dtype == np.float64
    assert_array_equal(obs[0], core_obs.astype(np.float32))
    assert info_dict(race, rows[0], reset=True)["x_position"] == core_info["x_position"]
    assert_array_equal(race.get_state()[0], core.get_state()[0])
    assert_array_equal(race.get_state()[1], core.get_state()[1])

    rng = np.random.default_rng(seed)
    actions = rng.uniform(-1.0, 1.0, size=(1000, 6)).astype(np.float32)
    for t, action in enumerate(actions):
        obs, rewards, terms, truncs, rows, unstable = race.step(action[None])
        core_obs, core_reward, core_term, core_trunc, core_info = core.step(action)
        assert_array_equal(obs[0], core_obs.astype(np.float32), err_msg=f"obs at step {t}")
        assert rewards.dtype == np.float32
        assert rewards[0] == np.float32(core_reward), f"reward at step {t}"
        info = info_dict(race, rows[0])
        for key in ["x_position", "x_velocity", "reward_forward", "reward_ctrl"]:
            assert info[key] == core_info[key], f"info[{key!r}] at step {t}"
        assert info["rank"] == 1 and info["reward_finish"] == 0.0
        assert not unstable and "physics_unstable" not in core_info
        assert not terms[0] and core_term is False
        assert bool(truncs[0]) is core_trunc is (t == 999)


# -- a plain-Python MuJoCo reference -----------------------------------------------------


@pytest.mark.parametrize("layout", ["lanes", "shared_track"])
def test_world_matches_a_plain_mujoco_loop_and_the_documented_obs_and_reward(layout, tmp_path):
    n, steps = 4, 300
    world = MultiAgentEnv(GAME, max_cycles=1000, num_agents=n, layout=layout)
    obs, rows = world.reset(seed=2024)
    ref = Reference(world, tmp_path, start_positions(layout, n))
    assert_state_equal(world, ref, "after reset")
    assert_array_equal(obs, ref.obs(), err_msg="reset obs")
    for k in range(n):
        info = info_dict(world, rows[k], reset=True)
        assert info == {"x_position": ref.x(k), "rank": ref.rank(k)}

    rng = np.random.default_rng(7)
    # Beyond the [-1, 1] bounds too: MuJoCo clamps ctrl, the ctrl cost uses the raw action.
    actions = rng.uniform(-1.5, 1.5, size=(steps, n, ROBOT_NU)).astype(np.float32)
    for t, a in enumerate(actions):
        obs, rewards, terms, truncs, rows, unstable = world.step(a)
        want_rewards, want_terms, want_infos = ref.step(a)
        assert_state_equal(world, ref, f"at step {t}")
        assert_array_equal(obs, ref.obs(), err_msg=f"obs at step {t}")
        assert_array_equal(rewards, want_rewards, err_msg=f"rewards at step {t}")
        assert_array_equal(terms, want_terms)
        assert not truncs.any() and not unstable
        for k in range(n):
            assert info_dict(world, rows[k]) == want_infos[k], f"agent {k} info at step {t}"
    # The state() vector is qpos and qvel of the whole world, as float32.
    assert_array_equal(world.state(), np.concatenate([ref.data.qpos, ref.data.qvel]).astype(np.float32))


def test_reference_covers_the_finish_bonus_and_nondefault_weights(tmp_path):
    kw = dict(num_agents=3, layout="shared_track", start_spacing=2.0, finish_line=0.4,
              finish_bonus=7.5, forward_reward_weight=0.7, ctrl_cost_weight=0.3)
    world = MultiAgentEnv(GAME, max_cycles=1000, **kw)
    world.reset(seed=5)
    kick(world, [1.5, 2.5, 2.0])  # agent 1 runs fastest: someone crosses within a few steps
    ref = Reference(world, tmp_path, start_positions("shared_track", 3, 2.0), forward_weight=0.7,
                    ctrl_weight=0.3, finish_line=0.4, finish_bonus=7.5)
    rng = np.random.default_rng(3)
    for t in range(1000):
        a = rng.uniform(-1, 1, size=(3, ROBOT_NU)).astype(np.float32)
        obs, rewards, terms, _, rows, _ = world.step(a)
        want_rewards, want_terms, want_infos = ref.step(a)
        assert_state_equal(world, ref, f"at step {t}")
        assert_array_equal(obs, ref.obs())
        assert_array_equal(rewards, want_rewards)
        assert_array_equal(terms, want_terms)
        for k in range(3):
            assert info_dict(world, rows[k]) == want_infos[k]
        if terms.any():
            break
    else:
        pytest.fail("nobody crossed a 0.4 m finish line in 1000 steps")
    assert sum(info["reward_finish"] == 7.5 for info in want_infos) == 1
    assert t >= 1  # the line was crossed by running, not at the first step


# -- contacts ---------------------------------------------------------------------


def body_bits_from_geoms(model) -> tuple[np.ndarray, np.ndarray]:
    contype = np.zeros(model.nbody, dtype=np.int64)
    conaffinity = np.zeros(model.nbody, dtype=np.int64)
    for g in range(model.ngeom):
        contype[model.geom_bodyid[g]] |= model.geom_contype[g]
        conaffinity[model.geom_bodyid[g]] |= model.geom_conaffinity[g]
    return contype, conaffinity


def test_shared_track_geom_contact_bits_are_per_agent(tmp_path):
    """The composer's documented bits: agent k's geoms have contype 1 | bit(k+1) and
    conaffinity = the other agents' bits (plus bit 0 where the robot had it)."""
    n = 3
    world = MultiAgentEnv(GAME, num_agents=n, layout="shared_track")
    world.reset(seed=0)
    m = Reference(world, tmp_path, start_positions("shared_track", n)).model
    all_bits = sum(1 << (k + 1) for k in range(n))
    for g in range(m.ngeom):
        body = m.body(m.geom_bodyid[g]).name
        if body == "world":
            assert (m.geom_contype[g], m.geom_conaffinity[g]) == (1, 1)
            continue
        k = int(body.split("/")[0].removeprefix("cheetah_"))
        own = 1 << (k + 1)
        assert m.geom_contype[g] == 1 | own, body
        assert m.geom_conaffinity[g] == all_bits & ~own, body


@pytest.mark.parametrize("layout", ["lanes", "shared_track"])
def test_body_contact_bits_agree_with_the_geoms(layout, tmp_path):
    """MuJoCo's broad phase filters body pairs by body_contype/body_conaffinity (the OR of the
    body's geoms, computed by the compiler): per-agent bits set after compiling would never
    reach it, and agents would pass through each other."""
    world = MultiAgentEnv(GAME, num_agents=3, layout=layout)
    world.reset(seed=0)
    m = Reference(world, tmp_path, start_positions(layout, 3)).model
    contype, conaffinity = body_bits_from_geoms(m)
    assert_array_equal(m.body_contype, contype)
    assert_array_equal(m.body_conaffinity, conaffinity)


def test_overlapping_agents_touch_on_the_shared_track(tmp_path):
    """Agent 1 put at agent 0's world x (same plane): their bodies intersect."""
    world = MultiAgentEnv(GAME, num_agents=2, layout="shared_track", start_spacing=1.5)
    world.reset(seed=0)
    qpos, qvel = world.get_state()
    qpos[ROBOT_NQ] = qpos[0] + 1.5  # agent 1's rootx: world x = -1.5 + rootx = agent 0's x
    world.set_state(qpos, qvel)
    ref = Reference(world, tmp_path, start_positions("shared_track", 2))
    # Equal up to the rounding of (x + 1.5) - 1.5, which depends on the reset noise.
    assert ref.x(0) == pytest.approx(ref.x(1), abs=1e-15)
    assert ref.inter_agent_contacts() > 0, ref.contact_pairs()


def test_agents_collide_on_the_shared_track_during_a_random_rollout(tmp_path):
    n = 4
    world = MultiAgentEnv(GAME, max_cycles=1000, num_agents=n, layout="shared_track", start_spacing=1.0)
    world.reset(seed=3)
    ref = Reference(world, tmp_path, start_positions("shared_track", n, 1.0))
    rng = np.random.default_rng(0)
    inter = ref.inter_agent_contacts()
    for t in range(300):
        a = rng.uniform(-1, 1, size=(n, ROBOT_NU)).astype(np.float32)
        world.step(a)
        ref.step(a)
        assert_state_equal(world, ref, f"at step {t}")
        inter += ref.inter_agent_contacts()
    assert inter > 0


@pytest.mark.parametrize("lane_spacing", [1.0, 0.05], ids=["default-lanes", "overlapping-lanes"])
def test_agents_never_touch_in_lanes(lane_spacing, tmp_path):
    """Over a long random rollout no contact involves two agents (nor one agent with itself),
    even with lanes so narrow that the bodies overlap: it is the contact bits, not the gap."""
    n, steps = 4, 1500
    world = MultiAgentEnv(GAME, max_cycles=None, num_agents=n, layout="lanes", lane_spacing=lane_spacing)
    world.reset(seed=11)
    ref = Reference(world, tmp_path, start_positions("lanes", n))
    m = ref.model
    robot_geoms = [g for g in range(m.ngeom) if ref.agent_of_geom(g) is not None]
    assert all(m.geom_conaffinity[g] == 0 and m.geom_contype[g] == 1 for g in robot_geoms)
    rng = np.random.default_rng(1)
    floor_contacts = 0
    for t in range(steps):
        a = rng.uniform(-1, 1, size=(n, ROBOT_NU)).astype(np.float32)
        world.step(a)
        ref.step(a)
        pairs = ref.contact_pairs()
        assert ref.inter_agent_contacts() == 0, (t, pairs)
        assert ref.intra_agent_contacts() == 0, (t, pairs)
        floor_contacts += sum(1 for p in pairs if None in p)
    assert_state_equal(world, ref, f"after {steps} steps")
    assert floor_contacts > 0  # the scan does see contacts: the feet on the floor


# -- the finish line ---------------------------------------------------------------


def assert_finish(infos: dict, rewards: dict, bonus: float, n: int) -> str:
    """Exactly one winner with reward_finish == bonus; ranks a permutation of 1..n that
    orders the agents by x. Returns the winner."""
    winners = [a for a, info in infos.items() if info["reward_finish"] == bonus]
    assert len(winners) == 1, infos
    assert all(info["reward_finish"] == 0.0 for a, info in infos.items() if a != winners[0])
    ranks = [infos[a]["rank"] for a in infos]
    assert sorted(ranks) == list(range(1, n + 1))
    assert all(isinstance(r, int) for r in ranks)
    by_x = sorted(infos, key=lambda a: -infos[a]["x_position"])
    assert [infos[a]["rank"] for a in by_x] == list(range(1, n + 1))
    for a, info in infos.items():
        total = info["reward_forward"] + info["reward_ctrl"] + info["reward_finish"]
        assert rewards[a] == float(np.float32(total))
    return winners[0]


@pytest.mark.parametrize("layout", ["lanes", "shared_track"])
def test_finish_line_by_running_ends_the_race_for_everyone(layout):
    n, bonus = 4, 100.0
    env = CheetahRace(num_agents=n, layout=layout, finish_line=0.5, finish_bonus=bonus, max_cycles=1000)
    env.reset(seed=0)
    kick(env.world, [1.0, 2.0, 3.0, 2.5])
    rng = np.random.default_rng(0)
    for t in range(1000):
        actions = {a: rng.uniform(-1, 1, size=6).astype(np.float32) for a in env.agents}
        obs, rewards, terms, truncs, infos = env.step(actions)
        assert all(info["reward_finish"] in (0.0, bonus) for info in infos.values())
        if any(terms.values()):
            break
    else:
        pytest.fail("nobody crossed a 0.5 m finish line in 1000 steps")
    assert 1 <= t < 1000
    assert all(terms.values()) and not any(truncs.values())
    assert set(terms) == set(env.possible_agents)
    winner = assert_finish(infos, rewards, bonus, n)
    # The winner is the agent furthest past its own start.
    start = start_positions(layout, n)
    progress = {a: infos[a]["x_position"] - start[i] for i, a in enumerate(env.possible_agents)}
    assert progress[winner] >= 0.5
    assert winner == max(progress, key=progress.get)
    assert env.agents == []
    with pytest.raises(RuntimeError, match=r"step\(\) called with no live agents; expected reset\(\) first"):
        env.step(actions)
    env.reset(seed=1)
    assert env.agents == env.possible_agents


def test_finish_line_when_several_cross_in_one_step_the_furthest_wins():
    n, bonus = 4, 12.5
    env = CheetahRace(num_agents=n, layout="shared_track", finish_line=0.5, finish_bonus=bonus)
    env.reset(seed=4)
    qpos, qvel = env.world.get_state()
    qvel[:] = 0.0
    qpos[1 * ROBOT_NQ] = 0.70  # agent 1: 0.7 m past its start
    qpos[2 * ROBOT_NQ] = 0.90  # agent 2: 0.9 m past its start (the furthest)
    qpos[3 * ROBOT_NQ] = 0.60
    qpos[0] = 0.0
    env.world.set_state(qpos, qvel)
    zeros = {a: np.zeros(6, dtype=np.float32) for a in env.agents}
    obs, rewards, terms, truncs, infos = env.step(zeros)
    assert all(terms.values()) and not any(truncs.values())
    assert assert_finish(infos, rewards, bonus, n) == "cheetah_2"
    assert rewards["cheetah_2"] > bonus - 1.0
    assert env.agents == []


def test_no_finish_line_means_truncation_only():
    env = CheetahRace(num_agents=2, max_cycles=40)
    env.reset(seed=0)
    qpos, qvel = env.world.get_state()
    qpos[0] = 500.0  # far ahead, but there is no line
    env.world.set_state(qpos, qvel)
    rng = np.random.default_rng(0)
    for t in range(40):
        assert env.agents == env.possible_agents
        obs, rewards, terms, truncs, infos = env.step(
            {a: rng.uniform(-1, 1, size=6).astype(np.float32) for a in env.agents})
        assert not any(terms.values())
        assert all(truncs.values()) == (t == 39)
        assert all(info["reward_finish"] == 0.0 for info in infos.values())
    assert env.agents == []


# -- a pool of races is a set of single races -------------------------------------------


@pytest.mark.parametrize("num_threads", [1, 2])
@pytest.mark.parametrize("mode", ["next_step", "same_step"])
def test_pool_world_i_is_a_single_race_seeded_seed_plus_i(num_threads, mode):
    worlds, n, steps, seed, limit = 3, 4, 60, 77, 9
    kw = dict(num_agents=n, layout="shared_track", finish_line=0.35)
    pool = WorldPool(GAME, worlds, num_threads=num_threads, max_episode_steps=limit,
                     autoreset_mode=mode, **kw)
    singles = [MultiAgentEnv(GAME, max_cycles=limit, **kw) for _ in range(worlds)]
    reset_cols = [offset for _, offset, _, at_reset in pool.info_fields if at_reset]
    pool.reset_all(seed=seed)
    def kick_world_0(i):
        # World 0's agents get a running start after every reset: its episodes end at the
        # finish line (terminated), the others' at the step limit (truncated).
        if i == 0:
            kick(singles[0], [3.0] * n)
            kick(pool, [3.0] * n, index=0)
            assert_array_equal(pool.obs[0], singles[0].get_obs())

    for i, single in enumerate(singles):
        obs, rows = single.reset(seed=seed + i)
        assert_array_equal(pool.obs[i], obs)
        assert_array_equal(pool.infos[i][:, reset_cols], rows[:, reset_cols])
        assert_array_equal(pool.get_state(i)[0], single.get_state()[0])
        assert_array_equal(pool.get_state(i)[1], single.get_state()[1])
        kick_world_0(i)
    rng = np.random.default_rng(seed)
    actions = rng.uniform(-1, 1, size=(steps, worlds, n, ROBOT_NU)).astype(np.float32)
    pending = [False] * worlds  # next_step: world ended last call, resets on this one
    ends = {"terminated": 0, "truncated": 0}
    for t, a in enumerate(actions):
        pool.step_all(a)
        for i, single in enumerate(singles):
            where = f"world {i}, step {t}"
            if pending[i]:
                obs, rows = single.reset()
                assert pool.reset_kind[i] == ResetKind.RESET, where
                assert_array_equal(pool.obs[i], obs, err_msg=where)
                assert_array_equal(pool.infos[i][:, reset_cols], rows[:, reset_cols], err_msg=where)
                assert not pool.rewards[i].any() and not pool.terminations[i].any()
                assert not pool.truncations[i].any()
                pending[i] = False
                kick_world_0(i)
                continue
            obs, rewards, terms, truncs, rows, unstable = single.step(a[i])
            done = bool(terms.any() or truncs.any())
            assert_array_equal(pool.rewards[i], rewards, err_msg=where)
            assert_array_equal(pool.terminations[i], terms, err_msg=where)
            assert_array_equal(pool.truncations[i], truncs, err_msg=where)
            assert pool.unstable[i] == unstable
            if done:
                ends["terminated" if terms.any() else "truncated"] += 1
            if done and mode == "same_step":
                assert pool.reset_kind[i] == ResetKind.AUTORESET, where
                assert_array_equal(pool.final_obs[i], obs, err_msg=where)
                assert_array_equal(pool.final_infos[i], rows, err_msg=where)
                obs, rows = single.reset()
                assert_array_equal(pool.obs[i], obs, err_msg=where)
                assert_array_equal(pool.infos[i][:, reset_cols], rows[:, reset_cols], err_msg=where)
                assert pool.elapsed_steps[i] == 0
                kick_world_0(i)
            else:
                assert pool.reset_kind[i] == ResetKind.STEPPED, where
                assert_array_equal(pool.obs[i], obs, err_msg=where)
                assert_array_equal(pool.infos[i], rows, err_msg=where)
                assert pool.elapsed_steps[i] == single.elapsed_steps
                pending[i] = done and mode == "next_step"
            assert_array_equal(pool.get_state(i)[0], single.get_state()[0], err_msg=where)
            assert_array_equal(pool.get_state(i)[1], single.get_state()[1], err_msg=where)
    # The rollout did exercise both kinds of episode end.
    assert ends["terminated"] > 0 and ends["truncated"] > 0, ends


def test_race_dimensions_follow_the_docstring():
    for n in [1, 2, 5, 8]:
        world = MultiAgentEnv(GAME, num_agents=n)
        assert world.num_agents == n
        assert world.obs_dim == 17 + 2 * (n - 1)
        assert world.act_dim == 6
        assert world.state_dim == n * (ROBOT_NQ + ROBOT_NV)
        assert_array_equal(world.action_low, -np.ones(6, dtype=np.float32))
        assert_array_equal(world.action_high, np.ones(6, dtype=np.float32))
        assert [f[0] for f in world.info_fields] == INFO_KEYS
        assert [f[0] for f in world.info_fields if f[3]] == RESET_INFO_KEYS
        assert world.dt == pytest.approx(0.05)
    assert joltgym_marl.MultiAgentEnv is MultiAgentEnv
