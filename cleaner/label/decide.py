"""From CRF output to final block labels: Viterbi, refined by the marginals.

Measured corrections to the Viterbi path (the first two chosen on validation fold 1, confirmed on
folds 0 and 2-5; the third, which has no parameter, on all folds; see docs/eval.md and
docs/ablation.md):

* A block Viterbi calls `other` whose marginal probability of being content is above
  `content_threshold` is kept, with its most probable content label. The sequence
  model's strong other->other transitions otherwise drop content-looking blocks that
  sit between boilerplate.
* When the labelling keeps almost nothing (< `fallback_min_kept_share` of the page's
  words), the page is not given up: the maximum-scoring contiguous block range
  (Pasternack & Roth's maximum subsequence, in linear time) over word-weighted scores
  P(content) - mean P(content) is kept. Viterbi sometimes labels a whole page of an
  unusual layout as boilerplate; its marginals still rank the real content highest.
* With `f1_optimal_threshold`, blocks with words are then also kept (after the
  fallback, so that they never stop a page from falling back) down to half the best word
  F1 the page's marginals let it expect, when that is below the threshold. Keeping the blocks of
  highest P(content) first, the expected word F1 (the one `expected_f1` reports,
  cleaner.output.assemble.expected_scores) peaks at some F*; a block is worth keeping for F1 when its
  P(content) exceeds F* / 2 (the F1-optimal threshold, Lipton, Elkan & Narayanaswamy 2014). On a
  page the model is sure of, F* / 2 is near 0.5 and the configured threshold stands; on a page it
  is unsure of, recall is worth more and content-looking blocks with P(content) 0.3-0.45 are kept.
* With `keep_headline` naming the convention a page is cleaned by, the page's headline (`headline_block`: the
  <h1> line holding most words of the page's <title>, all but a fifth of its words in it) is kept as a header
  when the labelling drops it and keeps a block after it. The article sets' gold starts with it (585 of 656
  chaos, big5-2013/2017 and fundus pages), and a model trained on all of them still dropped it on 229 of those
  585 (docs/modern.md, "Where the losses are"); wcxb's main-content gold mostly omits it, so `main` does not
  keep it (docs/modern.md section 7 has the unseen-site figures of both).
* With `fill_main` naming the convention and the page's main container given (`inside`, block by block:
  cleaner.page.cues.main_relations), a dropped block of that container with words, between the first and the
  last block kept, is kept when its P(content) exceeds `fill_main_threshold`. Under `main` a page's content is
  the whole of the subtree holding most of its prose; on a site it has not seen, the CRF keeps one part of it
  and drops the rest (spec rows, guide sections between widgets, a listing's items) with P(content) 0.1-0.3
  (docs/modern.md section 8). Blocks under an id/class token of a `fill_main_skip` cue are not filled: a blog
  post's container often holds its comments, which `main` leaves out. On a page of a `fill_main_heaviest` type the
  items of its heaviest repeated group are part of that container (a listing's items, outside the container of its
  most prose), and on a page of a `fill_main_to_end` type the fill runs from the first kept block to the container's
  end (a product's description after the widgets kept last); docs/modern.md section 22.
* With `drop_repeats` naming the convention, a kept segment (a kept block and the blocks that continue or touch it)
  of at least `drop_repeats_min_words` words whose case-folded words are those of an earlier kept segment is dropped
  (`drop_repeats`): responsive pages hold a description or specification twice, one copy for each screen size,
  and a reader sees one. CleanEval's gold keeps repeats, so its convention does not drop them.

`settle` applies `keep_headline` and `drop_repeats`, which look at the page's blocks, to the labels of `decide` (or
of a stacked model): every caller (the API, and so the job and the tools; training and evaluation) goes through it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Final

import numpy as np

from .. import compiled_twin
from ..labels import CONTINUATION, HEADER, LIST, OTHER, PARAGRAPH
from ..page.segment import BlockTable
from ..page.text import compiled_text_module

# (the labels' Final strings are compiled in here as if written here: no copy of them is needed for speed)
CONTENT: Final = (HEADER, PARAGRAPH, LIST, CONTINUATION)


def continues_segment(label: str, gap: str, follows_kept: bool) -> bool:
    """Whether a kept block joins the segment of the kept block before it instead of opening its own: a continuation
    does, and so does a block that touches it (`follows_kept`: the block before it is kept; gap "": Block.gap, no
    space and no line between them), since a browser shows no half words. cleaner.output.assemble cuts the text into
    segments by it, and drop_repeats finds the same segments. (Here, in a compiled module, not in cleaner.labels:
    called from compiled code into an interpreted function, it cost 0.24 M instructions a page of 2025.)"""
    return label == CONTINUATION or (gap == "" and follows_kept)


@dataclass(frozen=True)
class DecisionSettings:
    content_threshold: float = 0.45
    fallback_min_kept_share: float = 0.02
    # Lower content_threshold on a page to F* / 2, F* its best expected word F1 (module docstring).
    f1_optimal_threshold: bool = False
    # The conventions whose pages keep their headline (headline_block) when a block after it is kept (module
    # docstring); a model without conventions is given none, so it never does.
    keep_headline: tuple[str, ...] = ()
    # The conventions whose pages keep the blocks of their main container between the first and the last kept
    # block when P(content) exceeds fill_main_threshold (module docstring); none for a model without conventions.
    fill_main: tuple[str, ...] = ()
    fill_main_threshold: float = 0.1
    # Blocks under an id/class token of these cues ([features.cues.idclass]) are never filled: a post's comments.
    fill_main_skip: tuple[str, ...] = ()
    # The page types whose heaviest repeated group's items are part of the main container the fill keeps from
    # (cleaner.page.cues.main_container), and those whose container is filled to its end (decide's `fill_to_end`).
    fill_main_heaviest: tuple[str, ...] = ()
    fill_main_to_end: tuple[str, ...] = ()
    # The conventions whose pages keep a repeated segment of at least drop_repeats_min_words words once.
    drop_repeats: tuple[str, ...] = ()
    drop_repeats_min_words: int = 8

    def __reduce__(self) -> tuple:
        # Pickled as the call that makes it (a model is pickled to the workers): mypyc compiles this class, and
        # pickle's default, setting the fields one by one, is refused by a frozen compiled class.
        return (DecisionSettings, tuple(getattr(self, f.name) for f in fields(self)))

    @classmethod
    def from_config(cls, config) -> DecisionSettings:
        # every key is there and typed: load_config checks the section (cleaner/settings.py), and its
        # defaults are conf/default.toml's (the dataclass's own are the plain decision of tests and first passes)
        d = config["decision"]
        optimal = d["f1_optimal_threshold"]
        if not isinstance(optimal, bool):  # an overlay laid in code (Config.overlay) is not checked
            raise ValueError(f"[decision] f1_optimal_threshold must be true or false, not {optimal!r}")
        known = config["train"]["conventions"]
        named = {}
        for key in ("keep_headline", "fill_main", "drop_repeats"):
            conventions = d[key]
            if not isinstance(conventions, list) or any(c not in known for c in conventions):
                raise ValueError(f"[decision] {key} must list conventions of {known}, not {conventions!r}")
            named[key] = tuple(conventions)
        skip = d["fill_main_skip"]
        cues = config["features"]["cues"]["idclass"]
        if not isinstance(skip, list) or any(c not in cues for c in skip):
            raise ValueError(f"[decision] fill_main_skip must list cues of [features.cues.idclass], not {skip!r}")
        kinds = [*config["features"]["cues"]["page"]["order"], "unknown"]
        for key in ("fill_main_heaviest", "fill_main_to_end"):
            types = d[key]
            if not isinstance(types, list) or any(t not in kinds for t in types):
                raise ValueError(f"[decision] {key} must list page types of {kinds}, not {types!r}")
            named[key] = tuple(types)
        return cls(content_threshold=float(d["content_threshold"]),
                   fallback_min_kept_share=float(d["fallback_min_kept_share"]), f1_optimal_threshold=optimal,
                   keep_headline=named["keep_headline"], fill_main=named["fill_main"],
                   fill_main_threshold=float(d["fill_main_threshold"]), fill_main_skip=tuple(skip),
                   fill_main_heaviest=named["fill_main_heaviest"], fill_main_to_end=named["fill_main_to_end"],
                   drop_repeats=named["drop_repeats"], drop_repeats_min_words=int(d["drop_repeats_min_words"]))

    def keeps_headline(self, convention: str | None) -> bool:
        """Whether a page cleaned by `convention` (what the model is given; None: a model without conventions)
        keeps its headline."""
        return convention is not None and convention in self.keep_headline

    def fills_main(self, convention: str | None) -> bool:
        """Whether a page cleaned by `convention` keeps the rest of its main container (module docstring)."""
        return convention is not None and convention in self.fill_main

    def drops_repeats(self, convention: str | None) -> bool:
        """Whether a page cleaned by `convention` keeps a repeated segment once (module docstring)."""
        return convention is not None and convention in self.drop_repeats


_WORD: Final = re.compile(r"\w+")


def words_key(text: str) -> str:
    """A text's case-folded words (`\\w+`), each followed by a space: two segments have the same case-folded words
    iff their keys, joined, are equal (a space is no word character). The readable reference of
    compiled_text.words_key."""
    return "".join([w + " " for w in _WORD.findall(text.casefold())])


_COMPILED_TEXT: Final = compiled_text_module()
_words_key: Callable[[str], str] = words_key if _COMPILED_TEXT is None else _COMPILED_TEXT.words_key
# A headline of fewer words matches too many titles by chance ("Home", "News").
HEADLINE_MIN_WORDS: Final = 2
# The share of the headline's words that the <title> must hold ("Headline - Site" holds all of them).
HEADLINE_TITLE_SHARE: Final = 0.8


def headline_block(blocks: BlockTable, title: str) -> list[int]:
    """The blocks of the page's headline: of the runs of blocks inside an <h1> that one line shows (blocks
    joined without a line break, as `Storm <em>hits</em> the coast`), the one holding most words of the
    page's <title> (case-folded), of at least HEADLINE_MIN_WORDS words, HEADLINE_TITLE_SHARE of them in the
    title; [] without one. A site-name <h1> ("Daily Example") loses to the headline, which holds more."""
    title_words = set(_WORD.findall(title.casefold()))
    if not title_words:
        return []
    runs: list[list[int]] = []
    gaps = blocks.gap
    for i, containers in enumerate(blocks.containers):
        if "h1" not in containers:
            continue
        if runs and runs[-1][-1] == i - 1 and gaps[i] != "\n":
            runs[-1].append(i)
        else:
            runs.append([i])
    best: list[int] = []
    best_hits = 0
    for run in runs:
        ws = [w for i in run for w in _WORD.findall(blocks.text[i].casefold())]
        hits = sum(w in title_words for w in ws)
        if len(ws) >= HEADLINE_MIN_WORDS and hits >= HEADLINE_TITLE_SHARE * len(ws) and hits > best_hits:
            best, best_hits = run, hits
    return best


def keep_headline(labels: list[str], headline: list[int]) -> list[str]:
    """`labels` with the headline's blocks kept (its first as a header, the rest continuing it) when the
    labelling dropped all of them and keeps a block after them."""
    if not headline or any(labels[i] != OTHER for i in headline):
        return labels
    if all(y == OTHER for y in labels[headline[-1] + 1:]):
        return labels
    out = list(labels)
    for k, i in enumerate(headline):
        out[i] = "continuation" if k else "header"
    return out


def drop_repeats(labels: list[str], texts: list[str], gaps: list[str] | None, word_counts: list[int],
                 min_words: int) -> list[str]:
    """`labels` with every kept segment of at least `min_words` words (`word_counts`, each block's) whose case-folded
    words are those of an earlier kept segment dropped. A segment is what cleaner.output.assemble makes one
    (continues_segment: a kept block and the kept blocks after it that continue it or touch it;
    `gaps`: Block.gap, None: no block touches another)."""
    segments: list[list[int]] = []
    previous = -1
    for i, label in enumerate(labels):
        if label == OTHER:
            continue
        if segments and continues_segment(label, gaps[i] if gaps is not None else " ", previous == i - 1):
            segments[-1].append(i)
        else:
            segments.append([i])
        previous = i
    # Only a segment as long as another can repeat it: most pages have no two, and reading every kept block's words
    # cost 0.17 ms a page (median) where this costs a sum (docs/modern.md section 9).
    sizes = [sum(word_counts[i] for i in segment) for segment in segments]
    count: dict[int, int] = {}
    for size in sizes:
        if size >= min_words:
            count[size] = count.get(size, 0) + 1
    if all(c < 2 for c in count.values()):
        return labels
    seen: set[str] = set()
    out = labels
    for segment, size in zip(segments, sizes):
        if count.get(size, 0) < 2:
            continue
        words = "".join([_words_key(texts[i]) for i in segment])
        if words in seen:
            if out is labels:
                out = list(labels)
            for i in segment:
                out[i] = OTHER
        else:
            seen.add(words)
    return out


def settle(labels: list[str], settings: DecisionSettings, convention: str | None, texts: list[str],
           gaps: list[str] | None, word_counts: list[int], headline: Callable[[], list[int]]) -> list[str]:
    """The page's final labels: `labels` (the labelling's decision) with the page's headline kept and its repeated
    segments dropped as the convention asks (module docstring). `headline` gives the headline's blocks
    (headline_block), asked only when the convention keeps it."""
    if settings.keeps_headline(convention):
        labels = keep_headline(labels, headline())
    if settings.drops_repeats(convention):
        labels = drop_repeats(labels, texts, gaps, word_counts, settings.drop_repeats_min_words)
    return labels


def best_expected_f1_reference(word_counts: list[int], p_content: list[float]) -> float:
    """The highest expected word F1 of a page over the ways to keep its blocks (the expectation of
    cleaner.output.assemble.expected_scores: a block's words are gold with probability P(content)). The
    best choice keeps exactly the blocks with P(content) above F* / 2 (keeping a block raises
    2 * hit / (kept + expected gold) iff its P(content) exceeds half the ratio), so only the
    choices that keep the blocks of highest P(content) first are tried: the blocks with words by P(content)
    and words, highest first (`sorted(zip(p_content, word_counts), reverse=True)`), each choice's hit and kept
    words the running sums in that order. In NumPy, the same floats as that loop (tests/test_decide.py holds them
    equal): a running sum adds in order, as the loop does; sorting the page's (P, words) tuples and the loop cost
    about 2,500 instructions a block."""
    expected_gold = sum(w * p for w, p in zip(word_counts, p_content))
    words = np.array(word_counts, dtype=np.int64)
    p = np.array(p_content, dtype=np.float64)
    with_words = words != 0
    words, p = words[with_words], p[with_words]
    if not len(words):
        return 0.0
    order = np.lexsort((words, p))[::-1]  # by P(content), then words, highest first
    words, p = words[order], p[order]
    hit = np.cumsum(words * p)
    kept = np.cumsum(words).astype(np.float64)  # (exact: sums of counts)
    best = float((2 * hit / (kept + expected_gold)).max())
    return best if best > 0.0 else 0.0


_CHAIN: Final = compiled_twin("label.compiled_chain")
# (compiled, the same floats over C arrays: the NumPy calls on lists converted each time cost 0.59 M instructions a
# page of 2025, most of it NumPy's own per call and per converted float; the readable reference is
# best_expected_f1_reference)
best_expected_f1: Callable[[list[int], list[float]], float] = (
    best_expected_f1_reference if _CHAIN is None else _CHAIN.best_expected_f1)


def max_subsequence(scores: list[float]) -> tuple[int, int]:
    """(start, end) inclusive of the maximum-sum contiguous range; (0, -1) when none is positive."""
    best = cur = 0.0
    start, best_range = 0, (0, -1)
    for i, s in enumerate(scores):
        if cur <= 0:
            cur, start = 0.0, i
        cur += s
        if cur > best:
            best, best_range = cur, (start, i)
    return best_range


def _best_content(row: dict[str, float]) -> str:
    """The content label of highest marginal in `row`, the first of CONTENT on a tie (as max(CONTENT, key=...) picks:
    a loop, where the key's closure cost 5,300 instructions a call)."""
    best, top = CONTENT[0], row.get(CONTENT[0], 0.0)
    for y in CONTENT[1:]:
        p = row.get(y, 0.0)
        if p > top:
            best, top = y, p
    return best


def decide(
    labels: list[str],
    marginals,
    word_counts: list[int],
    settings: DecisionSettings,
    p_other: list[float] | None = None,
    inside: list[bool] | None = None,
    fill_to_end: bool = False,
) -> tuple[list[str], str]:
    """Final labels and how they were decided ("viterbi", "threshold" or "fallback").

    `marginals[i]` maps every label to its marginal probability at block i; it is only
    indexed for blocks that change label when `p_other` (P(other) per block) is given.
    `inside` (block i lies in the page's main container), given when the convention fills the main container
    (DecisionSettings.fills_main), keeps its blocks between the first and the last kept one above
    `fill_main_threshold`; with `fill_to_end` (the page's type is one of `fill_main_to_end`), from the first kept
    block to the container's end.
    """
    n = len(labels)
    if not n:
        return labels, "viterbi"
    if p_other is None:
        p_other = [marginals[i].get(OTHER, 0.0) for i in range(n)]
    out = list(labels)
    how = "viterbi"
    t = settings.content_threshold
    q = [1.0 - p for p in p_other]  # P(content)
    for i, label in enumerate(labels):
        if label == OTHER and q[i] > t:
            out[i] = _best_content(marginals[i])
            how = "threshold"
    total = sum(word_counts)
    kept = sum(w for w, y in zip(word_counts, out) if y != OTHER)
    if total and kept / total < settings.fallback_min_kept_share:
        mean_q = sum(qi * w for qi, w in zip(q, word_counts)) / total
        start, end = max_subsequence([w * (qi - mean_q) for qi, w in zip(q, word_counts)])
        for i in range(start, end + 1):
            if out[i] == OTHER and word_counts[i]:
                out[i] = _best_content(marginals[i])
        if end >= start:
            how = "fallback"
    # After the fallback, which looks at what the configured threshold keeps: blocks kept for F1 must
    # not stop a page that keeps almost nothing from falling back to its most content-like region.
    if settings.f1_optimal_threshold:
        t_page = best_expected_f1(word_counts, q) / 2
        if t_page < t:
            for i, label in enumerate(out):
                if label == OTHER and q[i] > t_page and word_counts[i]:
                    out[i] = _best_content(marginals[i])
                    if how == "viterbi":
                        how = "threshold"
    if inside is not None:
        kept_at = [i for i, y in enumerate(out) if y != OTHER]
        if kept_at:
            t_fill = settings.fill_main_threshold
            for i in range(kept_at[0] + 1, n if fill_to_end else kept_at[-1]):
                if out[i] == OTHER and inside[i] and q[i] > t_fill and word_counts[i]:
                    out[i] = _best_content(marginals[i])
                    if how == "viterbi":
                        how = "threshold"
    return out, how
