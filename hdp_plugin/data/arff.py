"""Reading ARFF files (Weka's attribute-relation file format) into a :class:`Dataset`.

Two paths read the ``@data`` section; both decode the header the same way (:func:`parse_header`, with the
tokens of :mod:`hdp_plugin.data.arff_syntax`).

* The **fast path** hands the data section to pyarrow's multithreaded CSV reader with the column types
  the header declares, then maps each chunk's small dictionary of distinct strings onto the declared
  labels with NumPy. It handles dense rows with one kind of quote and no backslash escapes, which is
  what large generated files look like.
* The **exact path** tokenises every line in Python. It handles everything the format allows (sparse
  rows, both quote characters, escapes, inline comments, instance weights) and reports the line of
  any error. The fast path falls back to it whenever it cannot vouch for its result.

Syntax accepted (Weka's, with liac-arff's reading of values):

* ``%`` starts a comment, anywhere outside quotes; blank lines are ignored; keywords
  (``@relation``, ``@attribute``, ``@data``, type names) are case-insensitive;
* names and values may be quoted with ``'`` or ``"``, with backslash escapes (``\\'``, ``\\"``,
  ``\\\\``, ``\\n``, ``\\t``, ``\\r``, ``\\b``, ``\\f``, ``\\%``, ``\\uXXXX``, octal ``\\NNN``);
  an unquoted value ends at a comma and loses its surrounding whitespace;
* an unquoted ``?`` (or an empty value) is missing; a quoted ``'?'`` is the literal text ``?``;
* types ``numeric``, ``integer`` and ``real`` are numeric; ``{a, b, ...}`` is nominal; ``string``
  is read as nominal with the sorted distinct values as labels (with a warning); ``date [format]``
  becomes numeric milliseconds since 1970-01-01 like Weka, with the Java ``SimpleDateFormat``
  pattern translated (default ``yyyy-MM-dd'T'HH:mm:ss``; times without a zone are taken as UTC);
* sparse rows ``{index value, ...}`` (absent nominal values are the first label, absent numeric
  values are 0, as in Weka); a trailing instance weight ``{w}`` is ignored with a warning.
"""

from __future__ import annotations

import logging
import re
import warnings
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pa_csv

from .. import config
from ..errors import DataError, ParameterError, TooLargeError
from ._columns import Column, assemble, numeric_class_error, resolve_class_index, short
from ._files import check_text, decode, read_blocks, read_bytes
from .arff_syntax import (_COMMENT_LINE, _DATA_FIELD, _DATA_LINE, _KEYWORD, _SPARSE_ENTRY, _WEIGHT, _WS, ArffAttribute,
                          ArffHeader, _bad, _Malformed, _split, _unescape, java_date_format, parse_date, parse_header)
from .dataset import Dataset

log = logging.getLogger(__name__)

__all__ = ["read_arff", "read_arff_columns", "read_arff_chunks", "parse_header", "java_date_format", "ArffHeader",
           "ArffAttribute"]

ENGINES = ("auto", "fast", "exact")


class _Converter:
    """Turns the tokens of one attribute into codes or raw values, checking each one."""

    def __init__(self, decl: ArffAttribute, source: str):
        self.decl = decl
        self.source = source
        self.numeric = decl.kind in ("numeric", "date")
        self.missing = len(decl.values)
        if decl.kind == "nominal":
            self.lut: dict[str | None, int] = {v: i for i, v in enumerate(decl.values)}
            self.lut[None] = self.missing
        elif decl.kind == "string":
            self.lut = {None: -2}  # provisional codes in order of appearance; -2 is missing
        elif decl.kind == "date":
            self.cache: dict[str, float] = {}

    def convert(self, tokens: list | tuple, lines: list[int] | np.ndarray) -> np.ndarray:
        kind = self.decl.kind
        n = len(tokens)
        if kind == "nominal":
            get = self.lut.get
            codes = np.fromiter((get(t, -1) for t in tokens), dtype=np.int32, count=n)
            bad = np.flatnonzero(codes < 0)
            if bad.size:
                r = int(bad[0])
                raise self.undeclared(tokens[r], lines[r])
            return codes
        if kind == "string":
            lut = self.lut
            for t in tokens:
                if t not in lut:
                    lut[t] = len(lut) - 1
            return np.fromiter((lut[t] for t in tokens), dtype=np.int32, count=n)
        if kind == "numeric":
            try:
                return np.fromiter((np.nan if t is None else float(t) for t in tokens), dtype=np.float64, count=n)
            except ValueError:
                r = next(i for i, t in enumerate(tokens) if t is not None and not _is_float(t))
                raise _bad(self.source, int(lines[r]),
                           f"value {short(tokens[r])} of numeric attribute {self.decl.name!r} is not a number") from None
        out = np.empty(n, dtype=np.float64)
        cache, fmt = self.cache, self.decl.date_format
        for i, t in enumerate(tokens):
            if t is None:
                out[i] = np.nan
                continue
            v = cache.get(t)
            if v is None:
                try:
                    v = cache[t] = parse_date(t, fmt)
                except ValueError:
                    raise _bad(self.source, int(lines[i]),
                               f"value {short(t)} of date attribute {self.decl.name!r} does not match its format") from None
            out[i] = v
        return out

    def undeclared(self, token: object, line: int) -> DataError:
        return _bad(self.source, int(line),
                    f"value {short(token)} of attribute {self.decl.name!r} is not declared in the header")

    def finish(self, parts: list[np.ndarray]) -> Column:
        """Concatenate converted blocks into a column (string attributes: relabel in sorted order)."""
        data = np.concatenate(parts) if parts else np.empty(0, dtype=np.float64 if self.numeric else np.int32)
        if self.numeric:
            return Column(self.decl.attribute(), raw=data)
        if self.decl.kind == "string":
            labels = [t for t in self.lut if t is not None]
            order = sorted(range(len(labels)), key=labels.__getitem__)
            remap = np.empty(len(labels) + 2, dtype=np.int32)  # index -2 (missing) wraps to the end
            remap[np.asarray(order, dtype=np.int64)] = np.arange(len(labels), dtype=np.int32)
            remap[-2:] = len(labels)
            sorted_labels = tuple(labels[i] for i in order)
            return Column(self.decl.attribute(sorted_labels), codes=remap[data])
        return Column(self.decl.attribute(), codes=data)


def _is_float(t: str) -> bool:
    try:
        float(t)
        return True
    except ValueError:
        return False


# -- the exact path -----------------------------------------------------------------------------
class _ExactReader:
    """Line-by-line reading of the data section, in blocks of ``config.ROW_BLOCK`` rows."""

    def __init__(self, header: ArffHeader, source: str):
        self.header = header
        self.source = source
        self.n = len(header.attributes)
        self.convs = [_Converter(a, source) for a in header.attributes]
        self.parts: list[list[np.ndarray]] = [[] for _ in self.convs]
        self.weights_seen = 0

    # one line -> list of n tokens (dense) or a dict {index: token} (sparse); None for no row
    def parse_line(self, line: str, lineno: int) -> list | dict | None:
        s = line.strip(_WS)
        if not s or s[0] == "%":
            return None
        try:
            if s[0] == "{":
                return self._sparse(s, lineno)
            if "'" not in s and '"' not in s and "%" not in s and "{" not in s:
                vals: list = [v.strip(_WS) for v in s.split(",")]
                last_raw = vals[-1]
                vals = [None if v == "?" or v == "" else v for v in vals]
            else:
                vals, last_raw, _, _ = _split(s, _DATA_FIELD)
        except _Malformed as e:
            raise _bad(self.source, lineno, str(e)) from None
        n = self.n
        if len(vals) == n + 1 and last_raw == "":
            vals.pop()  # a trailing comma
        elif last_raw and last_raw.endswith("}") and "{" in last_raw:
            m = _WEIGHT.match(last_raw)
            if m is not None and _is_float(m.group("w")):
                if m.group("head"):
                    vals[-1] = m.group("head")
                else:
                    vals.pop()
                self.weights_seen += 1
        if len(vals) != n:
            m = _KEYWORD.match(s)
            if m is not None and m.group(1).lower() in ("@attribute", "@relation", "@data"):
                raise _bad(self.source, lineno, f"{m.group(1)} after @data; declarations belong in the header")
            raise _bad(self.source, lineno, f"expected {n} values, got {len(vals)}")
        return vals

    def _sparse(self, s: str, lineno: int) -> dict:
        out: dict[int, str | None] = {}
        pos, last = 1, -1
        if s[1:].lstrip(_WS).startswith("}"):
            pos = s.index("}") + 1
        else:
            while True:
                m = _SPARSE_ENTRY.match(s, pos)
                if m is None:
                    raise _Malformed(f"malformed sparse entry at column {pos + 1}: {short(s[pos:pos + 40])}")
                try:
                    j = int(m.group("idx"))
                except ValueError:
                    raise _Malformed(f"sparse index {short(m.group('idx'))} is not an integer") from None
                if not 0 <= j < self.n:
                    raise _Malformed(f"sparse index {j} is out of range (0 to {self.n - 1})")
                if j <= last:
                    raise _Malformed(f"sparse indices must increase ({j} after {last})")
                last = j
                q = m.group("q1")
                if q is None:
                    q = m.group("q2")
                if q is not None:
                    out[j] = _unescape(q)
                else:
                    raw = m.group("raw")
                    out[j] = None if raw == "?" else raw
                pos = m.end()
                if m.group("end") == "}":
                    break
        rest = s[pos:].strip(_WS)
        if rest and rest[0] != "%":
            m = _WEIGHT.match(rest.split("%", 1)[0].strip(_WS))
            if m is None or m.group("head") or not _is_float(m.group("w")):
                raise _Malformed(f"unexpected text after a sparse row: {short(rest)}")
            self.weights_seen += 1
        return out

    def flush(self, rows: list, lines: list[int]) -> None:
        if not rows:
            return
        if isinstance(rows[0], dict) or any(isinstance(r, dict) for r in rows):
            self._flush_sparse(rows, lines)
            return
        cols = list(zip(*rows))
        for j, conv in enumerate(self.convs):
            self.parts[j].append(conv.convert(cols[j], lines))

    def _flush_sparse(self, rows: list, lines: list[int]) -> None:
        n_rows = len(rows)
        for j, conv in enumerate(self.convs):
            if conv.numeric:
                block = np.zeros(n_rows, dtype=np.float64)
            elif conv.decl.kind == "string":
                block = np.full(n_rows, -2, dtype=np.int32)  # absent string value: missing
            else:
                block = np.zeros(n_rows, dtype=np.int32)  # absent nominal value: the first label
            self.parts[j].append(block)
        per_col: list[tuple[list[int], list, list[int]]] = [([], [], []) for _ in self.convs]
        for r, (row, line) in enumerate(zip(rows, lines)):
            items = row.items() if isinstance(row, dict) else enumerate(row)
            for j, tok in items:
                rr, tt, ll = per_col[j]
                rr.append(r)
                tt.append(tok)
                ll.append(line)
        for j, conv in enumerate(self.convs):
            rr, tt, ll = per_col[j]
            if rr:
                self.parts[j][-1][np.asarray(rr, dtype=np.int64)] = conv.convert(tt, ll)

    def read(self, text: str, first_line: int) -> list[Column]:
        rows: list = []
        lines: list[int] = []
        block = config.ROW_BLOCK
        parse = self.parse_line
        for lineno, line in enumerate(text.split("\n"), start=first_line):
            row = parse(line, lineno)
            if row is None:
                continue
            rows.append(row)
            lines.append(lineno)
            if len(rows) >= block:
                self.flush(rows, lines)
                rows, lines = [], []
        self.flush(rows, lines)
        return [conv.finish(parts) for conv, parts in zip(self.convs, self.parts)]


# -- the fast path --------------------------------------------------------------------------
class _NotFast(Exception):
    """The fast path cannot read this data section; the exact path must."""


_DICT = pa.dictionary(pa.int32(), pa.string())
_NULLS = ["?", " ?", "? ", " ? ", "\t?", "", " "]


def _fast_label(entry: str, quotes: str, declared: dict | None = None) -> str:
    """The value a fast-path dictionary entry (never null: pyarrow maps ``?`` to null) stands for.

    pyarrow gives ``' x'`` (quoted) and `` x`` (unquoted, after ``", "``) as the same entry ``" x"``;
    they differ only if a label with surrounding whitespace could be meant, which ``declared`` (the
    labels, or None when any text could be) tells. Raises :class:`_NotFast` when in doubt.
    """
    if "\n" in entry or "\r" in entry:  # a quote left open across lines: the exact path names the line
        raise _NotFast("a line break inside a quoted value")
    s = entry.strip(_WS)
    if s == entry:
        return entry  # already unquoted by pyarrow, or plain; "?" here was quoted: a literal
    if declared is None or entry in declared or s in ("", "?"):
        raise _NotFast(f"the value {short(entry)} may or may not have been quoted")
    if s[0] in quotes:  # pyarrow only unquotes a quote at the very start of a field
        try:
            vals, _, end, _ = _split(s, _DATA_FIELD)
        except _Malformed:
            vals, end = [], ""
        if len(vals) != 1 or end or vals[0] is None:
            raise _NotFast(f"cannot read the value {short(s)}")
        return vals[0]
    return s


def _locate(data: bytes, start: int, first_line: int, row: int) -> tuple[int, str]:
    """Line number and text of data row ``row`` (0-based, blank and comment lines skipped)."""
    pos, lineno, k = start, first_line, -1
    while pos <= len(data):
        nl = data.find(b"\n", pos)
        end = len(data) if nl < 0 else nl
        s = data[pos:end].strip()
        if s and not s.startswith(b"%"):
            k += 1
            if k == row:
                return lineno, data[pos:end].decode("utf-8", "replace")
        if nl < 0:
            break
        pos, lineno = nl + 1, lineno + 1
    raise _NotFast(f"could not find data row {row}")


class _FastReader:
    def __init__(self, header: ArffHeader, source: str, data: bytes, start: int):
        self.header = header
        self.source = source
        self.data = data
        self.start = start
        self.first_line = header.data_line + 1

    def eligible(self) -> tuple[bytes | pa.Buffer, str]:
        data, start = self.data, self.start
        if len(self.header.attributes) < 2:
            raise _NotFast("fewer than two columns")
        if data.find(b"\\", start) >= 0:
            raise _NotFast("backslash escapes")
        if data.find(b"{", start) >= 0:
            raise _NotFast("sparse rows or instance weights")
        sq, dq = data.find(b"'", start) >= 0, data.find(b'"', start) >= 0
        if sq and dq:
            raise _NotFast("both quote characters")
        quote = '"' if dq else "'"
        section: bytes | pa.Buffer = pa.py_buffer(data).slice(start)
        if data.find(b"%", start) >= 0:
            section = _COMMENT_LINE.sub(b"", data[start:])
            if b"%" in section:
                raise _NotFast("% inside data rows")
        return section, quote

    def read(self) -> list[Column]:
        section, quote = self.eligible()
        decls = self.header.attributes
        names = [f"c{j}" for j in range(len(decls))]
        types = {}
        for name, d in zip(names, decls):
            types[name] = {"nominal": _DICT, "string": _DICT, "numeric": pa.float64(), "date": pa.string()}[d.kind]
        try:
            table = pa_csv.read_csv(
                pa.BufferReader(section),
                read_options=pa_csv.ReadOptions(column_names=names, use_threads=True, block_size=1 << 22),
                parse_options=pa_csv.ParseOptions(
                    delimiter=",", quote_char=quote, double_quote=False, escape_char=False,
                    newlines_in_values=False, ignore_empty_lines=True,
                ),
                convert_options=pa_csv.ConvertOptions(
                    column_types=types, null_values=_NULLS, strings_can_be_null=True,
                    quoted_strings_can_be_null=False, check_utf8=True,
                ),
            )
        except pa.ArrowInvalid as e:
            raise _NotFast(str(e).split("\n", 1)[0]) from None
        cols = []
        for j, d in enumerate(decls):
            col = table.column(j)
            if d.kind == "numeric":
                cols.append(Column(d.attribute(), raw=col.to_numpy()))
            elif d.kind == "date":
                cols.append(self._date(d, col, quote))
            else:
                cols.append(self._nominal(j, d, col, quote))
        return cols

    def _nominal(self, j: int, d: ArffAttribute, col: pa.ChunkedArray, quote: str) -> Column:
        string = d.kind == "string"
        index = {v: i for i, v in enumerate(d.values)}
        chunk_labels = []
        declared = None if string else index
        for chunk in col.chunks:
            chunk_labels.append([_fast_label(e, quote, declared) for e in chunk.dictionary.to_pylist()])
        if string:
            labels = tuple(sorted({v for ls in chunk_labels for v in ls}))
            index = {v: i for i, v in enumerate(labels)}
        else:
            labels = d.values
        missing = len(labels)
        codes = np.empty(len(col), dtype=np.int32)
        offset = 0
        for chunk, ls in zip(col.chunks, chunk_labels):
            lut = np.array([index.get(v, -1) for v in ls] + [missing], dtype=np.int32)
            idx = pc.fill_null(chunk.indices, len(ls)).to_numpy()
            part = lut[idx]
            bad = np.flatnonzero(part < 0)
            if bad.size:
                self._raise_at(offset + int(bad[0]))
            codes[offset:offset + len(part)] = part
            offset += len(part)
        return Column(d.attribute(labels if string else None), codes=codes)

    def _date(self, d: ArffAttribute, col: pa.ChunkedArray, quote: str) -> Column:
        uniq = pc.unique(col).drop_null()
        values = np.empty(len(uniq) + 1, dtype=np.float64)
        values[-1] = np.nan
        for i, t in enumerate(uniq.to_pylist()):
            t = _fast_label(t, quote, {})  # no date has surrounding whitespace
            try:
                values[i] = parse_date(t, d.date_format)
            except ValueError:
                raise _NotFast("a date that does not parse") from None
        idx = pc.fill_null(pc.index_in(col, value_set=uniq), len(uniq)).to_numpy()
        return Column(d.attribute(), raw=values[idx])

    def _raise_at(self, row: int) -> None:
        """Report the bad value in data row ``row`` exactly as the exact path would."""
        lineno, line = _locate(self.data, self.start, self.first_line, row)
        exact = _ExactReader(self.header, self.source)
        parsed = exact.parse_line(line, lineno)
        if parsed is not None:
            exact.flush([parsed], [lineno])  # raises the exact path's error for this row
        raise _NotFast(f"data row {row} (line {lineno}) reads differently on the exact path")


# -- entry points ------------------------------------------------------------------------------
def _open(path: str | Path, max_bytes: int | None = None, max_cardinality: int | None = None,
          check_rows=None, data: bytes | None = None) -> tuple[bytes, ArffHeader, int, str]:
    """The file's bytes, its parsed header, the offset of the data section, and the source name.

    ``max_bytes`` bounds the file and its decompressed data, and (WORKING_MEMORY_FACTOR times it, or times
    its default) the memory of the header's declarations; ``max_cardinality`` the values an attribute
    declares (:func:`parse_header`); ``check_rows(rows, columns)``, if given, is called with at most
    how many rows the data section holds (its lines) before any row is parsed. ``data``: the file's
    bytes, already read (:func:`~hdp_plugin.data._files.read_bytes`).
    """
    source = str(path)
    data = read_bytes(path, max_bytes, data=data)
    bom = check_text(data, source)
    m = _DATA_LINE.search(data, bom)
    head_end = len(data) if m is None else data.find(b"\n", m.end())
    head_end = len(data) if head_end < 0 else head_end
    from .limits import header_memory_limit

    memory, name = header_memory_limit(max_bytes)
    header = parse_header(decode(data[bom:head_end], source), source, max_cardinality, max_memory=memory,
                          memory_limit_name=name)
    start = min(head_end + 1, len(data))
    if check_rows is not None:
        check_rows(data.count(b"\n", start) + 1, len(header.attributes))
    return data, header, start, source


def _check_engine(engine: str) -> None:
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {ENGINES}, got {engine!r}")


def _warn_strings(header: ArffHeader, source: str, stacklevel: int) -> None:
    for a in header.attributes:
        if a.kind == "string":
            warnings.warn(f"{source}: string attribute {a.name!r} is read as nominal, with its distinct "
                          "values as labels", stacklevel=stacklevel + 1)


def _warn_weights(count: int, source: str, stacklevel: int) -> None:
    if count:
        warnings.warn(f"{source}: {count} instance weight(s) ignored; every row counts once",
                      stacklevel=stacklevel + 1)


def _read_section(data: bytes, header: ArffHeader, start: int, source: str, engine: str) -> tuple[list[Column], int]:
    """The columns of the data rows in ``data[start:]`` (which start on line ``header.data_line + 1``),
    and the number of instance weights ignored."""
    if engine != "exact":
        try:
            columns = _FastReader(header, source, data, start).read()
            log.debug("%s: read with the fast path", source)
            return columns, 0
        except _NotFast as e:
            if engine == "fast":
                raise DataError(f"{source}: the fast ARFF path cannot read this file ({e})") from None
            log.debug("%s: fast path not used (%s); reading with the exact path", source, e)
    text = decode(memoryview(data)[start:], source, first_line=header.data_line + 1)
    exact = _ExactReader(header, source)
    return exact.read(text, header.data_line + 1), exact.weights_seen


def _read_data(data: bytes, header: ArffHeader, start: int, source: str, engine: str) -> list[Column]:
    _check_engine(engine)
    _warn_strings(header, source, stacklevel=4)
    columns, weights = _read_section(data, header, start, source, engine)
    _warn_weights(weights, source, stacklevel=4)
    return columns


def read_arff_chunks(path: str | Path, rows: int, *, engine: str = "auto"):
    """Read an ARFF file incrementally: the header once, then the data section ``rows`` data rows at
    a time, for files larger than memory.

    Yields ``(header, columns)`` per chunk: every attribute decoded, as :func:`read_arff_columns`
    decodes it, for the chunk's rows (nominal codes index the labels the header declares, so every
    chunk has the same ones; a string attribute's labels are the chunk's own). Concatenated, the
    chunks are the whole file's rows. Each chunk is parsed by the whole-file reader's code (the fast
    path, else the exact one), with the same checks and the same errors, naming the file's line; an
    error is raised when the reading reaches it. The header is read whole; then one block of the file
    and one chunk of rows are in memory at a time. Gzip files are decompressed as they are read.
    """
    _check_engine(engine)
    if isinstance(rows, bool) or not isinstance(rows, int) or rows < 1:
        raise ParameterError(f"rows must be an integer >= 1, got {rows!r}")
    source = str(path)
    blocks = read_blocks(path, 1 << 18)
    buf, searched, done = bytearray(), 0, False
    while True:  # the header: through the line of @data (and the first 64 KB, which check_text reads)
        block = next(blocks, b"")
        done = not block
        buf += block
        m = _DATA_LINE.search(buf, searched)
        if m is not None and (buf.find(b"\n", m.end()) >= 0 or done) and (len(buf) >= 65536 or done):
            break
        if done:
            break
        if m is None:
            searched = buf.rfind(b"\n") + 1
            if searched > config.DEFAULT_MAX_INPUT_BYTES:  # what reading the file whole allows by default
                raise TooLargeError(f"{source}: its header is longer than {config.DEFAULT_MAX_INPUT_BYTES:,} "
                                    "bytes, the limit of a header read in batches")
    bom = check_text(buf, source)
    m = _DATA_LINE.search(buf, bom)
    head_end = len(buf) if m is None else buf.find(b"\n", m.end())
    head_end = len(buf) if head_end < 0 else head_end
    from .limits import header_memory_limit

    memory, name = header_memory_limit(None)
    header = parse_header(decode(bytes(buf[bom:head_end]), source), source, max_memory=memory,
                          memory_limit_name=name)
    _warn_strings(header, source, stacklevel=3)
    weights = 0
    chunks = _row_chunks(bytes(buf[head_end + 1:]), blocks, rows, header.data_line + 1)
    buf = None  # the header's block is not kept
    for chunk, first_line in chunks:
        part = ArffHeader(header.relation, header.attributes, first_line - 1)
        columns, w = _read_section(chunk, part, 0, source, engine)
        weights += w
        if columns and columns[0].n_rows:
            yield header, columns
    _warn_weights(weights, source, stacklevel=3)


#: a data row: a line whose first character that is not white space is not ``%`` (a comment)
_DATA_ROW = re.compile(rb"^[\x00-\x09\x0b-\x20]*[^\x00-\x20%][^\n]*", re.M)


def _row_chunks(carry: bytes, blocks, rows: int, first_line: int):
    """``(bytes, number of its first line)`` of consecutive pieces of the data section, cut at the end
    of a line, each holding ``rows`` data rows (the last one fewer, or only blank and comment lines).
    Only the pieces of the current chunk and one block are held."""
    pending: list[bytes] = []
    n_rows = 0
    line = first_line
    while True:
        block = next(blocks, None)
        data = carry + block if block is not None else carry
        end = data.rfind(b"\n") + 1 if block is not None else len(data)  # complete lines only, until the end
        pos = 0
        for m in _DATA_ROW.finditer(data, 0, end):
            n_rows += 1
            if n_rows == rows:
                pending.append(data[pos:m.end()])
                chunk = b"".join(pending)
                yield chunk, line
                line += chunk.count(b"\n") + 1
                pos = m.end() + 1  # past the row's line break
                pending, n_rows = [], 0
        if pos < end:
            pending.append(data[pos:end])
        carry = data[end:]
        if block is None:
            break
    if pending:
        yield b"".join(pending), line


def read_arff_columns(path: str | Path, *, engine: str = "auto", max_bytes: int | None = None,
                      max_cardinality: int | None = None, check_rows=None) -> tuple[list[Column], str, str]:
    """Decode every attribute of an ARFF file, choosing no class: ``(columns, relation, source)``
    (the limits as for :func:`read_arff`)."""
    data, header, start, source = _open(path, max_bytes, max_cardinality, check_rows)
    return _read_data(data, header, start, source, engine), header.relation, source


def read_arff(path: str | Path, *, class_attribute: str | None = None, engine: str = "auto",
              max_bytes: int | None = None, max_cardinality: int | None = None, check_rows=None,
              data: bytes | None = None) -> Dataset:
    """Read an ARFF file (optionally gzip-compressed) into a :class:`Dataset`.

    Parameters
    ----------
    path : str or Path
        The file.
    class_attribute : str, optional
        Name of the class attribute; the last attribute by default (Weka's convention).
    engine : {"auto", "fast", "exact"}
        ``"auto"`` tries the fast path (pyarrow's CSV reader) and falls back to the exact line-by-line
        path; ``"exact"`` uses only the exact path; ``"fast"`` raises :class:`DataError` when the fast
        path cannot read the file (for tests and benchmarks).
    max_bytes : int, optional
        The most bytes the file, and its data once decompressed, may hold (``--max-input-mb``); by default
        the decompressed data is bounded at 64 times the file's size or 1 GiB, whichever is larger.
    max_cardinality : int, optional
        The most values a nominal attribute may declare, checked while the header is parsed.
    check_rows : callable, optional
        ``check_rows(rows, columns)`` is called before any data row is parsed, with at most how many
        rows the data section holds (its lines), to refuse data too large to train on.
    data : bytes, optional
        The file's bytes, read by the caller through a descriptor it checked (the daemon); ``path``
        then only names the file in messages, and is not opened.

    Returns
    -------
    Dataset
        Rows with a missing class are kept with ``y == -1``.

    Raises
    ------
    DataError
        For a missing, undecodable or malformed file (with the line at fault), an unknown class
        attribute, or a numeric class.
    TooLargeError
        For data beyond ``max_bytes`` or ``max_cardinality``.
    """
    data, header, start, source = _open(path, max_bytes, max_cardinality, check_rows, data)
    names = [a.name for a in header.attributes]
    ci = resolve_class_index(names, class_attribute, source)
    if header.attributes[ci].kind in ("numeric", "date"):  # fail before reading the data
        raise numeric_class_error(names[ci], source, by_default=class_attribute is None,
                                  nominal=[a.name for a in header.attributes if a.kind in ("nominal", "string")])
    columns = _read_data(data, header, start, source, engine)
    return assemble(columns, ci, relation=header.relation, source=source)
