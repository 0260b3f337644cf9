"""Structure learning: MI/CMI statistics, naive Bayes, TAN, kDB-k and selective kDB.

Arrays in (integer codes, class codes, cardinalities), a plain :class:`Structure` out::

    from hdp_plugin.structure import learn_structure
    s = learn_structure(X, y, cardinalities, n_classes, kind="kdb", k=5)

Modules: :mod:`.counts` (the one counting pass, MI, CMI), :mod:`.learners` (NB, TAN, kDB),
:mod:`.selective` (SkDB's selection passes), :mod:`.kernels` (the numba kernels),
:mod:`.learn` (the entry point).
"""

from .base import Structure
from .counts import (
    CountStatistics,
    conditional_mutual_information,
    count_statistics,
    mutual_information,
)
from .learn import learn_structure
from .learners import kdb, naive_bayes, tan
from .selective import selective_kdb

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
