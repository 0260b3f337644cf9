"""Selective kDB (SkDB): pick the attribute prefix n* and the parent count k* by leave-one-out.

After the counting pass that gives kDB-K (:func:`~hdp_plugin.structure.learners.kdb`), SkDB
makes two more passes over the rows, as in Martinez et al. (2016):

2. count n(x_a, y, first d parents of a) for every attribute a and d = 0..K, into one *context
   trie* per attribute (a node per observed parent-value prefix; a node holds the C x |X_a|
   table of its context). Descending the trie costs one array lookup per level, with no hashing
   and no mixed-radix keys, so nothing can overflow however many parents or values there are;
3. one leave-one-out pass: for every row, and every (n*, k*) at once, the posterior of the model
   made of the first n* attributes of the MI order with at most k* parents, from m-estimates
   with the row's own counts removed, formed as the published SkDB forms it (its back-off to a
   shallower context where the row's value is rare, and its copy of that k's posterior into the
   larger k: :func:`hdp_plugin.structure.kernels.loo_squared_errors_block`), adding attributes
   one at a time (O(rows x n x K x C)). With m-estimates it selects exactly what the published
   code selects on that code's own fold files (tests/test_skdb_published.py).

Memory: a trie has at most one node per distinct prefix of parent values seen in the data, so at
most ``min(rows, product of the parents' cardinalities)`` nodes per level; each node is a block
of ``C * |X_a| + C`` counts and ``|next parent|`` child slots (int64).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np

from .. import config
from .base import Structure
from .counts import CountStatistics, row_blocks
from .kernels import loo_squared_errors_block, trie_insert_block
from .learners import check_k, kdb

log = logging.getLogger(__name__)


@dataclass(frozen=True, eq=False)
class ContextTries:
    """n(x_a, y, first d parents) for every attribute a and depth d, in one flat int64 array.

    See :mod:`hdp_plugin.structure.kernels` for the block layout of ``data``; ``root[a]`` is the
    block of attribute a's class-only context, ``par_ptr``/``par_idx`` the parents (CSR).
    """

    par_ptr: np.ndarray
    par_idx: np.ndarray
    root: np.ndarray
    data: np.ndarray
    n_nodes: int


def build_context_tries(
    X: np.ndarray,
    y: np.ndarray,
    stats: CountStatistics,
    parents: tuple[tuple[int, ...], ...],
    *,
    blocks=None,
) -> ContextTries:
    """Count n(x_a, y, first d parents of a), d = 0..len(parents[a]), in one pass over the rows.

    Parameters
    ----------
    X : ndarray of shape (n_rows, n_attributes)
        Codes, already checked by :func:`~hdp_plugin.structure.counts.count_statistics`.
    y : ndarray of shape (n_rows,), int32
    stats : CountStatistics
        Of the same ``X`` and ``y``.
    parents : tuple of tuple of int
        Every attribute's parents in branching order.
    blocks : callable, optional
        Instead of ``X`` and ``y`` (then None): a function returning a fresh iterator of
        ``(X_block, y_block)`` pairs, the rows in order (data streamed from disk).

    Returns
    -------
    ContextTries
    """
    card = stats.cardinalities
    C = stats.n_classes
    n_attr = stats.n_attributes
    # Step 1: parent lists as CSR arrays
    par_ptr = np.zeros(n_attr + 1, dtype=np.int64)
    np.cumsum([len(p) for p in parents], out=par_ptr[1:])
    par_idx = np.array([q for p in parents for q in p], dtype=np.int64)
    # Step 2: one root block per attribute (the class-only context), laid out first
    root = np.zeros(n_attr, dtype=np.int64)
    used = 0
    heads = []
    for a in range(n_attr):
        root[a] = used
        head = C * int(card[a]) + C
        n_slots = int(card[parents[a][0]]) if parents[a] else 0
        heads.append(np.concatenate([np.zeros(head, np.int64), np.full(n_slots, -1, np.int64)]))
        used += head + n_slots
    data = np.zeros(max(4 * used, 1024), dtype=np.int64)
    if heads:
        data[:used] = np.concatenate(heads)
    sizes = np.array([n_attr, used], dtype=np.int64)
    # Step 3: one pass over the rows, block by block
    for Xb, yb in (blocks or _in_memory(X, y))():
        data = trie_insert_block(Xb, yb, card, C, par_ptr, par_idx, root, data, sizes)
    return ContextTries(
        par_ptr=par_ptr,
        par_idx=par_idx,
        root=root,
        data=data[: int(sizes[1])].copy(),
        n_nodes=int(sizes[0]),
    )


def loo_rmse_grid(
    X: np.ndarray,
    y: np.ndarray,
    stats: CountStatistics,
    tries: ContextTries,
    order: np.ndarray,
    max_k: int,
    m: float = config.DEFAULT_M,
    *,
    blocks=None,
) -> np.ndarray:
    """Leave-one-out RMSE of every (n*, k*), in one pass over the rows.

    Parameters
    ----------
    X, y, stats
        The training data and its counts.
    tries : ContextTries
        From :func:`build_context_tries` with the kDB-``max_k`` parents.
    order : ndarray of shape (n_order,)
        Attributes by decreasing MI (or another order); n* keeps a prefix of it.
    max_k : int
        K: k* ranges over 0..K.
    m : float, default 1
        The m of the m-estimates p_x = (n_x + m/|X|)/(N + m).
    blocks : callable, optional
        As for :func:`build_context_tries`.

    Returns
    -------
    ndarray of shape (n_order + 1, max_k + 1)
        ``rmse[n*, k*] = sqrt(mean over rows of (1 - p(y_i | x_i))^2)``; row 0 is the class
        prior alone (the same in every column).
    """
    n_rows = stats.n_rows
    sq_err = np.zeros((len(order) + 1, max_k + 1))
    order = np.ascontiguousarray(order, dtype=np.int64)
    for Xb, yb in (blocks or _in_memory(X, y))():
        loo_squared_errors_block(
            Xb, yb, stats.cardinalities, stats.n_classes, order,
            tries.par_ptr, tries.par_idx, tries.root, tries.data, stats.n_y,
            float(stats.n_rows), float(m), max_k, sq_err,
        )  # fmt: skip
    return np.sqrt(sq_err / max(n_rows, 1))


def _in_memory(X, y):
    """The ``blocks`` function of in-memory codes: views of consecutive row blocks."""
    def blocks():
        for start, stop in row_blocks(X.shape[0]):
            yield X[start:stop], y[start:stop]

    return blocks


def select_prefix_and_k(rmse: np.ndarray) -> tuple[int, int]:
    """(n*, k*) of the lowest RMSE, accepting strict improvements only.

    Starts from the class prior (``rmse[0, 0]``) and scans n* ascending, then k* ascending, so a
    tie keeps the smaller model. ``(0, 0)`` means the class prior is the model.
    """
    best = rmse[0, 0]
    n_star, k_star = 0, 0
    for n in range(1, rmse.shape[0]):
        for k in range(rmse.shape[1]):
            if rmse[n, k] < best:
                best = rmse[n, k]
                n_star, k_star = n, k
    return n_star, k_star


def selective_kdb(
    X: np.ndarray,
    y: np.ndarray,
    stats: CountStatistics,
    max_k: int = config.DEFAULT_K,
    *,
    m: float = config.DEFAULT_M,
    order=None,
    blocks=None,
) -> Structure:
    """Selective kDB (Martinez, Webb, Chen and Zaidi 2016).

    From kDB-K, choose the number n* of attributes (a prefix of the MI order) and k* <= K that
    minimise the leave-one-out RMSE on the training data, RMSE = sqrt(mean over rows of
    (1 - p(true class))^2), with m-estimates and the class prior (n_y + 1/C)/(N + 1), all with
    the row left out, and the back-off of the published SkDB (see
    :func:`~hdp_plugin.structure.kernels.loo_squared_errors_block`). Only a strict
    improvement is accepted, starting from the class-prior-only model, scanning n* ascending
    then k* ascending. Each kept attribute keeps its first k* parents.

    Parameters
    ----------
    X : ndarray of shape (n_rows, n_attributes)
        Codes, already checked by :func:`~hdp_plugin.structure.counts.count_statistics`.
    y : ndarray of shape (n_rows,), int32
    stats : CountStatistics
        Of the same ``X`` and ``y``.
    max_k : int, default 5
        K, the largest number of attribute parents considered.
    m : float, default 1
        The m of the m-estimates used by the selection.
    order : sequence of int, optional
        The attribute order whose prefixes are candidates (an ESKDB member's drawn order,
        possibly a subset of the attributes); default decreasing MI.
    blocks : callable, optional
        Rows streamed instead of ``X`` and ``y`` (see :func:`build_context_tries`).

    Returns
    -------
    Structure
        ``kind="skdb"``, ``k=k*``; ``kept`` is the first n* attributes of the MI order
        (ascending), ``()`` when the class prior wins. ``info`` holds ``rmse`` (the
        ``(n + 1) x (K + 1)`` grid as nested lists, row 0 the class prior), ``n_star``,
        ``k_star``, ``max_k`` and ``m``.

    References
    ----------
    .. [1] A. M. Martinez, G. I. Webb, S. Chen and N. A. Zaidi, "Scalable learning of Bayesian
       network classifiers", Journal of Machine Learning Research 17(44) (2016) 1-35.
    .. [2] M. Sahami, "Learning limited dependence Bayesian classifiers", KDD-96, 335-338.
    """
    max_k = check_k(max_k)
    # Step 1: kDB-K, the largest model considered
    full = kdb(stats, max_k, order=order)
    order = np.asarray(full.order, dtype=np.int64)
    # Step 2: second pass, the counts of every context the selection can use
    tries = build_context_tries(X, y, stats, full.parents, blocks=blocks)
    # Step 3: third pass, leave-one-out RMSE of every (n*, k*)
    rmse = loo_rmse_grid(X, y, stats, tries, order, max_k, m, blocks=blocks)
    # Step 4: the smallest model with the lowest RMSE
    n_star, k_star = select_prefix_and_k(rmse)
    kept = tuple(sorted(int(a) for a in order[:n_star]))
    kept_set = set(kept)
    parents = tuple(full.parents[a][:k_star] if a in kept_set else () for a in range(stats.n_attributes))
    log.debug("SkDB: n* = %d of %d attributes, k* = %d of %d, LOO RMSE %.6f (prior %.6f)",
              n_star, len(order), k_star, max_k, rmse[n_star, k_star], rmse[0, 0])  # fmt: skip
    return Structure(
        kind="skdb",
        k=k_star,
        parents=parents,
        kept=kept,
        order=full.order,
        mi=full.mi,
        info={
            "rmse": rmse.tolist(),
            "n_star": n_star,
            "k_star": k_star,
            "max_k": max_k,
            "m": float(m),
            "n_trie_nodes": tries.n_nodes,
        },
    )
