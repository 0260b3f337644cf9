#!/usr/bin/env bash
# A walk through the hdp-bnc command line on UCI's congressional votes (examples/vote.arff).
#
# Run:  bash examples/cli_walkthrough.sh [ITERATIONS]
#
# Uses `hdp-bnc` when it is installed (pip install -e .), else `python3 -m hdp_plugin`.
# Everything it writes goes to a temporary directory, removed at the end.
set -euo pipefail

ITERATIONS="${1:-2000}"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
DATA="$HERE/vote.arff"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

if command -v hdp-bnc >/dev/null 2>&1; then
    BNC=(hdp-bnc)
else
    BNC=("${PYTHON:-python3}" -m hdp_plugin)
fi

step() { printf '\n$ hdp-bnc %s\n' "$*"; }

# 1. Compare HDP with m-estimates for kDB-1 and kDB-2 under 2-fold cross-validation
#    (training options take comma lists; the folds and the sampler are seeded).
step evaluate vote.arff -s kdb -k 1,2 -e hdp,m-estimate -i "$ITERATIONS"
"${BNC[@]}" evaluate "$DATA" -s kdb -k 1,2 -e hdp,m-estimate -i "$ITERATIONS" --seed 1

# 2. Train kDB-2 with HDP estimates on all the data and write the model file.
step train vote.arff -o vote.hdpbnc -s kdb -k 2 -i "$ITERATIONS"
"${BNC[@]}" train "$DATA" -o "$WORK/vote.hdpbnc" -s kdb -k 2 -i "$ITERATIONS" --seed 1

# 3. What is in the model file: structure, tree sizes, concentrations, settings.
step info vote.hdpbnc
"${BNC[@]}" info "$WORK/vote.hdpbnc"

# 4. Predict: CSV on stdout (first rows shown), or a file whose suffix picks the format.
step predict vote.hdpbnc vote.arff '| head -4'
"${BNC[@]}" predict "$WORK/vote.hdpbnc" "$DATA" | head -4
step predict vote.hdpbnc vote.arff -o predictions.arff
"${BNC[@]}" predict "$WORK/vote.hdpbnc" "$DATA" -o "$WORK/predictions.arff"

# 5. The network as Graphviz DOT (draw it with -o net.svg when Graphviz is installed).
step show vote.hdpbnc '| head -8'
"${BNC[@]}" show "$WORK/vote.hdpbnc" | head -8
if command -v dot >/dev/null 2>&1; then
    step show vote.hdpbnc -o net.svg
    "${BNC[@]}" show "$WORK/vote.hdpbnc" -o "$WORK/net.svg"
fi
