"""Prediction with :class:`~hdp_plugin.hdp.tables.ProbabilityTables`: the numba kernel and its driver.

Prediction descends each tree along (y, parent values) and stops at the deepest node that exists
(back-off, docs/method.md section 4), whose estimate of the attribute's value is its cell's, or for a
value it has no cell for, its back-off weight times its back-off distribution's (read from a dense view
of the tables made on first use, :meth:`ProbabilityTables.dense_view`); an attribute value that the model has no slot for
drops that attribute's factor (exact marginalisation). Kept apart from :mod:`.tables` so that reading a model
file does not load numba.
"""

from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor

import numba
import numpy as np
from numba import njit

from .. import config
from ..runtime.jit import NJIT_OPTIONS
from ..runtime.threads import pool_map
from .tables import ProbabilityTables


@njit(**NJIT_OPTIONS)
def _normalise(out, i):
    """Row ``i`` of ``out`` (log joint probabilities) normalised by log-sum-exp; a row with no finite entry
    becomes uniform.

    Parameters
    ----------
    out : ndarray (n_rows, n_classes) float64
        log P(y, x) in, log P(y | x) out, for row ``i``.
    i : int
        The row.
    """
    n_classes = out.shape[1]
    mx = -np.inf
    for j in range(n_classes):
        if out[i, j] > mx:
            mx = out[i, j]
    if mx == -np.inf:
        for j in range(n_classes):
            out[i, j] = -math.log(n_classes)
        return
    acc = 0.0
    for j in range(n_classes):
        acc += math.exp(out[i, j] - mx)
    lse = mx + math.log(acc)
    for j in range(n_classes):
        out[i, j] -= lse


@njit(**NJIT_OPTIONS)
def log_posterior_rows(X, lo, hi, attrs, tree_card, tree_node_start, tree_var_start, branch_vars, child_start,
                       child_table, node_cell_start, cardinalities, log_probs, log_prior, out):
    """Rows ``lo .. hi - 1``: ``out[i, y] = log P(y) + sum over trees of log P(x_c | deepest context of
    (y, parents))``, then normalised by log-sum-exp (a row with no finite entry gets uniform).

    One thread's share of the rows: :func:`predict_log_proba` runs blocks of rows on threads of its
    own (the kernel releases the GIL), which compiles in a fraction of the time a ``prange`` takes.

    Parameters
    ----------
    X : ndarray (n_rows, n_attributes) of unsigned integer codes
        The rows; a code at or past an attribute's cardinality is a value the model has no slot for.
    lo, hi : int
        The rows to predict, ``lo .. hi - 1``.
    attrs, tree_card, tree_node_start, tree_var_start, branch_vars : ndarray int64
        The model's :class:`~hdp_plugin.hdp.trees.ContextTrees` fields of those names: per tree its
        attribute, cardinality, nodes and branching variables (the class, -1, first).
    child_start, child_table, node_cell_start, cardinalities : ndarray int64
        The same trees' child tables and cells, and the attributes' cardinalities.
    log_probs : ndarray (n_cells,) float64
        Every cell's log probability (:class:`~hdp_plugin.hdp.tables.ProbabilityTables`).
    log_prior : ndarray (n_classes,) float64
        The class prior's logs.
    out : ndarray (n_rows, n_classes) float64
        Rows ``lo .. hi - 1`` are written: log P(y | x).
    """
    n_classes = log_prior.shape[0]
    n_trees = attrs.shape[0]
    node = np.empty(n_classes, dtype=np.int64)
    alive = np.empty(n_classes, dtype=np.bool_)
    for i in range(lo, hi):
        # The class is every tree's first branching variable; below it the path follows the
        # row's parent values, the same for every class. The classes' descents are independent,
        # so they advance side by side, one depth at a time (the loads overlap).
        for yv in range(n_classes):
            out[i, yv] = log_prior[yv]
        for tr in range(n_trees):
            xc = X[i, attrs[tr]]
            if xc >= tree_card[tr]:
                continue  # a value the model has no slot for: marginalised out
            root = tree_node_start[tr]
            cs = child_start[root]
            for yv in range(n_classes):
                nxt = child_table[cs + yv] if cs >= 0 else -1
                alive[yv] = nxt >= 0
                node[yv] = nxt if nxt >= 0 else root
            for d in range(tree_var_start[tr] + 1, tree_var_start[tr + 1]):
                v = branch_vars[d]
                val = X[i, v]
                if val >= cardinalities[v]:
                    break  # an unknown parent value: every class backs off here
                for yv in range(n_classes):
                    if alive[yv]:
                        cs = child_start[node[yv]]
                        nxt = child_table[cs + val] if cs >= 0 else -1
                        if nxt >= 0:
                            node[yv] = nxt
                        else:
                            alive[yv] = False
            for yv in range(n_classes):
                out[i, yv] += log_probs[node_cell_start[node[yv]] + xc]
        _normalise(out, i)


@njit(**NJIT_OPTIONS)
def _sparse_child(first_child, child_count, node_branch, node, value, radix):
    """The child of ``node`` reached with ``value`` (-1 if none): a node's children are contiguous and sorted by
    branch value, so a node with a child for every value has them in value order, else a binary search.

    Parameters
    ----------
    first_child, child_count, node_branch : ndarray (n_nodes,) int64
        Every node's first child (its children follow it in a block), number of children and branch value.
    node, value : int
        The node, and the value of the variable its children branch on.
    radix : int
        That variable's number of values.
    """
    n = child_count[node]
    lo = first_child[node]
    if n == radix:
        return lo + value
    return _search(node_branch, lo, lo + n, value)


@njit(**NJIT_OPTIONS)
def _search(keys, lo, hi, value):
    """The index of ``value`` in the sorted ``keys[lo:hi]``, or -1.

    Parameters
    ----------
    keys : ndarray int64
        Sorted ascending between ``lo`` and ``hi``.
    lo, hi : int
        The range searched.
    value : int
        The key sought.
    """
    while lo < hi:
        mid = (lo + hi) >> 1
        b = keys[mid]
        if b < value:
            lo = mid + 1
        elif b > value:
            hi = mid
        else:
            return mid
    return -1


@njit(**NJIT_OPTIONS)
def _sparse_estimate(node, x, card, node_parent, cell_start, cell_value, log_probs, log_backoff, backoff_to_parent,
                     chain):
    """log theta(x | node) from the sparse cells, added up as the dense view adds it (bit for bit): the cell of
    ``x`` of the first node up the back-off chain that has one (or the uniform's share at its end), then each
    back-off weight below it, innermost first.

    Parameters
    ----------
    node, x, card : int
        The node, the value of its tree's attribute, and that attribute's cardinality.
    node_parent, cell_start, cell_value, log_probs, log_backoff : ndarray
        The sparse tables (:class:`~hdp_plugin.hdp.tables.ProbabilityTables`).
    backoff_to_parent : bool
        A node backs off to its parent (HDP), or to the uniform distribution (the baselines).
    chain : ndarray int64
        Scratch of at least the tree's depth plus one.
    """
    j = node
    depth = 0
    while True:
        lo = cell_start[j]
        hi = cell_start[j + 1]
        found = lo + x if hi - lo == card else _search(cell_value, lo, hi, x)
        if found >= 0:
            acc = log_probs[found]
            break
        if not backoff_to_parent or node_parent[j] < 0:
            acc = log_backoff[j] - math.log(card)
            break
        chain[depth] = j
        depth += 1
        j = node_parent[j]
    for d in range(depth - 1, -1, -1):
        acc = log_backoff[chain[d]] + acc
    return acc


@njit(**NJIT_OPTIONS)
def log_posterior_rows_sparse(X, lo, hi, attrs, tree_card, tree_node_start, tree_var_start, branch_vars, first_child,
                              child_count, node_branch, node_parent, cell_start, cell_value, log_probs, log_backoff,
                              backoff_to_parent, cardinalities, log_prior, out):
    """:func:`log_posterior_rows` from the sparse tables themselves (no dense view): the same figures, bit for
    bit, in memory that grows with the cells stored rather than with every node's values.

    Parameters
    ----------
    X, lo, hi, attrs, tree_card, tree_node_start, tree_var_start, branch_vars, cardinalities, log_prior, out :
        As :func:`log_posterior_rows`'s.
    first_child : ndarray (n_nodes,) int64
        Every node's first child (0 at a leaf).
    child_count, node_branch, node_parent, cell_start, cell_value, log_probs, log_backoff : ndarray
        The sparse tables (:class:`~hdp_plugin.hdp.tables.ProbabilityTables`).
    backoff_to_parent : bool
        A node backs off to its parent (HDP), or to the uniform distribution (the baselines).
    """
    n_classes = log_prior.shape[0]
    n_trees = attrs.shape[0]
    node = np.empty(n_classes, dtype=np.int64)
    alive = np.empty(n_classes, dtype=np.bool_)
    deepest = 1
    for tr in range(n_trees):
        deepest = max(deepest, tree_var_start[tr + 1] - tree_var_start[tr] + 1)
    chain = np.empty(deepest, dtype=np.int64)
    for i in range(lo, hi):
        for yv in range(n_classes):
            out[i, yv] = log_prior[yv]
        for tr in range(n_trees):
            xc = X[i, attrs[tr]]
            card = tree_card[tr]
            if xc >= card:
                continue
            root = tree_node_start[tr]
            for yv in range(n_classes):
                nxt = _sparse_child(first_child, child_count, node_branch, root, yv, n_classes)
                alive[yv] = nxt >= 0
                node[yv] = nxt if nxt >= 0 else root
            for d in range(tree_var_start[tr] + 1, tree_var_start[tr + 1]):
                v = branch_vars[d]
                val = X[i, v]
                if val >= cardinalities[v]:
                    break
                for yv in range(n_classes):
                    if alive[yv]:
                        nxt = _sparse_child(first_child, child_count, node_branch, node[yv], val, cardinalities[v])
                        if nxt >= 0:
                            node[yv] = nxt
                        else:
                            alive[yv] = False
            for yv in range(n_classes):
                out[i, yv] += _sparse_estimate(node[yv], xc, card, node_parent, cell_start, cell_value, log_probs,
                                               log_backoff, backoff_to_parent, chain)
        _normalise(out, i)


#: rows per block of prediction work; smaller inputs run on the calling thread
PREDICT_BLOCK = 1 << 15


def predict_log_proba(tables: ProbabilityTables, X: np.ndarray) -> np.ndarray:
    """Normalised log P(y | x) for every row of the code matrix ``X`` (blocks of rows on all cores): from the
    dense view of the tables when it takes at most ``config.MAX_DENSE_VIEW_ENTRIES`` entries, else from the
    sparse cells themselves (the same figures, bit for bit)."""
    t = tables
    X = np.ascontiguousarray(X)
    n_rows = X.shape[0]
    out = np.empty((n_rows, tables.log_prior.shape[0]), dtype=np.float64)
    if tables.dense_view_entries() <= config.MAX_DENSE_VIEW_ENTRIES:
        child_start, child_table, node_cell_start, log_probs = tables.dense_view()

        def block(lo):
            log_posterior_rows(X, lo, min(lo + PREDICT_BLOCK, n_rows), t.attrs, t.tree_card, t.tree_node_start,
                               t.tree_var_start, t.branch_vars, child_start, child_table, node_cell_start,
                               t.cardinalities, log_probs, t.log_prior, out)
    else:
        first_child = _first_children(t)

        def block(lo):
            log_posterior_rows_sparse(X, lo, min(lo + PREDICT_BLOCK, n_rows), t.attrs, t.tree_card, t.tree_node_start,
                                      t.tree_var_start, t.branch_vars, first_child, t.child_count, t.node_branch,
                                      t.node_parent, t.cell_start, t.cell_value, t.log_probs, t.log_backoff,
                                      bool(t.backoff_to_parent), t.cardinalities, t.log_prior, out)

    starts = range(0, n_rows, PREDICT_BLOCK)
    threads = min(len(starts), numba.get_num_threads())  # NUMBA_NUM_THREADS, or numba.set_num_threads
    if threads <= 1:
        for lo in starts:
            block(lo)
    else:
        with ThreadPoolExecutor(max_workers=threads, thread_name_prefix="hdp-predict") as pool:
            pool_map(pool, block, starts)  # Ctrl-C stops it at once
    return out


def _first_children(t: ProbabilityTables) -> np.ndarray:
    """Every node's first child (a node's children are contiguous; 0 at a leaf, which has none)."""
    first = np.full(t.n_nodes, t.n_nodes, np.int64)
    child = np.nonzero(t.node_parent >= 0)[0]
    np.minimum.at(first, t.node_parent[child], child)
    return np.where(t.child_count > 0, first, 0)
