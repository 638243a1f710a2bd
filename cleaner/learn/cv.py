"""Cross-validation by document, one loop for every labeller: which pages train fold k's model, and the
loop over the held-out folds.

The CRF (`cleaner.learn.train.cross_validate`, over `PreparedDoc`) and the seed systems
(`cleaner.learn.systems_evaluate.cross_validate_system`, over `SysDoc`) both run `cross_validate_folds`
and supply only how to train a model on pages and how to label and score a held-out page with it.

A page is trainable when its gold has words, aligns with the page's blocks at [train] min_alignment or
better, and the page has blocks; the others are left out of training but still held out and scored: a page
the gold does not describe still counts in the figures. Fold k's model learns from the trainable pages of
the other folds, and with `sites` (page key -> site, `cleaner.gold.data.page_sites`) from none whose site
occurs in fold k, so every held-out page is from a site the model never saw, as most pages of a new crawl are.
"""

from __future__ import annotations

import multiprocessing as mp
import sys
from collections.abc import Callable
from typing import Protocol, TypeVar

from tqdm import tqdm

from ..gold.data import without_sites_of


class FoldDoc(Protocol):
    """What the fold logic reads of a prepared page (PreparedDoc, SysDoc)."""

    key: str
    fold: int | None
    gold_words: int
    coverage: float

    @property
    def n_blocks(self) -> int: ...


class FoldResult(Protocol):
    key: str


D = TypeVar("D", bound=FoldDoc)
M = TypeVar("M")
R = TypeVar("R", bound=FoldResult)


def trainable(docs: list[D], min_alignment: float) -> list[D]:
    """The pages a model may learn from: gold words, gold aligned at `min_alignment` or better, blocks."""
    return [d for d in docs if d.gold_words > 0 and d.coverage >= min_alignment and d.n_blocks]


def scored_folds(docs: list[D], folds: list[int] | None = None) -> list[int]:
    """The folds a cross-validation scores: every fold the pages name, or only those of `folds` when given."""
    return sorted({d.fold for d in docs if d.fold is not None and (folds is None or d.fold in folds)})


def fold_training_docs(docs: list[D], fold: int, min_alignment: float,
                       sites: dict[str, str | None] | None = None,
                       leave_out: frozenset[str] = frozenset()) -> list[D]:
    """The training pages of `fold`'s model: the trainable pages of the other folds, and with
    `sites` only those whose site occurs nowhere in `fold` (pages of no known site are kept). Pages whose
    key is in `leave_out` train no fold's model (they are still held out and scored: a learning curve)."""
    train_docs = trainable([d for d in docs if d.fold != fold and d.key not in leave_out], min_alignment)
    return without_sites_of(train_docs, [d for d in docs if d.fold == fold], sites)


def cross_validate_folds(
    docs: list[D],
    train: Callable[[int, list[D]], M],
    score: Callable[[M, D], R],
    *,
    min_alignment: float,
    sites: dict[str, str | None] | None = None,
    folds: list[int] | None = None,
    processes: int = 1,
    progress: bool = True,
    desc: str = "cv",
    leave_out: frozenset[str] = frozenset(),
) -> list[R]:
    """k-fold CV by document: for each fold of the pages (only those of `folds` when given), `train(k, pages)`
    makes a model of its training pages (`fold_training_docs`) and `score(model, page)` labels and scores each
    of its pages. Results come sorted by page key.

    With `processes` > 1 the folds run in forked workers, which inherit the pages and the two functions
    instead of receiving a copy (a labeller timed in CPU time per page is run with 1: in-process, one fold
    after another)."""
    fold_ids = scored_folds(docs, folds)
    results: list[R] = []
    bar = tqdm(total=len(fold_ids), desc=desc, unit="fold", disable=not progress, file=sys.stderr)

    def run(fold: int) -> list[R]:
        model = train(fold, fold_training_docs(docs, fold, min_alignment, sites, leave_out))
        return [score(model, d) for d in docs if d.fold == fold]

    if processes <= 1 or not fold_ids:
        for k in fold_ids:
            results.extend(run(k))
            bar.update()
    else:
        _FORKED["run"] = run  # the workers are forked: they inherit it with the pages it reads
        try:
            with mp.get_context("fork").Pool(min(processes, len(fold_ids))) as pool:
                for part in pool.imap_unordered(_run_forked, fold_ids):
                    results.extend(part)
                    bar.update()
        finally:
            _FORKED.clear()
    bar.close()
    results.sort(key=lambda r: r.key)
    return results


_FORKED: dict = {}


def _run_forked(fold: int) -> list:
    return _FORKED["run"](fold)
