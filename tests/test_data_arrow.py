"""Arrow, IPC, Parquet, CSV, pandas and NumPy input; round trips through every format."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.csv as pa_csv
import pyarrow.feather as feather
import pyarrow.parquet as pq
import pytest

from hdp_plugin.data import conform, from_arrays, from_arrow, from_pandas, read_dataset, to_arrow
from hdp_plugin.errors import DataError

DATA = Path(__file__).parent / "data"
ROUND_TRIP = ["labor", "credit-g", "soybean", "breast-cancer", "iris", "weather.numeric"]


def _write_stream(table: pa.Table, path: Path) -> None:
    with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_stream(sink, table.schema) as w:
        w.write_table(table, max_chunksize=100)  # several batches


def _write_ipc_file(table: pa.Table, path: Path) -> None:
    with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, table.schema) as w:
        w.write_table(table, max_chunksize=100)


@pytest.mark.parametrize("name", ROUND_TRIP)
def test_round_trip_through_every_format(tmp_path, name, caplog):
    ref = read_dataset(DATA / f"{name}.arff")
    table = to_arrow(ref)
    assert table.column_names[-1] == ref.class_attribute.name

    # Arrow keeps dictionaries exactly: the same codes, label order included
    _write_ipc_file(table, tmp_path / "d.arrow")
    _write_stream(table, tmp_path / "d.ipc")
    feather.write_feather(table, tmp_path / "d.feather")
    for f in ("d.arrow", "d.ipc", "d.feather"):
        got = read_dataset(tmp_path / f)
        assert got.equals(ref)
        assert got.relation == "d"
    assert from_arrow(table).equals(ref)

    # Parquet and CSV may reorder labels (CSV sorts them, and guesses types): conform restores the codes
    pq.write_table(table, tmp_path / "d.parquet")
    pa_csv.write_csv(table, tmp_path / "d.csv")
    for f in ("d.parquet", "d.csv"):
        got = read_dataset(tmp_path / f)
        assert got.n_rows == ref.n_rows
        caplog.clear()
        back = conform(got, ref.attributes, ref.class_attribute)
        assert not caplog.records  # no label of the round trip may be unknown
        np.testing.assert_array_equal(back.X, ref.X)
        np.testing.assert_array_equal(back.y, ref.y)
        np.testing.assert_array_equal(back.numeric, ref.numeric)


def test_ipc_file_and_stream_are_told_apart(tmp_path):
    table = pa.table({"a": ["x", "y", None], "c": ["p", "q", "p"]})
    _write_ipc_file(table, tmp_path / "file.arrow")
    _write_stream(table, tmp_path / "stream.arrow")
    a = read_dataset(tmp_path / "file.arrow")
    b = read_dataset(tmp_path / "stream.arrow")
    assert a.equals(b)
    np.testing.assert_array_equal(a.X[:, 0], [0, 1, 2])


def test_column_types():
    table = pa.table({
        "s": pa.array(["b", None, "a", "b"]),
        "ls": pa.array(["z", "y", "z", None], type=pa.large_string()),
        "d": pa.array(["lo", "hi", None, "lo"]).dictionary_encode(),
        "flag": pa.array([True, False, None, True]),
        "i": pa.array([1, None, 3, 4], type=pa.int16()),
        "f": pa.array([0.5, float("nan"), None, 2.0]),
        "t": pa.array([0, 1000, None, 5], type=pa.timestamp("s")),
        "day": pa.array([0, 1, None, 2], type=pa.date32()),
        "cls": pa.array(["yes", "no", "yes", None]),
    })
    ds = from_arrow(table)
    by = {a.name: (j, a) for j, a in enumerate(ds.attributes)}
    assert by["s"][1].values == ("a", "b")
    np.testing.assert_array_equal(ds.X[:, by["s"][0]], [1, 2, 0, 1])
    assert by["ls"][1].values == ("y", "z")
    assert by["d"][1].values == ("lo", "hi")  # dictionary order kept
    np.testing.assert_array_equal(ds.X[:, by["d"][0]], [0, 1, 2, 0])
    assert by["flag"][1].values == ("false", "true")
    np.testing.assert_array_equal(ds.X[:, by["flag"][0]], [1, 0, 2, 1])
    assert [a.name for a in ds.attributes if a.numeric] == ["i", "f", "t", "day"]
    np.testing.assert_array_equal(ds.numeric[:, 0], [1, np.nan, 3, 4])
    np.testing.assert_array_equal(ds.numeric[:, 1], [0.5, np.nan, np.nan, 2.0])
    np.testing.assert_array_equal(ds.numeric[:, 2], [0, 1_000_000, np.nan, 5000])
    np.testing.assert_array_equal(ds.numeric[:, 3], [0, 86_400_000, np.nan, 172_800_000])
    assert ds.class_values == ("no", "yes")
    np.testing.assert_array_equal(ds.y, [1, 0, 1, -1])


def test_chunked_dictionaries_are_unified():
    c1 = pa.array(["b", "a"]).dictionary_encode()
    c2 = pa.array(["c", "b"]).dictionary_encode()
    table = pa.table({"d": pa.chunked_array([c1, c2]), "cls": ["p", "q", "p", "q"]})
    ds = from_arrow(table)
    assert ds.attributes[0].values == ("b", "a", "c")
    np.testing.assert_array_equal(ds.X[:, 0], [0, 1, 2, 0])


def test_class_rules_for_columnar_sources(tmp_path):
    table = pa.table({"x": [1.0, 2.0, 3.0], "label": [2, 10, None], "price": [1.5, 2.5, 3.5]})
    ds = from_arrow(table, class_attribute="label")  # integers: nominal, sorted numerically
    assert ds.class_values == ("2", "10")
    np.testing.assert_array_equal(ds.y, [0, 1, -1])
    with pytest.raises(DataError, match="class attribute 'price' in <table> is numeric"):
        from_arrow(table)
    with pytest.raises(DataError, match=r"class attribute 'nope' not found in <table>; available: 'x', 'label', 'price'"):
        from_arrow(table, class_attribute="nope")
    with pytest.raises(DataError, match="unsupported type list"):
        from_arrow(pa.table({"l": [[1], [2]], "c": ["a", "b"]}))


def test_csv_reading(tmp_path):
    p = tmp_path / "d.csv"
    p.write_text("colour,size,ok,label\nred,1.5,true,1\nblue,?,false,0\n,2,,1\nred,NA,true,\n")
    ds = read_dataset(p)
    assert ds.attributes[0].values == ("blue", "red")
    np.testing.assert_array_equal(ds.X[:, 0], [1, 0, 2, 1])
    assert ds.attributes[1].is_pending_numeric
    np.testing.assert_array_equal(ds.numeric[:, 0], [1.5, np.nan, 2, np.nan])
    assert ds.attributes[2].values == ("false", "true")
    assert ds.class_values == ("0", "1")
    np.testing.assert_array_equal(ds.y, [1, 0, 1, -1])
    assert read_dataset(p, class_attribute="colour").class_values == ("blue", "red")


def test_from_pandas():
    df = pd.DataFrame({
        "cat": pd.Categorical(["lo", "hi", None], categories=["lo", "mid", "hi"]),
        "obj": ["b", None, "a"],
        "mixed": [1, "x", None],
        "num": [1, 2, 3],
        "flt": [0.5, np.nan, 1.0],
        "nullable": pd.array([1, None, 3], dtype="Int64"),
        "y": ["p", "q", "p"],
    }, index=[10, 20, 30])
    ds = from_pandas(df)
    assert ds.attributes[0].values == ("lo", "mid", "hi")
    np.testing.assert_array_equal(ds.X[:, 0], [0, 2, 3])
    assert ds.attributes[1].values == ("a", "b")
    np.testing.assert_array_equal(ds.X[:, 1], [1, 2, 0])
    assert ds.attributes[2].values == ("1", "x")
    np.testing.assert_array_equal(ds.numeric, [[1, 0.5, 1], [2, np.nan, np.nan], [3, 1.0, 3]])
    assert ds.class_values == ("p", "q")
    assert from_pandas(df, class_attribute="obj").class_values == ("a", "b")


def test_from_arrays_numeric_and_nominal():
    X = np.array([[1.0, 2.0], [np.nan, 4.0], [5.0, 6.0]])
    ds = from_arrays(X, ["b", "a", "b"])
    assert ds.names == ["x0", "x1"] and ds.class_attribute.name == "class"
    assert all(a.is_pending_numeric for a in ds.attributes)
    np.testing.assert_array_equal(ds.numeric, X)
    assert ds.class_values == ("a", "b")
    np.testing.assert_array_equal(ds.y, [1, 0, 1])

    Xo = np.array([["u", True], [None, False], ["v", True]], dtype=object)
    ds = from_arrays(Xo, np.array([3, 10, 3]), feature_names=["s", "flag"], class_name="k")
    assert ds.names == ["s", "flag"] and ds.class_attribute.name == "k"
    assert ds.attributes[0].values == ("u", "v")
    np.testing.assert_array_equal(ds.X[:, 0], [0, 2, 1])
    assert ds.attributes[1].values == ("false", "true")
    assert ds.class_values == ("3", "10")

    ds = from_arrays(np.array([[True], [False]]), np.array([True, False]))
    assert ds.attributes[0].values == ("false", "true") and ds.class_values == ("false", "true")
    ds = from_arrays(np.array([["a"], ["b"]]), [1.5, np.nan])
    assert ds.class_values == ("1.5",)
    np.testing.assert_array_equal(ds.y, [0, -1])


def test_from_arrays_without_labels():
    ds = from_arrays(np.zeros((4, 3), dtype=np.int64))
    assert ds.class_values == () and (ds.y == -1).all() and ds.numeric.shape == (4, 3)


def test_from_arrays_errors():
    with pytest.raises(DataError, match=r"X must be a 2-D array .* got shape \(3,\)"):
        from_arrays(np.zeros(3))
    with pytest.raises(DataError, match=r"y must have one label per row of X \(3\), got shape \(2,\)"):
        from_arrays(np.zeros((3, 2)), [1, 2])
    with pytest.raises(DataError, match="feature_names has 1 names but X has 2 columns"):
        from_arrays(np.zeros((3, 2)), feature_names=["a"])
    with pytest.raises(DataError, match="duplicate column name"):
        from_arrays(np.zeros((3, 2)), feature_names=["a", "a"])
