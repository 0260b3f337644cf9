"""The edges of reading CSV (and other tabular) files: the separator, a class that names rows, a class
that is not the last column, and the working memory of a CSV file bounded before it is parsed."""

from __future__ import annotations

import gzip
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.csv as pa_csv
import pytest
from typer.testing import CliRunner

from hdp_plugin import BayesNetClassifier, cli, read_dataset
from hdp_plugin.data import to_arrow
from hdp_plugin.data.stream import open_batches
from hdp_plugin.data.arrow import csv_table
from hdp_plugin.errors import DataError, ParameterError, TooLargeError
from hdp_plugin.model import load_model

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DIABETES = HERE / "data" / "diabetes.arff"

runner = CliRunner()


def run(*args):
    return runner.invoke(cli.app, [str(a) for a in args], catch_exceptions=False)


def _error_line(result) -> str:
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: ")
    return lines[0]


@pytest.fixture(scope="module")
def diabetes_table():
    return to_arrow(read_dataset(DIABETES))


def _write(table, path: Path, sep: str) -> Path:
    pa_csv.write_csv(table, path, pa_csv.WriteOptions(delimiter=sep, quoting_style="none"))
    return path


# ------------------------------------------------------------------------------------------
# the separator
# ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("sep", [",", ";", "\t", "|"])
def test_the_separator_is_told_from_the_first_lines(tmp_path, diabetes_table, sep):
    ds = read_dataset(_write(diabetes_table, tmp_path / "d.csv", sep))
    assert ds.n_attributes == 8 and ds.class_values == ("tested_negative", "tested_positive")
    assert ds.equals(read_dataset(DIABETES))


def test_a_gzip_csv_with_semicolons_is_read_with_them(tmp_path, diabetes_table):
    text = _write(diabetes_table, tmp_path / "d.csv", ";").read_bytes()
    gz = tmp_path / "d.csv.gz"
    gz.write_bytes(gzip.compress(text))
    assert read_dataset(gz).n_attributes == 8
    assert sum(t.num_rows for t in open_batches(gz).batches()) == 768


def test_a_semicolon_file_trains_on_its_attributes_from_the_command_line(tmp_path, diabetes_table):
    data = _write(diabetes_table, tmp_path / "semi.csv", ";")
    model = tmp_path / "m.hdpbnc"
    result = run("train", data, "-o", model, "-s", "nb", "-e", "laplace")
    assert result.exit_code == 0, result.output
    clf = load_model(model)
    assert len(clf.attributes_) == 8 and list(clf.classes_) == ["tested_negative", "tested_positive"]
    result = run("predict", model, data)
    assert result.exit_code == 0 and len(result.stdout.splitlines()) == 769
    result = run("train", data, "-o", tmp_path / "s.hdpbnc", "-s", "nb", "-e", "laplace", "--stream")
    assert result.exit_code == 0, result.output
    assert len(load_model(tmp_path / "s.hdpbnc").attributes_) == 8


def test_a_separator_that_leaves_one_column_is_refused(tmp_path, diabetes_table):
    data = _write(diabetes_table, tmp_path / "semi.csv", ";")
    result = run("train", data, "-o", tmp_path / "m.hdpbnc", "--separator", ",")
    assert result.exit_code == 2
    line = _error_line(result)
    assert "semi.csv" in line and "separator ','" in line and "';' splits it into 9" in line
    assert "--separator ';'" in line
    assert not (tmp_path / "m.hdpbnc").exists()
    with pytest.raises(DataError, match="read with the separator ';' its header is one column, but ','"):
        read_dataset(_write(diabetes_table, tmp_path / "comma.csv", ","), separator=";")
    assert read_dataset(data, separator=";").n_attributes == 8
    assert read_dataset(_write(diabetes_table, tmp_path / "tab.csv", "\t"), separator="tab").n_attributes == 8


def test_a_file_two_separators_split_alike_is_refused(tmp_path):
    p = tmp_path / "both.csv"
    p.write_text("a,b|c,class\n" + "".join(f"{i},x|y,{'pn'[i % 2]}\n" for i in range(30)))
    with pytest.raises(DataError, match=r"both.csv: cannot tell its separator: ',' into 3 and '\|' into 2 columns"):
        read_dataset(p)
    assert read_dataset(p, separator=",").n_attributes == 2
    result = run("evaluate", p, "-s", "nb")
    assert result.exit_code == 2 and "--separator" in _error_line(result)


def test_the_separator_option_is_checked(tmp_path):
    result = run("train", DIABETES, "-o", tmp_path / "m.hdpbnc", "--separator", ";")
    assert result.exit_code == 2 and "--separator applies to CSV files" in _error_line(result)
    result = run("train", DIABETES, "-o", tmp_path / "m.hdpbnc", "--separator", ";;")
    assert result.exit_code == 2 and "--separator must be one character" in _error_line(result)
    with pytest.raises(ParameterError, match="CSV files only"):
        read_dataset(DIABETES, separator=";")


def test_daemon_submit_converts_a_semicolon_file_with_its_columns(tmp_path, diabetes_table):
    from hdp_plugin.cli import daemon as commands

    data = _write(diabetes_table, tmp_path / "semi.csv", ";")
    spool = tmp_path / "spool"
    result = CliRunner().invoke(commands.app, ["submit", str(spool), str(data), "--name", "j1", "-q"])
    assert result.exit_code == 0, result.output
    table = pa.ipc.open_file(str(spool / "new" / "j1" / "data.arrow")).read_all()
    assert table.num_columns == 9 and table.num_rows == 768
    result = CliRunner().invoke(commands.app, ["submit", str(spool), str(data), "--name", "j2", "--separator", ","])
    assert result.exit_code == 2 and "';' splits it into 9" in result.stderr
    assert not (spool / "new" / "j2").exists()


# ------------------------------------------------------------------------------------------
# a class with a different value on every row
# ------------------------------------------------------------------------------------------
def test_a_class_with_a_label_per_row_is_refused_in_every_format(tmp_path):
    rng = np.random.default_rng(0)
    n = 40
    table = pa.table({"x": rng.normal(size=n), "y": pa.array(rng.choice(["a", "b"], size=n)),
                      "name": pa.array([f"row{i}" for i in range(n)])})
    csv = tmp_path / "d.csv"
    pa_csv.write_csv(table, csv)
    arff = tmp_path / "d.arff"
    arff.write_text("@relation d\n@attribute x numeric\n@attribute name string\n@data\n"
                    + "".join(f"{v},row{i}\n" for i, v in enumerate(rng.normal(size=n))))
    for path in (csv, arff):
        with pytest.raises(DataError, match=r"^class 'name' in .* has a different value on every one of its 40 rows"):
            BayesNetClassifier(structure="nb").fit(read_dataset(path))
    result = run("train", csv, "-o", tmp_path / "m.hdpbnc", "-s", "nb")
    assert result.exit_code == 2 and "--class" in _error_line(result)
    with pytest.raises(DataError, match="different value on every one"):
        BayesNetClassifier(structure="nb").fit(rng.normal(size=(n, 2)), np.arange(n))
    result = run("train", csv, "-o", tmp_path / "m.hdpbnc", "-s", "nb", "-e", "laplace", "--class", "y")
    assert result.exit_code == 0, result.output
    # a few rows of different classes are a class
    BayesNetClassifier(structure="nb", estimator="laplace").fit(rng.normal(size=(6, 2)), np.arange(6))


def test_a_streamed_class_with_a_label_per_row_is_refused(tmp_path):
    p = tmp_path / "d.csv"
    p.write_text("x,name\n" + "".join(f"{i % 3},r{i}\n" for i in range(30)))
    with pytest.raises(DataError, match="class 'name' in .* different value on every one of its 30 rows"):
        BayesNetClassifier(structure="nb").fit(open_batches(p))


def test_a_fit_warning_is_printed_once(tmp_path):
    p = tmp_path / "noinfo.csv"
    p.write_text("x,cls\n" + "".join(f"1,{'ab'[i % 2]}\n" for i in range(40)))
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, "-m", "hdp_plugin", "train", str(p), "-o", str(tmp_path / "m.hdpbnc"),
                           "--members", "2", "-e", "laplace"], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("every MI is 0") == 1, done.stderr
    assert "warning: no attribute carries information" in done.stderr


# ------------------------------------------------------------------------------------------
# a class that is not the last column
# ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("suffix", [".csv", ".parquet", ".arrow"])
def test_a_numeric_last_column_suggests_naming_the_class(tmp_path, suffix):
    table = to_arrow(read_dataset(HERE / "data" / "iris.arff"))
    table = table.select([4, 0, 1, 2, 3])  # the class first, as many CSV exports have it
    path = tmp_path / f"iris{suffix}"
    if suffix == ".csv":
        pa_csv.write_csv(table, path)
    elif suffix == ".parquet":
        import pyarrow.parquet as pq

        pq.write_table(table, path)
    else:
        import pyarrow.feather as feather

        feather.write_feather(table, path)
    result = run("train", path, "-o", tmp_path / "m.hdpbnc", "-s", "nb")
    assert result.exit_code == 2
    line = _error_line(result)
    assert "'petalwidth'" in line and "is numeric" in line and "--class NAME" in line and "such as 'class'" in line
    result = run("train", path, "-o", tmp_path / "s.hdpbnc", "-s", "nb", "--stream")
    assert result.exit_code == 2 and "--class NAME" in _error_line(result)
    result = run("train", path, "-o", tmp_path / "m.hdpbnc", "-s", "nb", "-e", "laplace", "--class", "class")
    assert result.exit_code == 0, result.output
    # a numeric class named on purpose: no advice to name it
    with pytest.raises(DataError, match=r"'sepallength' .* is numeric; these classifiers need a nominal class$"):
        read_dataset(path, class_attribute="sepallength")


# ------------------------------------------------------------------------------------------
# the working memory of a CSV file, bounded before its text is parsed
# ------------------------------------------------------------------------------------------
#: a child that runs hdp-bnc with its address space capped at what it holds once imported plus a margin
_CAPPED = r"""
import resource, sys
extra = int(sys.argv[1]) << 20
from hdp_plugin.cli import commands as cli
import hdp_plugin.data.readers, hdp_plugin.daemon.client, pyarrow.csv, pyarrow.ipc  # imported before the cap
from hdp_plugin.model import load_model
if sys.argv[2] == "predict":
    load_model(sys.argv[3])  # the model and its kernels loaded before the cap too
with open("/proc/self/status") as f:
    size = next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmSize:"))
resource.setrlimit(resource.RLIMIT_AS, (size + extra, size + extra))
sys.argv = ["hdp-bnc", *sys.argv[2:]]
cli.main()
"""
#: rows of the gzip CSV: 80 MB of text, which pyarrow decodes into about 300 MB
_ROWS = 20_000_000


@pytest.fixture(scope="module")
def big_csv_gz(tmp_path_factory):
    path = tmp_path_factory.mktemp("big") / "big.csv.gz"
    path.write_bytes(gzip.compress(b"x,cls\n" + b"1,a\n2,b\n" * (_ROWS // 2), 1))
    return path


def test_csv_rows_are_checked_before_the_text_is_parsed(big_csv_gz):
    seen = []

    def check_rows(rows, columns):
        seen.append((rows, columns))
        if rows * columns > 1000:
            raise TooLargeError("too many")

    with pytest.raises(TooLargeError, match="too many"):
        csv_table(big_csv_gz, check_rows=check_rows)
    assert seen[-1] == (_ROWS, 2)
    with pytest.raises(TooLargeError, match=r"about 20,000,000 rows x 2 columns = 40,000,000 values, more than the "
                                            r"limit of 1,000"):
        csv_table(big_csv_gz, max_cells=1000)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="caps the address space through /proc and setrlimit")
@pytest.mark.parametrize("command", ["train", "predict", "daemon submit"])
def test_a_gzip_csv_beyond_the_working_memory_is_refused_before_it_is_decoded(tmp_path, big_csv_gz, command):
    small = tmp_path / "small.csv"
    small.write_text("x,cls\n" + "".join(f"{i % 5},{'ab'[i % 2]}\n" for i in range(40)))
    model = tmp_path / "m.hdpbnc"
    args = {"train": ["train", big_csv_gz, "-o", model, "-s", "nb"],
            "predict": ["predict", model, big_csv_gz],
            "daemon submit": ["daemon", "submit", tmp_path / "spool", big_csv_gz, "--name", "big"]}[command]
    if command == "predict":
        assert run("train", small, "-o", model, "-s", "nb", "-e", "laplace").exit_code == 0
    env = dict(os.environ, PYTHONPATH=str(ROOT), MALLOC_ARENA_MAX="2")
    # 100 MiB lets the 80 MB of text decompress, and bounds the working memory at 400 MiB: the decoded
    # rows would need far more, and the child has 250 MB to spare, less than decoding them takes
    done = subprocess.run([sys.executable, "-c", _CAPPED, "250", *map(str, args), "--max-input-mb", "100"],
                          capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), done.stderr
    what = "predict" if command == "predict" else "train on"
    assert "big.csv.gz: 20,000,000 rows x 2 columns would need about" in lines[0]
    assert f"of working memory to {what}, more than the limit of 400 MiB" in lines[0]
    assert not (tmp_path / "spool" / "new" / "big").exists()


# ------------------------------------------------------------------------------------------
# row identifiers and dates
# ------------------------------------------------------------------------------------------
def _identified(path: Path, n: int = 60, seed: int = 1) -> Path:
    """A CSV with a text identifier, a row number, a date, a useful number and the class."""
    rng = np.random.default_rng(seed)
    x = rng.random(n)
    rows = [f"u{7 * i},{i + 1},2024-01-{i % 28 + 1:02d},{v:.3f},{'ab'[int(v < 0.5)]}" for i, v in enumerate(x)]
    path.write_text("id,rowno,when,x,cls\n" + "\n".join(rows) + "\n")
    return path


def test_identifiers_are_left_out_with_a_warning_naming_each(tmp_path):
    data = _identified(tmp_path / "d.csv")
    with pytest.warns(UserWarning) as caught:
        clf = BayesNetClassifier(structure="nb", estimator="laplace").fit(read_dataset(data))
    texts = [str(w.message) for w in caught]
    assert sum("'id'" in t and "row identifier (a different value on every row)" in t for t in texts) == 1
    assert sum("'rowno'" in t and "row identifier (integers numbering the rows)" in t for t in texts) == 1
    assert sum("'when'" in t and "holds dates: it is read as a number" in t for t in texts) == 1
    assert [a.name for a in clf.attributes_] == ["when", "x"] and clf.left_out_ == ["id", "rowno"]
    assert clf.n_features_in_ == 4
    assert sum("left out of the model" in w for w in clf.fit_info_["warnings"]) == 2
    kept = BayesNetClassifier(structure="nb", estimator="laplace", keep_columns=["rowno"]).fit(read_dataset(data))
    assert [a.name for a in kept.attributes_] == ["rowno", "when", "x"] and kept.left_out_ == ["id"]
    with pytest.raises(ParameterError, match="keep_columns names 'idd', which is not an attribute"):
        BayesNetClassifier(structure="nb", keep_columns=["idd"]).fit(read_dataset(data))
    with pytest.raises(ParameterError, match=r"^keep_columns must be None or a list of column names; got 'id'$"):
        BayesNetClassifier(structure="nb", keep_columns="id").fit(read_dataset(data))


def test_columns_that_do_not_name_rows_are_kept(tmp_path):
    rng = np.random.default_rng(2)
    n = 60
    y = rng.integers(0, 2, n)
    X = np.column_stack([rng.integers(0, 10, n),                       # repeats: a code
                         rng.choice(np.arange(1000, 100000), n, replace=False),  # all different, sparse: a number
                         rng.normal(size=n)])                          # not integers
    with __import__("warnings").catch_warnings():
        __import__("warnings").simplefilter("error")
        clf = BayesNetClassifier(structure="nb", estimator="laplace").fit(X, y)
    assert clf.left_out_ == [] and len(clf.attributes_) == 3
    few = BayesNetClassifier(structure="nb", estimator="laplace").fit(np.column_stack([np.arange(10), y[:10]]), y[:10])
    assert few.left_out_ == []  # too few rows to judge


def test_a_model_without_its_identifiers_predicts_data_that_still_has_them(tmp_path):
    from hdp_plugin.model import save_model

    rng = np.random.default_rng(3)
    n = 80
    x = rng.normal(size=n)
    y = np.where(x > 0, "p", "n")
    X = np.column_stack([np.arange(n) + 100, x, rng.integers(0, 3, n)])  # a row number first
    with pytest.warns(UserWarning, match="'x0' in <array> looks like a row identifier"):
        clf = BayesNetClassifier(structure="nb", estimator="laplace").fit(X, y)
    assert clf.left_out_ == ["x0"] and [a.name for a in clf.attributes_] == ["x1", "x2"]
    proba = clf.predict_proba(X)
    save_model(clf, tmp_path / "m.hdpbnc")
    loaded = load_model(tmp_path / "m.hdpbnc")
    assert loaded.left_out_ == ["x0"] and loaded.n_features_in_ == 3
    np.testing.assert_array_equal(loaded.predict_proba(X), proba)
    with pytest.raises(DataError, match="X has 2 features, but BayesNetClassifier is expecting 3"):
        loaded.predict(X[:, 1:])
    data = _identified(tmp_path / "d.csv")
    model = tmp_path / "csv.hdpbnc"
    result = run("train", data, "-o", model, "-s", "nb", "-e", "laplace")
    assert result.exit_code == 0, result.output
    assert "left out       id, rowno (row identifiers)" in run("info", model).stdout
    contents = __import__("hdp_plugin.model.modelfile", fromlist=["read_model"]).read_model(model)
    assert contents.doc["left_out"] == [{"name": "id", "index": 0}, {"name": "rowno", "index": 1}]
    result = run("predict", model, data)
    assert result.exit_code == 0 and len(result.stdout.splitlines()) == 61
    without = tmp_path / "without.csv"
    pa_csv.write_csv(pa_csv.read_csv(data).drop_columns(["id", "rowno"]), without)
    assert run("predict", model, without).stdout == result.stdout


def test_the_command_line_warns_once_per_column_and_keeps_what_it_is_told(tmp_path):
    data = _identified(tmp_path / "d.csv")
    result = run("train", data, "-o", tmp_path / "m.hdpbnc", "-s", "nb", "-e", "laplace", "-q")
    assert result.exit_code == 0, result.output
    warned = [line for line in result.stderr.splitlines() if line.startswith("warning: ")]
    assert len(warned) == 3 and len(result.stderr.splitlines()) == 3, result.stderr
    assert "warning: column 'id' in" in warned[1] and "--keep-columns id" in warned[1]
    assert "warning: column 'rowno' in" in warned[2]
    assert "warning: column 'when' in" in warned[0] and "milliseconds since 1970-01-01" in warned[0]
    result = run("train", data, "-o", tmp_path / "k.hdpbnc", "-s", "nb", "-e", "laplace", "--keep-columns", "id,rowno")
    assert result.exit_code == 0 and "row identifier" not in result.stderr
    assert [a.name for a in load_model(tmp_path / "k.hdpbnc").attributes_] == ["id", "rowno", "when", "x"]
    result = run("train", data, "-o", tmp_path / "k.hdpbnc", "-s", "nb", "--keep-columns", "idd")
    assert result.exit_code == 2 and "--keep-columns names 'idd'" in _error_line(result)
    result = run("evaluate", data, "-s", "nb", "-e", "laplace", "--csv")
    assert result.exit_code == 0, result.output
    assert result.stderr.count("'rowno' in") == 1 and result.stderr.count("'id' in") == 1, result.stderr


def test_a_job_names_the_columns_to_keep(tmp_path):
    from hdp_plugin.cli import daemon as commands
    from hdp_plugin.daemon import protocol as P

    assert P.validate_job({"protocol": 1, "keep_columns": ["id"]})["keep_columns"] == ["id"]
    with pytest.raises(Exception, match="keep_columns must be a JSON array or null"):
        P.validate_job({"protocol": 1, "keep_columns": "id"})
    with pytest.raises(Exception, match="keep_columns must be None or a list of column names"):
        P.validate_job({"protocol": 1, "keep_columns": [1]})
    data = _identified(tmp_path / "d.csv")
    result = CliRunner().invoke(commands.app, ["submit", str(tmp_path / "spool"), str(data), "--name", "j",
                                               "--keep-columns", "id", "-q"])
    assert result.exit_code == 0, result.output
    job = P.read_json(tmp_path / "spool" / "new" / "j" / "job.json")
    assert job["keep_columns"] == ["id"]


def test_iso_timestamps_are_read_as_numbers_with_a_warning(tmp_path):
    p = tmp_path / "t.csv"
    p.write_text("at,x,cls\n" + "".join(f"2024-03-{i % 28 + 1:02d}T10:{i % 60:02d}:00,{i % 4},{'ab'[i % 2]}\n"
                                         for i in range(30)))
    with pytest.warns(UserWarning, match=r"column 'at' in .*t.csv holds dates: it is read as a number"):
        ds = read_dataset(p)
    assert ds.attributes[0].numeric


def test_info_lists_a_few_class_labels_and_counts_the_rest(tmp_path):
    from hdp_plugin.model import save_model

    rng = np.random.default_rng(4)
    y = np.repeat([f"c{i:02d}" for i in range(30)], 2)
    clf = BayesNetClassifier(structure="nb", estimator="laplace").fit(rng.integers(0, 3, (60, 2)), y)
    save_model(clf, tmp_path / "m.hdpbnc")
    text = run("info", tmp_path / "m.hdpbnc").stdout.replace("\n" + " " * 15, " ")  # fields wrap at 80 columns
    line = next(t for t in text.splitlines() if t.startswith("class "))
    assert line.endswith("(c00, c01, c02, c03, c04, c05, c06, c07, c08, c09, c10, c11, c12, c13, c14, c15, c16, c17, "
                         "c18, c19, ... (10 more))")


# ------------------------------------------------------------------------------------------
# the decimal comma
# ------------------------------------------------------------------------------------------
def _decimal_comma(table, path: Path, sep: str = ";") -> Path:
    """``table`` as a CSV file whose numbers have a decimal comma (the numbers' points made commas)."""
    text = _write(table, path, sep).read_text()
    header, body = text.split("\n", 1)
    path.write_text(header + "\n" + body.replace(".", ","))
    return path


def test_a_decimal_comma_file_reads_as_its_decimal_point_twin(tmp_path, diabetes_table):
    comma = _decimal_comma(diabetes_table, tmp_path / "comma.csv")
    assert "33,6;" in comma.read_text()
    point = _write(diabetes_table, tmp_path / "point.csv", ";")
    ds = read_dataset(comma)
    assert all(a.numeric for a in ds.attributes)
    assert ds.equals(read_dataset(point)) and ds.equals(read_dataset(comma, decimal=","))
    gz = tmp_path / "comma.csv.gz"
    gz.write_bytes(gzip.compress(comma.read_bytes()))
    assert read_dataset(gz).equals(ds)
    batches = list(open_batches(comma, batch_rows=500).batches())
    assert sum(t.num_rows for t in batches) == 768
    assert all(pa.types.is_floating(t.schema.field("mass").type) for t in batches)
    # the command line: the same model as from the decimal points, and the same predictions
    for name, data in (("comma", comma), ("point", point)):
        result = run("train", data, "-o", tmp_path / f"{name}.hdpbnc", "-s", "nb", "-e", "laplace")
        assert result.exit_code == 0, result.output
    a, b = load_model(tmp_path / "comma.hdpbnc"), load_model(tmp_path / "point.hdpbnc")
    assert all(x.numeric for x in a.attributes_) and a.attributes_ == b.attributes_
    assert np.array_equal(a.predict_proba(ds), b.predict_proba(ds))
    assert run("predict", tmp_path / "comma.hdpbnc", comma).stdout == run("predict", tmp_path / "point.hdpbnc",
                                                                           point).stdout
    result = run("train", comma, "-o", tmp_path / "s.hdpbnc", "-s", "nb", "-e", "laplace", "--stream")
    assert result.exit_code == 0, result.output
    assert load_model(tmp_path / "s.hdpbnc").attributes_ == b.attributes_


def test_the_decimal_option_reads_as_told(tmp_path, diabetes_table):
    comma = _decimal_comma(diabetes_table, tmp_path / "comma.csv")
    as_text = read_dataset(comma, decimal=".")  # told: a decimal point, and 33,6 is text
    assert not as_text.attributes[5].numeric and as_text.attributes[0].numeric
    result = run("train", comma, "-o", tmp_path / "t.hdpbnc", "-s", "nb", "-e", "laplace", "--decimal", ".")
    assert result.exit_code == 0, result.output
    assert not load_model(tmp_path / "t.hdpbnc").attributes_[5].numeric
    tab = _decimal_comma(diabetes_table, tmp_path / "tab.csv", "\t")
    assert read_dataset(tab, decimal="comma").equals(read_dataset(comma))
    result = run("evaluate", tab, "-s", "nb", "-e", "laplace", "--decimal", ",", "--json")
    assert result.exit_code == 0, result.output
    result = run("train", comma, "-o", tmp_path / "m.hdpbnc", "--decimal", ";")
    assert result.exit_code == 2 and "--decimal must be '.' or ','" in _error_line(result)
    result = run("predict", tmp_path / "t.hdpbnc", DIABETES, "--decimal", ",")
    assert result.exit_code == 2 and "--decimal applies to CSV files" in _error_line(result)
    with pytest.raises(ParameterError, match="a decimal applies to CSV files only"):
        read_dataset(DIABETES, decimal=",")
    with pytest.raises(ParameterError, match="decimal must be"):
        open_batches(comma, decimal="x")


def test_daemon_submit_converts_a_decimal_comma_file_to_numbers(tmp_path, diabetes_table):
    from hdp_plugin.cli import daemon as commands

    comma = _decimal_comma(diabetes_table, tmp_path / "comma.csv")
    spool = tmp_path / "spool"
    for name, more in (("j1", []), ("j2", ["--decimal", "."])):
        result = CliRunner().invoke(commands.app, ["submit", str(spool), str(comma), "--name", name, "-q", *more])
        assert result.exit_code == 0, result.output
    numbers = pa.ipc.open_file(str(spool / "new" / "j1" / "data.arrow")).read_all()
    assert pa.types.is_floating(numbers.schema.field("mass").type)
    text = pa.ipc.open_file(str(spool / "new" / "j2" / "data.arrow")).read_all()
    assert not pa.types.is_floating(text.schema.field("mass").type)


@pytest.mark.parametrize("text, given, sep, match", [
    # a ';' file: numbers with a decimal comma and text in one column
    ("a;b;class\n1,5;x;p\n2,5;y;q\n3.5;z;q\n", None, None, r"column 'a' holds numbers with a decimal comma \('1,5'\) "
     r"and text \('3.5'\)"),
    # a ';' file that writes numbers both ways
    ("a;b;class\n1,5;1.5;p\n2,5;2.5;q\n3,5;3;q\n", None, None, r"column 'b' writes numbers with a decimal point "
     r"\('1.5'\) and column 'a' with a decimal comma"),
    # another separator: a decimal comma, or a comma between thousands?
    ("a\tb\tclass\n1,5\tx\tp\n2,5\ty\tq\n", None, None, r"column 'a' holds numbers written with a comma \('1,5'\): "
     r"give --decimal ,"),
    ('a,b,class\n"1,234",x,p\n"2,345",y,q\n', None, None, r"column 'a' holds numbers written with a comma"),
    # a decimal comma given, and numbers with a decimal point
    ("a;b;class\n1.5;x;p\n2.5;y;q\n", ",", None, r"column 'a' holds numbers with a decimal point \('1.5'\), which "
     r"read as text with --decimal ,"),
])
def test_a_column_whose_numbers_cannot_be_told_is_refused_naming_it(tmp_path, text, given, sep, match):
    p = tmp_path / "d.csv"
    p.write_text(text)
    told = {} if given is None else {"decimal": given}
    with pytest.raises(DataError, match=match):
        read_dataset(p, separator=sep, **told)
    with pytest.raises(DataError, match=match):
        list(open_batches(p, separator=sep, **told).batches())
    result = run("train", p, "-o", tmp_path / "m.hdpbnc", "-s", "nb", *(["--decimal", given] if given else []))
    assert result.exit_code == 2 and "d.csv: column" in _error_line(result)
    assert not (tmp_path / "m.hdpbnc").exists()


def test_text_with_a_few_comma_numbers_stays_text(tmp_path):
    p = tmp_path / "d.csv"
    p.write_text("a;b;class\n" + "".join(f"{v};{i};{'pq'[i % 2]}\n" for i, v in
                                         enumerate(["1,5", "red", "blue", "green", "red", "blue"])))
    ds = read_dataset(p)
    assert not ds.attributes[0].numeric and "1,5" in ds.attributes[0].values


# ------------------------------------------------------------------------------------------
# a header or a row longer than pyarrow's block
# ------------------------------------------------------------------------------------------
def test_a_header_over_a_mebibyte_is_read(tmp_path):
    n = 2200
    names = [f"{'attribute_' * 50}{i:05d}" for i in range(n)]  # 505 characters each: a header of 1.1 MB
    rows = ["".join(f"{(r * 7 + j) % 5}," for j in range(n)) + "ab"[r % 2] for r in range(6)]
    p = tmp_path / "wide.csv"
    p.write_text(",".join(names) + ",class\n" + "\n".join(rows) + "\n")
    assert p.stat().st_size > 1 << 20
    ds = read_dataset(p)
    assert ds.n_attributes == n and ds.n_rows == 6 and ds.attributes[-1].name == names[-1]
    assert ds.class_values == ("a", "b")
    gz = tmp_path / "wide.csv.gz"
    gz.write_bytes(gzip.compress(p.read_bytes()))
    assert read_dataset(gz).equals(ds)
    batches = list(open_batches(p).batches())
    assert [t.num_columns for t in batches] == [n + 1] and batches[0].num_rows == 6
    assert csv_table(p, separator=",").num_columns == n + 1


def test_a_row_over_a_mebibyte_is_read(tmp_path):
    p = tmp_path / "long.csv"
    p.write_text("note,x,class\nshort,1,a\n" + "y" * (3 << 20) + ",2,b\nshort,3,a\n")
    table = csv_table(p)
    assert table.num_rows == 3 and len(table.column("note")[1].as_py()) == 3 << 20


# ------------------------------------------------------------------------------------------
# no supported separator
# ------------------------------------------------------------------------------------------
def test_a_file_no_supported_separator_splits_is_refused_naming_the_one_that_does(tmp_path, diabetes_table):
    semi = _write(diabetes_table, tmp_path / "semi.csv", ";")
    colon = tmp_path / "colon.csv"
    colon.write_text(semi.read_text().replace(";", ":"))
    result = run("train", colon, "-o", tmp_path / "m.hdpbnc", "-s", "nb")
    assert result.exit_code == 2
    line = _error_line(result)
    assert "colon.csv: no separator found" in line and "':' splits it" in line and "--separator ':'" in line
    assert "class" not in line.split("splits")[0]
    with pytest.raises(DataError, match="no separator found"):
        list(open_batches(colon).batches())
    assert read_dataset(colon, separator=":").equals(read_dataset(semi))
    spaced = tmp_path / "spaced.csv"
    spaced.write_text("x y class\n" + "".join(f"{i} {i % 3} {'pq'[i % 2]}\n" for i in range(20)))
    with pytest.raises(DataError, match=r"spaced.csv: no separator found: .* ' ' splits it and the lines below into 3"):
        read_dataset(spaced)


def test_a_file_of_one_column_trains_no_model(tmp_path):
    one = tmp_path / "one.csv"
    one.write_text("class\n" + "".join(f"{'pq'[i % 2]}\n" for i in range(20)))
    result = run("train", one, "-o", tmp_path / "m.hdpbnc", "-s", "nb", "-e", "laplace")
    assert result.exit_code == 2
    line = _error_line(result)
    assert "one.csv: no separator found" in line and "--separator" in line
    with pytest.raises(DataError, match="no separator found"):
        read_dataset(one)
    # data to predict may be one column: a model of one attribute reads it
    train = tmp_path / "t.csv"
    train.write_text("x,class\n" + "".join(f"{i % 4},{'pq'[i % 2]}\n" for i in range(20)))
    assert run("train", train, "-o", tmp_path / "x.hdpbnc", "-s", "nb", "-e", "laplace").exit_code == 0
    x = tmp_path / "x.csv"
    x.write_text("x\n1\n2\n")
    result = run("predict", tmp_path / "x.hdpbnc", x)
    assert result.exit_code == 0, result.output
    assert len(result.stdout.splitlines()) == 3


# ------------------------------------------------------------------------------------------
# rows with a missing class; a column with no value to predict
# ------------------------------------------------------------------------------------------
def _with_missing_classes(path: Path, n: int = 40, missing=(3, 17, 25)) -> Path:
    rows = [f"{i % 5},{'abc'[i % 3]},{'?' if i in missing else 'pq'[(i // 2) % 2]}" for i in range(n)]
    path.write_text("x,colour,class\n" + "\n".join(rows) + "\n")
    return path


def test_rows_with_a_missing_class_are_left_out_with_a_note(tmp_path):
    from hdp_plugin.errors import DataNote

    data = _with_missing_classes(tmp_path / "d.csv")
    result = run("train", data, "-o", tmp_path / "m.hdpbnc", "-s", "nb", "-e", "laplace", "-q")
    assert result.exit_code == 0, result.output
    assert result.stderr.splitlines() == [f"note: {data}: 3 rows with a missing class were left out"]
    result = run("train", data, "-o", tmp_path / "s.hdpbnc", "-s", "nb", "-e", "laplace", "-q", "--stream")
    assert result.exit_code == 0 and result.stderr.splitlines() == [
        f"note: {data}: 3 rows with a missing class were left out"]
    result = run("evaluate", data, "-s", "nb", "-e", "laplace", "-q", "--json")
    assert result.exit_code == 0 and result.stderr.splitlines() == [
        f"note: {data}: 3 rows with a missing class were left out"]
    with pytest.warns(DataNote, match=r"d.csv: 3 rows with a missing class were left out"):
        clf = BayesNetClassifier(structure="nb", estimator="laplace").fit(read_dataset(data))
    assert clf.fit_info_["dropped_missing_class"] == 3 and clf.fit_info_["warnings"] == []
    with pytest.warns(DataNote, match="1 row with a missing class was left out"):
        BayesNetClassifier(structure="nb", estimator="laplace").fit(
            read_dataset(_with_missing_classes(tmp_path / "one.csv", missing=(5,))))
    full = _with_missing_classes(tmp_path / "full.csv", missing=())
    result = run("train", full, "-o", tmp_path / "f.hdpbnc", "-s", "nb", "-e", "laplace", "-q")
    assert result.exit_code == 0 and result.stderr == ""


def test_a_used_column_with_no_value_to_predict_is_warned_of(tmp_path):
    import warnings

    import pandas as pd

    from hdp_plugin.errors import EmptyColumnWarning

    train = _with_missing_classes(tmp_path / "t.csv", missing=())
    model = tmp_path / "m.hdpbnc"
    assert run("train", train, "-o", model, "-s", "nb", "-e", "laplace").exit_code == 0
    empty = tmp_path / "p.csv"
    empty.write_text("x,colour,class\n" + "".join(f",{'abc'[i % 3]},p\n" for i in range(10)))
    result = run("predict", model, empty, "-o", tmp_path / "out.csv")
    assert result.exit_code == 0, result.output
    warned = [line for line in result.stderr.splitlines() if line.startswith("warning:")]
    assert warned == [f"warning: column 'x' in {empty} has no known value on any of its 10 rows (each is missing, "
                      "or never seen in training): the model predicts every row without it"]
    result = run("predict", model, empty, "--stream", "-o", tmp_path / "out.parquet")
    assert result.exit_code == 0 and "warning: column 'x'" in result.stderr
    clf = load_model(model)
    frame = pd.DataFrame({"x": [np.nan] * 4, "colour": ["a", "b", "c", "a"]})
    with pytest.warns(EmptyColumnWarning, match="column 'x' in <DataFrame> has no known value on any of its 4 rows"):
        clf.predict_proba(frame)
    nominal = tmp_path / "n.csv"  # a model of nominal attributes, and data coded as it codes them
    nominal.write_text("colour,class\n" + "".join(f"{'abc'[i % 3]},{'pq'[(i // 2) % 2]}\n" for i in range(30)))
    ds = read_dataset(nominal)
    clf = BayesNetClassifier(structure="nb", estimator="laplace").fit(ds)
    blank = ds.take(np.arange(4))
    blank.X[:, 0] = blank.attributes[0].missing_code
    with pytest.warns(EmptyColumnWarning, match="column 'colour'"):
        clf.predict_proba(blank)
    unseen = pd.DataFrame({"colour": ["d", "e", "d"]})  # labels never seen in training: none known
    with pytest.warns(EmptyColumnWarning, match="column 'colour' in <DataFrame> has no known value on any of its 3"):
        clf.predict_proba(unseen)
    with warnings.catch_warnings():  # values in some rows, or one row: no warning
        warnings.simplefilter("error", EmptyColumnWarning)
        clf.predict_proba(ds)
        clf.predict_proba(blank.take([0]))
        load_model(model).predict_proba(frame.assign(x=[1.0, np.nan, np.nan, np.nan]))
        result = run("predict", model, train)
        assert "warning" not in result.stderr
        part = tmp_path / "part.csv"  # a column with values in one batch and none in the others
        part.write_text("x,colour\n3,a\n" + "".join(f",{'abc'[i % 3]}\n" for i in range(9)))
        assert sum(len(proba) for _, _, proba in load_model(model).predict_source(open_batches(part, batch_rows=2))) == 10
    with pytest.warns(EmptyColumnWarning, match="column 'x' in .*p.csv has no known value on any of its 10 rows"):
        list(load_model(model).predict_source(open_batches(empty, batch_rows=3)))
