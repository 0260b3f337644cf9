#!/usr/bin/env bash
# Regenerate tests/golden/discretize/*.json: cut points, labels and bin codes that Weka itself
# computes (supervised MDL Discretize, and unsupervised equal-width / equal-frequency with 10 bins).
#
# Usage (from anywhere): tools/weka/make_golden_discretize.sh
# Environment: WEKA_JAR overrides the jar location; WEKA_VERSION (default 3.8.6).
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
[[ -f "$jar" ]] || { echo "Weka jar not found at $jar" >&2; exit 1; }

# Weka's run-time dependencies (bounce, ...) are needed on the class path too: let Maven list them
# (offline first), else fall back to the jar plus bounce from the local repository.
cpfile="$(mktemp)"
trap 'rm -f "$cpfile"' EXIT
if mvn -q -o -f "$here/pom.xml" -Dweka.version="$version" dependency:build-classpath -Dmdep.outputFile="$cpfile" >/dev/null 2>&1 \
   || mvn -q -f "$here/pom.xml" -Dweka.version="$version" dependency:build-classpath -Dmdep.outputFile="$cpfile" >/dev/null 2>&1; then
  cp="$jar:$(cat "$cpfile")"
else
  cp="$jar:$(find "$repo/nz/ac/waikato/cms/weka/thirdparty/bounce" -name 'bounce-*.jar' 2>/dev/null | head -n 1)"
fi

out="$root/tests/golden/discretize"
mkdir -p "$out"

# the seeded synthetic data set (ties, missing values, constant and all-missing attributes)
python "$here/make_synthetic_arff.py" "$out/synthetic.arff"

datasets=(diabetes segment-challenge credit-g ionosphere glass iris labor weather.numeric)
for name in "${datasets[@]}"; do
  echo "$name" >&2
  java -cp "$cp" "$here/DiscretizeGolden.java" "$root/tests/data/$name.arff" "$out/$name.json"
done
echo "synthetic" >&2
java -cp "$cp" "$here/DiscretizeGolden.java" "$out/synthetic.arff" "$out/synthetic.json"
echo "number formatting" >&2
java -cp "$cp" "$here/DiscretizeGolden.java" --numbers "$out/weka_numbers.json"
