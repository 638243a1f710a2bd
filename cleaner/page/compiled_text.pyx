# cython: language_level=3, boundscheck=False, wraparound=False
"""What the features read of a block's text, compiled: `measure_text` is `cleaner.page.text.measure_text`, its
readable reference, for the default sentence patterns (SENTENCE_SPLIT and SENTENCE_END, the [features.regexp]
values of conf/default.toml; cleaner.page.features uses the reference for any other), and `count_words` is
`cleaner.page.text.count_words`.

The reference runs nine regexp scans and a Python loop over the tokens, each building strings: 3-4 ms a 2025 page
whose texts the feature cache has not seen (docs/speed.md, stop 50). Here one pass over the characters counts them
all, with the character predicates that Python's `re` and `str` use (`Py_UNICODE_IS*`), so that the counts are the
same for every text in every script (tests/test_compiled_text.py compares both on the shared pages' texts and on
generated ones). Why each count is what the regexps give:

* A character class's run lengths summed (`sum(map(len, re.findall("[C]+", text)))`) is the number of characters
  in C: the runs cover each such character once. `[^\\W\\d_]` is a word character (alphanumeric or `_`) that is
  neither a decimal digit nor `_`; `\\d` a decimal digit; `\\s` whitespace as str.isspace reads it.
* A token is a run of non-whitespace characters (str.split), or, with per-character tokens, a Han or kana
  character on its own (cleaner.page.text.TOKEN_RE): both give the same tokens on text without such characters.
* SENTENCE_SPLIT's first branch, tried at an ender, matches iff the enders and the closers after them, taken
  greedily, are followed by whitespace or the end: a shorter take is followed by an ender or a closer, neither of
  which is whitespace or the end, and the enders, the closers and the other branch's enders are disjoint sets.
  Its second branch always matches at its enders.
* SENTENCE_END, anchored by `$`, matches at most once: at the end of the text, or before a newline that ends it,
  when the closers before that point follow an ender (no ender is a closer).
"""

from cpython.unicode cimport (
    PyUnicode_DATA, PyUnicode_GET_LENGTH, PyUnicode_KIND, PyUnicode_READ, Py_UNICODE_ISALNUM, Py_UNICODE_ISALPHA,
    Py_UNICODE_ISDECIMAL, Py_UNICODE_ISDIGIT, Py_UNICODE_ISSPACE,
)

# The patterns this module implements, as conf/default.toml writes them (a test holds them equal).
SENTENCE_SPLIT = '[.!?।۔؟]+["\\\'”’)\\]]*(?:\\s+|$)|[。！？]+[」』”’）)\\]]*'
SENTENCE_END = '[.!?。！？।۔؟…]["\\\'”’)\\]」』）]*$'


cdef inline bint _is_punct(Py_UCS4 c):
    # cleaner.page.text._PUNCT_RE's class.
    if c < 0x80:
        return (0x21 <= c <= 0x2F) or (0x3A <= c <= 0x40) or (0x5B <= c <= 0x60) or (0x7B <= c <= 0x7E)
    return (c == 0xA1 or c == 0xAB or c == 0xB7 or c == 0xBB or c == 0xBF
            or 0x2010 <= c <= 0x2027 or 0x2030 <= c <= 0x205E or 0x3000 <= c <= 0x303F
            or 0xFF01 <= c <= 0xFF0F or 0xFF1A <= c <= 0xFF20 or 0xFF3B <= c <= 0xFF40 or 0xFF5B <= c <= 0xFF65
            or c == 0x589 or c == 0x5BE or c == 0x60C or c == 0x61B or c == 0x61F or c == 0x6D4
            or c == 0x964 or c == 0x965)


cdef inline bint _is_cjk(Py_UCS4 c):
    # cleaner.page.text._CJK: Han, kana, compatibility ideographs, extension planes.
    return (0x3040 <= c <= 0x30FF or 0x3400 <= c <= 0x4DBF or 0x4E00 <= c <= 0x9FFF or 0xF900 <= c <= 0xFAFF
            or 0x20000 <= c <= 0x2FA1F)


ctypedef bint (*CharTest)(Py_UCS4)


cdef inline Py_ssize_t _past_run(int kind, void *data, Py_ssize_t i, Py_ssize_t n, CharTest test):
    """The first position from i on whose character fails `test` (n at the end): past a run."""
    while i < n and test(PyUnicode_READ(kind, data, i)):
        i += 1
    return i


cdef bint _space(Py_UCS4 c):  # (Py_UNICODE_ISSPACE is a macro: a function to point to)
    return Py_UNICODE_ISSPACE(c)


cdef bint _split_ender(Py_UCS4 c):  # SENTENCE_SPLIT's first branch: [.!?।۔؟]
    return c == 0x2E or c == 0x21 or c == 0x3F or c == 0x964 or c == 0x6D4 or c == 0x61F


cdef bint _split_closer(Py_UCS4 c):  # ["'”’)\]]
    return c == 0x22 or c == 0x27 or c == 0x201D or c == 0x2019 or c == 0x29 or c == 0x5D


cdef bint _wide_ender(Py_UCS4 c):  # the second branch: [。！？]
    return c == 0x3002 or c == 0xFF01 or c == 0xFF1F


cdef bint _wide_closer(Py_UCS4 c):  # [」』”’）)\]]
    return (c == 0x300D or c == 0x300F or c == 0x201D or c == 0x2019 or c == 0xFF09 or c == 0x29
            or c == 0x5D)


cdef inline bint _end_ender(Py_UCS4 c):  # SENTENCE_END: [.!?。！？।۔؟…]
    return _split_ender(c) or _wide_ender(c) or c == 0x2026


cdef inline bint _end_closer(Py_UCS4 c):  # ["'”’)\]」』）]
    return _split_closer(c) or c == 0x300D or c == 0x300F or c == 0xFF09


cdef inline int _token_class(bint all_alpha, bint all_digit, bint all_alnum):
    """A token's class by the reference's tests in their order: str.isalpha, isdigit, isalnum, else other."""
    if all_alpha:
        return 0
    if all_digit:
        return 1
    return 2 if all_alnum else 3


cdef inline bint _blank(int kind, void *data, Py_ssize_t start, Py_ssize_t end):
    """Whether text[start:end] is empty or whitespace only (what the reference's `piece and not
    piece.isspace()` leaves out)."""
    return _past_run(kind, data, start, end, _space) == end


cdef inline bint _ends_at(int kind, void *data, Py_ssize_t end):
    """Whether SENTENCE_END matches a suffix of text[:end]: closers back from `end`, then an ender."""
    while end > 0 and _end_closer(PyUnicode_READ(kind, data, end - 1)):
        end -= 1
    return end > 0 and _end_ender(PyUnicode_READ(kind, data, end - 1))


def measure_text(str text, bint per_character):
    """cleaner.page.text.measure_text(text, per_character, SENTENCE_SPLIT, SENTENCE_END), in one pass."""
    cdef Py_ssize_t n = PyUnicode_GET_LENGTH(text)
    cdef int kind = PyUnicode_KIND(text)
    cdef void *data = PyUnicode_DATA(text)
    cdef Py_ssize_t i, j, piece_start = 0
    cdef Py_UCS4 c
    cdef long alpha = 0, num = 0, punct = 0, white = 0
    cdef long tokens[4]  # alpha, num, mix, other (_token_class)
    cdef long n_tokens = 0
    cdef long sentences = 0, ends = 0, other
    cdef bint in_token = False, all_alpha = False, all_digit = False, all_alnum = False
    cdef bint space, is_alpha, is_digit, is_alnum

    tokens[0] = tokens[1] = tokens[2] = tokens[3] = 0
    # Characters and tokens.
    for i in range(n):
        c = PyUnicode_READ(kind, data, i)
        space = Py_UNICODE_ISSPACE(c)
        is_alnum = Py_UNICODE_ISALNUM(c)
        if space:
            white += 1
        elif is_alnum:
            if Py_UNICODE_ISDECIMAL(c):
                num += 1
            else:
                alpha += 1
        if _is_punct(c):
            punct += 1
        if space or (per_character and _is_cjk(c)):
            if in_token:  # the token before ends here
                n_tokens += 1
                tokens[_token_class(all_alpha, all_digit, all_alnum)] += 1
                in_token = False
            if space:
                continue
            # A Han or kana character is a token of its own.
            n_tokens += 1
            tokens[_token_class(Py_UNICODE_ISALPHA(c), Py_UNICODE_ISDIGIT(c), is_alnum)] += 1
            continue
        is_alpha = Py_UNICODE_ISALPHA(c)
        is_digit = Py_UNICODE_ISDIGIT(c)
        if in_token:
            all_alpha = all_alpha and is_alpha
            all_digit = all_digit and is_digit
            all_alnum = all_alnum and is_alnum
        else:
            in_token = True
            all_alpha, all_digit, all_alnum = is_alpha, is_digit, is_alnum
    if in_token:
        n_tokens += 1
        tokens[_token_class(all_alpha, all_digit, all_alnum)] += 1
    other = n - alpha - num - white - punct
    if other < 0:  # a character both whitespace and punctuation (U+3000) is counted twice, as by the reference
        other = 0

    # Sentences: the pieces between SENTENCE_SPLIT's matches that are not blank.
    i = 0
    while i < n:
        c = PyUnicode_READ(kind, data, i)
        if _split_ender(c):
            j = _past_run(kind, data, _past_run(kind, data, i + 1, n, _split_ender), n, _split_closer)
            if j < n and not Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, j)):
                # No match here, nor at the enders after i (the same take follows them): go on past them.
                i = _past_run(kind, data, i, n, _split_ender)
                continue
            j = _past_run(kind, data, j, n, _space)
        elif _wide_ender(c):
            j = _past_run(kind, data, _past_run(kind, data, i + 1, n, _wide_ender), n, _wide_closer)
        else:
            i += 1
            continue
        if not _blank(kind, data, piece_start, i):
            sentences += 1
        piece_start = i = j
    if not _blank(kind, data, piece_start, n):
        sentences += 1

    # The sentence end: at the end, or before a newline that ends the text.
    if _ends_at(kind, data, n) or (n > 0 and PyUnicode_READ(kind, data, n - 1) == 0x0A and _ends_at(kind, data, n - 1)):
        ends = 1
    return (alpha, num, punct, white, other, tokens[0], tokens[1], tokens[2], tokens[3], n_tokens, sentences, ends)


def count_words(str text):
    """cleaner.page.text.count_words: the matches of WORD_RE, a Han or kana character alone or a run of other
    word characters (alphanumeric or `_`), counted in one pass without making them strings."""
    cdef Py_ssize_t n = PyUnicode_GET_LENGTH(text)
    cdef int kind = PyUnicode_KIND(text)
    cdef void *data = PyUnicode_DATA(text)
    cdef Py_ssize_t i
    cdef Py_UCS4 c
    cdef long count = 0
    cdef bint in_word = False
    for i in range(n):
        c = PyUnicode_READ(kind, data, i)
        if _is_cjk(c):
            count += 1
            in_word = False
        elif c == 0x5F or Py_UNICODE_ISALNUM(c):
            if not in_word:
                count += 1
                in_word = True
        else:
            in_word = False
    return count
