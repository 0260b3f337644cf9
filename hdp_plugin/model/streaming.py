"""Training and prediction on a :class:`~hdp_plugin.data.stream.BatchSource`: pass after pass over
record batches, holding one batch, the counts and the model at a time.

The passes (docs/scaling.md): 1. the schema pass (attributes, class, missing values, the
discretisation sample); 2. counting n(y), n(x_i, y), n(x_i, x_j, y); for SkDB 3. the context tries
and 4. the leave-one-out pass; 5. the context trees' leaf cells. Then the sampler, whose cost depends
on the trees, not the rows. Every pass gives the same integers (for the leave-one-out pass, the same
exact fixed-point sums) as the in-memory fit, so the model is bit for bit the one
:meth:`~hdp_plugin.model.BayesNetClassifier.fit` learns from the same rows in memory (when the data
has at most ``sample_rows`` rows with a known class; beyond, the cut points come from the sample).

The fit is the pipeline of every model (:mod:`hdp_plugin.model.pipeline`) on the rows of the source
(:class:`~hdp_plugin.model.rows.SourceRows`): an ESKDB makes the same passes once for all its members.
Every batch is decoded once and coded as each member codes it (its own cut points, drawn on the
discretisation sample from the member's seed); each member counts into its own accumulator, runs its
own tries and leave-one-out sums, and counts its own trees' cells; then all members' trees are
sampled in one run, as in memory.

The passes run on an engine (:class:`hdp_plugin.distributed.Engine`): this process
(:class:`~hdp_plugin.distributed.local.LocalEngine`) or a Dask cluster, with the same results.
"""

from __future__ import annotations

import logging
import time

import numpy as np

from ..data.identifiers import check_class
from ..data.stream import BatchSource
from ..distributed.local import LocalEngine
from ..errors import DataError
from .ensemble import coding_attributes, model_proba, used_attributes
from .pipeline import fit_networks
from .rows import SourceRows

log = logging.getLogger(__name__)


def fit_source(clf, source: BatchSource, plan, engine=None, progress=None):
    """Fit the networks of ``plan`` (:class:`~hdp_plugin.model.pipeline.FitPlan` of ``clf``, a
    BayesNetClassifier whose parameters are validated) on ``source``: the schema pass, then the
    pipeline's passes on ``engine``. Returns ``(members, info, schema)``."""
    engine = engine or LocalEngine()
    passes = {}
    schema = _scan(engine, source, passes, getattr(clf, "categorical_features", None))
    info = {"warnings": []}
    _source_info(info, schema, source, engine)
    rows = SourceRows(source, schema, engine, plan.n_jobs, passes)
    members, more = fit_networks(rows, plan, clf.random_state, engine.sample, progress)
    for w in more.get("warnings", []):
        log.warning("%s: %s", source.source, w)
    info["warnings"] += more.pop("warnings", [])
    info.update(more)
    _pass_info(info, passes, schema)
    return members, info, schema


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
    check_class(cname, int(observed.size), int(schema.n_known), src)
    return schema


def _source_info(info: dict, schema, source: BatchSource, engine) -> None:
    n_numeric = sum(1 for a in schema.attributes if a.numeric)
    from ..data.dataset import note_missing_class

    note_missing_class(schema.n_rows - schema.n_known, source.source, stacklevel=4)
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


def predict_source(clf, source: BatchSource):
    """``(table, y, proba)`` for every batch of ``source``: the batch as read, its class codes on the
    model's class (-1 where missing or absent) and P(class | x) of its rows."""
    from ..data._columns import dataset_columns
    from ..data.arrow import table_columns
    from ..data.conform import conform_columns, empty_columns, warn_empty
    from ..preprocess import apply_cut_points

    clf._check_fitted()
    targets = coding_attributes(clf)
    empty = used_attributes(clf)  # the columns used with no value in the batches so far
    rows = 0
    for t in source.batches():
        ds = conform_columns(table_columns(t, source.source), clf.attributes_, clf.class_attribute_,
                             source=source.source, used=())
        if empty:
            empty = empty_columns(dataset_columns(ds), set(empty))
        rows += t.num_rows
        proba = model_proba(clf, [apply_cut_points(ds, attrs).X for attrs in targets])
        yield t, ds.y, proba
    warn_empty(empty, rows, source.source)  # once the batches are all read: a column of no value in them all
