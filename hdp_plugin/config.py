"""Every default and tunable of hdp_plugin, in one place."""

from __future__ import annotations

import os

# --- numba compile policy -----------------------------------------------------------------
#: cache compiled kernels on disk (safe: kernels are pure functions of their arguments)
NUMBA_CACHE = os.environ.get("HDP_NUMBA_CACHE", "1") != "0"
#: options shared by every @njit kernel; never scatter fastmath literals in the code
NJIT_OPTIONS = {"cache": NUMBA_CACHE, "nogil": True}

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

# --- HDP sampler (docs/method.md section 4) ----------------------------------------
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
