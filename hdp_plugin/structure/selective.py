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
   larger k: :func:`hdp_plugin.structure.loo_kernels.loo_squared_errors_block`), adding attributes
   one at a time (O(rows x n x K x C)). With m-estimates it selects exactly what the published
   code selects on that code's own fold files (tests/test_skdb_published.py). An ensemble with HDP
   tables scores with hierarchical m-estimates instead (:class:`Smoothing`: each context smoothed
   towards its parent context's estimate, as HDP tables are). The rows' squared errors are summed
   exactly, in fixed point (:class:`LooSums`).

Both passes can be split over any partition of the rows and merged (:class:`TrieAccumulator`,
:meth:`LooSums.merge`): the tries are integer counts, and the fixed-point sum
is exact, so the grid, and the selection, are the same bit for bit whatever the split. Several
models (an ESKDB's members) can share the two passes (:func:`selective_kdbs`).

Memory: a trie has at most one node per distinct prefix of parent values seen in the data, so at
most ``min(rows, product of the parents' cardinalities)`` nodes per level; each node is a block
of ``C`` class totals, ``|X_a|`` value slots and ``|next parent|`` child slots, plus ``C`` counts per
value of ``X_a`` seen in its context (int64), so at most ``C + |X_a| + |next parent| + C`` cells
per row and level, whatever the cardinalities.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from .. import config
from ..runtime import cancel
from ..seeds import mix64
from .base import Structure
from .counts import CountStatistics
from .loo_kernels import FIXED_BITS, FIXED_DIGITS, fixed_merge, loo_squared_errors_block
from .trie_kernels import trie_canonical, trie_class_contexts, trie_insert_block, trie_merge
from .learners import check_k, kdb

log = logging.getLogger(__name__)


class Smoothing(NamedTuple):
    """The estimates of the leave-one-out selection, and the rows it scores: m-estimates with this ``m``,
    each context's smoothed towards the uniform distribution (flat, the published SkDB's) or towards its
    parent context's estimate (``hierarchical``, as HDP tables are: docs/method.md, "SkDB"). Wherever a
    function of this module takes ``m``, a plain number means flat m-estimates with that m, scoring
    every row."""

    m: float
    hierarchical: bool = False
    #: of more rows than this, score about this many (0: every row): a row is scored when a hash of its
    #: codes, its class and the model's attribute order falls in the first ``rows / n_rows`` of the
    #: hash's range, so the subset is the same however the rows are ordered or split (streamed, Dask,
    #: in memory); the estimates still count every row
    rows: int = 0


def smoothing(m) -> Smoothing:
    """``m`` as a :class:`Smoothing` (a number: flat m-estimates)."""
    return m if isinstance(m, Smoothing) else Smoothing(float(m))


@dataclass(frozen=True, eq=False)
class ContextTries:
    """n(x_a, y, first d parents) for every attribute a and depth d, in one flat int64 array.

    See :mod:`hdp_plugin.structure.trie_kernels` for the block layout of ``data``; ``root[a]`` is the
    block of attribute a's class-only context, ``par_ptr``/``par_idx`` the parents (CSR). The
    layout follows the order in which contexts were first seen, unless laid out canonically
    (:meth:`TrieAccumulator.result`; tries of the same counts are then the same arrays, whatever the
    order or split of the rows they were counted from); what is read of them, counts, is the same
    either way.
    ``class_contexts[a, d]`` counts the (class, context) pairs with a row at depth ``d`` of attribute
    a's trie (:func:`tree_cells`).
    """

    par_ptr: np.ndarray
    par_idx: np.ndarray
    root: np.ndarray
    data: np.ndarray
    n_nodes: int
    class_contexts: np.ndarray


def _parent_lists(parents) -> tuple[np.ndarray, np.ndarray]:
    """Every attribute's parents as CSR arrays ``(par_ptr, par_idx)``."""
    n_attr = len(parents)
    par_ptr = np.zeros(n_attr + 1, dtype=np.int64)
    par_ptr[1:] = np.cumsum(np.fromiter((len(p) for p in parents), np.int64, n_attr))
    par_idx = np.array([q for p in parents for q in p], dtype=np.int64)
    return par_ptr, par_idx


def _root_offsets(card: np.ndarray, C: int, slots: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(root, size)``: one root block per attribute laid out first, attribute ``a``'s of ``C + card[a] +
    slots[a]`` cells at ``root[a]``."""
    size = C + card + slots if card.shape[0] else np.zeros(0, np.int64)
    root = np.concatenate(([0], np.cumsum(size)[:-1])).astype(np.int64) if card.shape[0] else np.zeros(0, np.int64)
    return root, size


def _first_parent_slots(card: np.ndarray, parents) -> np.ndarray:
    """The child slots of every attribute's root in its own tries: its first parent's values (0 without)."""
    first = np.fromiter((p[0] if p else -1 for p in parents), np.int64, card.shape[0])
    return np.where(first >= 0, card[np.maximum(first, 0)], 0)


def _root_blocks(card: np.ndarray, C: int, slots: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """The tries' array with one root block per attribute laid out first (class totals 0, then no value
    block and no child yet, -1, in its ``card[a] + slots[a]`` slots): ``(data, root, cells used)``."""
    root, size = _root_offsets(card, C, slots)
    used = int(size.sum())
    data = np.zeros(max(4 * used, 1024), dtype=np.int64)
    offset = np.arange(used, dtype=np.int64) - np.repeat(root, size)
    data[:used][offset >= C] = -1
    return data, root, used


class TrieAccumulator:
    """The context tries block by block: :meth:`add` blocks of codes, :meth:`merge` the tries of
    other rows (integers, so any split and order of the rows gives the same counts), :meth:`result`.

    Memory is one block per distinct context seen (see the module docstring), not per row.
    """

    def __init__(self, cardinalities, n_classes: int, parents: tuple[tuple[int, ...], ...]):
        card = np.ascontiguousarray(cardinalities, dtype=np.int64)
        C = int(n_classes)
        n_attr = card.shape[0]
        # Step 1: parent lists as CSR arrays
        par_ptr, par_idx = _parent_lists(parents)
        # Step 2: one root block per attribute (the class-only context), laid out first, with a child slot
        # for each value of its first parent
        data, root, used = _root_blocks(card, C, _first_parent_slots(card, parents))
        self.card, self.n_classes = card, C
        self.par_ptr, self.par_idx, self.root = par_ptr, par_idx, root
        self.data = data
        self.sizes = np.array([n_attr, used], dtype=np.int64)  # [nodes, cells used]

    def add(self, X: np.ndarray, y: np.ndarray) -> None:
        """Count one block of codes (already checked by the counting pass)."""
        self.data = trie_insert_block(X, y, self.card, self.n_classes, self.par_ptr, self.par_idx, self.root,
                                      self.data, self.sizes)

    def merge(self, other: "TrieAccumulator") -> "TrieAccumulator":
        """Add the tries of ``other`` (the same attributes, classes and parents) to these."""
        if not (np.array_equal(self.card, other.card) and self.n_classes == other.n_classes
                and np.array_equal(self.par_ptr, other.par_ptr) and np.array_equal(self.par_idx, other.par_idx)):
            raise ValueError("cannot merge context tries of different attributes, classes or parents")
        self.data = trie_merge(self.card, self.n_classes, self.par_ptr, self.par_idx, self.root, self.data,
                               self.sizes, other.data[: int(other.sizes[1])])
        return self

    def result(self, canonical: bool = False) -> ContextTries:
        """The tries: as counted (their layout follows the order the contexts were first seen in,
        which nothing downstream reads: the passes and the cell counts read counts), or with
        ``canonical`` laid out canonically, the same array however the rows were split."""
        used = int(self.sizes[1])
        if canonical:
            data = trie_canonical(self.card, self.n_classes, self.par_ptr, self.par_idx, self.root, self.data, used)
        else:
            data = self.data[:used]
        contexts = trie_class_contexts(self.card, self.n_classes, self.par_ptr, self.par_idx, self.root, data)
        return ContextTries(par_ptr=self.par_ptr, par_idx=self.par_idx, root=self.root, data=data,
                            n_nodes=int(self.sizes[0]), class_contexts=contexts)

    def __getstate__(self):  # sent between processes without the unused capacity
        state = self.__dict__.copy()
        state["data"] = self.data[: int(self.sizes[1])]
        return state


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
        ``(X_block, y_block)`` pairs (data streamed from disk).

    Returns
    -------
    ContextTries
        As counted (:meth:`TrieAccumulator.result`): the same counts whatever the order of the rows.
    """
    acc = TrieAccumulator(stats.cardinalities, stats.n_classes, parents)
    for Xb, yb in (blocks or _in_memory(X, y))():
        cancel.check()
        acc.add(Xb, yb)
    return acc.result()


class LooSums:
    """The leave-one-out squared errors of every (n*, k*), summed exactly in fixed point, so the
    same whatever the order or split of the rows (:mod:`hdp_plugin.structure.loo_kernels`).

    ``acc[0]`` whole units, ``acc[1..2]`` two 62-bit digits below the point, ``acc[3]`` the rows
    whose error is not a number; each of shape ``(n_order + 1, max_k + 1)``.
    """

    def __init__(self, n_order: int, max_k: int):
        self.acc = np.zeros((FIXED_DIGITS + 2, int(n_order) + 1, int(max_k) + 1), dtype=np.int64)
        #: the rows scored (all, or the subset of :attr:`Smoothing.rows`)
        self.rows = 0

    def merge(self, other: "LooSums") -> "LooSums":
        if self.acc.shape != other.acc.shape:
            raise ValueError(f"cannot merge leave-one-out sums of shapes {self.acc.shape} and {other.acc.shape}")
        fixed_merge(self.acc, other.acc)
        self.rows += other.rows
        return self

    def totals(self) -> np.ndarray:
        """The sums as doubles, the smallest digit first (NaN where a row's error was not a number)."""
        tot = np.zeros(self.acc.shape[1:])
        for j in range(FIXED_DIGITS, 0, -1):
            tot += self.acc[j].astype(np.float64) * 2.0 ** (-FIXED_BITS * j)
        tot += self.acc[0].astype(np.float64)
        tot[self.acc[FIXED_DIGITS + 1] > 0] = np.nan
        return tot

    def rmse(self, n_rows: int | None = None) -> np.ndarray:
        """``sqrt(sum / n_rows)``, the leave-one-out RMSE grid; by default over the rows scored."""
        return np.sqrt(self.totals() / max(int(self.rows if n_rows is None else n_rows), 1))


class LooAccumulator:
    """Leave-one-out sums block by block: :meth:`add` blocks of codes to :attr:`sums` (a
    :class:`LooSums`, which is all that needs to travel: the tries stay where they are)."""

    def __init__(self, tries: ContextTries, cardinalities, n_classes: int, n_y: np.ndarray, n_rows: int,
                 order: np.ndarray, max_k: int, m: float | Smoothing = config.DEFAULT_M):
        self.tries = tries
        self.order = np.ascontiguousarray(order, dtype=np.int64)
        self.card = np.ascontiguousarray(cardinalities, dtype=np.int64)
        self.n_y = np.ascontiguousarray(n_y, dtype=np.int64)
        self.n_classes, self.n_rows, self.max_k, self.smoothing = int(n_classes), float(n_rows), int(max_k), smoothing(m)
        self.sums = LooSums(len(self.order), max_k)
        rows = self.smoothing.rows
        self.keep_below = None
        if rows and n_rows > rows:
            self.keep_below = np.uint64(min(int(rows / float(n_rows) * 2.0**64), 2**64 - 1))
            self.salt = _row_hash(self.order[None, :], np.zeros(1, np.int64), np.uint64(len(self.order)))[0]

    def add(self, X: np.ndarray, y: np.ndarray) -> None:
        """Add the squared errors of one block of rows (codes already checked): all of them, or those of
        the subset (:attr:`Smoothing.rows`)."""
        if self.keep_below is not None:
            keep = _row_hash(X, y, self.salt) < self.keep_below
            X, y = X[keep], y[keep]
        self.sums.rows += int(y.shape[0])
        t = self.tries
        loo_squared_errors_block(
            X, y, self.card, self.n_classes, self.order, t.par_ptr, t.par_idx, t.root, t.data, self.n_y,
            self.n_rows, self.smoothing.m, self.smoothing.hierarchical, self.max_k, self.sums.acc,
        )  # fmt: skip


def _row_hash(X: np.ndarray, y: np.ndarray, salt: np.uint64) -> np.ndarray:
    """A 64-bit hash of each row's codes and class, salted: splitmix64's mix after each word."""
    h = mix64(np.full(y.shape[0], salt, np.uint64) ^ y.astype(np.uint64))
    for j in range(X.shape[1]):
        h = mix64(h ^ X[:, j].astype(np.uint64))
    return h


def loo_sums(blocks, tries: ContextTries, cardinalities, n_classes: int, n_y: np.ndarray, n_rows: int,
             order: np.ndarray, max_k: int, m: float | Smoothing = config.DEFAULT_M) -> LooSums:
    """The leave-one-out sums of the rows of ``blocks`` (a function returning an iterator of
    ``(X, y)`` code blocks), against the tries, class counts ``n_y`` and ``n_rows`` of all the rows."""
    acc = LooAccumulator(tries, cardinalities, n_classes, n_y, n_rows, order, max_k, m)
    for Xb, yb in blocks():
        cancel.check()
        acc.add(Xb, yb)
    return acc.sums


def loo_rmse_grid(
    X: np.ndarray,
    y: np.ndarray,
    stats: CountStatistics,
    tries: ContextTries,
    order: np.ndarray,
    max_k: int,
    m: float | Smoothing = config.DEFAULT_M,
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
    m : float or Smoothing, default 1
        The m of the m-estimates p_x = (n_x + m/|X|)/(N + m) (or hierarchical ones: :class:`Smoothing`).
    blocks : callable, optional
        As for :func:`build_context_tries`.

    Returns
    -------
    ndarray of shape (n_order + 1, max_k + 1)
        ``rmse[n*, k*] = sqrt(mean over rows of (1 - p(y_i | x_i))^2)``, the squared errors summed
        exactly in fixed point (:class:`LooSums`); row 0 is the class prior alone (the same in
        every column).
    """
    sums = loo_sums(blocks or _in_memory(X, y), tries, stats.cardinalities, stats.n_classes, stats.n_y,
                    stats.n_rows, order, max_k, m)
    return sums.rmse()


def _in_memory(X, y):
    """The ``blocks`` function of in-memory codes: views of consecutive row blocks, each sized to take
    about ``config.STRUCTURE_BLOCK_SECONDS`` at the pace of the one before (from 1024 rows up to
    ``config.ROW_BLOCK``), so that a cancel is seen between them (:mod:`hdp_plugin.runtime.cancel`) however
    slow a row is; the passes' results do not depend on how the rows are split."""
    def blocks():
        n, start, size = X.shape[0], 0, min(1024, config.ROW_BLOCK)
        while start < n:
            stop = min(start + size, n)
            took = time.perf_counter()
            yield X[start:stop], y[start:stop]
            took = time.perf_counter() - took  # the consumer's time on this block
            if took > 0:
                size = int(max(1024, min(config.ROW_BLOCK, (stop - start) * config.STRUCTURE_BLOCK_SECONDS / took)))
            start = stop

    return blocks


class RowPasses:
    """SkDB's two passes (tries, then leave-one-out) over rows in this process: in memory (``X``,
    ``y``) or streamed (``blocks``). An engine may give :func:`selective_kdb` another object with the
    same two methods (:class:`hdp_plugin.distributed.dask_engine.DaskEngine` maps them over
    partitions and merges the results)."""

    def __init__(self, X=None, y=None, blocks=None):
        self.blocks = blocks or _in_memory(X, y)

    def tries(self, stats: CountStatistics, parents) -> ContextTries:
        return build_context_tries(None, None, stats, parents, blocks=self.blocks)

    def loo(self, stats: CountStatistics, tries: ContextTries, order, max_k: int, m: float | Smoothing) -> LooSums:
        return loo_sums(self.blocks, tries, stats.cardinalities, stats.n_classes, stats.n_y, stats.n_rows,
                        order, max_k, m)


def select_prefix_and_k(rmse: np.ndarray, allowed: np.ndarray | None = None) -> tuple[int, int]:
    """(n*, k*) of the lowest RMSE, accepting strict improvements only.

    Starts from the class prior (``rmse[0, 0]``) and scans n* ascending, then k* ascending, so a
    tie keeps the smaller model. ``(0, 0)`` means the class prior is the model. ``allowed`` (a
    boolean grid of the same shape) leaves out the models it marks False (those too large); the
    winner is then the unconstrained one whenever that is allowed.
    """
    best = rmse[0, 0]
    n_star, k_star = 0, 0
    for n in range(1, rmse.shape[0]):
        for k in range(rmse.shape[1]):
            if allowed is not None and not allowed[n, k]:
                continue
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
    m: float | Smoothing = config.DEFAULT_M,
    order=None,
    blocks=None,
    passes=None,
    max_cells: int | None = None,
) -> Structure:
    """Selective kDB (Martinez, Webb, Chen and Zaidi 2016).

    From kDB-K, choose the number n* of attributes (a prefix of the MI order) and k* <= K that
    minimise the leave-one-out RMSE on the training data, RMSE = sqrt(mean over rows of
    (1 - p(true class))^2), with m-estimates (flat, as published, or hierarchical: :class:`Smoothing`)
    and the class prior (n_y + 1/C)/(N + 1), all with the row left out, and the back-off of the
    published SkDB (see
    :func:`~hdp_plugin.structure.loo_kernels.loo_squared_errors_block`). Only a strict
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
    m : float or Smoothing, default 1
        The m of the (flat) m-estimates used by the selection, or a :class:`Smoothing`.
    order : sequence of int, optional
        The attribute order whose prefixes are candidates (an ESKDB member's drawn order,
        possibly a subset of the attributes); default decreasing MI.
    blocks : callable, optional
        Rows streamed instead of ``X`` and ``y`` (see :func:`build_context_tries`).
    passes : optional
        Instead of ``X``, ``y`` and ``blocks``: an object whose ``tries(stats, parents)`` and
        ``loo(stats, tries, order, max_k, m)`` run the two passes (as :class:`RowPasses` does),
        e.g. on a cluster.
    max_cells : int, optional
        The most table cells the selected model's context trees may have: when the model of the
        lowest RMSE has more, the best of those within the limit is chosen (``info["cell_limited"]``
        records the one passed over). Counted exactly from the tries, as the trees will be.

    Returns
    -------
    Structure
        ``kind="skdb"``, ``k=k*``; ``kept`` is the first n* attributes of the MI order
        (ascending), ``()`` when the class prior wins. ``info`` holds ``rmse`` (the
        ``(n + 1) x (K + 1)`` grid as nested lists, row 0 the class prior), ``n_star``,
        ``k_star``, ``max_k`` (K, capped at the attributes of the order less one), ``m`` and, for
        hierarchical m-estimates, ``"hierarchical": true``.

    References
    ----------
    .. [1] A. M. Martinez, G. I. Webb, S. Chen and N. A. Zaidi, "Scalable learning of Bayesian
       network classifiers", Journal of Machine Learning Research 17(44) (2016) 1-35.
    .. [2] M. Sahami, "Learning limited dependence Bayesian classifiers", KDD-96, 335-338.
    """
    max_k = check_k(max_k)
    # Step 1: kDB-K, the largest model considered (K capped at the attributes of the order less one)
    full = kdb(stats, max_k, order=order)
    max_k = full.k
    passes = passes or RowPasses(X, y, blocks)
    # Step 2: second pass, the counts of every context the selection can use
    tries = passes.tries(stats, full.parents)
    # Step 3: third pass, leave-one-out RMSE of every (n*, k*), summed exactly
    sums = passes.loo(stats, tries, np.asarray(full.order, dtype=np.int64), max_k, m)
    # Step 4: the smallest model with the lowest RMSE (within the cell limit)
    return _selected(stats, full, tries, sums, max_k, m, max_cells)


def selective_kdbs(stats: list, max_k: int, *, m: float | Smoothing, orders: list, passes,
                   max_cells: int | None = None) -> list[Structure]:
    """:func:`selective_kdb` of several models at once (an ESKDB's members), each on its own counts
    ``stats[e]`` and order ``orders[e]``, with the two passes shared: ``passes.tries(stats, parents)``
    returns every model's tries (``parents[e]`` the model's kDB-K parents) and
    ``passes.loo(stats, tries, orders, max_k, m)`` every model's :class:`LooSums`, so an engine reads
    the rows twice for all of them. Each model's structure is :func:`selective_kdb`'s, bit for bit."""
    max_k = check_k(max_k)
    fulls = [kdb(s, max_k, order=o) for s, o in zip(stats, orders)]
    tries = passes.tries(stats, [f.parents for f in fulls])
    sums = passes.loo(stats, tries, [np.asarray(f.order, dtype=np.int64) for f in fulls], max_k, m)
    return [_selected(*args, max_k, m, max_cells) for args in zip(stats, fulls, tries, sums)]


def tree_cells(stats: CountStatistics, tries: ContextTries, max_k: int) -> np.ndarray:
    """``cells[a, k]``: the table cells of attribute ``a``'s context tree with its first ``k`` parents of
    the tries (at most as many as it has), exactly as :func:`~hdp_plugin.hdp.trees.build_trees` counts
    them: the attribute's values times the nodes, the root and every (class, context) with a row."""
    card = np.asarray(stats.cardinalities, dtype=np.int64)
    ctx = np.zeros((card.shape[0], int(max_k) + 1), np.int64)
    depth = min(tries.class_contexts.shape[1], ctx.shape[1])
    ctx[:, :depth] = tries.class_contexts[:, :depth]
    return card[:, None] * (1 + np.cumsum(ctx, axis=1))


def _selected(stats: CountStatistics, full: Structure, tries: ContextTries, sums: LooSums, max_k: int,
              m: float | Smoothing, max_cells: int | None = None) -> Structure:
    """The SkDB of the lowest leave-one-out RMSE (:func:`select_prefix_and_k`) within kDB-K ``full``,
    among the models of at most ``max_cells`` table cells if given."""
    sm = smoothing(m)
    rmse = sums.rmse()
    n_star, k_star = select_prefix_and_k(rmse)
    limited = None
    if max_cells is not None:
        cells = tree_cells(stats, tries, max_k)[np.asarray(full.order, dtype=np.int64)]
        grid = np.vstack([np.zeros((1, max_k + 1), np.int64), np.cumsum(cells, axis=0)])
        if grid[n_star, k_star] > max_cells:  # the best is too large: the best of those that fit
            limited = {"n_star": n_star, "k_star": k_star, "cells": int(grid[n_star, k_star]),
                       "max_cells": int(max_cells)}
            n_star, k_star = select_prefix_and_k(rmse, grid <= max_cells)
            log.info("SkDB: the best model (n* = %d, k* = %d) has %d table cells, more than %d: took n* = %d, "
                     "k* = %d (%d cells)", limited["n_star"], limited["k_star"], limited["cells"], max_cells,
                     n_star, k_star, grid[n_star, k_star])
    order = full.order
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
            "m": sm.m,
            **({"hierarchical": True} if sm.hierarchical else {}),
            "n_trie_nodes": tries.n_nodes,
            **({"loo_rows": sums.rows} if sums.rows != stats.n_rows else {}),
            **({"cell_limited": limited} if limited else {}),
        },
    )
