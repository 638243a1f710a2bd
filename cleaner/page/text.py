"""Script-aware character and word counting shared by features, assembly and statistics, and the
whitespace normalisation of every block's text (normalise_space).

Scripts written without spaces (Chinese, Japanese kana) count one word per code point, so
that word-based features and statistics mean the same thing in every language. No
language-specific word lists are used anywhere in the core.
"""

from __future__ import annotations

import re
from typing import Final

from .. import compiled_twin


def compiled_text_module():
    """cleaner/page/compiled_text.pyx, this module's compiled twin (and the features' regexp gates), if it is built;
    else None, and the references here run."""
    return compiled_twin("page.compiled_text")


# Han, kana, CJK compatibility ideographs and extension planes: one word per code point.
_CJK: Final = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002fa1f"
WORD_RE: Final = re.compile(rf"[{_CJK}]|[^\W{_CJK}]+")
# Whitespace-separated tokens, but Han and kana one token per character: the token family's with [features]
# per_character_tokens, and the words of cleaner.output.dedup once it has dropped punctuation.
TOKEN_RE: Final = re.compile(rf"[{_CJK}]|[^\s{_CJK}]+")
_CJK_RE: Final = re.compile(rf"[{_CJK}]")


def tokens(text: str, per_character: bool) -> list[str]:
    """The text's whitespace-separated tokens; with `per_character`, Han and kana one token each."""
    # Only text holding Han or kana is split by the regexp: on other text it gives split()'s tokens 5x slower
    # (12 against 2.5 us for 500 characters; the search costs 2).
    if per_character and not text.isascii() and _CJK_RE.search(text):
        return TOKEN_RE.findall(text)
    return text.split()
_ALPHA_RE: Final = re.compile(r"[^\W\d_]+")
_DIGIT_RE: Final = re.compile(r"\d+")
_SPACE_RE: Final = re.compile(r"\s+")
# Punctuation of the common scripts; any other non-word, non-space character is "other".
_PUNCT_RE: Final = re.compile(
    r"[!-/:-@\[-`{-~\u00a1\u00ab\u00b7\u00bb\u00bf\u2010-\u2027\u2030-\u205e"
    r"\u3000-\u303f\uff01-\uff0f\uff1a-\uff20\uff3b-\uff40\uff5b-\uff65\u0589\u05be"
    r"\u060c\u061b\u061f\u06d4\u0964\u0965]+"
)


def normalise_space(text: str) -> str:
    # Runs of whitespace to one space, trimmed: the same as re.sub(r"\s+", " ", text).strip()
    # (both read whitespace as str.isspace does; tests/test_segment.py), 3-4x faster.
    return " ".join(text.split())


def words(text: str) -> list[str]:
    return WORD_RE.findall(text)


# In ASCII, WORD_RE's words are the runs of [A-Za-z0-9_]: every other character becomes a space
# and split counts the runs, in C, without a list of match strings. The text is translated as
# bytes through a 256-byte table, 2.5x faster than str.translate's per-character dict lookups.
_ASCII_NON_WORD: Final = bytes(c if c < 128 and (chr(c).isalnum() or chr(c) == "_") else 32 for c in range(256))


def count_words(text: str) -> int:
    if text.isascii():
        return len(text.encode("ascii").translate(_ASCII_NON_WORD).split())
    return len(WORD_RE.findall(text))


def _run_length(pattern: re.Pattern, text: str) -> int:
    return sum(map(len, pattern.findall(text)))


def _ascii_class(c: int) -> bytes:
    ch = chr(c)
    if ch.isalpha():
        return b"a"
    if ch.isdigit():
        return b"n"
    if ch.isspace():
        return b"w"
    return b"p" if _PUNCT_RE.match(ch) else b"o"


# ASCII fast path: one C-level bytes.translate maps every character to its class letter.
_ASCII_CLASS: Final = b"".join(_ascii_class(c) if c < 128 else b"o" for c in range(256))


def char_classes(text: str) -> tuple[int, int, int, int, int]:
    """Counts of (alpha, num, punct, white, other) characters, for any script."""
    if text.isascii():
        t = text.encode("ascii").translate(_ASCII_CLASS)
        return t.count(b"a"), t.count(b"n"), t.count(b"p"), t.count(b"w"), t.count(b"o")
    alpha = _run_length(_ALPHA_RE, text)
    num = _run_length(_DIGIT_RE, text)
    white = _run_length(_SPACE_RE, text)
    punct = _run_length(_PUNCT_RE, text)
    other = max(0, len(text) - alpha - num - white - punct)
    return alpha, num, punct, white, other


def token_classes(text: str, per_character: bool) -> tuple[int, int, int, int, int]:
    """Counts of the text's tokens (`tokens`) that are alphabetic, numeric, alphanumeric mixes and anything
    else (by str.isalpha, isdigit and isalnum, in that order), and of all its tokens."""
    alpha = num = mix = other = 0
    toks = tokens(text, per_character)
    for tok in toks:
        if tok.isalpha():
            alpha += 1
        elif tok.isdigit():
            num += 1
        elif tok.isalnum():
            mix += 1
        else:
            other += 1
    return alpha, num, mix, other, len(toks)


def measure_text(text: str, per_character: bool, sentence_split: re.Pattern,
                 sentence_end: re.Pattern) -> tuple[int, ...]:
    """What the features read of a block's text, in one tuple: its character classes (`char_classes`: alpha,
    num, punct, white, other), its token classes (`token_classes`: alpha, num, mix, other, all), its sentences
    (the pieces between `sentence_split`'s matches that are not blank) and its sentence ends (`sentence_end`'s
    matches: an anchored pattern matches once at most).

    The readable reference of cleaner/page/compiled_text.pyx, which computes the same in one pass over the
    characters for the default patterns ([features.regexp] sentence_split and sentence_end) and must give the
    same tuple (tests/test_compiled_text.py)."""
    n_sentences = sum(1 for piece in sentence_split.split(text) if piece and not piece.isspace())
    ends = len(sentence_end.findall(text))
    return char_classes(text) + token_classes(text, per_character) + (n_sentences, ends)
