"""conform (new data on the training attributes), read_conformed and check_trainable."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from hdp_plugin import config
from hdp_plugin.data import (
    Attribute, check_trainable, conform, from_arrays, from_arrow, read_conformed, read_dataset,
)
from hdp_plugin.errors import DataError

DATA = Path(__file__).parent / "data"

TRAIN_ATTRS = [
    Attribute("colour", ("red", "green", "blue")),
    Attribute("size", (), numeric=True),
    Attribute("weight", ("(-inf-2.5]", "(2.5-inf)"), numeric=True, cut_points=(2.5,)),  # discretised
    Attribute("code", ("1", "2", "3")),
]
TRAIN_CLASS = Attribute("label", ("yes", "no"))


def warned(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]


def test_conform_matches_by_name_and_remaps_labels(caplog):
    table = pa.table({
        "extra": [1, 2, 3, 4],
        "weight": [1.0, 3.0, None, 2.5],
        "label": ["no", "yes", "maybe", None],
        "colour": ["blue", "red", "purple", None],  # sorted labels differ from training
        "code": [3, 1, 7, None],  # read as numbers; training labels are text
        "size": ["1.5", "x", None, "4"],  # read as text; training attribute is numeric
    })
    new = from_arrow(table, class_attribute="extra")  # the class choice does not matter
    ds = conform(new, TRAIN_ATTRS, TRAIN_CLASS)
    messages = warned(caplog)
    assert len(messages) == 4
    assert any("1 value(s) of attribute 'colour' never seen in training ('purple')" in m for m in messages)
    assert any("1 value(s) of attribute 'code' never seen in training ('7.0')" in m for m in messages)
    assert any("1 value(s) of numeric attribute 'size' are not numbers ('x')" in m for m in messages)
    assert any("1 value(s) of the class 'label' never seen in training ('maybe')" in m for m in messages)
    assert ds.names == ["colour", "size", "weight", "code"]
    assert ds.attributes[0] is TRAIN_ATTRS[0] and ds.attributes[3] is TRAIN_ATTRS[3]
    # numeric in training, discretised or not: raw and pending, for the discretiser's apply
    assert ds.attributes[1].is_pending_numeric and ds.attributes[2].is_pending_numeric
    assert ds.attributes[2].cut_points is None
    np.testing.assert_array_equal(ds.X[:, 0], [2, 0, 3, 3])
    np.testing.assert_array_equal(ds.X[:, 3], [2, 0, 3, 3])
    np.testing.assert_array_equal(ds.numeric, [[1.5, 1.0], [np.nan, 3.0], [np.nan, np.nan], [4.0, 2.5]])
    np.testing.assert_array_equal(ds.y, [1, 0, -1, -1])
    assert ds.class_attribute is TRAIN_CLASS
    assert ds.X.flags.c_contiguous and ds.X.dtype == np.uint8


def test_conform_missing_attributes_and_absent_class():
    new = from_arrow(pa.table({"colour": ["red"], "code": ["1"]}))
    with pytest.raises(DataError, match=r"<table>: missing attribute\(s\) the model needs: 'size', 'weight'"):
        conform(new, TRAIN_ATTRS, TRAIN_CLASS)
    new = from_arrow(pa.table({"size": [1.0], "weight": [2.0], "code": ["1"], "colour": ["red"]}))
    ds = conform(new, TRAIN_ATTRS, TRAIN_CLASS)
    np.testing.assert_array_equal(ds.y, [-1])


def test_conform_test_file_with_other_label_order():
    train = read_dataset(DATA / "segment-challenge.arff")
    test = read_dataset(DATA / "segment-test.arff")
    ds = conform(test, train.attributes, train.class_attribute)
    np.testing.assert_array_equal(ds.y, test.y)  # same class declaration
    np.testing.assert_array_equal(ds.numeric, test.numeric)
    # the same data as CSV: sorted class labels, remapped back to the training order
    vote = read_dataset(DATA / "vote.arff")
    table = pa.table({a.name: [a.values[c] if c < len(a.values) else None for c in vote.X[:, j]]
                      for j, a in enumerate(vote.attributes)} | {"Class": [vote.class_values[c] for c in vote.y]})
    as_csv = from_arrow(table)
    assert as_csv.class_values == ("democrat", "republican")
    back = conform(as_csv, vote.attributes, vote.class_attribute)
    np.testing.assert_array_equal(back.X, vote.X)
    np.testing.assert_array_equal(back.y, vote.y)


def test_conform_numpy_by_position(caplog):
    attrs = [Attribute("a", ("u", "v")), Attribute("b", (), numeric=True)]
    cls = Attribute("k", ("0", "1"))
    X = np.array([["v", 2.0], ["u", 3.0], ["w", None]], dtype=object)
    ds = conform(from_arrays(X), attrs, cls)
    assert warned(caplog) == ["<array>: 1 value(s) of attribute 'a' never seen in training ('w') are treated as missing"]
    np.testing.assert_array_equal(ds.X[:, 0], [1, 0, 2])
    np.testing.assert_array_equal(ds.numeric[:, 0], [2.0, 3.0, np.nan])
    np.testing.assert_array_equal(ds.y, [-1, -1, -1])
    pq = [Attribute("p", (), numeric=True), Attribute("q", (), numeric=True)]
    ds = conform(from_arrays(np.array([[0.0, 1.0]]), [1]), pq, cls)  # labels 0/1 as y
    np.testing.assert_array_equal(ds.y, [1])
    with pytest.raises(DataError, match=r"<array>: expected 2 columns, got 3"):
        conform(from_arrays(np.zeros((2, 3))), attrs, cls)
    # named NumPy data is matched by name
    ds = conform(from_arrays(np.array([[5.0, 1]]), feature_names=["b", "a"]), [Attribute("a", ("1",)), attrs[1]], cls)
    np.testing.assert_array_equal(ds.X[:, 0], [0])
    np.testing.assert_array_equal(ds.numeric[:, 0], [5.0])


def test_read_conformed_without_a_class_column(tmp_path, caplog):
    p = tmp_path / "new.csv"
    p.write_text("code,colour,weight,size\n2,green,1.0,3.5\n9,red,4.0,?\n")
    ds = read_conformed(p, TRAIN_ATTRS, TRAIN_CLASS)
    assert "attribute 'code' never seen in training ('9.0')" in warned(caplog)[0]
    np.testing.assert_array_equal(ds.X[:, 0], [1, 0])
    np.testing.assert_array_equal(ds.X[:, 3], [1, 3])
    np.testing.assert_array_equal(ds.numeric, [[3.5, 1.0], [np.nan, 4.0]])
    np.testing.assert_array_equal(ds.y, [-1, -1])
    with pytest.raises(DataError, match="class attribute 'size' .* is numeric"):
        read_dataset(p)  # why read_conformed exists
    arff = tmp_path / "new.arff"
    arff.write_text("@relation n\n@attribute colour {red,green,blue}\n@attribute size numeric\n"
                    "@attribute weight numeric\n@attribute code {1,2,3}\n@attribute label {no,yes}\n@data\n"
                    "blue,1,2,3,yes\n")
    ds = read_conformed(arff, TRAIN_ATTRS, TRAIN_CLASS)
    np.testing.assert_array_equal(ds.X, [[2, 0, 0, 2]])
    np.testing.assert_array_equal(ds.y, [0])


def _ids(n: int) -> object:
    ids = [f"id{i}" for i in range(n)]
    return from_arrays(np.array([ids, ["a", "b"] * (n // 2)], dtype=object).T, ["p", "q"] * (n // 2),
                       feature_names=["row_id", "group"])


def test_check_trainable_warns_about_id_columns():
    n = config.ID_COLUMN_MIN_ROWS
    with pytest.warns(UserWarning, match=r"attribute 'row_id' in <array> looks like a row identifier "
                                         rf"\({n} distinct values in {n} rows\).*remove the column from the data"):
        out = check_trainable(_ids(n))
    assert len(out) == 1 and "row_id" in out[0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert check_trainable(_ids(n - 2)) == []  # too few rows to judge
        assert check_trainable(read_dataset(DATA / "credit-g.arff")) == []


def test_check_trainable_errors():
    ds = from_arrays(np.zeros((3, 1)), [None, None, None])
    with pytest.raises(DataError, match="class 'class' has no observed values in <array>"):
        check_trainable(ds)
    with pytest.raises(DataError, match="class 'class' has only one observed value 'a' in <array>"):
        check_trainable(from_arrays(np.zeros((3, 1)), ["a", "a", None]))
    with pytest.raises(DataError, match="<array>: no data rows"):
        check_trainable(from_arrays(np.zeros((0, 1)), np.array([], dtype=object)))
