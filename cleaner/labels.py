"""The block labels: what the CRF, the gold alignment, the seed systems and the output agree on.

A module of its own that imports nothing of the project, at the bottom of the tree: every stage names labels, and
none should have to import the gold alignment (cleaner.gold.align) to do so.
"""

from typing import Final

# Final, one a line: the compiled stages that import a label get the string compiled in, not a global looked up.
HEADER: Final = "header"
PARAGRAPH: Final = "paragraph"
LIST: Final = "list"
CONTINUATION: Final = "continuation"
OTHER: Final = "other"
LABELS: Final = (HEADER, PARAGRAPH, LIST, CONTINUATION, OTHER)
CONTENT_LABELS: Final = frozenset((HEADER, PARAGRAPH, LIST, CONTINUATION))

