"""Labels -> CleanEval text and per-document label statistics.

`header` / `paragraph` / `list` blocks open a new segment marked `<h>` / `<p>` / `<l>`;
`continuation` joins the current segment (or opens a paragraph when none is open: a
continuation cannot continue boilerplate); `other` is dropped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .align import CONTINUATION, HEADER, LABELS, LIST, OTHER, PARAGRAPH
from .segment import Block
from .text import count_words

MARKER = {HEADER: "<h>", PARAGRAPH: "<p>", LIST: "<l>"}
# Page text that happens to contain a marker ("the <p> tag") would open a false segment:
# escape it as an entity, which the CleanEval scorer decodes back to the same words.
_LITERAL_MARKER = re.compile(r"<([phlPHL])>")


@dataclass
class LabelCount:
    blocks: int = 0
    words: int = 0
    chars: int = 0


@dataclass
class LabelStats:
    """What the labeller did with one document's blocks."""

    per_label: dict[str, LabelCount] = field(default_factory=lambda: {k: LabelCount() for k in LABELS})
    n_blocks: int = 0
    n_segments: int = 0
    words_total: int = 0
    words_kept: int = 0
    mean_confidence: float | None = None

    @property
    def kept_word_share(self) -> float:
        return self.words_kept / self.words_total if self.words_total else 0.0

    def to_dict(self) -> dict:
        return {
            "labels": {k: vars(v).copy() for k, v in self.per_label.items()},
            "n_blocks": self.n_blocks,
            "n_segments": self.n_segments,
            "words_total": self.words_total,
            "words_kept": self.words_kept,
            "kept_word_share": round(self.kept_word_share, 6),
            "mean_confidence": None if self.mean_confidence is None else round(self.mean_confidence, 6),
        }


@dataclass
class Assembled:
    cleaneval: str  # one segment per line, each starting with <h>, <p> or <l>
    plain: str  # the same segments without markers, one per line
    stats: LabelStats
    segments: list[tuple[str, str]]  # (label of the opening block, text)


def assemble(
    blocks: list[Block] | list[str],
    labels: list[str],
    confidences: list[float] | None = None,
    word_counts: list[int] | None = None,
) -> Assembled:
    if len(blocks) != len(labels):
        raise ValueError(f"{len(blocks)} blocks but {len(labels)} labels")
    stats = LabelStats(n_blocks=len(blocks))
    segments: list[tuple[str, list[str]]] = []
    for i, (block, label) in enumerate(zip(blocks, labels)):
        text = block if isinstance(block, str) else block.text
        n_words = word_counts[i] if word_counts is not None else count_words(text)
        entry = stats.per_label[label]
        entry.blocks += 1
        entry.words += n_words
        entry.chars += len(text)
        stats.words_total += n_words
        if label == OTHER:
            continue
        stats.words_kept += n_words
        if label == CONTINUATION and segments:
            segments[-1][1].append(text)
        else:
            segments.append((PARAGRAPH if label == CONTINUATION else label, [text]))
    joined = [(label, " ".join(parts)) for label, parts in segments]
    stats.n_segments = len(joined)
    if confidences:
        stats.mean_confidence = sum(confidences) / len(confidences)
    cleaneval = "\n".join(MARKER[label] + " " + _LITERAL_MARKER.sub(r"&lt;\1>", text) for label, text in joined)
    plain = "\n".join(text for _, text in joined)
    return Assembled(cleaneval, plain, stats, joined)
