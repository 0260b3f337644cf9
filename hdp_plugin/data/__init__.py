"""The data stage: every input format read into one :class:`Dataset` of integer codes.

Readers
    :func:`read_dataset` (ARFF, Arrow IPC/Feather, Parquet, CSV, by extension), :func:`from_arrow`,
    :func:`from_pandas`, :func:`from_arrays`.
New data on a trained model
    :func:`conform`, :func:`conform_table`, :func:`read_conformed`.
Checks before training
    :func:`check_trainable`.
"""

from .arff import read_arff
from .arrays import from_arrays
from .arrow import from_arrow, from_pandas, to_arrow
from .conform import check_trainable, conform
from .dataset import Attribute, Dataset, encode_codes, smallest_code_dtype
from .stream import BatchSource, open_batches
from .readers import FORMATS, conform_table, features_from_table, read_conformed, read_dataset

__all__ = [
    "Attribute",
    "BatchSource",
    "Dataset",
    "FORMATS",
    "check_trainable",
    "conform",
    "conform_table",
    "features_from_table",
    "encode_codes",
    "from_arrays",
    "from_arrow",
    "from_pandas",
    "open_batches",
    "read_arff",
    "read_conformed",
    "read_dataset",
    "smallest_code_dtype",
    "to_arrow",
]
