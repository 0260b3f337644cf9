"""Opening input files, with one clear :class:`DataError` for each way that can fail."""

from __future__ import annotations

import gzip
import io
import zlib
from pathlib import Path

from ..errors import DataError, TooLargeError

GZIP_MAGIC = b"\x1f\x8b"
UTF8_BOM = b"\xef\xbb\xbf"


def check_path(path: str | Path) -> Path:
    """The path as a :class:`Path`, or :class:`DataError` if it is not a readable regular file."""
    p = Path(path)
    if not p.exists():
        raise DataError(f"{p}: no such file")
    if p.is_dir():
        raise DataError(f"{p}: is a directory, not a data file")
    return p


def read_bytes(path: str | Path, max_bytes: int | None = None, *, data: bytes | None = None) -> bytes:
    """The whole file, decompressed if it is gzip (``.arff.gz``, or gzip under any name).

    ``max_bytes`` bounds the file and its decompressed data (:class:`TooLargeError` beyond it, raised
    before more than that is decompressed: the ``--max-input-mb`` of the command line and the daemon);
    by default only the decompressed data is bounded, at 64 times the file's size or 1 GiB, whichever
    is larger (``hdp_plugin.config.MAX_DECODED_RATIO`` and ``MAX_DECODED_BYTES_FLOOR``).
    ``data``: the file's bytes, read by the caller through a descriptor it checked (the daemon); ``path``
    then only names the file, and is not opened.
    """
    from .limits import check_file_size, decompressed_limit

    if data is not None:
        p = Path(path)
    else:
        p = check_path(path)
        check_file_size(p, max_bytes)
        try:
            data = p.read_bytes()
        except OSError as e:
            raise DataError(f"{p}: cannot read ({e.strerror or e})") from None
    if data[:2] == GZIP_MAGIC:
        limit, hint = decompressed_limit(len(data), max_bytes)
        try:
            with gzip.GzipFile(fileobj=io.BytesIO(data), mode="rb") as fh:
                data = fh.read(limit + 1)
        except (OSError, EOFError, zlib.error) as e:
            raise DataError(f"{p}: corrupt or truncated gzip file ({e})") from None
        if len(data) > limit:
            raise TooLargeError(f"{p}: decompresses to more than {limit:,} bytes, the limit; {hint}")
    return data


def open_binary(path: str | Path):
    """``(path, file)``: the path checked (:func:`check_path`) and opened for binary reading."""
    p = check_path(path)
    try:
        return p, open(p, "rb")
    except OSError as e:
        raise DataError(f"{p}: cannot read ({e.strerror or e})") from None


def read_blocks(path: str | Path, size: int = 1 << 20):
    """The file's bytes in blocks of ``size`` (the last one shorter), decompressed if it is gzip, as
    :func:`read_bytes` gives them whole; every failure is one :class:`DataError` naming the file."""
    p, fh = open_binary(path)
    with fh:
        try:
            gz = fh.read(2) == GZIP_MAGIC
            fh.seek(0)
        except OSError as e:
            raise DataError(f"{p}: cannot read ({e.strerror or e})") from None
        stream = gzip.GzipFile(fileobj=fh, mode="rb") if gz else fh
        while True:
            try:
                block = stream.read(size)
            except (OSError, EOFError, zlib.error) as e:
                if gz:
                    raise DataError(f"{p}: corrupt or truncated gzip file ({e})") from None
                raise DataError(f"{p}: cannot read ({e.strerror or e})") from None
            if not block:
                return
            yield block


def check_text(data: bytes, source: str) -> int:
    """Check that ``data`` looks like text; return the offset past a UTF-8 byte-order mark.

    Raises
    ------
    DataError
        If the start of the data holds NUL bytes or a UTF-16/32 byte-order mark.
    """
    head = data[:4]
    if head[:2] in (b"\xff\xfe", b"\xfe\xff") or head in (b"\x00\x00\xfe\xff", b"\xff\xfe\x00\x00"):
        raise DataError(f"{source}: is UTF-16 or UTF-32 text, not UTF-8; save it as UTF-8")
    if b"\x00" in data[:65536]:
        raise DataError(f"{source}: is not a text file (it contains NUL bytes); is it binary?")
    return len(UTF8_BOM) if data.startswith(UTF8_BOM) else 0


def decode(data: bytes | memoryview, source: str, *, first_line: int = 1) -> str:
    """Decode UTF-8, or raise :class:`DataError` naming the line of the first bad byte."""
    try:
        return bytes(data).decode("utf-8") if isinstance(data, memoryview) else data.decode("utf-8")
    except UnicodeDecodeError as e:
        raw = bytes(data)
        line = first_line + raw.count(b"\n", 0, e.start)
        raise DataError(
            f"{source}: line {line} is not valid UTF-8 (byte 0x{raw[e.start]:02x}); "
            "is it a binary file, or text in another encoding? Save it as UTF-8"
        ) from None
