"""Jolt Physics in the default build: ``pip install .`` fetches its pinned
source by package name (tools/fetch_jolt.py) from the index pip is configured
with, inside pip's isolated build environment too, where pip itself cannot be
imported; where that is impossible, the build goes on without Jolt after one
warning saying why. No test here touches the network."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TOOLS = ROOT / "tools"
sys.path.insert(0, str(TOOLS))
import fetch_jolt  # noqa: E402

# pip's settings, and this session's, are not what these tests are about.
PIP_VARIABLES = ("PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_FIND_LINKS", "PIP_CONFIG_FILE")


def env_with(**values: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in PIP_VARIABLES and k != "VIRTUAL_ENV"}
    env.update(values)
    return env


def test_pips_index_is_read_where_pip_cannot_be_imported(tmp_path):
    # In pip's isolated build environment `python -m pip config list` fails (pip is not on the
    # path), and the fetch fell back to pypi.org, ignoring a configured mirror. A venv without pip
    # is that situation.
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(tmp_path / "venv")], check=True,
                   timeout=120)
    conf = tmp_path / "pip.conf"
    conf.write_text("[global]\nindex-url = file:///srv/mirror/simple\nfind-links = /srv/wheels\n"
                    "[install]\nextra-index-url = https://a.example/simple\n  https://b.example/simple\n")
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import fetch_jolt; "
            "print(fetch_jolt.configured_indexes()); print(fetch_jolt.pip_setting('find-links'))")
    done = subprocess.run([str(tmp_path / "venv" / "bin" / "python"), "-c", code, str(TOOLS)], capture_output=True,
                          text=True, timeout=120, env=env_with(PIP_CONFIG_FILE=str(conf)))
    assert done.returncode == 0, done.stderr
    indexes, find_links = done.stdout.splitlines()
    assert indexes == str(["file:///srv/mirror/simple", "https://a.example/simple", "https://b.example/simple"])
    assert find_links == "/srv/wheels"
    # PIP_* variables win over the files, as in pip.
    done = subprocess.run([str(tmp_path / "venv" / "bin" / "python"), "-c", code, str(TOOLS)], capture_output=True,
                          text=True, timeout=120,
                          env=env_with(PIP_CONFIG_FILE=str(conf), PIP_INDEX_URL="https://c.example/simple"))
    assert done.stdout.splitlines()[0] == str(["https://c.example/simple", "https://a.example/simple",
                                                 "https://b.example/simple"])


def test_a_local_index_and_find_links_folder_are_searched(tmp_path, monkeypatch):
    for name in PIP_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    page = tmp_path / "simple" / fetch_jolt.PROJECT
    page.mkdir(parents=True)
    (page / "index.html").write_text(f'<a href="../../files/{fetch_jolt.FILENAME}#sha256=0">{fetch_jolt.FILENAME}</a>')
    found = fetch_jolt.resolve((tmp_path / "simple").as_uri())
    assert found == (tmp_path / "files" / fetch_jolt.FILENAME).as_uri() + "#sha256=0"
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    monkeypatch.setenv("PIP_FIND_LINKS", f"/nowhere {wheels}")
    assert fetch_jolt.find_links_archive() is None
    (wheels / fetch_jolt.FILENAME).write_bytes(b"not the archive")
    assert fetch_jolt.find_links_archive() == wheels / fetch_jolt.FILENAME


@pytest.mark.skipif(shutil.which("cmake") is None, reason="needs cmake (the test extra installs it)")
def test_the_default_build_fetches_jolt_and_says_so_when_it_cannot(tmp_path):
    # The default (AUTO) used Jolt only when its source was already cached, so `pip install .`
    # built without it, silently. Now it fetches; with an index that cannot be reached (offline),
    # one warning says why and how to add Jolt later, and the configure goes on.
    done = subprocess.run(
        ["cmake", "-S", str(ROOT), "-B", str(tmp_path / "build"), "-DJOLTGYM_BUILD_PYTHON=OFF",
         "-DJOLTGYM_BUILD_CAPI=OFF", f"-DJOLTGYM_JOLT_CACHE={tmp_path / 'cache'}",
         f"-DPython_EXECUTABLE={sys.executable}"],
        capture_output=True, text=True, timeout=600,
        env=env_with(PIP_CONFIG_FILE=os.devnull, PIP_INDEX_URL=(tmp_path / "no-index").as_uri(),
                     JOLT_SOURCE_DIR=""))
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "Jolt: fetching the pinned source (tools/fetch_jolt.py)" in done.stdout
    warning = " ".join(done.stderr.split())  # CMake wraps a message's lines
    assert "Jolt Physics: building WITHOUT it" in warning and "fetching its pinned source failed" in warning
    assert "To add it: python tools/fetch_jolt.py" in warning
    # Required (ON), the same failure stops the configure.
    done = subprocess.run(
        ["cmake", "-S", str(ROOT), "-B", str(tmp_path / "build-on"), "-DJOLTGYM_BUILD_PYTHON=OFF",
         "-DJOLTGYM_BUILD_CAPI=OFF", "-DJOLTGYM_WITH_JOLT=ON", f"-DJOLTGYM_JOLT_CACHE={tmp_path / 'cache'}",
         f"-DPython_EXECUTABLE={sys.executable}"],
        capture_output=True, text=True, timeout=600,
        env=env_with(PIP_CONFIG_FILE=os.devnull, PIP_INDEX_URL=(tmp_path / "no-index").as_uri(),
                     JOLT_SOURCE_DIR=""))
    assert done.returncode != 0 and "Jolt Physics: building WITHOUT it" in " ".join(done.stderr.split())
