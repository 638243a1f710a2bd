"""The common interface of the seed systems, their file format and shared helpers.

Every system labels the project's own blocks (`cleaner.page.segment.segment_blocks`), so that
all of them are scored by the same scorer on the same units. A system sees a page as a
`PageInput` (its blocks and its decoded HTML text) and returns one label per block from
`cleaner.gold.align.LABELS`. The non-CRF systems only decide content vs. noise: their content
blocks get `paragraph` (first block of a run) / `continuation` labels (`run_labels`).

A trained system is one `.npz` file (numpy arrays, no pickles: loaded with
`allow_pickle=False`) that holds its arrays and a JSON document of its settings
under the key `__meta__`.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ...labels import CONTENT_LABELS, CONTINUATION, OTHER, PARAGRAPH
from ...page.segment import Block

FORMAT_VERSION = 1


class SystemError_(ValueError):
    """A system file is missing, unreadable or of another kind."""


@dataclass
class PageInput:
    """What a system sees of a page."""

    blocks: list[Block]
    html: str = ""  # the decoded HTML text (systems that reparse the page need it)


def run_labels(content: list[bool]) -> list[str]:
    """Content flags -> labels: the first block of a content run opens a paragraph."""
    out = []
    prev = False
    for c in content:
        out.append((CONTINUATION if prev else PARAGRAPH) if c else OTHER)
        prev = c
    return out


def is_content(labels: list[str]) -> list[bool]:
    return [lab in CONTENT_LABELS for lab in labels]


class BlockLabeller(ABC):
    """A block labeller: fit on training pages, label a page's blocks, save/load without pickles."""

    kind: str = ""
    trainable: bool = True

    def fit(self, pages: list[PageInput], labels: list[list[str]]) -> BlockLabeller:
        """Train on pages and their gold-aligned block labels (training-free systems ignore them)."""
        return self

    @abstractmethod
    def predict(self, page: PageInput) -> list[str]:
        """One label per block of the page."""

    # -- persistence ---------------------------------------------------------------------

    def get_state(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        """JSON-able settings and numpy arrays that describe the trained system."""
        return {}, {}

    def set_state(self, meta: dict[str, Any], arrays: dict[str, np.ndarray]) -> None:  # noqa: B027
        """Restore what `state` returned (a labeller with no trained state keeps this no-op)."""

    def save(self, path: str | Path) -> Path:
        path = Path(path)
        meta, arrays = self.get_state()
        doc = {"kind": self.kind, "format": FORMAT_VERSION, "state": meta}
        blob = np.frombuffer(json.dumps(doc).encode("utf-8"), dtype=np.uint8)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp")
        with open(tmp, "wb") as fh:
            np.savez_compressed(fh, __meta__=blob, **arrays)  # type: ignore[arg-type]  # (stub: **kwds vs allow_pickle)
        tmp.replace(path)
        return path


def read_system_file(path: str | Path) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """(meta document, arrays) of a saved system; never unpickles."""
    path = Path(path)
    try:
        with np.load(path, allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
    except FileNotFoundError:
        raise SystemError_(f"system file not found: {path}") from None
    except Exception as exc:  # a broken zip, a pickled array, ...
        raise SystemError_(f"not a system file: {path} ({type(exc).__name__}: {exc})") from exc
    blob = arrays.pop("__meta__", None)
    if blob is None:
        raise SystemError_(f"not a system file (no __meta__): {path}")
    doc = json.loads(blob.tobytes().decode("utf-8"))
    if doc.get("format") != FORMAT_VERSION:
        raise SystemError_(f"{path}: system file format {doc.get('format')}, expected {FORMAT_VERSION}")
    return doc, arrays
