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

from ..runtime.jit import NJIT_OPTIONS
from ..runtime.threads import pool_map
from .tables import ProbabilityTables


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
    child_start, child_table, node_cell_start, log_probs = tables.dense_view()
    X = np.ascontiguousarray(X)
    n_rows = X.shape[0]
    out = np.empty((n_rows, tables.log_prior.shape[0]), dtype=np.float64)

    def block(lo):
        log_posterior_rows(X, lo, min(lo + PREDICT_BLOCK, n_rows), t.attrs, t.tree_card, t.tree_node_start,
                           t.tree_var_start, t.branch_vars, child_start, child_table, node_cell_start,
                           t.cardinalities, log_probs, t.log_prior, out)

    starts = range(0, n_rows, PREDICT_BLOCK)
    threads = min(len(starts), numba.get_num_threads())  # NUMBA_NUM_THREADS, or numba.set_num_threads
    if threads <= 1:
        for lo in starts:
            block(lo)
    else:
        with ThreadPoolExecutor(max_workers=threads, thread_name_prefix="hdp-predict") as pool:
            pool_map(pool, block, starts)  # Ctrl-C stops it at once
    return out
