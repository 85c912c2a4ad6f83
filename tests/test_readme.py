"""The code of the README and of the docs runs as written, from the clone's root.

The pages are README.md and every docs/**/*.md (see ``doc_pages``: the task
pages under docs/tasks/ are generated from the registry when the site is
built, so their text comes from that generator here); the same rules hold on
every page:

* Every ```python block runs on its own in a fresh interpreter whose working
  directory is the repository root (as when pasted into ``python`` started
  there, so ``import joltgym_marl`` finds the source folder first).
* Every command of a ```bash block runs in bash, from the repository root, in
  page order (README.md, then the docs in reading order: see ``doc_pages``),
  except the README's two set-up commands (``python3 -m venv .venv ...`` and
  ``tools/setup_tests.sh ...``: they create the environments these tests run
  in); instead, the test command among them must appear verbatim in ``.ci/run``.
  A command marked ``# long-running`` (the README says so next to it) runs
  only with ``--help``. So that these commands cannot overwrite anything of
  the developer's, their root is a mirror of the repository (a symlink to each
  top-level entry) with its own empty ``runs/``; they run against the same
  ``joltgym_marl`` as this test session (see ``python_path_env``).
* No command says a bare ``python`` or ``pip``: set-up made ``.venv``.
* A page's ``` and ```text blocks (output, diagrams) and a docs page's MyST
  directives (```{toctree}, ...) do not run; commands belong in ```bash blocks,
  so a plain block holds none.
* No command writes (``--out``, ``--save``) to a file that git tracks.
* ``import joltgym_marl`` from a clone's root, whose source folder has no
  compiled extension, loads the installed one; without one, the ImportError
  says what to do.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.metadata
import importlib.util
import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

import joltgym_marl
from joltgym_marl import _native

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
DOCS = ROOT / "docs"
LONG_RUNNING = re.compile(r"\s#\s*long-running\b.*$")
# The set-up commands: command 1 makes .venv, command 2 runs the test set-up script.
SETUP_PREFIXES = ("python3 -m venv .venv", "tools/setup_tests.sh")
BARE_TOOL = re.compile(r"(?<![\w./-])(python3?|pip3?)(?=\s|$)")


def generated_task_pages() -> dict[str, str]:
    """The task pages as the site build generates them (docs/_ext/task_pages.py)."""
    spec = importlib.util.spec_from_file_location("task_pages", DOCS / "_ext" / "task_pages.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return {f"docs/{relative}": text for relative, text in module.pages().items()}


def toctree_order(index: str) -> list[str]:
    """The pages docs/index.md's toctrees list by name, in that order."""
    names = []
    for body in re.findall(r"^```\{toctree\}[^\n]*\n(.*?)^```", index, re.MULTILINE | re.DOTALL):
        names += [f"docs/{line.strip()}.md" for line in body.splitlines()
                  if line.strip() and not line.startswith(":") and "*" not in line]
    return names


def doc_pages() -> dict[str, str]:
    """Every page whose code runs, by path, in page order: README.md, docs/index.md,
    the pages its toctrees name (the guides in reading order), then every other
    docs/**/*.md by path; the generated task pages come from their generator."""
    generated = generated_task_pages()
    on_disk = {p.relative_to(ROOT).as_posix(): p.read_text() for p in sorted(DOCS.rglob("*.md"))
               if not p.relative_to(DOCS).as_posix().startswith("tasks/")}
    everything = {**on_disk, **generated}
    order = ["README.md", "docs/index.md", *toctree_order(on_disk["docs/index.md"])]
    order += sorted(set(everything) - set(order))
    pages = {"README.md": README}
    pages.update((name, everything[name]) for name in order if name in everything)
    return pages


@dataclass(frozen=True)
class Block:
    page: str
    language: str
    line: int  # of the opening fence, 1-based
    text: str

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"


def fenced_blocks(markdown: str, page: str = "README.md") -> list[Block]:
    blocks = []
    for match in re.finditer(r"^```([\w{}-]*)[^\n]*\n(.*?)^```[ \t]*$", markdown, re.MULTILINE | re.DOTALL):
        blocks.append(Block(page, match.group(1), markdown.count("\n", 0, match.start()) + 1, match.group(2)))
    return blocks


def commands(block: Block) -> list[str]:
    """A shell block's commands: its lines with continuations joined, comment lines and blank lines dropped."""
    joined = block.text.replace("\\\n", " ")
    return [line.strip() for line in joined.splitlines() if line.strip() and not line.strip().startswith("#")]


def inline_code(markdown: str) -> list[str]:
    prose = re.sub(r"^```.*?^```[ \t]*$", "", markdown, flags=re.MULTILINE | re.DOTALL)
    return re.findall(r"`([^`\n]+)`", prose)


PAGES = doc_pages()
BLOCKS = [b for page, text in PAGES.items() for b in fenced_blocks(text, page)]
PYTHON_BLOCKS = [b for b in BLOCKS if b.language == "python"]
BASH_BLOCKS = [b for b in BLOCKS if b.language == "bash"]
ALL_COMMANDS = [c for b in BASH_BLOCKS for c in commands(b)]
SETUP_COMMANDS = [c for b in BASH_BLOCKS if b.page == "README.md" for c in commands(b) if c.startswith(SETUP_PREFIXES)]
RUN_COMMANDS = [c for c in ALL_COMMANDS if not c.startswith(SETUP_PREFIXES)]


def python_path_env() -> dict[str, str]:
    """The environment for subprocesses that should import the same
    ``joltgym_marl`` as this session: scripts put their own folder first on
    sys.path, so without this they would import the installed package even
    when this session tests the source tree (in place, with its own build)."""
    package_parent = str(Path(joltgym_marl.__file__).resolve().parents[1])
    python_path = os.pathsep.join(p for p in (package_parent, os.environ.get("PYTHONPATH")) if p)
    return dict(os.environ, PYTHONPATH=python_path)


def test_pages_have_the_blocks_this_test_expects():
    # A block in another language would escape these tests; a docs page may
    # also hold MyST directives, which are not code.
    for block in BLOCKS:
        directive = block.page != "README.md" and re.fullmatch(r"\{[\w-]+\}", block.language)
        assert block.language in ("python", "bash", "", "text") or directive, (
            f"{block.where}: a ```{block.language} block")
    readme = [b for b in BLOCKS if b.page == "README.md"]
    assert len([b for b in readme if b.language == "python"]) >= 3 and len(PYTHON_BLOCKS) >= 20
    assert len(RUN_COMMANDS) >= 30
    assert {"docs/guides/pettingzoo.md", "docs/guides/c_api.md", "docs/tasks/sumo.md"} <= set(PAGES)
    for block in BLOCKS:
        if block.language in ("", "text"):  # output or a diagram: it does not run
            assert not BARE_TOOL.search(block.text) and ".venv/bin" not in block.text, (
                f"{block.where}: commands belong in a ```bash block")


def test_setup_commands_are_the_ones_ci_runs():
    assert len(SETUP_COMMANDS) == 2, SETUP_COMMANDS
    test_command = [c for c in SETUP_COMMANDS if "pytest" in c]
    assert len(test_command) == 1, SETUP_COMMANDS
    ci_lines = [line.strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()]
    assert test_command[0] in ci_lines, f".ci/run does not run the README's test command {test_command[0]!r}"


def test_no_command_uses_a_bare_python_or_pip():
    spans = RUN_COMMANDS + [span for text in PAGES.values() for span in inline_code(text)]
    bare = [s for s in spans if BARE_TOOL.search(s) and not s.startswith(SETUP_PREFIXES)]
    assert not bare, f"say .venv/bin/python or .venv/bin/pip (what set-up made): {bare}"


def test_no_command_writes_to_a_tracked_file():
    for command in RUN_COMMANDS:
        words = shlex.split(LONG_RUNNING.sub("", command))
        for flag, value in zip(words, words[1:]):
            if flag in ("--out", "--save"):
                assert not value.startswith(("docs/", "benchmarks/results/")), command
                tracked = subprocess.run(["git", "ls-files", "--", value], cwd=ROOT, capture_output=True, text=True)
                assert tracked.returncode == 0 and not tracked.stdout.strip(), (
                    f"{command!r} would overwrite the tracked {value}")


# A block whose first line is this comment runs with the RLlib environment's
# interpreter (set-up command 2 makes .venv-rllib); the same for BenchMARL's.
RLLIB_BLOCK = "# runs in .venv-rllib"
RLLIB_PYTHON = ROOT / ".venv-rllib" / "bin" / "python"
BENCHMARL_BLOCK = "# runs in .venv-benchmarl"
BENCHMARL_PYTHON = ROOT / ".venv-benchmarl" / "bin" / "python"


@pytest.mark.parametrize("block", PYTHON_BLOCKS, ids=lambda b: b.where)
def test_python_block_runs(block):
    python = sys.executable
    if block.text.startswith(RLLIB_BLOCK):
        assert RLLIB_PYTHON.exists(), f"{RLLIB_PYTHON} is missing: run the README's set-up command 2"
        python = str(RLLIB_PYTHON)
    if block.text.startswith(BENCHMARL_BLOCK):
        assert BENCHMARL_PYTHON.exists(), f"{BENCHMARL_PYTHON} is missing: run the README's set-up command 2"
        python = str(BENCHMARL_PYTHON)
    proc = subprocess.run([python, "-c", block.text], cwd=ROOT, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, f"{block.where}\n{proc.stdout[-3000:]}{proc.stderr[-5000:]}"


# What the commands write, kept in the mirror: ``runs`` (their outputs) and ``build-capi`` (the Java guide's CMake
# build: a library built there bakes the mirror's path into it as its assets folder, so through a link into the
# clone the clone's own build-capi would be left with a library that looks for assets in a deleted folder).
NOT_MIRRORED = ("runs", "build-capi")


def mirror_of_root(where: Path) -> Path:
    """A folder with a symlink to each top-level entry of the repository but those the commands write
    (``NOT_MIRRORED``), which they create in the mirror itself."""
    where.mkdir()
    for entry in ROOT.iterdir():
        if entry.name not in NOT_MIRRORED:
            (where / entry.name).symlink_to(entry)
    return where


def test_the_mirror_leaves_what_commands_write_in_the_clone_alone(tmp_path, monkeypatch):
    fake_root = tmp_path / "clone"
    for name in ("README.md", "runs", "build-capi", "assets"):
        (fake_root / name).mkdir(parents=True)
    monkeypatch.setattr(sys.modules[__name__], "ROOT", fake_root)
    mirror = mirror_of_root(tmp_path / "mirror")
    assert sorted(entry.name for entry in mirror.iterdir()) == ["README.md", "assets"]
    assert all((mirror / name).is_symlink() for name in ("README.md", "assets"))


def as_run(command: str) -> str:
    """The command the test runs: a long-running one only with --help."""
    if LONG_RUNNING.search(command):
        return LONG_RUNNING.sub("", command).rstrip() + " --help"
    return command


# What a command needs from the system, and the Debian package that has it
# (tools/setup_tests.sh installs them): named when such a command fails.
PREREQUISITES = [
    (re.compile(r"/usr/share/java/jna\.jar"), lambda: Path("/usr/share/java/jna.jar").exists(), "libjna-java"),
    (re.compile(r"(^|[;&|]\s*)(javac|java)\s"), lambda: shutil.which("javac") is not None, "openjdk-17-jdk-headless"),
    (re.compile(r"junit-platform-console-standalone"),
     lambda: Path("/usr/share/java/junit-platform-console-standalone.jar").exists(), "junit5"),
]


def missing_prerequisites(command: str) -> str:
    """A hint naming the Debian packages ``command`` needs that this machine lacks ('' if none)."""
    missing = [package for pattern, present, package in PREREQUISITES if pattern.search(command) and not present()]
    if not missing:
        return ""
    return (f"this command needs Debian's {', '.join(missing)}, which is not installed: set-up command 2 "
            f"(tools/setup_tests.sh) installs it\n")


def test_missing_prerequisites_are_named():
    command = "javac -cp /usr/share/java/jna.jar -d build-capi/java examples/java/Rollout.java"
    hint = missing_prerequisites(command)
    assert ("libjna-java" in hint) == (not Path("/usr/share/java/jna.jar").exists())
    assert missing_prerequisites(".venv/bin/python examples/demo.py") == ""


@pytest.mark.slow
def test_bash_commands_run(tmp_path):
    if not (ROOT / ".venv" / "bin" / "python").exists():
        pytest.fail("the README's commands use .venv/bin/python: run the README's set-up first")
    root = mirror_of_root(tmp_path / "root")
    env = python_path_env()
    failures = []
    for command in RUN_COMMANDS:
        proc = subprocess.run(["bash", "-c", f"set -euo pipefail; {as_run(command)}"], cwd=root, env=env,
                              capture_output=True, text=True, timeout=900)
        if proc.returncode != 0:
            failures.append(f"$ {as_run(command)}\n{missing_prerequisites(command)}"
                            f"{proc.stdout[-2000:]}{proc.stderr[-3000:]}")
        elif LONG_RUNNING.search(command):
            assert "usage:" in proc.stdout, command
    assert not failures, "\n\n".join(failures)
    # Each command that ran in full wrote what its --out or --save names.
    for command in RUN_COMMANDS:
        words = shlex.split(command) if not LONG_RUNNING.search(command) else []
        for flag, value in zip(words, words[1:]):
            if flag in ("--out", "--save"):
                written = root / value
                assert written.exists() and (written.is_dir() or written.stat().st_size > 0), command


# --- import joltgym_marl from a clone's root ------------------------------------------------------

IMPORT_AND_STEP = """
import joltgym_marl
core = joltgym_marl.HalfCheetahCore()
obs, info = core.reset(seed=0)
assert obs.shape == (17,), obs.shape
print(joltgym_marl.__file__)
print(joltgym_marl._core.__file__)
"""


def clone_without_extension(where: Path) -> Path:
    """The package's source folder without any compiled file, and the assets, in ``where``."""
    ignore = shutil.ignore_patterns("*.so", "*.pyd", "__pycache__")
    shutil.copytree(ROOT / "joltgym_marl", where / "joltgym_marl", ignore=ignore)
    shutil.copytree(ROOT / "assets", where / "assets")
    return where


def record_hash(path: Path) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(path.read_bytes()).digest()).rstrip(b"=").decode()


def fake_installation(site: Path, version: str) -> Path:
    """An installed joltgym_marl in ``site``, as pip lays it out: the package
    (this tree's Python files and the extension this session runs) and its
    dist-info with METADATA and RECORD."""
    package = site / "joltgym_marl"
    shutil.copytree(ROOT / "joltgym_marl", package, ignore=shutil.ignore_patterns("*.so", "__pycache__"))
    extension = Path(joltgym_marl._core.__file__)
    shutil.copy2(extension, package / extension.name)
    info = site / f"joltgym_marl-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: joltgym_marl\nVersion: {version}\n")
    rows = [f"{p.relative_to(site).as_posix()},sha256={record_hash(p)},{p.stat().st_size}"
            for p in sorted(package.rglob("*")) if p.is_file()]
    (info / "RECORD").write_text("\n".join(rows + [f"{info.name}/RECORD,,"]) + "\n")
    return package / extension.name


def run_in(cwd: Path, env: dict[str, str], *python_args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *python_args, "-c", IMPORT_AND_STEP], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("edited", [False, True], ids=["same-sources", "edited-sources"])
def test_import_from_a_clone_root_loads_the_installed_extension(tmp_path, edited):
    clone = clone_without_extension(tmp_path / "clone")
    installed = fake_installation(tmp_path / "site", joltgym_marl.__version__)
    if edited:
        with (clone / "joltgym_marl" / "cores.py").open("a") as f:
            f.write("# a local edit\n")
    env = dict(os.environ, PYTHONPATH=str(tmp_path / "site"))
    # Same sources: no warning at all; edited ones: a warning naming the file, and it still loads.
    proc = run_in(clone, env, *([] if edited else ["-W", "error::RuntimeWarning"]))
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    package_file, core_file = proc.stdout.split()[-2:]
    assert Path(package_file).resolve() == (clone / "joltgym_marl" / "__init__.py").resolve()  # shadowed
    assert Path(core_file).resolve() == installed.resolve()
    if edited:
        assert "made from other sources (cores.py differ)" in proc.stderr, proc.stderr
        assert "pip install ." in proc.stderr


def test_import_from_a_clone_root_with_the_real_installation(tmp_path):
    """The same with the package that ``pip install .`` put into this interpreter's environment."""
    try:
        dist = importlib.metadata.distribution("joltgym_marl")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("joltgym_marl is not installed in this environment (the README's set-up installs it)")
    installed = Path(dist.locate_file("joltgym_marl"))
    if not (installed / "__init__.py").is_file():
        pytest.skip(f"joltgym_marl is installed in a form without a package folder ({dist.locate_file('')})")
    differing = _native.differing_sources(dist, ROOT / "joltgym_marl")
    if differing:
        pytest.skip(f"the installed joltgym_marl ({installed}) was built from other sources than this tree "
                    f"({', '.join(differing[:4])}...); reinstall with .venv/bin/pip install . to test it")
    clone = clone_without_extension(tmp_path / "clone")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = run_in(clone, env, "-W", "error::RuntimeWarning")
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    package_file, core_file = proc.stdout.split()[-2:]
    assert Path(package_file).resolve().parent == (clone / "joltgym_marl").resolve()
    assert Path(core_file).resolve().parent == installed.resolve()


def test_import_without_an_installed_extension_says_what_to_do(tmp_path):
    clone = clone_without_extension(tmp_path / "clone")
    other_version = fake_installation(tmp_path / "site", "0.0.1")
    for search_path, mentions in [([], []), ([str(tmp_path / "site")], [str(other_version), "0.0.1"])]:
        with pytest.raises(ImportError) as error:
            _native.load_extension(clone / "joltgym_marl", search_path)
        message = str(error.value)
        for expected in [str(clone / "joltgym_marl"), "python3 -m venv .venv && .venv/bin/pip install .",
                         "cmake --build build/inplace --target _core", *mentions]:
            assert expected in message, message


SETUP_SCRIPT = ROOT / "tools" / "setup_tests.sh"


def setup_script_debian_packages() -> list[str]:
    match = re.search(r"^DEBIAN_PACKAGES=\(([^)]*)\)", SETUP_SCRIPT.read_text(), re.MULTILINE)
    assert match, "tools/setup_tests.sh has no DEBIAN_PACKAGES=(...) line"
    return match.group(1).split()


def test_readme_names_every_debian_package_the_setup_installs():
    # A fresh machine gets its system packages from command 2 itself; the
    # README says which ones and why.
    packages = setup_script_debian_packages()
    assert {"libegl1", "libgl1-mesa-dri", "openjdk-17-jdk-headless", "libjna-java"} <= set(packages)
    named = set(inline_code(README))
    assert [p for p in packages if p not in named] == [], "README's set-up section must name these packages"


def test_setup_script_help_is_fast_and_changes_nothing():
    proc = subprocess.run([str(SETUP_SCRIPT), "--help"], capture_output=True, text=True, timeout=10, cwd=ROOT)
    assert proc.returncode == 0 and "Usage: tools/setup_tests.sh" in proc.stdout, proc.stderr
    for package in setup_script_debian_packages():
        assert package in proc.stdout
    wrong = subprocess.run([str(SETUP_SCRIPT), "--frobnicate"], capture_output=True, text=True, timeout=10, cwd=ROOT)
    assert wrong.returncode == 2 and "unknown argument '--frobnicate'" in wrong.stderr
