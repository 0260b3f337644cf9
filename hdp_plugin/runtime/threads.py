"""How many threads a fit uses: ``n_jobs`` against numba's thread count, one rule for the sampler,
an ensemble's members and the working-memory estimate of the reading limits."""

from __future__ import annotations

from ..errors import ParameterError


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


def row_parts(n_rows: int, block: int, threads: int) -> list[tuple[int, int]]:
    """``(lo, hi)`` of at most ``threads`` contiguous parts of ``n_rows`` rows, each whole blocks of
    ``block`` rows (the last part takes the rest): one part unless there are at least two blocks."""
    n_blocks = -(-int(n_rows) // int(block))
    n_parts = max(1, min(int(threads), n_blocks))
    cuts = [int(block) * (n_blocks * i // n_parts) for i in range(n_parts)] + [int(n_rows)]
    return list(zip(cuts[:-1], cuts[1:]))


def map_parts(fn, parts: list) -> list:
    """``fn(lo, hi)`` for every part, on one thread each (the kernels release the interpreter's lock),
    the results in the parts' order; an exception is raised for the first part, in that order, that
    raised one (so a fit reports the first bad row, as one thread would)."""
    if len(parts) < 2:
        return [fn(lo, hi) for lo, hi in parts]
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=len(parts), thread_name_prefix="hdp-rows") as pool:
        return pool_map(pool, lambda part: fn(*part), parts)


def pool_map(pool, fn, items) -> list:
    """``fn`` over ``items`` on the executor ``pool``, the results in the items' order, as
    ``list(pool.map(fn, items))``; the exception of the first item, in that order, that raised one is
    raised. The calling thread waits with :func:`hdp_plugin.runtime.cancel.wait_all`: Ctrl-C stops the
    work at once (the items not started are dropped, the others stop at their next check)."""
    from . import cancel

    futures = [pool.submit(fn, x) for x in items]
    cancel.wait_all(futures)
    return [f.result() for f in futures]
