"""The counts the features read of a block's text, compiled (cleaner/page/compiled_text.pyx), against their
readable reference (cleaner.page.text.measure_text): the same tuple for every text, in every script."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cleaner.config import load_config

compiled = pytest.importorskip("cleaner.page.compiled_text", reason="not built (scripts/build_native.py)")

from cleaner.page.text import count_words, measure_text  # noqa: E402

_REGEXP = load_config()["features"]["regexp"]
SPLIT = re.compile(_REGEXP["sentence_split"])
END = re.compile(_REGEXP["sentence_end"])

# The characters where the two could part: every ender and closer of both sentence patterns, whitespace that is
# not a space (a newline last, U+3000 both whitespace and punctuation, U+001C), Han and kana (tokens of their own),
# digits that are not ASCII or not decimal ('٣', '²', '½'), '_', a combining mark, a letter outside the BMP, and
# the punctuation class's edges.
ALPHABET = (
    "aZ09 _.!?।۔؟…\"'”’)]」』）。！？\n\t\u3000\u001c\u00a0\u2028"
    "漢かナ\u30fb\u30fc\u3005\u3007٣²½\u0301é\U00010400\U00020001-/:@[`{~\u00a1\u00bf\u2010\u205e\uff01\uff65x"
)
TRICKY = [
    "", " ", "\n", ".", "a.", "a.\n", "a. ", "a.)", "a.) b", "a.)b. c", "Hi!!! You?? ok", "end…", "end…\n", "x.\n\n",
    "。", "文。文！", "「文。」文", "a .. b", "...", ". . .", "3.14 is pi.", "A\u3000B。", "٣٤ ½ ²", "foo_bar baz_",
    "漢字かなカナ abc", "ー・〇", "e\u0301t\u00e9.", "\U00010400\U00010401 x", "tab\tsep\x1cx", "a.\u2028b",
]


@pytest.mark.parametrize("per_character", [True, False])
def test_the_compiled_measure_gives_the_references_counts_on_tricky_texts(per_character):
    for text in TRICKY:
        assert compiled.measure_text(text, per_character) == measure_text(text, per_character, SPLIT, END), text


@settings(max_examples=400, deadline=None)
@given(text=st.text(alphabet=ALPHABET, max_size=40), per_character=st.booleans())
def test_the_compiled_measure_gives_the_references_counts_on_generated_texts(text, per_character):
    assert compiled.measure_text(text, per_character) == measure_text(text, per_character, SPLIT, END)


def test_the_compiled_measure_gives_the_references_counts_on_the_shared_pages_texts(data_dir):
    from conftest import sampled_pages

    from cleaner.page.decode import decode_html
    from cleaner.page.segment import segment_blocks

    texts = set()
    for page in sampled_pages(data_dir, 25):
        texts.update(b.text for b in segment_blocks(decode_html(page.read_html()).text).blocks)
    assert len(texts) > 10_000
    differ = [t for t in sorted(texts) if compiled.measure_text(t, True) != measure_text(t, True, SPLIT, END)
              or compiled.count_words(t) != count_words(t)]
    assert not differ, differ[:5]


def test_the_features_use_the_compiled_measure_for_the_default_patterns_and_the_reference_for_others():
    from cleaner.page.features import FeatureExtractor, compiled_measure

    # The module implements the default patterns as conf/default.toml writes them.
    assert (_REGEXP["sentence_split"], _REGEXP["sentence_end"]) == (compiled.SENTENCE_SPLIT, compiled.SENTENCE_END)
    assert FeatureExtractor().compiled_measure is compiled.measure_text
    assert compiled_measure(r"[.!?]+\s+", _REGEXP["sentence_end"]) is None


@settings(max_examples=300, deadline=None)
@given(text=st.text(alphabet=ALPHABET, max_size=40))
def test_the_compiled_word_count_gives_the_references(text):
    assert compiled.count_words(text) == count_words(text)
