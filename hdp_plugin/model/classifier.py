"""The scikit-learn-style Bayesian network classifier.

Pipeline of :meth:`BayesNetClassifier.fit`: input -> :class:`~hdp_plugin.data.Dataset` -> drop rows
with a missing class -> discretise numeric attributes -> learn the structure -> build the context
trees -> estimate their tables (HDP sampler or a baseline) -> probability tables.
"""

from __future__ import annotations

import inspect
import logging
import sys
import warnings

import numpy as np

from ..params import check_all, default, resolved_discretization, usable_k
from ..data import (
    Attribute,
    Dataset,
    check_trainable,
    conform,
    conform_table,
    features_from_table,
    from_arrays,
    from_arrow,
    from_pandas,
)
from ..data._columns import dataset_columns
from ..data.categorical import declare_categorical
from ..data.conform import empty_columns, warn_empty
from ..data.dataset import note_missing_class
from ..data.identifiers import check_class, identifier_columns, leave_out
from ..errors import DataError, EnsembleAttributeError, NotFittedError, ParameterError
from ..preprocess import apply_cut_points
from ..runtime.compile_notice import Stopwatch
from .ensemble import coding_attributes, model_proba, used_attributes
from .pipeline import FitPlan, fit_networks
from .rows import MemoryRows

log = logging.getLogger(__name__)

class _EstimatorBase:
    """scikit-learn's estimator conventions without importing scikit-learn.

    ``get_params``/``set_params`` read the keyword-only parameters of ``__init__``, so the
    classifier works with ``clone``, ``Pipeline``, ``GridSearchCV`` and ``cross_val_score``;
    ``__sklearn_tags__`` imports scikit-learn only when scikit-learn itself asks for the tags.
    Importing hdp_plugin stays fast and light (scikit-learn and SciPy are slow to import and large
    in memory), which matters for the command line and the daemon.
    """

    _estimator_type = "classifier"

    @classmethod
    def _get_param_names(cls) -> list[str]:
        sig = inspect.signature(cls.__init__)
        return sorted(p.name for p in sig.parameters.values() if p.name != "self"
                      and p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL))

    def get_params(self, deep: bool = True) -> dict:
        """Parameters of this estimator, by name."""
        return {name: getattr(self, name) for name in self._get_param_names()}

    def set_params(self, **params):
        """Set parameters by name; returns self."""
        valid = self._get_param_names()
        for key, value in params.items():
            if key not in valid:
                raise ParameterError(
                    f"Invalid parameter {key!r} for estimator {type(self).__name__}; "
                    f"valid parameters are: {', '.join(valid)}"
                )
            setattr(self, key, value)
        return self

    def __repr__(self) -> str:
        defaults = {p.name: p.default for p in inspect.signature(type(self).__init__).parameters.values()}
        changed = []
        for k, v in self.get_params().items():
            d = defaults.get(k, inspect.Parameter.empty)
            if not (v is d or (type(v) is type(d) and v == d)):
                changed.append(f"{k}={v!r}")
        return f"{type(self).__name__}({', '.join(changed)})"

    def __sklearn_tags__(self):
        from sklearn.utils import ClassifierTags, InputTags, Tags, TargetTags

        return Tags(
            estimator_type="classifier",
            target_tags=TargetTags(required=True),
            classifier_tags=ClassifierTags(),
            input_tags=InputTags(allow_nan=True, string=True, categorical=True),
            non_deterministic=getattr(self, "random_state", 0) is None,
        )


def _one_network(name: str, field: str) -> property:
    """A fitted attribute of a model of one network (``field`` of its one member; ``parents``: the
    parents by name): read-only, and on an ensemble an :class:`EnsembleAttributeError` saying to use
    ``members_[e]``."""

    def get(self):
        members = self.__dict__.get("members_")
        if members is None:
            raise _not_fitted(f"This {type(self).__name__} instance is not fitted yet; {name} is set by fit")
        if len(members) != 1:
            raise EnsembleAttributeError(
                f"{name} is an attribute of one network, and this model is an ensemble of {len(members)} "
                f"members: use members_[e].{'structure.named_parents(...)' if field == 'parents' else field} "
                f"for member e")
        if field == "parents":
            return members[0].structure.named_parents(self._kept_names_)
        return getattr(members[0], field)

    get.__name__ = name
    get.__doc__ = f"The {field} of a model of one network (an ensemble has ``members_[e].{field}``)."
    return property(get)


class BayesNetClassifier(_EstimatorBase):
    """Bayesian network classifier with HDP (or baseline) parameter estimation.

    Parameters
    ----------
    structure : {"nb", "tan", "kdb", "skdb", "eskdb"}, default="eskdb"
        Naive Bayes, tree-augmented naive Bayes, k-dependence Bayes, selective kDB (which
        chooses how many attributes to keep and k* <= k by leave-one-out RMSE), or ESKDB, an
        ensemble of ``n_members`` SkDB classifiers on sampled attribute orders and stochastic
        discretisations, averaged in probability (:mod:`hdp_plugin.model.ensemble`); with HDP
        tables its members' leave-one-out selection uses hierarchical m-estimates, which keep
        deeper contexts than the published flat ones (docs/method.md, "SkDB").
    k : int, default=5
        Maximum number of attribute parents for kDB, SkDB and ESKDB members (ignored by NB and
        TAN); at most the attributes less one are used (:attr:`k_used_`).
    n_members : int, default=20
        ESKDB's number of members, 1 to 1000 (ignored by the other structures).
    estimator : {"hdp", "m-estimate", "laplace", "mle"}, default="hdp"
        How the conditional probability tables are estimated.
    iterations : int or None, default=None
        Gibbs iterations of the HDP sampler. None ("auto") stops every context tree once its
        averaged tables have converged (checked against a run of half as many iterations,
        docs/method.md section 4): for ESKDB at 25 and 50, at most 100 iterations (an ensemble
        settles early), and 25 when the training rows average 100 or more per class; for the single
        networks at 500, 1000, 2000 and 4000, at most 5000. A number runs every tree that long (the
        paper's experiments use 50,000). ``get_params`` returns the argument as given (None); the most
        any tree ran is ``fit_info_["iterations"]`` (every tree's count in
        ``fit_info_["tree_iterations"]``) and is written to the model file.
    burn_in : int or None, default=None
        Iterations discarded before averaging, below the iterations used; None means
        min(1000, iterations // 10).
    tying : {"level", "none", "same-parent", "single"}, default="level"
        How HDP concentrations are shared between the nodes of a context tree.
    m : float, default=1.0
        The m of the m-estimate (``estimator="m-estimate"``; an ESKDB with such tables also selects
        its members with flat m-estimates of this m).
    discretization : {"auto", "mdl", "stochastic-mdl", "stochastic-gain", "equal-frequency", "equal-width", "none"}, default="auto"
        How numeric attributes become nominal; cut points are learnt on the training data.
        ``"auto"`` is ``"stochastic-gain"`` for ESKDB (each member draws its own cut points: in
        proportion to the information gain, splitting further while the drawn cut passes the MDL
        test, at least two per informative attribute, one fewer than the classes up to four) and
        ``"mdl"`` otherwise. ``"stochastic-mdl"`` draws them in proportion to the MDL margin, as the
        ESKDB of the method's authors does.
    categorical_features : None, "from_dtype", list of str, list of int or array-like of bool, default=None
        Attributes to read as nominal although their values are numbers (integer codes: 1 = red,
        2 = green, ...), in scikit-learn's forms: attribute names, attribute indices (positions among the
        attributes, the class not counted: the columns of ``X``), or a boolean mask with one entry per
        attribute. A declared column's distinct values in the training data, sorted numerically, are its
        values (labelled ``"1"``, ``"2"``, ...), as an ARFF attribute ``{1,2,...}`` would declare them, so
        the model is the one trained from such an ARFF file; at prediction 3, 3.0 and ``"3"`` all match
        ``"3"``, and a code never seen in training is treated as missing, as an unseen nominal value is.
        Text, boolean, ARFF nominal and dictionary columns (pandas categoricals, Arrow dictionaries) are
        nominal whatever this says; None and ``"from_dtype"`` (the column types decide) declare nothing
        more. A declared column with a non-integer value, or more than 10,000 distinct values, is an
        error naming it (:mod:`hdp_plugin.data.categorical`).
    keep_columns : None or list of str, default=None
        Attributes to keep although they look like row identifiers, which are otherwise left out of
        the model with a warning naming each (:mod:`hdp_plugin.data.identifiers`): a nominal (text)
        attribute with a different value on every row, or integers all different that fill at least
        half of their range, as row numbers do; only on 20 rows or more. The model records the
        columns left out (:attr:`left_out_`), and new data may still hold them.
    random_state : int, numpy Generator, SeedSequence or None, default=None
        Seed of everything random (sampler, stochastic cut points, ESKDB's orders): the same
        seed gives a bit-identical model whatever ``n_jobs`` is.
    n_jobs : int or None, default=None
        Threads for sampling trees in parallel; None or -1 uses all cores.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels, in the column order of :meth:`predict_proba`.
    members_ : list of Member
        The model's networks and their weights, which sum to one: one network of weight 1 for NB,
        TAN, kDB and SkDB, ESKDB's members of weight 1/n_members each. A member holds its seed, its
        attributes (numeric ones with its own cut points), its cardinalities, its structure and its
        tables; the model predicts the weighted mean of its members' class probabilities.
    structure_, tables_, cardinalities_, parents_ : one network's
        Of a model of one network, its :class:`Structure`, :class:`ProbabilityTables`,
        cardinalities, and ``{attribute name: [attribute parent names in branching order]}`` for the
        kept attributes; on an ensemble they raise an AttributeError that says to use
        ``members_[e]``.
    attributes_ : list of Attribute
        The attributes as the model reads new data (numeric ones with the first member's cut points).
    n_features_in_ : int
        The attributes of the training input, those left out included.
    k_used_ : int
        The k the fit used: ``k`` capped at the model's attributes less one for kDB, SkDB and ESKDB
        (an attribute's parents are other attributes), 0 for NB and 1 for TAN (0 with one attribute).
        kDB's network has at most this many parents per attribute (``structure_.k``); SkDB selects
        its k* up to it, as every ESKDB member does. Training with a ``k`` above it other than the
        default warns once.
    feature_names_in_ : ndarray of str
        Only when the training input had column names.
    left_out_ : list of str
        The attributes left out of the model as row identifiers (see ``keep_columns``).
    fit_info_ : dict
        Timings, sampler statistics and warnings of the last fit.
    discretization_ : str
        The discretisation used (``"auto"`` resolved).

    References
    ----------
    F. Petitjean, W. Buntine, G. I. Webb and N. Zaidi, "Accurate parameter estimation for Bayesian
    network classifiers using hierarchical Dirichlet processes", Machine Learning 107 (2018).
    M. Sahami, "Learning limited dependence Bayesian classifiers", KDD 1996.
    N. Friedman, D. Geiger and M. Goldszmidt, "Bayesian network classifiers", Machine Learning 29 (1997).
    A. Martinez, G. I. Webb, S. Chen and N. Zaidi, "Scalable learning of Bayesian network
    classifiers", JMLR 17 (2016).

    Examples
    --------
    >>> from hdp_plugin import BayesNetClassifier, read_dataset
    >>> data = read_dataset("examples/vote.arff")
    >>> clf = BayesNetClassifier(structure="kdb", k=2, iterations=500, random_state=0).fit(data)
    >>> clf.predict_proba(data)[:2].round(3)  # doctest: +SKIP
    """

    def __init__(
        self,
        *,
        structure: str = default("structure"),
        k: int = default("k"),
        n_members: int = default("n_members"),
        estimator: str = default("estimator"),
        iterations: int | None = default("iterations"),
        burn_in: int | None = default("burn_in"),
        tying: str = default("tying"),
        m: float = default("m"),
        discretization: str = default("discretization"),
        categorical_features=default("categorical_features"),
        keep_columns=default("keep_columns"),
        random_state=default("random_state"),
        n_jobs: int | None = default("n_jobs"),
    ):
        self.structure = structure
        self.k = k
        self.n_members = n_members
        self.estimator = estimator
        self.iterations = iterations
        self.burn_in = burn_in
        self.tying = tying
        self.m = m
        self.discretization = discretization
        self.categorical_features = categorical_features
        self.keep_columns = keep_columns
        self.random_state = random_state
        self.n_jobs = n_jobs

    # ------------------------------------------------------------------------------------------
    def _validate_params(self) -> None:
        """Every parameter in its domain (:mod:`hdp_plugin.params`), before any work."""
        check_all(self.get_params())

    def _to_dataset(self, X, y, class_attribute, *, fitting: bool) -> Dataset:
        """Turn any accepted input into a Dataset (for inputs with separate labels, without them)."""
        if isinstance(X, Dataset):
            if y is not None:
                raise ParameterError("y must be None when X is a Dataset (the class is inside it)")
            return X
        mod = type(X).__module__
        if mod.startswith("pyarrow") and y is None:
            return from_arrow(X, class_attribute=class_attribute)
        if mod.startswith("pandas") and y is None and fitting:
            return from_pandas(X, class_attribute=class_attribute)
        if mod.startswith(("pandas", "pyarrow")):  # attributes only; labels in y
            return features_from_table(X, source=f"<{type(X).__name__}>")
        if hasattr(X, "tocsr") or type(X).__name__.endswith(("_matrix", "_array")) and hasattr(X, "nnz"):
            raise TypeError(
                "sparse input is not supported: these classifiers need dense categorical data; "
                "convert it with X.toarray()"
            )
        arr = np.asarray(X)
        if arr.ndim == 1:
            raise DataError(
                "Expected a 2D array, got a 1D array instead. Reshape your data with "
                "array.reshape(-1, 1) for one feature or array.reshape(1, -1) for one sample"
            )
        if arr.ndim != 2:
            raise DataError(f"Expected a 2D array, got an array with {arr.ndim} dimensions")
        if arr.shape[0] == 0:
            raise DataError(f"Found array with 0 sample(s) (shape={arr.shape}) while a minimum of 1 is required.")
        if arr.shape[1] == 0:
            raise DataError(f"Found array with 0 feature(s) (shape={arr.shape}) while a minimum of 1 is required.")
        if fitting and y is None:
            raise DataError(
                f"{type(self).__name__} requires y to be passed, but the target y is None "
                "(or pass a Dataset, Table or DataFrame that holds the class column)"
            )
        if arr.dtype.kind in "fc" and np.isinf(arr).any():
            raise DataError("Input X contains infinity or a value too large; missing values must be NaN")
        if arr.dtype.kind == "c":
            raise DataError("Complex data not supported")
        names = None
        if not fitting:
            self._check_n_features(arr.shape[1])
            names = self._array_names_
        return from_arrays(arr, None, feature_names=names)

    def _check_n_features(self, n: int) -> None:
        if n != self.n_features_in_:
            raise DataError(
                f"X has {n} features, but {type(self).__name__} is expecting "
                f"{self.n_features_in_} features as input."
            )

    # ------------------------------------------------------------------------------------------
    def fit(self, X, y=None, *, class_attribute: str | None = None, progress=None):
        """Learn the structure and the probability tables.

        Parameters
        ----------
        X : Dataset, pyarrow.Table, pandas.DataFrame, BatchSource or array-like of shape (n_samples, n_features)
            Training data; a :class:`~hdp_plugin.data.stream.BatchSource` (:func:`hdp_plugin.data.open_batches`)
            is read batch by batch, in memory bounded by the model (the result is the in-memory fit's
            for data of up to its ``sample_rows`` rows; see :mod:`hdp_plugin.model.streaming`). A Dataset, Table or DataFrame without ``y`` carries its class column
            (``class_attribute``, default the last column). Numeric columns are discretised.
        y : array-like of shape (n_samples,), optional
            Class labels, when ``X`` holds only the attributes.
        class_attribute : str, optional
            Name of the class column of a Table or DataFrame given without ``y``.
        progress : callable(iterations_done, iterations) -> bool or None, optional
            Called by the HDP sampler between chunks of iterations; returning ``False`` stops the fit
            with :class:`~hdp_plugin.errors.Cancelled`.

        Returns
        -------
        self
        """
        started = Stopwatch()  # the fit's time, less what numba spends compiling on a first use
        self._validate_params()
        from ..data.stream import BatchSource

        from ..distributed import current_engine

        engine = current_engine()  # where this fit's passes and sampler run (hdp_plugin.distributed)
        if isinstance(X, BatchSource):
            return self._fit_source(X, y, started, engine, progress=progress)
        has_names = hasattr(X, "columns") or hasattr(X, "column_names")
        ds = self._to_dataset(X, y, class_attribute, fitting=True)
        if y is not None:
            y_arr = np.asarray(y)
            if y_arr.ndim == 2 and y_arr.shape[1] == 1:
                _warn_column_vector()
                y_arr = y_arr.ravel()
            if y_arr.ndim != 1:
                raise DataError(f"y must be one-dimensional, got shape {y_arr.shape}")
            if y_arr.shape[0] != ds.n_rows:
                raise DataError(f"X has {ds.n_rows} rows but y has {y_arr.shape[0]} labels")
            if y_arr.dtype.kind == "f" and np.isnan(y_arr).any():
                raise DataError("y contains NaN; drop the rows with a missing class first")
            if y_arr.dtype.kind == "f" and not np.all(y_arr == np.round(y_arr)):
                raise DataError(
                    "Unknown label type: continuous values in y; these classifiers need a nominal class"
                )
            classes, y_codes = np.unique(y_arr, return_inverse=True)
            ds = Dataset(
                attributes=ds.attributes,
                class_attribute=Attribute("class", tuple(str(c) for c in classes)),
                X=ds.X, y=y_codes.astype(np.int32), numeric=ds.numeric, relation=ds.relation,
                source=ds.source,
            )
            self.classes_ = classes
        ds = declare_categorical(ds, self.categorical_features)
        ds, dropped = ds.drop_missing_class()
        note_missing_class(dropped, ds.source)
        if ds.n_rows == 1:
            raise DataError(f"{ds.source}: n_samples=1; training needs rows of at least two classes")
        check_class(ds.class_attribute.name, int(np.unique(ds.y).size), ds.n_rows, ds.source)
        names_in = ds.names
        ds, left_warnings = self._leave_out_identifiers(ds)
        warn = check_trainable(ds, keep=self.keep_columns or ())
        if y is None:
            self.classes_ = np.asarray(ds.class_values, dtype=object)

        info = {"rows": ds.n_rows, "dropped_missing_class": dropped, "warnings": left_warnings + list(warn)}
        if self.structure != "eskdb" and self.n_members != default("n_members"):
            msg = (f"n_members={self.n_members!r} is ignored: it is the number of members of an ESKDB ensemble "
                   f"(structure='eskdb'), and structure is {self.structure!r}")
            warnings.warn(msg, UserWarning, stacklevel=2)
            info["warnings"].append(msg)
        plan = FitPlan.of(self, resolved_discretization(self.structure, self.discretization))
        members, more = fit_networks(MemoryRows(ds, self.n_jobs), plan, self.random_state, engine.sample, progress)
        for w in more.get("warnings", []):
            log.warning("%s: %s", ds.source, w)
        info["warnings"] += more.pop("warnings", [])
        info.update(more)
        self._adopt(members, info, plan, ds.class_attribute, names_in, started, kept=ds.names)
        if has_names:
            self.feature_names_in_ = np.asarray(names_in, dtype=object)
        elif hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        return self

    def _fit_source(self, source, y, started: Stopwatch, engine, progress=None):
        """:meth:`fit` on a :class:`~hdp_plugin.data.stream.BatchSource`, pass after pass over its
        batches (:mod:`hdp_plugin.model.streaming`)."""
        from .streaming import fit_source

        if y is not None:
            raise ParameterError("y must be None when X is a batch source (the class is inside it)")
        plan = FitPlan.of(self, resolved_discretization(self.structure, self.discretization))
        members, info, schema = fit_source(self, source, plan, engine, progress)
        self.classes_ = np.asarray(schema.class_attribute.values, dtype=object)
        self._adopt(members, info, plan, schema.class_attribute, schema.names, started)
        self.feature_names_in_ = np.asarray(schema.names, dtype=object)
        return self

    def _leave_out_identifiers(self, ds: Dataset) -> tuple[Dataset, list[str]]:
        """``ds`` without the attributes that identify its rows, unless ``keep_columns`` names them, and
        the warning that names each one left out (also emitted with :func:`warnings.warn`)."""
        from ..data.categorical import resolve_categorical

        resolve_categorical(self.keep_columns, ds.names, ds.source, class_name=ds.class_attribute.name,
                            label="keep_columns")  # every name kept is a column of the data
        left = identifier_columns(ds, self.keep_columns)
        out = []
        numeric = ds.numeric_columns()
        for j in left:
            name = ds.attributes[j].name
            why = "integers numbering the rows" if j in numeric else "a different value on every row"
            msg = (f"column {name!r} in {ds.source} looks like a row identifier ({why}) and is left out of the "
                   f"model; keep it with --keep-columns {name} (keep_columns=[{name!r}] in Python)")
            warnings.warn(msg, UserWarning, stacklevel=3)
            out.append(msg)
        return leave_out(ds, left), out

    def _adopt(self, members, info: dict, plan, class_attribute, names, started: Stopwatch, kept=None) -> None:
        """Take the fitted ``members`` (:func:`~hdp_plugin.model.pipeline.fit_networks`): an ensemble keeps
        them in ``members_``; a single network's are its ``structure_``, ``tables_`` and the rest (for an
        ensemble, member 0's). ``names`` are the input's attributes; ``kept``, when given, the ones the
        model kept (the others were left out as row identifiers)."""
        first = members[0]
        self.members_ = members
        self.discretization_ = plan.discretization
        self.attributes_ = list(first.attributes)
        self.class_attribute_ = class_attribute
        kept = names if kept is None else kept
        self.left_out_ = [n for n in names if n not in set(kept)]
        self.n_features_in_ = len(names)
        self.k_used_ = usable_k(self.structure, self.k, len(kept))
        self._kept_names_ = list(kept)
        self._array_names_ = names
        if plan.kind in ("kdb", "skdb") and self.k_used_ < self.k and self.k != default("k"):
            # a k asked for beyond the data is said once; the default k is capped without a word
            msg = (f"k={self.k} is more than {len(kept)} attributes allow: an attribute's parents are other "
                   f"attributes, so the model uses k={self.k_used_}")
            warnings.warn(msg, UserWarning, stacklevel=3)
            info.setdefault("warnings", []).append(msg)
        info["fit_seconds"] = started.elapsed()
        compiling = started.compiling()
        if compiling > 0:  # a first use: numba compiled kernels during the fit (not in fit_seconds)
            info["compile_seconds"] = compiling
        self.fit_info_ = info

    def predict_source(self, source):
        """P(class | x) of every batch of a :class:`~hdp_plugin.data.stream.BatchSource`, batch by
        batch: yields ``(table, y, proba)`` (the batch as read; its class codes, -1 where missing or
        absent; the probabilities, columns in :attr:`classes_` order)."""
        from .streaming import predict_source

        return predict_source(self, source)

    # ------------------------------------------------------------------------------------------
    structure_ = _one_network("structure_", "structure")
    tables_ = _one_network("tables_", "tables")
    cardinalities_ = _one_network("cardinalities_", "cardinalities")
    parents_ = _one_network("parents_", "parents")

    def _check_fitted(self) -> None:
        if "members_" not in self.__dict__:
            raise _not_fitted(
                f"This {type(self).__name__} instance is not fitted yet. Call 'fit' with appropriate "
                "arguments before using this estimator."
            )

    def _codes(self, X) -> list[np.ndarray]:
        """``X`` coded as each network of the model codes it (one for a single model; one per
        member for an ensemble, whose members have their own cut points)."""
        self._check_fitted()
        targets = coding_attributes(self)
        if type(X).__module__.startswith(("pandas", "pyarrow")):
            ds = conform_table(X, self.attributes_, self.class_attribute_, source=f"<{type(X).__name__}>",
                               used=used_attributes(self))
            return [apply_cut_points(ds, attrs).X for attrs in targets]
        ds = self._to_dataset(X, None, None, fitting=False)
        left = set(getattr(self, "left_out_", ()))
        if left:  # columns left out in training: matched by name, not by position, from here on
            ds = leave_out(ds, [j for j, a in enumerate(ds.attributes) if a.name in left])
        out, conformed = [], None
        used = used_attributes(self)
        for attrs in targets:
            if ds.is_categorical and [(a.name, a.values) for a in ds.attributes] == [(a.name, a.values) for a in attrs]:
                out.append(ds.X)  # already coded as this network codes it (e.g. its training data)
                continue
            if conformed is None:
                conformed = conform(ds, self.attributes_, self.class_attribute_, used=used)
            out.append(apply_cut_points(conformed, attrs).X)
        if conformed is None:  # data coded as the model codes it: the check conform makes
            warn_empty(empty_columns(dataset_columns(ds), used), ds.n_rows, ds.source)
        return out

    def predict_log_proba(self, X) -> np.ndarray:
        """Log of P(class | x) for every row (for ESKDB, of the mean of the members' P).

        Returns
        -------
        ndarray of shape (n_samples, n_classes), columns in :attr:`classes_` order.
        """
        return model_proba(self, self._codes(X), log=True)  # _codes checks that the model is fitted

    def predict_proba(self, X) -> np.ndarray:
        """P(class | x) for every row (for ESKDB, the mean of the members' P).

        Returns
        -------
        ndarray of shape (n_samples, n_classes), columns in :attr:`classes_` order; rows sum to 1.
        """
        return model_proba(self, self._codes(X))  # _codes checks that the model is fitted

    def predict(self, X) -> np.ndarray:
        """The most probable class of every row (the first one on ties)."""
        log_proba = self.predict_log_proba(X)
        return self.classes_[np.argmax(log_proba, axis=1)]

    def score(self, X, y=None, sample_weight=None) -> float:
        """Accuracy on ``X`` (a Dataset or Table carries its own labels when ``y`` is None)."""
        if y is None:
            ds = X if isinstance(X, Dataset) else self._to_dataset(X, None, None, fitting=True)
            ds = conform(ds, self.attributes_, self.class_attribute_, used=())  # predict_log_proba warns
            keep = ds.y >= 0
            pred = np.argmax(self.predict_log_proba(ds), axis=1)
            return float(np.mean(pred[keep] == ds.y[keep]))
        pred = self.predict(X)
        y = np.asarray(y)
        if sample_weight is None:
            return float(np.mean(pred == y))
        w = np.asarray(sample_weight, dtype=float)
        return float(np.sum(w * (pred == y)) / np.sum(w))


def _warn_column_vector() -> None:
    import warnings

    try:
        from sklearn.exceptions import DataConversionWarning as category
    except ImportError:  # pragma: no cover
        category = UserWarning
    warnings.warn(
        "A column-vector y was passed when a 1d array was expected. Please change the shape of y "
        "to (n_samples,), for example using ravel().", category, stacklevel=3)


_NOT_FITTED_CLASSES: dict = {}


def _not_fitted(message: str) -> NotFittedError:
    """The project's NotFittedError; also scikit-learn's when scikit-learn is in use."""
    if "sklearn" not in sys.modules:
        return NotFittedError(message)
    if "cls" not in _NOT_FITTED_CLASSES:
        from sklearn.exceptions import NotFittedError as sk_not_fitted

        _NOT_FITTED_CLASSES["cls"] = type("NotFittedError", (NotFittedError, sk_not_fitted), {})
    return _NOT_FITTED_CLASSES["cls"](message)
