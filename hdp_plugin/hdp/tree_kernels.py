"""numba kernels that lay out context trees from data (:func:`hdp_plugin.hdp.trees.build_trees`).

A tree's leaf cells are keyed by the mixed-radix number ``(((y * r1 + x_p1) * r2 + x_p2) ...) * r_c
+ x_c`` of the class, the parents in branching order and the attribute (the drivers check that every
key fits in 64 bits). From the sorted distinct keys and their counts, the tree's levels follow by
integer division: the leaf contexts are the distinct ``key // r_c``, and level ``d`` (the class at
depth 1, the root at depth 0) the distinct values of level ``d + 1`` divided by the radix of its last
branching variable. Sorted keys give sorted quotients, so every level is a run-length pass, and a
node's parent is the run it falls in.

These kernels compute exactly what :func:`numpy.unique` and :func:`numpy.searchsorted` compute in the
slow twins of the tests, without a Python step per tree level and with the GIL released, so the
members of an ensemble lay out their trees on threads. :func:`block_leaf_cells_all` and
:func:`lay_out_trees` do it for every tree of a model in one call (no Python step per tree either).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..runtime.radix import sort_nonnegative
from ..runtime.jit import NJIT_OPTIONS


@njit(**NJIT_OPTIONS)
def block_leaf_cells(X, y, c, parents, cards, card_c):
    """The sorted distinct leaf keys of one tree over a block of rows, and their counts.

    Parameters
    ----------
    X : ndarray (n_rows, n_attributes) of unsigned integer codes
        The block's rows (codes checked: each below its attribute's cardinality).
    y : ndarray (n_rows,) of integer class codes
        The block's classes.
    c : int
        The tree's attribute.
    parents : ndarray (k,) int64
        Its parents in branching order.
    cards : ndarray (n_attributes,) int64
        The attributes' cardinalities (the radices of the parents).
    card_c : int
        The attribute's cardinality (the last radix).

    Returns
    -------
    (keys, counts) : ndarray int64 each
        ``numpy.unique(keys of the rows, return_counts=True)``.
    """
    n = X.shape[0]
    keys = np.empty(n, dtype=np.int64)
    for r in range(n):
        key = np.int64(y[r])
        for j in range(parents.shape[0]):
            p = parents[j]
            key = key * cards[p] + np.int64(X[r, p])
        keys[r] = key * card_c + np.int64(X[r, c])
    sort_nonnegative(keys, n)  # keys are >= 0: codes and class below their cardinalities
    n_distinct = 0
    for r in range(n):
        if r == 0 or keys[r] != keys[r - 1]:
            n_distinct += 1
    out_keys = np.empty(n_distinct, dtype=np.int64)
    counts = np.zeros(n_distinct, dtype=np.int64)
    u = -1
    for r in range(n):
        if r == 0 or keys[r] != keys[r - 1]:
            u += 1
            out_keys[u] = keys[r]
        counts[u] += 1
    return out_keys, counts


@njit(**NJIT_OPTIONS)
def tree_levels(keys, card_c, radix):
    """Every level's sorted distinct context keys of one tree, from its sorted distinct leaf keys.

    Parameters
    ----------
    keys : ndarray (n_keys,) int64
        The tree's distinct leaf-cell keys, ascending (:func:`block_leaf_cells`, merged).
    card_c : int
        The tree's attribute's cardinality.
    radix : ndarray (k + 1,) int64
        The branching variables' radices: the number of classes, then the parents' cardinalities.

    Returns
    -------
    (level_keys, level_start, leaf_index) : ndarray int64 each
        Level ``d`` (0 the root, ``k + 1`` the leaves) is ``level_keys[level_start[d]:level_start[d + 1]]``,
        ascending (the root's key is 0); ``leaf_index[i]`` is the leaf context of ``keys[i]`` (its position
        among the leaves).
    """
    depth = radix.shape[0]  # the leaves' depth: the class and k parents
    n = keys.shape[0]
    leaf_index = np.empty(n, dtype=np.int64)
    # buf[d - 1, :size[d]]: level d, ascending; the leaves first: distinct keys // card_c
    buf = np.empty((depth, max(n, 1)), dtype=np.int64)
    size = np.zeros(depth + 1, dtype=np.int64)
    m = 0
    for i in range(n):
        q = keys[i] // card_c
        if m == 0 or q != buf[depth - 1, m - 1]:
            buf[depth - 1, m] = q
            m += 1
        leaf_index[i] = m - 1
    size[depth] = m
    for d in range(depth - 1, 0, -1):  # level d from level d + 1, dropping the last variable's radix
        m = 0
        for i in range(size[d + 1]):
            q = buf[d, i] // radix[d]
            if m == 0 or q != buf[d - 1, m - 1]:
                buf[d - 1, m] = q
                m += 1
        size[d] = m
    total = 1
    for d in range(1, depth + 1):
        total += size[d]
    level_keys = np.empty(total, dtype=np.int64)
    level_start = np.empty(depth + 2, dtype=np.int64)
    level_keys[0] = 0
    level_start[0] = 0
    level_start[1] = 1
    pos = 1
    for d in range(1, depth + 1):
        for i in range(size[d]):
            level_keys[pos + i] = buf[d - 1, i]
        pos += size[d]
        level_start[d + 1] = pos
    return level_keys, level_start, leaf_index


@njit(**NJIT_OPTIONS)
def tree_nodes(level_keys, level_start, leaf_index, keys, counts, card_c, radix):
    """One tree's nodes in depth order (their parent, depth and branch value) and cells.

    Parameters
    ----------
    level_keys, level_start, leaf_index : ndarray int64
        The tree's levels (:func:`tree_levels`).
    keys, counts : ndarray (n_keys,) int64
        The distinct leaf-cell keys, ascending, and their data counts.
    card_c : int
        The tree's attribute's cardinality (cells per node).
    radix : ndarray (k + 1,) int64
        As in :func:`tree_levels`.

    Returns
    -------
    (parent, depth, branch, cells) : ndarray int64 each
        Per node: its parent's index in the tree (-1 at the root), depth, and the value of the
        variable branched on to reach it (-1 at the root); ``cells`` (n_nodes * card_c) holds the
        leaf cells' data counts, 0 elsewhere.
    """
    n_nodes = level_keys.shape[0]
    depth = radix.shape[0]
    parent = np.full(n_nodes, -1, dtype=np.int64)
    branch = np.full(n_nodes, -1, dtype=np.int64)
    dep = np.zeros(n_nodes, dtype=np.int64)
    for d in range(1, depth + 1):
        plo, lo, hi = level_start[d - 1], level_start[d], level_start[d + 1]
        r = radix[d - 1]
        j = plo  # the parents' level is ascending and holds every quotient: a running pointer finds each
        for i in range(lo, hi):
            pk = level_keys[i] // r if d > 1 else 0
            while level_keys[j] != pk:
                j += 1
            parent[i] = j
            branch[i] = level_keys[i] % r
            dep[i] = d
    cells = np.zeros(n_nodes * card_c, dtype=np.int64)
    leaf0 = level_start[depth]
    for i in range(keys.shape[0]):
        cells[(leaf0 + leaf_index[i]) * card_c + keys[i] % card_c] = counts[i]
    return parent, dep, branch, cells


@njit(**NJIT_OPTIONS)
def add_children_counts(n, node_parent, node_tree, tree_card, node_cell_start):
    """Every internal cell's count as the sum of its children's, in place, the deepest nodes first.

    Parameters
    ----------
    n : ndarray (n_cells,) int64
        The cells' counts: the leaves' data counts on entry (0 elsewhere); internal cells added to.
    node_parent : ndarray (n_nodes,) int64
        Every node's parent (-1 at a root); a node comes after its parent (trees are laid out in depth
        order), so a reverse sweep adds a node's cells once they are complete.
    node_tree : ndarray (n_nodes,) int64
        Every node's tree.
    tree_card : ndarray (n_trees,) int64
        Cells per node of every tree.
    node_cell_start : ndarray (n_nodes + 1,) int64
        Where every node's cells start.
    """
    for j in range(node_parent.shape[0] - 1, -1, -1):
        p = node_parent[j]
        if p < 0:
            continue
        card = tree_card[node_tree[j]]
        src = node_cell_start[j]
        dst = node_cell_start[p]
        for v in range(card):
            n[dst + v] += n[src + v]


@njit(**NJIT_OPTIONS)
def tree_child_table(parent, depth, branch, radix, node_off, child_off):
    """One tree's child table: every node above the leaves gets one slot per value of the variable it
    branches on, holding the child's global node index (-1: no such child).

    Parameters
    ----------
    parent, depth, branch : ndarray (n_nodes,) int64
        The tree's nodes in depth order (:class:`~hdp_plugin.hdp.trees.TreeNodes`): the parent's index
        in the tree (-1 at the root), the depth, the branch value.
    radix : ndarray (n_levels,) int64
        The branching variables' radices, level by level (the number of classes first).
    node_off : int
        The tree's first global node index.
    child_off : int
        Where the tree's slots start in the model's child table.

    Returns
    -------
    (child_start, table, ok) : ndarray int64, ndarray int64, bool
        ``child_start`` per node (its first slot, global; -1 at the leaves), the tree's slots, and
        False if two nodes share a context (a parent and branch value), or a node's parent, depth or
        branch value is out of place.
    """
    n = parent.shape[0]
    n_levels = radix.shape[0]
    child_start = np.full(n, -1, dtype=np.int64)
    size = 0
    for j in range(n):  # every node above the leaves (depth < n_levels) gets its parent level's slots
        if depth[j] < n_levels:
            size += radix[depth[j]]
    table = np.full(size, -1, dtype=np.int64)
    # level d's first node (depth ascending): a node's slots are its rank in its level times the radix
    level_lo = np.zeros(n_levels + 2, dtype=np.int64)
    for j in range(n):
        d = depth[j]
        if d < 0 or d > n_levels or (j > 0 and d < depth[j - 1]):
            return child_start, table, False
    for d in range(n_levels + 2):
        lo = 0
        while lo < n and depth[lo] < d:
            lo += 1
        level_lo[d] = lo
    slot_base = np.zeros(n_levels + 1, dtype=np.int64)  # where level d's slots start in table
    acc = 0
    for d in range(n_levels):
        slot_base[d] = acc
        acc += (level_lo[d + 1] - level_lo[d]) * radix[d]
    for j in range(n):
        d = depth[j]
        if d < n_levels:
            child_start[j] = child_off + slot_base[d] + (j - level_lo[d]) * radix[d]
        if d == 0:
            continue
        p = parent[j]
        if p < level_lo[d - 1] or p >= level_lo[d] or branch[j] < 0 or branch[j] >= radix[d - 1]:
            return child_start, table, False
        slot = slot_base[d - 1] + (p - level_lo[d - 1]) * radix[d - 1] + branch[j]
        if table[slot] != -1:
            return child_start, table, False
        table[slot] = j + node_off
    return child_start, table, True


@njit(**NJIT_OPTIONS)
def block_leaf_cells_all(X, y, attrs, parents, parent_start, cards):
    """:func:`block_leaf_cells` of every tree of a model over one block of rows, in one call.

    Parameters
    ----------
    X : ndarray (n_rows, n_attributes) of unsigned integer codes
        The block's rows, as in :func:`block_leaf_cells`.
    y : ndarray (n_rows,) of integer class codes
        The block's classes.
    attrs : ndarray (n_trees,) int64
        Every tree's attribute.
    parents : ndarray int64
        Every tree's parents in branching order, one tree after the other.
    parent_start : ndarray (n_trees + 1,) int64
        Tree ``t``'s parents are ``parents[parent_start[t]:parent_start[t + 1]]``.
    cards : ndarray (n_attributes,) int64
        The attributes' cardinalities.

    Returns
    -------
    (keys, counts, key_start) : ndarray int64 each
        Tree ``t``'s sorted distinct keys and their counts are ``keys[key_start[t]:key_start[t + 1]]``
        and the same slice of ``counts``.
    """
    n_trees = attrs.shape[0]
    parts_k = []
    parts_n = []
    key_start = np.zeros(n_trees + 1, dtype=np.int64)
    for t in range(n_trees):
        c = attrs[t]
        k, n = block_leaf_cells(X, y, c, parents[parent_start[t]:parent_start[t + 1]], cards, cards[c])
        parts_k.append(k)
        parts_n.append(n)
        key_start[t + 1] = key_start[t] + k.shape[0]
    keys = np.empty(key_start[n_trees], dtype=np.int64)
    counts = np.empty(key_start[n_trees], dtype=np.int64)
    for t in range(n_trees):
        keys[key_start[t]:key_start[t + 1]] = parts_k[t]
        counts[key_start[t]:key_start[t + 1]] = parts_n[t]
    return keys, counts, key_start


@njit(**NJIT_OPTIONS)
def lay_out_trees(keys, counts, key_start, card_c, radix, radix_start, max_cells):
    """Every tree of a model laid out in the flat arrays of :class:`~hdp_plugin.hdp.trees.ContextTrees`,
    in one call: per tree :func:`tree_levels`, :func:`tree_nodes` and :func:`tree_child_table`, the
    results placed one tree after the other (what ``ContextTrees.from_nodes`` does tree by tree).

    Parameters
    ----------
    keys, counts, key_start : ndarray int64
        Every tree's sorted distinct leaf keys and their counts (:func:`block_leaf_cells_all`).
    card_c : ndarray (n_trees,) int64
        Every tree's attribute's cardinality.
    radix, radix_start : ndarray int64
        Tree ``t``'s radices (the number of classes, then its parents' cardinalities) are
        ``radix[radix_start[t]:radix_start[t + 1]]``.
    max_cells : int
        The most cells the trees may have: checked once the levels are known, before any layout.

    Returns
    -------
    (total, node_start, parent, depth, branch, child_start, child_table, leaf_counts)
        ``total`` the trees' cells; when it is above ``max_cells`` nothing is laid out (empty arrays).
        Otherwise ``node_start`` (n_trees + 1,) and, per node, its global parent (-1 at a root), depth,
        branch value and first child slot (-1 at a leaf); the child table (global node indices, -1: no
        such child) and every cell's data count (0 at internal nodes). ``child_start`` is -2 at a node
        when a tree's child table is inconsistent (which the caller reports).
    """
    n_trees = card_c.shape[0]
    lv_keys = []
    lv_start = []
    lv_leaf = []
    node_start = np.zeros(n_trees + 1, dtype=np.int64)
    total = 0
    for t in range(n_trees):
        r = radix[radix_start[t]:radix_start[t + 1]]
        lk, ls, li = tree_levels(keys[key_start[t]:key_start[t + 1]], card_c[t], r)
        lv_keys.append(lk)
        lv_start.append(ls)
        lv_leaf.append(li)
        node_start[t + 1] = node_start[t] + lk.shape[0]
        total += lk.shape[0] * card_c[t]
    empty = np.zeros(0, dtype=np.int64)
    if total > max_cells:
        return total, node_start, empty, empty, empty, empty, empty, empty
    n_nodes = node_start[n_trees]
    parent = np.empty(n_nodes, dtype=np.int64)
    depth = np.empty(n_nodes, dtype=np.int64)
    branch = np.empty(n_nodes, dtype=np.int64)
    child_start = np.empty(n_nodes, dtype=np.int64)
    leaf_counts = np.empty(total, dtype=np.int64)
    tables = []
    child_off = 0
    cell_off = 0
    for t in range(n_trees):
        lo, hi = key_start[t], key_start[t + 1]
        r = radix[radix_start[t]:radix_start[t + 1]]
        par, dep, br, cells = tree_nodes(lv_keys[t], lv_start[t], lv_leaf[t], keys[lo:hi], counts[lo:hi], card_c[t], r)
        off = node_start[t]
        cs, tab, ok = tree_child_table(par, dep, br, r, off, child_off)
        for j in range(par.shape[0]):
            parent[off + j] = par[j] + off if par[j] >= 0 else -1
            depth[off + j] = dep[j]
            branch[off + j] = br[j]
            child_start[off + j] = cs[j] if ok else -2
        leaf_counts[cell_off:cell_off + cells.shape[0]] = cells
        cell_off += cells.shape[0]
        child_off += tab.shape[0]
        tables.append(tab)
    child_table = np.empty(child_off, dtype=np.int64)
    pos = 0
    for t in range(n_trees):
        child_table[pos:pos + tables[t].shape[0]] = tables[t]
        pos += tables[t].shape[0]
    return total, node_start, parent, depth, branch, child_start, child_table, leaf_counts


@njit(**NJIT_OPTIONS)
def sparse_cells(log_probs, raw, node_parent, node_cell_start, node_card, backoff_to_parent, cell_start,
                 cell_value, cell_log_prob, log_backoff):
    """A network's dense tables made sparse (:meth:`~hdp_plugin.hdp.tables.ProbabilityTables.from_dense`).

    A cell with a data count keeps its log-estimate. Node ``j``'s back-off weight is ``U / B``: ``U``
    the total of its dense estimates of the values without a cell, ``B`` the total its back-off
    distribution gives them (the parent's estimates as the sparse tables give them, or 1/card each), so
    that the node's sparse distribution sums to what the dense one does. Nodes come after their parents,
    so one pass in order sees every parent's sparse estimates complete.

    Parameters
    ----------
    log_probs : ndarray (n_cells,) float64
        The dense log-estimates.
    raw : ndarray (n_cells,) int64
        Every cell's data count (an internal node's: its subtree's).
    node_parent, node_cell_start, node_card : ndarray int64
        Per node its parent (-1 at a root), where its dense cells start, and its attribute's cardinality.
    backoff_to_parent : bool
        Back off to the parent (HDP) or to the uniform distribution.
    cell_start : ndarray (n_nodes + 1,) int64
        Where every node's sparse cells start (its cells with a count, in value order).
    cell_value, cell_log_prob, log_backoff : ndarray
        Written: the sparse cells' values and log-estimates, and every node's log back-off weight
        (at most 0; -inf where the unseen values' total is 0; 0 where there are none).
    """
    derived = np.empty(log_probs.shape[0], np.float64)  # every cell's estimate as the sparse tables give it
    for j in range(node_parent.shape[0]):
        lo = node_cell_start[j]
        k = node_card[j]
        p = node_parent[j]
        plo = node_cell_start[p] if p >= 0 else -1
        unseen = 0.0
        base = 0.0
        for x in range(k):
            if raw[lo + x] == 0:
                unseen += math.exp(log_probs[lo + x])
                base += derived[plo + x] if backoff_to_parent and p >= 0 else 1.0 / k
        if base <= 0.0 or unseen == base:
            lw = 0.0
        elif unseen == 0.0:
            lw = -np.inf
        else:
            lw = min(0.0, math.log(unseen) - math.log(base))
        log_backoff[j] = lw
        w = math.exp(lw)
        out = cell_start[j]
        for x in range(k):
            if raw[lo + x] > 0:
                derived[lo + x] = math.exp(log_probs[lo + x])
                cell_value[out] = x
                cell_log_prob[out] = log_probs[lo + x]
                out += 1
            else:
                derived[lo + x] = w * (derived[plo + x] if backoff_to_parent and p >= 0 else 1.0 / k)


@njit(**NJIT_OPTIONS)
def observed_tables(probs, node_parent, node_card, node_cell_start, cell_value, cell_log_prob, log_backoff):
    """A network's sparse tables from the sampler's averaged cells
    (:meth:`~hdp_plugin.hdp.tables.ProbabilityTables.from_sampler`).

    The sampler holds per node its observed values' cells, then a rest cell with the averaged total of
    the other values' estimates, ``U``. An observed cell keeps its log-estimate; the node's back-off
    weight is ``U / B``, ``B`` the total the parent's tables give those values (the parent's own rest
    plus its observed values the node lacks; at a root, their share of the uniform distribution): the
    rule :func:`sparse_cells` applies to dense tables.

    Parameters
    ----------
    probs : ndarray (n_sampler_cells,) float64
        The averaged estimates of the sampler's cells.
    node_parent, node_card : ndarray (n_nodes,) int64
        Every node's parent (-1 at a root) and its attribute's cardinality.
    node_cell_start : ndarray (n_nodes + 1,) int64
        Where every node's sampler cells start (the last of a node's is its rest cell).
    cell_value : ndarray (n_sampler_cells,) int64
        The sampler cells' values.
    cell_log_prob, log_backoff : ndarray
        Written: the observed cells' log-estimates (``n_sampler_cells - n_nodes``, node by node) and
        every node's log back-off weight.
    """
    for j in range(node_parent.shape[0]):
        lo = node_cell_start[j]
        rest = node_cell_start[j + 1] - 1
        unseen = probs[rest]
        p = node_parent[j]
        if p < 0:
            base = (node_card[j] - (rest - lo)) / node_card[j]
        else:
            pc = node_cell_start[p]
            prest = node_cell_start[p + 1] - 1
            base = probs[prest]
            for cx in range(lo, rest):
                while cell_value[pc] < cell_value[cx]:
                    base += probs[pc]
                    pc += 1
                pc += 1
            while pc < prest:
                base += probs[pc]
                pc += 1
        if base <= 0.0 or unseen == base:
            lw = 0.0
        elif unseen <= 0.0:
            lw = -np.inf
        else:
            lw = min(0.0, math.log(unseen) - math.log(base))
        log_backoff[j] = lw
        out = lo - j
        for cx in range(lo, rest):
            cell_log_prob[out] = math.log(probs[cx])
            out += 1


@njit(**NJIT_OPTIONS)
def dense_lookup(node_parent, node_branch, node_card, node_radix, child_count, cell_start, cell_value,
                 cell_log_prob, log_backoff, backoff_to_parent):
    """The dense view of sparse tables that prediction reads: every node's child table and every cell's
    log-estimate (:meth:`~hdp_plugin.hdp.tables.ProbabilityTables.dense_log_probs`).

    Parameters
    ----------
    node_parent, node_branch : ndarray (n_nodes,) int64
        Every node's parent (-1 at a root; parents come first) and branch value.
    node_card, node_radix : ndarray (n_nodes,) int64
        Every node's attribute cardinality, and the cardinality of the variable it branches on.
    child_count : ndarray (n_nodes,) int64
        Every node's number of children.
    cell_start, cell_value, cell_log_prob, log_backoff : ndarray
        The sparse tables' cells and back-off weights.
    backoff_to_parent : bool
        Back off to the parent (HDP) or to the uniform distribution.

    Returns
    -------
    (child_start, child_table, node_cell_start, log_probs) : the child of node ``i`` reached with value ``v``
    is ``child_table[child_start[i] + v]`` (-1 if none; ``child_start`` is -1 at a leaf), and the
    log-estimate of value ``x`` at node ``i`` is ``log_probs[node_cell_start[i] + x]``.
    """
    n = node_parent.shape[0]
    child_start = np.full(n, -1, np.int64)
    slots = 0
    for i in range(n):
        if child_count[i] > 0:
            child_start[i] = slots
            slots += node_radix[i]
    child_table = np.full(slots, -1, np.int64)
    node_cell_start = np.empty(n + 1, np.int64)
    node_cell_start[0] = 0
    for i in range(n):
        node_cell_start[i + 1] = node_cell_start[i] + node_card[i]
        p = node_parent[i]
        if p >= 0:
            child_table[child_start[p] + node_branch[i]] = i
    out = np.empty(node_cell_start[n], np.float64)
    for i in range(n):
        lo = node_cell_start[i]
        k = node_card[i]
        p = node_parent[i]
        lb = log_backoff[i]
        if backoff_to_parent and p >= 0:
            plo = node_cell_start[p]
            for x in range(k):
                out[lo + x] = lb + out[plo + x]
        else:
            u = lb - math.log(k)
            for x in range(k):
                out[lo + x] = u
        for c in range(cell_start[i], cell_start[i + 1]):
            out[lo + cell_value[c]] = cell_log_prob[c]
    return child_start, child_table, node_cell_start, out
