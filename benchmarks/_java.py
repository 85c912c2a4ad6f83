"""What the Java benchmarks (java_host.py, java_ffm.py) share: the JNA jar and the actions file their hosts replay."""

from __future__ import annotations

from pathlib import Path

# Debian's libjna-java (set-up command 2 installs it).
JNA_JAR = Path("/usr/share/java/jna.jar")


def write_actions(task: str, worlds: int, path: Path, rounds: int = 16) -> None:
    """Writes ``rounds`` batches of uniform actions for ``worlds`` worlds of ``task`` (seed 0) as little-endian
    float32 rows, the file the Java hosts cycle through, so that every host steps the same actions."""
    import numpy as np

    import joltgym_marl

    with joltgym_marl.WorldPool(task, 1, num_threads=1) as pool:
        shape = (rounds, worlds, pool.num_agents, pool.act_dim)
        low, high = pool.action_low, pool.action_high
    np.random.default_rng(0).uniform(low, high, size=shape).astype("<f4").tofile(path)
