"""Block measurements several systems share: words, links, tags, inline units, CETR."""

from __future__ import annotations

import numpy as np

from ...config import load_config
from ...page.text import count_words
from .cetr import cetr, gaussian_smooth, kmeans_2d  # noqa: F401  (moved to the core; re-exported)

_BLOCK_TAGS: frozenset[str] | None = None


def block_tags() -> frozenset[str]:
    """Tags that end a visual line (from the config), except <br> which splits inside paragraphs."""
    global _BLOCK_TAGS
    if _BLOCK_TAGS is None:
        _BLOCK_TAGS = frozenset(load_config()["segment"]["block_tags"]) - {"br"}
    return _BLOCK_TAGS


def unit_ids(blocks) -> np.ndarray:
    """Kohlschütter-style blocks: consecutive project blocks joined while no block-level tag
    opens or closes between them (inline markup such as <a>, <b>, <span> does not split)."""
    bt = block_tags()
    out = np.zeros(len(blocks), dtype=np.int64)
    u = 0
    for i, b in enumerate(blocks):
        if i and (b.artificial or blocks[i - 1].artificial
                  or not bt.isdisjoint(b.opened) or not bt.isdisjoint(b.closed)):
            u += 1
        out[i] = u
    return out


def kohlschuetter_density(n_words: np.ndarray, n_chars: np.ndarray) -> np.ndarray:
    """Tokens per 80-character line; with more than one line the last (partial) line is left
    out, which amounts to 80 * words / chars."""
    lines = np.ceil(n_chars / 80.0)
    return np.where(lines > 1, 80.0 * n_words / np.maximum(n_chars, 1), n_words)


def word_counts(blocks) -> np.ndarray:
    return np.fromiter((count_words(b.text) for b in blocks), dtype=float, count=len(blocks))
