"""NB, TAN and kDB: planted networks are recovered; ties and orders are deterministic."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from hdp_plugin.errors import DataError, ParameterError
from hdp_plugin.structure import (
    Structure,
    conditional_mutual_information,
    count_statistics,
    learn_structure,
    mutual_information,
)
from hdp_plugin.structure.learners import maximum_spanning_tree


def sample_planted(parents, n_rows, seed, *, C=3, m=3, follow=0.4):
    """Sample from a known network over attributes X_a = (S_a, Z_a), coded S_a * m + Z_a.

    S_a is a noisy copy of the class (kept with probability 0.9, 0.75, ... down the attribute
    index), so MI(X_a; Y) decreases with a by construction. Z_a is independent of the class and
    carries every attribute-attribute dependency: with probability ``follow`` it copies its
    i-th planted parent's Z, else it is uniform. So CMI(X_a; X_b | Y) = I(Z_a; Z_b), largest for
    planted edges, and the planted parents (all of lower index) are the kDB candidates.
    """
    rng = np.random.default_rng(seed)
    n = len(parents)
    signal = np.linspace(0.9, 0.15, n)
    y = rng.integers(0, C, n_rows)
    Z = np.zeros((n_rows, n), np.int64)
    X = np.zeros((n_rows, n), np.uint8)
    for a in range(n):
        s = np.where(rng.random(n_rows) < signal[a], y, rng.integers(0, C, n_rows))
        z = rng.integers(0, m, n_rows)
        u = rng.random(n_rows)
        for i, p in enumerate(parents[a]):
            z = np.where((u >= i * follow) & (u < (i + 1) * follow), Z[:, p], z)
        Z[:, a] = z
        X[:, a] = s * m + z
    card = np.full(n, C * m + 1, dtype=np.int64)  # + the (unused) missing slot
    return X, y.astype(np.int32), card, C


def undirected(parents):
    return {frozenset((a, p)) for a, ps in enumerate(parents) for p in ps}


def check_branching_order(s: Structure, X, y, card, C):
    cmi = conditional_mutual_information(count_statistics(X, y, card, C))
    for child, ps in enumerate(s.parents):
        keys = [(-cmi[child, p], p) for p in ps]
        assert keys == sorted(keys), (child, ps)


# -- planted networks ---------------------------------------------------------------------------
KDB2 = [(), (0,), (0, 1), (1, 2), (2, 3), (3, 4), (3, 5)]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_kdb2_recovers_planted_network(seed):
    X, y, card, C = sample_planted(KDB2, 5000, seed)
    s = learn_structure(X, y, card, C, kind="kdb", k=2)
    assert s.order == tuple(range(len(KDB2)))
    assert [set(p) for p in s.parents] == [set(p) for p in KDB2]
    assert s.kind == "kdb" and s.k == 2 and s.kept == tuple(range(len(KDB2)))
    check_branching_order(s, X, y, card, C)


# a tree that is not a chain: 0 - 1, 0 - 2, 1 - 3, 1 - 4, 2 - 5, 4 - 6, 2 - 7
TREE = [(), (0,), (0,), (1,), (1,), (2,), (4,), (2,)]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_tan_recovers_planted_tree(seed):
    X, y, card, C = sample_planted(TREE, 5000, seed, follow=0.6)
    s = learn_structure(X, y, card, C, kind="tan")
    assert undirected(s.parents) == undirected(TREE)
    # rooted at the highest-MI attribute, edges directed away from it
    root = s.order[0]
    assert s.parents[root] == () and s.info["root"] == root
    assert sum(len(p) == 0 for p in s.parents) == 1
    depth = {root: 0}
    pending = [a for a in range(len(TREE)) if a != root]
    while pending:  # every attribute reaches the root by following parents
        a = pending.pop(0)
        (p,) = s.parents[a]
        if p in depth:
            depth[a] = depth[p] + 1
        else:
            pending.append(a)
    assert s.kind == "tan" and s.k == 1


def test_tan_on_the_kdb_sample_is_a_spanning_tree():
    X, y, card, C = sample_planted(KDB2, 3000, 4)
    s = learn_structure(X, y, card, C, kind="tan")
    assert len(undirected(s.parents)) == len(KDB2) - 1
    assert all(len(p) <= 1 for p in s.parents)


def test_naive_bayes():
    X, y, card, C = sample_planted(KDB2, 500, 5)
    s = learn_structure(X, y, card, C, kind="nb")
    assert s.parents == ((),) * len(KDB2) and s.k == 0 and s.kept == tuple(range(len(KDB2)))
    np.testing.assert_allclose(s.mi, mutual_information(count_statistics(X, y, card, C)))


# -- kDB details ----------------------------------------------------------------------------
def test_kdb_parents_are_earlier_and_at_most_k():
    rng = np.random.default_rng(9)
    X = rng.integers(0, 3, (400, 7)).astype(np.uint8)
    y = ((X[:, 0] + X[:, 3]) % 2).astype(np.int32)
    card = np.full(7, 3)
    for k in range(0, 8):
        s = learn_structure(X, y, card, 2, kind="kdb", k=k)
        for u, a in enumerate(s.order):
            assert len(s.parents[a]) == min(u, k)
            assert set(s.parents[a]) <= set(s.order[:u])
        check_branching_order(s, X, y, card, 2)
    assert learn_structure(X, y, card, 2, kind="kdb", k=0).parents == ((),) * 7


def test_kdb_small_k_is_a_prefix_of_large_k():
    X, y, card, C = sample_planted(KDB2, 800, 6)
    big = learn_structure(X, y, card, C, kind="kdb", k=5)
    for k in range(5):
        small = learn_structure(X, y, card, C, kind="kdb", k=k)
        assert small.parents == tuple(p[:k] for p in big.parents)


def test_ties_are_broken_by_attribute_index():
    # four identical copies of one attribute and two of another: every MI and CMI ties
    rng = np.random.default_rng(3)
    a = rng.integers(0, 3, 300)
    b = rng.integers(0, 2, 300)
    y = ((a + rng.integers(0, 2, 300)) % 3).astype(np.int32)
    X = np.stack([b, a, a, b, a, a], axis=1).astype(np.uint8)
    card = np.array([2, 3, 3, 2, 3, 3])
    s = learn_structure(X, y, card, 3, kind="kdb", k=2)
    assert s.order[:4] == (1, 2, 4, 5)  # equal MI: index order
    assert s.parents[2] == (1,) and s.parents[4] == (1, 2) and s.parents[5] == (1, 2)
    t = learn_structure(X, y, card, 3, kind="tan")
    assert t.info["root"] == 1
    assert t.parents[2] == (1,) and t.parents[4] == (1,) and t.parents[5] == (1,)
    # structures depend only on the counts: permuting rows changes nothing
    perm = rng.permutation(300)
    for kind in ("tan", "kdb", "skdb"):
        assert learn_structure(X, y, card, 3, kind=kind, k=2) == learn_structure(
            np.ascontiguousarray(X[perm]), y[perm], card, 3, kind=kind, k=2
        )


def test_single_attribute_and_one_class():
    X = np.array([[0], [1], [1]], np.uint8)
    for kind in ("nb", "tan", "kdb", "skdb"):
        s = learn_structure(X, np.zeros(3, np.int32), [2], 1, kind=kind)
        assert s.parents == ((),) and s.order == (0,)
    s = learn_structure(np.zeros((3, 0), np.uint8), np.zeros(3, np.int32), [], 2, kind="tan")
    assert s.parents == () and s.kept == ()


# -- the spanning tree -------------------------------------------------------------------------
def brute_force_max_tree_weight(w):
    n = len(w)
    edges = list(itertools.combinations(range(n), 2))
    best = -np.inf
    for tree in itertools.combinations(edges, n - 1):
        parent = list(range(n))

        def find(v):
            while parent[v] != v:
                v = parent[v]
            return v

        ok = True
        for i, j in tree:
            ri, rj = find(i), find(j)
            if ri == rj:
                ok = False
                break
            parent[ri] = rj
        if ok:
            best = max(best, sum(w[i, j] for i, j in tree))
    return best


@pytest.mark.parametrize("seed", range(6))
def test_prim_finds_a_maximum_spanning_tree(seed):
    rng = np.random.default_rng(seed)
    n = 6
    w = rng.integers(0, 4, (n, n)).astype(float)  # small integers: many exact ties
    w = np.triu(w, 1) + np.triu(w, 1).T
    root = int(rng.integers(n))
    parent = maximum_spanning_tree(w, root)
    assert parent[root] == -1 and np.sum(parent < 0) == 1
    assert sum(w[v, parent[v]] for v in range(n) if v != root) == brute_force_max_tree_weight(w)
    np.testing.assert_array_equal(parent, maximum_spanning_tree(w.copy(), root))


def test_prim_ties_go_to_lower_index():
    w = np.ones((4, 4))
    assert maximum_spanning_tree(w, 2).tolist() == [2, 0, -1, 0]


# -- validation ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"kind": "bn"}, r"kind must be one of nb, tan, kdb, skdb, got 'bn'"),
        ({"k": -1}, r"k must be >= 0, got -1"),
        ({"k": 1.5}, r"k must be an integer >= 0, got 1.5"),
        ({"k": True}, r"k must be an integer >= 0, got True"),
    ],
)
def test_bad_parameters(kwargs, match):
    X = np.zeros((2, 2), np.uint8)
    with pytest.raises(ParameterError, match=match):
        learn_structure(X, np.zeros(2, np.int32), [1, 1], 1, **kwargs)


def test_no_rows():
    with pytest.raises(DataError, match="0 rows"):
        learn_structure(np.zeros((0, 2), np.uint8), np.zeros(0, np.int32), [1, 1], 1)


def test_kdb_parents_kernel_is_the_stable_sort_by_decreasing_cmi():
    """kdb's parents come from one kernel call (kdb_parents); for every position they are what
    branching_order (a stable sort of the index-sorted candidates by decreasing CMI) cut to k gives, ties
    (many equal CMIs) included."""
    from hdp_plugin.structure.count_kernels import kdb_parents

    def branching_order(child, candidates, cmi):  # the definition: index-sorted, stable by decreasing CMI
        cand = np.sort(np.asarray(candidates, dtype=np.int64))
        return tuple(cand[np.argsort(-cmi[child, cand], kind="stable")].tolist()) if cand.size else ()

    rng = np.random.default_rng(0)
    for case in range(400):
        n, k = int(rng.integers(1, 25)), int(rng.integers(1, 7))
        cmi = rng.choice([0.0, 0.1, 0.2, 0.5], size=(n, n)) if case % 2 else rng.random((n, n))
        order = rng.permutation(n)[: int(rng.integers(1, n + 1))].astype(np.int64)
        got = kdb_parents(order, cmi, k)
        assert (got[0] == -1).all()
        for u in range(1, order.size):
            row = got[u]
            assert tuple(int(p) for p in row[row >= 0]) == branching_order(int(order[u]), order[:u], cmi)[:k], (case, u)
