"""Loads the native extension and points it at the bundled MJCF assets."""

from __future__ import annotations

from pathlib import Path

# Importing mujoco first loads the libmujoco.so of the pinned wheel into the
# process, so the extension (which links against that exact file) resolves to
# the same library whatever the loader's search path is.
import mujoco  # noqa: F401  (imported for its side effect)

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
