"""The main job on a bundled example: HDP against m-estimates on UCI's congressional votes.

Run:  python3 examples/quickstart.py [ARFF] [--iterations N]

Trains kDB-1 and kDB-3 with HDP-estimated and with m-estimated probability tables under the same
stratified 2-fold cross-validation, and prints RMSE, 0-1 loss, log-loss and the training time.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from hdp_plugin import BayesNetClassifier, read_dataset
from hdp_plugin.model.evaluation import cross_validate

HERE = Path(__file__).resolve().parent


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data", nargs="?", default=str(HERE / "vote.arff"), help="an ARFF (or Arrow/CSV) file")
    ap.add_argument("--iterations", type=int, default=2000, help="Gibbs iterations of the HDP sampler")
    ap.add_argument("--seed", type=int, default=1, help="seed of the folds and of the sampler")
    args = ap.parse_args(argv)

    data = read_dataset(args.data)
    print(f"{Path(args.data).name}: {data.n_rows} rows, {data.n_attributes} attributes, "
          f"class {data.class_attribute.name!r} with {data.n_classes} values")
    print(f"{'model':<10} {'estimator':<11} {'RMSE':>7} {'0-1':>7} {'log-loss':>9} {'train s':>8}")
    for k in (1, 3):
        for est in ("hdp", "m-estimate"):
            res = cross_validate(
                lambda: BayesNetClassifier(structure="kdb", k=k, estimator=est,
                                           iterations=args.iterations, random_state=args.seed),
                data, n_folds=2, seed=args.seed)
            print(f"kDB-{k:<6} {est:<11} {res.rmse:7.4f} {res.zero_one:7.4f} {res.log_loss:9.4f} "
                  f"{res.train_seconds:8.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
