"""The scikit-learn-style classifier and the versioned model file."""

from .classifier import BayesNetClassifier
from .modelfile import load_model, save_model

__all__ = ["BayesNetClassifier", "load_model", "save_model"]
