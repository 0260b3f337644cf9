"""Cut points for one numeric attribute: supervised MDL, equal width, equal frequency.

These functions validate their input, drop missing values (NaN), sort, and call the kernels in
:mod:`hdp_plugin.preprocess.kernels`. They follow Weka 3.8's discretisation filters:

* :func:`mdl_cut_points` is ``weka.filters.supervised.attribute.Discretize`` with its defaults
  (Fayyad & Irani's MDL criterion, ``useBetterEncoding = false``);
* :func:`equal_width_cut_points` is ``weka.filters.unsupervised.attribute.Discretize -B bins``;
* :func:`equal_frequency_cut_points` is ``weka.filters.unsupervised.attribute.Discretize -F -B bins``.

A value ``v`` falls in the first bin ``b`` with ``v <= cut_points[b]``, or in the last bin
(:func:`assign_bins`).

References
----------
.. [1] U. M. Fayyad and K. B. Irani, "Multi-interval discretization of continuous-valued
   attributes for classification learning", Proc. 13th International Joint Conference on
   Artificial Intelligence (IJCAI), 1993, pp. 1022-1027.
.. [2] J. Dougherty, R. Kohavi and M. Sahami, "Supervised and unsupervised discretization of
   continuous features", Proc. 12th International Conference on Machine Learning (ICML), 1995,
   pp. 194-202.
"""

from __future__ import annotations

import numbers

import numpy as np

from ..errors import ParameterError
from . import kernels


def _as_values(values) -> np.ndarray:
    values = np.asarray(values)
    if values.ndim != 1:
        raise ParameterError(f"values must be one-dimensional, got shape {values.shape}")
    if values.dtype.kind not in "fiub":
        raise ParameterError(f"values must be numeric, got dtype {values.dtype}")
    return np.ascontiguousarray(values, dtype=np.float64)


def _check_bins(bins) -> int:
    if isinstance(bins, bool) or not isinstance(bins, numbers.Integral) or bins < 1:
        raise ParameterError(f"bins must be an integer >= 1, got {bins!r}")
    return int(bins)


def mdl_cut_points(values, y, n_classes: int) -> np.ndarray:
    """Supervised MDL cut points of one numeric attribute (Fayyad & Irani 1993), Weka-exact.

    Rows whose value is missing (NaN) or whose class is missing (negative) are ignored. The
    remaining rows are sorted by value; the boundary between two consecutive distinct values
    that minimises the class entropy of the two sides is kept if it passes the MDL criterion,
    and the search recurses on both sides.

    Parameters
    ----------
    values : array_like of shape (n_rows,), float
        The attribute's values; NaN for missing.
    y : array_like of shape (n_rows,), int
        Class codes ``0 .. n_classes - 1``; negative for a missing class.
    n_classes : int
        Number of classes.

    Returns
    -------
    ndarray of shape (n_cuts,), float64
        Cut points, ascending; empty when no split is accepted.

    Raises
    ------
    ParameterError
        If the shapes disagree or a class code is ``>= n_classes``.

    Notes
    -----
    Weka's defaults are followed exactly: the criterion charges ``log2(N - 1)`` bits for the cut
    point of a set of ``N`` rows (``useBetterEncoding = false``), entropies are computed as in
    ``weka.core.ContingencyTables`` in the same order of operations, and of several boundaries
    with the same least entropy the first (smallest) one wins. Cut points are therefore the very
    doubles Weka 3.8 computes.

    References
    ----------
    .. [1] U. M. Fayyad and K. B. Irani, "Multi-interval discretization of continuous-valued
       attributes for classification learning", Proc. 13th International Joint Conference on
       Artificial Intelligence (IJCAI), 1993, pp. 1022-1027.

    Examples
    --------
    >>> mdl_cut_points([1.0, 2.0, 3.0, 10.0, 11.0, 12.0] * 3, [0, 0, 0, 1, 1, 1] * 3, 2)
    array([6.5])
    """
    values = _as_values(values)
    y = np.asarray(y)
    if y.shape != values.shape:
        raise ParameterError(f"y must have the shape of values {values.shape}, got {y.shape}")
    if isinstance(n_classes, bool) or not isinstance(n_classes, numbers.Integral) or n_classes < 1:
        raise ParameterError(f"n_classes must be an integer >= 1, got {n_classes!r}")
    if y.size and y.dtype.kind not in "iu":
        raise ParameterError(f"y must hold integer class codes, got dtype {y.dtype}")
    y = y.astype(np.int64, copy=False)
    if y.size and int(y.max()) >= n_classes:
        raise ParameterError(f"class codes must be < n_classes={n_classes}, got {int(y.max())}")
    return _mdl_cut_points(values, y, int(n_classes))


def _mdl_cut_points(values: np.ndarray, y: np.ndarray, n_classes: int, xlogx: np.ndarray | None = None) -> np.ndarray:
    """:func:`mdl_cut_points` on checked arrays (float64 values, integer codes < n_classes).

    ``xlogx`` is a :func:`~hdp_plugin.preprocess.kernels.xlogx_table` covering ``len(values)``,
    shared by the attributes of one data set; made here when None.
    """
    keep = ~np.isnan(values) & (y >= 0)
    v = values[keep]
    c = y[keep]
    if v.shape[0] < 2:
        return np.empty(0, dtype=np.float64)
    # the order of tied values is irrelevant (cut points fall only between distinct values and
    # the counts there do not depend on it), so the fastest sort will do
    order = np.argsort(v)
    v = np.ascontiguousarray(v[order])
    c = np.ascontiguousarray(c[order])
    if xlogx is None or xlogx.shape[0] <= v.shape[0]:
        xlogx = kernels.xlogx_table(v.shape[0])
    return np.sort(kernels.mdl_cut_points_sorted(v, c, n_classes, xlogx))


def equal_width_cut_points(values, bins: int) -> np.ndarray:
    """Cut points of ``bins`` intervals of equal width over ``[min, max]`` of the values.

    As Weka's ``unsupervised.attribute.Discretize -B bins``: ``cut[i] = min + i * w`` for
    ``i = 1 .. bins - 1`` with ``w = (max - min) / bins``; no cut point when all values are equal
    or missing, or when ``bins == 1``.

    Parameters
    ----------
    values : array_like of shape (n_rows,), float
        The attribute's values; NaN for missing.
    bins : int
        Number of intervals, at least 1.

    Returns
    -------
    ndarray of shape (bins - 1,) or (0,), float64
        Cut points, ascending. Values below ``min`` or above ``max`` later fall in the first or
        last bin.

    References
    ----------
    .. [1] J. Dougherty, R. Kohavi and M. Sahami, "Supervised and unsupervised discretization of
       continuous features", Proc. 12th International Conference on Machine Learning (ICML),
       1995, pp. 194-202.

    Examples
    --------
    >>> equal_width_cut_points([0.0, 10.0, 5.0], 4)
    array([2.5, 5. , 7.5])
    """
    values = _as_values(values)
    bins = _check_bins(bins)
    present = values[~np.isnan(values)]
    if bins < 2 or present.size == 0:
        return np.empty(0, dtype=np.float64)
    lo = float(present.min())
    hi = float(present.max())
    width = (hi - lo) / bins
    if not width > 0 or not np.isfinite(width):
        return np.empty(0, dtype=np.float64)
    cuts = lo + width * np.arange(1, bins, dtype=np.float64)
    # a range near the resolution of float64 can repeat a cut point: keep each once
    return np.unique(cuts)


def equal_frequency_cut_points(values, bins: int) -> np.ndarray:
    """Cut points of up to ``bins`` intervals holding about the same number of rows.

    Weka's ``unsupervised.attribute.Discretize -F -B bins`` semantics (not plain quantiles): the
    sorted values are walked once, and a bin is closed at a boundary between distinct values once
    it holds at least its share of the rows, or at the previous boundary when that one was closer
    to the share; the share is recomputed from the rows and bins left. Cut points are midpoints
    between consecutive distinct values, so tied values always share a bin and heavy ties can
    give fewer than ``bins`` bins.

    Parameters
    ----------
    values : array_like of shape (n_rows,), float
        The attribute's values; NaN for missing (ignored).
    bins : int
        Number of intervals wanted, at least 1.

    Returns
    -------
    ndarray of shape (<= bins - 1,), float64
        Cut points, ascending.

    References
    ----------
    .. [1] J. Dougherty, R. Kohavi and M. Sahami, "Supervised and unsupervised discretization of
       continuous features", Proc. 12th International Conference on Machine Learning (ICML),
       1995, pp. 194-202.

    Examples
    --------
    >>> equal_frequency_cut_points([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], 3)
    array([2.5, 4.5])
    """
    values = _as_values(values)
    bins = _check_bins(bins)
    present = np.sort(values[~np.isnan(values)])
    return kernels.equal_frequency_cut_points_sorted(present, bins)


def assign_bins(values, cut_points) -> np.ndarray:
    """Bin index of every value: the first ``b`` with ``value <= cut_points[b]``, else the last bin.

    Parameters
    ----------
    values : array_like of shape (n_rows,), float
        Values to cut; NaN for missing.
    cut_points : array_like of shape (n_cuts,), float
        Ascending cut points.

    Returns
    -------
    ndarray of shape (n_rows,), int64
        Bin indices ``0 .. n_cuts``; a missing value gets ``n_cuts + 1`` (the missing code of an
        attribute with ``n_cuts + 1`` values). This is Weka's rule, so values outside the
        training range fall in the first or last bin.

    Examples
    --------
    >>> assign_bins([-5.0, 1.0, 1.5, 2.0, 99.0, float("nan")], [1.0, 2.0])
    array([0, 0, 1, 1, 2, 3])
    """
    values = _as_values(values)
    cuts = np.asarray(cut_points, dtype=np.float64)
    codes = np.searchsorted(cuts, values, side="left").astype(np.int64)
    codes[np.isnan(values)] = cuts.shape[0] + 1
    return codes
