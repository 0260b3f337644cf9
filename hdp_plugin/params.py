"""Every parameter of the classifier, once: name, type, default, domain, help, and its name on each face.

One specification serves all faces, so that they cannot drift apart:

* :class:`~hdp_plugin.model.BayesNetClassifier` validates its parameters with :func:`check`;
* the spool protocol's job schema (``hdp_plugin.daemon.protocol.JOB_SCHEMA``) takes the fields,
  defaults, domains and help texts of the parameters that have a ``job`` name;
* the command line (``hdp-bnc train/evaluate``, ``hdp-bnc daemon submit``) takes its flags, help
  texts and defaults from here;
* the model file stores the parameters named here;
* the Weka classifier's option letters and defaults are compared with
  ``java_bridge/src/test/resources/parameters.json``, written from this table by
  ``python -c "from hdp_plugin.params import main; main()" > java_bridge/src/test/resources/parameters.json``
  (tests/test_params.py checks that the file is up to date; ParametersSpecTest, that Java agrees).

Adding a parameter means one entry here plus the code that uses it; the tests fail until every
face knows it.
"""

from __future__ import annotations

import json
import math
import numbers
from dataclasses import dataclass

from . import config
from .errors import ParameterError


#: the default burn-in in words (:func:`default_burn_in`), as help texts give it
BURN_IN_RULE = f"min({config.BURN_IN_CAP}, iterations / {config.BURN_IN_DIVISOR})"


@dataclass(frozen=True)
class Param:
    """One parameter.

    ``kind`` is ``"choice"`` (a string among ``choices``), ``"int"``, ``"float"``, ``"seed"``
    (an integer seed, or a numpy Generator/SeedSequence in Python), ``"columns"`` (a choice of
    attributes, :mod:`hdp_plugin.data.categorical`) or ``"names"`` (a list of column names);
    ``nullable`` allows None.
    ``minimum``/``maximum`` bound numbers (inclusive). ``cli``, ``job`` and ``weka`` name the
    parameter on the command line, in job.json and in Weka (without the dash); None where the
    face does not have it. ``job_default``/``weka_default`` are where that face's default differs
    (a seed of 0 rather than None, Weka's -1 for "default burn-in"); ``cli_text`` is the command
    line's help where ``help`` speaks of Python values (None) that cannot be typed there.
    """

    name: str
    kind: str
    default: object
    help: str
    choices: tuple = ()
    minimum: float | None = None
    maximum: float | None = None
    nullable: bool = False
    cli: tuple[str, ...] = ()
    job: str | None = None
    weka: str | None = None
    job_default: object = ...
    weka_default: object = ...
    cli_text: str | None = None

    @property
    def default_in_job(self):
        return self.default if self.job_default is ... else self.job_default

    @property
    def default_in_weka(self):
        return self.default if self.weka_default is ... else self.weka_default

    @property
    def cli_help(self) -> str:
        """The help text of the parameter's command-line option (the choices spelt out)."""
        return (self.cli_text or self.help) + (f" One of: {self.domain()}." if self.kind == "choice" else "")

    def domain(self) -> str:
        """The allowed values in words, as error messages and help texts give them."""
        if self.kind == "choice":
            return ", ".join(self.choices)
        if self.kind == "columns":
            return "None, 'from_dtype', a list of attribute names, a list of attribute indices or a boolean mask"
        if self.kind == "names":
            return "None or a list of column names"
        lo = "" if self.minimum is None else f"{self.minimum:g}"
        hi = ("" if self.maximum is None else "2^63 - 1" if self.maximum == 2**63 - 1
              else f"{self.maximum:,}" if self.maximum >= 10**6 else f"{self.maximum:g}")
        what = {"int": "an integer", "float": "a finite number", "seed": "an integer"}[self.kind]
        if lo and hi:
            return f"{what} from {lo} to {hi}"
        return f"{what} >= {lo}" if lo else what


PARAMETERS: tuple[Param, ...] = (
    Param("structure", "choice", config.DEFAULT_STRUCTURE, choices=config.STRUCTURES,
          help="The network structure: naive Bayes, tree-augmented naive Bayes, k-dependence Bayes, selective "
               "kDB, or an ESKDB ensemble of selective kDBs (the default, the most accurate in the benchmarks; "
               "nb is the fastest).",
          cli=("--structure", "-s"), job="structure", weka="S"),
    Param("k", "int", config.DEFAULT_K, minimum=0, maximum=config.MAX_K,
          help="The largest number of attribute parents of kDB, SkDB and ESKDB members (ignored by nb and tan); "
               "at most the attributes less one are used.",
          cli=("-k", "--max-parents"), job="k", weka="K"),
    Param("n_members", "int", config.DEFAULT_MEMBERS, minimum=1, maximum=config.MAX_MEMBERS,
          help="The number of members of an ESKDB ensemble (only for eskdb).",
          cli=("--members",), job="n_members", weka="members"),
    Param("estimator", "choice", config.DEFAULT_ESTIMATOR, choices=config.ESTIMATORS,
          help="How the probability tables are estimated.",
          cli=("--estimator", "-e"), job="estimator", weka="E"),
    Param("iterations", "int", None, minimum=1, maximum=config.MAX_ITERATIONS, nullable=True,
          help=f"Gibbs iterations of the HDP sampler; by default (auto) each context tree until its averaged "
               f"tables have converged, at most {config.AUTO_ITERATIONS['eskdb']} for eskdb (an ensemble settles "
               f"early: checked from {config.AUTO_FIRST_CHECK['eskdb']}; {config.AUTO_DENSE_ITERATIONS['eskdb']} when the "
               f"training rows average {config.DENSE_ROWS_PER_CLASS} or more per class) and "
               f"{config.DEFAULT_ITERATIONS} otherwise "
               f"(the paper's experiments use 50000).",
          cli=("--iterations", "-i"), job="iterations", weka="I", weka_default=0),
    Param("burn_in", "int", None, minimum=0, nullable=True,
          help=f"Iterations discarded before averaging, below iterations; by default {BURN_IN_RULE}.",
          cli=("--burn-in",), job="burn_in", weka="B", weka_default=-1),
    Param("tying", "choice", config.DEFAULT_TYING, choices=config.TYINGS,
          help="How HDP concentrations are shared between the nodes of a context tree.",
          cli=("--tying",), job="tying", weka="L"),
    Param("m", "float", config.DEFAULT_M, minimum=0,
          help="The m of the m-estimate: the weight, in rows, of the prior that each table is smoothed towards.",
          cli=("-m", "--prior-weight"), job="m", weka="M"),
    Param("discretization", "choice", "auto", choices=("auto",) + config.DISCRETIZATIONS,
          help="How numeric attributes become nominal; auto is stochastic-gain for eskdb (cuts drawn by "
               "information gain, at least two per informative attribute, up to four with many classes) and "
               "mdl otherwise; stochastic-mdl is the ESKDB of the method's authors.",
          cli=("--discretization", "-d"), job="discretization", weka="discretization"),
    Param("categorical_features", "columns", None, nullable=True,
          help="Attributes to read as nominal although their values are numbers (integer codes such as "
               "1 = red, 2 = green): their distinct values, sorted numerically, are their values, instead of "
               "being discretised. Text, boolean, dictionary and ARFF nominal columns are nominal anyway.",
          cli=("--categorical",), job="categorical_features"),
    Param("keep_columns", "names", None, nullable=True,
          help="Columns to keep although they look like row identifiers (text with a different value on every "
               "row, or integers numbering the rows), which are otherwise left out of the model with a warning "
               "naming them.",
          cli=("--keep-columns",), job="keep_columns"),
    Param("random_state", "seed", None, minimum=0, maximum=2**63 - 1, nullable=True,
          help="The seed of everything random: the same seed gives the same model, whatever the threads.",
          cli=("--seed",), job="seed", weka="seed", job_default=0, weka_default=0),
    Param("n_jobs", "int", None, minimum=-1, nullable=True,
          help="Threads that sample trees in parallel; None or -1 uses all cores. The result does not depend on it.",
          cli_text="Threads that sample trees in parallel, at least 1; by default all cores. The result does not "
                   "depend on it.",
          cli=("--threads", "-t")),
)

BY_NAME: dict[str, Param] = {p.name: p for p in PARAMETERS}
NAMES: tuple[str, ...] = tuple(p.name for p in PARAMETERS)


def default(name: str):
    """The Python default of parameter ``name``."""
    return BY_NAME[name].default


def check(name: str, value, *, label: str | None = None):
    """``value`` if it is in parameter ``name``'s domain, else one-line :class:`ParameterError`.

    ``label`` names the parameter in the message as the face the user typed it on (``--members``);
    by default the Python name.
    """
    p = BY_NAME[name]
    label = label or name
    if value is None and p.nullable:
        return value
    if p.kind == "choice":
        if value not in p.choices:
            raise ParameterError(f"{label} must be one of {p.domain()}; got {value!r}")
        return value
    if p.kind == "columns":
        from .data.categorical import check_categorical

        check_categorical(value, label)
        return value
    if p.kind == "names":
        from .data.identifiers import check_keep_columns

        check_keep_columns(value, label)
        return value
    if p.kind == "seed":
        import numpy as np

        if isinstance(value, (np.random.Generator, np.random.SeedSequence)):
            return value
    ok = not isinstance(value, bool) and (
        isinstance(value, numbers.Integral) if p.kind in ("int", "seed") else
        isinstance(value, numbers.Real) and math.isfinite(value))
    if ok and p.minimum is not None and value < p.minimum:
        ok = False
    if ok and p.maximum is not None and value > p.maximum:
        ok = False
    if p.name == "n_jobs" and ok and value == 0:
        ok = False
    if not ok:
        extra = {"n_jobs": " (a positive number of threads, or -1)",
                 "random_state": ", a numpy Generator or SeedSequence"}.get(p.name, "")
        nothing = " or None" if p.nullable else ""
        raise ParameterError(f"{label} must be {p.domain()}{extra}{nothing}; got {value!r}")
    return value


def structure_name(structure: str, k: int, n_members: int | None = None) -> str:
    """The short name of a structure in messages and tables: ``NB``, ``TAN``, ``kDB-3``, ``SkDB-5``,
    ``ESKDB-5 x20``."""
    if structure in ("nb", "tan"):
        return structure.upper()
    name = {"kdb": "kDB", "skdb": "SkDB", "eskdb": "ESKDB"}[structure] + f"-{k}"
    return name + (f" x{n_members}" if structure == "eskdb" and n_members is not None else "")


def usable_k(structure: str, k: int, n_attributes: int) -> int:
    """The k a fit of ``structure`` uses on ``n_attributes`` attributes: the most attribute parents an
    attribute can have, ``k`` (0 for nb, 1 for tan) capped at ``n_attributes - 1``, since an attribute's
    parents are other attributes. kDB's network, SkDB's largest K and every ESKDB member's are this."""
    asked = 0 if structure == "nb" else 1 if structure == "tan" else int(k)
    return max(0, min(asked, int(n_attributes) - 1))


def k_capped_note(structure: str, k: int, n_attributes: int) -> str | None:
    """``"k=50 asked; 16 attributes allow at most 15"`` when ``k`` is more than :func:`usable_k` (kdb, skdb,
    eskdb), else None: what ``info`` and ``train`` say next to the structure's name."""
    if structure in ("nb", "tan") or int(k) <= usable_k(structure, k, n_attributes):
        return None
    n = int(n_attributes)
    return f"k={int(k)} asked; {n} attribute{'' if n == 1 else 's'} allow at most {max(0, n - 1)}"


def resolved_discretization(structure: str, discretization: str) -> str:
    """The discretisation a fit uses: ``"auto"`` is stochastic-gain for eskdb and mdl otherwise."""
    if discretization != "auto":
        return discretization
    return config.AUTO_DISCRETIZATION.get(structure, config.DEFAULT_DISCRETIZATION)


def resolved_iterations(structure: str, iterations: int | None, class_counts=None) -> int:
    """The most Gibbs iterations a fit runs: None ("auto", whose trees stop once converged) is at most
    100 for eskdb (config.AUTO_ITERATIONS) and 5000 (config.DEFAULT_ITERATIONS) otherwise; given the
    training rows' ``class_counts``, eskdb's is 25 (config.AUTO_DENSE_ITERATIONS) when they average at
    least 100 rows per class present (config.DENSE_ROWS_PER_CLASS)."""
    if iterations is not None:
        return int(iterations)
    if class_counts is not None and structure in config.AUTO_DENSE_ITERATIONS:
        counts = [int(c) for c in class_counts]
        present = sum(c > 0 for c in counts)
        if present and sum(counts) >= config.DENSE_ROWS_PER_CLASS * present:
            return config.AUTO_DENSE_ITERATIONS[structure]
    return config.AUTO_ITERATIONS.get(structure, config.DEFAULT_ITERATIONS)


def default_burn_in(iterations: int) -> int:
    """The burn-in of ``burn_in=None``: :data:`BURN_IN_RULE`, min(1000, iterations / 10), rounded down
    (docs/method.md section 4)."""
    return min(config.BURN_IN_CAP, iterations // config.BURN_IN_DIVISOR)


def burn_in_over(structure: str, iterations: int | None, burn_in: int | None, estimator: str = "hdp") -> int | None:
    """The rule that ties the burn-in to the iterations, for every face: a given ``burn_in`` must be below
    the iterations a fit runs at most (:func:`resolved_iterations`: for ``iterations=None`` the
    structure's default); a baseline ``estimator`` runs no sampler, so its burn-in is set aside
    (:func:`canonical_params`). The number it is not below, or None when ``burn_in`` is fine (or None); each
    face words its own message (naming ``--burn-in``, ``burn_in`` in job.json or the API's argument).
    The Weka classifier's checkOptions applies the same rule (ParametersSpecTest checks it against
    the exported :func:`specification`)."""
    if estimator != "hdp":
        return None
    cap = resolved_iterations(structure, iterations)
    return cap if burn_in is not None and burn_in >= cap else None


def convergence_first_check(structure: str) -> int:
    """The first iteration at which the stopping rule (:func:`sampler_tolerance`) may stop a tree of
    ``structure``: 25 for eskdb (config.AUTO_FIRST_CHECK), 500 (config.CONVERGENCE_FIRST_CHECK)
    otherwise; then every doubling below the cap (:func:`resolved_iterations`)."""
    return config.AUTO_FIRST_CHECK.get(structure, config.CONVERGENCE_FIRST_CHECK)


def sampler_tolerance(iterations: int | None) -> float | None:
    """The sampler's stopping tolerance: ``config.CONVERGENCE_TOLERANCE`` when iterations is None
    ("auto": every tree stops once its averaged tables have converged, at most the structure's
    default number of iterations), None (run them all) when a number is given."""
    return config.CONVERGENCE_TOLERANCE if iterations is None else None


def check_all(params: dict) -> None:
    """Every parameter in its domain, and the rules that tie two together (burn-in < iterations)."""
    for name in NAMES:
        if name in params:
            check(name, params[name])
    burn_in = params.get("burn_in")
    structure, given = params.get("structure", default("structure")), params.get("iterations", default("iterations"))
    iterations = burn_in_over(structure, given, burn_in, params.get("estimator", default("estimator")))
    if iterations is not None:
        auto = f" (iterations=None: the default for {structure})" if given is None else ""
        raise ParameterError(f"burn_in must be None or an integer in [0, iterations), got {burn_in!r} "
                             f"with iterations={iterations!r}{auto}")


def canonical_params(params: dict) -> dict:
    """Classifier parameters with the ones that do not matter set to their defaults (``k`` for NB
    and TAN; ``n_members`` for every structure but ESKDB; iterations, burn-in and tying for the
    baseline estimators). The model document stores its parameters through this
    (:func:`hdp_plugin.model.modelfile.model_document`), so that the API, ``hdp-bnc train``, the
    daemon and Weka write the same model document for the same model; ``hdp-bnc evaluate`` does not
    multiply out the options it sets aside. ``iterations=None`` ("auto") stays None: the sampler
    stops each tree once it has converged, and the model records the number it ran."""
    out = dict(params)
    structure, estimator = out.get("structure", default("structure")), out.get("estimator", default("estimator"))
    if structure in ("nb", "tan"):
        out["k"] = config.DEFAULT_K
    if "n_members" in out and structure != "eskdb":
        out["n_members"] = config.DEFAULT_MEMBERS
    if estimator != "hdp":
        out.update(iterations=config.DEFAULT_ITERATIONS, burn_in=None, tying=config.DEFAULT_TYING)
    return out


def specification() -> dict:
    """The table as plain JSON data, for the Java side's test resource; with the rules the Weka classifier
    applies itself: the most iterations of ``iterations=None`` per structure (Weka's -I 0), eskdb's on
    dense data (the option's description) and the default burn-in's cap and divisor."""
    return {"auto_iterations": {s: resolved_iterations(s, None) for s in config.STRUCTURES},
            "dense_iterations": {**config.AUTO_DENSE_ITERATIONS, "rows_per_class": config.DENSE_ROWS_PER_CLASS},
            "burn_in": {"cap": config.BURN_IN_CAP, "divisor": config.BURN_IN_DIVISOR},
            "parameters": [
        {"name": p.name, "kind": p.kind, "default": p.default, "choices": list(p.choices),
         "minimum": p.minimum, "maximum": p.maximum, "nullable": p.nullable, "cli": list(p.cli), "job": p.job,
         "job_default": p.default_in_job if p.job else None, "weka": p.weka,
         "weka_default": p.default_in_weka if p.weka else None}
        for p in PARAMETERS
    ]}


def main() -> None:
    """Print :func:`specification` as JSON (the Java tests' resource)."""
    print(json.dumps(specification(), indent=2))
