"""BayesNetClassifier: the scikit-learn contract, inputs, back-off and accuracy on real data."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from hdp_plugin import config
from hdp_plugin import BayesNetClassifier, read_dataset
from hdp_plugin.errors import DataError, NotFittedError, ParameterError
from hdp_plugin.model.evaluation import cross_validate, log_loss, rmse, zero_one_loss
from reference import same_estimates

DATA = Path(__file__).parent / "data"


@pytest.fixture(scope="module")
def vote():
    return read_dataset(DATA / "vote.arff")


@pytest.mark.parametrize("structure", ["nb", "tan", "kdb", "skdb"])
@pytest.mark.parametrize("estimator", ["hdp", "m-estimate", "laplace", "mle"])
def test_every_structure_and_estimator_fits_and_predicts(vote, structure, estimator):
    clf = BayesNetClassifier(structure=structure, k=2, estimator=estimator, iterations=60,
                             random_state=0).fit(vote)
    proba = clf.predict_proba(vote)
    assert proba.shape == (vote.n_rows, 2)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    assert list(clf.classes_) == ["democrat", "republican"]
    assert clf.n_features_in_ == 16
    assert clf.score(vote) > 0.85
    assert set(clf.parents_) <= set(vote.names)
    for child, ps in clf.parents_.items():
        assert len(ps) <= {"nb": 0, "tan": 1}.get(structure, 2)


def test_numeric_data_is_discretised_and_cut_points_kept():
    data = read_dataset(DATA / "diabetes.arff")
    clf = BayesNetClassifier(structure="kdb", k=2, iterations=100, random_state=0).fit(data)
    assert all(a.numeric and a.cut_points is not None for a in clf.attributes_)
    assert clf.score(data) > 0.7


def test_same_seed_same_model_whatever_the_threads(vote):
    a = BayesNetClassifier(structure="kdb", k=3, iterations=200, random_state=7, n_jobs=1).fit(vote)
    b = BayesNetClassifier(structure="kdb", k=3, iterations=200, random_state=7, n_jobs=2).fit(vote)
    assert same_estimates(a, b)
    assert np.array_equal(a.predict_proba(vote), b.predict_proba(vote))


def test_numpy_input_with_labels_and_column_count_check():
    rng = np.random.default_rng(0)
    X = rng.integers(0, 3, size=(300, 4)).astype(object).astype(str)
    y = np.where(X[:, 0] == X[:, 1], "same", "diff")
    clf = BayesNetClassifier(structure="kdb", k=2, iterations=100, random_state=0).fit(X, y)
    assert set(clf.classes_) == {"diff", "same"}
    assert clf.score(X, y) > 0.9
    with pytest.raises(DataError, match="X has 3 features, but BayesNetClassifier is expecting 4"):
        clf.predict(X[:, :3])


def test_unseen_and_missing_values_back_off(vote):
    clf = BayesNetClassifier(structure="kdb", k=2, iterations=100, random_state=0).fit(vote.take(np.arange(200)))
    X = vote.take(np.arange(200, 230))
    # every attribute missing: only the class prior is left
    Xm = X.take(np.arange(30))
    Xm.X[:] = np.array([a.missing_code for a in Xm.attributes], dtype=Xm.X.dtype)
    p = clf.predict_proba(Xm)
    assert np.isfinite(p).all()
    np.testing.assert_allclose(p.sum(axis=1), 1.0)


def test_not_fitted_and_bad_parameters(vote):
    with pytest.raises(NotFittedError):
        BayesNetClassifier().predict(vote)
    with pytest.raises(ParameterError, match="structure"):
        BayesNetClassifier(structure="bn").fit(vote)
    with pytest.raises(ParameterError, match="k must be"):
        BayesNetClassifier(structure="kdb", k=-1).fit(vote)
    with pytest.raises(ParameterError, match="burn_in"):
        BayesNetClassifier(iterations=10, burn_in=20).fit(vote)


def test_metrics_match_their_definitions():
    p = np.array([[0.7, 0.3], [0.2, 0.8], [0.5, 0.5]])
    y = np.array([0, 0, 1])
    assert rmse(p, y) == pytest.approx(np.sqrt((0.09 * 2 + 0.64 * 2 + 0.25 * 2) / 6))
    assert zero_one_loss(p, y) == pytest.approx(2 / 3)  # tie: the first maximum (class 0) is wrong
    assert log_loss(p, y) == pytest.approx(-(np.log(0.7) + np.log(0.2) + np.log(0.5)) / 3)


def test_pipeline_and_cross_val_score():
    pytest.importorskip("sklearn")
    from sklearn.model_selection import cross_val_score
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import FunctionTransformer
    from sklearn.datasets import load_iris

    X, y = load_iris(return_X_y=True)
    pipe = make_pipeline(FunctionTransformer(), BayesNetClassifier(structure="kdb", k=1, iterations=100, random_state=0))
    scores = cross_val_score(pipe, X, y, cv=3)
    assert scores.mean() > 0.85


@pytest.mark.parametrize(
    "name,k,iterations",
    [("soybean.arff", 3, 1000), ("segment-challenge.arff", 3, 1000)],
)
def test_hdp_beats_m_estimate_on_real_data(name, k, iterations):
    data = read_dataset(DATA / name)
    hdp = cross_validate(lambda: BayesNetClassifier(structure="kdb", k=k, iterations=iterations, random_state=1), data, seed=3)
    mest = cross_validate(lambda: BayesNetClassifier(structure="kdb", k=k, estimator="m-estimate"), data, seed=3)
    assert hdp.rmse < mest.rmse, (hdp.rmse, mest.rmse)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["soybean.arff", "segment-challenge.arff"])
@pytest.mark.parametrize("k", [3, 5])
def test_hdp_beats_m_estimate_on_real_data_full(name, k):
    # vote is left out on purpose: there the published implementation's HDP also loses to the
    # m-estimate (docs/method.md section 8: 0.2255 against 0.2246 for kDB-5), and so does ours.
    data = read_dataset(DATA / name)
    hdp = cross_validate(lambda: BayesNetClassifier(structure="kdb", k=k, iterations=5000, random_state=1), data, seed=3)
    mest = cross_validate(lambda: BayesNetClassifier(structure="kdb", k=k, estimator="m-estimate"), data, seed=3)
    assert hdp.rmse < mest.rmse, (hdp.rmse, mest.rmse)


@pytest.mark.parametrize("params", [dict(structure="kdb", iterations=100), dict(structure="eskdb", n_members=3, iterations=50)],
                         ids=["kdb", "eskdb-3"])
def test_scikit_learn_check_estimator(params):
    """Every check of scikit-learn's check_estimator, on cheap explicit configurations: a single kDB-5 and
    a 3-member ESKDB-5 (the ensemble's code paths). The default estimator (20 members, auto iterations)
    gets the checks below, which cost a fraction of the full set."""
    pytest.importorskip("sklearn")
    import warnings

    from sklearn.utils.estimator_checks import check_estimator

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = check_estimator(BayesNetClassifier(random_state=0, **params), on_fail=None)
    failed = [(r["check_name"], str(r["exception"])[:300]) for r in results if r["status"] == "failed"]
    assert len(results) > 40
    assert failed == []


def test_scikit_learn_checks_on_the_default_estimator():
    """The default BayesNetClassifier() (ESKDB-5 x20, auto iterations) through the scikit-learn checks that
    fit it: parameters kept as given (iterations stays None), clone, training and prediction, repeated fits,
    pickling, feature counts. Not the full check_estimator (the cheap configurations above get it)."""
    pytest.importorskip("sklearn")
    import warnings

    from sklearn.utils import estimator_checks as ec

    names = ["check_get_params_invariance", "check_set_params", "check_parameters_default_constructible",
             "check_no_attributes_set_in_init", "check_do_not_raise_errors_in_init_or_set_params",
             "check_classifiers_train", "check_fit_idempotent", "check_estimators_pickle",
             "check_n_features_in", "check_classifiers_classes",
             "check_fit_check_is_fitted"]
    clf = BayesNetClassifier(random_state=0)
    assert clf.get_params()["iterations"] is None and clf.get_params()["structure"] == "eskdb"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in names:
            check = getattr(ec, name)
            check(type(clf).__name__, clf)


def test_import_is_light():
    import subprocess
    import sys

    code = "import sys, hdp_plugin; print(sorted(m for m in ('sklearn', 'pandas') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_pandas_and_arrow_inputs_give_the_same_model(vote):
    pytest.importorskip("pandas")
    from hdp_plugin.data import to_arrow

    table = to_arrow(vote)
    df = table.to_pandas()
    a = BayesNetClassifier(structure="kdb", k=2, iterations=80, random_state=3).fit(vote)
    b = BayesNetClassifier(structure="kdb", k=2, iterations=80, random_state=3).fit(table)
    c = BayesNetClassifier(structure="kdb", k=2, iterations=80, random_state=3).fit(df)
    np.testing.assert_array_equal(a.predict_proba(vote), b.predict_proba(table))
    np.testing.assert_array_equal(a.predict_proba(vote), c.predict_proba(df.drop(columns=["Class"])))
    assert list(b.feature_names_in_) == vote.names
    X = df.drop(columns=["Class"])
    d = BayesNetClassifier(structure="kdb", k=2, iterations=80, random_state=3).fit(X, df["Class"])
    assert d.score(X, df["Class"]) == pytest.approx(a.score(vote))


def test_dataframe_with_mixed_columns_matched_by_name():
    pytest.importorskip("pandas")
    data = read_dataset(DATA / "labor.arff")  # numeric and nominal attributes, many missing values
    from hdp_plugin.data import to_arrow

    df = to_arrow(data).to_pandas()
    X, y = df.drop(columns=[data.class_attribute.name]), df[data.class_attribute.name]
    clf = BayesNetClassifier(structure="kdb", k=1, iterations=60, random_state=0).fit(X, y)
    assert list(clf.feature_names_in_) == list(X.columns)
    assert [a.numeric for a in clf.attributes_] == [a.numeric for a in data.attributes]
    p = clf.predict_proba(X)
    shuffled = X[list(reversed(X.columns))]  # columns are matched by name, not position
    np.testing.assert_array_equal(p, clf.predict_proba(shuffled))
    with pytest.raises(DataError, match="missing attribute"):
        clf.predict(X.drop(columns=[X.columns[0]]))


def test_progress_is_reported_and_can_cancel_a_fit():
    from hdp_plugin.errors import Cancelled

    vote = read_dataset(Path(__file__).parent / "data" / "vote.arff")
    seen = []
    BayesNetClassifier(structure="kdb", k=1, iterations=200, random_state=0).fit(vote, progress=lambda d, t: seen.append((d, t)))
    assert seen and seen[-1] == (200, 200) and all(t == 200 for _, t in seen)
    with pytest.raises(Cancelled, match="cancelled after"):
        BayesNetClassifier(structure="kdb", k=1, iterations=200, random_state=0).fit(vote, progress=lambda d, t: False)
    with pytest.raises(Cancelled):  # an ensemble's members sample in the same run
        BayesNetClassifier(structure="eskdb", n_members=2, iterations=200).fit(vote, progress=lambda d, t: False)


def test_a_fit_gives_numpy_no_huge_page_advice_and_restores_its_setting():
    """While a fit runs (its threads included) numpy advises no transparent huge pages for new arrays
    (hdp_plugin.runtime.pages); afterwards numpy's own setting is back, whatever it was, and the model
    is the one a fit with numpy's advice on gives."""
    from hdp_plugin.runtime import pages

    if pages._SET is None:
        pytest.skip("this numpy has no huge-page switch")

    def advising() -> bool:
        now = pages._SET(False)
        pages._SET(now)
        return bool(now)

    vote = read_dataset(DATA / "vote.arff")
    seen = []

    def progress(done, total):
        seen.append(advising())
        return True

    before = advising()
    try:
        for setting in (True, False):
            pages._SET(setting)
            seen.clear()
            clf = BayesNetClassifier(n_members=3, k=2, random_state=0).fit(vote, progress=progress)
            assert seen and not any(seen) and advising() is setting
            with pages.no_huge_page_advice():  # nested, as fits on several threads are
                with pages.no_huge_page_advice():
                    assert not advising()
                assert not advising()
            assert advising() is setting
        pages._SET(True)
        with_advice = BayesNetClassifier(n_members=3, k=2, random_state=0)
        assert np.array_equal(clf.predict_proba(vote), with_advice.fit(vote).predict_proba(vote))
    finally:
        pages._SET(before)


def test_auto_iterations_are_recorded_as_the_number_the_sampler_ran(tmp_path):
    """iterations=None: at most 100 iterations for an ESKDB ensemble (checked at 25 and 50), 25 once the
    training rows average 100 or more per class, and for a single network every tree stops once its
    tables have converged, at most 5000; the most any tree ran is recorded in fit_info_ and in the model
    file (whose loaded classifier then has the number), with every tree's count; explicit values run
    every tree that long."""
    from hdp_plugin.hdp.sampler import convergence_checks
    from hdp_plugin.params import convergence_first_check

    from hdp_plugin import load_model, save_model
    from hdp_plugin.model.modelfile import read_model_file

    dense = read_dataset(DATA / "vote.arff")  # 435 rows, 2 classes
    data = dense.take(np.arange(150))  # 75 rows per class
    cases = [(dict(structure="eskdb", n_members=2, k=2), 100), (dict(structure="kdb", k=2), 5000),
             (dict(structure="eskdb", n_members=2, k=1, iterations=40), 40), (dict(structure="kdb", iterations=40), 40)]
    clf = BayesNetClassifier(random_state=0, structure="eskdb", n_members=2, k=2).fit(dense)
    assert clf.fit_info_["iterations"] == 25 and set(clf.fit_info_["tree_iterations"]) == {25}
    for params, cap in cases:
        clf = BayesNetClassifier(random_state=0, **params).fit(data)
        info = clf.fit_info_
        assert clf.get_params()["iterations"] == params.get("iterations")  # as given: None stays None
        ran = info["iterations"]
        if "iterations" in params:
            assert ran == cap and "tree_iterations" not in info, params
        else:
            its = info["tree_iterations"]
            assert its.shape == (sum(m.tables.n_trees for m in clf.members_),)
            checks = convergence_checks(cap, None, convergence_first_check(params["structure"]))
            assert checks == ([25, 50] if params["structure"] == "eskdb" else [500, 1000, 2000, 4000]), checks
            assert set(its) <= set(checks) | {cap} and ran == its.max() <= cap, (params, its)
            assert its.min() < cap, "some of vote's trees converge before the cap"
            assert info["tolerance"] == config.CONVERGENCE_TOLERANCE
        assert info["n_samples"] == ran - min(1000, ran // 10), params
        path = save_model(clf, tmp_path / "m.hdpbnc")
        again = load_model(path)
        assert again.iterations == ran, params
        doc = read_model_file(path)[0]
        assert doc["params"]["iterations"] == doc["estimator"]["iterations"] == ran, params
        if "iterations" not in params:
            assert doc["estimator"]["tree_iterations"] == [int(v) for v in info["tree_iterations"]]
            np.testing.assert_array_equal(again.predict_proba(data), clf.predict_proba(data))


def test_the_defaults_are_eskdb_of_twenty_members_at_auto_iterations():
    """BayesNetClassifier() end to end: ESKDB-5 x20, auto iterations (at most 100), stochastic-gain cut points."""
    data = read_dataset(DATA / "diabetes.arff")
    clf = BayesNetClassifier(random_state=0).fit(data)
    assert (clf.structure, clf.k, clf.n_members, clf.estimator) == ("eskdb", 5, 20, "hdp")
    info = clf.fit_info_
    assert len(clf.members_) == 20 and info["iterations"] == info["tree_iterations"].max() <= 1000
    assert info["burn_in"] == min(1000, info["iterations"] // 10)
    assert clf.discretization_ == "stochastic-gain"
    cuts = {tuple(tuple(a.cut_points or ()) for a in m.attributes) for m in clf.members_}
    assert len(cuts) > 1  # each member draws its own cut points
    np.testing.assert_allclose(clf.predict_proba(data).sum(axis=1), 1.0)
