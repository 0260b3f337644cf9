"""Discretisation against Weka itself: golden files written by Weka 3.8.6.

``tests/golden/discretize/<data>.json`` holds, for every numeric attribute, the cut points, value
labels and per-row bin codes of Weka's supervised MDL ``Discretize`` (defaults) and unsupervised
equal-width / equal-frequency ``Discretize -B 10 [-F]``. They are made by
``tools/weka/make_golden_discretize.sh``; no Java is needed here.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from hdp_plugin.data import Dataset, read_dataset
from hdp_plugin.preprocess import Discretizer, mdl_cut_points

HERE = Path(__file__).parent
GOLDEN = HERE / "golden" / "discretize"
DATASETS = ["diabetes", "segment-challenge", "credit-g", "ionosphere", "glass", "iris", "labor",
            "weather.numeric", "synthetic"]
METHODS = {"mdl": "mdl", "equal_width": "equal-width", "equal_frequency": "equal-frequency"}


def _golden(name: str) -> tuple[dict, Dataset]:
    golden = json.loads((GOLDEN / f"{name}.json").read_text(encoding="utf-8"))
    source = GOLDEN / "synthetic.arff" if name == "synthetic" else HERE / "data" / golden["dataset"]
    return golden, read_dataset(source)


def _codes(entry: dict, alphabet: str) -> np.ndarray:
    codes = entry["codes"]
    n_values = len(entry["labels"])
    if isinstance(codes, str):
        return np.array([n_values if ch == "?" else alphabet.index(ch) for ch in codes], dtype=np.int64)
    return np.array([n_values if c < 0 else c for c in codes], dtype=np.int64)


@pytest.fixture(scope="module", params=DATASETS)
def golden_case(request):
    return (request.param, *_golden(request.param))


@pytest.mark.parametrize("key", list(METHODS))
def test_matches_weka(golden_case, key):
    name, golden, dataset = golden_case
    assert golden["bins"] == 10
    disc = Discretizer(method=METHODS[key], bins=golden["bins"])
    out = disc.fit_transform(dataset)
    assert out.is_categorical
    names = dataset.names
    for entry in golden["attributes"]:
        j = names.index(entry["name"])
        weka = entry[key]
        expected = np.array([float.fromhex(h) for h in weka["cut_points_hex"]], dtype=np.float64)
        got = disc.cut_points_[j]
        # the same doubles, to the last bit
        assert got.tobytes() == expected.tobytes(), (name, key, entry["name"], got, expected)
        np.testing.assert_allclose(got, np.array(weka["cut_points"], dtype=np.float64), rtol=1e-12, atol=0)
        attribute = out.attributes[j]
        assert attribute.numeric and attribute.cut_points == tuple(expected)
        # Weka keeps its quotes inside the value: '(-inf-0.5]'
        assert attribute.values == tuple(label.strip("'") for label in weka["labels"])
        np.testing.assert_array_equal(out.X[:, j].astype(np.int64), _codes(weka, golden["code_alphabet"]))


def test_golden_files_cover_the_required_datasets():
    required = {"diabetes", "segment-challenge", "credit-g", "ionosphere", "glass"}
    present = {p.stem for p in GOLDEN.glob("*.json")}
    assert required <= present
    total = sum(len(a["mdl"]["cut_points_hex"]) for n in required
                for a in json.loads((GOLDEN / f"{n}.json").read_text())["attributes"])
    assert total > 200  # the MDL goldens are not trivially empty


def test_function_api_matches_weka_on_segment():
    golden, dataset = _golden("segment-challenge")
    cols = dataset.numeric_columns()
    for entry in golden["attributes"]:
        j = dataset.names.index(entry["name"])
        got = mdl_cut_points(dataset.numeric[:, cols[j]], dataset.y, dataset.n_classes)
        expected = np.array([float.fromhex(h) for h in entry["mdl"]["cut_points_hex"]])
        assert got.tobytes() == expected.tobytes()
