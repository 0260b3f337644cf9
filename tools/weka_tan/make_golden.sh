#!/usr/bin/env bash
# Regenerate tests/golden/tan/*.json: the TAN trees Weka's own search learns on nominal UCI data.
#
#   tools/weka_tan/make_golden.sh [dataset ...]      (default: vote soybean breast-cancer)
#
# Needs Java 11+ and the Weka jar: $WEKA_JAR, else the local Maven repository (fetched with
# Maven if absent). Environment: WEKA_VERSION (default 3.8.6), MAVEN_REPO, WEKA_CLASSPATH (extra).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"

version="${WEKA_VERSION:-3.8.6}"
repo="${MAVEN_REPO:-$HOME/.m2/repository}"
jar="${WEKA_JAR:-$repo/nz/ac/waikato/cms/weka/weka-stable/$version/weka-stable-$version.jar}"
if [[ ! -f "$jar" ]]; then
  echo "fetching weka-stable $version with Maven..." >&2
  mvn -q dependency:get -Dartifact="nz.ac.waikato.cms.weka:weka-stable:$version"
fi
[[ -f "$jar" ]] || { echo "error: Weka jar not found at $jar (set WEKA_JAR)" >&2; exit 1; }

# Of Weka's run-time dependencies, only bounce is touched on this code path (the package
# manager's static initialiser, reached through Capabilities); dependency:get fetched it above.
bounce="$(find "$repo/nz/ac/waikato/cms/weka/thirdparty/bounce" -name 'bounce-*.jar' 2>/dev/null | head -n 1)"
[[ -n "$bounce" ]] || { echo "error: bounce jar (a Weka dependency) not found under $repo" >&2; exit 1; }
cp="$jar:$bounce${WEKA_CLASSPATH:+:$WEKA_CLASSPATH}"

datasets=("$@")
if [[ ${#datasets[@]} -eq 0 ]]; then
  datasets=(vote soybean breast-cancer)
fi

out="$root/tests/golden/tan"
mkdir -p "$out"
for d in "${datasets[@]}"; do
  java -cp "$cp" "$here/WekaTan.java" "$root/tests/data/$d.arff" "$out/$d.json"
  echo "wrote $out/$d.json"
done
