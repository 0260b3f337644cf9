"""SkDB against the published implementation, on that implementation's own fold files.

``data/published_folds`` holds six data sets exactly as the published code's experiments prepared
them (Weka's MDL on the whole file, missing as a value ``MISSING``, rows shuffled and dealt into
two halves), and ``results.json`` that code's results per fold: fold f trains on the other half
and tests on half f. With m-estimates, our SkDB must select the same structure and so reproduce
its figures: pooled RMSE equal to 4 decimals, and the same selected attributes, parents and k*.
Soybean has exact MI ties, which the published code orders with an unstable sort and we by
attribute index: there only the pooled RMSE is compared, within 0.002.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from hdp_plugin import BayesNetClassifier, read_dataset

FOLDS = Path(__file__).parent / "data" / "published_folds"
RESULTS = json.loads((FOLDS / "results.json").read_text())


def published(ds, model="SKDB", k=5, est="m-estimate"):
    """The published code's two fold records, fold 0 first."""
    recs = sorted((r for r in RESULTS if (r["ds"], r["model"], r["k"], r["est"]) == (ds, model, k, est)),
                  key=lambda r: r["fold"])  # fmt: skip
    assert [r["fold"] for r in recs] == [0, 1]
    return recs


def parse_structure(text):
    """``'STRUCT ... : 3<-[] 2<-[3]'`` -> {3: (), 2: (3,)}: selected attributes and their parents."""
    body = text.split(":", 1)[1]
    return {int(a): tuple(int(p) for p in ps.split(",") if p) for a, ps in re.findall(r"(\d+)<-\[([\d,]*)\]", body)}


def fit_fold(ds, fold, **params):
    """(fitted classifier, test set) of one fold: train on the other half, test on this one."""
    train = read_dataset(FOLDS / ds / f"half{1 - fold}.arff.gz")
    test = read_dataset(FOLDS / ds / f"half{fold}.arff.gz")
    clf = BayesNetClassifier(discretization="none", **params).fit(train)
    return clf, test


def squared_error(clf, test):
    """Sum over rows and classes of squared error, divided by C (the published ``sse``)."""
    p = clf.predict_proba(test)
    onehot = np.zeros_like(p)
    onehot[np.arange(len(test.y)), test.y] = 1.0
    return float(((p - onehot) ** 2).sum() / p.shape[1])


@pytest.mark.parametrize("ds", ["vote", "segment-challenge", "breast-cancer", "credit-g", "diabetes", "soybean"])
def test_m_estimate_skdb_reproduces_the_published_selection_and_rmse(ds):
    recs = published(ds)
    sse = n = 0.0
    for fold, rec in enumerate(recs):
        clf, test = fit_fold(ds, fold, structure="skdb", k=5, estimator="m-estimate")
        sse += squared_error(clf, test)
        n += len(test.y)
        s = clf.structure_
        expected = parse_structure(rec["struct"][0])
        if ds != "soybean":
            ours = {a: s.parents[a] for a in s.kept}
            assert ours == expected, (ds, fold)
            assert len(s.kept) == int(re.search(r"nattr=(\d+)", rec["struct"][0]).group(1))
            assert s.k == int(re.search(r"maxparents=(\d+)", rec["struct"][0]).group(1))
    ours = np.sqrt(sse / n)
    theirs = np.sqrt(sum(r["sse"] for r in recs) / sum(r["n"] for r in recs))
    if ds == "soybean":
        assert abs(ours - theirs) < 0.002
    else:
        assert round(ours, 4) == round(theirs, 4), (ours, theirs)
