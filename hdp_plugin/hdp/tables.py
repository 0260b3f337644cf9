"""Probability tables of fitted context trees, and the baseline estimators.

A :class:`ProbabilityTables` holds, for every cell of every tree, the log of its estimated
probability, plus the class prior. This module is plain numpy; prediction (a numba kernel) is
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
    """Log-probability of every cell, and the class prior (both float64)."""

    trees: ContextTrees
    log_probs: np.ndarray  # (n_cells,)
    log_prior: np.ndarray  # (n_classes,)


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
