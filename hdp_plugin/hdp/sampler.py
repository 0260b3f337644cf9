"""The collapsed Gibbs sampler's driver: validate, allocate, seed, run the kernels in chunks.

See docs/method.md section 4 and Petitjean et al. (2018). The kernels live in
:mod:`hdp_plugin.hdp.kernels`; this module chooses the tying groups, sizes the shared Stirling
tables (and grows them on demand), derives one random stream per tree from ``random_state``, runs
the iterations in chunks (so that progress can be reported and a run cancelled between chunks) and
returns averaged tables.

:func:`sample` is a short driver over its steps: :func:`_checked_lengths` (the arguments),
:func:`_stops` (the stopping rule and the checkpoints), :func:`_setup` (the kernels' named tuples,
built by :func:`tree_layout` and :func:`new_state`, the Stirling tables and the bins of trees), then
chunk by chunk :func:`_advance` (every tree to the chunk's end), :func:`_after_chunk` (invariants,
progress, cancel) and, at a checkpoint, :func:`_checkpoint`; last :func:`_result`.
"""

from __future__ import annotations

import logging
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Callable

import numpy as np

from .. import _cancel, config
from .._threads import resolved_threads as _threads
from ..errors import Cancelled, HDPError, ParameterError
from ..params import default_burn_in  # noqa: F401 - also this module's name for it
from . import kernels
from .rng import tree_states
from .stirling import grow_stirling_rows, stirling_ratios
from .trees import ContextTrees

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
    """The trees as the kernels read them: their tying groups (:func:`tying_groups`), the cells that
    can need a draw and the moving and still nodes.

    Parameters
    ----------
    trees : ContextTrees
    tying : {"none", "same-parent", "level", "single"}
        How concentrations are shared.
    raw : ndarray (n_cells,) int64, optional
        ``trees.raw_counts()``, when the caller has it.

    Returns
    -------
    TreeLayout
        :class:`~hdp_plugin.hdp.kernels.TreeLayout`; ``act``'s large-leaf column is -1 (every cell
        in the dense rows) until the Stirling tables are built (:class:`_TableSizes`).
    """
    node_group, group_fixed, tree_group_start = tying_groups(trees, tying)
    raw = trees.raw_counts(compiled=True) if raw is None else raw
    act, tree_act_start = kernels.active_cells(trees, raw, node_group, np.full(trees.n_cells, -1, np.int64))
    _cancel.check()
    # nodes whose counts can change get their estimates every iteration, the others (all
    # leaves among them) once per window of constant concentrations
    moving, tree_mv_start, still, tree_st_start = kernels.moving_nodes(trees, act)
    return kernels.TreeLayout(
        tree_node_start=trees.tree_node_start, tree_card=trees.tree_card, tree_max_children=_max_children(trees),
        tree_group_start=tree_group_start, tree_act_start=tree_act_start, tree_mv_start=tree_mv_start,
        tree_st_start=tree_st_start, node_parent=trees.node_parent, node_cell_start=trees.node_cell_start,
        node_group=node_group, is_leaf=trees.is_leaf, leaf_counts=trees.leaf_counts, group_fixed=group_fixed,
        act=act, moving=moving, still=still)


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
        count_type = np.int32 if int(trees.leaf_counts.max(initial=0)) < 2**31 - 1 else np.int64
    n_cells = trees.n_cells
    return kernels.SamplerState(
        n=np.zeros(n_cells, count_type), t=np.zeros(n_cells, count_type), node_N=np.zeros(trees.n_nodes, np.int64),
        node_T=np.zeros(trees.n_nodes, np.int64), conc=conc, prob=np.zeros(n_cells), est_sum=np.zeros(n_cells),
        wsum=np.zeros(n_cells), win_k=np.zeros(trees.n_trees, np.int64), rng=tree_states(random_state, trees.n_trees))


@dataclass
class SamplerResult:
    """Averaged estimates and the final sampler state."""

    probabilities: np.ndarray  # (n_cells,) averaged estimate of every cell
    concentrations: np.ndarray  # (n_groups,) final concentration of every group
    node_group: np.ndarray  # (n_nodes,)
    n_samples: int
    iterations: int
    burn_in: int
    seconds: float
    table_counts: np.ndarray  # (n_cells,) final t
    customer_counts: np.ndarray  # (n_cells,) final n
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
        Called between chunks; returning ``False`` cancels the run (:class:`Cancelled`).
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
        estimates summed over the iterations from ``burn_in`` to there (divide by
        ``iteration - burn_in`` for the averaged tables). Returning ``True`` stops the run there:
        the result is then that of a run of ``iteration`` iterations. Reading the sums does not
        touch the chain, so a run gives the same tables with or without checkpoints.
    debug : bool
        Check the sampler invariants after every iteration (slow).
    first_check : int or None
        With a ``tolerance``: the first iteration at which a tree may stop (then every doubling);
        None is ``config.CONVERGENCE_FIRST_CHECK`` (500).

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
    started, cpu_started = time.perf_counter(), time.process_time()
    rule, burn_in, stops = _stops(trees, iterations, burn_in, given_burn_in, tolerance, checkpoints, on_checkpoint,
                                  first_check)
    run = _setup(trees, tying, random_state, n_jobs, _settings(burn_in, window), _initial_sizes)
    try:
        # the first chunk is one iteration: its time sizes the next (_next_chunk), up to SAMPLER_CHUNK
        chunk, target = 1, 0
        while target < iterations:
            before, chunk_started = target, time.perf_counter()
            target = min(iterations, target + chunk, *[c for c in stops if c > target][:1])
            _advance(run, target)
            _after_chunk(run, target, iterations, progress, debug)
            if not debug:  # chunks of about SAMPLER_CHUNK_SECONDS at most, so that a cancel is seen soon
                chunk = _next_chunk(chunk, target - before, time.perf_counter() - chunk_started)
            if target in stops and _checkpoint(run, target, rule, on_checkpoint):
                break
        kernels.flush_trees(run.layout, run.state)
    finally:
        run.close()
    return _result(run, rule, target, started, cpu_started)


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


def _stops(trees: ContextTrees, iterations: int, burn_in: int, given_burn_in, tolerance, checkpoints, on_checkpoint,
           first_check: int | None = None):
    """The stopping rule of a ``tolerance`` (:class:`_Convergence`, or None), the iteration from
    which the estimates are summed, and the iterations after which the running sums are read
    (``checkpoints`` and the rule's; none when nothing reads them)."""
    rule = None
    if tolerance is not None:
        rule = _Convergence(trees, iterations, given_burn_in, float(tolerance), first_check)
        # the running sums start where the earliest averaged run starts: each run's tables are
        # then a difference of two snapshots of them
        burn_in = rule.accumulate_from
        # the last iteration's sums are the run's own (_Convergence.finish reads them): no snapshot there
        checkpoints = sorted(set(checkpoints) | (set(rule.points) - {iterations}))
    stops = sorted({int(c) for c in checkpoints if burn_in < int(c) <= iterations}) \
        if (on_checkpoint or rule) else []
    return rule, burn_in, stops


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

    def __init__(self, trees: ContextTrees, raw: np.ndarray, layout: kernels.TreeLayout,
                 state: kernels.SamplerState, window: int, initial_sizes: tuple[int, int] | None):
        self.raw = raw
        self.n_max = int(raw.max(initial=1))
        self.cell_is_leaf = np.repeat(trees.is_leaf, trees.tree_card[trees.node_tree])
        # within one iteration a count can grow by the window per child
        self.margin = window * (int(layout.tree_max_children.max(initial=1)) + 1)
        big_row = np.full(trees.n_cells, -1, np.int64)
        t_need = int(kernels.needed_sizes(0, trees.n_cells, state.n, state.t, big_row, window)[0])
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
        rt, big_base, rn_t = _stirling(self.raw, self.cell_is_leaf, self.n_dense, self.t_cap, big_row, self.cache)
        layout.act[:, 4] = big_row[layout.act[:, 0]]
        return kernels.StirlingTables(rt, big_base, rn_t, big_row)


@dataclass
class _Run:
    """What one run of :func:`sample` carries from chunk to chunk: the kernels' tuples, the tables'
    sizes, the iterations each tree reached, the trees still running and their bins of trees."""

    trees: ContextTrees
    layout: kernels.TreeLayout
    state: kernels.SamplerState
    settings: kernels.Settings
    sizes: _TableSizes
    tables: kernels.StirlingTables
    threads: int
    cost: np.ndarray  # (n_trees,) the estimated cost of one iteration of each tree
    order: np.ndarray  # the running trees, bin by bin (kernels.balance_trees)
    bin_start: np.ndarray
    reached: np.ndarray  # (n_trees,) iterations run
    running: np.ndarray  # the trees not yet stopped by a tolerance
    pool: ThreadPoolExecutor | None = None

    def rebalance(self) -> None:
        """Bins of the running trees only (after some stopped)."""
        order, self.bin_start = kernels.balance_trees(self.cost[self.running], self.threads)
        self.order = self.running[order]

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=True)


def _setup(trees: ContextTrees, tying: str, random_state, n_jobs, settings: kernels.Settings,
           initial_sizes) -> _Run:
    """:func:`sample`'s setup: the layout and tying groups, the initial state, the Stirling tables,
    the bins of trees (one per thread) and the threads for them."""
    raw = trees.raw_counts(compiled=True)
    layout = tree_layout(trees, tying, raw)
    state = new_state(trees, layout, random_state)
    threads = _threads(n_jobs)
    kernels.init_trees(layout, state)
    sizes = _TableSizes(trees, raw, layout, state, settings.window, initial_sizes)
    tables = sizes.tables(layout, np.full(trees.n_cells, -1, np.int64))
    _cancel.check()
    # One bin of trees per thread, balanced by the cost of an iteration (per draw-able cell,
    # per cell for the estimates, per node for the concentrations: measured weights)
    cells = np.diff(trees.node_cell_start[trees.tree_node_start])
    nodes = np.diff(trees.tree_node_start)
    cost = 35.0 * np.diff(layout.tree_act_start) + 2.5 * cells + 12.0 * nodes
    order, bin_start = kernels.balance_trees(cost, threads)
    run = _Run(trees, layout, state, settings, sizes, tables, threads, cost, order, bin_start,
               reached=np.zeros(trees.n_trees, np.int64), running=np.arange(trees.n_trees))
    if len(bin_start) > 2:
        run.pool = ThreadPoolExecutor(max_workers=len(bin_start) - 1, thread_name_prefix="hdp-sampler")
    return run


def _advance(run: _Run, target: int) -> None:
    """One chunk of :func:`sample`: every running tree to iteration ``target``, one bin of trees per
    thread; when a tree stops short of the Stirling tables' edge, grow them and carry on."""

    def run_bin(b):
        kernels.sample_trees(run.order, run.bin_start[b], run.bin_start[b + 1], run.reached, target, run.layout,
                             run.tables, run.state, run.settings)

    while True:
        if run.pool is None:
            run_bin(0)
        else:  # the kernels release the GIL; list() waits for every bin and re-raises
            list(run.pool.map(run_bin, range(len(run.bin_start) - 1)))
        if (run.reached[run.running] >= target).all():
            return
        # a tree needs more of the Stirling tables: grow them and carry on
        state, sizes = run.state, run.sizes
        t_need, dense_need = (int(v) for v in kernels.needed_sizes(0, run.trees.n_cells, state.n, state.t,
                                                                   run.tables.big_row, run.settings.window))
        if not sizes.grow(t_need, dense_need):  # a tree stops only when its exact need is past an edge
            raise HDPError(f"sampler stopped at iteration {int(run.reached.min())} with tables of "
                           f"{sizes.n_dense + 1} x {sizes.t_cap + 1} that cover its needs (an internal error)")
        log.debug("growing the Stirling tables to %d x %d", sizes.n_dense + 1, sizes.t_cap + 1)
        run.tables = sizes.tables(run.layout, run.tables.big_row)


def _after_chunk(run: _Run, target: int, iterations: int, progress, debug: bool) -> None:
    """After every chunk of :func:`sample`: the invariants (``debug``), the progress callback
    (which may cancel: :class:`Cancelled`) and the installed cancel check."""
    if debug:
        bad = kernels.check_invariants(run.layout, run.state)
        if bad >= 0:
            raise HDPError(f"sampler invariant broken at node {bad} after iteration {target}")
    if progress is not None and progress(target, iterations) is False:
        raise Cancelled(f"sampling cancelled after {target} of {iterations} iterations")
    _cancel.check()


def _checkpoint(run: _Run, target: int, rule: "_Convergence | None", on_checkpoint) -> bool:
    """After a chunk of :func:`sample` that ends at a checkpoint or a convergence check: the running
    sums with the still nodes' open windows added (to copies: the chain is not touched) go to the
    stopping rule, whose stopped trees leave the bins, and to ``on_checkpoint``. True if the run
    ends here (every tree stopped, or ``on_checkpoint`` said so)."""
    state = run.state
    sums = state.est_sum.copy()
    kernels.flush_trees(run.layout, state._replace(est_sum=sums, wsum=state.wsum.copy(), win_k=state.win_k.copy()))
    if rule is not None:
        stopped = rule.check(target, sums, run.running)
        if stopped.size:
            run.running = np.setdiff1d(run.running, stopped)
            if not run.running.size:
                return True
            run.rebalance()
    return on_checkpoint is not None and on_checkpoint(target, sums) is True


def _result(run: _Run, rule: "_Convergence | None", reached: int, started: float, cpu_started: float) -> SamplerResult:
    """:func:`sample`'s last step: the averaged tables of a run that reached iteration ``reached`` (each
    tree's own length under a stopping rule) and the final state."""
    state, tables, n_trees = run.state, run.tables, run.trees.n_trees
    if rule is not None:
        probabilities, tree_its = rule.finish(state.est_sum, reached)
        iterations = int(tree_its.max(initial=reached))
        burn_in = rule.burn_in_of(iterations)
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
        seconds=time.perf_counter() - started,
        table_counts=state.t.astype(np.int64),
        customer_counts=state.n.astype(np.int64),
        stirling_shape=((tables.big_base, columns), (rows - tables.big_base, columns)),
        cpu_seconds=time.process_time() - cpu_started,
        tree_iterations=tree_its,
    )


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


class _Convergence:
    """The per-tree stopping rule of :func:`sample` (``tolerance``): which running sums to keep, which
    trees stop at a check, and their tables."""

    def __init__(self, trees: ContextTrees, iterations: int, burn_in: int | None, tolerance: float,
                 first_check: int | None = None):
        self.iterations, self.given, self.tol = iterations, burn_in, tolerance
        self.checks = convergence_checks(iterations, burn_in, first_check)
        self.accumulate_from = burn_in if burn_in is not None else min(
            [self.burn_in_of(i // 2) for i in self.checks] + [self.burn_in_of(iterations)])
        need = set()
        for i in self.checks:
            need |= {i, i // 2, self.burn_in_of(i), self.burn_in_of(i // 2)}
        need |= {iterations, self.burn_in_of(iterations)}
        self.points = sorted(p for p in need if p > self.accumulate_from)
        self.snap: dict[int, np.ndarray] = {}
        self.cell_start = trees.node_cell_start[trees.tree_node_start]
        w = trees.leaf_counts.astype(np.float64)
        self.weight = w
        self.tree_weight = np.add.reduceat(w, self.cell_start[:-1]) if trees.n_trees else np.zeros(0)
        self.stop = np.full(trees.n_trees, iterations, np.int64)
        self.final = np.zeros(trees.n_cells)

    def burn_in_of(self, i: int) -> int:
        return self.given if self.given is not None else default_burn_in(i)

    def tables(self, i: int, lo: int, hi: int) -> np.ndarray:
        """Cells ``lo:hi`` of the averaged tables of a run of ``i`` iterations."""
        b = self.burn_in_of(i)
        s = self.snap[i][lo:hi]
        if b > self.accumulate_from:
            s = s - self.snap[b][lo:hi]
        return s / (i - b)

    def check(self, it: int, sums: np.ndarray, running: np.ndarray) -> np.ndarray:
        """Keep the sums at ``it``; at a check, the running trees that stop there (their tables kept)."""
        self.snap[it] = sums
        if it not in self.checks:
            return np.zeros(0, np.int64)
        # every tree's change at once: the cells' weighted |log p_i - log p_(i/2)|, summed tree by tree
        n = self.weight.shape[0]
        new, old = self.tables(it, 0, n), self.tables(it // 2, 0, n)
        m = self.weight > 0
        cell = np.zeros(n)
        cell[m] = self.weight[m] * np.abs(np.log(new[m]) - np.log(old[m]))
        total = np.add.reduceat(cell, self.cell_start[:-1]) if n else np.zeros(0)
        tw = self.tree_weight
        d = np.divide(total, tw, out=np.zeros_like(total), where=tw > 0)
        out = running[d[running] < self.tol]
        for tr in out:
            lo, hi = int(self.cell_start[tr]), int(self.cell_start[tr + 1])
            self.stop[tr] = it
            self.final[lo:hi] = new[lo:hi]
        # sums no later check reads
        later = [i for i in self.checks if i > it] + [self.iterations]
        keep = {p for i in later for p in (i, i // 2, self.burn_in_of(i), self.burn_in_of(i // 2))}
        for p in [p for p in self.snap if p not in keep]:
            del self.snap[p]
        return np.asarray(out, np.int64)

    def finish(self, est_sum: np.ndarray, reached: int):
        """Every tree's tables (those that ran to the end from the final sums) and iterations."""
        if reached == self.iterations:
            self.snap[self.iterations] = est_sum
            for tr in np.nonzero(self.stop == self.iterations)[0]:
                lo, hi = int(self.cell_start[tr]), int(self.cell_start[tr + 1])
                self.final[lo:hi] = self.tables(self.iterations, lo, hi)
        return self.final, self.stop


def _max_children(trees: ContextTrees) -> np.ndarray:
    """Per tree, the most children a node can have: the largest radix among its branching variables."""
    out = np.ones(trees.n_trees, np.int64)
    for tr in range(trees.n_trees):
        vs = trees.branch_vars[trees.tree_var_start[tr] : trees.tree_var_start[tr + 1]]
        radices = [trees.n_classes if v < 0 else int(trees.cardinalities[v]) for v in vs]
        out[tr] = max(radices, default=1)
    return out


def _stirling(raw, cell_is_leaf, n_dense, t_cap, big_row, cache):
    """Build the tables for the current sizes and point the large leaves at their own rows.

    ``cache`` (a dict, empty at first) keeps the log tables between calls, so that growing only
    the dense rows continues them instead of recomputing (:func:`grow_stirling_rows`).
    Returns the Stirling ratio tables ``(rt, big_base, rn_t)`` the table sweep reads."""
    big = cell_is_leaf & (raw > n_dense)
    values = np.unique(raw[big])
    big_row[:] = -1  # internal cells: their counts move, the dense rows must cover them plus a margin
    big_row[cell_is_leaf] = -2  # leaves within the dense rows: fixed counts, no margin
    big_row[big] = np.searchsorted(values, raw[big])
    cache["log"] = grow_stirling_rows(cache.get("log"), n_dense, t_cap, values)
    return stirling_ratios(*cache["log"][:2])


def _next_chunk(chunk: int, done: int, seconds: float) -> int:
    """The iterations of the next chunk: as many as take about ``config.SAMPLER_CHUNK_SECONDS`` at the
    pace of the last chunk (``done`` iterations in ``seconds``), from 1 to ``config.SAMPLER_CHUNK``."""
    if done <= 0 or seconds <= 0:
        return chunk
    fit = int(done * config.SAMPLER_CHUNK_SECONDS / seconds)
    return max(1, min(config.SAMPLER_CHUNK, fit))
