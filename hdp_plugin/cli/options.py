"""The training options that ``hdp-bnc train``, ``evaluate`` and ``daemon submit`` share, declared once.

Their flags, help texts and defaults come from the parameter specification (:mod:`hdp_plugin.params`);
every command reads them as text and turns them into classifier parameters with :func:`configurations`
(comma lists, ``auto`` iterations, the checks that name the option as typed), so the commands cannot
drift apart. Light: importing it touches neither numpy nor the model (``--help`` stays fast).
"""

from __future__ import annotations

import itertools
from typing import Annotated, Optional

import typer

from .. import config
from ..errors import ParameterError
from ..params import BURN_IN_RULE, BY_NAME as PARAM, burn_in_over, canonical_params, check, default as _default

ClassOpt = Annotated[
    Optional[str],
    typer.Option("--class", "-c", help="Name of the class attribute; by default the last attribute, as in Weka.",
                 show_default="the last attribute"),
]


def _listable(decls: tuple[str, ...], help: str, kind: str = "str"):
    """The same option twice: one value (train) and a comma list (evaluate).

    Both are read as text and checked by :func:`configurations` (so that ``train -k 1,2`` says that
    comma lists are for evaluate); ``kind`` is the type the help shows.
    """
    one = Annotated[str, typer.Option(*decls, help=help, metavar=f"<{kind}>")]
    many = Annotated[str, typer.Option(*decls, help=help + " A comma list compares several values.",
                                       metavar=f"<{kind},...>")]
    return one, many


def _spec_help(name: str) -> str:
    """A parameter's help text for the command line, from the one specification."""
    return PARAM[name].cli_help


def _flags(name: str) -> tuple[str, ...]:
    return PARAM[name].cli


StructureOpt, StructureList = _listable(_flags("structure"), _spec_help("structure"))
KOpt, KList = _listable(_flags("k"), _spec_help("k"), "int")
MembersOpt, MembersList = _listable(_flags("n_members"), _spec_help("n_members"), "int")
EstimatorOpt, EstimatorList = _listable(_flags("estimator"), _spec_help("estimator"))
IterationsOpt, IterationsList = _listable(_flags("iterations"), _spec_help("iterations") + " auto is that default.",
                                          "int|auto")
TyingOpt, TyingList = _listable(_flags("tying"), _spec_help("tying"))
DiscretizationOpt, DiscretizationList = _listable(_flags("discretization"), _spec_help("discretization"))
BurnInOpt = Annotated[Optional[int], typer.Option(*_flags("burn_in"), help=_spec_help("burn_in"),
                                                   show_default=BURN_IN_RULE)]
MOpt = Annotated[float, typer.Option(*_flags("m"), help=_spec_help("m") + " Used by --estimator m-estimate.")]
FormatOpt = Annotated[
    Optional[str],
    typer.Option("--format", help="Format of the data file when its name does not tell it: arff, arrow, parquet or csv.",
                 show_default="from the file name"),
]
SeparatorOpt = Annotated[
    Optional[str],
    typer.Option("--separator", metavar="<char>",
                 help="The separator of a CSV file's values: ',', ';', '|', tab or any one character. By default "
                      "it is told from the header and first lines (comma, semicolon, tab or |), and a file it "
                      "cannot be told of is refused.",
                 show_default="told from the file"),
]
DecimalOpt = Annotated[
    Optional[str],
    typer.Option("--decimal", metavar="<.|,>",
                 help="The decimal separator of a CSV file's numbers: '.' or ','. By default a ';'-separated file "
                      "whose text columns hold numbers like 14,23 reads them as numbers, and a column that mixes "
                      "them with other text is refused; '.' reads such columns as text.",
                 show_default="told from the file"),
]
ClassValuesOpt = Annotated[
    Optional[str],
    typer.Option("--class-values", metavar="<label,...>",
                 help="The class labels in this order, comma-separated (for CSV, Parquet and Feather files, whose "
                      "class labels are otherwise sorted); may add labels no row has.",
                 show_default="the labels as read"),
]
CategoricalOpt = Annotated[
    Optional[str],
    typer.Option(*_flags("categorical_features"), metavar="<name,...>",
                 help=_spec_help("categorical_features") + " A comma-separated list of attribute names.",
                 show_default="none (numbers are discretised)"),
]
KeepColumnsOpt = Annotated[
    Optional[str],
    typer.Option(*_flags("keep_columns"), metavar="<name,...>",
                 help=_spec_help("keep_columns") + " A comma-separated list of attribute names.",
                 show_default="none (identifiers are left out)"),
]
MaxInputOpt = Annotated[Optional[float], typer.Option(
    "--max-input-mb", metavar="MIB",
    help="Largest data file, in MiB, before and after decompression (gzip ARFF and CSV, compressed Arrow "
         f"buffers); training's working memory is bounded at {config.WORKING_MEMORY_FACTOR} times it. Larger "
         "data is refused.", show_default=str(config.DEFAULT_MAX_INPUT_BYTES >> 20))]
MaxCardinalityOpt = Annotated[Optional[int], typer.Option(
    "--max-cardinality", metavar="N",
    help="Most values a nominal attribute or the class may have (an ARFF header is checked as it is read).",
    show_default=str(config.DEFAULT_MAX_CARDINALITY))]


def separator_option(text: str | None) -> str | None:
    """``--separator``: the one character, or None when not given (``tab`` for a tab)."""
    from ..data._csv import separator_value

    return separator_value(text, "--separator")


def decimal_option(text: str | None) -> str | None:
    """``--decimal``: ``.`` or ``,``, or None when not given."""
    from ..data._csv import decimal_value

    return decimal_value(text, "--decimal")


def seed_option(more: str = ""):
    """``--seed``, its help followed by ``more`` (what else the command's seed does)."""
    return Annotated[int, typer.Option(*_flags("random_state"), help=_spec_help("random_state") + more)]


SeedOpt = seed_option()
FoldSeedOpt = seed_option(" It also draws the folds.")
ThreadsOpt = Annotated[Optional[int], typer.Option(*_flags("n_jobs"), help=_spec_help("n_jobs"), show_default="all cores")]


def split(option: str, text: str) -> list[str]:
    items = [s.strip() for s in str(text).split(",")]
    if not items or any(not s for s in items):
        raise ParameterError(f"{option} must be a value or a comma-separated list of values, got {text!r}")
    return list(dict.fromkeys(items))  # unique, in order


def choices(option: str, text: str, allowed) -> list[str]:
    items = [s.lower() for s in split(option, text)]
    for s in items:
        if s not in allowed:
            raise ParameterError(f"{option} must be one of {', '.join(allowed)}; got {s!r}")
    return items


def ints(option: str, text: str, minimum: int) -> list[int]:
    out = []
    for s in split(option, text):
        try:
            v = int(s)
        except ValueError:
            raise ParameterError(f"{option} must be an integer (or a comma list of integers), got {s!r}") from None
        if v < minimum:
            raise ParameterError(f"{option} must be >= {minimum}, got {v!r}")
        out.append(v)
    return out


def iterations_value(text: str) -> int | None:
    """One value of ``--iterations``: an integer, or auto (None: every tree stops once converged, at
    most the structure's default)."""
    text = text.strip()
    if text.lower() == "auto":
        return None
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise ParameterError(f"--iterations must be auto or an integer >= 1, got {text!r}")
    return check("iterations", value, label="--iterations")


def configurations(*, structure, k, estimator, iterations, burn_in, tying, m, seed, threads,
                    discretization, members=None) -> list[dict]:
    """Every distinct classifier configuration the (possibly comma-list) options describe.

    Options that do not matter for a configuration are not multiplied out: ``k`` for NB and TAN,
    ``--members`` for every structure but ESKDB, iterations, burn-in and tying for the baseline
    estimators. Values are checked against the parameter specification (:mod:`hdp_plugin.params`),
    the message naming the option as typed.
    """
    members = str(_default("n_members")) if members is None else members
    structures = choices("--structure", structure, PARAM["structure"].choices)
    ks = [check("k", v, label="-k") for v in ints("-k", k, 0)]
    n_members = [check("n_members", v, label="--members") for v in ints("--members", members, 1)]
    if "eskdb" not in structures and n_members != [_default("n_members")]:
        raise ParameterError("--members is the number of members of an ESKDB ensemble: use it with --structure eskdb")
    estimators = choices("--estimator", estimator, PARAM["estimator"].choices)
    its = [iterations_value(s) for s in split("--iterations", iterations)]
    tyings = choices("--tying", tying, PARAM["tying"].choices)
    discs = choices("--discretization", discretization, PARAM["discretization"].choices)
    check("burn_in", burn_in, label="--burn-in")
    if threads is not None and threads < 1:
        raise ParameterError(f"--threads must be >= 1, got {threads!r}")
    check("random_state", seed, label="--seed")
    check("m", m, label="-m")
    configs, seen = [], set()
    for st, kk, mem, est, it, ty, disc in itertools.product(structures, ks, n_members, estimators, its, tyings, discs):
        params = canonical_params(dict(
            structure=st, k=kk, n_members=mem, estimator=est, iterations=it, burn_in=burn_in, tying=ty, m=float(m),
            discretization=disc, random_state=seed, n_jobs=threads,
        ))
        cap = burn_in_over(st, params["iterations"], params["burn_in"])  # the baselines' burn-in is set aside
        if cap is not None:
            raise ParameterError(f"--burn-in must be below --iterations, got {burn_in!r} with {cap!r} "
                                 f"iterations" + (f" (the default for {st})" if it is None else ""))
        key = tuple(sorted(params.items()))
        if key not in seen:
            seen.add(key)
            configs.append(params)
    return configs


def one_configuration(command: str, **options) -> dict:
    """The one configuration of a command that trains one model (``train``, ``daemon submit``): its
    options as :func:`configurations` reads them, one value each."""
    configs = configurations(**options)
    if len(configs) != 1:
        raise ParameterError(f"{command} takes one value per option (comma lists are for evaluate)")
    return configs[0]
