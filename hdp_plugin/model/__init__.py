"""The scikit-learn-style classifier (and, later, the versioned model file)."""

from .classifier import BayesNetClassifier

__all__ = ["BayesNetClassifier"]
