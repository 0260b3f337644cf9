"""Model format 3.0, the node table: the same model as the cell table, smaller; and its own ways to be bad."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.ipc
import pytest

from hdp_plugin import BayesNetClassifier, config, read_dataset
from hdp_plugin.errors import ModelFileError
from hdp_plugin.model import load_model, modelfile, save_model

DATA = Path(__file__).resolve().parent / "data"


@pytest.fixture(scope="module")
def fitted():
    vote = read_dataset(DATA / "vote.arff")
    diabetes = read_dataset(DATA / "diabetes.arff")
    return {
        "kdb2-hdp": (BayesNetClassifier(structure="kdb", k=2, iterations=60, random_state=3, n_jobs=1).fit(vote), vote),
        "tan-mestimate": (BayesNetClassifier(structure="tan", estimator="m-estimate", n_jobs=1).fit(diabetes), diabetes),
        "eskdb-hdp": (BayesNetClassifier(n_members=4, k=2, iterations=40, random_state=5, n_jobs=1).fit(diabetes),
                      diabetes),
    }


@pytest.mark.parametrize("name", ["kdb2-hdp", "tan-mestimate", "eskdb-hdp"])
def test_the_node_table_holds_the_model_of_the_cell_table(tmp_path, fitted, name):
    clf, ds = fitted[name]
    cells = save_model(clf, tmp_path / "cells.hdpbnc", layout="cells")
    nodes = save_model(clf, tmp_path / "nodes.hdpbnc", layout="nodes")
    assert nodes.stat().st_size < cells.stat().st_size
    doc_c, training_c, _ = modelfile.read_model_file(cells)
    doc_n, training_n, batches = modelfile.read_model_file(nodes)
    assert doc_n["format_version"] == list(config.NODE_FORMAT)
    assert doc_c["format_version"] == ([2, 0] if name.startswith("eskdb") else [1, 0])
    assert {**doc_n, "format_version": None} == {**doc_c, "format_version": None} and training_n == training_c
    assert pa.ipc.open_file(nodes).schema.remove_metadata() == modelfile.NODE_SCHEMA
    a, b = load_model(cells), load_model(nodes)
    np.testing.assert_array_equal(b.predict_proba(ds), a.predict_proba(ds))
    np.testing.assert_array_equal(b.predict_proba(ds), clf.predict_proba(ds))
    for ma, mb in zip(getattr(a, "members_", [a]), getattr(b, "members_", [b])):
        ta, tb = getattr(ma, "tables", None) or ma.tables_, getattr(mb, "tables", None) or mb.tables_
        np.testing.assert_array_equal(ta.log_probs, tb.log_probs)
        for field in ta.trees.__dataclass_fields__:
            assert np.array_equal(getattr(ta.trees, field), getattr(tb.trees, field)), field
    assert b.fit_info_["format_version"] == config.NODE_FORMAT
    assert hasattr(b, "members_") == name.startswith("eskdb")
    assert sum(len(bt["parent"]) for bt in batches) == sum(
        t["nodes"] for part in doc_n.get("members", [doc_n]) for t in part["trees"])


def _rewrite(src: Path, dst: Path, edit) -> None:
    """Rewrite a 3.0 file with ``edit(columns)`` applied to its first batch's columns (read_model_file's
    numpy arrays) and a valid checksum: only the reader's own checks can catch what is wrong."""
    doc, _, batches = modelfile.read_model_file(src)
    edit(batches[0])
    training_json = pa.ipc.open_file(src).schema.metadata[modelfile.TRAINING_KEY]
    dst.write_bytes(modelfile.file_bytes(json.dumps(doc).encode(), training_json, batches))


def _one_more(offsets):
    """The root's list one item longer (the others shifted): lists that still span the items."""
    return offsets + np.r_[0, np.ones(len(offsets) - 2, np.int32), 0].astype(np.int32)


@pytest.mark.parametrize("edit, words", [
    (lambda c: c.update(count_offsets=_one_more(c["count_offsets"])), "tree 0: a node's lists"),
    (lambda c: c.update(log_prob_offsets=np.r_[0, 1, c["log_prob_offsets"][2:]].astype(np.int32)),
     "tree 0: a node's lists"),
    (lambda c: c.update(parent=np.r_[-1, np.zeros(len(c["parent"]) - 1, np.int32) + 5].astype(np.int32)),
     "tree 0: bad parent index"),
    (lambda c: c.update(depth=np.zeros(len(c["depth"]), np.int32)), "tree 0: bad depths"),
])
def test_a_node_table_that_does_not_hold_together_is_refused(tmp_path, fitted, edit, words):
    clf, _ = fitted["kdb2-hdp"]
    good = save_model(clf, tmp_path / "good.hdpbnc", layout="nodes")
    _rewrite(good, tmp_path / "bad.hdpbnc", lambda c: c)
    load_model(tmp_path / "bad.hdpbnc")  # the rewriting itself keeps a good file good
    _rewrite(good, tmp_path / "bad.hdpbnc", edit)
    with pytest.raises(ModelFileError, match=f"bad.hdpbnc: corrupted model file \\({words}"):
        load_model(tmp_path / "bad.hdpbnc")


def test_a_flipped_byte_in_a_list_is_a_checksum_mismatch(tmp_path, fitted):
    clf, _ = fitted["kdb2-hdp"]
    path = save_model(clf, tmp_path / "m.hdpbnc", layout="nodes")
    data = bytearray(path.read_bytes())
    values = np.frombuffer(pa.ipc.open_file(path).get_batch(0).column(6).values.to_numpy().tobytes(), np.uint8)
    at = bytes(data).find(values.tobytes())  # the first tree's log-probabilities, where the file holds them
    assert at > 0
    data[at + 3] ^= 0x10
    (tmp_path / "flip.hdpbnc").write_bytes(bytes(data))
    with pytest.raises(ModelFileError, match="flip.hdpbnc: corrupted model file \\(checksum mismatch\\)"):
        load_model(tmp_path / "flip.hdpbnc")


def test_a_node_table_with_the_cell_tables_columns_is_refused(tmp_path, fitted):
    clf, _ = fitted["kdb2-hdp"]
    path = save_model(clf, tmp_path / "m.hdpbnc", layout="cells")
    reader = pa.ipc.open_file(path)
    meta = dict(reader.schema.metadata)
    doc = json.loads(meta[modelfile.MODEL_KEY])
    doc["format_version"] = list(config.NODE_FORMAT)
    meta[modelfile.MODEL_KEY] = json.dumps(doc).encode()
    schema = reader.schema.with_metadata(meta)
    with pa.OSFile(str(tmp_path / "mixed.hdpbnc"), "wb") as sink, pa.ipc.new_file(sink, schema) as writer:
        for i in range(reader.num_record_batches):
            writer.write_batch(pa.record_batch(reader.get_batch(i).columns, schema=schema))
    with pytest.raises(ModelFileError, match="mixed.hdpbnc: corrupted model file \\(unexpected columns"):
        load_model(tmp_path / "mixed.hdpbnc")


def test_the_layout_option_is_checked(tmp_path, fitted):
    with pytest.raises(ValueError, match="layout must be 'cells' or 'nodes'"):
        save_model(fitted["kdb2-hdp"][0], tmp_path / "m.hdpbnc", layout="rows")
