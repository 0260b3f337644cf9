"""Seeded fuzzing of the daemon's job description reader (``job.json``).

Every mutated ``job.json`` must either validate into a job whose classifier parameters pass the
classifier's own checks, or raise one :class:`JobError` of one line; no other exception. The cases
are byte mutations of valid documents and field-wise edits (a field's value swapped for a value of
another JSON type, an edge number, a long or odd string, deep nesting, an unknown or duplicated key).
"""

from __future__ import annotations

import json
import random

import pytest

from hdp_plugin.daemon import protocol as P
from hdp_plugin.errors import JobError, ParameterError
from hdp_plugin.params import canonical_params, check_all

EDGE_VALUES = [None, True, False, 0, 1, -1, 2**31 - 1, 2**63, -(2**63) - 1, 10**400, 0.5, -0.0, 1e308, 1e-320,
               "", "a", "x" * 5000, "\u0000", "nb", "eskdb", "hdp", "data.arff", "data.arrow", "../etc/passwd",
               [], [0], ["a", "a"], [True, False], {}, {"a": 1}, [[[[]]]]]
RAW_EDITS = [b"NaN", b"Infinity", b"-Infinity", b'"\\ud800"', b'"\\udfff\\ud800"', b"1e999", b"\xff", b"\xc3",
             b"\x00", b"{", b"}", b"[", b",", b'"protocol": 1, "protocol": 1', b"[" * 5000, b"\xef\xbb\xbf"]


def _valid_docs() -> list[dict]:
    full = {"protocol": 1, "data": "data.arff", "class_attribute": "class", "client": "fuzz"}
    for f in P.JOB_SCHEMA:
        if f.name not in full and f.default is not None:
            full[f.name] = f.default
    return [{"protocol": 1}, full, {"protocol": 1, "structure": "kdb", "k": 3, "estimator": "m-estimate", "m": 2.0},
            {"protocol": 1, "structure": "eskdb", "n_members": 3, "iterations": 50, "burn_in": 10, "seed": 7}]


def _mutate(rng: random.Random, doc: dict) -> bytes:
    kind = rng.randrange(4)
    if kind == 0:  # a field's value replaced
        doc = dict(doc)
        doc[rng.choice(sorted(P.FIELDS))] = rng.choice(EDGE_VALUES)
        return json.dumps(doc).encode()
    if kind == 1:  # an unknown field, or one removed
        doc = dict(doc)
        if rng.random() < 0.5 and doc:
            doc.pop(rng.choice(sorted(doc)))
        else:
            doc[rng.choice(["Protocol", "k ", "__proto__", "x" * 300, "\u00e9"])] = rng.choice(EDGE_VALUES)
        return json.dumps(doc).encode()
    raw = bytearray(json.dumps(doc).encode())
    if kind == 2:  # bytes flipped, inserted or removed
        for _ in range(rng.randint(1, 4)):
            at = rng.randrange(len(raw) + 1)
            op = rng.randrange(3)
            if op == 0 and at < len(raw):
                raw[at] ^= 1 << rng.randrange(8)
            elif op == 1:
                raw[at:at] = bytes([rng.randrange(256)])
            elif at < len(raw):
                del raw[at]
        return bytes(raw)
    at = rng.randrange(len(raw) + 1)  # a raw token spliced in
    end = min(len(raw), at + rng.randrange(4))
    raw[at:end] = rng.choice(RAW_EDITS)
    return bytes(raw)


def _read(raw: bytes):
    try:
        job = P.validate_job(P.parse_json(raw))
    except JobError as exc:
        text = str(exc)
        assert text and "\n" not in text, repr(text)
        return None
    params = P.classifier_params(job)
    try:
        check_all(params)
        canonical_params(params)
    except ParameterError as exc:  # validate_job passed what the classifier refuses
        pytest.fail(f"{raw[:200]!r}: validated, then the classifier refused it: {exc}")
    return job


@pytest.mark.parametrize("seed", [0, 1])
def test_mutated_job_files_validate_or_are_one_job_error(seed):
    rng = random.Random(seed)
    docs = _valid_docs()
    accepted = refused = 0
    for _ in range(2500):
        raw = _mutate(rng, rng.choice(docs))
        if _read(raw) is None:
            refused += 1
        else:
            accepted += 1
    assert accepted > 100 and refused > 100  # the mutations reach both sides of the reader


def test_the_valid_documents_validate():
    for doc in _valid_docs():
        assert _read(json.dumps(doc).encode()) is not None
