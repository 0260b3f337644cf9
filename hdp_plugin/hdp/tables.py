"""Probability tables of fitted context trees, the baseline estimators, and prediction.

A :class:`ProbabilityTables` holds, for every cell of every tree, the log of its estimated
probability, plus the class prior. Prediction descends each tree along (y, parent values) and
stops at the deepest node that exists (back-off, docs/method.md section 4); an attribute value that
the model has no slot for (a value or a missing value never seen in training) drops that
attribute's factor, which is exact marginalisation.
"""

from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numba
import numpy as np
from numba import njit

from ..config import NJIT_OPTIONS
from ..errors import ParameterError
from .trees import ContextTrees



@dataclass
class ProbabilityTables:
    """Log-probability of every cell, and the class prior (both float64)."""

    trees: ContextTrees
    log_probs: np.ndarray  # (n_cells,)
    log_prior: np.ndarray  # (n_classes,)


def class_prior(y: np.ndarray, n_classes: int) -> np.ndarray:
    """The m-estimate (n_y + 1/C) / (N + 1) of the class prior."""
    counts = np.bincount(y, minlength=n_classes).astype(np.float64)
    return (counts + 1.0 / n_classes) / (counts.sum() + 1.0)


def m_estimate(trees: ContextTrees, m: float) -> np.ndarray:
    """m-estimates p_x = (n_x + m/|X_c|) / (N + m) with raw counts at every node.

    With ``m = 0`` (maximum likelihood) a node without data gets the uniform distribution.

    Returns
    -------
    ndarray of shape (n_cells,): the probability of every cell.
    """
    if not (m >= 0 and math.isfinite(m)):
        raise ParameterError(f"m must be a finite number >= 0, got {m!r}")
    return _smoothed(trees, lambda card: np.full(card.shape, float(m)))


def laplace(trees: ContextTrees) -> np.ndarray:
    """Add-one estimates (n_x + 1) / (N + |X_c|): the m-estimate with m = |X_c| at every node."""
    return _smoothed(trees, lambda card: card)


def _smoothed(trees: ContextTrees, m_of_card) -> np.ndarray:
    """(n_x + m/|X_c|) / (N + m) at every cell, with m a function of the cell's |X_c|."""
    raw = trees.raw_counts().astype(np.float64)
    cards = trees.tree_card[trees.node_tree]
    node_N = np.add.reduceat(raw, trees.node_cell_start[:-1]) if raw.size else np.zeros(0)
    cell_node = np.repeat(np.arange(trees.n_nodes), cards)
    card_cell = cards[cell_node].astype(np.float64)
    m = m_of_card(card_cell)
    N_cell = node_N[cell_node]
    with np.errstate(invalid="ignore", divide="ignore"):
        p = (raw + m / card_cell) / (N_cell + m)
    empty = (N_cell + m) == 0
    p[empty] = 1.0 / card_cell[empty]
    return p


@njit(**NJIT_OPTIONS)
def log_posterior_rows(X, lo, hi, attrs, tree_card, tree_node_start, tree_var_start, branch_vars, child_start,
                       child_table, node_cell_start, cardinalities, log_probs, log_prior, out):
    """Rows ``lo .. hi - 1``: ``out[i, y] = log P(y) + sum over trees of log P(x_c | deepest context of
    (y, parents))``, then normalised by log-sum-exp (a row with no finite entry gets uniform).

    One thread's share of the rows: :func:`predict_log_proba` runs blocks of rows on threads of its
    own (the kernel releases the GIL), which compiles in a fraction of the time a ``prange`` takes."""
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
    tr = tables.trees
    X = np.ascontiguousarray(X)
    n_rows = X.shape[0]
    out = np.empty((n_rows, tables.log_prior.shape[0]), dtype=np.float64)

    def block(lo):
        log_posterior_rows(X, lo, min(lo + PREDICT_BLOCK, n_rows), tr.attrs, tr.tree_card, tr.tree_node_start,
                           tr.tree_var_start, tr.branch_vars, tr.child_start, tr.child_table, tr.node_cell_start,
                           tr.cardinalities, tables.log_probs, tables.log_prior, out)

    starts = range(0, n_rows, PREDICT_BLOCK)
    threads = min(len(starts), numba.get_num_threads())  # NUMBA_NUM_THREADS, or numba.set_num_threads
    if threads <= 1:
        for lo in starts:
            block(lo)
    else:
        with ThreadPoolExecutor(max_workers=threads, thread_name_prefix="hdp-predict") as pool:
            list(pool.map(block, starts))
    return out
