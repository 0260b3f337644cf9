"""hdp_plugin: Bayesian network classifiers with HDP parameter estimation (Petitjean et al. 2018).

Public API: :class:`BayesNetClassifier` (a scikit-learn-style classifier), :func:`read_dataset`
and the :class:`Dataset` type it returns, :func:`save_model` and :func:`load_model` for the
versioned model file.
"""

from ._version import __version__
from .data import Dataset, read_dataset
from .model import BayesNetClassifier, load_model, save_model

__all__ = ["BayesNetClassifier", "Dataset", "load_model", "read_dataset", "save_model", "__version__"]
