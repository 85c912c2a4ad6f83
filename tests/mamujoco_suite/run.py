"""Runs Gymnasium-Robotics' own MaMuJoCo tests against joltgym_marl.mamujoco_v1, only the import swapped.

Farama's test code is not part of this repository (nor of the
gymnasium-robotics sdist on PyPI, which ships no MaMuJoCo tests): give the
folder holding Gymnasium-Robotics' ``tests`` folder (the tag of the
gymnasium-robotics you run), e.g. made with
``git archive v1.4.2 tests/envs/MaMuJoCo | tar -x -C DIR``::

    .venv/bin/python tests/mamujoco_suite/run.py DIR            # ours
    .venv/bin/python tests/mamujoco_suite/run.py DIR --oracle   # Farama's own module

Farama's test module imports ``from gymnasium_robotics import mamujoco_v1``;
the plugin below replaces that one name in the collected module by
``joltgym_marl.mamujoco_v1`` (``--oracle`` leaves it alone) and prints the
cases passed per test function. Extra arguments go to pytest.
"""

from __future__ import annotations

import argparse
import collections
import os
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
TEST_FILE = "tests/envs/MaMuJoCo/test_MaMuJoCo.py"


class ImportSwap:
    """The pytest plugin: ``mamujoco_v1`` swapped in the test module, outcomes counted."""

    def __init__(self, oracle: bool):
        self.oracle = oracle
        self.outcomes: dict[str, str] = {}

    def pytest_collection_modifyitems(self, items):
        if self.oracle:
            return
        import gymnasium_robotics

        import joltgym_marl.mamujoco_v1

        for module in {item.module for item in items}:
            # The test module's one import of the module under test; fail
            # loudly if Farama's file no longer has it (nothing is swapped silently).
            if getattr(module, "mamujoco_v1", None) is not gymnasium_robotics.mamujoco_v1:
                raise pytest.UsageError(f"{module.__file__} does not import gymnasium_robotics.mamujoco_v1 as "
                                        "mamujoco_v1; this runner swaps only that import")
            module.mamujoco_v1 = joltgym_marl.mamujoco_v1

    def pytest_runtest_logreport(self, report):
        if report.when == "call" or report.outcome != "passed":
            if self.outcomes.get(report.nodeid) in (None, "passed"):
                self.outcomes[report.nodeid] = report.outcome

    def summary(self) -> str:
        by_test = collections.defaultdict(lambda: [0, 0])
        failed = []
        for nodeid, outcome in sorted(self.outcomes.items()):
            counts = by_test[nodeid.split("::")[-1].split("[")[0]]
            counts[1] += 1
            if outcome == "passed":
                counts[0] += 1
            else:
                failed.append(f"  {outcome}: {nodeid}")
        lines = [f"{'gymnasium_robotics.mamujoco_v1 (oracle)' if self.oracle else 'joltgym_marl.mamujoco_v1'}: "
                 "cases passed"]
        lines += [f"  {name}: {p}/{n}" for name, (p, n) in sorted(by_test.items())]
        total = [sum(c[i] for c in by_test.values()) for i in (0, 1)]
        lines.append(f"  total: {total[0]}/{total[1]}")
        return "\n".join(lines + (["not passed:"] + failed if failed else []))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("robotics_dir", type=Path,
                        help=f"folder holding Gymnasium-Robotics' {TEST_FILE} (of one tag)")
    parser.add_argument("--oracle", action="store_true", help="run on Farama's own mamujoco_v1")
    parser.add_argument("--package-root", type=Path, default=REPO,
                        help="folder holding the joltgym_marl package to test (default: this clone)")
    args, extra = parser.parse_known_args(argv)
    root = args.robotics_dir.resolve()
    if not (root / TEST_FILE).is_file():
        parser.error(f"{root} should hold Gymnasium-Robotics' {TEST_FILE}")
    os.chdir(root)
    sys.path.insert(0, str(args.package_root.resolve()))  # the joltgym_marl to test
    plugin = ImportSwap(args.oracle)
    code = pytest.main(["-q", "-p", "no:cacheprovider", "-p", "no:xdist", "--rootdir", str(root), "-o", "addopts=",
                        "-W", "ignore", *extra, TEST_FILE], plugins=[plugin])
    print(plugin.summary())
    return int(code)


if __name__ == "__main__":
    raise SystemExit(main())
