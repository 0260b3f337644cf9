"""Peer classifiers from PyPI, run on OUR discretised integer codes of each fold (and the gradient
boosting libraries on the raw fold).

Every peer of ``PYTHON_PEERS`` sees the same data: the training fold discretised by hdp_plugin's MDL Discretizer
(learnt on the training fold only), missing as its own code (``Attribute.missing_code``), and the
test fold transformed with the training fold's cut points. Each function returns the class
probabilities of the test rows in our class-code order (columns for classes a peer never saw in
training are zero).

``RAW_PEERS`` get the raw folds instead (``run_raw_peer``), numeric attributes as floats (NaN for
missing, each library's own missing-value branch) and nominal attributes in each library's native
categorical form, one thread, every other setting at the library's default:

* XGBoost: pandas categoricals, split natively (``enable_categorical=True``; missing is NaN);
* CatBoost: the nominal columns as integer codes named in ``cat_features`` (its target statistics);
  CatBoost takes no missing categorical value, so missing is its own category (code -1);
* LightGBM: pandas categoricals, which its ``categorical_feature="auto"`` takes as categorical
  (missing is NaN, LightGBM's own branch).

``fit_raw_peer`` fits one on a prepared training frame (``raw_frame``) and returns its predictor, so a
benchmark can time the fit alone (benchmarks/bench_default.py); ``run_raw_peer`` does both on Datasets.
"""

from __future__ import annotations

import importlib.util
import warnings

import numpy as np


def available(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


# method name -> module it needs
PYTHON_PEERS = {
    "sklearn CategoricalNB": "sklearn",
    "sklearn RF": "sklearn",
    "skbn AODE": "skbn",
    "skbn A2DE": "skbn",
    "pyAgrum TAN": "pyagrum",
    "XGBoost (bins)": "xgboost",
}
# method name -> module it needs; these get the raw (undiscretised) folds
RAW_PEERS = {
    "XGBoost (raw)": "xgboost",
    "CatBoost": "catboost",
    "LightGBM": "lightgbm",
}


def _expand(proba: np.ndarray, classes, n_classes: int) -> np.ndarray:
    """Columns of ``proba`` (in the order of integer labels ``classes``) into all ``n_classes``."""
    out = np.zeros((proba.shape[0], n_classes))
    out[:, np.asarray(classes, dtype=np.int64)] = proba
    return out


def run_peer(name: str, Xtr: np.ndarray, ytr: np.ndarray, Xte: np.ndarray, card: np.ndarray,
             n_classes: int, seed: int) -> np.ndarray:
    """Fit peer ``name`` on integer codes ``Xtr``/``ytr`` and return P(class | Xte) rows."""
    Xtr = Xtr.astype(np.int64)
    Xte = Xte.astype(np.int64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if name == "sklearn CategoricalNB":
            from sklearn.naive_bayes import CategoricalNB

            m = CategoricalNB(alpha=1.0, min_categories=card).fit(Xtr, ytr)
            return _expand(m.predict_proba(Xte), m.classes_, n_classes)
        if name == "sklearn RF":
            # ordinal codes: bins of a discretised numeric attribute keep their order; nominal codes
            # are in declaration order and missing is the last code
            from sklearn.ensemble import RandomForestClassifier

            m = RandomForestClassifier(n_estimators=100, random_state=seed, n_jobs=1).fit(Xtr, ytr)
            return _expand(m.predict_proba(Xte), m.classes_, n_classes)
        if name in ("skbn AODE", "skbn A2DE"):
            from skbn import AnDE

            m = AnDE(n_dependence=1 if name == "skbn AODE" else 2, alpha=1.0, n_jobs=1,
                     categorical_features=list(range(Xtr.shape[1]))).fit(Xtr, ytr)
            return _expand(m.predict_proba(Xte), m.classes_, n_classes)
        if name == "pyAgrum TAN":
            return _pyagrum_tan(Xtr, ytr, Xte, card, n_classes)
        if name == "XGBoost (bins)":
            # ordinal codes, as for sklearn RF
            return _xgboost(Xtr.astype(np.float64), ytr, Xte.astype(np.float64), n_classes, seed)
    raise ValueError(f"unknown peer {name!r}")


def run_raw_peer(name: str, train, test, n_classes: int, seed: int) -> np.ndarray:
    """Fit raw peer ``name`` on the raw training fold (a ``Dataset`` with numeric attributes
    undiscretised) and return P(class | test rows)."""
    predict = fit_raw_peer(name, raw_frame(name, train), train.y, n_classes, seed)
    return predict(raw_frame(name, test))


def raw_frame(name: str, data):
    """The input of raw peer ``name`` for a raw ``Dataset``: a pandas DataFrame (see the module's notes)."""
    if name not in RAW_PEERS:
        raise ValueError(f"unknown raw peer {name!r}")
    return _raw_frame(data, categorical=name != "CatBoost")


def fit_raw_peer(name: str, Xtr, ytr: np.ndarray, n_classes: int, seed: int):
    """Fit raw peer ``name`` on ``raw_frame(name, train)`` and labels ``ytr``; return the function that
    maps ``raw_frame(name, test)`` to P(class | test rows) in our class-code order."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if name == "XGBoost (raw)":
            from xgboost import XGBClassifier

            def make():
                return XGBClassifier(n_jobs=1, random_state=seed, enable_categorical=True)
        elif name == "CatBoost":
            from catboost import CatBoostClassifier

            cats = [c for c in Xtr.columns if Xtr[c].dtype.kind == "i"]

            def make():
                return CatBoostClassifier(thread_count=1, random_seed=seed, verbose=0, allow_writing_files=False,
                                          cat_features=cats)
        elif name == "LightGBM":
            from lightgbm import LGBMClassifier

            def make():
                return LGBMClassifier(n_jobs=1, random_state=seed, verbose=-1)
        else:
            raise ValueError(f"unknown raw peer {name!r}")
        return _fit_present(make, Xtr, ytr, n_classes)


def _fit_present(make, Xtr, ytr: np.ndarray, n_classes: int):
    """Fit ``make()`` on the classes present in training, renumbered 0..c-1 (as the boosting libraries
    require); a training fold with one class predicts it with probability 1. Returns the predictor."""
    present = np.unique(ytr)
    if len(present) == 1:
        def constant(Xte):
            out = np.zeros((len(Xte), n_classes))
            out[:, present[0]] = 1.0
            return out
        return constant
    model = make().fit(Xtr, np.searchsorted(present, ytr))
    columns = present[np.asarray(model.classes_, dtype=np.int64)]

    def predict(Xte):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return _expand(np.asarray(model.predict_proba(Xte), dtype=np.float64), columns, n_classes)
    return predict


def _raw_frame(data, categorical: bool = True):
    """A pandas DataFrame of a raw ``Dataset``: numeric attributes as float64 (NaN for missing),
    nominal attributes as categoricals over all their declared codes (NaN for missing), or with
    ``categorical=False`` as int64 codes with missing as its own code -1."""
    import pandas as pd

    num = data.numeric_columns()
    cols = {}
    for j, a in enumerate(data.attributes):
        if j in num:
            cols[f"a{j}"] = data.numeric[:, num[j]].astype(np.float64)
        else:
            codes = data.X[:, j].astype(np.int64)
            codes[codes == a.missing_code] = -1
            cols[f"a{j}"] = (pd.Categorical.from_codes(codes, categories=list(range(len(a.values))))
                             if categorical else codes)
    return pd.DataFrame(cols)


def _xgboost(Xtr, ytr, Xte, n_classes: int, seed: int) -> np.ndarray:
    """XGBClassifier at its defaults, one thread, on the classes present in training."""
    from xgboost import XGBClassifier

    return _fit_present(lambda: XGBClassifier(n_jobs=1, random_state=seed), Xtr, ytr, n_classes)(Xte)


def _pyagrum_tan(Xtr, ytr, Xte, card, n_classes) -> np.ndarray:
    """pyAgrum's BNClassifier(learningMethod="TAN") with its default prior.

    Every attribute is declared with all of its codes (``NoDiscretization`` with the full label
    set), so test values unseen in the training fold are legal; labels are strings ``v<code>``.
    """
    import pandas as pd
    import pyagrum.lib.discreteTypeProcessor as dtp
    import pyagrum.skbn as skb

    tp = dtp.DiscreteTypeProcessor()
    names = [f"a{j}" for j in range(Xtr.shape[1])]
    for j, nm in enumerate(names):
        tp.setDiscretizationParameters(nm, "NoDiscretization",
                                       "{" + "|".join(f"v{c}" for c in range(card[j])) + "}")
    width = len(str(n_classes))
    clf = skb.BNClassifier(learningMethod="TAN", type_processor=tp)
    df_tr = pd.DataFrame({nm: [f"v{c}" for c in Xtr[:, j]] for j, nm in enumerate(names)})
    df_te = pd.DataFrame({nm: [f"v{c}" for c in Xte[:, j]] for j, nm in enumerate(names)})
    clf.fit(df_tr, pd.Series([f"c{c:0{width}d}" for c in ytr], name="class"))
    proba = np.asarray(clf.predict_proba(df_te), dtype=np.float64)
    classes = [int(str(c)[1:]) for c in clf.classes_]
    return _expand(proba, classes, n_classes)
