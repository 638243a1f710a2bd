"""The corpus columns of a text (cleaner/output/corpus.py): language, dedup keys, quality signals.

Real gold texts of the shared pages (read in place) stand for pages in their languages."""

from __future__ import annotations

import numpy as np
import pytest
import xxhash

from cleaner.config import load_config
from cleaner.output.corpus import SIGNAL_COLUMNS, CorpusColumns
from cleaner.output.dedup import MinHasher, estimated_jaccard, normalise, text_hash, word_hashes, words_of
from cleaner.output.langid import LanguageIdentifier
from cleaner.output.schema import SCHEMA
from cleaner.output.signals import text_signals

SETTINGS = load_config().settings.corpus


@pytest.fixture(scope="module")
def golds(data_dir):
    def first(pattern):
        return sorted((data_dir / "fundus" / "gold").glob(pattern))[0].read_text(encoding="utf-8")
    return {
        "de": first("de-*.txt"), "ja": first("jp-Asahi*.txt"), "fr": first("fr-LeMonde*.txt"),
        "en": (data_dir / "chaos/gold/apple_1.txt").read_text(encoding="utf-8"),
        "en2": (data_dir / "chaos/gold/typhoon_3.txt").read_text(encoding="utf-8"),
    }


# --- language ---------------------------------------------------------------------------------

def test_language_of_whole_pages_is_named_with_high_confidence(golds):
    ident = LanguageIdentifier.from_settings(SETTINGS)
    for want in ("de", "ja", "fr", "en"):
        got = ident.identify(golds[want])
        assert got.code == want and got.score >= 0.9, (want, got)


def test_short_text_is_undetermined_not_a_guess():
    ident = LanguageIdentifier.from_settings(SETTINGS)
    for text in ("Home", "Read more", "Accept all cookies", "Das ist gut.", "123 456 789 000 111 222 333 444"):
        assert ident.identify(text).code == "und", text
        assert ident.identify(text).score == 0.0


def test_mixed_text_is_undetermined_or_low_confidence(golds):
    ident = LanguageIdentifier.from_settings(SETTINGS)
    mixed = golds["de"][:600] + "\n" + golds["fr"][:600] + "\n" + golds["en"][:600]
    got = ident.identify(mixed)
    assert got.code == "und" or got.score < 0.6, got


def test_text_cld2_refuses_is_undetermined_not_a_crash(golds):
    ident = LanguageIdentifier.from_settings(SETTINGS)
    for text in ("\x00\x01" * 50, golds["en"][:400] + "\ud800\x85\x9f", "\ufffd" * 300):
        got = ident.identify(text)
        assert got.code in ("und", "en")


# --- dedup keys -------------------------------------------------------------------------------

def test_exact_hash_ignores_case_punctuation_and_spacing_only(golds):
    text = golds["en"]
    variant = "  " + text.upper().replace(".", " .").replace("\n", "\n\n") + " !"
    assert text_hash(text) == text_hash(variant)
    assert text_hash(text) != text_hash(text.replace(" the ", " a ", 1))
    assert text_hash("") is None and text_hash(" ... !! ") is None
    norm = normalise("Hello,  WORLD!\nStraße")
    assert norm == "hello world strasse"
    assert normalise("\u201cQuoted\u201d \u2014 text\u2026 \u00abzitiert\u00bb_x") == "quoted text zitiert x"
    words = [xxhash.xxh3_64_intdigest(w.encode()) for w in norm.split()]
    want = xxhash.xxh3_64_intdigest(b"".join(h.to_bytes(8, "little") for h in words))
    assert text_hash("Hello,  WORLD!\nStraße") % (1 << 64) == want  # the signed int64 of xxh3_64


def _hasher(seed=SETTINGS.minhash_seed):
    return MinHasher(shingle_words=SETTINGS.shingle_words, permutations=SETTINGS.minhash_permutations,
                     bands=SETTINGS.minhash_bands, seed=seed)


def test_near_duplicates_share_a_band_key_and_others_do_not(golds):
    mh = _hasher()
    page = golds["en"]
    words = page.split()
    edited = " ".join(words[:40] + ["inserted", "words"] + words[40:-10]) + "\nShare this article"
    a, b, other = mh.keys(page), mh.keys(edited), mh.keys(golds["en2"])
    assert estimated_jaccard(a.signature, b.signature) > 0.7
    assert set(a.bands) & set(b.bands)
    assert estimated_jaccard(a.signature, other.signature) < 0.1
    assert not set(a.bands) & set(other.bands)
    assert len(a.signature) == SETTINGS.minhash_permutations and len(a.bands) == SETTINGS.minhash_bands
    assert all(0 <= v < 1 << 32 for v in a.signature)


def test_keys_are_the_same_in_every_process_with_the_same_seed(golds):
    text = golds["ja"]
    assert _hasher().keys(text) == _hasher().keys(text)
    assert _hasher(seed=SETTINGS.minhash_seed + 1).keys(text).bands != _hasher().keys(text).bands
    # Japanese has no spaces: each kana/kanji is a word, so its shingles are not the whole text
    assert _hasher().shingle_hashes(word_hashes(words_of(text))).size > 100
    assert words_of("東京 では abc。") == [w.encode() for w in ["東", "京", "で", "は", "abc"]]


def test_signature_of_a_long_text_is_the_minimum_over_all_shingles():
    mh = _hasher()
    text = " ".join(f"w{i}" for i in range(9000))  # more shingles than one chunk
    hashes = mh.shingle_hashes(word_hashes(words_of(text)))
    assert hashes.size > 4096
    with np.errstate(over="ignore"):
        want = ((mh._a * hashes[None, :] + mh._b) >> np.uint64(32)).min(axis=1)
    assert mh.keys(text).signature == want.tolist()


def test_shingles_are_ordered_word_sequences():
    mh = _hasher()
    def shingles(text):
        return mh.shingle_hashes(word_hashes(text.encode().split()))
    one = shingles("a b c d e")
    assert one.size == 1
    assert shingles("b a c d e")[0] != one[0]  # word order counts
    assert set(shingles("a b c d e a b c d e")) == set(shingles("a b c d e a b c d"))
    assert mh.keys("a b c d e a b c d e") == mh.keys("A b c d e, a b c d.")  # a repeated shingle adds nothing


def test_text_without_words_has_no_keys():
    assert _hasher().keys("") is None and _hasher().keys(" -- ... !!") is None
    short = _hasher().keys("two words")  # shorter than a shingle: one shingle of what there is
    assert short is not None and len(short.bands) == SETTINGS.minhash_bands


def test_bands_must_divide_the_permutations():
    with pytest.raises(ValueError, match="multiple of bands"):
        MinHasher(shingle_words=5, permutations=100, bands=14, seed=1)


# --- quality signals --------------------------------------------------------------------------

def test_signals_of_a_known_text():
    text = ("A first line of text.\n"
            "\n"
            "- a bullet\n"
            "A first line of text.\n"
            "Wait for it...\n"
            "# 123 {x}")
    s = text_signals(text)
    assert (s.chars, s.words, s.lines) == (len(text), 19, 5)
    assert s.dup_line_share == pytest.approx(1 / 5)
    assert s.dup_line_char_share == pytest.approx(21 / (21 + 10 + 21 + 14 + 9))
    assert s.end_punct_line_share == pytest.approx(3 / 5)  # two "text." lines and "it..."
    assert s.bullet_line_share == pytest.approx(1 / 5)
    assert s.ellipsis_line_share == pytest.approx(1 / 5)
    assert s.short_line_share == pytest.approx(5 / 5)
    assert s.alpha_word_share == pytest.approx(16 / 19)  # "-", "#", "123" have no letter
    assert s.symbol_word_ratio == pytest.approx(2 / 19)  # one '#', one '...'
    assert s.mean_word_length == pytest.approx(sum(len(w) for w in text.split()) / 19)
    assert s.has_curly_bracket and not s.has_lorem_ipsum


def test_signals_of_an_empty_text_are_zero():
    s = text_signals("")
    assert (s.chars, s.words, s.lines, s.dup_line_share, s.mean_word_length) == (0, 0, 0, 0.0, 0.0)


def test_corpus_columns_are_the_schema_columns(golds):
    cols = CorpusColumns.from_settings(SETTINGS)
    full, empty = cols.columns(golds["de"]), cols.columns("")
    assert set(full) == set(empty)
    assert set(full) <= set(SCHEMA.names)
    assert {c for c, _ in SIGNAL_COLUMNS} <= set(full)
    assert full["language"] == "de" and full["text_hash"] == text_hash(golds["de"])
    assert empty["language"] == "und" and empty["text_hash"] is None and empty["minhash"] is None


def test_a_lone_surrogate_is_no_crash(golds):
    cols = CorpusColumns.from_settings(SETTINGS)
    out = cols.columns(golds["en"][:500] + "\ud800 end")
    assert out["language"] == "en" and out["text_hash"] is not None and out["minhash_bands"] is not None


def test_signature_is_stored_only_when_asked(golds):
    import dataclasses

    text = golds["fr"]
    off = CorpusColumns.from_settings(SETTINGS).columns(text)
    on = CorpusColumns.from_settings(dataclasses.replace(SETTINGS, minhash_signature=True)).columns(text)
    assert off["minhash"] is None and on["minhash"] == _hasher().keys(text).signature
    assert off["minhash_bands"] == on["minhash_bands"] == _hasher().keys(text).bands
