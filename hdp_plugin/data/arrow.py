"""Columnar sources through pyarrow: Arrow tables, Arrow IPC (file and stream), Feather, Parquet, CSV, pandas.

Column types map to attributes as follows:

* dictionary columns are nominal with the dictionary's labels, in the dictionary's order;
* string columns (and CSV text columns) are nominal with their distinct values, sorted;
* boolean columns are nominal with labels ``("false", "true")``;
* integer, floating-point and decimal columns are numeric; dates and timestamps are numeric
  milliseconds since 1970-01-01 (as Weka stores dates), with a warning naming each such attribute
  when a table is read for training (:func:`from_arrow`);
* nulls, and NaN in floating-point columns, are missing.

The class column must be nominal, with one exception: an **integer** class column (labels 0/1 in a
CSV file, say) is read as nominal with its distinct values, sorted numerically, as labels.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .. import config
from ..errors import DataError, TooLargeError
from ._columns import (
    Column, assemble, check_unique_names, is_missing, numeric_class_error, resolve_class_index, short,
)
from ._files import GZIP_MAGIC, check_path, check_text, open_binary
from ._ipc_check import CheckedStream, check_ipc
from .dataset import Attribute, Dataset

log = logging.getLogger(__name__)

__all__ = ["from_arrow", "from_pandas", "read_ipc", "read_parquet", "read_csv", "to_arrow", "ipc_table",
           "ipc_batches", "parquet_table", "csv_table", "table_columns"]

_IPC_FILE_MAGIC = b"ARROW1"
_FEATHER_V1_MAGIC = b"FEA1"
#: what CSV files write for a missing value (pyarrow's defaults plus Weka's "?")
CSV_NULLS = [
    "", "?", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN",
    "<NA>", "N/A", "NA", "NULL", "NaN", "n/a", "nan", "null",
]


def _labels_of(values: pa.Array) -> list[str | None]:
    """Dictionary values as label strings (None for a null entry)."""
    if pa.types.is_string(values.type) or pa.types.is_large_string(values.type) or _is_string_view(values.type):
        return values.to_pylist()
    if pa.types.is_boolean(values.type):
        return [None if v is None else ("true" if v else "false") for v in values.to_pylist()]
    return [None if v is None else str(v) for v in values.to_pylist()]


def _relabel(labels: list[str | None], sort: bool) -> tuple[tuple[str, ...], np.ndarray]:
    """Final labels and a lookup ``old index -> code`` (one extra entry at the end for null indices).

    Null labels map to missing; repeated labels are merged; labels are sorted when ``sort``.
    """
    distinct = list(dict.fromkeys(v for v in labels if v is not None))
    if sort:
        distinct.sort()
    index = {v: i for i, v in enumerate(distinct)}
    missing = len(distinct)
    lut = np.array([missing if v is None else index[v] for v in labels] + [missing], dtype=np.int64)
    return tuple(distinct), lut


def _dictionary_codes(col: pa.ChunkedArray, sort: bool) -> tuple[tuple[str, ...], np.ndarray]:
    """Labels and codes of a dictionary-typed column (chunks may carry different dictionaries)."""
    col = col.unify_dictionaries()
    if col.num_chunks == 0:
        return (), np.empty(0, dtype=np.int64)
    labels, lut = _relabel(_labels_of(col.chunk(0).dictionary), sort)
    null_index = len(lut) - 1
    parts = [pc.fill_null(ch.indices, null_index).to_numpy(zero_copy_only=False) for ch in col.chunks]
    idx = np.concatenate(parts) if len(parts) > 1 else parts[0]
    return labels, lut[idx]


def _integer_class(col: pa.ChunkedArray) -> tuple[tuple[str, ...], np.ndarray]:
    valid = col.drop_null().to_numpy() if col.null_count else col.to_numpy()
    uniq = np.unique(valid)
    labels = tuple(str(int(v)) for v in uniq)
    codes = np.full(len(col), len(labels), dtype=np.int64)
    mask = pc.is_valid(col).to_numpy(zero_copy_only=False)
    codes[mask] = np.searchsorted(uniq, valid)
    return labels, codes


def _temporal_ms(col: pa.ChunkedArray, name: str, source: str) -> np.ndarray:
    t = col.type
    if pa.types.is_date32(t):
        ms = pc.cast(col, pa.int32()).to_numpy(zero_copy_only=False).astype(np.float64) * 86_400_000.0
    elif pa.types.is_date64(t):
        ms = pc.cast(col, pa.int64()).to_numpy(zero_copy_only=False).astype(np.float64)
    elif pa.types.is_timestamp(t) or pa.types.is_duration(t):
        per_ms = {"s": 1e-3, "ms": 1.0, "us": 1e3, "ns": 1e6}[t.unit]
        ms = pc.cast(col, pa.int64()).to_numpy(zero_copy_only=False).astype(np.float64) / per_ms
    else:
        raise DataError(f"column {name!r} in {source} has unsupported type {t}")
    if col.null_count:
        ms[~pc.is_valid(col).to_numpy(zero_copy_only=False)] = np.nan
    return ms


def warn_dates(schema: pa.Schema, class_index: int, source: str) -> None:
    """One warning (:func:`warnings.warn`) for each date or timestamp attribute of ``schema``: it is read
    as a number, which nothing else tells the user of a CSV file (whose reader found the dates)."""
    import warnings

    for i, f in enumerate(schema):
        if i != class_index and (pa.types.is_date(f.type) or pa.types.is_timestamp(f.type)):
            warnings.warn(f"column {f.name!r} in {source} holds dates: it is read as a number (milliseconds since "
                          "1970-01-01, as Weka reads dates) and cut into intervals of time", UserWarning,
                          stacklevel=3)


#: pyarrow's test for the string-view type (a pyarrow without one reads no such column)
_is_string_view = getattr(pa.types, "is_string_view", lambda _: False)


def _may_be_class(t: pa.DataType) -> bool:
    """Whether a column of type ``t`` reads as a nominal class: text, dictionary, boolean or integer."""
    return (pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_dictionary(t)
            or pa.types.is_boolean(t) or pa.types.is_integer(t) or pa.types.is_null(t) or _is_string_view(t))


def column_from_arrow(name: str, col: pa.ChunkedArray | pa.Array, source: str, *, is_class: bool = False) -> Column:
    """Decode one Arrow column into a :class:`Column` (see the module docstring for the rules)."""
    if isinstance(col, pa.Array):
        col = pa.chunked_array([col], type=col.type)
    t = col.type
    if pa.types.is_dictionary(t):
        labels, codes = _dictionary_codes(col, sort=False)
    elif pa.types.is_string(t) or pa.types.is_large_string(t) or _is_string_view(t):
        # string views are encoded as they are: a copy of their text could be far larger than the file
        labels, codes = _dictionary_codes(pc.dictionary_encode(col), sort=True)
    elif pa.types.is_boolean(t):
        labels = ("false", "true")
        codes = pc.fill_null(pc.cast(col, pa.uint8()), 2).to_numpy()
    elif pa.types.is_null(t):
        labels, codes = (), np.zeros(len(col), dtype=np.int64)
    elif is_class and pa.types.is_integer(t):
        labels, codes = _integer_class(col)
    elif pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_decimal(t):
        if is_class:
            raise numeric_class_error(name, source)
        raw = pc.cast(col, pa.float64(), safe=False).to_numpy()
        return Column(Attribute(name, (), numeric=True), raw=np.ascontiguousarray(raw, dtype=np.float64))
    elif pa.types.is_temporal(t):
        if is_class:
            raise numeric_class_error(name, source)
        return Column(Attribute(name, (), numeric=True, temporal="duration" if pa.types.is_duration(t) else "datetime"),
                      raw=_temporal_ms(col, name, source))
    else:
        raise DataError(f"column {name!r} in {source} has unsupported type {t}")
    return Column(Attribute(name, tuple(labels)), codes=np.asarray(codes))


def from_arrow(table: pa.Table, *, class_attribute: str | None = None, source: str = "<table>",
               relation: str | None = None) -> Dataset:
    """Make a :class:`Dataset` from a :class:`pyarrow.Table`.

    Parameters
    ----------
    table : pyarrow.Table
        One column per attribute, the class among them.
    class_attribute : str, optional
        Name of the class column; the last column by default.
    source : str
        Where the table came from, for error messages.
    relation : str, optional
        The relation name; ``source``'s stem by default.

    Returns
    -------
    Dataset

    Raises
    ------
    DataError
        For duplicate column names, an unknown or numeric class column, or an unsupported column type.
    """
    if isinstance(table, pa.RecordBatch):
        table = pa.Table.from_batches([table])
    if not isinstance(table, pa.Table):
        raise TypeError(f"table must be a pyarrow.Table, got {type(table).__name__}")
    names = [str(n) for n in table.column_names]
    check_unique_names(names, source)
    ci = resolve_class_index(names, class_attribute, source)
    if class_attribute is None and not _may_be_class(table.schema.field(ci).type):
        nominal = [n for i, n in enumerate(names) if i != ci and _may_be_class(table.schema.field(i).type)
                   and not pa.types.is_integer(table.schema.field(i).type)]
        raise numeric_class_error(names[ci], source, by_default=True, nominal=nominal)
    warn_dates(table.schema, ci, source)
    columns = _decode(table, names, source, ci)
    if relation is None:
        relation = Path(source).stem if not source.startswith("<") else "data"
    return assemble(columns, ci, relation=relation, source=source)


def from_pandas(df, *, class_attribute: str | None = None, source: str = "<DataFrame>") -> Dataset:
    """Make a :class:`Dataset` from a :class:`pandas.DataFrame`.

    Categorical columns keep their category order; object and string columns become nominal with
    sorted labels; booleans are ``("false", "true")``; numbers are numeric; ``None``, ``NaN`` and
    ``pd.NA`` are missing. The index is ignored.

    Parameters
    ----------
    df : pandas.DataFrame
    class_attribute : str, optional
        Name of the class column; the last column by default.
    source : str
        A description of the frame, for error messages.

    Returns
    -------
    Dataset
    """
    return from_arrow(pandas_table(df, source), class_attribute=class_attribute, source=source, relation="data")


def pandas_table(df, source: str = "<DataFrame>") -> pa.Table:
    """A pyarrow Table of a DataFrame's columns (names as strings; the index dropped)."""
    import pandas as pd  # only needed by callers who have pandas already

    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"df must be a pandas.DataFrame, got {type(df).__name__}")
    df = df.rename(columns=str)
    arrays = []
    for name in df.columns:
        s = df[name]
        try:
            arrays.append(pa.Array.from_pandas(s))
        except (pa.ArrowInvalid, pa.ArrowTypeError):  # an object column of mixed types: use its text
            arrays.append(pa.array([None if is_missing(v) else str(v) for v in s.tolist()], type=pa.string()))
    check_unique_names(list(df.columns), source)
    return pa.Table.from_arrays(arrays, names=list(df.columns))


def to_arrow(dataset: Dataset) -> pa.Table:
    """The dataset as an Arrow table, in source column order, that reads back to the same codes.

    Nominal attributes (the class included) become dictionary columns with the attribute's labels in
    code order; pending numeric attributes become float64; missing values are nulls.
    """
    from ._columns import dataset_columns

    arrays, names = [], []
    for c in dataset_columns(dataset):
        a = c.attribute
        if c.raw is not None:
            arr = pa.array(c.raw, type=pa.float64(), from_pandas=True)
        else:
            codes = np.asarray(c.codes, dtype=np.int32)
            idx = pa.array(codes, mask=codes == a.missing_code, type=pa.int32())
            arr = pa.DictionaryArray.from_arrays(idx, pa.array(list(a.values), type=pa.string()))
        arrays.append(arr)
        names.append(a.name)
    return pa.Table.from_arrays(arrays, names=names)


# -- files ---------------------------------------------------------------------------------------
#: everything pyarrow (or the decoding around it) raises for a corrupt file; each becomes one DataError
_READ_ERRORS = (pa.ArrowException, OSError, EOFError, IndexError, KeyError, UnicodeDecodeError, ValueError,
                TypeError, SystemError, OverflowError, RecursionError, AttributeError)


def _arrow_error(path: Path, what: str, e: Exception) -> DataError:
    msg = str(e).strip().split("\n", 1)[0] or type(e).__name__
    return DataError(f"{path}: cannot read as {what} ({short(msg, 120)[1:-1]})")


def _limits(size: int, max_bytes: int | None, max_cells: int | None) -> tuple[int, int, str, str]:
    if max_bytes is None:
        max_bytes = max(config.MAX_DECODED_BYTES_FLOOR, config.MAX_DECODED_RATIO * size)
        bytes_hint = "it is corrupt, or a decompression bomb"
    else:
        bytes_hint = "--max-input-mb bounds the data after decompression too"
    if max_cells is None:
        max_cells = config.MAX_CELLS
        cells_hint = "split the data, or raise hdp_plugin.config.MAX_CELLS if it is genuine"
    else:
        cells_hint = "the daemon's --max-cells bounds them"
    return max_bytes, max_cells, bytes_hint, cells_hint


def _view_bytes(arr: pa.Array) -> int:
    """The bytes of text the valid entries of a string-view array point to, counted from its views alone
    (16 bytes each, the length first): many views can point at one stretch of a small data buffer, so
    the text they stand for, which decoding them copies, can be far larger than the file."""
    n = len(arr)
    if n == 0:
        return 0
    views = np.frombuffer(arr.buffers()[1], dtype="<i4")
    lengths = views[4 * arr.offset: 4 * (arr.offset + n): 4].astype(np.int64)
    if arr.null_count:
        lengths = lengths[pc.is_valid(arr).to_numpy(zero_copy_only=False)]
    return int(np.maximum(lengths, 0).sum())


def check_view_text(table: pa.Table | pa.RecordBatch, source: str, max_bytes: int, hint: str) -> None:
    """:class:`TooLargeError` naming the column if the string-view columns of ``table`` (and the
    string-view dictionaries of its dictionary columns, each dictionary once) point to more than
    ``max_bytes`` bytes of text in all, counted from their views before any text is copied."""
    total, seen = 0, set()
    for name, col in zip(table.column_names, table.columns):
        t = col.type
        dictionary = pa.types.is_dictionary(t)
        if not (_is_string_view(t) or (dictionary and _is_string_view(t.value_type))):
            continue
        own = 0
        for chunk in (col.chunks if isinstance(col, pa.ChunkedArray) else [col]):
            arr = chunk.dictionary if dictionary else chunk
            if dictionary:  # the batches of a file share their dictionary
                key = (arr.buffers()[1].address if len(arr) else 0, arr.offset, len(arr))
                if key in seen:
                    continue
                seen.add(key)
            own += _view_bytes(arr)
        total += own
        if total > max_bytes:
            before = f" ({total - own:,} more in the columns before it)" if total > own else ""
            raise TooLargeError(f"{source}: column {name!r} holds {own:,} bytes of text in string views{before}, "
                                f"more than the limit of {max_bytes:,} bytes once decoded; {hint}")


def check_cells(table: pa.Table, source: str, max_cells: int | None = None) -> None:
    """:class:`DataError` if a decoded table holds more values (rows x columns) than allowed."""
    limit = config.MAX_CELLS if max_cells is None else max_cells
    cells = table.num_rows * max(1, table.num_columns)
    if cells > limit:
        raise TooLargeError(f"{source}: {table.num_rows} rows x {table.num_columns} columns = {cells} values, "
                        f"more than the limit of {limit}; use fewer rows or columns")


def _read_all(path: Path) -> pa.Buffer:
    """The whole file in memory (never memory-mapped: a file truncated while mapped kills the process)."""
    try:
        with open(path, "rb") as f:
            return pa.py_buffer(f.read())
    except OSError as e:
        raise DataError(f"{path}: cannot read ({e.strerror or e})") from None


def _feather_v1(p: Path) -> DataError:
    return DataError(f"{p}: is a Feather v1 file (the legacy format, whose reader is not safe on corrupt "
                     "input); re-save it as Feather v2, e.g. pyarrow.feather.write_feather(table, path)")


def ipc_table(path: str | Path, *, max_bytes: int | None = None, max_cells: int | None = None,
              data: bytes | None = None) -> pa.Table:
    """Read an Arrow IPC file (Feather v2) or IPC stream, telling them apart by their magic bytes.

    The file's metadata is checked before anything is decoded (every offset and size inside the file,
    decoded bytes at most ``max_bytes``, declared values at most ``max_cells``), and every record
    batch is validated fully (offsets, dictionary indices, UTF-8) before it is used; the text its
    string views point to counts against ``max_bytes`` too, before any of it is copied
    (:func:`check_view_text`). Any fault is
    one :class:`DataError` naming the file. ``data``: the file's bytes, read by the caller through a
    descriptor it checked (the daemon); ``path`` then only names the file, and is not opened.
    """
    p = check_path(path) if data is None else Path(path)
    buf = _read_all(p) if data is None else pa.py_buffer(data)
    max_bytes, max_cells, bytes_hint, cells_hint = _limits(buf.size, max_bytes, max_cells)
    view = memoryview(buf)
    if bytes(view[:4]) == _FEATHER_V1_MAGIC:
        raise _feather_v1(p)
    try:
        start, end = check_ipc(view, str(p), max_bytes=max_bytes, max_cells=max_cells, bytes_hint=bytes_hint,
                               cells_hint=cells_hint)
        reader = pa.ipc.open_stream(pa.BufferReader(buf.slice(start, end - start)))
        batches = []
        for batch in reader:
            batch.validate(full=True)
            batches.append(batch)
        table = pa.Table.from_batches(batches, schema=reader.schema)
        [str(f.name) for f in table.schema]  # names that are not UTF-8 raise here, not later
        check_view_text(table, str(p), max_bytes, bytes_hint)
    except DataError:
        raise
    except _READ_ERRORS as e:
        raise _arrow_error(p, "an Arrow IPC file or stream", e) from None
    check_cells(table, str(p), max_cells)
    return table


def ipc_batches(path: str | Path, *, max_bytes: int | None = None,
                max_cells: int | None = None) -> Iterator[pa.RecordBatch]:
    """The record batches of an Arrow IPC file (Feather v2) or IPC stream, one at a time, for files
    larger than memory: the batches :func:`ipc_table`'s table is made of, in order.

    The same checks as :func:`ipc_table`, message by message as the file is read (every offset and
    size inside the file, every batch validated fully), with the limits applied to each record batch
    on its own and to the dictionaries together; one message, and one decoded batch, are in memory
    at a time. The file is read, not memory-mapped (a file truncated while mapped would kill the
    process); one that shrinks while it is read is an error. Any fault is one :class:`DataError`
    naming the file, raised when the reading reaches it.
    """
    p, fh = open_binary(path)
    with fh:
        try:
            size = os.fstat(fh.fileno()).st_size
            magic = fh.read(4)
        except OSError as e:
            raise DataError(f"{p}: cannot read ({e.strerror or e})") from None
        if magic == _FEATHER_V1_MAGIC:
            raise _feather_v1(p)
        max_bytes, max_cells, bytes_hint, cells_hint = _limits(size, max_bytes, max_cells)
        stream = CheckedStream(fh, size, str(p), max_bytes=max_bytes, max_cells=max_cells, bytes_hint=bytes_hint,
                               cells_hint=cells_hint)
        try:
            reader = pa.ipc.open_stream(pa.PythonFile(stream, mode="r"))
            [str(f.name) for f in reader.schema]  # names that are not UTF-8 raise here, not later
            while True:
                try:
                    batch = reader.read_next_batch()
                except StopIteration:
                    break
                batch.validate(full=True)
                check_view_text(batch, str(p), max_bytes, bytes_hint)
                yield batch
        except DataError:
            raise
        except _READ_ERRORS as e:
            raise _arrow_error(p, "an Arrow IPC file or stream", e) from None


def parquet_table(path: str | Path, *, max_bytes: int | None = None, max_cells: int | None = None) -> pa.Table:
    """Read a Parquet file, after checking the row and column counts its footer declares."""
    import pyarrow.parquet as pq

    p = check_path(path)
    buf = _read_all(p)
    max_bytes, max_cells, bytes_hint, _ = _limits(buf.size, max_bytes, max_cells)
    try:
        meta = pq.ParquetFile(pa.BufferReader(buf)).metadata
        cells = meta.num_rows * max(1, meta.num_columns)
        if meta.num_rows < 0 or cells > max_cells:
            raise TooLargeError(f"{p}: declares {meta.num_rows} rows x {meta.num_columns} columns = {cells} values, "
                            f"more than the limit of {max_cells}; use fewer rows or columns")
        decoded = sum(max(0, meta.row_group(i).total_byte_size) for i in range(meta.num_row_groups))
        if decoded > max_bytes:
            raise TooLargeError(f"{p}: its row groups would take {decoded} bytes once decoded, more than the "
                            f"limit of {max_bytes}; {bytes_hint}")
        table = pq.read_table(pa.BufferReader(buf))
        table.validate(full=True)
        [str(f.name) for f in table.schema]
    except DataError:
        raise
    except _READ_ERRORS as e:
        raise _arrow_error(p, "Parquet", e) from None
    check_cells(table, str(p), max_cells)
    return table


def checked_csv_path(path: str | Path) -> Path:
    """``path`` as a Path once it names a non-empty file whose start is text (or gzip data)."""
    p = check_path(path)
    if p.stat().st_size == 0:
        raise DataError(f"{p}: is empty")
    with open(p, "rb") as f:
        head = f.read(65536)
    if not head.startswith(GZIP_MAGIC):
        check_text(head, str(p))
    return p


def csv_table(path: str | Path, *, max_cells: int | None = None, max_bytes: int | None = None,
              separator: str | None = None, check_rows=None, decimal: str | None = None) -> pa.Table:
    """Read a CSV file with a header row (gzip-compressed if named ``.gz``), types inferred by pyarrow.

    ``separator`` is told from the header and the first lines when not given (comma, semicolon, tab or
    ``|``; :func:`~hdp_plugin.data._csv.choose_separator`), and a file it cannot be told of, or that
    the given one leaves one column while another splits it, is refused. ``decimal`` is the decimal
    separator of its numbers, ``"."`` or ``","``; by default a ``;``-separated file whose text columns
    hold numbers with a decimal comma is read with one (:func:`~hdp_plugin.data._csv.choose_decimal`,
    which refuses a column it cannot tell). ``max_bytes`` bounds the file
    and its decompressed data (``--max-input-mb``); by default a gzip file may decompress to 64 times
    its size or 1 GiB, whichever is larger. Gzip data is decompressed here, never beyond the limit,
    then parsed from memory. Before anything is parsed, the rows (its line ends) times the columns
    are checked against ``max_cells`` and given to ``check_rows(rows, columns)``, which raises
    :class:`~hdp_plugin.errors.TooLargeError` for data whose decoding would not fit.
    """
    import pyarrow.csv as pa_csv

    from ._csv import (MAX_BLOCK, block_size, check_decimal_comma, check_decimal_point, choose_decimal,
                       choose_separator, decimal_value, read_head, separator_value)
    from ._files import read_blocks, read_bytes
    from .limits import check_file_size

    given = separator_value(separator)
    point = decimal_value(decimal)
    p = checked_csv_path(path)
    with open(p, "rb") as f:
        magic = f.read(len(GZIP_MAGIC))
    check_file_size(p, max_bytes)
    data = read_bytes(p, max_bytes) if magic == GZIP_MAGIC else None
    head, complete = read_head(data if data is not None else read_blocks(p))
    sep, columns = choose_separator(head, str(p), complete=complete, given=given)
    _check_csv_rows(p, data, columns, max_cells, check_rows)
    size = len(data) if data is not None else p.stat().st_size
    blocks = block_size(head)

    def parse(decimal_point: str) -> pa.Table:
        nonlocal blocks
        while True:
            source = pa.BufferReader(pa.py_buffer(data)) if data is not None else str(p)
            try:
                return pa_csv.read_csv(
                    source, read_options=pa_csv.ReadOptions(block_size=blocks),
                    parse_options=pa_csv.ParseOptions(delimiter=sep),
                    convert_options=pa_csv.ConvertOptions(null_values=CSV_NULLS, strings_can_be_null=True,
                                                          decimal_point=decimal_point),
                )
            except pa.ArrowInvalid as e:  # a row longer than the lines of the head: blocks that hold it
                if "straddl" not in str(e) or blocks > size or blocks >= MAX_BLOCK:
                    raise
                blocks = min(MAX_BLOCK, max(4 * blocks, size + 1))

    try:
        table = _checked_csv(parse(point or "."), p)
        if point is None:
            numbers = choose_decimal(table, sep, str(p))
            if numbers:  # a decimal comma: read again with it, and check that every column agrees
                schema = table.schema
                del table
                table = _checked_csv(parse(","), p)
                check_decimal_comma(numbers, schema, table, str(p))
        elif point == ",":
            check_decimal_point(table, str(p))
    except DataError:
        raise
    except _READ_ERRORS as e:
        if "UTF8" in str(e):
            raise DataError(f"{p}: is not valid UTF-8; is it a binary file, or text in another encoding? "
                            "Save it as UTF-8") from None
        raise _arrow_error(p, "CSV", e) from None
    data = None  # the decompressed bytes: not kept beside the table
    check_cells(table, str(p), max_cells)
    return table


def _checked_csv(table: pa.Table, p: Path) -> pa.Table:
    """``table``, read from the CSV file ``p``, once its column names and text are valid UTF-8."""
    try:
        [str(f.name) for f in table.schema]  # a header that is not UTF-8 raises here, not later
    except UnicodeDecodeError:
        raise DataError(f"{p}: its header (the column names) is not valid UTF-8; is it text in another "
                        "encoding? Save it as UTF-8") from None
    for field in table.schema:
        if pa.types.is_binary(field.type) or pa.types.is_large_binary(field.type):
            raise DataError(f"{p}: column {field.name!r} is not valid UTF-8 text; is it a binary file, or text "
                            "in another encoding? Save it as UTF-8")
    return table


def _check_csv_rows(p: Path, data: bytes | None, columns: int, max_cells: int | None, check_rows) -> None:
    """The checks of a CSV file's size in values before it is parsed: its rows are at most its line ends
    less the header (counted in ``data``, its decompressed bytes, or read block by block from ``p``).
    A row takes at least ``columns`` bytes, so a file small enough for that bound is not counted."""
    from ._csv import count_lines
    from ._files import read_blocks

    size = len(data) if data is not None else p.stat().st_size

    def check(rows: int) -> None:
        limit = config.MAX_CELLS if max_cells is None else max_cells
        if rows * columns > limit:
            raise TooLargeError(f"{p}: about {rows:,} rows x {columns:,} columns = {rows * columns:,} values, "
                                f"more than the limit of {limit:,}; use fewer rows or columns")
        if check_rows is not None:
            check_rows(rows, columns)

    try:
        check(size // max(1, columns) + 1)
        return
    except TooLargeError:
        pass
    lines, _ = count_lines([data] if data is not None else read_blocks(p))
    check(max(0, lines - 1))


def read_ipc(path: str | Path, *, class_attribute: str | None = None) -> Dataset:
    """Read an Arrow IPC file (``.arrow``/``.feather``/``.ipc``, Feather v2) or IPC stream."""
    return from_arrow(ipc_table(path), class_attribute=class_attribute, source=str(path))


def read_parquet(path: str | Path, *, class_attribute: str | None = None) -> Dataset:
    """Read a Parquet file into a :class:`Dataset`."""
    return from_arrow(parquet_table(path), class_attribute=class_attribute, source=str(path))


def read_csv(path: str | Path, *, class_attribute: str | None = None, separator: str | None = None,
             decimal: str | None = None) -> Dataset:
    """Read a CSV file with a header row into a :class:`Dataset`.

    Column types are inferred by pyarrow (numbers numeric, text nominal with sorted labels); ``?``,
    empty cells and the usual NA spellings are missing. Gzip-compressed files (``.csv.gz``) are read
    transparently. The separator is told from the header and first lines unless ``separator`` gives
    it, the decimal separator from the columns unless ``decimal`` gives it (:func:`csv_table`).
    """
    return from_arrow(csv_table(path, separator=separator, decimal=decimal), class_attribute=class_attribute,
                      source=str(path))


def table_columns(table: pa.Table, source: str) -> list[Column]:
    """Decode every column of a table, choosing no class."""
    names = [str(n) for n in table.column_names]
    check_unique_names(names, source)
    return _decode(table, names, source, -1)


def _decode(table: pa.Table, names: list[str], source: str, class_index: int) -> list[Column]:
    """Every column decoded; a failure inside pyarrow becomes one :class:`DataError` naming the source."""
    try:
        return [column_from_arrow(n, table.column(i), source, is_class=(i == class_index))
                for i, n in enumerate(names)]
    except DataError:
        raise
    except _READ_ERRORS as e:
        msg = str(e).strip().split("\n", 1)[0] or type(e).__name__
        raise DataError(f"{source}: cannot decode its columns ({short(msg, 120)[1:-1]})") from None
