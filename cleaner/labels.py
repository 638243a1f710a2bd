"""The block labels: what the CRF, the gold alignment, the seed systems and the output agree on.

A module of its own with no imports, at the bottom of the tree: every stage names labels, and
none should have to import the gold alignment (cleaner.gold.align) to do so.
"""

HEADER, PARAGRAPH, LIST, CONTINUATION, OTHER = "header", "paragraph", "list", "continuation", "other"
LABELS = (HEADER, PARAGRAPH, LIST, CONTINUATION, OTHER)
CONTENT_LABELS = frozenset((HEADER, PARAGRAPH, LIST, CONTINUATION))


def continues_segment(label: str, gap: str, follows_kept: bool) -> bool:
    """Whether a kept block joins the segment of the kept block before it instead of opening its own: a continuation
    does, and so does a block that touches it (`follows_kept`: the block before it is kept; gap "": Block.gap, no
    space and no line between them), since a browser shows no half words. cleaner.output.assemble cuts the text into
    segments by it, and cleaner.label.decide.drop_repeats finds the same segments."""
    return label == CONTINUATION or (gap == "" and follows_kept)
