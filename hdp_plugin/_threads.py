"""How many threads a fit uses: ``n_jobs`` against numba's thread count, one rule for the sampler,
an ensemble's members and the working-memory estimate of the reading limits."""

from __future__ import annotations

from .errors import ParameterError


def resolved_threads(n_jobs: int | None) -> int:
    """The threads of ``n_jobs`` (None or -1: all of numba's, ``NUMBA_NUM_THREADS``; else at most that)."""
    import numba

    avail = numba.config.NUMBA_NUM_THREADS
    if n_jobs is None or n_jobs == -1:
        return avail
    n_jobs = int(n_jobs)
    if n_jobs < 1:
        raise ParameterError(f"n_jobs must be a positive number of threads or -1, got {n_jobs!r}")
    return min(n_jobs, avail)


def members_at_once(params: dict) -> int:
    """How many ESKDB members a fit with the classifier parameters ``params`` builds at once (their
    working memory is held together); 1 for a single network."""
    if params.get("structure") != "eskdb":
        return 1
    return min(resolved_threads(params.get("n_jobs")), int(params["n_members"]))
