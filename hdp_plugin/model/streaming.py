"""Training and prediction on a :class:`~hdp_plugin.data.stream.BatchSource`: pass after pass over
record batches, holding one batch, the counts and the model at a time.

The passes (docs/scaling.md): 1. the schema pass (attributes, class, missing values, the
discretisation sample); 2. counting n(y), n(x_i, y), n(x_i, x_j, y); for SkDB 3. the context tries
and 4. the leave-one-out pass; 5. the context trees' leaf cells. Then the sampler, whose cost depends
on the trees, not the rows. Every pass gives the same integers (for the leave-one-out pass, the same
exact fixed-point sums) as the in-memory fit, so the model is bit for bit the one
:meth:`~hdp_plugin.model.BayesNetClassifier.fit` learns from the same rows in memory (when the data
has at most ``sample_rows`` rows with a known class; beyond, the cut points come from the sample).

An engine (:mod:`hdp_plugin.distributed`) may run the passes elsewhere: it provides ``scan``,
``count``, ``selective``, ``cells`` and ``sample`` with the same results.
"""

from __future__ import annotations

import logging
import time

import numpy as np

from .. import _seeds
from ..data.stream import BatchSource, batch_codes, scan_schema
from ..errors import DataError, ParameterError, TooLargeError
from ..hdp.tables import ProbabilityTables, laplace, m_estimate
from ..hdp.trees import LeafCellCounter, build_trees
from ..params import resolved_iterations, sampler_tolerance, structure_name
from ..preprocess import Discretizer
from ..structure.counts import CountAccumulator
from ..structure.learners import kdb, naive_bayes, tan
from ..structure.selective import selective_kdb

log = logging.getLogger(__name__)


class LocalEngine:
    """The passes in this process, one batch after another (the default engine)."""

    name = "local"

    def scan(self, source: BatchSource):
        return scan_schema(source)

    def blocks(self, source: BatchSource, attributes, class_attribute):
        """A function returning a fresh iterator of (X, y) code blocks, rows in order."""
        def gen():
            for t in source.batches():
                ds = batch_codes(t, attributes, class_attribute, source.source)
                if ds.n_rows:
                    yield ds.X, ds.y
        return gen

    def count(self, source, attributes, class_attribute, cards, n_classes):
        acc = CountAccumulator(cards, n_classes)
        row = 0
        for X, y in self.blocks(source, attributes, class_attribute)():
            acc.add(X, y, row)
            row += X.shape[0]
        return acc.result()

    def selective(self, source, attributes, class_attribute, stats, k):
        return selective_kdb(None, None, stats, k, blocks=self.blocks(source, attributes, class_attribute))

    def cells(self, source, attributes, class_attribute, trees, cards, n_classes):
        counter = LeafCellCounter(trees, cards, n_classes)
        for X, y in self.blocks(source, attributes, class_attribute)():
            counter.add(X, y)
        return counter.result()

    def sample(self, trees, **kwargs):
        from ..hdp.sampler import sample

        return sample(trees, **kwargs)


def fit_source(clf, source: BatchSource, disc_method: str, info: dict, engine=None, progress=None):
    """Fit ``clf`` (a BayesNetClassifier, parameters validated) on ``source``; returns
    ``(structure, attributes, cards, class_attribute, names)`` and sets ``clf.tables_``."""
    engine = engine or LocalEngine()
    if clf.structure == "eskdb":
        raise ParameterError("ESKDB cannot be trained from batches yet (its members discretise and count "
                             "separately); read the data into memory, or use structure skdb")
    passes = {}
    # Pass 1: attributes, class, missing values, the discretisation sample
    t0 = time.perf_counter()
    schema = engine.scan(source).finish(source.source)
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
    # discretisation on the sample
    seed = _seeds.as_seed_sequence(clf.random_state) if disc_method == "stochastic-mdl" else None
    disc = Discretizer(method=disc_method, random_state=seed).fit(schema.sample)
    attributes = disc.attributes_
    cards = np.maximum(np.array([len(a.values) for a in attributes], np.int64) + schema.has_missing, 1)
    C = len(schema.class_attribute.values)
    ca = schema.class_attribute
    n_numeric = sum(1 for a in attributes if a.numeric)
    info.update(rows=schema.n_known, dropped_missing_class=schema.n_rows - schema.n_known, streamed=True,
                engine=engine.name, batches=len(schema.batch_rows), files=len(source.files),
                discretization_sample={"rows": int(schema.sample.n_rows), "limit": source.sample_rows,
                                       "all_rows": bool(schema.sampled_all), "numeric_attributes": n_numeric})
    if not schema.sampled_all and n_numeric:
        log.info("%s: numeric attributes discretised on a sample of %d of %d rows", src, schema.sample.n_rows,
                 schema.n_known)
    # Pass 2: counting; SkDB: passes 3 (tries) and 4 (leave-one-out)
    t0 = time.perf_counter()
    kind = clf.structure
    k = 0 if kind == "nb" else (1 if kind == "tan" else int(clf.k))
    stats = engine.count(source, attributes, ca, cards, C)
    passes["count"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    if kind == "nb":
        structure = naive_bayes(stats)
    elif kind == "tan":
        structure = tan(stats)
    elif kind == "kdb":
        structure = kdb(stats, k)
    else:
        structure = engine.selective(source, attributes, ca, stats, k)
        passes["tries_and_loo"] = time.perf_counter() - t0
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
    if clf.estimator == "hdp":
        res = engine.sample(trees, iterations=resolved_iterations(kind, clf.iterations), burn_in=clf.burn_in, tying=clf.tying,
                            random_state=clf.random_state if seed is None else seed, n_jobs=clf.n_jobs,
                            progress=progress, tolerance=sampler_tolerance(clf.iterations))
        probs = res.probabilities
        from ..hdp.sampler import stopping_info

        info.update(iterations=res.iterations, sampler_seconds=res.seconds, n_samples=res.n_samples, burn_in=res.burn_in,
                    concentrations=res.concentrations, node_group=res.node_group,
                    **stopping_info(res, sampler_tolerance(clf.iterations)))
    elif clf.estimator == "laplace":
        probs = laplace(trees)
    else:
        probs = m_estimate(trees, float(clf.m) if clf.estimator == "m-estimate" else 0.0)
    with np.errstate(divide="ignore"):
        log_probs = np.log(probs)
    counts = stats.n_y.astype(np.float64)
    prior = (counts + 1.0 / C) / (counts.sum() + 1.0)
    clf.tables_ = ProbabilityTables(trees, log_probs, np.log(prior))
    info["pass_seconds"] = passes
    info["rows_per_second"] = {p: (schema.n_rows / s if s > 0 else None) for p, s in passes.items()}
    return structure, attributes, cards, ca, schema.names


def predict_source(clf, source: BatchSource):
    """``(table, y, proba)`` for every batch of ``source``: the batch as read, its class codes on the
    model's class (-1 where missing or absent) and P(class | x) of its rows."""
    from ..data.arrow import table_columns
    from ..data.conform import conform_columns
    from ..preprocess import apply_cut_points

    clf._check_fitted()
    targets = [mb.attributes for mb in clf.members_] if hasattr(clf, "members_") else [clf.attributes_]
    for t in source.batches():
        ds = conform_columns(table_columns(t, source.source), clf.attributes_, clf.class_attribute_,
                             source=source.source)
        codes = [apply_cut_points(ds, attrs).X for attrs in targets]
        if hasattr(clf, "members_"):
            from .ensemble import ensemble_proba

            proba = ensemble_proba(clf.members_, codes)
        else:
            from ..hdp.tables import predict_log_proba

            proba = np.exp(predict_log_proba(clf.tables_, codes[0]))
        yield t, ds.y, proba
