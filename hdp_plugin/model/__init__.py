"""The scikit-learn-style classifier and the versioned model file.

The names are loaded on first use (PEP 562): ``hdp_plugin.model.modelfile`` (what ``hdp-bnc info``
reads a model file with) does not load the classifier's numba kernels.
"""

from .._lazy import lazy_names

__all__ = ["BayesNetClassifier", "load_model", "save_model"]

_LAZY = {"BayesNetClassifier": ".classifier", "load_model": ".modelfile", "save_model": ".modelfile"}

__getattr__, __dir__ = lazy_names(globals(), _LAZY)
