"""The counting pass, MI and CMI against slow, obviously correct references."""

from __future__ import annotations

import math

import numpy as np
import pytest

from hdp_plugin import config
from hdp_plugin.errors import DataError, ParameterError, TooLargeError
from hdp_plugin.structure import (
    conditional_mutual_information,
    count_statistics,
    mutual_information,
)
from hdp_plugin.structure.counts import pair_table_bytes, pairwise_bytes


# -- slow references -----------------------------------------------------------------------
def ref_counts(X, y, card, C):
    n_y = np.zeros(C, dtype=np.int64)
    n_xy = [np.zeros((card[i], C), dtype=np.int64) for i in range(X.shape[1])]
    n_xxy = {}
    for r in range(X.shape[0]):
        n_y[y[r]] += 1
        for i in range(X.shape[1]):
            n_xy[i][X[r, i], y[r]] += 1
            for j in range(X.shape[1]):
                if i != j:
                    t = n_xxy.setdefault((i, j), np.zeros((card[i], card[j], C), dtype=np.int64))
                    t[X[r, i], X[r, j], y[r]] += 1
    return n_y, n_xy, n_xxy


def ref_mi(X, y, card, C):
    """MI(X_i; Y) = sum p(x,y) log p(x,y) / (p(x) p(y)), straight from the definition."""
    N = len(y)
    out = []
    for i in range(X.shape[1]):
        s = 0.0
        for x in range(card[i]):
            px = np.mean(X[:, i] == x)
            for c in range(C):
                pxy = np.mean((X[:, i] == x) & (y == c))
                py = np.mean(y == c)
                if pxy > 0:
                    s += pxy * math.log(pxy / (px * py))
        out.append(s)
    assert N > 0
    return np.array(out)


def ref_cmi(X, y, card, C):
    """CMI(X_i; X_j | Y) = sum p(xi,xj,y) log p(xi,xj,y) p(y) / (p(xi,y) p(xj,y))."""
    n = X.shape[1]
    out = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            if i == j:
                continue
            s = 0.0
            for c in range(C):
                py = np.mean(y == c)
                for a in range(card[i]):
                    pay = np.mean((X[:, i] == a) & (y == c))
                    for b in range(card[j]):
                        pabc = np.mean((X[:, i] == a) & (X[:, j] == b) & (y == c))
                        pby = np.mean((X[:, j] == b) & (y == c))
                        if pabc > 0:
                            s += pabc * math.log(pabc * py / (pay * pby))
            out[i, j] = s
    return out


# -- random tables, edge cases included --------------------------------------------------------
def random_table(seed, n_rows, card, C, *, constant=(), dtype=np.uint8):
    rng = np.random.default_rng(seed)
    card = np.asarray(card, dtype=np.int64)
    X = np.empty((n_rows, len(card)), dtype=dtype)
    y = rng.integers(0, C, n_rows).astype(np.int32)
    for j, cj in enumerate(card):
        if j in constant:
            X[:, j] = cj - 1
        elif j % 2 and j > 0:
            # correlated with the class and the previous attribute, so MI/CMI are not ~0
            noise = rng.integers(0, cj, n_rows)
            keep = rng.random(n_rows) < 0.6
            X[:, j] = np.where(keep, (y + X[:, j - 1]) % cj, noise)
        else:
            X[:, j] = rng.integers(0, max(cj - 1, 1), n_rows)  # leaves the last code unused
    return X, y, card


CASES = [
    # (seed, rows, cardinalities, classes, constant attributes)
    (0, 200, [3, 4, 2, 5], 3, ()),
    (1, 50, [2, 2, 3], 2, (1,)),  # a constant attribute
    (2, 120, [4, 3, 3], 1, ()),  # one class: MI is 0
    (3, 1, [3, 2], 2, ()),  # one row
    (4, 300, [6], 4, ()),  # one attribute: no pairs
    (5, 80, [2, 5, 2, 3, 4, 2], 5, (0, 4)),
    (6, 500, [1, 3, 1], 3, (0, 2)),  # cardinality-1 attributes
]


@pytest.mark.parametrize("seed,n_rows,card,C,constant", CASES)
def test_counts_match_reference(seed, n_rows, card, C, constant):
    X, y, card = random_table(seed, n_rows, card, C, constant=constant)
    s = count_statistics(X, y, card, C)
    n_y, n_xy, n_xxy = ref_counts(X, y, card, C)
    assert s.n_rows == n_rows
    np.testing.assert_array_equal(s.n_y, n_y)
    for i in range(len(card)):
        np.testing.assert_array_equal(s.xy(i), n_xy[i])
        for j in range(len(card)):
            if i != j:
                np.testing.assert_array_equal(s.xxy(i, j), n_xxy[(i, j)])
    np.testing.assert_array_equal(
        s.x_marginals(), np.concatenate([t.sum(axis=1) for t in n_xy]) if card.size else []
    )


@pytest.mark.parametrize("seed,n_rows,card,C,constant", CASES)
def test_mi_cmi_match_reference(seed, n_rows, card, C, constant):
    X, y, card = random_table(seed, n_rows, card, C, constant=constant)
    s = count_statistics(X, y, card, C)
    mi = mutual_information(s)
    cmi = conditional_mutual_information(s)
    np.testing.assert_allclose(mi, ref_mi(X, y, card, C), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(cmi, ref_cmi(X, y, card, C), rtol=1e-10, atol=1e-12)
    assert np.array_equal(cmi, cmi.T)
    assert np.all(mi >= 0) and np.all(cmi >= 0)
    for j in constant:
        assert mi[j] == 0.0 and np.all(cmi[j] == 0.0)
    if C == 1:  # no class information; CMI is then the plain MI(X_i; X_j)
        assert np.all(mi == 0.0)


def test_streaming_blocks_give_the_same_counts(monkeypatch):
    X, y, card = random_table(7, 1000, [3, 4, 2, 5, 3], 3, dtype=np.uint16)
    whole = count_statistics(X, y, card, 3)
    monkeypatch.setattr(config, "ROW_BLOCK", 37)
    blocks = count_statistics(X, y, card, 3)
    threaded = count_statistics(X, y, card, 3, n_jobs=2)  # 28 blocks in two parts, on two threads
    for name in ("n_y", "n_xy", "n_xxy"):
        np.testing.assert_array_equal(getattr(whole, name), getattr(blocks, name))
        np.testing.assert_array_equal(getattr(whole, name), getattr(threaded, name))
    assert threaded.n_rows == 1000


def test_input_is_not_copied_and_views_work():
    X, y, card = random_table(8, 100, [3, 3, 3], 2)
    view = X[10:90]  # a C-contiguous view
    s = count_statistics(view, y[10:90], card, 2)
    assert s.n_rows == 80 and s.n_y.sum() == 80


def test_non_contiguous_codes_work():
    X, y, card = random_table(9, 200, [3, 4, 2], 3)
    ref = count_statistics(X, y, card, 3)
    for other in (np.asfortranarray(X), np.repeat(X, 2, axis=1)[:, ::2]):
        assert not other.flags.c_contiguous
        np.testing.assert_array_equal(count_statistics(other, y, card, 3).n_xxy, ref.n_xxy)


def test_empty_data_and_no_attributes():
    s = count_statistics(np.zeros((0, 2), np.uint8), np.zeros(0, np.int32), [2, 3], 2)
    assert s.n_rows == 0 and s.n_xxy.sum() == 0
    assert np.all(mutual_information(s) == 0) and np.all(conditional_mutual_information(s) == 0)
    s = count_statistics(np.zeros((5, 0), np.uint8), np.zeros(5, np.int32), [], 2)
    assert mutual_information(s).shape == (0,)
    assert conditional_mutual_information(s).shape == (0, 0)


def test_pair_table_bytes():
    assert pair_table_bytes([5] * 20, 3) == 8 * 3 * 25 * (20 * 19 // 2)
    with pytest.raises(TooLargeError, match="max_bytes"):  # a resource limit (the daemon's too_large)
        count_statistics(np.zeros((1, 3), np.uint8), np.zeros(1, np.int32), [9, 9, 9], 2,
                         max_bytes=100)  # fmt: skip


@pytest.mark.parametrize(
    "X,y,card,C,exc,match",
    [
        (np.array([[0, 3]], np.uint8), [0], [2, 3], 2, DataError, r"X\[0, 1\] = 3"),
        (np.array([[0, 1]], np.uint8), [2], [2, 3], 2, DataError, r"y\[0\] = 2"),
        (np.array([[0, 1]], np.int8), [-1], [2, 3], 2, DataError, r"y\[0\] = -1"),
        (np.array([[0, -1]], np.int8), [0], [2, 3], 2, DataError, r"X\[0, 1\] = -1"),
        (np.array([[0.0, 1.0]]), [0], [2, 3], 2, ParameterError, "integer codes"),
        (np.array([0, 1], np.uint8), [0], [2], 2, ParameterError, "2-D"),
        (np.array([[0, 1]], np.uint8), [0, 1], [2, 3], 2, ParameterError, "one class code"),
        (np.array([[0, 1]], np.uint8), [0], [2], 2, ParameterError, "cardinalities must have"),
        (np.array([[0, 1]], np.uint8), [0], [2, 0], 2, ParameterError, ">= 1"),
        (np.array([[0, 1]], np.uint8), [0], [2, 3], 0, ParameterError, "n_classes must be >= 1"),
        (np.array([[0, 1]], np.uint8), [0], [2, 3], 2.0, ParameterError, "n_classes must be an"),
    ],
)
def test_bad_inputs(X, y, card, C, exc, match):
    with pytest.raises(exc, match=match):
        count_statistics(X, np.asarray(y), np.asarray(card), C)


def test_bad_code_in_a_later_block_names_the_global_row(monkeypatch):
    monkeypatch.setattr(config, "ROW_BLOCK", 4)
    X = np.zeros((10, 2), np.uint8)
    X[6, 1] = 9
    with pytest.raises(DataError, match=r"X\[6, 1\] = 9"):
        count_statistics(X, np.zeros(10, np.int32), [2, 2], 1)
    X[9, 0] = 7  # two bad rows in two parts counted on two threads: the first one is named, as on one
    for n_jobs in (1, 2):
        with pytest.raises(DataError, match=r"X\[6, 1\] = 9"):
            count_statistics(X, np.zeros(10, np.int32), [2, 2], 1, n_jobs=n_jobs)


def test_threads_fall_back_to_one_copy_of_the_counts_when_two_do_not_fit(monkeypatch):
    from hdp_plugin.structure import counts

    monkeypatch.setattr(config, "ROW_BLOCK", 10)
    parts_seen = []
    real = counts.map_parts
    monkeypatch.setattr(counts, "map_parts", lambda fn, parts: parts_seen.append(len(parts)) or real(fn, parts))
    X, y, card = random_table(3, 100, [3, 3, 3], 2)
    one = pairwise_bytes(card, 2)
    s = count_statistics(X, y, card, 2, max_bytes=2 * one, n_jobs=2)
    s1 = count_statistics(X, y, card, 2, max_bytes=one, n_jobs=2)  # two copies would not fit: one part
    assert parts_seen == [2, 1]
    for stats in (s, s1):
        np.testing.assert_array_equal(stats.n_xxy, count_statistics(X, y, card, 2).n_xxy)
