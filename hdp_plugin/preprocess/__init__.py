"""Preprocessing: discretise numeric attributes; the cut points go into the model.

* :class:`Discretizer` -- fit on training data, transform any data with the same attributes;
* :func:`apply_cut_points` -- cut new data with the cut points stored in a model's attributes;
* :func:`mdl_cut_points`, :func:`equal_width_cut_points`, :func:`equal_frequency_cut_points` --
  the cut points of one attribute; :func:`assign_bins` -- the bin of each value;
* :func:`stochastic_cut_points` over :func:`sorted_numeric_columns` -- ESKDB's stochastic MDL
  (:mod:`hdp_plugin.preprocess.stochastic`), sorting once for all members of an ensemble.

Supervised MDL discretisation (Fayyad & Irani 1993) reproduces Weka 3.8's
``weka.filters.supervised.attribute.Discretize`` with its defaults, to the last bit; the golden
files in ``tests/golden/discretize`` (made by ``tools/weka/make_golden_discretize.sh``) check it.

References
----------
.. [1] U. M. Fayyad and K. B. Irani, "Multi-interval discretization of continuous-valued
   attributes for classification learning", Proc. 13th International Joint Conference on
   Artificial Intelligence (IJCAI), 1993, pp. 1022-1027.
"""

from .cutpoints import assign_bins, equal_frequency_cut_points, equal_width_cut_points, mdl_cut_points
from .discretizer import (
    Discretizer,
    apply_cut_points,
    discretized_attribute,
    sorted_numeric_columns,
    stochastic_cut_points,
)
from .labels import interval_labels, weka_number

__all__ = [
    "Discretizer",
    "apply_cut_points",
    "assign_bins",
    "discretized_attribute",
    "equal_frequency_cut_points",
    "equal_width_cut_points",
    "interval_labels",
    "mdl_cut_points",
    "sorted_numeric_columns",
    "stochastic_cut_points",
    "weka_number",
]
