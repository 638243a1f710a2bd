"""The project's scorer: word precision/recall/F1, text-only and markup figures.

Every quality figure of the project comes from here, as specified in the data
README ("The scorer"). In short, per document:

* both texts are split into segments (`cleaner.gold.gold.parse_segments`), then into
  words: HTML entities decoded, NFKC, casefold, ``re.findall(r"\\w+")``, except that
  every Han or kana character is a word of its own (`words`);
* m = LCS length of the word sequences; P = m/|p|, R = m/|g|, F1 = 2m/(|p|+|g|);
* text-only = 1 - Lev(p, g) / max(|p|, |g|) over words;
* markup (only when the gold has marked segments): over one LCS alignment, a
  marked predicted segment is correct when its first word is aligned to the first
  word of a gold segment with the same marker.

LCS, alignment and edit distance run in rapidfuzz's compiled code on lists of
integer word ids: pages have tens of thousands of words, and a Python DP would be
quadratic in interpreted code.

Segments whose text has no word (e.g. ``<p> ***``) have no first word: they are
left out of both markup denominators, for prediction and gold alike. Counting them
in the prediction would make a text score below 1 against itself.
"""

from __future__ import annotations

import html
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass
from statistics import fmean

from rapidfuzz.distance import LCSseq, Levenshtein

from cleaner.gold.gold import parse_segments, read_text

__all__ = ["DocScore", "words", "score_document", "aggregate", "lcs_alignment", "bootstrap_interval", "wcxb_f1"]

_WORD_RE = re.compile(r"\w+")
# Han and kana (the data README's ranges): Chinese and Japanese put no space between words, so
# each such character is a word, as a run of Latin letters is. A run of other word characters
# stops at one; a character of the ranges that is not a word character (the kana middle dot,
# unassigned code points) is no word, as elsewhere.
_HAN_KANA = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002fa1f"
_HAN_KANA_RE = re.compile(f"[{_HAN_KANA}]")
_WORD_HAN_KANA_RE = re.compile(f"[^\\W{_HAN_KANA}]+|(?=\\w)[{_HAN_KANA}]")

_WORD_FIGURES = ("precision", "recall", "f1", "text_only")
_MARKUP_FIGURES = ("markup_precision", "markup_recall", "markup_f1")


@dataclass
class DocScore:
    """Figures for one document. Markup figures are None when the gold has no
    marked segment containing a word (nothing to score markup against)."""

    precision: float
    recall: float
    f1: float
    text_only: float
    markup_precision: float | None
    markup_recall: float | None
    markup_f1: float | None
    m: int  # LCS length in words
    n_pred: int  # |p|
    n_gold: int  # |g|


def words(text: str) -> list[str]:
    """Words of a text as the scorer compares them.

    Entities first (gold files contain ``&amp;``/``&#039;``), then NFKC so that
    ligatures and full-width forms match their plain spelling, then casefold so
    that case differences introduced by extractors do not count. Every Han or kana
    character is a word of its own (one sentence of Japanese would otherwise be one
    word); a text without any (most pages; ASCII is checked first, at C speed) takes the
    plain ``\\w+`` path, which is faster.
    """
    s = unicodedata.normalize("NFKC", html.unescape(text)).casefold()
    if s.isascii() or _HAN_KANA_RE.search(s) is None:
        return _WORD_RE.findall(s)
    return _WORD_HAN_KANA_RE.findall(s)


def _tokenise(text: str) -> tuple[list[str], list[tuple[int, str]]]:
    """Word sequence of a text and (first-word index, marker) of each marked segment.

    Marked segments without any word are skipped (see module docstring).
    """
    seq: list[str] = []
    starts: list[tuple[int, str]] = []
    for seg in parse_segments(text):
        ws = words(seg.text)
        if seg.marker is not None and ws:
            starts.append((len(seq), seg.marker))
        seq.extend(ws)
    return seq, starts


def _to_ids(p: list[str], g: list[str]) -> tuple[list[int], list[int]]:
    """Map words to small ints shared by both sequences, for rapidfuzz's fast path."""
    vocab: dict[str, int] = {}
    p_ids = [vocab.setdefault(w, len(vocab)) for w in p]
    g_ids = [vocab.setdefault(w, len(vocab)) for w in g]
    return p_ids, g_ids


def lcs_alignment(p_ids: list[int], g_ids: list[int]) -> dict[int, int]:
    """One LCS alignment of p and g as {index in p: index in g}.

    Taken from rapidfuzz's LCSseq.editops, which contains only insertions and
    deletions: the positions it keeps are matched pairs of equal elements, strictly
    increasing in both sequences, i.e. a common subsequence. Its size is checked
    against the LCS length, which makes it a *longest* one; a mismatch would be a
    rapidfuzz bug and raises rather than silently skewing markup figures.
    Memory is about |p|*|g|/8 bytes (200 MB at 40k x 40k words).
    """
    align: dict[int, int] = {}
    for op in LCSseq.editops(p_ids, g_ids).as_opcodes():  # type: ignore[attr-defined]  # (missing from the stub)
        if op.tag == "equal":
            for d in range(op.src_end - op.src_start):
                align[op.src_start + d] = op.dest_start + d
    m = LCSseq.similarity(p_ids, g_ids)
    if len(align) != m:
        raise RuntimeError(f"LCS alignment has {len(align)} pairs, LCS length is {m}")
    return align


def _ratio(num: float, den: float, empty: float) -> float:
    """num/den, or the conventional value when the denominator is 0."""
    return num / den if den else empty


def _harmonic(p: float, r: float) -> float:
    """F1 of a precision and a recall; 0 when both are 0."""
    return 2 * p * r / (p + r) if p + r else 0.0


def _markup(
    p_ids: list[int],
    g_ids: list[int],
    p_starts: list[tuple[int, str]],
    g_starts: list[tuple[int, str]],
) -> tuple[float, float, float] | None:
    """Markup precision, recall, F1; None when the gold has no marked segment."""
    if not g_starts:
        return None
    correct = 0
    if p_starts:
        align = lcs_alignment(p_ids, g_ids)
        gold_marker_at = dict(g_starts)
        for i, marker in p_starts:
            j = align.get(i)
            if j is not None and gold_marker_at.get(j) == marker:
                correct += 1
    # "1 if no marked predicted segments and none in gold": gold has some here.
    precision = _ratio(correct, len(p_starts), 0.0)
    recall = correct / len(g_starts)
    return precision, recall, _harmonic(precision, recall)


def score_document(pred: str, gold: str) -> DocScore:
    """Score one predicted text against its gold text.

    A rejected page or a failed extraction is scored as ``pred=""``: precision 1,
    recall 0 (unless the gold is empty too).
    """
    p, p_starts = _tokenise(pred)
    g, g_starts = _tokenise(gold)
    p_ids, g_ids = _to_ids(p, g)
    m = LCSseq.similarity(p_ids, g_ids)
    n_p, n_g = len(p), len(g)
    longest = max(n_p, n_g)
    text_only = 1.0 - Levenshtein.distance(p_ids, g_ids) / longest if longest else 1.0
    markup = _markup(p_ids, g_ids, p_starts, g_starts)
    mp, mr, mf = markup if markup is not None else (None, None, None)
    return DocScore(
        precision=_ratio(m, n_p, 1.0),
        recall=_ratio(m, n_g, 1.0),
        f1=_ratio(2 * m, n_p + n_g, 1.0),
        text_only=text_only,
        markup_precision=mp,
        markup_recall=mr,
        markup_f1=mf,
        m=m,
        n_pred=n_p,
        n_gold=n_g,
    )


def _bag_of_words(text: str) -> Counter:
    """WCXB's tokens: lowercase ``\\w+`` runs of the text (markers and entities read as the
    scorer reads them, so that a CleanEval output and a plain text of the same words agree)."""
    return Counter(_WORD_RE.findall(read_text(text).lower()))


def wcxb_f1(pred: str, gold: str) -> float:
    """WCXB's own per-page figure (its leaderboard is the mean over pages): F1 of the predicted and
    the gold lowercase ``\\w+`` tokens as bags of words, order ignored (not this scorer's LCS, nor
    its NFKC, casefold and Han/kana words). 1 when both are empty, 0 when one is."""
    p, g = _bag_of_words(pred), _bag_of_words(gold)
    n_p, n_g = sum(p.values()), sum(g.values())
    if not n_p or not n_g:
        return 1.0 if n_p == n_g else 0.0
    common = sum((p & g).values())
    return 2 * common / (n_p + n_g)


def aggregate(scores: list[DocScore]) -> dict:
    """Macro and micro averages over documents.

    Keys: ``n_docs``, ``n_markup_docs``; ``macro_<figure>`` for precision, recall,
    f1, text_only and the three markup figures (markup averaged only over documents
    where it is defined; None if there are none); ``micro_precision``,
    ``micro_recall``, ``micro_f1`` (Σm/Σ|p|, Σm/Σ|g|, 2Σm/(Σ|p|+Σ|g|), with the
    per-document conventions for empty sums); and the sums ``m``, ``n_pred``,
    ``n_gold``. Macro figures are the headline numbers. With no documents every
    figure is None.
    """
    markup_docs = [s for s in scores if s.markup_f1 is not None]
    out: dict = {"n_docs": len(scores), "n_markup_docs": len(markup_docs)}
    for name in _WORD_FIGURES:
        out[f"macro_{name}"] = fmean(getattr(s, name) for s in scores) if scores else None
    for name in _MARKUP_FIGURES:
        out[f"macro_{name}"] = (
            fmean(getattr(s, name) for s in markup_docs) if markup_docs else None
        )
    sm = sum(s.m for s in scores)
    sp = sum(s.n_pred for s in scores)
    sg = sum(s.n_gold for s in scores)
    out.update(m=sm, n_pred=sp, n_gold=sg)
    if scores:
        out["micro_precision"] = _ratio(sm, sp, 1.0)
        out["micro_recall"] = _ratio(sm, sg, 1.0)
        out["micro_f1"] = _ratio(2 * sm, sp + sg, 1.0)
    else:
        out["micro_precision"] = out["micro_recall"] = out["micro_f1"] = None
    return out


def bootstrap_interval(
    values: list[float], *, level: float = 0.95, resamples: int = 2000, seed: int = 0
) -> tuple[float, float] | None:
    """Percentile bootstrap interval of the mean of per-document figures.

    Documents are resampled with replacement; the seed is fixed so that a report is
    reproducible. For a paired comparison of two systems on the same documents, pass
    the per-document differences. How far a macro figure can move with the sample of
    pages: 58 CleanEval-dev pages give an interval about 0.05 wide. None for fewer
    than two values.
    """
    import numpy as np  # the scorer itself does not need numpy

    if len(values) < 2:
        return None
    x = np.asarray(values, dtype=float)
    rng = np.random.default_rng(seed)
    means = x[rng.integers(0, len(x), size=(resamples, len(x)))].mean(axis=1)
    tail = (1.0 - level) / 2 * 100
    lo, hi = np.percentile(means, [tail, 100 - tail])
    return float(lo), float(hi)
