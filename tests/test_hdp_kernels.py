"""Every HDP numba kernel against a slow, obviously correct twin.

This module is also run once with NUMBA_DISABLE_JIT=1 (see test_kernels_without_jit).
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from hdp_plugin.hdp import kernels, rng as hrng, sweeps as hsweeps
from hdp_plugin.seeds import xoshiro
from hdp_plugin.hdp.sampler import new_state, sampler_cells, tree_layout
from hdp_plugin.hdp.stirling import log_stirling_rows, log_stirling_table, stirling_ratios
from hdp_plugin.hdp.tables import class_prior, laplace, m_estimate
from hdp_plugin.hdp.trees import build_trees

from reference import contexts_by_counting, log_stirling, to_dense_cells

HERE = Path(__file__).parent


@pytest.mark.parametrize("n_max,t_max", [(1, 1), (12, 12), (30, 8), (60, 60)])
def test_log_stirling_table_matches_exact_integers(n_max, t_max):
    table = log_stirling_table(n_max, t_max)
    assert table.shape == (n_max + 1, min(t_max, n_max) + 1)
    for n in range(n_max + 1):
        for t in range(table.shape[1]):
            want = log_stirling(n, t)
            if want == -math.inf:
                assert table[n, t] == -np.inf
            else:
                assert table[n, t] == pytest.approx(want, rel=1e-12, abs=1e-12)


def test_digamma_matches_scipy():
    from scipy.special import digamma

    for x in [1e-3, 0.1, 0.5, 1.0, 2.0, 3.7, 10.0, 123.4, 1e5]:
        assert hsweeps.digamma(x) == pytest.approx(digamma(x), rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("n", [0, 1, 2, 5, 40, 1000])
def test_initial_tables(n):
    c = 2.0
    want = n if n <= 1 else max(1, math.floor(c * sum(1.0 / (c + i) for i in range(n))))
    assert hsweeps.initial_tables(n, c) == want


@pytest.mark.parametrize(
    "parents,n_rows",
    [([(), (), ()], 50), ([(1, 2), (2,), ()], 200), ([(2, 1), (0,), (0, 1)], 7), ([(1,), (), ()], 0)],
)
def test_build_trees_matches_counting_by_dictionary(parents, n_rows):
    rng = np.random.default_rng(n_rows)
    cards = np.array([3, 2, 4])
    X = np.stack([rng.integers(0, c, n_rows) for c in cards], axis=1).astype(np.uint8)
    y = rng.integers(0, 3, n_rows).astype(np.int32)
    trees = build_trees(X, y, cards, 3, parents, [0, 1, 2], block=16)
    raw = trees.raw_counts()
    for tr, c in enumerate(trees.attrs):
        want = contexts_by_counting(X, y, c, parents[c], 3, cards[c])
        lo, hi = int(trees.tree_node_start[tr]), int(trees.tree_node_start[tr + 1])
        assert hi - lo == len(want)
        got = {}
        for j in range(lo, hi):
            path = []
            k = j
            while trees.node_parent[k] >= 0:
                path.append(int(trees.node_branch[k]))
                k = trees.node_parent[k]
            path = tuple(reversed(path))
            cs = trees.node_cell_start[j]
            got[(int(trees.node_depth[j]), path)] = raw[cs : cs + cards[c]]
            # the child table leads back to this node
            if j != lo:
                p = trees.node_parent[j]
                assert trees.child_table[trees.child_start[p] + trees.node_branch[j]] == j
        assert set(got) == set(want)
        for key in want:
            assert np.array_equal(got[key], want[key]), key


def test_rng_is_deterministic_and_streams_differ():
    a = hrng.tree_states(42, 3)
    b = hrng.tree_states(42, 3)
    assert np.array_equal(a, b)
    assert len({tuple(r) for r in a}) == 3
    u = [xoshiro.uniform(a[0]) for _ in range(5)]
    v = [xoshiro.uniform(b[0]) for _ in range(5)]
    assert u == v and all(0.0 <= x < 1.0 for x in u)


_M64 = (1 << 64) - 1


def _splitmix64(z: int) -> int:
    """splitmix64's output function in Python integers (Vigna's reference)."""
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _M64
    return z ^ (z >> 31)


def _xoshiro_outputs(s: list[int], n: int) -> list[int]:
    """xoshiro256** in Python integers (Blackman and Vigna's reference)."""
    def rotl(x, k):
        return ((x << k) | (x >> (64 - k))) & _M64

    out = []
    s = list(s)
    for _ in range(n):
        out.append((rotl((s[1] * 5) & _M64, 7) * 9) & _M64)
        t = (s[1] << 17) & _M64
        s[2] ^= s[0]
        s[3] ^= s[1]
        s[1] ^= s[2]
        s[0] ^= s[3]
        s[2] ^= t
        s[3] = rotl(s[3], 45)
    return out


@pytest.mark.parametrize("entropy", [0, 1, 2**64 + 5, 2**128 - 1, 12345, np.int64(77)])
def test_stream_states_are_the_documented_splitmix64_of_the_seeds_words(entropy):
    """Word k of stream i is mix64(w[k] + (4 i + k + 1) * golden gamma) of the seed's words w; the seed is
    read, not advanced; a subset of streams is those rows; a negative stream number is refused."""
    from hdp_plugin import seeds as _seeds

    for key in [(), (5,), (2**30 + 2, 19)]:
        ss = np.random.SeedSequence(entropy, spawn_key=key)
        w = [int(x) for x in ss.generate_state(4, np.uint64)]
        idx = [0, 1, 2, 7, 2**30, 2**30 + 3]
        got = _seeds.stream_states(ss, idx)
        assert ss.n_children_spawned == 0
        want = [[_splitmix64((w[k] + (4 * i + k + 1) * 0x9E3779B97F4A7C15) & _M64) for k in range(4)] for i in idx]
        assert got.dtype == np.uint64 and got.tolist() == want, (entropy, key)
        assert np.array_equal(_seeds.stream_states(ss, [7, 0]), got[[3, 0]])
        assert np.array_equal(hrng.tree_states(ss, 3), got[:3])
    assert _seeds.stream_states(np.random.SeedSequence(1), []).shape == (0, 4)
    with pytest.raises(ValueError, match="stream numbers"):
        _seeds.stream_states(np.random.SeedSequence(1), [-1])


def test_the_kernels_xoshiro_is_the_reference_generator():
    """next_u64 gives xoshiro256**'s outputs and uniform their top 53 bits over 2**53."""
    s = hrng.tree_states(2026, 1)[0]
    want = _xoshiro_outputs([int(x) for x in s], 300)
    t = s.copy()
    assert [int(xoshiro.next_u64(s)) for _ in range(300)] == want
    assert [xoshiro.uniform(t) for _ in range(300)] == [(x >> 11) / 2.0**53 for x in want]


def test_gamma_and_beta_moments():
    s = hrng.tree_states(1, 1)[0]
    for shape in [0.3, 1.0, 2.5, 40.0]:
        g = np.array([hrng.gamma(s, shape) for _ in range(4000)])
        assert g.mean() == pytest.approx(shape, rel=0.1)
        assert g.var() == pytest.approx(shape, rel=0.2)
    q = np.exp(-np.array([hrng.neg_log_beta(s, 2.0, 6.0) for _ in range(4000)]))
    assert q.mean() == pytest.approx(0.25, rel=0.05)


def _slow_table_sweep(trees, group, conc, log_s, n, t, N, T, window, state):
    """The table sweep written out plainly, consuming the same random stream."""
    card = int(trees.tree_card[0])
    for j in range(trees.n_nodes - 1, 0, -1):
        p = trees.node_parent[j]
        c, cp = conc[group[j]], conc[group[p]]
        for x in range(card):
            cell, pcell = trees.node_cell_start[j] + x, trees.node_cell_start[p] + x
            if n[cell] <= 1:
                continue
            cands = [tt for tt in range(1, n[cell] + 1)
                     if abs(tt - t[cell]) <= window and n[pcell] + tt - t[cell] >= t[pcell]]
            if len(cands) <= 1:
                continue
            lw = np.array([log_stirling(int(n[cell]), tt) + tt * math.log(c)
                           + log_stirling(int(n[pcell] + tt - t[cell]), int(t[pcell]))
                           - math.lgamma(cp + N[p] + tt - t[cell]) for tt in cands])
            w = np.exp(lw - lw.max())
            u = xoshiro.uniform(state) * w.sum()
            k = int(np.searchsorted(np.cumsum(w), u, side="right"))
            k = min(k, len(cands) - 1)
            d = cands[k] - t[cell]
            t[cell] += d
            T[j] += d
            n[pcell] += d
            N[p] += d


def _initialised(trees, c):
    """The layout (tying "level") and the initial state (int64 counts) of ``trees``, with
    concentration ``c`` in every non-root group (the roots' 2)."""
    layout = tree_layout(trees, "level")
    state = new_state(trees, layout, 0, np.int64)
    state.conc[:] = np.where(layout.group_fixed, 2.0, c)
    kernels.init_trees(layout, state)
    return layout, state


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_table_sweep_matches_slow_twin(seed):
    rng = np.random.default_rng(seed)
    X = np.stack([rng.integers(0, 3, 60), rng.integers(0, 2, 60)], axis=1).astype(np.uint8)
    y = rng.integers(0, 2, 60).astype(np.int32)
    trees = build_trees(X, y, np.array([3, 2]), 2, [(1,), ()], [0])
    layout, state = _initialised(trees, 1.3)
    group, conc = layout.node_group, state.conc
    n, t, N, T = state.n, state.t, state.node_N, state.node_T
    log_s = log_stirling_table(int(trees.raw_counts().max()), 60)
    state_fast = hrng.tree_states(seed, 1)[0]
    state_slow = state_fast.copy()
    cells = sampler_cells(trees)  # the kernel's cells (observed values and rest cells); the twin's are dense
    fast = [a.copy() for a in (n, t, N, T)]
    slow = [to_dense_cells(cells, trees, n), to_dense_cells(cells, trees, t), N.copy(), T.copy()]
    weights = np.empty(9)  # max(2 window + 1, 9): table_sweep's slots
    tables = stirling_ratios(log_s, np.zeros((0, log_s.shape[1])))
    act, act_start = layout.act, layout.tree_act_start
    assert act_start[-1] == ((trees.raw_counts() >= 2) & (np.repeat(trees.node_parent, 3) >= 0)).sum()
    root_cells = int(layout.node_cell_start[1])
    for _ in range(5):
        hsweeps.table_sweep(act, 0, act_start[1], 0, root_cells, conc, *tables, *fast, 3, weights, state_fast)
        _slow_table_sweep(trees, group, conc, log_s, *slow, 3, state_slow)
        for a, b in zip(fast[:2], slow[:2]):
            assert np.array_equal(to_dense_cells(cells, trees, a), b)
        for a, b in zip(fast[2:], slow[2:]):
            assert np.array_equal(a, b)
        assert kernels.check_invariants(layout, state._replace(n=fast[0], t=fast[1], node_N=fast[2],
                                                               node_T=fast[3])) == -1


def test_big_leaf_rows_give_the_same_draws_as_a_full_table():
    """Leaves with large counts read their own rows; the draws are those of a full table."""
    from hdp_plugin.hdp.sampler import _stirling

    rng = np.random.default_rng(9)
    X = np.stack([rng.integers(0, 3, 2000), rng.integers(0, 2, 2000)], axis=1).astype(np.uint8)
    y = rng.integers(0, 2, 2000).astype(np.int32)
    trees = build_trees(X, y, np.array([3, 2]), 2, [(1,), ()], [0])
    layout, initial = _initialised(trees, 1.7)
    group, conc = layout.node_group, initial.conc
    state = [initial.n, initial.t, initial.node_N, initial.node_T]
    cells = sampler_cells(trees)
    raw = cells.cell_raw
    leaf = np.repeat(trees.is_leaf, np.diff(cells.node_cell_start))
    window, sweeps = 3, 5
    # dense rows cover every internal count these sweeps can reach, and no large leaf
    n_dense = int(state[0][~leaf].max()) + (sweeps + 1) * window * 3
    big_row = np.full(cells.n_cells, -1, np.int32)
    split = _stirling(raw, leaf, n_dense, 40, big_row, {})
    assert split[1] == n_dense + 1  # the large-leaf rows follow the dense ones
    assert (big_row >= 0).sum() == 12 and split[0].shape[0] - split[1] == np.unique(raw[big_row >= 0]).size
    full = stirling_ratios(*log_stirling_rows(int(raw.max()), 40, np.zeros(0, np.int64)))
    no_big = np.full(cells.n_cells, -1, np.int32)
    parts = (trees.tree_node_start, cells.node_cell_start, cells.cell_parent, trees.node_parent)
    act_a, act_start = kernels.active_cells(parts, raw, group, big_row)
    act_b, _ = kernels.active_cells(parts, raw, group, no_big)
    a = [v.copy() for v in state]
    b = [v.copy() for v in state]
    sa, sb = hrng.tree_states(3, 1)[0], hrng.tree_states(3, 1)[0]
    w = np.empty(max(2 * window + 1, 9))
    for _ in range(sweeps):
        need_a = hsweeps.table_sweep(act_a, 0, act_start[1], 0, int(cells.node_cell_start[1]), conc, *split, *a, window, w, sa)
        need_b = hsweeps.table_sweep(act_b, 0, act_start[1], 0, int(cells.node_cell_start[1]), conc, *full, *b, window, w, sb)
        assert need_a[0] == need_b[0] and need_a[1] <= n_dense
        for u, v in zip(a, b):
            assert np.array_equal(u, v)


def test_m_estimate_and_prior_match_formulas():
    rng = np.random.default_rng(4)
    X = np.stack([rng.integers(0, 3, 80), rng.integers(0, 2, 80)], axis=1).astype(np.uint8)
    y = rng.integers(0, 2, 80).astype(np.int32)
    trees = build_trees(X, y, np.array([3, 2]), 2, [(1,), ()], [0])
    for m in [0.0, 1.0, 3.0]:
        p = m_estimate(trees, m).reshape(-1, 3)
        raw = trees.raw_counts().reshape(-1, 3)
        want = (raw + m / 3) / (raw.sum(axis=1, keepdims=True) + m)
        np.testing.assert_allclose(p, want)
    raw = trees.raw_counts().reshape(-1, 3)
    np.testing.assert_allclose(laplace(trees).reshape(-1, 3), (raw + 1) / (raw.sum(axis=1, keepdims=True) + 3))
    prior = class_prior(y, 2)
    np.testing.assert_allclose(prior, (np.bincount(y, minlength=2) + 0.5) / 81)


@pytest.mark.skipif(os.environ.get("NUMBA_DISABLE_JIT") == "1", reason="already without JIT")
def test_kernels_without_jit():
    env = dict(os.environ, NUMBA_DISABLE_JIT="1")
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(HERE / "test_hdp_kernels.py"),
         "-k", "not without_jit and not moments"],
        env=env, capture_output=True, text=True, timeout=600, cwd=HERE.parent,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]


def test_stirling_ratios_are_ratios_of_exact_stirling_numbers():
    dense = log_stirling_table(30, 12)
    big = log_stirling_rows(45, 12, np.array([40, 45], np.int64))[1]
    rt, big_base, rn_t = stirling_ratios(dense, big)
    assert big_base == 31 and rt.shape == (33, 13) and rn_t.shape == (13, 31)
    for n in range(31):
        for t in range(1, 12):
            want = math.exp(log_stirling(n, t + 1) - log_stirling(n, t)) if t < n else 0.0
            assert rt[n, t] == pytest.approx(want, rel=1e-12)
            want = math.exp(log_stirling(n + 1, t) - log_stirling(n, t)) if t <= n < 30 else 0.0
            assert rn_t[t, n] == pytest.approx(want, rel=1e-12)
    for r, n in enumerate((40, 45)):
        for t in range(1, 12):
            want = math.exp(log_stirling(n, t + 1) - log_stirling(n, t))
            assert rt[big_base + r, t] == pytest.approx(want, rel=1e-10)


def _one_draw(tc, nx, npx, tpx, c, cp_Np, rt, big_base, rn_t, weights, state):
    """A table sweep over one cell (count nx, tables tc) whose parent cell has counts npx, tpx and
    c_p + N_p = cp_Np: the cell's new table count."""
    extra = int(cp_Np) - npx  # the parent's other values' customers
    conc = np.array([c, cp_Np - int(cp_Np)])
    n = np.array([nx, npx], np.int32)
    t = np.array([tc, tpx], np.int32)
    node_N = np.array([nx, npx + extra], np.int64)
    node_T = np.array([tc, tpx], np.int64)
    act = np.array([[0, 1, 0, 1, -1, 0, 1]], np.int64)
    hsweeps.table_sweep(act, 0, 1, 1, 1, conc, rt, big_base, rn_t, n, t, node_N, node_T, 10, weights, state)
    assert n[1] - npx == t[0] - tc and node_N[1] - npx - extra == t[0] - tc  # the parent follows
    return int(t[0])


@pytest.mark.parametrize("c", [1e-12, 0.7, 4000.0, 1e-200, 1e200])
def test_a_draw_follows_the_log_weights(c):
    """Each draw picks the candidate the log-space formula picks with the same uniform; extreme
    concentrations (products that over- or underflow) take the log-space path."""
    log_s = log_stirling_table(120, 60)
    rt, big_base, rn_t = stirling_ratios(log_s, np.zeros((0, 61)))
    rng = np.random.default_rng(11)
    weights = np.empty(21)
    for _ in range(300):
        nx = int(rng.integers(2, 60))
        tc = int(rng.integers(1, nx + 1))
        tpx = int(rng.integers(1, 40))
        npx = int(rng.integers(max(tc, tpx), 60))
        cp_Np = float(rng.uniform(0.01, 5.0)) + npx + int(rng.integers(0, 30))  # c_p + N_p, N_p >= n_p
        lo, hi = max(1, tc - 10, tpx - npx + tc), min(nx, tc + 10)
        if hi <= lo:
            continue
        state = hrng.tree_states(int(rng.integers(1 << 30)), 1)[0]
        u = xoshiro.uniform(state.copy())
        got = _one_draw(tc, nx, npx, tpx, c, cp_Np, rt, big_base, rn_t, weights, state)
        cands = np.arange(lo, hi + 1)
        lw = np.array([log_stirling(nx, int(tt)) + tt * math.log(c) + log_stirling(npx + int(tt) - tc, tpx)
                       - math.lgamma(cp_Np + tt - tc) for tt in cands])
        cum = np.cumsum(np.exp(lw - lw.max()))
        k = min(int(np.searchsorted(cum / cum[-1], u, side="right")), len(cands) - 1)
        if abs(cum[k] / cum[-1] - u) > 1e-9 and (k == 0 or abs(cum[k - 1] / cum[-1] - u) > 1e-9):
            assert got == cands[k], (nx, tc, npx, tpx, cp_Np, c)


_EDGE_SCRIPT = r"""
import numpy as np
from hdp_plugin.hdp import kernels, rng as hrng, sweeps as hsweeps
from hdp_plugin.hdp.stirling import log_stirling_table, stirling_ratios

def draw(tc, nx, npx, tpx, cp_Np, tables, window, seed):
    rt, big_base, rn_t = tables
    conc = np.array([0.9, cp_Np - int(cp_Np)])
    n = np.array([nx, npx], np.int32)
    t = np.array([tc, tpx], np.int32)
    node_N = np.array([nx, int(cp_Np)], np.int64)
    node_T = np.array([tc, tpx], np.int64)
    act = np.array([[0, 1, 0, 1, -1, 0, 1]], np.int64)
    state = hrng.tree_states(seed, 1)[0]
    hsweeps.table_sweep(act, 0, 1, 1, 1, conc, rt, big_base, rn_t, n, t, node_N, node_T, window,
                        np.empty(max(2 * window + 1, 9)), state)
    return int(t[0]), state

wide = stirling_ratios(log_stirling_table(80, 60), np.zeros((0, 61)))
rng = np.random.default_rng(5)
cases = 0
for window in (1, 2, 3, 4, 10):
    for _ in range(400):
        nx = int(rng.integers(2, 30))
        tc = int(rng.choice([1, 2, 3, nx - 1, nx, int(rng.integers(1, nx + 1))]))
        tc = min(max(tc, 1), nx)
        tpx = int(rng.integers(1, 12))
        npx = int(rng.integers(max(tc, tpx), 31))
        cp_Np = float(rng.uniform(0.01, 3.0)) + npx + int(rng.integers(0, 5))
        # tables no larger than the sampler's size check lets them be: columns up to what either cell
        # can need (min(n, t + 2 window)), dense rows up to the parent's count plus a window
        t_cap = max(min(nx, tc + 2 * window), min(npx, tpx + 2 * window))
        n_cap = max(nx, npx + window)
        exact = stirling_ratios(log_stirling_table(n_cap, t_cap), np.zeros((0, t_cap + 1)))
        seed = int(rng.integers(1 << 30))
        got = draw(tc, nx, npx, tpx, cp_Np, exact, window, seed)
        want = draw(tc, nx, npx, tpx, cp_Np, wide, window, seed)
        assert got[0] == want[0] and np.array_equal(got[1], want[1]), (window, nx, tc, npx, tpx)
        cases += 1
print("ok", cases)
"""


def test_draws_read_only_within_tables_sized_to_their_need(tmp_path):
    """The draws' loop-free and fixed-trip paths read clamped cells for absent candidates: with numba's
    bounds checking on (a subprocess, a cache of its own), draws at the edges (tc near 1 or n, small
    parent counts, windows 1 to 10) on tables as small as the sampler's size check allows read nothing
    out of range and give the draws of wide tables."""
    env = dict(os.environ, NUMBA_BOUNDSCHECK="1", NUMBA_CACHE_DIR=str(tmp_path / "cache"),
               PYTHONPATH=str(HERE.parent) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    done = subprocess.run([sys.executable, "-c", _EDGE_SCRIPT], capture_output=True, text=True, env=env,
                          timeout=600, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.startswith("ok ")


@pytest.mark.parametrize("a,count", [(0.3, 1.0), (2.0, 1.0), (0.05, 6.0), (4.0, 7.0), (0.8, 40.0)])
def test_neg_log_beta_has_the_beta_moments(a, count):
    """-log q for q ~ Beta(a, n): mean digamma(a + n) - digamma(a), variance trigamma(a) - trigamma(a + n)."""
    from scipy.special import digamma, polygamma

    s = hrng.tree_states(7, 1)[0]
    v = np.array([hrng.neg_log_beta(s, a, count) for _ in range(20000)])
    mean = digamma(a + count) - digamma(a)
    var = polygamma(1, a) - polygamma(1, a + count)
    assert v.mean() == pytest.approx(mean, abs=5 * math.sqrt(var / v.size))
    assert v.var() == pytest.approx(var, rel=0.1)


@pytest.mark.parametrize("c", [0.05, 0.7, 3.0, 400.0])
def test_grouped_beta_sum_has_the_moments_and_distribution_of_the_node_draws_sum(c):
    """The concentration draw's sum over a group's small nodes, from one gamma per count level,
    against the sum of one Beta draw per node: the moments of the sum, and a two-sample KS test."""
    from scipy.special import digamma, polygamma
    from scipy.stats import ks_2samp

    counts = [1] * 40 + [2] * 9 + [3] * 4 + [7] * 3 + [hsweeps.GROUPED_BETA_MAX] * 2
    s = hrng.tree_states(11, 1)[0]
    hist = np.zeros((2, hsweeps.GROUPED_BETA_MAX + 1), np.int64)
    grouped = np.empty(6000)
    for r in range(grouped.size):
        for nj in counts:
            hist[1, nj] += 1
        grouped[r] = hsweeps.grouped_neg_log_beta(s, c, hist, 1)
        assert not hist.any()  # the row is left zeroed
    by_node = np.array([sum(hrng.neg_log_beta(s, c, float(nj)) for nj in counts) for _ in range(grouped.size)])
    n = np.array(counts, float)
    mean = float(np.sum(digamma(c + n) - digamma(c)))
    var = float(np.sum(polygamma(1, c) - polygamma(1, c + n)))
    assert grouped.mean() == pytest.approx(mean, abs=5 * math.sqrt(var / grouped.size))
    assert grouped.var() == pytest.approx(var, rel=0.1)
    assert ks_2samp(grouped, by_node).pvalue > 1e-3


def test_balance_trees_gives_every_thread_its_share():
    cost = np.array([50.0, 9, 8, 7, 40, 6, 5, 30, 4, 3])
    order, bin_start = kernels.balance_trees(cost, 2)
    assert sorted(order.tolist()) == list(range(10)) and bin_start.tolist()[0] == 0
    loads = [cost[order[bin_start[b]:bin_start[b + 1]]].sum() for b in range(2)]
    assert max(loads) - min(loads) <= 4  # contiguous halves of the largest-first order: 143 against 19
    assert kernels.balance_trees(cost, 20)[1].shape == (11,)  # never more bins than trees
    order, bin_start = kernels.balance_trees(np.zeros(0), 2)
    assert order.size == 0 and bin_start.tolist() == [0, 0]


@pytest.mark.parametrize("history", [True, False])
def test_growing_the_tables_continues_them_and_keeps_the_large_rows(history, monkeypatch):
    """The sampler's tables grown from an earlier pair (more dense rows, more columns, both) equal the
    tables computed afresh, bit for bit; so do the same growths with the new columns on two threads,
    and without the last column's history (beyond config.STIRLING_HISTORY_BYTES: all columns again)."""
    from hdp_plugin import config
    from hdp_plugin.hdp.stirling import grow_stirling_rows

    if not history:
        monkeypatch.setattr(config, "STIRLING_HISTORY_BYTES", 8 * 450)  # kept up to row 449 only
    for threads in (1, 2):
        first = grow_stirling_rows(None, 100, 20, np.array([150, 300, 500]), threads)
        assert first[3].shape == ((501,) if history else (0,))
        grown = grow_stirling_rows(first, 400, 20, np.array([500]), threads)
        fresh = log_stirling_rows(400, 20, np.array([500]))
        assert np.array_equal(grown[0], fresh[0]) and np.array_equal(grown[1], fresh[1])
        wider = grow_stirling_rows(grown, 400, 30, np.array([500]), threads)
        fresh = log_stirling_rows(400, 30, np.array([500]))
        assert np.array_equal(wider[0], fresh[0]) and np.array_equal(wider[1], fresh[1])
        both = grow_stirling_rows(first, 700, 45, np.zeros(0, np.int64), threads)  # dense past every leaf
        fresh = log_stirling_rows(700, 45, np.zeros(0, np.int64))
        assert np.array_equal(both[0], fresh[0]) and both[1].shape == (0, 46)
        assert np.array_equal(grow_stirling_rows(first, 100, 20, np.array([150, 300, 500]), threads)[1], first[1])


@pytest.mark.skipif(os.environ.get("NUMBA_DISABLE_JIT") == "1", reason="millions of entries: minutes without JIT")
def test_large_leaf_rows_streamed_on_two_threads_equal_one_thread():
    """Enough entries to stream the columns on two threads, one a chunk behind the other: the same
    numbers, bit for bit, fresh and when columns are added; the last column's history is that column."""
    from hdp_plugin.hdp import stirling
    from hdp_plugin.hdp.stirling import grow_stirling_rows

    values = np.array([1500, 40_000, 90_001, 90_002, 150_000], np.int64)
    assert 150_000 * 30 >= stirling._PIPELINE_ENTRIES  # the two-thread path is the one tested
    one = grow_stirling_rows(None, 1024, 40, values, 1)
    two = grow_stirling_rows(None, 1024, 40, values, 2)
    assert all(np.array_equal(a, b) for a, b in zip(one, two))
    assert np.isfinite(one[1][:, 1:]).all() and np.array_equal(one[1][:, 40], one[3][values])
    wide_one = grow_stirling_rows(one, 1024, 100, values, 1)
    wide_two = grow_stirling_rows(two, 1024, 100, values, 2)
    fresh = log_stirling_rows(1024, 100, values)
    for wide in (wide_one, wide_two):
        assert np.array_equal(wide[0], fresh[0]) and np.array_equal(wide[1], fresh[1])
    # closed forms: S(n, 1) = (n - 1)!, S(n, 2) = (n - 1)! H(n - 1), S(n, n - 1) = n (n - 1) / 2
    for row, n in [(fresh[0][1024], 1024), (fresh[1][4], 150_000)]:
        assert row[1] == pytest.approx(math.lgamma(n), rel=1e-12)
        harmonic = math.fsum(1.0 / i for i in range(1, n))
        assert row[2] == pytest.approx(math.lgamma(n) + math.log(harmonic), rel=1e-12)
    assert fresh[0][101, 100] == pytest.approx(math.log(101 * 100 / 2), rel=1e-12)


def test_a_failure_of_the_second_stirling_thread_is_raised_not_a_hang(monkeypatch):
    """The right run's first copy failing (out of memory) ends its thread: the left run, which hands it
    chunks through a bounded queue, must get the error rather than block on the full queue for ever."""
    import threading

    from hdp_plugin.hdp import stirling
    from hdp_plugin.hdp.stirling import grow_stirling_rows

    real = np.array

    def array(*args, **kwargs):
        if threading.current_thread().name == "hdp-stirling":
            raise MemoryError("no memory for the right run's first row")
        return real(*args, **kwargs)

    monkeypatch.setattr(stirling.np, "array", array)
    values = np.array([1500, 40_000, 90_001, 90_002, 150_000], np.int64)
    outcome = []

    def run():
        try:
            grow_stirling_rows(None, 1024, 40, values, 2)
            outcome.append(None)
        except MemoryError as exc:
            outcome.append(exc)

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(120)  # seconds on a loaded machine; the one-thread build of these rows takes about one
    assert not worker.is_alive(), "the left run blocked on the queue of a dead right run"
    assert isinstance(outcome[0], MemoryError), outcome


def _kernels_in(path):
    """(name, arguments, docstring) of every numba kernel (a function decorated with njit) in a file."""
    import ast

    tree = ast.parse(path.read_text())
    return [(f.name, [a.arg for a in f.args.args], ast.get_docstring(f) or "") for f in ast.walk(tree)
            if isinstance(f, ast.FunctionDef) and any("njit" in ast.unparse(d) for d in f.decorator_list)]


def _documented(doc):
    """The names a numpy-style Parameters section of ``doc`` documents (``a, b : type`` lines)."""
    import re

    section = doc.split("Parameters\n----------\n", 1)[1] if "Parameters\n----------\n" in doc else ""
    names = set()
    for line in section.splitlines():
        m = re.match(r"(\w+(?:, \w+)*) ?:", line)
        if m:
            names |= set(m.group(1).split(", "))
    return names


def test_no_kernel_takes_over_20_arguments_and_every_kernel_documents_each():
    package = HERE.parent / "hdp_plugin"
    found = [(str(p.relative_to(package)), name, args, doc) for p in sorted(package.rglob("*.py"))
             for name, args, doc in _kernels_in(p)]
    # the walk sees the kernels of every stage (a sanity floor, so a broken walk cannot pass empty)
    assert {"hdp/kernels.py", "hdp/sweeps.py", "hdp/predict.py", "structure/trie_kernels.py",
            "preprocess/kernels.py"} <= {
        f for f, *_ in found}
    wide = [(f, name, len(args)) for f, name, args, _ in found if len(args) > 20]
    assert not wide, f"kernels over 20 arguments: {wide}"
    # every kernel of the package, private helpers included, has an entry for each argument
    undocumented = [(f, name, sorted(set(args) - _documented(doc))) for f, name, args, doc in found
                    if set(args) - _documented(doc)]
    assert not undocumented, f"kernel arguments without an entry in the docstring's Parameters: {undocumented}"
