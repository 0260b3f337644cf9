"""The kernels that lay out context trees against their slow twins in NumPy."""

from __future__ import annotations

import numpy as np
import pytest

from hdp_plugin.hdp.tree_kernels import block_leaf_cells, tree_levels, tree_nodes
from hdp_plugin.hdp.trees import build_trees, count_leaf_cells


def slow_leaf_cells(X, y, c, parents, cards):
    key = y.astype(np.int64)
    for p in parents:
        key = key * np.int64(cards[p]) + X[:, p]
    key = key * np.int64(cards[c]) + X[:, c]
    u, n = np.unique(key, return_counts=True)
    return u, n.astype(np.int64)


def slow_nodes(keys, counts, card_c, radix):
    """The NumPy layout: levels by np.unique, parents by np.searchsorted."""
    k = len(radix) - 1
    levels = [None] * (k + 2)
    levels[-1], leaf_idx = np.unique(keys // card_c, return_inverse=True)
    for d in range(k, -1, -1):
        levels[d] = np.unique(levels[d + 1] // radix[d]) if d > 0 else np.zeros(1, np.int64)
    level_start = np.concatenate(([0], np.cumsum([lv.size for lv in levels])))
    n_nodes = int(level_start[-1])
    par = np.full(n_nodes, -1, np.int64)
    br = np.full(n_nodes, -1, np.int64)
    dep = np.zeros(n_nodes, np.int64)
    for d in range(1, k + 2):
        lv = levels[d]
        pk = lv // radix[d - 1] if d > 1 else np.zeros(lv.size, np.int64)
        sl = slice(level_start[d], level_start[d + 1])
        par[sl] = np.searchsorted(levels[d - 1], pk) + level_start[d - 1]
        br[sl] = lv % radix[d - 1]
        dep[sl] = d
    cells = np.zeros(n_nodes * card_c, np.int64)
    cells[(level_start[k + 1] + leaf_idx) * card_c + keys % card_c] = counts
    return par, dep, br, cells


def _random(seed, n_rows, n_attr, n_classes):
    rng = np.random.default_rng(seed)
    cards = rng.integers(1, 6, n_attr).astype(np.int64)
    X = np.stack([rng.integers(0, c, n_rows) for c in cards], axis=1).astype(np.uint8) if n_rows else \
        np.zeros((0, n_attr), np.uint8)
    y = rng.integers(0, n_classes, n_rows).astype(np.int32)
    return rng, X, y, cards


@pytest.mark.parametrize("seed", range(12))
def test_leaf_cells_levels_and_nodes_equal_numpy(seed):
    n_rows = [0, 1, 7, 300][seed % 4]
    rng, X, y, cards = _random(seed, n_rows, 6, int(rng_classes := 1 + seed % 4))
    for c in range(6):
        others = [a for a in range(6) if a != c]
        parents = np.asarray(rng.permutation(others)[: seed % 5], np.int64)
        keys, counts = block_leaf_cells(X, y, c, parents, cards, int(cards[c]))
        want_keys, want_counts = slow_leaf_cells(X, y, c, parents, cards)
        np.testing.assert_array_equal(keys, want_keys)
        np.testing.assert_array_equal(counts, want_counts)
        radix = np.asarray([rng_classes] + [int(cards[p]) for p in parents], np.int64)
        got = tree_nodes(*tree_levels(keys, int(cards[c]), radix), keys, counts, int(cards[c]), radix)
        for g, w in zip(got, slow_nodes(keys, counts, int(cards[c]), radix)):
            np.testing.assert_array_equal(g, w)


def test_blocks_merge_to_the_whole():
    rng, X, y, cards = _random(5, 1000, 5, 3)
    trees = [(c, [a for a in range(5) if a != c][:2]) for c in range(5)]
    whole = count_leaf_cells(X, y, trees, cards, 3)
    blocks = count_leaf_cells(X, y, trees, cards, 3, block=97)
    threaded = count_leaf_cells(X, y, trees, cards, 3, block=97, n_jobs=3)  # 11 blocks in 3 parts on threads
    for (k1, n1), (k2, n2), (k3, n3), (c, ps) in zip(whole, blocks, threaded, trees):
        np.testing.assert_array_equal(k1, k2)
        np.testing.assert_array_equal(n1, n2)
        np.testing.assert_array_equal(k1, k3)
        np.testing.assert_array_equal(n1, n3)
        wk, wn = slow_leaf_cells(X, y, c, ps, cards)
        np.testing.assert_array_equal(k1, wk)
        np.testing.assert_array_equal(n1, wn)


def test_build_trees_counts_every_row_once_at_the_leaves():
    rng, X, y, cards = _random(9, 500, 4, 2)
    parents = [[1, 2], [2], [], [0, 1, 2]]
    trees = build_trees(X, y, cards, 2, parents, [0, 1, 2, 3])
    raw = trees.raw_counts()
    for t in range(trees.n_trees):
        root = trees.tree_node_start[t]
        lo = trees.node_cell_start[root]
        assert raw[lo:lo + trees.tree_card[t]].sum() == 500


def _some_trees():
    from hdp_plugin.hdp.trees import concatenate_trees

    parts = []
    for seed in range(3):
        rng, X, y, cards = _random(seed, 400, 5, 3)
        parents = [[int(p) for p in rng.permutation([a for a in range(5) if a != c])[: seed + 1]] for c in range(5)]
        parts.append(build_trees(X, y, cards, 3, parents, [0, 2, 3, 4]))
    return concatenate_trees(parts)[0]


def test_raw_counts_equal_the_level_by_level_sums():
    trees = _some_trees()
    want = trees.leaf_counts.copy()
    for t in range(trees.n_trees):
        card = int(trees.tree_card[t])
        lo, hi = int(trees.tree_node_start[t]), int(trees.tree_node_start[t + 1])
        for depth in range(int(trees.node_depth[lo:hi].max()), 0, -1):
            nodes = lo + np.nonzero(trees.node_depth[lo:hi] == depth)[0]
            src = trees.node_cell_start[nodes][:, None] + np.arange(card)
            dst = trees.node_cell_start[trees.node_parent[nodes]][:, None] + np.arange(card)
            np.add.at(want, dst.ravel(), want[src.ravel()])
    np.testing.assert_array_equal(trees.raw_counts(), want)


@pytest.mark.parametrize("tying", ["none", "same-parent", "level", "single"])
def test_tying_groups_equal_np_unique_per_tree(tying):
    from hdp_plugin.hdp.sampler import tying_groups

    trees = _some_trees()
    ng, fixed, starts, g = np.empty(trees.n_nodes, np.int64), [], [0], 0
    for tr in range(trees.n_trees):
        lo, hi = int(trees.tree_node_start[tr]), int(trees.tree_node_start[tr + 1])
        ng[lo] = g
        fixed.append(True)
        g += 1
        rest = slice(lo + 1, hi)
        key = {"none": np.arange(hi - lo - 1), "same-parent": trees.node_parent[rest], "level": trees.node_depth[rest],
               "single": np.zeros(hi - lo - 1, np.int64)}[tying]
        u, inv = np.unique(key, return_inverse=True)
        ng[rest] = g + inv
        fixed.extend([False] * u.size)
        g += u.size
        starts.append(g)
    got = tying_groups(trees, tying)
    for a, b in zip(got, (ng, np.asarray(fixed), np.asarray(starts))):
        np.testing.assert_array_equal(a, b)


def test_child_tables_equal_the_level_by_level_layout():
    trees = _some_trees()
    starts, tables, child_off = [], [], 0
    for t in range(trees.n_trees):
        lo, hi = int(trees.tree_node_start[t]), int(trees.tree_node_start[t + 1])
        bv = trees.branch_vars[trees.tree_var_start[t]:trees.tree_var_start[t + 1]]
        radix = [trees.n_classes] + [int(trees.cardinalities[v]) for v in bv[1:]]
        depth, parent, branch = trees.node_depth[lo:hi], trees.node_parent[lo:hi] - lo, trees.node_branch[lo:hi]
        cstart = np.full(hi - lo, -1, np.int64)
        level = np.searchsorted(depth, np.arange(len(bv) + 2))
        for d in range(1, len(bv) + 1):
            plo, phi = int(level[d - 1]), int(level[d])
            kids = np.arange(int(level[d]), int(level[d + 1]))
            tab = np.full((phi - plo) * radix[d - 1], -1, np.int64)
            tab[(parent[kids] - plo) * radix[d - 1] + branch[kids]] = kids + lo
            cstart[plo:phi] = child_off + np.arange(phi - plo) * radix[d - 1]
            child_off += tab.size
            tables.append(tab)
        starts.append(cstart)
    np.testing.assert_array_equal(trees.child_start, np.concatenate(starts))
    np.testing.assert_array_equal(trees.child_table, np.concatenate(tables))


def test_a_shared_context_is_refused():
    from hdp_plugin.hdp.trees import ContextTrees, TreeNodes

    nodes = TreeNodes(0, 2, [-1], np.array([-1, 0, 0]), np.array([0, 1, 1]), np.array([-1, 1, 1]), np.zeros(6, np.int64))
    with pytest.raises(ValueError, match="share a context"):
        ContextTrees.from_nodes([nodes], 2, np.array([2]))


@pytest.mark.parametrize("n,top", [(0, 5), (1, 5), (9, 3), (16, 100), (17, 1), (300, 255), (300, 256), (5000, 2**62)])
def test_radix_sort_equals_numpy(n, top):
    from hdp_plugin.runtime.radix import sort_nonnegative

    rng = np.random.default_rng(n + top % 97)
    keys = rng.integers(0, top + 1, n + 3).astype(np.int64)
    want = keys.copy()
    want[:n] = np.sort(want[:n])
    sort_nonnegative(keys, n)
    np.testing.assert_array_equal(keys, want)  # only the first n sorted, the rest untouched


def test_compiled_and_numpy_layouts_are_the_same_arrays():
    from dataclasses import fields

    from hdp_plugin.hdp.trees import ContextTrees
    from reference import relaid_trees

    trees = _some_trees()
    again = relaid_trees(trees, np.arange(trees.n_trees))  # the NumPy layout (what a model file's reader uses)
    for f in fields(ContextTrees):
        a, b = getattr(trees, f.name), getattr(again, f.name)
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b), err_msg=f.name)
    np.testing.assert_array_equal(trees.raw_counts(), trees.raw_counts(compiled=True))


@pytest.mark.parametrize("seed", range(16))
def test_one_call_layout_equals_the_tree_by_tree_layout(seed):
    """build_trees lays every tree out in one kernel call (lay_out_trees); the same arrays, dtypes included,
    as ContextTrees.from_nodes in NumPy tree by tree (a model file's reader), for rows in one block or many,
    no rows, no kept attribute, and cells counted elsewhere (leaf_cells)."""
    from dataclasses import fields

    from hdp_plugin.hdp.trees import ContextTrees
    from reference import relaid_trees

    n_rows = [0, 1, 5, 40, 300, 1000][seed % 6]
    rng, X, y, cards = _random(seed, n_rows, 5, 1 + seed % 3)
    parents = [tuple(int(p) for p in rng.permutation([b for b in range(5) if b != a])[: rng.integers(0, 4)])
               for a in range(5)]
    kept = [] if seed == 7 else sorted(int(a) for a in rng.choice(5, int(rng.integers(1, 6)), replace=False))
    block = [64, 1 << 16][seed % 2]
    trees = build_trees(X, y, cards, 1 + seed % 3, parents, kept, block=block)
    cells = count_leaf_cells(X, y, [(c, list(parents[c])) for c in kept], cards, 1 + seed % 3)
    counted = build_trees(None, None, cards, 1 + seed % 3, parents, kept, leaf_cells=cells)
    again = relaid_trees(trees, np.arange(trees.n_trees)) if kept else \
        ContextTrees.from_nodes([], 1 + seed % 3, cards)
    for f in fields(ContextTrees):
        for other in (again, counted):
            a, b = np.asarray(getattr(trees, f.name)), np.asarray(getattr(other, f.name))
            assert a.dtype == b.dtype, f.name
            np.testing.assert_array_equal(a, b, err_msg=f.name)
    assert trees.leaf_counts.sum() == n_rows * len(kept)
