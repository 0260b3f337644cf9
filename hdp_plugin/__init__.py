"""hdp_plugin: Bayesian network classifiers with HDP parameter estimation (Petitjean et al. 2018).

Public API: :class:`BayesNetClassifier` (a scikit-learn-style classifier), :func:`read_dataset`
and the :class:`Dataset` type it returns, :func:`save_model` and :func:`load_model` for the
versioned model file.

They are imported on first use (PEP 562), so that ``hdp-bnc --help`` and the commands that do not
train or read data do not load numba and pyarrow.
"""

from ._lazy import lazy_names
from ._version import __version__

__all__ = ["BayesNetClassifier", "Dataset", "load_model", "read_dataset", "save_model", "__version__"]

_LAZY = {"Dataset": ".data", "read_dataset": ".data", "BayesNetClassifier": ".model", "load_model": ".model",
         "save_model": ".model"}

__getattr__, __dir__ = lazy_names(globals(), _LAZY)
