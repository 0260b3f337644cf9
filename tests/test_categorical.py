"""categorical_features: integer-coded columns declared nominal, on every face.

The Weka data sets of tests/data written as CSV with integer codes are what a user with a CSV export
holds: declared categorical, they give the model the ARFF file gives, in memory, streamed, through
the command line and through a daemon job.
"""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.csv as pa_csv
import pyarrow.parquet as pq
import pytest

from hdp_plugin import BayesNetClassifier, config, read_dataset
from hdp_plugin.data import from_arrow, open_batches
from hdp_plugin.data.categorical import check_categorical, declare_categorical
from hdp_plugin.errors import DataError, ParameterError, TooLargeError
from hdp_plugin.model import load_model, save_model
from hdp_plugin.model.modelfile import read_model_file
from reference import same_estimates

DATA = Path(__file__).parent / "data"
FAST = dict(structure="kdb", k=2, estimator="hdp", iterations=40, random_state=3, n_jobs=1)


# ------------------------------------------------------------------------------------------
# Weka's nominal data sets as a CSV export holds them
# ------------------------------------------------------------------------------------------
def coded(ds):
    """Every nominal attribute's observed labels, in declared order, as the codes 1, 2, ... (the
    labels no row has dropped, as a CSV export cannot show them): ``{name: [labels in code order]}``."""
    out = {}
    for j, a in enumerate(ds.attributes):
        if not a.numeric:
            seen = np.unique(ds.X[:, j][ds.X[:, j] < a.missing_code])
            out[a.name] = [a.values[int(c)] for c in seen]
    return out


def _code_columns(ds):
    """Per attribute: integer codes (NaN missing) for nominal ones, raw values for numeric ones."""
    numcols = ds.numeric_columns()
    cols = {}
    for j, a in enumerate(ds.attributes):
        if j in numcols:
            cols[a.name] = ds.numeric[:, numcols[j]]
            continue
        seen = np.unique(ds.X[:, j][ds.X[:, j] < a.missing_code])
        lut = np.full(a.n_codes, np.nan)
        lut[seen] = np.arange(1, seen.size + 1)
        cols[a.name] = lut[ds.X[:, j]]
    return cols


def write_coded_csv(ds, path: Path) -> Path:
    """The data as a CSV file: nominal attributes as integer codes (empty where missing), numeric
    attributes as numbers, the class as its labels."""
    cols = {n: pa.array(v, pa.float64(), mask=np.isnan(v)) for n, v in _code_columns(ds).items()}
    ints = {n: pa.compute.cast(c, pa.int64()) for n, c in cols.items() if n in coded(ds)}
    cols.update(ints)
    y = np.asarray(ds.class_values, dtype=object)[np.maximum(ds.y, 0)]
    cols[ds.class_attribute.name] = pa.array(list(y), pa.string(), mask=ds.y < 0)
    pa_csv.write_csv(pa.table(cols), path)
    return path


def _q(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def write_coded_arff(ds, path: Path) -> Path:
    """The same data as an ARFF file whose nominal attributes declare the codes ``{1,2,...}``."""
    codes = coded(ds)
    cols = _code_columns(ds)
    lines = [f"@relation {_q(ds.relation)}"]
    for a in ds.attributes:
        kind = "{" + ",".join(str(i + 1) for i in range(len(codes[a.name]))) + "}" if a.name in codes else "numeric"
        lines.append(f"@attribute {_q(a.name)} {kind}")
    ca = ds.class_attribute
    lines.append(f"@attribute {_q(ca.name)} {{{','.join(_q(v) for v in ca.values)}}}")
    lines.append("@data")
    for i in range(ds.n_rows):
        row = ["?" if np.isnan(cols[a.name][i]) else (str(int(cols[a.name][i])) if a.name in codes
               else repr(float(cols[a.name][i]))) for a in ds.attributes]
        row.append("?" if ds.y[i] < 0 else _q(ca.values[ds.y[i]]))
        lines.append(",".join(row))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def documents(clf, tmp_path: Path, name: str):
    doc, _, batches = read_model_file(save_model(clf, tmp_path / f"{name}.hdpbnc"))
    doc.pop("package_version")
    return doc, batches


def assert_same_file(a, b, tmp_path):
    """The same model document (attributes, structure, trees, estimates) and the same cells, exactly."""
    doc_a, cells_a = documents(a, tmp_path, "a")
    doc_b, cells_b = documents(b, tmp_path, "b")
    assert doc_a == doc_b
    assert len(cells_a) == len(cells_b)
    for x, y in zip(cells_a, cells_b):
        assert x.keys() == y.keys() and all(np.array_equal(x[c], y[c], equal_nan=True) for c in x)


@pytest.fixture(scope="module")
def breast(tmp_path_factory):
    """breast-cancer (Weka): 9 nominal attributes of up to 13 labels (so 10 sorts after 9), missing
    values, labels no row has."""
    d = tmp_path_factory.mktemp("breast")
    ds = read_dataset(DATA / "breast-cancer.arff")
    return ds, write_coded_arff(ds, d / "breast-coded.arff"), write_coded_csv(ds, d / "breast.csv")


# ------------------------------------------------------------------------------------------
# ARFF == CSV declared: the same model
# ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("params", [FAST, dict(structure="eskdb", n_members=3, k=2, iterations=30, random_state=5,
                                                 n_jobs=1)], ids=["kdb-hdp", "eskdb"])
def test_an_arff_of_codes_and_the_csv_declared_categorical_give_the_same_model_file(tmp_path, breast, params):
    ds, arff, csv = breast
    names = list(coded(ds))
    from_arff = BayesNetClassifier(**params).fit(read_dataset(arff))
    from_csv = BayesNetClassifier(**params, categorical_features=names).fit(read_dataset(csv))
    assert [a.values for a in from_csv.attributes_][names.index("tumor-size")][:11] == tuple(
        str(i) for i in range(1, 12))  # numerically: 10 and 11 after 9
    assert_same_file(from_arff, from_csv, tmp_path)
    # undeclared, the codes are numbers and get discretised: another model
    numeric = BayesNetClassifier(**params).fit(read_dataset(csv))
    assert all(a.numeric for a in numeric.attributes_)


def test_credit_g_mixed_nominal_and_numeric_columns(tmp_path):
    """credit-g: 13 nominal attributes coded, 7 numeric ones (counts, ages, amounts) left numeric; ESKDB
    cuts the numeric ones stochastically, member by member, the same way from both files."""
    ds = read_dataset(DATA / "credit-g.arff")
    arff = write_coded_arff(ds, tmp_path / "credit.arff")
    csv = write_coded_csv(ds, tmp_path / "credit.csv")
    params = dict(structure="eskdb", n_members=2, k=1, estimator="m-estimate", random_state=1, n_jobs=1)
    from_arff = BayesNetClassifier(**params).fit(read_dataset(arff))
    mask = [a.name in coded(ds) for a in ds.attributes]
    data = read_dataset(csv).with_class_values(ds.class_values)  # the class order the ARFF header declares
    from_csv = BayesNetClassifier(**params, categorical_features=mask).fit(data)
    assert_same_file(from_arff, from_csv, tmp_path)


def test_the_original_arff_and_its_integer_coded_csv_learn_the_same_tables(tmp_path):
    """vote (Weka), labels n/y coded 1/2: the same structure, tables and probabilities; only the labels
    differ."""
    ds = read_dataset(DATA / "vote.arff")
    csv = read_dataset(write_coded_csv(ds, tmp_path / "vote.csv"))
    a = BayesNetClassifier(**FAST).fit(ds)
    b = BayesNetClassifier(**FAST, categorical_features=csv.names).fit(csv)
    assert [x.values for x in b.attributes_] == [("1", "2")] * 16
    assert a.parents_ == b.parents_
    assert same_estimates(a, b)
    assert np.array_equal(a.predict_proba(ds), b.predict_proba(csv))


# ------------------------------------------------------------------------------------------
# every form of the parameter
# ------------------------------------------------------------------------------------------
def _frame(n=240, seed=0):
    rng = np.random.default_rng(seed)
    colour = rng.integers(1, 13, n)  # 12 codes: their order must be 1..12, not 1, 10, 11, 12, 2, ...
    count = rng.poisson(3.0, n)
    y = np.where((colour % 3 == 0) ^ (rng.random(n) < 0.1), "a", "b")
    return colour, count, y


def _table(colour, count, y):
    return pa.table({"colour": pa.array(colour, pa.int64()), "count": pa.array(count, pa.int64()),
                     "class": pa.array(list(y), pa.string())})


@pytest.mark.parametrize("on_array, on_table", [
    (["x0"], ["colour"]), (("x0",), ("colour",)), (np.array(["x0"]), np.array(["colour"])), (["x0", "x0"], ["colour"]),
    ([0], [0]), (np.array([0]), np.array([0])), ([True, False], [True, False]),
    (np.array([True, False]), np.array([True, False])),
])
def test_names_indices_and_masks_declare_the_same_column(on_array, on_table):
    colour, count, y = _frame()
    X = np.column_stack([colour, count]).astype(float)
    ref = BayesNetClassifier(**FAST, categorical_features=[0]).fit(X, y)
    got = BayesNetClassifier(**FAST, categorical_features=on_array).fit(X, y)
    assert got.attributes_[0].values == tuple(str(i) for i in range(1, 13))  # 1..12, not 1, 10, 11, 12, 2, ...
    assert got.attributes_[1].numeric
    assert same_estimates(got, ref)
    named = BayesNetClassifier(**FAST, categorical_features=on_table).fit(_table(colour, count, y))
    assert named.attributes_[0].values == got.attributes_[0].values
    assert same_estimates(named, ref)


def test_none_from_dtype_and_an_empty_list_declare_nothing():
    colour, count, y = _frame()
    t = _table(colour, count, y)
    base = BayesNetClassifier(**FAST).fit(t)
    for spec in (None, "from_dtype", []):
        clf = BayesNetClassifier(**FAST, categorical_features=spec).fit(t)
        assert clf.attributes_ == base.attributes_ and all(a.numeric for a in clf.attributes_)


def test_from_dtype_pandas_categoricals_and_arrow_dictionaries_are_nominal():
    pd = pytest.importorskip("pandas")
    colour, count, y = _frame()
    declared = BayesNetClassifier(**FAST, categorical_features=["colour"]).fit(_table(colour, count, y))
    df = pd.DataFrame({"colour": pd.Categorical(colour, categories=sorted(set(colour))), "count": count,
                       "class": y})
    by_pandas = BayesNetClassifier(**FAST, categorical_features="from_dtype").fit(df)
    t = _table(colour, count, y)
    t = t.set_column(0, "colour", pa.compute.dictionary_encode(pa.array(colour, pa.int64())))
    t = t.set_column(0, "colour", t.column(0).cast(pa.dictionary(pa.int32(), pa.int64())))
    by_arrow = BayesNetClassifier(**FAST, categorical_features="from_dtype").fit(t)
    assert by_pandas.attributes_[0].values == declared.attributes_[0].values
    assert same_estimates(by_pandas, declared)
    # an Arrow dictionary keeps its own order (of first appearance here), as without the parameter
    assert set(by_arrow.attributes_[0].values) == set(declared.attributes_[0].values)
    assert by_arrow.attributes_ == BayesNetClassifier(**FAST).fit(t).attributes_
    # fit(X, y) on a frame of features
    Xy = BayesNetClassifier(**FAST, categorical_features=["colour"]).fit(
        pd.DataFrame({"colour": colour, "count": count}), y)
    assert same_estimates(Xy, declared)


def test_declaring_text_boolean_nominal_columns_or_the_class_changes_nothing():
    ds = read_dataset(DATA / "weather.numeric.arff")
    same = declare_categorical(ds, ["outlook", "windy", ds.class_attribute.name])
    assert same is ds
    changed = declare_categorical(ds, ["humidity"])
    assert changed.attributes[2].values[:3] == ("65", "70", "75") and not changed.attributes[2].numeric
    assert changed.attributes[1].numeric and changed.numeric.shape == (14, 1)


def test_get_params_set_params_and_clone():
    clf = BayesNetClassifier(categorical_features=["a", "b"])
    assert clf.get_params()["categorical_features"] == ["a", "b"]
    assert clf.set_params(categorical_features=[1]).categorical_features == [1]
    assert "categorical_features=[1]" in repr(clf)
    sklearn = pytest.importorskip("sklearn.base")
    c = sklearn.clone(clf)
    assert c.categorical_features == [1] and c is not clf


# ------------------------------------------------------------------------------------------
# bad input: one line naming the column
# ------------------------------------------------------------------------------------------
def _one_line(exc) -> str:
    text = str(exc.value)
    assert "\n" not in text
    return text


def test_an_unknown_name_an_index_out_of_range_and_a_wrong_mask_are_one_line_errors():
    colour, count, y = _frame()
    t = _table(colour, count, y)
    with pytest.raises(ParameterError) as e:
        BayesNetClassifier(**FAST, categorical_features=["color"]).fit(t)
    assert _one_line(e).startswith("categorical_features names 'color', which is not an attribute of <table>; "
                                   "the attributes are 'colour', 'count'")
    with pytest.raises(ParameterError) as e:
        BayesNetClassifier(**FAST, categorical_features=[2]).fit(np.column_stack([colour, count]), y)
    assert _one_line(e) == ("categorical_features index 2 is out of range: <array> has 2 attribute(s), indices 0 to 1 "
                            "(the class not counted)")
    with pytest.raises(ParameterError) as e:
        BayesNetClassifier(**FAST, categorical_features=[True]).fit(t)
    assert "boolean mask of 1 value(s), but <table> has 2 attribute(s)" in _one_line(e)


@pytest.mark.parametrize("spec", ["colour", "auto", 3, [0, "colour"], [True, 1], [1.5], {"colour": 1}])
def test_what_is_not_a_form_is_refused_before_any_work(spec):
    with pytest.raises(ParameterError) as e:
        BayesNetClassifier(categorical_features=spec)._validate_params()
    assert _one_line(e).startswith("categorical_features must be None, 'from_dtype', a list of attribute names")
    with pytest.raises(ParameterError):
        check_categorical(spec)


def test_a_non_integer_value_and_too_many_values_name_the_column(monkeypatch):
    colour, count, y = _frame()
    X = np.column_stack([colour, count + 0.5])
    with pytest.raises(DataError) as e:
        BayesNetClassifier(**FAST, categorical_features=[1]).fit(X, y)
    assert _one_line(e).startswith("<array>: attribute 'x1' is declared categorical but has the non-integer value 0.5")
    monkeypatch.setattr(config, "MAX_CATEGORIES", 11)
    with pytest.raises(TooLargeError) as e:
        BayesNetClassifier(**FAST, categorical_features=["colour"]).fit(_table(colour, count, y))
    assert _one_line(e).startswith("<table>: attribute 'colour' is declared categorical but has 12 distinct values, "
                                   "more than the limit of 11")


# ------------------------------------------------------------------------------------------
# prediction: every type of value, unseen codes, the model file
# ------------------------------------------------------------------------------------------
def test_a_code_matches_as_an_int_a_float_or_text_and_an_unseen_code_is_missing(caplog):
    colour, count, y = _frame()
    clf = BayesNetClassifier(**FAST, categorical_features=["colour"]).fit(_table(colour, count, y))
    rows = [3, 12, 99, None]
    as_int = pa.table({"colour": pa.array(rows, pa.int64()), "count": pa.array([1, 2, 3, 4], pa.int64())})
    as_float = as_int.set_column(0, "colour", pa.array([3.0, 12.0, 99.0, None], pa.float64()))
    as_text = as_int.set_column(0, "colour", pa.array(["3", "12.0", "99", None], pa.string()))
    with caplog.at_level(logging.WARNING, logger="hdp_plugin"):
        p = clf.predict_proba(as_int)
    assert "1 value(s) of attribute 'colour' never seen in training ('99.0') are treated as missing" in caplog.text
    assert np.array_equal(p, clf.predict_proba(as_float))
    assert np.array_equal(p, clf.predict_proba(as_text))
    assert np.array_equal(p[2], p[3])  # unseen is missing, never an error
    arr = np.array([[3, 1], [12, 2], [99, 3], [np.nan, 4]])
    assert np.array_equal(p, clf.predict_proba(pa.Table.from_arrays([pa.array(arr[:, 0]), pa.array(arr[:, 1])],
                                                                     names=["colour", "count"])))


def test_the_model_file_round_trip_keeps_the_domain(tmp_path, breast):
    ds, _, csv = breast
    data = read_dataset(csv)
    clf = BayesNetClassifier(**FAST, categorical_features=list(coded(ds))).fit(data)
    path = save_model(clf, tmp_path / "m.hdpbnc")
    doc, _, _ = read_model_file(path)
    age = next(a for a in doc["members"][0]["attributes"] if a["name"] == "age")
    assert age == {"name": "age", "values": ["1", "2", "3", "4", "5", "6"], "numeric": False, "cut_points": None}
    assert "categorical_features" not in doc["params"]
    back = load_model(path)
    assert back.attributes_ == clf.attributes_
    assert np.array_equal(back.predict_proba(data), clf.predict_proba(data))


# ------------------------------------------------------------------------------------------
# streamed: the domain is the union of the batches, whatever their order and sizes
# ------------------------------------------------------------------------------------------
def _parts(table, d: Path, sizes) -> Path:
    d.mkdir()
    lo = 0
    for i, n in enumerate(sizes):
        pq.write_table(table.slice(lo, n), d / f"part-{i:03d}.parquet")
        lo += n
    return d


@pytest.mark.parametrize("params", [FAST, dict(structure="eskdb", n_members=2, k=1, iterations=20, random_state=4,
                                                 n_jobs=1)], ids=["kdb", "eskdb"])
def test_a_streamed_fit_is_the_in_memory_fit(tmp_path, params):
    colour, count, y = _frame(400, seed=2)
    colour[-3:] = [40, 41, 41]  # codes only the last batch has, above every other
    count[:5] = [0, 0, 7, 7, 7]
    t = _table(colour, count, y)
    ref = BayesNetClassifier(**params, categorical_features=["colour"]).fit(t)
    assert ref.attributes_[0].values[-2:] == ("40", "41")
    for k, (sizes, batch) in enumerate((([400], 64), ([1, 150, 249], 37), ([399, 1], 1000))):
        src = open_batches(_parts(t, tmp_path / f"p{k}", sizes), batch_rows=batch)
        got = BayesNetClassifier(**params, categorical_features=["colour"]).fit(src)
        assert got.attributes_ == ref.attributes_
        assert same_estimates(got, ref)
        if "members_" in ref.__dict__:
            for a, b in zip(got.members_, ref.members_, strict=True):
                assert a.attributes == b.attributes and np.array_equal(a.tables.log_probs, b.tables.log_probs)
    bad = open_batches(_parts(t, tmp_path / "bad", [200, 200]), batch_rows=64)
    with pytest.raises(ParameterError, match="^categorical_features names 'color', which is not an attribute"):
        BayesNetClassifier(**FAST, categorical_features=["color"]).fit(bad)
    floats = t.set_column(1, "count", pa.array(np.r_[count[:-1], 2.5], pa.float64()))
    with pytest.raises(DataError, match="attribute 'count' is declared categorical but has the non-integer value 2.5"):
        BayesNetClassifier(**FAST, categorical_features=[1]).fit(open_batches(_parts(floats, tmp_path / "f", [400])))


def test_streamed_breast_cancer_csv_is_the_arff_model(tmp_path, breast):
    ds, arff, csv = breast
    ref = BayesNetClassifier(**FAST).fit(read_dataset(arff))
    got = BayesNetClassifier(**FAST, categorical_features=list(coded(ds))).fit(open_batches(csv, batch_rows=50))
    assert got.attributes_ == ref.attributes_
    assert same_estimates(got, ref)


# ------------------------------------------------------------------------------------------
# the command line and a daemon job
# ------------------------------------------------------------------------------------------
def _cli(*args):
    return subprocess.run([sys.executable, "-m", "hdp_plugin", *map(str, args)], capture_output=True, text=True)


def test_train_and_evaluate_take_categorical(tmp_path, breast):
    ds, arff, csv = breast
    names = ",".join(coded(ds))
    model = tmp_path / "m.hdpbnc"
    done = _cli("train", csv, "-o", model, "-s", "kdb", "-k", "2", "-i", "40", "--seed", "3", "--categorical", names,
                "-q")
    assert done.returncode == 0, done.stderr
    ref = BayesNetClassifier(**FAST).fit(read_dataset(arff))
    got = load_model(model)
    assert got.attributes_ == ref.attributes_ and same_estimates(got, ref)
    # streamed, the same
    done = _cli("train", csv, "-o", tmp_path / "s.hdpbnc", "--stream", "-s", "kdb", "-k", "2", "-i", "40", "--seed",
                "3", "--categorical", names, "-q")
    assert done.returncode == 0, done.stderr
    assert same_estimates(load_model(tmp_path / "s.hdpbnc"), ref)
    # evaluate: the declared columns' domains are the whole file's, as the ARFF header declares them
    ev = [_cli("evaluate", f, "-s", "nb", "-e", "m-estimate", "--json", *extra)
          for f, extra in ((arff, ()), (csv, ("--categorical", names)))]
    assert all(r.returncode == 0 for r in ev), [r.stderr for r in ev]
    a, b = (json.loads(r.stdout)["results"][0] for r in ev)
    assert (a["rmse"], a["zero_one_loss"], a["log_loss"]) == (b["rmse"], b["zero_one_loss"], b["log_loss"])
    # errors: one line naming the column and the option
    for cmd in (["train", csv, "-o", tmp_path / "x.hdpbnc"], ["train", csv, "-o", tmp_path / "x.hdpbnc", "--stream"],
                ["evaluate", csv]):
        bad = _cli(*cmd, "-s", "nb", "--categorical", "age,agee")
        assert bad.returncode == 2
        assert bad.stderr.startswith("error: --categorical names 'agee', which is not an attribute of "), bad.stderr
        assert bad.stderr.count("\n") == 1
    bad = _cli("train", csv, "-o", tmp_path / "x.hdpbnc", "--categorical", "age,,menopause")
    assert bad.returncode == 2 and "--categorical must be a comma-separated list of attribute names" in bad.stderr
    for cmd in ("train", "evaluate"):
        assert "--categorical" in _cli(cmd, "--help").stdout


def test_a_daemon_job_declares_categorical_features(tmp_path, breast):
    from hdp_plugin.daemon import client
    from hdp_plugin.daemon import protocol as P

    ds, arff, csv = breast
    spool = tmp_path / "spool"
    names = list(coded(ds))
    job = dict(structure="kdb", k=2, iterations=40, seed=3, categorical_features=names)
    client.publish(spool, csv, job, name="declared")  # CSV: converted to Arrow IPC, integer columns kept
    publish = _cli("daemon", "submit", spool, csv, "--name", "unknown", "-s", "kdb", "--categorical", "age,agee", "-q")
    assert publish.returncode == 0, publish.stderr
    run = subprocess.run([sys.executable, "-m", "hdp_plugin", "daemon", "run", spool, "--poll", "0.05", "--idle-exit",
                          "0.5", "--max-cardinality", "10"], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    sp = P.Spool(spool)
    # tumor-size has 11 codes: declared, they count against the daemon's limit (10 here)
    err = json.loads((sp.job(P.FAILED, "declared") / P.ERROR_FILE).read_text())
    assert err["code"] == "too_large" and "attribute 'tumor-size' is declared categorical" in err["message"]
    err = json.loads((sp.job(P.FAILED, "unknown") / P.ERROR_FILE).read_text())
    assert err["code"] == "bad_job" and err["field"] == "categorical_features"
    assert err["message"].startswith("job.json: categorical_features names 'agee', which is not an attribute of ")
    client.publish(spool, csv, job, name="declared2")
    run = subprocess.run([sys.executable, "-m", "hdp_plugin", "daemon", "run", spool, "--poll", "0.05", "--idle-exit",
                          "0.5"], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    result = json.loads((sp.job(P.DONE, "declared2") / P.RESULT_FILE).read_text())
    assert result["job_settings"]["categorical_features"] == names
    got = load_model(sp.job(P.DONE, "declared2") / P.MODEL_FILE)
    ref = BayesNetClassifier(**FAST).fit(read_dataset(arff))
    assert got.attributes_ == ref.attributes_ and same_estimates(got, ref)


@pytest.mark.parametrize("value, message", [
    ("colour", "job.json: categorical_features must be None, 'from_dtype'"),
    ([1, "a"], "(not a mix of them)"),
    (3, "job.json: categorical_features must be a JSON array or string or null, got 3"),
])
def test_a_job_with_a_malformed_categorical_features_is_refused_naming_the_field(value, message):
    from hdp_plugin.daemon import protocol as P
    from hdp_plugin.errors import JobError

    with pytest.raises(JobError) as e:
        P.validate_job({"protocol": 1, "categorical_features": value})
    assert message in str(e.value) and e.value.field == "categorical_features"
    assert P.validate_job({"protocol": 1, "categorical_features": "from_dtype"})["categorical_features"] == "from_dtype"
    assert P.classifier_params(P.validate_job({"protocol": 1, "categorical_features": ["a"]}))[
        "categorical_features"] == ["a"]


def test_arrow_dictionary_columns_of_integers_read_as_nominal_without_a_declaration():
    t = pa.table({"c": pa.array([3, 1, 2, 1]).dictionary_encode(), "y": ["a", "b", "a", "b"]})
    assert from_arrow(t).attributes[0].values == ("3", "1", "2")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        declare_categorical(from_arrow(t), ["c"])
