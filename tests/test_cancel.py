"""Cancelling a fit between the steps of its long phases (hdp_plugin.runtime.cancel), and the finer steps
that make it quick (the sampler's timed chunks, SkDB's timed row blocks) leave the model unchanged."""

from __future__ import annotations

import random
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from hdp_plugin import BayesNetClassifier, config, read_dataset
from hdp_plugin.runtime import cancel as _cancel
from hdp_plugin.errors import Cancelled
from hdp_plugin.hdp import sampler

DATA = Path(__file__).parent / "data"


@pytest.fixture(scope="module")
def segment():
    return read_dataset(DATA / "segment-challenge.arff", class_attribute="class")


def test_the_sampler_gives_the_same_tables_whatever_its_chunks(segment, monkeypatch):
    def fit():
        return BayesNetClassifier(structure="kdb", k=2, iterations=300, random_state=3).fit(segment).predict_proba(segment)

    expected = fit()
    rnd = random.Random(1)
    monkeypatch.setattr(sampler, "_batch_chunk", lambda pace, cost: rnd.randint(1, 50))
    assert np.array_equal(fit(), expected)
    monkeypatch.setattr(sampler, "_batch_chunk", lambda pace, cost: 1)
    assert np.array_equal(fit(), expected)


def test_chunks_take_about_a_quarter_second():
    assert sampler._next_chunk(50, 50, 5.0) == 2  # 10 iterations a second: 2.5 in a quarter second
    assert sampler._next_chunk(1, 1, 10.0) == 1  # never below one
    assert sampler._next_chunk(1, 1, 1e-4) == config.SAMPLER_CHUNK  # nor above the chunk


def test_skdb_passes_give_the_same_ensemble_whatever_the_row_blocks(segment, monkeypatch):
    def fit():
        return BayesNetClassifier(structure="eskdb", n_members=3, k=3, iterations=100,
                                  random_state=2).fit(segment).predict_proba(segment)

    monkeypatch.setattr(config, "STRUCTURE_BLOCK_SECONDS", 1e9)  # one block of every row
    expected = fit()
    monkeypatch.setattr(config, "STRUCTURE_BLOCK_SECONDS", 1e-9)  # blocks of 1024 rows
    assert np.array_equal(fit(), expected)
    monkeypatch.setattr(config, "ROW_BLOCK", 100)  # blocks of 100 rows
    assert np.array_equal(fit(), expected)


@pytest.mark.parametrize("structure", ["eskdb", "skdb", "kdb"])
def test_an_installed_check_stops_a_fit_and_keeps_stopping_it(segment, structure):
    calls = []

    def cancelled():
        calls.append(time.monotonic())
        if len(calls) >= 2:
            raise Cancelled("stop")

    with _cancel.checking(cancelled):
        with pytest.raises(Cancelled):
            extra = {"n_members": 5} if structure == "eskdb" else {}
            BayesNetClassifier(structure=structure, k=2, iterations=100_000, random_state=0, **extra).fit(segment)
        with pytest.raises(Cancelled):  # sticky: the other threads of the fit stop at their next check too
            _cancel.check()
    _cancel.check()  # gone with the block
    assert len(calls) == 2


def test_an_interrupted_wait_stops_the_work_in_flight_and_drops_the_rest():
    """Ctrl-C in the waiting thread (``interrupt_main``: a KeyboardInterrupt there, as from SIGINT on any
    platform) stops the threads' work at their next check and starts no more of it."""
    import _thread
    import signal
    from concurrent.futures import ThreadPoolExecutor

    from hdp_plugin.runtime.threads import pool_map

    started = []

    def work(i):
        started.append(i)
        if i == 0:
            _thread.interrupt_main()
        end = time.monotonic() + 120
        while time.monotonic() < end:  # a long step, checking as the kernels' callers do
            _cancel.check()
            time.sleep(0.01)
        return i

    t0 = time.monotonic()
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)  # Python's own, whatever ran before
    try:
        with ThreadPoolExecutor(max_workers=2) as pool:
            with pytest.raises(KeyboardInterrupt):
                pool_map(pool, work, range(8))
    finally:
        signal.signal(signal.SIGINT, previous)
    assert time.monotonic() - t0 < 30
    assert sorted(started) in ([0], [0, 1])  # the items not started were dropped
    _cancel.check()  # and the next fit is not stopped


def test_pool_map_raises_the_first_failure_in_order():
    from concurrent.futures import ThreadPoolExecutor

    from hdp_plugin.runtime.threads import pool_map

    def work(i):
        if i in (1, 3):
            time.sleep(0.2 if i == 1 else 0.0)
            raise ValueError(f"item {i}")
        return i * 10

    with ThreadPoolExecutor(max_workers=4) as pool:
        assert pool_map(pool, lambda i: i * 10, range(5)) == [0, 10, 20, 30, 40]
        with pytest.raises(ValueError, match="item 1"):
            pool_map(pool, work, range(5))


_GROWTH_INTERRUPTED = """
import os, signal, sys, threading, time
from hdp_plugin.hdp.sampler import _Gate

gate = _Gate()
seen = gate.__enter__()  # a kernel in flight, on another thread's behalf


class Run:
    def grow(self):
        sys.exit("grew while a kernel ran")


def ctrl_c():  # once the growth waits for the kernel: a Ctrl-C in the wait
    while not gate.growing:
        time.sleep(0.01)
    time.sleep(0.2)
    os.kill(os.getpid(), signal.SIGINT)


threading.Thread(target=ctrl_c, daemon=True).start()
try:
    gate.grow(Run(), seen)
    sys.exit("the growth returned")
except KeyboardInterrupt:
    pass
if gate.growing:
    sys.exit("the gate stays marked growing")
entered = []
other = threading.Thread(target=lambda: entered.append(gate.__enter__()), daemon=True)
other.start()
other.join(60)
sys.exit(0 if entered == [seen] else "a kernel could not start after the interrupted growth")
"""


@pytest.mark.skipif(sys.platform == "win32", reason="sends itself SIGINT")
def test_a_growth_interrupted_while_it_waits_leaves_the_gate_open():
    """Ctrl-C while a thread waits to grow the Stirling tables (a kernel still runs on them): the other
    threads must not wait for ever for a growth that will never happen. In a process of its own, which
    sends itself the SIGINT."""
    import subprocess

    done = subprocess.run([sys.executable, "-c", _GROWTH_INTERRUPTED], capture_output=True, text=True, timeout=300,
                          cwd=Path(__file__).resolve().parents[1])
    assert done.returncode == 0, done.stderr[-2000:]
