"""Columns declared categorical: integer-coded (or any) columns read as nominal attributes.

CSV exports, Parquet files and pandas frames often store categories as small integers (1 = red,
2 = green, ...). Read as they are, such columns are numeric and get discretised, which merges codes
that have nothing in common. ``categorical_features`` (the classifier's parameter, ``--categorical``
on the command line, ``categorical_features`` in a daemon job) declares them nominal:

* the forms are scikit-learn's (``HistGradientBoostingClassifier(categorical_features=...)``): None
  (nothing declared), ``"from_dtype"`` (the column types decide, which is also what None does here),
  a list of attribute names, a list of attribute indices (positions among the attributes, the class
  not counted: the columns of ``X`` for ``fit(X, y)``), or a boolean mask with one entry per attribute;
* text, boolean, dictionary (pandas categorical, Arrow dictionary) and ARFF nominal columns are nominal
  whatever is declared; declaring one of them changes nothing (nor does naming the class);
* a declared numeric column becomes nominal with its distinct values as its domain, **sorted
  numerically**, labelled as integers (``"1"``, ``"2"``, ..., ``"10"``; ``3.0`` reads as ``"3"``).
  So an ARFF attribute ``{1,2,3}`` and the same column of a CSV file declared categorical are the same
  attribute, and the models trained from both are the same model. The domain is learnt from the data
  the declaration applies to (the training data; for ``hdp-bnc evaluate``, the whole file, as the
  labels of a text column are), every row read, including those with a missing class;
* a declared column must hold integers (or be missing): a non-integer value is an error naming the
  column, as is a domain of more than ``config.MAX_CATEGORIES`` values.

At prediction a declared attribute is an ordinary nominal one: values match its labels by text, or
by number (the integer 3, the float 3.0 and the text ``"3.0"`` all match the label ``"3"``), and a
value never seen in training is treated as missing, with a warning, as any unseen nominal value is.
"""

from __future__ import annotations

import numbers
from dataclasses import replace

import numpy as np

from .. import config
from ..errors import DataError, ParameterError, TooLargeError
from ._columns import list_names, short
from .dataset import Attribute, Dataset, encode_codes

__all__ = ["FROM_DTYPE", "check_categorical", "declare_categorical", "integer_domain", "integer_labels",
           "resolve_categorical"]

#: scikit-learn's spelling of "the column types decide"
FROM_DTYPE = "from_dtype"
#: the label the parameter has in messages (the command line and job files use their own names)
LABEL = "categorical_features"
#: the largest integer a float64 holds exactly: beyond it two codes may read as one
_EXACT = float(2**53)


def _forms(label: str) -> str:
    return (f"{label} must be None, {FROM_DTYPE!r}, a list of attribute names, a list of attribute indices "
            "or a boolean mask")


def check_categorical(spec, label: str = LABEL):
    """The declaration in a normal form, without the data: ``None``, ``("names", (...))``,
    ``("indices", (...))`` or ``("mask", (...))``; one-line :class:`ParameterError` for anything else."""
    if spec is None or (isinstance(spec, str) and spec == FROM_DTYPE):
        return None
    if isinstance(spec, (str, bytes, dict)) or isinstance(spec, (numbers.Number, np.generic)):
        raise ParameterError(f"{_forms(label)}; got {short(spec)}")
    try:
        items = list(np.asarray(spec, dtype=object).ravel()) if isinstance(spec, np.ndarray) else list(spec)
    except TypeError:
        raise ParameterError(f"{_forms(label)}; got {short(spec)}") from None
    if not items:
        return ("names", ())
    if all(isinstance(v, str) for v in items):
        return ("names", tuple(dict.fromkeys(items)))
    if all(isinstance(v, (bool, np.bool_)) for v in items):
        return ("mask", tuple(bool(v) for v in items))
    if all(isinstance(v, (numbers.Integral, np.integer)) and not isinstance(v, (bool, np.bool_)) for v in items):
        return ("indices", tuple(dict.fromkeys(int(v) for v in items)))
    raise ParameterError(f"{_forms(label)} (not a mix of them); got {short(spec)}")


def resolve_categorical(spec, names: list[str], source: str, *, class_name: str | None = None,
                        label: str = LABEL) -> list[int]:
    """Positions (among the attributes ``names``, the class not counted) that ``spec`` declares.

    Raises
    ------
    ParameterError
        One line naming the column at fault: an unknown name (the attributes listed), an index out of
        range, a mask of the wrong length.
    """
    form = check_categorical(spec, label)
    if form is None:
        return []
    kind, items = form
    n = len(names)
    if kind == "names":
        index = {nm: j for j, nm in enumerate(names)}
        out = []
        for nm in items:
            if nm in index:
                out.append(index[nm])
            elif nm != class_name:  # the class is nominal anyway
                raise ParameterError(f"{label} names {nm!r}, which is not an attribute of {source}; "
                                     f"the attributes are {list_names(names)}")
        return sorted(set(out))
    if kind == "indices":
        for i in items:
            if not 0 <= i < n:
                raise ParameterError(f"{label} index {i} is out of range: {source} has {n} attribute(s), "
                                     f"indices 0 to {n - 1} (the class not counted)")
        return sorted(items)
    if len(items) != n:
        raise ParameterError(f"{label} is a boolean mask of {len(items)} value(s), but {source} has {n} "
                             f"attribute(s) (the class not counted)")
    return [j for j, v in enumerate(items) if v]


def integer_domain(raw: np.ndarray, name: str, source: str, *, max_values: int | None = None,
                   known: np.ndarray | None = None) -> np.ndarray:
    """The distinct values of a declared numeric column, ascending (NaN is missing), merged with the
    ``known`` domain if given; :class:`DataError` naming the column for a non-integer value, and
    :class:`TooLargeError` for more than ``max_values`` (``config.MAX_CATEGORIES``) of them."""
    limit = config.MAX_CATEGORIES if max_values is None else int(max_values)
    raw = np.asarray(raw, dtype=np.float64)
    uniq = np.unique(raw[~np.isnan(raw)])
    bad = uniq[(uniq != np.round(uniq)) | (np.abs(uniq) > _EXACT)]
    if bad.size:
        v = float(bad[0])
        what = "the value" if v == round(v) or not np.isfinite(v) else "the non-integer value"
        raise DataError(f"{source}: attribute {name!r} is declared categorical but has {what} {v!r}; only "
                        f"columns of integer codes (or text) can be declared categorical: leave it numeric")
    if known is not None:
        uniq = np.union1d(known, uniq)
    if uniq.size > limit:
        raise TooLargeError(f"{source}: attribute {name!r} is declared categorical but has {uniq.size} "
                            f"distinct values, more than the limit of {limit}; a column of so many codes is "
                            "an identifier or a number: leave it numeric")
    return uniq + 0.0  # -0.0 is 0


def integer_labels(domain: np.ndarray) -> tuple[str, ...]:
    """The labels of a declared numeric domain: the integers as text, in domain (numeric) order."""
    return tuple(str(int(v)) for v in domain)


def integer_codes(raw: np.ndarray, domain: np.ndarray) -> np.ndarray:
    """Codes of raw values on their (ascending) domain; NaN is missing (``len(domain)``)."""
    raw = np.asarray(raw, dtype=np.float64)
    codes = np.searchsorted(domain, np.where(np.isnan(raw), 0.0, raw)).astype(np.int64)
    codes[np.isnan(raw)] = len(domain)
    return codes


def declare_categorical(dataset: Dataset, spec, *, max_values: int | None = None, label: str = LABEL) -> Dataset:
    """The dataset with the attributes ``spec`` declares categorical made nominal (see the module
    docstring); ``dataset`` itself when that changes nothing.

    Raises
    ------
    ParameterError
        For an unknown attribute name, an index out of range or a mask of the wrong length.
    DataError
        For a declared column with a non-integer value, or one already discretised.
    TooLargeError
        For a declared column of more than ``max_values`` distinct values.
    """
    src = dataset.source
    declared = resolve_categorical(spec, dataset.names, src, class_name=dataset.class_attribute.name, label=label)
    numcols = dataset.numeric_columns()
    todo = [j for j in declared if dataset.attributes[j].numeric]
    if not todo:
        return dataset
    attributes = list(dataset.attributes)
    codes: dict[int, np.ndarray] = {}
    for j in todo:
        a = attributes[j]
        if j not in numcols:
            raise DataError(f"{src}: attribute {a.name!r} is declared categorical but is already discretised; "
                            "declare it on the data as read")
        domain = integer_domain(dataset.numeric[:, numcols[j]], a.name, src, max_values=max_values)
        attributes[j] = Attribute(a.name, integer_labels(domain))
        codes[j] = integer_codes(dataset.numeric[:, numcols[j]], domain)
    columns = [codes[j] if j in codes else dataset.X[:, j] for j in range(len(attributes))]
    X = encode_codes(columns, attributes)
    keep = [numcols[j] for j in sorted(numcols) if j not in codes]
    numeric = np.ascontiguousarray(dataset.numeric[:, keep]) if keep else None
    return replace(dataset, attributes=attributes, X=X, numeric=numeric)
