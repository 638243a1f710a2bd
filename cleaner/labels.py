"""The block labels: what the CRF, the gold alignment, the seed systems and the output agree on.

A module of its own with no imports, at the bottom of the tree: every stage names labels, and
none should have to import the gold alignment (cleaner.gold.align) to do so.
"""

HEADER, PARAGRAPH, LIST, CONTINUATION, OTHER = "header", "paragraph", "list", "continuation", "other"
LABELS = (HEADER, PARAGRAPH, LIST, CONTINUATION, OTHER)
CONTENT_LABELS = frozenset((HEADER, PARAGRAPH, LIST, CONTINUATION))

