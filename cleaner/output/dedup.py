"""Deduplication keys of a cleaned text: an exact hash and a MinHash signature with LSH band keys.

* `text_hash`: xxh3_64 over the xxh3_64 hashes of the normalised words (NFKC, casefolded, punctuation
  dropped: words_of), so that two pages differing only in case, punctuation or spacing share it. (Over the
  words' hashes, which MinHash needs anyway, rather than the text once more.) Exact duplicates are one
  GROUP BY on it.
* `minhash`: the MinHash signature of the text's word shingles (`shingle_words` consecutive words of
  the normalised text; a text shorter than that is one shingle). A shingle's 64-bit hash combines its
  words' xxh3 hashes (each times an odd multiplier of its position, summed modulo 2^64: every word is
  hashed once, not once per shingle it is in). Each of the `permutations` hash functions is
  multiply-add-shift over it, ((a * x + b) mod 2^64) >> 32 with odd a (Dietzfelbinger's universal
  family), all drawn once from `seed`, so the same text gives the same signature on every machine and in
  every run with the same settings. The share of equal positions of two signatures estimates the
  Jaccard similarity of their shingle sets.
* `minhash_bands`: LSH (Broder; the banding of Leskovec et al., "Mining of Massive Datasets", 3.4):
  the signature cut into `bands` bands of permutations / bands rows, each band made one int64 key
  (its values times random odd multipliers, summed with a random number of its band, mod 2^64: one
  numpy expression for all bands). Two texts of Jaccard similarity s share at least one key with
  probability 1 - (1 - s^r)^b; with 14 bands of 8 (FineWeb's setting) that is 0.92 at s = 0.8 and
  0.05 at s = 0.5. Near-duplicate candidates are one join (or GROUP BY) on the unnested keys.

Words are the text's runs between whitespace and punctuation, except that each Han or kana character is a
word of its own (Chinese and Japanese put no spaces between words). Punctuation is ASCII's and the common
Unicode blocks' (General Punctuation, Latin-1, CJK), found with one table lookup and one byte-pattern pass:
a per-character Unicode regex took 0.2 ms of a page.
An empty text (a rejected page) has no keys: None, so that empty pages are not all one duplicate group.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

import numpy as np
import xxhash

from .. import compiled_twin
from ..page.text import TOKEN_RE

_compiled = compiled_twin("output.compiled_corpus")

# Lead bytes of Han and kana in UTF-8 (a quick test before TOKEN_RE, which makes each one a word; a false alarm
# costs only time)
_CJK_BYTES_RX = re.compile(rb"[\xe3-\xe9]|\xef[\xa4-\xab]|\xf0[\xa0-\xaf]")
# ... whose first bytes, as one character class, re scans for four times faster than for the pattern
_CJK_LEAD_RX = re.compile(rb"[\xe3-\xe9\xef\xf0]")
# ASCII characters other than letters and digits become spaces (one bytes.translate: no per-character regex) ...
_ASCII_TABLE = bytes(c if chr(c).isalnum() or c >= 128 else 32 for c in range(256))
# ... and so do the UTF-8 of General Punctuation (U+2000-U+207F: dashes, curly quotes, ellipsis), Latin-1
# punctuation (U+00A1-U+00BF: guillemets, inverted marks) and CJK punctuation (U+3000-U+303F)
_PUNCT_RX = re.compile(rb"\xe2[\x80\x81][\x80-\xbf]|\xc2[\xa1-\xbf]|\xe3\x80[\x80-\xbf]")
_CHUNK = 4096  # shingles hashed at once: bounds the (permutations x shingles) matrix to 3.7 MB


def words_of(text: str) -> list[bytes]:
    """The normalised words of a text, UTF-8: NFKC, casefolded, split at whitespace and punctuation (ASCII,
    General Punctuation, Latin-1 and CJK punctuation); each Han or kana character is a word of its own."""
    if text.isascii():  # (a third of pages: NFKC leaves ASCII as it is, and casefolds it to lower case)
        return text.lower().encode("ascii").translate(_ASCII_TABLE).split()
    return words_of_any(text)


def words_of_any(text: str) -> list[bytes]:
    """words_of for a text in any script (words_of takes a shorter way for ASCII)."""
    folded = unicodedata.normalize("NFKC", text).casefold().encode("utf-8", "replace")  # a lone surrogate: "?"
    spaced, cjk = spaced_reference(folded) if _compiled is None else _compiled.spaced(folded, _ASCII_TABLE)
    if cjk:
        return [w.encode("utf-8") for w in TOKEN_RE.findall(spaced.decode("utf-8"))]
    return spaced.split()


def spaced_reference(folded: bytes) -> tuple[bytes, bool]:
    """(A casefolded text's UTF-8 with its punctuation made spaces: ASCII's by the table, General Punctuation's,
    Latin-1's and CJK's one space a character; whether that holds Han or kana). The readable reference of
    compiled_corpus.spaced: its regexps each try a pattern at every byte, 1.3 M instructions a page of 2025 in the
    corpus columns, where the compiled pass takes 0.15 M."""
    spaced = _PUNCT_RX.sub(b" ", folded.translate(_ASCII_TABLE))
    return spaced, bool(_CJK_LEAD_RX.search(spaced) and _CJK_BYTES_RX.search(spaced))


def normalise(text: str) -> str:
    """The text as the dedup keys see it: its normalised words (words_of) joined by single spaces."""
    return b" ".join(words_of(text)).decode("utf-8")


def word_hashes(words: list[bytes]) -> np.ndarray:
    """The xxh3_64 hash of each word, in text order (uint64). Taken as the hashes' 8 big-endian bytes each,
    joined and read as one array: numpy reading a list of Python ints took ~40 % more a word."""
    return np.frombuffer(b"".join(map(xxhash.xxh3_64_digest, words)), dtype=">u8").astype(np.uint64)


def exact_hash(hashes: np.ndarray) -> int | None:
    """The exact-duplicate key of a text from its words' hashes: xxh3_64 of them (little-endian uint64s) as a
    signed int64 (what Parquet, Spark and DuckDB all store); None when there is no word."""
    if hashes.size == 0:
        return None
    return _signed(xxhash.xxh3_64_intdigest(hashes.astype("<u8", copy=False).tobytes()))


def text_hash(text: str) -> int | None:
    """The exact-duplicate key of `text` (see exact_hash)."""
    return exact_hash(word_hashes(words_of(text)))


def _signed(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


@dataclass(frozen=True)
class MinHashKeys:
    signature: list[int]  # `permutations` values in [0, 2^32)
    bands: list[int]  # `bands` int64 LSH keys, band index included


class MinHasher:
    """MinHash signatures and LSH band keys with fixed parameters (built once per process)."""

    def __init__(self, *, shingle_words: int, permutations: int, bands: int, seed: int):
        if permutations % bands:
            raise ValueError(f"permutations ({permutations}) must be a multiple of bands ({bands})")
        self.shingle_words, self.permutations, self.bands = shingle_words, permutations, bands
        self.rows = permutations // bands
        rng = np.random.default_rng(seed)
        top = np.iinfo(np.uint64).max
        # column vectors: the (permutations x shingles) matrix is reduced along its contiguous rows
        self._a = (rng.integers(0, top, size=permutations, dtype=np.uint64, endpoint=True) | np.uint64(1))[:, None]
        self._b = rng.integers(0, top, size=permutations, dtype=np.uint64, endpoint=True)[:, None]
        # a shingle's hash: its words' xxh3 hashes times one odd multiplier per position, summed mod 2^64
        self._positions = rng.integers(0, top, size=shingle_words, dtype=np.uint64, endpoint=True) | np.uint64(1)
        # a band's key: its rows times one odd multiplier per row, plus a number of its band, mod 2^64
        self._row_multipliers = rng.integers(0, top, size=self.rows, dtype=np.uint64, endpoint=True) | np.uint64(1)
        self._band_salts = rng.integers(0, top, size=bands, dtype=np.uint64, endpoint=True)

    def shingle_hashes(self, hashes: np.ndarray) -> np.ndarray:
        """The 64-bit hashes of the word shingles of a text from its words' hashes (word_hashes), in text order,
        a repeated shingle as often as it occurs (the minimum does not change); empty when there is no word."""
        n, k = hashes.size, self.shingle_words
        if n == 0:
            return np.empty(0, dtype=np.uint64)
        word_hashes = hashes
        span = min(n, k)  # a text shorter than a shingle is one shingle of what it has
        count = n - span + 1
        with np.errstate(over="ignore"):  # products and sums wrap modulo 2^64 by design
            shingles = word_hashes[:count] * self._positions[0]
            for j in range(1, span):
                shingles += word_hashes[j:j + count] * self._positions[j]
        return shingles

    def minimum_reference(self, shingles: np.ndarray, signature: np.ndarray) -> None:
        """signature[i] = min(signature[i], min over the shingles x of (a_i x + b_i) mod 2^64): the readable reference
        of compiled_corpus.minhash_minimum. In chunks of shingles: a long page's whole (functions x shingles) matrix
        would take 900 bytes a shingle."""
        with np.errstate(over="ignore"):
            for start in range(0, shingles.size, _CHUNK):
                mixed = self._a * shingles[None, start:start + _CHUNK]
                mixed += self._b
                np.minimum(signature, mixed.min(axis=1), out=signature)

    def keys(self, text: str) -> MinHashKeys | None:
        """The signature and band keys of `text`; None when it has no word."""
        return self.keys_of_hashes(word_hashes(words_of(text)))

    def keys_of_hashes(self, hashes: np.ndarray) -> MinHashKeys | None:
        """The signature and band keys of a text from its words' hashes (word_hashes); None without words."""
        hashes = self.shingle_hashes(hashes)
        if hashes.size == 0:
            return None
        # h_i(x) = ((a_i x + b_i) mod 2^64) >> 32; the shift commutes with the minimum, so it is taken last.
        signature = np.full(self.permutations, np.iinfo(np.uint64).max, dtype=np.uint64)
        if _compiled is None:
            self.minimum_reference(hashes, signature)
        else:  # (0.40 ms of a page in numpy, 0.11 ms compiled)
            _compiled.minhash_minimum(hashes, self._a.ravel(), self._b.ravel(), signature)
        signature >>= np.uint64(32)
        with np.errstate(over="ignore"):
            keys = (signature.reshape(self.bands, self.rows) * self._row_multipliers).sum(axis=1, dtype=np.uint64)
            keys += self._band_salts
        return MinHashKeys(signature.tolist(), keys.view(np.int64).tolist())


def estimated_jaccard(a: list[int], b: list[int]) -> float:
    """Share of equal positions of two signatures: the estimate of their shingle sets' Jaccard similarity."""
    return sum(x == y for x, y in zip(a, b)) / len(a) if a else 0.0
