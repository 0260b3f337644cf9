#!/usr/bin/env bash
# Regenerate tests/golden/discretize/*.json: cut points, labels and bin codes that Weka itself
# computes (supervised MDL Discretize, and unsupervised equal-width / equal-frequency with 10 bins).
#
# Usage (from anywhere): tools/weka/make_golden_discretize.sh
# Environment: as tools/weka/classpath.sh (WEKA_JAR, WEKA_VERSION, MAVEN_REPO, WEKA_CLASSPATH).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cp="$("$here/classpath.sh")"

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
