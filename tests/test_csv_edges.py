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
    from hdp_plugin.daemon import commands

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
from hdp_plugin import cli
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
