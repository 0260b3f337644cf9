"""Child process of the fuzz tests of ARFF (plain, gzip, sparse), CSV, Feather and model files.

Run as ``python tests/_fuzz_formats_child.py FAMILY SEED SECONDS MAX_CASES WORKDIR`` with FAMILY
``data`` or ``model``. The parent (tests/test_hostile_inputs.py) caps the child's memory; here every
case also runs under a time cap (``CASE_SECONDS``: faulthandler dumps the stack and ends the child,
so a hang names its case instead of stalling the suite). The same seed gives the same cases in the same
order; SECONDS only says how many of them run.

* ``data``: mutated ARFF (dense, sparse; plain, gzip-compressed bytes, or gzip of mutated text),
  CSV and Feather v2 (uncompressed, lz4, zstd) files, mutated byte-wise or, for text, token-wise
  (quotes, braces, separators, declarations, huge or non-finite numbers, NUL, line separators).
  Each must read (``read_dataset``, and every batch of ``open_batches``) or raise a DataError of
  one line naming the file.
* ``model``: the golden model files (single networks and ESKDB ensembles) with flipped bytes, or
  with a value of the model document or a cell changed and the checksum recomputed, so that the
  reader's own checks are what stands in the way. Each must load or raise a ModelFileError of one
  line naming the file; a model that loads must predict the training rows with finite
  probabilities that sum to one, or raise one of the project's one-line errors.

Before each case the child prints ``case N <seed file> <mutation>`` (flushed); another exception
prints ``BUG ...`` and the child exits 1.
"""

from __future__ import annotations

import copy
import faulthandler
import gzip
import io
import json
import math
import random
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.feather as feather

from _fuzz_child import INTERESTING, mutate
from hdp_plugin import read_dataset
from hdp_plugin.data import open_batches
from hdp_plugin.data.arrow import to_arrow
from hdp_plugin.errors import DataError, HDPError, ModelFileError

HERE = Path(__file__).parent
DATA = HERE / "data"
GOLDEN = HERE / "golden" / "models"
#: the most seconds one case may take (a first read or prediction loads numba's kernels from its cache)
CASE_SECONDS = 60

TOKENS = ["\n", "\r\n", "\r", ",", ",,,,", "'", '"', "{", "}", "{}", "%", "?", " ", "\t", "\\", "\\'", "''",
          "@data\n", "@DATA", "@attribute x numeric\n", "@attribute y {a,b}\n", "@attribute 'q r' string\n",
          "@attribute d date 'yyyy-MM-dd'\n", "@attribute r relational\n", "@end r\n", "@relation z\n",
          "1e309", "-1e309", "1e-400", "nan", "NaN", "inf", "-inf", "9" * 400, "-0", "0x1F", "1,5", "\x00",
          "\ufeff", "\u2028", "\u00e9", "\udcff", "{0 a}", "{99999999999 x}", "{-1 x}", "{1 a,0 b}", "{0 ?}",
          "{2 1e308}", "'unterminated", "a" * 5000, "{" * 200, "," * 2000]


# ------------------------------------------------------------------------------------------
# data files
# ------------------------------------------------------------------------------------------
def _sparse_arff(path: Path) -> str:
    """The ARFF file as Weka's sparse format: absent values are 0 (the first label) and not written."""
    lines, out, data = path.read_text().splitlines(), [], False
    for line in lines:
        if not data:
            out.append(line)
            data = line.strip().lower() == "@data"
            continue
        if not line.strip() or line.lstrip().startswith("%"):
            continue
        fields = [f.strip() for f in line.split(",")]
        out.append("{" + ",".join(f"{j} {v}" for j, v in enumerate(fields) if v not in ("0", "")) + "}")
    return "\n".join(out) + "\n"


def data_seeds(work: Path) -> list[tuple[str, bytes, str]]:
    """(file name, content, how to mutate): ``text`` token-wise or byte-wise, ``gzip-text`` mutated as text
    then compressed, ``bytes`` byte-wise only."""
    out = []
    for name in ("weather.nominal.arff", "weather.numeric.arff", "iris.arff", "labor.arff", "contact-lenses.arff"):
        text = (DATA / name).read_bytes()
        out.append((name, text, "text"))
        out.append((name + ".gz", gzip.compress(text, mtime=0), "bytes"))
        out.append((name + ".gz", text, "gzip-text"))
    for name in ("weather.nominal.arff", "contact-lenses.arff", "iris.arff"):
        out.append((name.replace(".arff", ".sparse.arff"), _sparse_arff(DATA / name).encode(), "text"))
    for name in ("weather.numeric.arff", "labor.arff", "iris.arff"):
        table = to_arrow(read_dataset(DATA / name))
        plain = pa.table({n: (c.cast(pa.string()) if pa.types.is_dictionary(c.type) else c)
                          for n, c in zip(table.column_names, table.columns)})
        sink = io.BytesIO()
        pacsv.write_csv(plain, sink)
        out.append((name.replace(".arff", ".csv"), sink.getvalue(), "text"))
        for compression in ("uncompressed", "lz4", "zstd"):
            p = work / "seed.feather"
            feather.write_feather(table, str(p), compression=compression)
            out.append((name.replace(".arff", f"-{compression}.feather"), p.read_bytes(), "bytes"))
    return out


def mutate_text(rng: random.Random, data: bytes) -> tuple[bytes, str]:
    text = data.decode("utf-8", "surrogateescape")
    lines = text.split("\n")
    kind = rng.randrange(6)
    if kind == 0:
        i, tok = rng.randrange(len(text) + 1), rng.choice(TOKENS)
        out, how = text[:i] + tok + text[i:], f"insert@{i}={tok[:20]!r}"
    elif kind == 1:
        i = rng.randrange(len(lines))
        out, how = "\n".join(lines[:i] + lines[i + 1:]), f"delete-line{i}"
    elif kind == 2:
        i = rng.randrange(len(lines))
        out, how = "\n".join(lines[:i + 1] + lines[i:]), f"dup-line{i}"
    elif kind == 3:
        i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
        lines[i], lines[j] = lines[j], lines[i]
        out, how = "\n".join(lines), f"swap-lines{i},{j}"
    elif kind == 4:  # replace one field of a line with a token
        i = rng.randrange(len(lines))
        fields = lines[i].split(",")
        f, tok = rng.randrange(len(fields)), rng.choice(TOKENS)
        fields[f] = tok
        lines[i] = ",".join(fields)
        out, how = "\n".join(lines), f"field{i}.{f}={tok[:20]!r}"
    else:
        i, n = rng.randrange(len(text) + 1), rng.randint(1, 64)
        out, how = text[:i] + text[i + n:], f"cut@{i}+{n}"
    return out.encode("utf-8", "surrogateescape"), how


def _one_line(exc: BaseException, path: Path) -> str | None:
    msg = str(exc)
    return None if "\n" not in msg and str(path) in msg else f"message not one line naming the file: {msg!r}"


def run_data_case(path: Path) -> str | None:
    """None, or what is wrong."""
    for read in (lambda: read_dataset(path), lambda: [b for b in open_batches(path, batch_rows=7).batches()]):
        try:
            read()
        except DataError as exc:
            bad = _one_line(exc, path)
            if bad:
                return bad
    return None


# ------------------------------------------------------------------------------------------
# model files
# ------------------------------------------------------------------------------------------
def model_seeds() -> list[tuple[str, bytes, dict]]:
    manifest = json.loads((GOLDEN / "manifest.json").read_text())
    return [(e["model"], (GOLDEN / e["model"]).read_bytes(), e) for _, e in sorted(manifest.items())]


def _paths(obj, prefix=()):
    """Every (path, value) of a JSON document, containers included."""
    yield prefix, obj
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _paths(v, prefix + (k,))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _paths(v, prefix + (i,))


VALUES = [None, True, False, 0, 1, -1, 2, 3, 255, 2**31, 2**63, -(2**63), 10**30, 0.0, -0.0, 0.5, 1e-320, 1e308,
          -1e308, "", "x", "eskdb", "hdp", "nan", [], [0], [-1], [10**9], {}, {"a": 1}, [[]], [None]]


def mutate_model(rng: random.Random, data: bytes) -> tuple[bytes, str]:
    """A model file changed in its bytes, its model document or its cells (the last two with the checksum
    recomputed)."""
    from hdp_plugin.model import modelfile as MF

    kind = rng.randrange(10)
    if kind < 2:
        return mutate(rng, data)
    doc, training, batches = MF.read_model_file(_tmp_model(data))
    batches = [dict(b) for b in batches]
    if kind < 8:
        paths = list(_paths(doc))[1:]
        where, old = rng.choice(paths)
        parent = doc
        for k in where[:-1]:
            parent = parent[k]
        op = rng.randrange(4)
        if op == 0 and isinstance(parent, dict):
            del parent[where[-1]]
            how = f"doc-del{list(where)}"
        elif op == 1 and isinstance(old, list) and old:
            old.insert(rng.randrange(len(old)), copy.deepcopy(rng.choice(old)))
            how = f"doc-dup{list(where)}"
        elif op == 2 and isinstance(old, list) and old:
            old.pop(rng.randrange(len(old)))
            how = f"doc-pop{list(where)}"
        else:
            v = copy.deepcopy(rng.choice(VALUES))
            parent[where[-1]] = v
            how = f"doc{list(where)}={v!r}"
    else:
        b = rng.randrange(len(batches)) if batches else None
        if b is None:
            return mutate(rng, data)
        # a column's values (3.0's list offsets are fuzzed as bytes: pyarrow will not write bad ones)
        col = rng.choice(sorted(c for c in batches[b] if not c.endswith("_offsets")))
        arr = batches[b][col].copy()
        i = rng.randrange(len(arr))
        if arr.dtype.kind == "f":
            v = rng.choice([math.nan, math.inf, -math.inf, 0.0, -0.0, 1.0, -1e-300, 1e308, -745.0, 5.0])
        else:
            v = rng.choice(INTERESTING)
            info = np.iinfo(arr.dtype)
            v = max(int(info.min), min(int(info.max), v))
        arr[i] = v
        batches[b][col] = arr
        how = f"cell{b}.{col}[{i}]={v!r}"
    return _crafted(doc, training, batches), how


_WORK: Path | None = None


def _tmp_model(data: bytes) -> Path:
    p = _WORK / "seed.hdpbnc"
    p.write_bytes(data)
    return p


def _crafted(doc, training, batches) -> bytes:
    """A model file of these documents and cells with a matching checksum (None in JSON stays null)."""
    from hdp_plugin.model import modelfile as MF

    return MF.file_bytes(json.dumps(doc).encode(), json.dumps(training).encode(), batches)


_DATASETS: dict = {}


def run_model_case(path: Path, entry: dict) -> str | None:
    from hdp_plugin.model import load_model

    try:
        clf = load_model(path)
    except ModelFileError as exc:
        return _one_line(exc, path)
    key = (entry["data"], entry["class"])
    if key not in _DATASETS:
        _DATASETS[key] = read_dataset(HERE.parent / entry["data"], class_attribute=entry["class"])
    try:
        p = clf.predict_proba(_DATASETS[key])
    except HDPError as exc:
        return None if "\n" not in str(exc) else f"prediction error not one line: {str(exc)!r}"
    if p.ndim != 2 or not np.isfinite(p).all() or not np.allclose(p.sum(axis=1), 1.0, atol=1e-6):
        return f"a loaded model predicts probabilities that are not finite distributions: {p[:2]!r}"
    return None


def main() -> int:
    global _WORK
    family, seed, seconds, max_cases, work = (sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]),
                                              Path(sys.argv[5]))
    _WORK = work
    rng = random.Random(seed)
    if family == "data":
        corpus = data_seeds(work)
    else:
        corpus = model_seeds()
        run_model_case(GOLDEN / corpus[0][0], corpus[0][2])  # load numba's kernels before the clock runs
    deadline = time.monotonic() + seconds
    n = 0
    while n < max_cases and time.monotonic() < deadline:
        name, data, how_to = corpus[n % len(corpus)]
        if family == "data":
            if how_to == "bytes" or rng.random() < 0.3:
                mutated, how = mutate(rng, data)
            else:
                mutated, how = mutate_text(rng, data)
            if how_to == "gzip-text":
                mutated, how = gzip.compress(mutated, mtime=0), how + " (gzip)"
            path = work / ("case" + "".join(Path(name).suffixes[-2:] if name.endswith(".gz") else Path(name).suffixes[-1:]))
        else:
            mutated, how = mutate_model(rng, data)
            path = work / "case.hdpbnc"
        path.write_bytes(mutated)
        print(f"case {n} {name} {how}", flush=True)
        faulthandler.dump_traceback_later(CASE_SECONDS, exit=True)
        try:
            problem = run_data_case(path) if family == "data" else run_model_case(path, how_to)
        except Exception as exc:  # noqa: BLE001 - the point of the test
            import traceback

            traceback.print_exc(limit=-4)
            problem = f"{type(exc).__name__}: {exc}"
        finally:
            faulthandler.cancel_dump_traceback_later()
        if problem:
            print(f"BUG case {n} {name} {how}: {problem}"[:2000], flush=True)
            return 1
        n += 1
    print(f"ok {n} cases", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
