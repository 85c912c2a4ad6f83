#!/usr/bin/env bash
# The test set-up of README command 2 (`tools/setup_tests.sh && .venv/bin/pytest`).
#
# What it does, in order, each step announced with the time:
#   1. Debian packages the tests need, installed only if missing (apt-get; sudo
#      when not root):
#        libegl1, libgl1-mesa-dri   headless rendering (EGL + Mesa's software rasterizer)
#        openjdk-17-jdk-headless    the C API's Java example and benchmark (javac, java)
#        libjna-java                JNA, which the Java example loads libjoltgym_marl with
#        junit5                     JUnit 5's console launcher: the Java library's test suite
#        chromium                   the docs test opens the built site in a headless browser
#   2. .venv: torch's CPU build first (torch==2.13.0), so that nothing pulls a
#      multi-GB CUDA build; TORCH_INDEX_URL, when set, is the index it comes
#      from (elsewhere: https://download.pytorch.org/whl/cpu).
#   3. Jolt Physics' pinned source (tools/fetch_jolt.py), then ONE native
#      build: the project's wheel, with Jolt, into build/wheelhouse/.
#   4. That wheel with the `test` extra into .venv, with the `rllib` extra
#      (Ray RLlib pins gymnasium==1.2.2) into a second environment, .venv-rllib,
#      and with the `benchmarl` extra (BenchMARL pins torchrl<0.12) into a
#      third, .venv-benchmarl.
# Re-running it is safe: it reinstalls the freshly built wheel into each.
set -euo pipefail

usage() {
  sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'
  cat <<'EOF'

Usage: tools/setup_tests.sh [--help]
Environment: PYTHON (default python3), TORCH_INDEX_URL (default: pip's own index),
             JOLTGYM_SKIP_APT=1 (skip step 1: the packages are known to be there).
EOF
}
case "${1:-}" in
  -h | --help) usage; exit 0 ;;
  "") ;;
  *) echo "tools/setup_tests.sh: unknown argument '$1' (expected none, or --help)" >&2; exit 2 ;;
esac

cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
TORCH=torch==2.13.0
START=$SECONDS
step() { printf '\n[setup %s, %3ds] %s\n' "$(date +%H:%M:%S)" "$((SECONDS - START))" "$*"; }

# --- 1. Debian packages ---------------------------------------------------------
DEBIAN_PACKAGES=(libegl1 libgl1-mesa-dri openjdk-17-jdk-headless libjna-java junit5 chromium)
if [ "${JOLTGYM_SKIP_APT:-0}" != 1 ]; then
  missing=()
  for package in "${DEBIAN_PACKAGES[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
      missing+=("$package")
    fi
  done
  if [ ${#missing[@]} -eq 0 ]; then
    step "Debian packages: all there (${DEBIAN_PACKAGES[*]})"
  else
    step "Debian packages: installing ${missing[*]}"
    if ! command -v apt-get >/dev/null 2>&1; then
      echo "tools/setup_tests.sh: apt-get not found; install the equivalents of ${missing[*]}" \
           "with your system's package manager, then run again with JOLTGYM_SKIP_APT=1" >&2
      exit 1
    fi
    sudo=()
    if [ "$(id -u)" != 0 ]; then sudo=(sudo); fi
    "${sudo[@]}" apt-get update -q
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
  fi
fi

# --- 2. the test environment and torch's CPU build --------------------------------
torch_args=("$TORCH")
if [ -n "${TORCH_INDEX_URL:-}" ]; then torch_args+=(--index-url "$TORCH_INDEX_URL"); fi
step ".venv: $TORCH (CPU build)"
"$PYTHON" -m venv .venv
.venv/bin/pip install -q "${torch_args[@]}"

# --- 3. the one native build, with Jolt Physics ------------------------------------
# The pinned Jolt source (docs/guides/jolt.md), by package name from pip's index,
# sha256-checked and cached in ~/.cache/joltgym_marl, where the build finds it:
# Jolt is compiled once into that cache and every native build reuses it.
step "Jolt Physics source (tools/fetch_jolt.py)"
"$PYTHON" tools/fetch_jolt.py
step "building the wheel (the native core, once) into build/wheelhouse/"
rm -rf build/wheelhouse
.venv/bin/pip wheel -q --no-deps --wheel-dir build/wheelhouse .
wheels=(build/wheelhouse/joltgym_marl-*.whl)
wheel=${wheels[0]}

# --- 4. the wheel into both environments --------------------------------------------
step ".venv: $(basename "$wheel") with the test extra"
.venv/bin/pip install -q "$wheel[test]"
.venv/bin/pip install -q --force-reinstall --no-deps "$wheel"

step ".venv-rllib: $TORCH, then the same wheel with the rllib extra and pytest"
"$PYTHON" -m venv .venv-rllib
.venv-rllib/bin/pip install -q "${torch_args[@]}"
.venv-rllib/bin/pip install -q "$wheel[rllib]" pytest
.venv-rllib/bin/pip install -q --force-reinstall --no-deps "$wheel"

step ".venv-benchmarl: $TORCH, then the same wheel with the benchmarl extra and pytest"
"$PYTHON" -m venv .venv-benchmarl
.venv-benchmarl/bin/pip install -q "${torch_args[@]}"
.venv-benchmarl/bin/pip install -q "$wheel[benchmarl]" pytest
.venv-benchmarl/bin/pip install -q --force-reinstall --no-deps "$wheel"

step "done: run .venv/bin/pytest"
