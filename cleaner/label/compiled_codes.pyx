# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Attribute codes, compiled: `attribute_code(attribute)` is `cleaner.label.crf.encode_attribute_reference`, its
readable reference (hashlib's BLAKE2b with a 6-byte digest, as 12 hex digits), which names every attribute a model
file stores; `code_ids` names an attribute and its copies under each convention at once (cleaner.label.crf.ConjoinedIds).

A page of a site not seen before brings about 390 attribute names no cache holds (its id/class tokens, each as the
block's own and under each convention), and each is hashed to be looked up in the model. Through hashlib a name cost
about 5,000 instructions (the hash object, its keyword arguments, the hex digest and its encoding around one
compression). Here a name of at most 128 bytes (every name a page brings: a longer one goes to hashlib) is one
compression over a block on the stack (RFC 7693, BLAKE2b with the parameter block of an unkeyed 6-byte digest),
written out as hex in place: 3,400, most of it the compression (about 2,700 since the block's words are its bytes
copied, on a little-endian machine, not assembled byte by byte: docs/speed.md, stop 55).
tests/test_compiled_codes.py compares the two on names of every length up to 300 bytes, non-ASCII and lone
surrogates (`surrogatepass`) included.
"""

from libc.stdint cimport uint8_t, uint64_t
from libc.string cimport memcpy, memset
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from cpython.dict cimport PyDict_GetItem
from cpython.object cimport PyObject

import hashlib

cdef extern from "Python.h":
    bint PyUnicode_IS_ASCII(object)
    const unsigned char *PyUnicode_1BYTE_DATA(object)
    Py_ssize_t PyUnicode_GET_LENGTH(object)

cdef extern from *:
    """
    #if defined(__BYTE_ORDER__) && defined(__ORDER_LITTLE_ENDIAN__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    #define WEBCLEANER_LITTLE_ENDIAN 1
    #else
    #define WEBCLEANER_LITTLE_ENDIAN 0
    #endif
    """
    const int LITTLE_ENDIAN "WEBCLEANER_LITTLE_ENDIAN"  # (the compiler's word: BLAKE2b reads its words little endian)

# BLAKE2b's initial chaining value (SHA-512's) and message schedule (RFC 7693, sections 2.6 and 2.7).
cdef uint64_t IV[8]
IV[:] = [0x6a09e667f3bcc908, 0xbb67ae8584caa73b, 0x3c6ef372fe94f82b, 0xa54ff53a5f1d36f1,
         0x510e527fade682d1, 0x9b05688c2b3e6c1f, 0x1f83d9abfb41bd6b, 0x5be0cd19137e2179]
cdef uint8_t SIGMA[12][16]
_sigma = [
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15],
    [14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3],
    [11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4],
    [7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8],
    [9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13],
    [2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9],
    [12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11],
    [13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10],
    [6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5],
    [10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0],
]
for _r in range(12):
    for _k in range(16):
        SIGMA[_r][_k] = _sigma[_r % 10][_k]

cdef enum:
    DIGEST = 6  # bytes: 12 hex digits, as cleaner.label.crf.encode_attribute
    BLOCK = 128
DIGEST_SIZE = DIGEST
cdef const char *HEX = b"0123456789abcdef"


cdef inline uint64_t _rotr(uint64_t x, int n) noexcept nogil:
    return (x >> n) | (x << (64 - n))


cdef inline void _mix(uint64_t *v, int a, int b, int c, int d, uint64_t x, uint64_t y) noexcept nogil:
    v[a] = v[a] + v[b] + x
    v[d] = _rotr(v[d] ^ v[a], 32)
    v[c] = v[c] + v[d]
    v[b] = _rotr(v[b] ^ v[c], 24)
    v[a] = v[a] + v[b] + y
    v[d] = _rotr(v[d] ^ v[a], 16)
    v[c] = v[c] + v[d]
    v[b] = _rotr(v[b] ^ v[c], 63)


cdef uint64_t _digest_word(const uint8_t *message, Py_ssize_t length) noexcept nogil:
    """The first 8 bytes of the state after BLAKE2b of `message` (at most one block): the digest's bytes, little
    endian."""
    cdef uint64_t h[8]
    cdef uint64_t v[16]
    cdef uint64_t m[16]
    cdef uint8_t block[BLOCK]
    cdef const uint8_t *s
    cdef int i, r
    if LITTLE_ENDIAN:  # the block's bytes are its words already (a fifth of the instructions a name)
        memset(m, 0, BLOCK)
        memcpy(m, message, length)
    else:
        memset(block, 0, BLOCK)
        memcpy(block, message, length)
        for i in range(16):  # the block's words, little endian whatever the machine
            m[i] = 0
            for r in range(7, -1, -1):
                m[i] = (m[i] << 8) | block[8 * i + r]
    for i in range(8):
        h[i] = IV[i]
    h[0] ^= 0x01010000 ^ DIGEST  # parameter block: digest length, no key, fanout 1, depth 1
    for i in range(8):
        v[i] = h[i]
        v[i + 8] = IV[i]
    v[12] ^= <uint64_t> length  # bytes hashed (one block: the counter's high word stays 0)
    v[14] = ~v[14]  # the last block
    for r in range(12):
        s = SIGMA[r]
        _mix(v, 0, 4, 8, 12, m[s[0]], m[s[1]])
        _mix(v, 1, 5, 9, 13, m[s[2]], m[s[3]])
        _mix(v, 2, 6, 10, 14, m[s[4]], m[s[5]])
        _mix(v, 3, 7, 11, 15, m[s[6]], m[s[7]])
        _mix(v, 0, 5, 10, 15, m[s[8]], m[s[9]])
        _mix(v, 1, 6, 11, 12, m[s[10]], m[s[11]])
        _mix(v, 2, 7, 8, 13, m[s[12]], m[s[13]])
        _mix(v, 3, 4, 9, 14, m[s[14]], m[s[15]])
    return h[0] ^ v[0] ^ v[8]


cdef bytes _code(const uint8_t *message, Py_ssize_t length):
    """The code of a name's UTF-8 bytes (attribute_code)."""
    cdef uint64_t word
    cdef char out[2 * DIGEST]
    cdef int i
    if length > BLOCK:
        return hashlib.blake2b(message[:length], digest_size=DIGEST).hexdigest().encode()
    word = _digest_word(message, length)
    for i in range(DIGEST):
        out[2 * i] = HEX[(word >> (8 * i + 4)) & 15]
        out[2 * i + 1] = HEX[(word >> (8 * i)) & 15]
    return PyBytes_FromStringAndSize(out, 2 * DIGEST)


cdef inline object _id(dict index, bytes code):
    cdef PyObject *found = PyDict_GetItem(index, code)
    return 0 if found == NULL else <object> found


def code_ids(dict index, str attribute, tuple prefixes):
    """`(index.get(attribute_code(attribute), 0),) + tuple(index.get(attribute_code(p + attribute), 0) for p in
    prefixes)`: an attribute's id in a model's vocabulary (`index`: code -> id) and the ids of its copies under each
    prefix (cleaner.label.crf.ConjoinedIds, whose reference loop this is), each name's bytes laid in one buffer on the
    stack, without a string per copy."""
    cdef bytes data = _utf8(attribute)
    cdef const uint8_t *name = <const uint8_t *> PyBytes_AS_STRING(data)
    cdef Py_ssize_t length = PyBytes_GET_SIZE(data), k, n = len(prefixes)
    cdef bytes prefix
    cdef uint8_t buffer[BLOCK]
    out = [_id(index, _code(name, length))]
    for k in range(n):
        prefix = _utf8(<str> prefixes[k])
        if PyBytes_GET_SIZE(prefix) + length > BLOCK:  # (hashlib's, over the joined bytes)
            out.append(_id(index, _code(<const uint8_t *> PyBytes_AS_STRING(prefix + data),
                                        PyBytes_GET_SIZE(prefix) + length)))
            continue
        memcpy(buffer, PyBytes_AS_STRING(prefix), PyBytes_GET_SIZE(prefix))
        memcpy(buffer + PyBytes_GET_SIZE(prefix), name, length)
        out.append(_id(index, _code(buffer, PyBytes_GET_SIZE(prefix) + length)))
    return tuple(out)


cdef inline bytes _utf8(str text):
    # (an ASCII str's bytes are its UTF-8: copied without encoding)
    if PyUnicode_IS_ASCII(text):
        return PyBytes_FromStringAndSize(<const char *> PyUnicode_1BYTE_DATA(text), PyUnicode_GET_LENGTH(text))
    return text.encode("utf-8", "surrogatepass")


cpdef bytes attribute_code(str attribute):
    """cleaner.label.crf.encode_attribute(attribute): the 48-bit code of a readable attribute, 12 hex digits."""
    cdef bytes data
    if PyUnicode_IS_ASCII(attribute):  # (its bytes are its UTF-8)
        return _code(PyUnicode_1BYTE_DATA(attribute), PyUnicode_GET_LENGTH(attribute))
    data = attribute.encode("utf-8", "surrogatepass")
    return _code(<const uint8_t *> PyBytes_AS_STRING(data), PyBytes_GET_SIZE(data))
