"""The HDP sampler against exact answers (docs/method.md section 7)."""

from __future__ import annotations

import numpy as np
import pytest

from hdp_plugin.hdp import kernels, sweeps
from hdp_plugin.hdp.sampler import (Cancelled, _no_rule, convergence_checks, default_burn_in, new_state, sample,
                                    sampler_cells, tree_layout, tying_groups)
from hdp_plugin.hdp.trees import build_trees
from hdp_plugin.errors import ParameterError

from reference import dense_estimates, exact_posterior_means, to_dense_cells, to_sampler_cells


def worked_example_trees():
    """The paper's Dataset 1: n(x=0|y=0)=2, n(x=1|y=0)=0, n(x=0|y=1)=20, n(x=1|y=1)=5."""
    X = np.array([[0]] * 2 + [[0]] * 20 + [[1]] * 5, dtype=np.uint8)
    y = np.array([0] * 2 + [1] * 25, dtype=np.int32)
    return build_trees(X, y, np.array([2]), 2, [()], [0])


def random_tiny_tree(seed, n_rows, card, depth):
    """One tree over attribute 0 (card values) with ``depth - 1`` binary attribute parents."""
    rng = np.random.default_rng(seed)
    n_par = depth - 1
    X = np.zeros((n_rows, 1 + n_par), np.uint8)
    X[:, 0] = rng.integers(0, card, n_rows)
    for p in range(n_par):
        X[:, 1 + p] = rng.integers(0, 2, n_rows)
    y = rng.integers(0, 2, n_rows).astype(np.int32)
    cards = np.array([card] + [2] * n_par)
    parents = [tuple(range(1, 1 + n_par))] + [()] * n_par
    return build_trees(X, y, cards, 2, parents, [0])


def oracle(trees, tying):
    group, _, _ = tying_groups(trees, tying)
    card = int(trees.tree_card[0])
    return exact_posterior_means(list(trees.node_parent), trees.leaf_counts.reshape(-1, card), card, list(group))


def mean_over_seeds(trees, tying, iterations, seeds):
    runs = [sample(trees, iterations=iterations, tying=tying, random_state=s).probabilities for s in seeds]
    return np.mean(runs, axis=0), np.std(runs, axis=0, ddof=1) / np.sqrt(len(seeds))


def test_worked_example_oracle_matches_published_exact_values():
    est = oracle(worked_example_trees(), "level").reshape(-1, 2)
    np.testing.assert_allclose(est[1], [0.87559, 0.12441], atol=5e-6)
    np.testing.assert_allclose(est[2], [0.79447, 0.20553], atol=5e-6)


@pytest.mark.parametrize("tying", ["level", "none", "same-parent", "single"])
@pytest.mark.parametrize("case", [(14, 3, 2, 1), (11, 2, 1, 2), (12, 2, 3, 3)])
def test_sampler_matches_exact_enumeration(tying, case):
    n_rows, card, depth, seed = case
    trees = random_tiny_tree(seed, n_rows, card, depth)
    assert trees.leaf_counts.max() <= 11  # the window covers every t: an exact Gibbs sampler
    exact = oracle(trees, tying)
    mean, se = mean_over_seeds(trees, tying, 20000, seeds=[1, 2, 3, 4])
    # the sampler's cells: observed values, and a node's others summed in its rest cell
    err = np.abs(mean - to_sampler_cells(sampler_cells(trees), trees, exact.ravel()))
    # within Monte Carlo error: 5 standard errors, with a floor for cells whose runs agree closely
    assert (err <= np.maximum(5 * se, 2e-3)).all(), (err.max(), se.max())


@pytest.mark.slow
def test_worked_example_at_50000_iterations():
    trees = worked_example_trees()
    p = dense_estimates(sample(trees, iterations=50000, random_state=2018), trees).reshape(-1, 2)
    np.testing.assert_allclose(p[1], [0.87559, 0.12441], atol=3e-3)
    np.testing.assert_allclose(p[2], [0.79447, 0.20553], atol=3e-3)


def test_worked_example_quick():
    trees = worked_example_trees()  # a node lacks at most one value: its rest cell is that value's estimate
    p = np.mean([dense_estimates(sample(trees, iterations=10000, tying="level", random_state=s), trees)
                 for s in (5, 6)], axis=0).reshape(-1, 2)
    np.testing.assert_allclose(p[1], [0.87559, 0.12441], atol=6e-3)
    np.testing.assert_allclose(p[2], [0.79447, 0.20553], atol=6e-3)


def test_same_seed_same_tables_whatever_the_threads():
    trees = random_tiny_tree(7, 400, 4, 3)
    a = sample(trees, iterations=300, random_state=11, n_jobs=1)
    b = sample(trees, iterations=300, random_state=11, n_jobs=2)
    c = sample(trees, iterations=300, random_state=12, n_jobs=1)
    assert np.array_equal(a.probabilities, b.probabilities)
    assert np.array_equal(a.concentrations, b.concentrations)
    assert not np.array_equal(a.probabilities, c.probabilities)


def test_many_trees_are_reproducible_across_threads():
    rng = np.random.default_rng(3)
    X = rng.integers(0, 3, size=(2000, 6)).astype(np.uint8)
    y = rng.integers(0, 3, 2000).astype(np.int32)
    parents = [(), (0,), (1, 0), (2, 1), (3, 0), (4, 2)]
    trees = build_trees(X, y, np.full(6, 3), 3, parents, range(6))
    a = sample(trees, iterations=120, random_state=5, n_jobs=1)
    b = sample(trees, iterations=120, random_state=5, n_jobs=2)
    assert np.array_equal(a.probabilities, b.probabilities)


def test_checkpoints_read_the_running_sums_without_touching_the_chain():
    rng = np.random.default_rng(4)
    X = rng.integers(0, 3, size=(1500, 5)).astype(np.uint8)
    y = rng.integers(0, 2, 1500).astype(np.int32)
    trees = build_trees(X, y, np.full(5, 3), 2, [(), (0,), (1, 0), (2, 1), (3, 0)], range(5))
    full = sample(trees, iterations=400, random_state=9, n_jobs=1)
    seen = {}
    with_checks = sample(trees, iterations=400, random_state=9, n_jobs=2, checkpoints=[30, 150, 399, 400, 401],
                         on_checkpoint=lambda i, s: seen.__setitem__(i, s))
    # the same chain and tables with or without checkpoints, whatever the threads
    assert np.array_equal(full.probabilities, with_checks.probabilities)
    # checkpoints within burn-in (40) or past the end are not called
    assert sorted(seen) == [150, 399, 400]
    assert np.array_equal(seen[400] / (400 - full.burn_in), full.probabilities)
    # the sums at 150 are those of a run of 150 iterations with the same burn-in, bit for bit
    short = sample(trees, iterations=150, burn_in=full.burn_in, random_state=9, n_jobs=1)
    assert np.array_equal(seen[150] / (150 - full.burn_in), short.probabilities)
    # returning True stops there, with that run's result
    stopped = sample(trees, iterations=400, random_state=9, n_jobs=1, checkpoints=[150],
                     on_checkpoint=lambda i, s: True)
    assert (stopped.iterations, stopped.n_samples) == (150, 150 - full.burn_in)
    assert np.array_equal(stopped.probabilities, short.probabilities)
    assert np.array_equal(stopped.table_counts, short.table_counts)


def test_a_tolerance_stops_every_tree_on_its_own_with_the_tables_of_a_run_that_long():
    rng = np.random.default_rng(4)
    X = rng.integers(0, 3, size=(3000, 6)).astype(np.uint8)
    y = rng.integers(0, 2, 3000).astype(np.int32)
    trees = build_trees(X, y, np.full(6, 3), 2, [(), (0,), (1, 0), (2, 1), (3, 0), (4, 2)], range(6))
    one = sample(trees, iterations=4000, random_state=9, n_jobs=1, tolerance=0.001)
    two = sample(trees, iterations=4000, random_state=9, n_jobs=2, tolerance=0.001)
    assert np.array_equal(one.probabilities, two.probabilities)  # each tree decides on its own chain
    its = one.tree_iterations
    assert len(set(its)) > 1 and set(its) <= {500, 1000, 2000, 4000}, its  # trees stop at different checks
    assert one.iterations == its.max() and one.burn_in == default_burn_in(one.iterations)
    for tr in range(trees.n_trees):  # a stopped tree has the tables of a run of its iterations
        cs = one.cells.node_cell_start
        lo, hi = cs[trees.tree_node_start[tr]], cs[trees.tree_node_start[tr + 1]]
        fixed = sample(trees, iterations=int(its[tr]), random_state=9, n_jobs=1).probabilities
        np.testing.assert_allclose(one.probabilities[lo:hi], fixed[lo:hi], rtol=1e-12, atol=0)
    # a given burn-in applies to every run, and checks start once their half is past it
    late = sample(trees, iterations=4000, burn_in=300, random_state=9, n_jobs=1, tolerance=0.001)
    assert set(late.tree_iterations) <= {1000, 2000, 4000} and late.burn_in == 300
    tr = int(np.argmin(late.tree_iterations))
    cs = late.cells.node_cell_start
    lo, hi = cs[trees.tree_node_start[tr]], cs[trees.tree_node_start[tr + 1]]
    fixed = sample(trees, iterations=int(late.tree_iterations[tr]), burn_in=300, random_state=9, n_jobs=1)
    np.testing.assert_allclose(late.probabilities[lo:hi], fixed.probabilities[lo:hi], rtol=1e-12, atol=0)
    # without a tolerance every tree runs all iterations
    assert set(sample(trees, iterations=300, random_state=9).tree_iterations) == {300}
    with pytest.raises(ParameterError, match="tolerance must be a number > 0"):
        sample(trees, iterations=300, tolerance=0)


def test_the_queue_gives_the_same_run_whatever_its_threads_batches_and_growths(monkeypatch):
    """Trees run from a queue, each to its own end (sampler._TreeQueue): one or two threads, batches of
    any size, calls of any length and the Stirling tables grown mid-run while the other thread samples
    give the same tables and stops."""
    import random

    from hdp_plugin.hdp import sampler

    rng = np.random.default_rng(4)
    X = rng.integers(0, 3, size=(3000, 6)).astype(np.uint8)
    y = rng.integers(0, 2, 3000).astype(np.int32)
    trees = build_trees(X, y, np.full(6, 3), 2, [(), (0,), (1, 0), (2, 1), (3, 0), (4, 2)], range(6))
    kw = dict(iterations=2000, random_state=9, tolerance=0.001)
    expected = sample(trees, n_jobs=1, **kw)
    rnd = random.Random(3)
    monkeypatch.setattr(sampler, "_batch_chunk", lambda pace, cost: rnd.randint(1, 300))
    for n_jobs, sizes in [(2, None), (2, (8, 2)), (1, (8, 2))]:
        got = sample(trees, n_jobs=n_jobs, _initial_sizes=sizes, **kw)
        assert np.array_equal(got.probabilities, expected.probabilities)
        assert np.array_equal(got.tree_iterations, expected.tree_iterations)
    assert got.stirling_shape[0][0] > 9  # the tables grew


def test_an_earlier_first_check_stops_trees_there_with_the_tables_of_a_run_that_long():
    """``first_check`` (an ensemble's 100, config.AUTO_FIRST_CHECK): checks at it and its doublings below
    the cap; a tree stopped at a check has the tables of a run of that many iterations."""
    rng = np.random.default_rng(4)
    X = rng.integers(0, 3, size=(3000, 6)).astype(np.uint8)
    y = rng.integers(0, 2, 3000).astype(np.int32)
    trees = build_trees(X, y, np.full(6, 3), 2, [(), (0,), (1, 0), (2, 1), (3, 0), (4, 2)], range(6))
    one = sample(trees, iterations=400, random_state=2, n_jobs=1, tolerance=0.001, first_check=100)
    two = sample(trees, iterations=400, random_state=2, n_jobs=2, tolerance=0.001, first_check=100)
    assert np.array_equal(one.probabilities, two.probabilities)
    its = one.tree_iterations
    assert set(its) == {100, 200, 400}, its  # trees stop at every check and at the cap
    for tr in range(trees.n_trees):
        cs = one.cells.node_cell_start
        lo, hi = cs[trees.tree_node_start[tr]], cs[trees.tree_node_start[tr + 1]]
        fixed = sample(trees, iterations=int(its[tr]), random_state=2, n_jobs=1).probabilities
        np.testing.assert_allclose(one.probabilities[lo:hi], fixed[lo:hi], rtol=1e-12, atol=0)
    # the default first check is 500: none below a cap of 400
    assert set(sample(trees, iterations=400, random_state=2, tolerance=0.001).tree_iterations) == {400}
    assert convergence_checks(200, None, 100) == [100] and convergence_checks(1000, 60, 100) == [200, 400, 800]
    with pytest.raises(ParameterError, match="first convergence check"):
        sample(trees, iterations=300, tolerance=0.005, first_check=1)


@pytest.mark.parametrize("tying", ["level", "none", "same-parent", "single"])
def test_invariants_hold_after_every_sweep(tying):
    rng = np.random.default_rng(1)
    X = rng.integers(0, 4, size=(3000, 3)).astype(np.uint8)
    y = rng.integers(0, 2, 3000).astype(np.int32)
    trees = build_trees(X, y, np.full(3, 4), 2, [(1, 2), (2,), ()], [0, 1, 2])
    r = sample(trees, iterations=60, tying=tying, random_state=0, debug=True)
    assert r.n_samples == 54


def test_large_counts_use_their_own_rows_and_tables_grow():
    # leaves with thousands of customers: their rows are computed alone, the dense part stays small
    X = np.zeros((20000, 1), np.uint8)
    X[::2, 0] = 1
    y = np.zeros(20000, np.int32)
    y[::3] = 1
    trees = build_trees(X, y, np.array([2]), 2, [()], [0])
    r = sample(trees, iterations=400, random_state=0)
    dense_shape, big_shape = r.stirling_shape
    assert dense_shape[0] < 2000 < trees.raw_counts().max()
    assert big_shape[0] == np.unique(trees.leaf_counts[trees.leaf_counts > dense_shape[0] - 1]).size
    p = dense_estimates(r, trees).reshape(-1, 2)
    np.testing.assert_allclose(p.sum(axis=1), 1.0)
    np.testing.assert_allclose(p[1], [1 / 2, 1 / 2], atol=0.01)
    # a kernel given too narrow a table stops before drawing anything
    from hdp_plugin.hdp.stirling import log_stirling_rows, stirling_ratios

    layout = tree_layout(trees, "level")
    n, t = r.customer_counts.copy(), r.table_counts.copy()
    N = np.add.reduceat(n, layout.node_cell_start[:-1])
    T = np.add.reduceat(t, layout.node_cell_start[:-1])
    z = np.zeros(n.shape[0])
    state = kernels.SamplerState(n, t, N, T, conc=np.full(2, 2.0), prob=z, est_sum=z.copy(), wsum=z.copy(),
                                 win_k=np.zeros(1, np.int64), rng=np.ones((1, 4), np.uint64))
    no_big = np.full(n.shape[0], -1, np.int32)
    for n_dense, t_cols in [(20000, 2), (10, 40)]:  # too few columns, then too few dense rows
        tables = kernels.StirlingTables(*stirling_ratios(*log_stirling_rows(n_dense, t_cols, np.zeros(0, np.int64))),
                                        no_big)
        reached = np.array([7], np.int64)
        kernels.sample_trees(np.zeros(1, np.int64), 0, 1, reached, 9, layout, tables, state,
                             kernels.Settings(0, 10, 5, 3, 2.0, 1.0, 4000.0), _no_rule(trees, 9),
                             np.empty(n.shape[0]))
        assert reached[0] == 7
        assert np.array_equal(t, r.table_counts)


def test_tables_sized_on_demand_give_the_same_model():
    """Growing the Stirling tables mid-run leaves no trace in the result."""
    rng = np.random.default_rng(5)
    X = rng.integers(0, 2, size=(30000, 2)).astype(np.uint8)
    y = rng.integers(0, 2, 30000).astype(np.int32)
    trees = build_trees(X, y, np.array([2, 2]), 2, [(1,), ()], [0, 1])
    a = sample(trees, iterations=150, random_state=4)
    b = sample(trees, iterations=150, random_state=4, _initial_sizes=(8, 2))  # many grow steps
    assert b.stirling_shape[0][0] > 9 and b.stirling_shape[0][1] > 3
    assert np.array_equal(a.probabilities, b.probabilities)


def test_empty_tree_gives_uniform_prior():
    X = np.zeros((0, 2), np.uint8)
    y = np.zeros(0, np.int32)
    trees = build_trees(X, y, np.array([3, 2]), 2, [(1,), ()], [0])
    assert trees.n_nodes == 1
    r = sample(trees, iterations=20, random_state=0)
    np.testing.assert_allclose(dense_estimates(r, trees), 1 / 3)


def test_huge_concentration_reproduces_the_parent():
    trees = random_tiny_tree(2, 50, 3, 2)
    layout = tree_layout(trees, "level")
    group = layout.node_group
    state = new_state(trees, layout, 0, np.int64)
    state.conc[:] = 2.0
    kernels.init_trees(layout, state)
    n, N, conc = state.n, state.node_N, state.conc
    conc[1:] = 1e12
    cs, parent = layout.node_cell_start, layout.cell_parent
    size = n.shape[0]
    prob, est = np.zeros(size), np.zeros(size)
    all_nodes = np.arange(trees.n_nodes, dtype=np.int64)
    sweeps.accumulate_moving(all_nodes, 0, trees.n_nodes, 0, 3, trees.node_parent, group, cs, parent,
                              conc, n, N, prob, est, np.zeros(size))
    cells = sampler_cells(trees)
    p = to_dense_cells(cells, trees, est).reshape(-1, 3)  # one iteration's estimates of the observed values
    seen = to_dense_cells(cells, trees, np.ones(size)).reshape(-1, 3) > 0
    for j in range(1, trees.n_nodes):
        np.testing.assert_allclose(p[j][seen[j]], p[trees.node_parent[j]][seen[j]], rtol=1e-9)
    # every node's observed values and its rest cell make one distribution
    np.testing.assert_allclose(np.add.reduceat(est, cs[:-1]), 1.0, rtol=1e-12)
    # the still nodes' window sums give the same: every node but the root still, a window of 3
    est_w, wsum = np.zeros(size), np.zeros(size)
    for _ in range(3):
        sweeps.accumulate_moving(all_nodes, 0, 1, 0, 3, trees.node_parent, group, cs, parent,
                                  conc, n, N, prob, est_w, wsum)
    sweeps.flush_still(all_nodes, 1, trees.n_nodes, all_nodes, 0, 1, 0, 3, trees.node_parent, group,
                        cs, parent, conc, n, N, est_w, wsum, 3)
    np.testing.assert_allclose(est_w, 3 * est, rtol=1e-12)
    assert not wsum[cs[0]:cs[1]].any()  # the moving root's window starts again


def test_progress_callback_and_cancel():
    trees = random_tiny_tree(2, 50, 3, 2)
    seen = []
    sample(trees, iterations=120, random_state=0, progress=lambda d, tot: seen.append((d, tot)))
    assert seen[-1] == (120, 120) and len(seen) >= 2
    with pytest.raises(Cancelled):
        sample(trees, iterations=500, random_state=0, progress=lambda d, tot: False)


def test_parameter_errors():
    trees = random_tiny_tree(2, 20, 3, 1)
    with pytest.raises(ParameterError, match="iterations"):
        sample(trees, iterations=0)
    with pytest.raises(ParameterError, match="burn_in"):
        sample(trees, iterations=10, burn_in=10)
    with pytest.raises(ParameterError, match="tying"):
        sample(trees, iterations=10, tying="levels")
    assert default_burn_in(5000) == 500 and default_burn_in(50000) == 1000
