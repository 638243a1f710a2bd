"""The corpus columns of one document: what a corpus pipeline reads beside the text (docs/corpus_columns.md).

`CorpusColumns.from_settings(config.settings.corpus)` is built once per process (it holds the MinHash
parameters); `columns(text)` gives, for the clean plain text of one page, its language and confidence
(cleaner/output/langid.py), its exact hash and near-duplicate keys (cleaner/output/dedup.py) and its quality signals
(cleaner/output/signals.py), as a flat dict of the schema's column names (cleaner/output/schema.py). Pure Python.
"""

from __future__ import annotations

from dataclasses import dataclass

from .dedup import MinHasher, exact_hash, word_hashes, words_of
from .langid import UNDETERMINED, LanguageIdentifier
from .signals import TextSignals, text_signals

# (column, TextSignals field): the signals' columns in the Parquet, in schema order
SIGNAL_COLUMNS = (
    ("text_chars", "chars"), ("text_words", "words"), ("text_lines", "lines"),
    ("mean_word_length", "mean_word_length"), ("alpha_word_share", "alpha_word_share"),
    ("end_punct_line_share", "end_punct_line_share"), ("short_line_share", "short_line_share"),
    ("bullet_line_share", "bullet_line_share"), ("ellipsis_line_share", "ellipsis_line_share"),
    ("symbol_word_ratio", "symbol_word_ratio"), ("dup_line_share", "dup_line_share"),
    ("dup_line_char_share", "dup_line_char_share"), ("has_curly_bracket", "has_curly_bracket"),
    ("has_lorem_ipsum", "has_lorem_ipsum"),
)
assert {f for _, f in SIGNAL_COLUMNS} == set(TextSignals.__dataclass_fields__), "a signal without its column"


@dataclass
class CorpusColumns:
    langid: LanguageIdentifier
    minhash: MinHasher
    keep_signature: bool  # the signature's 112 numbers are 17 % of the Parquet bytes; the band keys find the pairs

    @classmethod
    def from_settings(cls, corpus) -> CorpusColumns:
        """From the [corpus] settings (cleaner.settings.Corpus)."""
        return cls(LanguageIdentifier.from_settings(corpus),
                   MinHasher(shingle_words=corpus.shingle_words, permutations=corpus.minhash_permutations,
                             bands=corpus.minhash_bands, seed=corpus.minhash_seed),
                   corpus.minhash_signature)

    def columns(self, text: str) -> dict:
        """The corpus columns of a page whose clean plain text is `text` ('' for a rejected page)."""
        lang = self.langid.identify(text) if text else None
        hashes = word_hashes(words_of(text))  # once for both dedup keys
        keys = self.minhash.keys_of_hashes(hashes)
        signals = text_signals(text)
        out = {
            "language": lang.code if lang else UNDETERMINED,
            "language_score": lang.score if lang else 0.0,
            "text_hash": exact_hash(hashes),
            "minhash": keys.signature if keys and self.keep_signature else None,
            "minhash_bands": keys.bands if keys else None,
        }
        out.update((col, getattr(signals, field)) for col, field in SIGNAL_COLUMNS)
        return out


_DEFAULT: CorpusColumns | None = None


def default_corpus_columns() -> CorpusColumns:
    """The corpus columns of conf/default.toml's [corpus] settings (built once)."""
    global _DEFAULT
    if _DEFAULT is None:
        from ..config import load_config

        _DEFAULT = CorpusColumns.from_settings(load_config().settings.corpus)
    return _DEFAULT
