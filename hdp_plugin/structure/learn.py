"""The entry point of structure learning: arrays in, a :class:`Structure` out."""

from __future__ import annotations

import numpy as np

from .. import config
from ..errors import DataError, ParameterError
from .base import Structure
from .counts import count_statistics, needs_pairs, validate_inputs
from .learners import check_k, kdb, naive_bayes, tan
from .selective import selective_kdb


def learn_structure(
    X: np.ndarray,
    y: np.ndarray,
    cardinalities: np.ndarray,
    n_classes: int,
    *,
    kind: str = "kdb",
    k: int = config.DEFAULT_K,
) -> Structure:
    """Learn a Bayesian network classifier structure from integer codes.

    Parameters
    ----------
    X : ndarray of shape (n_rows, n_attributes), unsigned integer codes
        All attributes categorical; missing is one more code. Streamed, never copied.
    y : ndarray of shape (n_rows,), integer
        Class codes ``0 .. n_classes - 1`` (no missing class).
    cardinalities : ndarray of shape (n_attributes,)
        Codes per attribute, the missing slot included.
    n_classes : int
        Number of classes C >= 1.
    kind : {"nb", "tan", "kdb", "skdb"}, default "kdb"
        The structure learner.
    k : int, default 5
        kDB's maximum number of attribute parents; for ``"skdb"`` the maximum K of the
        selection. Ignored by ``"nb"`` and ``"tan"`` (still checked).

    Returns
    -------
    Structure

    Raises
    ------
    ParameterError
        An unknown ``kind``, a bad ``k`` or arrays that break the contract.
    TooLargeError
        TAN, kDB or SkDB whose pairwise statistics would exceed
        :data:`hdp_plugin.config.MAX_PAIR_BYTES` (naive Bayes counts no pairs).
    DataError
        No rows, or codes outside their range.

    References
    ----------
    .. [1] N. Friedman, D. Geiger and M. Goldszmidt, "Bayesian network classifiers", Machine
       Learning 29 (1997) 131-163.
    .. [2] M. Sahami, "Learning limited dependence Bayesian classifiers", KDD-96, 335-338.
    .. [3] A. M. Martinez, G. I. Webb, S. Chen and N. A. Zaidi, "Scalable learning of Bayesian
       network classifiers", Journal of Machine Learning Research 17(44) (2016) 1-35.
    """
    if kind not in config.NETWORK_STRUCTURES:
        raise ParameterError(f"kind must be one of {', '.join(config.NETWORK_STRUCTURES)}, got {kind!r}")
    k = check_k(k)
    X, y, card, n_classes = validate_inputs(X, y, cardinalities, n_classes)
    if X.shape[0] == 0:
        raise DataError("cannot learn a structure from 0 rows")
    stats = count_statistics(X, y, card, n_classes, pairs=needs_pairs(kind, k))
    return structure_from_counts(kind, stats, k, lambda st, kk: selective_kdb(X, y, st, kk))


def network_k(kind: str, k: int) -> int:
    """The k a network of ``kind`` is learnt with: 0 for naive Bayes, 1 for TAN, else ``k`` (kDB's
    parents, SkDB's largest K)."""
    return 0 if kind == "nb" else (1 if kind == "tan" else int(k))


def structure_from_counts(kind: str, stats, k: int, select) -> Structure:
    """The structure of ``kind`` from the counts ``stats`` (:class:`~hdp_plugin.structure.counts.CountStatistics`);
    ``select(stats, k)`` runs SkDB's tries and leave-one-out passes over the rows (in memory, or over
    batches on an engine) and is called for ``"skdb"`` only."""
    if kind == "nb":
        return naive_bayes(stats)
    if kind == "tan":
        return tan(stats)
    if kind == "kdb":
        return kdb(stats, k)
    return select(stats, k)
