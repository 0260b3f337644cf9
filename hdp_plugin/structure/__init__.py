"""Structure learning: MI/CMI statistics, naive Bayes, TAN, kDB-k and selective kDB.

Arrays in (integer codes, class codes, cardinalities), a plain :class:`Structure` out::

    from hdp_plugin.structure import learn_structure
    s = learn_structure(X, y, cardinalities, n_classes, kind="kdb", k=5)

Modules: :mod:`.counts` (the one counting pass, MI, CMI), :mod:`.learners` (NB, TAN, kDB),
:mod:`.selective` (SkDB's selection passes), :mod:`.learn` (the entry point); their numba kernels:
:mod:`.count_kernels` (counts, MI, CMI, kDB's parents), :mod:`.trie_kernels` (SkDB's context tries) and
:mod:`.loo_kernels` (SkDB's leave-one-out pass).
"""

from .._lazy import lazy_names
from .base import Structure

#: everything but :class:`Structure` is loaded on first use (PEP 562): the learners compile numba
#: kernels, which reading a model file (``hdp-bnc info``) does not need
_LAZY = {
    "CountStatistics": ".counts",
    "conditional_mutual_information": ".counts",
    "count_statistics": ".counts",
    "mutual_information": ".counts",
    "learn_structure": ".learn",
    "kdb": ".learners",
    "naive_bayes": ".learners",
    "tan": ".learners",
    "selective_kdb": ".selective",
}

__all__ = [
    "CountStatistics",
    "Structure",
    "conditional_mutual_information",
    "count_statistics",
    "kdb",
    "learn_structure",
    "mutual_information",
    "naive_bayes",
    "selective_kdb",
    "tan",
]

__getattr__, __dir__ = lazy_names(globals(), _LAZY)
