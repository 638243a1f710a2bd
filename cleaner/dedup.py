"""Deduplication keys of a cleaned text: an exact hash and a MinHash signature with LSH band keys.

* `text_hash`: xxh3_64 of the normalised text (NFKC, casefolded, every run of non-word characters
  one space), so that two pages differing only in case, punctuation or spacing share it. Exact
  duplicates are one GROUP BY on it.
* `minhash`: the MinHash signature of the text's word shingles (`shingle_words` consecutive words of
  the normalised text; a text shorter than that is one shingle). Each of the `permutations` hash
  functions is multiply-add-shift over the shingle's 64-bit xxh3 hash: ((a * x + b) mod 2^64) >> 32
  with odd a (Dietzfelbinger's universal family), drawn once from `seed`, so the same text gives the
  same signature on every machine and in every run with the same settings. The share of equal
  positions of two signatures estimates the Jaccard similarity of their shingle sets.
* `minhash_bands`: LSH (Broder; the banding of Leskovec et al., "Mining of Massive Datasets", 3.4):
  the signature cut into `bands` bands of permutations / bands rows, each band hashed with its
  index into one int64 key. Two texts of Jaccard similarity s share at least one key with
  probability 1 - (1 - s^r)^b; with 14 bands of 8 (FineWeb's setting) that is 0.92 at s = 0.8 and
  0.08 at s = 0.5. Near-duplicate candidates are one join (or GROUP BY) on the unnested keys.

Words are the normalised text's `\\w+` runs, except that each Han or kana character is a word of its own,
as the scorer counts them (Chinese and Japanese put no spaces between words).
An empty text (a rejected page) has no keys: None, so that empty pages are not all one duplicate group.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

import numpy as np
import xxhash

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002fa1f"
_WORD_RX = re.compile(f"[{_CJK}]|[^\\W{_CJK}]+")
_NON_WORD_RX = re.compile(r"[\W_]+")
_CHUNK = 4096  # shingles hashed at once: bounds the (shingles x permutations) matrix to 3.7 MB


def normalise(text: str) -> str:
    """The text as the exact hash sees it: NFKC, casefolded, runs of non-word characters one space."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return _NON_WORD_RX.sub(" ", folded).strip()


def text_hash(text: str) -> int | None:
    """xxh3_64 of the normalised text as a signed int64 (what Parquet, Spark and DuckDB all store);
    None when the normalised text is empty."""
    norm = normalise(text)
    if not norm:
        return None
    return _signed(xxhash.xxh3_64_intdigest(norm.encode("utf-8")))


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
        self._a = rng.integers(0, top, size=permutations, dtype=np.uint64, endpoint=True) | np.uint64(1)
        self._b = rng.integers(0, top, size=permutations, dtype=np.uint64, endpoint=True)

    def shingle_hashes(self, text: str) -> np.ndarray:
        """64-bit hashes of the distinct word shingles of `text` (empty when it has no word)."""
        words = _WORD_RX.findall(unicodedata.normalize("NFKC", text).casefold())
        if not words:
            return np.empty(0, dtype=np.uint64)
        k = self.shingle_words
        if len(words) <= k:
            shingles = {" ".join(words)}
        else:
            shingles = {" ".join(words[i:i + k]) for i in range(len(words) - k + 1)}
        h = xxhash.xxh3_64_intdigest
        return np.fromiter((h(s.encode("utf-8")) for s in shingles), dtype=np.uint64, count=len(shingles))

    def keys(self, text: str) -> MinHashKeys | None:
        """The signature and band keys of `text`; None when it has no word."""
        hashes = self.shingle_hashes(text)
        if hashes.size == 0:
            return None
        # (shingles x permutations) products wrap modulo 2^64 by design; the top 32 bits are the hash.
        # In chunks of shingles: a long page's whole matrix would take 900 bytes per shingle.
        signature = np.full(self.permutations, np.iinfo(np.uint64).max, dtype=np.uint64)
        with np.errstate(over="ignore"):
            for start in range(0, hashes.size, _CHUNK):
                part = hashes[start:start + _CHUNK, None]
                mixed = (part * self._a[None, :] + self._b[None, :]) >> np.uint64(32)
                np.minimum(signature, mixed.min(axis=0), out=signature)
        rows = self.rows
        bands = []
        for band in range(self.bands):
            chunk = signature[band * rows:(band + 1) * rows].astype("<u4").tobytes()
            bands.append(_signed(xxhash.xxh3_64_intdigest(chunk, seed=band)))
        return MinHashKeys(signature.tolist(), bands)


def estimated_jaccard(a: list[int], b: list[int]) -> float:
    """Share of equal positions of two signatures: the estimate of their shingle sets' Jaccard similarity."""
    return sum(x == y for x, y in zip(a, b)) / len(a) if a else 0.0
