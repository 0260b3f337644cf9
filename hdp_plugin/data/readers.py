"""One entry point for files: the format comes from the extension, or is given."""

from __future__ import annotations

from pathlib import Path

from . import arrow
import numpy as np

from ._columns import Column, assemble
from ._files import check_path
from .arff import read_arff, read_arff_columns
from .conform import conform_columns
from ..errors import DataError, ParameterError
from .dataset import Attribute, Dataset
from .formats import FORMATS, format_of
from .limits import Limits, check_file_size, check_labels, check_working_memory

__all__ = ["FORMATS", "conform_table", "features_from_table", "format_of", "read_dataset", "read_conformed"]

_TABLES = {"arrow": arrow.ipc_table, "parquet": arrow.parquet_table, "csv": arrow.csv_table}


def _format(path, format: str | None, separator: str | None, decimal: str | None = None) -> str:
    """The format of ``path`` (:func:`format_of`); a ``separator`` and a ``decimal`` are for CSV files
    only."""
    fmt = format_of(path, format)
    for what, value in (("separator", separator), ("decimal", decimal)):
        if value is not None and fmt != "csv":
            raise ParameterError(f"a {what} applies to CSV files only, and {path} is read as {fmt}")
    return fmt


def _read_table(path, fmt: str, separator: str | None, decimal: str | None = None):
    return arrow.csv_table(path, separator=separator, decimal=decimal) if fmt == "csv" else _TABLES[fmt](path)


def _one_column(table, path, separator: str | None) -> None:
    """:class:`DataError` for training data read from a CSV file as one column, when no separator was
    given: no separator split its header, and a model of it would have no attributes."""
    if table.num_columns == 1 and separator is None:
        from ._csv import SEPARATORS, separator_name

        shown = ", ".join(separator_name(s) for s in SEPARATORS[:-1]) + " and " + separator_name(SEPARATORS[-1])
        raise DataError(f"{path}: no separator found: none of {shown} splits its header, so it is one column "
                        "and a model of it has no attributes; give the separator with --separator "
                        "(separator= in Python)")


def read_dataset(path: str | Path, *, class_attribute: str | None = None, format: str | None = None,
                 separator: str | None = None, decimal: str | None = None) -> Dataset:
    """Read a data file into a :class:`Dataset`.

    Parameters
    ----------
    path : str or Path
        An ARFF (``.arff``, ``.arff.gz``), Arrow IPC file or stream (``.arrow``, ``.feather``, ``.ipc``),
        Parquet (``.parquet``) or CSV (``.csv``, ``.csv.gz``, with a header row) file.
    class_attribute : str, optional
        Name of the class attribute; the last column by default (Weka's convention).
    format : {"arff", "arrow", "parquet", "csv"}, optional
        The format, when the extension does not tell it.
    separator : str, optional
        The separator of a CSV file's values (``","``, ``";"``, ``"\t"`` or ``"tab"``, ``"|"``, any
        one character); by default told from its header and first lines, of comma, semicolon, tab and
        ``|``.
    decimal : {".", ","}, optional
        The decimal separator of a CSV file's numbers. By default a ``;``-separated file whose text
        columns hold numbers with a decimal comma (``14,23``) is read with one, and a column that
        mixes them with other text is refused (as is, in a file separated otherwise, a column of
        numbers written with a comma); ``"."`` reads such columns as text.

    Returns
    -------
    Dataset
        Rows with a missing class are kept with ``y == -1``; see
        :meth:`Dataset.drop_missing_class`.

    Raises
    ------
    DataError
        For a missing, undecodable or malformed file (naming the line where there is one), an unknown
        class attribute (listing the available ones), a numeric class, or a CSV file whose separator
        cannot be told (two split its first lines alike, the one given leaves it one column that
        another splits, or none splits its header), or whose decimal separator cannot be told (see
        ``decimal``).
    ParameterError
        For an unknown ``format`` or an extension that names none, a ``separator`` that is not one
        character, a ``decimal`` that is not ``"."`` or ``","``, or either given for a file that is not
        CSV.

    See Also
    --------
    read_conformed : read new data on a trained model's attributes.
    """
    fmt = _format(path, format, separator, decimal)
    if fmt == "arff":
        return read_arff(path, class_attribute=class_attribute)
    table = _read_table(path, fmt, separator, decimal)
    if fmt == "csv":
        _one_column(table, path, separator)
    return arrow.from_arrow(table, class_attribute=class_attribute, source=str(path))


def read_columns(path: str | Path, *, format: str | None = None, separator: str | None = None,
                 decimal: str | None = None) -> tuple[list[Column], str, str]:
    """Decode every column of a file, choosing no class: ``(columns, relation, source)``."""
    fmt = _format(path, format, separator, decimal)
    if fmt == "arff":
        return read_arff_columns(path)
    source = str(path)
    return arrow.table_columns(_read_table(path, fmt, separator, decimal), source), Path(source).stem, source


def read_conformed(path: str | Path, attributes: list[Attribute], class_attribute: Attribute, *,
                   format: str | None = None, separator: str | None = None, decimal: str | None = None,
                   used=None) -> Dataset:
    """Read new data (to test or classify) directly onto a trained model's attributes.

    Unlike ``conform(read_dataset(path), ...)`` this chooses no class column while reading, so a file
    without the class column, whose last column is numeric, reads fine.

    Parameters
    ----------
    path : str or Path
        The file; formats as for :func:`read_dataset`.
    attributes : list of Attribute
        The training attributes.
    class_attribute : Attribute
        The training class.
    format, separator, decimal : str, optional
        As for :func:`read_dataset`.
    used : collection of str, optional
        The attributes the model uses, each warned of when the file has no known value of it
        (:func:`~hdp_plugin.data.conform`); every one of ``attributes`` by default.

    Returns
    -------
    Dataset
        As :func:`~hdp_plugin.data.conform` returns it.
    """
    columns, relation, source = read_columns(path, format=format, separator=separator, decimal=decimal)
    return conform_columns(columns, attributes, class_attribute, source=source, relation=relation, used=used)


def conform_table(table, attributes: list[Attribute], class_attribute: Attribute, *,
                  source: str = "<table>", used=None) -> Dataset:
    """A pyarrow Table or pandas DataFrame of new data, directly on a trained model's attributes.

    Columns are matched by name and decoded once (nominal ones by label, numeric ones as raw values
    for the stored cut points); no class column is chosen, and a class column, if present, is
    re-coded too.

    Returns
    -------
    Dataset
        As :func:`~hdp_plugin.data.conform` returns it.
    """
    if not isinstance(table, arrow.pa.Table):
        table = arrow.pandas_table(table, source)
    return conform_columns(arrow.table_columns(table, source), attributes, class_attribute, source=source,
                           used=used)


def features_from_table(table, *, source: str = "<table>", class_name: str = "__class__") -> Dataset:
    """A pyarrow Table or pandas DataFrame whose columns are all attributes (labels come separately).

    Columns decode as in :func:`from_arrow`; the class has no values and every ``y`` is -1, for the
    caller to fill in (as ``fit(X, y)`` does).
    """
    if not isinstance(table, arrow.pa.Table):
        table = arrow.pandas_table(table, source)
    columns = arrow.table_columns(table, source)
    columns.append(Column(Attribute(class_name, ()), codes=np.zeros(table.num_rows, dtype=np.int64)))
    return assemble(columns, len(columns) - 1, relation="data", source=source)


# -- within the limits of hdp-bnc and the daemon (hdp_plugin.data.limits) ------------------------------
def _table(path, fmt: str, limits: Limits, separator: str | None = None, check_rows=None,
           data: bytes | None = None, decimal: str | None = None):
    if data is not None:  # an Arrow IPC file's bytes, read by the caller (read_within)
        return arrow.ipc_table(path, max_bytes=limits.max_input_bytes, max_cells=limits.max_cells, data=data)
    p = check_path(path)
    check_file_size(p, limits.max_input_bytes)
    if fmt == "csv":
        return arrow.csv_table(p, max_cells=limits.max_cells, max_bytes=limits.max_input_bytes,
                               separator=separator, check_rows=check_rows, decimal=decimal)
    read = arrow.ipc_table if fmt == "arrow" else arrow.parquet_table
    return read(p, max_bytes=limits.max_input_bytes, max_cells=limits.max_cells)


def read_within(path, limits: Limits, *, class_attribute: str | None = None, format: str | None = None,
                structure: str | None = None, members_at_once: int = 1, separator: str | None = None,
                data: bytes | None = None, decimal: str | None = None):
    """:func:`~hdp_plugin.data.read_dataset` within ``limits``: the same Dataset, or one
    :class:`TooLargeError` raised before the memory is spent (the file's and its decompressed size
    before decompressing, an ARFF attribute's values while its header is parsed, the working memory
    of training on it as ``structure`` before its values are decoded into codes, and for a CSV file
    before its text is parsed).

    ``data``: the bytes of an ARFF or Arrow IPC file, read by the caller through a descriptor it checked
    (the daemon, which never opens a job's file twice); ``path`` then only names the file."""
    fmt = _format(path, format, separator, decimal)
    source = str(path)
    if data is not None and fmt not in ("arff", "arrow"):
        raise ValueError(f"data= is read as ARFF or Arrow IPC only, not as {fmt}")

    def check_rows(rows: int, columns: int) -> None:
        check_working_memory(rows, columns, limits, source, structure, members_at_once)

    if fmt == "arff":
        ds = read_arff(path, class_attribute=class_attribute, max_bytes=limits.max_input_bytes,
                       max_cardinality=limits.max_cardinality, check_rows=check_rows, data=data)
    else:
        table = _table(path, fmt, limits, separator, check_rows, data, decimal)
        if fmt == "csv":
            _one_column(table, path, separator)
        check_rows(table.num_rows, table.num_columns)
        ds = arrow.from_arrow(table, class_attribute=class_attribute, source=source)
        del table
    check_labels([*ds.attributes, ds.class_attribute], limits.max_cardinality, source)
    return ds


def read_conformed_within(path, attributes, class_attribute, limits: Limits, *, format: str | None = None,
                          separator: str | None = None, decimal: str | None = None, used=None):
    """:func:`~hdp_plugin.data.read_conformed` within ``limits`` (its file and decompressed size, the
    values of its nominal attributes, and for a CSV file the working memory of its rows before its
    text is parsed); ``used`` as for :func:`read_conformed`."""
    fmt = _format(path, format, separator, decimal)
    if fmt == "arff":
        columns, relation, source = read_arff_columns(path, max_bytes=limits.max_input_bytes,
                                                      max_cardinality=limits.max_cardinality)
    else:
        source = str(path)

        def check_rows(rows: int, columns: int) -> None:
            check_working_memory(rows, columns, limits, source, purpose="predict")

        table = _table(path, fmt, limits, separator, check_rows, decimal=decimal)
        columns, relation = arrow.table_columns(table, source), Path(source).stem
    check_labels([c.attribute for c in columns], limits.max_cardinality, source)
    return conform_columns(columns, attributes, class_attribute, source=source, relation=relation, used=used)
