"""Check an Arrow IPC file or stream *before* pyarrow decodes it.

pyarrow trusts the sizes an IPC file declares: a corrupt or hostile file can make it allocate
gigabytes (a compressed buffer that claims to decompress to 6 GB, a batch of 3x10^8 rows of a
type that needs no bytes) or read out of bounds. This module walks the file's own metadata
(flatbuffers, read here by hand with a bounds check on every offset) and refuses it with one
:class:`DataError` when any declared size is out of range or beyond the limits:

* every message and body lies inside the file; every buffer inside its message's body;
* the bytes the buffers take once decompressed add up to at most ``max_bytes``;
* the declared values (record batch rows times top-level columns, plus every dictionary's length)
  add up to at most ``max_cells``.

Only what passes is handed to pyarrow, which then validates each batch fully (offsets,
dictionary indices, UTF-8) before anything else touches it.

:func:`check_ipc` walks a whole file in memory (:func:`~hdp_plugin.data.arrow.ipc_table`);
:class:`CheckedStream` walks a file on disk message by message as the decoder asks for it
(:func:`~hdp_plugin.data.arrow.ipc_batches`, for files larger than memory), the limits then bounding
each record batch, and the dictionaries together.
"""

from __future__ import annotations

import struct

from ..errors import DataError, TooLargeError

# Message.fbs: MessageHeader union values
_SCHEMA, _DICTIONARY_BATCH, _RECORD_BATCH = 1, 2, 3
_CONTINUATION = 0xFFFFFFFF


class _Bad(Exception):
    """A structural fault found while walking a flatbuffer; becomes a DataError."""


class _Buf:
    """Bounds-checked little-endian reads from one bytes-like object."""

    __slots__ = ("data", "n")

    def __init__(self, data):
        self.data = data
        self.n = len(data)

    def _need(self, pos: int, size: int) -> None:
        if pos < 0 or size < 0 or pos + size > self.n:
            raise _Bad(f"offset {pos} (+{size}) is outside its {self.n}-byte block")

    def u8(self, pos):
        self._need(pos, 1)
        return self.data[pos]

    def i16(self, pos):
        self._need(pos, 2)
        return struct.unpack_from("<h", self.data, pos)[0]

    def u16(self, pos):
        self._need(pos, 2)
        return struct.unpack_from("<H", self.data, pos)[0]

    def i32(self, pos):
        self._need(pos, 4)
        return struct.unpack_from("<i", self.data, pos)[0]

    def u32(self, pos):
        self._need(pos, 4)
        return struct.unpack_from("<I", self.data, pos)[0]

    def i64(self, pos):
        self._need(pos, 8)
        return struct.unpack_from("<q", self.data, pos)[0]


class _Table:
    """One flatbuffer table: field ``i`` is found through the table's vtable."""

    __slots__ = ("buf", "pos", "vt", "vt_size")

    def __init__(self, buf: _Buf, pos: int):
        self.buf, self.pos = buf, pos
        self.vt = pos - buf.i32(pos)
        self.vt_size = buf.u16(self.vt)
        if self.vt_size < 4 or self.vt_size % 2:
            raise _Bad(f"bad vtable size {self.vt_size}")
        buf._need(self.vt, self.vt_size)

    def _field(self, i: int) -> int | None:
        o = 4 + 2 * i
        if o + 2 > self.vt_size:
            return None
        off = self.buf.u16(self.vt + o)
        return None if off == 0 else self.pos + off

    def scalar(self, i: int, kind: str, default: int = 0) -> int:
        p = self._field(i)
        return default if p is None else getattr(self.buf, kind)(p)

    def table(self, i: int) -> "_Table | None":
        p = self._field(i)
        return None if p is None else _Table(self.buf, p + self.buf.u32(p))

    def vector(self, i: int, size: int = 1) -> tuple[int, int]:
        """``(position of the first element, length)`` of a vector of ``size``-byte elements, which must lie
        inside the block; ``(0, 0)`` when absent."""
        p = self._field(i)
        if p is None:
            return 0, 0
        v = p + self.buf.u32(p)
        n = self.buf.u32(v)
        self.buf._need(v + 4, n * size)
        return v + 4, n

    def structs(self, i: int, size: int) -> list[tuple[int, int]]:
        """A vector of structs of two int64 (FieldNode, Buffer)."""
        start, n = self.vector(i, size)
        return [(self.buf.i64(start + k * size), self.buf.i64(start + k * size + 8)) for k in range(n)]

    def tables(self, i: int) -> list["_Table"]:
        start, n = self.vector(i, 4)
        return [_Table(self.buf, start + 4 * k + self.buf.u32(start + 4 * k)) for k in range(n)]


def _root(data) -> _Table:
    buf = _Buf(data)
    return _Table(buf, buf.u32(0))


def _limits_error(source: str, what: str, value: int, limit: int, hint: str) -> DataError:
    return TooLargeError(f"{source}: {what} ({value}) exceed the limit of {limit}; {hint}")


class _Budget:
    def __init__(self, source: str, max_bytes: int, max_cells: int, bytes_hint: str, cells_hint: str):
        self.source, self.max_bytes, self.max_cells = source, max_bytes, max_cells
        self.bytes_hint, self.cells_hint = bytes_hint, cells_hint
        self.bytes = self.cells = 0

    def add_bytes(self, n: int) -> None:
        self.bytes += n
        if self.bytes > self.max_bytes:
            raise _limits_error(self.source, "its decoded buffers would take more bytes", self.bytes,
                                self.max_bytes, self.bytes_hint)

    def add_cells(self, n: int) -> None:
        self.cells += n
        if self.cells > self.max_cells:
            raise _limits_error(self.source, "its declared values (rows x columns)", self.cells,
                                self.max_cells, self.cells_hint)


def _check_batch(rb: _Table, body: _Buf, body_len: int, n_columns: int | None, budget: _Budget,
                 dictionary: bool) -> None:
    length = rb.scalar(0, "i64")
    if length < 0:
        raise _Bad(f"negative row count {length}")
    nodes = rb.structs(1, 16)
    for n_len, n_null in nodes:
        if n_len < 0 or n_null < 0 or n_null > n_len:
            raise _Bad(f"field node with length {n_len} and null count {n_null}")
    if dictionary:
        budget.add_cells(max([length] + [n for n, _ in nodes]))
    else:
        if any(n > length for n, _ in nodes[: n_columns or 0]):
            raise _Bad("a column is longer than its record batch")
        budget.add_cells(length * max(1, n_columns or len(nodes)))
    compression = rb.table(3)
    if compression is not None:
        codec = compression.scalar(0, "u8")
        if codec not in (0, 1):  # LZ4_FRAME, ZSTD
            raise _Bad(f"unknown compression codec {codec}")
    for off, size in rb.structs(2, 16):
        if off < 0 or size < 0 or off + size > body_len:
            raise _Bad(f"buffer at {off} of {size} bytes lies outside its {body_len}-byte message body")
        if compression is not None and size > 0:
            if size < 8:
                raise _Bad(f"compressed buffer of {size} bytes has no length prefix")
            raw = body.i64(off)
            if raw < -1:
                raise _Bad(f"compressed buffer declares {raw} bytes")
            budget.add_bytes(size - 8 if raw == -1 else raw)
        else:
            budget.add_bytes(size)


class _Memory:
    """The bytes of a whole file in memory (reads are zero-copy slices)."""

    def __init__(self, data):
        self.data = data
        self.size = len(data)

    def read(self, pos: int, n: int):
        return self.data[pos: pos + n]


class _File:
    """An open binary file read piece by piece: a short read (the file shrank) is a fault."""

    def __init__(self, fh, size: int):
        self.fh = fh
        self.size = size

    def read(self, pos: int, n: int) -> bytes:
        self.fh.seek(pos)
        out = self.fh.read(n)
        if len(out) != n:
            raise _Bad(f"the file ends at offset {pos + len(out)}, inside a message (was it truncated while read?)")
        return out


def _extent(src, source: str) -> tuple[int, int]:
    """``(start, end)`` of the messages: a whole stream, or a file's from its 8-byte magic to its footer."""
    total = src.size
    if bytes(src.read(0, 6)) != b"ARROW1":
        return 0, total
    if total < 18 or bytes(src.read(total - 6, 6)) != b"ARROW1":
        raise DataError(f"{source}: cannot read as an Arrow IPC file or stream (corrupt: an Arrow file "
                        "without its closing magic: truncated?)")
    footer_len = struct.unpack_from("<i", bytes(src.read(total - 10, 4)))[0]
    if footer_len <= 0 or footer_len > total - 18:
        raise DataError(f"{source}: cannot read as an Arrow IPC file or stream (corrupt: footer of "
                        f"{footer_len} bytes)")
    return 8, total - 10 - footer_len


class _Walk:
    """Every message of an IPC stream (or of a file's message region), checked before it is handed on.

    Iterating yields each message as its pieces (header, metadata, body: bytes-like), in order, once
    it has passed every check; the end-of-stream marker, if any, is yielded too, and ``end`` is then
    the offset after the last byte read. ``budget(dictionary)`` gives the :class:`_Budget` a record
    batch (``False``) or dictionary batch (``True``) is counted against. Any fault is one
    :class:`DataError` naming ``source``.
    """

    def __init__(self, src, start: int, total: int, source: str, budget):
        self.src, self.start, self.total, self.source, self.budget = src, start, total, source, budget
        self.end = start

    def __iter__(self):
        try:
            yield from self._messages()
        except DataError:
            raise
        except _Bad as exc:
            raise DataError(f"{self.source}: cannot read as an Arrow IPC file or stream (corrupt: {exc})") from None
        except (struct.error, IndexError, ValueError) as exc:
            raise DataError(f"{self.source}: cannot read as an Arrow IPC file or stream (corrupt: {exc})") from None
        except OSError as exc:
            raise DataError(f"{self.source}: cannot read ({exc.strerror or exc})") from None

    def _messages(self):
        src, total = self.src, self.total
        pos = self.start
        n_columns = None
        seen_schema = False
        while True:
            if pos == total and seen_schema:
                break  # a stream, or a file's messages, may end without an end-of-stream marker
            if pos + 4 > total:
                raise _Bad("the file ends inside a message header")
            head_at = pos
            size = struct.unpack_from("<I", bytes(src.read(pos, 4)))[0]
            pos += 4
            if size == _CONTINUATION:
                if pos + 4 > total:
                    raise _Bad("the file ends inside a message header")
                size = struct.unpack_from("<I", bytes(src.read(pos, 4)))[0]
                pos += 4
            head = src.read(head_at, pos - head_at)
            if size == 0:
                self.end = pos
                if not seen_schema:
                    break
                yield (head,)
                return  # end of stream (the decoder stops there too)
            if size > total - pos:
                raise _Bad(f"a message of {size} bytes at offset {pos} runs past the end of the file")
            meta = src.read(pos, size)
            pos += size
            msg = _root(meta)
            header_type = msg.scalar(1, "u8")
            body_len = msg.scalar(3, "i64")
            if body_len < 0 or body_len > total - pos:
                raise _Bad(f"a message body of {body_len} bytes at offset {pos} runs past the end of the file")
            body_bytes = src.read(pos, body_len)
            body = _Buf(body_bytes)
            header = msg.table(2)
            if header_type == _SCHEMA:
                if seen_schema:
                    raise _Bad("a second schema")
                seen_schema = True
                if header is None:
                    raise _Bad("a schema message without a schema")
                n_columns = header.vector(1, 4)[1]
            elif header_type == _RECORD_BATCH:
                if not seen_schema or header is None:
                    raise _Bad("a record batch before the schema")
                _check_batch(header, body, body_len, n_columns, self.budget(False), dictionary=False)
            elif header_type == _DICTIONARY_BATCH:
                if not seen_schema or header is None:
                    raise _Bad("a dictionary before the schema")
                rb = header.table(1)
                if rb is None:
                    raise _Bad("a dictionary batch without data")
                _check_batch(rb, body, body_len, None, self.budget(True), dictionary=True)
            else:
                raise _Bad(f"unexpected message type {header_type}")
            pos += body_len
            self.end = pos
            yield head, meta, body_bytes
        self.end = pos
        if not seen_schema:
            raise DataError(f"{self.source}: cannot read as an Arrow IPC file or stream (corrupt: no schema)")


def check_ipc(data, source: str, *, max_bytes: int, max_cells: int, bytes_hint: str,
              cells_hint: str) -> tuple[int, int]:
    """Walk an IPC stream, or the messages of an IPC file (from its 8-byte magic to its footer):
    raise :class:`DataError` at the first fault; return ``(start, end)``, the bytes the decoder must
    read as a stream. A file's footer is never used: the messages are read in order, as checked, so
    writers that put no end-of-stream marker before the footer (Arrow Java's, for one) read too.

    The limits bound the whole file: every buffer and every declared value counts."""
    budget = _Budget(source, max_bytes, max_cells, bytes_hint, cells_hint)
    src = _Memory(data)
    start, total = _extent(src, source)
    walk = _Walk(src, start, total, source, lambda dictionary: budget)
    for _ in walk:
        pass
    return start, walk.end


class CheckedStream:
    """An Arrow IPC file or stream on disk as a binary stream for ``pyarrow.ipc.open_stream``, each
    message read once from the file, checked, and only then handed to the decoder (no window between
    the check and the read: what is decoded is the very bytes checked), one message in memory at a time.

    The limits bound each record batch on its own (so a file of any size streams), and the
    dictionaries together (the decoder keeps them all). ``fh`` is an open binary file of ``size`` bytes.
    """

    def __init__(self, fh, size: int, source: str, *, max_bytes: int, max_cells: int, bytes_hint: str,
                 cells_hint: str):
        src = _File(fh, size)
        try:
            start, total = _extent(src, source)
        except _Bad as exc:
            raise DataError(f"{source}: cannot read as an Arrow IPC file or stream (corrupt: {exc})") from None
        except OSError as exc:
            raise DataError(f"{source}: cannot read ({exc.strerror or exc})") from None
        dictionaries = _Budget(source, max_bytes, max_cells, bytes_hint, cells_hint)

        def budget(dictionary: bool) -> _Budget:
            return dictionaries if dictionary else _Budget(source, max_bytes, max_cells, bytes_hint, cells_hint)

        self._messages = iter(_Walk(src, start, total, source, budget))
        self._pending: list = []  # pieces of the current message not yet read
        self.closed = False

    def read(self, n: int = -1) -> bytes:
        out = []
        want = n if n is not None and n >= 0 else None
        while want is None or want > 0:
            if not self._pending:
                piece = next(self._messages, None)
                if piece is None:
                    break
                self._pending = [bytes(p) for p in piece if len(p)]
                continue
            first = self._pending[0]
            if want is None or len(first) <= want:
                out.append(first)
                self._pending.pop(0)
                if want is not None:
                    want -= len(first)
            else:
                out.append(first[:want])
                self._pending[0] = first[want:]
                want = 0
        return b"".join(out)

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return False

    def close(self) -> None:
        self.closed = True
