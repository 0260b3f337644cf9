"""The hand-over between the readers and :class:`Dataset`: decoded columns, then one assembly step.

Every reader (ARFF, Arrow, pandas, NumPy) decodes its source into a list of :class:`Column` -- integer
codes for a nominal attribute, raw float64 values for a numeric one -- and :func:`assemble` picks the
class, checks it, and stacks the rest into a :class:`Dataset`. Keeping this in one place means every
format gets the same class rules and the same error messages.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np

from ..errors import DataError
from .dataset import Attribute, Dataset, encode_codes

#: how many names an error message lists before it abbreviates
_MAX_LISTED = 20


@dataclass
class Column:
    """One decoded source column.

    Exactly one of ``codes`` (nominal: integers ``0 .. len(values)``, missing is ``len(values)``) and
    ``raw`` (numeric: float64, NaN for missing) is set.
    """

    attribute: Attribute
    codes: np.ndarray | None = None
    raw: np.ndarray | None = None

    @property
    def n_rows(self) -> int:
        return int((self.codes if self.codes is not None else self.raw).shape[0])


def is_missing(value: object) -> bool:
    """True for the Python objects that stand for a missing value: None, NaN, pandas' NA and NaT."""
    return (value is None or (isinstance(value, float) and value != value)
            or type(value).__name__ in ("NAType", "NaTType"))


def short(value: object, limit: int = 60) -> str:
    """``repr`` of a value for an error message, cut to ``limit`` characters."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 4] + "...'"


def list_names(names: list[str] | tuple[str, ...]) -> str:
    """Quote and join names for an error message, abbreviating long lists."""
    shown = ", ".join(short(n, 40) for n in names[:_MAX_LISTED])
    if len(names) > _MAX_LISTED:
        shown += f", ... ({len(names) - _MAX_LISTED} more)"
    return shown


def check_unique_names(names: list[str], source: str) -> None:
    """Raise :class:`DataError` if two columns share a name."""
    if len(set(names)) != len(names):
        dup = [n for n, c in Counter(names).items() if c > 1]
        raise DataError(f"{source}: duplicate column name(s) {list_names(dup)}")


def resolve_class_index(names: list[str], class_attribute: str | None, source: str) -> int:
    """Index of the class column: by name, or the last column (Weka's convention) when None."""
    if not names:
        raise DataError(f"{source}: no columns")
    if class_attribute is None:
        return len(names) - 1
    try:
        return names.index(class_attribute)
    except ValueError:
        raise DataError(
            f"class attribute {class_attribute!r} not found in {source}; available: {list_names(names)}"
        ) from None


def numeric_class_error(name: str, source: str, *, by_default: bool = False, nominal: list[str] = ()) -> DataError:
    """The error of a numeric class; ``by_default``: the class is the last column because none was
    named, so the message says how to name it, and which columns (``nominal``) could be the class."""
    hint = ""
    if by_default:
        hint = "; the class is the last column unless --class NAME (class_attribute= in Python) names another"
        if nominal:
            hint += f", such as {list_names(list(nominal))}"
    return DataError(f"class attribute {name!r} in {source} is numeric; these classifiers need a nominal class{hint}")


def stack(columns: list[Column], n_rows: int) -> tuple[list[Attribute], np.ndarray, np.ndarray | None]:
    """The attributes, the codes matrix ``X`` and the raw numeric block of non-class columns."""
    attributes = [c.attribute for c in columns]
    if columns:
        zero = np.broadcast_to(np.uint8(0), (n_rows,))  # X's entry for a pending numeric attribute
        X = encode_codes([c.codes if c.codes is not None else zero for c in columns], attributes)
    else:  # encode_codes cannot see the row count without a column
        X = np.zeros((n_rows, 0), dtype=np.uint8)
    raws = [c.raw for c in columns if c.raw is not None]
    numeric = None
    if raws:
        numeric = np.empty((n_rows, len(raws)), dtype=np.float64)
        for k, r in enumerate(raws):
            numeric[:, k] = r
    return attributes, X, numeric


def assemble(columns: list[Column], class_index: int, *, relation: str, source: str) -> Dataset:
    """Build a :class:`Dataset` from decoded columns, with column ``class_index`` as the class.

    Raises
    ------
    DataError
        If the class column is numeric.
    """
    cls = columns[class_index]
    if cls.codes is None:
        raise numeric_class_error(cls.attribute.name, source)
    attributes, X, numeric = stack([c for i, c in enumerate(columns) if i != class_index], cls.n_rows)
    y = np.asarray(cls.codes)
    y = np.where(y == cls.attribute.missing_code, -1, y).astype(np.int32)
    return Dataset(attributes=attributes, class_attribute=cls.attribute, X=X, y=y, numeric=numeric,
                   relation=relation, source=source, class_index=class_index)


def dataset_columns(dataset: Dataset) -> list[Column]:
    """The inverse of :func:`assemble`: the dataset's attributes and class as columns, source order."""
    cols: list[Column] = []
    numcols = dataset.numeric_columns()
    for j, a in enumerate(dataset.attributes):
        if j in numcols:
            cols.append(Column(a, raw=dataset.numeric[:, numcols[j]]))
        else:
            cols.append(Column(a, codes=dataset.X[:, j]))
    ca = dataset.class_attribute
    y = np.where(dataset.y < 0, ca.missing_code, dataset.y)
    ci = dataset.class_index
    ci = len(cols) if ci < 0 or ci > len(cols) else ci
    cols.insert(ci, Column(ca, codes=y))
    return cols
