"""Columns that name rows rather than describe them, found before training.

* A **class** with a different value on every row has nothing to learn: it is refused
  (:func:`check_class`). It is what a file read with the wrong separator, or with its class not in
  the last column, gives.
* An **identifier** attribute -- text (or any nominal column) with a different value on every row,
  or integers that number the rows (all different and filling at least half of the range between
  the smallest and the largest, as row numbers do, in a cross-validation fold too) -- cannot help
  classify a new row, yet an ensemble's members use it. :func:`identifier_columns` finds them, and
  the classifier leaves them out of the model with one warning each, unless they are named in its
  ``keep_columns``.

Both look at the rows a fit trains on, and only at ``config.ID_COLUMN_MIN_ROWS`` rows or more.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from .. import config
from ..errors import DataError, ParameterError
from .dataset import Dataset

__all__ = ["check_class", "check_keep_columns", "identifier_columns", "leave_out"]

#: integers all different that fill at least this fraction of their range number the rows
ROW_NUMBER_DENSITY = 0.5


def check_class(name: str, n_distinct: int, n_known: int, source: str) -> None:
    """:class:`DataError` if the class ``name`` has ``n_distinct`` values on its ``n_known`` rows with a
    known class, as many as there are rows (and at least ``config.ID_COLUMN_MIN_ROWS`` of them)."""
    if n_known >= config.ID_COLUMN_MIN_ROWS and n_distinct >= n_known:
        raise DataError(
            f"class {name!r} in {source} has a different value on every one of its {n_known:,} rows, so there "
            "is nothing to learn: is it the class? Name the class column with --class (class_attribute= in "
            "Python)")


def check_keep_columns(value, label: str = "keep_columns") -> None:
    """:class:`ParameterError` unless ``value`` is None or a list of column names (strings)."""
    if value is None:
        return
    if isinstance(value, str) or not isinstance(value, (list, tuple)) or \
            not all(isinstance(v, str) for v in value):
        raise ParameterError(f"{label} must be None or a list of column names; got {value!r}")


def _is_row_number(values: np.ndarray) -> bool:
    """Integers, none missing, all different, filling at least ROW_NUMBER_DENSITY of their range."""
    n = values.shape[0]
    if not np.isfinite(values).all() or not (values == np.round(values)).all():
        return False
    lo, hi = float(values.min()), float(values.max())
    if (hi - lo + 1) * ROW_NUMBER_DENSITY > n:
        return False
    return np.unique(values).shape[0] == n


def identifier_columns(dataset: Dataset, keep=None) -> list[int]:
    """The attributes of ``dataset`` (indices) that identify its rows (see the module docstring),
    those named in ``keep`` excepted."""
    n = dataset.n_rows
    if n < config.ID_COLUMN_MIN_ROWS:
        return []
    keep = set(keep or ())
    numeric = dataset.numeric_columns()
    out = []
    for j, a in enumerate(dataset.attributes):
        if a.name in keep:
            continue
        if j in numeric:
            if _is_row_number(dataset.numeric[:, numeric[j]]):
                out.append(j)
        elif a.values and not a.numeric and len(a.values) >= config.ID_COLUMN_FRACTION * n:
            counts = np.bincount(dataset.X[:, j], minlength=a.n_codes)[: a.missing_code]
            if counts.max(initial=0) <= 1 and int(counts.sum()) >= config.ID_COLUMN_FRACTION * n:
                out.append(j)
    return out


def leave_out(dataset: Dataset, columns: list[int]) -> Dataset:
    """``dataset`` without the attributes ``columns`` (indices); the class and rows unchanged."""
    if not columns:
        return dataset
    drop = set(columns)
    keep = [j for j in range(dataset.n_attributes) if j not in drop]
    numeric = dataset.numeric_columns()
    kept_numeric = [numeric[j] for j in keep if j in numeric]
    block = None
    if kept_numeric:
        block = np.ascontiguousarray(dataset.numeric[:, kept_numeric])
    ci = dataset.class_index
    if ci >= 0:  # the class's place among the source's columns, which lose the ones before it
        ci -= sum(1 for j in drop if j < ci)
    return replace(dataset, attributes=[dataset.attributes[j] for j in keep],
                   X=np.ascontiguousarray(dataset.X[:, keep]), numeric=block, class_index=ci)
