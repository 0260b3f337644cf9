"""Edges of the faces: a k beyond what the data allows, output paths that cannot be written, and model
files that do not depend on the thread count."""

from __future__ import annotations

import json
import os
import warnings
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from typer.testing import CliRunner

from hdp_plugin import BayesNetClassifier, cli, read_dataset
from hdp_plugin.daemon import protocol as P
from hdp_plugin.daemon.jobs import Context, execute
from hdp_plugin.model import load_model, modelfile

DATA = Path(__file__).parent / "data"
VOTE = DATA / "vote.arff"  # 16 attributes: at most 15 parents each
WEATHER = DATA / "weather.nominal.arff"  # 4 attributes: at most 3
GOLDEN_WEATHER = DATA.parent / "golden" / "models" / "weather-kdb1-hdp.hdpbnc"
runner = CliRunner()


def run(*args):
    return runner.invoke(cli.app, [str(a) for a in args], catch_exceptions=False)


def _lines(text: str, word: str) -> list[str]:
    return [line for line in text.splitlines() if word in line]


def _one_line_error(result, *words):
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith("error: ") and result.stderr.count("\n") == 1, result.stderr
    for w in words:
        assert w in result.stderr, result.stderr


def _structure_line(path: Path) -> str:
    result = run("info", path)
    assert result.exit_code == 0, result.output
    field = result.stdout.split("\nclass ", 1)[0]  # the structure field, wrapped at 80 columns
    return " ".join(field.split()).replace("structure ", "structure      ", 1)


@pytest.fixture(scope="module")
def vote():
    return read_dataset(VOTE)


# ------------------------------------------------------------------------------------------
# k beyond the attributes: the k used is recorded, shown and said once
# ------------------------------------------------------------------------------------------
def test_train_kdb_with_k_beyond_the_attributes_records_and_shows_the_k_used(tmp_path, vote):
    path = tmp_path / "kdb50.hdpbnc"
    result = run("train", VOTE, "-o", path, "-s", "kdb", "-k", "50", "-e", "m-estimate")
    assert result.exit_code == 0, result.output
    warned = _lines(result.stderr, "warning:")
    assert len(warned) == 1 and "k=50" in warned[0] and "16 attributes" in warned[0] and "k=15" in warned[0]
    assert "UserWarning" not in result.stderr  # one line, not Python's two
    assert "kDB-15 m-estimate" in result.stderr and "kDB-50" not in result.stderr
    assert "kDB-15 (k=50 asked; 16 attributes allow at most 15)" in _structure_line(path)
    doc = modelfile.read_model_file(path)[0]
    assert doc["params"]["k"] == 50 and doc["members"][0]["structure"]["k"] == 15  # what Weka's description shows
    assert doc["fit"]["warnings"] == [warned[0].removeprefix("warning: ")]
    clf = load_model(path)
    assert clf.k_used_ == 15 and clf.structure_.k == 15 and clf.get_params()["k"] == 50
    assert max(len(p) for p in clf.structure_.parents) == 15
    # capped, the model is kDB-15's
    same = BayesNetClassifier(structure="kdb", k=15, estimator="m-estimate").fit(vote)
    np.testing.assert_array_equal(clf.predict_proba(vote), same.predict_proba(vote))


@pytest.mark.parametrize("structure", ["skdb", "eskdb"])
def test_selective_structures_select_within_the_k_used(tmp_path, vote, structure):
    params = dict(structure=structure, estimator="m-estimate", random_state=4)
    if structure == "eskdb":
        params["n_members"] = 3
    with pytest.warns(UserWarning, match="k=40 is more than 16 attributes allow") as caught:
        clf = BayesNetClassifier(k=40, **params).fit(vote)
    assert len([w for w in caught if "k=40" in str(w.message)]) == 1
    assert clf.k_used_ == 15
    nets = clf.members_ if structure == "eskdb" else [clf]
    for net in nets:
        st = net.structure_ if structure == "skdb" else net.structure
        assert st.info["max_k"] <= 15 and st.k <= 15
    same = BayesNetClassifier(k=15, **params).fit(vote)
    np.testing.assert_array_equal(clf.predict_proba(vote), same.predict_proba(vote))
    path = tmp_path / "m.hdpbnc"
    from hdp_plugin.model import save_model

    save_model(clf, path)
    line = _structure_line(path)
    assert "k=40 asked; 16 attributes allow at most 15" in line
    if structure == "eskdb":
        assert "(SkDB) of at most K = 15 attribute parents" in line
    assert load_model(path).k_used_ == 15


def test_the_default_k_is_capped_without_a_warning(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        clf = BayesNetClassifier(structure="kdb", estimator="m-estimate").fit(read_dataset(WEATHER))
    assert clf.k_used_ == 3 and clf.structure_.k == 3 and clf.fit_info_["warnings"] == []
    path = tmp_path / "w.hdpbnc"
    result = run("train", WEATHER, "-o", path, "-s", "kdb", "-e", "m-estimate")
    assert result.exit_code == 0 and "warning" not in result.stderr, result.output
    assert "kDB-3 (k=5 asked; 4 attributes allow at most 3)" in _structure_line(path)
    nb = BayesNetClassifier(structure="nb", estimator="m-estimate").fit(read_dataset(WEATHER))
    tan = BayesNetClassifier(structure="tan", estimator="m-estimate").fit(read_dataset(WEATHER))
    assert (nb.k_used_, tan.k_used_) == (0, 1)


def test_a_job_with_k_beyond_the_attributes_reports_the_k_used(tmp_path):
    sp = P.Spool(tmp_path / "s").create()
    folder = tmp_path / "job"
    folder.mkdir()
    (folder / "job.json").write_text(json.dumps({"protocol": 1, "structure": "kdb", "k": 50,
                                                 "estimator": "m-estimate"}))
    (folder / "data.arff").write_bytes(VOTE.read_bytes())
    with warnings.catch_warnings():  # said in result.json, which the test reads
        warnings.simplefilter("ignore", UserWarning)
        assert execute(folder, "job", Context(spool=sp, daemon_id="test")) == "done"
    result = json.loads((folder / "result.json").read_text())
    assert result["structure"]["k"] == 15
    assert [w for w in result["warnings"] if "k=50" in w and "k=15" in w]  # Weka logs these
    assert "kDB-15 (k=50 asked" in _structure_line(folder / P.MODEL_FILE)


def test_evaluate_names_the_k_used_and_warns_once():
    result = run("evaluate", VOTE, "-s", "kdb", "-k", "2,50", "-e", "m-estimate")
    assert result.exit_code == 0, result.output
    assert len(_lines(result.stderr, "warning: k=50")) == 1 and "UserWarning" not in result.stderr
    assert "kDB-15 (k=50)" in result.stdout and "kDB-50" not in result.stdout


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


def test_predict_refuses_a_suffix_with_no_format_and_names_the_formats(tmp_path):
    out = tmp_path / "x.txt"
    _one_line_error(run("predict", GOLDEN_WEATHER, WEATHER, "-o", out), "-o must end in", "'x.txt'",
                    ".csv", ".arrow", ".feather", ".ipc", ".parquet", ".arff")
    assert not out.exists()
    _one_line_error(run("predict", GOLDEN_WEATHER, WEATHER, "-o", tmp_path / "x.arff", "--stream"), "-o must end in",
                    "'x.arff'", ".parquet", ".arrow", ".feather", ".ipc", ".csv")
    assert sorted(tmp_path.iterdir()) == []


@pytest.mark.parametrize("command", ["train", "evaluate", "daemon submit"])
def test_an_iterations_value_that_is_no_number_lists_the_accepted_forms(tmp_path, command):
    for bad in ("abc", "0", "1.5"):
        args = {"train": ["train", WEATHER, "-o", tmp_path / "m.hdpbnc"], "evaluate": ["evaluate", WEATHER],
                "daemon submit": ["daemon", "submit", tmp_path / "spool", WEATHER]}[command]
        _one_line_error(run(*args, "-i", bad), "--iterations must be auto or an integer >= 1", repr(bad))
    _one_line_error(run("evaluate", WEATHER, "-i", "20,abc"), "--iterations must be auto or an integer >= 1", "'abc'")
    assert not (tmp_path / "m.hdpbnc").exists() and not (tmp_path / "spool").exists()


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
