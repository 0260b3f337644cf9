"""The fit of every model: one pipeline from rows to networks, whatever the structure and wherever
the rows are.

A single network is an ensemble of one member whose seed is the model's own; an ESKDB's ``n``
members have the seeds ``(MEMBER, e)`` of it (:mod:`hdp_plugin.seeds`). Every fit runs the same
steps on its members (in memory, each member on its own on one of ``n_jobs`` threads; on a batch source,
every member in each pass):

1. **discretise**: each member's cut points on the rows' discretisation sample, from its own seed
   (stochastic MDL); the deterministic methods give every member the same attributes;
2. **count** n(y), n(x_i, y) and, when the structure needs them, n(x_i, x_j, y), for every member of
   the group on its own codes;
3. **structure**: naive Bayes, TAN and kDB from the counts; SkDB's tries and leave-one-out passes
   (:func:`~hdp_plugin.structure.selective.selective_kdb`: the best model within the member's share of
   :data:`hdp_plugin.config.MAX_MODEL_CELLS`, counted from the tries); an ESKDB member draws its
   attribute order first (member 0 the MI order) and is the class prior when no attribute is
   informative;
4. **context trees**: the leaf cells of every kept attribute's tree (an ensemble's members share
   :data:`hdp_plugin.config.MAX_MODEL_CELLS`);

then 5. **estimate** the tables of every member's trees in one run of the engine's sampler (or a
baseline estimator; :func:`~hdp_plugin.model.estimate.estimate_tables`), each member's trees on the
streams of its own seed.

Where the rows are is the backend's business (:mod:`hdp_plugin.model.rows`): in memory (a Dataset,
coded once per member, the members on threads, each thread running steps 1 to 4 of one member after
another) or a batch source on an engine (one read of the data per step for all the members). Both give
the same integers, so the same model bit for bit.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np

from .. import config, seeds as _seeds
from ..errors import TooLargeError
from ..hdp import warmup
from ..hdp.rng import tree_states
from ..hdp.tables import ProbabilityTables, class_prior_of_counts
from ..hdp.trees import ContextTrees
from ..params import convergence_first_check, resolved_iterations, sampler_tolerance, structure_name, usable_k
from ..preprocess import Discretizer, discretized_attribute, sorted_numeric_columns, stochastic_cut_points
from ..runtime.compile_notice import Stopwatch
from ..runtime.pages import no_huge_page_advice
from ..structure import Structure
from ..structure.counts import PairsTooLarge, check_pairwise_bytes, needs_pairs
from ..structure.eskdb import member_order, prior_structure
from ..structure.selective import Smoothing
from ..structure.learn import network_k, structure_from_counts
from .ensemble import Member
from .estimate import estimate_tables

if TYPE_CHECKING:
    from ..hdp.sampler import SamplerCells

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class FitPlan:
    """What a fit builds: the classifier's parameters that shape the networks (validated)."""

    #: ``"nb"``, ``"tan"``, ``"kdb"``, ``"skdb"`` or ``"eskdb"``
    structure: str
    #: the classifier's ``k`` (for ESKDB and SkDB the largest K of the selection); :func:`fit_networks`
    #: caps it at the attributes less one (:func:`~hdp_plugin.params.usable_k`)
    k: int
    #: 1 but for ESKDB
    n_members: int
    estimator: str
    m: float
    tying: str
    #: as given: None is "auto" (every tree stops once converged)
    iterations: int | None
    burn_in: int | None
    #: resolved ("auto" is the structure's own)
    discretization: str
    n_jobs: int | None

    @classmethod
    def of(cls, clf, discretization: str) -> "FitPlan":
        """The plan of a BayesNetClassifier whose parameters are validated."""
        ensemble = clf.structure == "eskdb"
        return cls(clf.structure, int(clf.k), int(clf.n_members) if ensemble else 1, clf.estimator, float(clf.m),
                   clf.tying, clf.iterations, clf.burn_in, discretization, clf.n_jobs)

    @property
    def ensemble(self) -> bool:
        return self.structure == "eskdb"

    @property
    def kind(self) -> str:
        """Every member's structure learner (an ESKDB member is an SkDB)."""
        return "skdb" if self.ensemble else self.structure

    @property
    def network_k(self) -> int:
        """The k the members are learnt with (:func:`~hdp_plugin.structure.learn.network_k`)."""
        return network_k(self.kind, self.k)

    @property
    def selection_m(self) -> Smoothing:
        """The estimates of SkDB's leave-one-out selection: an ESKDB with HDP tables selects its members
        with hierarchical m-estimates (``config.HDP_SELECTION_M``, docs/method.md "SkDB"); another ESKDB
        with flat m-estimates of its ``m``; a single SkDB with the published flat ones, m = 1. Each scores
        about ``config.SELECTION_ROWS`` rows of larger data (:attr:`Smoothing.rows`)."""
        rows = config.SELECTION_ROWS
        if not self.ensemble:
            return Smoothing(config.DEFAULT_M, rows=rows)
        if self.estimator == "hdp":
            return Smoothing(config.HDP_SELECTION_M, hierarchical=True, rows=rows)
        return Smoothing(self.m, rows=rows)


@dataclass
class Draft:
    """A member before its tables: everything but the estimates."""

    seed: np.random.SeedSequence
    attributes: list
    cardinalities: np.ndarray
    structure: Structure
    trees: ContextTrees
    #: with HDP, the sampler's cells of ``trees`` (:class:`~hdp_plugin.hdp.sampler.SamplerCells`), made as
    #: soon as the trees are, whose dense counts then go (most of a member's cells hold no count)
    cells: "SamplerCells | None" = None


def member_seeds(random_state, n_members: int) -> tuple[np.random.SeedSequence, list[np.random.SeedSequence]]:
    """The ensemble's master seed and every member's, the stream ``(MEMBER, e)`` of ``random_state``."""
    master = _seeds.as_seed_sequence(random_state)
    return master, [_seeds.child(master, _seeds.MEMBER, e) for e in range(n_members)]


def member_discretizer(sample, discretization: str):
    """A function of a member's seed returning the member's attributes, cut on the Dataset ``sample``:
    stochastic MDL draws each member's cut points from its own seed (the columns sorted once); the
    other methods give every member the same attributes (one list, learnt once)."""
    if discretization in config.STOCHASTIC_DISCRETIZATIONS:
        columns = sorted_numeric_columns(sample)

        def cut(seed):
            cuts = stochastic_cut_points(columns, seed, discretization)
            return [discretized_attribute(a, cuts[j]) if j in cuts else a for j, a in enumerate(sample.attributes)]

        return cut
    shared = Discretizer(method=discretization).fit(sample).attributes_
    return lambda seed: shared


def member_cell_limit(n_members: int) -> int:
    """The table cells each member may have: its share of ``config.MAX_MODEL_CELLS``."""
    return max(1, config.MAX_MODEL_CELLS // n_members)


def _too_large(plan: FitPlan, exc: TooLargeError, e: int, source: str) -> TooLargeError:
    """The refusal of member ``e``'s trees: of the network, or saying that the members share the limit."""
    if not plan.ensemble:
        return TooLargeError(f"{structure_name(plan.kind, plan.network_k)} on {source}: {exc}")
    n = plan.n_members
    return TooLargeError(
        f"ESKDB member {e} of {n} (SkDB-{plan.k}) on {source}: {exc}; an ensemble shares the limit "
        f"among its members (each may have {config.MAX_MODEL_CELLS // n:,} cells): fewer members also help")


def fit_networks(rows, plan: FitPlan, random_state, sample, progress=None) -> tuple[list[Member], dict]:
    """Fit the members of ``plan`` on ``rows`` (a backend of :mod:`hdp_plugin.model.rows`) with the
    engine's sampler ``sample`` (:func:`hdp_plugin.hdp.sampler.sample`'s signature).

    Returns
    -------
    (members, info)
        One :class:`~hdp_plugin.model.ensemble.Member` for a single network (weight 1), ``n_members``
        for ESKDB; ``info`` holds ``structure_seconds`` (everything before the tables), the master
        ``seed``, the sampler's figures and any ``warnings``.
    """
    with no_huge_page_advice():  # hdp_plugin.runtime.pages: fresh arrays without the kernel's compaction
        return _fit_networks(rows, plan, random_state, sample, progress)


def _fit_networks(rows, plan: FitPlan, random_state, sample, progress) -> tuple[list[Member], dict]:
    """:func:`fit_networks`'s work."""
    if plan.kind in ("kdb", "skdb"):  # k beyond the attributes less one: the k the networks can use
        plan = replace(plan, k=usable_k(plan.structure, plan.k, len(rows.sample.attributes)))
    master = _seeds.as_seed_sequence(random_state)
    seeds = member_seeds(master, plan.n_members)[1] if plan.ensemble else [master]
    if plan.estimator == "hdp":  # first use: the sampler's kernels compile in a helper meanwhile
        warmup.start()
    clock = Stopwatch()  # the structure's time, less compiling
    pairs = needs_pairs(plan.kind, plan.network_k)
    at_once = rows.members_at_once(len(seeds))
    if pairs:  # refuse before any work if even the fewest values the attributes can have would not fit
        try:
            check_pairwise_bytes(rows.least_cardinalities(), rows.n_classes, copies=at_once)
        except PairsTooLarge as exc:
            raise TooLargeError(f"{rows.source}: {exc}") from None
    cut = member_discretizer(rows.sample, plan.discretization)
    cell_limit = member_cell_limit(len(seeds))

    def draft(part_rows, group: list[int]) -> list[tuple[Draft, np.ndarray]]:
        """Steps 1 to 4 for the members ``group`` on ``part_rows``: their drafts and class counts."""
        group_seeds = [seeds[e] for e in group]
        # Step 1: every member's attributes (its own cut points)
        part = part_rows.part(part_rows.map(cut, group_seeds))
        cards = part.cardinalities()
        # Step 2: counts
        stats = part.count(cards, pairs)
        # Step 3: structures
        structures = _structures(plan, part, stats, group, group_seeds, cell_limit)
        # Step 4: context trees
        out = []
        for e, seed, attrs, card, s, st, trees in zip(group, group_seeds, part.attribute_sets, cards, structures,
                                                      stats, part.trees(structures, cards, cell_limit)):
            if isinstance(trees, TooLargeError):
                raise _too_large(plan, trees, e, rows.source) from None
            cells = None
            if plan.estimator == "hdp":
                from ..hdp.sampler import sampler_cells

                cells = sampler_cells(trees)
                trees = replace(trees, leaf_counts=np.zeros(0, np.int64))
            out.append((Draft(seed, attrs, card, s, trees, cells), st.n_y))
        return out

    try:
        done = rows.run_members(draft, len(seeds))
    except PairsTooLarge as exc:  # a member's own values did not fit
        raise TooLargeError(f"{rows.source}: {exc}") from None
    drafts = [d for d, _ in done]
    n_y = done[0][1]  # every member counts the same rows
    structure_seconds = clock.elapsed()
    limited = [e for e, d in enumerate(drafts) if "cell_limited" in d.structure.info]
    if limited:  # SkDB chose a smaller model than its best to stay within the cells (MAX_MODEL_CELLS)
        log.info("%s: %d of %d members chose a smaller model than their best, to stay within %d table cells "
                 "each (hdp_plugin.config.MAX_MODEL_CELLS)", rows.source, len(limited), len(drafts), cell_limit)
    # Step 5: every member's tables in one run
    members, info = estimate_members(drafts, plan, n_y, sample, progress)
    return members, {"structure_seconds": structure_seconds, "seed": _seeds.describe(master),
                     **({"cell_limited_members": limited} if limited else {}), **info}


def _structures(plan: FitPlan, part, stats: list, group: list[int], seeds: list, cell_limit: int) -> list[Structure]:
    """Step 3 for the members ``group`` (their counts ``stats``, seeds ``seeds``) of ``part``; SkDB's
    selection keeps each member within ``cell_limit`` table cells."""
    k = plan.network_k
    if not plan.ensemble:
        return [structure_from_counts(plan.kind, stats[0], k,
                                      lambda st, kk: part.select([0], [st], kk, plan.selection_m, [None],
                                                                 cell_limit)[0])]
    out: list = [None] * len(group)
    pending = []
    for i, e in enumerate(group):
        order_rng = None if e == 0 else _seeds.generator(seeds[i], _seeds.ORDER)
        mi, order = member_order(stats[i], order_rng)
        if order.size == 0:  # nothing is informative: the class prior
            out[i] = prior_structure(stats[i], mi, k, plan.m)
        else:
            pending.append((i, order))
    if pending:
        found = part.select([i for i, _ in pending], [stats[i] for i, _ in pending], k, plan.selection_m,
                            [o for _, o in pending], cell_limit)
        for (i, _), s in zip(pending, found):
            out[i] = s
    for e, s in zip(group, out):
        s.info["order_kind"] = "mi" if e == 0 else "sampled"
    return out


def concentration_ranges(tables: ProbabilityTables, node_group, concentrations) -> list:
    """Per tree, per depth below the root, the smallest and largest concentration of its nodes."""
    out = []
    conc = np.asarray(concentrations, np.float64)[np.asarray(node_group, np.int64)]
    for tr in range(tables.n_trees):
        lo, hi = int(tables.tree_node_start[tr]), int(tables.tree_node_start[tr + 1])
        depth = tables.node_depth[lo:hi]
        ranges = []
        for d in range(1, int(tables.tree_var_start[tr + 1] - tables.tree_var_start[tr]) + 1):
            c = conc[lo:hi][depth == d]
            ranges.append([float(c.min()), float(c.max())] if c.size else None)
        out.append(ranges)
    return out



def estimate_members(drafts: list[Draft], plan: FitPlan, n_y: np.ndarray, sample,
                     progress=None) -> tuple[list[Member], dict]:
    """The members' tables: with HDP, every member's trees in one run of ``sample`` (one Stirling table,
    one thread pool; each member's trees on the streams of its own seed; at most the iterations
    :func:`~hdp_plugin.params.resolved_iterations` gives the training rows' class counts ``n_y``);
    returns ``(members, info)``."""
    log_prior = np.log(class_prior_of_counts(n_y))
    n_members = len(drafts)
    states = cells = None
    if plan.estimator == "hdp":  # each member's trees on the streams of its own seed
        states = np.vstack([tree_states(_seeds.child(d.seed), d.trees.n_trees) for d in drafts])
        cells = [d.cells for d in drafts]
        for d in drafts:
            d.cells = None
        warmup.wait_for_sampler()
    trees = [d.trees for d in drafts]  # lent to the sampler's set of trees while it runs (estimate_tables)
    for d in drafts:
        d.trees = None
    est = estimate_tables(trees, estimator=plan.estimator, m=plan.m, sample=sample,
                          random_state=states, iterations=resolved_iterations(plan.structure, plan.iterations, n_y),
                          burn_in=plan.burn_in, tying=plan.tying, tolerance=sampler_tolerance(plan.iterations),
                          first_check=convergence_first_check(plan.structure),
                          n_jobs=plan.n_jobs, progress=progress, cells=cells)
    for d, t in zip(drafts, trees):
        d.trees = t
    info = dict(est.info)
    if plan.estimator == "hdp":
        info.update(n_trees=sum(d.trees.n_trees for d in drafts), n_cells=sum(d.trees.n_cells for d in drafts))
    members = []
    for e, (d, node_group, conc) in enumerate(zip(drafts, est.node_group, est.concentrations)):
        tables = est.tables(e, d.trees, log_prior, backoff_to_parent=plan.estimator == "hdp")
        ranges = None if node_group is None else concentration_ranges(tables, node_group, conc)
        members.append(Member(_seeds.describe(d.seed), d.attributes, d.cardinalities, d.structure, tables,
                              1.0 / n_members, node_group, conc, ranges))
    if plan.ensemble and all(not mb.structure.kept for mb in members):
        if all(not (np.asarray(mb.structure.mi) > 0).any() for mb in members):
            why = "no attribute carries information about the class (every MI is 0)"
        else:
            why = "no member's leave-one-out selection kept an attribute (none beat the class prior)"
        info.setdefault("warnings", []).append(f"{why}: the ensemble is the class prior")
    return members, info
