"""The corpus columns' loops, compiled (cleaner/output/compiled_corpus.pyx), against their readable references
(cleaner.output.signals.signal_counts_reference, cleaner.output.dedup.MinHasher.minimum_reference,
cleaner.output.dedup.spaced_reference): the same
numbers for every text, so that a filter on a signal or a join on a band key keeps or pairs the same documents
whether the build is there or not."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cleaner.config import load_config
from cleaner.output import signals
from cleaner.output.dedup import (
    _ASCII_TABLE, _CJK_BYTES_RX, _CJK_LEAD_RX, MinHasher, spaced_reference, words_of, words_of_any,
)
from cleaner.output.signals import signal_counts_reference

compiled = pytest.importorskip("cleaner.output.compiled_corpus", reason="not built (scripts/build_native.py)")

SETTINGS = load_config().settings.corpus

# Where the two could part: every line break str.splitlines knows (and "\r\n"), whitespace that breaks no line,
# every end mark and bullet, "..." beside ".", letters, decimal and other digits ('٣', '²', '½', 'Ⅻ'), '_', a
# combining mark, Han, a letter outside the BMP and punctuation.
ALPHABET = (
    "aZé漢\U00010400_09٣²½Ⅻ\u0301 \t\u00a0\u3000\u200b\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
    ".!?\"'\u201d\u2019\u00bb\u2026\u3002\uff01\uff1f\u300d\u300f:;)"
    "\u2022\u25cf\u25cb\u25aa\u25a0\u2023\u2043-*\u2013\u2014#,("
)
TRICKY = [
    "", " ", "\n", "\r\n", "a\r\nb", "a\n\na", " a \n a", "...", "..", "a...", "a …", "- x\n* y\n• z", "x" * 30,
    "x" * 31, "٣٤ ½ ² Ⅻ", "foo_bar __ 12_3", "e\u0301", "\U00010400 漢字", "a\u2028a\u2029a\x85a", "\u200b", "(a)",
]


def test_the_compiled_marks_are_the_references():
    assert tuple(compiled.END_PUNCTUATION) == signals.END_PUNCTUATION
    assert tuple(compiled.BULLETS) == signals.BULLETS
    assert compiled.SHORT_LINE_CHARS == signals.SHORT_LINE_CHARS
    assert signals.ELLIPSES == ("...", "\u2026")


def test_the_compiled_counts_are_the_references_on_tricky_texts():
    for text in TRICKY:
        assert compiled.signal_counts(text) == signal_counts_reference(text), repr(text)


@settings(max_examples=400, deadline=None)
@given(text=st.text(alphabet=ALPHABET, max_size=60))
def test_the_compiled_counts_are_the_references_on_generated_texts(text):
    assert compiled.signal_counts(text) == signal_counts_reference(text)


def test_a_word_has_a_letter_as_the_reference_reads_it_for_every_character():
    # one word of each code point, alone and between digits: the compiled test (alphanumeric, not decimal)
    # against the reference's isalpha and regexp
    for code in range(0x110000):
        if 0xD800 <= code <= 0xDFFF:
            continue
        c = chr(code)
        if c.isspace():
            continue
        word = f"1{c}1"
        assert compiled.signal_counts(word)[10] == signal_counts_reference(word)[10], hex(code)


def test_the_compiled_counts_are_the_references_on_the_shared_pages_texts(data_dir):
    texts = [p.read_text(encoding="utf-8", errors="replace")
             for name in ("cleaneval-final", "fundus", "chaos", "wcxb") for p in sorted((data_dir / name / "gold")
                                                                                 .glob("*.txt"))[::5]]
    assert len(texts) > 500
    assert [t for t in texts if compiled.signal_counts(t) != signal_counts_reference(t)] == []


def test_the_signals_use_the_compiled_counts():
    assert signals.signal_counts is compiled.signal_counts


def _hasher() -> MinHasher:
    return MinHasher(shingle_words=SETTINGS.shingle_words, permutations=SETTINGS.minhash_permutations,
                     bands=SETTINGS.minhash_bands, seed=SETTINGS.minhash_seed)


@pytest.mark.parametrize("count", [0, 1, 2, 3, 4, 5, 7, 8, 9, 4095, 4096, 4097, 9001])
def test_the_compiled_minimum_is_the_references_at_every_length(count):
    mh = _hasher()
    rng = np.random.default_rng(count)
    shingles = rng.integers(0, np.iinfo(np.uint64).max, size=count, dtype=np.uint64, endpoint=True)
    start = rng.integers(0, np.iinfo(np.uint64).max, size=mh.permutations, dtype=np.uint64, endpoint=True)
    want, got = start.copy(), start.copy()
    mh.minimum_reference(shingles, want)
    compiled.minhash_minimum(shingles, mh._a.ravel(), mh._b.ravel(), got)
    assert got.tolist() == want.tolist()


def test_the_compiled_minimum_takes_the_smallest_shingle_wherever_it_is():
    for where in range(9):  # each lane of the four running minima, and the tail
        shingles = np.full(9, 5, dtype=np.uint64)
        shingles[where] = 0
        a = np.ones(1, dtype=np.uint64)
        out = np.full(1, np.iinfo(np.uint64).max, dtype=np.uint64)
        compiled.minhash_minimum(shingles, a, np.zeros(1, dtype=np.uint64), out)
        assert out.tolist() == [0], where


@settings(max_examples=300, deadline=None)
@given(text=st.text(alphabet=st.characters(max_codepoint=0x7F), max_size=80))
def test_the_ascii_words_are_the_words_of_any_script(text):
    assert words_of(text) == words_of_any(text)


def test_every_cjk_match_starts_with_a_lead_byte():
    # the lead-byte class is only a gate before the pattern: it must not turn away a text the pattern matches
    tails = [b"", *(bytes([x]) for x in range(256))]
    for first in range(256):
        if any(_CJK_BYTES_RX.match(bytes([first]) + tail) for tail in tails):
            assert _CJK_LEAD_RX.match(bytes([first])), hex(first)


# The punctuation's edges as UTF-8: the first and last character of each range made a space, and their neighbours
_PUNCTUATION_EDGES = "\u00a0\u00a1\u00bf\u00c0\u1fff\u2000\u207f\u2080\u2fff\u3000\u303f\u3040a.,-_ 9"


@settings(max_examples=400, deadline=None)
@given(text=st.text(alphabet=_PUNCTUATION_EDGES + ALPHABET, max_size=60))
def test_the_compiled_spacing_is_the_references_on_generated_texts(text):
    folded = text.casefold().encode("utf-8", "replace")
    assert compiled.spaced(folded, _ASCII_TABLE) == spaced_reference(folded)


@settings(max_examples=400, deadline=None)
@given(data=st.lists(st.sampled_from(b"a ,\x80\x81\x9f\xa0\xa1\xa4\xab\xaf\xbf\xc0\xc2\xc3\xe2\xe3\xe9\xef\xf0"), max_size=40).map(bytes))
def test_the_compiled_spacing_is_the_references_on_any_bytes(data):
    # (cut sequences at the end, lead bytes in a row: the pattern and the pass read every byte alike)
    for case in (data, data + b"\xe2", data + b"\xe2\x80", data + b"\xc2", b"\xe3\x80" + data):
        assert compiled.spaced(case, _ASCII_TABLE) == spaced_reference(case), case


def test_every_character_is_spaced_as_the_reference_spaces_it():
    for code in range(0x110000):
        if 0xD800 <= code <= 0xDFFF:
            continue
        folded = f"a{chr(code)}b".encode()
        assert compiled.spaced(folded, _ASCII_TABLE) == spaced_reference(folded), hex(code)


def test_the_words_of_the_shared_pages_texts_are_spaced_as_the_reference_spaces_them(data_dir):
    texts = [p.read_text(encoding="utf-8", errors="replace")
             for name in ("fundus", "chaos", "wcxb") for p in sorted((data_dir / name / "gold").glob("*.txt"))[::4]]
    folded = [t.casefold().encode("utf-8", "replace") for t in texts if not t.isascii()]
    assert len(folded) > 100
    assert [f for f in folded if compiled.spaced(f, _ASCII_TABLE) != spaced_reference(f)] == []


def test_lorem_ipsum_is_found_as_in_the_lowered_text_whatever_stands_in_it():
    # every code point in each place of the phrase, beside it and in place of its space
    phrase = "Lorem ipsum"
    for code in range(0x80, 0x110000):
        c = chr(code)
        for k in (0, 1, 5, 6, 7, 11):
            text = phrase[:k] + c + phrase[k:]
            assert signals.has_lorem_ipsum(text) == ("lorem ipsum" in text.lower()), (hex(code), k)
        text = phrase[:5] + c + phrase[6:]
        assert signals.has_lorem_ipsum(text) == ("lorem ipsum" in text.lower()), hex(code)
    for text in ("LOREM IPSUM", "lOrEm IpSuM é", "lorem  ipsum", "lorem\u00a0ipsum", "\u0130psum lorem ipsum", ""):
        assert signals.has_lorem_ipsum(text) == ("lorem ipsum" in text.lower()), text
