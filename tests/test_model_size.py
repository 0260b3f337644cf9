"""Oversized models are refused before sampling, with how big they would be and what to lower."""

from __future__ import annotations

import numpy as np
import pytest

from hdp_plugin import BayesNetClassifier, config
from hdp_plugin.errors import TooLargeError
from hdp_plugin.hdp.trees import build_trees


def _wide(rows=2000, attributes=120, values=40, seed=0):
    rng = np.random.default_rng(seed)
    return rng.integers(0, values, size=(rows, attributes)).astype(str), rng.integers(0, 2, rows)


def test_an_oversized_kdb_is_refused_before_sampling():
    X, y = _wide()
    with pytest.raises(TooLargeError) as info:
        BayesNetClassifier(structure="kdb", k=5, iterations=100_000).fit(X, y)  # would run for hours if it were not refused
    msg = str(info.value)
    for words in ("kDB-5 on", "table cells", "GiB of memory", "model file", f"{config.MAX_MODEL_CELLS:,}",
                  "lower k", "fewer attributes (120 get a tree)", "the widest has 40"):
        assert words in msg, (words, msg)
    assert "\n" not in msg
    BayesNetClassifier(structure="kdb", k=1, estimator="laplace").fit(X[:, :10], y)  # a small one is fine


def test_the_count_is_exact():
    rng = np.random.default_rng(1)
    X = rng.integers(0, 4, size=(300, 6)).astype(np.uint8)
    y = rng.integers(0, 3, 300)
    cards = np.full(6, 4)
    parents = [[], [0], [0, 1], [1, 2], [2, 3], [0, 4]]
    trees = build_trees(X, y, cards, 3, parents, range(6))
    assert build_trees(X, y, cards, 3, parents, range(6), max_cells=trees.n_cells).n_cells == trees.n_cells
    with pytest.raises(TooLargeError, match=f"would have {trees.n_cells:,} table cells"):
        build_trees(X, y, cards, 3, parents, range(6), max_cells=trees.n_cells - 1)
