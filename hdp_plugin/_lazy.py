"""Names of a module imported on first use (PEP 562), so that light commands stay light.

``hdp-bnc --help``, ``info`` and the daemon's client commands must not load numba (nor, where they
do not read data, pyarrow); the packages' ``__init__`` files therefore name what they export and
import it when it is first asked for::

    __getattr__, __dir__ = lazy_names(globals(), {"BayesNetClassifier": ".classifier"})
"""

from __future__ import annotations

import importlib


def lazy_names(namespace: dict, where: dict[str, str]):
    """``__getattr__`` and ``__dir__`` for the module whose globals are ``namespace``: name ``n`` of
    ``where`` is imported from module ``where[n]`` (relative to the module's package) when first
    used, and kept in the module, so that later uses cost nothing."""
    module, package = namespace["__name__"], namespace["__package__"]

    def __getattr__(name):
        if name in where:
            value = getattr(importlib.import_module(where[name], package), name)
            namespace[name] = value
            return value
        raise AttributeError(f"module {module!r} has no attribute {name!r}")

    def __dir__():
        return sorted(set(namespace) | set(namespace.get("__all__", ())))

    return __getattr__, __dir__
