"""Maximum subsequence segmentation (Pasternack & Roth, WWW 2009).

The page is a sequence of tokens, tags and text tokens, each given a score; the
extracted text is the contiguous token range with the largest total score, found in
linear time (`max_subsequence`). Three variants:

* `mss-baseline` (training-free): every tag scores -3.25, every text token +1.
* `mss`: a token-level naive Bayes classifier estimates P(content | token) from two
  features, the token trigram (the token and the two before it) and the most recent
  unclosed tag; the score is P - 0.5.
* `mss-hr`: the same scores, with the constraint that the extracted range contains no
  `<hr>` (an `<hr>` token scores minus infinity; our reading of the paper's `<hr>`
  variant: a rule separates the article from what follows it).

Tokens from the project's blocks: the gap before block i contributes its tags (closed
tags, then opened ones, each sorted by name and repeated by count, since a block records
counts, not order); the block contributes its text tokens (runs of word characters, and
runs of other non-space characters), lower-cased. The most recent unclosed tag of every
token of block i (and of the gap before it) is the block's innermost container.
Training labels: a text token is content when its block is; a tag token when the blocks
on both sides of its gap are. A block is content when most of its tokens lie inside the
extracted range.

Naive Bayes counts are hashed (CRC-32) into fixed tables, so the trained system is two
count arrays per class (no vocabulary to store); add-one smoothing.
"""

from __future__ import annotations

import re
import zlib

import numpy as np

from ...labels import CONTENT_LABELS
from .base import BlockLabeller, PageInput, run_labels

_TOKEN_RE = re.compile(r"\w+|[^\w\s]+")
TRI_BITS = 20
TAG_BITS = 12
BASELINE_TAG_SCORE = -3.25
BASELINE_WORD_SCORE = 1.0
_NEG = -1e9


def max_subsequence(scores) -> tuple[int, int]:
    """(start, end) inclusive of the maximum-sum contiguous range, in linear time.

    (0, -1) when no score is positive (the empty range is best). Computed from prefix
    sums: the best range ending at j starts after the smallest prefix sum before j.
    """
    s = np.asarray(scores, dtype=np.float64)
    if s.size == 0:
        return 0, -1
    c = np.concatenate(([0.0], np.cumsum(s)))
    run_min = np.minimum.accumulate(c)
    gain = c[1:] - run_min[:-1]  # best sum of a range ending at token j
    j = int(np.argmax(gain))
    if gain[j] <= 0:
        return 0, -1
    i = int(np.argmin(c[: j + 1]))  # first position of the minimal prefix sum before j+1
    return i, j


def page_tokens(blocks) -> tuple[list[str], list[int], list[str]]:
    """Tokens of a page, the block index of each (-(i+1) for a tag in the gap before block i),
    and the most recent unclosed tag of each."""
    toks: list[str] = []
    owner: list[int] = []
    ctx: list[str] = []
    for i, b in enumerate(blocks):
        tag = b.containers[-1] if b.containers else "-"
        gap = [f"</{t}>" for t in sorted(b.closed) for _ in range(min(b.closed[t], 20))]
        gap += [f"<{t}>" for t in sorted(b.opened) for _ in range(min(b.opened[t], 20))]
        toks.extend(gap)
        owner.extend([-(i + 1)] * len(gap))
        ctx.extend([tag] * len(gap))
        words = _TOKEN_RE.findall(b.text.lower()) or ["\u2026"]
        toks.extend(words)
        owner.extend([i] * len(words))
        ctx.extend([tag] * len(words))
    return toks, owner, ctx


def _hash(s: str, bits: int) -> int:
    return zlib.crc32(s.encode("utf-8", "surrogatepass")) & ((1 << bits) - 1)


def hashed_features(toks: list[str], ctx: list[str]) -> tuple[np.ndarray, np.ndarray]:
    tri = np.empty(len(toks), dtype=np.int64)
    a, b = "^", "^"
    for k, t in enumerate(toks):
        tri[k] = _hash(f"{a}\x1f{b}\x1f{t}", TRI_BITS)
        a, b = b, t
    tag_cache: dict[str, int] = {}
    tag = np.fromiter((tag_cache.setdefault(c, _hash(c, TAG_BITS)) for c in ctx), dtype=np.int64, count=len(ctx))
    return tri, tag


def blocks_from_range(owner: list[int], n_blocks: int, start: int, end: int) -> list[bool]:
    """A block is content when most of its (text) tokens lie in tokens[start..end]."""
    inside = np.zeros(n_blocks)
    total = np.zeros(n_blocks)
    own = np.asarray(owner)
    text = own >= 0
    idx = np.arange(len(owner))
    in_range = (idx >= start) & (idx <= end)
    np.add.at(total, own[text], 1)
    np.add.at(inside, own[text & in_range], 1)
    return list((inside * 2 > total) & (total > 0))


class MssBaseline(BlockLabeller):
    """Training-free MSS: tags -3.25, text tokens +1."""

    kind = "mss-baseline"
    trainable = False

    def scores(self, page: PageInput):
        toks, owner, _ = page_tokens(page.blocks)
        s = np.array([BASELINE_TAG_SCORE if o < 0 else BASELINE_WORD_SCORE for o in owner])
        return toks, owner, s

    def predict(self, page: PageInput) -> list[str]:
        if not page.blocks:
            return []
        toks, owner, s = self.scores(page)
        start, end = max_subsequence(s)
        return run_labels(blocks_from_range(owner, len(page.blocks), start, end))


class Mss(BlockLabeller):
    """Supervised MSS: naive Bayes token scores P(content) - 0.5."""

    kind = "mss"
    hr_constraint = False

    def __init__(self):
        self.tri_counts = np.zeros((2, 1 << TRI_BITS))
        self.tag_counts = np.zeros((2, 1 << TAG_BITS))
        self.class_counts = np.zeros(2)
        self._cached = None

    def fit(self, pages: list[PageInput], labels: list[list[str]]) -> Mss:
        tri_c = np.zeros((2, 1 << TRI_BITS))
        tag_c = np.zeros((2, 1 << TAG_BITS))
        for page, labs in zip(pages, labels):
            if not page.blocks:
                continue
            toks, owner, ctx = page_tokens(page.blocks)
            tri, tag = hashed_features(toks, ctx)
            content = np.array([lab in CONTENT_LABELS for lab in labs], dtype=bool)
            own = np.asarray(owner)
            y = np.empty(len(own), dtype=np.int64)
            text = own >= 0
            y[text] = content[own[text]]
            gap_block = -own[~text] - 1  # the gap lies before this block
            prev_c = np.where(gap_block > 0, content[np.maximum(gap_block - 1, 0)], False)
            y[~text] = prev_c & content[gap_block]
            for cls in (0, 1):
                m = y == cls
                tri_c[cls] += np.bincount(tri[m], minlength=1 << TRI_BITS)
                tag_c[cls] += np.bincount(tag[m], minlength=1 << TAG_BITS)
        self.tri_counts, self.tag_counts = tri_c, tag_c
        self.class_counts = tri_c.sum(axis=1)
        self._cached = None
        return self

    def _tables(self):
        n = self.class_counts
        prior = np.log((n[1] + 1) / (n[0] + 1))
        # add-one smoothing over the (hashed) vocabulary
        tri = np.log((self.tri_counts[1] + 1) / (n[1] + self.tri_counts.shape[1])) - np.log(
            (self.tri_counts[0] + 1) / (n[0] + self.tri_counts.shape[1])
        )
        tag = np.log((self.tag_counts[1] + 1) / (n[1] + self.tag_counts.shape[1])) - np.log(
            (self.tag_counts[0] + 1) / (n[0] + self.tag_counts.shape[1])
        )
        return prior, tri, tag

    def token_probabilities(self, toks, ctx) -> np.ndarray:
        if self._cached is None:
            self._cached = self._tables()
        prior, tri_t, tag_t = self._cached
        tri, tag = hashed_features(toks, ctx)
        logit = prior + tri_t[tri] + tag_t[tag]
        return 1.0 / (1.0 + np.exp(-np.clip(logit, -50, 50)))

    def predict(self, page: PageInput) -> list[str]:
        if not page.blocks:
            return []
        toks, owner, ctx = page_tokens(page.blocks)
        s = self.token_probabilities(toks, ctx) - 0.5
        if self.hr_constraint:
            s[np.fromiter((t == "<hr>" for t in toks), dtype=bool, count=len(toks))] = _NEG
        start, end = max_subsequence(s)
        return run_labels(blocks_from_range(owner, len(page.blocks), start, end))

    def get_state(self):
        return {"tri_bits": TRI_BITS, "tag_bits": TAG_BITS}, {
            "tri_counts": self.tri_counts.astype(np.float64),
            "tag_counts": self.tag_counts.astype(np.float64),
        }

    def set_state(self, meta, arrays):
        if meta.get("tri_bits") != TRI_BITS or meta.get("tag_bits") != TAG_BITS:
            raise ValueError("hash table sizes differ from this version's")
        self.tri_counts = arrays["tri_counts"]
        self.tag_counts = arrays["tag_counts"]
        self.class_counts = self.tri_counts.sum(axis=1)
        self._cached = None


class MssHr(Mss):
    """Supervised MSS whose extracted range may not contain an <hr>."""

    kind = "mss-hr"
    hr_constraint = True
