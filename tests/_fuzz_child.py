"""Child process of the fuzz tests: mutate Arrow IPC / Feather / Parquet files and read each one.

Run as ``python tests/_fuzz_child.py SEED SECONDS MAX_CASES WORKDIR``. Every mutated file must either
read or raise DataError (an Arrow file read whole and read batch by batch, which must agree: the same
table, or a DataError both ways); anything else (another exception, a crash, a hang, memory exhaustion, which
the parent turns into a failure through its resource limits) is a bug. Before each case the child
prints ``case N <format> <mutation>`` (flushed), so a crash names the case that caused it; a
different exception prints ``BUG ...`` and the child exits 1.
"""

from __future__ import annotations

import os
import random
import struct
import sys
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from hdp_plugin import read_dataset
from hdp_plugin.data.arrow import ipc_batches, ipc_table, to_arrow
from hdp_plugin.errors import DataError

DATA = Path(__file__).parent / "data"
INTERESTING = [0, 1, -1, 7, 8, 255, 0x7FFF, 0xFFFF, 0x7FFFFFFF, -0x80000000, 0xFFFFFFFF, 300_000_000,
               1 << 40, (1 << 63) - 1, -(1 << 63)]


def seeds(work: Path) -> list[tuple[str, bytes]]:
    out = []
    for name in ("vote.arff", "weather.nominal.arff", "iris.arff"):
        ds = read_dataset(DATA / name)
        table = to_arrow(ds)
        strings = pa.table({n: (pa.array([None if v is None else str(v) for v in c.to_pylist()], pa.string())
                                if pa.types.is_dictionary(c.type) else c) for n, c in zip(table.column_names, table.columns)})
        variants = {
            "file": lambda t, s: pa.ipc.new_file(s, t.schema),
            "stream": lambda t, s: pa.ipc.new_stream(s, t.schema),
            "zstd": lambda t, s: pa.ipc.new_file(s, t.schema, options=pa.ipc.IpcWriteOptions(compression="zstd")),
            "lz4": lambda t, s: pa.ipc.new_stream(s, t.schema, options=pa.ipc.IpcWriteOptions(compression="lz4")),
        }
        for tname, t in (("dict", table), ("str", strings)):
            for vname, make in variants.items():
                sink = pa.BufferOutputStream()
                with make(t, sink) as w:
                    for b in t.to_batches(max_chunksize=max(1, t.num_rows // 2)):
                        w.write_batch(b)
                data = sink.getvalue().to_pybytes()
                out.append((f"{name}-{tname}-{vname}.arrow", data))
                if vname == "file":  # as Arrow Java writes files: no end-of-stream marker before the footer
                    end = len(data) - 10 - struct.unpack_from("<i", data, len(data) - 10)[0]
                    out.append((f"{name}-{tname}-noeos.arrow", data[: end - 8] + data[end:]))
        p = work / "s.parquet"
        pq.write_table(strings, str(p))
        out.append((f"{name}.parquet", p.read_bytes()))
    return out


def mutate(rng: random.Random, data: bytes) -> tuple[bytes, str]:
    b = bytearray(data)
    kind = rng.randrange(5)
    if kind == 0:
        i = rng.randrange(len(b))
        b[i] ^= 1 << rng.randrange(8)
        return bytes(b), f"flip@{i}"
    if kind == 1:
        for _ in range(rng.randint(1, 8)):
            b[rng.randrange(len(b))] = rng.randrange(256)
        return bytes(b), "bytes"
    if kind == 2:
        n = rng.randrange(len(b))
        return bytes(b[:n]), f"truncate@{n}"
    if kind == 3:
        size, fmt = rng.choice([(4, "<i"), (8, "<q"), (2, "<h")])
        i = rng.randrange(max(1, len(b) - size))
        v = rng.choice(INTERESTING)
        lo, hi = -(1 << (8 * size - 1)), (1 << (8 * size - 1)) - 1
        v = max(lo, min(hi, v if v <= hi else v - (1 << (8 * size))))
        struct.pack_into(fmt, b, i, v)
        return bytes(b), f"int{size * 8}@{i}={v}"
    i, j = sorted(rng.sample(range(len(b)), 2))
    return bytes(b[:i] + b[i:j] + b[i:]), f"dup{i}:{j}"


class _Disagree(Exception):
    pass


def _streamed_agrees(path: Path) -> None:
    """``ipc_batches`` gives the batches of ``ipc_table``, or both raise DataError."""
    whole = streamed = None
    try:
        whole = ipc_table(path)
    except DataError:
        pass
    try:
        streamed = list(ipc_batches(path))
    except DataError as exc:
        if "\n" in str(exc) or str(path) not in str(exc):
            raise _Disagree(f"in batches, a message not one line naming the file: {str(exc)!r}") from None
    if (whole is None) != (streamed is None):
        raise _Disagree(f"read whole: {'ok' if whole is not None else 'DataError'}, "
                        f"in batches: {'ok' if streamed is not None else 'DataError'}")
    if whole is not None and _rows(pa.Table.from_batches(streamed, schema=whole.schema)) != _rows(whole):
        raise _Disagree("the batches differ from the whole file's table")


def _rows(table: pa.Table) -> list:
    """The table's values, NaN (which ``Table.equals`` finds unequal to itself) as a string."""
    return [["NaN" if isinstance(v, float) and v != v else v for v in c.to_pylist()] for c in table.columns]


def main() -> int:
    seed, seconds, max_cases, work = int(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3]), Path(sys.argv[4])
    rng = random.Random(seed)
    corpus = seeds(work)
    deadline = time.monotonic() + seconds
    n = 0
    while n < max_cases and time.monotonic() < deadline:
        name, data = corpus[n % len(corpus)]
        mutated, how = mutate(rng, data)
        path = work / f"case{Path(name).suffix}"
        path.write_bytes(mutated)
        print(f"case {n} {name} {how}", flush=True)
        try:
            if path.suffix == ".arrow":
                _streamed_agrees(path)
            read_dataset(path)
        except DataError as exc:
            msg = str(exc)
            if "\n" in msg or str(path) not in msg:
                print(f"BUG case {n} {name} {how}: message not one line naming the file: {msg!r}", flush=True)
                return 1
        except Exception as exc:  # noqa: BLE001 - the point of the test
            print(f"BUG case {n} {name} {how}: {type(exc).__name__}: {exc}", flush=True)
            if os.environ.get("FUZZ_KEEP_GOING"):
                import traceback

                traceback.print_exc(limit=-3)
                n += 1
                continue
            return 1
        n += 1
    print(f"ok {n} cases", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
