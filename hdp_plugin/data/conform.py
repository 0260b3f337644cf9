"""Checking data before training, and re-expressing new data on the training attributes."""

from __future__ import annotations

import logging
import math
import re
import warnings

import numpy as np

from .. import config
from ..errors import DataError, EmptyColumnWarning
from ._columns import Column, dataset_columns, list_names, stack
from .arrays import ARRAY_SOURCE, generic_names
from .dataset import Attribute, Dataset

log = logging.getLogger(__name__)

__all__ = ["conform", "conform_columns", "check_trainable", "empty_columns", "warn_empty"]


#: marks a label never seen in training, before it becomes the missing code
_UNKNOWN = -2


#: the labels that read as numbers (docs/model-format.md section 6): ASCII decimal literals, nothing around them
_NUMBER = re.compile(r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?")


def label_number(label: str) -> float | None:
    """The number a label reads as, or None: an optional sign, ASCII digits with an optional fraction, an
    optional exponent, and nothing else (no space, ``_``, ``inf``, ``nan``, hexadecimal or non-ASCII
    digit), of a finite value. The Weka package's InstanceCoder reads labels by the same rule."""
    if not _NUMBER.fullmatch(label):
        return None
    x = float(label)
    return x if math.isfinite(x) else None


def _float_or_nan(label: str) -> float:
    x = label_number(label)
    return np.nan if x is None else x


def _warn(msg: str) -> None:
    log.warning("%s", msg)


def _labels_by_number(labels) -> dict[float, int]:
    """The first code of each number that a label reads as (labels that are not numbers left out)."""
    by_number: dict[float, int] = {}
    for i, v in enumerate(labels):
        f = _float_or_nan(v)
        if f == f and f not in by_number:
            by_number[f] = i
    return by_number


def _nominal_codes(col: Column, target: Attribute, what: str, source: str, missing: int) -> np.ndarray:
    """Codes of ``col`` on ``target``'s labels; values never seen in training become ``missing``."""
    index = {v: i for i, v in enumerate(target.values)}
    if col.codes is not None:
        src = col.attribute.values
        if src == ("false", "true"):  # a boolean column: also match TRUE/True/... in training
            lower: dict[str, list[int]] = {}
            for i, v in enumerate(target.values):
                lower.setdefault(v.lower(), []).append(i)
            for v in src:
                if v not in index and len(lower.get(v, ())) == 1:
                    index[v] = lower[v][0]
        absent = [v for v in src if v not in index]
        if absent:  # a label that is not a training label but the same number ("3.0" on "3") matches it
            by_number = _labels_by_number(target.values)
            for v in absent:
                f = _float_or_nan(v)
                if f == f and f in by_number:
                    index[v] = by_number[f]
        lut = np.array([index.get(v, _UNKNOWN) for v in src] + [missing], dtype=np.int64)
        codes = lut[np.asarray(col.codes, dtype=np.int64)]
        unknown = codes == _UNKNOWN
        if unknown.any():
            seen = sorted({src[c] for c in np.unique(np.asarray(col.codes)[unknown])})
            _warn(f"{source}: {int(unknown.sum())} value(s) of {what} never seen in training "
                  f"({list_names(seen)}) are treated as missing")
            codes[unknown] = missing
        return codes
    # numbers on the nominal training attribute: match labels that read as the same number
    by_number = _labels_by_number(target.values)
    raw = np.asarray(col.raw, dtype=np.float64)
    nan = np.isnan(raw)
    uniq, inv = np.unique(raw[~nan], return_inverse=True)
    lut = np.array([by_number.get(float(u), _UNKNOWN) for u in uniq], dtype=np.int64)
    codes = np.full(raw.shape[0], missing, dtype=np.int64)
    if uniq.size:
        codes[~nan] = lut[inv.reshape(-1)]
    unknown = codes == _UNKNOWN
    if unknown.any():
        seen = [repr(float(u)) for u in uniq[lut == _UNKNOWN]]
        _warn(f"{source}: {int(unknown.sum())} value(s) of {what} never seen in training "
              f"({list_names(seen)}) are treated as missing")
        codes[unknown] = missing
    return codes


def _raw_values(col: Column, what: str, source: str) -> np.ndarray:
    if col.raw is not None:
        return np.asarray(col.raw, dtype=np.float64)
    labels = col.attribute.values
    lut = np.array([_float_or_nan(v) for v in labels] + [np.nan], dtype=np.float64)
    raw = lut[np.asarray(col.codes, dtype=np.int64)]
    bad_labels = [v for v in labels if _float_or_nan(v) != _float_or_nan(v)]
    if bad_labels:
        n_bad = int(np.isnan(raw).sum() - (np.asarray(col.codes) == len(labels)).sum())
        if n_bad:
            _warn(f"{source}: {n_bad} value(s) of numeric {what} are not numbers "
                  f"({list_names(bad_labels)}) and are treated as missing")
    return raw


_NUMBERS = {None: "numbers", "datetime": "dates or timestamps", "duration": "durations"}


def _holds(col: Column) -> str:
    """What a column's values are, for a message."""
    return _NUMBERS[col.attribute.temporal] if col.raw is not None else "labels (text)"


def _check_type(col: Column, target: Attribute, what: str, source: str) -> None:
    """:class:`DataError` if ``col`` holds values that ``target`` cannot take: dates, timestamps or
    durations where it was trained on something else (or the other way round), text where it takes
    numbers and no label reads as one, numbers where none of its labels reads as one. A column with
    no value (every row missing) fits any attribute."""
    takes = _NUMBERS[target.temporal] if target.numeric else "labels"
    if col.raw is not None:
        if target.numeric:
            fits = col.attribute.temporal == target.temporal
        else:
            fits = col.attribute.temporal is None and bool(_labels_by_number(target.values))
        if fits or np.isnan(np.asarray(col.raw, dtype=np.float64)).all():
            return
    else:
        if not target.numeric:
            return
        labels = col.attribute.values
        seen = np.bincount(np.asarray(col.codes, dtype=np.int64), minlength=len(labels) + 1)[: len(labels)] > 0
        present = [v for v, s in zip(labels, seen) if s]
        if not present or (target.temporal is None and _labels_by_number(present)):
            return
    raise DataError(f"{source}: column {col.attribute.name!r} holds {_holds(col)}, but the model's {what} takes "
                    f"{takes}; give it a column of the type it was trained on")


def empty_columns(columns: list[Column], names=None) -> list[str]:
    """The names of ``columns`` (those among ``names``, by default all) with no value on any row: every
    code the missing one, or every number NaN."""
    out = []
    for col in columns:
        name = col.attribute.name
        if names is not None and name not in names:
            continue
        if col.raw is not None:
            empty = bool(np.isnan(np.asarray(col.raw, dtype=np.float64)).all())
        else:
            empty = not col.attribute.values or bool((np.asarray(col.codes) >= len(col.attribute.values)).all())
        if empty:
            out.append(name)
    return out


#: the fewest rows of data to predict whose column with no value is warned of (one row with a missing
#: value is data with a missing value, not a column missing)
EMPTY_COLUMN_MIN_ROWS = 2


def warn_empty(names: list[str], n_rows: int, source: str) -> None:
    """One :class:`~hdp_plugin.errors.EmptyColumnWarning` for each attribute ``names`` that the data to
    predict, of ``n_rows`` rows, has no known value of (each missing, or a label never seen in
    training): a model predicts from the other attributes then, which changes every prediction
    without an error (a column emptied by mistake, a column name's typo in a conversion)."""
    if n_rows < EMPTY_COLUMN_MIN_ROWS:
        return
    for name in names:
        warnings.warn(f"column {name!r} in {source} has no known value on any of its {n_rows:,} rows (each is "
                      "missing, or never seen in training): the model predicts every row without it",
                      EmptyColumnWarning, stacklevel=4)


def conform_columns(columns: list[Column], attributes: list[Attribute], class_attribute: Attribute, *,
                    source: str, relation: str = "data", positional: bool = False,
                    class_column: Column | None = None, used=None) -> Dataset:
    """:func:`conform` on decoded source columns (see there).

    With ``positional``, ``columns`` are the non-class columns in training order and ``class_column``
    is the class (or None); otherwise columns are matched by name, the class included. ``used``: as
    for :func:`conform`.
    """
    if positional:
        if len(columns) != len(attributes):
            raise DataError(f"{source}: expected {len(attributes)} columns, got {len(columns)}")
        matched = list(columns)
        cls = class_column
    else:
        by_name = {c.attribute.name: c for c in columns}
        absent = [a.name for a in attributes if a.name not in by_name]
        if absent:
            raise DataError(f"{source}: missing attribute(s) the model needs: {list_names(absent)}")
        matched = [by_name[a.name] for a in attributes]
        cls = by_name.get(class_attribute.name)
        extra = [c.attribute.name for c in columns
                 if c.attribute.name not in {a.name for a in attributes} and c is not cls]
        if extra:
            log.info("%s: ignoring column(s) the model does not use: %s", source, list_names(extra))

    for col, a in zip(matched, attributes):  # every column first: a wrong type is one error before any work
        _check_type(col, a, f"attribute {a.name!r}", source)
    if cls is not None:
        _check_type(cls, class_attribute, f"class {class_attribute.name!r}", source)
    out_cols: list[Column] = []
    for col, a in zip(matched, attributes):
        what = f"attribute {a.name!r}"
        if a.numeric:  # pending or discretised: raw values, which the discretiser's apply cuts
            out_cols.append(Column(Attribute(a.name, (), numeric=True, temporal=a.temporal),
                                   raw=_raw_values(col, what, source)))
        else:
            out_cols.append(Column(a, codes=_nominal_codes(col, a, what, source, a.missing_code)))

    n = columns[0].n_rows if columns else (cls.n_rows if cls is not None else 0)
    if n >= EMPTY_COLUMN_MIN_ROWS and (used is None or len(used)):  # used columns of no known value
        warn_empty(empty_columns(out_cols, {a.name for a in attributes} if used is None else set(used)), n, source)
    if cls is None:
        y = np.full(n, -1, dtype=np.int32)
    else:
        y = _nominal_codes(cls, class_attribute, f"the class {class_attribute.name!r}", source, -1).astype(np.int32)

    out_attrs, X, numeric = stack(out_cols, n)
    return Dataset(attributes=out_attrs, class_attribute=class_attribute, X=X, y=y, numeric=numeric,
                   relation=relation, source=source)


def conform(dataset: Dataset, attributes: list[Attribute], class_attribute: Attribute, *, used=None) -> Dataset:
    """Re-express new data (test data, data to classify) on the training attributes.

    Parameters
    ----------
    dataset : Dataset
        The new data, read with any class choice.
    attributes : list of Attribute
        The training attributes (as stored in the model, discretised or not).
    class_attribute : Attribute
        The training class.
    used : collection of str, optional
        The attributes the model uses (by default all of ``attributes``; empty: none): an
        :class:`~hdp_plugin.errors.EmptyColumnWarning` names each that ``dataset`` has no known value
        of on any row (each missing, or a label never seen in training), of two rows or more, for the
        model then predicts every row without it.

    Returns
    -------
    Dataset
        One column per training attribute, in training order:

        * columns are matched by name (every column of ``dataset``, its class included); extra columns
          are ignored. Data from :func:`~hdp_plugin.data.from_arrays` with generic names is matched by
          position instead, and must have exactly as many columns;
        * nominal codes are remapped by label (a boolean column's "false"/"true" also match training
          labels that differ only in case, such as ``FALSE``/``TRUE``; numbers, and labels that are not
          training labels but read as numbers, match labels that read as the same number: 3, 3.0 and
          "3.0" all match "3"); a label never seen in training becomes the missing value, and a
          warning naming the attribute and the count is logged;
        * a column whose type the attribute cannot take is refused: dates, timestamps or durations for
          an attribute that was not trained on the same kind (:attr:`Attribute.temporal`), numbers or
          durations where it was trained on dates, text of which no value reads as a number for a
          numeric attribute, and numbers for a nominal attribute none of whose labels reads as a number;
        * attributes numeric in training come back as raw numeric (pending) columns, even when
          ``attributes`` holds their cut points: the discretiser's ``apply`` cuts them;
        * the class is remapped too (unseen or missing labels give ``y == -1``); an absent class column
          gives ``y == -1`` everywhere.

    Raises
    ------
    DataError
        Naming the training attributes missing from ``dataset``, or, for positional matching, when the
        column count differs ("expected N columns, got M"), or a column of the wrong type (naming it
        and both types).
    """
    source = dataset.source
    names = dataset.names
    if source == ARRAY_SOURCE and names == generic_names(len(names)):
        cols = dataset_columns(dataset)
        ci = dataset.class_index if 0 <= dataset.class_index <= len(names) else len(names)
        cls = cols.pop(ci)
        if not cls.attribute.values:
            cls = None
        return conform_columns(cols, attributes, class_attribute, source=source, relation=dataset.relation,
                               positional=True, class_column=cls, used=used)
    return conform_columns(dataset_columns(dataset), attributes, class_attribute, source=source,
                           relation=dataset.relation, used=used)


def check_trainable(dataset: Dataset, keep=()) -> list[str]:
    """Check that a dataset can train a classifier; return (and emit) warnings about it.

    Parameters
    ----------
    dataset : Dataset
    keep : collection of str
        Attributes kept on purpose (the classifier's ``keep_columns``): no warning about them.

    Returns
    -------
    list of str
        Warnings, each also emitted with :func:`warnings.warn`: attributes that look like row
        identifiers (nominal, with at least ``config.ID_COLUMN_FRACTION`` times as many distinct values
        as rows, once there are ``config.ID_COLUMN_MIN_ROWS`` rows).

    Raises
    ------
    DataError
        If there are no rows, or fewer than two class values are observed.
    """
    src = dataset.source
    cname = dataset.class_attribute.name
    n = dataset.n_rows
    if n == 0:
        raise DataError(f"{src}: no data rows")
    observed = np.unique(dataset.y[dataset.y >= 0])
    if observed.size == 0:
        raise DataError(f"class {cname!r} has no observed values in {src} (every row's class is missing)")
    if observed.size == 1:
        value = dataset.class_values[int(observed[0])]
        raise DataError(f"class {cname!r} has only one observed value {value!r} in {src}")
    if dataset.numeric is not None and dataset.numeric.size:
        inf = np.isinf(dataset.numeric)
        if inf.any():
            k = int(np.argmax(inf.any(axis=0)))
            j = next(j for j, kk in dataset.numeric_columns().items() if kk == k)
            raise DataError(f"{src}: numeric attribute {dataset.attributes[j].name!r} has an infinite value "
                            f"(row {int(np.argmax(inf[:, k])) + 1}); use a missing value (?) or a finite number")
    out: list[str] = []
    if n >= config.ID_COLUMN_MIN_ROWS:
        for j, a in enumerate(dataset.attributes):
            if a.numeric or not a.values or a.name in keep:
                continue
            counts = np.bincount(dataset.X[:, j], minlength=a.n_codes)[: a.missing_code]
            distinct = int(np.count_nonzero(counts))
            if distinct >= config.ID_COLUMN_FRACTION * n:
                msg = (f"attribute {a.name!r} in {src} looks like a row identifier ({distinct} distinct values "
                       f"in {n} rows) and cannot help classify new rows; remove the column from the data")
                out.append(msg)
                warnings.warn(msg, stacklevel=2)
    return out
