"""ESKDB: an ensemble of selective kDB members with HDP tables, averaged in probability.

Each member (Zhang, Petitjean and Buntine 2020) is a complete SkDB classifier built from its own
random stream on the training data:

1. discretise every numeric attribute (stochastic MDL by default: each member cuts differently);
2. count, and draw the member's attribute order (member 0: decreasing MI; the others: sampled in
   proportion to MI), dropping attributes with zero MI;
3. kDB parents and SkDB's (n*, k*) selection on that order;
4. one context tree per selected attribute, its tables estimated by the HDP sampler (or a
   baseline estimator).

The ensemble predicts the arithmetic mean of its members' normalised class probabilities.

Reproducibility and parallelism: member ``e`` draws everything from its own seed, the stream
``(MEMBER, e)`` of ``random_state`` (:mod:`hdp_plugin._seeds`), split further by purpose, so the
ensemble is the same bit for bit whatever the number of threads. Members are built in parallel
(the counting and selection kernels release the GIL), and then the trees of **all** members are
sampled in one run: one set of Stirling tables, one pool of threads taking the largest trees first.
Nothing is written to disk.

References
----------
.. [1] H. Zhang, F. Petitjean and W. Buntine, "Bayesian network classifiers using ensembles and
   smoothing", Knowledge and Information Systems 62 (2020) 3457-3480.
"""

from __future__ import annotations

import logging
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from .. import _cancel, _seeds, config
from ..data import Attribute, Dataset
from ..errors import TooLargeError
from ..hdp.rng import tree_states
from .._threads import resolved_threads as _threads
from ..hdp.tables import ProbabilityTables, class_prior, predict_log_proba
from ..hdp.trees import ContextTrees, build_trees
from ..preprocess import Discretizer, apply_cut_points, discretized_attribute, sorted_numeric_columns, stochastic_cut_points
from ..structure import Structure
from ..structure.counts import check_pairwise_bytes
from ..structure.eskdb import eskdb_member
from .estimate import estimate_tables

log = logging.getLogger(__name__)


@dataclass
class Member:
    """One member of an ensemble: its attributes (with its own cut points), structure and tables."""

    seed: dict  # the member's seed as plain data (_seeds.describe)
    attributes: list[Attribute]
    cardinalities: np.ndarray
    structure: Structure
    tables: ProbabilityTables
    weight: float
    #: HDP only: every node's concentration group (numbered within the member) and the groups'
    #: final concentrations
    node_group: np.ndarray | None = None
    concentrations: np.ndarray | None = None


def model_cardinalities(ds: Dataset) -> np.ndarray:
    """Codes per attribute as a model sees them: the labels, plus a slot for missing if the
    training data has any missing value of that attribute (at least 1)."""
    miss = np.array([(ds.X[:, j] == a.missing_code).any() for j, a in enumerate(ds.attributes)], bool)
    cards = np.array([len(a.values) for a in ds.attributes], np.int64) + miss
    return np.maximum(cards, 1)


@dataclass
class _Draft:
    """A member before its tables: everything but the estimates."""

    seed: np.random.SeedSequence
    attributes: list[Attribute]
    cardinalities: np.ndarray
    structure: Structure
    trees: ContextTrees


def fit_members(
    ds: Dataset,
    *,
    n_members: int,
    k: int,
    estimator: str,
    iterations: int,
    burn_in: int | None,
    tying: str,
    m: float,
    discretization: str,
    tolerance: float | None = None,
    random_state,
    n_jobs: int | None,
    sample=None,
    progress=None,
) -> tuple[list[Member], dict]:
    """Build the members of an ESKDB ensemble on ``ds`` (class known on every row); ``sample`` is
    the engine's sampler (default :func:`hdp_plugin.hdp.sampler.sample`).

    Returns
    -------
    (members, info)
        ``info`` holds timings, the master seed and (HDP) the sampler's figures.
    """
    if sample is None:
        from ..hdp.sampler import sample
    master, seeds = member_seeds(random_state, n_members)
    threads = _threads(n_jobs)
    t0 = time.perf_counter()
    # Step 0: the members built at once each count pairs; refuse before any is built if even the fewest
    # values the attributes can have (a numeric one: one interval) would not fit
    check_pairwise_bytes(model_cardinalities(ds), ds.n_classes, copies=min(threads, n_members))
    # Step 1: what every member shares: sorted numeric columns, or one deterministic discretiser
    cut = member_discretizer(ds, discretization)

    def draft(e: int) -> _Draft:
        _cancel.check()  # between members (and inside each, between blocks of rows)
        seed = seeds[e]
        attributes = cut(seed)
        coded = apply_cut_points(ds, attributes)
        cards = model_cardinalities(coded)
        order_rng = None if e == 0 else _seeds.generator(seed, _seeds.ORDER)
        _cancel.check()
        structure = eskdb_member(coded.X, coded.y, cards, coded.n_classes, k=k, m=m, order_rng=order_rng)
        _cancel.check()
        try:  # the ensemble's cells share one budget: each member may use its share of it
            trees = build_trees(coded.X, coded.y, cards, coded.n_classes, structure.parents, structure.kept,
                                max_cells=member_cell_limit(n_members))
        except TooLargeError as exc:
            raise member_too_large(exc, e, n_members, k, ds.source) from None
        return _Draft(seed, coded.attributes, cards, structure, trees)

    # Step 2: the members' structures, in parallel (same result in any order)
    if threads > 1 and n_members > 1:
        with ThreadPoolExecutor(max_workers=threads) as pool:
            drafts = list(pool.map(draft, range(n_members)))
    else:
        drafts = [draft(e) for e in range(n_members)]
    t_structure = time.perf_counter() - t0
    members, info = estimate_members(drafts, estimator=estimator, iterations=iterations, burn_in=burn_in,
                                     tying=tying, m=m, n_jobs=n_jobs, progress=progress,
                                     log_prior=np.log(class_prior(ds.y, ds.n_classes)), sample=sample,
                                     tolerance=tolerance)
    return members, {"structure_seconds": t_structure, "seed": _seeds.describe(master), **info}


def member_seeds(random_state, n_members: int) -> tuple[np.random.SeedSequence, list[np.random.SeedSequence]]:
    """The ensemble's master seed and every member's, the stream ``(MEMBER, e)`` of ``random_state``."""
    master = _seeds.as_seed_sequence(random_state)
    return master, [_seeds.child(master, _seeds.MEMBER, e) for e in range(n_members)]


def member_discretizer(ds: Dataset, discretization: str):
    """A function of a member's seed returning the member's attributes, cut on ``ds``: stochastic MDL
    draws each member's cut points from its own seed (the columns sorted once); the other methods
    give every member the same attributes (one list, learnt once)."""
    if discretization in config.STOCHASTIC_DISCRETIZATIONS:
        columns = sorted_numeric_columns(ds)

        def cut(seed):
            cuts = stochastic_cut_points(columns, seed, discretization)
            return [discretized_attribute(a, cuts[j]) if j in cuts else a for j, a in enumerate(ds.attributes)]

        return cut
    shared = Discretizer(method=discretization).fit(ds).attributes_
    return lambda seed: shared


def member_cell_limit(n_members: int) -> int:
    """The table cells each member may have: its share of ``config.MAX_MODEL_CELLS``."""
    return max(1, config.MAX_MODEL_CELLS // n_members)


def member_too_large(exc: TooLargeError, e: int, n_members: int, k: int, source: str) -> TooLargeError:
    """The refusal of member ``e``'s trees, saying that the members share the limit."""
    return TooLargeError(
        f"ESKDB member {e} of {n_members} (SkDB-{k}) on {source}: {exc}; an ensemble shares the limit "
        f"among its members (each may have {config.MAX_MODEL_CELLS // n_members:,} cells): fewer members "
        f"also help")


def estimate_members(drafts: list[_Draft], *, estimator: str, iterations: int, burn_in: int | None, tying: str,
                     m: float, n_jobs: int | None, progress, log_prior: np.ndarray, sample,
                     tolerance: float | None = None) -> tuple[list[Member], dict]:
    """The members' tables: with HDP, every member's trees in one run of ``sample`` (one Stirling table,
    one thread pool; each member's trees on the streams of its own seed); returns ``(members, info)``."""
    n_members = len(drafts)
    states = None
    if estimator == "hdp":  # each member's trees on the streams of its own seed
        states = np.vstack([tree_states(_seeds.child(d.seed), d.trees.n_trees) for d in drafts])
    est = estimate_tables([d.trees for d in drafts], estimator=estimator, m=m, sample=sample, random_state=states,
                          iterations=iterations, burn_in=burn_in, tying=tying, tolerance=tolerance, n_jobs=n_jobs,
                          progress=progress)
    info = dict(est.info)
    if estimator == "hdp":
        info.update(n_trees=sum(d.trees.n_trees for d in drafts), n_cells=sum(d.trees.n_cells for d in drafts))
    members = []
    for d, log_probs, node_group, conc in zip(drafts, est.log_probs, est.node_group, est.concentrations):
        tables = ProbabilityTables(d.trees, log_probs, log_prior)
        members.append(Member(_seeds.describe(d.seed), d.attributes, d.cardinalities, d.structure, tables,
                              1.0 / n_members, node_group, conc))
    if all(not mb.structure.kept for mb in members):
        if all(not (np.asarray(mb.structure.mi) > 0).any() for mb in members):
            why = "no attribute carries information about the class (every MI is 0)"
        else:
            why = "no member's leave-one-out selection kept an attribute (none beat the class prior)"
        info.setdefault("warnings", []).append(f"{why}: the ensemble is the class prior")
    return members, info


def ensemble_proba(members: list[Member], codes: list[np.ndarray]) -> np.ndarray:
    """The weighted mean of the members' normalised class probabilities.

    ``codes[e]`` is the data coded as member ``e`` codes it (its own cut points). Members are
    added in order and the sum divided by the total weight, as the Java classifier does.
    """
    total = None
    for mb, X in zip(members, codes):
        p = np.exp(predict_log_proba(mb.tables, X)) * mb.weight
        total = p if total is None else total + p
    return total / sum(mb.weight for mb in members)


# -- one fitted classifier, single network or ensemble --------------------------------------------------
def members_of(clf) -> list[Member] | None:
    """A fitted classifier's ensemble members, or None for a single network: the one place that
    tells the two apart."""
    return getattr(clf, "members_", None)


def coding_attributes(clf) -> list[list[Attribute]]:
    """The attributes each network of ``clf`` codes data with (one list per member, its own cut
    points; one list for a single network)."""
    members = members_of(clf)
    return [mb.attributes for mb in members] if members is not None else [clf.attributes_]


def model_proba(clf, codes: list[np.ndarray], *, log: bool = False) -> np.ndarray:
    """P(class | x) (or its log) of the rows coded as ``codes`` (:func:`coding_attributes` order): a
    single network's normalised tables, or the ensemble's mean of its members'."""
    members = members_of(clf)
    if members is None:
        lp = predict_log_proba(clf.tables_, codes[0])
        return lp if log else np.exp(lp)
    proba = ensemble_proba(members, codes)
    if not log:
        return proba
    with np.errstate(divide="ignore"):
        return np.log(proba)
