"""Selective kDB: the leave-one-out grid against brute force, and selections with known answers."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest

from hdp_plugin import config
from hdp_plugin.structure import CountStatistics, count_statistics, learn_structure
from hdp_plugin.structure.selective import (
    Smoothing,
    build_context_tries,
    loo_rmse_grid,
    select_prefix_and_k,
)


# -- slow reference: remove the row, recount, predict ------------------------------------------
def ref_loo_rmse(X, y, card, C, order, parents, K, m=1.0, hierarchical=False):
    """For each row: drop it, recount from scratch, and form every k's posterior as published.

    ``hierarchical``: each context's m-estimate is smoothed towards the estimate of the context one
    level up (the uniform distribution above the class-only context) instead of the uniform.

    Walking each attribute's contexts (class, then its parents one by one), the depth-d estimate
    goes into k = d; the walk stops at the deepest context, or backs off (the depth-d estimate
    also goes into k = d + 1) when the next context holds the row's value fewer than twice over
    all classes, the row included; the stopping k's posterior is then copied into every larger k.
    """
    N, n = X.shape
    sq = np.zeros((n + 1, K + 1))
    for i in range(N):
        keep = np.arange(N) != i
        Xo, yo = X[keep], y[keep]
        prior = np.array([(np.sum(yo == c) + 1.0 / C) / (N - 1 + 1.0) for c in range(C)])
        logpost = np.tile(np.log(prior), (K + 1, 1))

        def add_error(row):
            for k in range(K + 1):
                post = np.exp(logpost[k] - logpost[k].max())
                sq[row, k] += (1.0 - post[y[i]] / post.sum()) ** 2

        def log_estimate(a, ctx, up):
            """log m-estimate of x_a = X[i, a] for every class, in context ctx, row i left out, smoothed
            towards ``up`` (the estimates one level up) if hierarchical, else towards 1 / |X_a|."""
            out = np.empty(C)
            for c in range(C):
                mask = (yo == c) & np.all(Xo[:, ctx] == X[i, ctx], axis=1)
                den = mask.sum() + m
                hits = np.sum(Xo[mask, a] == X[i, a])
                toward = up[c] if hierarchical else 1.0 / card[a]
                out[c] = math.log((hits + m * toward) / den if den > 0 else toward)
            return out

        add_error(0)
        for u, a in enumerate(order):
            ps = list(parents[a])
            d = 0
            up = np.full(C, 1.0 / card[a])
            while True:
                est = log_estimate(a, ps[:d], up)
                up = np.exp(est)
                logpost[d] += est
                if d == len(ps):
                    stop = d
                    break
                ctx = ps[: d + 1]
                with_row = np.all(X[:, ctx] == X[i, ctx], axis=1) & (X[:, a] == X[i, a])
                if with_row.sum() < 2:
                    logpost[d + 1] += est
                    stop = d + 1
                    break
                d += 1
            logpost[stop + 1:] = logpost[stop]
            add_error(u + 1)
    return np.sqrt(sq / N)


def random_data(seed, n_rows, card, C):
    rng = np.random.default_rng(seed)
    card = np.asarray(card, dtype=np.int64)
    y = rng.integers(0, C, n_rows).astype(np.int32)
    X = np.empty((n_rows, len(card)), np.uint8)
    for j, cj in enumerate(card):
        noise = rng.integers(0, cj, n_rows)
        X[:, j] = np.where(rng.random(n_rows) < 0.5, (y + j) % cj, noise)
    return X, y, card


LOO_CASES = [
    # (seed, rows, cardinalities, classes, K)
    (0, 40, [2, 3, 2, 3], 2, 2),
    (1, 30, [3, 4, 3], 3, 3),  # K above the attribute count
    (2, 25, [5, 6, 4, 5], 4, 2),  # sparse: many contexts empty after removal
    (3, 20, [2, 2, 3], 1, 1),  # one class: every error is 0
    (4, 2, [2, 3], 2, 1),  # two rows
    (5, 1, [3, 2], 2, 1),  # one row: everything backs off to the uniform
    (6, 35, [3, 3, 2, 2, 3], 3, 0),  # K = 0: naive Bayes prefixes only
]


def loo_case(seed, n_rows, card, C, K):
    """One case of LOO_CASES: its data (with a class that occurs once, so its context empties when that
    row is left out), counts, kDB-K structure and tries."""
    X, y, card = random_data(seed, n_rows, card, C)
    if n_rows > 5 and C > 1:
        y[y == C - 1] = 0
        y[3] = C - 1
    stats = count_statistics(X, y, card, C)
    full = learn_structure(X, y, card, C, kind="kdb", k=K)
    return X, y, card, stats, full, build_context_tries(X, y, stats, full.parents)


@pytest.mark.parametrize("seed,n_rows,card,C,K", LOO_CASES)
def test_loo_grid_matches_brute_force(seed, n_rows, card, C, K):
    X, y, card, stats, full, tries = loo_case(seed, n_rows, card, C, K)
    grid = loo_rmse_grid(X, y, stats, tries, np.array(full.order), K)
    ref = ref_loo_rmse(X, y, card, C, full.order, full.parents, K)
    np.testing.assert_allclose(grid, ref, rtol=1e-10, atol=1e-12)
    s = learn_structure(X, y, card, C, kind="skdb", k=K)
    used = min(K, len(card) - 1)  # SkDB's grid stops at the most parents an attribute can have
    assert s.info["max_k"] == used and s.k <= used
    np.testing.assert_allclose(np.array(s.info["rmse"]), ref[:, :used + 1], rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("m", [1.0, 10.0])
@pytest.mark.parametrize("seed,n_rows,card,C,K", LOO_CASES)
def test_hierarchical_loo_grid_matches_brute_force(seed, n_rows, card, C, K, m):
    """Hierarchical m-estimates: each context's estimate smoothed towards its parent context's."""
    X, y, card, stats, full, tries = loo_case(seed, n_rows, card, C, K)
    grid = loo_rmse_grid(X, y, stats, tries, np.array(full.order), K, Smoothing(m, hierarchical=True))
    ref = ref_loo_rmse(X, y, card, C, full.order, full.parents, K, m=m, hierarchical=True)
    np.testing.assert_allclose(grid, ref, rtol=1e-10, atol=1e-12)
    if K > 0 and n_rows > 5 and C > 1:  # deep contexts are scored differently from the flat rule's
        flat = ref_loo_rmse(X, y, card, C, full.order, full.parents, K, m=m)
        assert not np.allclose(grid[1:, 1:], flat[1:, 1:], rtol=1e-10, atol=1e-12)


def test_many_attributes_do_not_underflow():
    """200 sparse attributes: the product of estimates is ~1e-500, far below a double's range."""
    X, y, card = random_data(14, 12, [40] * 200, 2)
    C = 2
    # only the per-attribute counts matter here; skip the (large) pair table
    xy = np.zeros((len(card), 40, C), np.int64)
    for j in range(len(card)):
        np.add.at(xy[j], (X[:, j], y), 1)
    stats = CountStatistics(
        n_rows=len(y), n_classes=C, cardinalities=card, n_y=np.bincount(y, minlength=C),
        n_xy=xy.ravel(), xy_offsets=np.arange(len(card) + 1, dtype=np.int64) * 40 * C,
        n_xxy=np.zeros(0, np.int64), pair_offsets=np.zeros((0, 0), np.int64),
    )  # fmt: skip
    parents = ((),) * len(card)
    order = np.arange(len(card))
    grid = loo_rmse_grid(X, y, stats, build_context_tries(X, y, stats, parents), order, 0)
    assert np.all(np.isfinite(grid))
    ref = ref_loo_rmse(X, y, card, C, order, parents, 0)
    np.testing.assert_allclose(grid, ref, rtol=1e-9, atol=1e-12)


def _values_by_context(X, ctx_attrs, a):
    """The values of attribute ``a`` seen in each context of the attributes ``ctx_attrs``."""
    out = {}
    for r in range(X.shape[0]):
        out.setdefault(tuple(X[r, q] for q in ctx_attrs), set()).add(X[r, a])
    return out


def test_context_trie_counts(monkeypatch):
    """Every row's path holds n(x_a, y, first d parents); tiny blocks force growth mid-pass."""
    monkeypatch.setattr(config, "ROW_BLOCK", 13)
    X, y, card = random_data(11, 300, [7, 9, 8, 6, 9], 3)
    stats = count_statistics(X, y, card, 3)
    parents = learn_structure(X, y, card, 3, kind="kdb", k=3).parents
    t = build_context_tries(X, y, stats, parents)
    ref = Counter()
    for r in range(len(y)):
        for a, ps in enumerate(parents):
            for d in range(len(ps) + 1):
                ref[(a, tuple(X[r, q] for q in ps[:d]), y[r], X[r, a])] += 1
    blocks = set()
    for r in range(len(y)):
        for a, ps in enumerate(parents):
            ca = card[a]
            block = t.root[a]
            for d in range(len(ps) + 1):
                if d:  # follow the child slot of the next parent's value
                    block = t.data[block + 3 + ca + X[r, ps[d - 1]]]
                blocks.add(block)
                ctx = tuple(X[r, q] for q in ps[:d])
                for x in range(ca):
                    vb = t.data[block + 3 + x]
                    seen = sum(ref[(a, ctx, c, x)] for c in range(3))
                    assert (vb >= 0) == (seen > 0)  # a value block exactly for the values seen here
                    if vb >= 0:
                        for c in range(3):
                            assert t.data[vb + c] == ref[(a, ctx, c, x)]
                for c in range(3):
                    total = sum(ref[(a, ctx, c, x)] for x in range(ca))
                    assert t.data[block + c] == total
    assert len(blocks) == t.n_nodes  # only visited contexts exist
    # every block is accounted for: the array is exactly the visited node blocks and value blocks
    n_cells = sum(3 + card[a] + (card[ps[d]] if d < len(ps) else 0) + 3 * len(xs)
                  for a, ps in enumerate(parents)
                  for d in range(len(ps) + 1)
                  for xs in _values_by_context(X, ps[:d], a).values())  # fmt: skip
    assert t.data.shape[0] == n_cells


def test_streaming_gives_the_same_grid(monkeypatch):
    X, y, card = random_data(12, 400, [3, 4, 3, 2, 5], 3)
    a = learn_structure(X, y, card, 3, kind="skdb", k=3)
    monkeypatch.setattr(config, "ROW_BLOCK", 17)
    b = learn_structure(X, y, card, 3, kind="skdb", k=3)
    np.testing.assert_allclose(a.info["rmse"], b.info["rmse"], rtol=1e-12)
    assert a == b


# -- selections with a known answer ---------------------------------------------------------
# In-sample irrelevance is made exact, so the answer is a theorem rather than a likely outcome:
# if n(x, y) = N_y / |X| for every value and class, the m-estimate (m = 1) of a class other than
# the row's is exactly 1/|X|, while the row's own class, with the row removed, gets
# (N_y/|X| - 1 + 1/|X|) / N_y < 1/|X|. Adding such an attribute lowers p(true class) on every
# row, so it strictly raises the leave-one-out RMSE. (Irrelevant attributes drawn at random are
# not enough: the one with the highest spurious MI is selected on the same data it is scored
# on, and often looks helpful.)
def planted_nb_with_noise(seed, n_base=250, n_informative=4, n_noise=2, C=3, n_values=4):
    """A planted naive Bayes plus irrelevant attributes that are exactly irrelevant in-sample.

    Every base row is repeated once per combination of the irrelevant attributes' values (a
    full factorial), so in every context (class, any parents) each irrelevant value occurs
    equally often, and the argument above holds for every k*.
    """
    rng = np.random.default_rng(seed)
    y = rng.integers(0, C, n_base)
    info = np.stack([np.where(rng.random(n_base) < 0.6, y, rng.integers(0, C, n_base))
                     for _ in range(n_informative)], axis=1)  # fmt: skip
    noise = np.array(np.meshgrid(*[np.arange(n_values)] * n_noise, indexing="ij"))
    noise = noise.reshape(n_noise, -1).T
    X = np.hstack([np.repeat(info, len(noise), axis=0), np.tile(noise, (n_base, 1))])
    perm = rng.permutation(len(X))
    X = np.ascontiguousarray(X[perm]).astype(np.uint8)
    y = np.repeat(y, len(noise))[perm].astype(np.int32)
    card = np.array([C + 1] * n_informative + [n_values] * n_noise)
    return X, y, card, C


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("K", [0, 2])
def test_irrelevant_attributes_are_dropped(seed, K):
    X, y, card, C = planted_nb_with_noise(seed)
    s = learn_structure(X, y, card, C, kind="skdb", k=K)
    assert s.kept == (0, 1, 2, 3)
    assert s.info["n_star"] == 4 and set(s.order[:4]) == {0, 1, 2, 3}
    assert s.parents[4] == () and s.parents[5] == ()
    grid = np.array(s.info["rmse"])
    assert grid[4, s.k] == grid.min() < grid[0, 0]
    # each irrelevant attribute strictly adds error, whatever k*
    assert np.all(np.diff(grid[4:, :], axis=0) > 0)


@pytest.mark.parametrize("reps", [1, 2])
def test_class_prior_wins_when_nothing_is_informative(reps):
    """A full factorial design: every context, however deep, is balanced over every value."""
    grid = np.array(np.meshgrid(*[np.arange(3)] * 4, indexing="ij")).reshape(4, -1).T
    data = np.tile(grid, (reps, 1))
    rng = np.random.default_rng(reps)
    data = data[rng.permutation(len(data))]
    X = np.ascontiguousarray(data[:, 1:]).astype(np.uint8)
    y = data[:, 0].astype(np.int32)
    s = learn_structure(X, y, np.full(3, 3), 3, kind="skdb", k=2)
    assert s.kept == () and s.k == 0 and s.parents == ((),) * 3
    assert s.info["n_star"] == 0 and s.info["k_star"] == 0
    assert len(s.order) == 3  # the MI order is still reported
    rmse = np.array(s.info["rmse"])
    assert np.all(rmse[1:] > rmse[0, 0])


def test_one_class_is_the_class_prior():
    X = np.random.default_rng(0).integers(0, 3, (50, 3)).astype(np.uint8)
    s = learn_structure(X, np.zeros(50, np.int32), np.full(3, 3), 1, kind="skdb", k=2)
    assert s.kept == () and np.all(np.array(s.info["rmse"]) == 0.0)


def test_kept_attributes_keep_their_first_k_star_parents():
    X, y, card = random_data(13, 600, [3, 4, 3, 3, 4, 2], 3)
    # make attribute 5 a noisy function of 1 and 2, so parents matter
    rng = np.random.default_rng(0)
    X[:, 5] = np.where(rng.random(600) < 0.9, (X[:, 1] + X[:, 2]) % 2, rng.integers(0, 2, 600))
    s = learn_structure(X, y, card, 3, kind="skdb", k=3)
    full = learn_structure(X, y, card, 3, kind="kdb", k=3)
    assert s.order == full.order
    assert s.kept == tuple(sorted(s.order[: s.info["n_star"]]))
    for a in range(6):
        assert s.parents[a] == (full.parents[a][: s.k] if a in s.kept else ())
        assert set(s.parents[a]) <= set(s.kept)
    assert s.info["max_k"] == 3 and s.info["k_star"] == s.k


@pytest.mark.parametrize(
    "grid,expected",
    [
        ([[0.5, 0.5], [0.6, 0.7], [0.55, 0.9]], (0, 0)),  # nothing beats the prior
        ([[0.5, 0.5], [0.4, 0.4], [0.4, 0.3]], (2, 1)),  # ties keep the earlier model
        ([[0.5, 0.5], [0.4, 0.3], [0.3, 0.4]], (1, 1)),  # equal to the best is not better
        ([[0.5, 0.5, 0.5], [0.5, 0.5, 0.49], [0.5, 0.5, 0.5]], (1, 2)),
    ],
)
def test_selection_scans_strict_improvements(grid, expected):
    assert select_prefix_and_k(np.array(grid)) == expected


# -- the passes split over partitions: merged tries, exact sums --------------------------------
def _splits(n_rows, sizes_seed):
    """Unequal consecutive partitions of the rows (one of them a single row, one empty)."""
    rng = np.random.default_rng(sizes_seed)
    cuts = np.sort(rng.choice(np.arange(2, n_rows - 1), 3, replace=False))
    bounds = [0, 1, 1, *cuts.tolist(), n_rows]
    return [(a, b) for a, b in zip(bounds[:-1], bounds[1:])]


def _blocks(X, y):
    return lambda: iter([(X, y)])


@pytest.mark.parametrize("seed", [0, 1])
def test_merged_tries_are_the_tries_of_all_rows(seed):
    """Per-partition tries merged (in any order) are the tries built from all rows at once: the same
    counts, and, laid out canonically, the same array; the layout does not depend on the row order."""
    from hdp_plugin.structure.selective import TrieAccumulator

    X, y, card = random_data(20 + seed, 500, [4, 6, 3, 5, 7, 2], 3)
    stats = count_statistics(X, y, card, 3)
    parents = learn_structure(X, y, card, 3, kind="kdb", k=3).parents

    def canonical(X, y):
        acc = TrieAccumulator(card, 3, parents)
        acc.add(X, y)
        return acc.result(canonical=True)

    whole = canonical(X, y)
    as_counted = build_context_tries(X, y, stats, parents)  # the fit's tries: not laid out canonically
    assert as_counted.n_nodes == whole.n_nodes and as_counted.data.shape == whole.data.shape
    assert np.array_equal(as_counted.class_contexts, whole.class_contexts)
    parts = []
    for a, b in _splits(len(y), seed):
        acc = TrieAccumulator(card, 3, parents)
        acc.add(X[a:b], y[a:b])
        parts.append(acc)
    for perm in (range(len(parts)), np.random.default_rng(seed).permutation(len(parts))):
        merged = TrieAccumulator(card, 3, parents)
        for i in perm:
            merged.merge(parts[i])
        got = merged.result(canonical=True)
        assert got.n_nodes == whole.n_nodes
        assert np.array_equal(got.data, whole.data)
        assert np.array_equal(got.root, whole.root) and np.array_equal(got.par_idx, whole.par_idx)
    # a tree-shaped merge of pickled partials (as between worker processes)
    import pickle

    left = pickle.loads(pickle.dumps(parts[0].merge(parts[1]).merge(parts[2])))
    right = pickle.loads(pickle.dumps(parts[3].merge(parts[4])))
    assert np.array_equal(left.merge(right).merge(parts[5]).result(canonical=True).data, whole.data)
    perm = np.random.default_rng(seed + 7).permutation(len(y))
    assert np.array_equal(canonical(X[perm], y[perm]).data, whole.data)
    # the leave-one-out grid read from them is the same, whatever the layout
    order = np.array(learn_structure(X, y, card, 3, kind="kdb", k=3).order)
    grid = loo_rmse_grid(X, y, stats, whole, order, 3)
    assert np.array_equal(loo_rmse_grid(X, y, stats, got, order, 3), grid)
    assert np.array_equal(loo_rmse_grid(X, y, stats, as_counted, order, 3), grid)
    shuffled = build_context_tries(X[perm], y[perm], stats, parents)
    assert not np.array_equal(shuffled.data, as_counted.data)  # another layout ...
    assert np.array_equal(loo_rmse_grid(X, y, stats, shuffled, order, 3), grid)  # ... the same grid


def test_tries_of_different_parents_do_not_merge():
    from hdp_plugin.structure.selective import TrieAccumulator

    with pytest.raises(ValueError, match="different attributes, classes or parents"):
        TrieAccumulator([3, 3], 2, ((), (0,))).merge(TrieAccumulator([3, 3], 2, ((1,), ())))


@pytest.mark.parametrize("seed", [0, 1])
def test_leave_one_out_sums_split_and_merged_in_any_order_are_bit_identical(seed):
    from hdp_plugin.structure.selective import loo_sums

    X, y, card = random_data(30 + seed, 700, [3, 4, 3, 2, 5, 4], 3)
    stats = count_statistics(X, y, card, 3)
    full = learn_structure(X, y, card, 3, kind="kdb", k=3)
    tries = build_context_tries(X, y, stats, full.parents)
    order = np.array(full.order)

    def sums(a, b):
        return loo_sums(_blocks(X[a:b], y[a:b]), tries, card, 3, stats.n_y, stats.n_rows, order, 3)

    whole = sums(0, len(y))
    parts = [sums(a, b) for a, b in _splits(len(y), seed)]
    rng = np.random.default_rng(seed)
    for _ in range(3):
        perm = rng.permutation(len(parts))
        merged = sums(0, 0)
        for i in perm:
            merged.merge(parts[i])
        assert np.array_equal(merged.acc, whole.acc)
    assert np.array_equal(whole.rmse(stats.n_rows), loo_rmse_grid(X, y, stats, tries, order, 3))


def test_leave_one_out_of_many_rows_scores_a_subset_the_same_however_they_come():
    """Of more rows than Smoothing.rows, about that many are scored: the same rows whether the pass sees
    them at once, split or in another order, each taken out of counts of all the rows (the grid is
    that of the subset's rows against the full tries); of fewer rows, every one."""
    from hdp_plugin.structure.loo_kernels import loo_squared_errors_block
    from hdp_plugin.structure.selective import LooSums, _row_hash, loo_sums

    X, y, card = random_data(7, 3000, [3, 4, 3, 2, 5, 4], 3)
    stats = count_statistics(X, y, card, 3)
    full = learn_structure(X, y, card, 3, kind="kdb", k=3)
    tries = build_context_tries(X, y, stats, full.parents)
    order = np.array(full.order)
    sm = Smoothing(1.0, rows=400)

    def sums(Xs, ys, m=sm):
        return loo_sums(_blocks(Xs, ys), tries, card, 3, stats.n_y, stats.n_rows, order, 3, m)

    whole = sums(X, y)
    assert 300 < whole.rows < 500
    perm = np.random.default_rng(1).permutation(len(y))
    merged = sums(X[:0], y[:0])
    for a, b in _splits(len(y), 3):
        merged.merge(sums(X[perm[a:b]], y[perm[a:b]]))
    assert merged.rows == whole.rows and np.array_equal(merged.acc, whole.acc)
    # the scored rows are those whose hash falls below the share, each against the counts of all rows
    salt = _row_hash(order[None, :], np.zeros(1, np.int64), np.uint64(len(order)))[0]
    chosen = _row_hash(X, y, salt) < np.uint64(int(400 / 3000 * 2.0**64))
    own = LooSums(len(order), 3)
    loo_squared_errors_block(X[chosen], y[chosen], card, 3, order, tries.par_ptr, tries.par_idx, tries.root,
                             tries.data, stats.n_y, float(stats.n_rows), 1.0, False, 3, own.acc)
    assert chosen.sum() == whole.rows and np.array_equal(own.acc, whole.acc)
    # another order of the attributes (another member) scores another subset; few rows: every one
    other = loo_sums(_blocks(X, y), tries, card, 3, stats.n_y, stats.n_rows, order[::-1].copy(), 3, sm)
    assert other.rows != whole.rows or not np.array_equal(other.acc, whole.acc)
    assert sums(X, y, Smoothing(1.0, rows=3000)).rows == 3000
    assert np.array_equal(sums(X, y, Smoothing(1.0, rows=3000)).acc, sums(X, y, Smoothing(1.0)).acc)


def test_skdb_of_many_rows_records_the_rows_it_scored(monkeypatch):
    """config.SELECTION_ROWS below the rows: the selection's info says how many it scored, and its RMSE
    grid is over those rows."""
    from hdp_plugin import BayesNetClassifier, Dataset
    from hdp_plugin.data import Attribute

    X, y, card = random_data(3, 4000, [3, 4, 3, 2, 5, 4], 3)
    attrs = [Attribute(f"a{j}", tuple(f"v{v}" for v in range(c))) for j, c in enumerate(card)]
    ds = Dataset(attrs, Attribute("class", ("c0", "c1", "c2")), X, y)
    monkeypatch.setattr(config, "SELECTION_ROWS", 500)
    clf = BayesNetClassifier(structure="skdb", k=2, iterations=20, random_state=0).fit(ds)
    info = clf.members_[0].structure.info
    assert 400 < info["loo_rows"] < 600
    monkeypatch.setattr(config, "SELECTION_ROWS", 1 << 16)
    info = BayesNetClassifier(structure="skdb", k=2, iterations=20, random_state=0).fit(ds).members_[0].structure.info
    assert "loo_rows" not in info


def _exact(acc, u=0, k=0):
    """The fixed-point sum ``acc[:, u, k]`` as a Fraction."""
    from fractions import Fraction

    return sum(Fraction(int(acc[j, u, k]), 2 ** (62 * j)) for j in range(3))


def test_fixed_point_sum_is_exact_where_the_float_sum_depends_on_the_order():
    from fractions import Fraction

    from hdp_plugin.structure.loo_kernels import fixed_add
    from hdp_plugin.structure.selective import LooSums

    # 1 + 2**-53 + 2**-53: a float sum gives 1 in this order and 1 + 2**-52 in the other
    vals = [1.0, 2.0**-53, 2.0**-53]
    assert sum(vals) != sum(reversed(vals))
    for seq in (vals, vals[::-1]):
        s = LooSums(0, 0)
        for v in seq:
            fixed_add(s.acc, 0, 0, 0, v)
        assert _exact(s.acc) == 1 + Fraction(1, 2**52)
        assert s.acc[0, 0, 0] == 1 and s.acc[1, 0, 0] == 2**10 and s.totals()[0, 0] == 1 + 2.0**-52
    # squared errors as the kernel makes them, e = 1 - p, down to the smallest (2**-53)**2, split over
    # accumulators merged in two orders: exactly the rational sum
    rng = np.random.default_rng(0)
    p = np.concatenate([rng.random(3000), 1.0 - rng.integers(1, 50, 500) * 2.0**-53, [0.0, 1.0, 0.5]])
    e2 = (1.0 - p) ** 2
    truth = sum(Fraction(float(v)) for v in e2)
    chunks = np.array_split(rng.permutation(e2), 7)
    partial = []
    for c in chunks:
        s = LooSums(0, 0)
        for v in c:
            fixed_add(s.acc, 0, 0, 0, float(v))
        partial.append(s)
    for perm in (range(7), rng.permutation(7)):
        merged = LooSums(0, 0)
        for i in perm:
            merged.merge(partial[i])
        assert _exact(merged.acc) == truth
        assert all(0 <= merged.acc[j, 0, 0] < 2**62 for j in (1, 2))
    assert merged.totals()[0, 0] == pytest.approx(float(truth), rel=1e-15)
    # a row whose error is not a number makes its cell NaN, as a float sum would
    fixed_add(merged.acc, 0, 0, 0, float("nan"))
    assert merged.acc[3, 0, 0] == 1 and np.isnan(merged.rmse(10)[0, 0])


def test_fixed_point_digits_carry_at_their_limits():
    from fractions import Fraction

    from hdp_plugin.structure.loo_kernels import fixed_add
    from hdp_plugin.structure.selective import LooSums

    v = 1.0 - 2.0**-53  # the first digit below the point as full as a double can make it
    s = LooSums(0, 0)
    for _ in range(1000):
        fixed_add(s.acc, 0, 0, 0, v)
        fixed_add(s.acc, 0, 0, 0, 2.0**-124)
    assert _exact(s.acc) == 1000 * (Fraction(v) + Fraction(1, 2**124))
    t = LooSums(0, 0)
    t.acc[1:3] = 2**62 - 1  # the largest digits there can be, merged: the carries ripple up
    s.merge(t)
    assert _exact(s.acc) == 1000 * (Fraction(v) + Fraction(1, 2**124)) + 1 - Fraction(1, 2**124)


def test_fixed_point_sums_exactly_from_2_to_the_minus_72_and_rounds_below():
    """Errors at and around 2**-72 (the smallest whose bits all fall within the two digits), errors
    spanning both digits whose repeated sums carry from the second into the first and into the units,
    1 itself and 0: exactly their rational sum, in any order; below 2**-72 each error counts to the
    nearest 2**-124, a fraction rounding up to a whole unit of the second digit carrying into the first."""
    from fractions import Fraction

    from hdp_plugin.structure.loo_kernels import fixed_add
    from hdp_plugin.structure.selective import LooSums

    smallest_exact = 2.0**-72
    span = float((2**53 - 1) * Fraction(1, 2**90))  # bits from 2**-38 down to 2**-90
    vals = [smallest_exact, np.nextafter(smallest_exact, 2.0), span, 1.0, 0.0, 1.0 - 2.0**-53] * 300
    truth = sum(Fraction(v) for v in vals)
    rng = np.random.default_rng(3)
    for order in (vals, list(rng.permutation(vals))):
        s = LooSums(0, 0)
        for v in order:
            fixed_add(s.acc, 0, 0, 0, float(v))
        assert _exact(s.acc) == truth
        assert all(0 <= s.acc[j, 0, 0] < 2**62 for j in (1, 2))
        assert s.acc[3, 0, 0] == 0
    below = np.nextafter(smallest_exact, 0.0)  # 2**-72 - 2**-125: its last bit is below the second digit
    for v, counted in ((below, Fraction(1, 2**72)), (2.0**-126, 0), (3 * 2.0**-126, Fraction(1, 2**124))):
        s = LooSums(0, 0)
        fixed_add(s.acc, 0, 0, 0, float(v))
        assert _exact(s.acc) == counted
    s = LooSums(0, 0)
    s.acc[2, 0, 0] = 2**62 - 1
    fixed_add(s.acc, 0, 0, 0, float(below))  # rounds to 2**-72: carries out of the second digit
    assert _exact(s.acc) == Fraction(2**62 - 1, 2**124) + Fraction(1, 2**72)
    assert all(0 <= s.acc[j, 0, 0] < 2**62 for j in (1, 2))


@pytest.mark.parametrize("seed", range(4))
def test_tree_cells_from_the_tries_are_what_the_trees_count(seed):
    """The selection's cell count of every (attribute, k) is the trees' own (build_trees), exactly."""
    from hdp_plugin.hdp.trees import build_trees
    from hdp_plugin.structure.selective import tree_cells

    X, y, card = random_data(seed, 300, [3, 4, 2, 5, 3], 3)
    stats = count_statistics(X, y, card, 3)
    full = learn_structure(X, y, card, 3, kind="kdb", k=3)
    tries = build_context_tries(X, y, stats, full.parents)
    cells = tree_cells(stats, tries, 3)
    for a in range(5):
        for k in range(4):
            parents = [list(p[:k]) for p in full.parents]
            assert cells[a, k] == build_trees(X, y, card, 3, parents, [a]).n_cells, (a, k)


def test_a_cell_limit_takes_the_best_model_that_fits():
    from hdp_plugin.structure.selective import selective_kdb

    X, y, card = random_data(13, 600, [3, 4, 3, 3, 4, 2], 3)
    rng = np.random.default_rng(0)
    X[:, 5] = np.where(rng.random(600) < 0.9, (X[:, 1] + X[:, 2]) % 2, rng.integers(0, 2, 600))
    stats = count_statistics(X, y, card, 3)
    free = selective_kdb(X, y, stats, 3)
    assert selective_kdb(X, y, stats, 3, max_cells=10**9).parents == free.parents  # it fits: the same
    from hdp_plugin.hdp.trees import build_trees

    n_free = build_trees(X, y, card, 3, free.parents, free.kept).n_cells
    small = selective_kdb(X, y, stats, 3, max_cells=n_free - 1)
    assert small.info["cell_limited"] == {"n_star": free.info["n_star"], "k_star": free.info["k_star"],
                                          "cells": n_free, "max_cells": n_free - 1}
    assert build_trees(X, y, card, 3, small.parents, small.kept).n_cells <= n_free - 1
    rmse = np.array(free.info["rmse"])
    assert rmse[small.info["n_star"], small.k] >= rmse[free.info["n_star"], free.k]


def _random_parents(rng, n_attr, max_k):
    """Every attribute's parents: up to ``max_k`` other attributes, in a random branching order."""
    out = []
    for a in range(n_attr):
        others = [b for b in range(n_attr) if b != a]
        k = int(rng.integers(0, min(max_k, len(others)) + 1))
        out.append(tuple(int(v) for v in rng.permutation(others)[:k]))
    return tuple(out)


_BOUNDS_SCRIPT = r"""
import numpy as np
from hdp_plugin.structure import learn_structure
from hdp_plugin.structure.selective import TrieAccumulator

rng = np.random.default_rng(5)
card = np.array([9, 7, 8, 9, 6, 9], np.int64)
C, n = 7, 900
y = rng.integers(0, C, n).astype(np.int32)
X = np.stack([rng.integers(0, c, n) for c in card], axis=1).astype(np.uint8)  # a new context at most rows
models = [learn_structure(X, y, card, C, kind="kdb", k=4).parents, ((), (0,), (0, 1), (0, 1, 2), (3, 2, 1, 0), (4,))]
for e, parents in enumerate(models):
    whole = TrieAccumulator(card, C, parents)
    whole.data = whole.data[: int(whole.sizes[1])]  # no spare room: the first row grows it
    whole.add(X, y)
    want = whole.result(canonical=True)
    merged = TrieAccumulator(card, C, parents)
    merged.data = merged.data[: int(merged.sizes[1])]
    for lo in range(0, n, 150):
        part = TrieAccumulator(card, C, parents)
        part.add(X[lo:lo + 150], y[lo:lo + 150])
        merged.merge(part)
    assert np.array_equal(merged.result(canonical=True).data, want.data)
print("ok", int(want.data.shape[0]))
"""


def test_tries_make_room_before_writing(tmp_path):
    """The tries' kernels make their room outside their inner loops (before each row, a merge):
    compiled with numba's bounds checking (its own cache), tries that grow from no spare room and merges
    into them write nothing out of bounds and give the same arrays."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    env = dict(os.environ, NUMBA_BOUNDSCHECK="1", NUMBA_CACHE_DIR=str(tmp_path / "cache"),
               PYTHONPATH=str(root) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    done = subprocess.run([sys.executable, "-c", _BOUNDS_SCRIPT], capture_output=True, text=True, env=env,
                          timeout=600, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.startswith("ok ")
