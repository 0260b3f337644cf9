"""Edges of the faces: output paths that cannot be written, and model files that do not depend on the
thread count."""

from __future__ import annotations

import os
from pathlib import Path

import pyarrow as pa
import pytest
from typer.testing import CliRunner

from hdp_plugin import cli
from hdp_plugin.model import load_model, modelfile

DATA = Path(__file__).parent / "data"
VOTE = DATA / "vote.arff"
WEATHER = DATA / "weather.nominal.arff"
runner = CliRunner()


def run(*args):
    return runner.invoke(cli.app, [str(a) for a in args], catch_exceptions=False)


def _one_line_error(result, *words):
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith("error: ") and result.stderr.count("\n") == 1, result.stderr
    for w in words:
        assert w in result.stderr, result.stderr


# ------------------------------------------------------------------------------------------
# output paths are checked before any data is read
# ------------------------------------------------------------------------------------------
@pytest.fixture()
def junk(tmp_path):
    """A data file and a model file that cannot be read: an error about them means the output was not
    checked first."""
    (tmp_path / "junk.arff").write_text("this is not ARFF\n")
    (tmp_path / "junk.hdpbnc").write_bytes(b"not a model")
    return tmp_path / "junk.arff", tmp_path / "junk.hdpbnc"


def _unwritable_directory(tmp_path: Path) -> Path | None:
    """A directory that takes no new file: a read-only one for a normal user; for the superuser, whom
    permission bits do not stop, /proc (Linux)."""
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        return Path("/proc") if Path("/proc/self").exists() else None
    if os.name == "nt":
        return None
    d = tmp_path / "read-only"
    d.mkdir()
    d.chmod(0o500)
    return d


def test_train_refuses_an_output_it_cannot_write_before_reading_data(tmp_path, junk):
    data, _ = junk
    _one_line_error(run("train", data, "-o", tmp_path / "no" / "such" / "dir" / "m.hdpbnc"),
                    "-o ", "does not exist", str(tmp_path / "no" / "such" / "dir"))
    (tmp_path / "afile").write_text("x")
    _one_line_error(run("train", data, "-o", tmp_path / "afile" / "m.hdpbnc"), "-o ", "is not a directory")
    _one_line_error(run("train", data, "-o", tmp_path / "afile" / "sub" / "m.hdpbnc"), "-o ", "does not exist")
    locked = _unwritable_directory(tmp_path)
    if locked is not None:
        _one_line_error(run("train", data, "-o", locked / "m.hdpbnc"), "-o ", "cannot create a file", str(locked))
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []  # no probe left behind


def test_predict_and_show_refuse_their_output_before_reading(tmp_path, junk):
    data, model = junk
    missing = tmp_path / "missing"
    _one_line_error(run("predict", model, data, "-o", missing / "p.csv"), "-o ", "does not exist")
    _one_line_error(run("predict", model, data, "-o", tmp_path / "p.docx"), "-o must end in")
    _one_line_error(run("predict", model, data, "-o", tmp_path / "p.arff", "--stream"), "-o must end in")
    _one_line_error(run("show", model, "-o", missing / "net.dot"), "-o ", "does not exist")
    _one_line_error(run("show", model, "-o", tmp_path / "net.jpeg"), "-o must end in")
    (tmp_path / "a.dot").mkdir()
    _one_line_error(run("show", model, "-o", tmp_path / "a.dot"), "-o ", "is a directory")


def test_show_writes_dot_atomically(tmp_path):
    path = tmp_path / "m.hdpbnc"
    assert run("train", WEATHER, "-o", path, "-s", "nb", "-e", "m-estimate").exit_code == 0
    result = run("show", path, "-o", tmp_path / "net.dot")
    assert result.exit_code == 0, result.output
    assert (tmp_path / "net.dot").read_text().startswith("digraph network {")
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


@pytest.mark.parametrize("command", ["run", "submit"])
def test_a_spool_that_is_not_a_directory_is_one_line(tmp_path, command):
    (tmp_path / "afile").write_text("x")
    for spool in (tmp_path / "afile", tmp_path / "afile" / "spool"):
        args = ("daemon", "run", spool, "--idle-exit", "0") if command == "run" else \
            ("daemon", "submit", spool, tmp_path / "no-such-data.arff")
        result = run(*args)
        _one_line_error(result, str(spool))
        assert "no-such-data" not in result.stderr and "File exists" not in result.stderr


# ------------------------------------------------------------------------------------------
# the thread count is not part of the model
# ------------------------------------------------------------------------------------------
def _without_timings(path: Path) -> bytes:
    """The file as it would be with an empty training document (fit timings change from run to run)."""
    doc_json = pa.ipc.open_file(path).schema.metadata[modelfile.MODEL_KEY]
    batches = modelfile.read_model_file(path)[2]
    return modelfile.file_bytes(doc_json, b"{}", batches)


def test_the_model_file_does_not_depend_on_the_threads(tmp_path):
    files = []
    for threads in (("-t", "1"), ("-t", "2"), ()):
        path = tmp_path / f"m{len(files)}.hdpbnc"
        result = run("train", VOTE, "-o", path, "-s", "kdb", "-k", "2", "-i", "40", "--seed", "3", *threads)
        assert result.exit_code == 0, result.output
        files.append(path)
    one, two, default = (_without_timings(p) for p in files)
    assert one == two == default
    doc = modelfile.read_model_file(files[0])[0]
    assert "n_jobs" not in doc["params"]
    assert load_model(files[1]).n_jobs is None  # a loaded model runs on all cores unless told otherwise
