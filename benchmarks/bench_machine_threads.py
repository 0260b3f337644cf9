"""What two threads can give on this machine, with no shared data and no interpreter lock.

Our thread figures (bench_eskdb, bench_scale, bench_hdp) are only meaningful against what the machine
itself allows. This runs three numba kernels that share nothing, each on one thread and then on two
threads at once (each thread its own copy of the work, the GIL released), and prints the speed-up
``2 x t(1 thread) / t(2 threads)``:

* ``float-log``: a loop of ``log`` calls on a linear congruential stream (floating point and libm, like
  the sampler's ``lgamma``, ``log`` and divisions);
* ``integer``: the same stream with shifts and xors only;
* ``memory``: random reads of a 32 MiB array (latency bound, like the counts and the tries).

Rounds alternate one and two threads; each figure is the minimum over ``--rounds``. A machine whose
two cores are independent gives about 2.0x on all three; two hyperthreads of one core, or a host
that lowers the clock when both are busy, give less on the compute-bound ones.

Usage::

    python benchmarks/bench_machine_threads.py [--rounds 7]
"""

from __future__ import annotations

import argparse
import os
import platform
import threading
import time

import numba
import numpy as np


@numba.njit(nogil=True, cache=False)
def float_log(n, seed):
    x = seed
    s = 0.0
    for _ in range(n):
        x = (x * 6364136223846793005 + 1442695040888963407) & 0xFFFFFFFFFFFF
        s += np.log(1.0 + (x & 0xFFFF))
    return s


@numba.njit(nogil=True, cache=False)
def integer(n, seed):
    x = seed
    for _ in range(n):
        x = (x * 6364136223846793005 + 1442695040888963407) & 0xFFFFFFFFFFFF
        x ^= x >> 7
    return x


@numba.njit(nogil=True, cache=False)
def memory(a, idx, n):
    s = 0.0
    m = idx.shape[0]
    for i in range(n):
        s += a[idx[i % m]]
    return s


def timed(f, args, threads: int) -> float:
    ts = [threading.Thread(target=f, args=args) for _ in range(threads)]
    t = time.perf_counter()
    for th in ts:
        th.start()
    for th in ts:
        th.join()
    return time.perf_counter() - t


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=7)
    args = ap.parse_args(argv)
    rng = np.random.default_rng(0)
    a = rng.random(1 << 22)
    idx = rng.integers(0, a.size, 1 << 20)
    kernels = {"float-log": (float_log, (40_000_000, 7)), "integer": (integer, (200_000_000, 7)),
               "memory": (memory, (a, idx, 30_000_000))}
    float_log(10, 1), integer(10, 1), memory(a, idx, 10)  # compile
    print(f"# {platform.machine()}, {os.cpu_count()} logical CPUs, {platform.processor() or platform.platform()}; "
          f"minimum of {args.rounds} rounds, one and two threads alternating")
    print(f"{'kernel':<10} {'1 thread s':>11} {'2 threads s':>12} {'speed-up':>9}   (2 threads do twice the work)")
    for name, (f, fargs) in kernels.items():
        one, two = [], []
        for _ in range(args.rounds):
            one.append(timed(f, fargs, 1))
            two.append(timed(f, fargs, 2))
        print(f"{name:<10} {min(one):>11.3f} {min(two):>12.3f} {2 * min(one) / min(two):>8.2f}x"
              f"   (1 thread {min(one):.3f}-{max(one):.3f} s over the rounds)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
