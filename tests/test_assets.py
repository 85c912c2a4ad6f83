"""Our MJCF assets must compile to exactly the same physics as Gymnasium's v5 models."""

from pathlib import Path

import gymnasium.envs.mujoco as gym_mujoco
import mujoco
import numpy as np
import pytest

from joltgym_marl.registry import SINGLE_AGENT_TASKS

OUR_ASSETS = Path(__file__).resolve().parents[1] / "assets"
GYM_ASSETS = Path(gym_mujoco.__file__).resolve().parent / "assets"

# Each single-agent task's default model file, named as Gymnasium's default
# for the env it reproduces (derived from the registry).
MODELS = [spec.defaults()["xml_file"].removesuffix(".xml") for spec in SINGLE_AGENT_TASKS]

# MuJoCo 4 flags compiler/settotalmass (needed by the cheetah) as deprecated.
# MuJoCo 4.0.0 only prints it to stderr from C, but ignore it explicitly in
# case a binding version routes it into Python's warnings module.
pytestmark = pytest.mark.filterwarnings("ignore:.*settotalmass.*")

SCALARS = ["nq", "nv", "nu", "na", "nbody", "ngeom", "njnt", "ntendon", "nwrap",
           "nsite", "ncam", "nlight", "nmat", "ntex", "nnumeric", "nkey", "nuser_geom"]

OPTION_FIELDS = ["timestep", "integrator", "iterations", "solver", "gravity",
                 "cone", "jacobian", "tolerance", "ls_iterations", "noslip_iterations",
                 "impratio", "wind", "magnetic", "density", "viscosity",
                 "o_margin", "o_solref", "o_solimp", "disableflags", "enableflags"]

ARRAYS = [
    # bodies
    "body_parentid", "body_mass", "body_inertia", "body_ipos", "body_iquat",
    "body_pos", "body_quat", "body_subtreemass",
    # joints / dofs
    "jnt_type", "jnt_bodyid", "jnt_qposadr", "jnt_dofadr", "jnt_range", "jnt_limited",
    "jnt_axis", "jnt_pos", "jnt_stiffness", "jnt_margin", "jnt_solref", "jnt_solimp",
    "dof_damping", "dof_armature", "dof_frictionloss", "dof_bodyid", "dof_invweight0",
    # geoms
    "geom_type", "geom_bodyid", "geom_size", "geom_pos", "geom_quat", "geom_friction",
    "geom_contype", "geom_conaffinity", "geom_condim", "geom_solref", "geom_solimp",
    "geom_solmix", "geom_margin", "geom_gap", "geom_priority", "geom_user",
    "geom_rbound", "geom_matid", "geom_rgba",
    # actuators
    "actuator_gear", "actuator_ctrlrange", "actuator_ctrllimited", "actuator_trnid",
    "actuator_trntype", "actuator_dyntype", "actuator_gaintype", "actuator_biastype",
    "actuator_gainprm", "actuator_biasprm", "actuator_forcerange", "actuator_forcelimited",
    # tendons
    "tendon_adr", "tendon_num", "tendon_limited", "tendon_range", "tendon_stiffness",
    "tendon_damping", "tendon_solref_lim", "tendon_solimp_lim", "tendon_length0",
    "wrap_type", "wrap_objid", "wrap_prm",
    # reference configuration, cameras, custom data
    "qpos0", "qpos_spring",
    "cam_mode", "cam_bodyid", "cam_pos", "cam_quat",
    "numeric_data", "numeric_size",
]


def _load(path: Path) -> mujoco.MjModel:
    return mujoco.MjModel.from_xml_path(str(path))


def _names(model: mujoco.MjModel, objtype: mujoco.mjtObj, count: int) -> list:
    return [mujoco.mj_id2name(model, objtype, i) for i in range(count)]


@pytest.fixture(params=MODELS)
def model_pair(request):
    name = request.param
    ours = OUR_ASSETS / f"{name}.xml"
    theirs = GYM_ASSETS / f"{name}.xml"
    assert ours.is_file(), ours
    assert theirs.is_file(), theirs
    return name, _load(ours), _load(theirs)


def test_sizes(model_pair):
    _, ours, ref = model_pair
    for attr in SCALARS:
        assert getattr(ours, attr) == getattr(ref, attr), attr


def test_options(model_pair):
    _, ours, ref = model_pair
    for attr in OPTION_FIELDS:
        np.testing.assert_array_equal(getattr(ours.opt, attr), getattr(ref.opt, attr),
                                      err_msg=f"opt.{attr}")


@pytest.mark.parametrize("attr", ARRAYS)
def test_compiled_arrays(model_pair, attr):
    _, ours, ref = model_pair
    a, b = getattr(ours, attr), getattr(ref, attr)
    assert a.shape == b.shape, attr
    assert a.dtype == b.dtype, attr
    np.testing.assert_array_equal(a, b, err_msg=attr)


def test_every_array_field_identical(model_pair):
    """Catch-all: every array exposed on MjModel (incl. visuals and name buffers)."""
    _, ours, ref = model_pair
    checked = 0
    for attr in dir(ref):
        if attr.startswith("_"):
            continue
        b = getattr(ref, attr, None)
        if not isinstance(b, np.ndarray):
            continue
        a = getattr(ours, attr)
        assert a.shape == b.shape, attr
        np.testing.assert_array_equal(a, b, err_msg=attr)
        checked += 1
    assert checked > 100


def test_names_in_order(model_pair):
    _, ours, ref = model_pair
    for objtype, count in [
        (mujoco.mjtObj.mjOBJ_BODY, "nbody"),
        (mujoco.mjtObj.mjOBJ_JOINT, "njnt"),
        (mujoco.mjtObj.mjOBJ_GEOM, "ngeom"),
        (mujoco.mjtObj.mjOBJ_ACTUATOR, "nu"),
        (mujoco.mjtObj.mjOBJ_TENDON, "ntendon"),
        (mujoco.mjtObj.mjOBJ_CAMERA, "ncam"),
        (mujoco.mjtObj.mjOBJ_NUMERIC, "nnumeric"),
    ]:
        n = getattr(ref, count)
        assert _names(ours, objtype, n) == _names(ref, objtype, n), objtype


def test_ant_init_qpos():
    ours = _load(OUR_ASSETS / "ant.xml")
    ref = _load(GYM_ASSETS / "ant.xml")
    idx = mujoco.mj_name2id(ours, mujoco.mjtObj.mjOBJ_NUMERIC, "init_qpos")
    assert idx >= 0
    adr, size = ours.numeric_adr[idx], ours.numeric_size[idx]
    assert size == ours.nq
    ref_idx = mujoco.mj_name2id(ref, mujoco.mjtObj.mjOBJ_NUMERIC, "init_qpos")
    np.testing.assert_array_equal(
        ours.numeric_data[adr:adr + size],
        ref.numeric_data[ref.numeric_adr[ref_idx]:ref.numeric_adr[ref_idx] + size],
    )


def test_rollout_bitwise_equal(model_pair):
    name, ours, ref = model_pair
    rng = np.random.default_rng(12345)
    lo, hi = ref.actuator_ctrlrange[:, 0], ref.actuator_ctrlrange[:, 1]
    ctrls = rng.uniform(lo, hi, size=(200, ref.nu))

    d_ours, d_ref = mujoco.MjData(ours), mujoco.MjData(ref)
    # Perturb the initial state identically so the rollout is non-trivial.
    qvel0 = rng.normal(scale=0.1, size=ref.nv)
    d_ours.qvel[:] = qvel0
    d_ref.qvel[:] = qvel0

    for t in range(200):
        d_ours.ctrl[:] = ctrls[t]
        d_ref.ctrl[:] = ctrls[t]
        mujoco.mj_step(ours, d_ours)
        mujoco.mj_step(ref, d_ref)
        np.testing.assert_array_equal(d_ours.qpos, d_ref.qpos, err_msg=f"{name} step {t}")
    np.testing.assert_array_equal(d_ours.qvel, d_ref.qvel)
    assert np.all(np.isfinite(d_ours.qpos))
