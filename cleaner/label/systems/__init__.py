"""The seed systems of web-page cleaning, as block labellers behind one interface.

Kinds (`--model-kind` of `cleaner train | eval | clean`):

  crf            Victor-style CRF, the project's default (cleaner.label.model)
  dragnet        Dragnet: Kohlschütter + CETR + id/class features, logistic regression
  mss            maximum subsequence segmentation over naive-Bayes token scores
  mss-hr         the same, the extracted range may not contain an <hr>
  mss-baseline   training-free MSS: tags -3.25, text tokens +1
  fiasco         FIASCO: target DOM nodes, RBF SVM
  everything     keep every block
  largest-group  keep the <td>/<div> with the most text

All of them label the project's own blocks (`cleaner.page.segment`), so they are scored by
the same scorer on the same pages; `cleaner.learn.systems_clean.clean_page` runs one of them on raw bytes
(above the public API, which it shares with the CRF: cleaner.api).
"""

from __future__ import annotations

from pathlib import Path

from .base import BlockLabeller, PageInput, SystemError_, read_system_file, run_labels
from .baselines import Everything, LargestGroup
from .dragnet import Dragnet
from .fiasco import Fiasco
from .mss import Mss, MssBaseline, MssHr

SYSTEMS: dict[str, type[BlockLabeller]] = {
    cls.kind: cls for cls in (Dragnet, Mss, MssBaseline, MssHr, Fiasco, Everything, LargestGroup)
}
KINDS = ("crf", *SYSTEMS)
MODEL_KINDS = (*KINDS, "all")  # the --model-kind choices

__all__ = [
    "BlockLabeller", "PageInput", "SystemError_", "SYSTEMS", "KINDS", "MODEL_KINDS", "make_system",
    "load_system", "is_training_free", "run_labels",
]  # fmt: skip


def make_system(kind: str) -> BlockLabeller:
    try:
        return SYSTEMS[kind]()
    except KeyError:
        raise SystemError_(f"unknown system kind {kind!r}; known: {', '.join(SYSTEMS)}") from None


def is_training_free(kind: str) -> bool:
    return kind in SYSTEMS and not SYSTEMS[kind].trainable


def load_system(path: str | Path | None, kind: str | None = None) -> BlockLabeller:
    """A saved system (no pickles), or a fresh training-free one when `path` is None."""
    if path is None:
        if kind is None or not is_training_free(kind):
            raise SystemError_(f"system kind {kind!r} needs a trained system file (cleaner train --model-kind {kind})")
        return make_system(kind)
    doc, arrays = read_system_file(path)
    if kind is not None and doc.get("kind") != kind:
        raise SystemError_(f"{path} holds a {doc.get('kind')!r} system, not {kind!r}")
    system = make_system(doc["kind"])
    try:
        system.set_state(doc.get("state", {}), arrays)
    except (KeyError, ValueError, TypeError) as exc:
        raise SystemError_(f"{path}: invalid {doc['kind']} system ({type(exc).__name__}: {exc})") from exc
    return system

