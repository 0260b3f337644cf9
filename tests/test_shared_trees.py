"""Trees that pose the same estimation problem are sampled once (an ensemble's members on nominal data).

``tree_sources`` finds them, ``take_trees`` cuts the others out of the flat arrays (the arrays of laying
them out again, ``relaid_trees`` of tests/reference.py), and the estimation step gives every copy its
source's tables, concentrations and counts while the other trees keep exactly the result of sampling
them all.
"""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path

import numpy as np
import pytest

from hdp_plugin import BayesNetClassifier, read_dataset, seeds as _seeds
from hdp_plugin.hdp.rng import tree_states
from hdp_plugin.hdp.sampler import sample, sampler_cells
from hdp_plugin.hdp.trees import ContextTrees, build_trees, concatenate_trees, take_trees, tree_sources
from hdp_plugin.hdp.tables import ProbabilityTables
from reference import member_trees, relaid_trees
from hdp_plugin.model.estimate import _sample_once_each

VOTE = Path(__file__).parent.parent / "examples" / "vote.arff"


def _data(seed, n_rows, n_attr=6, n_classes=3, card=4):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, card, (n_rows, n_attr)).astype(np.uint8)
    y = ((X[:, 0].astype(np.int64) + X[:, 1]) % n_classes) if n_rows else np.zeros(0, np.int64)
    return rng, X, y.astype(np.int32), np.full(n_attr, card, np.int64)


def _parents(rng, n_attr):
    return [tuple(int(p) for p in rng.permutation([b for b in range(n_attr) if b != a])[: rng.integers(0, 4)])
            for a in range(n_attr)]


@pytest.mark.parametrize("seed", range(12))
def test_taking_trees_gives_the_arrays_of_laying_them_out_again(seed):
    rng, X, y, cards = _data(seed, [0, 1, 5, 40, 300, 1000][seed % 6], n_classes=1 + seed % 3)
    parts = []
    for _ in range(3):
        kept = sorted(int(a) for a in rng.choice(6, int(rng.integers(1, 7)), replace=False))
        parts.append(build_trees(X, y, cards, 1 + seed % 3, _parents(rng, 6), kept))
    trees = concatenate_trees(parts)[0]
    for index in (np.arange(trees.n_trees), rng.permutation(trees.n_trees)[: rng.integers(1, trees.n_trees + 1)],
                  np.zeros(0, np.int64)):
        want = relaid_trees(trees, index) if index.size else ContextTrees.from_nodes([], trees.n_classes, trees.cardinalities)
        got = take_trees(trees, index)
        for f in fields(ContextTrees):
            a, b = np.asarray(getattr(got, f.name)), np.asarray(getattr(want, f.name))
            assert a.dtype == b.dtype, f.name
            np.testing.assert_array_equal(a, b, err_msg=f.name)


def test_sources_are_the_first_tree_with_the_same_nodes_counts_and_radices():
    _, X, y, cards = _data(0, 400)
    a = build_trees(X, y, cards, 3, [(1,), (), (0, 1), (2,), (), ()], [0, 1, 2, 3])
    b = build_trees(X, y, cards, 3, [(1,), (2,), (0, 1), (), (), ()], [0, 1, 2, 3])
    trees = concatenate_trees([a, b, a])[0]
    # b's attribute 1 has a parent and its attribute 3 none: those two are b's own
    np.testing.assert_array_equal(tree_sources(trees), [0, 1, 2, 3, 0, 5, 2, 7, 0, 1, 2, 3])
    # the same nodes and counts, but a branching variable with more values: not the same problem
    wide = cards.copy()
    wide[1] = 7
    c = build_trees(X, y, wide, 3, [(1,), (), (), (), (), ()], [0])
    np.testing.assert_array_equal(tree_sources(concatenate_trees([a, c])[0]), [0, 1, 2, 3, 4])
    # other counts: not the same problem
    _, X2, y2, _ = _data(1, 400)
    d = build_trees(X2, y2, cards, 3, [(1,), (), (0, 1), (2,), (), ()], [0, 1, 2, 3])
    np.testing.assert_array_equal(tree_sources(concatenate_trees([a, d])[0]), np.arange(8))
    assert tree_sources(a).tolist() == [0, 1, 2, 3]


@pytest.mark.parametrize("tying", ["level", "none", "same-parent", "single"])
@pytest.mark.parametrize("tolerance", [None, 0.005])
def test_copies_take_their_sources_result_and_the_rest_is_untouched(tying, tolerance):
    _, X, y, cards = _data(2, 500)
    a = build_trees(X, y, cards, 3, [(1,), (), (0, 1), (2,), (), ()], [0, 1, 2, 3])
    b = build_trees(X, y, cards, 3, [(1,), (2,), (0, 1), (), (), ()], [0, 1, 2, 3])
    trees = concatenate_trees([a, b, a])[0]
    states = tree_states(np.random.SeedSequence(5), trees.n_trees)
    kw = dict(iterations=240, burn_in=None, tying=tying, n_jobs=1, progress=None, tolerance=tolerance,
              first_check=60 if tolerance else None)
    every = sample(trees, random_state=states, **kw)
    once, copies = _sample_once_each(trees, sampler_cells(trees), sample, states, tying, kw)
    source = tree_sources(trees)
    assert copies == int((source != np.arange(trees.n_trees)).sum()) == 6
    own = source == np.arange(trees.n_trees)
    cell_tree = np.repeat(trees.node_tree, np.diff(every.cells.node_cell_start))
    np.testing.assert_array_equal(once.probabilities[own[cell_tree]], every.probabilities[own[cell_tree]])
    np.testing.assert_array_equal(once.table_counts[own[cell_tree]], every.table_counts[own[cell_tree]])
    np.testing.assert_array_equal(once.node_group, every.node_group)  # the numbering of sampling them all
    assert once.concentrations.shape == every.concentrations.shape
    node_own = own[trees.node_tree]
    np.testing.assert_array_equal(once.concentrations[once.node_group[node_own]],
                                  every.concentrations[every.node_group[node_own]])
    nodes = lambda t: slice(int(trees.tree_node_start[t]), int(trees.tree_node_start[t + 1]))  # noqa: E731
    cs = once.cells.node_cell_start
    np.testing.assert_array_equal(cs, every.cells.node_cell_start)
    np.testing.assert_array_equal(once.cells.cell_parent, every.cells.cell_parent)
    cells = lambda t: slice(int(cs[trees.tree_node_start[t]]), int(cs[trees.tree_node_start[t + 1]]))  # noqa: E731
    for t in np.flatnonzero(~own):
        s = int(source[t])
        for arr in (once.probabilities, once.table_counts, once.customer_counts):
            np.testing.assert_array_equal(arr[cells(t)], arr[cells(s)])
        np.testing.assert_array_equal(once.concentrations[once.node_group[nodes(t)]],
                                      once.concentrations[once.node_group[nodes(s)]])
        assert once.tree_iterations[t] == once.tree_iterations[s]
    assert not np.array_equal(once.probabilities, every.probabilities)  # copies are copies, not fresh chains


def test_an_ensembles_members_share_the_trees_they_have_in_common():
    """On nominal data members with the same attribute and parents share one chain: each member's own
    trees are exactly its run alone, a shared tree is the first member's; the same whatever the threads."""
    vote = read_dataset(VOTE)
    params = dict(structure="eskdb", n_members=6, k=2, iterations=60, random_state=3)
    clf = BayesNetClassifier(n_jobs=1, **params).fit(vote)
    assert clf.fit_info_["shared_trees"] > 0
    two = BayesNetClassifier(n_jobs=2, **params).fit(vote)
    np.testing.assert_array_equal(clf.predict_proba(vote), two.predict_proba(vote))
    owner = {}
    checked = 0
    for e, mb in enumerate(clf.members_):
        seed = np.random.SeedSequence(mb.seed["entropy"], spawn_key=tuple(mb.seed["spawn_key"]))
        trees = member_trees(mb, vote)
        alone = sample(trees, iterations=60, random_state=tree_states(_seeds.child(seed), trees.n_trees))
        mine = ProbabilityTables.from_sampler(trees, alone.cells, alone.probabilities, mb.tables.log_prior)
        alone_lp = mine.dense_log_probs()  # what the member's own run gives, as sparse tables give it
        own = mb.tables.dense_log_probs()
        for t in range(trees.n_trees):
            lo, hi = (int(trees.node_cell_start[trees.tree_node_start[t + d]]) for d in (0, 1))
            parents = tuple(mb.structure.parents[int(trees.attrs[t])])
            key = (int(trees.attrs[t]), parents)
            if key in owner:  # the same attribute and parents as an earlier member: its tables
                checked += 1
                np.testing.assert_array_equal(own[lo:hi], owner[key])
            else:
                owner[key] = own[lo:hi]
                np.testing.assert_array_equal(own[lo:hi], alone_lp[lo:hi])
    assert checked == clf.fit_info_["shared_trees"]
