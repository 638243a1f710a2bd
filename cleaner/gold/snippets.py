"""Must-have and must-not snippets: a second measure of an output, beside the word scorer (cleaner.gold.score).

A set may list, per page, short passages a correct output must contain (`with`) and passages it must not contain
(`without`): wcxb's `snippets.jsonl` (3-8 words each; 6,659 and 5,824 over its 1,497 pages), in the way trafilatura's
own benchmark judges extractors. The word scorer weighs a page by its words; the snippets weigh each listed passage
alike, so a page's short menus, buttons and banners count as much as its long paragraphs.

A snippet is found when its text, normalised, is a substring of the output's, normalised: Unicode NFKC, case folded,
every run of whitespace one space (an output's line breaks fall where a snippet's spaces are). Read so, wcxb's gold
texts hold 99.3 % of their pages' `with` snippets and 0.3 % of the `without` ones (tests/test_snippets.py).

The counts (summed over pages, as trafilatura's benchmark sums them): a `with` snippet found is a true positive, one
missed a false negative; a `without` snippet found is a false positive, one absent a true negative.
"""

from __future__ import annotations

import json
import unicodedata
from dataclasses import dataclass
from pathlib import Path

SNIPPETS_FILE = "snippets.jsonl"


@dataclass(frozen=True)
class PageSnippets:
    """One page's snippets: what its output must contain, and what it must not."""

    with_: tuple[str, ...]
    without: tuple[str, ...]


@dataclass
class SnippetCounts:
    found: int = 0  # `with` snippets in the output (true positives)
    missed: int = 0  # `with` snippets not in it (false negatives)
    kept: int = 0  # `without` snippets in it (false positives)
    left_out: int = 0  # `without` snippets not in it (true negatives)

    def __add__(self, other: SnippetCounts) -> SnippetCounts:
        return SnippetCounts(self.found + other.found, self.missed + other.missed, self.kept + other.kept,
                             self.left_out + other.left_out)

    @property
    def precision(self) -> float:
        return self.found / (self.found + self.kept) if self.found + self.kept else 1.0

    @property
    def recall(self) -> float:
        return self.found / (self.found + self.missed) if self.found + self.missed else 1.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0

    @property
    def accuracy(self) -> float:
        """The share of all snippets judged right: `with` found and `without` absent."""
        total = self.found + self.missed + self.kept + self.left_out
        return (self.found + self.left_out) / total if total else 1.0


def normalise(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def load_snippets(data_dir: str | Path) -> dict[str, PageSnippets]:
    """`dataset/id` -> its snippets, from the `snippets.jsonl` of every set under `data_dir` that has one (a data
    root, or one set's folder)."""
    root = Path(data_dir)
    sets = [root] if (root / SNIPPETS_FILE).is_file() else sorted(d for d in root.iterdir() if d.is_dir())
    out: dict[str, PageSnippets] = {}
    for folder in sets:
        path = folder / SNIPPETS_FILE
        if not path.is_file():
            continue
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                if line.strip():
                    row = json.loads(line)
                    out[f"{folder.name}/{row['id']}"] = PageSnippets(tuple(row.get("with", ())),
                                                                     tuple(row.get("without", ())))
    return out


def snippet_counts(output: str, snippets: PageSnippets) -> SnippetCounts:
    """How the snippets of one page fare in its `output` (plain text)."""
    text = normalise(output)
    found = sum(1 for s in snippets.with_ if normalise(s) in text)
    kept = sum(1 for s in snippets.without if normalise(s) in text)
    return SnippetCounts(found, len(snippets.with_) - found, kept, len(snippets.without) - kept)
