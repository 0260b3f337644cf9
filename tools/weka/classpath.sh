#!/usr/bin/env bash
# Print the class path of Weka and its run-time dependencies (bounce, ...), fetching the jar with
# Maven when the local repository lacks it. Shared by the scripts that run Weka to make golden files.
#
#   cp="$(tools/weka/classpath.sh)"
#
# Environment: WEKA_JAR overrides the jar location; WEKA_VERSION (default 3.8.6); MAVEN_REPO
# (default ~/.m2/repository); WEKA_CLASSPATH is appended.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
version="${WEKA_VERSION:-3.8.6}"
repo="${MAVEN_REPO:-$HOME/.m2/repository}"
jar="${WEKA_JAR:-$repo/nz/ac/waikato/cms/weka/weka-stable/$version/weka-stable-$version.jar}"

if [[ ! -f "$jar" ]]; then
  echo "fetching weka-stable $version with Maven..." >&2
  mvn -q dependency:get -Dartifact="nz.ac.waikato.cms.weka:weka-stable:$version" >&2
fi
[[ -f "$jar" ]] || { echo "error: Weka jar not found at $jar (set WEKA_JAR)" >&2; exit 1; }

# Let Maven list Weka's run-time dependencies (offline first); else the jar plus bounce, the one
# dependency the golden-file programs touch (the package manager's static initialiser).
cpfile="$(mktemp)"
trap 'rm -f "$cpfile"' EXIT
if mvn -q -o -f "$here/pom.xml" -Dweka.version="$version" dependency:build-classpath -Dmdep.outputFile="$cpfile" >/dev/null 2>&1 \
   || mvn -q -f "$here/pom.xml" -Dweka.version="$version" dependency:build-classpath -Dmdep.outputFile="$cpfile" >/dev/null 2>&1; then
  # keep jars only: the list also names pom-type artifacts (netlib's "all"), which Weka's class
  # discovery would try to open as jars
  cp="$jar:$(tr ':' '\n' < "$cpfile" | grep '\.jar$' | paste -sd: -)"
else
  bounce="$(find "$repo/nz/ac/waikato/cms/weka/thirdparty/bounce" -name 'bounce-*.jar' 2>/dev/null | head -n 1)"
  [[ -n "$bounce" ]] || { echo "error: bounce jar (a Weka dependency) not found under $repo" >&2; exit 1; }
  cp="$jar:$bounce"
fi
echo "$cp${WEKA_CLASSPATH:+:$WEKA_CLASSPATH}"
