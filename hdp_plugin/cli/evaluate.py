"""``hdp-bnc evaluate``: cross-validate one or more configurations and print their RMSE, 0-1 loss,
log-loss and times as a table, JSON or CSV."""

from __future__ import annotations

import csv
import io
import json
import logging
import math
import shutil
import sys
from pathlib import Path
from typing import Annotated, Optional

import typer

from ..errors import ParameterError
from ..params import default as _default, structure_name, usable_k
from .common import categorical_option, cli_errors as _errors
from .files import _fitting, _limits, _option_names, _read
from .options import (BurnInOpt, CategoricalOpt, ClassOpt, ClassValuesOpt, DecimalOpt, DiscretizationList,
                      EstimatorList, FoldSeedOpt, FormatOpt, IterationsList, KeepColumnsOpt, KList, MaxCardinalityOpt,
                      MaxInputOpt, MembersList, MOpt, SeparatorOpt, StructureList, ThreadsOpt, TyingList,
                      configurations, decimal_option, separator_option)
from .progress import Quiet, Verbose, _describe, _fit_phase, _Out, _Phases, _print_warnings, _warnings_once

log = logging.getLogger(__name__)


def _parse_cv(cv: str | None, folds: int, repeats: int) -> tuple[int, int]:
    if cv is None:
        return repeats, folds
    parts = cv.lower().split("x")
    try:
        r, f = (int(p) for p in parts)
    except ValueError:
        raise ParameterError(f"--cv must look like 5x2 (repeats x folds), got {cv!r}") from None
    return r, f


def evaluate(
    data: Annotated[Path, typer.Argument(help="The data to cross-validate on: an ARFF, Arrow IPC/Feather, Parquet or CSV file.")],
    class_attribute: ClassOpt = None,
    structure: StructureList = _default("structure"),
    k: KList = str(_default("k")),
    members: MembersList = str(_default("n_members")),
    estimator: EstimatorList = _default("estimator"),
    iterations: IterationsList = "auto",
    burn_in: BurnInOpt = None,
    tying: TyingList = _default("tying"),
    m: MOpt = _default("m"),
    seed: FoldSeedOpt = 0,
    threads: ThreadsOpt = None,
    discretization: DiscretizationList = _default("discretization"),
    categorical: CategoricalOpt = None,
    keep_columns: KeepColumnsOpt = None,
    folds: Annotated[int, typer.Option("--folds", "-f", help="Number of stratified folds.")] = 2,
    repeats: Annotated[int, typer.Option("--repeats", "-r", help="How many times the folds are redrawn (seed, seed + 1, ...).")] = 1,
    cv: Annotated[
        Optional[str],
        typer.Option("--cv", help="Repeats x folds in one go, e.g. 5x2 for the paper's protocol; overrides --folds and --repeats.",
                     show_default="--repeats x --folds"),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the results as JSON instead of a table.")] = False,
    as_csv: Annotated[bool, typer.Option("--csv", help="Print the results as CSV instead of a table.")] = False,
    class_values: ClassValuesOpt = None,
    data_format: FormatOpt = None,
    separator: SeparatorOpt = None,
    decimal: DecimalOpt = None,
    max_input_mb: MaxInputOpt = None,
    max_cardinality: MaxCardinalityOpt = None,
    quiet: Quiet = False,
    verbose: Verbose = False,
) -> None:
    """Cross-validate one or more configurations on DATA; print RMSE, 0-1 loss, log-loss and times.

    Training options take comma lists, e.g. --structure nb,kdb -k 1,3 --estimator hdp,m-estimate;
    discretisation is learnt inside each training fold.
    """
    out = _Out(quiet, verbose)
    with _errors():
        from ..model import BayesNetClassifier
        from ..model.evaluation import cross_validate, warm_up

        if as_json and as_csv:
            raise ParameterError("--json and --csv cannot be used together")
        n_repeats, n_folds = _parse_cv(cv, folds, repeats)
        if n_folds < 2:
            raise ParameterError(f"--folds must be >= 2, got {n_folds!r}")
        if n_repeats < 1:
            raise ParameterError(f"--repeats must be >= 1, got {n_repeats!r}")
        configs = configurations(structure=structure, k=k, members=members, estimator=estimator, iterations=iterations,
                                 burn_in=burn_in, tying=tying, m=m, seed=seed, threads=threads,
                                 discretization=discretization)
        keep_columns = categorical_option(keep_columns, "--keep-columns")
        if keep_columns is not None:
            for params in configs:
                params["keep_columns"] = keep_columns
        limits = _limits(max_input_mb, max_cardinality)
        results = []
        warm_seconds = 0.0
        with out.progress() as bar, _warnings_once(hold_fit_logs=False) as caught:
            line = _Phases(bar)
            line.phase(f"reading {data}")
            ds = _read(data, class_attribute, data_format, class_values, categorical_option(categorical), limits,
                       configs, separator_option(separator), decimal_option(decimal))
            known = int((ds.y >= 0).sum())
            if n_folds > known:
                raise ParameterError(f"--folds {n_folds} is more than the {known} rows with a known class in {data}; "
                                     f"give at most {known} folds")
            total = len(configs) * n_folds * n_repeats
            overall = bar.add_task("cross-validation", total=total) if bar else None
            for params in configs:
                fits = [0]

                def make(params=params, fits=fits):
                    if bar is not None:
                        if fits[0]:
                            bar.advance(overall)
                        fits[0] += 1
                        bar.update(overall, description=f"{_describe(params)} fold {fits[0]}/{n_folds * n_repeats}")
                        line.phase(_fit_phase(params))
                    return BayesNetClassifier(**params)

                with _option_names(), _fitting(limits, ds, configs):
                    line.phase(f"{_describe(params)}: compiling or loading its kernels (not timed)")
                    warm_seconds += warm_up(lambda params=params: BayesNetClassifier(**params), ds, seed=seed)
                    res = cross_validate(make, ds, n_folds=n_folds, repeats=n_repeats, seed=seed,
                                         progress=line.sampling(params))
                if bar is not None:
                    bar.advance(overall)
                results.append((params, res))
                log.info("%s: RMSE %.4f", _describe(params), res.rmse)
        _print_warnings([], caught)
        _print_results(results, ds, n_folds, n_repeats, as_json, as_csv, warm_seconds)


_RESULT_COLUMNS = ("structure", "k", "n_members", "estimator", "iterations", "tying", "discretization",
                   "rmse", "zero_one_loss", "log_loss", "train_seconds", "test_seconds")


def _result_rows(results) -> list[dict]:
    rows = []
    for params, res in results:
        hdp = params["estimator"] == "hdp"
        rows.append({
            "structure": params["structure"],
            "k": params["k"] if params["structure"] in ("kdb", "skdb", "eskdb") else None,
            "n_members": params["n_members"] if params["structure"] == "eskdb" else None,
            "estimator": params["estimator"],
            "iterations": (params["iterations"] or "auto") if hdp else None,
            "tying": params["tying"] if hdp else None,
            "discretization": params["discretization"],
            "rmse": res.rmse, "zero_one_loss": res.zero_one, "log_loss": res.log_loss,
            "train_seconds": res.train_seconds, "test_seconds": res.test_seconds,
        })
    return rows


def _finite(obj):
    """JSON has no NaN or infinity: such floats become null."""
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_finite(v) for v in obj]
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj


def _best_line(names: list[str], rows: list[dict]) -> str:
    """The closing line of the table: which configuration has the lowest value of each metric."""
    if len(rows) < 2:
        return ""
    best: dict[str, list[str]] = {}
    for key, label in (("rmse", "RMSE"), ("zero_one_loss", "0-1 loss"), ("log_loss", "log-loss")):
        values = [r[key] for r in rows]
        finite = [v for v in values if math.isfinite(v)]
        if not finite:
            continue
        low = min(finite)
        winners = [i for i, v in enumerate(values) if v == low]
        if len(winners) > 1:  # a tie names nobody
            continue
        best.setdefault(names[winners[0]] + " " + rows[winners[0]]["estimator"], []).append(label)

    def words(metrics):
        return metrics[0] if len(metrics) == 1 else ", ".join(metrics[:-1]) + " and " + metrics[-1]

    return "; ".join(f"lowest {words(metrics)}: {name}" for name, metrics in best.items())


def _print_results(results, ds, n_folds: int, n_repeats: int, as_json: bool, as_csv: bool,
                   warm_seconds: float = 0.0) -> None:
    rows = _result_rows(results)
    if as_json:
        doc = {"data": str(ds.source), "rows": ds.n_rows, "folds": n_folds, "repeats": n_repeats,
               "untimed_warm_up_seconds": warm_seconds,
               "results": [_finite({**r, "per_fold": [dict(zip(("rmse", "zero_one_loss", "log_loss"), f))
                                                      for f in res.folds]})
                           for r, (_, res) in zip(rows, results)]}
        typer.echo(json.dumps(doc, indent=2))
        return
    if as_csv:
        buf = io.StringIO()
        w = csv.DictWriter(buf, fieldnames=_RESULT_COLUMNS, lineterminator="\n")
        w.writeheader()
        for r in rows:
            w.writerow({k: ("" if v is None else v) for k, v in r.items()})
        sys.stdout.write(buf.getvalue())
        return
    from rich.console import Console
    from rich.table import Table

    title = (f"{Path(str(ds.source)).name}: {ds.n_rows} rows, "
             + (f"{n_repeats}x{n_folds}" if n_repeats > 1 else f"{n_folds}-fold") + " cross-validation")
    table = Table(title=title)
    for name, justify in (("model", "left"), ("estimator", "left"), ("RMSE", "right"), ("0-1 loss", "right"),
                          ("log-loss", "right"), ("train s", "right"), ("test s", "right")):
        table.add_column(name, justify=justify)
    names = []
    for (params, _), r in zip(results, rows):
        est = r["estimator"] + (f" ({r['iterations']} it.)" if r["iterations"] else "")
        used = usable_k(params["structure"], params["k"], ds.n_attributes)  # the k used, and the one asked if more
        name = structure_name(params["structure"], used)
        name += f" (k={params['k']})" if params["structure"] not in ("nb", "tan") and used < params["k"] else ""
        names.append(name)
        table.add_row(name, est, f"{r['rmse']:.4f}", f"{r['zero_one_loss']:.4f}",
                      f"{r['log_loss']:.4f}", f"{r['train_seconds']:.2f}", f"{r['test_seconds']:.2f}")
    n_fits = n_folds * n_repeats
    table.caption = (f"Lower is better in every column. Times are summed over the {n_fits} folds "
                     f"(training: discretisation, structure and estimation); compiling or loading numba's kernels "
                     f"took {warm_seconds:.2f} s before the folds and is not counted.")
    console = Console(width=max(100, shutil.get_terminal_size().columns))
    console.print(table)
    best = _best_line(names, rows)
    if best:
        console.print(best[0].upper() + best[1:] + ".", highlight=False)

