"""Data too large for memory: a data set read as record batches, pass after pass.

:func:`open_batches` opens a Parquet data set (one file, a directory of files -- hive-partitioned
directories add their partition columns --, or a glob), Arrow IPC files and streams, or CSV files, and
returns a :class:`BatchSource`: a re-readable sequence of record batches of at most ``batch_rows``
rows, in a fixed order (files sorted by path, rows in file order). Training
(:meth:`hdp_plugin.model.BayesNetClassifier.fit` given a source) reads it several times -- once to
learn the attributes and the discretisation sample, then once per counting pass -- and holds one
batch, the counts and the model at a time, never the data.

The attributes are exactly those that reading the whole data set into memory would give (labels of a
text column sorted, a dictionary column's labels in order of appearance, an integer class's values
sorted numerically), so a model trained from a source equals the model trained from the same rows in
memory, bit for bit, as long as the data has at most ``sample_rows`` rows with a known class: numeric
attributes are discretised on a sample of that many rows (all of them when there are fewer), drawn
by a seeded hash of each row's position, so the sample does not depend on batch or partition sizes.

Every file keeps the checks of the one-file readers (:mod:`hdp_plugin.data.arrow`), and none is held
whole: Parquet footers are checked before a row group is decoded and every batch is validated; an
Arrow IPC file or stream is read message by message (:func:`~hdp_plugin.data.arrow.ipc_batches`), each
one checked by the code that checks :func:`~hdp_plugin.data.arrow.ipc_table`'s before it is decoded,
the limits applying to each record batch; CSV is read block by block, its column types set by the
first block (a later value of another type is one error naming the file: convert such a file to
Parquet); ARFF is read incrementally (:func:`~hdp_plugin.data.arff.read_arff_chunks`): the header
once, then the data rows in chunks parsed by the whole-file parser, with its errors and line numbers.
Record batches larger than ``batch_rows`` are cut; the batches of one file, concatenated, are what
reading it whole gives.
"""

from __future__ import annotations

import glob as _glob
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa

from .. import config
from ..errors import DataError, ParameterError
from ._columns import (
    check_unique_names,
    list_names,
    numeric_class_error,
    resolve_class_index,
)
from .arrow import (
    _READ_ERRORS,
    CSV_NULLS,
    _arrow_error,
    _decode,
    _limits,
    warn_dates,
)
from .categorical import integer_domain, integer_labels, resolve_categorical
from .dataset import Attribute, Dataset

__all__ = ["DEFAULT_SAMPLE_ROWS", "BatchSource", "is_batch_path", "open_batches"]

#: rows of the discretisation sample by default: data of up to this many rows is discretised exactly
#: as in memory
DEFAULT_SAMPLE_ROWS = 1_000_000
_EXTENSIONS = {"parquet": (".parquet", ".pq"), "arrow": (".arrow", ".feather", ".ipc", ".arrows"),
               "csv": (".csv", ".csv.gz"), "arff": (".arff", ".arff.gz")}
_GLOB_CHARS = set("*?[")


def is_batch_path(path: str | Path) -> bool:
    """True for a directory or a glob pattern: what the command line trains on as a stream."""
    text = str(path)
    return Path(text).is_dir() or (bool(_GLOB_CHARS & set(text)) and not Path(text).exists())


def _format_of_file(p: str) -> str | None:
    low = p.lower()
    for fmt, exts in _EXTENSIONS.items():
        if low.endswith(exts):
            return fmt
    return None


def _list_files(path: str, fmt: str | None) -> tuple[list[str], str, str | None]:
    """The files of ``path`` sorted, their format, and the hive base directory (or None)."""
    p = Path(path)
    base = None
    if p.is_dir():
        files = []
        for root, dirs, names in os.walk(p):
            dirs[:] = sorted(d for d in dirs if not d.startswith((".", "_")))
            files += [os.path.join(root, n) for n in names if not n.startswith((".", "_"))]
        base = str(p)
    elif p.exists():
        files = [str(p)]
    elif _GLOB_CHARS & set(str(path)):
        files = [f for f in _glob.glob(str(path), recursive=True) if os.path.isfile(f)]
    else:
        raise DataError(f"{path}: no such file or directory")
    if fmt is None:
        known = [f for f in files if _format_of_file(f)]
        fmts = sorted({_format_of_file(f) for f in known})
        if len(fmts) > 1:
            raise DataError(f"{path}: holds files of several formats ({', '.join(fmts)}); give one format")
        if not fmts:
            raise DataError(f"{path}: holds no .parquet, .arrow/.feather/.ipc, .csv or .arff file")
        fmt = fmts[0]
        files = known
    else:
        fmt = {"feather": "arrow", "ipc": "arrow", "pq": "parquet"}.get(fmt.lower().lstrip("."), fmt.lower())
        if fmt not in _EXTENSIONS:
            raise ParameterError(f"format must be one of {', '.join(_EXTENSIONS)}, got {fmt!r}")
        if base is not None:
            files = [f for f in files if _format_of_file(f) in (fmt, None)]
    files.sort()
    if not files:
        raise DataError(f"{path}: no data files")
    return files, fmt, base


def _hive_values(file: str, base: str | None) -> list[tuple[str, str]]:
    """``key=value`` directory names between ``base`` and ``file``, outermost first."""
    if base is None:
        return []
    rel = Path(os.path.relpath(os.path.dirname(file), base))
    out = []
    for part in rel.parts:
        if "=" in part:
            k, v = part.split("=", 1)
            out.append((k, v))
    return out


@dataclass
class BatchSource:
    """A data set read as record batches (see the module docstring); make it with :func:`open_batches`.

    ``files`` are read in order; ``class_attribute`` names the class column (default the last);
    ``sample_rows`` bounds the discretisation sample; ``batch_rows`` the rows of a batch; ``separator``
    and ``decimal`` are CSV files' (by default told from each file's first lines and first block).
    """

    files: list[str]
    format: str
    class_attribute: str | None = None
    batch_rows: int = config.ROW_BLOCK
    sample_rows: int = DEFAULT_SAMPLE_ROWS
    source: str = "<batches>"
    hive_base: str | None = None
    _n_rows: list = field(default_factory=list, repr=False)
    separator: str | None = None
    decimal: str | None = None

    # -- batches -------------------------------------------------------------------------------
    def batches(self) -> Iterator[pa.Table]:
        """Every batch of every file, in order, as a one-chunk :class:`pyarrow.Table`."""
        for f in self.files:
            yield from self.file_batches(f)

    def file_batches(self, f: str) -> Iterator[pa.Table]:
        """The batches of one file (hive partition columns appended)."""
        hive = _hive_values(f, self.hive_base)
        if self.format == "csv":
            batches = _csv_batches(f, self.batch_rows, self.separator, self.decimal)
        else:
            batches = {"parquet": _parquet_batches, "arrow": _ipc_batches,
                       "arff": _arff_batches}[self.format](f, self.batch_rows)
        for t in batches:
            if hive:
                for k, v in hive:
                    if k in t.column_names:
                        raise DataError(f"{f}: partition key {k!r} is also a column of the file")
                    t = t.append_column(k, pa.array([v] * t.num_rows, pa.string()))
            yield t

    def partitions(self) -> list[BatchSource]:
        """One source per file (the unit of parallel work), in order."""
        return [BatchSource([f], self.format, self.class_attribute, self.batch_rows, self.sample_rows,
                            source=f, hive_base=self.hive_base, separator=self.separator, decimal=self.decimal)
                for f in self.files]

    def __repr__(self) -> str:
        return f"BatchSource({self.source!r}, {len(self.files)} {self.format} file(s))"


def open_batches(path, *, class_attribute: str | None = None, format: str | None = None,
                 batch_rows: int = config.ROW_BLOCK, sample_rows: int = DEFAULT_SAMPLE_ROWS,
                 separator: str | None = None, decimal: str | None = None) -> BatchSource:
    """Open a file, a directory of files (hive partitions allowed) or a glob as a :class:`BatchSource`.

    Parameters
    ----------
    path : str or Path
        A data file, a directory (read recursively, hidden and ``_`` files skipped) or a glob.
    class_attribute : str, optional
        The class column's name; the last column by default.
    format : {"parquet", "arrow", "csv", "arff"}, optional
        The files' format; by default their extension's (a directory must hold one format).
    batch_rows : int
        Rows per batch (bounds memory with the number of columns).
    sample_rows : int
        Rows (with a known class) of the sample that numeric attributes are discretised on.
    separator : str, optional
        CSV files' separator (as for :func:`~hdp_plugin.data.read_dataset`); by default told from
        each file's header and first lines.
    decimal : {".", ","}, optional
        CSV files' decimal separator (as for :func:`~hdp_plugin.data.read_dataset`); by default told from
        each file's first block, whose values set the column types.
    """
    from ._csv import decimal_value, separator_value

    separator = separator_value(separator)
    decimal = decimal_value(decimal)
    for name, v, lo in (("batch_rows", batch_rows, 1), ("sample_rows", sample_rows, 1)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < lo:
            raise ParameterError(f"{name} must be an integer >= {lo}, got {v!r}")
    files, fmt, base = _list_files(str(path), format)
    for what, value in (("separator", separator), ("decimal", decimal)):
        if value is not None and fmt != "csv":
            raise ParameterError(f"a {what} applies to CSV files only, and {path} is read as {fmt}")
    return BatchSource(files, fmt, class_attribute, int(batch_rows), int(sample_rows), source=str(path),
                       hive_base=base, separator=separator, decimal=decimal)


# -- readers, one file each ---------------------------------------------------------------------------
def _parquet_batches(f: str, batch_rows: int) -> Iterator[pa.Table]:
    import pyarrow.parquet as pq

    from ._files import check_path

    p = check_path(f)
    max_bytes, max_cells, bytes_hint, _ = _limits(p.stat().st_size, None, None)
    try:
        pf = pq.ParquetFile(str(p))
        meta = pf.metadata
        if meta.num_rows < 0:
            raise DataError(f"{p}: declares a negative number of rows")
        for i in range(meta.num_row_groups):
            rg = meta.row_group(i)
            if rg.total_byte_size > max_bytes or rg.num_rows * max(1, meta.num_columns) > max_cells:
                raise DataError(f"{p}: row group {i} would take {rg.total_byte_size} bytes ({rg.num_rows} rows) "
                                f"once decoded, more than the limit of {max_bytes}; {bytes_hint}")
        for batch in pf.iter_batches(batch_size=batch_rows):
            batch.validate(full=True)
            t = pa.Table.from_batches([batch])
            [str(n) for n in t.column_names]
            yield t
    except DataError:
        raise
    except _READ_ERRORS as e:
        raise _arrow_error(p, "Parquet", e) from None


def _ipc_batches(f: str, batch_rows: int) -> Iterator[pa.Table]:
    from .arrow import ipc_batches

    for batch in ipc_batches(f):  # larger batches are cut: the same batches as the whole file's table would give
        table = pa.Table.from_batches([batch])
        for b in table.to_batches(max_chunksize=batch_rows) if batch.num_rows else [batch]:
            yield pa.Table.from_batches([b], schema=batch.schema)


def _csv_batches(f: str, batch_rows: int, separator: str | None = None,
                 decimal: str | None = None) -> Iterator[pa.Table]:
    """The batches of a CSV file; its separator and decimal separator told as :func:`~hdp_plugin.data.
    arrow.csv_table` tells them, the decimal from the first block (whose values set the column types)."""
    import pyarrow.csv as pa_csv

    from ._csv import (block_size, check_decimal_comma, check_decimal_point, choose_decimal, choose_separator,
                       read_head)
    from ._files import read_blocks
    from .arrow import checked_csv_path

    p = checked_csv_path(f)
    head, complete = read_head(read_blocks(p))
    sep, _ = choose_separator(head, str(p), complete=complete, given=separator)
    blocks = block_size(head, 1 << 24)

    def first_batch(point: str):
        reader = pa_csv.open_csv(
            str(p), read_options=pa_csv.ReadOptions(block_size=blocks),
            parse_options=pa_csv.ParseOptions(delimiter=sep),
            convert_options=pa_csv.ConvertOptions(null_values=CSV_NULLS, strings_can_be_null=True,
                                                  decimal_point=point))
        try:
            [str(f.name) for f in reader.schema]  # a header that is not UTF-8 raises here, not later
        except UnicodeDecodeError:
            raise DataError(f"{p}: its header (the column names) is not valid UTF-8; save it as UTF-8") from None
        try:
            batch = reader.read_next_batch()
        except StopIteration:
            batch = None
        return reader, batch

    def checked(batch):
        for field_ in batch.schema:
            if pa.types.is_binary(field_.type) or pa.types.is_large_binary(field_.type):
                raise DataError(f"{p}: column {field_.name!r} is not valid UTF-8 text; save it as UTF-8")
        return pa.Table.from_batches([batch])

    try:
        reader, batch = first_batch(decimal or ".")
        if batch is not None:
            t = checked(batch)
            if decimal is None:
                numbers = choose_decimal(t, sep, str(p))
                if numbers:  # a decimal comma: read again with it, and check that every column agrees
                    reader, batch = first_batch(",")
                    check_decimal_comma(numbers, t.schema, checked(batch), str(p))
            elif decimal == ",":
                check_decimal_point(t, str(p))
        while batch is not None:
            t = checked(batch)
            for b in t.to_batches(max_chunksize=batch_rows):
                yield pa.Table.from_batches([b], schema=t.schema)
            try:
                batch = reader.read_next_batch()
            except StopIteration:
                batch = None
    except DataError:
        raise
    except _READ_ERRORS as e:
        if "UTF8" in str(e):
            raise DataError(f"{p}: is not valid UTF-8; save it as UTF-8") from None
        msg = str(e)
        hint = (" (a column's type changed after the first block of the file, whose values set the types: "
                "convert the file to Parquet)" if "conversion" in msg.lower() or "convert" in msg.lower() else "")
        raise DataError(f"{p}: cannot read as CSV ({msg.strip().splitlines()[0][:120]}){hint}") from None


def _arff_batches(f: str, batch_rows: int) -> Iterator[pa.Table]:
    """The file's rows ``batch_rows`` at a time (:func:`~hdp_plugin.data.arff.read_arff_chunks`): nominal
    columns as dictionaries of the labels the header declares, numeric columns as float64, date columns as
    timestamps (the same milliseconds), and
    string attributes as text (their labels, the distinct values sorted, are those of the whole file
    once the schema pass has seen every batch)."""
    from .arff import read_arff_chunks

    for header, columns in read_arff_chunks(f, batch_rows):
        arrays, names = [], []
        for decl, c in zip(header.attributes, columns):
            a = c.attribute
            names.append(a.name)
            if c.raw is not None:
                arr = pa.array(c.raw, type=pa.float64(), from_pandas=True)
                # dates as timestamps: the same milliseconds, read as dates (Attribute.temporal)
                arrays.append(arr.cast(pa.int64()).cast(pa.timestamp("ms")) if decl.kind == "date" else arr)
                continue
            codes = np.asarray(c.codes, dtype=np.int32)
            idx = pa.array(codes, mask=codes == a.missing_code, type=pa.int32())
            arr = pa.DictionaryArray.from_arrays(idx, pa.array(list(a.values), type=pa.string()))
            arrays.append(arr.cast(pa.string()) if decl.kind == "string" else arr)
        yield pa.Table.from_arrays(arrays, names=names)


# -- the schema pass: attributes, class, missing values and the discretisation sample ----------------
_SALT = np.uint64(0x9E3779B97F4A7C15)


def row_priority(index: np.ndarray) -> np.ndarray:
    """A fixed pseudo-random 64-bit priority of each global row index (splitmix64).

    The discretisation sample keeps the rows of lowest priority, so it depends on the rows' positions
    only, not on how the data is cut into batches or partitions.
    """
    with np.errstate(over="ignore"):
        z = index.astype(np.uint64) * _SALT + _SALT
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


@dataclass
class _ColumnState:
    name: str
    kind: str  # "dict", "text", "bool", "intclass", "numeric", "null"
    labels: dict = field(default_factory=dict)  # label -> None, in order of first appearance
    missing: bool = False
    declared: bool = False  # declared categorical (categorical_features)
    domain: np.ndarray | None = None  # a declared numeric column's distinct values so far, ascending
    temporal: str | None = None  # a numeric column's dates or durations (Attribute.temporal)


@dataclass
class Schema:
    """What the first pass learns: attributes (numeric ones still pending), class, row counts, which
    attributes have missing values, and the discretisation sample (a Dataset of at most ``sample_rows``
    rows with a known class, in data order)."""

    attributes: list[Attribute]
    class_attribute: Attribute
    n_rows: int
    n_known: int
    class_counts: np.ndarray
    has_missing: np.ndarray
    sample: Dataset
    sampled_all: bool
    names: list[str]
    batch_rows: list[int] = field(default_factory=list)


def _kind(t: pa.DataType, is_class: bool) -> str:
    if pa.types.is_dictionary(t):
        return "dict"
    if pa.types.is_boolean(t):
        return "bool"
    if pa.types.is_null(t):
        return "null"
    if is_class and pa.types.is_integer(t):
        return "intclass"
    if pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_decimal(t) or pa.types.is_temporal(t):
        return "numeric"
    return "text"


class SchemaScan:
    """The first pass, batch by batch; partial scans of consecutive parts merge with :meth:`merge`.

    ``categorical`` is the classifier's ``categorical_features``: a declared numeric column becomes
    nominal, its domain the union of every batch's distinct values, sorted numerically (so it does
    not depend on the batches' order or sizes, and is the in-memory one).
    """

    def __init__(self, sample_rows: int, categorical=None):
        self.sample_rows = sample_rows
        self.categorical = categorical
        self.names: list[str] | None = None
        self.ci = -1
        self.states: list[_ColumnState] = []
        self.n_rows = 0
        self.n_known = 0
        self.class_labels: dict = {}
        self.class_counts: dict = {}
        # sample: priorities, global indices, class label ids (into class_labels), numeric values
        self.s_pri = np.zeros(0, np.uint64)
        self.s_idx = np.zeros(0, np.int64)
        self.s_cls = np.zeros(0, np.int64)
        self.s_num = np.zeros((0, 0))
        self.batch_rows: list[int] = []

    def _start(self, table: pa.Table, source: str, class_attribute: str | None) -> None:
        names = [str(n) for n in table.column_names]
        check_unique_names(names, source)
        self.ci = resolve_class_index(names, class_attribute, source)
        self.names = names
        self.states = [_ColumnState(n, _kind(table.schema.field(i).type, i == self.ci)) for i, n in enumerate(names)]
        warn_dates(table.schema, self.ci, source)
        if self.states[self.ci].kind == "numeric":
            nominal = [s.name for i, s in enumerate(self.states) if i != self.ci and s.kind != "numeric"]
            raise numeric_class_error(names[self.ci], source, by_default=class_attribute is None, nominal=nominal)
        features = [i for i in range(len(names)) if i != self.ci]
        for j in resolve_categorical(self.categorical, [names[i] for i in features], source,
                                     class_name=names[self.ci]):
            self.states[features[j]].declared = True
        n_num = sum(s.kind == "numeric" and not s.declared for s in self.states)
        self.s_num = np.zeros((0, n_num))

    def add(self, table: pa.Table, source: str, class_attribute: str | None, row0: int) -> None:
        """Scan one batch whose first row is global row ``row0``."""
        if self.names is None:
            self._start(table, source, class_attribute)
        names = [str(n) for n in table.column_names]
        if names != self.names:
            raise DataError(f"{source}: columns {list_names(names)} differ from the first file's "
                            f"{list_names(self.names)}")
        for i, s in enumerate(self.states):
            k = _kind(table.schema.field(i).type, i == self.ci)
            if k != s.kind and "null" not in (k, s.kind):
                raise DataError(f"{source}: column {s.name!r} has type {table.schema.field(i).type} here, "
                                f"unlike in the earlier data ({s.kind})")
            if s.kind == "null":
                s.kind = k
        cols = _decode(table, names, source, self.ci)
        n = table.num_rows
        cls = cols[self.ci]
        cl_labels = cls.attribute.values
        ids = np.array([self.class_labels.setdefault(v, len(self.class_labels)) for v in cl_labels] + [-1],
                       np.int64)
        cid = ids[np.asarray(cls.codes, np.int64)]
        known = cid >= 0
        for c, cnt in zip(*np.unique(cid[known], return_counts=True)):
            self.class_counts[int(c)] = self.class_counts.get(int(c), 0) + int(cnt)
        numeric_cols = []
        for i, (s, col) in enumerate(zip(self.states, cols)):
            if col.raw is not None:
                raw = col.raw
                s.temporal = s.temporal or col.attribute.temporal
                if np.isinf(raw).any():
                    r = int(np.argmax(np.isinf(raw)))
                    raise DataError(f"{source}: numeric attribute {s.name!r} has an infinite value (row {row0 + r + 1}"
                                    "); use a missing value (?) or a finite number")
                if i != self.ci:
                    if s.declared:
                        s.domain = integer_domain(raw, s.name, source, known=s.domain)
                    else:
                        numeric_cols.append(raw)
                    if not s.missing and np.isnan(raw[known]).any():
                        s.missing = True
                continue
            for v in col.attribute.values:
                s.labels.setdefault(v, None)
            if i != self.ci and not s.missing and (np.asarray(col.codes)[known] == len(col.attribute.values)).any():
                s.missing = True
        # the sample: rows of lowest priority among those with a known class
        idx = np.nonzero(known)[0]
        pri = row_priority(idx + row0)
        if self.s_pri.size >= self.sample_rows:
            keep = pri < self.s_pri.max()
            idx, pri = idx[keep], pri[keep]
        if idx.size:
            num = np.stack([c[idx] for c in numeric_cols], axis=1) if numeric_cols else np.zeros((idx.size, 0))
            self._absorb(pri, idx + row0, cid[idx], num)
        self.n_rows += n
        self.n_known += int(known.sum())
        self.batch_rows.append(n)

    def _absorb(self, pri, idx, cls, num) -> None:
        self.s_pri = np.concatenate([self.s_pri, pri])
        self.s_idx = np.concatenate([self.s_idx, idx])
        self.s_cls = np.concatenate([self.s_cls, cls])
        self.s_num = np.concatenate([self.s_num, num])
        if self.s_pri.size > self.sample_rows:
            keep = np.argpartition(self.s_pri, self.sample_rows - 1)[: self.sample_rows]
            self.s_pri, self.s_idx, self.s_cls, self.s_num = (self.s_pri[keep], self.s_idx[keep],
                                                              self.s_cls[keep], self.s_num[keep])

    def merge(self, other: SchemaScan) -> SchemaScan:
        """This scan followed by ``other`` (a scan of the rows that come next, with global row indices)."""
        if other.names is None:
            return self
        if self.names is None:
            return other
        if other.names != self.names or [s.kind for s in other.states] != [s.kind for s in self.states]:
            raise DataError(f"the parts of the data set have different columns or types: "
                            f"{list_names(self.names)} and {list_names(other.names)}")
        for s, o in zip(self.states, other.states):
            for v in o.labels:
                s.labels.setdefault(v, None)
            s.missing = s.missing or o.missing
            s.temporal = s.temporal or o.temporal
            if o.domain is not None:
                s.domain = integer_domain(o.domain, s.name, "the data set", known=s.domain)
        remap = np.array([self.class_labels.setdefault(v, len(self.class_labels)) for v in other.class_labels]
                         + [-1], np.int64)
        for c, cnt in other.class_counts.items():
            c2 = int(remap[c])
            self.class_counts[c2] = self.class_counts.get(c2, 0) + cnt
        self._absorb(other.s_pri, other.s_idx, remap[other.s_cls], other.s_num)
        self.n_rows += other.n_rows
        self.n_known += other.n_known
        self.batch_rows += other.batch_rows
        return self

    def finish(self, source: str) -> Schema:
        """The attributes as a whole-data read would make them, and the sample as a Dataset."""
        if self.names is None or self.n_rows == 0:
            raise DataError(f"{source}: no data rows")
        attrs = []
        for i, s in enumerate(self.states):
            if s.declared and s.kind in ("numeric", "null"):
                a = Attribute(s.name, integer_labels(s.domain if s.domain is not None else np.zeros(0)))
            elif s.kind == "numeric":
                a = Attribute(s.name, (), numeric=True, temporal=s.temporal)
            elif s.kind == "bool":
                a = Attribute(s.name, ("false", "true"))
            elif s.kind == "text":
                a = Attribute(s.name, tuple(sorted(s.labels)))
            elif s.kind == "intclass":
                a = Attribute(s.name, tuple(sorted(s.labels, key=int)))
            else:
                a = Attribute(s.name, tuple(s.labels))
            attrs.append(a)
        class_attr = attrs.pop(self.ci)
        final = {v: j for j, v in enumerate(class_attr.values)}
        lut = np.array([final[v] for v in self.class_labels], np.int64)
        counts = np.zeros(len(class_attr.values), np.int64)
        for c, cnt in self.class_counts.items():
            counts[lut[c]] += cnt
        order = np.argsort(self.s_idx, kind="stable")
        y = lut[self.s_cls[order]].astype(np.int32) if order.size else np.zeros(0, np.int32)
        n_s = int(order.size)
        X = np.zeros((n_s, len(attrs)), np.uint8)
        sample = Dataset(attrs, class_attr, X, y, numeric=np.ascontiguousarray(self.s_num[order]) if
                         any(a.is_pending_numeric for a in attrs) else None,
                         relation=Path(source).stem, source=source)
        miss = np.array([s.missing for i, s in enumerate(self.states) if i != self.ci], bool)
        return Schema(attrs, class_attr, self.n_rows, self.n_known, counts, miss, sample,
                      sampled_all=n_s == self.n_known, names=[a.name for a in attrs], batch_rows=self.batch_rows)


def scan_schema(source: BatchSource, row0: int = 0, categorical=None) -> SchemaScan:
    """The first pass over ``source`` (its first row being global row ``row0``), with the columns
    ``categorical`` declares (the classifier's ``categorical_features``) nominal."""
    scan = SchemaScan(source.sample_rows, categorical)
    row = row0
    for t in source.batches():
        scan.add(t, source.source, source.class_attribute, row)
        row += t.num_rows
    return scan
