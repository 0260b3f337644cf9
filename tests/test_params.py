"""One parameter specification (hdp_plugin/params.py), and every face agreeing with it.

A parameter added to the specification but not to a face, or a face whose default, flag or domain
drifts from it, fails here (Java's side: java_bridge's ParametersSpecTest, on the exported JSON).
"""

from __future__ import annotations

import inspect
import json
from pathlib import Path

import pytest
import typer.main

from hdp_plugin import BayesNetClassifier, config, params
from hdp_plugin.daemon import protocol as P
from hdp_plugin.errors import ParameterError
from hdp_plugin.model import modelfile

ROOT = Path(__file__).resolve().parents[1]


def test_the_classifier_has_exactly_the_specified_parameters_and_defaults():
    sig = inspect.signature(BayesNetClassifier.__init__).parameters
    assert [n for n in sig if n != "self"] == list(params.NAMES)
    for p in params.PARAMETERS:
        assert sig[p.name].default == p.default, p.name


def test_the_job_schema_is_the_specification():
    for p in params.PARAMETERS:
        if p.job is None:
            continue
        f = P.FIELDS[p.job]
        assert f.default == p.default_in_job and f.help == p.help, p.name
        assert tuple(f.choices or ()) == p.choices and f.minimum == p.minimum and f.maximum == p.maximum, p.name
    defaults = json.loads((ROOT / "tests" / "golden" / "spool" / "job-defaults.json").read_text())
    for p in params.PARAMETERS:
        if p.job:
            assert defaults[p.job] == p.default_in_job, p.job
    # every classifier parameter reaches the classifier from a job, except the daemon's threads
    job = P.validate_job({"protocol": 1})
    assert set(P.classifier_params(job)) == set(params.NAMES) - {"n_jobs"}


def _options(app, command: str) -> dict:
    click = typer.main.get_command(app)
    cmd = click.commands[command] if hasattr(click, "commands") else click
    return {p.name: p for p in cmd.params}


@pytest.mark.parametrize("command", ["train", "evaluate", "daemon submit"])
def test_command_line_options_are_the_specification(command):
    from hdp_plugin.cli import commands as cli, daemon as commands

    opts = _options(commands.app, "submit") if command == "daemon submit" else _options(cli.app, command)
    by_flags = {tuple(sorted(o.opts)): o for o in opts.values()}
    for p in params.PARAMETERS:
        if not p.cli or (command == "daemon submit" and p.name == "n_jobs"):
            continue  # the daemon chooses its threads
        o = by_flags.get(tuple(sorted(p.cli)))
        assert o is not None, f"{command} has no option {p.cli} for {p.name}"
        expected = p.default_in_job if command == "daemon submit" else (0 if p.name == "random_state" else p.default)
        if p.name == "iterations":  # None on the command line: "auto", which the help explains
            expected = "auto"
            assert ("converged, at most 100 for eskdb (an ensemble settles early: checked from 25; 25 when the "
                    "training rows average 100 or more per class)") in o.help, command
            assert "and 5000 otherwise" in o.help, command
        got = o.default
        assert str(got) == str(expected), (command, p.name, got, expected)
        assert o.help.startswith(p.cli_text or p.help), (command, p.name)  # cli_text: the help without Python values


def test_the_model_file_stores_specified_parameters():
    assert set(modelfile._INIT_PARAMS) <= set(params.NAMES)
    # n_members is stored for ensembles only; categorical_features and keep_columns not at all (their effect is
    # in the attributes, and in the columns left out), nor n_jobs (a setting of the run: the model does not
    # depend on it)
    assert set(params.NAMES) - set(modelfile._INIT_PARAMS) == {"n_members", "categorical_features", "keep_columns",
                                                               "n_jobs"}


def test_the_java_resource_is_up_to_date():
    path = ROOT / "java_bridge" / "src" / "test" / "resources" / "parameters.json"
    assert json.loads(path.read_text()) == json.loads(json.dumps(params.specification())), (
        "regenerate it: python -c \"from hdp_plugin.params import resolved_iterations, main; main()\" > " + str(path.relative_to(ROOT)))


@pytest.mark.parametrize("name, value", [
    ("structure", "bn"), ("k", -1), ("k", 65), ("k", 2.5), ("k", True), ("n_members", 0), ("n_members", 1001),
    ("estimator", "bayes"), ("iterations", 0), ("iterations", 10_000_001), ("burn_in", -1), ("tying", "paper"),
    ("m", -1.0), ("m", float("inf")), ("discretization", "mdlp"), ("random_state", -1), ("random_state", 2**63),
    ("random_state", "1"), ("n_jobs", 0), ("n_jobs", -2),
])
def test_every_face_refuses_what_the_specification_refuses(name, value):
    with pytest.raises(ParameterError, match=rf"^{name} must be .*; got {value!r}$"):
        params.check(name, value)
    with pytest.raises(ParameterError, match=rf"^{name} must be"):
        BayesNetClassifier(**{name: value})._validate_params()
    p = params.BY_NAME[name]
    if p.job:
        with pytest.raises(Exception, match=p.job):
            P.validate_job({"protocol": 1, p.job: value})


def test_the_domains_read_well():
    assert params.BY_NAME["k"].domain() == "an integer from 0 to 64"
    assert params.BY_NAME["iterations"].domain() == "an integer from 1 to 10,000,000"
    assert params.BY_NAME["random_state"].domain() == "an integer from 0 to 2^63 - 1"
    assert params.BY_NAME["m"].domain() == "a finite number >= 0"
    assert params.BY_NAME["tying"].domain() == "none, same-parent, level, single"


# ------------------------------------------------------------------------------------------
# iterations: None ("auto") is the structure's default
# ------------------------------------------------------------------------------------------
def test_auto_iterations_depend_on_the_structure():
    assert params.default("iterations") is None
    assert params.resolved_iterations("eskdb", None) == 100
    for structure in ("nb", "tan", "kdb", "skdb"):
        assert params.resolved_iterations(structure, None) == 5000
    assert params.resolved_iterations("eskdb", 300) == 300 and params.resolved_iterations("kdb", 300) == 300
    # dense data: an ensemble's trees run at most 25 once the rows average 100 or more per class present
    assert params.resolved_iterations("eskdb", None, [100, 0, 100]) == 25
    assert params.resolved_iterations("eskdb", None, [150, 49]) == 100
    assert params.resolved_iterations("eskdb", 300, [1000, 1000]) == 300
    assert params.resolved_iterations("kdb", None, [1000, 1000]) == 5000
    assert params.resolved_iterations("eskdb", None, [0, 0]) == 100
    assert BayesNetClassifier().get_params()["iterations"] is None  # as given; the fit resolves it


def test_burn_in_is_checked_against_the_resolved_iterations():
    with pytest.raises(ParameterError, match=r"^burn_in must .* got 100 with iterations=100 "
                                             r"\(iterations=None: the default for eskdb\)$"):
        BayesNetClassifier(structure="eskdb", burn_in=100)._validate_params()
    BayesNetClassifier(structure="kdb", burn_in=1000)._validate_params()
    BayesNetClassifier(structure="eskdb", iterations=2000, burn_in=1000)._validate_params()
    with pytest.raises(Exception, match=r"^job.json: burn_in must be below the iterations \(100, the default "
                                        r"for eskdb\), got 100$") as info:
        P.validate_job({"protocol": 1, "structure": "eskdb", "burn_in": 100})
    assert info.value.field == "burn_in"
    P.validate_job({"protocol": 1, "structure": "kdb", "burn_in": 1000})


@pytest.mark.parametrize("iterations", ["absent", None])
def test_a_job_without_iterations_gets_the_structures_default(iterations):
    for structure, expected in (("eskdb", 100), ("kdb", 5000), ("nb", 5000)):
        doc = {"protocol": 1, "structure": structure}
        if iterations != "absent":
            doc["iterations"] = iterations
        job = P.validate_job(doc)
        assert job["iterations"] is None  # the job as given: null is "auto"
        assert P.classifier_params(job)["iterations"] is None  # auto: at most the structure's default
        assert params.resolved_iterations(structure, None) == expected
    job = P.validate_job({"protocol": 1, "structure": "eskdb", "iterations": 70})
    assert P.classifier_params(job)["iterations"] == 70


@pytest.mark.parametrize("structure", ["nb", "kdb", "eskdb"])
def test_the_burn_in_rule_is_one_rule_on_every_face(structure):
    """burn-in below the iterations a fit runs at most (auto: the structure's default), checked by
    params.burn_in_over for the API, the command line and job.json alike."""
    from hdp_plugin.cli.options import configurations

    cap = params.resolved_iterations(structure, None)
    assert params.burn_in_over(structure, None, cap - 1) is None and params.burn_in_over(structure, None, None) is None
    assert params.burn_in_over(structure, None, cap) == cap and params.burn_in_over(structure, 10, 10) == 10
    options = dict(structure=structure, k="2", estimator="hdp", iterations="auto", tying="level", m=1.0, seed=0,
                   threads=None, discretization="mdl")
    for burn_in, ok in ((cap - 1, True), (cap, False)):
        faces = [lambda: params.check_all({"structure": structure, "burn_in": burn_in}),
                 lambda: configurations(burn_in=burn_in, **options),
                 lambda: P.validate_job({"protocol": 1, "structure": structure, "burn_in": burn_in})]
        for face in faces:
            if ok:
                face()
            else:
                with pytest.raises(Exception, match="burn"):
                    face()
    assert params.default_burn_in(5000) == 500 and params.default_burn_in(50_000) == config.BURN_IN_CAP
    assert params.BURN_IN_RULE in params.BY_NAME["burn_in"].help


@pytest.mark.parametrize("estimator", ["laplace", "m-estimate", "mle"])
def test_a_baseline_estimators_burn_in_is_set_aside_on_every_face(estimator):
    """No sampler runs, so no face refuses a burn-in past the iterations (the model records none)."""
    from hdp_plugin.cli.options import configurations

    assert params.burn_in_over("kdb", 10, 50, estimator) is None
    options = dict(structure="kdb", k="2", estimator=estimator, iterations="10", tying="level", m=1.0, seed=0,
                   threads=None, discretization="mdl")
    params.check_all({"structure": "kdb", "estimator": estimator, "iterations": 10, "burn_in": 50})
    BayesNetClassifier(structure="kdb", estimator=estimator, iterations=10, burn_in=50)._validate_params()
    configurations(burn_in=50, **options)
    P.validate_job({"protocol": 1, "structure": "kdb", "estimator": estimator, "iterations": 10, "burn_in": 50})
    with pytest.raises(ParameterError, match="burn_in"):  # HDP still refuses it
        params.check_all({"structure": "kdb", "estimator": "hdp", "iterations": 10, "burn_in": 50})
