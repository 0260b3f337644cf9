"""Crafted model files whose checksum was recomputed: each is one ModelFileError, never a RecursionError,
AttributeError or IndexError, and never a model with NaN or infinite tables."""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path

import numpy as np
import pytest

from hdp_plugin import read_dataset
from hdp_plugin.errors import ModelFileError
from hdp_plugin.model import modelfile as MF
from hdp_plugin.model.render import info_text, network_dot
from reference import same_estimates

GOLDEN = Path(__file__).parent / "golden" / "models" / "vote-kdb2-hdp.hdpbnc"


def write_crafted(path: Path, doc: dict, training: dict, batches: list[dict]) -> Path:
    """A model file with the given documents and cells, and a checksum that matches them."""
    path.write_bytes(MF.file_bytes(json.dumps(doc).encode(), json.dumps(training).encode(), batches))
    return path


def _nested(depth: int):
    return json.loads("[" * depth + "]" * depth)


def _set(batches, col, t, i, value):
    batches[t][col] = batches[t][col].copy()
    batches[t][col][i] = value


def _negate_concentrations(d):
    tree = d["members"][0]["trees"][0]
    tree["concentrations"] = [[-x for x in r] for r in tree["concentrations"]]


CASES = {
    "deep-json": lambda d, tr, b: d.__setitem__("fit", {"x": "[" * 100_000 + "]" * 100_000}),
    "estimator-not-object": lambda d, tr, b: d.__setitem__("estimator", "hdp"),
    "branch-out-of-range": lambda d, tr, b: _set(b, "branch", 0, 1, 10**4),
    "nan-table": lambda d, tr, b: _set(b, "cell_log_prob", 0, 0, np.nan),
    "positive-infinite-table": lambda d, tr, b: _set(b, "cell_log_prob", 1, 3, np.inf),
    "unnormalised-table": lambda d, tr, b: _set(b, "cell_log_prob", 0, 0, -50.0),
    "nan-backoff": lambda d, tr, b: _set(b, "log_backoff", 1, 1, np.nan),
    "nan-prior": lambda d, tr, b: d.__setitem__("class_log_prior", [float("nan")] * len(d["class_log_prior"])),
    "negative-concentration": lambda d, tr, b: _negate_concentrations(d),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_crafted_model_files_are_one_model_file_error(tmp_path, case):
    doc, training, batches = MF.read_model_file(GOLDEN)
    doc, training, batches = copy.deepcopy(doc), copy.deepcopy(training), [dict(b) for b in batches]
    CASES[case](doc, training, batches)
    if case == "deep-json":  # the nesting goes into the raw JSON text, which json.dumps would escape
        path = write_crafted(tmp_path / "m.hdpbnc", doc, training, batches)
        raw = json.dumps(doc).replace('"[' + "[" * 99_999, "[" * 100_000).replace("]" * 100_000 + '"', "]" * 100_000)
        _rewrite_model_json(path, raw.encode(), training, batches)
    else:
        path = write_crafted(tmp_path / "m.hdpbnc", doc, training, batches)
    with pytest.raises(ModelFileError, match=r"m\.hdpbnc: corrupted model file") as info:
        MF.load_model(path)
    assert "\n" not in str(info.value)


def _rewrite_model_json(path, model_json, training, batches):
    path.write_bytes(MF.file_bytes(model_json, json.dumps(training).encode(), batches))


def test_the_crafting_itself_round_trips(tmp_path):
    doc, training, batches = MF.read_model_file(GOLDEN)
    path = write_crafted(tmp_path / "same.hdpbnc", doc, training, batches)
    a, b = MF.load_model(GOLDEN), MF.load_model(path)
    assert same_estimates(a, b)


ENSEMBLE = Path(__file__).parent / "golden" / "models" / "diabetes-eskdb-hdp.hdpbnc"


def _weights(d, *values):
    for m, w in zip(d["members"], values):
        m["weight"] = w


ENSEMBLE_CASES = {
    "n-members-too-many": (lambda d: d["params"].__setitem__("n_members", 4), "n_members"),
    "n-members-too-few": (lambda d: d["params"].__setitem__("n_members", 2), "n_members"),
    "a-kdb-of-three-networks": (lambda d: d["params"].__setitem__("structure", "kdb"), "networks"),
    "one-huge-weight": (lambda d: _weights(d, 1e308), "weight"),
    "all-huge-weights": (lambda d: _weights(d, 1e308, 1e308, 1e308), "weight"),
    "weights-not-summing-to-one": (lambda d: _weights(d, 0.5, 0.3, 0.3), "weight"),
    "zero-weight": (lambda d: _weights(d, 0.0), "weight"),
    "negative-weight": (lambda d: _weights(d, -1 / 3), "weight"),
    "tiny-weights": (lambda d: _weights(d, 1e-300, 1e-300, 1e-300), "weight"),
    "bool-weight": (lambda d: _weights(d, True), "weight"),
    "string-weight": (lambda d: _weights(d, "0.3333333333333333"), "weight"),
    "backoff-of-another-estimator": (lambda d: d["estimator"].__setitem__("backoff", "uniform"), "back-off"),
}


@pytest.mark.parametrize("case", sorted(ENSEMBLE_CASES))
def test_a_tampered_ensemble_is_one_model_file_error(tmp_path, case):
    """An ESKDB whose n_members does not match its members, or whose weights are not positive numbers
    summing to one (1e308, 0, 0.5 + 0.3 + 0.3, not a number), is refused though its checksum matches."""
    doc, training, batches = MF.read_model_file(ENSEMBLE)
    doc, training, batches = copy.deepcopy(doc), copy.deepcopy(training), [dict(b) for b in batches]
    change, word = ENSEMBLE_CASES[case]
    change(doc)
    path = write_crafted(tmp_path / "m.hdpbnc", doc, training, batches)
    with pytest.raises(ModelFileError, match=r"m\.hdpbnc: corrupted model file") as info:
        MF.load_model(path)
    assert "\n" not in str(info.value) and word in str(info.value), str(info.value)


def test_the_golden_ensembles_weights_pass_the_checks(tmp_path):
    for name in ("diabetes-eskdb-hdp", "vote-eskdb-mestimate"):
        path = Path(__file__).parent / "golden" / "models" / f"{name}.hdpbnc"
        doc, training, batches = MF.read_model_file(path)
        n = len(doc["members"])
        assert doc["params"]["n_members"] == n
        assert [m["weight"] for m in doc["members"]] == [1.0 / n] * n
        clf = MF.load_model(write_crafted(tmp_path / f"{name}.hdpbnc", doc, training, batches))
        assert [m.weight for m in clf.members_] == [1.0 / n] * n


def test_weights_that_sum_to_one_are_the_files_to_choose(tmp_path):
    """Unequal weights summing to one are a model the format holds: both readers take them."""
    doc, training, batches = MF.read_model_file(ENSEMBLE)
    _weights(doc, 0.5, 0.25, 0.25)
    clf = MF.load_model(write_crafted(tmp_path / "m.hdpbnc", doc, training, batches))
    assert [m.weight for m in clf.members_] == [0.5, 0.25, 0.25]


CRAFTED = Path(__file__).parent / "golden" / "crafted"
ROOT = Path(__file__).parent.parent
CRAFTED_MANIFEST = json.loads((CRAFTED / "manifest.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", sorted(CRAFTED_MANIFEST))
def test_both_readers_judge_the_shared_crafted_files_alike(name):
    """tests/golden/crafted (make_crafted.py), which the Weka package's CraftedModelsTest reads too: files
    whose JSON holds bytes that are not UTF-8, escapes of lone surrogates, numbers outside JSON's grammar
    (NaN, Infinity, leading zeros), nesting past MAX_JSON_NESTING, another major version, nodes that no
    fit writes, hostile Arrow structure, values of another type, classes that are not the class labels, a
    repeated parent, are one ModelFileError saying what the manifest says; the valid ones load, with the
    names the manifest gives, render in info and show, and predict the manifest's probabilities (labels that
    look like numbers, dates)."""
    entry = CRAFTED_MANIFEST[name]
    path = CRAFTED / entry["model"]
    if entry["expect"] == "refuse":
        with pytest.raises(ModelFileError) as info:
            MF.load_model(path)
        message = str(info.value)
        assert message.startswith(f"{path}: ") and "\n" not in message
        for part in entry.get("message") or ["corrupted model file ("]:
            assert part in message, message
    else:
        clf = MF.load_model(path)
        doc, _, _ = MF.read_model_file(path)
        assert doc["class"]["values"] == entry["class_values"]
        assert [a["name"] for a in doc["members"][0]["attributes"]] == entry["attribute_names"]
        contents = MF.read_model(path)  # what hdp-bnc info and show print, without a traceback
        assert info_text(path, contents).startswith("structure ")
        first = contents.networks[0]
        assert network_dot(first.attributes, first.structure, contents.class_attribute.name).startswith("digraph")
        if "probabilities" in entry:  # what the Weka reader must predict too
            data = read_dataset(ROOT / entry["data"], class_attribute=entry["class"])
            expected = np.loadtxt(CRAFTED / entry["probabilities"], delimiter=",", skiprows=1)[:, 1:]
            np.testing.assert_allclose(clf.predict_proba(data), expected, rtol=0, atol=1e-12)


def test_wide_columns_predict_as_narrow_ones():
    """The int32 columns of a model whose cardinalities exceed 65,535: the same model, the same answers."""
    narrow = MF.load_model(Path(__file__).parent / "golden" / "models" / "weather-kdb1-hdp.hdpbnc")
    wide = MF.load_model(CRAFTED / "valid-wide-columns.hdpbnc")
    data = read_dataset(Path(__file__).parent / "data" / "weather.nominal.arff")
    assert np.array_equal(narrow.predict_proba(data), wide.predict_proba(data))


def test_the_crafted_corpus_is_what_make_crafted_writes(tmp_path):
    """Every file of the manifest is there, no other, both verdicts occur, and the nesting bound the
    corpus probes is the reader's."""
    assert sorted(p.name for p in CRAFTED.glob("*.hdpbnc")) == sorted(e["model"] for e in CRAFTED_MANIFEST.values())
    assert {e["expect"] for e in CRAFTED_MANIFEST.values()} == {"refuse", "accept"}
    assert MF.MAX_JSON_NESTING == 200 and MF.MAX_JSON_INTEGER_DIGITS == 4300


@pytest.mark.parametrize("label, number", [
    ("3", 3.0), ("3.0", 3.0), ("-0", -0.0), ("+1", 1.0), ("1.", 1.0), (".5", 0.5), ("1e3", 1000.0), ("1E-2", 0.01),
    ("10d", None), ("8f", None), ("1_0", None), ("\u0663", None), (" 3", None), ("3 ", None), ("inf", None),
    ("Infinity", None), ("NaN", None), ("0x1p3", None), ("1e400", None), ("", None), ("-", None), (".", None),
    ("1e", None), ("\uff13", None)])
def test_labels_read_as_numbers_by_one_grammar(label, number):
    """docs/model-format.md section 6: ASCII decimal literals of a finite value, nothing around them; the Weka
    package's InstanceCoder.labelNumber reads the same table alike (CraftedModelsTest)."""
    from hdp_plugin.data.conform import label_number

    got = label_number(label)
    assert got == number and (number is None or math.copysign(1, got) == math.copysign(1, number))


def test_every_file_the_reader_accepts_renders(tmp_path):
    """Seeded edits of the golden models' documents (the training document's figures too, which no reader
    checks): each is one ModelFileError, or a model that ``hdp-bnc info`` and ``show`` render and that
    predicts distributions, never a traceback."""
    import random

    from readers import edit_documents

    golden = sorted((Path(__file__).parent / "golden" / "models").glob("*.hdpbnc"))
    rng = random.Random(5)
    accepted = 0
    for i in range(400):
        data, how = edit_documents(rng, golden[i % len(golden)])
        path = tmp_path / f"{i}.hdpbnc"
        path.write_bytes(data)
        try:
            contents = MF.read_model(path)
        except ModelFileError as exc:
            assert "\n" not in str(exc) and str(exc).startswith(str(path)), (how, str(exc))
            continue
        accepted += 1
        assert info_text(path, contents), how
        first = contents.networks[0]
        assert network_dot(first.attributes, first.structure, contents.class_attribute.name), how
    assert accepted > 40, accepted


def test_dates_predict_alike_in_any_time_zone(tmp_path):
    """The dates model (clock times read as UTC) predicts its manifest's probabilities in a process whose time
    zone is 12:45 ahead of UTC, as the Weka reader must in its JVM's (CraftedModelsTest, test_readers_agree)."""
    import os
    import subprocess
    import sys

    entry = CRAFTED_MANIFEST["valid-dates"]
    out = tmp_path / "p.csv"
    r = subprocess.run([sys.executable, "-m", "hdp_plugin", "predict", CRAFTED / entry["model"], ROOT / entry["data"],
                        "-o", out], capture_output=True, text=True, timeout=300,
                       env={**os.environ, "PYTHONPATH": str(ROOT), "TZ": entry["time_zone"]})
    assert r.returncode == 0, r.stderr
    got = np.loadtxt(out, delimiter=",", skiprows=1, usecols=(2, 3))
    expected = np.loadtxt(CRAFTED / entry["probabilities"], delimiter=",", skiprows=1)[:, 1:]
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)
