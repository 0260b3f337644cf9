"""ESKDB: stochastic MDL cut points, sampled attribute orders, and the ensemble classifier."""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import numpy as np
import pytest

from hdp_plugin import BayesNetClassifier, config, read_dataset
from hdp_plugin import seeds as _seeds
from hdp_plugin.errors import ParameterError
from hdp_plugin.hdp.rng import tree_states
from hdp_plugin.hdp.sampler import sample
from hdp_plugin.hdp.tables import ProbabilityTables
from hdp_plugin.preprocess import mdl_cut_points
from hdp_plugin.preprocess.stochastic import SortedColumn, _weights, stochastic_mdl_cut_points
from hdp_plugin.seeds.xoshiro import uniform
from hdp_plugin.structure.eskdb import sampled_order
from reference import member_trees, same_tables

HERE = Path(__file__).parent
DIABETES = HERE.parent / "examples" / "diabetes.arff"
VOTE = HERE.parent / "examples" / "vote.arff"


# -- stochastic MDL ---------------------------------------------------------------------------
def state(s: int) -> np.ndarray:
    """A generator state of its own for the seed ``s`` (stream 0 of it)."""
    return _seeds.stream_states(np.random.SeedSequence(s), [0])[0]


def _h(counts):
    n = sum(counts)
    return -sum(c / n * math.log2(c / n) for c in counts if c) if n else 0.0


def ref_weights(values, classes, C, margin=True):
    """Every candidate's MDL margin (or information gain), written out from the definition."""
    n = len(values)
    prior = [sum(1 for c in classes if c == k) for k in range(C)]
    cands = [i for i in range(n - 1) if values[i] < values[i + 1]]
    out = []
    for i in cands:
        left = [sum(1 for c in classes[: i + 1] if c == k) for k in range(C)]
        right = [p - q for p, q in zip(prior, left)]
        n1, n2 = i + 1, n - i - 1
        gain = _h(prior) - n1 / n * _h(left) - n2 / n * _h(right)
        if not margin:
            out.append(max(gain, 0.0))
            continue
        k, k1, k2 = (sum(1 for c in x if c) for x in (prior, left, right))
        delta = math.log2(3**k - 2) - (k * _h(prior) - k1 * _h(left) - k2 * _h(right))
        out.append(max(gain - (math.log2(len(cands)) + delta) / n, 0.0))
    return cands, out


@pytest.mark.parametrize("seed", range(5))
def test_weights_follow_the_definition(seed):
    rng = np.random.default_rng(seed)
    values = np.sort(rng.integers(0, 12, 60).astype(float))
    y = ((values > 5) ^ (rng.random(60) < 0.2)).astype(np.int64) + (rng.random(60) < 0.1)
    col = SortedColumn(values, y, 3)
    from hdp_plugin.preprocess.stochastic import _candidates

    idx, left, right, prior = _candidates(col, 0, len(col.values))
    cands, ref = ref_weights(list(col.values), list(col.classes), 3)
    assert list(idx) == cands
    np.testing.assert_allclose(_weights(left, right, prior, len(col.values), True), ref, atol=1e-12)
    _, ref_gain = ref_weights(list(col.values), list(col.classes), 3, margin=False)
    np.testing.assert_allclose(_weights(left, right, prior, len(col.values), False), ref_gain, atol=1e-12)


@pytest.mark.parametrize("n_classes", [2, 3, 8, 9, 26, 140])
def test_the_kernel_gives_the_numpy_definition_bit_for_bit(n_classes):
    """The kernel that draws the cuts computes every candidate's margin and gain as the NumPy
    expressions of the rule do, to the last bit (the sum over the classes taken left to right, with many
    classes too), on random ranges with ties."""
    from hdp_plugin.preprocess.kernels import stochastic_range_weights, xlogx_table
    from hdp_plugin.preprocess.stochastic import _candidates

    rng = np.random.default_rng(n_classes)
    compared = 0
    for _ in range(150):
        n = int(rng.integers(2, 600))
        values = np.round(rng.normal(size=n) * rng.choice([1.0, 5.0, 50.0]))
        col = SortedColumn(values, rng.integers(0, n_classes, size=n), n_classes)
        first = int(rng.integers(0, n - 1))
        last = int(rng.integers(first + 2, n + 1))
        at, margin, gain = np.empty(n, np.int64), np.empty(n), np.empty(n)
        m = stochastic_range_weights(col.values, col.classes, n_classes, first, last, at, margin, gain,
                                     xlogx_table(n))
        idx, left, right, prior = _candidates(col, first, last)
        if idx.shape[0] == 0 or np.count_nonzero(prior) < 2:
            assert m == 0
            continue
        compared += 1
        assert m == idx.shape[0] and np.array_equal(at[:m], idx)
        assert np.array_equal(margin[:m], _weights(left, right, prior, last - first, True))
        assert np.array_equal(gain[:m], _weights(left, right, prior, last - first, False))
    assert compared > 50


def test_first_cut_is_drawn_in_proportion_to_the_margin():
    """Over many seeds the top-level cut lands on each candidate as often as its weight says."""
    rng = np.random.default_rng(0)
    values = np.repeat(np.arange(8.0), 25)
    y = (rng.random(200) < np.repeat(np.linspace(0.05, 0.95, 8), 25)).astype(np.int64)
    col = SortedColumn(values, y, 2)
    cands, w = ref_weights(list(col.values), list(col.classes), 2)
    w = np.array(w)
    assert (w > 0).sum() >= 3  # a real choice
    mids = [(col.values[i] + col.values[i + 1]) / 2 for i in cands]
    hits = np.zeros(len(cands))
    draws = 3000
    for s in range(draws):
        # the first cut drawn is the first uniform's pick: replay it with the same stream
        u = uniform(state(s))
        cum = np.cumsum(w)
        first = int(np.searchsorted(cum, u * cum[-1], side="right"))
        cuts = stochastic_mdl_cut_points(col, state(s))
        assert mids[first] in cuts
        hits[first] += 1
    expected = w / w.sum() * draws
    chi2 = (((hits - expected) ** 2 / np.where(expected > 0, expected, 1))[expected > 0]).sum()
    assert chi2 < 30 and hits[w == 0].sum() == 0


def test_an_attribute_with_information_always_gets_a_cut():
    """Plain MDL keeps a small attribute whole; the stochastic rule still draws one cut by gain."""
    values = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    y = np.array([0, 0, 1, 0, 1, 1])
    assert mdl_cut_points(values, y, 2).size == 0
    col = SortedColumn(values, y, 2)
    for s in range(20):
        cuts = stochastic_mdl_cut_points(col, state(s))
        assert cuts.size == 1 and cuts[0] in (1.5, 2.5, 3.5, 4.5, 5.5)


def test_no_information_no_cut():
    col = SortedColumn(np.arange(10.0), np.zeros(10, np.int64), 2)  # one class
    assert stochastic_mdl_cut_points(col, state(0)).size == 0
    col = SortedColumn(np.full(10, 3.0), np.arange(10) % 2, 2)  # one distinct value
    assert stochastic_mdl_cut_points(col, state(0)).size == 0


def test_missing_values_and_unknown_classes_are_left_out():
    values = np.array([1.0, np.nan, 2.0, 3.0, 10.0, 11.0, 12.0, np.nan])
    y = np.array([0, 1, 0, 0, 1, 1, -1, 0])
    col = SortedColumn(values, y, 2)
    assert list(col.values) == [1.0, 2.0, 3.0, 10.0, 11.0]


# -- sampled orders ---------------------------------------------------------------------------
def test_member_zero_is_the_mi_order_without_uninformative_attributes():
    mi = np.array([0.1, 0.0, 0.3, 0.1, 0.0, 0.2])
    assert list(sampled_order(mi, None)) == [2, 5, 0, 3]


def test_sampled_orders_are_plackett_luce_in_the_mi():
    mi = np.array([0.5, 0.0, 0.3, 0.2])
    firsts = np.zeros(4)
    seconds_after_0 = np.zeros(4)
    n = 20000
    rng = np.random.default_rng(1)
    for _ in range(n):
        o = sampled_order(mi, rng)
        assert sorted(o) == [0, 2, 3]
        firsts[o[0]] += 1
        if o[0] == 0:
            seconds_after_0[o[1]] += 1
    np.testing.assert_allclose(firsts / n, mi / mi.sum(), atol=0.015)
    # after 0 is drawn, 2 comes next with probability 0.3 / (0.3 + 0.2)
    assert abs(seconds_after_0[2] / seconds_after_0.sum() - 0.6) < 0.02


# -- the ensemble -----------------------------------------------------------------------------
@pytest.fixture(scope="module")
def diabetes():
    return read_dataset(DIABETES)


def eskdb(**kw):
    params = dict(structure="eskdb", n_members=4, k=2, iterations=60, random_state=3, n_jobs=1)
    params.update(kw)
    return BayesNetClassifier(**params)


def test_same_seed_same_ensemble_whatever_the_threads(diabetes):
    a = eskdb(n_jobs=1).fit(diabetes)
    b = eskdb(n_jobs=2).fit(diabetes)
    np.testing.assert_array_equal(a.predict_proba(diabetes), b.predict_proba(diabetes))
    for ma, mb in zip(a.members_, b.members_):
        assert ma.seed == mb.seed and ma.attributes == mb.attributes and ma.structure == mb.structure
        np.testing.assert_array_equal(ma.tables.log_probs, mb.tables.log_probs)
    c = eskdb(random_state=4).fit(diabetes)
    assert not np.array_equal(a.predict_proba(diabetes), c.predict_proba(diabetes))


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_members_that_code_the_rows_alike_share_one_count(monkeypatch, diabetes, n_jobs):
    """On nominal data every member codes the rows alike and differs by its order only: the counts
    are made once and shared (the same model as counting for each); numeric data is counted per member."""
    from hdp_plugin.model import rows

    calls = []
    real = rows.count_statistics
    monkeypatch.setattr(rows, "count_statistics", lambda *a, **k: calls.append(1) or real(*a, **k))
    vote = read_dataset(VOTE)
    shared = eskdb(n_members=5, n_jobs=n_jobs).fit(vote)
    assert len(calls) <= n_jobs  # once, or once per thread that found no counts yet
    calls.clear()
    eskdb(n_members=5, n_jobs=n_jobs).fit(diabetes)
    assert len(calls) == 5
    monkeypatch.setattr(rows.MemoryRows, "counted", lambda self, attributes, cards, pairs, count: count())
    alone = eskdb(n_members=5, n_jobs=n_jobs).fit(vote)
    np.testing.assert_array_equal(shared.predict_proba(vote), alone.predict_proba(vote))
    for ma, mb in zip(shared.members_, alone.members_):
        assert ma.structure == mb.structure


def test_members_differ_in_cut_points_and_orders(diabetes):
    clf = eskdb(n_members=6).fit(diabetes)
    cuts = {tuple(a.cut_points) for mb in clf.members_ for a in mb.attributes[1:2]}
    assert len(cuts) > 1
    orders = [mb.structure.order for mb in clf.members_]
    assert len(set(orders)) > 1
    assert clf.members_[0].structure.info["order_kind"] == "mi"
    assert all(mb.structure.info["order_kind"] == "sampled" for mb in clf.members_[1:])
    assert [mb.seed["spawn_key"] for mb in clf.members_] == [[_seeds.MEMBER, e] for e in range(6)]
    assert clf.discretization_ == "stochastic-gain"


def test_prediction_is_the_mean_of_the_members(diabetes):
    clf = eskdb().fit(diabetes)
    single = []
    for mb in clf.members_:
        from hdp_plugin.hdp.tables import predict_log_proba
        from hdp_plugin.preprocess import apply_cut_points

        single.append(np.exp(predict_log_proba(mb.tables, apply_cut_points(diabetes, mb.attributes).X)))
    np.testing.assert_allclose(clf.predict_proba(diabetes), np.mean(single, axis=0), rtol=1e-12)
    np.testing.assert_allclose(clf.predict_proba(diabetes).sum(axis=1), 1.0, rtol=1e-12)


def test_sampling_members_together_equals_sampling_each_alone(diabetes):
    """One shared sampler run gives each member exactly the tables of its own run."""
    clf = eskdb(n_members=3).fit(diabetes)
    for mb in clf.members_:
        seed = np.random.SeedSequence(mb.seed["entropy"], spawn_key=tuple(mb.seed["spawn_key"]))
        trees = member_trees(mb, diabetes)
        alone = sample(trees, iterations=60, random_state=tree_states(_seeds.child(seed), trees.n_trees))
        tables = ProbabilityTables.from_sampler(trees, alone.cells, alone.probabilities, mb.tables.log_prior)
        same_tables(tables, mb.tables)


def test_one_member_with_mdl_and_m_estimates_is_skdb():
    vote = read_dataset(VOTE)
    one = BayesNetClassifier(structure="eskdb", n_members=1, discretization="mdl", estimator="m-estimate").fit(vote)
    skdb = BayesNetClassifier(structure="skdb", estimator="m-estimate").fit(vote)
    assert one.structure_.kept == skdb.structure_.kept and one.structure_.parents == skdb.structure_.parents
    np.testing.assert_allclose(one.predict_proba(vote), skdb.predict_proba(vote), rtol=1e-12)


def test_hdp_members_are_selected_with_hierarchical_m_estimates():
    """An ESKDB with HDP tables scores its members' (n*, k*) with hierarchical m-estimates
    (config.HDP_SELECTION_M); with m-estimate tables, and a single SkDB, with the published flat ones.
    On vote (nominal: the members of both ensembles have the same orders for one seed) the two
    scores select differently."""

    vote = read_dataset(VOTE)
    hdp = BayesNetClassifier(structure="eskdb", n_members=5, random_state=0, iterations=20).fit(vote)
    mest = BayesNetClassifier(structure="eskdb", n_members=5, estimator="m-estimate", random_state=0).fit(vote)
    single = BayesNetClassifier(structure="skdb", random_state=0, iterations=20).fit(vote)
    for mb in hdp.members_:
        assert mb.structure.info["hierarchical"] is True and mb.structure.info["m"] == config.HDP_SELECTION_M
    for st in [mb.structure for mb in mest.members_] + [single.structure_]:
        assert "hierarchical" not in st.info and st.info["m"] == 1.0
    assert [mb.structure.order for mb in hdp.members_] == [mb.structure.order for mb in mest.members_]
    assert [(mb.structure.kept, mb.structure.k) for mb in hdp.members_] != \
        [(mb.structure.kept, mb.structure.k) for mb in mest.members_]


def test_uninformative_data_is_the_class_prior_said_once():
    rng = np.random.default_rng(0)
    grid = np.array(np.meshgrid(*[np.arange(3)] * 3, indexing="ij")).reshape(3, -1).T
    X, y = grid[:, 1:], grid[:, 0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        clf = BayesNetClassifier(structure="eskdb", n_members=3, iterations=20, random_state=0).fit(X, y)
    msgs = [w for w in clf.fit_info_["warnings"] if "every MI is 0" in w]
    assert len(msgs) == 1
    assert all(mb.structure.kept == () for mb in clf.members_)
    np.testing.assert_allclose(clf.predict_proba(X[rng.permutation(len(X))]), 1 / 3, rtol=1e-12)


@pytest.mark.parametrize("bad", [0, 1001, -3, 2.5, True, "20"])
def test_bad_n_members_is_refused_naming_the_parameter(bad, diabetes):
    with pytest.raises(ParameterError, match=r"^n_members must be an integer from 1 to 1000; got"):
        eskdb(n_members=bad).fit(diabetes)


def test_stochastic_mdl_for_a_single_network_is_seeded(diabetes):
    a = BayesNetClassifier(structure="kdb", k=1, iterations=30, discretization="stochastic-mdl", random_state=5).fit(diabetes)
    b = BayesNetClassifier(structure="kdb", k=1, iterations=30, discretization="stochastic-mdl", random_state=5).fit(diabetes)
    assert a.attributes_ == b.attributes_
    np.testing.assert_array_equal(a.predict_proba(diabetes), b.predict_proba(diabetes))
    mdl = BayesNetClassifier(structure="kdb", k=1, iterations=30, random_state=5).fit(diabetes)
    assert mdl.discretization_ == "mdl" and a.attributes_ != mdl.attributes_


# -- the model file ---------------------------------------------------------------------------
@pytest.mark.parametrize("estimator", ["hdp", "m-estimate"])
def test_an_ensemble_round_trips_through_a_model_file(tmp_path, diabetes, estimator):
    from hdp_plugin import load_model
    from hdp_plugin.model.modelfile import read_model_file, save_model

    clf = eskdb(estimator=estimator).fit(diabetes)
    path = save_model(clf, tmp_path / "e.hdpbnc")
    doc, _, batches = read_model_file(path)
    assert doc["format_version"] == [4, 0] and len(doc["members"]) == 4
    assert "structure" not in doc and "attributes" not in doc  # every network lives in its member
    assert len(batches) == sum(len(m["trees"]) for m in doc["members"])
    for part, mb in zip(doc["members"], clf.members_):
        assert part["seed"] == mb.seed and part["weight"] == 0.25
        assert [a["cut_points"] for a in part["attributes"]] == [
            None if a.cut_points is None else list(a.cut_points) for a in mb.attributes]
        assert part["structure"]["order"] == list(mb.structure.order)
        assert part["structure"]["k"] == mb.structure.k and part["structure"]["kept"] == list(mb.structure.kept)
    back = load_model(path)
    np.testing.assert_array_equal(back.predict_proba(diabetes), clf.predict_proba(diabetes))
    assert back.n_members == 4 and back.discretization_ == "stochastic-gain"
    # writing the loaded model again gives the same bytes
    again = save_model(back, tmp_path / "again.hdpbnc")
    assert again.read_bytes() == path.read_bytes()


def test_a_single_network_is_a_list_of_one_member(tmp_path):
    from hdp_plugin.errors import EnsembleAttributeError
    from hdp_plugin.model.modelfile import read_model, read_model_file, save_model

    vote = read_dataset(VOTE)
    clf = BayesNetClassifier(structure="skdb", iterations=20, random_state=0).fit(vote)
    assert len(clf.members_) == 1 and clf.members_[0].weight == 1.0
    assert clf.structure_ is clf.members_[0].structure and clf.tables_ is clf.members_[0].tables
    path = save_model(clf, tmp_path / "one.hdpbnc")
    doc, _, _ = read_model_file(path)
    assert len(doc["members"]) == 1 and doc["members"][0]["weight"] == 1.0 and "n_members" not in doc["params"]
    assert not read_model(path).ensemble
    ensemble = eskdb(n_members=2, iterations=20).fit(vote)
    for name in ("structure_", "tables_", "cardinalities_", "parents_"):
        with pytest.raises(EnsembleAttributeError, match=rf"^{name} is an attribute of one network, and this model "
                                                         r"is an ensemble of 2 members: use members_\[e\]"):
            getattr(ensemble, name)
        assert not hasattr(ensemble, name)  # an AttributeError: getattr(model, name, None) works
    with pytest.raises(AttributeError):
        BayesNetClassifier().structure_  # not fitted


def test_members_asked_of_another_structure_are_ignored_with_a_warning():
    vote = read_dataset(VOTE)
    with pytest.warns(UserWarning, match=r"^n_members=5 is ignored: it is the number of members of an ESKDB"):
        clf = BayesNetClassifier(structure="nb", n_members=5, estimator="m-estimate").fit(vote)
    assert len(clf.members_) == 1 and any("n_members=5" in w for w in clf.fit_info_["warnings"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        BayesNetClassifier(structure="nb", estimator="m-estimate").fit(vote)  # the default: no warning


def test_a_selection_that_keeps_nothing_is_not_called_uninformative():
    """Informative attributes (MI > 0) that no member selects: the prior, said as such."""
    X = np.array([[0], [1], [0], [1], [1], [0]])
    y = np.array([0, 0, 1, 1, 1, 0])  # MI > 0, but leaving one row out never beats the prior
    clf = BayesNetClassifier(structure="eskdb", n_members=2, estimator="m-estimate", random_state=0).fit(X, y)
    assert all(not mb.structure.kept and mb.structure.mi[0] > 0 for mb in clf.members_)
    assert [w for w in clf.fit_info_["warnings"] if "class prior" in w] == [
        "no member's leave-one-out selection kept an attribute (none beat the class prior): the ensemble is the "
        "class prior"]


def test_evaluate_reports_an_ensembles_k_and_members(tmp_path):
    import csv
    import io

    from typer.testing import CliRunner

    from hdp_plugin.cli import commands as cli

    result = CliRunner().invoke(cli.app, ["evaluate", str(DIABETES), "-s", "eskdb", "--members", "3", "-k", "2",
                                          "-i", "20", "-e", "m-estimate", "--csv"])
    assert result.exit_code == 0, result.output
    (row,) = list(csv.DictReader(io.StringIO(result.stdout)))
    assert row["structure"] == "eskdb" and row["k"] == "2" and row["n_members"] == "3"
