"""Gold alignment: a hand-cleaned gold text -> one training label per block.

Gold words are aligned to the page's block words by a longest common subsequence (the
scorer's words and alignment, so that training labels and evaluation agree on what a
word is). A block most of whose words align is content: the first block that carries
words of a gold segment opens it and gets the segment's marker (`<h>` header, `<l>`
list, `<p>` or unmarked: paragraph); later content blocks of the same segment are
`continuation`; everything else is `other`.

Dragnet golds have no markers (article and comments are both content): each gold line
is a segment, and the opening block's label comes from its containers (h1-h6 -> header,
li -> list, else paragraph).

The fraction of gold words aligned measures whether a gold file describes its page at
all (script-only pages, stub golds); training leaves out documents below a threshold.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..labels import CONTINUATION, HEADER, LIST, OTHER, PARAGRAPH
from ..page.segment import Block
from .gold import Segment, has_markers, parse_segments
from .score import lcs_alignment, words

MARKER_LABEL = {"h": HEADER, "p": PARAGRAPH, "l": LIST, None: PARAGRAPH}
_HEADER_TAGS = frozenset(("h1", "h2", "h3", "h4", "h5", "h6"))
# An LCS bit table above this many cells (|page words| x |gold words|, ~375 MB) is not built: such a
# document is reported as unalignable instead of using gigabytes of memory.
MAX_ALIGN_CELLS = 3_000_000_000


@dataclass
class Alignment:
    labels: list[str]
    gold_words: int
    aligned_gold_words: int
    page_words: int
    note: str = ""

    @property
    def coverage(self) -> float:
        """Fraction of gold words found on the page (1.0 for an empty gold)."""
        return self.aligned_gold_words / self.gold_words if self.gold_words else 1.0


def _segments_for(gold_text: str) -> tuple[list[Segment], bool]:
    """Gold segments, and whether they carry CleanEval markers."""
    if has_markers(gold_text):
        return parse_segments(gold_text), True
    # Dragnet-style: no markers; one segment per non-empty line (separators dropped by
    # parse_segments on the whole text, so parse line by line after that).
    segments: list[Segment] = []
    for seg in parse_segments(gold_text):
        for line in seg.text.splitlines():
            if line.strip():
                segments.append(Segment(None, line))
    return segments, False


def container_label(block: Block) -> str:
    if not block.ancestors.isdisjoint(_HEADER_TAGS):
        return HEADER
    if "li" in block.ancestors:
        return LIST
    return PARAGRAPH


def align_blocks(blocks: list[Block], gold_text: str, min_block_share: float = 0.5) -> Alignment:
    """Label every block from the gold text (see module docstring)."""
    segments, marked = _segments_for(gold_text)
    g_words: list[str] = []
    g_seg: list[int] = []
    for si, seg in enumerate(segments):
        w = words(seg.text)
        g_words.extend(w)
        g_seg.extend([si] * len(w))
    p_words: list[str] = []
    p_block: list[int] = []
    for bi, b in enumerate(blocks):
        w = words(b.text)
        p_words.extend(w)
        p_block.extend([bi] * len(w))
    labels = [OTHER] * len(blocks)
    if not g_words or not p_words:
        return Alignment(labels, len(g_words), 0, len(p_words), "empty")
    if len(g_words) * len(p_words) > MAX_ALIGN_CELLS:
        return Alignment(labels, len(g_words), 0, len(p_words), "too_large_to_align")
    vocab: dict[str, int] = {}
    p_ids = [vocab.setdefault(w, len(vocab)) for w in p_words]
    g_ids = [vocab.setdefault(w, len(vocab)) for w in g_words]
    align = lcs_alignment(p_ids, g_ids)

    # Per block: number of aligned words and the gold segment of its first aligned word.
    n_words = [0] * len(blocks)
    n_aligned = [0] * len(blocks)
    first_seg = [-1] * len(blocks)
    for pi, bi in enumerate(p_block):
        n_words[bi] += 1
        gi = align.get(pi)
        if gi is not None:
            n_aligned[bi] += 1
            if first_seg[bi] < 0:
                first_seg[bi] = g_seg[gi]
    opened: set[int] = set()
    for bi, block in enumerate(blocks):
        if not n_words[bi] or n_aligned[bi] / n_words[bi] < min_block_share:
            continue
        seg_index = first_seg[bi]
        if seg_index in opened:
            labels[bi] = CONTINUATION
            continue
        # A block whose first aligned word lies in a later segment than an open one
        # opens that segment (segments the page skipped stay unopened).
        opened.add(seg_index)
        if marked:
            labels[bi] = MARKER_LABEL[segments[seg_index].marker]
        else:
            labels[bi] = container_label(block)
    return Alignment(labels, len(g_words), len(align), len(p_words))
