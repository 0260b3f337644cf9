"""Probability tables of fitted context trees, and the baseline estimators.

A :class:`ProbabilityTables` holds one network's estimates sparsely: per node of every context tree
the log-estimates of the values its training rows hold and a back-off weight for the others, plus the
class prior. This module is plain numpy; prediction (a numba kernel) is
:mod:`hdp_plugin.hdp.predict`, whose names are importable from here too.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .._lazy import lazy_names
from ..errors import ParameterError
from .trees import ContextTrees

#: prediction lives in :mod:`.predict` (numba kernels); its names are importable from here too, and
#: loaded on first use (PEP 562), so that reading a model file (``hdp-bnc info``) does not load numba
_PREDICT = ("PREDICT_BLOCK", "log_posterior_rows", "predict_log_proba")


@dataclass
class ProbabilityTables:
    """One network's estimates, sparse: every node's observed cells, its back-off weight, the class prior.

    The trees are laid out as :class:`~hdp_plugin.hdp.trees.ContextTrees` lays them out (one per kept
    attribute, a tree's nodes contiguous and breadth-first, a node after its parent, a node's children
    contiguous and sorted by branch value), without a cell for every value: a node holds the values the
    training data has in its context (``cell_value``, sorted, with the log of their estimates,
    ``log_probs``), and the log of its **back-off weight** ``w``. A value ``x`` the node has no cell
    for is estimated as ``w`` times the node's back-off distribution at ``x``: its parent's estimate
    (HDP, ``backoff_to_parent``; the parent's own back-off applies in turn, and a root backs off to the
    uniform distribution), or the uniform distribution (the baseline estimators). ``w`` makes the node's
    distribution sum to one (docs/method.md section 4).

    Attributes
    ----------
    attrs, tree_card : ndarray (n_trees,) int64
        Per tree its attribute and that attribute's cardinality.
    tree_node_start : ndarray (n_trees + 1,) int64
        The nodes of tree ``t`` are ``tree_node_start[t] .. tree_node_start[t + 1] - 1``; the first is its root.
    tree_var_start, branch_vars : ndarray int64
        The branching variables of tree ``t`` by depth (depth 1 first; -1 the class, else an attribute)
        are ``branch_vars[tree_var_start[t] : tree_var_start[t + 1]]``.
    node_parent, node_depth, node_branch : ndarray (n_nodes,) int64
        Every node's parent (-1 at a root), depth, and the value of its parent's branching variable
        that leads to it (-1 at a root).
    child_count : ndarray (n_nodes,) int64
        Every node's number of children (they follow the children of the nodes before it).
    cell_start : ndarray (n_nodes + 1,) int64
        Node ``i``'s cells are ``cell_start[i] .. cell_start[i + 1] - 1`` of ``cell_value`` and ``log_probs``.
    cell_value : ndarray (n_observed,) int64
        The value of every cell, increasing within a node.
    log_probs : ndarray (n_observed,) float64
        The log of every cell's estimate.
    log_backoff : ndarray (n_nodes,) float64
        The log of every node's back-off weight, in [-inf, 0]: -inf where the estimate of an unseen value
        is 0 (maximum likelihood), 0 where a node has a cell for every value.
    log_prior : ndarray (n_classes,) float64
        The class prior's logs.
    backoff_to_parent : bool
        A node backs off to its parent (HDP), or to the uniform distribution (the baselines).
    n_classes : int
    cardinalities : ndarray (n_attributes,) int64
        The network's attributes' cardinalities.
    """

    attrs: np.ndarray
    tree_card: np.ndarray
    tree_node_start: np.ndarray
    tree_var_start: np.ndarray
    branch_vars: np.ndarray
    node_parent: np.ndarray
    node_depth: np.ndarray
    node_branch: np.ndarray
    child_count: np.ndarray
    cell_start: np.ndarray
    cell_value: np.ndarray
    log_probs: np.ndarray
    log_backoff: np.ndarray
    log_prior: np.ndarray
    backoff_to_parent: bool
    n_classes: int
    cardinalities: np.ndarray

    @property
    def n_trees(self) -> int:
        return int(self.attrs.shape[0])

    @property
    def n_nodes(self) -> int:
        return int(self.node_parent.shape[0])

    @property
    def n_observed(self) -> int:
        """The cells stored: the (context, value) pairs the training data holds."""
        return int(self.cell_value.shape[0])

    @property
    def n_cells(self) -> int:
        """The cells of the dense tables the sparse ones stand for: every node times its attribute's values."""
        return int((np.diff(self.tree_node_start) * self.tree_card).sum())

    @property
    def node_tree(self) -> np.ndarray:
        """Every node's tree."""
        return np.repeat(np.arange(self.n_trees, dtype=np.int64), np.diff(self.tree_node_start))

    @classmethod
    def from_dense(cls, trees: ContextTrees, log_probs: np.ndarray, log_prior: np.ndarray, *,
                   backoff_to_parent: bool) -> "ProbabilityTables":
        """The sparse tables of a fit's dense ones: every cell of ``trees`` with a data count (at an
        internal node: in its subtree) keeps its estimate; every node gets the back-off weight that
        gives its other values their dense estimates' total, shared out as its back-off distribution
        shares it (exactly the dense estimates for the baselines, and for a single HDP sample)."""
        from .tree_kernels import sparse_cells

        if np.shape(log_probs) != (trees.n_cells,):
            raise ValueError(f"from_dense needs a log-probability per cell of the trees ({trees.n_cells}), "
                             f"got an array of shape {np.shape(log_probs)}")
        raw = trees.raw_counts(compiled=True)
        card = trees.tree_card[trees.node_tree]
        cell_start = np.zeros(trees.n_nodes + 1, np.int64)
        np.cumsum(np.add.reduceat((raw > 0).astype(np.int64), trees.node_cell_start[:-1])
                  if trees.n_nodes else np.zeros(0, np.int64), out=cell_start[1:])
        n_obs = int(cell_start[-1])
        cell_value = np.empty(n_obs, np.int64)
        sparse_lp = np.empty(n_obs, np.float64)
        log_backoff = np.empty(trees.n_nodes, np.float64)
        sparse_cells(np.ascontiguousarray(log_probs, np.float64), raw, trees.node_parent, trees.node_cell_start,
                     np.ascontiguousarray(card, np.int64), bool(backoff_to_parent), cell_start, cell_value,
                     sparse_lp, log_backoff)
        return cls._of_trees(trees, cell_start, cell_value, sparse_lp, log_backoff, log_prior, backoff_to_parent)

    @classmethod
    def _of_trees(cls, trees: ContextTrees, cell_start, cell_value, log_probs, log_backoff, log_prior,
                  backoff_to_parent: bool) -> "ProbabilityTables":
        """The tables of ``trees``' layout with these sparse cells and back-off weights."""
        return cls(attrs=trees.attrs, tree_card=trees.tree_card, tree_node_start=trees.tree_node_start,
                   tree_var_start=trees.tree_var_start, branch_vars=trees.branch_vars,
                   node_parent=trees.node_parent, node_depth=trees.node_depth, node_branch=trees.node_branch,
                   child_count=children_of(trees.node_parent), cell_start=cell_start, cell_value=cell_value,
                   log_probs=log_probs, log_backoff=log_backoff, log_prior=np.asarray(log_prior, np.float64),
                   backoff_to_parent=bool(backoff_to_parent), n_classes=int(trees.n_classes),
                   cardinalities=trees.cardinalities)

    @classmethod
    def from_sampler(cls, trees: ContextTrees, cells, probabilities: np.ndarray,
                     log_prior: np.ndarray) -> "ProbabilityTables":
        """The HDP tables of ``trees`` from the sampler's averaged cells (``cells``, a
        :class:`~hdp_plugin.hdp.sampler.SamplerCells`, and their ``probabilities``): every observed
        value keeps its estimate, and every node gets the back-off weight that gives its other values
        their averaged total, shared out as the parent's tables share it."""
        from .tree_kernels import observed_tables

        node_start = np.asarray(cells.node_cell_start, np.int64)
        rest = node_start[1:] - 1
        observed = np.ones(cells.n_cells, np.bool_)
        observed[rest] = False
        cell_log_prob = np.empty(cells.n_cells - trees.n_nodes, np.float64)
        log_backoff = np.empty(trees.n_nodes, np.float64)
        observed_tables(np.ascontiguousarray(probabilities, np.float64), np.asarray(trees.node_parent, np.int64),
                        np.ascontiguousarray(trees.tree_card[trees.node_tree], np.int64), node_start,
                        np.asarray(cells.cell_value, np.int64), cell_log_prob, log_backoff)
        return cls._of_trees(trees, node_start - np.arange(trees.n_nodes + 1),
                             np.asarray(cells.cell_value, np.int64)[observed], cell_log_prob, log_backoff, log_prior,
                             True)

    def dense_view_entries(self) -> int:
        """The entries of :meth:`dense_view`: a log-estimate per value of every node, a child slot per value of
        the variable every inner node branches on (counted once, kept with the tables)."""
        entries = self.__dict__.get("_dense_view_entries")
        if entries is not None:
            return entries
        node_tree = self.node_tree
        var = self.tree_var_start[node_tree] + self.node_depth
        has = (var < self.tree_var_start[node_tree + 1]) & (self.child_count > 0)
        bv = self.branch_vars[np.where(has, var, 0)] if self.branch_vars.size else np.zeros(self.n_nodes, np.int64)
        radix = np.where(bv < 0, self.n_classes, self.cardinalities[np.maximum(bv, 0)])
        entries = self.n_cells + int(np.where(has, radix, 0).sum())
        self.__dict__["_dense_view_entries"] = entries
        return entries

    def dense_view(self) -> tuple:
        """``(child_start, child_table, node_cell_start, log_probs)``: the tables as prediction reads them,
        every node's children in a table indexed by branch value and every cell's log-estimate (a value the
        node has no cell for: its back-off weight times its back-off distribution's). Made on first use and
        kept with the tables: a direct index per step keeps prediction as fast as on a fit's dense tables."""
        view = self.__dict__.get("_dense_view")
        if view is None:
            from .tree_kernels import dense_lookup

            node_tree = self.node_tree
            var = self.tree_var_start[node_tree] + self.node_depth  # the variable a node's children branch on
            has = var < self.tree_var_start[node_tree + 1]
            bv = self.branch_vars[np.where(has, var, 0)] if self.branch_vars.size else np.zeros(self.n_nodes, np.int64)
            radix = np.where(has, np.where(bv < 0, self.n_classes, self.cardinalities[np.maximum(bv, 0)]), 0)
            view = dense_lookup(self.node_parent, self.node_branch,
                                self.tree_card[node_tree].astype(np.int64), radix.astype(np.int64), self.child_count,
                                self.cell_start, self.cell_value, self.log_probs, self.log_backoff,
                                bool(self.backoff_to_parent))
            self.__dict__["_dense_view"] = view
        return view

    def dense_log_probs(self) -> np.ndarray:
        """Every cell's log-estimate, a node's values ``0 .. card - 1`` in a row, nodes in order (the
        dense layout of :class:`~hdp_plugin.hdp.trees.ContextTrees`): what prediction reads."""
        return self.dense_view()[3]


def children_of(node_parent: np.ndarray) -> np.ndarray:
    """Every node's number of children, from the nodes' parents (-1 at a root)."""
    return np.bincount(node_parent[node_parent >= 0], minlength=node_parent.shape[0]).astype(np.int64)


def class_prior(y: np.ndarray, n_classes: int) -> np.ndarray:
    """The m-estimate (n_y + 1/C) / (N + 1) of the class prior."""
    return class_prior_of_counts(np.bincount(y, minlength=n_classes))


def class_prior_of_counts(n_y: np.ndarray) -> np.ndarray:
    """:func:`class_prior` from the class counts ``n_y`` (a counting pass's)."""
    counts = np.asarray(n_y).astype(np.float64)
    return (counts + 1.0 / counts.shape[0]) / (counts.sum() + 1.0)


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


__getattr__ = lazy_names(globals(), dict.fromkeys(_PREDICT, ".predict"))[0]
