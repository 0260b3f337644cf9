"""Metrics and cross-validation as in the paper's evaluation code (docs/method.md section 6)."""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field

import numpy as np

from ..data import Dataset
from ..data.dataset import note_missing_class
from ..errors import EmptyColumnWarning, HDPError, ParameterError


def rmse(proba: np.ndarray, y: np.ndarray) -> float:
    """sqrt( sum over rows i and classes c of (p(c|x_i) - 1[c = y_i])^2 / (C N) )."""
    n, c = proba.shape
    onehot = np.zeros_like(proba)
    onehot[np.arange(n), y] = 1.0
    return float(np.sqrt(np.sum((proba - onehot) ** 2) / (c * n)))


def zero_one_loss(proba: np.ndarray, y: np.ndarray) -> float:
    """Fraction of rows whose arg-max class (first maximum on ties) is wrong."""
    return float(np.mean(np.argmax(proba, axis=1) != y))


def log_loss(proba: np.ndarray, y: np.ndarray) -> float:
    """Mean of -log p(y_i | x_i) (infinite when a true class gets probability 0)."""
    p = proba[np.arange(proba.shape[0]), y]
    with np.errstate(divide="ignore"):
        return float(-np.mean(np.log(p)))


def stratified_folds(y: np.ndarray, n_folds: int, seed: int) -> np.ndarray:
    """Fold number of every row: rows of each class shuffled and dealt round-robin."""
    if n_folds < 2:
        raise ParameterError(f"folds must be >= 2, got {n_folds!r}")
    rng = np.random.default_rng(seed)
    fold = np.empty(y.shape[0], np.int64)
    offset = 0
    for c in np.unique(y):
        idx = np.nonzero(y == c)[0]
        idx = idx[rng.permutation(idx.size)]
        fold[idx] = (np.arange(idx.size) + offset) % n_folds
        offset += idx.size
    return fold


@dataclass
class CVResult:
    """Pooled metrics of one configuration over all test folds."""

    rmse: float
    zero_one: float
    log_loss: float
    train_seconds: float
    test_seconds: float
    folds: list = field(default_factory=list)


def warm_up(make_classifier, data: Dataset, *, seed: int = 0, rows_per_class: int = 8) -> float:
    """Fit and predict once on a few rows of ``data``, untimed by :func:`cross_validate`; return the seconds.

    The first fit of a process compiles numba's kernels, or loads them from numba's cache, which takes
    seconds where the fit itself may take milliseconds. A fit on ``rows_per_class`` rows of every class,
    with the same classifier, settles that before the folds are timed, so that a table's first row is
    timed as its others are.
    """
    data, _ = data.drop_missing_class()
    if data.n_rows == 0:
        return 0.0
    rng = np.random.default_rng(seed)
    rows = np.concatenate([rng.permutation(np.nonzero(data.y == c)[0])[:rows_per_class] for c in np.unique(data.y)])
    small = data.take(np.sort(rows))
    t0 = time.perf_counter()
    try:
        make_classifier().fit(small).predict_proba(small)
    except HDPError:  # a few rows may not support what the whole data does; the folds say so if they fail
        pass
    return time.perf_counter() - t0


def cross_validate(make_classifier, data: Dataset, *, n_folds: int = 2, repeats: int = 1,
                   seed: int = 0, progress=None) -> CVResult:
    """Stratified k-fold cross-validation, repeated; ``repeats=5, n_folds=2`` is the paper's 5x2.

    Discretisation is learnt inside each training fold (the classifier does it in ``fit``).
    Metrics are averaged over the folds of all repeats; times are summed. ``progress`` is passed
    to every fold's ``fit``. Rows with a missing class are left out, with a
    :class:`~hdp_plugin.errors.DataNote` saying how many; a test fold's column with no value is not
    warned of (:class:`~hdp_plugin.errors.EmptyColumnWarning` is for data to predict).
    """
    data, dropped = data.drop_missing_class()
    note_missing_class(dropped, data.source)
    per_fold = []
    train_s = test_s = 0.0
    for r in range(repeats):
        fold = stratified_folds(data.y, n_folds, seed + r)
        for f in range(n_folds):
            train, test = data.take(fold != f), data.take(fold == f)
            clf = make_classifier()
            t0 = time.perf_counter()
            clf.fit(train, progress=progress)
            t1 = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", EmptyColumnWarning)
                proba = clf.predict_proba(test)
            t2 = time.perf_counter()
            train_s += t1 - t0
            test_s += t2 - t1
            per_fold.append((rmse(proba, test.y), zero_one_loss(proba, test.y), log_loss(proba, test.y)))
    arr = np.array(per_fold)
    return CVResult(float(arr[:, 0].mean()), float(arr[:, 1].mean()), float(arr[:, 2].mean()),
                    train_s, test_s, per_fold)
