"""Hostile and corrupt input files: each is refused with one DataError line naming the file, without
crashing the process or exhausting its memory.

Files that used to crash the interpreter are read in a child process under a memory cap, so a
regression fails the test instead of killing pytest.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hdp_plugin import read_dataset
from hdp_plugin.data import open_batches
from hdp_plugin.data.arrow import ipc_batches, ipc_table, parquet_table, to_arrow
from hdp_plugin.errors import DataError, TooLargeError

HERE = Path(__file__).parent
HOSTILE = HERE / "data" / "hostile"
ROOT = HERE.parent
#: address-space cap of the child processes (numba and pyarrow reserve much virtual memory)
CAP_BYTES = 3 << 30


def _capped():
    if sys.platform != "win32":
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (CAP_BYTES, CAP_BYTES))


def read_in_child(path: Path, timeout: float = 120, *, batches: bool = False) -> subprocess.CompletedProcess:
    """``read_dataset(path)`` (or, with ``batches``, every batch of ``open_batches(path)``) in a child
    process under a memory cap; prints ``DataError: ...`` or ``ok``."""
    read = (f"for _ in open_batches({str(path)!r}, batch_rows=100).batches(): pass" if batches
            else f"read_dataset({str(path)!r})")
    code = textwrap.dedent(f"""
        import sys
        from hdp_plugin import read_dataset
        from hdp_plugin.data import open_batches
        from hdp_plugin.errors import DataError
        try:
            {read}
        except DataError as e:
            print("DataError:", e)
        else:
            print("ok")
    """)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout, env=env,
                          preexec_fn=_capped if sys.platform != "win32" else None)


@pytest.mark.parametrize("batches", [False, True], ids=["whole", "batches"])
@pytest.mark.parametrize("name", sorted(p.name for p in HOSTILE.glob("*.arrow")))
def test_corrupt_arrow_files_that_crashed_the_reader(name, batches):
    r = read_in_child(HOSTILE / name, batches=batches)
    assert r.returncode == 0, f"exit {r.returncode}: {r.stderr[-2000:]}"
    out = r.stdout.strip()
    assert out.startswith("DataError:") and name in out and "\n" not in out, out


def _stream(table: pa.Table, path: Path, **options) -> Path:
    with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_stream(
            sink, table.schema, options=pa.ipc.IpcWriteOptions(**options)) as w:
        w.write_table(table)
    return path


def test_declared_rows_are_bounded_before_decoding(tmp_path):
    # a few hundred bytes declaring 5x10^8 rows of a type that needs no bytes
    path = _stream(pa.table({"a": pa.nulls(500_000_000)}), tmp_path / "rows.arrow")
    assert path.stat().st_size < 1000
    r = read_in_child(path)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "DataError:" in r.stdout and "exceed the limit" in r.stdout, r.stdout
    with pytest.raises(TooLargeError, match=r"rows\.arrow: its declared values"):
        ipc_table(path)


def test_declared_rows_are_bounded_batch_by_batch(tmp_path):
    """Read in batches, the limits bound each record batch: the same refusal, before decoding."""
    table = pa.table({"a": pa.nulls(500_000_000)})
    path = _stream(table, tmp_path / "rows.arrow")
    r = read_in_child(path, batches=True)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "DataError:" in r.stdout and "rows.arrow: its declared values" in r.stdout, r.stdout
    small = _stream(pa.table({"a": np.arange(10_000), "class": ["x", "y"] * 5000}), tmp_path / "small.arrow")
    with pytest.raises(TooLargeError, match=r"small\.arrow: its declared values \(rows x columns\) \(20000\) "
                                            r"exceed the limit of 19999"):
        next(ipc_batches(small, max_cells=19_999))
    # each batch on its own: a file of several batches, each under the limit, streams
    with pa.OSFile(str(tmp_path / "many.arrow"), "wb") as sink, pa.ipc.new_file(sink, pa.schema([("a", pa.int64())])) as w:
        for i in range(5):
            w.write_batch(pa.record_batch([pa.array(np.arange(1000) + i * 1000)], names=["a"]))
    got = list(ipc_batches(tmp_path / "many.arrow", max_cells=1000))
    assert [b.num_rows for b in got] == [1000] * 5
    with pytest.raises(TooLargeError, match=r"many\.arrow: its declared values"):
        ipc_table(tmp_path / "many.arrow", max_cells=1000)


def test_compressed_buffers_are_bounded_before_decompression(tmp_path):
    # zstd: 2 MB of zeros in a few KB; a limit below that refuses the file before decompressing anything
    cls = pa.DictionaryArray.from_arrays(pa.array(np.arange(1 << 18, dtype=np.int8) % 2), pa.array(["x", "y"]))
    table = pa.table({"a": np.zeros(1 << 18, dtype=np.int64), "class": cls})
    path = _stream(table, tmp_path / "bomb.arrow", compression="zstd")
    assert path.stat().st_size < 100_000
    with pytest.raises(TooLargeError, match=r"bomb\.arrow: its decoded buffers would take more bytes"):
        ipc_table(path, max_bytes=1 << 20)
    assert ipc_table(path).num_rows == 1 << 18  # the default limit (64x the file, at least 1 GiB) admits it


def test_forged_decompressed_length_is_refused(tmp_path):
    # the 8-byte prefix of a compressed buffer claims 2^40 bytes: pyarrow would try to allocate them
    table = pa.table({"a": np.arange(1000, dtype=np.int64), "class": pa.array(["x", "y"] * 500)})
    path = _stream(table, tmp_path / "forged.arrow", compression="zstd")
    data = bytearray(path.read_bytes())
    import struct

    from hdp_plugin.data import _ipc_check as C

    # find the record batch's first non-empty buffer through the checker's own parser
    pos, n = 0, len(data)
    while True:
        size = struct.unpack_from("<I", data, pos + 4)[0]
        meta = C._root(bytes(data[pos + 8: pos + 8 + size]))
        body = pos + 8 + size
        if meta.scalar(1, "u8") == 3:
            buffers = [b for b in meta.table(2).structs(2, 16) if b[1] > 0]
            struct.pack_into("<q", data, body + buffers[-1][0], 1 << 40)
            break
        pos = body + meta.scalar(3, "i64")
        assert pos < n
    path.write_bytes(bytes(data))
    with pytest.raises(TooLargeError, match=r"forged\.arrow: its decoded buffers"):
        read_dataset(path)
    with pytest.raises(TooLargeError, match=r"forged\.arrow: its decoded buffers"):
        list(ipc_batches(path))
    with pytest.raises(TooLargeError, match=r"forged\.arrow: its decoded buffers"):
        list(open_batches(path).batches())


def _string_views(path: Path, rows: int, length: int, distinct: int = 1) -> Path:
    """An Arrow IPC file whose column ``s`` holds ``rows`` string views of ``length`` bytes each, all
    pointing into one data buffer of about ``length`` bytes (``distinct`` different strings), and a class
    column: ``rows x length`` bytes of text in a file of about 16 bytes a row."""
    rng = np.random.default_rng(0)
    data = rng.integers(97, 123, size=length + distinct, dtype=np.uint8).tobytes()
    at = (np.arange(rows) % distinct).astype(np.int32)
    views = np.zeros((rows, 4), dtype="<i4")
    views[:, 0] = length
    views[:, 1] = np.frombuffer(b"".join(data[o:o + 4] for o in range(distinct)), dtype="<i4")[at]
    views[:, 3] = at  # buffer 0, at this offset
    s = pa.Array.from_buffers(pa.string_view(), rows, [None, pa.py_buffer(views.tobytes()), pa.py_buffer(data)])
    s.validate(full=True)
    cls = pa.DictionaryArray.from_arrays(pa.array(at % 2, pa.int8()), pa.array(["x", "y"]))
    with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, pa.schema([("s", s.type), ("class", cls.type)])) as w:
        w.write_table(pa.table({"s": s, "class": cls}))
    return path


def test_string_views_are_bounded_by_the_text_they_point_to(tmp_path):
    """Views count as the text they stand for, which decoding copies, before any of it is copied."""
    path = _string_views(tmp_path / "views.arrow", 5000, 4000, distinct=3)  # 20 MB of text in 80 KB
    assert path.stat().st_size < 100_000
    message = (r"views\.arrow: column 's' holds 20,000,000 bytes of text in string views, more than the limit of "
               r"16,777,216 bytes once decoded")
    with pytest.raises(TooLargeError, match=message):
        ipc_table(path, max_bytes=16 << 20)
    with pytest.raises(TooLargeError, match=message):
        list(ipc_batches(path, max_bytes=16 << 20))
    from hdp_plugin.data.limits import Limits
    from hdp_plugin.data.readers import read_within

    with pytest.raises(TooLargeError, match=message + r"; --max-input-mb bounds"):
        read_within(path, Limits(16 << 20))
    # within the limit: the text the views stand for, one label per distinct string
    ds = read_within(path, Limits(32 << 20))
    assert ds.n_rows == 5000 and len(ds.attributes[0].values) == 3
    assert all(len(v) == 4000 for v in ds.attributes[0].values)


def test_a_small_file_of_a_gigabyte_of_string_views_is_refused_before_decoding(tmp_path):
    """About 1.1 MB of views pointing at one 16 KB string: more than 1 GiB of text, refused by default
    (at once, under a memory cap) by the reader and by ``train -t 2``, with one line naming the column."""
    path = _string_views(tmp_path / "gigabyte.arrow", 70_000, 16_000)
    assert path.stat().st_size < 1_300_000
    r = read_in_child(path)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.startswith("DataError: ") and "gigabyte.arrow: column 's' holds 1,120,000,000 bytes" in r.stdout, \
        r.stdout
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    r = subprocess.run([sys.executable, "-m", "hdp_plugin", "train", str(path), "-o", str(tmp_path / "m.hdpbnc"),
                        "-t", "2"], capture_output=True, text=True, timeout=300, env=env,
                       preexec_fn=_capped if sys.platform != "win32" else None)
    lines = [ln for ln in r.stderr.splitlines() if not ln.startswith("OpenBLAS")]  # its thread warnings under a cap
    assert r.returncode == 2, r.stderr[-2000:]
    assert len(lines) == 1 and "gigabyte.arrow: column 's' holds 1,120,000,000 bytes of text" in lines[0], lines
    assert not (tmp_path / "m.hdpbnc").exists()


@pytest.mark.filterwarnings("ignore:Feather V1 files are deprecated")
def test_feather_v1_is_refused(tmp_path):
    import pyarrow.feather as feather

    path = tmp_path / "old.feather"
    feather.write_feather(pa.table({"a": ["x", "y"], "class": ["p", "q"]}), str(path), version=1)
    with pytest.raises(DataError, match=r"old\.feather: is a Feather v1 file"):
        read_dataset(path)
    with pytest.raises(DataError, match=r"old\.feather: is a Feather v1 file"):
        list(open_batches(path).batches())


def test_parquet_rows_are_bounded_from_the_footer(tmp_path):
    # run-length encoding makes a Parquet file of a constant column tiny; its footer says how big it is
    path = tmp_path / "rle.parquet"
    pq.write_table(pa.table({"a": np.zeros(1 << 20, dtype=np.int8), "class": pa.array(["x"] * (1 << 20))}),
                   str(path))
    assert path.stat().st_size < 100_000
    with pytest.raises(TooLargeError, match=r"rle\.parquet: declares 1048576 rows x 2 columns"):
        parquet_table(path, max_cells=1 << 20)
    assert parquet_table(path).num_rows == 1 << 20


def test_invalid_utf8_column_name_is_one_data_error(tmp_path):
    table = to_arrow(read_dataset(HERE / "data" / "weather.nominal.arff"))
    path = _stream(table, tmp_path / "names.arrow")
    data = path.read_bytes().replace(b"outlook", b"\xe5utlook", 1)
    path.write_bytes(data)
    with pytest.raises(DataError, match=r"names\.arrow: cannot read"):
        read_dataset(path)
    with pytest.raises(DataError, match=r"names\.arrow: cannot read"):
        list(ipc_batches(path))


def test_undamaged_files_still_read(tmp_path):
    ds = read_dataset(HERE / "data" / "vote.arff")
    table = to_arrow(ds)
    for opts in ({}, {"compression": "zstd"}, {"compression": "lz4"}):
        back = read_dataset(_stream(table, tmp_path / "ok.arrow", **opts))
        assert np.array_equal(back.X, ds.X) and np.array_equal(back.y, ds.y)
    with pa.OSFile(str(tmp_path / "f.arrow"), "wb") as sink, pa.ipc.new_file(sink, table.schema) as w:
        w.write_table(table)
    back = read_dataset(tmp_path / "f.arrow")
    assert np.array_equal(back.X, ds.X)


def test_ipc_file_without_end_of_stream_marker_reads(tmp_path):
    """Arrow Java (and the Weka wrapper's writer) put no end-of-stream marker before the footer."""
    import struct

    ds = read_dataset(HERE / "data" / "vote.arff")
    path = tmp_path / "java.arrow"
    table = to_arrow(ds)
    with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, table.schema) as w:
        for b in table.to_batches(max_chunksize=100):
            w.write_batch(b)
    data = path.read_bytes()
    footer_start = len(data) - 10 - struct.unpack_from("<i", data, len(data) - 10)[0]
    assert data[footer_start - 8: footer_start] == b"\xff\xff\xff\xff\x00\x00\x00\x00"
    path.write_bytes(data[: footer_start - 8] + data[footer_start:])
    assert pa.ipc.open_file(str(path)).read_all().num_rows == 435  # still a valid file for pyarrow
    back = read_dataset(path)
    assert np.array_equal(back.X, ds.X) and np.array_equal(back.y, ds.y)
    assert pa.Table.from_batches(list(ipc_batches(path))).equals(ipc_table(path))


def test_a_file_that_shrinks_while_read_in_batches_is_one_error(tmp_path):
    """The batch reader reads the file as it goes (never memory-mapped): a file cut short under it is an
    error naming it, not a crash."""
    table = to_arrow(read_dataset(HERE / "data" / "vote.arff"))
    path = tmp_path / "shrinks.arrow"
    with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, table.schema) as w:
        for b in table.to_batches(max_chunksize=50):
            w.write_batch(b)
    batches = ipc_batches(path)
    first = next(batches)
    assert first.num_rows == 50
    with open(path, "r+b") as fh:
        fh.truncate(path.stat().st_size // 2)
    with pytest.raises(DataError, match=r"shrinks\.arrow: cannot read as an Arrow IPC file or stream \(corrupt: "
                                        r"the file ends at offset \d+, inside a message"):
        list(batches)


def test_a_later_corrupt_message_is_found_when_the_reading_reaches_it(tmp_path):
    table = to_arrow(read_dataset(HERE / "data" / "vote.arff"))
    path = tmp_path / "late.arrow"
    with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_stream(sink, table.schema) as w:
        for b in table.to_batches(max_chunksize=100):
            w.write_batch(b)
    data = bytearray(path.read_bytes())
    data[-20:] = b"\xff" * 20  # the last batch's body and the end-of-stream marker
    path.write_bytes(bytes(data))
    with pytest.raises(DataError, match=r"late\.arrow: cannot read"):
        ipc_table(path)
    with pytest.raises(DataError, match=r"late\.arrow: cannot read"):
        list(ipc_batches(path))


def _fuzz(seed: int, seconds: float, cases: int, tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    r = subprocess.run([sys.executable, str(HERE / "_fuzz_child.py"), str(seed), str(seconds), str(cases),
                        str(tmp_path)], capture_output=True, text=True, timeout=seconds + 240, env=env,
                       preexec_fn=_capped if sys.platform != "win32" else None)
    tail = "\n".join(r.stdout.strip().splitlines()[-3:])
    assert r.returncode == 0, f"exit {r.returncode} after:\n{tail}\n{r.stderr[-1500:]}"
    assert tail.splitlines()[-1].startswith("ok "), tail


def test_fuzz_arrow_and_parquet_readers_briefly(tmp_path):
    """Seeded byte flips, overwrites, truncations and duplications of Arrow IPC (plain, zstd, lz4,
    dictionary and string columns) and Parquet files: each reads or raises one DataError line; an
    Arrow file read in batches gives the whole read's table, or a DataError too."""
    _fuzz(seed=13, seconds=4, cases=400, tmp_path=tmp_path)


@pytest.mark.slow
def test_fuzz_arrow_and_parquet_readers_long(tmp_path):
    _fuzz(seed=int(os.environ.get("HDP_FUZZ_SEED", "1313")), seconds=240, cases=100_000, tmp_path=tmp_path)


def _fuzz_formats(family: str, seed: int, seconds: float, cases: int, tmp_path: Path) -> None:
    """Run tests/_fuzz_formats_child.py under the memory cap (each case also has a time cap there)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    r = subprocess.run([sys.executable, str(HERE / "_fuzz_formats_child.py"), family, str(seed), str(seconds),
                        str(cases), str(tmp_path)], capture_output=True, text=True, timeout=seconds + 240, env=env,
                       preexec_fn=_capped if sys.platform != "win32" else None)
    tail = "\n".join(r.stdout.strip().splitlines()[-3:])
    assert r.returncode == 0, f"seed {seed}: exit {r.returncode} after:\n{tail}\n{r.stderr[-3000:]}"
    assert tail.splitlines()[-1].startswith("ok "), tail


def test_fuzz_arff_csv_and_feather_readers_briefly(tmp_path):
    """Seeded byte and token mutations (quotes, braces, declarations, huge and
    non-finite numbers, NUL, line separators) of ARFF files (dense and sparse; plain, gzip bytes, gzip
    of mutated text), CSV and Feather v2 (uncompressed, lz4, zstd): each reads whole and in batches,
    or raises one DataError line naming the file; no crash, no hang, no memory blow-up."""
    _fuzz_formats("data", seed=21, seconds=12, cases=2500, tmp_path=tmp_path)


def test_fuzz_model_files_briefly(tmp_path):
    """The golden single-network and ESKDB model files with flipped bytes, or with a
    document value or a cell changed and the checksum recomputed: each loads, and then predicts finite
    distributions, or raises one ModelFileError line naming the file."""
    _fuzz_formats("model", seed=21, seconds=18, cases=800, tmp_path=tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("family", ["data", "model"])
def test_fuzz_arff_csv_feather_and_model_files_long(tmp_path, family):
    _fuzz_formats(family, seed=int(os.environ.get("HDP_FUZZ_SEED", "2121")), seconds=240, cases=1_000_000,
                  tmp_path=tmp_path)
