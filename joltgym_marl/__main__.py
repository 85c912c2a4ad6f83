"""``python -m joltgym_marl``: see :mod:`joltgym_marl.cli`."""

import sys

from joltgym_marl.cli import main

try:
    sys.exit(main())
except BrokenPipeError:  # `python -m joltgym_marl info sumo | head`: the reader left; say nothing more
    sys.stderr.close()
    sys.exit(0)
