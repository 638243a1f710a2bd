# cython: language_level=3, boundscheck=False, wraparound=False
"""What the features read of a block's text, compiled: `measure_text` is `cleaner.page.text.measure_text`, its
readable reference, for the default sentence patterns (SENTENCE_SPLIT and SENTENCE_END, the [features.regexp]
values of conf/default.toml; cleaner.page.features uses the reference for any other), and `count_words` is
`cleaner.page.text.count_words`. Its gates (`may_match_date`, `may_match_time`, `LiteralGate`, at the end) tell
which texts the features' regexps need not search.

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
    Py_UNICODE_ISDECIMAL, Py_UNICODE_ISDIGIT, Py_UNICODE_ISLOWER, Py_UNICODE_ISSPACE, Py_UNICODE_ISTITLE,
    Py_UNICODE_ISUPPER,
)
from cpython.list cimport PyList_GET_ITEM
from cpython.ref cimport PyObject
from libc.stdint cimport uint16_t, uint64_t
from libc.stdlib cimport free, malloc
from libc.string cimport memcmp, memset


cdef extern from "Python.h":
    bint PyUnicode_IS_ASCII(object)
    const unsigned char *PyUnicode_1BYTE_DATA(object)
    Py_ssize_t PyUnicode_FindChar(object text, Py_UCS4 ch, Py_ssize_t start, Py_ssize_t end, int direction) except -2
    object PyUnicode_New(Py_ssize_t size, Py_UCS4 maxchar)
    void PyUnicode_WRITE(int kind, void *data, Py_ssize_t index, Py_UCS4 value) noexcept
    object _new_list "PyList_New"(Py_ssize_t size)
    void _set_new_item "PyList_SET_ITEM"(object list, Py_ssize_t i, PyObject *item) noexcept  # (it takes the reference)
    void _incref "Py_INCREF"(PyObject *o) noexcept

# The patterns this module implements, as conf/default.toml writes them (a test holds them equal).
SENTENCE_SPLIT = '[.!?।۔؟]+["\\\'”’)\\]]*(?:\\s+|$)|[。！？]+[」』”’）)\\]]*'
SENTENCE_END = '[.!?。！？।۔؟…]["\\\'”’)\\]」』）]*$'


# Python's character predicates (`Py_UNICODE_IS*`, what str.isalpha and re's classes read), with ASCII answered here:
# Python's are calls into its Unicode database for every character, ASCII included, and measure_text's loop made
# four to seven of them a character (docs/speed.md, stop 55). In ASCII: the letters are [A-Za-z] (the upper ones
# [A-Z], the lower [a-z], none titlecase), the decimal digits (and the digits, and the numerics) [0-9].
cdef inline bint _digit(unsigned char c) noexcept:
    return 0x30 <= c <= 0x39  # (an ASCII text's decimal digits: `\d` reads no other there)


cdef inline bint _letter(unsigned char c) noexcept:  # `[a-z]` under IGNORECASE, in ASCII
    return 0x61 <= (<unsigned int> c | 0x20) <= 0x7A


cdef inline bint _alpha(Py_UCS4 c) noexcept:
    return _letter(<unsigned char> c) if c < 0x80 else Py_UNICODE_ISALPHA(c)


cdef inline bint _decimal(Py_UCS4 c) noexcept:
    return _digit(<unsigned char> c) if c < 0x80 else Py_UNICODE_ISDECIMAL(c)


cdef inline bint _digit_of(Py_UCS4 c) noexcept:  # str.isdigit's character
    return _digit(<unsigned char> c) if c < 0x80 else Py_UNICODE_ISDIGIT(c)


cdef inline bint _alnum(Py_UCS4 c) noexcept:
    return (_digit(<unsigned char> c) or _letter(<unsigned char> c)) if c < 0x80 else Py_UNICODE_ISALNUM(c)


cdef inline bint _upper(Py_UCS4 c) noexcept:
    if c < 0x80:
        return 0x41 <= c <= 0x5A
    return Py_UNICODE_ISUPPER(c)


cdef inline bint _lower_or_title(Py_UCS4 c) noexcept:
    if c < 0x80:
        return 0x61 <= c <= 0x7A
    return Py_UNICODE_ISLOWER(c) or Py_UNICODE_ISTITLE(c)


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


# What measure_text counts, in its order: the index of each count in _measure's array.
cdef enum:
    M_ALPHA = 0
    M_NUM = 1
    M_PUNCT = 2
    M_WHITE = 3
    M_OTHER = 4
    M_TOKEN_ALPHA = 5  # then num, mix, other
    M_TOKENS = 9
    M_SENTENCES = 10
    M_ENDS = 11
    M_COUNTS = 12


def measure_text(str text, bint per_character):
    """cleaner.page.text.measure_text(text, per_character, SENTENCE_SPLIT, SENTENCE_END), in one pass."""
    cdef long m[M_COUNTS]
    _measure(text, per_character, m)
    return (m[0], m[1], m[2], m[3], m[4], m[5], m[6], m[7], m[8], m[9], m[10], m[11])


# What _measure asks of an ASCII character, read from one table (filled below from the predicates themselves): the
# predicates answer ASCII without Python's database already, but each tests `c < 0x80` and its ranges again, six of
# them a character.
cdef enum:
    C_SPACE = 1
    C_ALNUM = 2
    C_DECIMAL = 4
    C_PUNCT = 8
    C_ALPHA = 16
    C_DIGIT = 32
    C_CJK = 64  # (no ASCII character is one: the flag keeps the table whole)
    C_ENDER = 128  # an ender of SENTENCE_SPLIT, of either branch ([.!?।۔؟], [。！？]: _split_ender, _wide_ender)

cdef unsigned char _ASCII_CLASS[128]


cdef inline unsigned char _flags(Py_UCS4 c) noexcept:
    """The C_* flags of a character, from the predicates."""
    return ((C_SPACE if Py_UNICODE_ISSPACE(c) else 0) | (C_ALNUM if _alnum(c) else 0)
            | (C_DECIMAL if _decimal(c) else 0) | (C_PUNCT if _is_punct(c) else 0)
            | (C_ALPHA if _alpha(c) else 0) | (C_DIGIT if _digit_of(c) else 0) | (C_CJK if _is_cjk(c) else 0)
            | (C_ENDER if _split_ender(c) or _wide_ender(c) else 0))


cdef void _fill_ascii_class():
    cdef Py_UCS4 c
    for c in range(128):
        _ASCII_CLASS[c] = _flags(c)


_fill_ascii_class()


cdef inline unsigned char _class_of(Py_UCS4 c) noexcept:
    """The C_* flags of any character: the table's for ASCII, the predicates' otherwise."""
    return _ASCII_CLASS[c] if c < 0x80 else _flags(c)


cdef inline void _end_token(unsigned char token, long *tokens, long *n_tokens) noexcept:
    """Count a token whose characters' flags, and-ed, are `token` (_token_class's tests, read from them)."""
    n_tokens[0] += 1
    tokens[_token_class(token & C_ALPHA, token & C_DIGIT, token & C_ALNUM)] += 1


cdef unsigned char _count_ascii(const unsigned char *p, Py_ssize_t n, long *out) noexcept:
    """_measure's counts of characters and tokens of an ASCII text (out[M_ALPHA] to out[M_TOKENS]), from its bytes: the
    same tests as its loop, one table lookup a character (no ASCII character is Han or kana, nor whitespace and
    punctuation both), and a token's class from its characters' flags and-ed, in place of three flags kept a character.
    (_measure's loop read a character through PyUnicode_READ's test of the text's kind and kept its flags one by one:
    55 instructions a character, 0.8 M instructions a page of 2025, whose texts are ASCII nine in ten.) Returns the
    flags of its characters or-ed."""
    cdef Py_ssize_t i
    cdef unsigned char f, token = 0, seen = 0
    cdef bint in_token = False
    cdef long alpha = 0, num = 0, punct = 0, white = 0, n_tokens = 0
    cdef long tokens[4]
    tokens[0] = tokens[1] = tokens[2] = tokens[3] = 0
    for i in range(n):
        f = _ASCII_CLASS[p[i]]
        seen |= f
        if f & C_SPACE:
            white += 1
            if in_token:
                _end_token(token, tokens, &n_tokens)
                in_token = False
            continue
        if f & C_ALNUM:
            if f & C_DECIMAL:
                num += 1
            else:
                alpha += 1
        if f & C_PUNCT:
            punct += 1
        if in_token:
            token &= f
        else:
            token = f
            in_token = True
    if in_token:
        _end_token(token, tokens, &n_tokens)
    out[M_ALPHA] = alpha
    out[M_NUM] = num
    out[M_PUNCT] = punct
    out[M_WHITE] = white
    for i in range(4):
        out[M_TOKEN_ALPHA + i] = tokens[i]
    out[M_TOKENS] = n_tokens
    return seen


cdef void _measure(str text, bint per_character, long *out):
    """measure_text's counts, into out[M_COUNTS]."""
    cdef Py_ssize_t n = PyUnicode_GET_LENGTH(text)
    cdef int kind = PyUnicode_KIND(text)
    cdef void *data = PyUnicode_DATA(text)
    cdef Py_ssize_t i, j, piece_start = 0
    cdef Py_UCS4 c
    cdef unsigned char f, seen = 0  # (the characters' flags or-ed)
    cdef long alpha = 0, num = 0, punct = 0, white = 0
    cdef long tokens[4]  # alpha, num, mix, other (_token_class)
    cdef long n_tokens = 0
    cdef long sentences = 0, ends = 0, other
    cdef bint in_token = False, all_alpha = False, all_digit = False, all_alnum = False
    cdef bint space, is_alpha, is_digit, is_alnum
    cdef bint ascii = PyUnicode_IS_ASCII(text)
    cdef const unsigned char *p = PyUnicode_1BYTE_DATA(text)

    tokens[0] = tokens[1] = tokens[2] = tokens[3] = 0
    # Characters and tokens.
    if ascii:
        seen = _count_ascii(p, n, out)
        alpha, num, punct, white = out[M_ALPHA], out[M_NUM], out[M_PUNCT], out[M_WHITE]
        for i in range(4):
            tokens[i] = out[M_TOKEN_ALPHA + i]
        n_tokens = out[M_TOKENS]
    else:
        for i in range(n):
            c = PyUnicode_READ(kind, data, i)
            f = _class_of(c)
            seen |= f
            space = f & C_SPACE
            is_alnum = f & C_ALNUM
            if space:
                white += 1
            elif is_alnum:
                if f & C_DECIMAL:
                    num += 1
                else:
                    alpha += 1
            if f & C_PUNCT:
                punct += 1
            if space or (per_character and f & C_CJK):
                if in_token:  # the token before ends here
                    n_tokens += 1
                    tokens[_token_class(all_alpha, all_digit, all_alnum)] += 1
                    in_token = False
                if space:
                    continue
                # A Han or kana character is a token of its own.
                n_tokens += 1
                tokens[_token_class(f & C_ALPHA, f & C_DIGIT, is_alnum)] += 1
                continue
            is_alpha = f & C_ALPHA
            is_digit = f & C_DIGIT
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

    # Sentences: the pieces between SENTENCE_SPLIT's matches that are not blank. A text without an ender (most) is one
    # piece, blank when all its characters are whitespace: it is not read again.
    if not seen & C_ENDER:
        sentences = 1 if white < n else 0
    else:
        i = 0
        while i < n:
            if ascii:  # (past the characters that are no ender at one table lookup each: no wide ender is ASCII)
                while i < n and not _ASCII_CLASS[p[i]] & C_ENDER:
                    i += 1
                if i == n:
                    break
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
    out[M_ALPHA] = alpha
    out[M_NUM] = num
    out[M_PUNCT] = punct
    out[M_WHITE] = white
    out[M_OTHER] = other
    for i in range(4):
        out[M_TOKEN_ALPHA + i] = tokens[i]
    out[M_TOKENS] = n_tokens
    out[M_SENTENCES] = sentences
    out[M_ENDS] = ends


def count_words(str text):
    """cleaner.page.text.count_words: the matches of WORD_RE, a Han or kana character alone or a run of other
    word characters (alphanumeric or `_`), counted in one pass without making them strings."""
    cdef Py_ssize_t n = PyUnicode_GET_LENGTH(text)
    cdef int kind = PyUnicode_KIND(text)
    cdef void *data = PyUnicode_DATA(text)
    cdef const unsigned char *p
    cdef Py_ssize_t i
    cdef Py_UCS4 c
    cdef long count = 0
    cdef bint in_word = False, word
    if PyUnicode_IS_ASCII(text):
        # One table lookup a character (no ASCII character is Han or kana): the loop below read each through
        # PyUnicode_READ's test of the kind and five range tests.
        p = <const unsigned char *> data
        for i in range(n):
            word = (_ASCII_CLASS[p[i]] & C_ALNUM) or p[i] == 0x5F
            count += word and not in_word
            in_word = word
        return count
    for i in range(n):
        c = PyUnicode_READ(kind, data, i)
        if _is_cjk(c):
            count += 1
            in_word = False
        elif c == 0x5F or _alnum(c):
            if not in_word:
                count += 1
                in_word = True
        else:
            in_word = False
    return count


# -- Gates: whether a text can match a regexp at all -------------------------------------------------------------
#
# Most texts match none of the features' regexps, yet each was searched: the `date` and `time` patterns in every
# text with a digit, and each `cue.text` pattern whose prefilter literals (cleaner.page.cues.cue_prefilter) one of
# its ~80 `in` tests found in a short text. On a 2025 page whose texts the feature cache has not seen that was
# 1.9 ms (docs/speed.md, stop 52). A gate reads an ASCII text once and says whether the pattern can match it: a
# necessary condition, so a text it passes is still searched by the regexp and the attributes are the same. A text
# that is not ASCII is read the same way character by character: `\d` as any decimal digit (`\d` of a str pattern),
# a letter as `(?i)` folds it (_ignorecase_letter). Until stop 56 such texts always passed the date gate, and its
# regexp's search of long non-English paragraphs with a digit cost 0.2 ms a 2025 page.

# The [features.regexp] patterns the date and time gates are written for, as conf/default.toml writes them (a test
# holds them equal; cleaner.page.features searches every text with a digit under any other pattern).
DATE = ("(?i)\\b(?:\\d{1,4}[./-]\\d{1,2}[./-]\\d{1,4}|\\d{1,2}\\.? ?(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)"
        "[a-z]*\\.?,? ?\\d{2,4}|(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\\.? \\d{1,2}(?:st|nd|rd|th)?,?"
        " ?\\d{2,4}|\\d{4}年\\d{1,2}月)")
TIME = "(?i)\\b\\d{1,2}:\\d{2}(?::\\d{2})?\\s*(?:am|pm|a\\.m\\.|p\\.m\\.)?|\\b\\d{1,2}\\s*(?:am|pm)\\b"

BULLET = "^\\s*(?:[-*•·◦▪▫■□●○►▸»>~+]|\\d{1,3}[.)]|[a-zA-Z][.)]|\\(\\w{1,3}\\))\\s+"

cdef const char *_MONTHS = b"janfebmaraprmayjunjulaugsepoctnovdec"
# [place][a lower-case ASCII letter]: the bits of the months (k of _MONTHS) with that letter at that place, so that three
# letters are a month's abbreviation iff the three masks share a bit: three lookups where twelve comparisons of three
# letters were made at every position of a text with a digit.
cdef uint16_t _MONTH_LETTERS[3][128]


cdef void _fill_month_letters():
    cdef int k, place
    memset(_MONTH_LETTERS, 0, sizeof(_MONTH_LETTERS))
    for k in range(12):
        for place in range(3):
            _MONTH_LETTERS[place][<unsigned char> _MONTHS[3 * k + place]] |= <uint16_t> (1 << k)


_fill_month_letters()


cdef inline bint _month_letters(unsigned int a, unsigned int b, unsigned int c) noexcept:
    """Whether a, b and c (each below 0x80) are the lower-case abbreviation of a month."""
    return (_MONTH_LETTERS[0][a] & _MONTH_LETTERS[1][b] & _MONTH_LETTERS[2][c]) != 0


cdef inline bint _month_at(const unsigned char *p, Py_ssize_t i, Py_ssize_t n) noexcept:
    """Whether a month's abbreviation, in any case, begins at p[i] of an ASCII text (`c | 0x20` lowers a letter and
    equals a lower-case letter for no other character)."""
    if i + 3 > n:
        return False
    return _month_letters(p[i] | 0x20, p[i + 1] | 0x20, p[i + 2] | 0x20)


cdef inline Py_UCS4 _ignorecase_letter(Py_UCS4 c) noexcept:
    """The ASCII letter, lower case, that `c` is under IGNORECASE (what a letter of a pattern or `(?i)[a-z]` matches
    it as), 0 when none: an ASCII letter, and the four others Python's re folds onto one (İ and ı onto i, ſ onto s,
    the Kelvin sign onto k, as cleaner.page.cues._WIDE_FOLDS). A test reads every code point against the re module."""
    if c < 0x80:
        return (<unsigned int> c) | 0x20 if _letter(<unsigned char> c) else 0  # (cast: `|` of a Py_UCS4 is str's)
    if c == 0x130 or c == 0x131:
        return 0x69
    if c == 0x17F:
        return 0x73
    if c == 0x212A:
        return 0x6B
    return 0


def ignorecase_letter(str ch):
    """_ignorecase_letter of a one-character string, as a string ("" for none): for the tests."""
    cdef Py_UCS4 c = _ignorecase_letter(ord(ch))
    return chr(c) if c else ""


cdef inline bint _month_at_wide(int kind, void *data, Py_ssize_t i, Py_ssize_t n) noexcept:
    """_month_at in any text: the three characters fold onto a month's abbreviation."""
    if i + 3 > n:
        return False
    return _month_letters(_ignorecase_letter(PyUnicode_READ(kind, data, i)),
                          _ignorecase_letter(PyUnicode_READ(kind, data, i + 1)),
                          _ignorecase_letter(PyUnicode_READ(kind, data, i + 2)))


cdef inline bint _date_separator(Py_UCS4 c) noexcept:  # DATE's [./-]
    return c == 0x2E or c == 0x2F or c == 0x2D


cdef inline bint _word(Py_UCS4 c) noexcept:  # a word character as `\b` of a str pattern reads it: alphanumeric or `_`
    return c == 0x5F or _alnum(c)


cdef inline Py_ssize_t _past_digits(const unsigned char *p, Py_ssize_t i, Py_ssize_t n) noexcept:
    """The first position from i on of an ASCII text that is not a digit."""
    while i < n and _digit(p[i]):
        i += 1
    return i


cdef inline Py_ssize_t _past_decimals(int kind, void *data, Py_ssize_t i, Py_ssize_t n) noexcept:
    """_past_digits in any text: past its decimal digits (`\d`)."""
    while i < n and _decimal(PyUnicode_READ(kind, data, i)):
        i += 1
    return i


cdef bint _may_match_date_wide(str text):
    """_may_match_date of a text that is not ASCII: the same reading, `\d` as any decimal digit, a word character and a
    letter as `\b` and `(?i)` read them; the fourth branch needs a decimal digit then 年."""
    cdef int kind = PyUnicode_KIND(text)
    cdef void *data = PyUnicode_DATA(text)
    cdef Py_ssize_t n = PyUnicode_GET_LENGTH(text), i, j, k
    cdef Py_UCS4 c
    cdef bint after_word = False
    for i in range(n):
        c = PyUnicode_READ(kind, data, i)
        if c == 0x5E74 and i > 0 and _decimal(PyUnicode_READ(kind, data, i - 1)):  # 年
            return True
        if after_word:
            after_word = _word(c)
            continue
        after_word = _word(c)
        if _decimal(c):
            j = _past_decimals(kind, data, i + 1, n)
            if j - i <= 4 and j < n and _date_separator(PyUnicode_READ(kind, data, j)):
                k = _past_decimals(kind, data, j + 1, n)
                if 0 < k - j - 1 <= 2 and k + 1 < n and _date_separator(PyUnicode_READ(kind, data, k)) and _decimal(
                        PyUnicode_READ(kind, data, k + 1)):
                    return True
            if j - i <= 2:
                if j < n and PyUnicode_READ(kind, data, j) == 0x2E:
                    j += 1
                if j < n and PyUnicode_READ(kind, data, j) == 0x20:
                    j += 1
                if _month_at_wide(kind, data, j, n):
                    k = j + 3
                    while k < n and _ignorecase_letter(PyUnicode_READ(kind, data, k)):
                        k += 1
                    if k < n and PyUnicode_READ(kind, data, k) == 0x2E:
                        k += 1
                    if k < n and PyUnicode_READ(kind, data, k) == 0x2C:
                        k += 1
                    if k < n and PyUnicode_READ(kind, data, k) == 0x20:
                        k += 1
                    if k + 1 < n and _decimal(PyUnicode_READ(kind, data, k)) and _decimal(
                            PyUnicode_READ(kind, data, k + 1)):
                        return True
        elif _month_at_wide(kind, data, i, n):
            k = i + 3
            while k < n and _ignorecase_letter(PyUnicode_READ(kind, data, k)):
                k += 1
            if k < n and PyUnicode_READ(kind, data, k) == 0x2E:
                k += 1
            if k + 1 < n and PyUnicode_READ(kind, data, k) == 0x20 and _decimal(PyUnicode_READ(kind, data, k + 1)):
                for j in range(k + 2, min(k + 8, n - 1)):
                    if _decimal(PyUnicode_READ(kind, data, j)) and _decimal(PyUnicode_READ(kind, data, j + 1)):
                        return True
    return False


def may_match_date(str text):
    """False only when DATE cannot match `text` (_may_match_date says why)."""
    return _may_match_date(text)


cdef bint _may_match_date(str text):
    """False only when DATE cannot match `text`. Every branch begins with a word character after `\\b`, so a match
    begins at a word's start, where every branch is read as far as it is fixed, in an ASCII text:
    * the first, 1-4 digits, one of `./-`, 1-2 digits, one of `./-` and a digit: each run of digits taken whole, as a
      shorter take is followed by a digit, which is no separator;
    * the second, 1-2 digits (taken whole: a digit is neither `.`, a space nor a month's letter), `.` and a space
      each optional, a month, letters, then `.`, `,` and a space each optional and two digits (the letters taken
      whole, and each optional character taken when it is there, as what follows could not match it);
    * the third, a month, letters, an optional `.`, a space and a digit (taken so, as in the second), then the two
      digits of `\\d{2,4}`, which begin one to six characters after that one (`\\d{1,2}`, `st`, `,`, a space);
    * the fourth needs 年.
    (Until it read so, the gate asked only for a digit, one of `./-` and a digit in the first branch, and a month at
    any place in the third: every price and decimal passed, and 481 of the 622 texts it passed on 60 pages of 2025 were
    searched by the regexp in vain. The gate and the features' regexp searches cost 1.1 M instructions a page of 2025
    then, 0.26 M since; the gate reads a position where no word begins once.)"""
    if not PyUnicode_IS_ASCII(text):
        return _may_match_date_wide(text)
    cdef const unsigned char *p = PyUnicode_1BYTE_DATA(text)
    cdef Py_ssize_t n = PyUnicode_GET_LENGTH(text), i, j, k
    cdef bint after_word = False
    for i in range(n):
        if after_word:  # (no match begins here)
            after_word = _word(p[i])
            continue
        after_word = _word(p[i])
        if _digit(p[i]):
            j = _past_digits(p, i + 1, n)
            if j - i <= 4 and j < n and _date_separator(p[j]):  # the first branch
                k = _past_digits(p, j + 1, n)
                if 0 < k - j - 1 <= 2 and k + 1 < n and _date_separator(p[k]) and _digit(p[k + 1]):
                    return True
            if j - i <= 2:  # the second
                if j < n and p[j] == 0x2E:
                    j += 1
                if j < n and p[j] == 0x20:
                    j += 1
                if _month_at(p, j, n):
                    k = j + 3
                    while k < n and _letter(p[k]):
                        k += 1
                    if k < n and p[k] == 0x2E:
                        k += 1
                    if k < n and p[k] == 0x2C:
                        k += 1
                    if k < n and p[k] == 0x20:
                        k += 1
                    if k + 1 < n and _digit(p[k]) and _digit(p[k + 1]):
                        return True
        elif _month_at(p, i, n):  # the third
            k = i + 3
            while k < n and _letter(p[k]):
                k += 1
            if k < n and p[k] == 0x2E:
                k += 1
            if k + 1 < n and p[k] == 0x20 and _digit(p[k + 1]):
                for j in range(k + 2, min(k + 8, n - 1)):  # (where `\d{2,4}` can begin)
                    if _digit(p[j]) and _digit(p[j + 1]):
                        return True
    return False


cdef bint _may_match_time_wide(str text):
    cdef int kind = PyUnicode_KIND(text)
    cdef void *data = PyUnicode_DATA(text)
    cdef Py_ssize_t n = PyUnicode_GET_LENGTH(text), i, j
    cdef Py_UCS4 c
    for i in range(n):
        if not Py_UNICODE_ISDECIMAL(PyUnicode_READ(kind, data, i)):
            continue
        if i + 2 < n and PyUnicode_READ(kind, data, i + 1) == 0x3A and Py_UNICODE_ISDECIMAL(
                PyUnicode_READ(kind, data, i + 2)):
            return True
        j = i + 1
        while j < n and Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, j)):
            j += 1
        if j + 1 < n:
            c = _ignorecase_letter(PyUnicode_READ(kind, data, j))
            if (c == 0x61 or c == 0x70) and _ignorecase_letter(PyUnicode_READ(kind, data, j + 1)) == 0x6D:
                return True
    return False


def may_match_time(str text):
    """False only when TIME cannot match `text` (_may_match_time says why)."""
    return _may_match_time(text)


cdef bint _may_match_time(str text):
    """False only when TIME cannot match `text`. Every match holds, in an ASCII text: a digit, `:` and a digit (the
    first branch); or a digit, whitespace (`\\s*`, as str.isspace reads it), then `am` or `pm` in any case (the
    second); in any other text the same, `\d` any decimal digit and the letters folded."""
    if not PyUnicode_IS_ASCII(text):
        return _may_match_time_wide(text)
    cdef const unsigned char *p = PyUnicode_1BYTE_DATA(text)
    cdef Py_ssize_t n = PyUnicode_GET_LENGTH(text), i, j
    for i in range(n):
        if not _digit(p[i]):
            continue
        if i + 2 < n and p[i + 1] == 0x3A and _digit(p[i + 2]):
            return True
        j = i + 1
        while j < n and Py_UNICODE_ISSPACE(p[j]):
            j += 1
        if j + 1 < n and ((p[j] | 0x20) == 0x61 or (p[j] | 0x20) == 0x70) and (p[j + 1] | 0x20) == 0x6D:
            return True
    return False


cdef inline bint _bullet_char(Py_UCS4 c) noexcept:  # BULLET's [-*•·◦▪▫■□●○►▸»>~+]
    return (c == 0x2D or c == 0x2A or c == 0x2022 or c == 0xB7 or c == 0x25E6 or c == 0x25AA or c == 0x25AB
            or c == 0x25A0 or c == 0x25A1 or c == 0x25CF or c == 0x25CB or c == 0x25BA or c == 0x25B8 or c == 0xBB
            or c == 0x3E or c == 0x7E or c == 0x2B)


def may_match_bullet(str text):
    """False only when BULLET cannot match `text` (_may_match_bullet says why)."""
    return _may_match_bullet(text)


cdef bint _may_match_bullet(str text):
    """False only when BULLET cannot match at the start of `text`, in any script: past the leading whitespace (none
    of the branches begins with whitespace, so `\\s*` takes it all), a bullet character; up to three decimal
    digits and `.` or `)` (taken whole: a shorter run of digits is followed by a digit); an ASCII letter and `.`
    or `)`; or `(`, up to three word characters and `)` -- each followed by whitespace."""
    cdef Py_ssize_t n = PyUnicode_GET_LENGTH(text), i = 0, j
    cdef int kind = PyUnicode_KIND(text)
    cdef void *data = PyUnicode_DATA(text)
    cdef Py_UCS4 c
    while i < n and Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, i)):
        i += 1
    if i >= n:
        return False
    c = PyUnicode_READ(kind, data, i)
    j = -1  # where the whitespace must follow
    if _bullet_char(c):
        j = i + 1
    elif Py_UNICODE_ISDECIMAL(c):
        j = i + 1
        while j < n and j < i + 3 and Py_UNICODE_ISDECIMAL(PyUnicode_READ(kind, data, j)):
            j += 1
        j = j + 1 if j < n and PyUnicode_READ(kind, data, j) in (0x2E, 0x29) else -1
    elif c < 0x80 and 0x61 <= (<unsigned int> c | 0x20) <= 0x7A:
        j = i + 2 if i + 1 < n and PyUnicode_READ(kind, data, i + 1) in (0x2E, 0x29) else -1
    elif c == 0x28:
        j = i + 1
        while j < n and j < i + 4 and (Py_UNICODE_ISALNUM(PyUnicode_READ(kind, data, j))
                                        or PyUnicode_READ(kind, data, j) == 0x5F):
            j += 1
        j = j + 1 if j > i + 1 and j < n and PyUnicode_READ(kind, data, j) == 0x29 else -1
    return 0 <= j < n and Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, j))


def text_shape(str text):
    """What the marker typer reads of a segment's text (cleaner.label.markers._text_shape, its reference), in one
    pass: (the words of `text.split()`, those that start with an uppercase letter, `text.isupper()`, whether
    `[.!?] ` occurs). (Reading each in its own pass, with a regexp and a byte copy, cost 1.5 M instructions a page of
    2025, whose paragraphs are long.)"""
    cdef Py_ssize_t n = PyUnicode_GET_LENGTH(text), i, words = 0, upper = 0
    cdef int kind = PyUnicode_KIND(text)
    cdef void *data = PyUnicode_DATA(text)
    cdef Py_UCS4 c, previous = 0x20
    cdef bint cased = False, lowered = False, sentence_inside = False, space, was_space = True
    for i in range(n):
        c = PyUnicode_READ(kind, data, i)
        space = Py_UNICODE_ISSPACE(c)
        if not space and was_space:  # a word of str.split() starts here
            words += 1
            if _upper(c):
                upper += 1
        if c == 0x20 and (previous == 0x2E or previous == 0x21 or previous == 0x3F):  # [.!?] then a space
            sentence_inside = True
        if not lowered:  # str.isupper(): a cased character, and none lowercase or titlecase
            if _lower_or_title(c):
                lowered = True
            elif _upper(c):
                cased = True
        was_space = space
        previous = c
    return words, upper, cased and not lowered, sentence_inside


cdef inline bint _ascii_word(unsigned char c) noexcept:  # re's `\w` in ASCII: [0-9A-Za-z_]
    return _digit(c) or _letter(c) or c == 0x5F


def words_key(str text):
    """`"".join(w + " " for w in re.findall(r"\\w+", text.casefold()))` (cleaner.label.decide.words_key, its
    reference): each run of word characters (alphanumeric or `_`, as re reads `\\w`) of the case-folded text, followed
    by a space. The key is measured in a first pass (its length, and its largest character, which sets the str's kind)
    and written in a second, so it is the one str made: no match object or str per word, no joins, and an ASCII text
    (most) is not case-folded into a copy first but lowered as it is written ([A-Z] to [a-z]: str.casefold in ASCII).
    (drop_repeats, with the copy, a str per word and two joins a block: 1.0 M instructions a page of 2025; 0.6 M.)"""
    if not PyUnicode_IS_ASCII(text):
        text = text.casefold()  # (which may leave it ASCII: "ß" -> "ss")
    cdef Py_ssize_t n = PyUnicode_GET_LENGTH(text), i, length = 0, at = 0
    cdef bint in_word = False
    cdef const unsigned char *p
    cdef unsigned char *ascii_key
    cdef unsigned char b
    cdef int kind, key_kind
    cdef void *data
    cdef void *key_data
    cdef Py_UCS4 c, largest = 0x20
    if PyUnicode_IS_ASCII(text):
        p = PyUnicode_1BYTE_DATA(text)
        for i in range(n):
            if _ascii_word(p[i]):
                length += 1
                in_word = True
            elif in_word:
                length += 1  # the word's space
                in_word = False
        if in_word:
            length += 1
        if length == 0:
            return ""
        key = <str> PyUnicode_New(length, 127)
        ascii_key = <unsigned char *> PyUnicode_DATA(key)
        in_word = False
        for i in range(n):
            b = p[i]
            if _ascii_word(b):
                ascii_key[at] = b | 0x20 if 0x41 <= b <= 0x5A else b
                at += 1
                in_word = True
            elif in_word:
                ascii_key[at] = 0x20
                at += 1
                in_word = False
        if in_word:
            ascii_key[at] = 0x20
        return key
    kind = PyUnicode_KIND(text)
    data = PyUnicode_DATA(text)
    for i in range(n):
        c = PyUnicode_READ(kind, data, i)
        if _alnum(c) or c == 0x5F:
            length += 1
            in_word = True
            if c > largest:
                largest = c
        elif in_word:
            length += 1
            in_word = False
    if in_word:
        length += 1
    if length == 0:
        return ""
    key = <str> PyUnicode_New(length, largest)  # (the largest character written: the kind a str of them has)
    key_kind = PyUnicode_KIND(key)
    key_data = PyUnicode_DATA(key)
    in_word = False
    for i in range(n):
        c = PyUnicode_READ(kind, data, i)
        if _alnum(c) or c == 0x5F:
            PyUnicode_WRITE(key_kind, key_data, at, c)
            at += 1
            in_word = True
        elif in_word:
            PyUnicode_WRITE(key_kind, key_data, at, 0x20)
            at += 1
            in_word = False
    if in_word:
        PyUnicode_WRITE(key_kind, key_data, at, 0x20)
    return key


cdef class LiteralGate:
    """Which of up to 64 regexps a text can match, by their prefilter literals (cleaner.page.cues.cue_prefilter): regexp
    k's bit is set in `candidates(text)` iff regexp k has no literals, or one of them is in the text -- what
    cleaner.page.cues.text_cues's reference tests one `in` at a time, here in one pass: a bitmap of the literals' first
    two characters, then a comparison at the positions it holds.

    An ASCII text is compared with the ASCII literals (`literals`), lowered when the regexp ignores case. A text that
    is not ASCII is compared, when the gate is given them, with the literals for such texts (`wide_literals`,
    cleaner.page.cues.cue_prefilter_wide), read as cleaner.page.cues.read_wide reads it: each character as the byte a
    literal holds for it (0x80 for any character outside ASCII but four letters); without them, every bit is set."""

    cdef uint64_t always  # the regexps searched in every ASCII text
    cdef uint64_t always_wide  # ... in every other text
    cdef bint has_wide  # whether other texts are gated (wide_literals given)
    # per haystack: 0 an ASCII text lowered, 1 as it is, 2 and 3 the same of another text read by read_wide
    cdef uint64_t single[4][256]  # a one-character literal's regexps
    cdef unsigned char pairs[4][8192]  # the bitmap of the longer literals' first two characters
    cdef Py_ssize_t n_literals[4]
    cdef uint16_t *keys[4]  # the longer literals' first two characters, sorted
    cdef uint64_t *bits[4]  # their regexps' bits
    cdef list literals  # [haystack] -> the longer literals (bytes), in the order of `keys`
    cdef uint64_t used[4]  # the regexps read in each haystack

    def __cinit__(self):
        cdef int h
        for h in range(4):
            self.keys[h] = NULL
            self.bits[h] = NULL

    def __init__(self, literals, fold, wide_literals=None):
        """`literals[k]`: regexp k's literals for an ASCII text (None: it is searched in every text); `fold[k]`: whether
        they are compared with the lowered text; `wide_literals[k]`: its literals for another text, each character as
        read_wide gives it (None: searched in every such text)."""
        if len(literals) != len(fold) or len(literals) > 64 or (
                wide_literals is not None and len(wide_literals) != len(literals)):
            raise ValueError("LiteralGate takes up to 64 regexps, each with its literals and whether it folds case")
        cdef int k, h
        cdef uint64_t bit
        memset(self.single, 0, sizeof(self.single))
        memset(self.pairs, 0, sizeof(self.pairs))
        memset(self.used, 0, sizeof(self.used))
        self.always = self.always_wide = 0
        self.has_wide = wide_literals is not None
        longer = [[], [], [], []]
        for k in range(len(literals)):
            bit = (<uint64_t> 1) << k
            for wide in range(2 if self.has_wide else 1):
                lits = wide_literals[k] if wide else literals[k]
                if lits is None:
                    if wide:
                        self.always_wide |= bit
                    else:
                        self.always |= bit
                    continue
                h = 2 * wide + (0 if fold[k] else 1)
                self.used[h] |= bit
                for lit in lits:
                    if not wide and not lit.isascii():  # never in an ASCII text
                        continue
                    raw = lit.encode("latin-1")  # (ASCII, and 0x80 in a wide literal)
                    if len(raw) == 0:
                        if wide:
                            self.always_wide |= bit
                        else:
                            self.always |= bit
                    elif len(raw) == 1:
                        self.single[h][raw[0]] |= bit
                    else:
                        longer[h].append((raw[0] << 8 | raw[1], raw, bit))
        self.literals = [[], [], [], []]
        for h in range(4):
            longer[h].sort()
            self.n_literals[h] = len(longer[h])
            self.keys[h] = <uint16_t *> malloc(max(1, len(longer[h])) * sizeof(uint16_t))
            self.bits[h] = <uint64_t *> malloc(max(1, len(longer[h])) * sizeof(uint64_t))
            if self.keys[h] == NULL or self.bits[h] == NULL:
                raise MemoryError()
            for k, (key, raw, bit) in enumerate(longer[h]):
                self.keys[h][k] = key
                self.bits[h][k] = bit
                self.pairs[h][key >> 3] |= 1 << (key & 7)
                self.literals[h].append(raw)

    def __dealloc__(self):
        cdef int h
        for h in range(4):
            free(self.keys[h])
            free(self.bits[h])

    cdef uint64_t _found(self, int h, const unsigned char *p, Py_ssize_t n):
        """The bits of haystack h's literals found in p[:n]."""
        cdef uint64_t found = 0
        cdef Py_ssize_t i, k, lo, hi
        cdef uint16_t key
        cdef uint16_t *keys = self.keys[h]
        cdef list literals = self.literals[h]
        cdef bytes lit
        for i in range(n):
            found |= self.single[h][p[i]]
            if i + 1 >= n:
                break
            key = p[i] << 8 | p[i + 1]
            if not (self.pairs[h][key >> 3] >> (key & 7)) & 1:
                continue
            lo, hi = 0, self.n_literals[h]
            while lo < hi:  # the first literal with this key
                k = (lo + hi) >> 1
                if keys[k] < key:
                    lo = k + 1
                else:
                    hi = k
            while lo < self.n_literals[h] and keys[lo] == key:
                if not found & self.bits[h][lo]:
                    lit = <bytes> literals[lo]
                    if i + len(lit) <= n and memcmp(p + i, <const char *> lit, len(lit)) == 0:
                        found |= self.bits[h][lo]
                lo += 1
        return found

    def candidates(self, str text):
        """The bits of the regexps `text` can match (class docstring)."""
        return self._candidates(text)

    cdef uint64_t _candidates(self, str text) except? 0:
        """candidates, for a compiled caller (TextAttributes): no Python call, no int made of the bits."""
        cdef Py_ssize_t n = PyUnicode_GET_LENGTH(text), i
        cdef bint ascii = PyUnicode_IS_ASCII(text)
        cdef int kind = PyUnicode_KIND(text)
        cdef void *data = PyUnicode_DATA(text)
        cdef const unsigned char *p
        cdef Py_UCS4 c
        cdef uint64_t found
        cdef unsigned char stack[512]
        cdef unsigned char *read = &stack[0]
        cdef int base = 0 if ascii else 2
        if not ascii and not self.has_wide:
            return (<uint64_t> -1)
        found = self.always if ascii else self.always_wide
        if n > 512:
            read = <unsigned char *> malloc(n)
            if read == NULL:
                raise MemoryError()
        try:
            if self.used[base + 1] & ~found:  # compared as it is
                if ascii:
                    p = PyUnicode_1BYTE_DATA(text)
                else:
                    for i in range(n):  # (read_wide(text, False))
                        c = PyUnicode_READ(kind, data, i)
                        read[i] = <unsigned char> c if c < 0x80 else 0x80
                    p = read
                found |= self._found(base + 1, p, n)
            if self.used[base] & ~found:  # lowered
                for i in range(n):  # (str.lower() of an ASCII text; read_wide(text, True) of another)
                    c = PyUnicode_READ(kind, data, i)
                    if c < 0x80:
                        read[i] = <unsigned char> ((<unsigned int> c) | 0x20) if 0x41 <= c <= 0x5A else <unsigned char> c
                    elif c == 0x130 or c == 0x131:  # İ ı
                        read[i] = 0x69
                    elif c == 0x17F:  # ſ
                        read[i] = 0x73
                    elif c == 0x212A:  # the Kelvin sign
                        read[i] = 0x6B
                    else:
                        read[i] = 0x80
                found |= self._found(base, read, n)
        finally:
            if read != &stack[0]:
                free(read)
        return found


# -- a text's attributes ------------------------------------------------------------------------------------------

cdef class _Bins:
    """A BinTable's names (cleaner.page.feature_names): bins[i] is the name of input i, inputs above the cap named as
    the cap, a negative one a KeyError (a bug upstream), as BinTable.__getitem__."""
    cdef list labels
    cdef Py_ssize_t cap

    def __init__(self, table):
        self.labels = list(table.labels)
        self.cap = table.cap

    cdef inline PyObject *at(self, Py_ssize_t i) except NULL:
        """The name of input i, borrowed from `labels` (a row holds it: _put)."""
        if i > self.cap:
            i = self.cap
        elif i < 0:
            raise KeyError(i)
        return PyList_GET_ITEM(self.labels, i)


cdef bint _holds_folded(str text, str hint):
    """Whether `hint` (lower case) occurs in `text` lowered, for a text that is ASCII, or holds neither İ nor the
    Kelvin sign and the hint is ASCII: what `hint in text.lower()` reads. str.lower() lowers [A-Z] alone of ASCII, and
    of the other characters only İ (to "i" and U+0307) and the Kelvin sign (to "k") lower to anything ASCII (every code
    point read so), so an ASCII hint occurs in the lowered text iff it occurs in the text's ASCII characters lowered:
    each character of the hint compared with the text's own, an ASCII one lowered, any other none. A hint without a
    letter is searched as it is (str's own search); one with a letter, at each occurrence of its first character that
    is not a letter, or at every position if it has none."""
    cdef Py_ssize_t n = PyUnicode_GET_LENGTH(text), m = PyUnicode_GET_LENGTH(hint), i, j, anchor = -1, at
    cdef int kind = PyUnicode_KIND(text)
    cdef void *data = PyUnicode_DATA(text)
    cdef const unsigned char *h
    cdef unsigned int c  # (not Py_UCS4: `|` of one is str's)
    if not PyUnicode_IS_ASCII(hint):
        return False  # (a lowered ASCII text holds only ASCII)
    h = PyUnicode_1BYTE_DATA(hint)
    for j in range(m):
        if _letter(h[j]):
            break
    else:
        return hint in text  # (no letter: lowering changes nothing the hint can match)
    for j in range(m):
        if not _letter(h[j]):
            anchor = j
            break
    i = 0
    while i <= n - m:
        if anchor >= 0:  # (the next place the anchor character can fall, by memchr for an ASCII text)
            at = PyUnicode_FindChar(text, h[anchor], i + anchor, n - m + anchor + 1, 1)
            if at < 0:
                return False
            i = at - anchor
        for j in range(m):
            c = PyUnicode_READ(kind, data, i + j)
            if (c | 0x20 if 0x41 <= c <= 0x5A else c) != h[j]:
                break
        else:
            return True
        i += 1
    return False


# A text's attributes are gathered as borrowed references, in two rows (shared and private) of at most _ROW names, and
# each row made a list at its length at the end (_row_list): a list appended to name by name grew through PyList_Append
# seven times a text (100 instructions each). Every name is held by the TextAttributes (its _Bins' labels, its names,
# CueNames.text), alive for the call. A row holds at most 27 names of the char, token, sentence, regexp and density
# families (10, 8, 4, 4, 1) and a name of each cue found, of the gate's 64 branches at most (text_cues' other path
# gives its names in a list of their own).
cdef enum:
    _ROW = 128


cdef inline void _put(PyObject **row, Py_ssize_t *length, PyObject *name) noexcept:
    row[length[0]] = name
    length[0] += 1


cdef inline void _lay(list out, Py_ssize_t *at, PyObject *name) noexcept:
    _incref(name)
    _set_new_item(out, at[0], name)
    at[0] += 1


cdef list _row_list(PyObject **row, Py_ssize_t length, Py_ssize_t at, list inserted):
    """row[:length] as a list, `inserted`'s names laid in before row[at] (at -1: none)."""
    cdef Py_ssize_t k, i, j = 0, extra = len(inserted) if at >= 0 else 0
    cdef list out = _new_list(length + extra)
    for k in range(length + 1):
        if k == at:
            for i in range(extra):
                _lay(out, &j, PyList_GET_ITEM(inserted, i))
        if k < length:
            _lay(out, &j, row[k])
    return out


cdef int _add_counts(PyObject **row, Py_ssize_t *length, list absolute, list relative, const long *counts,
                     Py_ssize_t n_counts, Py_ssize_t per) except -1:
    """Put the names of each count that is not zero: as it is (`absolute`'s bins), then per mille of `per`."""
    cdef Py_ssize_t k, n
    for k in range(n_counts):
        n = counts[k]
        if n:
            _put(row, length, (<_Bins> PyList_GET_ITEM(absolute, k)).at(n))
            _put(row, length, (<_Bins> PyList_GET_ITEM(relative, k)).at(n * 1000 // per))
    return 0


cdef class TextAttributes:
    """The attributes of a block's text in the char, token, sentence, regexp, cue and density families, and its
    sentence ends: cleaner.page.features.FeatureExtractor._text_features, its readable reference, in one compiled
    call. That reference, compiled by mypyc, called measure_text, the three regexp gates and the url test through
    Python's generic calls, unpacked the counts' tuple and looked each name up through BinTable: about 4,500
    instructions of a text's 17,000 that no cache holds (a page of 2025 brings ~370 such texts). The features use it
    when its measure is theirs (the default sentence patterns) and the regexp gates are written for their patterns
    (cleaner.page.features.compiled_text_attributes); tests/test_compiled_text.py holds the two equal on the shared
    pages' texts. Its own cost, 3.4 M instructions a page of 2025, went mostly to the date regexp's searches of texts
    its gate passed in vain, text_cues' Python calls, the measure's reading of each character and the lists' appends:
    1.9 M since (an ASCII text's characters read from its bytes, the date gate reading whole branches, the cues' gate
    read here, the names gathered in rows)."""

    cdef bint per_character, count_ends
    cdef bint char_on, token_on, sentence_on, regexp_on, cue_on, density_on
    cdef bint char_shared, token_shared, sentence_shared, regexp_shared, cue_shared, density_shared
    cdef list char_abs, char_rel, token_abs, token_rel  # of _Bins
    cdef _Bins sent_count, sent_len, density
    cdef object sent_begin, sent_end, re_url_name, re_date_name, re_time_name, re_bullet_name
    cdef object url_search, date_search, time_search, bullet_match  # (bound once: no method looked up a call)
    cdef tuple url_hints
    cdef bint date_gated, time_gated, bullet_gated
    cdef object text_cues, cue_settings, cue_names
    cdef Py_ssize_t cue_max_words
    # text_cues' compiled path, taken here when the cues' gate is built (cleaner.page.cues.CueSettings.text_gate):
    # the gate's bits without a Python call, and the branches' searches bound once (0.7 M instructions a page of 2025
    # went to text_cues, a third of them to its calls and its loop over the branches).
    cdef LiteralGate cue_gate  # (None: text_cues is called)
    cdef list cue_searches  # per branch (cleaner.page.cues.cue_branches), its regexp's bound search
    cdef Py_ssize_t cue_of[64]  # per branch, the index of its cue
    cdef list cue_text  # per cue, its attribute (CueNames.text)
    cdef bint url_hints_ascii  # whether every url hint is ASCII (_may_hold_url)

    def __init__(self, extractor, names, text_cues):
        """`extractor`: the FeatureExtractor (its switches, regexps and gates); `names`: the AttributeNames it names a
        page with; `text_cues`: cleaner.page.cues.text_cues."""
        on, windowed = extractor.on, extractor.windowed
        self.per_character = extractor.per_character_tokens
        self.count_ends = extractor.count_sentence_ends
        self.char_on, self.char_shared = on.char, windowed.char
        self.token_on, self.token_shared = on.token, windowed.token
        self.sentence_on, self.sentence_shared = on.sentence, windowed.sentence
        self.regexp_on, self.regexp_shared = on.regexp, windowed.regexp
        self.cue_on, self.cue_shared = on.cue, windowed.cue
        self.density_on, self.density_shared = on.density, windowed.density
        self.char_abs = [_Bins(a) for a, _ in names.t_char]
        self.char_rel = [_Bins(r) for _, r in names.t_char]
        self.token_abs = [_Bins(a) for a, _ in names.t_token]
        self.token_rel = [_Bins(r) for _, r in names.t_token]
        self.sent_count, self.sent_len = _Bins(names.t_sent_count), _Bins(names.t_sent_len)
        self.density = _Bins(names.t_density)
        self.sent_begin, self.sent_end = names.sent_begin, names.sent_end
        self.re_url_name, self.re_date_name = names.re_url, names.re_date
        self.re_time_name, self.re_bullet_name = names.re_time, names.re_bullet
        self.url_search, self.date_search = extractor.re_url.search, extractor.re_date.search
        self.time_search, self.bullet_match = extractor.re_time.search, extractor.re_bullet.match
        self.url_hints = tuple(extractor.url_hints)
        self.date_gated = extractor.may_date is not None
        self.time_gated = extractor.may_time is not None
        self.bullet_gated = extractor.may_bullet is not None
        self.text_cues, self.cue_settings, self.cue_names = text_cues, extractor.cues, names.cues
        self.cue_max_words = extractor.cues.max_words
        self.url_hints_ascii = all(hint.isascii() for hint in self.url_hints)
        cues = extractor.cues
        gate = cues.text_gate
        self.cue_gate = None
        if gate is not None and len(cues.text_branches) <= 64:  # (a gate takes 64 branches at most)
            self.cue_gate = gate
            self.cue_searches = [rx.search for rx in cues.text_branches]
            for k, cue in enumerate(cues.text_branch_cue):
                self.cue_of[k] = cue
            self.cue_text = names.cues.text

    cdef bint _may_hold_url(self, str text) except -1:
        """FeatureExtractor._may_hold_url: a `.` or an `@`, and one of the url hints in the text lowered, read without
        str.lower's copy (_holds_folded) but in a text holding İ or the Kelvin sign (or when a hint is not ASCII)."""
        cdef Py_ssize_t k, n = PyUnicode_GET_LENGTH(text)
        if PyUnicode_FindChar(text, 0x2E, 0, n, 1) < 0 and PyUnicode_FindChar(text, 0x40, 0, n, 1) < 0:
            return False
        if not self.url_hints:
            return True
        if PyUnicode_IS_ASCII(text) or (self.url_hints_ascii and PyUnicode_FindChar(text, 0x130, 0, n, 1) < 0
                                        and PyUnicode_FindChar(text, 0x212A, 0, n, 1) < 0):
            for k in range(len(self.url_hints)):
                if _holds_folded(text, <str> self.url_hints[k]):
                    return True
            return False
        low = text.lower()
        for hint in self.url_hints:
            if hint in low:
                return True
        return False

    cdef int _text_cues(self, str text, PyObject **row, Py_ssize_t *length) except -1:
        """cleaner.page.cues.text_cues, its compiled path (the gate's): the cues' attributes of `text`, in their order,
        each once (the branches of the cue last found are not searched)."""
        cdef uint64_t found = self.cue_gate._candidates(text)
        cdef Py_ssize_t k, matched = -1
        if not found:  # (most texts)
            return 0
        for k in range(len(self.cue_searches)):
            if (found >> k) & 1 and self.cue_of[k] != matched and self.cue_searches[k](text):
                matched = self.cue_of[k]
                _put(row, length, PyList_GET_ITEM(self.cue_text, matched))
        return 0

    def attributes(self, str text, Py_ssize_t n_words, Py_ssize_t n_chars):
        """(shared attributes, private attributes, sentence ends) of `text`, whose words and characters the block's
        FeatureExtractor.counts counted: what FeatureExtractor._text_features appends and returns."""
        cdef long m[M_COUNTS]
        cdef PyObject *rows[2][_ROW]  # the shared names, then the private ones
        cdef Py_ssize_t lengths[2]
        cdef Py_ssize_t n, per, n_sent, cue_at = -1
        cdef int r, cue_row = 0
        cdef list cues = None  # text_cues' names, when it is called
        cdef long ends
        cdef Py_UCS4 first
        lengths[0] = lengths[1] = 0
        _measure(text, self.per_character, m)
        ends = m[M_ENDS] if self.count_ends else 0
        per = n_chars or 1
        if self.char_on:
            r = 0 if self.char_shared else 1
            _add_counts(rows[r], &lengths[r], self.char_abs, self.char_rel, m + M_ALPHA, 5, per)
        if self.token_on:
            r = 0 if self.token_shared else 1
            _add_counts(rows[r], &lengths[r], self.token_abs, self.token_rel, m + M_TOKEN_ALPHA, 4, m[M_TOKENS] or 1)
        if self.sentence_on:
            r = 0 if self.sentence_shared else 1
            n_sent = m[M_SENTENCES]
            _put(rows[r], &lengths[r], self.sent_count.at(n_sent))
            _put(rows[r], &lengths[r], self.sent_len.at(n_words // n_sent if n_sent else 0))
            if PyUnicode_GET_LENGTH(text):  # (str.isupper, isalpha and islower of one character read these)
                first = PyUnicode_READ(PyUnicode_KIND(text), PyUnicode_DATA(text), 0)
                if Py_UNICODE_ISUPPER(first) or (Py_UNICODE_ISALPHA(first) and not Py_UNICODE_ISLOWER(first)):
                    _put(rows[r], &lengths[r], <PyObject *> self.sent_begin)
            if ends:
                _put(rows[r], &lengths[r], <PyObject *> self.sent_end)
        if self.regexp_on:
            r = 0 if self.regexp_shared else 1
            if self._may_hold_url(text) and self.url_search(text):
                _put(rows[r], &lengths[r], <PyObject *> self.re_url_name)
            if m[M_NUM]:
                if (not self.date_gated or _may_match_date(text)) and self.date_search(text):
                    _put(rows[r], &lengths[r], <PyObject *> self.re_date_name)
                if (not self.time_gated or _may_match_time(text)) and self.time_search(text):
                    _put(rows[r], &lengths[r], <PyObject *> self.re_time_name)
            if (not self.bullet_gated or _may_match_bullet(text)) and self.bullet_match(text):
                _put(rows[r], &lengths[r], <PyObject *> self.re_bullet_name)
        if self.cue_on and n_words <= self.cue_max_words:
            r = 0 if self.cue_shared else 1
            if self.cue_gate is not None:
                self._text_cues(text, rows[r], &lengths[r])
            else:  # (its names laid in where they fall, when the rows are made lists)
                cues, cue_row, cue_at = [], r, lengths[r]
                self.text_cues(self.cue_settings, self.cue_names, text, cues)
        if self.density_on:
            r = 0 if self.density_shared else 1
            n = (n_chars + 79) // 80 or 1  # (lines of 80 characters, the last one begun)
            _put(rows[r], &lengths[r], self.density.at(n_words // n))
        shared = _row_list(rows[0], lengths[0], cue_at if cue_row == 0 else -1, cues)
        private = _row_list(rows[1], lengths[1], cue_at if cue_row == 1 else -1, cues)
        return shared, private, ends
