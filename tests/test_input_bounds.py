"""What ``--max-input-mb`` bounds beyond the file itself, and the types of the columns given at prediction.

* an ARFF header's attributes and labels, all together, are counted while the header is parsed and
  refused beyond the working memory (``WORKING_MEMORY_FACTOR x --max-input-mb``): on train, predict and
  in the daemon;
* the pairwise statistics of TAN, kDB, SkDB and ESKDB are counted as they are allocated (the estimate is
  an upper bound of the memory they take) and refused beyond what the working memory leaves beside the
  data's share;
* at prediction a column whose type cannot be the model's attribute's is refused, naming both types.

Inputs that would exhaust the memory run in a child process under an address-space cap, so that a
regression fails the test instead of the machine.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from hdp_plugin.data.arff import parse_header
from hdp_plugin.errors import TooLargeError
from hdp_plugin.structure.counts import count_statistics, pairwise_bytes
from test_limits import _capped, child_error, cli_capped, one_line_error, run

HERE = Path(__file__).parent
ROOT = HERE.parent
DATA = HERE / "data"
VOTE = DATA / "vote.arff"
GOLDEN = HERE / "golden" / "models" / "vote-kdb2-hdp.hdpbnc"
posix_only = pytest.mark.skipif(os.name != "posix", reason="uses RLIMIT_AS")


# ------------------------------------------------------------------------------------------
# an ARFF header's labels
# ------------------------------------------------------------------------------------------
def _labels_header(n_attributes: int, n_labels: int, quote: str = "") -> str:
    """A header of ``n_attributes`` nominal attributes of ``n_labels`` labels each, and a class."""
    labels = ",".join(f"{quote}v{i}{quote}" for i in range(n_labels))
    return ("@relation many\n" + "".join(f"@attribute a{j} {{{labels}}}\n" for j in range(n_attributes))
            + "@attribute class {x,y}\n@data\n")


def _labels_arff(path: Path, n_attributes: int, n_labels: int, quote: str = "") -> Path:
    rows = "".join(",".join(["v1"] * n_attributes) + f",{c}\n" for c in "xy")
    data = (_labels_header(n_attributes, n_labels, quote) + rows).encode()
    path.write_bytes(gzip.compress(data, 1) if path.name.endswith(".gz") else data)
    return path


@posix_only
@pytest.mark.parametrize("quote", ["", "'"], ids=["plain", "quoted"])
def test_a_header_of_too_many_labels_is_refused_while_it_is_parsed(tmp_path, quote):
    """540,000 labels in 60 attributes (each within --max-cardinality) take over 100 MB to read: the
    header is refused at the attribute that crosses the working memory of --max-input-mb 16 (64 MiB), on
    train and on predict, before the model's attributes are even looked for."""
    data = _labels_arff(tmp_path / "many.arff.gz", 60, 9000, quote)
    assert data.stat().st_size < 4 << 20
    words = ("many.arff.gz: line ", "attributes and", "labels through attribute 'a", "of memory to read",
             "more than the limit of 64 MiB (4 x --max-input-mb)")
    child_error(cli_capped("train", data, "-o", tmp_path / "m.hdpbnc", "-s", "nb", "-e", "laplace",
                           "--max-input-mb", "16"), *words)
    child_error(cli_capped("predict", GOLDEN, data, "--max-input-mb", "16"), *words)
    assert not (tmp_path / "m.hdpbnc").exists()


def test_many_attributes_count_against_the_header_too(tmp_path):
    """20,000 numeric attributes of 2 rows: about a kilobyte each to read, where the rows' 48 bytes a value
    came to 2 MB: refused under --max-input-mb 4 (16 MiB), read under the default."""
    n = 20_000
    data = tmp_path / "wide.arff"
    data.write_text("@relation w\n" + "".join(f"@attribute a{j} numeric\n" for j in range(n))
                    + "@attribute class {x,y}\n@data\n" + "".join(",".join("1" * n) + f",{c}\n" for c in "xy"))
    one_line_error(run("train", data, "-o", tmp_path / "m.hdpbnc", "-s", "nb", "-e", "laplace",
                       "--max-input-mb", "4"),
                   "wide.arff: line ", "attributes and 0 labels", "limit of 16 MiB (4 x --max-input-mb)")


def test_the_header_limit_is_counted_as_declared():
    """The count is the same for quoted and unquoted lists, grows with the labels' text, and names the
    line and the limit; lists split without quotes read as the quoted ones do."""
    text = _labels_header(3, 1000)
    assert parse_header(text, "h.arff", max_memory=4 << 20).attributes[0].values[-1] == "v999"
    for quote in ("", "'", '"'):
        with pytest.raises(TooLargeError) as e:
            parse_header(_labels_header(3, 1000, quote), "h.arff", max_memory=300_000, memory_limit_name="NAME")
        assert "h.arff: line 3:" in str(e.value) and "through attribute 'a1'" in str(e.value), str(e.value)
        assert "limit of 293 KiB (NAME)" in str(e.value) and "\n" not in str(e.value)
    lists = {"{ a b , c,}": ("a b", "c"), "{}": (), "{a}% note": ("a",), "{\tx\t,y}": ("x", "y"),
             "{1,2.5,-3}": ("1", "2.5", "-3")}
    for spelled, values in lists.items():
        for memory in (None, 1 << 20):
            header = parse_header(f"@attribute n {spelled}\n@data\n", "h.arff", max_memory=memory)
            assert header.attributes[0].values == values, spelled
    for bad, words in {"{a,,b}": "empty value", "{a,?}": "empty value", "{a} b": "unexpected text",
                       "{a, b": "no closing"}.items():
        with pytest.raises(Exception, match=words):
            parse_header(f"@attribute n {bad}\n@data\n", "h.arff", max_memory=1 << 20)


def test_max_cardinality_is_checked_before_an_unquoted_list_is_split():
    from hdp_plugin.data.arff import parse_header as ph

    with pytest.raises(TooLargeError, match="line 2: attribute 'a0' declares more than 999 values"):
        ph(_labels_header(1, 1000), "h.arff", 999)
    assert len(ph(_labels_header(1, 1000), "h.arff", 1000).attributes[0].values) == 1000


# ------------------------------------------------------------------------------------------
# pairwise statistics within the working memory
# ------------------------------------------------------------------------------------------
def _wide_csv(path: Path, n: int, rows: int = 4) -> Path:
    with open(path, "w") as fh:
        fh.write(",".join(f"c{j}" for j in range(n)) + ",class\n")
        for r in range(rows):
            fh.write(",".join(str((r * 7 + j) % 3) for j in range(n)) + (",x\n" if r % 2 else ",y\n"))
    return path


@posix_only
@pytest.mark.parametrize("structure", ["tan", "eskdb"])
def test_pair_tables_obey_max_input_mb(tmp_path, structure):
    """An 83 KB CSV of 6,000 columns took 1.3-2 GB of pair tables under --max-input-mb 1: now refused
    before they are allocated, naming the file and the limit; 150 columns still train within it."""
    wide = _wide_csv(tmp_path / "wide.csv", 6000)
    assert wide.stat().st_size < 90_000
    child_error(cli_capped("train", wide, "-o", tmp_path / "m.hdpbnc", "-s", structure, "-e", "laplace",
                           "--max-input-mb", "1"),
                "wide.csv: the pairwise counts of 6000 attributes need", "4 x --max-input-mb less the",
                "fewer attributes")
    narrow = _wide_csv(tmp_path / "narrow.csv", 150)
    r = run("train", narrow, "-o", tmp_path / "m.hdpbnc", "-s", structure, "-e", "laplace", "-t", "1",
            "--max-input-mb", "1")
    assert r.exit_code == 0, r.output


_PEAK = """
import sys
import numpy as np
from hdp_plugin.structure import learn_structure
from hdp_plugin.structure.counts import pairwise_bytes

kind, n, c = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
y = np.array([0, 1, 0, 1], np.int32)
learn_structure(np.zeros((4, 50), np.uint8), y, np.ones(50, np.int64), 2, kind=kind, k=2)  # compiled
card = np.full(n, c, np.int64)
X = (np.arange(4 * n).reshape(4, n) % c).astype(np.uint8)


def peak():  # this process's own high-water mark (ru_maxrss keeps the parent's across exec)
    with open("/proc/self/status") as fh:
        return next(int(line.split()[1]) * 1024 for line in fh if line.startswith("VmHWM:"))


before = peak()
learn_structure(X, y, card, 2, kind=kind, k=2)
print(peak() - before, pairwise_bytes(card, 2))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads the peak memory in /proc")
@pytest.mark.parametrize("kind, n, values", [("tan", 3000, 1), ("kdb", 2000, 2)])
def test_the_pair_estimate_bounds_the_memory_structure_learning_takes(kind, n, values):
    """The peak resident memory that learning a TAN or a kDB adds (in a fresh process) is at most
    pairwise_bytes: the pair offsets are laid out with no other n x n array."""
    r = subprocess.run([sys.executable, "-c", _PEAK, kind, str(n), str(values)], capture_output=True, text=True,
                       timeout=300, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert r.returncode == 0, r.stderr[-3000:]
    took, estimate = map(int, r.stdout.split())
    assert estimate / 2 < took <= estimate, (took, estimate)


def test_pair_tables_alive_at_once_share_the_bound():
    """Each set of pairwise statistics is reserved before it is allocated and given back when let go:
    the row parts of one count fall back to one part when two do not fit (the same counts), and a second
    set alive beside the first is refused."""
    from hdp_plugin.runtime import memory as _memory

    rng = np.random.default_rng(1)
    card = np.full(40, 3, np.int64)
    X = rng.integers(0, 3, (200_000, 40)).astype(np.uint8)
    y = rng.integers(0, 2, 200_000).astype(np.int32)
    one = pairwise_bytes(card, 2)
    whole = count_statistics(X, y, card, 2)
    with _memory.bounded(one + one // 2, "the test's bound"):
        parts = count_statistics(X, y, card, 2, n_jobs=2)
        assert np.array_equal(parts.n_xxy, whole.n_xxy)
        with pytest.raises(TooLargeError, match=r"the pairwise counts of 40 attributes .*the test's bound"):
            count_statistics(X[:10], y[:10], card, 2)
        del parts
        kept = count_statistics(X[:10], y[:10], card, 2)
        assert _memory.available()[0] == one // 2
        del kept
        assert _memory.available()[0] == one + one // 2
    assert _memory.available() is None


# ------------------------------------------------------------------------------------------
# both in the daemon
# ------------------------------------------------------------------------------------------
@pytest.mark.skipif(os.name != "posix", reason="uses POSIX process groups and resource limits")
def test_the_daemon_refuses_a_header_of_too_many_labels_and_pair_tables_beyond_its_limit(tmp_path):
    """A daemon under a memory cap with --max-input-mb 16: the labels and the pairs each fail at once with
    too_large, and the daemon goes on to train the next job."""
    from hdp_plugin.daemon import protocol as P
    from test_daemon_service import Daemon, _cmd, final_names, publish_raw, wait_until

    class CappedDaemon(Daemon):
        def __init__(self, spool, *args, log):
            self.spool, self.log = spool, log
            self._fh = open(log, "ab")
            self.proc = subprocess.Popen(_cmd("run", spool, "--poll", "0.05", *args), stdout=subprocess.DEVNULL,
                                         stderr=self._fh, start_new_session=True, preexec_fn=_capped)

    import pyarrow as pa
    import pyarrow.csv as pa_csv

    labels = _labels_arff(tmp_path / "many.arff", 60, 9000).read_bytes()
    wide = tmp_path / "wide.arrow"
    table = pa_csv.read_csv(_wide_csv(tmp_path / "wide.csv", 6000))
    with pa.OSFile(str(wide), "wb") as sink, pa.ipc.new_file(sink, table.schema) as w:
        w.write_table(table)
    spool = tmp_path / "spool"
    sp = P.Spool(spool).create()
    ok = {"protocol": 1, "estimator": "laplace"}
    jobs = {"labels": {P.JOB_FILE: ok, "data.arff": gzip.compress(labels, 1)},
            "pairs": {P.JOB_FILE: {**ok, "structure": "tan"}, "data.arrow": wide}}
    for name, files in jobs.items():
        publish_raw(spool, name, files)
    d = CappedDaemon(spool, "--workers", "1", "--max-input-mb", "16", log=tmp_path / "daemon.log")
    try:
        d.wait_ready(1, timeout=120)
        wait_until(lambda: len(final_names(spool, P.FAILED)) + len(final_names(spool, P.DONE)) == len(jobs), 120,
                   "the jobs to end")
        publish_raw(spool, "good", {P.JOB_FILE: {**ok, "structure": "kdb", "k": 1},
                                    "data.arff": DATA / "weather.nominal.arff"})
        wait_until(lambda: "good" in final_names(spool, P.DONE), 60, "a good job after them")
    finally:
        d.close()
    assert final_names(spool, P.FAILED) == sorted(jobs)
    errors = {name: json.loads((sp.job(P.FAILED, name) / P.ERROR_FILE).read_text()) for name in jobs}
    assert {name: e["code"] for name, e in errors.items()} == dict.fromkeys(jobs, "too_large"), errors
    assert errors["labels"]["phase"] == "reading"
    assert "data.arff: line " in errors["labels"]["message"]
    assert "limit of 64 MiB (4 x --max-input-mb)" in errors["labels"]["message"]
    assert "data.arrow: the pairwise counts of 6000 attributes" in errors["pairs"]["message"]
    assert "4 x --max-input-mb less the" in errors["pairs"]["message"]


# ------------------------------------------------------------------------------------------
# the types of the columns given at prediction
# ------------------------------------------------------------------------------------------
IRIS = DATA / "iris.arff"


def _iris_table(first):
    """Iris as a pyarrow table whose first attribute (sepallength, numeric) is the array ``first(values)``."""
    import pyarrow as pa

    from hdp_plugin import read_dataset

    ds = read_dataset(IRIS)
    cols = {a.name: pa.array(ds.numeric[:, k]) for k, a in enumerate(ds.attributes)}
    cols["sepallength"] = first(ds.numeric[:, 0])
    cols["class"] = pa.array([ds.class_values[c] for c in ds.y])
    return pa.table(cols)


def _columns_of_other_types():
    import pyarrow as pa

    return {
        "date": (lambda v: pa.array((v * 1000).astype("int32")).cast(pa.date32()), "dates or timestamps"),
        "timestamp": (lambda v: pa.array((v * 1000).astype("int64")).cast(pa.timestamp("ms")), "dates or timestamps"),
        "duration": (lambda v: pa.array((v * 1000).astype("int64")).cast(pa.duration("ms")), "durations"),
        "text": (lambda v: pa.array([f"x{x}" for x in v]), "labels (text)"),
        "boolean": (lambda v: pa.array(v > 5.8), "labels (text)"),
    }


@pytest.mark.parametrize("kind", ["date", "timestamp", "duration", "text", "boolean"])
def test_a_column_of_another_type_than_the_model_s_attribute_is_refused(tmp_path, kind):
    """Dates, timestamps, durations, text and booleans given for iris' numeric sepallength changed 95 of 150
    predictions with no warning: now one line naming the column and both types, on the CLI and the API."""
    import pyarrow.parquet as pq

    from hdp_plugin import BayesNetClassifier, read_dataset
    from hdp_plugin.errors import DataError

    model = tmp_path / "iris.hdpbnc"
    assert run("train", IRIS, "-o", model, "-s", "nb", "-e", "laplace").exit_code == 0
    first, holds = _columns_of_other_types()[kind]
    table = _iris_table(first)
    data = tmp_path / f"iris-{kind}.parquet"
    pq.write_table(table, data)
    one_line_error(run("predict", model, data, "-o", tmp_path / "p.csv"),
                   f"iris-{kind}.parquet: column 'sepallength' holds {holds}, but the model's attribute "
                   "'sepallength' takes numbers")
    assert not (tmp_path / "p.csv").exists()
    clf = BayesNetClassifier(structure="nb", estimator="laplace").fit(read_dataset(IRIS))
    with pytest.raises(DataError, match=re.escape(f"column 'sepallength' holds {holds}")):
        clf.predict(table.drop_columns(["class"]).to_pandas())


def test_columns_that_can_be_read_as_the_attribute_still_are(tmp_path):
    """Numbers written as text, numbers for labels that are numbers, and a column with no value at all are
    taken as before; numbers for labels that are not are refused."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    model = tmp_path / "iris.hdpbnc"
    assert run("train", IRIS, "-o", model, "-s", "nb", "-e", "laplace").exit_code == 0
    plain = tmp_path / "plain.parquet"
    pq.write_table(_iris_table(lambda v: pa.array(v)), plain)
    expected = run("predict", model, plain)
    assert expected.exit_code == 0
    for name, first in {"text": lambda v: pa.array([f"{x:g}" for x in v]),
                        "nothing": lambda v: pa.nulls(len(v), pa.string())}.items():
        data = tmp_path / f"{name}.parquet"
        pq.write_table(_iris_table(first), data)
        r = run("predict", model, data)
        assert r.exit_code == 0, r.output
        if name == "text":
            assert r.stdout == expected.stdout
    vote = tmp_path / "vote.parquet"  # vote's labels are y and n: numbers cannot be labelled
    from hdp_plugin import read_dataset
    from hdp_plugin.data.arrow import to_arrow

    table = to_arrow(read_dataset(VOTE))
    table = table.set_column(0, table.column_names[0], pa.array(np.arange(table.num_rows, dtype=np.float64)))
    pq.write_table(table, vote)
    one_line_error(run("predict", GOLDEN, vote), f"column '{table.column_names[0]}' holds numbers, but the model's "
                   f"attribute '{table.column_names[0]}' takes labels")


def _dated_arff(path: Path) -> Path:
    rows = [("2024-01-05", 3.0, "a"), ("2023-06-01", 1.0, "b"), ("2024-02-11", 2.5, "a"), ("2022-12-30", 0.5, "b"),
            ("2024-03-15", 2.9, "a"), ("2023-01-20", 1.2, "b"), ("2024-04-02", 3.1, "a"), ("?", 0.7, "b")]
    path.write_text("@relation dated\n@attribute day date 'yyyy-MM-dd'\n@attribute x numeric\n"
                    "@attribute class {a,b}\n@data\n" + "".join(f"{d},{x},{c}\n" for d, x, c in rows * 4))
    return path


def test_a_model_trained_on_dates_takes_dates_and_refuses_numbers(tmp_path):
    """The model records that an attribute was read from dates (its file keeps it; batches read it so too):
    dates and timestamps of the same days predict alike, numbers are refused."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from hdp_plugin import BayesNetClassifier, read_dataset
    from hdp_plugin.data import open_batches
    from hdp_plugin.model import load_model

    data = _dated_arff(tmp_path / "dated.arff")
    model = tmp_path / "dated.hdpbnc"
    assert run("train", data, "-o", model, "-s", "nb", "-e", "laplace").exit_code == 0
    assert [a.temporal for a in load_model(model).attributes_] == ["datetime", None]
    streamed = BayesNetClassifier(structure="nb", estimator="laplace").fit(open_batches(data, batch_rows=5))
    assert [a.temporal for a in streamed.attributes_] == ["datetime", None]
    assert streamed.attributes_ == load_model(model).attributes_
    by_arff = run("predict", model, data)
    assert by_arff.exit_code == 0, by_arff.output
    ds = read_dataset(data)
    days = ds.numeric[:, 0]
    stamps = pa.array(np.where(np.isnan(days), 0, days).astype("int64"), mask=np.isnan(days)).cast(pa.timestamp("ms"))
    table = pa.table({"day": stamps, "x": pa.array(ds.numeric[:, 1]), "class": [ds.class_values[c] for c in ds.y]})
    pq.write_table(table, tmp_path / "stamps.parquet")
    assert run("predict", model, tmp_path / "stamps.parquet").stdout == by_arff.stdout
    pq.write_table(table.set_column(0, "day", pa.array(days)), tmp_path / "numbers.parquet")
    one_line_error(run("predict", model, tmp_path / "numbers.parquet"),
                   "column 'day' holds numbers, but the model's attribute 'day' takes dates or timestamps")


@pytest.mark.parametrize("temporal", ["fortnight", 3, "datetime on a nominal"])
def test_a_model_file_with_a_bad_temporal_is_refused(tmp_path, temporal):
    """The record of dates is checked as the rest of the model file is (the Weka wrapper checks it alike)."""
    import copy

    from test_modelfile_crafted import write_crafted

    from hdp_plugin.model import modelfile as MF

    doc, training, batches = MF.read_model_file(GOLDEN)
    doc = copy.deepcopy(doc)
    doc["members"][0]["attributes"][0]["temporal"] = "datetime" if temporal == "datetime on a nominal" else temporal
    model = write_crafted(tmp_path / "m.hdpbnc", doc, training, [dict(b) for b in batches])
    one_line_error(run("predict", model, VOTE), "m.hdpbnc", "temporal is not a string" if temporal == 3 else
                   "bad temporal")
