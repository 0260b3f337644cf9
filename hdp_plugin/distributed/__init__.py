"""Engines: where the passes of a fit run, this process (the default) or a Dask cluster.

Every fit runs on one engine. :meth:`BayesNetClassifier.fit <hdp_plugin.BayesNetClassifier.fit>`
takes it from the innermost ``with`` block of :func:`engine` or :func:`use_engine` (else the
:class:`~hdp_plugin.distributed.local.LocalEngine`), once at the start of the fit, and hands it
down explicitly: the passes over a batch source and the sampler of every fit, in memory or not, are
the engine's.

``with engine("dask", scheduler="tcp://host:8786"): clf.fit(open_batches(path))`` runs the counting
passes as map per partition and tree reduce on the cluster and samples the trees there
(:mod:`hdp_plugin.distributed.dask_engine`); without ``scheduler`` a LocalCluster starts on this
machine. Dask is optional: ``pip install "dask[distributed]"``. Whatever the engine, the model
is the same, bit for bit.
"""

from __future__ import annotations

import contextlib
import contextvars
from typing import Protocol, runtime_checkable

from ..errors import ParameterError

ENGINES = ("local", "dask")
_CURRENT: contextvars.ContextVar = contextvars.ContextVar("hdp_plugin_engine", default=None)


@runtime_checkable
class Engine(Protocol):
    """What an engine provides: the passes of a fit and the sampler, each with the local result.

    A fit's networks are members (:mod:`hdp_plugin.model.pipeline`: a single network is an ensemble
    of one), so every pass is for a group of members at once, reading the data once for all of them.
    ``source`` is a :class:`~hdp_plugin.data.stream.BatchSource`; ``attribute_sets[e]`` member ``e``'s
    (discretised) attributes, ``cards[e]`` their model cardinalities and ``trees[e]`` its context trees
    (``(attribute, parents)`` pairs); ``class_attribute`` is the class and ``n_classes`` its number of
    values.
    """

    #: ``"local"`` or ``"dask"``: recorded in ``fit_info_["engine"]``
    name: str

    def scan(self, source, categorical=None):
        """The schema pass: a :class:`~hdp_plugin.data.stream.SchemaScan` of ``source`` (attributes,
        class, rows, the discretisation sample), with the ``categorical`` columns nominal."""

    def sample(self, trees, *, iterations, burn_in, tying, random_state, n_jobs=None, progress=None,
               tolerance=None, first_check=None):
        """The HDP sampler on ``trees``: :func:`hdp_plugin.hdp.sampler.sample`'s result."""

    def count_members(self, source, attribute_sets, class_attribute, cards, n_classes, pairs=True):
        """The counting pass: every member's :class:`~hdp_plugin.structure.counts.CountStatistics`
        (without the pairwise counts unless ``pairs``: naive Bayes needs none)."""

    def select_members(self, source, attribute_sets, class_attribute, stats, k, m, orders, n_jobs=None,
                       max_cells=None):
        """SkDB's tries and leave-one-out passes: every member's selection
        (:func:`~hdp_plugin.structure.selective.selective_kdb` on its counts ``stats[e]``, with the
        m-estimates' ``m``) on its own order ``orders[e]`` (None: decreasing MI), each within
        ``max_cells`` table cells when given."""

    def cells_members(self, source, attribute_sets, class_attribute, trees, cards, n_classes):
        """The leaf cells of every member's context trees."""


def current_engine() -> Engine:
    """The engine a fit started now runs on: the innermost :func:`engine` / :func:`use_engine`
    block's, else a :class:`~hdp_plugin.distributed.local.LocalEngine`."""
    eng = _CURRENT.get()
    if eng is not None:
        return eng
    from .local import LocalEngine

    return LocalEngine()


def make_engine(name: str = "local", *, scheduler: str | None = None, n_workers: int | None = None) -> Engine:
    """An engine by name: ``"local"``, or ``"dask"`` (on ``scheduler``, else a LocalCluster)."""
    if name == "local":
        if scheduler is not None:
            raise ParameterError("a scheduler address needs engine 'dask'")
        from .local import LocalEngine

        return LocalEngine()
    if name == "dask":
        from .dask_engine import DaskEngine

        return DaskEngine(scheduler=scheduler, n_workers=n_workers)
    raise ParameterError(f"engine must be one of {', '.join(ENGINES)}; got {name!r}")


@contextlib.contextmanager
def use_engine(eng: Engine):
    """Fit on the engine ``eng`` inside the ``with`` block (which leaves it open: the caller owns it)."""
    token = _CURRENT.set(eng)
    try:
        yield eng
    finally:
        _CURRENT.reset(token)


@contextlib.contextmanager
def engine(name: str = "local", *, scheduler: str | None = None, n_workers: int | None = None):
    """Fit on a new engine ``name`` (:func:`make_engine`) inside the ``with`` block, closing it after."""
    eng = make_engine(name, scheduler=scheduler, n_workers=n_workers)
    try:
        with use_engine(eng):
            yield eng
    finally:
        close = getattr(eng, "close", None)
        if close:
            close()
