"""Sparse tables: a node keeps the cells its training rows hold and a back-off weight for the others.

The back-off weight makes each node's distribution sum to one: for the baseline estimators it is
derived from their dense estimates (and gives them back exactly); for HDP tables it is the sampler's
averaged total of the other values over the parent's estimate of them (exact for a single sample).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.ipc
import pytest

from hdp_plugin import BayesNetClassifier, read_dataset
from hdp_plugin.errors import ModelFileError
from hdp_plugin.hdp.sampler import sample
from hdp_plugin.hdp.tables import ProbabilityTables, laplace, m_estimate
from hdp_plugin.model import load_model, save_model
from reference import member_trees, to_dense_cells

DATA = Path(__file__).resolve().parent / "data"


@pytest.fixture(scope="module")
def vote():
    return read_dataset(DATA / "vote.arff")


def _node_sums(tables: ProbabilityTables) -> np.ndarray:
    dense = np.exp(tables.dense_log_probs())
    card = tables.tree_card[tables.node_tree]
    return np.add.reduceat(dense, np.concatenate(([0], np.cumsum(card)[:-1])))


@pytest.mark.parametrize("estimator, dense_of", [("m-estimate", lambda t: m_estimate(t, 1.0)),
                                                 ("laplace", laplace)])
def test_baseline_tables_are_the_dense_ones_exactly(vote, estimator, dense_of):
    clf = BayesNetClassifier(structure="kdb", k=3, estimator=estimator).fit(vote)
    trees = member_trees(clf.members_[0], vote)
    np.testing.assert_allclose(clf.tables_.dense_log_probs(), np.log(dense_of(trees)), rtol=0, atol=1e-12)
    assert clf.tables_.n_observed < clf.tables_.n_cells  # cells were left out


def test_one_hdp_sample_gives_its_estimates_exactly(vote):
    """One sample: every value's estimate, observed or not, is (n_x + c p_parent,x) / (N + c) of the
    sampler's final counts and concentrations."""
    clf = BayesNetClassifier(structure="kdb", k=3, iterations=1, burn_in=0, random_state=0).fit(vote)
    trees = member_trees(clf.members_[0], vote)
    res = sample(trees, iterations=1, burn_in=0, random_state=0)
    tables = ProbabilityTables.from_sampler(trees, res.cells, res.probabilities, clf.tables_.log_prior)
    n = to_dense_cells(res.cells, trees, res.customer_counts).astype(float)
    conc = res.concentrations[res.node_group]
    want = np.empty(trees.n_cells)
    for j in range(trees.n_nodes):
        card = int(trees.tree_card[trees.node_tree[j]])
        lo = int(trees.node_cell_start[j])
        p = trees.node_parent[j]
        parent = np.full(card, 1.0 / card) if p < 0 else want[trees.node_cell_start[p]:trees.node_cell_start[p] + card]
        want[lo:lo + card] = (n[lo:lo + card] + conc[j] * parent) / (n[lo:lo + card].sum() + conc[j])
    np.testing.assert_allclose(np.exp(tables.dense_log_probs()), want, rtol=1e-10, atol=0)


@pytest.mark.parametrize("params", [dict(structure="kdb", k=3, iterations=300, random_state=1),
                                    dict(structure="eskdb", n_members=3, random_state=2),
                                    dict(structure="tan", estimator="mle")])
def test_every_node_sums_to_one_and_observed_cells_keep_their_estimates(vote, params):
    clf = BayesNetClassifier(**params).fit(vote)
    for mb in clf.members_:
        t = mb.tables
        np.testing.assert_allclose(_node_sums(t), 1.0, rtol=0, atol=1e-12)
        assert (t.log_backoff <= 0).all()
        # every cell is a (context, value) of the training rows; an HDP node's cells are its parent's too
        trees = member_trees(mb, vote)
        raw = trees.raw_counts()
        assert t.n_observed == int((raw > 0).sum())


def test_a_fits_tables_are_its_samplers_own(vote):
    """A fit's HDP tables are those its sampler's averaged cells give (the same seed, the same chain)."""
    from hdp_plugin import seeds as _seeds
    from hdp_plugin.hdp.rng import tree_states

    clf = BayesNetClassifier(structure="kdb", k=3, iterations=300, random_state=1).fit(vote)
    mb = clf.members_[0]
    seed = np.random.SeedSequence(mb.seed["entropy"], spawn_key=tuple(mb.seed["spawn_key"]))
    trees = member_trees(mb, vote)
    res = sample(trees, iterations=300, random_state=tree_states(_seeds.child(seed), trees.n_trees))
    own = ProbabilityTables.from_sampler(trees, res.cells, res.probabilities, mb.tables.log_prior)
    np.testing.assert_array_equal(own.log_probs, mb.tables.log_probs)
    np.testing.assert_array_equal(own.log_backoff, mb.tables.log_backoff)


def test_a_flipped_byte_in_the_cells_is_a_checksum_mismatch(tmp_path, vote):
    clf = BayesNetClassifier(structure="kdb", k=2, iterations=60, random_state=3).fit(vote)
    path = save_model(clf, tmp_path / "m.hdpbnc")
    data = bytearray(path.read_bytes())
    cells = pa.ipc.open_file(path).get_batch(0).column(3).values.field(1)
    values = np.frombuffer(cells.buffers()[1], np.uint8, count=8 * len(cells), offset=8 * cells.offset)
    at = bytes(data).find(values.tobytes())  # the first tree's log-probabilities, where the file holds them
    assert at > 0
    data[at + 3] ^= 0x10
    (tmp_path / "flip.hdpbnc").write_bytes(bytes(data))
    with pytest.raises(ModelFileError, match="flip.hdpbnc: corrupted model file \\(checksum mismatch\\)"):
        load_model(tmp_path / "flip.hdpbnc")


def test_other_columns_are_refused(tmp_path, vote):
    clf = BayesNetClassifier(structure="nb", estimator="laplace").fit(vote)
    path = save_model(clf, tmp_path / "m.hdpbnc")
    reader = pa.ipc.open_file(path)
    schema = pa.schema([pa.field("branch", pa.int64())]).with_metadata(reader.schema.metadata)
    with pa.OSFile(str(tmp_path / "other.hdpbnc"), "wb") as sink, pa.ipc.new_file(sink, schema) as writer:
        writer.write_batch(pa.record_batch([pa.array([0], pa.int64())], schema=schema))
    with pytest.raises(ModelFileError, match="other.hdpbnc: corrupted model file \\(unexpected columns"):
        load_model(tmp_path / "other.hdpbnc")


@pytest.mark.parametrize("name", ["vote-kdb2-hdp", "diabetes-eskdb-hdp", "vote-eskdb-mestimate", "breast-coded-kdb2-hdp"])
def test_sparse_prediction_is_the_dense_one_bit_for_bit(monkeypatch, name):
    """A network past config.MAX_DENSE_VIEW_ENTRIES predicts from its sparse cells, with no dense view: the same
    probabilities, bit for bit, on the golden data and its edge rows (back-off everywhere, unseen values)."""
    import json

    from hdp_plugin import config

    golden = Path(__file__).resolve().parent / "golden" / "models"
    entry = json.loads((golden / "manifest.json").read_text())[name]
    root = golden.parents[2]
    clf = load_model(golden / entry["model"])
    for key in ("data", "edge_data"):
        data = read_dataset(root / entry[key], class_attribute=entry["class"])
        dense = clf.predict_log_proba(data)
        monkeypatch.setattr(config, "MAX_DENSE_VIEW_ENTRIES", 0)
        sparse_clf = load_model(golden / entry["model"])
        sparse = sparse_clf.predict_log_proba(data)
        monkeypatch.setattr(config, "MAX_DENSE_VIEW_ENTRIES", 1 << 24)
        assert np.array_equal(dense, sparse)
        assert all("_dense_view" not in m.tables.__dict__ for m in sparse_clf.members_)
