"""The distribution says what it is: an MIT LICENSE file shipped in the wheel,
and the project's URLs in its metadata."""

from __future__ import annotations

import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
HOME = "https://github.com/joltgym/joltgym_marl"


def test_license_file_is_mit_by_the_authors():
    text = (ROOT / "LICENSE").read_text()
    assert text.startswith("MIT License\n\nCopyright (c) 2026 the joltgym_marl authors\n")
    assert "Permission is hereby granted, free of charge" in text and 'THE SOFTWARE IS PROVIDED "AS IS"' in text
    assert PYPROJECT["project"]["license"] == {"text": "MIT"}
    assert "License :: OSI Approved :: MIT License" in PYPROJECT["project"]["classifiers"]


def test_license_file_goes_into_the_wheel():
    # scikit-build-core copies these into the wheel's .dist-info (checked by building one:
    # joltgym_marl-0.1.0.dist-info/licenses/LICENSE).
    assert PYPROJECT["tool"]["scikit-build"]["wheel"]["license-files"] == ["LICENSE"]


def test_project_urls_point_at_one_home():
    urls = PYPROJECT["project"]["urls"]
    assert set(urls) == {"Homepage", "Documentation", "Source", "Issues"}
    assert urls["Homepage"] == urls["Source"] == HOME
    assert urls["Issues"] == f"{HOME}/issues" and urls["Documentation"].startswith(f"{HOME}/")
