"""hdp_plugin: Bayesian network classifiers with HDP parameter estimation (Petitjean et al. 2018)."""

from ._version import __version__

__all__ = ["__version__"]
