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
set -euo pipefail
if [ "${1:-}" = "--help" ] || [ "${1:-}" = "-h" ]; then
  sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'
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
echo "$out/joltgym.jar"
