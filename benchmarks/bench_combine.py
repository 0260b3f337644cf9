"""How the default ensemble's members combine: the test scores of other pools of the same members.

Run:  python benchmarks/bench_combine.py [--repeats 5] [--datasets NAMES] [--seed-offset 1000]
                                          [--loo-m 3 [--rule-rows 400]] [--out FILE]
                                          [--mlbench-dir DIR] [--numdata-dir DIR] [--jobs 2]

On every fold of the accuracy benchmark's 5x2 cross-validation (``accuracy.fold_split``, random_state
``accuracy.seed_of(repeat, fold) + seed_offset``), it fits the default classifier once, one thread, and
scores its members' test class probabilities pooled several ways:

* ``mean``: the arithmetic mean of the members' probabilities (the model's own prediction);
* ``geo``: the normalised geometric mean (a log-linear pool with equal weights);
* ``geo-t``: the log-linear pool sharpened or flattened, ``softmax(t * mean log p_e)``, for each ``t``
  of ``--temperatures``;
* with ``--loo-m M``, pools chosen per fit from the training rows alone: each member's leave-one-out
  class posteriors of the training rows (hierarchical m-estimates with this M on its structure, the row's
  counts removed: :func:`member_loo_log_proba`) pooled every way above, and the pool with the least
  pooled leave-one-out log-loss (``loo-ll``) or RMSE (``loo-rmse``) applied to the test rows; ``rule``
  is ``loo-ll`` on at least ``--rule-rows`` training rows and ``mean`` below;
* ``best``: per data set, the better of ``mean`` and ``geo`` on test log-loss (an oracle: the most a
  choice between the two could reach).

It prints, per data set, each pool's mean test RMSE and log-loss over the folds, then what replacing
the mean by each other pool changes over the data sets: the mean differences, the mean ranks of the
two, and the data sets whose RMSE rises by more than 0.0005. With ``--out FILE`` it keeps every fold's
RMSE, log-loss and 0-1 loss per pool in FILE (JSON, one key per data set, repeat, fold and seed offset)
and reuses the folds already there.
"""

from __future__ import annotations

import argparse
import json
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import accuracy  # noqa: E402

#: the 30 sets' numeric ones, then the larger numeric sets of benchmarks/numdata.py
NUMERIC = ["glass", "ionosphere", "diabetes", "segment-challenge"] \
    + ["mlbench-" + s for s in ("Sonar", "Vowel", "Vehicle", "Satellite", "Shuttle", "LetterRecognition")] \
    + list(accuracy.NUMERIC_LARGE)


def member_log_proba(clf, X) -> np.ndarray:
    """``(n_members, n_rows, n_classes)``: every member's normalised test log-probabilities."""
    from hdp_plugin.hdp.tables import predict_log_proba

    codes = clf._codes(X)
    return np.stack([predict_log_proba(mb.tables, c) for mb, c in zip(clf.members_, codes)])


def member_loo_log_proba(member, X: np.ndarray, y: np.ndarray, n_classes: int, m: float) -> np.ndarray:
    """``(n_rows, n_classes)``: a member's leave-one-out class log-posteriors of its training rows, from
    hierarchical m-estimates on its structure (each context's estimate smoothed towards the shallower
    context's with weight ``m``, the class-only context towards the uniform), the row's own counts removed.
    A proxy for out-of-sample member probabilities: the HDP tables are not refitted without the row."""
    n, C = len(y), n_classes
    own = np.arange(C)[None, :] == y[:, None]  # the row's own class: its counts come off
    prior = np.bincount(y, minlength=C)[None, :] - own
    logj = np.log((prior + m / C) / (n - 1 + m))
    st = member.structure
    for a in st.kept:
        card = int(member.cardinalities[a])
        x = X[:, a].astype(np.int64)
        ctx = np.zeros(n, dtype=np.int64)
        p = np.full((n, C), 1.0 / card)
        for d in range(len(st.parents[a]) + 1):
            if d:
                _, ctx = np.unique(ctx * int(member.cardinalities[st.parents[a][d - 1]])
                                   + X[:, st.parents[a][d - 1]], return_inverse=True)
            n_ctx = int(ctx.max()) + 1
            kc = ctx * C + y  # (context, class) of each row, and with its value
            n_c = np.bincount(kc, minlength=n_ctx * C)
            ux, n_cx = np.unique(kc * card + x, return_counts=True)
            keys = (ctx[:, None] * C + np.arange(C)[None, :])
            want = keys * card + x[:, None]
            at = np.minimum(np.searchsorted(ux, want), len(ux) - 1)
            hit = ux[at] == want
            num = np.where(hit, n_cx[at], 0) - own
            p = (num + m * p) / (n_c[keys] - own + m)
        logj += np.log(p)
    return logj - np.logaddexp.reduce(logj, axis=1, keepdims=True)


def chosen(L_train: np.ndarray, y: np.ndarray, test: dict, temperatures) -> dict:
    """The pool of ``test`` (the test rows' pools) each criterion picks on the training rows' leave-one-out
    member probabilities: ``loo-ll`` by pooled log-loss, ``loo-rmse`` by pooled RMSE."""
    scores = {k: accuracy.metrics(p, y, 0.0, 0.0) for k, p in pools(L_train, temperatures).items()}
    return {"loo-ll": test[min(scores, key=lambda k: scores[k]["log_loss"])],
            "loo-rmse": test[min(scores, key=lambda k: scores[k]["rmse"])]}


def pools(L: np.ndarray, temperatures) -> dict:
    def softmax(z):
        z = z - z.max(axis=1, keepdims=True)
        e = np.exp(z)
        return e / e.sum(axis=1, keepdims=True)

    out = {"mean": np.exp(L).mean(axis=0)}
    g = L.mean(axis=0)
    out["geo"] = softmax(g)
    for t in temperatures:
        out[f"geo-{t:g}"] = softmax(t * g)
    return out


def run_fold(name: str, path: Path, repeat: int, fold: int, offset: int, temperatures, loo_m: float,
             rule_rows: int) -> dict:
    from hdp_plugin import BayesNetClassifier

    train, test = accuracy.fold_split(path, repeat, fold)
    clf = BayesNetClassifier(random_state=accuracy.seed_of(repeat, fold) + offset, n_jobs=1).fit(train)
    L = member_log_proba(clf, test)
    found = pools(L, temperatures)
    if loo_m > 0:
        keep = train.y >= 0
        y = train.y[keep].astype(np.int64)
        L_train = np.stack([member_loo_log_proba(mb, c[keep], y, L.shape[2], loo_m)
                            for mb, c in zip(clf.members_, clf._codes(train))])
        found.update(chosen(L_train, y, found, temperatures))
        # the size rule: the pool chosen by leave-one-out log-loss from rule_rows training rows, else the mean
        found["rule"] = found["loo-ll"] if len(y) >= rule_rows else found["mean"]
    out = {}
    for pool, p in found.items():
        m = accuracy.metrics(p, test.y, 0.0, 0.0)
        out[pool] = (m["rmse"], m["log_loss"], m["zero_one"])
    return out


def by_set(record: dict) -> dict:
    """``{data set: {pool: [RMSE, log-loss, 0-1] means over its folds}}`` of ``record``'s folds."""
    folds: dict = {}
    for key, fold in record.items():
        folds.setdefault(key.split("|")[0], []).append(fold)
    return {name: {p: np.mean([f[p] for f in fs], axis=0) for p in fs[0]} for name, fs in sorted(folds.items())}


def margins(means: dict, base: str, new: str) -> str:
    """What replacing pool ``base`` by pool ``new`` changes, over the data sets of ``means`` (:func:`by_set`)."""
    lines, diffs, worse = [], [], []
    for name, m in means.items():
        b, n = m[base], m[new]
        diffs.append(n - b)
        if n[0] - b[0] > 0.0005:
            worse.append(f"{name} RMSE {b[0]:.4f} -> {n[0]:.4f}")
    d = np.mean(diffs, axis=0)
    # a rank of two: 1 for the lower mean loss, 2 for the higher, 1.5 each on a tie
    ranks = np.where(np.array(diffs) < 0, 1.0, np.where(np.array(diffs) > 0, 2.0, 1.5))
    lines.append(f"**{new}**: {len(means)} data sets; {new} minus {base}, mean over the sets: RMSE {d[0]:+.4f}, "
                 f"log-loss {d[1]:+.4f}, 0-1 {d[2]:+.4f}")
    lines.append(f"mean rank of {new} against {base} (1 better, 2 worse): RMSE {ranks[:, 0].mean():.2f}, "
                 f"log-loss {ranks[:, 1].mean():.2f}, 0-1 {ranks[:, 2].mean():.2f}")
    lines.append("RMSE up by more than 0.0005: " + ("; ".join(worse) if worse else "none"))
    return "\n".join(lines)


def oracle(means: dict, candidates: list[str]) -> str:
    """What the best of ``candidates`` per data set by its own test log-loss (an oracle, not a rule) changes."""
    d = np.mean([m[min(candidates, key=lambda p: m[p][1])] - m["mean"] for m in means.values()], axis=0)
    return (f"the best of these pools per data set by test log-loss (an oracle), minus mean: RMSE {d[0]:+.4f}, "
            f"log-loss {d[1]:+.4f}, 0-1 {d[2]:+.4f}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--datasets", default=",".join(NUMERIC))
    ap.add_argument("--seed-offset", type=int, default=1000,
                    help="Added to every fold's random_state: a study chooses on seeds other than the tables'.")
    ap.add_argument("--temperatures", default="0.5,0.75,1.5")
    ap.add_argument("--mlbench-dir", type=Path)
    ap.add_argument("--numdata-dir", type=Path, action="append")
    ap.add_argument("--jobs", type=int, default=2, help="Folds fitted at once (one thread each).")
    ap.add_argument("--loo-m", type=float, default=0.0,
                    help="If above 0, also score the pools chosen on the training rows' leave-one-out member "
                         "probabilities (hierarchical m-estimates with this m): loo-ll and loo-rmse.")
    ap.add_argument("--rule-rows", type=int, default=400,
                    help="With --loo-m: the pool 'rule' is loo-ll on at least this many training rows, else the mean.")
    ap.add_argument("--out", type=Path, help="JSON file of every fold's scores, read and extended.")
    args = ap.parse_args(argv)
    record = json.loads(args.out.read_text()) if args.out and args.out.exists() else {}
    temps = [float(t) for t in args.temperatures.split(",") if t]
    dirs = [accuracy.ROOT / "tests" / "data", accuracy.DEBIAN_EXAMPLES]
    names = [d for d in args.datasets.split(",") if d]
    fixed = ["mean", "geo"] + [f"geo-{t:g}" for t in temps]
    chosen_ = ["loo-ll", "loo-rmse", "rule"] if args.loo_m > 0 else []
    heads = fixed + chosen_ + ["best"]
    wanted = [h for h in heads if h != "best"]
    print(f"Test RMSE / log-loss, means over the folds ({args.repeats}x2 cross-validation, random_state + "
          f"{args.seed_offset}):\n", flush=True)
    print("| data set | " + " | ".join(heads) + " |\n|---|" + "---|" * len(heads), flush=True)
    with ProcessPoolExecutor(args.jobs) as pool:
        for name in names:
            path, why = accuracy.find_dataset(name, dirs, args.mlbench_dir, HERE / ".cache", args.numdata_dir)
            if path is None:
                print(f"skipped {name}: {why}", file=sys.stderr)
                continue
            keys = [f"{name}|{r}|{f}|{args.seed_offset}" for r in range(args.repeats) for f in range(2)]
            futures = {k: pool.submit(run_fold, name, path, int(k.split("|")[1]), int(k.split("|")[2]),
                                      args.seed_offset, temps, args.loo_m, args.rule_rows)
                       for k in keys if k not in record or not set(wanted) <= set(record[k])}
            for k, fu in futures.items():
                record[k] = fu.result()
            if args.out and futures:
                accuracy.save(args.out, record)
            folds = [record[k] for k in keys]
            mean = {k: np.mean([f[k] for f in folds], axis=0)[:2] for k in folds[0]}
            best = min(("mean", "geo"), key=lambda k: mean[k][1])
            mean["best"] = mean[best]
            cells = [f"{mean[k][0]:.4f} / {mean[k][1]:.4f}" for k in heads]
            print(f"| {name} | " + " | ".join(cells) + " |", flush=True)
    ran = by_set({k: v for k, v in record.items()
                  if k.split("|")[0] in names and k.endswith(f"|{args.seed_offset}")})
    if ran:
        for new in fixed[1:] + chosen_:
            print("\n" + margins(ran, "mean", new).replace("\n", "  \n"))
        print("\n" + oracle(ran, fixed))
    return 0


if __name__ == "__main__":
    sys.exit(main())
