"""The hdp-bnc command line, through typer's CliRunner and as a real subprocess."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.feather
import pyarrow.ipc
import pytest
from typer.testing import CliRunner

from hdp_plugin import BayesNetClassifier, __version__, read_dataset
from hdp_plugin.cli import commands as cli, evaluate as cli_evaluate, info as cli_info, progress as cli_progress
from hdp_plugin.data import to_arrow
from hdp_plugin.model import load_model
from reference import same_estimates

HERE = Path(__file__).resolve().parent
DATA = HERE / "data"
VOTE = DATA / "vote.arff"
WEATHER = DATA / "weather.nominal.arff"
GOLDEN_VOTE = HERE / "golden" / "models" / "vote-kdb2-hdp.hdpbnc"

runner = CliRunner()


def run(*args):
    return runner.invoke(cli.app, [str(a) for a in args], catch_exceptions=False)


def _csv(text: str):
    rows = list(csv.reader(io.StringIO(text)))
    return rows[0], rows[1:]


@pytest.fixture(scope="module")
def vote_model(tmp_path_factory):
    """A model written by `train`, and the same classifier trained in memory."""
    path = tmp_path_factory.mktemp("cli") / "vote.hdpbnc"
    result = run("train", VOTE, "-o", path, "-s", "kdb", "-k", "2", "-i", "60", "--seed", "5", "--threads", "1")
    assert result.exit_code == 0, result.output
    clf = BayesNetClassifier(structure="kdb", k=2, iterations=60, random_state=5, n_jobs=1).fit(read_dataset(VOTE))
    return path, clf


# ------------------------------------------------------------------------------------------
# each command
# ------------------------------------------------------------------------------------------
def test_version_and_help():
    result = run("--version")
    assert result.exit_code == 0 and __version__ in result.stdout
    result = run("-h")
    assert result.exit_code == 0
    for command in ("train", "predict", "evaluate", "info", "show"):
        assert command in result.stdout
        sub = run(command, "-h")
        assert sub.exit_code == 0 and "Usage" in sub.stdout


def test_train_writes_a_model_that_predicts_like_the_classifier(vote_model):
    path, clf = vote_model
    loaded = load_model(path)
    ds = read_dataset(VOTE)
    np.testing.assert_array_equal(loaded.predict_proba(ds), clf.predict_proba(ds))
    assert same_estimates(loaded, clf)
    assert loaded.parents_ == clf.parents_


def test_train_summary_and_quiet(tmp_path):
    result = run("train", WEATHER, "-o", tmp_path / "w.hdpbnc", "-s", "nb", "-e", "laplace")
    assert result.exit_code == 0 and result.stdout == ""
    assert "w.hdpbnc: NB laplace on 14 rows" in result.stderr
    result = run("train", WEATHER, "-o", tmp_path / "w.hdpbnc", "-s", "nb", "-e", "laplace", "--quiet")
    assert result.exit_code == 0 and result.output == ""


def test_train_uses_the_class_option(tmp_path):
    result = run("train", WEATHER, "-o", tmp_path / "w.hdpbnc", "--class", "outlook", "-s", "tan", "-e", "mle")
    assert result.exit_code == 0, result.output
    assert load_model(tmp_path / "w.hdpbnc").class_attribute_.name == "outlook"


def test_predict_to_stdout_is_exactly_the_classifier_output(vote_model):
    path, clf = vote_model
    result = run("predict", path, VOTE, "--threads", "1")
    assert result.exit_code == 0, result.output
    header, rows = _csv(result.stdout)
    assert header == ["actual", "predicted", "p_democrat", "p_republican"]
    proba = np.array([[float(v) for v in r[2:]] for r in rows])
    ds = read_dataset(VOTE)
    np.testing.assert_array_equal(proba, clf.predict_proba(ds))
    assert [r[1] for r in rows] == list(clf.predict(ds))
    assert [r[0] for r in rows] == [ds.class_values[c] for c in ds.y]


@pytest.mark.parametrize("suffix", [".csv", ".arrow", ".parquet", ".arff"])
def test_predict_to_a_file_by_extension(vote_model, tmp_path, suffix):
    path, clf = vote_model
    out = tmp_path / f"pred{suffix}"
    result = run("predict", path, VOTE, "-o", out)
    assert result.exit_code == 0, result.output
    assert "435 predictions, accuracy" in result.stderr
    expected = clf.predict_proba(read_dataset(VOTE))
    if suffix == ".arrow":
        table = pa.ipc.open_file(out).read_all()
    elif suffix == ".parquet":
        import pyarrow.parquet as pq

        table = pq.read_table(out)
    else:
        table = None
    if table is not None:
        got = np.column_stack([table["p_democrat"].to_numpy(), table["p_republican"].to_numpy()])
        np.testing.assert_array_equal(got, expected)
        assert table["predicted"].to_pylist() == list(clf.predict(read_dataset(VOTE)))
    elif suffix == ".arff":
        ds = read_dataset(out, class_attribute="predicted")
        assert ds.names == ["actual", "p_democrat", "p_republican"]
        assert list(np.asarray(ds.class_values)[ds.y]) == list(clf.predict(read_dataset(VOTE)))
    else:
        header, rows = _csv(out.read_text())
        np.testing.assert_array_equal(np.array([[float(v) for v in r[2:]] for r in rows]), expected)


def test_predict_data_without_the_class_column(vote_model, tmp_path):
    path, clf = vote_model
    ds = read_dataset(VOTE)
    table = to_arrow(ds).drop_columns([ds.class_attribute.name])
    new = tmp_path / "unlabelled.arrow"
    with pa.OSFile(str(new), "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
        writer.write_table(table)
    result = run("predict", path, new)
    assert result.exit_code == 0, result.output
    header, rows = _csv(result.stdout)
    assert header == ["predicted", "p_democrat", "p_republican"]
    np.testing.assert_array_equal(np.array([[float(v) for v in r[1:]] for r in rows]), clf.predict_proba(ds))


def test_evaluate_table_json_and_csv():
    args = ["evaluate", WEATHER, "-s", "nb,kdb", "-k", "1,2", "-e", "hdp,m-estimate", "-i", "30"]
    result = run(*args)
    assert result.exit_code == 0, result.output
    for text in ("RMSE", "0-1 loss", "log-loss", "train s", "test s", "NB", "kDB-1", "kDB-2", "m-estimate"):
        assert text in result.stdout
    doc = json.loads(run(*args, "--json").stdout)
    # k does not multiply NB: NB x 2 estimators + kDB x 2 k x 2 estimators
    assert len(doc["results"]) == 6
    assert {r["structure"] for r in doc["results"]} == {"nb", "kdb"}
    header, rows = _csv(run(*args, "--csv").stdout)
    assert header == list(cli_evaluate._RESULT_COLUMNS) and len(rows) == 6
    # seeded: the same command gives the same figures
    again = json.loads(run(*args, "--json").stdout)
    assert [r["rmse"] for r in again["results"]] == [r["rmse"] for r in doc["results"]]


def test_evaluate_table_says_how_to_read_it_and_leaves_the_compile_untimed():
    args = ["evaluate", WEATHER, "-s", "nb,kdb", "-k", "2", "-e", "hdp,m-estimate", "-i", "30"]
    text = " ".join(run(*args).stdout.split())  # rich wraps the caption to the terminal
    assert "Lower is better in every column." in text
    assert "compiling or loading numba's kernels took" in text and "is not counted" in text
    last = run(*args).stdout.rstrip().splitlines()[-1]
    assert last.startswith("Lowest ") and last.endswith("."), last
    doc = json.loads(run(*args, "--json").stdout)
    assert doc["untimed_warm_up_seconds"] >= 0


def test_warm_up_fits_the_configuration_on_a_few_rows_of_every_class():
    from hdp_plugin.model.evaluation import warm_up

    ds = read_dataset(DATA / "diabetes.arff")
    seen = []

    class Recording(BayesNetClassifier):
        def fit(self, X, *args, **kwargs):
            seen.append((self.structure, np.bincount(X.y).tolist()))
            return super().fit(X, *args, **kwargs)

    assert warm_up(lambda: Recording(structure="tan", estimator="m-estimate"), ds, rows_per_class=5) >= 0
    assert seen == [("tan", [5, 5])]


def test_train_with_no_options_trains_the_default_eskdb(tmp_path):
    """hdp-bnc train DATA -o MODEL, nothing else: ESKDB x20 with k 5, which 4 attributes cap at 3 (no warning for
    the default), auto iterations (at most 100), stochastic gain."""
    model = tmp_path / "d.hdpbnc"
    result = run("train", DATA / "weather.numeric.arff", "-o", model)
    assert result.exit_code == 0, result.output
    clf = load_model(model)
    ran = clf.iterations
    assert result.stderr.startswith(f"{model}: ESKDB-3 x20 hdp {ran} it. on 14 rows"), result.stderr
    assert len(clf.members_) == 20 and ran <= 1000 and clf.discretization_ == "stochastic-gain"
    info = json.loads(run("info", model, "--json").stdout)
    est = info["model"]["estimator"]
    assert est["iterations"] == ran == max(est["tree_iterations"]) and est["tolerance"] > 0
    text = run("info", model).stdout  # every tree's stop, summed up
    n = len(est["tree_iterations"])
    assert f"stopping       auto, tolerance {est['tolerance']}: trees stopped " in text
    assert sum(int(w.split(" at ")[0]) for w in text.split("trees stopped ")[1].split(" iterations")[0].split(", ")) == n


def test_evaluate_iterations_auto_is_a_configuration_of_its_own():
    result = run("evaluate", WEATHER, "-s", "kdb,eskdb", "-k", "1", "--members", "2", "-i", "auto,40", "--json")
    assert result.exit_code == 0, result.output
    got = {(r["structure"], r["iterations"]) for r in json.loads(result.stdout)["results"]}
    assert got == {("kdb", "auto"), ("eskdb", "auto"), ("kdb", 40), ("eskdb", 40)}
    # the burn-in is checked against the resolved number, the message naming the option
    result = run("evaluate", WEATHER, "-s", "eskdb", "--burn-in", "200")
    assert result.exit_code != 0 and result.stderr.count("\n") == 1
    assert result.stderr == ("error: --burn-in must be below --iterations, got 200 with 100 iterations "
                             "(the default for eskdb)\n")


def test_evaluate_5x2_matches_cross_validate():
    from hdp_plugin.model.evaluation import cross_validate

    result = run("evaluate", DATA / "diabetes.arff", "-s", "tan", "-e", "m-estimate", "--cv", "5x2", "--seed", "3", "--json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert (doc["repeats"], doc["folds"]) == (5, 2)
    assert len(doc["results"][0]["per_fold"]) == 10
    ref = cross_validate(lambda: BayesNetClassifier(structure="tan", estimator="m-estimate", random_state=3),
                         read_dataset(DATA / "diabetes.arff"), n_folds=2, repeats=5, seed=3)
    assert doc["results"][0]["rmse"] == ref.rmse
    assert doc["results"][0]["zero_one_loss"] == ref.zero_one


def test_info_text_and_json():
    result = run("info", GOLDEN_VOTE)
    assert result.exit_code == 0, result.output
    for text in ("format         4.0", "kDB-2", "hdp", "tying          level: one concentration per depth", "16 trees",
                 "physician-fee-freeze"):
        assert text in result.stdout
    doc = json.loads(run("info", GOLDEN_VOTE, "--json").stdout)
    assert doc["model"]["members"][0]["structure"]["kind"] == "kdb" and doc["model"]["seed"] == 7


def test_info_of_an_ensemble_says_first_what_a_user_needs():
    """The ensemble's structure, members, iterations, training rows and most used attributes come
    first; the file, the seeds and every member's own choices below, all named in words."""
    result = run("info", HERE / "golden" / "models" / "diabetes-eskdb-hdp.hdpbnc")
    assert result.exit_code == 0, result.output
    summary, details = result.stdout.split("\n\n", 1)
    labels = [line[:15].strip() for line in summary.splitlines() if line[:15].strip()]  # wrapped lines: no label
    flat = " ".join(summary.split())
    assert labels[:3] == ["structure", "class", "training"]
    assert {"most used", "members", "iterations"} <= set(labels) and "model file" not in labels
    assert flat.startswith("structure ESKDB, 3 members, each a selective kDB (SkDB) of at most K = 2")
    assert "training       768 rows" in summary
    assert "iterations 100 Gibbs iterations a tree (10 of burn-in, then 90 averaged)" in flat
    most = flat.split("most used ", 1)[1].split(")", 1)[0] + ")"
    assert most.endswith("(of 3 members)") and most.split()[:2] == ["plas", "3,"]
    assert "seed           3 (member e draws from stream e of it)" in details
    table = details.split("\n\n")[1].splitlines()
    assert table[0].split() == ["member", "kept", "k", "cells", "attribute", "order"]
    assert [line.split()[0] for line in table[1:4]] == ["0", "1", "2"]
    for jargon in ("1073741826", "spawn", "n*", "k*", "n_groups", "n_samples", "burn_in"):
        assert jargon not in result.stdout, jargon


def test_info_says_which_members_shrank_to_their_cell_cap(tmp_path, monkeypatch):
    """SkDB's selection takes a smaller model than its best when the best has more table cells than a
    member's share of config.MAX_MODEL_CELLS: the model file records it (each member's structure.info
    cell_limited) and info says it."""
    from hdp_plugin import config
    from hdp_plugin.model.modelfile import read_model, save_model

    monkeypatch.setattr(config, "MAX_MODEL_CELLS", 20 * 300)
    data = read_dataset(VOTE)
    clf = BayesNetClassifier(structure="eskdb", n_members=20, k=3, iterations=10, random_state=0, n_jobs=1).fit(data)
    shrunk = clf.fit_info_["cell_limited_members"]
    assert 0 < len(shrunk) < 20
    save_model(clf, tmp_path / "eskdb.hdpbnc")
    members = read_model(tmp_path / "eskdb.hdpbnc").doc["members"]
    assert [e for e, m in enumerate(members) if "cell_limited" in m["structure"]["info"]] == shrunk
    cap = members[shrunk[0]]["structure"]["info"]["cell_limited"]
    assert cap["max_cells"] == 300 and cap["cells"] > 300
    result = run("info", tmp_path / "eskdb.hdpbnc")
    assert result.exit_code == 0, result.output
    unwrapped = result.stdout.replace("\n" + " " * 15, " ")  # info's fields wrap at 80 columns
    assert (f"cell cap       {len(shrunk)} of 20 members took a smaller model than their best, to stay within 300 "
            f"table cells each: members {', '.join(map(str, shrunk))}\n") in unwrapped, result.stdout
    monkeypatch.setattr(config, "MAX_MODEL_CELLS", 300)
    one = BayesNetClassifier(structure="skdb", k=3, iterations=10, random_state=0, n_jobs=1).fit(data)
    save_model(one, tmp_path / "skdb.hdpbnc")
    text = run("info", tmp_path / "skdb.hdpbnc").stdout.replace("\n" + " " * 15, " ")
    st = one.structure_
    assert (f"more than the cap of 300: took the best within it ({len(st.kept)} attributes, k = {st.k})"
            in text), text
    # a model within its cap says nothing of it
    assert "cell cap" not in run("info", GOLDEN_VOTE).stdout


def test_show_dot(tmp_path, monkeypatch):
    result = run("show", GOLDEN_VOTE)
    assert result.exit_code == 0
    dot = result.stdout
    assert dot.startswith("digraph") and dot.rstrip().endswith("}")
    clf = load_model(GOLDEN_VOTE)
    assert dot.count("->") == len(clf.structure_.kept) + sum(len(p) for p in clf.parents_.values())
    assert '"physician-fee-freeze" -> "el-salvador-aid"' in dot
    result = run("show", GOLDEN_VOTE, "-o", tmp_path / "net.dot")
    assert result.exit_code == 0 and (tmp_path / "net.dot").read_text() == dot
    monkeypatch.setattr(cli_info.shutil, "which", lambda name: None)
    result = run("show", GOLDEN_VOTE, "-o", tmp_path / "net.png")
    assert result.exit_code != 0
    assert result.stderr.startswith("error: ") and "Graphviz" in result.stderr and "-o net.dot" in result.stderr


# ------------------------------------------------------------------------------------------
# errors: one line, non-zero exit
# ------------------------------------------------------------------------------------------
BAD = [
    ("train", DATA / "nope.arff", "-o", "{tmp}/m.hdpbnc"),
    ("train", VOTE, "-o", "{tmp}/m.hdpbnc", "--structure", "forest"),
    ("train", VOTE, "-o", "{tmp}/m.hdpbnc", "-k", "1,2"),
    ("train", VOTE, "-o", "{tmp}/m.hdpbnc", "-k", "-1"),
    ("train", VOTE, "-o", "{tmp}/m.hdpbnc", "--class", "nope"),
    ("train", VOTE, "-o", "{tmp}/m.hdpbnc", "-i", "10", "--burn-in", "10"),
    ("train", DATA / "weather.numeric.arff", "-o", "{tmp}/m.hdpbnc", "-d", "none"),
    ("train", VOTE, "-o", "{tmp}/no/such/dir/m.hdpbnc", "-e", "mle"),
    ("predict", VOTE, VOTE),
    ("predict", GOLDEN_VOTE, DATA / "iris.arff"),
    ("predict", GOLDEN_VOTE, VOTE, "-o", "{tmp}/p.xlsx"),
    ("predict", "{tmp}/missing.hdpbnc", VOTE),
    ("predict", GOLDEN_VOTE, VOTE, "--threads", "0"),
    ("evaluate", VOTE, "--cv", "5y2"),
    ("evaluate", VOTE, "--folds", "1"),
    ("evaluate", VOTE, "--json", "--csv"),
    ("evaluate", VOTE, "-e", "hdp,bogus"),
    ("info", VOTE),
    ("show", GOLDEN_VOTE, "-o", "{tmp}/net.jpg"),
]


@pytest.mark.parametrize("args", BAD, ids=lambda a: " ".join(Path(str(x)).name for x in a))
def test_errors_are_one_line_and_exit_non_zero(tmp_path, args):
    result = run(*[str(a).replace("{tmp}", str(tmp_path)) for a in args])
    assert result.exit_code != 0
    assert result.stderr.startswith("error: ")
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.output


# ------------------------------------------------------------------------------------------
# a real subprocess: python -m hdp_plugin
# ------------------------------------------------------------------------------------------
def _command(*args):
    return [sys.executable, "-m", "hdp_plugin", *map(str, args)]


def _run_all(commands):
    """Run independent commands side by side (start-up dominates); return their CompletedProcess."""
    env = {**os.environ, "COLUMNS": "120"}
    procs = [subprocess.Popen(_command(*c), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
             for c in commands]
    done = []
    for c, proc in zip(commands, procs):
        out, err = proc.communicate(timeout=300)
        done.append(subprocess.CompletedProcess(c, proc.returncode, out, err))
    return done


def test_every_command_as_a_subprocess(tmp_path):
    model = tmp_path / "w.hdpbnc"
    (p,) = _run_all([("train", WEATHER, "-o", model, "-s", "kdb", "-k", "1", "-i", "40", "--seed", "2")])
    assert p.returncode == 0, p.stderr
    assert p.stderr.startswith(f"{model}: kDB-1 hdp 40 it.")  # no progress bar when not a terminal
    predict, info, show, evaluate, bad, version = _run_all([
        ("predict", model, WEATHER),
        ("info", model),
        ("show", model),
        ("evaluate", WEATHER, "-s", "nb", "-e", "m-estimate,laplace", "--csv"),
        ("predict", WEATHER, WEATHER),
        ("--version",),
    ])
    clf = BayesNetClassifier(structure="kdb", k=1, iterations=40, random_state=2).fit(read_dataset(WEATHER))
    assert predict.returncode == 0, predict.stderr
    header, rows = _csv(predict.stdout)
    np.testing.assert_array_equal(np.array([[float(v) for v in r[2:]] for r in rows]),
                                  clf.predict_proba(read_dataset(WEATHER)))
    assert info.returncode == 0 and "kDB-1" in info.stdout
    assert show.returncode == 0 and show.stdout.startswith("digraph")
    assert evaluate.returncode == 0, evaluate.stderr
    assert len(_csv(evaluate.stdout)[1]) == 2 and evaluate.stderr == ""
    assert bad.returncode == 2 and bad.stderr.startswith("error: ") and bad.stderr.count("\n") == 1
    assert version.returncode == 0 and __version__ in version.stdout


def test_verbose_logs_the_stages(tmp_path):
    import logging

    root, pkg = logging.getLogger(), logging.getLogger("hdp_plugin")
    saved = root.handlers[:], root.level, pkg.level
    try:
        result = run("train", DATA / "diabetes.arff", "-o", tmp_path / "d.hdpbnc", "-s", "nb", "-e", "laplace", "-v")
    finally:
        root.handlers[:] = saved[0]
        root.setLevel(saved[1])
        pkg.setLevel(saved[2])
    assert result.exit_code == 0, result.output
    assert "hdp_plugin.preprocess" in result.stderr and "cut point" in result.stderr


@pytest.mark.parametrize(
    "name, text",
    [
        ("bad-row.arff", "@relation r\n@attribute a {x,y}\n@attribute c {p,q}\n@data\nx,p\nz,q\n"),
        ("numeric-class.arff", "@relation r\n@attribute a {x,y}\n@attribute c numeric\n@data\nx,1\ny,2\n"),
        ("no-data.arff", "@relation r\n@attribute a {x,y}\n@attribute c {p,q}\n@data\n"),
        ("binary.arff", "\x00\x01\x02 not text"),
    ],
)
def test_data_errors_are_one_line(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    for args in (("train", path, "-o", tmp_path / "m.hdpbnc", "-e", "mle"), ("evaluate", path, "-e", "mle")):
        result = run(*args)
        assert result.exit_code == 2, result.output
        assert result.stderr.startswith("error: ") and result.stderr.count("\n") == 1
        assert name in result.stderr


def test_progress_bars_on_a_terminal(tmp_path, monkeypatch):
    """The progress paths run (as on a terminal) and leave stdout to the results."""
    monkeypatch.setattr(cli_progress._Out, "bars", property(lambda self: not self.quiet))
    calls = []
    real = cli_progress._Phases.sampling  # the real rich Progress, its phases of unknown length and i/N

    def spy(self, params):
        hook = real(self, params)
        calls.append(hook is not None)
        return hook

    monkeypatch.setattr(cli_progress._Phases, "sampling", spy)
    result = run("train", WEATHER, "-o", tmp_path / "w.hdpbnc", "-s", "kdb", "-k", "1", "-i", "20")
    assert result.exit_code == 0, result.output
    result = run("evaluate", WEATHER, "-s", "nb", "-e", "hdp,laplace", "-i", "20", "--csv")
    assert result.exit_code == 0, result.output
    assert len(_csv(result.stdout)[1]) == 2
    assert calls == [True, True, False]  # the sampler reports to the bar (one hook per configuration); baselines do not sample


# ------------------------------------------------------------------------------------------
# refusals in one line, --format, --class-values, help
# ------------------------------------------------------------------------------------------
def test_evaluate_refuses_more_folds_than_rows(tmp_path):
    result = run("evaluate", WEATHER, "--folds", "15", "-e", "laplace")
    assert result.exit_code == 2
    assert result.stderr == f"error: --folds 15 is more than the 14 rows with a known class in {WEATHER}; give at most 14 folds\n"
    assert result.stdout == ""
    result = run("evaluate", WEATHER, "--folds", "14", "-e", "laplace", "--csv")
    assert result.exit_code == 0, result.output


def test_format_option_and_a_directory_get_one_clear_line(tmp_path):
    data = tmp_path / "weather-data"  # no extension
    data.write_bytes(WEATHER.read_bytes())
    result = run("train", data, "-o", tmp_path / "m.hdpbnc", "-e", "laplace")
    assert result.exit_code == 2
    assert "named with no known extension" in result.stderr and "--format (arff, arrow, parquet, csv)" in result.stderr
    assert "format=" not in result.stderr and result.stderr.count("\n") == 1
    result = run("train", data, "-o", tmp_path / "m.hdpbnc", "-e", "laplace", "--format", "arff")
    assert result.exit_code == 0, result.output
    result = run("predict", tmp_path / "m.hdpbnc", data, "--format", "arff")
    assert result.exit_code == 0 and len(result.stdout.splitlines()) == 15
    result = run("evaluate", data, "-e", "laplace", "--format", "xlsx")
    assert result.exit_code == 2 and result.stderr == "error: --format must be one of arff, arrow, parquet, csv, got 'xlsx'\n"
    folder = tmp_path / "folder"
    folder.mkdir()
    for extra in ((), ("--format", "arff")):  # a directory: --format is not hinted, and does not help
        result = run("evaluate", folder, "-e", "laplace", *extra)
        assert result.exit_code == 2 and result.stderr.startswith(f"error: {folder} is a directory, not a data file;")
        assert "--format" not in result.stderr and "train and predict also read a directory" in result.stderr


def _weather_plain_class(tmp_path) -> Path:
    """weather.nominal as Feather whose class column holds plain strings (no declared labels)."""
    table = to_arrow(read_dataset(WEATHER))
    i = table.column_names.index("play")
    table = table.set_column(i, "play", table.column("play").cast(pa.string()))
    path = tmp_path / "weather.feather"
    pyarrow.feather.write_feather(table, path)
    return path


def test_class_values_give_the_class_order_of_typeless_formats(tmp_path):
    # weather.nominal.arff declares play {yes, no}; plain strings give the sorted labels: no, yes
    path = _weather_plain_class(tmp_path)
    assert read_dataset(path).class_values == ("no", "yes")
    arff_model, plain_model, ordered = tmp_path / "a.hdpbnc", tmp_path / "c.hdpbnc", tmp_path / "o.hdpbnc"
    common = ("-s", "kdb", "-k", "1", "-i", "50", "--seed", "3", "--threads", "1")
    assert run("train", WEATHER, "-o", arff_model, *common).exit_code == 0
    assert run("train", path, "-o", plain_model, *common).exit_code == 0
    result = run("train", path, "-o", ordered, "--class-values", "yes,no", *common)
    assert result.exit_code == 0, result.output
    a, c, o = load_model(arff_model), load_model(plain_model), load_model(ordered)
    assert list(a.classes_) == ["yes", "no"] and list(c.classes_) == ["no", "yes"] and list(o.classes_) == ["yes", "no"]
    ds = read_dataset(WEATHER)
    assert np.array_equal(a.predict_proba(ds), o.predict_proba(ds))  # the same model as from the ARFF file
    assert not np.array_equal(a.predict_proba(ds), c.predict_proba(ds)[:, ::-1])  # the order matters
    # a label the data has must be named; a label no row has may be added
    result = run("train", path, "-o", ordered, "--class-values", "yes", *common)
    assert result.exit_code == 2 and "lack 'no', which the class 'play' has" in result.stderr
    result = run("evaluate", path, "-e", "laplace", "--class-values", "yes,no,maybe", "--csv")
    assert result.exit_code == 0, result.output


def test_dataset_with_class_values():
    ds = read_dataset(WEATHER)  # play {yes, no}
    flipped = ds.with_class_values(["no", "yes", "later"])
    assert flipped.class_values == ("no", "yes", "later")
    assert [flipped.class_values[c] for c in flipped.y] == [ds.class_values[c] for c in ds.y]
    with pytest.raises(Exception, match="name 'no' twice"):
        ds.with_class_values(["no", "no", "yes"])


def test_help_types_and_long_names():
    result = runner.invoke(cli.app, ["train", "--help"], env={"COLUMNS": "200"})
    text = result.stdout
    assert "--max-parents" in text and "--prior-weight" in text and "--format" in text and "--class-values" in text
    for line in text.splitlines():
        if "--max-parents" in line:
            assert "<int>" in line, line
        if "--iterations" in line:  # an integer, or auto: at most the structure's default, which the help states
            assert "<int|auto>" in line, line
    flat = " ".join(text.replace("│", " ").split())
    assert "each context tree until its averaged tables have converged, at most 100 for eskdb (an ensemble " \
           "settles early: checked from 25; 25 when the training rows average 100 or more per class) and 5000 " \
           "otherwise" in flat
    assert "--k " not in text and "--m " not in text
    result = runner.invoke(cli.app, ["daemon", "status", "--help"], env={"COLUMNS": "200"})
    assert "it must exist" in result.stdout and "created" not in result.stdout
    result = run("train", VOTE, "-o", "x.hdpbnc", "-k", "two")
    assert result.exit_code == 2 and result.stderr.startswith("error: -k must be an integer")
