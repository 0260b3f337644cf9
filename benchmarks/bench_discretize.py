"""Time the discretisation stage on synthetic data: 1,000,000 rows x 20 numeric attributes.

The class (3 values) depends on a few attributes through thresholds and noise, so MDL finds many
cut points on the informative attributes; values are rounded to 4 decimals (many ties), and 1% of
them are missing.

Usage: ``python benchmarks/bench_discretize.py [--rows N] [--attributes M] [--methods mdl,...]``
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from hdp_plugin.data.dataset import Attribute, Dataset
from hdp_plugin.preprocess import Discretizer


def synthetic(n_rows: int, n_attributes: int, seed: int = 0) -> Dataset:
    rng = np.random.default_rng(seed)
    values = rng.normal(size=(n_rows, n_attributes))
    score = values[:, 0] + 0.5 * values[:, 1] - 0.7 * np.abs(values[:, 2]) + rng.normal(0, 0.7, n_rows)
    y = np.digitize(score, [-0.5, 0.5]).astype(np.int32)
    values = np.round(values, 4)
    values[rng.random(values.shape) < 0.01] = np.nan
    attributes = [Attribute(f"x{j}", (), numeric=True) for j in range(n_attributes)]
    return Dataset(attributes, Attribute("class", ("a", "b", "c")),
                   np.zeros((n_rows, n_attributes), dtype=np.uint8), y, values, source="synthetic")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--attributes", type=int, default=20)
    parser.add_argument("--methods", default="mdl,equal-width,equal-frequency")
    args = parser.parse_args()

    t = time.perf_counter()
    ds = synthetic(args.rows, args.attributes)
    print(f"data: {args.rows:,} rows x {args.attributes} numeric attributes ({time.perf_counter() - t:.1f} s to make)")

    # compile (or load the cached kernels) on a small sample first, so timings are steady-state
    t = time.perf_counter()
    for method in args.methods.split(","):
        Discretizer(method=method).fit_transform(ds.take(np.arange(min(1000, args.rows))))
    print(f"warm-up (compile or load cached kernels): {time.perf_counter() - t:.1f} s")

    for method in args.methods.split(","):
        disc = Discretizer(method=method)
        t = time.perf_counter()
        disc.fit(ds)
        fit_s = time.perf_counter() - t
        t = time.perf_counter()
        out = disc.transform(ds)
        transform_s = time.perf_counter() - t
        n_cuts = [c.shape[0] for c in disc.cut_points_.values()]
        print(f"{method:>16}: fit {fit_s:6.2f} s, transform {transform_s:5.2f} s, "
              f"cut points per attribute {min(n_cuts)}..{max(n_cuts)} (total {sum(n_cuts)}), codes {out.X.dtype}")


if __name__ == "__main__":
    main()
