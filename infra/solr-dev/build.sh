#!/usr/bin/env bash
# Compiles solr-dev into infra/solr-dev/build/ with javac against Debian's Lucene 8 jars
# (apt-get install liblucene8-java). No Maven or Gradle. Rebuilds only when a source changed;
# a lock makes concurrent callers (parallel test files) wait for one build.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
build="$here/build"
mkdir -p "$build"

jars=""
for name in core analyzers-common queryparser highlighter memory queries; do
  jar=$(ls /usr/share/java/lucene-"$name"-8*.jar 2>/dev/null | head -n 1 || true)
  if [ -z "$jar" ]; then
    echo "solr-dev: /usr/share/java/lucene-$name-8*.jar not found; run: apt-get install -y liblucene8-java" >&2
    exit 1
  fi
  jars="$jars${jars:+:}$jar"
done

exec 9>"$build/.lock"
flock 9
stamp="$build/classes/.built"
if [ -f "$stamp" ] && [ -z "$(find "$here/src" -name '*.java' -newer "$stamp" -print -quit)" ] \
   && [ "$(cat "$build/classpath" 2>/dev/null)" = "$jars" ]; then
  exit 0
fi
rm -rf "$build/classes"
mkdir -p "$build/classes"
javac -encoding UTF-8 -Xlint:all,-serial,-processing -Werror --release 17 -d "$build/classes" -cp "$jars" \
  $(find "$here/src" -name '*.java')
printf '%s' "$jars" > "$build/classpath"
touch "$stamp"
