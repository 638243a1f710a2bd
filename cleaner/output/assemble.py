"""Labels -> CleanEval text and per-document label statistics.

`header` / `paragraph` / `list` blocks open a new segment marked `<h>` / `<p>` / `<l>`;
`continuation` joins the current segment (or opens a paragraph when none is open: a
continuation cannot continue boilerplate); `other` is dropped.

Blocks are joined as a browser shows them (`Block.gap`): nothing between two text nodes that
touch (`Speech<a>,</a>` is "Speech,"), a space where the page has whitespace, a line break where
it has `<br>` or a block element's edge, so a segment may span lines (a line without a marker
continues the segment, as in CleanEval's own format). A browser shows no half words: a block
that touches the kept block before it continues that block's segment whatever its label, and a
dropped block that touches a kept one (the "." after a link, the rest of a word) is kept with it
(`keep_touching`; the statistics count the labels so amended, which made the text).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final

from ..label.decide import continues_segment
from ..labels import CONTINUATION, HEADER, LABELS, LIST, OTHER, PARAGRAPH
from ..page.segment import BlockTable
from ..page.text import count_words

MARKER: Final = {HEADER: "<h>", PARAGRAPH: "<p>", LIST: "<l>"}
# Page text that happens to contain a marker ("the <p> tag") would open a false segment:
# escape it as an entity, which the CleanEval scorer decodes back to the same words.
_LITERAL_MARKER: Final = re.compile(r"<([phlPHL])>")


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
    # The word precision / recall / F1 the labeller expects of itself on this page (`expected_scores`).
    expected_precision: float | None = None
    expected_recall: float | None = None
    expected_f1: float | None = None
    # The page had more than [limits] max_blocks blocks: only the first max_blocks were labelled
    # (set by cleaner.api; the text of the rest is missing from the output).
    truncated: bool = False

    @property
    def kept_word_share(self) -> float:
        return self.words_kept / self.words_total if self.words_total else 0.0

    def to_dict(self) -> dict:
        return {
            "labels": {k: {"blocks": v.blocks, "words": v.words, "chars": v.chars} for k, v in self.per_label.items()},
            "n_blocks": self.n_blocks,
            "n_segments": self.n_segments,
            "words_total": self.words_total,
            "words_kept": self.words_kept,
            "kept_word_share": round(self.kept_word_share, 6),
            "mean_confidence": _rounded(self.mean_confidence),
            "expected_precision": _rounded(self.expected_precision),
            "expected_recall": _rounded(self.expected_recall),
            "expected_f1": _rounded(self.expected_f1),
            "truncated": self.truncated,
        }


def _rounded(x: float | None) -> float | None:
    return None if x is None else round(x, 6)


def expected_scores(word_counts: list[int], kept: list[bool], p_content: list[float]) -> tuple[float, float, float]:
    """(precision, recall, F1) of the kept words that the block probabilities predict.

    A block's P(content) is the chance that its words belong to the gold text. The CRF's marginals are
    calibrated (of the content/other decisions it takes with probability 0.8-0.9, 80 % are right:
    docs/confidence.md), so the expected number of kept gold words is the sum over kept blocks of words x
    P(content), and the expected number of gold words the same sum over all blocks. Read per page it ranks
    pages by their real word F1 (Spearman 0.53 on held-out pages, against 0.20 for the mean confidence)
    and flags the bad ones: a filter for pages the cleaner is unsure of. The scorer's conventions:
    nothing kept has precision 1, nothing expected has recall 1."""
    hit = n_gold = 0.0
    n_kept = 0
    for w, k, p in zip(word_counts, kept, p_content):  # one pass: this runs for every page
        n_gold += w * p
        if k:
            hit += w * p
            n_kept += w
    precision = hit / n_kept if n_kept else 1.0
    recall = hit / n_gold if n_gold > 0 else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
    return precision, recall, f1


def keep_touching(labels: list[str], gaps: list[str]) -> list[str]:
    """`labels` with every dropped block that touches a kept block (gap "": no space, no line
    between them) kept with it, after it as a continuation, before it with its label."""
    if "" not in gaps:
        return labels
    out = list(labels)
    n = len(out)
    for i in range(1, n):
        if gaps[i] == "" and out[i] == OTHER and out[i - 1] != OTHER:
            out[i] = CONTINUATION
    for i in range(n - 2, -1, -1):
        if gaps[i + 1] == "" and out[i] == OTHER and out[i + 1] != OTHER:
            out[i] = out[i + 1]  # (the block after it then continues its segment: they touch)
    return out


def _gap_over(gaps: list[str], previous: int, i: int) -> str:
    """What separates block i from the kept block `previous` across dropped blocks: a line break
    if the page breaks the line anywhere between them, else a space (the dropped text was there)."""
    if previous < 0:
        return "\n"
    return "\n" if "\n" in gaps[previous + 1 : i + 1] else " "


@dataclass
class Assembled:
    cleaneval: str  # each segment starts a line with <h>, <p> or <l> (and goes on unmarked past a line break)
    plain: str  # the same segments without markers, one or more lines each
    stats: LabelStats
    segments: list[tuple[str, str]]  # (label of the opening block, text)


def assemble(
    blocks: BlockTable | Sequence[str],
    labels: list[str],
    confidences: list[float] | None = None,
    word_counts: list[int] | None = None,
    p_content: list[float] | None = None,
    gaps: list[str] | None = None,
    shown: dict[int, str] | None = None,
) -> Assembled:
    """The CleanEval text, plain text and statistics of labelled blocks; `confidences` (the
    probability of each block's label) and `p_content` (each block's P(content)) add the mean
    confidence and the expected scores to the statistics. Blocks given as texts are joined by
    `gaps` and shown as `shown` ({index: text}; see Block.gap and Block.shown), or by spaces; a table's by its own."""
    if len(blocks) != len(labels):
        raise ValueError(f"{len(blocks)} blocks but {len(labels)} labels")
    stats = LabelStats(n_blocks=len(blocks))
    segments: list[tuple[str, list[str]]] = []
    previous = -1  # the last kept block
    shown_texts: list[str | None] | None = None
    if isinstance(blocks, BlockTable):
        texts = blocks.text
        shown_texts = blocks.shown
        if gaps is None:
            gaps = blocks.gap
    else:
        texts = list(blocks)
        if gaps is None:
            gaps = [" "] * len(texts)
    if word_counts is None:
        word_counts = [count_words(text) for text in texts]
    labels = keep_touching(labels, gaps)
    for i, label in enumerate(labels):
        text = texts[i]
        n_words = word_counts[i]
        entry = stats.per_label[label]
        entry.blocks += 1
        entry.words += n_words
        entry.chars += len(text)
        stats.words_total += n_words
        if label == OTHER:
            continue
        stats.words_kept += n_words
        gap = gaps[i] if previous == i - 1 else _gap_over(gaps, previous, i)
        if shown_texts is not None:
            shown_text = shown_texts[i]
            if shown_text is not None:
                text = shown_text
        elif shown and i in shown:
            text = shown[i]
        if segments and continues_segment(label, gap, previous == i - 1):
            segments[-1][1].append(gap)
            segments[-1][1].append(text)
        else:
            segments.append((PARAGRAPH if label == CONTINUATION else label, [text]))
        previous = i
    joined = [(label, "".join(parts)) for label, parts in segments]
    stats.n_segments = len(joined)
    if confidences:
        stats.mean_confidence = sum(confidences) / len(confidences)
    if p_content is not None and blocks:
        stats.expected_precision, stats.expected_recall, stats.expected_f1 = expected_scores(
            word_counts, [y != OTHER for y in labels], p_content)
    # (searched only in a text holding a "<": a substitution with a group in its template runs the re module's
    # Python code at every call, 1.2 M instructions a page of 2025 where almost no text holds one)
    cleaneval = "\n".join(MARKER[label] + " " + (_LITERAL_MARKER.sub(r"&lt;\1>", text) if "<" in text else text)
                           for label, text in joined)
    plain = "\n".join(text for _, text in joined)
    return Assembled(cleaneval, plain, stats, joined)
