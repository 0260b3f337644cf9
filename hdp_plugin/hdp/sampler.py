"""The collapsed Gibbs sampler's driver: validate, allocate, seed, run the kernels from a queue.

See docs/method.md section 4 and Petitjean et al. (2018). The kernels live in
:mod:`hdp_plugin.hdp.kernels`; this module chooses the tying groups, sizes the shared Stirling
tables (and grows them on demand), derives one random stream per tree from ``random_state``, runs
every tree to its end in calls of about a quarter second (so that progress can be reported and a
run cancelled between calls) and returns averaged tables.

:func:`sample` is a short driver over its steps: :func:`_checked_lengths` (the arguments),
:class:`_StopPlan` (the stopping rule of a ``tolerance``), :func:`_setup` (the kernels' named tuples,
built by :func:`tree_layout` and :func:`new_state`, the Stirling tables and the rule's arrays), then
:class:`_TreeQueue` (every tree to its end, batches of trees on the threads; :class:`_Gate` lets the
tables grow between calls) or, when the caller reads the running sums at checkpoints,
:func:`_lockstep`; last :func:`_result`.
"""

from __future__ import annotations

import logging
import threading
import time
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Callable

import numpy as np

from .. import config

from ..runtime import cancel
from ..runtime.compile_notice import Stopwatch
from ..runtime.threads import pool_map, resolved_threads as _threads
from ..errors import Cancelled, HDPError, ParameterError
from ..params import default_burn_in  # noqa: F401 - also this module's name for it
from . import kernels
from .rng import tree_states
from .stirling import grow_stirling_rows, stirling_ratios
from .trees import ContextTrees, branch_radices

log = logging.getLogger(__name__)


def tying_groups(trees: ContextTrees, tying: str):
    """Concentration groups: ``node_group``, ``group_fixed`` and ``tree_group_start``.

    Every root has its own fixed group (c = 2, never sampled). Non-root nodes share by ``tying``:
    ``"none"`` one per node, ``"same-parent"`` siblings share, ``"level"`` all nodes at one depth of
    a tree share, ``"single"`` all non-root nodes of a tree share.
    """
    if tying not in config.TYINGS:
        raise ParameterError(f"tying must be one of {', '.join(config.TYINGS)}; got {tying!r}")
    n = trees.n_nodes
    key = {"none": np.arange(n, dtype=np.int64), "same-parent": trees.node_parent, "level": trees.node_depth,
           "single": np.zeros(n, np.int64)}[tying]
    is_root = np.zeros(n, np.bool_)
    is_root[trees.tree_node_start[:-1][np.diff(trees.tree_node_start) > 0]] = True
    if n and (is_root[1:] | (key[1:] >= key[:-1])).all():
        # every tree's keys ascend (depth order, a level's nodes by parent): a tree's groups are the
        # runs of its non-root keys, what np.unique's inverse gives, numbered in one pass
        new = is_root.copy()
        new[1:] |= is_root[:-1] | (key[1:] != key[:-1])
        node_group = np.cumsum(new) - 1
        first = np.flatnonzero(new)
        starts = np.append(node_group[trees.tree_node_start[:-1][np.diff(trees.tree_node_start) > 0]],
                           first.size).astype(np.int64)
        if starts.size == trees.n_trees + 1:  # no empty tree
            return node_group.astype(np.int64), is_root[first], starts
    node_group = np.empty(trees.n_nodes, np.int64)
    fixed, starts = [], [0]
    g = 0
    for tr in range(trees.n_trees):
        lo, hi = int(trees.tree_node_start[tr]), int(trees.tree_node_start[tr + 1])
        node_group[lo] = g
        fixed.append(True)
        g += 1
        if hi - lo > 1:
            rest = slice(lo + 1, hi)
            if tying == "none":
                key = np.arange(hi - lo - 1)
            elif tying == "same-parent":
                key = trees.node_parent[rest]
            elif tying == "level":
                key = trees.node_depth[rest]
            else:
                key = np.zeros(hi - lo - 1, np.int64)
            uniq, inv = np.unique(key, return_inverse=True)
            node_group[rest] = g + inv
            fixed.extend([False] * uniq.size)
            g += uniq.size
        starts.append(g)
    return node_group, np.asarray(fixed, np.bool_), np.asarray(starts, np.int64)


def tree_layout(trees: ContextTrees, tying: str, raw: np.ndarray | None = None) -> kernels.TreeLayout:
    """The trees as the kernels read them: a cell per observed value of every node and a rest cell
    (:func:`~hdp_plugin.hdp.kernels.observed_cells`), their tying groups (:func:`tying_groups`), the
    cells that can need a draw and the moving and still nodes.

    Parameters
    ----------
    trees : ContextTrees
    tying : {"none", "same-parent", "level", "single"}
        How concentrations are shared.
    raw : ndarray (trees.n_cells,) int64, optional
        ``trees.raw_counts()``, when the caller has it.

    Returns
    -------
    TreeLayout
        :class:`~hdp_plugin.hdp.kernels.TreeLayout`; ``act``'s large-leaf column is -1 (every cell
        in the dense rows) until the Stirling tables are built (:class:`_TableSizes`).
    """
    return _layout_of(trees, sampler_cells(trees, raw), *tying_groups(trees, tying))


def _layout_of(trees: ContextTrees, cells: "SamplerCells", node_group, group_fixed, tree_group_start):
    """:func:`tree_layout` of the sampler's ``cells`` of ``trees`` and their tying groups."""
    cell_start, cell_parent, cell_raw = cells.node_cell_start, cells.cell_parent, cells.cell_raw
    act, tree_act_start = kernels.active_cells((trees.tree_node_start, cell_start, cell_parent, trees.node_parent),
                                               cell_raw, node_group, np.full(cell_raw.shape[0], -1, np.int64))
    cancel.check()
    # nodes whose counts can change get their estimates every iteration, the others (all
    # leaves among them) once per window of constant concentrations
    moving, tree_mv_start, still, tree_st_start = kernels.moving_nodes(trees, act)
    leaf_counts = np.where(np.repeat(trees.is_leaf, np.diff(cell_start)), cell_raw, 0)
    return kernels.TreeLayout(
        tree_node_start=trees.tree_node_start, tree_card=trees.tree_card, tree_max_children=_max_children(trees),
        tree_group_start=tree_group_start, tree_act_start=tree_act_start, tree_mv_start=tree_mv_start,
        tree_st_start=tree_st_start, node_parent=trees.node_parent, node_cell_start=cell_start,
        cell_parent=cell_parent, node_group=node_group, is_leaf=trees.is_leaf, leaf_counts=leaf_counts,
        group_fixed=group_fixed, act=act, moving=moving, still=still)


@dataclass
class SamplerCells:
    """The sampler's cells of some trees (:func:`~hdp_plugin.hdp.kernels.observed_cells`): per node its
    observed values in order, then a rest cell that stands for the node's other values."""

    node_cell_start: np.ndarray  # (n_nodes + 1,)
    cell_value: np.ndarray  # (n_cells,) int32: the value; the tree's cardinality for a rest cell
    cell_parent: np.ndarray  # (n_cells,) int32: the parent's cell of the same value (-1 at a root)
    cell_raw: np.ndarray  # (n_cells,) the data count (a leaf's, or an internal node's subtree's); 0 at rest

    @property
    def n_cells(self) -> int:
        return int(self.node_cell_start[-1])


def take_cells(cells: SamplerCells, trees: ContextTrees, index) -> SamplerCells:
    """The cells of trees ``index`` (in that order) of ``trees``, as :func:`~hdp_plugin.hdp.trees.take_trees`
    takes the trees."""
    from .trees import _ranges

    idx = np.asarray(index, dtype=np.int64).reshape(-1)
    ns = np.asarray(trees.tree_node_start, np.int64)
    tree_cells = cells.node_cell_start[ns]
    nodes = _ranges(ns[idx], ns[idx + 1])
    per_node = np.diff(cells.node_cell_start)[nodes]
    start = np.zeros(nodes.size + 1, np.int64)
    np.cumsum(per_node, out=start[1:])
    lengths = tree_cells[idx + 1] - tree_cells[idx]
    new_tree = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
    at = _ranges(tree_cells[idx], tree_cells[idx + 1])
    shift = np.repeat(new_tree[:-1] - tree_cells[idx], lengths)
    parent = cells.cell_parent[at]
    return SamplerCells(start, cells.cell_value[at], np.where(parent >= 0, parent + shift, -1).astype(np.int32),
                        cells.cell_raw[at])


def concatenate_cells(parts: list) -> SamplerCells:
    """The cells of several sets of trees laid out one after the other (:func:`~hdp_plugin.hdp.trees.concatenate_trees`).
    ``parts`` is emptied as its cells are copied: each part goes as soon as it is laid out."""
    n_nodes = sum(int(c.node_cell_start.shape[0]) - 1 for c in parts)
    n_cells = sum(c.n_cells for c in parts)
    start, value = np.zeros(n_nodes + 1, np.int64), np.empty(n_cells, np.int32)
    parent, raw = np.empty(n_cells, np.int32), np.empty(n_cells, np.int64)
    node = off = 0
    parts.reverse()
    while parts:
        c = parts.pop()
        k, m = int(c.node_cell_start.shape[0]) - 1, c.n_cells
        start[node + 1:node + k + 1] = c.node_cell_start[1:] + off
        value[off:off + m] = c.cell_value
        raw[off:off + m] = c.cell_raw
        parent[off:off + m] = np.where(c.cell_parent >= 0, c.cell_parent + off, -1)
        node, off = node + k, off + m
    return SamplerCells(start, value, parent, raw)


def sampler_cells(trees: ContextTrees, raw: np.ndarray | None = None) -> SamplerCells:
    """The cells the sampler holds for ``trees`` (``raw``: ``trees.raw_counts()`` if the caller has it)."""
    raw = trees.raw_counts(compiled=True) if raw is None else raw
    i64 = lambda a: np.ascontiguousarray(a, np.int64)  # noqa: E731
    return SamplerCells(*kernels.observed_cells(i64(trees.tree_node_start), i64(trees.tree_card),
                                                i64(trees.node_cell_start), i64(trees.node_parent), i64(raw)))


def new_state(trees: ContextTrees, layout: kernels.TreeLayout, random_state, count_type=None) -> kernels.SamplerState:
    """A zero state with the initial concentrations and one random stream per tree;
    :func:`~hdp_plugin.hdp.kernels.init_trees` then sets its counts.

    Parameters
    ----------
    trees : ContextTrees
    layout : TreeLayout
        The trees' layout (:func:`tree_layout`): its tying groups.
    random_state : int, SeedSequence, Generator, ndarray or None
        The seed of the per-tree streams (:func:`~hdp_plugin.hdp.rng.tree_states`).
    count_type : numpy integer dtype, optional
        The dtype of ``n`` and ``t``; by default int32 unless a context holds over 2**31 - 1 rows
        (counts never exceed the data counts; half the memory traffic of the sweeps).

    Returns
    -------
    SamplerState
        :class:`~hdp_plugin.hdp.kernels.SamplerState`.
    """
    conc = np.full(layout.group_fixed.shape[0], config.INITIAL_CONCENTRATION)
    conc[layout.group_fixed] = config.ROOT_CONCENTRATION
    if count_type is None:
        count_type = np.int32 if int(layout.leaf_counts.max(initial=0)) < 2**31 - 1 else np.int64
    n_cells = int(layout.node_cell_start[-1])
    return kernels.SamplerState(
        n=np.zeros(n_cells, count_type), t=np.zeros(n_cells, count_type), node_N=np.zeros(trees.n_nodes, np.int64),
        node_T=np.zeros(trees.n_nodes, np.int64), conc=conc, prob=np.zeros(n_cells), est_sum=np.zeros(n_cells),
        wsum=np.zeros(n_cells), win_k=np.zeros(trees.n_trees, np.int64), rng=tree_states(random_state, trees.n_trees))


@dataclass
class SamplerResult:
    """Averaged estimates and the final sampler state, over the sampler's cells (``cells``: every
    node's observed values, then a rest cell whose estimate is the total of the node's other values')."""

    probabilities: np.ndarray  # (n_cells,) averaged estimate of every cell
    concentrations: np.ndarray  # (n_groups,) final concentration of every group
    node_group: np.ndarray  # (n_nodes,)
    n_samples: int
    iterations: int
    burn_in: int
    seconds: float  # wall time of sampling, less what numba spent compiling meanwhile
    table_counts: np.ndarray  # (n_cells,) final t (an integer type wide enough for the data's counts)
    customer_counts: np.ndarray  # (n_cells,) final n (as t)
    cells: SamplerCells | None = None  # the cells the per-cell arrays are of
    stirling_shape: tuple = ()  # ((dense rows, columns), (large-leaf rows, columns)) at the end
    cpu_seconds: float = 0.0  # CPU time of the process (all threads) while sampling
    #: (n_trees,) iterations each tree ran: all ``iterations`` unless a tolerance stopped trees early
    tree_iterations: np.ndarray | None = None


def sample(
    trees: ContextTrees,
    *,
    iterations: int = config.DEFAULT_ITERATIONS,
    burn_in: int | None = None,
    tying: str = config.DEFAULT_TYING,
    random_state=None,
    n_jobs: int | None = None,
    window: int = config.WINDOW,
    progress: Callable[[int, int], bool | None] | None = None,
    tolerance: float | None = None,
    checkpoints=(),
    on_checkpoint: Callable[[int, np.ndarray], bool | None] | None = None,
    debug: bool = False,
    first_check: int | None = None,
    cells: SamplerCells | None = None,
    sources: np.ndarray | None = None,
    _initial_sizes: tuple[int, int] | None = None,
) -> SamplerResult:
    """Estimate every tree's probability tables with the HDP collapsed Gibbs sampler.

    Parameters
    ----------
    trees : ContextTrees
    iterations : int
        Number of Gibbs iterations (the paper's experiments use 50,000).
    burn_in : int or None
        Iterations discarded before averaging; default ``min(1000, iterations // 10)``.
    tying : {"none", "same-parent", "level", "single"}
        How concentrations are shared.
    random_state : int, SeedSequence, Generator or None
        Seed of the per-tree random streams: the same seed gives bit-identical tables whatever
        ``n_jobs`` is.
    n_jobs : int or None
        Threads used to sample trees in parallel; None or -1 for all cores.
    window : int
        Half-width of the window of candidate table counts.
    progress : callable(iteration_done, iterations) -> bool, optional
        Called between calls of the kernels (about every quarter second of a thread's work, from that
        thread; never two calls at once), with the share of the work done as iterations of
        ``iterations``, and once at the end with ``(iterations, iterations)``; returning ``False``
        cancels the run (:class:`Cancelled`).
    tolerance : float or None
        Stop every tree on its own once its averaged tables have converged, ``iterations`` being
        then the most a tree runs (:func:`convergence_checks`, docs/method.md section 4): at
        iterations 500, 1000, 2000, ... (from ``first_check``) a tree whose averaged tables changed by less than
        ``tolerance`` since half as many iterations (the mean of |log p_i - log p_{i/2}| over its
        leaf cells, weighted by their data counts) stops, with the tables of a run of that many
        iterations (its burn-in ``burn_in``, or by default that of the shorter run). Each tree's
        decision reads only its own chain, so the result still does not depend on the threads.
    checkpoints : sequence of int
        Iterations after which ``on_checkpoint`` is called (those past burn-in and at most
        ``iterations``).
    on_checkpoint : callable(iteration, sums) -> bool, optional
        Called with the number of iterations done and ``sums``, a fresh array of every cell's
        (``SamplerResult.cells``) estimates summed over the iterations from ``burn_in`` to there (divide by
        ``iteration - burn_in`` for the averaged tables). Returning ``True`` stops the run there:
        the result is then that of a run of ``iteration`` iterations. Reading the sums does not
        touch the chain, so a run gives the same tables with or without checkpoints.
    debug : bool
        Check the sampler invariants after every iteration (slow; one thread).
    first_check : int or None
        With a ``tolerance``: the first iteration at which a tree may stop (then every doubling);
        None is ``config.CONVERGENCE_FIRST_CHECK`` (500).
    cells : SamplerCells, optional
        The trees' cells (:func:`sampler_cells`), when the caller has them; then ``trees.leaf_counts``
        is not read and may be empty.
    sources : ndarray (n_trees,) int, optional
        Per tree, the first tree that poses the same estimation problem
        (:func:`~hdp_plugin.hdp.trees.tree_sources`): a tree that is not its own source is not sampled
        and takes its source's tables, counts, concentrations and iterations. The other trees run on
        their own streams exactly as they would among all the trees.

    Returns
    -------
    SamplerResult

    References
    ----------
    F. Petitjean, W. Buntine, G. I. Webb and N. Zaidi, "Accurate parameter estimation for Bayesian
    network classifiers using hierarchical Dirichlet processes", Machine Learning 107 (2018).
    """
    given_burn_in = burn_in
    iterations, burn_in = _checked_lengths(iterations, burn_in, window, tolerance, on_checkpoint)
    started, cpu_started = Stopwatch(), time.process_time()  # the time of sampling, less compiling
    plan = _StopPlan(iterations, given_burn_in, tolerance, first_check) if tolerance is not None else None
    if plan is not None:
        burn_in = plan.accumulate_from  # the running sums start where the earliest averaged run starts
    run = _setup(trees, tying, random_state, n_jobs if not debug else 1, _settings(burn_in, window), _initial_sizes,
                 plan, iterations, cells)
    copies = _copies(run, sources, iterations)
    try:
        if on_checkpoint is not None:
            reached = _lockstep(run, iterations, burn_in, checkpoints, on_checkpoint, progress, debug, copies)
        else:
            reached = _TreeQueue(run, progress, debug).run_all()
        kernels.flush_trees(run.layout, run.state)
    finally:
        run.close()
    return _result(run, plan, reached, started, cpu_started, copies)


def _copies(run: "_Run", sources, iterations: int) -> list | None:
    """The trees ``sources`` says not to sample, as ``(cells, source's cells, groups, source's groups, tree,
    source)`` slices, marked as run to the end (no cost, nothing left to do); None if there are none."""
    if sources is None:
        return None
    sources = np.asarray(sources, np.int64)
    trees, layout = run.trees, run.layout
    copied = np.flatnonzero(sources != np.arange(trees.n_trees))
    if not copied.size:
        return None
    cs = layout.node_cell_start[trees.tree_node_start]
    gs = layout.tree_group_start
    run.reached[copied] = iterations
    run.cost[copied] = 0.0
    return [(slice(cs[t], cs[t + 1]), slice(cs[s], cs[s + 1]), slice(gs[t], gs[t + 1]), slice(gs[s], gs[s + 1]),
             int(t), int(s)) for t, s in zip(copied, sources[copied])]


def _fill_copies(copies: list | None, cell_arrays=(), group_arrays=(), tree_arrays=()) -> None:
    """Give every copied tree its source's entries of the per-cell, per-group and per-tree arrays."""
    for cells, src_cells, groups, src_groups, t, s in copies or ():
        for a in cell_arrays:
            a[cells] = a[src_cells]
        for a in group_arrays:
            a[groups] = a[src_groups]
        for a in tree_arrays:
            a[t] = a[s]


def _checked_lengths(iterations, burn_in, window, tolerance, on_checkpoint) -> tuple[int, int]:
    """:func:`sample`'s first step: check the run's lengths and options (:class:`ParameterError`);
    returns ``(iterations, burn_in)`` as whole numbers, the burn-in's default filled in."""
    iterations = int(iterations)
    if iterations < 1:
        raise ParameterError(f"iterations must be >= 1, got {iterations!r}")
    if tolerance is not None and not (float(tolerance) > 0):
        raise ParameterError(f"tolerance must be a number > 0, got {tolerance!r}")
    if tolerance is not None and on_checkpoint is not None:
        raise ParameterError("a tolerance and on_checkpoint cannot be combined")
    if burn_in is None:
        burn_in = default_burn_in(iterations)
    burn_in = int(burn_in)
    if not 0 <= burn_in < iterations:
        raise ParameterError(f"burn_in must be in [0, iterations), got {burn_in!r} with iterations={iterations}")
    if window < 1:
        raise ParameterError(f"window must be >= 1, got {window!r}")
    return iterations, burn_in


def _settings(burn_in: int, window: int) -> kernels.Settings:
    """The run's constants for the kernels: its burn-in and window, the concentrations' schedule
    and prior from :mod:`hdp_plugin.config` (typed once, so that the kernels compile once)."""
    return kernels.Settings(burn_in=int(burn_in), window=int(window), conc_every=int(config.CONCENTRATION_EVERY),
                            conc_offset=int(config.CONCENTRATION_OFFSET), shape=float(config.CONCENTRATION_SHAPE),
                            rate=float(config.CONCENTRATION_RATE), max_c=float(config.MAX_CONCENTRATION))


class _TableSizes:
    """The sizes of a run's Stirling tables: from the initial state, grown on demand (docs/hdp.md,
    "Stirling numbers").

    Dense rows for the counts that move (internal nodes) and for small leaves, one row per distinct
    large leaf count; columns from twice the largest t the first iteration can ask for.
    """

    def __init__(self, cells: SamplerCells, layout: kernels.TreeLayout,
                 state: kernels.SamplerState, window: int, initial_sizes: tuple[int, int] | None, threads: int = 1):
        raw = cells.cell_raw
        self.raw = raw
        self.threads = threads  # for the new columns of the tables (grow_stirling_rows)
        self.n_max = int(raw.max(initial=1))
        self.cell_is_leaf = np.repeat(layout.is_leaf, np.diff(layout.node_cell_start))
        # within one iteration a count can grow by the window per child
        self.margin = window * (int(layout.tree_max_children.max(initial=1)) + 1)
        big_row = np.full(cells.n_cells, -1, np.int32)
        t_need = int(kernels.needed_sizes(0, cells.n_cells, state.n, state.t, big_row, window)[0])
        self.t_cap = min(self.n_max, max(2 * t_need, config.STIRLING_MIN_COLUMNS))
        n_int = int(state.n[~self.cell_is_leaf].max(initial=1))
        self.n_dense = min(self.n_max + self.margin, max(2 * (n_int + self.margin), config.STIRLING_MIN_ROWS))
        if initial_sizes is not None:  # tests: start small and grow
            self.n_dense, self.t_cap = initial_sizes
        self.cache: dict = {}

    def grow(self, t_need: int, dense_need: int) -> bool:
        """Grow the dimensions that ``t_need`` columns and internal counts up to ``dense_need`` need
        (doubling at least); False if neither needs to."""
        grown = False
        if t_need > self.t_cap:
            self.t_cap = min(self.n_max, max(2 * self.t_cap, t_need))
            grown = True
        if dense_need + self.margin > self.n_dense:
            self.n_dense = min(self.n_max + self.margin, max(2 * self.n_dense, dense_need + self.margin))
            grown = True
        return grown

    def tables(self, layout: kernels.TreeLayout, big_row: np.ndarray) -> kernels.StirlingTables:
        """The tables for the current sizes (:func:`_stirling`): ``big_row`` and ``layout.act``'s
        large-leaf column are rewritten in place."""
        rt, big_base, rn_t = _stirling(self.raw, self.cell_is_leaf, self.n_dense, self.t_cap, big_row, self.cache,
                                       self.threads)
        layout.act[:, 4] = big_row[layout.act[:, 0]]
        return kernels.StirlingTables(rt, big_base, rn_t, big_row)


@dataclass
class _Run:
    """What one run of :func:`sample` carries: the kernels' tuples, the tables' sizes, the iterations
    each tree reached, the stopping rule's arrays and the threads."""

    trees: ContextTrees
    cells: SamplerCells
    layout: kernels.TreeLayout
    state: kernels.SamplerState
    settings: kernels.Settings
    sizes: _TableSizes
    tables: kernels.StirlingTables
    rule: kernels.StopRule
    threads: int
    cost: np.ndarray  # (n_trees,) the estimated cost of one iteration of each tree
    reached: np.ndarray  # (n_trees,) iterations run
    pool: ThreadPoolExecutor | None = None

    def grow(self) -> None:
        """Grow the Stirling tables to what every tree's state needs (no kernel may be running)."""
        state, sizes = self.state, self.sizes
        t_need, dense_need = (int(v) for v in kernels.needed_sizes(0, self.cells.n_cells, state.n, state.t,
                                                                   self.tables.big_row, self.settings.window))
        if not sizes.grow(t_need, dense_need):  # a tree stops only when its exact need is past an edge
            raise HDPError(f"sampler stopped at iteration {int(self.reached.min())} with tables of "
                           f"{sizes.n_dense + 1} x {sizes.t_cap + 1} that cover its needs (an internal error)")
        log.debug("growing the Stirling tables to %d x %d", sizes.n_dense + 1, sizes.t_cap + 1)
        self.tables = sizes.tables(self.layout, self.tables.big_row)

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=True)


def _setup(trees: ContextTrees, tying: str, random_state, n_jobs, settings: kernels.Settings,
           initial_sizes, plan: "_StopPlan | None", iterations: int, cells: SamplerCells | None = None) -> _Run:
    """:func:`sample`'s setup: the layout and tying groups, the initial state, the Stirling tables,
    the stopping rule's arrays and the threads."""
    node_group, group_fixed, tree_group_start = tying_groups(trees, tying)
    cells = sampler_cells(trees) if cells is None else cells
    layout = _layout_of(trees, cells, node_group, group_fixed, tree_group_start)
    state = new_state(trees, layout, random_state)
    threads = min(_threads(n_jobs), max(trees.n_trees, 1))
    kernels.init_trees(layout, state)
    sizes = _TableSizes(cells, layout, state, settings.window, initial_sizes, threads)
    tables = sizes.tables(layout, np.full(cells.n_cells, -1, np.int32))  # row indices: int32 is enough
    rule = plan.rule(layout) if plan is not None else _no_rule(trees, iterations)
    cancel.check()
    # the cost of an iteration of each tree (per draw-able cell, per cell for the estimates, per node
    # for the concentrations: measured weights), for the order of the queue and the bins
    n_cells = np.diff(layout.node_cell_start[trees.tree_node_start])
    nodes = np.diff(trees.tree_node_start)
    cost = 35.0 * np.diff(layout.tree_act_start) + 2.5 * n_cells + 12.0 * nodes
    run = _Run(trees, cells, layout, state, settings, sizes, tables, rule, threads, cost,
               reached=np.zeros(trees.n_trees, np.int64))
    if threads > 1:
        run.pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="hdp-sampler")
    return run


def _no_rule(trees: ContextTrees, iterations: int) -> kernels.StopRule:
    """The :class:`~hdp_plugin.hdp.kernels.StopRule` of a run of ``iterations`` for every tree."""
    none, empty = np.zeros(0, np.int64), np.zeros(0)
    return kernels.StopRule(end=int(iterations), active=False, tol=0.0, points=none, slot=none,
                            is_check=np.zeros(0, np.bool_), new_b=none, old_i=none, old_b=none, den_new=empty,
                            den_old=empty, end_b=-1, end_den=1.0, snap=np.zeros((0, 0)), snap_at=none, weight=none,
                            tree_weight=empty, stop=np.full(trees.n_trees, int(iterations), np.int64))


def _result(run: _Run, plan: "_StopPlan | None", reached: int, started: Stopwatch, cpu_started: float,
            copies: list | None = None) -> SamplerResult:
    """:func:`sample`'s last step: the averaged tables of a run that reached iteration ``reached`` (each
    tree's own length under a stopping rule) and the final state; copied trees take their sources'."""
    state, tables, n_trees = run.state, run.tables, run.trees.n_trees
    _fill_copies(copies, (state.est_sum, state.n, state.t), (state.conc,), (run.rule.stop,))
    if plan is not None:  # every tree's sums are its tables
        probabilities, tree_its = state.est_sum, run.rule.stop.copy()
        iterations = int(tree_its.max()) if tree_its.size else reached  # the longest tree's
        burn_in = plan.burn_in_of(iterations)
    else:
        iterations, burn_in = reached, run.settings.burn_in
        probabilities, tree_its = state.est_sum / (iterations - burn_in), np.full(n_trees, iterations, np.int64)
    rows, columns = tables.rt.shape
    return SamplerResult(
        probabilities=probabilities,
        concentrations=state.conc,
        node_group=run.layout.node_group,
        n_samples=iterations - burn_in,
        iterations=iterations,
        burn_in=burn_in,
        seconds=started.elapsed(),
        table_counts=state.t,
        customer_counts=state.n,
        stirling_shape=((tables.big_base, columns), (rows - tables.big_base, columns)),
        cpu_seconds=time.process_time() - cpu_started,
        tree_iterations=tree_its,
        cells=run.cells,
    )


def _lockstep(run: "_Run", iterations: int, burn_in: int, checkpoints, on_checkpoint, progress, debug: bool,
              copies: list | None = None) -> int:
    """Every tree to each checkpoint in turn, the running sums read there (``on_checkpoint``); returns
    the iterations run. The trees of a chunk are in bins, one per thread, that advance together."""
    stops = sorted({int(c) for c in checkpoints if burn_in < int(c) <= iterations})
    order, bin_start = kernels.balance_trees(run.cost, run.threads)
    scratch = [np.empty(0) for _ in range(len(bin_start) - 1)]  # no rule: no copies

    def run_bin(b):
        kernels.sample_trees(order, bin_start[b], bin_start[b + 1], run.reached, target, run.layout, run.tables,
                             run.state, run.settings, run.rule, scratch[b])

    # the first chunk is one iteration: its time sizes the next (_next_chunk), up to SAMPLER_CHUNK
    chunk, target = 1, 0
    while target < iterations:
        before, chunk_started = target, time.perf_counter()
        target = min(iterations, target + chunk, *[c for c in stops if c > target][:1])
        while True:
            if run.pool is None or len(bin_start) < 3:
                for b in range(len(bin_start) - 1):
                    run_bin(b)
            else:  # the kernels release the GIL; waits for every bin and re-raises
                pool_map(run.pool, run_bin, range(len(bin_start) - 1))
            if (run.reached >= target).all():
                break
            run.grow()  # a tree needs more of the Stirling tables
        if debug:
            _check_invariants(run, target)
        _progress(progress, target, iterations)
        cancel.check()
        if not debug:  # chunks of about SAMPLER_CHUNK_SECONDS at most, so that a cancel is seen soon
            chunk = _next_chunk(chunk, target - before, time.perf_counter() - chunk_started)
        if target in stops:
            state = run.state
            sums = state.est_sum.copy()  # the still nodes' open windows added to copies: the chain is not touched
            kernels.flush_trees(run.layout, state._replace(est_sum=sums, wsum=state.wsum.copy(),
                                                           win_k=state.win_k.copy()))
            _fill_copies(copies, (sums,))
            if on_checkpoint(target, sums) is True:
                break
    return target


def _progress(progress, done: int, iterations: int) -> None:
    """Call :func:`sample`'s ``progress`` hook (if any); :class:`Cancelled` if it returns False."""
    if progress is not None and progress(done, iterations) is False:
        raise Cancelled(f"sampling cancelled after {done} of {iterations} iterations")


def _check_invariants(run: "_Run", target: int) -> None:
    """``debug``: the sampler's invariants, after the call that ran to iteration ``target``."""
    bad = kernels.check_invariants(run.layout, run.state)
    if bad >= 0:
        raise HDPError(f"sampler invariant broken at node {bad} after iteration {target}")


class _Gate:
    """Kernels in flight against the Stirling tables, and their growth: a thread grows the tables only
    while no kernel runs (a growth rewrites ``act``'s large-leaf column in place)."""

    def __init__(self):
        self.cond = threading.Condition()
        self.inside = 0
        self.growing = False
        self.generation = 0  # growths so far

    def __enter__(self) -> int:
        with self.cond:
            while self.growing:
                self.cond.wait()
            self.inside += 1
            return self.generation

    def __exit__(self, *exc) -> None:
        with self.cond:
            self.inside -= 1
            self.cond.notify_all()

    def grow(self, run: "_Run", seen: int) -> None:
        """Grow ``run``'s tables for a kernel that ran on the tables of generation ``seen`` and stopped
        short of them (unless another thread grew them since: then the caller only runs again)."""
        with self.cond:
            while self.growing:
                self.cond.wait()
            if self.generation != seen:
                return
            self.growing = True
            try:
                while self.inside:
                    self.cond.wait()
            except BaseException:  # an interrupted wait (Ctrl-C) must not leave the others waiting for ever
                self.growing = False
                self.cond.notify_all()
                raise
        try:
            run.grow()
        finally:
            with self.cond:
                self.generation += 1
                self.growing = False
                self.cond.notify_all()


class _TreeQueue:
    """:func:`sample` without checkpoints: the trees in a queue, largest first; a thread takes a batch
    of them (a share of the work left that shrinks as the queue empties, so that the threads finish
    together) and runs it to the end, each tree stopping on its own under a ``tolerance``. No thread
    waits for another but while the Stirling tables grow (:class:`_Gate`). A batch advances in calls of
    about ``config.SAMPLER_CHUNK_SECONDS``; between calls the thread reports progress (the share of the
    work done, as iterations of ``iterations``; calls are serialised) and sees a cancel."""

    def __init__(self, run: "_Run", progress, debug: bool):
        self.run, self.progress, self.debug = run, progress, debug
        self.end = run.rule.end
        self.cost = np.maximum(run.cost, 1e-9)
        self.order = np.argsort(-self.cost, kind="stable")
        self.left = float(self.cost.sum())  # cost of the trees not taken yet
        self.pos = 0
        self.total = float(self.cost.sum()) * self.end
        self.done = 0.0  # work done (cost x iterations, trees stopped early counted as ended)
        self.pace = None  # seconds per unit of cost and iteration, from the last call
        self.lock = threading.Lock()
        self.report_lock = threading.Lock()
        self.gate = _Gate()
        self.halt = False
        self.cells_per_tree = np.diff(run.layout.node_cell_start[run.layout.tree_node_start])

    def take(self) -> np.ndarray | None:
        """The next batch: trees from the head of the queue, about 1 / (4 x threads) of the cost left."""
        with self.lock:
            if self.pos >= self.order.size:
                return None
            budget, first, acc = self.left / (4 * self.run.threads), self.pos, 0.0
            while self.pos < self.order.size and (self.pos == first or acc + self.cost[self.order[self.pos]] <= budget):
                acc += self.cost[self.order[self.pos]]
                self.pos += 1
            self.left -= acc
            return self.order[first:self.pos]

    def work(self) -> None:
        run = self.run
        reached, stop = run.reached, run.rule.stop
        while not self.halt:
            batch = self.take()
            if batch is None:
                return
            rule, scratch = self._copies_of(batch)
            while not self.halt:
                live = batch[(reached[batch] < self.end) & (stop[batch] == self.end)]
                if not live.size:
                    break
                low = int(reached[live].min())
                its = 1 if self.debug else _batch_chunk(self.pace, float(self.cost[live].sum()))
                target = min(self.end, low + its)
                before = reached[live].copy()
                took = time.perf_counter()
                with self.gate as generation:
                    kernels.sample_trees(live, 0, live.size, reached, target, run.layout, run.tables, run.state,
                                         run.settings, rule, scratch)
                took = time.perf_counter() - took
                ran = np.minimum(reached[live], stop[live]) - before
                work = float((self.cost[live] * ran).sum())
                if work > 0 and took > 0:
                    self.pace = took / work
                skipped = float((self.cost[live] * (self.end - stop[live])).sum())  # stopped early
                self.report(work + skipped)
                if self.debug:
                    _check_invariants(run, target)
                short = (reached[live] < target) & (stop[live] == self.end)
                if short.any():  # a tree needs more of the Stirling tables
                    self.gate.grow(run, generation)

    def _copies_of(self, batch: np.ndarray):
        """The stopping rule's copies for ``batch`` alone (its trees' cells side by side, the trees'
        places in ``rule.snap_at``; a batch runs to its end before its thread takes another) and the
        thread's scratch for them: the rule and the scratch :func:`~hdp_plugin.hdp.kernels.sample_trees`
        takes."""
        rule = self.run.rule
        if not rule.points.size:
            return rule, np.empty(0)
        sizes = self.cells_per_tree[batch]
        rule.snap_at[batch] = np.cumsum(sizes) - sizes
        snap = np.zeros((rule.snap.shape[0], int(sizes.sum())))
        return rule._replace(snap=snap), np.empty(2 * int(sizes.max(initial=0)))

    def report(self, work: float) -> None:
        with self.report_lock:
            self.done += work
            at = min(self.end, int(self.end * self.done / self.total)) if self.total > 0 else self.end
            _progress(self.progress, at, self.end)
        cancel.check()

    def run_all(self) -> int:
        """Every tree to its end; returns the iterations of the run."""
        run = self.run
        if run.pool is None:
            self.work()
        else:
            futures = [run.pool.submit(self.work) for _ in range(run.threads)]
            try:  # in short waits: Ctrl-C (KeyboardInterrupt, in this thread) is seen at once
                pending = set(futures)
                while pending and not any(f.done() and f.exception() is not None for f in futures):
                    pending = wait(pending, timeout=cancel.POLL, return_when=FIRST_EXCEPTION).not_done
            finally:
                self.halt = True  # done, one failed (a cancel, an error) or interrupted: the others stop
                cancel.wait_all(futures)  # at their next call
            for f in futures:
                f.result()  # re-raises the first failure
        _progress(self.progress, self.end, self.end)
        return self.end


def stopping_info(res: SamplerResult, tolerance: float | None) -> dict:
    """What a fit records about the stopping rule: nothing when every tree ran all iterations,
    else ``tolerance`` and ``tree_iterations`` (the iterations every tree ran)."""
    if tolerance is None:
        return {}
    return {"tolerance": float(tolerance), "tree_iterations": np.asarray(res.tree_iterations, np.int64)}


def convergence_checks(iterations: int, burn_in: int | None = None, first: int | None = None) -> list[int]:
    """The iterations at which a tree may stop under a tolerance: ``first`` (default
    ``config.CONVERGENCE_FIRST_CHECK``) doubled while below ``iterations`` (each compared with its
    half, so only those whose half is past a given ``burn_in``)."""
    out, i = [], int(first) if first is not None else config.CONVERGENCE_FIRST_CHECK
    if i < 2:
        raise ParameterError(f"the first convergence check must be >= 2, got {first!r}")
    while i < iterations:
        if burn_in is None or i // 2 > burn_in:
            out.append(i)
        i *= 2
    return out


class _StopPlan:
    """The per-tree stopping rule of :func:`sample` (``tolerance``) as the kernels run it
    (:class:`~hdp_plugin.hdp.kernels.StopRule`): the checks, the iterations whose running sums they
    read, and a row of copies for each such iteration while a later check still reads it."""

    def __init__(self, iterations: int, burn_in: int | None, tolerance: float, first_check: int | None = None):
        self.iterations, self.given, self.tol = iterations, burn_in, float(tolerance)
        self.checks = convergence_checks(iterations, burn_in, first_check)
        self.accumulate_from = burn_in if burn_in is not None else min(
            [self.burn_in_of(i // 2) for i in self.checks] + [self.burn_in_of(iterations)])
        last_read: dict[int, int] = {}  # iteration -> the last iteration at which it is read

        def read(p: int, at: int) -> None:
            if p > self.accumulate_from:  # the sums start there: nothing to subtract
                last_read[p] = max(last_read.get(p, 0), at)

        for i in self.checks:
            for p in (i, self.burn_in_of(i), i // 2, self.burn_in_of(i // 2)):
                read(p, i)
        read(self.burn_in_of(iterations), iterations)
        self.points = sorted(last_read)
        # rows of copies: a row is free again after the last check that reads it (a copy made at
        # that check's own iteration cannot take it: the check reads both)
        self.slot: dict[int, int] = {}
        free_after: list[int] = []
        for p in self.points:
            row = next((r for r, at in enumerate(free_after) if at < p), len(free_after))
            if row == len(free_after):
                free_after.append(0)
            free_after[row] = last_read[p]
            self.slot[p] = row
        self.n_rows = len(free_after)

    def burn_in_of(self, i: int) -> int:
        return self.given if self.given is not None else default_burn_in(i)

    def _row(self, p: int) -> int:
        """The row of the sums at ``p`` that a run's average subtracts (-1: none)."""
        return self.slot[p] if p > self.accumulate_from else -1

    def rule(self, layout: kernels.TreeLayout) -> kernels.StopRule:
        """The kernels' arrays for the trees of ``layout`` (the copies, the weights and the results
        allocated)."""
        pts = self.points
        is_check = np.array([p in self.checks for p in pts], np.bool_)
        new_b = [self._row(self.burn_in_of(p)) if c else -1 for p, c in zip(pts, is_check)]
        old_i = [self.slot[p // 2] if c else -1 for p, c in zip(pts, is_check)]
        old_b = [self._row(self.burn_in_of(p // 2)) if c else -1 for p, c in zip(pts, is_check)]
        den_new = [float(p - self.burn_in_of(p)) if c else 1.0 for p, c in zip(pts, is_check)]
        den_old = [float(p // 2 - self.burn_in_of(p // 2)) if c else 1.0 for p, c in zip(pts, is_check)]
        w = layout.leaf_counts
        n_trees = layout.tree_card.shape[0]
        cell_start = layout.node_cell_start[layout.tree_node_start]
        tree_weight = np.add.reduceat(w, cell_start[:-1]) if n_trees and w.size else np.zeros(n_trees)
        end_b = self.burn_in_of(self.iterations)
        i64 = lambda v: np.asarray(v, np.int64)  # noqa: E731
        return kernels.StopRule(
            end=int(self.iterations), active=True, tol=self.tol, points=i64(pts), slot=i64([self.slot[p] for p in pts]),
            is_check=is_check, new_b=i64(new_b), old_i=i64(old_i), old_b=i64(old_b),
            den_new=np.asarray(den_new, np.float64), den_old=np.asarray(den_old, np.float64),
            end_b=self._row(end_b), end_den=float(self.iterations - end_b),
            snap=np.zeros((self.n_rows, 0)), snap_at=np.zeros(n_trees, np.int64), weight=w,
            tree_weight=np.asarray(tree_weight, np.float64),
            stop=np.full(n_trees, int(self.iterations), np.int64))


def _max_children(trees: ContextTrees) -> np.ndarray:
    """Per tree, the most children a node can have: the largest radix among its branching variables."""
    radices = branch_radices(trees)
    # the largest of each tree's run of variables (reduceat over the non-empty runs), 1 for a tree without any
    start = np.asarray(trees.tree_var_start, np.int64)
    out = np.ones(trees.n_trees, np.int64)
    has = np.diff(start) > 0
    if has.any():
        out[has] = np.maximum(np.maximum.reduceat(radices, start[:-1][has]), 1)
    return out


def _stirling(raw, cell_is_leaf, n_dense, t_cap, big_row, cache, threads=1):
    """Build the tables for the current sizes and point the large leaves at their own rows.

    ``cache`` (a dict, empty at first) keeps the log tables between calls, so that growing them
    computes only their new rows and columns (:func:`grow_stirling_rows`, new columns on ``threads``).
    Returns the Stirling ratio tables ``(rt, big_base, rn_t)`` the table sweep reads."""
    big = cell_is_leaf & (raw > n_dense)
    values = np.unique(raw[big])
    big_row[:] = -1  # internal cells: their counts move, the dense rows must cover them plus a margin
    big_row[cell_is_leaf] = -2  # leaves within the dense rows: fixed counts, no margin
    big_row[big] = np.searchsorted(values, raw[big])
    cache["log"] = grow_stirling_rows(cache.get("log"), n_dense, t_cap, values, threads)
    return stirling_ratios(*cache["log"][:2])


def _next_chunk(chunk: int, done: int, seconds: float) -> int:
    """The iterations of the next chunk: as many as take about ``config.SAMPLER_CHUNK_SECONDS`` at the
    pace of the last chunk (``done`` iterations in ``seconds``), from 1 to ``config.SAMPLER_CHUNK``."""
    if done <= 0 or seconds <= 0:
        return chunk
    fit = int(done * config.SAMPLER_CHUNK_SECONDS / seconds)
    return max(1, min(config.SAMPLER_CHUNK, fit))


def _batch_chunk(pace: float | None, cost: float) -> int:
    """The iterations of a queue's next call on a batch of trees of summed ``cost`` (per iteration):
    about ``config.SAMPLER_CHUNK_SECONDS`` at ``pace`` (seconds per unit of cost and iteration, from
    the last call); one iteration while the pace is unknown."""
    if pace is None or pace <= 0 or cost <= 0:
        return 1
    return max(1, int(config.SAMPLER_CHUNK_SECONDS / (pace * cost)))
