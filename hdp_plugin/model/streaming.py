"""Training and prediction on a :class:`~hdp_plugin.data.stream.BatchSource`: pass after pass over
record batches, holding one batch, the counts and the model at a time.

The passes (docs/scaling.md): 1. the schema pass (attributes, class, missing values, the
discretisation sample); 2. counting n(y), n(x_i, y), n(x_i, x_j, y); for SkDB 3. the context tries
and 4. the leave-one-out pass; 5. the context trees' leaf cells. Then the sampler, whose cost depends
on the trees, not the rows. Every pass gives the same integers (for the leave-one-out pass, the same
exact fixed-point sums) as the in-memory fit, so the model is bit for bit the one
:meth:`~hdp_plugin.model.BayesNetClassifier.fit` learns from the same rows in memory (when the data
has at most ``sample_rows`` rows with a known class; beyond, the cut points come from the sample).

ESKDB (:func:`fit_ensemble_source`) makes the same passes once for all its members: every batch is
decoded once and coded as each member codes it (its own cut points, drawn on the discretisation
sample from the member's seed); each member counts into its own accumulator, runs its own tries
and leave-one-out sums, and counts its own trees' cells; then all members' trees are sampled in
one run, as in memory (:mod:`hdp_plugin.model.ensemble`).

The passes run on an engine (:class:`hdp_plugin.distributed.Engine`): this process
(:class:`~hdp_plugin.distributed.local.LocalEngine`) or a Dask cluster, with the same results.
"""

from __future__ import annotations

import logging
import time

import numpy as np

from .. import _seeds, config
from ..data.stream import BatchSource
from ..distributed.local import LocalEngine
from ..errors import DataError, TooLargeError
from ..hdp.tables import ProbabilityTables, class_prior_of_counts
from ..hdp.trees import build_trees
from .ensemble import coding_attributes, model_proba
from .estimate import estimate_tables
from ..params import resolved_iterations, sampler_tolerance, structure_name
from ..preprocess import Discretizer
from ..structure.counts import needs_pairs
from ..structure.eskdb import member_order, prior_structure
from ..structure.learn import network_k, structure_from_counts

log = logging.getLogger(__name__)


def fit_source(clf, source: BatchSource, disc_method: str, info: dict, engine=None, progress=None):
    """Fit ``clf`` (a BayesNetClassifier, parameters validated) on ``source``; returns
    ``(structure, attributes, cards, class_attribute, names, members)`` and sets ``clf.tables_``
    (``members`` is None but for ESKDB, whose ``structure``, ``attributes``, ``cards`` and tables are
    member 0's)."""
    engine = engine or LocalEngine()
    passes = {}
    schema = _scan(engine, source, passes, getattr(clf, "categorical_features", None))
    if clf.structure == "eskdb":
        return fit_ensemble_source(clf, source, schema, disc_method, info, engine, passes, progress)
    src = source.source
    # discretisation on the sample
    seed = _seeds.as_seed_sequence(clf.random_state) if disc_method in config.STOCHASTIC_DISCRETIZATIONS else None
    disc = Discretizer(method=disc_method, random_state=seed).fit(schema.sample)
    attributes = disc.attributes_
    cards = _cardinalities(attributes, schema)
    C = len(schema.class_attribute.values)
    ca = schema.class_attribute
    _source_info(info, schema, source, engine)
    # Pass 2: counting; SkDB: passes 3 (tries) and 4 (leave-one-out)
    t0 = time.perf_counter()
    kind = clf.structure
    k = network_k(kind, clf.k)
    stats = engine.count(source, attributes, ca, cards, C, pairs=needs_pairs(kind, k))
    passes["count"] = time.perf_counter() - t0

    def select(st, kk):  # SkDB: passes 3 (tries) and 4 (leave-one-out) on the engine
        t0 = time.perf_counter()
        out = engine.selective(source, attributes, ca, st, kk)
        passes["tries_and_loo"] = time.perf_counter() - t0
        return out

    structure = structure_from_counts(kind, stats, k, select)
    info["structure_seconds"] = passes["count"] + passes.get("tries_and_loo", 0.0)
    # Pass 5: the context trees' leaf cells
    t0 = time.perf_counter()
    kept = list(structure.kept)
    try:
        cells = engine.cells(source, attributes, ca, [(c, list(structure.parents[c])) for c in kept], cards, C)
        trees = build_trees(None, None, cards, C, structure.parents, kept, leaf_cells=cells)
    except TooLargeError as exc:
        name = structure_name(kind, k)
        raise TooLargeError(f"{name} on {src}: {exc}") from None
    passes["trees"] = time.perf_counter() - t0
    est = estimate_tables([trees], estimator=clf.estimator, m=clf.m, sample=engine.sample,
                          random_state=clf.random_state if seed is None else seed,
                          iterations=resolved_iterations(kind, clf.iterations), burn_in=clf.burn_in, tying=clf.tying,
                          tolerance=sampler_tolerance(clf.iterations), n_jobs=clf.n_jobs, progress=progress)
    info.update(est.info)
    if clf.estimator == "hdp":
        info.update(concentrations=est.concentrations[0], node_group=est.node_group[0])
    log_probs = est.log_probs[0]
    clf.tables_ = ProbabilityTables(trees, log_probs, np.log(class_prior_of_counts(stats.n_y)))
    _pass_info(info, passes, schema)
    return structure, attributes, cards, ca, schema.names, None


def _scan(engine, source: BatchSource, passes: dict, categorical=None):
    """Pass 1 (attributes, class, missing values, the discretisation sample; the columns
    ``categorical`` declares made nominal), and the checks that the data can be trained on."""
    t0 = time.perf_counter()
    schema = engine.scan(source, categorical).finish(source.source)
    passes["schema"] = time.perf_counter() - t0
    src = source.source
    cname = schema.class_attribute.name
    observed = np.nonzero(schema.class_counts)[0]
    if schema.n_known == 0:
        raise DataError(f"class {cname!r} has no observed values in {src} (every row's class is missing)")
    if observed.size == 1:
        raise DataError(f"class {cname!r} has only one observed value "
                        f"{schema.class_attribute.values[int(observed[0])]!r} in {src}")
    if schema.n_known == 1:
        raise DataError(f"{src}: n_samples=1; training needs rows of at least two classes")
    return schema


def _cardinalities(attributes, schema) -> np.ndarray:
    """Codes per attribute as the model sees them (as :func:`~hdp_plugin.model.ensemble.model_cardinalities`
    of the whole data: a missing slot where any row with a known class misses the value)."""
    return np.maximum(np.array([len(a.values) for a in attributes], np.int64) + schema.has_missing, 1)


def _source_info(info: dict, schema, source: BatchSource, engine) -> None:
    n_numeric = sum(1 for a in schema.attributes if a.numeric)
    info.update(rows=schema.n_known, dropped_missing_class=schema.n_rows - schema.n_known, streamed=True,
                engine=engine.name, batches=len(schema.batch_rows), files=len(source.files),
                discretization_sample={"rows": int(schema.sample.n_rows), "limit": source.sample_rows,
                                       "all_rows": bool(schema.sampled_all), "numeric_attributes": n_numeric})
    if not schema.sampled_all and n_numeric:
        log.info("%s: numeric attributes discretised on a sample of %d of %d rows", source.source,
                 schema.sample.n_rows, schema.n_known)


def _pass_info(info: dict, passes: dict, schema) -> None:
    info["pass_seconds"] = passes
    info["rows_per_second"] = {p: (schema.n_rows / s if s > 0 else None) for p, s in passes.items()}


def fit_ensemble_source(clf, source: BatchSource, schema, disc_method: str, info: dict, engine, passes: dict,
                        progress=None):
    """ESKDB on ``source`` after the schema pass: the in-memory ensemble
    (:func:`~hdp_plugin.model.ensemble.fit_members`) made from shared passes (see the module docstring)."""
    from .ensemble import (_Draft, estimate_members, member_cell_limit, member_discretizer, member_seeds,
                           member_too_large)

    src = source.source
    n, k, m = int(clf.n_members), int(clf.k), float(clf.m)
    # every member's cut points, on the discretisation sample, from its own seed
    master, seeds = member_seeds(clf.random_state, n)
    cut = member_discretizer(schema.sample, disc_method)
    attribute_sets = [cut(seed) for seed in seeds]
    cards = [_cardinalities(attrs, schema) for attrs in attribute_sets]
    C = len(schema.class_attribute.values)
    ca = schema.class_attribute
    _source_info(info, schema, source, engine)
    # Pass 2: every member's counts, then its order
    t0 = time.perf_counter()
    stats = engine.count_members(source, attribute_sets, ca, cards, C)
    passes["count"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    structures, selected = [None] * n, []
    for e in range(n):
        order_rng = None if e == 0 else _seeds.generator(seeds[e], _seeds.ORDER)
        mi, order = member_order(stats[e], order_rng)
        if order.size == 0:  # nothing is informative: the class prior
            structures[e] = prior_structure(stats[e], mi, k, m)
        else:
            selected.append((e, order))
    # Passes 3 and 4: every member's tries and leave-one-out sums
    if selected:
        found = engine.select_members(source, [attribute_sets[e] for e, _ in selected], ca,
                                      [stats[e] for e, _ in selected], k, m, [o for _, o in selected],
                                      n_jobs=clf.n_jobs)
        for (e, _), s in zip(selected, found):
            structures[e] = s
    for e, s in enumerate(structures):
        s.info["order_kind"] = "mi" if e == 0 else "sampled"
    passes["tries_and_loo"] = time.perf_counter() - t0
    info["structure_seconds"] = passes["count"] + passes["tries_and_loo"]
    # Pass 5: every member's trees' leaf cells
    t0 = time.perf_counter()
    specs = [[(c, list(s.parents[c])) for c in s.kept] for s in structures]
    cells = engine.cells_members(source, attribute_sets, ca, specs, cards, C)
    drafts = []
    for e, (s, cl) in enumerate(zip(structures, cells)):
        try:
            trees = build_trees(None, None, cards[e], C, s.parents, s.kept, leaf_cells=cl,
                                max_cells=member_cell_limit(n))
        except TooLargeError as exc:
            raise member_too_large(exc, e, n, k, src) from None
        drafts.append(_Draft(seeds[e], attribute_sets[e], cards[e], s, trees))
    passes["trees"] = time.perf_counter() - t0
    prior = class_prior_of_counts(stats[0].n_y)
    members, more = estimate_members(drafts, estimator=clf.estimator,
                                     iterations=resolved_iterations("eskdb", clf.iterations), burn_in=clf.burn_in,
                                     tying=clf.tying, m=m, n_jobs=clf.n_jobs, progress=progress,
                                     log_prior=np.log(prior), sample=engine.sample,
                                     tolerance=sampler_tolerance(clf.iterations))
    info["seed"] = _seeds.describe(master)
    info["warnings"] += more.pop("warnings", [])
    for w in info["warnings"]:
        log.warning("%s: %s", src, w)
    info.update(more)
    _pass_info(info, passes, schema)
    first = members[0]
    clf.tables_ = first.tables
    return first.structure, first.attributes, first.cardinalities, ca, schema.names, members


def predict_source(clf, source: BatchSource):
    """``(table, y, proba)`` for every batch of ``source``: the batch as read, its class codes on the
    model's class (-1 where missing or absent) and P(class | x) of its rows."""
    from ..data.arrow import table_columns
    from ..data.conform import conform_columns
    from ..preprocess import apply_cut_points

    clf._check_fitted()
    targets = coding_attributes(clf)
    for t in source.batches():
        ds = conform_columns(table_columns(t, source.source), clf.attributes_, clf.class_attribute_,
                             source=source.source)
        proba = model_proba(clf, [apply_cut_points(ds, attrs).X for attrs in targets])
        yield t, ds.y, proba
