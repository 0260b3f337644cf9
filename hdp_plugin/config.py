"""Every default and tunable of hdp_plugin, in one place."""

from __future__ import annotations

import os
import tempfile

# --- numba compile policy -----------------------------------------------------------------


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
    here = os.path.dirname(os.path.abspath(__file__))
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
    module, as ``hdp-bnc --help`` does, touches neither numba nor the disk."""
    cache = os.environ.get("HDP_NUMBA_CACHE", "1") != "0"
    if cache:
        cache_dir = _numba_cache_dir()
        if cache_dir == "":  # nowhere to write: compile in memory, in every process
            cache = False
        elif cache_dir:
            os.environ["NUMBA_CACHE_DIR"] = cache_dir
            import numba

            numba.config.CACHE_DIR = cache_dir
    from ._compile_notice import install

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


# --- data ---------------------------------------------------------------------------------
#: an attribute whose distinct values exceed this fraction of the rows looks like an ID column
ID_COLUMN_FRACTION = 0.9
#: minimum number of rows before the ID-column warning is considered
ID_COLUMN_MIN_ROWS = 20
#: rows per block for streaming reductions (counting passes)
ROW_BLOCK = 65536

# --- discretisation -----------------------------------------------------------------------
DISCRETIZATIONS = ("mdl", "equal-frequency", "equal-width", "none")
DEFAULT_DISCRETIZATION = "mdl"
#: number of bins for the unsupervised binning methods (Weka's default is 10)
DEFAULT_BINS = 10

# --- structures ---------------------------------------------------------------------------
STRUCTURES = ("nb", "tan", "kdb", "skdb")
DEFAULT_STRUCTURE = "kdb"
DEFAULT_K = 5

# --- estimators ---------------------------------------------------------------------------
ESTIMATORS = ("hdp", "m-estimate", "laplace", "mle")
DEFAULT_ESTIMATOR = "hdp"
DEFAULT_M = 1.0

# --- HDP sampler (ALGORITHM.md section 4) -------------------------------------------------
DEFAULT_ITERATIONS = 5000
#: burn-in is min(BURN_IN_CAP, iterations // BURN_IN_DIVISOR) unless given
BURN_IN_CAP = 1000
BURN_IN_DIVISOR = 10
WINDOW = 10
INITIAL_CONCENTRATION = 2.0
ROOT_CONCENTRATION = 2.0
CONCENTRATION_SHAPE = 2.0
CONCENTRATION_RATE = 1.0
MAX_CONCENTRATION = 4000.0
#: concentrations are sampled at iterations where it % CONCENTRATION_EVERY == CONCENTRATION_OFFSET
CONCENTRATION_EVERY = 5
CONCENTRATION_OFFSET = 3
TYINGS = ("none", "same-parent", "level", "single")
DEFAULT_TYING = "level"

# --- model file ---------------------------------------------------------------------------
MODEL_FORMAT_MAJOR = 1
MODEL_FORMAT_MINOR = 0
