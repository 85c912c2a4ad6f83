#!/usr/bin/env python3
"""Fetch Jolt Physics' MIT core source (pinned) for the optional Jolt engine.

Jolt Physics v5.5.0's core tree (``Build/``, ``Jolt/``, ``LICENSE``) ships
inside the PyPI sdist ``simvx-physics-jolt==0.0.0.dev3104`` under
``vendor/JoltPhysics``. This script resolves that one file by name and
version through the standard simple API (PEP 503) of the index pip is
configured with, downloads it, checks its sha256, caches it, and extracts
*only* the MIT Jolt tree (the rest of that sdist is AGPL: nothing else is
unpacked, built or shipped).

    python tools/fetch_jolt.py [--cache DIR]

Prints the path of the extracted Jolt source folder (the one holding
``Build/CMakeLists.txt``) on stdout and exits 0; on any failure prints why on
stderr and exits 1 (the build then goes on without Jolt). ``JOLT_SOURCE_DIR``,
when set, is checked and printed instead: a user's own Jolt checkout.
Standard library only, so that CMake can run it before anything is installed.
"""

from __future__ import annotations

import argparse
import configparser
import hashlib
import html.parser
import os
import pathlib
import shutil
import sys
import tarfile
import tempfile
import urllib.parse
import urllib.request

PROJECT = "simvx-physics-jolt"
FILENAME = "simvx_physics_jolt-0.0.0.dev3104.tar.gz"
SHA256 = "fb0f5678f0d0ff45413eee8e0ae0d71f11883302f27d4f1bd3d56d891dc71ebc"
JOLT_VERSION = "5.5.0"
PREFIX = "simvx_physics_jolt-0.0.0.dev3104/vendor/JoltPhysics/"
KEEP = ("Build/", "Jolt/", "LICENSE")
DEFAULT_INDEX = "https://pypi.org/simple/"


def fail(message: str) -> None:
    print(f"fetch_jolt: {message}", file=sys.stderr)
    sys.exit(1)


def is_jolt_source(folder: pathlib.Path) -> bool:
    return (folder / "Build" / "CMakeLists.txt").is_file() and (folder / "Jolt" / "Jolt.h").is_file()


def pip_config_files() -> list[pathlib.Path]:
    """pip's configuration files, lowest precedence first (pip's own order:
    global, user, site), or only PIP_CONFIG_FILE's when it is set. Read here
    rather than through ``pip config``: inside pip's isolated build
    environment, where CMake runs this script during ``pip install .``, pip
    itself cannot be imported."""
    own = os.environ.get("PIP_CONFIG_FILE")
    if own:
        return [] if own == os.devnull else [pathlib.Path(own)]
    xdg_dirs = os.environ.get("XDG_CONFIG_DIRS") or "/etc/xdg"
    files = [pathlib.Path(d) / "pip" / "pip.conf" for d in reversed(xdg_dirs.split(os.pathsep)) if d]
    files.append(pathlib.Path("/etc/pip.conf"))
    home = pathlib.Path(os.path.expanduser("~"))
    files.append(home / ".pip" / "pip.conf")
    files.append(pathlib.Path(os.environ.get("XDG_CONFIG_HOME") or home / ".config") / "pip" / "pip.conf")
    # The site file of the environment pip installs into (the venv, not pip's build overlay).
    prefix = os.environ.get("VIRTUAL_ENV") or sys.prefix
    files.append(pathlib.Path(prefix) / "pip.conf")
    return files


def pip_setting(name: str) -> str:
    """pip's setting `name` (index-url, extra-index-url, find-links) as pip
    sees it for `pip install`: PIP_<NAME>, else the last of its config files
    that sets it ([install] over [global])."""
    value = os.environ.get("PIP_" + name.upper().replace("-", "_"))
    if value is not None:
        return value
    for path in reversed(pip_config_files()):
        config = configparser.RawConfigParser()
        try:
            config.read(path, encoding="utf-8")
        except (OSError, configparser.Error, UnicodeDecodeError):
            continue
        for section in ("install", "global"):
            if config.has_option(section, name):
                return config.get(section, name)
    return ""


def configured_indexes() -> list[str]:
    """pip's index-url (default PyPI's), then its extra-index-urls."""
    index = pip_setting("index-url").split()
    return [index[0] if index else DEFAULT_INDEX] + pip_setting("extra-index-url").split()


def find_links_archive() -> pathlib.Path | None:
    """FILENAME in one of pip's find-links folders, where it may already be."""
    for place in pip_setting("find-links").split():
        folder = pathlib.Path(urllib.parse.urlsplit(place).path if place.startswith("file:") else place)
        if (folder / FILENAME).is_file():
            return folder / FILENAME
    return None


class Anchors(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.links: list[tuple[str, str]] = []
        self._href: str | None = None
        self._text = ""

    def handle_starttag(self, tag, attrs):
        if tag == "a":
            self._href = dict(attrs).get("href")
            self._text = ""

    def handle_data(self, data):
        if self._href is not None:
            self._text += data

    def handle_endtag(self, tag):
        if tag == "a" and self._href is not None:
            self.links.append((self._href, self._text.strip()))
            self._href = None


def resolve(index: str) -> str:
    """The download URL of FILENAME in `index`'s project page (PEP 503 HTML)."""
    page = index.rstrip("/") + "/" + PROJECT + "/"
    if page.startswith("file:"):  # a local index folder: its page is the folder's index.html, as pip reads it
        page += "index.html"
    request = urllib.request.Request(page, headers={"Accept": "text/html"})
    with urllib.request.urlopen(request, timeout=60) as response:
        text = response.read().decode("utf-8", "replace")
        base = response.geturl()
    parser = Anchors()
    parser.feed(text)
    for href, label in parser.links:
        name = urllib.parse.urlsplit(href).path.rsplit("/", 1)[-1]
        if FILENAME in (name, label):
            return urllib.parse.urljoin(base, href)
    raise LookupError(f"{page} lists no {FILENAME}")


def download(cache: pathlib.Path) -> pathlib.Path:
    archive = cache / FILENAME
    if archive.is_file() and sha256(archive) == SHA256:
        return archive
    local = find_links_archive()
    if local is not None and sha256(local) == SHA256:
        shutil.copyfile(local, archive)
        return archive
    errors = []
    for index in configured_indexes():
        try:
            url = resolve(index)
            part = archive.with_suffix(".part")
            with urllib.request.urlopen(url, timeout=180) as response, open(part, "wb") as out:
                shutil.copyfileobj(response, out)
            digest = sha256(part)
            if digest != SHA256:
                part.unlink()
                raise ValueError(f"{url} has sha256 {digest}, expected {SHA256}")
            part.replace(archive)
            return archive
        except Exception as error:  # noqa: BLE001 - every index is tried, each failure reported
            errors.append(f"{index}: {error}")
    fail("could not fetch " + FILENAME + ":\n  " + "\n  ".join(errors))
    raise AssertionError  # unreachable


def sha256(path: pathlib.Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def extract(archive: pathlib.Path, target: pathlib.Path) -> None:
    """Unpacks vendor/JoltPhysics/{Build,Jolt,LICENSE} only, into `target`."""
    staging = pathlib.Path(tempfile.mkdtemp(dir=target.parent, prefix=".jolt-"))
    try:
        with tarfile.open(archive, "r:gz") as tar:
            for member in tar.getmembers():
                if not member.name.startswith(PREFIX):
                    continue
                relative = member.name[len(PREFIX):]
                if not relative.startswith(KEEP) or not (member.isfile() or member.isdir()):
                    continue
                parts = pathlib.PurePosixPath(relative).parts
                if ".." in parts or relative.startswith("/"):
                    continue
                destination = staging.joinpath(*parts)
                if member.isdir():
                    destination.mkdir(parents=True, exist_ok=True)
                    continue
                destination.parent.mkdir(parents=True, exist_ok=True)
                with tar.extractfile(member) as src, open(destination, "wb") as out:
                    shutil.copyfileobj(src, out)
        if not is_jolt_source(staging):
            raise ValueError(f"{FILENAME} has no Jolt tree under {PREFIX}")
        (staging / "JOLT_VERSION").write_text(JOLT_VERSION + "\n")
        if target.exists():
            shutil.rmtree(target)
        staging.rename(target)
    finally:
        if staging.exists():
            shutil.rmtree(staging)


def default_cache() -> pathlib.Path:
    root = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return pathlib.Path(root) / "joltgym_marl"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", type=pathlib.Path, default=None,
                        help="cache folder (default: $JOLTGYM_JOLT_CACHE or ~/.cache/joltgym_marl)")
    args = parser.parse_args()
    own = os.environ.get("JOLT_SOURCE_DIR")
    if own:
        folder = pathlib.Path(own).expanduser().resolve()
        if not is_jolt_source(folder):
            fail(f"JOLT_SOURCE_DIR={own} is not a Jolt source folder (no Build/CMakeLists.txt and Jolt/Jolt.h)")
        print(folder)
        return
    cache = args.cache or pathlib.Path(os.environ.get("JOLTGYM_JOLT_CACHE") or default_cache())
    cache.mkdir(parents=True, exist_ok=True)
    target = cache / f"JoltPhysics-{JOLT_VERSION}"
    if is_jolt_source(target) and (target / "JOLT_VERSION").is_file():
        print(target)
        return
    try:
        extract(download(cache), target)
    except (OSError, tarfile.TarError, ValueError) as error:
        fail(str(error))
    print(target)


if __name__ == "__main__":
    main()
