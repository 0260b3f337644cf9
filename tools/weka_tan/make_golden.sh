#!/usr/bin/env bash
# Regenerate tests/golden/tan/*.json: the TAN trees Weka's own search learns on nominal UCI data.
#
#   tools/weka_tan/make_golden.sh [dataset ...]      (default: vote soybean breast-cancer)
#
# Needs Java 11+ and the Weka jar, found (or fetched) by tools/weka/classpath.sh, whose
# environment variables apply (WEKA_JAR, WEKA_VERSION, MAVEN_REPO, WEKA_CLASSPATH).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"

cp="$("$root/tools/weka/classpath.sh")"

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
