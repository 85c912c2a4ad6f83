"""Runs Gymnasium's own MuJoCo tests against joltgym_marl's envs, only the env ids changed.

Gymnasium's test code is not part of this repository: give the path of a
checkout of Gymnasium's ``tests`` folder's parent (the tag of the Gymnasium
you run), e.g. made with ``git archive v1.2.2 tests | tar -x -C DIR``::

    .venv/bin/python tests/gymnasium_suite/run.py /work/scratch/gymnasium-1.4.0           # ours
    .venv/bin/python tests/gymnasium_suite/run.py /work/scratch/gymnasium-1.4.0 --oracle  # Gymnasium's v5

The plugin below rewrites every id ``<Name>-v5`` of the eleven MuJoCo envs
given to ``gymnasium.make`` into ``joltgym_marl/<Name>-v0`` (``--oracle``
leaves them alone, to learn which cases fail on Gymnasium's own envs), and
restricts the generic per-env tests (``tests/envs/test_envs.py``,
``test_action_dim_check.py``), which run over the registry, to the eleven
envs: ours, or the ``-v5`` ones with ``--oracle``. A case counts as
applicable when it makes one of the eleven envs; the summary prints the
applicable cases passed per file. Extra arguments go to pytest.
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
FILES = [
    "tests/envs/mujoco/test_mujoco_v5.py",
    "tests/envs/test_envs.py",
    "tests/envs/test_action_dim_check.py",
    # the env-level rendering tests (the others drive Gymnasium's renderer on its own model)
    "tests/envs/mujoco/test_mujoco_rendering.py::test_mujoco_metadata_render_modes",
    "tests/envs/mujoco/test_mujoco_rendering.py::test_camera_id",
    "tests/envs/mujoco/test_mujoco_rendering.py::test_rgbd_tuple",
    "tests/envs/mujoco/test_mujoco_custom_env.py::test_xml_file",
]
NAMES = ["Ant", "HalfCheetah", "Hopper", "Humanoid", "HumanoidStandup", "InvertedDoublePendulum",
         "InvertedPendulum", "Pusher", "Reacher", "Swimmer", "Walker2d"]
V5 = re.compile(r"^(" + "|".join(NAMES) + r")-v5$")


class IdRewrite:
    """The pytest plugin: env ids rewritten, applicable cases counted."""

    def __init__(self, oracle: bool):
        self.oracle = oracle
        self.current: str | None = None
        self.applicable: set[str] = set()
        self.outcomes: dict[str, str] = {}

    def target(self, env_id):
        if isinstance(env_id, str) and V5.match(env_id):
            if self.current is not None:
                self.applicable.add(self.current)
            if not self.oracle:
                return f"joltgym_marl/{env_id[:-3]}-v0"
        elif getattr(env_id, "id", None) is not None and str(env_id.id).startswith("joltgym_marl/"):
            if self.current is not None:
                self.applicable.add(self.current)
        return env_id

    def pytest_configure(self, config):
        import gymnasium
        import gymnasium.envs.registration as registration

        import joltgym_marl  # noqa: F401  (registers joltgym_marl/<Name>-v0)

        make, make_vec = registration.make, registration.make_vec

        def patched_make(id, *args, **kwargs):  # noqa: A002  (gymnasium's name)
            return make(self.target(id), *args, **kwargs)

        def patched_make_vec(id, *args, **kwargs):  # noqa: A002
            return make_vec(self.target(id), *args, **kwargs)

        gymnasium.make = registration.make = patched_make
        gymnasium.make_vec = registration.make_vec = patched_make_vec
        # EnvSpec.make calls registration.make: patched above.

        from tests.envs import utils  # Gymnasium's spec lists, read by the generic tests at import

        ids = [f"{n}-v5" for n in NAMES] if self.oracle else [f"joltgym_marl/{n}-v0" for n in NAMES]
        specs = [gymnasium.spec(i) for i in ids]
        envs = [make(s, disable_env_checker=True).unwrapped for s in specs]
        for name, values in (("all_testing_env_specs", specs), ("mujoco_testing_env_specs", specs),
                             ("all_testing_initialised_envs", envs)):
            getattr(utils, name)[:] = values
        if hasattr(utils, "gym_testing_env_specs"):
            utils.gym_testing_env_specs[:] = []
        self.spec_ids = set(ids)

    def pytest_collection_modifyitems(self, items):
        # Generic tests parametrized over specs or envs apply when given one of the eleven.
        for item in items:
            params = getattr(getattr(item, "callspec", None), "params", {})
            for value in params.values():
                spec = getattr(value, "spec", value)
                if getattr(spec, "id", None) in self.spec_ids:
                    self.applicable.add(item.nodeid)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item, nextitem):
        self.current = item.nodeid
        yield
        self.current = None

    def pytest_runtest_logreport(self, report):
        if report.when == "call" or report.outcome != "passed":
            previous = self.outcomes.get(report.nodeid)
            if previous in (None, "passed"):
                self.outcomes[report.nodeid] = report.outcome

    def summary(self) -> str:
        by_file = collections.defaultdict(lambda: [0, 0])
        failed = []
        for nodeid in sorted(self.applicable):
            counts = by_file[nodeid.split("::")[0]]
            counts[1] += 1
            if self.outcomes.get(nodeid) == "passed":
                counts[0] += 1
            else:
                failed.append(f"  {self.outcomes.get(nodeid, 'not run')}: {nodeid}")
        lines = [f"{'Gymnasium v5 (oracle)' if self.oracle else 'joltgym_marl'}: applicable cases passed"]
        lines += [f"  {f}: {p}/{n}" for f, (p, n) in sorted(by_file.items())]
        total = [sum(c[i] for c in by_file.values()) for i in (0, 1)]
        lines.append(f"  total: {total[0]}/{total[1]}")
        return "\n".join(lines + (["not passed:"] + failed if failed else []))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("gymnasium_dir", type=Path, help="folder holding Gymnasium's tests/ (of one tag)")
    parser.add_argument("--oracle", action="store_true", help="run on Gymnasium's own v5 envs")
    parser.add_argument("--package-root", type=Path, default=REPO,
                        help="folder holding the joltgym_marl package to test (default: this clone)")
    args, extra = parser.parse_known_args(argv)
    root = args.gymnasium_dir.resolve()
    if not (root / "tests" / "envs" / "mujoco" / "test_mujoco_v5.py").is_file():
        parser.error(f"{root} should hold Gymnasium's tests/envs/mujoco/test_mujoco_v5.py")
    os.chdir(root)  # Gymnasium's tests read their assets by relative path
    sys.path.insert(0, str(root))
    sys.path.insert(1, str(args.package_root.resolve()))  # the joltgym_marl to test
    plugin = IdRewrite(args.oracle)
    code = pytest.main(["-q", "-p", "no:cacheprovider", "--rootdir", str(root), "-o", "addopts=",
                        "-W", "ignore", *extra, *FILES], plugins=[plugin])
    print(plugin.summary())
    return int(code)


if __name__ == "__main__":
    raise SystemExit(main())
