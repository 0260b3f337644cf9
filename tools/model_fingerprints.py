"""Fingerprints of the models every structure learns on Weka's data sets, to prove a change keeps them.

Fits each structure (NB, TAN, kDB-1..5, SkDB, ESKDB; HDP and m-estimates) with a fixed seed and
fixed iterations on every data set found, and records one SHA-256 per model: of its model document
(without the package version) and of every record batch's arrays. Run it before a change that must
not change any model, and again after with ``--compare``::

    python tools/model_fingerprints.py -o /tmp/before.json
    ... change the code ...
    python tools/model_fingerprints.py --compare /tmp/before.json

``--compare`` exits 1 and names every model whose fingerprint changed. The tool runs the hdp_plugin
of its own tree, so the "before" file can come from a worktree of the older commit
(``python /tmp/base/tools/model_fingerprints.py -o /tmp/before.json``). The fingerprints hold for one
machine and one set of library versions (bit identity); they are not golden files for other machines.
Data sets are looked for in tests/data and in Debian's weka examples (``--data-dir`` adds folders).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# the hdp_plugin of this tool's own tree, not whichever one is installed: run from a worktree of an
# older commit (``git worktree add /tmp/base HEAD``), it fingerprints that commit's models
sys.path.insert(0, str(ROOT))
DEBIAN_EXAMPLES = Path("/tmp/wekadeb/usr/share/doc/weka/examples")
DATASETS = ["weather.nominal", "weather.numeric", "contact-lenses", "labor", "iris", "iris.2D", "glass",
            "breast-cancer", "ionosphere", "vote", "diabetes", "soybean", "unbalanced", "credit-g",
            "segment-challenge", "supermarket"]
#: name -> BayesNetClassifier parameters (seeded, fixed iterations: the auto rule is fingerprinted by
#: the ESKDB-auto row)
CONFIGS = {
    "nb-hdp": dict(structure="nb", iterations=300),
    "tan-hdp": dict(structure="tan", iterations=300),
    **{f"kdb{k}-hdp": dict(structure="kdb", k=k, iterations=300) for k in range(1, 6)},
    "kdb3-mestimate": dict(structure="kdb", k=3, estimator="m-estimate"),
    "skdb-hdp": dict(structure="skdb", k=5, iterations=300),
    "eskdb-hdp": dict(structure="eskdb", n_members=5, iterations=200),
    "eskdb-auto": dict(structure="eskdb", n_members=3),
    "eskdb-mestimate": dict(structure="eskdb", estimator="m-estimate"),
}


def fingerprint(path: Path) -> str:
    """SHA-256 of a model file's model document (package version left out) and its arrays."""
    from hdp_plugin.model.modelfile import read_model_file

    doc, _training, batches = read_model_file(path)
    doc = {k: v for k, v in doc.items() if k != "package_version"}
    h = hashlib.sha256(json.dumps(doc, sort_keys=True).encode())
    for batch in batches:
        for name in sorted(batch):
            h.update(name.encode())
            h.update(str(batch[name].dtype).encode())
            h.update(batch[name].tobytes())
    return h.hexdigest()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-o", "--output", type=Path, help="Write the fingerprints to this JSON file.")
    ap.add_argument("--compare", type=Path, help="Compare with the fingerprints in this JSON file.")
    ap.add_argument("--datasets", default=",".join(DATASETS))
    ap.add_argument("--configs", default=",".join(CONFIGS))
    ap.add_argument("--data-dir", type=Path, action="append", default=[])
    args = ap.parse_args(argv)

    from hdp_plugin import BayesNetClassifier, read_dataset
    from hdp_plugin.model.modelfile import save_model

    dirs = args.data_dir + [ROOT / "tests" / "data", DEBIAN_EXAMPLES]
    result: dict[str, str] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for d in args.datasets.split(","):
            path = next((p / f"{d}.arff" for p in dirs if (p / f"{d}.arff").is_file()), None)
            if path is None:
                print(f"{d}: not found in {', '.join(map(str, dirs))}; skipped", file=sys.stderr)
                continue
            data = read_dataset(path)
            for c in args.configs.split(","):
                start = time.perf_counter()
                clf = BayesNetClassifier(random_state=0, n_jobs=1, **CONFIGS[c]).fit(data)
                model = Path(tmp) / f"{d}-{c}.hdpbnc"
                save_model(clf, model)
                result[f"{d}:{c}"] = fingerprint(model)
                print(f"{d}:{c} {result[f'{d}:{c}'][:16]} ({time.perf_counter() - start:.1f} s)", file=sys.stderr)
    if args.output:
        args.output.write_text(json.dumps(result, indent=1, sort_keys=True) + "\n")
    if args.compare:
        before = json.loads(args.compare.read_text())
        changed = sorted(k for k in result if k in before and before[k] != result[k])
        missing = sorted(set(before) - set(result))
        for k in changed:
            print(f"changed: {k}")
        for k in missing:
            print(f"not fitted now: {k}")
        print(f"{len(result) - len(changed)} of {len(result)} models unchanged"
              + (f"; {len(missing)} of the earlier run not fitted" if missing else ""))
        return 1 if changed else 0
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
