# cython: language_level=3
"""The pre-parse guard's tag scan, compiled: `scan_edits` is `cleaner.page.markup_guard.scan_edits`, its readable
reference, which documents what the scan does and why.

The reference runs a regexp over the page and a Python loop over every tag it finds; on today's pages, which have
more tags than [limits] max_nesting, that cost more than Lexbor's parse (docs/speed.md, stop 48). Here the same
tags are found by reading the string directly (a tag is what the reference's `_TAG_RE` matches:
`<`, an optional `/`, an ASCII letter, then letters, digits, `:` and `-`, then anything up to the next `>`), and a
tag's name is classified by comparing its lower-cased bytes with the few names the scan treats specially; only a
formatting element's start tag becomes a Python string (its identity is the tag as written). The edits and caps
are the reference's, in the same order (tests/test_parser_bombs.py compares both).

The scan reads a str or a page's UTF-8 bytes alike (`scan_edits_utf8`, `_Text`), and with `tags_of_long_runs_utf8` and
`scan_leaves_utf8_unchanged` the guard can tell from the bytes that it leaves a page as it is, so that such a page is
parsed from its bytes and never decoded (markup_guard.leaves_utf8_unchanged). Also here, for the binary sniff before
the guard, `count_bytes`, and for the decoder, `is_utf8`.
"""

from libc.stdint cimport uint64_t
from libc.string cimport memchr, memcpy
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE

cdef extern from "Python.h":
    Py_ssize_t PyUnicode_FindChar(object text, Py_UCS4 ch, Py_ssize_t start, Py_ssize_t end, int direction) except -2
    int PyUnicode_KIND(object text)
    void *PyUnicode_DATA(object text)
    Py_ssize_t PyUnicode_GET_LENGTH(object text)
    Py_UCS4 PyUnicode_READ(int kind, void *data, Py_ssize_t index)


# The text the scan reads: a str (its characters) or a page's UTF-8 bytes (one byte a unit). Every decision of the scan
# is on ASCII characters ('<', '/', '>', a name's letters, digits, ':' and '-'), which UTF-8 writes as themselves and
# never inside another character's bytes, and a formatting tag's identity is its text as written, equal as bytes
# exactly when equal as characters: so the scan of a page's UTF-8 finds the same tags and makes the same edits, at
# byte offsets (scan_edits_utf8), and the count of start tags is the same (_start_brackets).
cdef struct _Text:
    const void *data
    int kind  # PyUnicode_KIND; 1 for bytes
    Py_ssize_t n
    bint utf8  # bytes


cdef inline Py_UCS4 _at(_Text *t, Py_ssize_t i) noexcept:
    return PyUnicode_READ(t.kind, t.data, i)


cdef inline Py_ssize_t _find(object text, _Text *t, Py_UCS4 ch, Py_ssize_t start) except -2:
    """The first `ch` at `start` or after it, -1 if none."""
    cdef const char *found
    if not t.utf8:
        return PyUnicode_FindChar(text, ch, start, t.n, 1)
    if start >= t.n:
        return -1
    found = <const char *> memchr(<const char *> t.data + start, <int> ch, <size_t> (t.n - start))
    return -1 if found == NULL else found - <const char *> t.data

cdef inline bint _has_control(uint64_t word) noexcept:
    """Whether one of the word's eight bytes is below 0x20 or is 0x7F: Bit Twiddling Hacks' `hasless(word, 0x20)` and
    `haszero(word ^ 0x7F...)`, exact as tests of whether such a byte exists."""
    cdef uint64_t ones = 0x0101010101010101ULL, high = 0x8080808080808080ULL
    cdef uint64_t deleted = word ^ 0x7F7F7F7F7F7F7F7FULL
    return ((((word - ones * 0x20) & ~word) | ((deleted - ones) & ~deleted)) & high) != 0


def count_bytes(bytes data, bytes which):
    """How many bytes of `data` are among `which`: `len(data) - len(data.translate(None, which))`, its readable
    reference (cleaner.page.pipeline.count_bytes), in one pass without the copy (the binary sniff's count of control
    bytes in a page's first 64 KiB cost 1.1 M instructions, 1.5 % of a 2025 page's cleaning, by the copy). When every
    byte sought is a control byte (below 0x20, or 0x7F: the sniff's), eight bytes that hold none are passed at once
    (most of a page's: 0.37 M instructions a page of 2025 byte by byte)."""
    cdef unsigned char wanted[256]
    cdef const unsigned char *p = <const unsigned char *> data
    cdef const unsigned char *w = <const unsigned char *> which
    cdef Py_ssize_t n = len(data), i, k, count = 0
    cdef bint controls = True
    cdef uint64_t word
    for i in range(256):
        wanted[i] = 0
    for i in range(len(which)):
        wanted[w[i]] = 1
        controls = controls and (w[i] < 0x20 or w[i] == 0x7F)
    i = 0
    if controls:
        while i + 8 <= n:
            memcpy(&word, p + i, 8)
            if _has_control(word):
                for k in range(i, i + 8):
                    count += wanted[p[k]]
            i += 8
    for k in range(i, n):
        count += wanted[p[k]]
    return count


def tags_of_long_runs(str html, Py_ssize_t min_chars):
    """The list of markup_guard._tags_of_long_runs(html, min_chars), its readable reference (which says what and how),
    for min_chars of 1 or more: the same windows, read by PyUnicode_FindChar (memrchr and memchr for a text of one
    byte a character) without a Python generator and two method calls a window (0.9 M instructions a page of 2025,
    most pages cut nothing)."""
    cdef Py_ssize_t n = PyUnicode_GET_LENGTH(html), pos = 0, end, lt, gt
    cdef int kind = PyUnicode_KIND(html)
    cdef void *data = PyUnicode_DATA(html)
    cdef Py_UCS4 c
    cdef list out = []
    if min_chars < 1:
        raise ValueError("tags_of_long_runs: min_chars must be 1 or more")
    while pos + min_chars <= n:
        end = pos + min_chars
        lt = PyUnicode_FindChar(html, 0x3C, pos, end, -1)
        gt = PyUnicode_FindChar(html, 0x3E, pos, end, -1)
        if lt >= 0 or gt >= 0:
            pos = (lt if lt > gt else gt) + 1  # a long run can only start after the window's last bracket
            continue
        if pos > 0 and PyUnicode_READ(kind, data, pos - 1) == 0x3C:  # (pos < n: the window holds pos)
            c = PyUnicode_READ(kind, data, pos)
            if 0x41 <= c <= 0x5A or 0x61 <= c <= 0x7A:  # an ASCII letter: a tag's name
                out.append(pos - 1)
        lt = PyUnicode_FindChar(html, 0x3C, end, n, 1)
        gt = PyUnicode_FindChar(html, 0x3E, end, n, 1)
        if lt < 0 and gt < 0:
            break
        pos = (gt if lt < 0 else lt if gt < 0 else min(lt, gt)) + 1
    return out


def count_start_brackets(str html):
    """`html.count("<") - html.count("</")`, the '<' not followed by '/' (markup_guard.more_start_tags_than), in one
    pass: from '<' to '<' by PyUnicode_FindChar (memchr, for text of one byte a character), each followed by one
    look. (The two counts read a page of 2025 three times over: 2.3 M instructions, 2.5 % of its cleaning.)"""
    cdef _Text t
    t.data, t.kind, t.n, t.utf8 = PyUnicode_DATA(html), PyUnicode_KIND(html), PyUnicode_GET_LENGTH(html), False
    return _start_brackets(html, &t)


cdef Py_ssize_t _start_brackets(object text, _Text *t) except -1:
    cdef Py_ssize_t pos = 0, count = 0
    while True:
        pos = _find(text, t, 60, pos)  # '<'
        if pos < 0:
            return count
        pos += 1
        if pos == t.n or _at(t, pos) != 47:  # not '/'
            count += 1


cdef inline bint _has_bracket(uint64_t word) noexcept nogil:
    """Whether one of the eight bytes of `word` is '<' or '>' (a zero byte of `word ^ '<'*8` or `word ^ '>'*8`)."""
    cdef uint64_t lt = word ^ 0x3c3c3c3c3c3c3c3cULL, gt = word ^ 0x3e3e3e3e3e3e3e3eULL
    return (((lt - 0x0101010101010101ULL) & ~lt) | ((gt - 0x0101010101010101ULL) & ~gt)) & 0x8080808080808080ULL != 0


cdef inline Py_ssize_t _last_bracket(const unsigned char *p, Py_ssize_t lo, Py_ssize_t hi) noexcept nogil:
    """The offset of the last '<' or '>' in p[lo:hi], -1 when there is none; read backwards eight bytes at a time."""
    cdef uint64_t word
    cdef Py_ssize_t i = hi
    while i - 8 >= lo:
        memcpy(&word, p + i - 8, 8)
        if _has_bracket(word):
            break
        i -= 8
    while i > lo:
        i -= 1
        if p[i] == 60 or p[i] == 62:
            return i
    return -1


def tags_of_long_runs_utf8(bytes data, Py_ssize_t min_run):
    """The byte offset of every '<' that a run of at least `min_run` bytes without a bracket follows, starting with an
    ASCII letter: in the page's UTF-8, a superset of the tags tags_of_long_runs(text, min_run) finds in its text (a
    run of that many characters without a bracket is a run of at least as many bytes, after the same '<' and
    letter), each at its byte offset. Hops a window of `min_run` bytes at a time, as tags_of_long_runs does over a
    text: a window that holds a bracket moves past its last one (read backwards, eight bytes at a time), and one that
    holds none is a long run, whose end two memchr find. Finding every run's end instead, two memchr a tag, cost
    0.6 M instructions a 2025 page (docs/speed.md, stop 70)."""
    cdef const unsigned char *p = <const unsigned char *> PyBytes_AS_STRING(data)
    cdef Py_ssize_t n = PyBytes_GET_SIZE(data), start = 0, stop, last
    cdef const unsigned char *lt
    cdef const unsigned char *gt
    cdef unsigned char c
    cdef list out = []
    if min_run < 1:
        raise ValueError("tags_of_long_runs_utf8: min_run must be 1 or more")
    # `start` is 0 or just past a bracket: a run can begin there only
    while start + min_run <= n:
        last = _last_bracket(p, start, start + min_run)
        if last >= 0:
            start = last + 1
            continue
        # p[start:start + min_run] holds no bracket: the run goes on to the next bracket (or the end)
        lt = <const unsigned char *> memchr(p + start + min_run, 60, <size_t> (n - start - min_run))
        gt = <const unsigned char *> memchr(p + start + min_run, 62,
                                            <size_t> ((lt - p if lt != NULL else n) - start - min_run))
        stop = gt - p if gt != NULL else lt - p if lt != NULL else n
        if start > 0 and p[start - 1] == 60:
            c = p[start]
            if 65 <= c <= 90 or 97 <= c <= 122:
                out.append(start - 1)
        start = stop + 1
    return out


cdef inline Py_ssize_t _space_utf8(const unsigned char *p, Py_ssize_t i, Py_ssize_t n) noexcept nogil:
    """The length of the whitespace character (str.isspace) whose UTF-8 starts at p[i], 0 when none does: what
    markup_guard._WHITESPACE_UTF8 matches there."""
    cdef unsigned char c = p[i], b
    if c == 32 or 9 <= c <= 13 or 0x1c <= c <= 0x1f:
        return 1
    if c == 0xc2:
        return 2 if i + 1 < n and (p[i + 1] == 0x85 or p[i + 1] == 0xa0) else 0
    if i + 2 >= n or c < 0xe1 or c > 0xe3:
        return 0
    b = p[i + 1]
    if c == 0xe1:
        return 3 if b == 0x9a and p[i + 2] == 0x80 else 0
    if c == 0xe3:
        return 3 if b == 0x80 and p[i + 2] == 0x80 else 0
    c = p[i + 2]  # (a 0xe2 start)
    if b == 0x80:
        return 3 if 0x80 <= c <= 0x8a or c == 0xa8 or c == 0xa9 or c == 0xaf else 0
    return 3 if b == 0x81 and c == 0x9f else 0


cdef inline bint _unit_utf8(const unsigned char *p, Py_ssize_t i, Py_ssize_t n, bint slash, bint equals) noexcept nogil:
    """Whether p[i] is one byte of a character that is not whitespace, '>', '/' (with `slash`) or '=' (with
    `equals`): markup_guard._not_space_utf8 taking one byte."""
    cdef unsigned char c
    if i >= n:
        return False
    c = p[i]
    if c == 62 or (slash and c == 47) or (equals and c == 61):
        return False
    if c == 0xc2 or 0xe1 <= c <= 0xe3 or c == 32 or 9 <= c <= 13 or 0x1c <= c <= 0x1f:
        return _space_utf8(p, i, n) == 0
    return True


def has_attributes_utf8(bytes data, Py_ssize_t start, Py_ssize_t count):
    """Whether the start tag at byte `start` of a page's UTF-8 has `count` attributes or more: whether
    markup_guard._first_attributes_utf8(count) matches there, its readable reference, which the attribute cap tries
    at each tag of a long run (markup_guard.leaves_utf8_unchanged). That pattern is atomic and possessive, so it reads
    the tag once, left to right, as here; its backtracking regexp engine cost ~100 instructions a byte, on the long
    tags it is tried at (inline SVG paths, data: URLs): 1.3 M instructions a 2025 page (docs/speed.md, stop 70)."""
    cdef const unsigned char *p = <const unsigned char *> PyBytes_AS_STRING(data)
    cdef Py_ssize_t n = PyBytes_GET_SIZE(data), i = start + 1, j, k, step
    cdef unsigned char quote
    if start < 0 or start >= n or p[start] != 60 or i >= n or not (65 <= p[i] <= 90 or 97 <= p[i] <= 122):
        return False
    i += 1
    while _unit_utf8(p, i, n, True, False):  # the rest of the tag's name
        i += 1
    for k in range(count):
        while i < n:  # separators: whitespace and '/'
            step = _space_utf8(p, i, n)
            if step == 0 and p[i] == 47:
                step = 1
            if step == 0:
                break
            i += step
        if not _unit_utf8(p, i, n, True, False):  # a name's first character: none, and the tag has fewer
            return False
        i += 1
        while _unit_utf8(p, i, n, True, True):
            i += 1
        j = i  # an optional value: whitespace, '=', whitespace, then quoted or not (else nothing is taken)
        while j < n and (step := _space_utf8(p, j, n)):
            j += step
        if j < n and p[j] == 61:
            j += 1
            while j < n and (step := _space_utf8(p, j, n)):
                j += step
            if j < n and (p[j] == 34 or p[j] == 39):
                quote = p[j]
                j += 1
                while j < n and p[j] != quote:
                    j += 1
                if j < n:
                    j += 1
            else:
                while _unit_utf8(p, j, n, False, False):
                    j += 1
            i = j
    return True


def scan_leaves_utf8_unchanged(bytes data, Py_ssize_t max_nesting, Py_ssize_t max_options, Py_ssize_t max_reopened):
    """Whether the guard's tag scan leaves the text whose UTF-8 `data` is as it is: at most max_nesting '<' not
    followed by '/' (the same in the bytes) skip it, else the scan of the bytes finds what the scan of the text finds
    (_Text), and it must make no edit and no cap."""
    cdef _Text t
    t.data, t.kind, t.n, t.utf8 = PyBytes_AS_STRING(data), 1, PyBytes_GET_SIZE(data), True
    if _start_brackets(data, &t) <= max_nesting:
        return True
    edits, capped = _scan(data, &t, max_nesting, max_options, max_reopened)
    return not edits and not capped


def is_utf8(bytes data):
    """Whether `data` is well-formed UTF-8, as Python's strict decoder takes it (the Unicode standard's table 3-7: no
    overlong form, no surrogate, nothing above U+10FFFF), without building the text: `data.decode("utf-8")` not
    raising, its readable reference (cleaner.page.decode._strict_utf8). Eight ASCII bytes at a time."""
    cdef const unsigned char *p = <const unsigned char *> PyBytes_AS_STRING(data)
    cdef Py_ssize_t n = PyBytes_GET_SIZE(data), i = 0
    cdef unsigned char c, second, low, high
    cdef Py_ssize_t length, k
    cdef uint64_t word
    while i < n:
        if i + 8 <= n:
            memcpy(&word, p + i, 8)
            if not (word & 0x8080808080808080ULL):
                i += 8
                continue
        c = p[i]
        if c < 0x80:
            i += 1
            continue
        # The table's rows: by the first byte, the sequence's length and the range of its second byte (the others are
        # 0x80-0xBF); C0, C1 and F5-FF start none.
        if 0xC2 <= c <= 0xDF:
            length, low, high = 2, 0x80, 0xBF
        elif c == 0xE0:
            length, low, high = 3, 0xA0, 0xBF  # (no overlong form)
        elif c == 0xED:
            length, low, high = 3, 0x80, 0x9F  # (no surrogate)
        elif 0xE1 <= c <= 0xEF:
            length, low, high = 3, 0x80, 0xBF
        elif c == 0xF0:
            length, low, high = 4, 0x90, 0xBF  # (no overlong form)
        elif c == 0xF4:
            length, low, high = 4, 0x80, 0x8F  # (nothing above U+10FFFF)
        elif 0xF1 <= c <= 0xF3:
            length, low, high = 4, 0x80, 0xBF
        else:
            return False
        if i + length > n:
            return False
        second = p[i + 1]
        if not low <= second <= high:
            return False
        for k in range(2, length):
            if p[i + k] & 0xC0 != 0x80:
                return False
        i += length
    return True


# How the scan treats a name (the reference's sets).
cdef enum:
    OPTION_TAG = 1      # _OPTIONS
    SELECT_END = 2      # _SELECT_ENDS
    SELECT = 4          # "select"
    FORMATTING = 8      # _FORMATTING
    SELF_CLOSING = 16   # _SELF_CLOSING_FORMATTING
    VOID = 32           # _VOID
    AUTO_CLOSED = 64    # _AUTO_CLOSED
    IS_OPTION = 128     # "option"
    NOAH = 3            # markup_guard._NOAH
    MAX_NAMES = 64

# The names, packed one byte a character (all are at most 8 characters), with their flags; a formatting element's
# index among them picks its stack of open elements.
cdef uint64_t _keys[MAX_NAMES]
cdef int _flags[MAX_NAMES]
cdef int _n_names = 0


cdef uint64_t _pack(bytes name):
    cdef uint64_t key = 0
    for c in name:
        key = (key << 8) | <uint64_t> c
    return key


def _add(names, int flags):
    global _n_names
    for name in names.split():
        key = _pack(name.encode("ascii"))
        for k in range(_n_names):
            if _keys[k] == key:
                _flags[k] |= flags
                break
        else:
            _keys[_n_names] = key
            _flags[_n_names] = flags
            _n_names += 1


_add("option optgroup", OPTION_TAG | AUTO_CLOSED)
_add("option", IS_OPTION)
_add("select input keygen textarea", SELECT_END)
_add("select", SELECT)
_add("a b big code em font i nobr s small strike strong tt u", FORMATTING)
_add("a nobr", SELF_CLOSING)
_add("area base br col embed hr img input link meta param source track wbr", VOID)
_add("p li dt dd tr td th thead tbody tfoot rb rt rp colgroup caption", AUTO_CLOSED)


cdef inline bint _name_char(Py_UCS4 c) noexcept:
    return (c >= 97 and c <= 122) or (c >= 65 and c <= 90) or (c >= 48 and c <= 57) or c == 58 or c == 45


def scan_edits(str html, Py_ssize_t max_depth, Py_ssize_t max_options, Py_ssize_t max_reopened):
    """markup_guard.scan_edits(html, max_depth, max_options, max_reopened), compiled (module docstring)."""
    cdef _Text t
    t.data, t.kind, t.n, t.utf8 = PyUnicode_DATA(html), PyUnicode_KIND(html), PyUnicode_GET_LENGTH(html), False
    return _scan(html, &t, max_depth, max_options, max_reopened)


def scan_edits_utf8(bytes data, Py_ssize_t max_depth, Py_ssize_t max_options, Py_ssize_t max_reopened):
    """scan_edits of the text whose UTF-8 `data` is, read from the bytes: the same edits and caps, at byte offsets
    (_Text), so that a page the scan leaves as it is needs no str."""
    cdef _Text t
    t.data, t.kind, t.n, t.utf8 = PyBytes_AS_STRING(data), 1, PyBytes_GET_SIZE(data), True
    return _scan(data, &t, max_depth, max_options, max_reopened)


cdef tuple _scan(object html, _Text *t, Py_ssize_t max_depth, Py_ssize_t max_options, Py_ssize_t max_reopened):
    cdef Py_ssize_t n = t.n, pos = 0, start, end, j, depth = 0, options = 0, listed = 0, count, k
    cdef long long reopened = 0
    cdef bint closing, in_select = False, nesting_capped = False, options_capped = False, drop, long_name
    cdef Py_UCS4 c
    cdef uint64_t key, code
    cdef int flags, which, length
    cdef list edits = []
    cdef list capped = []
    cdef dict open_by_tag = {}
    cdef list stacks = [[] for _ in range(_n_names)]  # by name index: the formatting elements open, as written
    cdef list formatting_tags = []
    cdef list stack
    while True:
        start = _find(html, t, 60, pos)  # '<'
        if start < 0:
            break
        j = start + 1
        closing = j < n and _at(t, j) == 47  # '/'
        if closing:
            j += 1
        c = _at(t, j) if j < n else 0
        if not ((c >= 97 and c <= 122) or (c >= 65 and c <= 90)):
            pos = start + 1  # not a tag here: the reference's regexp tries the next character
            continue
        key = 0
        length = 0
        long_name = False
        while j < n:
            c = _at(t, j)
            if not _name_char(c):
                break
            if length < 8:
                code = <uint64_t> c
                if 65 <= code <= 90:
                    code += 32  # (ASCII lower case, as the reference's name.lower() of an ASCII name)
                key = (key << 8) | code
            else:
                long_name = True
            length += 1
            j += 1
        end = _find(html, t, 62, j)  # '>'
        if end < 0:
            break  # no `>` after this point: no later `<` starts a tag either
        end += 1
        pos = end
        flags = 0
        which = -1
        if not long_name:
            for k in range(_n_names):
                if _keys[k] == key:
                    flags = _flags[k]
                    which = k
                    break
        if flags & OPTION_TAG and in_select:
            if not closing and flags & IS_OPTION:
                options += 1
            if options > max_options:
                edits.append((start, end, ""))
                options_capped = True
                continue
        elif flags & SELECT_END and (closing or not (flags & SELECT) or in_select):
            in_select = False
        elif flags & SELECT:
            in_select = True
            options = 0
        if not closing:
            reopened += listed
        if flags & FORMATTING:
            formatting_tags.append((start, end))
            stack = <list> stacks[which]
            if closing and not stack:
                continue
            if closing or (flags & SELF_CLOSING and stack):
                tag = stack.pop()
                count = open_by_tag[tag]
                open_by_tag[tag] = count - 1
                listed -= count <= NOAH
            if not closing:
                tag = html[start:end]
                count = open_by_tag.get(tag, 0)
                open_by_tag[tag] = count + 1
                listed += count < NOAH
                stack.append(tag)
        if flags & (VOID | AUTO_CLOSED) or _at(t, end - 2) == 47:  # '/'
            continue
        if closing:
            depth -= 1
            drop = depth >= max_depth
        else:
            depth += 1
            drop = depth > max_depth
        if drop:
            edits.append((start, end, " "))
            nesting_capped = True
    if nesting_capped:
        capped.append("nesting")
    if options_capped:
        capped.append("options")
    if reopened > max_reopened:
        dropped = {s for s, _, _ in edits}
        edits += [(s, e, "") for s, e in formatting_tags if s not in dropped]
        edits.sort()
        capped.append("formatting")
    return edits, capped
