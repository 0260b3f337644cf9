"""A small reader of Arrow IPC *files* of flat columns, from the file's flatbuffers alone.

It reads what the model file uses (docs/model-format.md section 2): uncompressed, dictionary-free
columns of type uint16, int32 and float64, lists and structs of them, and the schema's custom metadata.
Every offset, length and count the file declares is checked before it is used (the flatbuffer accessors
of :mod:`._ipc_check`, whose every read is bounds-checked), and nothing is handed to pyarrow, so a
corrupt or hostile file is one :class:`IpcFault` and never a crash or an allocation the file's size
does not justify. The Weka package's ``ArrowFileReader`` reads files by the same rules, so that both
readers refuse the same files.

The file's footer is what is read (as a random-access reader does): its schema, and its blocks, each a
record batch message and its body. The stream's own schema message is not read.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

import numpy as np

from ._ipc_check import _Bad, _Buf, _Table

_MAGIC = b"ARROW1"
# Schema.fbs: Type union values, and MessageHeader's RecordBatch
_INT, _FLOATING_POINT, _LIST, _STRUCT = 2, 3, 12, 13
_RECORD_BATCH = 3
_DOUBLE = 2
#: the deepest nesting of lists and structs read (the model file's cells are 2 deep)
MAX_FIELD_DEPTH = 8
_WIDTH = {"uint16": 2, "int32": 4, "double": 8}
_DTYPE = {"uint16": np.dtype("<u2"), "int32": np.dtype("<i4"), "double": np.dtype("<f8")}
_INT31 = (1 << 31) - 1


class IpcFault(Exception):
    """The file is not one this reader reads; the message says why (without the file's name)."""


@dataclass
class Field:
    """A field of the schema: its name (bytes), type (``uint16``, ``int32``, ``double``, ``list`` or
    ``struct``), nullability and child fields."""

    name: bytes
    type: str
    nullable: bool
    children: list = field(default_factory=list)

    def type_string(self) -> str:
        """The type as pyarrow prints it: ``list<struct<value: uint16 not null, log_prob: double not null>
        not null>`` (a list's item name left out); a type of no other field (a list's children, say) is
        shown as ``int64<...>``."""
        if self.type not in ("list", "struct"):
            return self.type + ("<" + ", ".join(str(c) for c in self.children) + ">" if self.children else "")
        if self.type == "list":
            item = self.children[0]
            return f"list<{item.type_string()}{'' if item.nullable else ' not null'}>"
        if self.type == "struct":
            return "struct<" + ", ".join(f"{c.name.decode('utf-8', 'replace')}: {c.type_string()}"
                                         f"{'' if c.nullable else ' not null'}" for c in self.children) + ">"
        return self.type

    def __str__(self) -> str:
        return f"{self.name.decode('utf-8', 'replace')}: {self.type_string()}"

    def supported(self) -> bool:
        """Whether this reader decodes the field's columns (its type and its children's)."""
        return self.type in ("uint16", "int32", "double", "list", "struct") and all(c.supported() for c in self.children)

    def n_nodes(self) -> int:
        return 1 + sum(c.n_nodes() for c in self.children)

    def n_buffers(self) -> int:
        return (1 if self.type == "struct" else 2) + sum(c.n_buffers() for c in self.children)


@dataclass
class Column:
    """One column of one record batch: ``length`` rows; for a fixed-width type its values as a numpy view
    (little-endian) and their bytes (``raw``); for a list its int32 ``offsets`` (rows + 1) and their bytes;
    a list's item column or a struct's columns as ``children``; ``has_nulls`` when its field node declares
    nulls (a top-level fixed-width column only)."""

    name: bytes
    type: str
    length: int
    values: np.ndarray | None = None
    raw: bytes | None = None
    offsets: np.ndarray | None = None
    raw_offsets: bytes | None = None
    has_nulls: bool = False
    children: list = field(default_factory=list)


def _string(t: _Table, i: int) -> bytes:
    """A string field's bytes (an absent one is empty)."""
    p = t._field(i)
    if p is None:
        return b""
    v = p + t.buf.u32(p)
    n = t.buf.u32(v)
    t.buf._need(v + 4, n)
    return bytes(t.buf.data[v + 4: v + 4 + n])


def _field(t: _Table, depth: int) -> Field:
    """A field and its children. A type this reader does not read gets a name of its own (``int64``,
    ``dictionary``, ``type 5``), which no schema a reader expects has, so that what the file is (another
    Arrow file) is said by the one who compares the schema."""
    if depth > MAX_FIELD_DEPTH:
        raise _Bad(f"fields nested deeper than {MAX_FIELD_DEPTH}")
    kind = t.scalar(2, "u8")
    spec = t.table(3)
    if t.table(4) is not None:
        type_ = "dictionary"
    elif kind == _INT:
        bits, signed = (0, False) if spec is None else (spec.scalar(0, "i32"), spec.scalar(1, "u8") != 0)
        type_ = "int32" if signed and bits == 32 else "uint16" if not signed and bits == 16 else \
            f"{'int' if signed else 'uint'}{bits}"
    elif kind == _FLOATING_POINT:
        precision = -1 if spec is None else spec.scalar(0, "i16")
        type_ = "double" if precision == _DOUBLE else f"float of precision {precision}"
    elif kind == _LIST:
        type_ = "list"
    elif kind == _STRUCT:
        type_ = "struct"
    else:
        type_ = f"type {kind}"
    children = [_field(c, depth + 1) for c in t.tables(5)]
    if type_ == "list" and len(children) != 1 or type_ == "struct" and not children:
        type_ = f"{type_} of {len(children)} fields"
    return Field(_string(t, 0), type_, t.scalar(1, "u8") != 0, children)


class FlatFile:
    """An Arrow IPC file held in memory: its schema's fields and custom metadata, and its record batches,
    decoded one at a time (:meth:`batch`). Any fault is an :class:`IpcFault`."""

    def __init__(self, data: bytes):
        self.data = data
        try:
            self._read_footer()
        except _Bad as exc:
            raise IpcFault(f"not a complete Arrow IPC file ({exc})") from None

    def _read_footer(self) -> None:
        data, n = self.data, len(self.data)
        if n < 18 or data[:6] != _MAGIC or data[n - 6:] != _MAGIC:
            raise _Bad("no ARROW1 magic at both ends: truncated, corrupted or another format")
        footer_len = struct.unpack_from("<i", data, n - 10)[0]
        start = n - 10 - footer_len
        if footer_len <= 0 or start < 8:
            raise _Bad(f"bad footer length {footer_len}")
        buf = _Buf(memoryview(data)[start: start + footer_len])
        footer = _Table(buf, buf.u32(0))
        schema = footer.table(1)
        if schema is None:
            raise _Bad("the footer has no schema")
        if footer.vector(2, 24)[1] > 0:
            raise _Bad("dictionary-encoded Arrow files are not supported")
        if schema.scalar(0, "i16") != 0:
            raise _Bad("a big-endian file")
        self.metadata: dict[bytes, bytes] = {}
        self.repeated: set[bytes] = set()
        for kv in schema.tables(2):
            key = _string(kv, 0)
            if key in self.metadata:
                self.repeated.add(key)
            self.metadata[key] = _string(kv, 1)
        self.fields = [_field(f, 0) for f in schema.tables(1)]
        start, count = footer.vector(3, 24)
        self.blocks = [(buf.i64(start + 24 * k), buf.i32(start + 24 * k + 8), buf.i64(start + 24 * k + 16))
                       for k in range(count)]

    @property
    def num_batches(self) -> int:
        return len(self.blocks)

    def batch(self, index: int) -> list[Column]:
        """Record batch ``index``'s columns, in schema order."""
        try:
            return self._batch(index)
        except _Bad as exc:
            raise IpcFault(f"unreadable record batch {index} ({exc})") from None

    def _slice(self, start: int, length: int) -> _Buf:
        if start < 0 or length < 0 or start + length > len(self.data):
            raise _Bad("a block points outside the file (truncated?)")
        return _Buf(memoryview(self.data)[start: start + length])

    def _batch(self, index: int) -> list[Column]:
        bad = next((f for f in self.fields if not f.supported()), None)
        if bad is not None:
            raise _Bad(f"column {str(bad)!r} has a type that is not supported")
        offset, meta_len, body_len = self.blocks[index]
        prefix = self._slice(offset, min(8, meta_len))
        skip, fb_len = 4, prefix.i32(0)
        if fb_len == -1:  # the continuation marker, then the length
            skip, fb_len = 8, prefix.i32(4)
        if fb_len <= 0 or skip + fb_len > meta_len:
            raise _Bad(f"bad message length {fb_len}")
        meta = self._slice(offset + skip, fb_len)
        message = _Table(meta, meta.u32(0))
        rb = message.table(2)
        if message.scalar(1, "u8") != _RECORD_BATCH or rb is None:
            raise _Bad("the block is not a record batch")
        if rb.table(3) is not None:
            raise _Bad("a compressed record batch, which is not supported")
        body = self._slice(offset + meta_len, body_len)
        rows = rb.scalar(0, "i64")
        if rows < 0 or rows > _INT31:
            raise _Bad(f"bad length {rows}")
        nodes, buffers = rb.structs(1, 16), rb.structs(2, 16)
        want_nodes = sum(f.n_nodes() for f in self.fields)
        want_buffers = sum(f.n_buffers() for f in self.fields)
        if len(nodes) != want_nodes or len(buffers) != want_buffers:
            raise _Bad(f"{len(nodes)} field nodes and {len(buffers)} buffers, the schema {want_nodes} and "
                       f"{want_buffers}")
        cursor = [0, 0]

        def buffer() -> memoryview:
            off, size = buffers[cursor[1]]
            cursor[1] += 1
            if off < 0 or size < 0 or off + size > body.n:
                raise _Bad("a buffer points outside its record batch (truncated file?)")
            return body.data[off: off + size]

        def column(f: Field, n: int, nested: bool) -> Column:
            length, nulls = nodes[cursor[0]]
            cursor[0] += 1
            shown = f.name.decode("utf-8", "replace")
            if length != n:
                raise _Bad(f"column '{shown}' has {length} rows, {n} expected")
            refused = nested or f.type in ("list", "struct")
            if nulls != 0 and (refused or nulls < 0 or nulls > n):
                raise _Bad(f"column '{shown}': {nulls} nulls" + (" in a list or a struct, which is not supported"
                                                                  if refused else ""))
            validity = buffer()
            if nulls > 0 and len(validity) < (n + 7) // 8:
                raise _Bad(f"column '{shown}': data buffer too short")
            if f.type == "list":
                raw = buffer()
                if len(raw) < 4 * (n + 1):
                    raise _Bad(f"column '{shown}': data buffer too short")
                raw = bytes(raw[: 4 * (n + 1)])
                offsets = np.frombuffer(raw, "<i4")
                if offsets[0] != 0 or (np.diff(offsets) < 0).any():
                    raise _Bad(f"column '{shown}': bad list offsets")
                items = column(f.children[0], int(offsets[-1]), True)
                return Column(f.name, f.type, n, offsets=offsets, raw_offsets=raw, children=[items])
            if f.type == "struct":
                return Column(f.name, f.type, n, children=[column(c, n, True) for c in f.children])
            data = buffer()
            size = _WIDTH[f.type] * n
            if len(data) < size:
                raise _Bad(f"column '{shown}': data buffer too short")
            raw = bytes(data[:size])
            return Column(f.name, f.type, n, values=np.frombuffer(raw, _DTYPE[f.type]), raw=raw, has_nulls=nulls > 0)

        return [column(f, rows, False) for f in self.fields]
