"""NumPy input: a feature matrix and optional class labels, as scikit-learn callers pass them."""

from __future__ import annotations

import numpy as np

from ..errors import DataError
from ._columns import Column, assemble, check_unique_names, is_missing
from .dataset import Attribute, Dataset

__all__ = ["from_arrays", "ARRAY_SOURCE", "generic_names", "nominal_codes"]

#: ``Dataset.source`` of data made by :func:`from_arrays`; :func:`~hdp_plugin.data.conform` matches
#: such data to the training attributes by position when its names are the generic ones
ARRAY_SOURCE = "<array>"


def generic_names(n: int) -> list[str]:
    """The names :func:`from_arrays` gives ``n`` unnamed features: ``x0 .. x{n-1}``."""
    return [f"x{j}" for j in range(n)]



def _label(v: object) -> str:
    if isinstance(v, (bool, np.bool_)):
        return "true" if v else "false"
    return str(v)


def nominal_codes(values: np.ndarray) -> tuple[tuple[str, ...], np.ndarray]:
    """Labels (sorted distinct values, as text) and codes of a 1-D array; missing is ``len(labels)``.

    Booleans give ``("false", "true")``; numbers sort numerically; ``None`` and NaN are missing.
    """
    values = np.asarray(values)
    kind = values.dtype.kind
    n = values.shape[0]
    if kind == "b":
        return ("false", "true"), values.astype(np.int64)
    if kind in "US":
        if kind == "S":
            values = np.char.decode(values, "utf-8")
        uniq, inv = np.unique(values, return_inverse=True)
        return tuple(str(u) for u in uniq), inv.reshape(-1).astype(np.int64)
    if kind in "iuf":
        miss = np.isnan(values) if kind == "f" else np.zeros(n, dtype=bool)
    elif kind == "O":
        miss = np.fromiter((is_missing(v) for v in values), dtype=bool, count=n)
    else:
        raise DataError(f"cannot use values of dtype {values.dtype} as nominal labels")
    valid = values[~miss]
    try:
        uniq, inv = np.unique(valid, return_inverse=True)
    except TypeError:  # mixed types that do not compare: compare their text
        valid = np.array([_label(v) for v in valid], dtype=object)
        uniq, inv = np.unique(valid, return_inverse=True)
    if kind in "iu":
        labels = [str(int(u)) for u in uniq]
    else:
        labels = [_label(u.item() if isinstance(u, np.generic) else u) for u in uniq]
    # distinct values with the same text (1 and "1") share a label
    distinct = list(dict.fromkeys(labels))
    index = {v: i for i, v in enumerate(distinct)}
    lut = np.array([index[v] for v in labels], dtype=np.int64)
    codes = np.full(n, len(distinct), dtype=np.int64)
    codes[~miss] = lut[inv.reshape(-1)] if lut.size else 0
    return tuple(distinct), codes


def _feature_column(name: str, col: np.ndarray) -> Column:
    kind = col.dtype.kind
    if kind in "iuf":
        return Column(Attribute(name, (), numeric=True), raw=np.asarray(col, dtype=np.float64))
    if kind in "Mm":
        ms = col.astype("datetime64[ms]" if kind == "M" else "timedelta64[ms]")
        raw = ms.astype(np.int64).astype(np.float64)
        raw[np.isnat(ms)] = np.nan
        return Column(Attribute(name, (), numeric=True, temporal="datetime" if kind == "M" else "duration"), raw=raw)
    if kind in "bOUS":
        labels, codes = nominal_codes(col)
        return Column(Attribute(name, labels), codes=codes)
    raise DataError(f"feature {name!r} has dtype {col.dtype}, which cannot be used")


def from_arrays(X, y=None, *, feature_names=None, class_name: str = "class") -> Dataset:
    """Make a :class:`Dataset` from NumPy input.

    Parameters
    ----------
    X : array-like of shape (n_rows, n_features)
        Numeric columns (integer or floating dtype) become numeric attributes, NaN missing; boolean,
        string and object columns become nominal with their sorted distinct values as labels,
        ``None``/NaN missing. A structured mix needs an object array (or use :func:`from_pandas`).
    y : array-like of shape (n_rows,), optional
        Class labels; the class values are the sorted distinct labels as text (``None``/NaN missing,
        coded ``-1``). When omitted (data to predict), the class has no values and every ``y`` is -1.
    feature_names : sequence of str, optional
        Attribute names; ``x0 .. x{n-1}`` by default (:func:`generic_names`), which
        :func:`~hdp_plugin.data.conform` matches by position.
    class_name : str
        Name of the class attribute.

    Returns
    -------
    Dataset
        With ``source == "<array>"``.

    Raises
    ------
    DataError
        If ``X`` is not 2-D, ``y`` does not have one label per row, or the names do not fit.
    """
    X = np.asarray(X)
    if X.ndim != 2:
        raise DataError(f"X must be a 2-D array (rows x features), got shape {X.shape}")
    n, d = X.shape
    if feature_names is None:
        names = generic_names(d)
    else:
        names = [str(v) for v in feature_names]
        if len(names) != d:
            raise DataError(f"feature_names has {len(names)} names but X has {d} columns")
    check_unique_names(names + [class_name], ARRAY_SOURCE)
    if X.dtype.kind in "iuf":
        F = np.asarray(X, dtype=np.float64)
        columns = [Column(Attribute(nm, (), numeric=True), raw=F[:, j]) for j, nm in enumerate(names)]
    else:
        columns = [_feature_column(nm, X[:, j]) for j, nm in enumerate(names)]
    if y is None:
        cls = Column(Attribute(class_name, ()), codes=np.zeros(n, dtype=np.int64))
    else:
        y = np.asarray(y)
        if y.ndim == 2 and y.shape[1] == 1:
            y = y[:, 0]
        if y.ndim != 1 or y.shape[0] != n:
            raise DataError(f"y must have one label per row of X ({n}), got shape {y.shape}")
        labels, codes = nominal_codes(y)
        cls = Column(Attribute(class_name, labels), codes=codes)
    columns.append(cls)
    return assemble(columns, d, relation="data", source=ARRAY_SOURCE)
