"""Turn every numeric attribute of a :class:`~hdp_plugin.data.Dataset` into a nominal one.

:class:`Discretizer` learns cut points on training data (supervised MDL by default, as Weka's
``weka.filters.supervised.attribute.Discretize``; or equal-width / equal-frequency binning) and
cuts any data set with the same attributes the same way. The cut points travel with the
attributes (``Attribute.cut_points``), so :func:`apply_cut_points` can cut new data from a stored
model without the :class:`Discretizer` object.
"""

from __future__ import annotations

import logging
from dataclasses import replace

import numpy as np

from .. import config, seeds
from ..data.dataset import Attribute, Dataset, encode_codes
from ..errors import DataError, NotFittedError, ParameterError
from . import kernels
from .cutpoints import (
    _check_bins,
    _mdl_cut_points,
    equal_frequency_cut_points,
    equal_width_cut_points,
)
from .labels import interval_labels
from .kernels import stochastic_cuts_columns, xlogx_table
from .stochastic import SortedColumn, gain_min_cuts

log = logging.getLogger(__name__)


def _check_method(method) -> str:
    if method not in config.DISCRETIZATIONS:
        allowed = ", ".join(repr(m) for m in config.DISCRETIZATIONS)
        raise ParameterError(f"discretization method must be one of {allowed}; got {method!r}")
    return method


def discretized_attribute(attribute: Attribute, cut_points) -> Attribute:
    """The nominal attribute that ``attribute`` becomes once cut at ``cut_points``.

    Parameters
    ----------
    attribute : Attribute
        A numeric attribute.
    cut_points : array_like of float
        Ascending cut points (possibly none).

    Returns
    -------
    Attribute
        Same name, Weka-style interval labels (:func:`~hdp_plugin.preprocess.labels.interval_labels`),
        ``numeric=True`` and ``cut_points`` set (``()`` when there is none: one value, ``All``).
    """
    cuts = tuple(float(c) for c in np.asarray(cut_points, dtype=np.float64))
    return Attribute(name=attribute.name, values=interval_labels(cuts), numeric=True, cut_points=cuts,
                     temporal=attribute.temporal)


class Discretizer:
    """Discretise the numeric attributes of a dataset; cut points are learnt once and kept.

    Parameters
    ----------
    method : {"mdl", "stochastic-mdl", "stochastic-gain", "equal-frequency", "equal-width", "none"}, default "mdl"
        ``"mdl"``: supervised, Fayyad & Irani's MDL method exactly as Weka 3.8's
        ``weka.filters.supervised.attribute.Discretize`` with its defaults.
        ``"stochastic-mdl"``: cut points drawn in proportion to their MDL margin, as ESKDB does
        (:mod:`hdp_plugin.preprocess.stochastic`), from ``random_state``.
        ``"stochastic-gain"``: cut points drawn in proportion to their information gain, each kept
        while it passes the MDL test, at least two per informative attribute (one fewer than the
        classes, up to four, with more classes)
        (:func:`~hdp_plugin.preprocess.stochastic.stochastic_gain_cut_points`), from ``random_state``.
        ``"equal-width"``: ``bins`` intervals of equal width over the training range, as Weka's
        ``unsupervised.attribute.Discretize -B bins``.
        ``"equal-frequency"``: up to ``bins`` intervals with about equal numbers of training rows,
        Weka's ``unsupervised.attribute.Discretize -F -B bins`` algorithm (not plain quantiles).
        ``"none"``: no discretisation; fitting data with a numeric attribute is an error.
    bins : int, default ``config.DEFAULT_BINS`` (10)
        Number of bins of the unsupervised methods; ignored by ``"mdl"`` and ``"none"``.
    random_state : int, SeedSequence, Generator or None, default None
        Seed of ``"stochastic-mdl"`` and ``"stochastic-gain"`` (one stream per attribute); ignored by
        the other methods.

    Attributes
    ----------
    cut_points_ : dict of int to ndarray of float64
        For every attribute index that was numeric at fit time, its ascending cut points
        (possibly empty: then the attribute has the single value ``All``).
    attributes_ : list of Attribute
        The attributes of the transformed data: numeric ones replaced by their discretised
        version (``numeric=True``, ``cut_points`` set, interval labels as values).
    n_features_in_ : int
        Number of attributes of the training data.

    Notes
    -----
    Only rows with a known class (``y >= 0``) are used to learn cut points, for every method.
    Missing values are ignored when learning and stay missing (code ``len(values)``) after
    transforming. A value ``v`` goes to the first bin ``b`` with ``v <= cut_points[b]``, so values
    below or above the training range fall in the first or last bin.

    References
    ----------
    .. [1] U. M. Fayyad and K. B. Irani, "Multi-interval discretization of continuous-valued
       attributes for classification learning", Proc. 13th International Joint Conference on
       Artificial Intelligence (IJCAI), 1993, pp. 1022-1027.
    .. [2] J. Dougherty, R. Kohavi and M. Sahami, "Supervised and unsupervised discretization of
       continuous features", Proc. 12th International Conference on Machine Learning (ICML),
       1995, pp. 194-202.

    Examples
    --------
    >>> disc = Discretizer().fit(train)                     # doctest: +SKIP
    >>> train_nominal = disc.transform(train)               # doctest: +SKIP
    >>> test_nominal = disc.transform(test)                 # doctest: +SKIP
    """

    def __init__(self, *, method: str = config.DEFAULT_DISCRETIZATION, bins: int = config.DEFAULT_BINS,
                 random_state=None):
        self.method = method
        self.bins = bins
        self.random_state = random_state

    def __repr__(self) -> str:
        return f"Discretizer(method={self.method!r}, bins={self.bins!r})"

    def fit(self, dataset: Dataset) -> "Discretizer":
        """Learn cut points for every numeric attribute that awaits discretisation.

        Parameters
        ----------
        dataset : Dataset
            Training data; rows with a missing class are not used.

        Returns
        -------
        self

        Raises
        ------
        ParameterError
            For an unknown ``method``, a bad ``bins``, or ``method="none"`` with a numeric
            attribute.
        """
        method = _check_method(self.method)
        bins = _check_bins(self.bins)
        pending = dataset.numeric_columns()
        if method == "none" and pending:
            name = dataset.attributes[next(iter(pending))].name
            raise ParameterError(f"attribute {name!r} is numeric; discretization 'none' needs nominal data")
        cut_points: dict[int, np.ndarray] = {}
        if pending and method in config.STOCHASTIC_DISCRETIZATIONS:
            seed = seeds.as_seed_sequence(self.random_state)
            cut_points = stochastic_cut_points(sorted_numeric_columns(dataset), seed, method)
        elif pending:
            rows = dataset.y >= 0
            all_rows = bool(rows.all())
            y = dataset.y if all_rows else dataset.y[rows]
            if y.size and int(y.max()) >= dataset.n_classes:  # the kernels index counts by class
                raise DataError(f"{dataset.source}: class code {int(y.max())} is out of range for "
                                f"{dataset.n_classes} class value(s)")
            # one x ln x table serves every attribute
            xlogx = kernels.xlogx_table(int(y.shape[0])) if method == "mdl" else None
            for j, col in pending.items():
                values = dataset.numeric[:, col] if all_rows else dataset.numeric[rows, col]
                if method == "mdl":
                    cuts = _mdl_cut_points(values, y, dataset.n_classes, xlogx)
                elif method == "equal-width":
                    cuts = equal_width_cut_points(values, bins)
                else:
                    cuts = equal_frequency_cut_points(values, bins)
                cut_points[j] = cuts
                log.debug("%s: attribute %r: %d cut point(s) (%s)", dataset.source,
                          dataset.attributes[j].name, cuts.shape[0], method)
        self.cut_points_ = cut_points
        self.attributes_ = [
            discretized_attribute(a, cut_points[j]) if j in cut_points else a
            for j, a in enumerate(dataset.attributes)
        ]
        self.n_features_in_ = dataset.n_attributes
        return self

    def _check_fitted(self) -> None:
        if not hasattr(self, "attributes_"):
            raise NotFittedError("this Discretizer is not fitted yet; call fit(dataset) first")

    def transform(self, dataset: Dataset) -> Dataset:
        """Cut the numeric attributes of ``dataset`` with the cut points learnt by :meth:`fit`.

        Parameters
        ----------
        dataset : Dataset
            Data with the same attributes as the training data.

        Returns
        -------
        Dataset
            A new dataset whose numeric attributes are nominal (``numeric`` is None); the
            input is not modified.

        Raises
        ------
        NotFittedError
            Before :meth:`fit`.
        DataError
            If the attributes do not match the training data.
        """
        self._check_fitted()
        return apply_cut_points(dataset, self.attributes_)

    def fit_transform(self, dataset: Dataset) -> Dataset:
        """:meth:`fit` on ``dataset``, then :meth:`transform` it."""
        return self.fit(dataset).transform(dataset)


class SortedColumns(dict):
    """``{attribute index: SortedColumn}`` of a data set's numeric attributes, with the flat arrays that
    draw every column's cut points in one kernel call (made once, on first use, for all the members:
    the columns are not to change after that)."""

    _flat = None

    def flat(self) -> tuple:
        """``(values, classes, col_start, xlogx, gain_min_cuts)`` of the columns in key order."""
        if self._flat is None:
            cols = list(self.values())
            lengths = [c.values.shape[0] for c in cols]
            self._flat = (np.ascontiguousarray(np.concatenate([c.values for c in cols]), np.float64),
                          np.ascontiguousarray(np.concatenate([c.classes for c in cols]), np.int64),
                          np.concatenate(([0], np.cumsum(lengths, dtype=np.int64))),
                          xlogx_table(max(lengths + [1])),
                          np.asarray([gain_min_cuts(c) for c in cols], np.int64))
        return self._flat


def sorted_numeric_columns(dataset: Dataset) -> SortedColumns:
    """Every numeric attribute's training values (known class, not missing), sorted, by index.

    An ensemble sorts once and draws every member's stochastic cut points from these.
    """
    cols = SortedColumns()
    for j, col in dataset.numeric_columns().items():
        cols[j] = SortedColumn(dataset.numeric[:, col], dataset.y, dataset.n_classes)
    return cols


def stochastic_cut_points(columns: dict[int, SortedColumn], seed, method: str = "stochastic-mdl") -> dict[int, np.ndarray]:
    """Stochastic cut points of every column (``method``: ``"stochastic-mdl"``, ESKDB's, or
    ``"stochastic-gain"``); attribute ``j`` draws from stream ``DISCRETIZE + j`` of ``seed`` (a
    SeedSequence; :func:`hdp_plugin.seeds.stream_states`), so its cuts do not depend on the other
    attributes: what :func:`~hdp_plugin.preprocess.stochastic.stochastic_gain_cut_points` (or
    ``..._mdl_...``) gives on that state, all columns in one kernel call."""
    if not columns:
        return {}
    if not isinstance(columns, SortedColumns):
        columns = SortedColumns(columns)
    values, classes, col_start, xlogx, min_cuts = columns.flat()
    keys = list(columns)
    states = seeds.stream_states(seed, [seeds.DISCRETIZE + j for j in keys])
    by_gain = method == "stochastic-gain"
    cuts, cut_start = stochastic_cuts_columns(values, classes, col_start, int(next(iter(columns.values())).n_classes),
                                              states, xlogx, by_gain, min_cuts if by_gain else np.zeros_like(min_cuts))
    return {j: cuts[cut_start[i]:cut_start[i + 1]].copy() for i, j in enumerate(keys)}


def apply_cut_points(dataset: Dataset, attributes: list[Attribute]) -> Dataset:
    """Discretise ``dataset`` with the cut points stored in the training ``attributes``.

    Used at prediction time: a stored model keeps its training attributes, whose formerly
    numeric ones carry ``cut_points``; this cuts new data the same way.

    Parameters
    ----------
    dataset : Dataset
        Data to cut. Its attributes correspond one to one, by position and name, to
        ``attributes``; those still numeric (``is_pending_numeric``) are cut.
    attributes : list of Attribute
        The training attributes after discretisation (e.g. ``Discretizer.attributes_``).

    Returns
    -------
    Dataset
        A new dataset; every numeric attribute replaced by its training counterpart (labels,
        ``numeric=True``, ``cut_points``), its codes from
        :func:`~hdp_plugin.preprocess.cutpoints.assign_bins`; missing stays missing
        (code ``len(values)``). ``dataset`` itself is returned when nothing is numeric.

    Raises
    ------
    DataError
        If the number of attributes differs, a numeric attribute's name differs from the
        training one, or a numeric attribute was nominal (or never discretised) in training.

    References
    ----------
    .. [1] U. M. Fayyad and K. B. Irani, "Multi-interval discretization of continuous-valued
       attributes for classification learning", Proc. 13th International Joint Conference on
       Artificial Intelligence (IJCAI), 1993, pp. 1022-1027.
    """
    if len(attributes) != dataset.n_attributes:
        raise DataError(
            f"{dataset.source}: has {dataset.n_attributes} attribute(s), the training data had {len(attributes)}"
        )
    pending = dataset.numeric_columns()
    if not pending:
        return dataset
    new_attributes = list(dataset.attributes)
    for j in pending:
        here, train = dataset.attributes[j], attributes[j]
        if here.name != train.name:
            raise DataError(
                f"{dataset.source}: attribute {j + 1} is {here.name!r}, the training data had {train.name!r}"
            )
        if not train.numeric:
            raise DataError(f"{dataset.source}: attribute {here.name!r} is numeric here but was nominal in training")
        if train.cut_points is None:
            raise DataError(f"{dataset.source}: attribute {here.name!r} has no cut points in the training attributes")
        new_attributes[j] = train
    # every numeric column's codes in one kernel call (assign_bins' rule), then the matrix of all codes
    targets = list(pending)
    cuts = [np.asarray(attributes[j].cut_points, np.float64) for j in targets]
    cut_start = np.cumsum([0] + [c.size for c in cuts]).astype(np.int64)
    codes = np.empty((dataset.n_rows, len(targets)), np.int64)
    kernels.bin_columns(np.ascontiguousarray(dataset.numeric, np.float64), np.asarray(list(pending.values()), np.int64),
                        np.concatenate(cuts) if cuts else np.zeros(0), cut_start, codes)
    columns = [dataset.X[:, j] for j in range(dataset.n_attributes)]
    for i, j in enumerate(targets):
        columns[j] = codes[:, i]
    X = encode_codes(columns, new_attributes)
    return replace(dataset, attributes=new_attributes, X=X, numeric=None)
