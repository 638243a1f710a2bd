"""Tests for cleaner.gold.score, with expected figures worked out by hand."""

from __future__ import annotations

import html
import random
import re
import unicodedata
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cleaner.gold.gold import parse_segments, read_gold
from cleaner.gold.score import DocScore, aggregate, lcs_alignment, score_document, words

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
needs_data = pytest.mark.skipif(not DATA.is_dir(), reason=f"data not found at {DATA}")

WORD_FIGURES = ("precision", "recall", "f1", "text_only")
MARKUP_FIGURES = ("markup_precision", "markup_recall", "markup_f1")
approx = pytest.approx


def lcs_length_dp(a: list, b: list) -> int:
    """Textbook O(|a||b|) LCS, the reference for the compiled routine."""
    prev = [0] * (len(b) + 1)
    for x in a:
        cur = [0]
        for j, y in enumerate(b):
            cur.append(prev[j] + 1 if x == y else max(prev[j + 1], cur[j]))
        prev = cur
    return prev[-1]


def assert_valid_alignment(align: dict[int, int], a: list, b: list) -> None:
    pairs = sorted(align.items())
    assert all(a[i] == b[j] for i, j in pairs)
    assert all(i1 < i2 and j1 < j2 for (i1, j1), (i2, j2) in zip(pairs, pairs[1:]))


# --- words ------------------------------------------------------------------------------


def test_words_basic_split_on_non_word_characters():
    assert words("Don't-stop, 2 x_y!") == ["don", "t", "stop", "2", "x_y"]


def test_words_decode_entities():
    assert words("Tom &amp; Jerry&#039;s &lt;b&gt;") == ["tom", "jerry", "s", "b"]


def test_words_nfkc():
    # ﬁ ligature -> "fi", full-width letters -> ASCII, superscript 2 -> "2".
    assert words("ﬁne Ｆｕｌｌ x²") == ["fine", "full", "x2"]


def test_words_casefold():
    assert words("STRASSE Straße ΣΊΣΥΦΟΣ") == ["strasse", "strasse", "σίσυφοσ"]


def test_words_unicode_letters():
    assert words("naïve — 한국어 café") == ["naïve", "한국어", "café"]


def test_words_han_and_kana_one_word_a_character():
    # Chinese and Japanese put no space between words: each Han or kana character is a word,
    # a run of other word characters beside one stays one word, the kana middle dot is none.
    assert words("東京は晴れ。Tokyo2025年・テスト") == [
        "東", "京", "は", "晴", "れ", "tokyo2025", "年", "テ", "ス", "ト"]
    assert words("abc漢字def 𠀋x 丽") == ["abc", "漢", "字", "def", "𠀋", "x", "丽"]  # (U+2000B, U+2F800)
    assert words("ｶﾀｶﾅ") == ["カ", "タ", "カ", "ナ"]  # half-width katakana, after NFKC


def test_han_text_scores_by_character():
    # One sentence of Japanese is no longer one word: a different last word costs its characters.
    s = score_document("東京は雨", "東京は晴れ")
    assert (s.m, s.n_pred, s.n_gold) == (3, 4, 5)
    assert s.f1 == approx(6 / 9)


def test_words_empty():
    assert words("") == []
    assert words(" ,.;!? ") == []


# --- word figures -----------------------------------------------------------------------


def test_word_figures_hand_case():
    # p = a b c d, g = a x c d e. LCS = a c d, m = 3.
    # P = 3/4, R = 3/5, F1 = 6/9. Lev: b->x, insert e = 2, text-only = 1 - 2/5 = 0.6.
    s = score_document("a b c d", "a x c d e")
    assert (s.m, s.n_pred, s.n_gold) == (3, 4, 5)
    assert s.precision == approx(0.75)
    assert s.recall == approx(0.6)
    assert s.f1 == approx(2 / 3)
    assert s.text_only == approx(0.6)
    assert s.markup_precision is s.markup_recall is s.markup_f1 is None


def test_transposition():
    # p = a b, g = b a: LCS 1 -> P = R = F1 = 1/2; Lev 2 (two substitutions) -> text-only 0.
    s = score_document("a b", "b a")
    assert (s.precision, s.recall, s.f1, s.text_only) == (0.5, 0.5, 0.5, 0.0)


def test_repeated_words():
    # p = a a a, g = a: m = 1; P = 1/3, R = 1, F1 = 2/4; Lev 2 -> 1 - 2/3.
    s = score_document("a a a", "a")
    assert s.m == 1
    assert (s.precision, s.recall, s.f1) == (approx(1 / 3), 1.0, 0.5)
    assert s.text_only == approx(1 / 3)


def test_both_empty():
    s = score_document("", "")
    assert (s.precision, s.recall, s.f1, s.text_only) == (1.0, 1.0, 1.0, 1.0)
    assert (s.m, s.n_pred, s.n_gold) == (0, 0, 0)
    assert s.markup_f1 is None


def test_both_without_words():
    # Punctuation only: no words on either side counts as both empty.
    s = score_document("*** !!!", "<p> ---")
    assert (s.precision, s.recall, s.f1, s.text_only) == (1.0, 1.0, 1.0, 1.0)
    assert s.markup_f1 is None  # the gold's only marked segment has no word


def test_pred_empty_rejected_page():
    # Rejected page = empty output: P = 1 (nothing wrong said), R = 0, F1 = 0, Lev = |g|.
    s = score_document("", "a b")
    assert (s.precision, s.recall, s.f1, s.text_only) == (1.0, 0.0, 0.0, 0.0)


def test_gold_empty():
    s = score_document("a b", "")
    assert (s.precision, s.recall, s.f1, s.text_only) == (0.0, 1.0, 0.0, 0.0)


def test_entities_and_case_match():
    s = score_document("TOM & jerry’s", "Tom &amp; Jerry&#8217;s")
    assert (s.precision, s.recall, s.f1, s.text_only) == (1.0, 1.0, 1.0, 1.0)


def test_url_line_and_separator_are_not_words():
    gold = "URL: http://example.com/page\nArticle a b\n!@#$%^&*()  COMMENTS\ncomment c"
    s = score_document("article a b comment c", gold)
    assert (s.m, s.n_gold, s.f1) == (5, 5, 1.0)


def test_markers_are_not_words():
    s = score_document("<p>a b <h>c", "a b c")
    assert (s.n_pred, s.f1) == (3, 1.0)


def test_marker_splits_words():
    # "ab<p>cd" is two words, "ab" and "cd", not "abcd".
    s = score_document("ab cd", "ab<p>cd")
    assert (s.n_gold, s.f1) == (2, 1.0)


# --- markup -----------------------------------------------------------------------------


def test_markup_hand_case():
    # g = title here | first para text | second para, starts h@0 p@2 p@5 (3 marked).
    # p has the same words, starts h@0 p@2 l@4 p@5 (4 marked). Alignment is the identity:
    # h@0 ok, p@2 ok, l@4 (gold 4 is no segment start) wrong, p@5 ok -> 3 correct.
    # P = 3/4, R = 3/3, F1 = 2*.75*1/1.75 = 6/7.
    gold = "<h>Title here\n<p>First para text\n<p>Second para"
    pred = "<h>Title here\n<p>First para\n<l>text\n<p>Second para"
    s = score_document(pred, gold)
    assert s.f1 == 1.0
    assert s.markup_precision == approx(0.75)
    assert s.markup_recall == approx(1.0)
    assert s.markup_f1 == approx(6 / 7)


def test_markup_wrong_marker_kind():
    # Title is <h> in gold, <p> in pred: 1 of 2 correct on each side.
    s = score_document("<p>Title here<p>body", "<h>Title here<p>body")
    assert (s.markup_precision, s.markup_recall, s.markup_f1) == (0.5, 0.5, 0.5)


def test_markup_unmarked_prediction():
    # Gold has markers, prediction none: precision 0 (not 1), recall 0, F1 0.
    s = score_document("Title here body", "<h>Title here<p>body")
    assert s.f1 == 1.0
    assert (s.markup_precision, s.markup_recall, s.markup_f1) == (0.0, 0.0, 0.0)


def test_markup_empty_prediction():
    s = score_document("", "<p>a b")
    assert (s.markup_precision, s.markup_recall, s.markup_f1) == (0.0, 0.0, 0.0)


def test_markup_none_when_gold_unmarked():
    s = score_document("<p>a<h>b", "a b")
    assert s.markup_precision is s.markup_recall is s.markup_f1 is None


def test_markup_first_word_must_be_aligned():
    # p = x a b (p@0), g = a b (p@0). x is not aligned -> 0 correct.
    s = score_document("<p>x a b", "<p>a b")
    assert s.precision == approx(2 / 3)
    assert (s.markup_precision, s.markup_recall) == (0.0, 0.0)


def test_markup_segment_start_must_match_gold_start():
    # p: "a" p@0, "b c" p@1; g: "a b c" p@0. 1 correct of 2 predicted, of 1 gold.
    s = score_document("<p>a<p>b c", "<p>a b c")
    assert (s.markup_precision, s.markup_recall) == (0.5, 1.0)
    assert s.markup_f1 == approx(2 / 3)


def test_markup_duplicate_prediction_counts_once():
    # p = a b | a b (p@0, p@2), g = a b (p@0). Any LCS alignment maps an "a" of p, and
    # both are segment starts, to g[0]: exactly 1 correct. P = 1/2, R = 1.
    s = score_document("<p>a b<p>a b", "<p>a b")
    assert (s.markup_precision, s.markup_recall) == (0.5, 1.0)


def test_markup_mid_line_and_case_insensitive_markers():
    # p = intro a b c, starts P@1 H@3; g = a b c, starts p@0 h@2. LCS maps 1->0, 3->2.
    s = score_document("intro <P>a b <H>c", "<p>a b\n<h>c")
    assert s.precision == approx(3 / 4)
    assert (s.markup_precision, s.markup_recall, s.markup_f1) == (1.0, 1.0, 1.0)


def test_markup_segments_without_words_do_not_count():
    # Pred "<p>***" and gold "<p>..." have no first word: left out on both sides.
    s = score_document("<p>a b<p>***", "<p>a b<l>...")
    assert (s.markup_precision, s.markup_recall, s.markup_f1) == (1.0, 1.0, 1.0)


def test_markup_with_entities_in_first_word():
    s = score_document("<h>Tom & Jerry<p>x", "<h>tom &amp; jerry<p>X")
    assert (s.markup_precision, s.markup_recall) == (1.0, 1.0)


# --- the alignment -----------------------------------------------------------------------


def test_lcs_alignment_is_a_longest_common_subsequence():
    rng = random.Random(7)
    for _ in range(500):
        k = rng.choice([1, 2, 3, 10])
        a = [rng.randrange(k) for _ in range(rng.randrange(25))]
        b = [rng.randrange(k) for _ in range(rng.randrange(25))]
        align = lcs_alignment(a, b)
        assert len(align) == lcs_length_dp(a, b)
        assert_valid_alignment(align, a, b)


@given(st.lists(st.integers(0, 4), max_size=40), st.lists(st.integers(0, 4), max_size=40))
@settings(max_examples=300, deadline=None)
def test_lcs_alignment_property(a, b):
    align = lcs_alignment(a, b)
    assert len(align) == lcs_length_dp(a, b)
    assert_valid_alignment(align, a, b)


def test_alignment_used_for_markup_has_length_m():
    # 300 words, pred drops every 7th word and inserts noise: the alignment still has m pairs.
    rng = random.Random(3)
    gold_words = [f"w{rng.randrange(40)}" for _ in range(300)]
    pred_words = [w for i, w in enumerate(gold_words) if i % 7] + ["noise"] * 5
    rng.shuffle(pred_words[-20:])
    s = score_document(" ".join(pred_words), " ".join(gold_words))
    ids = {w: i for i, w in enumerate(sorted(set(gold_words + pred_words)))}
    p = [ids[w] for w in words(" ".join(pred_words))]
    g = [ids[w] for w in words(" ".join(gold_words))]
    align = lcs_alignment(p, g)
    assert len(align) == s.m == lcs_length_dp(p, g)
    assert_valid_alignment(align, p, g)


# --- aggregate --------------------------------------------------------------------------


def test_aggregate_hand_case():
    # doc1: m=3 |p|=4 |g|=5 (P .75 R .6 F1 2/3 T .6); doc2: m=0 |p|=0 |g|=2 (P 1 R 0 F1 0 T 0);
    # doc3: markup doc, P=R=F1=1 (T 1), markup P .5 R .5 F1 .5; |p|=|g|=m=3.
    docs = [
        score_document("a b c d", "a x c d e"),
        score_document("", "a b"),
        score_document("<p>Title here<p>body", "<h>Title here<p>body"),
    ]
    agg = aggregate(docs)
    assert agg["n_docs"] == 3
    assert agg["n_markup_docs"] == 1
    assert agg["macro_precision"] == approx((0.75 + 1 + 1) / 3)
    assert agg["macro_recall"] == approx((0.6 + 0 + 1) / 3)
    assert agg["macro_f1"] == approx((2 / 3 + 0 + 1) / 3)
    assert agg["macro_text_only"] == approx((0.6 + 0 + 1) / 3)
    # markup averaged over doc3 only
    assert agg["macro_markup_precision"] == approx(0.5)
    assert agg["macro_markup_recall"] == approx(0.5)
    assert agg["macro_markup_f1"] == approx(0.5)
    # micro: Σm = 6, Σ|p| = 7, Σ|g| = 10
    assert (agg["m"], agg["n_pred"], agg["n_gold"]) == (6, 7, 10)
    assert agg["micro_precision"] == approx(6 / 7)
    assert agg["micro_recall"] == approx(6 / 10)
    assert agg["micro_f1"] == approx(12 / 17)


def test_aggregate_no_markup_docs():
    agg = aggregate([score_document("a", "a b")])
    assert agg["macro_markup_f1"] is None
    assert agg["n_markup_docs"] == 0
    assert agg["micro_f1"] == approx(2 / 3)


def test_aggregate_all_empty_documents():
    agg = aggregate([score_document("", ""), score_document("", "")])
    assert agg["micro_precision"] == agg["micro_recall"] == agg["micro_f1"] == 1.0
    assert agg["macro_f1"] == 1.0


def test_aggregate_no_documents():
    agg = aggregate([])
    assert agg["n_docs"] == 0
    assert agg["macro_f1"] is None and agg["micro_f1"] is None


# --- properties -------------------------------------------------------------------------

_TOKENS = st.sampled_from(
    ["a", "b", "c", "Dé", "DÉ", "ﬁ", "fi", "&amp;", "&", "<p>", "<P>", "<h>", "<l>", "***",
     "URL:", "x_y", "9", "!@#$%^&*()  COMMENTS", "\n", " ", "東"]
)
texts = st.one_of(
    st.lists(_TOKENS, max_size=30).map(lambda ts: " ".join(ts)),
    st.lists(_TOKENS, max_size=30).map("".join),
    st.text(max_size=60),
)


def _figures(s: DocScore) -> dict[str, float | None]:
    return {name: getattr(s, name) for name in WORD_FIGURES + MARKUP_FIGURES}


@given(texts)
@settings(max_examples=400, deadline=None)
def test_property_self_score_is_one(x):
    s = score_document(x, x)
    assert s.m == s.n_pred == s.n_gold
    for name, value in _figures(s).items():
        if name in MARKUP_FIGURES and value is None:
            continue
        assert value == 1.0, name


@given(texts, texts)
@settings(max_examples=400, deadline=None)
def test_property_figures_in_unit_interval(x, y):
    s = score_document(x, y)
    for name, value in _figures(s).items():
        assert value is None or 0.0 <= value <= 1.0, name
    assert 0 <= s.m <= min(s.n_pred, s.n_gold)


@given(texts, texts)
@settings(max_examples=400, deadline=None)
def test_property_word_figures_symmetric(x, y):
    a, b = score_document(x, y), score_document(y, x)
    assert a.m == b.m
    assert a.f1 == b.f1
    assert a.text_only == b.text_only
    assert a.precision == b.recall and a.recall == b.precision


# --- real gold files ------------------------------------------------------------------

REAL = [
    "cleaneval-dev/gold/1.txt",
    "cleaneval-final/gold/161.txt",
    "cleaneval-final/gold/212.txt",  # windows-1252
    "cleanportaleval/gold/bbc.co.uk_news_01.txt",
    "dragnet/gold/27.txt",  # UTF-16LE
    "dragnet/gold/100.txt",
]


@needs_data
@pytest.mark.parametrize("rel", REAL)
def test_real_gold_against_itself(rel):
    gold = read_gold(DATA / rel)
    s = score_document(gold, gold)
    assert s.n_gold > 50
    assert (s.precision, s.recall, s.f1, s.text_only) == (1.0, 1.0, 1.0, 1.0)
    if rel.startswith("clean"):
        assert (s.markup_precision, s.markup_recall, s.markup_f1) == (1.0, 1.0, 1.0)
    else:
        assert s.markup_f1 is None


@needs_data
def test_han_and_kana_change_ten_old_golds_only():
    # Counting Han and kana one word a character changes nothing on the 2007-2013 sets but ten
    # Dragnet golds (R187, R362, R363, R717-R720, R907, R909, R910; the data README says five).
    changed = []
    for path in sorted(DATA.glob("*/gold/*.txt")):
        if path.parts[-3] in ("cleaneval-dev", "cleaneval-final", "cleanportaleval", "dragnet"):
            text = read_gold(path)
            plain = [w for seg in parse_segments(text)
                     for w in re.findall(r"\w+", unicodedata.normalize("NFKC", html.unescape(seg.text)).casefold())]
            if plain != [w for seg in parse_segments(text) for w in words(seg.text)]:
                changed.append(path.parts[-3])
    assert changed == ["dragnet"] * 10


@needs_data
def test_real_gold_suffix_and_unmarked():
    # Pred = the second half of the gold's words, no markers: an LCS of a suffix with the
    # whole is the suffix, so P = 1 and R = k/n exactly; markup 0 (no marked segments).
    gold = read_gold(DATA / "cleaneval-final" / "gold" / "161.txt")
    g = [w for seg in parse_segments(gold) for w in words(seg.text)]  # the scorer's g
    n, k = len(g), len(g) // 2
    s = score_document(" ".join(g[n - k :]), gold)
    assert (s.m, s.n_pred, s.n_gold) == (k, k, n)
    assert s.precision == 1.0
    assert s.recall == approx(k / n)
    assert s.text_only == approx(k / n)  # n - k deletions
    assert (s.markup_precision, s.markup_recall) == (0.0, 0.0)


@needs_data
def test_real_utf16_gold_rejected_page():
    gold = read_gold(DATA / "dragnet" / "gold" / "27.txt")
    s = score_document("", gold)
    assert (s.precision, s.recall, s.f1) == (1.0, 0.0, 0.0)
    assert s.n_gold > 0


def test_bootstrap_interval_brackets_the_mean_and_narrows_with_more_pages():
    from cleaner.gold.score import bootstrap_interval

    few = [0.2, 0.9, 0.95, 1.0, 0.6, 0.85, 0.4, 0.99]
    lo, hi = bootstrap_interval(few)
    assert lo < sum(few) / len(few) < hi
    many = few * 25
    lo2, hi2 = bootstrap_interval(many)
    assert hi2 - lo2 < (hi - lo) / 3  # 25x the pages: about 1/5 of the width
    assert bootstrap_interval(few) == (lo, hi)  # fixed seed: a report is reproducible


def test_bootstrap_interval_of_paired_differences():
    from cleaner.gold.score import bootstrap_interval

    a = [0.5, 0.7, 0.9, 0.8]
    assert bootstrap_interval([x - x for x in a]) == (0.0, 0.0)  # a system against itself
    lo, hi = bootstrap_interval([0.1, 0.12, 0.08, 0.11, 0.09])  # one system better on every page
    assert 0.0 < lo <= hi
    assert bootstrap_interval([0.3]) is None


def test_wcxb_metric_is_a_bag_of_lowercase_words():
    from cleaner.gold.score import wcxb_f1

    # order ignored, markers and case too; NFKC not applied ("ﬁne" is one token, not "fine")
    assert wcxb_f1("<p> sat cat The", "the cat SAT on") == approx(2 * 3 / 7)
    assert wcxb_f1("ﬁne", "fine") == 0.0
    assert wcxb_f1("a a b", "a b b") == approx(2 * 2 / 6)
    assert (wcxb_f1("", ""), wcxb_f1("", "x"), wcxb_f1("x", "")) == (1.0, 0.0, 0.0)
