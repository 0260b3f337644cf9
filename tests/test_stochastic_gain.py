"""The "stochastic-gain" discretisation: the ensemble's default."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from hdp_plugin import BayesNetClassifier, read_dataset
from hdp_plugin import seeds as _seeds
from hdp_plugin.errors import ParameterError
from hdp_plugin.preprocess import Discretizer, mdl_cut_points
from hdp_plugin.preprocess.stochastic import (
    SortedColumn,
    _weights,
    gain_min_cuts,
    stochastic_gain_cut_points,
    stochastic_gain_reference,
)
from hdp_plugin.seeds.xoshiro import uniform

HERE = Path(__file__).parent
DIABETES = HERE.parent / "examples" / "diabetes.arff"


def state(s: int) -> np.ndarray:
    """A generator state of its own for the seed ``s`` (stream 0 of it)."""
    return _seeds.stream_states(np.random.SeedSequence(s), [0])[0]


def test_every_informative_attribute_gets_at_least_two_cuts():
    """Plain MDL keeps this attribute whole; the margin rule gives it one cut; this rule two."""
    values = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    y = np.array([0, 0, 1, 0, 1, 1])
    assert mdl_cut_points(values, y, 2).size == 0
    col = SortedColumn(values, y, 2)
    for s in range(20):
        cuts = stochastic_gain_cut_points(col, state(s))
        assert cuts.size == 2 and set(cuts) <= {1.5, 2.5, 3.5, 4.5, 5.5} and cuts[0] < cuts[1]


@pytest.mark.parametrize("classes, fewest", [(2, 2), (3, 2), (4, 3), (5, 4), (7, 4), (26, 4)])
def test_more_classes_more_cuts_up_to_four(classes, fewest):
    """At least max(2, min(c - 1, 4)) cuts for the c classes present, where candidates gain anything;
    a class declared but absent from the rows does not count."""
    rng = np.random.default_rng(classes)
    values = np.arange(300.0)
    y = np.sort(rng.integers(0, classes, 300)).astype(np.int64)  # classes in bands: many informative cuts
    col = SortedColumn(values, y, classes + 3)  # three declared classes that no row has
    assert gain_min_cuts(col) == fewest
    for s in range(10):
        assert stochastic_gain_cut_points(col, state(s)).size >= fewest
    # few distinct values: as many cuts as there are boundaries, no more
    small = SortedColumn(np.array([1.0, 1.0, 2.0, 2.0, 3.0, 3.0]), np.array([0, 1, 2, 3, 4, 5]), 6)
    assert gain_min_cuts(small) == 4 and stochastic_gain_cut_points(small, state(0)).size == 2


def test_first_cut_is_drawn_in_proportion_to_the_gain():
    """The first uniform number of the stream picks the first cut on the cumulative plain gains."""
    rng = np.random.default_rng(11)
    values = np.arange(40.0)
    y = (rng.random(40) < np.linspace(0.1, 0.9, 40)).astype(np.int64)
    col = SortedColumn(values, y, 2)
    onehot = np.eye(2, dtype=np.int64)[y]
    left = np.cumsum(onehot, axis=0)[:-1]
    prior = onehot.sum(axis=0)
    cum = np.cumsum(_weights(left, prior[None, :] - left, prior, 40, margin=False))
    for s in range(50):
        u = uniform(state(s))
        first = min(int(np.searchsorted(cum, u * cum[-1], side="right")), 38) + 0.5
        assert first in stochastic_gain_cut_points(col, state(s), min_cuts=1)


def test_no_information_no_cut():
    col = SortedColumn(np.arange(10.0), np.zeros(10, np.int64), 2)
    assert stochastic_gain_cut_points(col, state(0)).size == 0
    col = SortedColumn(np.full(10, 3.0), np.arange(10) % 2, 2)
    assert stochastic_gain_cut_points(col, state(0)).size == 0


def test_it_is_the_ensembles_default_seeded_and_differs_from_the_stochastic_mdl():
    ds = read_dataset(DIABETES)
    params = dict(n_members=4, k=2, iterations=40, random_state=3, n_jobs=1)
    a = BayesNetClassifier(discretization="stochastic-gain", **params).fit(ds)
    b = BayesNetClassifier(**params).fit(ds)  # auto
    d = BayesNetClassifier(discretization="stochastic-mdl", **params).fit(ds)
    assert a.discretization_ == b.discretization_ == "stochastic-gain" and d.discretization_ == "stochastic-mdl"
    np.testing.assert_array_equal(a.predict_proba(ds), b.predict_proba(ds))
    assert not np.array_equal(a.predict_proba(ds), d.predict_proba(ds))
    for mb in a.members_:
        cuts = [len(x.cut_points) for x in mb.attributes if x.cut_points is not None and len(x.cut_points)]
        assert cuts and min(cuts) >= 2


def test_a_single_network_and_the_discretizer_take_it():
    ds = read_dataset(DIABETES)
    disc = Discretizer(method="stochastic-gain", random_state=5).fit(ds)
    again = Discretizer(method="stochastic-gain", random_state=5).fit(ds)
    assert all(np.array_equal(disc.cut_points_[j], again.cut_points_[j]) for j in disc.cut_points_)
    clf = BayesNetClassifier(structure="kdb", k=1, iterations=30, discretization="stochastic-gain",
                             random_state=5).fit(ds)
    assert clf.discretization_ == "stochastic-gain"


def test_an_unknown_method_is_still_refused():
    with pytest.raises(ParameterError):
        Discretizer(method="stochastic").fit(read_dataset(DIABETES))


@pytest.mark.parametrize("seed", range(30))
def test_the_kernel_is_the_python_rule_draw_for_draw(seed):
    """The same cut points and the same random stream consumed, on columns with ties, few and many
    distinct values, two to 140 classes and minimum cut counts of 1 to 5."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 400))
    C = int(rng.choice([2, 3, 7, 140]))
    values = np.round(rng.normal(size=n) * 10 ** rng.integers(0, 3), int(rng.integers(0, 3)))
    y = (rng.integers(0, C, n) if seed % 3 else (values > np.median(values)).astype(int) * (C - 1)).astype(np.int64)
    col = SortedColumn(values, y, C)
    for min_cuts in (1, 2, 5):
        a, b = state(seed + 1000), state(seed + 1000)
        np.testing.assert_array_equal(stochastic_gain_cut_points(col, a, min_cuts), stochastic_gain_reference(col, b, min_cuts))
        assert np.array_equal(a, b) and not np.array_equal(a, state(seed + 1000))  # as many draws taken
    a, b = state(seed + 2000), state(seed + 2000)  # the default minimum
    np.testing.assert_array_equal(stochastic_gain_cut_points(col, a), stochastic_gain_reference(col, b))
    assert np.array_equal(a, b)


def test_a_state_given_is_advanced_as_if_it_had_drawn_the_cuts_itself():
    """stochastic_gain_cut_points(col, state) draws on the state in place and leaves it where the
    reference (which draws one uniform per cut from Python) leaves it; anything but a state is refused."""
    rows = np.random.default_rng(3)
    values = rows.normal(size=300)
    col = SortedColumn(values, (values + rows.normal(scale=0.7, size=300) > 0).astype(np.int64), 2)
    for s in range(5):
        a, b = state(s), state(s)
        assert np.array_equal(stochastic_gain_cut_points(col, a), stochastic_gain_reference(col, b))
        assert uniform(a) == uniform(b)
    for bad in (np.random.default_rng(0), np.zeros(4, np.int64), np.zeros((1, 4), np.uint64)):
        with pytest.raises(TypeError, match=r"a \(4,\) uint64 array"):
            stochastic_gain_cut_points(col, bad)


def test_every_column_in_one_call_equals_column_by_column():
    """stochastic_cut_points draws all of a member's columns in one kernel call; each column's cuts are
    those of its own stream DISCRETIZE + j drawn on its own, for both rules."""
    from hdp_plugin.preprocess import sorted_numeric_columns, stochastic_cut_points
    from hdp_plugin.preprocess.stochastic import stochastic_mdl_cut_points

    ds = read_dataset(HERE / "data" / "labor.arff")  # numeric and nominal attributes, missing values
    cols = sorted_numeric_columns(ds)
    assert 3 <= len(cols) < ds.n_attributes
    for e in range(6):
        seed = _seeds.child(np.random.SeedSequence(e), _seeds.MEMBER, e)
        for method, draw in (("stochastic-gain", stochastic_gain_cut_points), ("stochastic-mdl", stochastic_mdl_cut_points)):
            got = stochastic_cut_points(cols, seed, method)
            assert list(got) == list(cols)
            for j, col in cols.items():
                assert np.array_equal(got[j], draw(col, _seeds.stream_states(seed, [_seeds.DISCRETIZE + j])[0])), (e, j)
    assert stochastic_cut_points({}, np.random.SeedSequence(0), "stochastic-gain") == {}
