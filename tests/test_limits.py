"""Resource limits and undecodable names: each is one ``error:`` line naming the file,
attribute or option, refused before the memory is spent.

Inputs that used to exhaust the memory are run in a child process under an address-space cap, so that a
regression fails the test instead of the machine.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from hdp_plugin.cli import commands as cli
from hdp_plugin.model import modelfile as MF

HERE = Path(__file__).parent
ROOT = HERE.parent
DATA = HERE / "data"
VOTE = DATA / "vote.arff"
GOLDEN = HERE / "golden" / "models" / "vote-kdb2-hdp.hdpbnc"
#: address-space cap of the child processes (numba and pyarrow reserve much virtual memory)
CAP_BYTES = 3 << 30
runner = CliRunner()


def run(*args):
    return runner.invoke(cli.app, [str(a) for a in args], catch_exceptions=False)


def one_line_error(result, *words, code=2):
    assert result.exit_code == code, (result.exit_code, result.output)
    assert result.stderr.startswith("error: ") and result.stderr.count("\n") == 1, result.stderr
    for w in words:
        assert w in result.stderr, result.stderr


def _capped():
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (CAP_BYTES, CAP_BYTES))


def cli_capped(*args, timeout: float = 300) -> subprocess.CompletedProcess:
    """``hdp-bnc ARGS`` in a child process under the memory cap."""
    return subprocess.run([sys.executable, "-m", "hdp_plugin", *map(str, args)], capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, "PYTHONPATH": str(ROOT)},
                          preexec_fn=_capped if sys.platform != "win32" else None)


def child_error(r: subprocess.CompletedProcess, *words, code: int = 2) -> None:
    assert r.returncode == code, (r.returncode, r.stderr[-3000:])
    lines = [ln for ln in r.stderr.splitlines() if not ln.startswith("compiling ")]
    assert len(lines) == 1 and lines[0].startswith("error: "), r.stderr[-3000:]
    for w in words:
        assert w in lines[0], lines[0]


# ------------------------------------------------------------------------------------------
# item 2: names that are not UTF-8
# ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
@pytest.mark.parametrize("gz", [False, True], ids=["csv", "csv.gz"])
def test_a_csv_header_that_is_not_utf8_is_one_error(tmp_path, stream, gz):
    import gzip

    data = tmp_path / ("b.csv.gz" if gz else "b.csv")
    raw = b"a\xff,class\nx,yes\ny,no\n"
    data.write_bytes(gzip.compress(raw) if gz else raw)
    one_line_error(run("train", data, "-o", tmp_path / "m", *(["--stream"] if stream else [])),
                   data.name, "header", "not valid UTF-8")


def _crafted(path: Path, edit) -> Path:
    """The golden model with ``edit`` applied to its documents, the checksum recomputed."""
    from test_modelfile_crafted import write_crafted

    doc, training, batches = MF.read_model_file(GOLDEN)
    doc = copy.deepcopy(doc)
    edit(doc)
    return write_crafted(path, doc, training, [dict(b) for b in batches])


MODEL_EDITS = {
    "attribute": lambda d: d["members"][0]["attributes"][0].__setitem__("name", "a\ud800"),
    "label": lambda d: d["class"]["values"].__setitem__(0, "x\udcff"),
    "class": lambda d: d["class"].__setitem__("name", "c\ud800"),
}


@pytest.mark.parametrize("what", sorted(MODEL_EDITS))
def test_model_file_names_that_are_not_utf8_are_one_error(tmp_path, what):
    """A lone surrogate (JSON's \\ud800) in a model file's names: info and show printed a traceback."""
    model = _crafted(tmp_path / "m.hdpbnc", MODEL_EDITS[what])
    for args in (("info", model), ("info", "--json", model), ("show", model), ("predict", model, VOTE)):
        one_line_error(run(*args), "m.hdpbnc", "not valid UTF-8")


def test_model_file_column_names_that_are_not_utf8_are_one_error(tmp_path):
    """Invalid UTF-8 bytes in the node table's column names (outside the checksum): one error line naming the
    columns (the byte that is not UTF-8 shown as U+FFFD)."""
    raw = GOLDEN.read_bytes()
    assert raw.count(b"log_backoff") == 2  # the schema, at the start and in the footer
    model = tmp_path / "m.hdpbnc"
    model.write_bytes(raw.replace(b"log_backoff", b"\xffog_backoff"))
    for args in (("info", model), ("show", model), ("predict", model, VOTE)):
        one_line_error(run(*args), "m.hdpbnc", "unexpected columns", "\ufffdog_backoff")


# ------------------------------------------------------------------------------------------
# item 3: structure learning builds only what the structure needs, and refuses what does not fit
# ------------------------------------------------------------------------------------------
def test_pair_layout_and_marginal_counts_are_unchanged():
    """The pair offsets (now laid out row by row with NumPy) are the old loop's; counting without
    pairs gives the same n(y) and n(x_i, y)."""
    import numpy as np

    from hdp_plugin.structure.counts import count_statistics

    rng = np.random.default_rng(3)
    card = rng.integers(1, 6, 9)
    X = np.stack([rng.integers(0, c, 200) for c in card], axis=1).astype(np.uint8)
    y = rng.integers(0, 3, 200).astype(np.int32)
    full = count_statistics(X, y, card, 3)
    old, pos = np.full((9, 9), -1, np.int64), 0
    for i in range(9):
        for j in range(i + 1, 9):
            old[i, j] = pos
            pos += int(card[i] * card[j]) * 3
    assert np.array_equal(full.pair_offsets, old) and full.n_xxy.size == pos
    marg = count_statistics(X, y, card, 3, pairs=False)
    assert np.array_equal(marg.n_y, full.n_y) and np.array_equal(marg.n_xy, full.n_xy)
    assert not marg.has_pairs and marg.n_xxy.size == 0 and full.has_pairs


@pytest.mark.skipif(sys.platform == "win32", reason="uses RLIMIT_AS")
def test_naive_bayes_counts_no_pairs_under_a_memory_cap():
    """3 rows of 20,000 one-valued attributes: the pair offsets alone took 3.2 GB (MemoryError under the
    cap); naive Bayes and kDB-0 need none, and kDB is refused before anything is allocated."""
    code = """
import numpy as np
from hdp_plugin.errors import TooLargeError
from hdp_plugin.structure import learn_structure
X, y, card = np.zeros((3, 20000), np.uint8), np.array([0, 1, 0], np.int32), np.ones(20000, np.int64)
for kind, k in (("nb", 0), ("kdb", 0)):
    assert len(learn_structure(X, y, card, 2, kind=kind, k=k).kept) == 20000
try:
    learn_structure(X, y, card, 2, kind="kdb", k=2)
except TooLargeError as e:
    print("refused:", e)
"""
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                       env={**os.environ, "PYTHONPATH": str(ROOT)}, preexec_fn=_capped)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "refused: the pairwise counts of 20000 attributes need" in r.stdout
    assert "fewer attributes" in r.stdout and "structure nb" in r.stdout


@pytest.mark.parametrize("structure", ["kdb", "tan", "eskdb"])
def test_wide_data_is_refused_before_the_pairs_are_built(tmp_path, structure):
    wide = tmp_path / "wide.csv"
    n = 20000
    wide.write_text(",".join(f"a{j}" for j in range(n)) + ",class\n"
                    + "".join(",".join("x" * n) + f",{c}\n" for c in ("yes", "no", "yes")))
    r = cli_capped("train", wide, "-o", tmp_path / "m.hdpbnc", "-s", structure, "-e", "laplace")
    child_error(r, "the pairwise counts of 20000 attributes need", "fewer attributes", "structure nb")


# ------------------------------------------------------------------------------------------
# items 4-6: --max-input-mb and --max-cardinality on the command line
# ------------------------------------------------------------------------------------------
def _gzip_bomb(path: Path, header: bytes, row: bytes, mib: int) -> Path:
    import gzip

    with gzip.open(path, "wb", compresslevel=1) as fh:
        fh.write(header)
        block = row * ((1 << 20) // len(row))
        for _ in range(mib):
            fh.write(block)
    return path


@pytest.mark.parametrize("name", ["bomb.csv.gz", "bomb.arff.gz"])
def test_gzip_input_is_bounded_by_max_input_mb(tmp_path, name):
    """A gzip CSV or ARFF decompressed without limit (4.7 MB -> 3 GiB ran out of memory): now never past
    --max-input-mb, as in the daemon."""
    header = b"a,class\n" if name.endswith("csv.gz") else \
        b"@relation r\n@attribute a numeric\n@attribute class {x,y}\n@data\n"
    bomb = _gzip_bomb(tmp_path / name, header, b"0,x\n1,y\n", 12)
    assert bomb.stat().st_size < 200_000
    r = cli_capped("train", bomb, "-o", tmp_path / "m.hdpbnc", "-s", "nb", "--max-input-mb", "8")
    child_error(r, name, "decompresses to more than 8,388,608 bytes", "--max-input-mb")
    one_line_error(run("train", bomb, "-o", tmp_path / "m.hdpbnc", "-s", "nb", "--max-input-mb", "0"),
                   "--max-input-mb must be > 0")
    assert run("predict", GOLDEN, VOTE, "--max-input-mb", "1").exit_code == 0  # small input: read as before
    one_line_error(run("predict", GOLDEN, VOTE, "--max-input-mb", "0.01"), "vote.arff", "more than the limit",
                   "--max-input-mb")


def test_nominal_cardinality_is_checked_while_the_arff_header_is_parsed(tmp_path):
    """5M declared labels cost 54 s and 1 GB before the daemon's too_large, and the CLI had no limit:
    now the header's value list is split no further than the limit."""
    data = tmp_path / "labels.arff"
    data.write_text("@relation r\n@attribute a {" + ",".join(f"v{i}" for i in range(50_000)) + "}\n"
                    "@attribute class {x,y}\n@data\nv1,x\nv2,y\n")
    one_line_error(run("train", data, "-o", tmp_path / "m.hdpbnc", "-s", "nb"),
                   "labels.arff: line 2: attribute 'a' declares more than 10,000 values", "--max-cardinality")
    one_line_error(run("predict", GOLDEN, data), "labels.arff: line 2", "--max-cardinality")
    assert run("train", data, "-o", tmp_path / "m.hdpbnc", "-s", "nb", "-e", "laplace",
               "--max-cardinality", "50000").exit_code == 0
    csv = tmp_path / "five.csv"
    csv.write_text("a,class\n" + "".join(f"{v},{c}\n" for v, c in zip("pqrstpqrst", "xyxyxyxyxy")))
    one_line_error(run("evaluate", csv, "-s", "nb", "--max-cardinality", "4"),
                   "five.csv: attribute 'a' has 5 values, more than the limit of 4 (--max-cardinality)")
    one_line_error(run("train", csv, "-o", tmp_path / "m.hdpbnc", "--max-cardinality", "1"), "--max-cardinality")
    one_line_error(run("train", tmp_path, "-o", tmp_path / "m.hdpbnc", "--max-cardinality", "5"),
                   "--max-input-mb and --max-cardinality apply to data read whole")


def _zeros_arrow(path: Path, rows: int) -> Path:
    """``rows`` rows of a zero int64 column and a two-valued class, zstd-compressed: kilobytes on disk."""
    import numpy as np
    import pyarrow as pa

    step = 1 << 21
    schema = pa.schema([("a", pa.int64()), ("class", pa.dictionary(pa.int8(), pa.string()))])
    options = pa.ipc.IpcWriteOptions(compression="zstd")
    with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, schema, options=options) as w:
        for start in range(0, rows, step):
            n = min(step, rows - start)
            cls = pa.DictionaryArray.from_arrays(pa.array((np.arange(n) % 2).astype(np.int8)), pa.array(["x", "y"]))
            w.write_batch(pa.record_batch([pa.array(np.zeros(n, np.int64)), cls], schema=schema))
    return path


def test_working_memory_is_bounded_by_max_input_mb(tmp_path):
    """Values that compress to nothing: --max-input-mb bounded the decoded input, not the ~50 bytes a value
    training holds. Now the estimate is refused before the values are decoded into codes."""
    data = _zeros_arrow(tmp_path / "zeros.arrow", 200_000)
    assert data.stat().st_size < 20_000
    r = run("train", data, "-o", tmp_path / "m.hdpbnc", "-s", "nb", "--max-input-mb", "2")
    one_line_error(r, "zeros.arrow: 200,000 rows x 2 columns would need about 18 MiB of working memory",
                   "limit of 8 MiB (4 x --max-input-mb)", "fewer rows or columns")
    r = run("evaluate", data, "-s", "eskdb", "--threads", "1", "--max-input-mb", "4")
    one_line_error(r, "would need about 37 MiB of working memory", "limit of 16 MiB")
    assert not (tmp_path / "m.hdpbnc").exists()


# ------------------------------------------------------------------------------------------
# items 3-6 in the daemon
# ------------------------------------------------------------------------------------------
@pytest.mark.skipif(os.name != "posix", reason="uses POSIX process groups and resource limits")
def test_the_daemon_refuses_what_would_exhaust_its_memory(tmp_path):
    """A daemon under a memory cap: wide data (its ESKDB's pairs), a gzip bomb, 200,000 declared labels and
    values that compress to nothing each fail at once with too_large (not out_of_memory after minutes), and
    the daemon goes on to train the next job."""
    import gzip

    from hdp_plugin.daemon import protocol as P
    from test_daemon_service import Daemon, _cmd, final_names, publish_raw, wait_until

    class CappedDaemon(Daemon):
        def __init__(self, spool, *args, log):
            self.spool, self.log = spool, log
            self._fh = open(log, "ab")
            self.proc = subprocess.Popen(_cmd("run", spool, "--poll", "0.05", *args), stdout=subprocess.DEVNULL,
                                         stderr=self._fh, start_new_session=True, preexec_fn=_capped)

    n = 20000
    wide = gzip.compress(("@relation w\n" + "".join(f"@attribute a{j} {{x,y}}\n" for j in range(n))
                          + "@attribute class {yes,no}\n@data\n"
                          + "".join(",".join("x" * n) + f",{c}\n" for c in ("yes", "no", "yes"))).encode())
    labels = ("@relation r\n@attribute a {" + ",".join(f"v{i}" for i in range(200_000)) + "}\n"
              "@attribute class {x,y}\n@data\nv1,x\nv2,y\n").encode()
    bomb = _gzip_bomb(tmp_path / "bomb.arff.gz", b"@relation r\n@attribute a numeric\n@attribute class {x,y}\n@data\n",
                      b"0,x\n1,y\n", 40)
    zeros = _zeros_arrow(tmp_path / "zeros.arrow", 3_000_000)
    spool = tmp_path / "spool"
    sp = P.Spool(spool).create()
    ok = {"protocol": 1}
    jobs = {"wide": {"data.arff": wide}, "labels": {"data.arff": labels}, "bomb": {"data.arff": bomb},
            "zeros": {"data.arrow": zeros}}
    for name, files in jobs.items():
        publish_raw(spool, name, {P.JOB_FILE: ok, **files})
    d = CappedDaemon(spool, "--workers", "1", "--max-input-mb", "32", "--max-cardinality", "1000",
                     log=tmp_path / "daemon.log")
    try:
        d.wait_ready(1, timeout=120)
        wait_until(lambda: len(final_names(spool, P.FAILED)) == len(jobs), 120, "the jobs to fail")
        publish_raw(spool, "good", {P.JOB_FILE: {**ok, "structure": "kdb", "k": 1, "iterations": 20},
                                    "data.arff": DATA / "weather.nominal.arff"})
        wait_until(lambda: final_names(spool, P.DONE) == ["good"], 60, "a good job after them")
    finally:
        d.close()
    errors = {name: json.loads((sp.job(P.FAILED, name) / P.ERROR_FILE).read_text()) for name in jobs}
    assert {name: e["code"] for name, e in errors.items()} == dict.fromkeys(jobs, "too_large"), errors
    expect = {"wide": "the pairwise counts of 20000 attributes",
              "labels": "data.arff: line 2: attribute 'a' declares more than 1,000 values",
              "bomb": "data.arff: decompresses to more than 33,554,432 bytes",
              "zeros": "data.arrow: 3,000,000 rows x 2 columns would need about"}
    for name, words in expect.items():
        assert words in errors[name]["message"] and errors[name]["phase"] in ("reading", "training"), errors[name]
    assert errors["labels"]["phase"] == "reading" and errors["zeros"]["phase"] == "reading"
