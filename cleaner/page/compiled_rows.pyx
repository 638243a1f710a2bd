# cython: language_level=3, boundscheck=False, wraparound=False
"""A model's attribute rows written as C integers: `RowPass.run` is the loop of
cleaner.page.features.FeatureExtractor.parts_reference (with `_block_own`), its readable reference, for a naming with
a codec and a window (cleaner.label.crf.window_rows: what the model, training and evaluation score).

The reference builds two Python lists a block (its `shared` and `private` attributes), extends them from the
caches' lists, and cleaner.label.crf.WindowRows then flattens them into the intp arrays the CRF reads: a list made,
grown, read and freed per block and part, 2.6 M of a 2025 page's 49.7 M instructions (docs/speed.md, stop 70). Here
the ids go from the caches' lists straight into two growing C buffers, one per part, with each block's start, and
leave as NumPy arrays: the same ids in the same order (a block's scores are summed in the order the reference gives them, so
they are equal to the last bit). What a cache does not hold yet is named by the reference's own methods
(FeatureExtractor.container_names, text_names, _split_kind) and token caches (the PrefixCache and CueCache its
idclass_names reads), so the two share their caches and cannot name anything apart; tests/test_compiled_rows.py holds
their rows equal on the shared pages.

The blocks' fields come as columns (features.block_columns, compiled by mypyc, reads a Block's fields as C struct
members; from here each would be a generic attribute lookup).
"""

from cpython.dict cimport PyDict_GetItem, PyDict_Next
from cpython.list cimport PyList_GET_ITEM, PyList_GET_SIZE
from cpython.long cimport PyLong_AsSsize_t
from cpython.object cimport PyObject
from cpython.tuple cimport PyTuple_GET_ITEM, PyTuple_GET_SIZE
from libc.stdint cimport uint64_t, uintptr_t
from libc.stdlib cimport calloc, free, malloc, realloc
from libc.string cimport memcpy

cdef extern from "Python.h":
    bint PyUnicode_IS_ASCII(object text)
    Py_ssize_t PyUnicode_GET_LENGTH(object text)
    int PyUnicode_KIND(object text)
    void *PyUnicode_DATA(object text)
    unsigned int PyUnicode_READ(int kind, void *data, Py_ssize_t index) nogil  # (a Py_UCS4, read as a number)

import numpy as np

# What a tag adds to the split family's counts (cleaner.page.features.SPLIT_*: the same bits).
cdef enum:
    SPLIT_P = 1
    SPLIT_BR = 2
    SPLIT_HR = 4
    SPLIT_INLINE = 8
    SPLIT_BLOCK = 16


cdef struct IdBuffer:
    Py_ssize_t *data
    Py_ssize_t n
    Py_ssize_t cap


cdef int _reserve(IdBuffer *buf, Py_ssize_t more) except -1:
    cdef Py_ssize_t cap
    cdef Py_ssize_t *grown
    if buf.n + more <= buf.cap:
        return 0
    cap = max(2 * buf.cap, buf.n + more, 1024)
    grown = <Py_ssize_t *> realloc(buf.data, cap * sizeof(Py_ssize_t))
    if grown == NULL:
        raise MemoryError()
    buf.data, buf.cap = grown, cap
    return 0


cdef inline int _push(IdBuffer *buf, Py_ssize_t value) except -1:
    if buf.n == buf.cap:
        _reserve(buf, 1)
    buf.data[buf.n] = value
    buf.n += 1
    return 0


cdef int _extend(IdBuffer *buf, list ids) except -1:
    # (an id is a Python int: anything else is a TypeError here, never a misnamed attribute)
    cdef Py_ssize_t k, n = PyList_GET_SIZE(ids)
    _reserve(buf, n)
    for k in range(n):
        buf.data[buf.n + k] = PyLong_AsSsize_t(<object> PyList_GET_ITEM(ids, k))
    buf.n += n
    return 0


cdef object _array(IdBuffer *buf):
    out = np.empty(buf.n, np.intp)
    cdef Py_ssize_t[::1] view = out
    if buf.n:
        memcpy(&view[0], buf.data, buf.n * sizeof(Py_ssize_t))
    return out


cdef class _IdBins:
    """A BinTable's ids (cleaner.page.feature_names.BinTable), as a C array: `at(i)` is `table[i]`."""

    cdef Py_ssize_t *ids
    cdef Py_ssize_t cap

    def __cinit__(self, table):
        labels = table.labels
        self.cap = table.cap
        self.ids = <Py_ssize_t *> malloc((self.cap + 1) * sizeof(Py_ssize_t))
        if self.ids == NULL:
            raise MemoryError()
        for i in range(self.cap + 1):
            self.ids[i] = PyLong_AsSsize_t(labels[i])

    def __dealloc__(self):
        free(self.ids)

    cdef inline Py_ssize_t at(self, Py_ssize_t i) except? -1:
        if i > self.cap:
            i = self.cap
        elif i < 0:
            raise KeyError(i)  # (as BinTable: a negative input is a bug upstream, not a bin)
        return self.ids[i]


cdef class _PageCues:
    """A page's cleaner.page.cues.PageCueContext read once into C fields (each a generic attribute lookup from here)."""

    cdef Py_ssize_t kind, url, heaviest_url, heaviest_at, repeat_at, repeat_links, heaviest_id, heaviest_outside, code
    cdef bint has_url, has_heaviest_url
    cdef list relations, heaviest, main
    cdef dict in_code  # ancestors -> inside a code tag (block_cues')
    cdef double links_min
    cdef frozenset code_tags

    def __cinit__(self, c):
        names = c.names
        self.kind = c.kind
        self.has_url, self.has_heaviest_url = c.url is not None, c.heaviest_url is not None
        self.url = c.url if self.has_url else 0
        self.heaviest_url = c.heaviest_url if self.has_heaviest_url else 0
        self.heaviest_at, self.repeat_at = c.heaviest_at, c.repeat_at
        self.repeat_links, self.heaviest_id = names.repeat_links, names.heaviest
        self.heaviest_outside, self.code = names.heaviest_outside, names.code
        self.relations, self.heaviest, self.main = c.relations, c.heaviest, names.main
        self.in_code = {}
        self.links_min, self.code_tags = c.links_min, c.code_tags


cdef uint64_t _fold_sig(str folded, bint ascii_text) noexcept:
    """FNV-1a over the code points of a text's case fold, mixed with its length: `folded` is the fold itself, or
    (`ascii_text`) an ASCII text, whose fold is its lower case, read lowered here without being made."""
    cdef Py_ssize_t n = PyUnicode_GET_LENGTH(folded), i
    cdef uint64_t h = 14695981039346656037ULL
    cdef const unsigned char *p
    cdef void *data = PyUnicode_DATA(folded)
    cdef int kind = PyUnicode_KIND(folded)
    cdef uint64_t c  # (not Py_UCS4, which Cython treats as a one-character str)
    if ascii_text:
        p = <const unsigned char *> data
        for i in range(n):
            c = p[i]
            if 65 <= c <= 90:
                c += 32
            h = (h ^ c) * 1099511628211ULL
    else:
        for i in range(n):
            h = (h ^ PyUnicode_READ(kind, data, i)) * 1099511628211ULL
    return h ^ (<uint64_t> n * 0x9E3779B97F4A7C15ULL)


cdef list _dup_keys(list texts):
    """Per text its case fold (the `dup` family's key, as the reference's `text.casefold()`), or None where no other
    text of the page folds to the same. Texts that fold alike have one signature (_fold_sig); a text whose
    signature no other text has is never folded into a new string nor hashed by the dict -- most of a page's texts,
    and the long ones above all (folding and hashing every text: ~0.7 M instructions a page of 2025). An ASCII
    text's fold is its lower case. Texts sharing a signature get their folds, so a collision of signatures only
    costs their folds: the counts are the reference's. The signatures are counted in an open-addressing table
    (sorting them with qsort cost more than the folds it spared)."""
    cdef Py_ssize_t n = PyList_GET_SIZE(texts), i, size = 4, slot
    cdef list keys = [None] * n
    cdef uint64_t sig
    cdef uint64_t *table_sigs
    cdef Py_ssize_t *table_counts
    cdef Py_ssize_t *slots  # each text's slot in the table
    if n == 0:
        return keys
    while size < 2 * n:
        size *= 2
    slots = <Py_ssize_t *> malloc(n * sizeof(Py_ssize_t))
    table_sigs = <uint64_t *> malloc(size * sizeof(uint64_t))
    table_counts = <Py_ssize_t *> calloc(size, sizeof(Py_ssize_t))  # 0: an empty slot
    try:
        if slots == NULL or table_sigs == NULL or table_counts == NULL:
            raise MemoryError()
        for i in range(n):
            text = <str> PyList_GET_ITEM(texts, i)
            if PyUnicode_IS_ASCII(text):
                sig = _fold_sig(text, True)
            else:
                key = text.casefold()
                keys[i] = key
                sig = _fold_sig(key, False)
            slot = <Py_ssize_t> (sig & <uint64_t> (size - 1))
            while table_counts[slot] and table_sigs[slot] != sig:
                slot = (slot + 1) & (size - 1)
            table_sigs[slot] = sig
            table_counts[slot] += 1
            slots[i] = slot
        for i in range(n):
            if table_counts[slots[i]] == 1:
                keys[i] = None
            elif keys[i] is None:
                keys[i] = (<str> PyList_GET_ITEM(texts, i)).lower()
    finally:
        free(slots)
        free(table_sigs)
        free(table_counts)
    return keys


cdef inline object _named(dict names, object cache, object key):
    """`cache[key]`, read from the cache's own dict `names` when it holds the key: a PrefixCache's or a CueCache's
    (their subscript names a key they do not hold yet, and keeps it)."""
    cdef PyObject *found = PyDict_GetItem(names, key)
    return <object> found if found != NULL else cache[key]


cdef class RowPass:
    """FeatureExtractor.parts_reference for one naming (an AttributeNames with a codec and a window), compiled."""

    cdef object names
    # the reference's namings of what a cache does not hold yet, bound once (no method looked up a call)
    cdef object container_names, text_names, split_kind
    # the id/class tokens' namings: the PrefixCache of the `idclass` attributes and the CueCache of the `cue.idclass`
    # ones, with their own dicts (a token either holds is looked up there; the cache names a new one, and keeps it)
    cdef object idclass_prefix, idclass_cue_cache
    cdef dict idclass_ids, idclass_cues
    cdef bint idclass_on, cue_on
    cdef Py_ssize_t max_idclass
    cdef bint container_on, split_on, tag_on, density_on, dup_on, group_on, position_on, document_on
    cdef bint container_shared, split_shared, tag_shared, density_shared, idclass_shared, cue_shared
    cdef bint dup_shared, group_shared, position_shared
    cdef dict container_cache, text_cache, idclass_cache, split_kinds
    cdef dict tag_self, tag_parent, tag_artificial  # the PrefixCaches' own dicts (named on a miss by the cache)
    cdef object tag_self_cache, tag_parent_cache, tag_artificial_cache
    cdef Py_ssize_t bias, in_link, dup_first, div_none, td_none
    cdef list t_split  # of _IdBins: p, br, hr, inline, block
    cdef _IdBins t_dup, t_div, t_td, t_link, t_pos, t_words, t_sentences, t_blocks, t_max_div, t_max_td
    cdef _IdBins cue_repeat

    def __init__(self, extractor, names):
        """`extractor`: the FeatureExtractor (its switches, caches and naming methods); `names`: its AttributeNames of
        a codec and a window (the ids its rows carry)."""
        on, windowed = extractor.on, extractor.windowed
        self.names = names
        self.container_names, self.text_names = extractor.container_names, extractor.text_names
        self.split_kind = extractor._split_kind
        self.idclass_on, self.cue_on, self.max_idclass = on.idclass, on.cue, extractor.max_idclass
        self.idclass_prefix, self.idclass_ids = names.idclass, names.idclass.names
        self.idclass_cue_cache, self.idclass_cues = names.cues.idclass, names.cues.idclass.found
        self.container_on, self.container_shared = on.container, windowed.container
        self.split_on, self.split_shared = on.split, windowed.split
        self.tag_on, self.tag_shared = on.tag, windowed.tag
        self.density_on, self.density_shared = on.density, windowed.density
        self.idclass_shared = windowed.idclass
        self.cue_shared = windowed.cue
        self.dup_on, self.dup_shared = on.dup, windowed.dup
        self.group_on, self.group_shared = on.group, windowed.group
        self.position_on, self.position_shared = on.position, windowed.position
        self.document_on = on.document
        self.container_cache, self.text_cache = names.container_cache, names.text_cache
        self.idclass_cache, self.split_kinds = names.idclass_cache, extractor.split_kinds
        self.tag_self_cache, self.tag_parent_cache = names.tag_self, names.tag_parent
        self.tag_artificial_cache = names.tag_artificial
        self.tag_self, self.tag_parent = names.tag_self.names, names.tag_parent.names
        self.tag_artificial = names.tag_artificial.names
        self.bias, self.in_link, self.dup_first = names.bias, names.in_link, names.dup_first
        self.div_none, self.td_none = names.div_none, names.td_none
        self.t_split = [_IdBins(t) for t in names.t_split]
        self.t_dup, self.t_div, self.t_td = _IdBins(names.t_dup), _IdBins(names.t_div), _IdBins(names.t_td)
        self.t_link, self.t_pos = _IdBins(names.t_link), _IdBins(names.t_pos)
        self.t_words, self.t_sentences, self.t_blocks = [_IdBins(t) for t in names.t_doc]
        self.t_max_div, self.t_max_td = [_IdBins(t) for t in names.t_doc_rel]
        self.cue_repeat = _IdBins(names.cues.repeat)

    cdef inline Py_ssize_t _tag_id(self, dict names, object cache, str tag) except? -1:
        return PyLong_AsSsize_t(_named(names, cache, tag))

    cdef tuple _idclass_named(self, tuple tokens):
        """FeatureExtractor.idclass_names(names, tokens) (the reference) without its cache by the tuple: each token is
        named through the token caches the reference's namings keep (PrefixCache, CueCache). The tuples recur across
        pages less than their tokens do, and naming one took Python's calls, a tuple concatenated a token and a dict
        to drop repeated cues (docs/speed.md, stop 74)."""
        cdef Py_ssize_t n = min(PyTuple_GET_SIZE(tokens), self.max_idclass), k, j
        cdef list ids = [], cues = []
        cdef tuple token_cues
        if self.idclass_on:
            for k in range(n):
                ids.append(_named(self.idclass_ids, self.idclass_prefix, <object> PyTuple_GET_ITEM(tokens, k)))
        if self.cue_on:
            for k in range(n):
                token_cues = <tuple> _named(self.idclass_cues, self.idclass_cue_cache,
                                            <object> PyTuple_GET_ITEM(tokens, k))
                for j in range(PyTuple_GET_SIZE(token_cues)):
                    name = <object> PyTuple_GET_ITEM(token_cues, j)
                    if name not in cues:  # (each once, in the order first found: the reference's dict.fromkeys)
                        cues.append(name)
        return (ids, cues)

    cdef int _split(self, IdBuffer *out, dict opened, dict closed) except -1:
        cdef Py_ssize_t p = 0, br = 0, hr = 0, inline_ = 0, block = 0, count, pos
        cdef int kind, k
        cdef PyObject *tag
        cdef PyObject *value
        cdef PyObject *found
        cdef dict counts = opened
        for k in range(2):  # the opened tags, then the closed
            pos = 0
            while PyDict_Next(counts, &pos, &tag, &value):
                found = PyDict_GetItem(self.split_kinds, <object> tag)
                if found != NULL:
                    kind = <int> PyLong_AsSsize_t(<object> found)
                else:
                    kind = self.split_kind(<object> tag)
                if not kind:
                    continue
                count = PyLong_AsSsize_t(<object> value)
                if kind & SPLIT_P:
                    p += count
                elif kind & SPLIT_BR:
                    br += count
                elif kind & SPLIT_HR:
                    hr += count
                if kind & SPLIT_INLINE:
                    inline_ += count
                elif kind & SPLIT_BLOCK:
                    block += count
            counts = closed
        # zero counts are left out (the reference says why)
        if p:
            _push(out, (<_IdBins> self.t_split[0]).at(p))
        if br:
            _push(out, (<_IdBins> self.t_split[1]).at(br))
        if hr:
            _push(out, (<_IdBins> self.t_split[2]).at(hr))
        if inline_:
            _push(out, (<_IdBins> self.t_split[3]).at(inline_))
        if block:
            _push(out, (<_IdBins> self.t_split[4]).at(block))
        return 0

    cdef int _cues(self, IdBuffer *out, _PageCues c, Py_ssize_t i, Py_ssize_t repeat, Py_ssize_t item,
                   const Py_ssize_t *item_words, const Py_ssize_t *item_links, object anc) except -1:
        """Block i's `cue` attributes that need the page (cleaner.page.cues.block_cues, its reference), from what
        page_cue_context read of it (`c`)."""
        cdef PyObject *found
        cdef Py_ssize_t words, relation = -1
        _push(out, c.kind)
        if c.has_url:
            _push(out, c.url)
        if c.relations is not None:
            relation = PyLong_AsSsize_t(<object> PyList_GET_ITEM(c.relations, i))
            _push(out, PyLong_AsSsize_t(c.main[relation]))
        if repeat:
            _push(out, self.cue_repeat.at(repeat))
            _push(out, c.repeat_at)
            if item < 0:
                raise KeyError(item)  # (as the reference: a repeated block outside any item is a bug upstream)
            words = item_words[item]
            if words and <double> item_links[item] >= c.links_min * <double> words:
                _push(out, c.repeat_links)
        if c.heaviest is not None and <object> PyList_GET_ITEM(c.heaviest, i):
            _push(out, c.heaviest_id)
            _push(out, c.heaviest_at)
            if c.has_heaviest_url:
                _push(out, c.heaviest_url)
            if c.relations is not None and relation != 1:
                _push(out, c.heaviest_outside)
        found = PyDict_GetItem(c.in_code, anc)
        if found != NULL:
            code = <object> found
        else:
            code = c.in_code[anc] = not c.code_tags.isdisjoint(anc)
        if code:
            _push(out, c.code)
        return 0

    def run(self, tuple columns, object cues):
        """(shared ids, their rows' starts, whether a shared row is empty, private ids, their rows' starts) of the
        blocks whose `columns` (features.block_columns) are given, with what the `cue` family read of
        the page (cleaner.page.cues.page_cue_context; None without the family): AttributeParts.flat."""
        cdef list texts = columns[0], ancestors = columns[1], opened = columns[2], closed = columns[3]
        cdef list containers = columns[4], artificial = columns[5], in_link = columns[6], idclass = columns[7]
        cdef list div_group = columns[8], td_group = columns[9], words = columns[10], link_words = columns[11]
        cdef list repeat = columns[12], repeat_item = columns[13], chars = columns[14]
        cdef _PageCues page_cues = _PageCues(cues) if cues is not None else None
        cdef Py_ssize_t n = len(texts), i, g, c, n_sent = 0, doc_words = 0, free_words = 0, free_w, w, lw
        cdef Py_ssize_t max_group = -1, max_div = 0, max_td = 0, start, k, max_item = -1, item
        cdef Py_ssize_t *div_free = NULL
        cdef Py_ssize_t *div_words = NULL
        cdef Py_ssize_t *div_links = NULL
        cdef Py_ssize_t *td_free = NULL
        cdef Py_ssize_t *item_words = NULL  # per repeated item, the words of its blocks (block_cues')
        cdef Py_ssize_t *item_links = NULL  # and their words in links
        cdef IdBuffer shared, private
        cdef IdBuffer *out
        cdef PyObject *found
        cdef tuple cont, tokens, named, fields
        cdef str text
        cdef list keys
        cdef dict seen = {}, page_named = {}
        cdef set first_seen = set()
        cdef Py_ssize_t[::1] shared_starts_view, private_starts_view
        cdef bint shared_empty = False
        shared.data, shared.n, shared.cap = NULL, 0, 0
        private.data, private.n, private.cap = NULL, 0, 0
        shared_starts = np.empty(n, np.intp)
        private_starts_array = np.empty(n, np.intp)
        shared_starts_view, private_starts_view = shared_starts, private_starts_array
        try:
            # Document-level aggregates: per div group (-1 is a group of its own, the blocks outside any div, whose
            # link density the `density` family reads) its words outside links, all its words and its words in
            # links; per td group its words outside links. Groups are numbered by the walk, from 0.
            for i in range(2 * n):
                g = PyLong_AsSsize_t(<object> PyList_GET_ITEM(div_group if i < n else td_group, i % n))
                if g > max_group:
                    max_group = g
                elif g < -1:
                    raise ValueError(f"a block's group is {g}: groups are numbered from 0, -1 for none")
            div_free = <Py_ssize_t *> calloc(max_group + 2, sizeof(Py_ssize_t))
            div_words = <Py_ssize_t *> calloc(max_group + 2, sizeof(Py_ssize_t))
            div_links = <Py_ssize_t *> calloc(max_group + 2, sizeof(Py_ssize_t))
            td_free = <Py_ssize_t *> calloc(max_group + 2, sizeof(Py_ssize_t))
            if div_free == NULL or div_words == NULL or div_links == NULL or td_free == NULL:
                raise MemoryError()
            for i in range(n):
                w = PyLong_AsSsize_t(<object> PyList_GET_ITEM(words, i))
                lw = PyLong_AsSsize_t(<object> PyList_GET_ITEM(link_words, i))
                free_w = w - lw
                doc_words += w
                free_words += free_w
                g = PyLong_AsSsize_t(<object> PyList_GET_ITEM(div_group, i)) + 1
                div_free[g] += free_w
                div_words[g] += w
                div_links[g] += lw
                g = PyLong_AsSsize_t(<object> PyList_GET_ITEM(td_group, i)) + 1
                td_free[g] += free_w
            if free_words == 0:
                free_words = 1
            if page_cues is not None:
                for i in range(n):
                    item = PyLong_AsSsize_t(<object> PyList_GET_ITEM(repeat_item, i))
                    if item > max_item:
                        max_item = item
                item_words = <Py_ssize_t *> calloc(max_item + 1, sizeof(Py_ssize_t))
                item_links = <Py_ssize_t *> calloc(max_item + 1, sizeof(Py_ssize_t))
                if item_words == NULL or item_links == NULL:
                    raise MemoryError()
                for i in range(n):
                    item = PyLong_AsSsize_t(<object> PyList_GET_ITEM(repeat_item, i))
                    if item >= 0:
                        item_words[item] += PyLong_AsSsize_t(<object> PyList_GET_ITEM(words, i))
                        item_links[item] += PyLong_AsSsize_t(<object> PyList_GET_ITEM(link_words, i))
            # The `dup` family's counts of each text, case-folded (None: a text whose fold no other text has).
            keys = _dup_keys(texts) if self.dup_on else None
            if self.dup_on:
                for key in keys:
                    if key is not None:
                        seen[key] = seen.get(key, 0) + 1
            # (page_named: the address of a block's id/class tokens -> their attributes, as the reference's)
            for i in range(n):
                shared_starts_view[i] = shared.n
                private_starts_view[i] = private.n
                _push(&private, self.bias)
                # -- the block's own (the reference's _block_own) --
                if self.container_on:
                    out = &shared if self.container_shared else &private
                    anc = <object> PyList_GET_ITEM(ancestors, i)
                    found = PyDict_GetItem(self.container_cache, anc)
                    _extend(out, <list> found if found != NULL else self.container_names(self.names, anc))
                if self.split_on:
                    self._split(&shared if self.split_shared else &private,
                                <dict> PyList_GET_ITEM(opened, i), <dict> PyList_GET_ITEM(closed, i))
                text = <str> PyList_GET_ITEM(texts, i)
                found = PyDict_GetItem(self.text_cache, text)
                fields = (<object> found if found != NULL
                          else self.text_names(self.names, text, <object> PyList_GET_ITEM(words, i),
                                               <object> PyList_GET_ITEM(chars, i)))
                _extend(&shared, <list> PyTuple_GET_ITEM(fields, 0))
                _extend(&private, <list> PyTuple_GET_ITEM(fields, 1))
                n_sent += PyLong_AsSsize_t(<object> PyTuple_GET_ITEM(fields, 2))
                if self.tag_on:
                    out = &shared if self.tag_shared else &private
                    cont = <tuple> PyList_GET_ITEM(containers, i)
                    k = PyTuple_GET_SIZE(cont)
                    _push(out, self._tag_id(self.tag_self, self.tag_self_cache,
                                            <str> PyTuple_GET_ITEM(cont, k - 1) if k else "-"))
                    _push(out, self._tag_id(self.tag_parent, self.tag_parent_cache,
                                            <str> PyTuple_GET_ITEM(cont, k - 2) if k > 1 else "-"))
                    art = <object> PyList_GET_ITEM(artificial, i)
                    if art:
                        _push(out, self._tag_id(self.tag_artificial, self.tag_artificial_cache, <str> art))
                if self.density_on and <object> PyList_GET_ITEM(in_link, i):
                    _push(&shared if self.density_shared else &private, self.in_link)
                tokens = <tuple> PyList_GET_ITEM(idclass, i)
                if PyTuple_GET_SIZE(tokens) and (self.idclass_on or self.cue_on):
                    key = <uintptr_t> <void *> tokens
                    found = PyDict_GetItem(page_named, key)
                    if found != NULL:
                        named = <tuple> found
                    else:
                        named = page_named[key] = self._idclass_named(tokens)
                    if PyList_GET_SIZE(<list> PyTuple_GET_ITEM(named, 0)):
                        _extend(&shared if self.idclass_shared else &private, <list> PyTuple_GET_ITEM(named, 0))
                    if PyList_GET_SIZE(<list> PyTuple_GET_ITEM(named, 1)):
                        _extend(&shared if self.cue_shared else &private, <list> PyTuple_GET_ITEM(named, 1))
                # -- what the page gives it (the reference's loop) --
                if self.dup_on:
                    out = &shared if self.dup_shared else &private
                    key = <object> PyList_GET_ITEM(keys, i)
                    c = 1 if key is None else PyLong_AsSsize_t(seen[key])
                    if c > 1:
                        _push(out, self.t_dup.at(c))
                        if key not in first_seen:
                            _push(out, self.dup_first)
                        first_seen.add(key)  # (a text seen once is never asked again: not added)
                if self.group_on:
                    out = &shared if self.group_shared else &private
                    g = PyLong_AsSsize_t(<object> PyList_GET_ITEM(div_group, i))
                    _push(out, self.t_div.at(div_free[g + 1] * 1000 // free_words) if g >= 0 else self.div_none)
                    g = PyLong_AsSsize_t(<object> PyList_GET_ITEM(td_group, i))
                    _push(out, self.t_td.at(td_free[g + 1] * 1000 // free_words) if g >= 0 else self.td_none)
                if self.density_on:
                    g = PyLong_AsSsize_t(<object> PyList_GET_ITEM(div_group, i)) + 1
                    w = div_words[g]
                    _push(&shared if self.density_shared else &private,
                          self.t_link.at(div_links[g] * 1000 // (w if w else 1)))
                if self.position_on:
                    _push(&shared if self.position_shared else &private, self.t_pos.at(i * 1000 // n))
                if page_cues is not None:
                    self._cues(&shared if self.cue_shared else &private, page_cues, i,
                               PyLong_AsSsize_t(<object> PyList_GET_ITEM(repeat, i)),
                               PyLong_AsSsize_t(<object> PyList_GET_ITEM(repeat_item, i)), item_words, item_links,
                               <object> PyList_GET_ITEM(ancestors, i))
                if self.document_on:
                    _reserve(&private, 5)
                    private.n += 5  # (written below, once the blocks have counted the page's sentence ends)
                if not shared_empty and shared.n == shared_starts_view[i]:
                    shared_empty = True
            if self.document_on and n:
                # Last in every private row: the page's sizes (the reference's document family).
                for g in range(max_group + 1):
                    if div_free[g + 1] > max_div:
                        max_div = div_free[g + 1]
                    if td_free[g + 1] > max_td:
                        max_td = td_free[g + 1]
                for i in range(n):
                    start = (private_starts_view[i + 1] if i + 1 < n else private.n) - 5
                    private.data[start] = self.t_words.at(doc_words)
                    private.data[start + 1] = self.t_sentences.at(n_sent)
                    private.data[start + 2] = self.t_blocks.at(n)
                    private.data[start + 3] = self.t_max_div.at(max_div * 1000 // free_words)
                    private.data[start + 4] = self.t_max_td.at(max_td * 1000 // free_words)
            return (_array(&shared), shared_starts, shared_empty, _array(&private), private_starts_array)
        finally:
            free(shared.data)
            free(private.data)
            free(div_free)
            free(div_words)
            free(div_links)
            free(td_free)
            free(item_words)
            free(item_links)
