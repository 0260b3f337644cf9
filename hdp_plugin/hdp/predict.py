"""Prediction with :class:`~hdp_plugin.hdp.tables.ProbabilityTables`: the numba kernel and its driver.

Prediction descends each tree along (y, parent values) and stops at the deepest node that exists
(back-off, docs/method.md section 4), whose estimate of the attribute's value is its cell's, or for a
value it has no cell for, its back-off weight times its back-off distribution's; an attribute value
that the model has no slot for drops that attribute's factor (exact marginalisation). Kept apart from :mod:`.tables` so that reading a model
file does not load numba.
"""

from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor

import numba
import numpy as np
from numba import njit

from ..config import NJIT_OPTIONS
from .tables import ProbabilityTables


@njit(**NJIT_OPTIONS, inline="always")
def _child(node, value, child_start, child_count, node_branch):
    """The child of ``node`` reached with branching value ``value`` (a binary search of its children,
    sorted by branch value), or -1.

    Parameters
    ----------
    node, value : int
        The node, and the value of the variable it branches on.
    child_start, child_count, node_branch : ndarray int64
        Every node's first child and number of children, and the branch value that leads to it.
    """
    lo = child_start[node]
    hi = lo + child_count[node]
    while lo < hi:
        mid = (lo + hi) >> 1
        b = node_branch[mid]
        if b < value:
            lo = mid + 1
        elif b > value:
            hi = mid
        else:
            return mid
    return -1


@njit(**NJIT_OPTIONS, inline="always")
def _log_estimate(node, x, card, node_parent, cell_start, cell_value, log_probs, log_backoff, backoff_to_parent):
    """log theta(x | node): the node's cell of ``x`` if it has one (a binary search of its sorted values),
    else its back-off weight times its back-off distribution's estimate, up the parents (HDP) or straight
    to the uniform distribution.

    Parameters
    ----------
    node, x, card : int
        The node, the value of the tree's attribute, and that attribute's cardinality.
    node_parent, cell_start, cell_value, log_probs, log_backoff : ndarray
        The fields of those names of :class:`~hdp_plugin.hdp.tables.ProbabilityTables`.
    backoff_to_parent : bool
        HDP's back-off to the parent, or the baselines' to the uniform distribution.
    """
    acc = 0.0
    while True:
        lo = cell_start[node]
        hi = cell_start[node + 1]
        while lo < hi:
            mid = (lo + hi) >> 1
            v = cell_value[mid]
            if v < x:
                lo = mid + 1
            elif v > x:
                hi = mid
            else:
                return acc + log_probs[mid]
        acc += log_backoff[node]
        p = node_parent[node]
        if not backoff_to_parent or p < 0:
            return acc - math.log(card)
        node = p


@njit(**NJIT_OPTIONS)
def log_posterior_rows(X, lo, hi, attrs, tree_card, tree_node_start, tree_var_start, branch_vars, node_parent,
                       node_branch, child_start, child_count, cell_start, cell_value, log_probs, log_backoff,
                       backoff_to_parent, cardinalities, log_prior, out):
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
        Per tree its attribute, cardinality, nodes and branching variables (the class, -1, first).
    node_parent, node_branch, child_start, child_count : ndarray int64
        Per node its parent, branch value, first child and number of children.
    cell_start, cell_value, log_probs, log_backoff : ndarray
        Every node's observed cells (values and log-estimates) and its log back-off weight.
    backoff_to_parent : bool
        HDP's back-off to the parent, or the baselines' to the uniform distribution.
    cardinalities : ndarray (n_attributes,) int64
        The network's attributes' cardinalities.
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
            card = tree_card[tr]
            if xc >= card:
                continue  # a value the model has no slot for: marginalised out
            root = tree_node_start[tr]
            for yv in range(n_classes):
                nxt = _child(root, yv, child_start, child_count, node_branch)
                alive[yv] = nxt >= 0
                node[yv] = nxt if nxt >= 0 else root
            for d in range(tree_var_start[tr] + 1, tree_var_start[tr + 1]):
                v = branch_vars[d]
                val = X[i, v]
                if val >= cardinalities[v]:
                    break  # an unknown parent value: every class backs off here
                for yv in range(n_classes):
                    if alive[yv]:
                        nxt = _child(node[yv], val, child_start, child_count, node_branch)
                        if nxt >= 0:
                            node[yv] = nxt
                        else:
                            alive[yv] = False
            for yv in range(n_classes):
                out[i, yv] += _log_estimate(node[yv], xc, card, node_parent, cell_start, cell_value, log_probs,
                                            log_backoff, backoff_to_parent)
        mx = -np.inf
        for j in range(n_classes):
            if out[i, j] > mx:
                mx = out[i, j]
        if mx == -np.inf:
            for j in range(n_classes):
                out[i, j] = -math.log(n_classes)
            continue
        acc = 0.0
        for j in range(n_classes):
            acc += math.exp(out[i, j] - mx)
        lse = mx + math.log(acc)
        for j in range(n_classes):
            out[i, j] -= lse


#: rows per block of prediction work; smaller inputs run on the calling thread
PREDICT_BLOCK = 1 << 15


def predict_log_proba(tables: ProbabilityTables, X: np.ndarray) -> np.ndarray:
    """Normalised log P(y | x) for every row of the code matrix ``X`` (blocks of rows on all cores)."""
    t = tables
    X = np.ascontiguousarray(X)
    n_rows = X.shape[0]
    out = np.empty((n_rows, tables.log_prior.shape[0]), dtype=np.float64)

    def block(lo):
        log_posterior_rows(X, lo, min(lo + PREDICT_BLOCK, n_rows), t.attrs, t.tree_card, t.tree_node_start,
                           t.tree_var_start, t.branch_vars, t.node_parent, t.node_branch, t.child_start,
                           t.child_count, t.cell_start, t.cell_value, t.log_probs, t.log_backoff,
                           t.backoff_to_parent, t.cardinalities, t.log_prior, out)

    starts = range(0, n_rows, PREDICT_BLOCK)
    threads = min(len(starts), numba.get_num_threads())  # NUMBA_NUM_THREADS, or numba.set_num_threads
    if threads <= 1:
        for lo in starts:
            block(lo)
    else:
        with ThreadPoolExecutor(max_workers=threads, thread_name_prefix="hdp-predict") as pool:
            list(pool.map(block, starts))
    return out
