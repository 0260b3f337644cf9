"""The discretisation kernels against slow, obviously correct Python twins.

The twins transliterate Weka 3.8.6 row by row (``Discretize.cutPointsForSubset``,
``FayyadAndIranisMDL``, ``ContingencyTables``, unsupervised ``Discretize``'s equal-frequency loop),
with plain recursion, Python floats and ``math.log``. Kept small so that this module also runs
quickly with ``NUMBA_DISABLE_JIT=1`` (see ``test_preprocess_nojit.py``).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from hdp_plugin.preprocess import (
    equal_frequency_cut_points,
    equal_width_cut_points,
    mdl_cut_points,
)
from hdp_plugin.preprocess import kernels

LOG2 = math.log(2.0)


# --- the twins ----------------------------------------------------------------------------------
def ln_func(x: float) -> float:
    return 0.0 if x <= 0 else x * math.log(x)


def entropy(counts: list[float]) -> float:
    ret, total = 0.0, 0.0
    for c in counts:
        ret -= ln_func(c)
        total += c
    return 0.0 if total == 0 else (ret + ln_func(total)) / (total * LOG2)


def entropy_conditioned_on_rows(matrix: list[list[float]]) -> float:
    ret, total = 0.0, 0.0
    for row in matrix:
        row_sum = 0.0
        for c in row:
            ret = ret + ln_func(c)
            row_sum += c
        ret = ret - ln_func(row_sum)
        total += row_sum
    return 0.0 if total == 0 else -ret / (total * LOG2)


def fayyad_irani(prior, best, n_instances, n_cut_points) -> bool:
    prior_entropy = entropy(prior)
    gain = prior_entropy - entropy_conditioned_on_rows(best)
    k = sum(c > 0 for c in prior)
    k1 = sum(c > 0 for c in best[0])
    k2 = sum(c > 0 for c in best[1])
    e1, e2 = entropy(best[0]), entropy(best[1])
    delta = math.log(3.0**k - 2) / LOG2 - (k * prior_entropy - k2 * e2 - k1 * e1)
    return gain > (math.log(n_cut_points) / LOG2 + delta) / n_instances


def twin_mdl(values, y, n_classes):
    """Weka's cutPointsForSubset over rows sorted by value (missing value or class dropped)."""
    rows = sorted((v, c) for v, c in zip(values, y) if not math.isnan(v) and c >= 0)

    def subset(first, last_plus_one):
        if last_plus_one - first < 2:
            return []
        counts = [[0.0] * n_classes, [0.0] * n_classes]
        n_instances = 0.0
        for i in range(first, last_plus_one):
            n_instances += 1.0
            counts[1][rows[i][1]] += 1.0
        prior = list(counts[1])
        prior_entropy = entropy(prior)
        best_entropy, best_index, best_cut, best_counts = prior_entropy, -1, None, None
        for i in range(first, last_plus_one - 1):
            counts[0][rows[i][1]] += 1.0
            counts[1][rows[i][1]] -= 1.0
            if rows[i][0] < rows[i + 1][0]:
                e = entropy_conditioned_on_rows(counts)
                if e < best_entropy:
                    best_entropy, best_index = e, i
                    best_cut = (rows[i][0] + rows[i + 1][0]) / 2.0
                    best_counts = [list(counts[0]), list(counts[1])]
        if prior_entropy - best_entropy <= 0:
            return []
        if not fayyad_irani(prior, best_counts, n_instances, (last_plus_one - first) - 1):
            return []
        return subset(first, best_index + 1) + [best_cut] + subset(best_index + 1, last_plus_one)

    return np.array(subset(0, len(rows)), dtype=np.float64)


def twin_equal_frequency(values, bins):
    """Weka's calculateCutPointsByEqualFrequencyBinning, missing values sorted last."""
    data = sorted(v for v in values if not math.isnan(v)) + [math.nan] * int(np.isnan(values).sum())
    total = float(sum(not math.isnan(v) for v in data))
    cut_points = [0.0] * (bins - 1)
    freq = total / bins
    counter = last = 0.0
    cp, last_index = 0, -1
    for i in range(len(data) - 1):
        if math.isnan(data[i]):
            break
        counter += 1.0
        total -= 1.0
        if data[i] < data[i + 1]:
            if counter >= freq:
                if (freq - last) < (counter - freq) and last_index != -1:
                    cut_points[cp] = (data[last_index] + data[last_index + 1]) / 2
                    counter -= last
                    last = counter
                    last_index = i
                else:
                    cut_points[cp] = (data[i] + data[i + 1]) / 2
                    counter = last = 0.0
                    last_index = -1
                cp += 1
                freq = (total + counter) / ((len(cut_points) + 1) - cp)
            else:
                last_index, last = i, counter
    if cp < len(cut_points) and last_index != -1:
        cut_points[cp] = (data[last_index] + data[last_index + 1]) / 2
        cp += 1
    return np.array(cut_points[:cp], dtype=np.float64)


def twin_equal_width(values, bins):
    present = [v for v in values if not math.isnan(v)]
    if not present:
        return np.empty(0)
    lo, hi = min(present), max(present)
    width = (hi - lo) / bins
    if bins <= 1 or width <= 0:
        return np.empty(0)
    return np.array([lo + width * i for i in range(1, bins)])


# --- inputs -------------------------------------------------------------------------------------
def random_case(seed: int):
    """Values with ties, NaNs and a class that depends on the value (so splits get accepted)."""
    rng = np.random.default_rng(seed)
    n = int(rng.choice([2, 3, 5, 8, 20, 40, 80, 150]))
    n_classes = int(rng.integers(1, 5))
    n_distinct = int(rng.choice([1, 2, 4, 10, n]))
    values = rng.integers(0, n_distinct, n).astype(np.float64) * float(rng.choice([1.0, 0.1, -3.7, 1e-7, 1e6]))
    if rng.random() < 0.5:
        values = values + rng.normal(0, 1e-3, n) * (rng.random(n) < 0.3)
    thresholds = np.sort(rng.choice(values, size=n_classes - 1)) if n_classes > 1 else np.empty(0)
    y = np.searchsorted(thresholds, values).astype(np.int64)
    noise = rng.random(n) < float(rng.choice([0.0, 0.1, 0.4]))
    y[noise] = rng.integers(0, n_classes, int(noise.sum()))
    values[rng.random(n) < float(rng.choice([0.0, 0.1, 0.3]))] = np.nan
    y[rng.random(n) < float(rng.choice([0.0, 0.05]))] = -1
    return values, y, n_classes


EDGE_CASES = {
    "empty": (np.empty(0), np.empty(0, np.int64), 2),
    "one row": (np.array([1.0]), np.array([0]), 2),
    "two rows split": (np.array([1.0, 2.0]), np.array([0, 1]), 2),
    "two rows same class": (np.array([1.0, 2.0]), np.array([1, 1]), 2),
    "one class": (np.arange(50.0), np.zeros(50, np.int64), 1),
    "one class of three": (np.arange(50.0), np.full(50, 2), 3),
    "all equal": (np.full(40, 3.5), np.tile([0, 1], 20), 2),
    "all missing": (np.full(30, np.nan), np.tile([0, 1, 2], 10), 3),
    "all class missing": (np.arange(30.0), np.full(30, -1), 2),
    "perfect split": (np.arange(60.0), np.repeat([0, 1], 30), 2),
    "three blocks": (np.arange(90.0), np.repeat([0, 1, 2], 30), 3),
    "ties across classes": (np.repeat([1.0, 2.0, 3.0], 20), np.tile([0, 1], 30), 2),
    "negatives and zero": (np.repeat([-2.0, -0.0, 0.0, 5.0], 15), np.repeat([0, 0, 1, 1], 15), 2),
}


@pytest.mark.parametrize("seed", range(60))
def test_mdl_kernel_matches_twin_on_random_inputs(seed):
    values, y, n_classes = random_case(seed)
    got = mdl_cut_points(values, y, n_classes)
    expected = twin_mdl(values, y, n_classes)
    assert got.tobytes() == expected.tobytes(), (got, expected)


@pytest.mark.parametrize("name", list(EDGE_CASES))
def test_mdl_kernel_edge_cases(name):
    values, y, n_classes = EDGE_CASES[name]
    got = mdl_cut_points(values, y, n_classes)
    expected = twin_mdl(values, y, n_classes)
    assert got.tobytes() == expected.tobytes(), (got, expected)
    assert np.all(np.diff(got) > 0)


def test_mdl_edge_case_answers():
    assert mdl_cut_points(*EDGE_CASES["one class"]).size == 0
    assert mdl_cut_points(*EDGE_CASES["all equal"]).size == 0
    assert mdl_cut_points(*EDGE_CASES["all missing"]).size == 0
    # two rows of different classes: gain 1 bit > (log2(1) + log2(7) - 2) / 2
    np.testing.assert_array_equal(mdl_cut_points(*EDGE_CASES["two rows split"]), [1.5])
    assert mdl_cut_points(*EDGE_CASES["two rows same class"]).size == 0
    np.testing.assert_array_equal(mdl_cut_points(*EDGE_CASES["perfect split"]), [29.5])
    np.testing.assert_array_equal(mdl_cut_points(*EDGE_CASES["three blocks"]), [29.5, 59.5])


def test_mdl_ignores_row_order_and_missing_rows():
    values, y, n_classes = random_case(7)
    rng = np.random.default_rng(1)
    perm = rng.permutation(values.shape[0])
    np.testing.assert_array_equal(mdl_cut_points(values, y, n_classes), mdl_cut_points(values[perm], y[perm], n_classes))
    extra_v = np.concatenate([values, [np.nan, 1e9, np.nan]])
    extra_y = np.concatenate([y, [0, -1, -1]])
    np.testing.assert_array_equal(mdl_cut_points(values, y, n_classes), mdl_cut_points(extra_v, extra_y, n_classes))


def test_xlogx_table_is_wekas_lnfunc():
    table = kernels.xlogx_table(500)
    assert table[0] == 0.0 and table[1] == 0.0
    assert all(table[k] == ln_func(float(k)) for k in range(501))


@pytest.mark.parametrize("seed", range(40))
@pytest.mark.parametrize("bins", [1, 2, 3, 10])
def test_equal_frequency_matches_twin(seed, bins):
    values, _, _ = random_case(seed)
    got = equal_frequency_cut_points(values, bins)
    expected = twin_equal_frequency(values, bins)
    assert got.tobytes() == expected.tobytes(), (got, expected)
    assert got.shape[0] <= bins - 1


@pytest.mark.parametrize("seed", range(20))
@pytest.mark.parametrize("bins", [1, 2, 7])
def test_equal_width_matches_twin(seed, bins):
    values, _, _ = random_case(seed)
    got = equal_width_cut_points(values, bins)
    expected = twin_equal_width(values, bins)
    assert got.tobytes() == expected.tobytes(), (got, expected)


@pytest.mark.parametrize("seed", range(10))
def test_bin_columns_is_assign_bins_column_by_column(seed):
    """The one-call binning of apply_cut_points gives assign_bins' codes: values on a cut point, below
    the first and above the last, signed zeros, infinities and NaN (missing) included."""
    from hdp_plugin.preprocess import assign_bins

    rng = np.random.default_rng(seed)
    n, m = 200, 5
    grid = np.array([-np.inf, -2.0, -0.0, 0.0, 0.5, 1.0, 3.0, np.inf, np.nan])
    numeric = np.where(rng.random((n, m)) < 0.5, rng.choice(grid, (n, m)), rng.normal(0, 2, (n, m)))
    cuts = [np.sort(rng.choice([-2.0, -0.0, 0.5, 1.0, 3.0], size=k, replace=False)) for k in (0, 1, 2, 3, 5)]
    cols = rng.permutation(m).astype(np.int64)
    out = np.empty((n, m), np.int64)
    kernels.bin_columns(numeric, cols, np.concatenate(cuts), np.cumsum([0] + [c.size for c in cuts]).astype(np.int64),
                        out)
    for i in range(m):
        np.testing.assert_array_equal(out[:, i], assign_bins(numeric[:, cols[i]], cuts[i]))
