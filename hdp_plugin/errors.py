"""The project's one exception hierarchy.

Every error the library raises on purpose derives from :class:`HDPError`, so the CLI and the daemon
can turn it into one clear line (or a structured error file) without a traceback. The message of
each error names the file, line, attribute or option at fault. Two warning categories say what the
data did to a result without making it an error (the command line prints them as ``note:`` and
``warning:`` lines).
"""

from __future__ import annotations


class HDPError(Exception):
    """Base class of every error raised on purpose by hdp_plugin."""

    #: machine-readable code, used by the daemon's ``error.json``
    code = "internal_error"


class DataError(HDPError, ValueError):
    """Input data that cannot be used: missing, malformed or unsuitable files and tables."""

    code = "bad_data"


class TooLargeError(DataError):
    """Input beyond a resource limit: more values, decoded bytes or model cells than allowed."""

    code = "too_large"


class ParameterError(HDPError, ValueError):
    """An option or parameter with a value outside its domain."""

    code = "bad_parameter"


class NotFittedError(HDPError, AttributeError):
    """A model used for prediction before it was fitted."""

    code = "not_fitted"


class EnsembleAttributeError(HDPError, AttributeError):
    """A fitted attribute of one network (``structure_``, ``tables_``...) read on an ensemble, whose
    networks are ``members_``."""


class ModelFileError(HDPError):
    """A model file that is truncated, corrupted, foreign or of an unsupported version."""

    code = "bad_model_file"


class JobError(HDPError):
    """A daemon job whose description is invalid."""

    code = "bad_job"


class Cancelled(HDPError):
    """Raised when a progress callback asks a fit (the sampler) to stop."""

    code = "cancelled"


class DataNote(UserWarning):
    """A notice about the data that a result is made of, not a fault: rows with a missing class left
    out of training, say."""


class EmptyColumnWarning(UserWarning):
    """A column the model uses has no known value on any row of the data to predict (each missing, or a
    label never seen in training): every prediction is made without it."""
