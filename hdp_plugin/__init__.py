"""hdp_plugin: Bayesian network classifiers with HDP parameter estimation (Petitjean et al. 2018).

Public API: :class:`BayesNetClassifier` (a scikit-learn-style classifier), :func:`read_dataset`
and the :class:`Dataset` type it returns.
"""

from ._version import __version__
from .data import Dataset, read_dataset
from .model import BayesNetClassifier

__all__ = ["BayesNetClassifier", "Dataset", "read_dataset", "__version__"]
