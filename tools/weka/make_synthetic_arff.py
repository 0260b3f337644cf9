"""Write ``tests/golden/discretize/synthetic.arff``: a seeded data set that stresses discretisation.

The UCI files in ``tests/data`` have no missing numeric values and few ties; this one has both,
plus a constant attribute, an all-missing attribute, negative and large values, and enough rows
for deep MDL recursion. ``make_golden_discretize.sh`` runs Weka on it like on the UCI files.

Usage: ``python tools/weka/make_synthetic_arff.py [out.arff]``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

N_ROWS = 2000
SEED = 20240611


def main(out: Path) -> None:
    rng = np.random.default_rng(SEED)
    y = rng.integers(0, 3, N_ROWS)
    cols: dict[str, np.ndarray] = {}
    # ties: one decimal, class-dependent mean
    cols["tied"] = np.round(rng.normal(y * 1.0, 1.5), 1)
    # small integers, 10% missing
    ints = rng.poisson(3 + 2 * y).astype(float)
    ints[rng.random(N_ROWS) < 0.10] = np.nan
    cols["counts"] = ints
    # continuous, no ties, weakly informative
    cols["smooth"] = rng.uniform(0, 1, N_ROWS) + 0.15 * y
    cols["constant"] = np.full(N_ROWS, 5.0)
    cols["all_missing"] = np.full(N_ROWS, np.nan)
    cols["noise"] = np.round(rng.normal(0, 1, N_ROWS), 3)
    # large magnitude with decimals, and negatives, 3% missing
    big = np.round(1e6 + 2e4 * (y == 2) + rng.normal(0, 1e4, N_ROWS), 4)
    big[rng.random(N_ROWS) < 0.03] = np.nan
    cols["large"] = big
    cols["negative"] = -np.round(rng.exponential(1 + y, N_ROWS), 3)

    lines = ["% Seeded synthetic data for discretisation golden tests (tools/weka/make_synthetic_arff.py)",
             "@relation synthetic-discretize", ""]
    lines += [f"@attribute {name} numeric" for name in cols]
    lines += ["@attribute class {c0,c1,c2}", "", "@data"]
    matrix = np.column_stack(list(cols.values()))
    for r in range(N_ROWS):
        vals = ["?" if np.isnan(v) else repr(float(v)) for v in matrix[r]]
        lines.append(",".join(vals + [f"c{y[r]}"]))
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path("tests/golden/discretize/synthetic.arff"))
