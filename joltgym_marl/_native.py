"""Loads the native extension and points it at the bundled MJCF assets."""

from __future__ import annotations

from pathlib import Path

# The extension links against the libmujoco.so of the pinned `mujoco` wheel
# and finds it through its rpath ($ORIGIN/../mujoco: the same site-packages).
# We deliberately do not `import mujoco`: its Python bindings install a
# profiling-timer callback (mjcb_time) that every mj_step then calls, which
# costs about 15% of HalfCheetah's throughput. Only if the rpath does not lead
# to the library (an unusual install layout) is the Python package imported
# to load it.
try:
    from joltgym_marl import _core
except ImportError as error:
    if "libmujoco" not in str(error):
        raise
    import mujoco  # noqa: F401  (loads libmujoco.so into the process)

    from joltgym_marl import _core


def _find_asset_dir() -> Path:
    installed = Path(__file__).resolve().parent / "assets"
    if installed.is_dir():
        return installed
    # A source checkout, where the assets live at the repository root.
    source = Path(__file__).resolve().parents[1] / "assets"
    if source.is_dir():
        return source
    raise FileNotFoundError(
        f"joltgym_marl assets not found (looked in {installed} and {source})"
    )


ASSET_DIR = _find_asset_dir()
_core.set_asset_dir(str(ASSET_DIR))

core = _core
