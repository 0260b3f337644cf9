"""Large arrays without huge-page advice while a fit runs (numpy on Linux).

numpy advises the kernel to back every large array with transparent huge pages
(``madvise(MADV_HUGEPAGE)``). Where the kernel answers that advice by compacting memory at the
array's first touch (``/sys/kernel/mm/transparent_hugepage/defrag`` set to ``madvise``, the default
of many distributions), each fresh large array stalls in the kernel, and a fit makes and drops many:
tries grown by doubling, every member's counts and cells, the sampler's layout and buffers. Inside
:func:`no_huge_page_advice` numpy gives no such advice, so fresh pages come as the kernel's default
policy gives them; numpy's setting is restored when the last fit inside it ends. The arrays and
results are the same either way. Where numpy has no such switch (it is private to numpy), this does
nothing.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Iterator

import numpy as np

_lock = threading.Lock()
_depth = 0  # fits inside at once (threads of one process)
_saved = True  # numpy's setting when the first of them entered


def _switch():
    """numpy's ``_set_madvise_hugepage(enabled) -> previous``, or None."""
    core = getattr(np, "_core", None) or getattr(np, "core", None)
    return getattr(getattr(core, "multiarray", None), "_set_madvise_hugepage", None)


_SET = _switch()


@contextmanager
def no_huge_page_advice() -> Iterator[None]:
    """While inside (in any thread), numpy advises no huge pages for new arrays; the last to leave
    restores numpy's setting."""
    global _depth, _saved
    if _SET is None:
        yield
        return
    with _lock:
        if _depth == 0:
            _saved = bool(_SET(False))
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0:
                _SET(_saved)
