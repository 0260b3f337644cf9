"""Write the crafted model files that both model readers (Python's ``hdp_plugin.model`` and the Weka
package's ``ModelFile``) must judge alike.

Run from the repository root:  python tests/golden/crafted/make_crafted.py

Each file is the golden weather model (``tests/golden/models/weather-kdb1-hdp.hdpbnc``) with one
change in the bytes of its model or training JSON document and a checksum recomputed over the changed
bytes, so the change is the file's only fault. ``manifest.json`` lists every file with ``expect``:
``refuse`` (each reader raises its model file error naming the file) or ``accept`` (each reader
loads it, and the class labels and attribute names it reads are the manifest's ``class_values`` and
``attribute_names``). Python's test is ``tests/test_modelfile_crafted.py``, Java's
``CraftedModelsTest``.

The refused files hold what no UTF-8 JSON text this package writes can hold: bytes that are not
UTF-8, ``\\uXXXX`` escapes that spell a lone surrogate, numbers outside JSON's grammar, ``NaN`` and
``Infinity``, nesting deeper than the readers' bound, a training document that is not an object.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
sys.path.insert(0, str(ROOT))

from hdp_plugin.model import modelfile as MF  # noqa: E402

GOLDEN = ROOT / "tests" / "golden" / "models" / "weather-kdb1-hdp.hdpbnc"

#: placeholders in the JSON text that the cases replace with raw bytes
LABEL = "@LABEL@"  # the first class label ("yes"), in class.values and classes.values
ATTR = "@ATTR@"  # the first attribute's name ("outlook"), in attributes[0].name and trees[0].name
FIT = '"@FIT@"'  # a value under fit.extra (a key the readers ignore)
KEY = "@KEY@"  # a key under fit (the readers ignore fit's keys)
TRAINING = '"@TRAINING@"'  # a value under training.extra

# name -> (expect, {placeholder: raw bytes}, what it holds)
CASES: dict[str, tuple[str, dict[str, bytes], str]] = {
    # bytes that are not UTF-8
    "utf8-invalid-byte-in-label": ("refuse", {LABEL: b"yes\xff"}, "the byte 0xff in a class label"),
    "utf8-lone-continuation-in-attribute": ("refuse", {ATTR: b"out\x80look"}, "a lone continuation byte"),
    "utf8-overlong-slash": ("refuse", {LABEL: b"y\xc0\xafs"}, "an overlong encoding of '/'"),
    "utf8-encoded-surrogate": ("refuse", {LABEL: b"y\xed\xa0\x80s"}, "U+D800 encoded as three bytes"),
    "utf8-truncated-sequence": ("refuse", {LABEL: b"yes\xe2\x82"}, "a three-byte sequence cut after two"),
    "utf8-beyond-unicode": ("refuse", {LABEL: b"y\xf4\x90\x80\x80s"}, "a code point above U+10FFFF"),
    "utf8-invalid-in-ignored-key": ("refuse", {KEY: b"k\xfe"}, "the byte 0xfe in a key of fit"),
    "utf8-invalid-in-training": ("refuse", {TRAINING: b'"t\xc3"'}, "a cut sequence in the training document"),
    # \uXXXX escapes that spell lone surrogates
    "surrogate-lone-high-in-label": ("refuse", {LABEL: b"yes\\ud800"}, "a lone high surrogate"),
    "surrogate-lone-low-in-attribute": ("refuse", {ATTR: b"\\udc00outlook"}, "a lone low surrogate"),
    "surrogate-reversed-pair": ("refuse", {LABEL: b"\\ude00\\ud83d"}, "a low then a high surrogate"),
    "surrogate-high-then-letter": ("refuse", {LABEL: b"\\ud83dA"}, "a high surrogate followed by a letter"),
    "surrogate-high-then-high": ("refuse", {LABEL: b"\\ud83d\\ud83d\\ude00"}, "two highs, then one low"),
    "surrogate-in-ignored-key": ("refuse", {KEY: b"\\udfff"}, "a lone surrogate in a key of fit"),
    "surrogate-in-training": ("refuse", {TRAINING: b'"\\udbff"'}, "a lone surrogate in the training document"),
    # numbers outside JSON's grammar, and the constants Python's json module takes by default
    "number-leading-zero": ("refuse", {FIT: b"01"}, "a number with a leading zero"),
    "number-trailing-point": ("refuse", {FIT: b"1."}, "a number ending in a point"),
    "number-leading-point": ("refuse", {FIT: b".5"}, "a number starting with a point"),
    "number-plus-sign": ("refuse", {FIT: b"+1"}, "a number with a plus sign"),
    "number-bare-exponent": ("refuse", {FIT: b"1e"}, "an exponent without digits"),
    "number-nan": ("refuse", {FIT: b"NaN"}, "NaN"),
    "number-infinity-in-training": ("refuse", {TRAINING: b"-Infinity"}, "-Infinity in the training document"),
    # structure
    "nesting-past-the-bound": ("refuse", {FIT: b"[" * 199 + b"]" * 199}, "containers nested 201 deep (the bound is 200)"),
    "nesting-past-the-bound-in-training": ("refuse", {TRAINING: b"{\"a\":" * 200 + b"0" + b"}" * 200},
                                           "objects nested 201 deep in the training document"),
    "training-not-an-object": ("refuse", {}, "a training document that is a list"),
    "byte-order-mark": ("refuse", {}, "a UTF-8 byte order mark before the model document"),
    # valid files that both read
    "valid-unicode-names": ("accept", {LABEL: "yès 日本 😀".encode(), ATTR: "Ωutlook".encode()},
                            "non-ASCII names as UTF-8 (two, three and four bytes)"),
    "valid-escaped-pair": ("accept", {LABEL: b"y\\u00e8s \\ud83d\\ude00", ATTR: b"\\u03a9utlook\\/"},
                           "the same kind of names as escapes (a surrogate pair, an escaped solidus)"),
    "valid-numbers": ("accept", {FIT: b"[-0, -0.0, 0.5e+2, 1E-2, 2e400, 123456789012345678901234567890]"},
                      "JSON's number forms, a number beyond a double's range, a big integer"),
    "valid-nesting-at-the-bound": ("accept", {FIT: b"[" * 198 + b"]" * 198}, "containers nested 200 deep"),
    "valid-whitespace": ("accept", {}, "whitespace around and inside both documents"),
}

#: what the class labels and attribute names of each accepted file decode to
DECODED = {
    "valid-unicode-names": ("yès 日本 😀", "Ωutlook"),
    "valid-escaped-pair": ("yès 😀", "Ωutlook/"),
    "valid-numbers": ("yes", "outlook"),
    "valid-nesting-at-the-bound": ("yes", "outlook"),
    "valid-whitespace": ("yes", "outlook"),
}


def documents(name: str) -> tuple[bytes, bytes]:
    """The golden model's two JSON documents with the case's placeholders put in, as bytes."""
    doc, training, _ = MF.read_model_file(GOLDEN)
    label = LABEL if LABEL in CASES[name][1] else doc["class"]["values"][0]
    attr = ATTR if ATTR in CASES[name][1] else doc["attributes"][0]["name"]
    doc["class"]["values"][0] = label
    doc["classes"]["values"][0] = label
    doc["attributes"][0]["name"] = attr
    doc["trees"][0]["name"] = attr
    if FIT in CASES[name][1]:
        doc["fit"]["extra"] = FIT.strip('"')
    if KEY in CASES[name][1]:
        doc["fit"][KEY] = 0
    if TRAINING in CASES[name][1]:
        training["extra"] = TRAINING.strip('"')
    model_json = json.dumps(doc, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    training_json = json.dumps(training, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    for placeholder, raw in CASES[name][1].items():
        model_json = model_json.replace(placeholder.encode(), raw)
        training_json = training_json.replace(placeholder.encode(), raw)
    if name == "training-not-an-object":
        training_json = b"[" + training_json + b"]"
    elif name == "byte-order-mark":
        model_json = b"\xef\xbb\xbf" + model_json
    elif name == "valid-whitespace":
        model_json = b" \r\n\t" + model_json.replace(b",", b" ,\n\t").replace(b":", b" : ") + b"\n "
        training_json = b"\n" + training_json.replace(b",", b", ") + b"\t"
    return model_json, training_json


def main() -> None:
    _, _, batches = MF.read_model_file(GOLDEN)
    for old in HERE.glob("*.hdpbnc"):
        old.unlink()
    manifest = {}
    for name, (expect, _, what) in CASES.items():
        model_json, training_json = documents(name)
        (HERE / f"{name}.hdpbnc").write_bytes(MF.file_bytes(model_json, training_json, batches))
        entry = {"model": f"{name}.hdpbnc", "expect": expect, "holds": what}
        if expect == "accept":
            doc, _, _ = MF.read_model_file(GOLDEN)
            label, attr = DECODED[name]
            entry["class_values"] = [label] + doc["class"]["values"][1:]
            entry["attribute_names"] = [attr] + [a["name"] for a in doc["attributes"][1:]]
        manifest[name] = entry
    (HERE / "manifest.json").write_text(json.dumps(manifest, indent=2, ensure_ascii=True) + "\n")


if __name__ == "__main__":
    main()
