"""Quality signals of a cleaned text: the inputs of the Gopher, C4 and FineWeb document filters.

Computed once per document from the clean plain text (the `text` column), so that a corpus builder
filters with a WHERE clause instead of re-reading and re-tokenising every text. Pure Python, no
dependencies; the definitions follow the filters that use them:

* Gopher (Rae et al. 2021, "quality filters"): words (whitespace-separated), mean word length,
  share of words with an alphabetic character, symbol-to-word ratio ('#' and ellipses), share of
  lines starting with a bullet, share of lines ending with an ellipsis; the repetition filter's
  duplicate-line share (by lines and by characters).
* C4 (Raffel et al. 2020): share of lines ending in terminal punctuation; '{' in the text, "lorem ipsum".
* FineWeb (Penedo et al. 2024): share of lines ending in punctuation, share of short lines (<= 30 chars),
  duplicate-line character share.

Lines are the text's non-empty lines (after stripping), words its whitespace-separated tokens: in
scripts written without spaces (Chinese, Japanese, Thai) a "word" is a run of text, as it is for
those filters too; filter such languages on characters instead.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass

from .. import compiled_twin

# Terminal punctuation of a line (C4's and FineWeb's list, with the CJK full stops and closing quotes).
END_PUNCTUATION = (".", "!", "?", '"', "'", "\u201d", "\u2019", "\u00bb", "\u2026", "\u3002", "\uff01", "\uff1f",
                   "\u300d", "\u300f", ":", ";", ")")
BULLETS = ("\u2022", "\u25cf", "\u25cb", "\u25aa", "\u25a0", "\u2023", "\u2043", "-", "*", "\u2013", "\u2014")
ELLIPSES = ("...", "\u2026")
SHORT_LINE_CHARS = 30  # FineWeb's short line
_LETTER_RX = re.compile(r"[^\W\d_]")
_EDGE_PUNCTUATION = "\"'()[]{}<>.,;:!?-*/\u2018\u2019\u201c\u201d\u00ab\u00bb\u2026\u2013\u2014"


@dataclass(frozen=True)
class TextSignals:
    """Counts and shares of one document's clean text (shares are 0 for an empty text)."""

    chars: int
    words: int
    lines: int
    mean_word_length: float
    alpha_word_share: float  # words with at least one alphabetic character (Gopher: keep >= 0.8)
    end_punct_line_share: float  # lines ending in terminal punctuation (C4 keeps only such lines)
    short_line_share: float  # lines of at most 30 characters (FineWeb: drop > 0.67)
    bullet_line_share: float  # lines starting with a bullet (Gopher: drop > 0.9)
    ellipsis_line_share: float  # lines ending with an ellipsis (Gopher: drop > 0.3)
    symbol_word_ratio: float  # ('#' + ellipses) / words (Gopher: drop > 0.1)
    dup_line_share: float  # lines that repeat an earlier line (Gopher: drop > 0.3)
    dup_line_char_share: float  # characters in those lines / characters in all lines (Gopher: drop > 0.2)
    has_curly_bracket: bool  # C4 drops pages with '{' (code, templates)
    has_lorem_ipsum: bool  # C4 drops placeholder text

    def to_dict(self) -> dict:
        return asdict(self)


def _share(part: int, whole: int) -> float:
    return part / whole if whole else 0.0


def signal_counts_reference(text: str) -> tuple[int, ...]:
    """(lines, line characters, repeated lines, their characters, lines ending in punctuation, short lines, bullet
    lines, lines ending with an ellipsis, words, word characters, words with a letter) of `text`: the readable
    reference of compiled_corpus.signal_counts, which `signal_counts` is when it is built."""
    lines = [s for s in (line.strip() for line in text.splitlines()) if s]
    words = text.split()
    seen: set[str] = set()
    dup_lines = dup_chars = line_chars = 0
    end_punct = short = bullet = ellipsis_end = 0
    for line in lines:
        line_chars += len(line)
        if line in seen:
            dup_lines += 1
            dup_chars += len(line)
        else:
            seen.add(line)
        if line.endswith(END_PUNCTUATION):
            end_punct += 1
        if len(line) <= SHORT_LINE_CHARS:
            short += 1
        if line.startswith(BULLETS):
            bullet += 1
        if line.endswith(ELLIPSES):
            ellipsis_end += 1
    # a word is alphabetic at once (most are), or once the punctuation around it is stripped, or holds a
    # letter beside digits or inner punctuation (the regex, for the few left)
    alpha = len(words) - sum(1 for w in words if not w.isalpha() and not w.strip(_EDGE_PUNCTUATION).isalpha()
                             and not _LETTER_RX.search(w))
    word_chars = len("".join(words))  # one C call, not a length per word
    return (len(lines), line_chars, dup_lines, dup_chars, end_punct, short, bullet, ellipsis_end,
            len(words), word_chars, alpha)


_compiled = compiled_twin("output.compiled_corpus")
signal_counts = signal_counts_reference if _compiled is None else _compiled.signal_counts


def has_lorem_ipsum(text: str) -> bool:
    """Whether `text.lower()` holds "lorem ipsum", without lowering the text (0.7 M instructions a page of 2025 for a
    text that is not ASCII): only ASCII letters and spaces lower to those characters, but for U+0130, which lowers to
    "i" and a combining dot and so cannot stand before the "p". So the test is the same on the text's ASCII with
    every other character one "?", lowered as ASCII (tests/test_compiled_corpus.py checks every code point)."""
    if text.isascii():
        return "lorem ipsum" in text.lower()
    return b"lorem ipsum" in text.encode("ascii", "replace").lower()


def text_signals(text: str) -> TextSignals:
    """The signals of `text` (one pass over its lines and words)."""
    (n_lines, line_chars, dup_lines, dup_chars, end_punct, short, bullet, ellipsis_end,
     n_words, word_chars, alpha) = signal_counts(text)
    symbols = text.count("#") + text.count("...") + text.count("\u2026")
    return TextSignals(
        chars=len(text),
        words=n_words,
        lines=n_lines,
        mean_word_length=_share(word_chars, n_words),
        alpha_word_share=_share(alpha, n_words),
        end_punct_line_share=_share(end_punct, n_lines),
        short_line_share=_share(short, n_lines),
        bullet_line_share=_share(bullet, n_lines),
        ellipsis_line_share=_share(ellipsis_end, n_lines),
        symbol_word_ratio=_share(symbols, n_words),
        dup_line_share=_share(dup_lines, n_lines),
        dup_line_char_share=_share(dup_chars, line_chars),
        has_curly_bracket="{" in text,
        has_lorem_ipsum=has_lorem_ipsum(text),
    )
