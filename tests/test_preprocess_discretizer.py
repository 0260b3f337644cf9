"""The Discretizer, apply_cut_points and the label format: semantics, new data, errors."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from hdp_plugin.data.dataset import Attribute, Dataset, encode_codes
from hdp_plugin.errors import DataError, NotFittedError, ParameterError
from hdp_plugin.preprocess import (
    Discretizer,
    apply_cut_points,
    assign_bins,
    equal_frequency_cut_points,
    equal_width_cut_points,
    interval_labels,
    mdl_cut_points,
    weka_number,
)

GOLDEN = Path(__file__).parent / "golden" / "discretize"


def make_dataset(numeric: dict[str, np.ndarray], y, nominal: dict[str, tuple[tuple, np.ndarray]] | None = None,
                 source: str = "<test>") -> Dataset:
    """Numeric attributes first, then nominal ones ``name: (labels, codes)``; class values a, b, c..."""
    y = np.asarray(y, dtype=np.int32)
    n = y.shape[0]
    attributes, columns = [], []
    for name in numeric:
        attributes.append(Attribute(name, (), numeric=True))
        columns.append(np.zeros(n, dtype=np.int64))
    for name, (labels, codes) in (nominal or {}).items():
        attributes.append(Attribute(name, tuple(labels)))
        columns.append(np.asarray(codes))
    n_classes = max(int(y.max()) + 1, 2) if n else 2
    block = np.column_stack([np.asarray(v, dtype=np.float64) for v in numeric.values()]) if numeric else None
    return Dataset(attributes, Attribute("class", tuple("abcdefgh"[:n_classes])), encode_codes(columns, attributes),
                   y, block, source=source)


def separable(n: int = 60, seed: int = 0) -> Dataset:
    rng = np.random.default_rng(seed)
    x = rng.uniform(0, 10, n)
    y = (x > 5).astype(int)
    noise = rng.uniform(0, 1, n)
    colour = rng.integers(0, 3, n)
    colour[::7] = 3  # missing nominal values
    return make_dataset({"x": x, "noise": noise}, y, {"colour": (("r", "g", "b"), colour)})


# --- fit / transform ----------------------------------------------------------------------------
def test_mdl_fit_transform_makes_every_numeric_attribute_nominal():
    ds = separable()
    disc = Discretizer()
    out = disc.fit_transform(ds)
    assert out.is_categorical and out.numeric is None
    assert set(disc.cut_points_) == {0, 1}
    x_cut = disc.cut_points_[0]
    assert x_cut.shape == (1,) and 4.0 < x_cut[0] < 6.0
    assert disc.cut_points_[1].size == 0  # noise: no cut, a single value
    x_att, noise_att, colour_att = out.attributes
    assert x_att.numeric and x_att.cut_points == (x_cut[0],)
    assert x_att.values == (f"(-inf-{weka_number(x_cut[0])}]", f"({weka_number(x_cut[0])}-inf)")
    assert noise_att.values == ("All",) and noise_att.cut_points == ()
    np.testing.assert_array_equal(out.X[:, 0], (ds.numeric[:, 0] > x_cut[0]).astype(int))
    np.testing.assert_array_equal(out.X[:, 1], 0)
    # nominal attributes (and their missing codes) pass through untouched
    assert colour_att is ds.attributes[2]
    np.testing.assert_array_equal(out.X[:, 2], ds.X[:, 2])
    np.testing.assert_array_equal(out.y, ds.y)
    # the input is left alone
    assert ds.numeric is not None and ds.attributes[0].is_pending_numeric
    assert disc.attributes_ == out.attributes and disc.n_features_in_ == 3


def test_missing_values_are_ignored_when_fitting_and_stay_missing():
    ds = separable(80)
    values = ds.numeric.copy()
    values[::5, 0] = np.nan
    holed = make_dataset({"x": values[:, 0], "noise": values[:, 1]}, ds.y)
    out = Discretizer().fit_transform(holed)
    att = out.attributes[0]
    assert att.missing_code == len(att.values)
    np.testing.assert_array_equal(out.X[::5, 0], att.missing_code)
    assert np.all(out.X[np.arange(80) % 5 != 0, 0] < att.missing_code)
    expected = mdl_cut_points(values[:, 0], ds.y, 2)
    assert att.cut_points == tuple(expected)


@pytest.mark.parametrize("method", ["mdl", "equal-width", "equal-frequency"])
def test_rows_with_missing_class_are_not_used(method):
    ds = separable(100)
    x = np.concatenate([ds.numeric[:, 0], [-1000.0, 1000.0, 3.3]])
    noise = np.concatenate([ds.numeric[:, 1], [50.0, -50.0, 0.5]])
    y = np.concatenate([ds.y, [-1, -1, -1]])
    with_unlabelled = make_dataset({"x": x, "noise": noise}, y)
    a = Discretizer(method=method, bins=4).fit(make_dataset({"x": ds.numeric[:, 0], "noise": ds.numeric[:, 1]}, ds.y))
    b = Discretizer(method=method, bins=4).fit(with_unlabelled)
    for j in (0, 1):
        np.testing.assert_array_equal(a.cut_points_[j], b.cut_points_[j])
    # ... but they are transformed like any row
    out = b.transform(with_unlabelled)
    assert out.n_rows == 103 and out.X[100, 0] == 0 and out.X[101, 0] == len(out.attributes[0].values) - 1


def test_new_data_is_cut_with_the_stored_cut_points():
    train = separable(60, seed=1)
    disc = Discretizer(method="equal-width", bins=4).fit(train)
    cuts = disc.cut_points_[0]
    x_new = np.array([-100.0, cuts[0], np.nextafter(cuts[0], np.inf), cuts[-1], 1e9, np.nan])
    test = make_dataset({"x": x_new, "noise": np.zeros(6)}, [0, 1, 0, 1, 0, 1],
                        {"colour": (("r", "g", "b"), np.array([0, 1, 2, 3, 0, 1]))})
    out = disc.transform(test)
    # below the training range -> first bin, on a cut -> the lower bin, above -> last bin, NaN -> missing
    np.testing.assert_array_equal(out.X[:, 0], [0, 0, 1, 2, 3, 4])
    assert out.attributes[0].values == disc.attributes_[0].values
    # a fresh fit on the test data would give other cut points; transform must not refit
    assert Discretizer(method="equal-width", bins=4).fit(test).cut_points_[0].tolist() != cuts.tolist()


def test_apply_cut_points_from_stored_attributes_equals_transform():
    train, test = separable(80, seed=2), separable(40, seed=3)
    disc = Discretizer().fit(train)
    stored = list(disc.fit_transform(train).attributes)  # what a model file keeps
    a = apply_cut_points(test, stored)
    b = disc.transform(test)
    np.testing.assert_array_equal(a.X, b.X)
    assert a.attributes == b.attributes
    # nothing numeric left: the same dataset comes back
    assert apply_cut_points(a, stored) is a


def test_codes_use_a_wider_dtype_when_there_are_many_bins():
    x = np.arange(1000.0)
    ds = make_dataset({"x": x}, np.arange(1000) % 2)
    out = Discretizer(method="equal-width", bins=300).fit_transform(ds)
    assert len(out.attributes[0].values) == 300
    assert out.X.dtype == np.uint16
    np.testing.assert_array_equal(out.X[:, 0], assign_bins(x, out.attributes[0].cut_points))


def test_no_rows_gives_single_bin_attributes():
    ds = make_dataset({"x": np.array([1.0, 2.0])}, [-1, -1])
    for method in ("mdl", "equal-width", "equal-frequency"):
        out = Discretizer(method=method).fit_transform(ds)
        assert out.attributes[0].values == ("All",)
        np.testing.assert_array_equal(out.X[:, 0], [0, 0])


def test_method_none_accepts_nominal_data():
    ds = make_dataset({}, [0, 1, 0], {"c": (("u", "v"), np.array([0, 1, 2]))})
    disc = Discretizer(method="none").fit(ds)
    assert disc.cut_points_ == {}
    assert disc.transform(ds) is ds


# --- binning semantics --------------------------------------------------------------------------
def test_equal_width_semantics():
    np.testing.assert_array_equal(equal_width_cut_points(np.arange(11.0), 5), [2.0, 4.0, 6.0, 8.0])
    np.testing.assert_array_equal(equal_width_cut_points([3.0, np.nan, -1.0], 2), [1.0])
    assert equal_width_cut_points([2.0, 2.0, np.nan], 5).size == 0  # no range
    assert equal_width_cut_points([np.nan, np.nan], 5).size == 0
    assert equal_width_cut_points([0.0, 1.0], 1).size == 0
    # a value on a cut point belongs to the lower bin, as in Weka
    np.testing.assert_array_equal(assign_bins([0.0, 2.0, 2.5, 10.0], [2.0, 4.0, 6.0, 8.0]), [0, 0, 1, 4])


def test_equal_frequency_semantics():
    np.testing.assert_array_equal(equal_frequency_cut_points(np.arange(1.0, 101.0), 4), [25.5, 50.5, 75.5])
    # tied values never straddle a cut point; heavy ties give fewer bins
    cuts = equal_frequency_cut_points(np.repeat([1.0, 2.0, 3.0], [80, 10, 10]), 4)
    assert np.all(np.isin(cuts, [1.5, 2.5]))
    assert equal_frequency_cut_points(np.full(10, 7.0), 3).size == 0
    # missing values do not count
    np.testing.assert_array_equal(equal_frequency_cut_points([1.0, np.nan, 2.0, np.nan, 3.0, 4.0], 2), [2.5])


def test_assign_bins_missing_code():
    np.testing.assert_array_equal(assign_bins([np.nan, 0.0], []), [1, 0])
    np.testing.assert_array_equal(assign_bins([np.nan, 5.0, -5.0], [0.0]), [2, 1, 0])


# --- labels -------------------------------------------------------------------------------------
def test_labels_follow_weka():
    assert interval_labels([]) == ("All",)
    assert interval_labels([0.5]) == ("(-inf-0.5]", "(0.5-inf)")
    assert interval_labels([-1.25, 3.0, 1234.5678901]) == (
        "(-inf--1.25]", "(-1.25-3]", "(3-1234.56789]", "(1234.56789-inf)")


def test_labels_that_would_collide_get_more_digits():
    labels = interval_labels([1.0000001, 1.0000002])
    assert len(set(labels)) == 3
    assert labels == ("(-inf-1.0000001]", "(1.0000001-1.0000002]", "(1.0000002-inf)")


def test_weka_number_matches_weka_on_awkward_numbers():
    golden = json.loads((GOLDEN / "weka_numbers.json").read_text(encoding="utf-8"))
    checked = 0
    for hex_value, weka in golden["numbers"]:
        x = float.fromhex(hex_value)
        if abs(x) < 1e16:  # beyond, Java 17's Double.toString digits are not the shortest ones
            assert weka_number(x) == weka, (x, weka)
            checked += 1
    assert checked > 1000


def test_weka_number_special_values():
    assert weka_number(float("nan")) == "NaN"
    assert weka_number(float("inf")) == "Infinity" and weka_number(-float("inf")) == "-Infinity"


# --- errors -------------------------------------------------------------------------------------
def test_method_none_with_numeric_data_names_the_attribute():
    ds = separable()
    with pytest.raises(ParameterError, match=r"attribute 'x' is numeric; discretization 'none' needs nominal data"):
        Discretizer(method="none").fit(ds)


def test_unknown_method_names_the_option_and_the_choices():
    with pytest.raises(ParameterError) as err:
        Discretizer(method="kmeans").fit(separable())
    message = str(err.value)
    assert "discretization method" in message and "'kmeans'" in message
    for allowed in ("'mdl'", "'equal-frequency'", "'equal-width'", "'none'"):
        assert allowed in message


@pytest.mark.parametrize("bins", [0, -3, 2.5, "10", True])
def test_bad_bins(bins):
    with pytest.raises(ParameterError, match=r"bins must be an integer >= 1, got"):
        Discretizer(method="equal-width", bins=bins).fit(separable())


def test_transform_before_fit():
    with pytest.raises(NotFittedError):
        Discretizer().transform(separable())


def test_apply_cut_points_mismatches():
    train = separable()
    stored = Discretizer().fit(train).attributes_
    with pytest.raises(DataError, match="has 2 attribute"):
        apply_cut_points(make_dataset({"x": [1.0], "noise": [2.0]}, [0], source="new.arff"), stored)
    renamed = make_dataset({"z": [1.0], "noise": [2.0]}, [0], {"colour": (("r", "g", "b"), np.array([0]))})
    with pytest.raises(DataError, match="attribute 1 is 'z', the training data had 'x'"):
        apply_cut_points(renamed, stored)
    nominal_in_training = [Attribute("x", ("lo", "hi")), *stored[1:]]
    with pytest.raises(DataError, match="'x' is numeric here but was nominal in training"):
        apply_cut_points(train, nominal_in_training)
    never_cut = [Attribute("x", (), numeric=True), *stored[1:]]
    with pytest.raises(DataError, match="'x' has no cut points"):
        apply_cut_points(train, never_cut)


def test_mdl_cut_points_argument_checks():
    with pytest.raises(ParameterError, match="shape"):
        mdl_cut_points(np.zeros(3), np.zeros(4, int), 2)
    with pytest.raises(ParameterError, match="class codes must be < n_classes=2, got 2"):
        mdl_cut_points(np.zeros(3), np.array([0, 1, 2]), 2)
    with pytest.raises(ParameterError, match="one-dimensional"):
        mdl_cut_points(np.zeros((3, 2)), np.zeros(3, int), 2)
    with pytest.raises(ParameterError, match="n_classes must be an integer >= 1"):
        mdl_cut_points(np.zeros(3), np.zeros(3, int), 0)


def test_class_codes_out_of_range_are_a_data_error():
    ds = separable()
    bad = Dataset(ds.attributes, ds.class_attribute, ds.X, np.where(ds.y == 1, 5, 0), ds.numeric, source="bad.arff")
    with pytest.raises(DataError, match="bad.arff: class code 5 is out of range for 2 class value"):
        Discretizer().fit(bad)


def test_weka_number_short_path_equals_the_decimal_one():
    # weka_number returns a double's shortest digits as they are when no rounding is needed and rounds
    # them as strings otherwise (carries included, ties decided on the exact value); the Decimal path must agree
    # on such numbers and on every other magnitude and precision
    from hdp_plugin.preprocess.labels import _weka_number_rounded

    rng = np.random.default_rng(3)
    xs = np.concatenate([rng.normal(0, 10.0 ** rng.integers(-8, 12, 4000)),
                         np.round(rng.normal(0, 1000, 4000) * 10.0 ** (d := rng.integers(0, 8, 4000))) / 10.0 ** d,
                         (rng.integers(-10**6, 10**6, 2000) + 0.5) / 10.0 ** rng.integers(0, 7, 2000),
                         (rng.integers(-10**9, 10**9, 2000) * 2 + 1) / 2.0 ** rng.integers(1, 40, 2000),
                         # midpoints of numbers with 6 and 4 decimals (cut points): ties at the next digit
                         ((a := rng.integers(0, 10**6, 3000)) + a + rng.integers(1, 1000, 3000)) / 2e6,
                         -((b := rng.integers(0, 10**4, 3000)) + b + rng.integers(1, 1000, 3000)) / 2e4,
                         [0.0, -0.0, 2.0, -1e-9, 1e15, 123456.5, 0.0000005, 1e-7, 9.9999995, -9.99999951,
                          0.99999999, 99.9999996, -0.0000004, -0.0000006, 0.00012345678, 1234.5678905]])
    for precision in (6, 3, 9, 0):
        for x in xs:
            assert weka_number(x, precision) == _weka_number_rounded(float(x), precision), (x, precision)
