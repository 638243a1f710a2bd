# cython: language_level=3, boundscheck=False, wraparound=False
"""The corpus columns' two loops over a whole text, compiled, each beside its readable reference:

* `signal_counts(text)` is `cleaner.output.signals.signal_counts_reference`: the line and word counts of the quality
  signals, in one pass over the characters instead of a list of lines, a list of words and a Python test per word.
* `minhash_minimum(shingles, a, b, signature)` is the numpy loop of `cleaner.output.dedup.MinHasher.signature_reference`:
  for each hash function i, the minimum over the shingles x of (a_i x + b_i) mod 2^64, without the
  (functions x shingles) matrix that numpy builds, fills and reduces.

* `spaced(folded, table)` is `cleaner.output.dedup.spaced_reference`: a casefolded text's UTF-8 with the ASCII
  characters other than letters and digits made spaces (`table`) and the UTF-8 of General Punctuation, Latin-1's
  and CJK's punctuation made one space each, and whether it holds Han or kana, in one pass over the bytes instead
  of a translate and three regexps that each try a pattern at every byte.

Each gives the same numbers as its reference for every text (tests/test_compiled_corpus.py compares both on the
shared pages' texts and on generated ones). What the counts rest on:

* `str.split()` and `str.strip()` cut at the characters `Py_UNICODE_ISSPACE` accepts, and `str.splitlines()` at those
  `Py_UNICODE_ISLINEBREAK` accepts, all of which are whitespace. A line that is empty once stripped is not counted,
  so cutting at each line-break character (not at "\\r\\n" as one) gives the same lines.
* The reference counts a word as alphabetic when it holds a character of `[^\\W\\d_]`: Python's `re` reads `\\w` as
  `Py_UNICODE_ISALNUM` or "_", and `\\d` as `Py_UNICODE_ISDECIMAL`. (Its two faster tests, `isalpha` before and after
  stripping punctuation, only pass words that hold such a character.)
* The lines' end and start marks (cleaner.output.signals.END_PUNCTUATION, BULLETS, ELLIPSES) are single characters,
  but for "...".
"""

from cpython.unicode cimport (
    PyUnicode_DATA, PyUnicode_GET_LENGTH, PyUnicode_KIND, PyUnicode_READ, PyUnicode_Substring, Py_UNICODE_ISALNUM,
    Py_UNICODE_ISDECIMAL, Py_UNICODE_ISLINEBREAK, Py_UNICODE_ISSPACE,
)
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from libc.stdint cimport uint64_t

# The marks the reference's tuples hold (a test holds them equal).
END_PUNCTUATION = '.!?"\'\u201d\u2019\u00bb\u2026\u3002\uff01\uff1f\u300d\u300f:;)'
BULLETS = "\u2022\u25cf\u25cb\u25aa\u25a0\u2023\u2043-*\u2013\u2014"
SHORT_LINE_CHARS = 30


cdef inline bint _ends_sentence(Py_UCS4 c):
    return (c == 0x2E or c == 0x21 or c == 0x3F or c == 0x22 or c == 0x27 or c == 0x3A or c == 0x3B or c == 0x29
            or c == 0x201D or c == 0x2019 or c == 0xBB or c == 0x2026 or c == 0x3002 or c == 0xFF01 or c == 0xFF1F
            or c == 0x300D or c == 0x300F)


cdef inline bint _is_bullet(Py_UCS4 c):
    return (c == 0x2D or c == 0x2A or c == 0x2022 or c == 0x25CF or c == 0x25CB or c == 0x25AA or c == 0x25A0
            or c == 0x2023 or c == 0x2043 or c == 0x2013 or c == 0x2014)


cdef inline bint _is_linebreak(Py_UCS4 c):
    # Py_UNICODE_ISLINEBREAK, without its call into the Unicode database for ASCII: \n \v \f \r and \x1c-\x1e
    if c < 0x80:
        return (0x0A <= c <= 0x0D) or (0x1C <= c <= 0x1E)
    return Py_UNICODE_ISLINEBREAK(c)


cdef inline bint _is_letter(Py_UCS4 c):
    # re's [^\W\d_]: alphanumeric, not a decimal digit ("_" is not alphanumeric); ASCII without the database
    if c < 0x80:
        return (0x41 <= c <= 0x5A) or (0x61 <= c <= 0x7A)
    return Py_UNICODE_ISALNUM(c) and not Py_UNICODE_ISDECIMAL(c)


def signal_counts(str text):
    """(lines, line characters, repeated lines, their characters, lines ending in punctuation, short lines, bullet
    lines, lines ending with an ellipsis, words, word characters, words with a letter) of `text`."""
    cdef Py_ssize_t n = PyUnicode_GET_LENGTH(text)
    cdef int kind = PyUnicode_KIND(text)
    cdef void *data = PyUnicode_DATA(text)
    cdef Py_ssize_t i = 0, start, end, length
    cdef Py_ssize_t lines = 0, line_chars = 0, dup_lines = 0, dup_chars = 0
    cdef Py_ssize_t end_punct = 0, short = 0, bullet = 0, ellipsis_end = 0
    cdef Py_ssize_t words = 0, word_chars = 0, alpha = 0
    cdef Py_UCS4 c, last
    cdef bint in_word = False, has_letter = False
    cdef set seen = set()
    # the words: runs of characters that are not whitespace
    for i in range(n):
        c = PyUnicode_READ(kind, data, i)
        if Py_UNICODE_ISSPACE(c):
            if in_word:
                alpha += has_letter
                in_word = False
        else:
            if not in_word:
                in_word, has_letter = True, False
                words += 1
            word_chars += 1
            if not has_letter and _is_letter(c):
                has_letter = True
    if in_word:
        alpha += has_letter
    # the lines: runs between line breaks, stripped of whitespace, when something is left
    i = 0
    while i < n:
        start = i
        while i < n and not _is_linebreak(PyUnicode_READ(kind, data, i)):
            i += 1
        end = i
        i += 1
        while start < end and Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, start)):
            start += 1
        while end > start and Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, end - 1)):
            end -= 1
        if start == end:
            continue
        length = end - start
        lines += 1
        line_chars += length
        line = PyUnicode_Substring(text, start, end)
        if line in seen:
            dup_lines += 1
            dup_chars += length
        else:
            seen.add(line)
        last = PyUnicode_READ(kind, data, end - 1)
        end_punct += _ends_sentence(last)
        short += length <= SHORT_LINE_CHARS
        bullet += _is_bullet(PyUnicode_READ(kind, data, start))
        ellipsis_end += last == 0x2026 or (
            length >= 3 and last == 0x2E and PyUnicode_READ(kind, data, end - 2) == 0x2E
            and PyUnicode_READ(kind, data, end - 3) == 0x2E)
    return (lines, line_chars, dup_lines, dup_chars, end_punct, short, bullet, ellipsis_end, words, word_chars, alpha)


def minhash_minimum(const uint64_t[::1] shingles, const uint64_t[::1] a, const uint64_t[::1] b,
                    uint64_t[::1] signature):
    """signature[i] = min(signature[i], min over x in shingles of (a[i] * x + b[i]) mod 2^64), for every i."""
    cdef Py_ssize_t i, j, n = shingles.shape[0]
    cdef uint64_t ai, bi, low0, low1, low2, low3, v0, v1, v2, v3
    with nogil:
        for i in range(signature.shape[0]):
            ai, bi = a[i], b[i]
            # four running minima, so that each compare waits on the one four shingles back, not on the last
            low0 = low1 = low2 = low3 = signature[i]
            j = 0
            while j + 4 <= n:
                v0 = ai * shingles[j] + bi
                v1 = ai * shingles[j + 1] + bi
                v2 = ai * shingles[j + 2] + bi
                v3 = ai * shingles[j + 3] + bi
                low0 = v0 if v0 < low0 else low0
                low1 = v1 if v1 < low1 else low1
                low2 = v2 if v2 < low2 else low2
                low3 = v3 if v3 < low3 else low3
                j += 4
            while j < n:
                v0 = ai * shingles[j] + bi
                low0 = v0 if v0 < low0 else low0
                j += 1
            low0 = low1 if low1 < low0 else low0
            low2 = low3 if low3 < low2 else low2
            signature[i] = low2 if low2 < low0 else low0


def spaced(bytes folded, bytes table):
    """`folded` (UTF-8) with each ASCII byte c made table[c] and each UTF-8 sequence of U+2000-U+207F, U+00A1-U+00BF
    and U+3000-U+303F made one space, and whether the result holds Han or kana: (bytes, bool).

    The spaces are dedup._PUNCT_RX's three patterns: each begins with a byte above 0x7F, which the table leaves as
    it is, so the two steps commute, and none begins inside another's match. Han or kana is dedup._CJK_BYTES_RX
    found in the result."""
    cdef Py_ssize_t n = PyBytes_GET_SIZE(folded), i = 0, j = 0
    cdef const unsigned char *src = <const unsigned char *> PyBytes_AS_STRING(folded)
    cdef const unsigned char *to = <const unsigned char *> PyBytes_AS_STRING(table)
    cdef unsigned char c
    cdef bint cjk = False
    if PyBytes_GET_SIZE(table) != 256:
        raise ValueError("the table maps 256 bytes")
    out = PyBytes_FromStringAndSize(NULL, n)  # never longer than the input
    cdef unsigned char *dst = <unsigned char *> PyBytes_AS_STRING(out)
    while i < n:
        c = src[i]
        if c < 0x80:
            dst[j] = to[c]
            i += 1
        elif c == 0xE2 and i + 2 < n and (src[i + 1] == 0x80 or src[i + 1] == 0x81) and 0x80 <= src[i + 2] <= 0xBF:
            dst[j] = 0x20
            i += 3
        elif c == 0xC2 and i + 1 < n and 0xA1 <= src[i + 1] <= 0xBF:
            dst[j] = 0x20
            i += 2
        elif c == 0xE3 and i + 2 < n and src[i + 1] == 0x80 and 0x80 <= src[i + 2] <= 0xBF:
            dst[j] = 0x20
            i += 3
        else:
            # a byte kept as it is; Han or kana when it starts _CJK_BYTES_RX's match in the result. The byte after it
            # is the next one of `folded`: kept too when in the ranges tested (a continuation byte starts no space).
            if not cjk and c >= 0xE3 and (c <= 0xE9 or (c == 0xEF and i + 1 < n and 0xA4 <= src[i + 1] <= 0xAB)
                                          or (c == 0xF0 and i + 1 < n and 0xA0 <= src[i + 1] <= 0xAF)):
                cjk = True
            dst[j] = c
            i += 1
        j += 1
    return (out[:j] if j < n else out), cjk
