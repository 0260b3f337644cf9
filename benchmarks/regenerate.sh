#!/usr/bin/env bash
# Regenerate every generated section of docs/benchmarks.md, benchmarks/studies.md and README.md, and the figure.
# Run from anywhere:
#
#   benchmarks/regenerate.sh            # everything (hours the first time; accuracy results are cached)
#   benchmarks/regenerate.sh speed      # only the speed and scale sections (about 15 minutes,
#                                       # plus ESKDB's 5x2 CV at one and two threads)
#
# Needs: pip install -e '.[bench]' for the PyPI peers, matplotlib and the mlbench converter (rdata), the
# r-cran-mlbench .rda files (see benchmarks/mlbench.py); Java 11+ and Maven for the Weka columns and
# the Java prediction figures; the packages of benchmarks/numdata.py's sets (see its docstring). Run it on a
# quiet machine: the speed figures are wall-clock times.
set -euo pipefail
cd "$(dirname "$0")/.."
doc=docs/benchmarks.md
studies=benchmarks/studies.md
section() { python benchmarks/report_sections.py -o "$doc" "$@"; }
study() { python benchmarks/report_sections.py -o "$studies" "$@"; }

# The 26-set sections (every method) cover Weka's 16 sets and 10 of mlbench's: the four large mlbench
# sets (DNA, Satellite, LetterRecognition, Shuttle) take hours for the slowest peers. MLBENCH_DIR is
# r-cran-mlbench's data folder (see mlbench.py).
small="weather.nominal,weather.numeric,contact-lenses,labor,iris,iris.2D,glass,breast-cancer,ionosphere,vote"
small+=",diabetes,soybean,unbalanced,credit-g,segment-challenge,supermarket,mlbench-Zoo,mlbench-Sonar"
small+=",mlbench-Glass,mlbench-Ionosphere,mlbench-HouseVotes84,mlbench-Soybean,mlbench-BreastCancer"
small+=",mlbench-PimaIndiansDiabetes,mlbench-Vehicle,mlbench-Vowel"
peers="HDP ESKDB,HDP ESKDB smdl,m-est. ESKDB,Weka NB,Weka TAN,XGBoost (bins),sklearn CategoricalNB,Weka RF,sklearn RF,XGBoost (raw)"
peers+=",CatBoost,LightGBM"
mlbench=()
[[ -n "${MLBENCH_DIR:-}" ]] && mlbench=(--mlbench-dir "$MLBENCH_DIR")
if [[ "${1:-all}" != speed ]]; then
  # every structure and every peer on 26 sets: the tables per data set, then their summary
  python benchmarks/accuracy.py --iterations 1000 --datasets "$small" "${mlbench[@]}" -o "$studies" \
    --section accuracy-i1000-by-set
  python benchmarks/accuracy.py --iterations 1000 --datasets "$small" "${mlbench[@]}" -o "$doc" \
    --section accuracy-i1000 --summary --report-only
  # the default on all 30 sets, the four large mlbench ones included, against the peers that run on all of
  # them (hours the first time: DNA and LetterRecognition take the longest); then the figure from its table
  python benchmarks/accuracy.py --iterations 1000 "${mlbench[@]}" -o "$studies" --section accuracy-default-by-set \
    --methods "$peers"
  python benchmarks/accuracy.py --iterations 1000 "${mlbench[@]}" -o "$doc" --section accuracy-default \
    --methods "$peers" --summary --report-only
  python benchmarks/plot_accuracy_time.py --doc "$doc" --section accuracy-default -o docs/accuracy-time.svg
  # the default and the forests and boosting libraries on the numeric sets of 1,797 to 20,000 rows that data
  # packages bundle (benchmarks/numdata.py; NUMDATA_DIR: the folder their packages were unpacked into, default
  # /tmp/numdata); training times left out, as the published run shared the machine
  numdata=()
  [[ -n "${NUMDATA_DIR:-}" ]] && numdata=(--numdata-dir "$NUMDATA_DIR")
  python benchmarks/accuracy.py --iterations 1000 --datasets numeric-large "${numdata[@]}" -o "$studies" \
    --section accuracy-numeric-large --methods "HDP ESKDB,CatBoost,LightGBM,XGBoost (raw),sklearn RF,Weka RF" \
    --no-times
  # and README.md's table of the default against the forests and XGBoost, from section accuracy-default
  python benchmarks/report_sections.py -o README.md --section readme-compare -- python benchmarks/compare_table.py
  # how many iterations: accuracy against iterations on Weka's 16 sets (one 5000-iteration run per fold
  # and method read at checkpoints), and the stopping rules on kDB-2, kDB-5 and SkDB
  python benchmarks/convergence.py --jobs 2 -o "$studies" --section convergence --parts curves,fewest \
    --plot benchmarks/convergence.svg
  python benchmarks/convergence.py --jobs 2 --methods kDB-2,kDB-5,SkDB -o "$studies" --section convergence-rules \
    --parts rules
  # the default ensemble's iterations on the 26 sets (about 15 minutes, one core)
  section --section eskdb-iterations -- python benchmarks/bench_eskdb_iterations.py "${mlbench[@]}"
  # and against the burn-in (the same folds run to 200 iterations, about 5 minutes, one core)
  study --section eskdb-burn-in -- python benchmarks/bench_eskdb_iterations.py --burn-in-study "${mlbench[@]}"
  # per-tree stopping rules for the ensemble (config.AUTO_FIRST_CHECK), on the tables' seeds and on seeds + 1000
  # (one 1000-iteration run per fold, about 5 minutes each on two cores)
  study --section eskdb-rules -- python benchmarks/bench_eskdb_iterations.py --rule-study --jobs 2 "${mlbench[@]}"
  study --section eskdb-rules-seeds -- python benchmarks/bench_eskdb_iterations.py --rule-study --seed-offset 1000 \
    --jobs 2 "${mlbench[@]}"
  # dense data: the rule's cap of 100 against 25 iterations on the 30 sets, seeds + 1000 (about 15 minutes)
  study --section dense-chains -- python benchmarks/bench_dense_chains.py "${mlbench[@]}"
  # accuracy and time against the number of members (interleaved, one thread)
  section --section eskdb-members -- python benchmarks/bench_members.py "${mlbench[@]}"
  # integer-coded categories and numeric attributes with few rows per class, both cached under
  # benchmarks/.cache/ (about 20 minutes each the first time, one core)
  study --section categorical -- python benchmarks/bench_categorical.py --datasets \
    weather.nominal,weather.numeric,contact-lenses,labor,mlbench-Zoo,breast-cancer,vote,mlbench-HouseVotes84,ionosphere,mlbench-Ionosphere,credit-g,diabetes,mlbench-PimaIndiansDiabetes,mlbench-BreastCancer,unbalanced,mlbench-Vehicle,segment-challenge,soybean,mlbench-Soybean,mlbench-Vowel,supermarket,mlbench-DNA \
    --arff-dir /tmp/wekadeb/usr/share/doc/weka/examples "${mlbench[@]}" --markdown
  study --section numeric -- python benchmarks/bench_numeric.py "${mlbench[@]}" --markdown \
    --variants smdl,smdl-min2,smdl-min3,smdl-half,gain-draw,gain-min2,mdl,stochastic-gain
  study --section numeric-heldout -- python benchmarks/bench_numeric.py --markdown --variants smdl,gain-min2 \
    --datasets credit-g,labor,weather.numeric,iris.2D,unbalanced
  study --section numeric-seeds -- python benchmarks/bench_numeric.py "${mlbench[@]}" --markdown \
    --variants smdl,gain-min2 --seed-offset 1000
  # how an ensemble with HDP tables selects its members (config.HDP_SELECTION_M), on seeds + 1000 (about
  # 10 minutes per variant on two cores, cached under benchmarks/.cache/selection/)
  study --section selection -- python benchmarks/bench_selection.py --variants flat,hier-3,hier-10,hier-30,budget-3 \
    --jobs 2 "${mlbench[@]}"
  # the selection scoring fewer rows of large data (config.SELECTION_ROWS), on the large numeric sets
  study --section selection-rows -- python benchmarks/bench_selection.py --datasets \
    mlbench-LetterRecognition,mlbench-Shuttle,keel-magic,ggplot2-diamonds-20k,keel-penbased,mlbench-Satellite \
    --variants hier-3,rows-2048,rows-4096 --jobs 2 "${mlbench[@]}"
  # tying by size: level (the default) against none, on the 30 sets and the large numeric ones
  study --section tying -- python benchmarks/bench_selection.py --datasets mlbench-LetterRecognition,\
mlbench-Shuttle,mlbench-Satellite,mlbench-DNA,weather.nominal,weather.numeric,contact-lenses,labor,iris,iris.2D,\
glass,breast-cancer,ionosphere,vote,diabetes,soybean,unbalanced,credit-g,segment-challenge,supermarket,mlbench-Zoo,\
mlbench-Sonar,mlbench-Glass,mlbench-Ionosphere,mlbench-HouseVotes84,mlbench-Soybean,mlbench-BreastCancer,\
mlbench-PimaIndiansDiabetes,mlbench-Vehicle,mlbench-Vowel,keel-magic,ggplot2-diamonds-20k,keel-penbased,\
kernlab-spam,modeldata-mlc_churn --variants hier-3,tying-none --jobs 2 "${mlbench[@]}"
  # how members combine: other pools of the default's members on the 30 sets (fold scores cached)
  study --section combine -- python benchmarks/bench_combine.py --repeats 5 --seed-offset 1000 \
    --temperatures 0.4,0.5,0.6,0.75 --out benchmarks/.cache/combine.json "${mlbench[@]}" --datasets \
    "$small,mlbench-DNA,mlbench-Satellite,mlbench-LetterRecognition,mlbench-Shuttle"
  study --section combine-large -- python benchmarks/bench_combine.py --repeats 5 --seed-offset 1000 \
    --temperatures 0.4,0.5,0.6,0.75 --out benchmarks/.cache/combine.json --datasets \
    digits,kernlab-spam,modeldata-mlc_churn,keel-penbased,keel-magic,ggplot2-diamonds-20k
  # the pool chosen per fit by leave-one-out member probabilities, and its size rule: chosen on the
  # seeds + 1000, then run on the tables' own seeds
  for off in 1000 0; do
    loo=(--repeats 5 --seed-offset "$off" --temperatures 0.4,0.5,0.6,0.75 --loo-m 3 --rule-rows 400
         --out benchmarks/.cache/combine-loo.json "${mlbench[@]}")
    study --section "combine-loo-$off" -- python benchmarks/bench_combine.py "${loo[@]}" --datasets \
      "$small,mlbench-DNA,mlbench-Satellite,mlbench-LetterRecognition,mlbench-Shuttle"
    study --section "combine-loo-large-$off" -- python benchmarks/bench_combine.py "${loo[@]}" --datasets \
      digits,kernlab-spam,modeldata-mlc_churn,keel-penbased,keel-magic,ggplot2-diamonds-20k
  done
fi
study --section speed-reference -- python benchmarks/bench_hdp.py --threads 1,2 --linearity
# the published implementation's own fold files, if given (REFERENCE_FOLDS=DIR benchmarks/regenerate.sh speed)
if [[ -n "${REFERENCE_FOLDS:-}" ]]; then
  study --section speed-reference-folds -- python benchmarks/bench_hdp.py --reference-folds "$REFERENCE_FOLDS" \
    --workloads segment-challenge:kdb:5,segment-challenge:kdb:1,vote:kdb:5 --iterations 5000,auto --threads 1,2 \
    --repeat 3
fi
study --section speed-scale -- python benchmarks/bench_scale.py --threads 1,2
study --section speed-eskdb --code -- python benchmarks/bench_eskdb.py --iterations 1000,auto --threads 1,2
# the default against scikit-learn's random forest, one thread each; CatBoost and LightGBM (the bench extra)
# beside them where CatBoost takes seconds (minutes a fit on soybean, supermarket and DNA)
section --section speed-default -- python benchmarks/bench_default.py ${REFERENCE_FOLDS:+--reference-folds "$REFERENCE_FOLDS"} \
  --rounds 5 --sum --peers "" "${mlbench[@]}"
# where the default's training time goes on the large sets, step by step (one thread)
study --section speed-profile -- python benchmarks/bench_profile.py "${mlbench[@]}"
# the same at 5, 10 and 20 members
study --section speed-default-members -- python benchmarks/bench_default.py \
  ${REFERENCE_FOLDS:+--reference-folds "$REFERENCE_FOLDS"} --rounds 3 --sum --members 5,10,20 --peers "" "${mlbench[@]}"
# the four large mlbench sets (needs mlbench's .rda files)
section --section speed-default-large -- python benchmarks/bench_default.py \
  --datasets mlbench-LetterRecognition,mlbench-Satellite,mlbench-Shuttle,mlbench-DNA --rounds 2 --peers LightGBM \
  "${mlbench[@]}"
# a million rows of bench_scale's synthetic categorical data
section --section speed-default-million -- python benchmarks/bench_default.py --datasets "" --synthetic 1000000 \
  --rounds 2 --peers ""
# the other numeric sets of the 30 (the large ones are above)
study --section speed-default-numeric -- python benchmarks/bench_default.py --datasets \
  segment-challenge,mlbench-Vowel,mlbench-Vehicle,mlbench-Sonar,ionosphere,diabetes,glass --rounds 3 "${mlbench[@]}"
section --section speed-java --code -- python benchmarks/bench_java_predict.py --rows 1000000
study --section speed-java-blocks --code -- python benchmarks/bench_java_predict.py --data mlbench-LetterRecognition \
  --rounds 1 "${mlbench[@]}"
study --section speed-weka-cv --code -- python benchmarks/bench_weka_default.py --rounds 2 segment-challenge \
  mlbench-LetterRecognition "${mlbench[@]}"
study --section speed-ingest --code -- python benchmarks/bench_ingest.py
study --section speed-structure --code -- python benchmarks/bench_structure.py
study --section speed-discretize --code -- python benchmarks/bench_discretize.py
study --section speed-machine-threads --code -- python benchmarks/bench_machine_threads.py
