"""Streaming training and prediction on partitioned Parquet larger than memory would like.

Run:  python benchmarks/bench_stream.py --rows 10000000 [--dir /tmp/hdp_stream] [--partition 1000000]
                                        [--k 5] [--iterations 1000] [--engine local|dask] [--workers 2]
      python benchmarks/bench_stream.py --rows 100000000 --dir /big/disk/hdp_stream   # about 2 GB of Parquet

Writes ``rows`` rows x 20 attributes (2-5 values, 3 classes) drawn from one known network
(benchmarks/synthetic.py: the network from seed 0, each partition's rows from its own seed) as
Parquet files of ``partition`` rows (kept and reused if already there), then, in a fresh process,
trains kDB-k at ``iterations`` iterations from the directory (hdp_plugin.data.open_batches) and
predicts every row batch by batch into a Parquet file, and reports the seconds and rows per second of
every pass, the sampler's seconds, prediction seconds and the process's peak RSS (getrusage), and
with ``--engine dask`` every worker's peak RSS after training.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def generate(rows: int, directory: Path, partition: int) -> float:
    import pyarrow.parquet as pq
    from synthetic import synthetic

    from hdp_plugin.data import to_arrow

    t0 = time.perf_counter()
    directory.mkdir(parents=True, exist_ok=True)
    done = directory / f"_complete_{rows}_{partition}"
    if done.exists():
        return 0.0
    for i, lo in enumerate(range(0, rows, partition)):
        n = min(partition, rows - lo)
        pq.write_table(to_arrow(synthetic(n, seed=0, rows_seed=i + 1)), directory / f"part-{i:05d}.parquet",
                       row_group_size=256 * 1024)
    done.write_text("")
    return time.perf_counter() - t0


def peak_rss_mb() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return r / 1024 if sys.platform != "darwin" else r / 2**20


def run(directory: Path, k: int, iterations: int, engine: str, workers: int | None) -> dict:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from hdp_plugin import BayesNetClassifier
    from hdp_plugin.data import open_batches
    from hdp_plugin.distributed import engine as use_engine

    src = open_batches(directory)
    out = {}
    t0 = time.perf_counter()
    with use_engine(engine, n_workers=workers) as eng:
        clf = BayesNetClassifier(structure="kdb", k=k, iterations=iterations, random_state=0).fit(src)
        out["fit_seconds"] = time.perf_counter() - t0
        client = getattr(eng, "client", None)
        if client is not None:  # the Dask workers' own peak RSS (the training runs there)
            out["worker_peak_rss_mb"] = sorted(client.run(peak_rss_mb).values())
    info = clf.fit_info_
    out.update(rows=info["rows"], passes=info["pass_seconds"], rows_per_second=info["rows_per_second"],
               sampler_seconds=info.get("sampler_seconds"), cells=sum(m.tables.n_cells for m in clf.members_))
    t0 = time.perf_counter()
    n = 0
    writer = None
    target = directory.parent / (directory.name + "-predictions.parquet")
    for table, y, proba in clf.predict_source(src):
        t = pa.table({f"p_{c}": proba[:, j] for j, c in enumerate(clf.classes_)})
        writer = writer or pq.ParquetWriter(str(target), t.schema)
        writer.write_table(t)
        n += t.num_rows
    writer.close()
    out["predict_seconds"] = time.perf_counter() - t0
    out["predict_rows_per_second"] = n / out["predict_seconds"]
    out["peak_rss_mb"] = peak_rss_mb()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--dir", type=Path, default=Path("/tmp/hdp_stream"))
    ap.add_argument("--partition", type=int, default=1_000_000)
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--iterations", type=int, default=1000)
    ap.add_argument("--engine", default="local")
    ap.add_argument("--workers", type=int, default=None)
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    directory = a.dir / f"rows-{a.rows}"
    if a.child:
        print(json.dumps(run(directory, a.k, a.iterations, a.engine, a.workers)))
        return
    gen = generate(a.rows, directory, a.partition)
    import subprocess

    cmd = [sys.executable, __file__, "--child", "--rows", str(a.rows), "--dir", str(a.dir), "--k", str(a.k),
           "--iterations", str(a.iterations), "--engine", a.engine]
    if a.workers:
        cmd += ["--workers", str(a.workers)]
    res = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True, env=os.environ).stdout)
    res["generate_seconds"] = gen
    print(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
