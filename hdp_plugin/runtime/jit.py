"""How numba compiles hdp_plugin's kernels: the options every ``@njit`` kernel takes
(``NJIT_OPTIONS``) and where their on-disk cache goes.

``NJIT_OPTIONS`` and ``NUMBA_CACHE`` are decided on their first use (by a kernel module, which imports
numba anyway): the cache is on unless ``HDP_NUMBA_CACHE=0``, in ``NUMBA_CACHE_DIR`` when set, else where
numba caches, else (nothing writable) a per-user folder of the system's temporary directory; with
nowhere to write, kernels are compiled in memory. The first use also installs the package's cache
locator (:mod:`.kernel_cache`) and the compile notice (:mod:`.compile_notice`).
"""

from __future__ import annotations

import os
import tempfile


def _writable_dir(path: str) -> bool:
    """True if ``path`` is (or can be made) a directory this process can write into."""
    try:
        os.makedirs(path, exist_ok=True)
        probe = tempfile.NamedTemporaryFile(dir=path, prefix=".hdp-probe-", delete=True)
        probe.close()
        return True
    except OSError:
        return False


def _numba_cache_dir() -> str | None:
    """Where numba's cache goes, or None for numba's own choice.

    numba caches next to the package (``__pycache__``) when that is writable, else in the user's
    cache directory; when neither is (a read-only install under a read-only home, as in some
    containers), numba would refuse ``cache=True`` and the package could not be imported. Then
    the cache goes to a per-user directory under the system's temporary directory. An explicit
    ``NUMBA_CACHE_DIR`` is always honoured.
    """
    if os.environ.get("NUMBA_CACHE_DIR"):
        return None
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the package's folder
    if _writable_dir(os.path.join(here, "__pycache__")):
        return None
    try:
        from numba.misc.appdirs import AppDirs

        if _writable_dir(AppDirs(appname="numba", appauthor=False).user_cache_dir):
            return None
    except ImportError:  # pragma: no cover - numba's helper moved: fall through to the temporary directory
        pass
    user = os.environ.get("USER") or os.environ.get("USERNAME") or str(getattr(os, "getuid", lambda: "")())
    fallback = os.path.join(tempfile.gettempdir(), f"hdp_plugin-numba-cache-{user}")
    return fallback if _writable_dir(fallback) else ""


def _setup_numba() -> None:
    """Decide the cache policy and announce compilations: done on the first use of
    ``NJIT_OPTIONS`` (by a kernel module, which imports numba anyway), so that importing this
    module touches neither numba nor the disk."""
    cache = os.environ.get("HDP_NUMBA_CACHE", "1") != "0"
    if cache:
        cache_dir = _numba_cache_dir()
        if cache_dir == "":  # nowhere to write: compile in memory, in every process
            cache = False
        elif cache_dir:
            os.environ["NUMBA_CACHE_DIR"] = cache_dir
            import numba

            numba.config.CACHE_DIR = cache_dir
    if cache:
        from . import kernel_cache

        kernel_cache.install()
    from .compile_notice import install

    install()
    globals()["NUMBA_CACHE"] = cache
    globals()["NJIT_OPTIONS"] = {"cache": cache, "nogil": True}


def __getattr__(name: str):
    # NUMBA_CACHE: cache compiled kernels on disk (safe: kernels are pure functions of their
    # arguments; HDP_NUMBA_CACHE=0 turns it off). NJIT_OPTIONS: options shared by every @njit
    # kernel; never scatter fastmath literals in the code.
    if name in ("NUMBA_CACHE", "NJIT_OPTIONS"):
        _setup_numba()
        return globals()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
