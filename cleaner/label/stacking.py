"""Stacked labelling: the block CRF also sees a first block CRF's labelling of the page.

Why: a linear-chain CRF links each block to its neighbours only through the label
transitions and the compact feature window (cleaner.page.features), so what it knows of the
page beyond a few blocks is the document-level features. A first pass with the same
features already says, for every block, how likely it is content; the second pass reads
that for the block itself, as the mean over the 3 and the 10 blocks on each side, and
whether the block lies between the first and the last block the first pass keeps (the
range maximum subsequence segmentation looks for, here from the CRF's own evidence).
This is stacked sequential learning (Cohen & Carvalho 2005). The first pass's labels are
its path after the decision stage (cleaner.label.decide) rescues content-looking blocks and empty
pages, i.e. the labelling the product would output from the first pass alone.

The second pass must be trained on first-pass labellings of pages the first pass did not
learn from, or it learns to trust the first pass blindly: `cleaner train` labels its
training pages by cross-validation inside the training set ([stacking] inner_folds) and
ships a first pass trained on all of them (cleaner.learn.train.train_model).
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..config import Config
from ..labels import OTHER

PREFIX = "pass1."
# What the second pass reads of the first: its labels after the decision stage, recorded in the sidecar as
# `first_pass_labels`. Reading the first pass's Viterbi path instead ("viterbi", what models saved before the
# key existed read) was measured worse and removed (docs/ablation.md, "Reading the decided labels"): a model
# that read it is refused at load (cleaner.label.model.load_model).
FIRST_PASS_LABELS = "decided"


@dataclass(frozen=True)
class StackingSettings:
    # Half-widths of the windows whose mean P(content) a block sees (itself left out).
    windows: tuple[int, ...]
    # Folds of the training pages for the first pass's out-of-sample labelling.
    inner_folds: int
    # Whether the first pass also reads the neighbours' attributes (the feature window), as the second
    # always does. False: each block's own attributes only, ~40 % less for CRFsuite to take in.
    first_pass_neighbours: bool = True

    def __post_init__(self):
        if not isinstance(self.first_pass_neighbours, bool):
            raise ValueError(f"[stacking] first_pass_neighbours must be true or false, "
                             f"not {self.first_pass_neighbours!r}")

    @classmethod
    def from_config(cls, config: Config) -> StackingSettings | None:
        """The [stacking] settings, or None when stacking is disabled."""
        s = config["stacking"]  # checked by load_config (cleaner/settings.py)
        if not s["enabled"]:
            return None
        return cls.from_meta(s)

    @classmethod
    def from_meta(cls, meta: dict) -> StackingSettings:
        # Models saved before first_pass_neighbours existed: a first pass with neighbours.
        return cls(tuple(int(w) for w in meta["windows"]), int(meta["inner_folds"]),
                   meta.get("first_pass_neighbours", True))

    def to_meta(self) -> dict:
        return {"windows": list(self.windows), "inner_folds": self.inner_folds,
                "first_pass_labels": FIRST_PASS_LABELS, "first_pass_neighbours": self.first_pass_neighbours}


class _AttributeNames:
    """Every attribute the first pass's view can produce, in one table (`names`), named once (and
    encoded once, with a codec): a page's view is indices into the table, then lookups."""

    def __init__(self, settings: StackingSettings, codec=None):
        self.codec = codec
        self.names: list = []
        self.ids = None  # with a codec of ids (cleaner.label.crf.AttributeIds): `names` as an array
        # Indexed by int(10 * p) for p in [0, 1]: p = 1.0 falls in the top tenth (9), as the tenths are
        # named. (Marginals and their window means stay within [0, 1] up to rounding: int() truncates
        # -1e-16 * 10 to 0.)
        self.p = self._tenths(f"{PREFIX}p=")
        self.windows = [(w, self._tenths(f"{PREFIX}w{w}=")) for w in settings.windows]
        self.range = {r: self._add(f"{PREFIX}range={r}") for r in ("in", "before", "after", "none")}
        self.label: dict[str, int] = {}

    def _tenths(self, prefix: str) -> np.ndarray:
        """Indices of the names of tenths 0..9, and 10 (= 9)."""
        first = self._add(f"{prefix}0")
        for t in range(1, 10):
            self._add(f"{prefix}{t}")
        return np.arange(first, first + 11).clip(max=first + 9)

    def _add(self, attribute: str) -> int:
        self.names.append(attribute if self.codec is None else self.codec[attribute])
        self.ids = None
        return len(self.names) - 1

    def of_labels(self, labels: Sequence[str]) -> list[int]:
        index = self.label
        for y in sorted(set(labels).difference(index)):  # (sorted: the same table in every process)
            index[y] = self._add(f"{PREFIX}label={y}")
        return [index[y] for y in labels]


_NAMES: dict[tuple, _AttributeNames] = {}


def _view(labels: Sequence[str], p_other: Sequence[float], settings: StackingSettings, codec) -> tuple:
    """The first pass's view of a page: the names' table for `codec`, and an (n, columns) array of
    indices into it (label, P(content) tenth, each window's mean tenth, range)."""
    key = (settings.windows, id(codec))  # (the names hold the codec, so its id is not reused meanwhile)
    names = _NAMES.get(key)
    if names is None:
        names = _NAMES[key] = _AttributeNames(settings, codec)
    n = len(labels)
    out = np.empty((n, 3 + len(settings.windows)), np.intp)
    out[:, 0] = names.of_labels(labels)
    content = 1.0 - np.asarray(p_other, dtype=float)
    out[:, 1] = names.p[(content * 10).astype(np.intp)]
    # Window means from prefix sums, summed in order as a Python loop would (np.cumsum is sequential).
    prefix = np.zeros(n + 1)
    np.cumsum(content, out=prefix[1:])
    i = np.arange(n)
    for column, (w, tenths) in enumerate(names.windows, 2):
        lo = np.maximum(i - w, 0)
        hi = np.minimum(i + w + 1, n)
        others = hi - lo - 1
        mean = np.where(others > 0, (prefix[hi] - prefix[lo] - content) / np.maximum(others, 1), content)
        out[:, column] = tenths[(mean * 10).astype(np.intp)]
    kept = [k for k, y in enumerate(labels) if y != OTHER]
    r = names.range
    if kept:
        out[:, -1] = np.where(i < kept[0], r["before"], np.where(i > kept[-1], r["after"], r["in"]))
    else:
        out[:, -1] = r["none"]
    return names, out


def first_pass_attributes(
    labels: Sequence[str], p_other: Sequence[float], settings: StackingSettings, codec=None
) -> list[list]:
    """Per block, the attributes the second pass reads of the first pass's labelling:
    its label, its P(content) in tenths, the mean P(content) of the blocks within each window,
    and where it lies against the first and last block the first pass keeps. With a `codec`
    (cleaner.label.attribute_codes.AttributeCodec), as the codes the model stores."""
    names, view = _view(labels, p_other, settings, codec)
    table = names.names
    return [[table[k] for k in row] for row in view.tolist()]


def first_pass_ids(labels: Sequence[str], p_other: Sequence[float], settings: StackingSettings, codec) -> np.ndarray:
    """`first_pass_attributes` named with a codec of ids (cleaner.label.crf.AttributeIds), as an (n, columns)
    array: the second pass scores it without a list per block."""
    names, view = _view(labels, p_other, settings, codec)
    if names.ids is None:
        names.ids = np.array(names.names, dtype=np.intp)
    return names.ids[view]


def inner_fold(key: str, folds: int) -> int:
    """The inner fold of a training page: a stable hash of its key, so the same data give the
    same model."""
    return zlib.crc32(key.encode("utf-8")) % folds
