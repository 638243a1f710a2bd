"""Two training-free baselines.

* `everything`: every block is content (a text dump of the page).
* `largest-group`: the blocks of the `<td>` or `<div>` with the most words of its own text
  (a block belongs to its innermost `div`/`td`/`th` ancestor; blocks outside any form one
  group), the classic "largest text cell" heuristic.
"""

from __future__ import annotations

from ...page.text import count_words
from .base import BlockLabeller, PageInput, run_labels


class Everything(BlockLabeller):
    kind = "everything"
    trainable = False

    def predict(self, page: PageInput) -> list[str]:
        return run_labels([True] * len(page.blocks))


def innermost_group(block) -> int:
    # Group ids are numbered on entering an element, so of two ancestors the inner one
    # has the larger id.
    return max(block.div_group, block.td_group)


class LargestGroup(BlockLabeller):
    kind = "largest-group"
    trainable = False

    def predict(self, page: PageInput) -> list[str]:
        words: dict[int, int] = {}
        keys = [innermost_group(b) for b in page.blocks]
        for b, k in zip(page.blocks, keys):
            words[k] = words.get(k, 0) + count_words(b.text)
        if not words:
            return []
        best = max(words, key=lambda k: (words[k], -k))
        return run_labels([k == best for k in keys])
