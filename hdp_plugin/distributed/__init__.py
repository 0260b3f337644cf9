"""Where the passes of a streamed fit run: this process (the default) or a Dask cluster.

``with engine("dask", scheduler="tcp://host:8786"): clf.fit(open_batches(path))`` runs the counting
passes as map per partition and tree reduce on the cluster and samples the trees there
(:mod:`hdp_plugin.distributed.dask_engine`); without ``scheduler`` a LocalCluster starts on this
machine. Dask is optional: ``pip install hdp-plugin[distributed]``.
"""

from __future__ import annotations

import contextlib
import contextvars

from ..errors import ParameterError

ENGINES = ("local", "dask")
_CURRENT: contextvars.ContextVar = contextvars.ContextVar("hdp_plugin_engine", default=None)


def current_engine():
    """The engine that :meth:`BayesNetClassifier.fit` uses for a batch source now."""
    from ..model.streaming import LocalEngine

    return _CURRENT.get() or LocalEngine()


def sampler():
    """The tree sampler of the current engine: :func:`hdp_plugin.hdp.sampler.sample`, or the engine's
    ``sample`` (same signature, same result) when a distributed engine is active."""
    eng = _CURRENT.get()
    if eng is None or eng.name == "local":
        from ..hdp.sampler import sample

        return sample
    return eng.sample


def make_engine(name: str = "local", *, scheduler: str | None = None, n_workers: int | None = None):
    """An engine by name: ``"local"``, or ``"dask"`` (on ``scheduler``, else a LocalCluster)."""
    if name == "local":
        if scheduler is not None:
            raise ParameterError("a scheduler address needs engine 'dask'")
        from ..model.streaming import LocalEngine

        return LocalEngine()
    if name == "dask":
        from .dask_engine import DaskEngine

        return DaskEngine(scheduler=scheduler, n_workers=n_workers)
    raise ParameterError(f"engine must be one of {', '.join(ENGINES)}; got {name!r}")


@contextlib.contextmanager
def engine(name: str = "local", *, scheduler: str | None = None, n_workers: int | None = None):
    """Fit batch sources on this engine inside the ``with`` block (closing it after)."""
    eng = make_engine(name, scheduler=scheduler, n_workers=n_workers)
    token = _CURRENT.set(eng)
    try:
        yield eng
    finally:
        _CURRENT.reset(token)
        close = getattr(eng, "close", None)
        if close:
            close()
