"""A shared-world race: four HalfCheetahs in one MuJoCo world, then 64 races at once.

    .venv/bin/python examples/demo.py          (installed: python -m joltgym_marl demo)

Each cheetah runs a different open-loop gait (a sine wave per joint); the race
is a PettingZoo ParallelEnv, so its loop is plain PettingZoo code. Then the
same game runs as 64 worlds (--worlds) x 4 agents through the native agent
vector env, the way a trainer would use it, and its throughput is put beside
that of one race stepped through parallel_env.

The code is in the package, joltgym_marl/demo.py, so that an installed
joltgym_marl runs it too (the examples folder is not installed).
"""

from __future__ import annotations

import argparse

if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="demo.py", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    from joltgym_marl import demo

    demo.run(demo.build_parser(parser=parser).parse_args())
