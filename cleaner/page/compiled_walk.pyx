# cython: language_level=3
"""The segmenter's walk, compiled: `walk(parsed, config)` is `cleaner.page.segment._walk`, its readable
reference, reading Lexbor's tree directly instead of through selectolax's Python nodes.

The reference asks selectolax for every node's `tag`, `attributes`, `text_content`, `next`, `child` and
`parent`: each answer is a new Python object (a node, a dict of every attribute decoded, a name decoded), and
that was most of the segmenter's cost. Here the walk follows Lexbor's own pointers, reads an element's name
once per tag and page, decodes only the attributes the walk reads (id, class, href, style, hidden, aria-hidden,
itemprop, itemscope, itemtype, role, content, datetime, alt, type) and a text node's bytes. What it builds is
what the reference builds -- the same blocks, page marks and counters (tests/test_native.py compares them on
the shared pages) -- so the stages after it cannot tell which walk ran.

How it reads Lexbor, without Lexbor's headers (selectolax's wheel ships none):
* the node and text structs are declared below, field for field as Lexbor's dom/interfaces/node.h and
  character_data.h lay them out, and checked at import against Lexbor's own accessor functions and
  selectolax's answers on a probe page (_check_layout): a selectolax built with another layout makes the
  import fail with a message, and the reference runs (cleaner.NATIVE_STATUS says which ran);
* names and attributes are read with Lexbor's exported functions (lxb_dom_element_qualified_name,
  lxb_dom_element_first_attribute_noi, ...), looked up by ctypes in selectolax's own extension, so they are
  the very functions selectolax calls;
* a node pointer comes from selectolax's `LexborNode.mem_id` (the address of its node), and the parser is
  held for the whole walk, so the tree outlives every pointer read from it.
The rare nodes the walk hands to Python code (a <math> element for cleaner.page.math) are found as selectolax
nodes by their address.
"""

cimport cython
from libc.stdint cimport uint64_t, uintptr_t
from libc.stdlib cimport free, malloc, realloc
from libc.string cimport memcmp
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from cpython.dict cimport PyDict_GetItem
from cpython.long cimport PyLong_AsSsize_t
from cpython.object cimport PyObject, PyObject_Hash
from cpython.list cimport PyList_New, PyList_SET_ITEM
from cpython.ref cimport Py_DECREF, Py_INCREF, Py_XDECREF, Py_XINCREF
from cpython.tuple cimport PyTuple_GET_ITEM, PyTuple_GET_SIZE, PyTuple_New, PyTuple_SET_ITEM
from cpython.unicode cimport (
    Py_UNICODE_ISSPACE, PyUnicode_DATA, PyUnicode_DecodeASCII, PyUnicode_DecodeUTF8, PyUnicode_GET_LENGTH, PyUnicode_KIND, PyUnicode_READ,
)

import ctypes

import selectolax.lexbor
from selectolax.lexbor import LexborHTMLParser

from .math import is_rendered_copy, is_tex_script, math_block, tex_script_block
from .page_marks import PageMarks, add_itemtypes, is_json_ld, read_head
from .segment import (
    BOX_ONLY, CLOSING_PUNCTUATION, HIDDEN, MAIN, MAX_CONTAINERS, ROOT_FRAME, TOKEN_CACHE_ENTRIES,
    UNDISPLAYED, BlockTable, Segmentation, hides, mark_repeats,
)

ctypedef unsigned char lxb_char_t

cdef extern from "Python.h":
    bint PyUnicode_IS_ASCII(object)
    const unsigned char *PyUnicode_1BYTE_DATA(object)
    void _list_take "PyList_SET_ITEM" (object, Py_ssize_t, PyObject *)  # (takes the reference it is given)

cdef extern from *:
    """
    /* A str's hash read where it keeps it once computed, else computed (PyObject_Hash: a call and a dispatch). */
    static inline Py_hash_t __walk_hash(PyObject *o) {
        if (PyUnicode_CheckExact(o)) {
            Py_hash_t h = ((PyASCIIObject *) o)->hash;
            if (h != -1) return h;
        }
        return PyObject_Hash(o);
    }
    """
    Py_hash_t _hash "__walk_hash"(PyObject *) except? -1


# Lexbor's node (lexbor/dom/interfaces/node.h), checked at import (_check_layout).
cdef struct lxb_dom_node_t:
    void *events  # lxb_dom_event_target_t
    uintptr_t local_name  # the tag id
    uintptr_t prefix
    uintptr_t ns
    void *owner_document
    lxb_dom_node_t *next
    lxb_dom_node_t *prev
    lxb_dom_node_t *parent
    lxb_dom_node_t *first_child
    lxb_dom_node_t *last_child
    void *user
    int type  # lxb_dom_node_type_t

cdef struct lexbor_str_t:
    lxb_char_t *data
    size_t length

# A text node (lexbor/dom/interfaces/character_data.h; lxb_dom_text_t begins with it).
cdef struct lxb_dom_character_data_t:
    lxb_dom_node_t node
    lexbor_str_t data

cdef enum:
    ELEMENT_NODE = 1
    TEXT_NODE = 3

ctypedef const lxb_char_t *(*name_of_f)(void *, size_t *) noexcept nogil
ctypedef void *(*next_of_f)(void *) noexcept nogil
ctypedef uintptr_t (*tag_id_of_f)(void *) noexcept nogil
ctypedef int (*type_of_f)(void *) noexcept nogil

cdef name_of_f element_name  # lxb_dom_element_qualified_name(element, &length)
cdef next_of_f first_attribute  # lxb_dom_element_first_attribute_noi(element)
cdef next_of_f next_attribute  # lxb_dom_element_next_attribute_noi(attr)
cdef name_of_f attribute_name  # lxb_dom_attr_qualified_name(attr, &length)
cdef name_of_f attribute_value  # lxb_dom_attr_value_noi(attr, &length): NULL for an attribute without value


cdef uintptr_t _function(lib, str name) except 0:
    return <uintptr_t> ctypes.cast(getattr(lib, name), ctypes.c_void_p).value


cdef _load_functions():
    global element_name, first_attribute, next_attribute, attribute_name, attribute_value
    lib = ctypes.CDLL(selectolax.lexbor.__file__)
    element_name = <name_of_f> _function(lib, "lxb_dom_element_qualified_name")
    first_attribute = <next_of_f> _function(lib, "lxb_dom_element_first_attribute_noi")
    next_attribute = <next_of_f> _function(lib, "lxb_dom_element_next_attribute_noi")
    attribute_name = <name_of_f> _function(lib, "lxb_dom_attr_qualified_name")
    attribute_value = <name_of_f> _function(lib, "lxb_dom_attr_value_noi")
    return lib


cdef inline str _decode(const lxb_char_t *data, size_t length):
    # as selectolax decodes every name, value and text it reads
    return PyUnicode_DecodeUTF8(<const char *> data, length, "replace")


cdef inline lxb_dom_node_t *_node(node) except? NULL:
    return <lxb_dom_node_t *> <uintptr_t> node.mem_id


cdef str _text_of(lxb_dom_node_t *node):
    """A text node's text (selectolax's `text_content`); None when it holds no data."""
    cdef lexbor_str_t *data = &(<lxb_dom_character_data_t *> node).data
    if data.data == NULL:
        return None
    return _decode(data.data, data.length)


cdef str _deep_text(lxb_dom_node_t *element):
    """The text of every text node under `element`, in document order (selectolax's `text(deep=True)`)."""
    cdef bytearray out = bytearray()
    cdef lxb_dom_node_t *node = element.first_child
    cdef lexbor_str_t *data
    while node != NULL:
        if node.type == TEXT_NODE:
            data = &(<lxb_dom_character_data_t *> node).data
            if data.data != NULL:
                out += PyBytes_FromStringAndSize(<const char *> data.data, data.length)
        if node.first_child != NULL:
            node = node.first_child
            continue
        while node != element and node.next == NULL:
            node = node.parent
        node = NULL if node == element else node.next
    return out.decode("utf-8", "replace")


cdef dict _attributes(lxb_dom_node_t *element):
    """Every attribute of an element as selectolax's `attributes` gives them (a value-less one is None)."""
    cdef dict out = {}
    cdef void *attr = first_attribute(element)
    cdef const lxb_char_t *text
    cdef size_t length = 0
    while attr != NULL:
        text = attribute_name(attr, &length)
        key = _decode(text, length)
        text = attribute_value(attr, &length)
        out[key] = _decode(text, length) if text != NULL else None
        attr = next_attribute(attr)
    return out


# Element names, by tag id: Lexbor gives the same bytes for a tag on every page (its name, or an adjusted
# SVG name such as "clipPath"), and the str is made once. An entry is used only when its bytes are the ones
# Lexbor gives now, so a tag id whose name differs (a custom element, another namespace) is never misnamed.
cdef enum:
    NAME_CACHE = 4096
cdef list _names = [None] * NAME_CACHE  # tag id -> (the name's bytes, the name): one object, replaced whole


cdef str _element_tag(lxb_dom_node_t *node):
    """An element's name as selectolax's `tag` gives it (None when Lexbor has none)."""
    cdef size_t length = 0
    cdef const lxb_char_t *name = element_name(node, &length)
    cdef uintptr_t slot = node.local_name
    cdef bytes known
    if name == NULL:
        return None
    if slot < NAME_CACHE:
        entry = _names[slot]
        if entry is not None:
            known = <bytes> (<tuple> entry)[0]
            if <size_t> PyBytes_GET_SIZE(known) == length and memcmp(PyBytes_AS_STRING(known), name, length) == 0:
                return <str> (<tuple> entry)[1]
        tag = _decode(name, length)
        _names[slot] = (PyBytes_FromStringAndSize(<const char *> name, length), tag)
        return tag
    return _decode(name, length)


cdef inline bint _token_char(Py_UCS4 c) noexcept:
    return 0x30 <= c <= 0x39 or 0x61 <= c <= 0x7A  # [0-9a-z]


cdef inline unsigned char _ascii_lower(unsigned char c) noexcept:  # str.lower() of an ASCII character
    return c | 0x20 if 0x41 <= c <= 0x5A else c


cpdef tuple idclass_tokens(str value):
    """cleaner.page.segment.idclass_tokens, in one pass: the pieces its split leaves between runs of [^0-9a-z] in the
    lowered value are the maximal runs of [0-9a-z], kept when 2 to 30 long (the split's empty pieces are shorter).
    (A value the walk has not seen costs 1.6 us by the split, about 0.4 ms a 2025 page of a site not seen before.)"""
    cdef list out = []
    cdef Py_ssize_t n, i = 0, start, k
    cdef const unsigned char *p
    cdef char token[30]
    if PyUnicode_IS_ASCII(value):  # (most values: lowered token by token, the same as the value lowered first)
        p = PyUnicode_1BYTE_DATA(value)
        n = PyUnicode_GET_LENGTH(value)
        while i < n:
            if not _token_char(_ascii_lower(p[i])):
                i += 1
                continue
            start = i
            while i < n and _token_char(_ascii_lower(p[i])):
                i += 1
            if 1 < i - start <= 30:
                for k in range(i - start):
                    token[k] = _ascii_lower(p[start + k])
                out.append(PyUnicode_DecodeASCII(token, i - start, NULL))
        return tuple(out)
    cdef str low = value.lower()
    n = PyUnicode_GET_LENGTH(low)
    cdef int kind = PyUnicode_KIND(low)
    cdef void *data = PyUnicode_DATA(low)
    while i < n:
        if not _token_char(PyUnicode_READ(kind, data, i)):
            i += 1
            continue
        start = i
        while i < n and _token_char(PyUnicode_READ(kind, data, i)):
            i += 1
        if 1 < i - start <= 30:
            out.append(low[start:i])
    return tuple(out)


cdef inline bint _is(const lxb_char_t *name, size_t length, const char *want, size_t want_length) noexcept:
    return length == want_length and memcmp(name, want, length) == 0


cdef inline bint _bytes_are(void *attr, const char *want, size_t want_length) noexcept:
    """Whether an attribute's value is these bytes (its decoded value equal to their ASCII)."""
    cdef size_t length = 0
    cdef const lxb_char_t *text
    if attr == NULL:
        return False
    text = attribute_value(attr, &length)
    return text != NULL and _is(text, length, want, want_length)


cdef inline object _value(void *attr):
    """An attribute's value as selectolax gives it (None for none, or for an attribute without value)."""
    cdef size_t length = 0
    cdef const lxb_char_t *text
    if attr == NULL:
        return None
    text = attribute_value(attr, &length)
    return _decode(text, length) if text != NULL else None


cdef class _Attributes:
    """The attributes the walk reads of one element (what the reference looks up in `node.attributes`). The id and
    class are decoded as read; the others are kept as Lexbor's attributes and decoded only when the walk asks (most
    are only tested: decoding every link's href and every style cost 0.2 M instructions a page of 2025)."""
    cdef bint any, has_hidden, has_itemscope, has_cloak, has_open
    cdef object ident, class_, itemprop
    cdef void *href_, *style_, *aria_hidden_, *content_, *datetime_, *role_, *itemtype_, *alt_, *kind_, *aria_modal_

    cdef void read(self, lxb_dom_node_t *element):
        cdef void *attr = first_attribute(element)
        cdef const lxb_char_t *name
        cdef size_t length = 0
        self.any = attr != NULL
        self.has_hidden = self.has_itemscope = self.has_cloak = self.has_open = False
        self.ident = self.class_ = self.itemprop = None
        self.href_ = self.style_ = self.aria_hidden_ = self.content_ = self.datetime_ = NULL
        self.role_ = self.itemtype_ = self.alt_ = self.kind_ = self.aria_modal_ = NULL
        while attr != NULL:
            name = attribute_name(attr, &length)
            if name != NULL and 2 <= length <= 11:
                # a later duplicate wins, as in the reference's dict
                if _is(name, length, b"id", 2):
                    self.ident = _value(attr)
                elif _is(name, length, b"class", 5):
                    self.class_ = _value(attr)
                elif _is(name, length, b"href", 4):
                    self.href_ = attr
                elif _is(name, length, b"style", 5):
                    self.style_ = attr
                elif _is(name, length, b"hidden", 6):
                    self.has_hidden = True
                elif _is(name, length, b"aria-hidden", 11):
                    self.aria_hidden_ = attr
                elif _is(name, length, b"itemprop", 8):
                    self.itemprop = _value(attr)
                elif _is(name, length, b"itemscope", 9):
                    self.has_itemscope = True
                elif _is(name, length, b"itemtype", 8):
                    self.itemtype_ = attr
                elif _is(name, length, b"role", 4):
                    self.role_ = attr
                elif _is(name, length, b"content", 7):
                    self.content_ = attr
                elif _is(name, length, b"datetime", 8):
                    self.datetime_ = attr
                elif _is(name, length, b"alt", 3):
                    self.alt_ = attr
                elif _is(name, length, b"type", 4):
                    self.kind_ = attr
                elif _is(name, length, b"aria-modal", 10):
                    self.aria_modal_ = attr
                elif _is(name, length, b"open", 4):
                    self.has_open = True
                elif (_is(name, length, b"v-cloak", 7) or _is(name, length, b"x-cloak", 7)
                      or _is(name, length, b"ng-cloak", 8)):
                    self.has_cloak = True  # (segment.CLOAKS)
            attr = next_attribute(attr)

    cdef bint has_href(self) noexcept:
        """`attrs.get("href")` is truthy: a value not empty (any bytes decode to a str as long or longer)."""
        cdef size_t length = 0
        return self.href_ != NULL and attribute_value(self.href_, &length) != NULL and length > 0

    cdef bint has_style(self) noexcept:
        """`attrs.get("style")` is truthy."""
        cdef size_t length = 0
        return self.style_ != NULL and attribute_value(self.style_, &length) != NULL and length > 0

    cdef bint has_aria_hidden(self) noexcept:
        """`attrs.get("aria-hidden") is not None`."""
        cdef size_t length = 0
        return self.aria_hidden_ != NULL and attribute_value(self.aria_hidden_, &length) != NULL

    cdef bint hidden(self, bint dialog) except -1:
        """segment._is_hidden: the element (a <dialog> when `dialog`) is hidden from the reader."""
        if dialog and not self.has_open:
            return True
        if not self.any:
            return False
        if self.has_cloak or _bytes_are(self.aria_modal_, b"true", 4):  # (segment.closed_overlay)
            return True
        return ((self.has_hidden or self.has_aria_hidden() or self.has_style())
                and hides(self.has_hidden, _value(self.aria_hidden_), _value(self.style_)))

    cdef bint role_is_main(self) noexcept:
        """`attrs.get("role") == "main"`."""
        return _bytes_are(self.role_, b"main", 4)


cdef enum:
    TALLIED = 16  # distinct tags a tally holds before it spills into a dict (a block opens or closes a few)


cdef struct _Tally:
    # The tags opened (or closed) since the last block, each with its count, in the order first seen: the block's
    # `opened` (`closed`) dict, made once when the block is emitted. Counting into a dict at every tag cost a lookup
    # and a store, and each store into a block's new dict; here a tag is found among a few pointers. Each tag
    # is held (a reference) until the dict is made.
    PyObject *tags[TALLIED]
    Py_ssize_t counts[TALLIED]
    int n
    PyObject *spill  # a dict of every count, once more than TALLIED tags came (NULL till then)


cdef int _tally(_Tally *t, str tag) except -1:
    """Count `tag` in `t`, found by identity (the walk's tags are mostly the name cache's own str objects) or else
    by value, as a dict key is."""
    cdef int i
    cdef PyObject *p = <PyObject *> tag
    if t.spill != NULL:
        _count(<dict> t.spill, tag)
        return 0
    for i in range(t.n):
        if t.tags[i] == p or <str> t.tags[i] == tag:
            t.counts[i] += 1
            return 0
    if t.n < TALLIED:
        Py_INCREF(tag)
        t.tags[t.n] = p
        t.counts[t.n] = 1
        t.n += 1
        return 0
    spill = _counts(t)
    Py_INCREF(spill)
    t.spill = <PyObject *> spill
    _count(spill, tag)
    return 0


cdef dict _counts(_Tally *t):
    """`t`'s counts as a dict, in the order the tags came; `t` emptied."""
    cdef dict out
    cdef int i
    if t.spill != NULL:
        out = <dict> t.spill
        Py_DECREF(out)  # (the tally's reference: `out` holds its own)
        t.spill = NULL
    else:
        out = {}
    for i in range(t.n):
        out[<str> t.tags[i]] = t.counts[i]
        Py_DECREF(<str> t.tags[i])
    t.n = 0
    return out


cdef enum:
    MEMO_TAGS = 4  # the distinct tags of a tally a memo slot holds (most blocks open or close one to three)
    TALLY_MEMOS = 64  # _Walk.counts_of's slots (a power of two)


cdef struct _TallyMemo:
    # A dict `_counts` made, and the tally it was made of: its tags (as pointers) and counts, in order. The dict holds
    # its keys, so a pointer compared here is never one reused for another object.
    PyObject *counts
    int n
    PyObject *tags[MEMO_TAGS]
    Py_ssize_t counts_of[MEMO_TAGS]


cdef void _drop(_Tally *t) noexcept:
    cdef int i
    for i in range(t.n):
        Py_DECREF(<object> t.tags[i])
    t.n = 0
    if t.spill != NULL:
        Py_DECREF(<object> t.spill)
        t.spill = NULL


cdef struct _Frame:
    # An open element: the reference's frame tuple (segment._walk, ROOT_FRAME) as a C struct, and the tag's kind
    # (_kind_of), read when the element closes. Building, indexing and freeing a tuple of ten objects an element,
    # its numbers boxed, cost about 0.3 M instructions a 2025 page. The four objects are references the frame holds
    # (_Walk.push takes them, _Walk.pop releases them).
    PyObject *tag  # str
    PyObject *containers  # tuple
    PyObject *ancestors  # frozenset
    PyObject *idclass  # tuple
    Py_ssize_t div_group, td_group, element
    bint in_pre, in_itemscope
    int kind


cdef enum:
    COLUMNS = 14  # a block's fields the walk writes (BlockTable's, in columns()'s order, but the repeat columns)
    FIRST_ROWS = 256  # _Walk.rows' first capacity, in blocks (a median page of 2025 has 314)
    WIDENINGS = 512  # _Walk.widened's slots (a power of two)
    LENGTHENINGS = 512  # _Walk.lengthened's slots (a power of two)
    KINDS = 256  # _Walk.kind_of's slots: Lexbor's ids of HTML's own tags are below (custom elements above)


cdef struct _Widening:
    # What the walk made of one (key, tag): the ancestors `key` with the tag (_Walk.widened), or the containers `key`
    # with it (_Walk.lengthened), each a reference the slot holds (NULL: an empty slot)
    PyObject *key
    PyObject *tag
    PyObject *out


cdef inline _Widening *_slot(_Widening *table, size_t slots, object key, str tag) noexcept:
    """The slot of (key, tag) in a table of `slots` (a power of two), by the two objects' addresses."""
    return &table[((<size_t> <PyObject *> key >> 4) ^ ((<size_t> <PyObject *> tag >> 4) * 31)) & (slots - 1)]


cdef inline void _release(_Widening *slot) noexcept:
    Py_XDECREF(slot.key)
    Py_XDECREF(slot.tag)
    Py_XDECREF(slot.out)
    slot.key = slot.tag = slot.out = NULL


cdef inline void _keep(_Widening *slot, object key, str tag, object out) noexcept:
    """Hold (key, tag) -> out in `slot`, releasing what it held: a slot holds its objects, so an address it compares is
    never one reused."""
    _release(slot)
    Py_INCREF(key)
    Py_INCREF(tag)
    Py_INCREF(out)
    slot.key, slot.tag, slot.out = <PyObject *> key, <PyObject *> tag, <PyObject *> out


cdef class _Walk:
    """The state `emit` shares with the walk (the reference's closure variables), and the stack of open elements."""
    cdef _Widening widenings[WIDENINGS]
    cdef _Widening lengthenings[LENGTHENINGS]  # (`key`: the parent's containers)
    cdef PyObject *kind_tags[KINDS]  # by Lexbor's tag id: the tag str whose kind kinds[id] is (a reference held)
    cdef int kinds[KINDS]
    # The blocks' rows until `finish` moves them into the page's BlockTable: COLUMNS references side by side a block,
    # each held (NULL once moved), in one buffer grown by doubling. Fourteen lists appended to a block grew by fourteen
    # series of reallocations, past 512 bytes each a call to the system's allocator: the walk took 4-6 % longer than
    # with a Block object a block (docs/speed.md, stop 77).
    cdef PyObject **rows
    cdef Py_ssize_t n_rows, row_capacity
    cdef _Frame *frames  # frames[:depth], the root's first; `capacity` allocated
    cdef Py_ssize_t depth, capacity
    cdef _Tally opened, closed
    cdef _TallyMemo memos[TALLY_MEMOS]
    cdef int space  # False, True or BOX_ONLY
    cdef bint line_break
    cdef Py_ssize_t max_chars

    def __cinit__(self):
        self.frames = NULL
        self.depth = self.capacity = 0
        self.rows = NULL
        self.n_rows = self.row_capacity = 0

    def __dealloc__(self):
        cdef int i
        for i in range(WIDENINGS):
            _release(&self.widenings[i])
        for i in range(LENGTHENINGS):
            _release(&self.lengthenings[i])
        for i in range(KINDS):
            Py_XDECREF(self.kind_tags[i])
        _drop(&self.opened)
        _drop(&self.closed)
        for i in range(TALLY_MEMOS):
            Py_XDECREF(self.memos[i].counts)
        while self.depth:
            self.pop()
        free(self.frames)
        cdef Py_ssize_t k
        for k in range(self.n_rows * COLUMNS):
            Py_XDECREF(self.rows[k])
        free(self.rows)

    cdef frozenset widened(self, dict widened, frozenset ancestors, str tag):
        """_with(widened, ancestors, tag), found first by the two objects' addresses in a table of the last ones
        asked: _with's key tuple, its hash and the dict's lookup cost 0.5 M instructions a page of 2025, for a few
        dozen distinct answers."""
        cdef _Widening *slot = _slot(self.widenings, WIDENINGS, ancestors, tag)
        if slot.key == <PyObject *> ancestors and slot.tag == <PyObject *> tag:
            return <frozenset> slot.out
        out = _with(widened, ancestors, tag)
        _keep(slot, ancestors, tag, out)
        return out

    cdef tuple lengthened(self, tuple containers, str tag):
        """`(containers + (tag,))[-MAX_CONTAINERS:]`, the containers of a child of an element whose containers are
        `containers`, made once a page for each (containers, tag) found by their addresses, as `widened`: a page's
        elements have a few hundred distinct containers, and a tuple made and freed for each element cost ~1 % of a
        page's time (scripts/profile_cycles.py). Every block of a page under the same containers then holds the same
        tuple."""
        cdef _Widening *slot = _slot(self.lengthenings, LENGTHENINGS, containers, tag)
        if slot.key == <PyObject *> containers and slot.tag == <PyObject *> tag:
            return <tuple> slot.out
        cdef tuple out = containers + (tag,)
        if PyTuple_GET_SIZE(out) > MAX_CONTAINERS:
            out = out[-MAX_CONTAINERS:]
        _keep(slot, containers, tag, out)
        return out

    cdef int kind_of(self, uintptr_t tag_id, dict kinds, str tag, frozenset drop, frozenset line_tags,
                     frozenset repeat_skip) except -1:
        """_kind_of(kinds, tag, ...), found first by Lexbor's tag id when the tag is the str seen there before (the
        name cache's: the dict's lookup cost 0.3 M instructions a page of 2025)."""
        if tag_id < KINDS and self.kind_tags[tag_id] == <PyObject *> tag:
            return self.kinds[tag_id]
        cdef int kind = _kind_of(kinds, tag, drop, line_tags, repeat_skip)
        if tag_id < KINDS:
            Py_XDECREF(self.kind_tags[tag_id])
            Py_INCREF(tag)
            self.kind_tags[tag_id] = <PyObject *> tag
            self.kinds[tag_id] = kind
        return kind

    cdef dict counts_of(self, _Tally *t):
        """_counts(t), the same dict object for every block of the page whose tally is the same tags with the same
        counts in the same order: most blocks open and close the same few tags (a <p>, a <li>), and making, filling
        and freeing two dicts a block cost about 0.6 M instructions a page of 2025. The dicts are read only (the
        features, the typer, the seed systems), so blocks may share them; a Block made elsewhere has its own."""
        cdef int i, n = t.n
        cdef uint64_t h = <uint64_t> n
        cdef _TallyMemo *memo
        if t.spill != NULL or n > MEMO_TAGS:
            return _counts(t)
        for i in range(n):
            h = <uint64_t> _mix(h, <uint64_t> <uintptr_t> t.tags[i], <uint64_t> t.counts[i])
        memo = &self.memos[h & (TALLY_MEMOS - 1)]
        if memo.counts != NULL and memo.n == n:
            for i in range(n):
                if memo.tags[i] != t.tags[i] or memo.counts_of[i] != t.counts[i]:
                    break
            else:
                _drop(t)
                return <dict> memo.counts
        Py_XDECREF(memo.counts)  # (the slot's key is written from the tally before _counts empties it)
        memo.counts, memo.n = NULL, n
        for i in range(n):
            memo.tags[i], memo.counts_of[i] = t.tags[i], t.counts[i]
        out = _counts(t)
        Py_INCREF(out)
        memo.counts = <PyObject *> out
        return out

    cdef inline _Frame *top(self) noexcept:
        return &self.frames[self.depth - 1]

    cdef int push(self, str tag, tuple containers, frozenset ancestors, tuple idclass, Py_ssize_t div_group,
                  Py_ssize_t td_group, bint in_pre, Py_ssize_t element, bint in_itemscope, int kind) except -1:
        """Open an element (a pointer from `top` before this call may not outlive it: the frames may move)."""
        cdef _Frame *grown
        cdef Py_ssize_t capacity
        if self.depth == self.capacity:
            capacity = max(64, 2 * self.capacity)
            grown = <_Frame *> realloc(self.frames, capacity * sizeof(_Frame))
            if grown == NULL:
                raise MemoryError()
            self.frames, self.capacity = grown, capacity
        cdef _Frame *f = &self.frames[self.depth]
        Py_INCREF(tag)
        Py_INCREF(containers)
        Py_INCREF(ancestors)
        Py_INCREF(idclass)
        f.tag = <PyObject *> tag
        f.containers = <PyObject *> containers
        f.ancestors = <PyObject *> ancestors
        f.idclass = <PyObject *> idclass
        f.div_group, f.td_group, f.element = div_group, td_group, element
        f.in_pre, f.in_itemscope, f.kind = in_pre, in_itemscope, kind
        self.depth += 1
        return 0

    cdef finish(self):
        """The page's BlockTable, the rows moved into its lists with their references (the repeat columns are made
        whole by mark_repeats)."""
        cdef Py_ssize_t n = self.n_rows, i, c
        cdef list column
        cdef list columns = []
        for c in range(COLUMNS):
            column = PyList_New(n)
            for i in range(n):
                _list_take(column, i, self.rows[i * COLUMNS + c])
                self.rows[i * COLUMNS + c] = NULL
            columns.append(column)
        self.n_rows = 0
        table = BlockTable()
        (table.text, table.containers, table.ancestors, table.opened, table.closed, table.div_group, table.td_group,
         table.idclass, table.in_link, table.depth, table.artificial, table.gap, table.shown, table.element) = columns
        return table

    cdef int grow_rows(self) except -1:
        cdef Py_ssize_t capacity = self.row_capacity * 2 if self.row_capacity else FIRST_ROWS
        cdef PyObject **grown = <PyObject **> realloc(self.rows, capacity * COLUMNS * sizeof(PyObject *))
        if grown == NULL:
            raise MemoryError()
        self.rows, self.row_capacity = grown, capacity
        return 0

    cdef void pop(self) noexcept:
        """Close the innermost element (its frame's objects released: read them first)."""
        self.depth -= 1
        cdef _Frame *f = &self.frames[self.depth]
        Py_DECREF(<object> f.tag)
        Py_DECREF(<object> f.containers)
        Py_DECREF(<object> f.ancestors)
        Py_DECREF(<object> f.idclass)

    cdef emit(self, str text, object artificial=None, object shown=None):
        if len(text) > self.max_chars:
            text = text[:self.max_chars]
            shown = shown[:self.max_chars] if shown is not None else None
        cdef _Frame *top = self.top()
        if self.line_break:
            gap = "\n"
        elif not self.space or (self.space == BOX_ONLY and text[0] in CLOSING_PUNCTUATION):
            gap = ""
        else:
            gap = " "
        # (every field made before the row is written: a row is whole or not there)
        opened = self.counts_of(&self.opened)
        closed = self.counts_of(&self.closed)
        div_group, td_group, element, depth = top.div_group, top.td_group, top.element, self.depth - 1
        in_link = "a" in <frozenset> top.ancestors
        if self.n_rows == self.row_capacity:
            self.grow_rows()
        cdef PyObject **row = self.rows + self.n_rows * COLUMNS
        _hold(row, 0, text)
        _hold(row, 1, <object> top.containers)
        _hold(row, 2, <object> top.ancestors)
        _hold(row, 3, opened)
        _hold(row, 4, closed)
        _hold(row, 5, div_group)
        _hold(row, 6, td_group)
        _hold(row, 7, <object> top.idclass)
        _hold(row, 8, in_link)
        _hold(row, 9, depth)
        _hold(row, 10, artificial)
        _hold(row, 11, gap)
        _hold(row, 12, shown)
        _hold(row, 13, element)
        self.n_rows += 1
        self.space = False
        self.line_break = False


cdef inline void _hold(PyObject **row, int column, object value) noexcept:
    Py_INCREF(value)
    row[column] = <PyObject *> value


cdef inline bint _is_space(Py_UCS4 c) noexcept:
    """str.isspace() of one character, without a call for a non-ASCII one: Py_UNICODE_ISSPACE calls
    _PyUnicode_IsWhitespace for every character past ASCII (each letter of a Cyrillic or CJK text), where Unicode's
    whitespace past ASCII is these 17 (tests/test_compiled_walk.py compares every code point with str.isspace)."""
    if c < 128:
        return Py_UNICODE_ISSPACE(c)  # (a table lookup)
    if c < 0x1680:
        return c == 0x85 or c == 0xA0
    return c == 0x1680 or 0x2000 <= c <= 0x200A or c == 0x2028 or c == 0x2029 or c == 0x202F or c == 0x205F or c == 0x3000


def _is_space_check():
    """Every code point whose _is_space differs from str.isspace (none; for the tests)."""
    return [c for c in range(0x110000) if _is_space(c) != chr(c).isspace()]


cdef inline bint _bytes_all_space(const lxb_char_t *data, size_t length) noexcept:
    """Whether a text node's UTF-8 bytes are ASCII whitespace only: then its text is whitespace (str.isspace), told
    without decoding it (the text nodes between tags, "\\n    ", are about half of a page's)."""
    cdef size_t i
    for i in range(length):
        if data[i] >= 128 or not Py_UNICODE_ISSPACE(data[i]):
            return False
    return True


cdef str _ascii_normalised(const unsigned char *ascii, Py_ssize_t n):
    """`" ".join(text.split())` of an ASCII text, written in one pass into a buffer (the split's list of words and
    the join cost 0.56 M instructions a page of 2025)."""
    cdef char *out = <char *> malloc(n + 1)
    cdef Py_ssize_t i, m = 0
    cdef bint pending = False
    cdef unsigned char b
    if out == NULL:
        raise MemoryError()
    try:
        for i in range(n):
            b = ascii[i]
            if Py_UNICODE_ISSPACE(b):
                pending = m > 0
            else:
                if pending:
                    out[m] = 0x20
                    m += 1
                    pending = False
                out[m] = b
                m += 1
        return PyUnicode_DecodeASCII(out, m, NULL)
    finally:
        free(out)


cdef str _normalised(str text):
    """cleaner.page.text.normalise_space (`" ".join(text.split())`: each run of whitespace, as str.isspace reads it,
    between two other characters becomes one space, the runs at either end go). One pass over the text tells whether
    it already reads so (most do): then it is returned as it is, an equal string, without the split's list; an ASCII
    text that does not is rewritten in C (_ascii_normalised)."""
    cdef Py_ssize_t n = PyUnicode_GET_LENGTH(text), i
    cdef int kind = PyUnicode_KIND(text)
    cdef void *data = PyUnicode_DATA(text)
    cdef const unsigned char *ascii
    cdef Py_UCS4 c
    cdef unsigned char b
    cdef bint spaced = True  # (at the start: a leading run goes)
    cdef bint changed = False
    if PyUnicode_IS_ASCII(text):  # (most texts: its bytes read without the kind's dispatch, str.isspace's ASCII)
        ascii = PyUnicode_1BYTE_DATA(text)
        for i in range(n):
            b = ascii[i]
            if Py_UNICODE_ISSPACE(b):  # (an ASCII character: a table lookup, no call)
                if spaced or b != 0x20 or i == n - 1:
                    return _ascii_normalised(ascii, n)
                spaced = True
            else:
                spaced = False
        return text
    for i in range(n):
        c = PyUnicode_READ(kind, data, i)
        if _is_space(c):
            if spaced or c != 0x20 or i == n - 1:
                changed = True
                break
            spaced = True
        else:
            spaced = False
    if not changed:
        return text
    return " ".join(text.split())


cdef inline bint _all_space(str text):
    """str.isspace(): a text of whitespace only, not empty."""
    cdef Py_ssize_t n = PyUnicode_GET_LENGTH(text), i
    cdef int kind = PyUnicode_KIND(text)
    cdef void *data = PyUnicode_DATA(text)
    if n == 0:
        return False
    for i in range(n):
        if not _is_space(PyUnicode_READ(kind, data, i)):
            return False
    return True


cdef inline bint _space_at(str text, Py_ssize_t i):
    """text[i].isspace() for a position in the text (i = -1: the last character)."""
    if i < 0:
        i += PyUnicode_GET_LENGTH(text)
    return _is_space(PyUnicode_READ(PyUnicode_KIND(text), PyUnicode_DATA(text), i))


cdef inline bint _among(PyObject **tokens, Py_hash_t *hashes, Py_ssize_t n, PyObject *token, Py_hash_t h):
    """Whether `token` (of hash `h`) is one of tokens[:n], whose hashes are hashes[:n] (by hash first, as a dict
    compares: a str keeps its hash once computed)."""
    cdef Py_ssize_t k
    for k in range(n):
        if hashes[k] == h and (tokens[k] == token or <str> tokens[k] == <str> token):
            return True
    return False


cpdef tuple merged_idclass(tuple tokens, tuple inherited):
    """`tuple(dict.fromkeys(tokens + inherited))[:24]`, the reference's merge of an element's id/class tokens with
    those it inherits, without the dict: `inherited` is a merge already, so its tokens are distinct, and each is
    compared only with the element's own few. The result is laid out in a C array of borrowed references, then
    copied into the tuple. (dict.fromkeys cost 9,000 instructions a merge, 3 M a page of 2025; a list and a
    tuple(list) 6,600.) A token's hash is read where the str keeps it (_hash): PyObject_Hash, a call for each
    token, cost 0.28 M instructions a page."""
    cdef PyObject *merged[24]
    cdef Py_hash_t own_hash[24]
    cdef Py_ssize_t n = 0, n_own, i
    cdef PyObject *token
    cdef Py_hash_t h
    for i in range(PyTuple_GET_SIZE(tokens)):
        token = PyTuple_GET_ITEM(tokens, i)
        h = _hash(token)
        if not _among(merged, own_hash, n, token, h):
            if n == 24:  # the merge keeps 24
                break
            merged[n] = token
            own_hash[n] = h
            n += 1
    n_own = n
    for i in range(PyTuple_GET_SIZE(inherited)):
        if n >= 24:
            break
        token = PyTuple_GET_ITEM(inherited, i)
        if not _among(merged, own_hash, n_own, token, _hash(token)):
            merged[n] = token
            n += 1
    out = PyTuple_New(n)
    for i in range(n):
        Py_INCREF(<object> merged[i])
        PyTuple_SET_ITEM(out, i, <object> merged[i])  # (steals the reference taken above)
    return <tuple> out


# (ancestors, a tag) -> the ancestors with it (_with), kept across pages: the chains of tags repeat from page to
# page (html, body, div, ...), and the same frozenset object coming back lets every later cache keyed by a block's
# ancestors (the features' container names, the typer's) find it by identity, where a set equal to it but built anew
# on each page was compared element by element at its first lookup a page. Bounded: custom element names are any
# number; cleared between pages, never during a walk.
_WIDENED = {}
WIDENED_ENTRIES = 20_000

# An id or class value -> its tokens (segment.idclass_tokens), kept across pages as the reference's TOKEN_CACHE (and
# bounded by the same TOKEN_CACHE_ENTRIES). A value that holds "MathJax" or "katex-html", and so may mark the drawn copy
# of a formula (math.is_rendered_copy), is kept as `[tokens]`: the two substring searches are made once per value, not
# at every element that carries it (0.55 M instructions a page of 2025).
_TOKENS = {}


cdef object _value_tokens(str value):
    tokens = idclass_tokens(value)
    if "MathJax" in value or "katex-html" in value:  # (a cheap test before the exact one)
        return [tokens]
    return tokens


cdef inline frozenset _with(dict widened, frozenset ancestors, str tag):
    """`ancestors | {tag}`, made once for each (ancestors, tag) while _WIDENED holds it: a page has a few dozen
    ancestor sets, and building a set for each element cost 0.6 M instructions a page of 2025."""
    key = (ancestors, tag)
    out = widened.get(key)
    if out is None:
        out = widened[key] = ancestors | {tag}
    return <frozenset> out


cdef inline int _count(dict counts, str tag) except -1:
    # (dict.get with its default and a generic addition cost a third more)
    cdef PyObject *found = PyDict_GetItem(counts, tag)
    if found == NULL:
        counts[tag] = 1
    else:
        counts[tag] = PyLong_AsSsize_t(<object> found) + 1
    return 0


# What the walk asks of an element's tag, found once a page for each tag (_kind_of), where testing the tag against
# four sets and ten names cost about 1,000 instructions an element: the low bits are flags, the high ones name the
# tags the walk treats apart (0: none of them).
cdef enum:
    IGNORED = 1  # no name, or one not dropped that starts with "-" or "!": neither opened nor dropped
    DROPPED = 2  # [segment] drop_tags
    LINE = 4  # [segment] block_tags: a line break before and after
    REPEAT_SKIPPED = 8  # [features.cues.repeat] skip_tags
    NOT_DISPLAYED = 16  # UNDISPLAYED
    NAMED = 32  # the multiplier of a name below
    A = NAMED * 1
    ARTICLE = NAMED * 2
    PRE = NAMED * 3
    CODE = NAMED * 4
    DIV = NAMED * 5
    TD = NAMED * 6
    TH = NAMED * 7
    IMG = NAMED * 8
    MATH = NAMED * 9
    SCRIPT = NAMED * 10
    DIALOG = NAMED * 11

_NAMED_TAGS = {"a": A, "article": ARTICLE, "pre": PRE, "code": CODE, "div": DIV, "td": TD, "th": TH, "img": IMG,
               "math": MATH, "script": SCRIPT, "dialog": DIALOG}


cdef int _kind_of(dict kinds, str tag, frozenset drop, frozenset line_tags, frozenset repeat_skip) except -1:
    cdef PyObject *found = PyDict_GetItem(kinds, tag)
    if found != NULL:
        return PyLong_AsSsize_t(<object> found)
    cdef int kind = _NAMED_TAGS.get(tag, 0)
    if tag in drop:
        kind |= DROPPED
    elif not tag or tag[0] == "-" or tag[0] == "!":
        kind |= IGNORED
    if tag in line_tags:
        kind |= LINE
    if tag in repeat_skip:
        kind |= REPEAT_SKIPPED
    if tag in UNDISPLAYED:
        kind |= NOT_DISPLAYED
    kinds[tag] = kind
    return kind


cdef struct _Table:
    # An open-addressing table's storage (_Groups, _Merges): its entries in the order they were added (structs whose
    # first field is their Py_hash_t) and its slots (an entry's number + 1, 0 for an empty slot; probed linearly, at
    # most half full). A cdef class's C fields start zeroed: an empty table has no memory yet.
    void *entries
    Py_ssize_t *slots
    Py_ssize_t n, allocated
    size_t mask  # the slots' count - 1 (a power of two minus one); 0 before the first entry


cdef int _reserve(_Table *t, size_t entry_size) except -1:
    """Room for one more entry: when the entries are full, the slots (64 at first) and the entries' array doubled and
    the entries placed again by their hashes."""
    if t.n < t.allocated:
        return 0
    cdef size_t count = 2 * (t.mask + 1) if t.slots != NULL else 64, i
    cdef Py_ssize_t g
    cdef Py_ssize_t *placed = <Py_ssize_t *> malloc(count * sizeof(Py_ssize_t))
    cdef char *grown = <char *> realloc(t.entries, (count // 2) * entry_size)
    if placed == NULL or grown == NULL:
        free(placed)
        if grown != NULL:
            t.entries = grown
        raise MemoryError()
    t.entries = grown
    t.allocated = count // 2
    for i in range(count):
        placed[i] = 0
    for g in range(t.n):
        i = <size_t> (<Py_hash_t *> (grown + g * entry_size))[0] & (count - 1)
        while placed[i] != 0:
            i = (i + 1) & (count - 1)
        placed[i] = g + 1
    free(t.slots)
    t.slots = placed
    t.mask = count - 1
    return 0


cdef void _free_table(_Table *t) noexcept:
    """The table's memory freed (its entries' references released by its owner first)."""
    free(t.entries)
    free(t.slots)
    t.entries = NULL
    t.slots = NULL
    t.n = t.allocated = 0
    t.mask = 0


cdef inline Py_hash_t _mix(uint64_t a, uint64_t b, uint64_t c) noexcept:
    """Three 64-bit numbers mixed into one hash (a multiply-xorshift: a table's slot is its low bits)."""
    cdef uint64_t x = (a ^ (b * 0x9E3779B97F4A7C15ULL)) * 0xBF58476D1CE4E5B9ULL
    x = (x ^ (x >> 31) ^ (c * 0xFF51AFD7ED558CCDULL)) * 0x94D049BB133111EBULL
    return <Py_hash_t> (x ^ (x >> 29))


cdef struct _Group:
    # One repeat group: its signature (parent element, tag, class value: NULL for None) with the signature's mixed
    # hash, and how many elements it has counted so far.
    Py_hash_t hash  # (the first field: _reserve reads it)
    Py_ssize_t parent
    PyObject *tag  # str, a reference the table holds
    PyObject *class_value  # str or NULL, a reference the table holds
    Py_ssize_t size


@cython.final
cdef class _Groups:
    """The repeat groups of one walk (the reference's `groups` dict of signature (parent, tag, class value) -> group,
    and its `group_size`), in C: a _Table of the groups in the order they were first seen, so a group's number is the
    one the dict gave. Keys compare as the dict's tuples do: the parent's index, then each str by identity, else by
    value (never by hash alone). The tuple, its hash, the dict's insertion and the boxed numbers cost about one dict
    lookup an element. The table holds a reference to each key's str while it lives (a decoded class value dies with
    its element's attributes otherwise, and another str could take its address), and releases them, and its memory,
    in `release` at the end of the walk or, on an exception, when the walk's frame drops it (__dealloc__)."""
    cdef _Table table

    def __dealloc__(self):
        self.release()

    cdef void release(self) noexcept:
        cdef _Group *groups = <_Group *> self.table.entries
        cdef Py_ssize_t g
        for g in range(self.table.n):
            Py_XDECREF(groups[g].tag)
            Py_XDECREF(groups[g].class_value)
        _free_table(&self.table)

    cdef Py_ssize_t count(self, Py_ssize_t parent, str tag, object class_value) except -1:
        """The group of signature (parent, tag, class_value), counted once more: a new group, numbered next, the first
        time the signature is seen."""
        cdef PyObject *t = <PyObject *> tag
        cdef PyObject *c = NULL if class_value is None else <PyObject *> class_value
        cdef Py_hash_t h = _mix(<uint64_t> _hash(t), <uint64_t> (_hash(c) if c != NULL else 0), <uint64_t> parent)
        cdef _Table *table = &self.table
        cdef _Group *e
        cdef size_t i
        cdef Py_ssize_t g
        _reserve(table, sizeof(_Group))
        cdef _Group *groups = <_Group *> table.entries
        i = <size_t> h & table.mask
        while table.slots[i] != 0:
            e = &groups[table.slots[i] - 1]
            if (e.hash == h and e.parent == parent
                    and (e.tag == t or <str> e.tag == tag)
                    and (e.class_value == c or (e.class_value != NULL and c != NULL and <str> e.class_value == <str> c))):
                e.size += 1
                return table.slots[i] - 1
            i = (i + 1) & table.mask
        g = table.n
        e = &groups[g]
        e.hash = h
        e.parent = parent
        e.tag = t
        e.class_value = c
        e.size = 1
        Py_XINCREF(t)
        Py_XINCREF(c)
        table.n += 1
        table.slots[i] = g + 1
        return g

    cdef list sizes(self):
        """group_size: each group's count, by group number."""
        cdef _Group *groups = <_Group *> self.table.entries
        cdef list out = PyList_New(self.table.n)
        cdef Py_ssize_t g
        cdef object size
        for g in range(self.table.n):
            size = groups[g].size
            Py_INCREF(size)
            PyList_SET_ITEM(out, g, size)
        return out


cdef struct _Merge:
    # One id/class merge: the element's id tokens and class tokens (each the tuple _TOKENS holds for the value, or
    # NULL when the element has no such tokens) and the idclass it inherits, keyed by identity with their mixed hash,
    # and the idclass they merge into. All four are references the table holds.
    Py_hash_t hash  # (the first field: _reserve reads it)
    PyObject *id_tokens
    PyObject *class_tokens
    PyObject *inherited
    PyObject *merged


@cython.final
cdef class _Merges:
    """The id/class merges of one walk: (id tokens, class tokens, inherited idclass) -> `merged_idclass(id tokens +
    class tokens, inherited)`, in C, a _Table as _Groups'. Siblings of one template repeat their values under one
    parent, so a page merges each combination once. (It was a dict keyed by the tuple (tokens, the inherited tuple's
    address): the concatenated tuple, the key tuple and the dict's lookup cost about 1,000 instructions an element,
    0.7 M a page of 2025.)

    The keys are the three objects' identities, never their values. That is safe because the table holds a reference
    to each key object (and to each merged tuple) until `release`: none of them can die while the table lives, so no
    other object can take one's address, and one address is one object (and so one value) for the whole walk, even if
    _TOKENS is cleared meanwhile and a value's tokens are made anew (a new tuple, a new key: a merge more, never a
    wrong one). The merge is a function of the three tuples' values alone, so keying by identity gives the results
    the value-keyed dict gave. Released, with the memory, in `release` at the end of the walk or, on an exception,
    when the walk's frame drops it (__dealloc__)."""
    cdef _Table table

    def __dealloc__(self):
        self.release()

    cdef void release(self) noexcept:
        cdef _Merge *merges = <_Merge *> self.table.entries
        cdef Py_ssize_t g
        for g in range(self.table.n):
            Py_XDECREF(merges[g].id_tokens)
            Py_XDECREF(merges[g].class_tokens)
            Py_XDECREF(merges[g].inherited)
            Py_XDECREF(merges[g].merged)
        _free_table(&self.table)

    cdef tuple merged(self, object id_tokens, object class_tokens, tuple inherited):
        """`merged_idclass(id_tokens + class_tokens, inherited)`, made once for each three objects (id_tokens,
        class_tokens: a non-empty tuple, or None when absent; not both None). The concatenation is made only then."""
        cdef PyObject *a = NULL if id_tokens is None else <PyObject *> id_tokens
        cdef PyObject *b = NULL if class_tokens is None else <PyObject *> class_tokens
        cdef PyObject *c = <PyObject *> inherited
        cdef Py_hash_t h = _mix(<uint64_t> <uintptr_t> a, <uint64_t> <uintptr_t> b, <uint64_t> <uintptr_t> c)
        cdef _Table *table = &self.table
        cdef _Merge *e
        cdef size_t i
        cdef Py_ssize_t g
        cdef tuple tokens, result
        _reserve(table, sizeof(_Merge))
        cdef _Merge *merges = <_Merge *> table.entries
        i = <size_t> h & table.mask
        while table.slots[i] != 0:
            e = &merges[table.slots[i] - 1]
            if e.id_tokens == a and e.class_tokens == b and e.inherited == c:
                return <tuple> e.merged
            i = (i + 1) & table.mask
        if b == NULL:
            tokens = <tuple> id_tokens
        elif a == NULL:
            tokens = <tuple> class_tokens
        else:
            tokens = <tuple> id_tokens + <tuple> class_tokens
        result = merged_idclass(tokens, inherited)
        g = table.n
        e = &merges[g]
        e.hash = h
        e.id_tokens = a
        e.class_tokens = b
        e.inherited = c
        e.merged = <PyObject *> result
        Py_XINCREF(a)
        Py_XINCREF(b)
        Py_INCREF(inherited)
        Py_INCREF(result)
        table.n += 1
        table.slots[i] = g + 1
        return result


def walk(parsed, config):
    """`cleaner.page.segment._walk(parsed, config)`, compiled (module docstring)."""
    cfg = config["segment"]
    limits = config["limits"]
    cdef frozenset drop = frozenset(cfg["drop_tags"])
    cdef Py_ssize_t max_blocks = int(limits["max_blocks"])
    cdef Py_ssize_t max_nodes = int(limits["max_nodes"])
    cdef Py_ssize_t alt_min = int(cfg["img_alt_min_chars"])
    cdef frozenset line_tags = frozenset(cfg["block_tags"])
    rc = config["features"]["cues"]["repeat"]
    cdef Py_ssize_t repeat_min = int(rc["min_siblings"])
    cdef frozenset repeat_skip = frozenset(rc["skip_tags"])

    tree = parsed.tree
    capped, markup_capped = parsed.nesting_capped, parsed.markup_capped
    marks = PageMarks()
    title = read_head(tree, marks)
    root_node = tree.body or tree.root
    cdef _Walk w = _Walk()
    w.max_chars = int(cfg["max_block_chars"])
    if root_node is None:
        return Segmentation(w.finish(), 0, False, 0, capped, title, marks, markup_capped)

    root_tag, root_containers, root_ancestors, root_idclass, root_div, root_td, root_pre, root_element, root_scope = (
        ROOT_FRAME)
    w.push(root_tag, root_containers, root_ancestors, root_idclass, root_div, root_td, root_pre, root_element,
           root_scope, 0)
    cdef list element_parent = [0]
    cdef list element_group = [-1]  # (the reference's numbering of signatures: mark_repeats)
    cdef list group_size
    cdef _Groups groups = _Groups()  # signature (parent, tag, class value) -> its group, and the groups' sizes
    cdef dict itemprops = marks.itemprops
    cdef Py_ssize_t n_nodes = 0, max_depth = 0, group_seq = 0, element, k, group
    cdef dict token_cache = _TOKENS
    cdef _Merges merges = _Merges()  # (id tokens, class tokens, inherited idclass), by identity -> the idclass
    cdef dict widened = _WIDENED
    cdef dict kinds = {}  # tag -> what the walk asks of it (_kind_of)
    cdef int kind, named
    if len(token_cache) >= TOKEN_CACHE_ENTRIES:
        token_cache.clear()
    if len(widened) >= WIDENED_ENTRIES:
        widened.clear()
    w.space = False
    w.line_break = True

    cdef _Attributes attrs = _Attributes()
    cdef lxb_dom_node_t *root = _node(root_node)
    cdef lxb_dom_node_t *node = root
    cdef lxb_dom_node_t *child
    cdef _Frame *parent
    cdef _Frame *closing
    cdef tuple idclass, containers
    cdef frozenset ancestors
    cdef str tag, raw, text, line, shown
    cdef bint rendered_copy, in_itemscope
    cdef Py_ssize_t div_group, td_group
    cdef object parent_element, class_value, value, cached, itemprop, alt, formula, script_type
    cdef object id_tokens, class_tokens  # an element's id's tokens and its class's (a tuple, or None)
    cdef PyObject *found
    cdef lexbor_str_t *text_data
    by_address = None  # address -> selectolax node, for the formulas cleaner.page.math reads (built when needed)

    while node != NULL and w.n_rows < max_blocks and n_nodes < max_nodes:
        n_nodes += 1
        if node.type == TEXT_NODE:
            text_data = &(<lxb_dom_character_data_t *> node).data
            if text_data.data == NULL or text_data.length == 0:
                raw = None  # (no text)
            elif not w.top().in_pre and _bytes_all_space(text_data.data, text_data.length):
                raw = None
                w.space = True  # (what `_all_space(raw)` below says of it, told before decoding it)
            else:
                raw = _decode(text_data.data, text_data.length)
            if not raw:
                pass
            elif w.top().in_pre:  # inside pre: every line is a block, shown with its own spaces
                for k, line in enumerate(raw.split("\n")):
                    if k:
                        w.line_break = True
                    text = _normalised(line)
                    if not text:
                        if line:
                            w.space = True
                        continue
                    if w.n_rows >= max_blocks:
                        break
                    shown = line.rstrip()
                    if not w.line_break and _space_at(shown, 0):  # spaces inside a line another node began
                        w.space = True
                        shown = shown.lstrip()
                    w.emit(text, "pre-line", None if shown == text else shown)
                    w.space = _space_at(line, -1)
            elif _all_space(raw):
                w.space = True
            else:
                if _space_at(raw, 0):
                    w.space = True
                w.emit(_normalised(raw))
                w.space = _space_at(raw, -1)
            tag = None
        elif node.type == ELEMENT_NODE:
            tag = _element_tag(node)
        else:
            tag = None  # comments, the doctype: no visible text
        if tag is None or node.type != ELEMENT_NODE:
            kind = IGNORED
        else:
            kind = w.kind_of(node.local_name, kinds, tag, drop, line_tags, repeat_skip)
        if kind & IGNORED:
            pass
        elif not kind & DROPPED:
            # -- open the element --
            parent = w.top()
            attrs.read(node)
            if kind & ~(NAMED - 1) == A and not (attrs.any and attrs.has_href()):
                # An anchor without href (`<a name="top">`) is not a link (segment._walk says why).
                tag = "a-nohref"
                kind = _kind_of(kinds, tag, drop, line_tags, repeat_skip)
            named = kind & ~(NAMED - 1)
            idclass = <tuple> parent.idclass
            class_value = None
            rendered_copy = False
            if attrs.any:
                id_tokens = class_tokens = None  # (None: no tokens)
                for k in range(2):
                    value = attrs.ident if k == 0 else attrs.class_
                    if value:
                        if k == 1:
                            class_value = value
                        found = PyDict_GetItem(token_cache, value)
                        if found == NULL:
                            cached = _value_tokens(value)
                            token_cache[value] = cached
                        else:
                            cached = <object> found
                        if type(cached) is list:  # a value that may name a formula's drawn copy (_value_tokens)
                            rendered_copy = rendered_copy or is_rendered_copy(_attributes(node))
                            cached = (<list> cached)[0]
                        if PyTuple_GET_SIZE(<tuple> cached) != 0:
                            if k == 0:
                                id_tokens = cached
                            else:
                                class_tokens = cached
                if id_tokens is not None or class_tokens is not None:  # (no tokens: the parent's idclass, as it is)
                    # Merged once for each (id tokens, class tokens, inherited idclass) a page (_Merges says why
                    # their identities are keys enough).
                    idclass = merges.merged(id_tokens, class_tokens, idclass)
            element = len(element_parent)
            parent_element = parent.element
            element_parent.append(parent_element)
            if kind & REPEAT_SKIPPED:
                element_group.append(-1)
            else:
                element_group.append(groups.count(parent.element, tag, class_value))
            if named == ARTICLE:
                marks.articles += 1
            elif named == PRE or named == CODE:
                marks.code += 1
            div_group = parent.div_group
            td_group = parent.td_group
            if named == DIV:
                group_seq += 1
                div_group = group_seq
            elif named == TD or named == TH:
                group_seq += 1
                td_group = group_seq
            containers = w.lengthened(<tuple> parent.containers, tag)
            ancestors = <frozenset> parent.ancestors
            if tag not in ancestors:
                ancestors = w.widened(widened, ancestors, tag)
            in_itemscope = parent.in_itemscope
            if HIDDEN not in ancestors and attrs.hidden(named == DIALOG):
                ancestors = w.widened(widened, ancestors, HIDDEN)
            if attrs.any:
                itemprop = attrs.itemprop
                if itemprop:
                    if MAIN not in ancestors and itemprop == "articleBody":
                        ancestors = w.widened(widened, ancestors, MAIN)
                    itemprop = itemprop.lower()
                    itemprops[itemprop] = itemprops.get(itemprop, 0) + 1
                    if itemprop == "datepublished" and not marks.date_published:
                        marks.date_published = _value(attrs.content_) or _value(attrs.datetime_) or ""
                if MAIN not in ancestors and attrs.role_is_main():
                    ancestors = w.widened(widened, ancestors, MAIN)
                if not in_itemscope and attrs.has_itemscope:
                    in_itemscope = True
                    add_itemtypes(_value(attrs.itemtype_), marks.itemtypes)
            w.push(tag, containers, ancestors, idclass, div_group, td_group, parent.in_pre or named == PRE, element,
                   in_itemscope, kind)
            _tally(&w.opened, tag)
            if w.depth > max_depth:
                max_depth = w.depth
            if kind & LINE:
                w.line_break = True
            elif named == IMG:
                # An image stands between the words on either side (its alt text, a block of its own, too).
                w.space = True
                alt = _value(attrs.alt_) if attrs.any else None
                if alt:
                    alt = _normalised(alt)
                    if len(alt) >= alt_min and w.n_rows < max_blocks:
                        w.emit(alt, "img-alt")
                        w.space = True
            # (the drawn copy of a formula read from its source shows as an empty element)
            child = node.first_child if not rendered_copy else NULL
            if child != NULL:
                node = child
                continue
            tag = <str> w.top().tag  # an empty element: opened and closed at once
            w.pop()
            _tally(&w.closed, tag)
        else:  # a dropped element
            # a formula (MathML, MathJax's TeX source) is read as TeX, a block of its own in its place in the line
            named = kind & ~(NAMED - 1)
            formula = None
            script_type = None
            if named == MATH:
                if by_address is None:
                    by_address = _nodes_by_address(tree)
                formula = math_block(by_address[<uintptr_t> node])
            elif named == SCRIPT:
                attrs.read(node)
                script_type = _value(attrs.kind_)
                if attrs.any and is_tex_script((script_type or "").lower()):
                    formula = tex_script_block(script_type.lower(), _deep_text(node))
            if formula is not None and w.n_rows < max_blocks:
                text, display = formula
                if display:
                    w.line_break = True
                w.emit(text, "math")
                if display:
                    w.line_break = True
            elif not kind & NOT_DISPLAYED:
                # a box (a button, an iframe, an svg icon) between its neighbours' words
                w.space = w.space or BOX_ONLY
            if named == SCRIPT and attrs.any and is_json_ld(script_type):
                marks.json_ld.append(_deep_text(node))
        # Climb until a next sibling exists, closing elements on the way.
        while node != NULL:
            if node == root:
                node = NULL
                break
            if node.next != NULL:
                node = node.next
                break
            node = node.parent
            if node == NULL:
                break
            closing = w.top()
            tag = <str> closing.tag
            kind = closing.kind
            w.pop()
            _tally(&w.closed, tag)
            if kind & LINE:
                w.line_break = True
            if node == root:
                node = NULL
    truncated = (w.n_rows >= max_blocks or n_nodes >= max_nodes) and node != NULL
    group_size = groups.sizes()
    groups.release()
    merges.release()
    table = w.finish()
    mark_repeats(table, element_parent, element_group, group_size, repeat_min)
    marks.element_parent = element_parent
    marks.element_group = element_group
    marks.group_size = group_size
    return Segmentation(table, n_nodes, truncated, max_depth - 1, capped, title, marks, markup_capped)


def main_subtree(list words, list element_parent, double share):
    """cleaner.page.cues.main_subtree(words, element_parent, share), its readable reference, over C arrays: per
    element whether it lies in the page's main container, or None. `element_parent` is the walk's: every element's
    parent comes before it."""
    cdef Py_ssize_t n = len(element_parent), e, p, top
    cdef Py_ssize_t *total = <Py_ssize_t *> malloc(3 * max(n, 1) * sizeof(Py_ssize_t))
    cdef Py_ssize_t *parent = total + n
    cdef Py_ssize_t *best = total + 2 * n
    cdef double need
    cdef list inside
    if total == NULL:
        raise MemoryError()
    try:
        if len(words) != n:
            raise ValueError("main_subtree: one word count per element")
        for e in range(n):
            total[e] = words[e]
            parent[e] = element_parent[e]
            best[e] = -1
            if e and not 0 <= parent[e] < e:
                raise ValueError("main_subtree: an element's parent comes before it")
        for e in range(n - 1, 0, -1):
            p = parent[e]
            total[p] += total[e]
            if best[p] < 0 or total[e] >= total[best[p]]:
                best[p] = e
        if n == 0 or total[0] <= 0:
            return None
        need = share * total[0]
        top = 0
        while best[top] >= 0 and total[best[top]] >= need:
            top = best[top]
        inside = [False] * n
        inside[top] = True
        best[top] = 1  # (best is reused: 1 inside, 0 not)
        for e in range(top + 1, n):
            best[e] = best[parent[e]] if parent[e] >= top else 0
            if best[e] == 1:
                inside[e] = True
        return inside
    finally:
        free(total)


def heaviest_subtree(list words, list element_parent, list element_group, list group_size, Py_ssize_t repeat_min):
    """cleaner.page.cues.heaviest_subtree(words, element_parent, element_group, group_size, repeat_min), its readable
    reference, over C arrays: per element whether it lies inside an item of the page's heaviest repeated group, or
    None. `element_parent` is the walk's: every element's parent comes before it."""
    cdef Py_ssize_t n = len(element_parent), n_groups = len(group_size), e, g, heaviest = -1, most = 0
    cdef Py_ssize_t *total = <Py_ssize_t *> malloc((3 * max(n, 1) + max(n_groups, 1)) * sizeof(Py_ssize_t))
    cdef Py_ssize_t *parent = total + n
    cdef Py_ssize_t *group = total + 2 * n
    cdef Py_ssize_t *group_words = total + 3 * n
    cdef list inside
    if total == NULL:
        raise MemoryError()
    try:
        if len(words) != n or len(element_group) != n:
            raise ValueError("heaviest_subtree: one word count and one group per element")
        for e in range(n):
            total[e] = words[e]
            parent[e] = element_parent[e]
            group[e] = element_group[e]
            if e and not 0 <= parent[e] < e:
                raise ValueError("heaviest_subtree: an element's parent comes before it")
            if group[e] >= n_groups:
                raise ValueError("heaviest_subtree: an element's group is not one of group_size's")
        for g in range(n_groups):
            group_words[g] = 0
        for e in range(n - 1, 0, -1):
            total[parent[e]] += total[e]
            if group[e] >= 0:
                group_words[group[e]] += total[e]
        for g in range(n_groups):
            if group_size[g] >= repeat_min and group_words[g] > most:
                heaviest, most = g, group_words[g]
        if heaviest < 0:
            return None
        inside = [False] * n
        total[0] = 0  # (total is reused: 1 inside, 0 not)
        for e in range(1, n):
            total[e] = 1 if total[parent[e]] == 1 or group[e] == heaviest else 0
            if total[e] == 1:
                inside[e] = True
        return inside
    finally:
        free(total)


cdef dict _nodes_by_address(tree):
    """Every element of the page as a selectolax node, by its address."""
    root = tree.root
    out = {}
    if root is not None:
        out[root.mem_id] = root
        for node in root.traverse():
            out[node.mem_id] = node
    return out


def _check_layout():
    """Read a probe page both ways -- through the structs above, and through Lexbor's accessor functions and
    selectolax's nodes -- and refuse to load (ImportError) when they disagree: a selectolax whose Lexbor lays
    its nodes out otherwise than the structs above, or that does not export the functions read here."""
    try:
        lib = _load_functions()
    except (AttributeError, OSError) as exc:
        raise ImportError(f"selectolax {selectolax.__version__}: Lexbor's functions not found in its extension "
                          f"({exc}); the segmenter's reference walk runs instead") from exc
    tag_id = ctypes.CFUNCTYPE(ctypes.c_size_t, ctypes.c_void_p)(_function(lib, "lxb_dom_node_tag_id_noi"))
    type_of = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p)(_function(lib, "lxb_dom_node_type_noi"))
    pointer = {name: ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p)(_function(lib, f"lxb_dom_node_{name}_noi"))
               for name in ("next", "parent", "first_child")}
    probe = LexborHTMLParser('<!doctype html><html><head><title>t</title></head><body><div id="a" class="b c" '
                             'hidden><p>Hello <b>wörld</b>!</p><!-- c --><img alt="x"><svg><clipPath/></svg>'
                             '<x-card data-x>\u00a0</x-card></div></body></html>')
    cdef lxb_dom_node_t *node
    for py_node in probe.root.traverse(include_text=True):
        node = _node(py_node)
        address = <uintptr_t> node
        same = (node.type == type_of(address) and node.local_name == tag_id(address)
                and <uintptr_t> node.next == (pointer["next"](address) or 0)
                and <uintptr_t> node.parent == (pointer["parent"](address) or 0)
                and <uintptr_t> node.first_child == (pointer["first_child"](address) or 0))
        if same and node.type == TEXT_NODE:
            same = _text_of(node) == py_node.text_content
        elif same and node.type == ELEMENT_NODE:
            same = _element_tag(node) == py_node.tag and _attributes(node) == py_node.attributes
        if not same:
            raise ImportError(f"selectolax {selectolax.__version__}: its Lexbor's node layout is not the one "
                              "cleaner/page/compiled_walk.pyx reads (the segmenter's reference walk runs instead)")


_check_layout()
