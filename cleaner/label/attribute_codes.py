"""Attributes as a model file stores them: short stable codes (`AttributeCodec`), CRFsuite trained on them
(`train_crf`) and a CRFsuite tagger opened on such a model (`open_tagger`, as training's inner folds tag with).
Tagging a page names its attributes by ids instead (cleaner.label.crf); cleaner.label.crf_model is the model that
does."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pycrfsuite

from .crf import encode_attribute

ATTRIBUTE_ENCODING = "blake2b-48"


class AttributeCodec(dict):
    """Readable attribute -> a short stable code, as the model file stores it.

    Training hands CRFsuite these codes (tagging names attributes by ids instead, cleaner.label.crf).
    CRFsuite looks attribute names up in a string-keyed tree; readable names share long
    prefixes ("-1:char.alpha.rel=...") so every comparison scans deep into both strings.
    12-hex-digit codes differ in their first characters: CRFsuite took pages ~3x faster with
    the same labels, and the files are smaller. Codes are computed once per distinct attribute
    and cached; the cache is bounded because id/class tokens are an open vocabulary on a real
    crawl. Codes are ASCII bytes: CRFsuite reads bytes as they are, where each str would be
    UTF-8 encoded again.
    """

    MAX_ENTRIES = 150_000  # ~20 MB at most

    def __missing__(self, key: str) -> bytes:
        if len(self) >= self.MAX_ENTRIES:
            self.clear()
        code = self[key] = encode_attribute(key)
        return code

    def encode(self, rows: list[list[str]]) -> list[list[bytes]]:
        get = self.__getitem__
        return [list(map(get, row)) for row in rows]


CODEC = AttributeCodec()


def open_tagger(data: bytes) -> pycrfsuite.Tagger:
    tagger = pycrfsuite.Tagger()
    tagger.open_inmemory(data)
    return tagger



def train_crf(
    X: list[list[list[str]]],
    y: list[list[str]],
    *,
    c1: float,
    c2: float,
    max_iterations: int,
    verbose: bool = False,
) -> bytes:
    """Train a linear-chain CRF with L-BFGS (via sklearn-crfsuite); returns the model bytes.

    Attributes are stored encoded (`AttributeCodec`; record `attribute_encoding` in the
    sidecar). CRFsuite's L-BFGS is deterministic: the same sequences in the same order
    give the same model bytes.
    """
    import sklearn_crfsuite

    encoded = [CODEC.encode(x) for x in X]
    with tempfile.TemporaryDirectory(prefix="crf-") as tmp:
        model_file = os.path.join(tmp, "model.crfsuite")
        crf = sklearn_crfsuite.CRF(
            algorithm="lbfgs",
            c1=c1,
            c2=c2,
            max_iterations=max_iterations,
            all_possible_transitions=True,
            model_filename=model_file,
            verbose=verbose,
        )
        crf.fit(encoded, y)
        return Path(model_file).read_bytes()
