"""The one data type every stage of the pipeline consumes.

A :class:`Dataset` holds categorical data as integer codes, plus, for attributes that were numeric in
the source and are not discretised yet, their raw values. Conventions (docs/method.md section 1):

* attribute ``j`` has value labels ``attributes[j].values``; its codes are ``0 .. len(values) - 1``;
  **missing is one more value**, coded ``len(values)`` (:attr:`Attribute.missing_code`);
* the class column ``y`` holds codes ``0 .. len(class_attribute.values) - 1`` and ``-1`` for missing;
* a numeric attribute that is not discretised yet has ``values == ()``, its column of ``X`` holds
  zeros, and its raw values (NaN for missing) are the matching column of ``numeric``;
  :meth:`Dataset.numeric_columns` gives the mapping. Discretisation (``hdp_plugin.preprocess``)
  turns every such attribute into a nominal one, keeping ``Attribute.numeric = True`` as the record
  that it was numeric and ``Attribute.cut_points`` for transforming new data.
"""

from __future__ import annotations

import logging
import warnings
from dataclasses import dataclass, field, replace

import numpy as np

from ..errors import DataError, DataNote, ParameterError

log = logging.getLogger(__name__)


#: what the numbers of a numeric attribute are (:attr:`Attribute.temporal`): numbers, dates and timestamps, durations
TEMPORAL_KINDS = (None, "datetime", "duration")


@dataclass(frozen=True)
class Attribute:
    """One attribute (a column) of a :class:`Dataset`.

    Parameters
    ----------
    name : str
        The attribute's name, as in the source file.
    values : tuple of str
        Value labels of a nominal attribute, in code order; ``()`` for a numeric attribute that is
        not discretised yet.
    numeric : bool
        True if the attribute was numeric (or date) in the source.
    cut_points : tuple of float or None
        Cut points of a discretised numeric attribute, ascending; bin ``b`` holds the values ``v``
        with ``cut_points[b-1] < v <= cut_points[b]`` (Weka's convention).
    temporal : {None, "datetime", "duration"}
        What the numbers of a numeric attribute are: None for numbers, ``"datetime"`` for dates and
        timestamps (milliseconds since 1970-01-01, as Weka stores dates), ``"duration"`` for durations
        (milliseconds). New data must give the attribute the same kind of values
        (:func:`~hdp_plugin.data.conform`).
    """

    name: str
    values: tuple[str, ...] = ()
    numeric: bool = False
    cut_points: tuple[float, ...] | None = None
    temporal: str | None = None

    @property
    def is_pending_numeric(self) -> bool:
        """True for a numeric attribute whose raw values have not been discretised yet."""
        return self.numeric and self.cut_points is None

    @property
    def missing_code(self) -> int:
        """The code that stands for a missing value: one past the last label."""
        return len(self.values)

    @property
    def n_codes(self) -> int:
        """Number of distinct codes including the missing value."""
        return len(self.values) + 1


def smallest_code_dtype(max_code: int) -> np.dtype:
    """The smallest unsigned integer dtype that holds codes ``0 .. max_code``."""
    for dt in (np.uint8, np.uint16, np.uint32):
        if max_code <= np.iinfo(dt).max:
            return np.dtype(dt)
    return np.dtype(np.uint64)


@dataclass(eq=False)
class Dataset:
    """Categorical data as integer codes, with its metadata.

    Attributes
    ----------
    attributes : list of Attribute
        The non-class attributes, in source order.
    class_attribute : Attribute
        The class; always nominal.
    X : ndarray of shape (n_rows, n_attributes), unsigned integer, C-contiguous
        Attribute codes; missing is ``attributes[j].missing_code``.
    y : ndarray of shape (n_rows,), int32
        Class codes; ``-1`` for a missing class.
    numeric : ndarray of shape (n_rows, n_pending), float64, or None
        Raw values of the attributes still numeric (``is_pending_numeric``), in attribute order;
        NaN for missing.
    relation : str
        The relation (data set) name.
    source : str
        Where the data came from (a path or a description), for error messages.
    class_index : int
        Position of the class among the source's columns (the readers set it; ``-1`` when the data
        has no source order, as after :func:`~hdp_plugin.data.conform`).
    """

    attributes: list[Attribute]
    class_attribute: Attribute
    X: np.ndarray
    y: np.ndarray
    numeric: np.ndarray | None = None
    relation: str = "data"
    source: str = "<memory>"
    class_index: int = field(default=-1)

    def __post_init__(self) -> None:
        n = self.y.shape[0]
        if self.X.ndim != 2 or self.X.shape != (n, len(self.attributes)):
            raise DataError(
                f"{self.source}: codes matrix has shape {self.X.shape}, expected ({n}, {len(self.attributes)})"
            )
        if not self.X.flags.c_contiguous:
            self.X = np.ascontiguousarray(self.X)
        self.y = np.ascontiguousarray(self.y, dtype=np.int32)
        pending = [j for j, a in enumerate(self.attributes) if a.is_pending_numeric]
        if pending:
            if self.numeric is None or self.numeric.shape != (n, len(pending)):
                raise DataError(f"{self.source}: raw numeric block does not match the numeric attributes")
        else:
            self.numeric = None

    # -- shape -------------------------------------------------------------------------------
    @property
    def n_rows(self) -> int:
        return int(self.y.shape[0])

    @property
    def n_attributes(self) -> int:
        return len(self.attributes)

    @property
    def names(self) -> list[str]:
        """Names of the non-class attributes."""
        return [a.name for a in self.attributes]

    @property
    def class_values(self) -> tuple[str, ...]:
        return self.class_attribute.values

    @property
    def n_classes(self) -> int:
        return len(self.class_attribute.values)

    def cardinalities(self) -> np.ndarray:
        """Number of codes of each attribute, the missing value included (int64 array)."""
        return np.array([a.n_codes for a in self.attributes], dtype=np.int64)

    def numeric_columns(self) -> dict[int, int]:
        """Map attribute index -> column of :attr:`numeric` for attributes still numeric."""
        pending = [j for j, a in enumerate(self.attributes) if a.is_pending_numeric]
        return {j: c for c, j in enumerate(pending)}

    @property
    def is_categorical(self) -> bool:
        """True when no attribute awaits discretisation."""
        return self.numeric is None

    # -- row selection -------------------------------------------------------------------------
    def take(self, rows: np.ndarray) -> "Dataset":
        """A new dataset with the given rows (indices or boolean mask), metadata shared."""
        rows = np.asarray(rows)
        return replace(
            self,
            X=np.ascontiguousarray(self.X[rows]),
            y=self.y[rows],
            numeric=None if self.numeric is None else np.ascontiguousarray(self.numeric[rows]),
        )

    def drop_missing_class(self) -> tuple["Dataset", int]:
        """Drop the rows whose class is missing; return the new dataset and how many were dropped."""
        keep = self.y >= 0
        dropped = int(self.n_rows - keep.sum())
        if dropped == 0:
            return self, 0
        log.info("%s: dropped %d row(s) with a missing class", self.source, dropped)
        return self.take(keep), dropped

    def with_class_values(self, values) -> "Dataset":
        """The same data with the class labels in the given order.

        Formats without declared labels (CSV, Parquet or Feather with plain strings) give the class its
        observed labels, sorted; the class order decides the order of the probability columns and,
        through the class counts' order, the model itself (the sampler visits the classes in that order).
        This sets the order that an ARFF header would declare, and can add labels that no row has.

        Parameters
        ----------
        values : sequence of str
            Every class label of the data, each once, in the wanted order; more labels may follow.

        Returns
        -------
        Dataset
            A new dataset whose ``y`` codes index ``values``.

        Raises
        ------
        ParameterError
            If a label repeats or a label of the data is missing from ``values``.
        """
        values = tuple(str(v) for v in values)
        if not values:
            raise ParameterError("the class values must name at least one label")
        seen = set()
        for v in values:
            if v in seen:
                raise ParameterError(f"the class values name {v!r} twice")
            seen.add(v)
        used = np.unique(self.y[self.y >= 0])
        absent = [self.class_values[c] for c in used if self.class_values[c] not in seen]
        if absent:
            raise ParameterError(
                f"{self.source}: the class values {', '.join(values)} lack "
                f"{', '.join(repr(a) for a in absent)}, which the class {self.class_attribute.name!r} has"
            )
        position = {v: i for i, v in enumerate(values)}
        lut = np.array([position.get(v, -1) for v in self.class_values] + [-1], dtype=np.int32)
        y = lut[np.where(self.y >= 0, self.y, len(self.class_values))]
        return replace(self, class_attribute=replace(self.class_attribute, values=values), y=y)

    def equals(self, other: "Dataset") -> bool:
        """True when both hold the same attributes, class, codes (dtype included), and raw values.

        NaN equals NaN; the relation, source and class index are not compared.
        """
        if self.attributes != other.attributes or self.class_attribute != other.class_attribute:
            return False
        if self.X.dtype != other.X.dtype or not np.array_equal(self.X, other.X):
            return False
        if not np.array_equal(self.y, other.y):
            return False
        if self.numeric is None or other.numeric is None:
            return self.numeric is None and other.numeric is None
        return np.array_equal(self.numeric, other.numeric, equal_nan=True)

    def __repr__(self) -> str:  # pragma: no cover - cosmetic
        return (
            f"Dataset({self.relation!r}, rows={self.n_rows}, attributes={self.n_attributes}, "
            f"class={self.class_attribute.name!r} {list(self.class_values)!r}, "
            f"pending_numeric={0 if self.numeric is None else self.numeric.shape[1]})"
        )


def encode_codes(columns: list[np.ndarray], attributes: list[Attribute]) -> np.ndarray:
    """Stack per-attribute code columns into one C-contiguous matrix of the smallest dtype."""
    n = columns[0].shape[0] if columns else 0
    max_code = max((a.missing_code for a in attributes), default=0)
    dt = smallest_code_dtype(max_code)
    X = np.empty((n, len(columns)), dtype=dt)
    for j, col in enumerate(columns):
        X[:, j] = col
    return X


def note_missing_class(dropped: int, source: str, stacklevel: int = 3) -> None:
    """A :class:`~hdp_plugin.errors.DataNote` saying how many rows training leaves out for their missing
    class (none: nothing)."""
    if dropped:
        rows = "1 row" if dropped == 1 else f"{dropped:,} rows"
        warnings.warn(f"{source}: {rows} with a missing class {'was' if dropped == 1 else 'were'} left out",
                      DataNote, stacklevel=stacklevel)
