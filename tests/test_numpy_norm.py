"""The native np.linalg.norm equals NumPy's on the CPU the suite runs on.

NumPy's norm of a short vector is OpenBLAS's dot, whose kernel is picked for
the CPU at run time: fused multiply-adds on some CPUs, a rounded product per
entry on others (an AMD EPYC here). The tasks' reported distances (Ant,
Humanoid, Swimmer, Reacher, Pusher) and Reacher's and Pusher's reset sampling
use it, so the package probes NumPy at import and sets the native rounding.
"""

from __future__ import annotations

import os
import subprocess
import sys

import gymnasium as gym
import numpy as np
import pytest

import joltgym_marl
from joltgym_marl import _native
from joltgym_marl._native import core


def test_the_probe_decides_and_the_core_follows_it():
    fused = _native.numpy_norm_is_fused()
    assert fused is not None, "NumPy's norm matched neither rounding"
    expected = {"fma": True, "separate": False}[os.environ["JOLTGYM_NUMPY_NORM"]]
    assert core._numpy_norm_rounding_fused() is expected
    if "JOLTGYM_NUMPY_NORM_GIVEN" not in os.environ:
        assert fused is expected


@pytest.mark.parametrize("name", ["Ant", "Swimmer", "Humanoid"])
def test_distance_from_origin_is_numpys_norm_bit_for_bit(name):
    env = gym.make(f"joltgym_marl/{name}-v0")
    env.reset(seed=3)
    data = env.unwrapped.data
    for step in range(200):
        _, _, terminated, truncated, info = env.step(env.action_space.sample())
        assert info["distance_from_origin"] == np.linalg.norm(data.qpos[0:2], ord=2), step
        if terminated or truncated:
            env.reset()
    env.close()


@pytest.mark.parametrize("setting, fused", [("fma", True), ("separate", False)])
def test_the_environment_variable_is_taken_as_given(setting, fused):
    code = "from joltgym_marl._native import core; print(core._numpy_norm_rounding_fused())"
    env = dict(os.environ, JOLTGYM_NUMPY_NORM=setting)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == str(fused)


def test_an_unknown_setting_is_replaced_by_the_probe():
    code = ("import os; from joltgym_marl import _native; "
            "print(os.environ['JOLTGYM_NUMPY_NORM'], _native.numpy_norm_is_fused())")
    env = dict(os.environ, JOLTGYM_NUMPY_NORM="bogus")
    chosen, fused = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                                   text=True, check=True).stdout.split()
    assert chosen == {"True": "fma", "False": "separate"}[fused]
    assert joltgym_marl is not None
