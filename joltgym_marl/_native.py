"""Loads the native extension and points it at the bundled MJCF assets.

The extension, ``joltgym_marl._core``, sits in the package's own folder when
the package is installed (``pip install .``) or built in place. A clone's
source folder has none until it is built in place, yet Python started in the
clone's root imports ``joltgym_marl`` from that folder, because the working
directory comes first on ``sys.path``: the source folder shadows the installed
package. Then the extension is taken from the installed distribution of the
same version, found further along ``sys.path``; if there is none, the import
fails with an ImportError that says how to install or build it.
"""

from __future__ import annotations

import base64
import hashlib
import importlib
import importlib.machinery
import importlib.metadata
import importlib.util
import re
import sys
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from types import ModuleType

PACKAGE = "joltgym_marl"
EXTENSION = f"{PACKAGE}._core"
PACKAGE_DIR = Path(__file__).resolve().parent

INSTALL_HINT = (
    "  install the package, from the clone's root:\n"
    "    python3 -m venv .venv && .venv/bin/pip install .\n"
    "  and run .venv/bin/python; or build the extension in place, into the source folder:\n"
    "    .venv/bin/pip install cmake pybind11\n"
    "    .venv/bin/cmake -S . -B build/inplace -DCMAKE_BUILD_TYPE=Release "
    "-DPython_EXECUTABLE=$PWD/.venv/bin/python -Dpybind11_DIR=$(.venv/bin/python -m pybind11 --cmakedir)\n"
    "    .venv/bin/cmake --build build/inplace --target _core && cp build/inplace/_core*.so joltgym_marl/"
)


def _with_libmujoco(load: Callable[[], ModuleType]) -> ModuleType:
    """Runs ``load`` (which loads the extension), making libmujoco.so loadable if needed.

    The extension links against the libmujoco.so of the pinned `mujoco` wheel
    and finds it through its rpath ($ORIGIN/../mujoco: the same site-packages).
    We deliberately do not `import mujoco`: its Python bindings install a
    profiling-timer callback (mjcb_time) that every mj_step then calls, which
    costs about 15% of HalfCheetah's throughput. Only if the rpath does not
    lead to the library (an unusual install layout) is the Python package
    imported to load it.
    """
    try:
        return load()
    except ImportError as error:
        if "libmujoco" not in str(error):
            raise
    import mujoco  # noqa: F401  (loads libmujoco.so into the process)

    return load()


def _extension_in(folder: Path) -> Path | None:
    """The compiled ``_core`` in ``folder`` (any of this interpreter's extension suffixes), or None."""
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        candidate = folder / f"_core{suffix}"
        if candidate.is_file():
            return candidate
    return None


def source_version(package_dir: Path = PACKAGE_DIR) -> str | None:
    """The ``__version__`` that the package folder's ``__init__.py`` declares, or None."""
    try:
        text = (package_dir / "__init__.py").read_text()
    except OSError:
        return None
    match = re.search(r"""^__version__\s*=\s*["']([^"']+)["']""", text, re.MULTILINE)
    return match.group(1) if match else None


@dataclass(frozen=True)
class InstalledExtension:
    """A compiled ``joltgym_marl/_core`` found outside the package folder."""

    path: Path
    distribution: importlib.metadata.Distribution | None  # the joltgym_marl-*.dist-info beside it

    @property
    def version(self) -> str | None:
        return self.distribution.version if self.distribution is not None else None


def installed_extensions(search_path: Iterable[str], exclude: Path = PACKAGE_DIR) -> list[InstalledExtension]:
    """Every compiled ``joltgym_marl/_core`` along ``search_path`` outside the folder ``exclude``."""
    found: list[InstalledExtension] = []
    seen = {exclude.resolve()}
    for entry in search_path:
        try:
            folder = (Path(entry or ".") / PACKAGE).resolve()
        except (OSError, RuntimeError):
            continue
        if folder in seen or not folder.is_dir():
            continue
        seen.add(folder)
        extension = _extension_in(folder)
        if extension is not None:
            dists = list(importlib.metadata.distributions(name=PACKAGE, path=[str(folder.parent)]))
            found.append(InstalledExtension(extension, dists[0] if dists else None))
    return found


def _sha256(path: Path) -> str:
    """A file's hash as a wheel's RECORD writes it."""
    return base64.urlsafe_b64encode(hashlib.sha256(path.read_bytes()).digest()).rstrip(b"=").decode()


def differing_sources(distribution: importlib.metadata.Distribution, package_dir: Path) -> list[str]:
    """The package's Python files that differ between ``package_dir`` and the
    installed ``distribution`` (by its RECORD): a hint that the installed
    extension was built from other sources. Empty when they all match or when
    the distribution records no hashes."""
    recorded = {}
    for file in distribution.files or ():
        if file.parts[0] == PACKAGE and file.suffix == ".py" and file.hash is not None:
            if file.hash.mode == "sha256":
                recorded["/".join(file.parts[1:])] = file.hash.value
    if not recorded:
        return []
    present = {path.relative_to(package_dir).as_posix(): path for path in package_dir.rglob("*.py")}
    return sorted(name for name in recorded.keys() | present.keys()
                  if name not in recorded or name not in present or _sha256(present[name]) != recorded[name])


def _load_file(path: Path) -> ModuleType:
    """Loads the extension at ``path`` as ``joltgym_marl._core``."""
    spec = importlib.util.spec_from_file_location(EXTENSION, path)
    assert spec is not None and spec.loader is not None, path
    module = importlib.util.module_from_spec(spec)
    sys.modules[EXTENSION] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[EXTENSION]
        raise
    package = sys.modules.get(PACKAGE)
    if package is not None:
        package._core = module
    return module


def missing_extension_message(package_dir: Path, version: str | None,
                              candidates: list[InstalledExtension]) -> str:
    lines = [f"joltgym_marl's compiled extension (_core) is not in {package_dir}, and no installed "
             f"joltgym_marl{' ' + version if version else ''} elsewhere on sys.path provides one."]
    if (package_dir.parent / "pyproject.toml").is_file():
        lines.append("That folder is a source tree: Python started in a clone's root imports it "
                     "instead of the installed package.")
    for candidate in candidates:
        lines.append(f"Not used: {candidate.path}, " + (
            f"from joltgym_marl {candidate.version}, not {version}." if candidate.version
            else "with no joltgym_marl-*.dist-info beside it to say which version it is."))
    lines.append("To fix it, either")
    lines.append(INSTALL_HINT)
    return "\n".join(lines)


def load_extension(package_dir: Path = PACKAGE_DIR, search_path: Iterable[str] | None = None) -> ModuleType:
    """``joltgym_marl._core``: from the package folder if it is there, else from
    the installed distribution of the same version along ``search_path``
    (default ``sys.path``); raises ImportError saying what to do if neither."""
    if _extension_in(package_dir) is not None:
        return _with_libmujoco(lambda: importlib.import_module(EXTENSION))
    version = source_version(package_dir)
    candidates = installed_extensions(sys.path if search_path is None else search_path, exclude=package_dir)
    for candidate in candidates:
        if candidate.distribution is None or (version is not None and candidate.version != version):
            continue
        differing = differing_sources(candidate.distribution, package_dir)
        if differing:
            shown = ", ".join(differing[:6]) + (", ..." if len(differing) > 6 else "")
            warnings.warn(
                f"{package_dir} has no compiled extension, so joltgym_marl loads the one of the installed "
                f"joltgym_marl {candidate.version} ({candidate.path}); that installation was made from other "
                f"sources ({shown} differ), so the two may not fit together. If this import fails, "
                f"reinstall from the clone's root: .venv/bin/pip install .", RuntimeWarning, stacklevel=2)
        return _with_libmujoco(partial(_load_file, candidate.path))
    raise ImportError(missing_extension_message(package_dir, version, candidates), name=EXTENSION)


_core = load_extension()


def _find_asset_dir() -> Path:
    installed = PACKAGE_DIR / "assets"
    if installed.is_dir():
        return installed
    # A source checkout, where the assets live at the repository root.
    source = PACKAGE_DIR.parent / "assets"
    if source.is_dir():
        return source
    raise FileNotFoundError(
        f"joltgym_marl assets not found (looked in {installed} and {source})"
    )


ASSET_DIR = _find_asset_dir()
_core.set_asset_dir(str(ASSET_DIR))


def numpy_norm_is_fused(samples: int = 64) -> bool | None:
    """How ``np.linalg.norm`` rounds a short float64 vector in this process.

    Its ``v.dot(v)`` is OpenBLAS's dot, whose kernel is chosen for the CPU at
    run time: on some CPUs it accumulates with fused multiply-adds, on others
    it rounds each product. True or False by which of the two reproduces NumPy
    on random vectors of 2 to 4 entries (the tasks' norms); None if neither does.
    """
    import numpy as np
    from fractions import Fraction

    def fused_multiply_add(a: float, b: float, c: float) -> float:
        return float(Fraction(a) * Fraction(b) + Fraction(c))  # rounded once

    fused = separate = True
    rng = np.random.default_rng(20261204)
    for size in (2, 3, 4):
        for vector in rng.normal(size=(samples, size)):
            values = [float(v) for v in vector]
            with_fma = product = values[0] * values[0]
            for v in values[1:]:
                with_fma = fused_multiply_add(v, v, with_fma)
                product = product + v * v
            numpy_value = float(np.linalg.norm(vector))
            fused &= numpy_value == float(np.sqrt(with_fma))
            separate &= numpy_value == float(np.sqrt(product))
    if fused != separate:
        return fused
    return None


def _match_numpy_norm() -> None:
    """Makes the native np.linalg.norm equal NumPy's on this CPU (task.h, NumpyNorm).

    JOLTGYM_NUMPY_NORM ("fma" or "separate"), when set, is taken as given;
    otherwise NumPy is probed and the variable set, so that C API hosts this
    process starts (Java, C) compute the same values as its pools.
    """
    import os

    chosen = os.environ.get("JOLTGYM_NUMPY_NORM")
    if chosen not in ("fma", "separate"):
        fused = numpy_norm_is_fused()
        if fused is None:
            return  # neither: keep the native default (fused)
        chosen = "fma" if fused else "separate"
        os.environ["JOLTGYM_NUMPY_NORM"] = chosen
    _core._set_numpy_norm_rounding(chosen == "fma")


_match_numpy_norm()

core = _core
