# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Inference on a linear-chain CRF, compiled: the Viterbi labels and the label marginals of a page.

The readable reference is cleaner/label/chain.py, which documents the method; this file computes every float
in the same order with the same operations, so the two agree to the last bit (tests/test_chain.py). Built
by scripts/build_native.py into cleaner/_native/label/ (with Cython and a C compiler alone: no NumPy headers,
the arrays come in as typed memoryviews that the caller allocated).
"""

from libc.math cimport copysign, exp, INFINITY
from libc.stdlib cimport free, malloc, qsort


def viterbi(const double[:, ::1] state, const double[:, ::1] trans, Py_ssize_t[::1] path):
    """Write into `path` (n,) the best label sequence for `state` (n, labels) and `trans` (labels, labels)."""
    cdef Py_ssize_t n = state.shape[0], labels = trans.shape[0], t, i, j, arg, last
    cdef double top, score
    if n == 0:
        return
    if state.shape[1] != labels or trans.shape[1] != labels or path.shape[0] != n:
        raise ValueError("viterbi: state (n, L), trans (L, L) and path (n,) do not fit")
    cdef double *best = <double *> malloc(2 * labels * sizeof(double))
    cdef Py_ssize_t *back = <Py_ssize_t *> malloc(n * labels * sizeof(Py_ssize_t))
    cdef double *cur
    cdef double *prev
    if best == NULL or back == NULL:
        free(best)
        free(back)
        raise MemoryError()
    try:
        prev = best
        cur = best + labels
        for j in range(labels):
            prev[j] = state[0, j]
        for t in range(1, n):
            for j in range(labels):
                top = -INFINITY
                arg = 0
                for i in range(labels):
                    score = prev[i] + trans[i, j]
                    if top < score:
                        top = score
                        arg = i
                back[t * labels + j] = arg
                cur[j] = top + state[t, j]
            prev, cur = cur, prev
        top = -INFINITY
        last = 0
        for i in range(labels):
            if top < prev[i]:
                top = prev[i]
                last = i
        path[n - 1] = last
        for t in range(n - 1, 0, -1):
            last = back[t * labels + last]
            path[t - 1] = last
    finally:
        free(best)
        free(back)


def marginals(const double[:, ::1] state, const double[:, ::1] trans, double[:, ::1] out):
    """Write into `out` (n, labels) P(label y at block t) for `state` (n, labels) and `trans` (labels, labels)."""
    cdef Py_ssize_t n = state.shape[0], labels = trans.shape[0], t, i, j
    cdef double a, total, factor
    if n == 0:
        return
    if state.shape[1] != labels or trans.shape[1] != labels or out.shape[0] != n or out.shape[1] != labels:
        raise ValueError("marginals: state (n, L), trans (L, L) and out (n, L) do not fit")
    # one block of memory: exp(state) and alpha (n * L each), beta's row and the carried row (L each),
    # exp(trans) (L * L), the scale factors (n)
    cdef double *memory = <double *> malloc((2 * n * labels + 2 * labels + labels * labels + n) * sizeof(double))
    if memory == NULL:
        raise MemoryError()
    cdef double *exp_state = memory
    cdef double *alpha = exp_state + n * labels
    cdef double *beta = alpha + n * labels
    cdef double *carried = beta + labels
    cdef double *exp_trans = carried + labels
    cdef double *scale = exp_trans + labels * labels
    cdef double *cur
    cdef double *prev
    try:
        for t in range(n):
            for j in range(labels):
                exp_state[t * labels + j] = exp(state[t, j])
        for i in range(labels):
            for j in range(labels):
                exp_trans[i * labels + j] = exp(trans[i, j])
        # forward, each row scaled to sum 1
        for j in range(labels):
            alpha[j] = exp_state[j]
        scale[0] = _scale(alpha, labels)
        for t in range(1, n):
            prev = alpha + (t - 1) * labels
            cur = alpha + t * labels
            for j in range(labels):
                cur[j] = 0.0
            for i in range(labels):
                a = prev[i]
                for j in range(labels):
                    cur[j] += a * exp_trans[i * labels + j]
            for j in range(labels):
                cur[j] *= exp_state[t * labels + j]
            scale[t] = _scale(cur, labels)
        # backward, scaled by the forward rows' factors; the marginals of each row as it is made
        for j in range(labels):
            beta[j] = scale[n - 1]
        _write_marginals(out, alpha, beta, scale, n - 1, labels)
        for t in range(n - 2, -1, -1):
            for j in range(labels):
                carried[j] = beta[j] * exp_state[(t + 1) * labels + j]
            for i in range(labels):
                total = 0.0
                for j in range(labels):
                    total += exp_trans[i * labels + j] * carried[j]
                beta[i] = total * scale[t]
            _write_marginals(out, alpha, beta, scale, t, labels)
    finally:
        free(memory)


cdef inline double _scale(double *row, Py_ssize_t labels) noexcept nogil:
    cdef double total = 0.0, factor
    cdef Py_ssize_t j
    for j in range(labels):
        total += row[j]
    factor = 1.0 / total if total != 0.0 else 1.0
    for j in range(labels):
        row[j] *= factor
    return factor


cdef inline void _write_marginals(double[:, ::1] out, double *alpha, double *beta, double *scale, Py_ssize_t t,
                                  Py_ssize_t labels) noexcept:
    cdef Py_ssize_t y
    for y in range(labels):
        out[t, y] = alpha[t * labels + y] * beta[y] / scale[t]



cdef double _pairwise(const double[:, :] state, const Py_ssize_t[:] flat, Py_ssize_t lo, Py_ssize_t n,
                      Py_ssize_t k) noexcept nogil:
    """NumPy's pairwise summation (its `pairwise_sum`, which np.add.reduce and reduceat use) of state[flat[lo + i], k]
    for i < n: in order below 8 terms (from a negative zero, as NumPy starts), with 8 running sums up to 128, halved
    (at a multiple of 8) above."""
    cdef double res, r0, r1, r2, r3, r4, r5, r6, r7
    cdef Py_ssize_t i, n2
    if n < 8:
        res = copysign(0.0, -1.0)
        for i in range(lo, lo + n):
            res += state[flat[i], k]
        return res
    if n <= 128:
        r0 = state[flat[lo], k]
        r1 = state[flat[lo + 1], k]
        r2 = state[flat[lo + 2], k]
        r3 = state[flat[lo + 3], k]
        r4 = state[flat[lo + 4], k]
        r5 = state[flat[lo + 5], k]
        r6 = state[flat[lo + 6], k]
        r7 = state[flat[lo + 7], k]
        i = 8
        while i < n - n % 8:
            r0 += state[flat[lo + i], k]
            r1 += state[flat[lo + i + 1], k]
            r2 += state[flat[lo + i + 2], k]
            r3 += state[flat[lo + i + 3], k]
            r4 += state[flat[lo + i + 4], k]
            r5 += state[flat[lo + i + 5], k]
            r6 += state[flat[lo + i + 6], k]
            r7 += state[flat[lo + i + 7], k]
            i += 8
        res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
        while i < n:
            res += state[flat[lo + i], k]
            i += 1
        return res
    n2 = n // 2
    n2 -= n2 % 8
    return _pairwise(state, flat, lo, n2, k) + _pairwise(state, flat, lo + n2, n - n2, k)


def row_sums(const double[:, :] state, const Py_ssize_t[:] flat, const Py_ssize_t[:] starts, double[:, ::1] out):
    """Write into `out` (rows, labels), zeros when called, per row i the sum of the rows of `state` (ids, labels) of
    the ids `flat[starts[i]:starts[i + 1]]` (the last row's to the end of `flat`): the blocks' state scores. Added
    as the reference (`FlatRows.sum`: np.add.reduceat over the gathered rows) adds them -- the first term, plus
    NumPy's pairwise sum of the others -- without gathering them; a row without ids stays zero."""
    cdef Py_ssize_t rows = starts.shape[0], labels = state.shape[1], end = flat.shape[0], i, k, s, e
    if out.shape[0] != rows or out.shape[1] != labels:
        raise ValueError("row_sums: out must be (rows, labels)")
    with nogil:
        for i in range(rows):
            s = starts[i]
            e = starts[i + 1] if i + 1 < rows else end
            if s >= e:
                continue
            for k in range(labels):
                out[i, k] = state[flat[s], k]
                if e - s > 1:
                    out[i, k] = out[i, k] + _pairwise(state, flat, s + 1, e - s - 1, k)


def flatten_rows(rows, Py_ssize_t[::1] out):
    """Write the ids of `rows` (lists of ints), row after row, into `out` (as long as all of them): what the
    reference gives with np.fromiter(chain.from_iterable(rows)), without packing each int through NumPy's generic
    path."""
    cdef Py_ssize_t k = 0, n = out.shape[0]
    cdef list row
    for item in rows:
        row = item if type(item) is list else list(item)
        if k + len(row) > n:
            raise ValueError("flatten_rows: more ids than `out` holds")
        for x in row:
            out[k] = x
            k += 1
    if k != n:
        raise ValueError("flatten_rows: fewer ids than `out` holds")


def row_starts(rows, Py_ssize_t[::1] starts):
    """Write into `starts` (one per row) where each of `rows` (sequences) begins in the rows laid end to end, and return
    (how many items they hold, how many rows are empty): what the reference reads from np.cumsum of the rows'
    lengths, without a list of the lengths made and converted."""
    cdef Py_ssize_t k, total = 0, empty = 0, size
    if starts.shape[0] != len(rows):
        raise ValueError("row_starts: one start per row")
    for k in range(len(rows)):
        starts[k] = total
        size = len(rows[k])
        total += size
        empty += size == 0
    return total, empty


cdef inline Py_ssize_t _end(const Py_ssize_t[::1] starts, Py_ssize_t i, Py_ssize_t total) noexcept nogil:
    return starts[i + 1] if i + 1 < starts.shape[0] else total


cdef inline Py_ssize_t _lay_ids(const Py_ssize_t *ids, Py_ssize_t s, Py_ssize_t e, const Py_ssize_t *pairs,
                                Py_ssize_t width, Py_ssize_t first_pair, Py_ssize_t column, bint copies_only,
                                Py_ssize_t *flat, Py_ssize_t at) noexcept nogil:
    """Write ids[s:e] into flat from `at` on, each pair id as `pairs[p - first_pair, column]` (rows of `width`); with
    `copies_only` the pair ids alone (a variant's copies). Returns where the next id goes."""
    cdef Py_ssize_t k, x
    for k in range(s, e):
        x = ids[k]
        if x >= first_pair:
            flat[at] = pairs[(x - first_pair) * width + column]
            at += 1
        elif not copies_only:
            flat[at] = x
            at += 1
    return at


def conjoined_bound(Py_ssize_t blocks, Py_ssize_t n_shared, Py_ssize_t n_private, Py_ssize_t neighbours):
    """How many ids lay_conjoined may write at most for a page of `blocks` blocks holding `n_shared` shared and
    `n_private` private ids, read by `neighbours` neighbours: every id and a copy of each, a bias a block, and per
    neighbour every shared id or a page's end a block."""
    return 2 * (n_shared + n_private) + blocks + neighbours * (n_shared + blocks)


def lay_conjoined(const Py_ssize_t[::1] shared, const Py_ssize_t[::1] shared_starts,
                  const Py_ssize_t[::1] private, const Py_ssize_t[::1] private_starts,
                  const Py_ssize_t[::1] offsets, const Py_ssize_t[:, ::1] seen, const Py_ssize_t[::1] edges,
                  const Py_ssize_t[:, ::1] pairs, Py_ssize_t first_pair, Py_ssize_t variant, Py_ssize_t bias,
                  Py_ssize_t[::1] lens, Py_ssize_t[::1] flat):
    """A convention variant's rows of a page, laid out in one pass (the reference, in NumPy:
    cleaner.label.crf.WindowRows.conjoined_reference). Per block i: its shared ids, then its private ones (a pair id,
    `first_pair` and up, as its own id `pairs[p - first_pair, 0]`); for each neighbour j the ids `seen[j]` of the
    shared attributes of block i + offsets[j] (laid out as `shared`), or `edges[j]` past the page's ends; `bias`;
    then the variant's copy `pairs[p - first_pair, 1 + variant]` of each pair id, the shared ones' first.
    Writes each block's row length into `lens` and the rows into `flat`, which holds at least `conjoined_bound` ids
    (the rows are laid in one pass, not measured first), and returns how many it wrote. (C-ordered arrays: the reads
    take no stride.)"""
    cdef Py_ssize_t n = shared_starts.shape[0], m = offsets.shape[0], n_shared = shared.shape[0]
    cdef Py_ssize_t n_private = private.shape[0], i, j, b, k, at = 0, row, ss, se, ps, pe
    cdef Py_ssize_t width = pairs.shape[1], column = 1 + variant
    if private_starts.shape[0] != n or lens.shape[0] != n or seen.shape[0] != m or edges.shape[0] != m or (
            m and seen.shape[1] != n_shared):
        raise ValueError("lay_conjoined: the blocks' arrays disagree")
    if flat.shape[0] < conjoined_bound(n, n_shared, n_private, m):
        raise ValueError("lay_conjoined: `flat` must hold conjoined_bound ids")
    if not 0 <= variant < width - 1:
        raise ValueError("lay_conjoined: no such variant")
    if n == 0:
        return 0
    cdef const Py_ssize_t *shared_ids = &shared[0] if n_shared else NULL
    cdef const Py_ssize_t *private_ids = &private[0] if n_private else NULL
    cdef const Py_ssize_t *pair_ids = &pairs[0, 0] if pairs.shape[0] else NULL
    cdef Py_ssize_t *out = &flat[0]
    with nogil:
        for i in range(n):
            row = at
            ss, se = shared_starts[i], _end(shared_starts, i, n_shared)
            ps, pe = private_starts[i], _end(private_starts, i, n_private)
            at = _lay_ids(shared_ids, ss, se, pair_ids, width, first_pair, 0, False, out, at)
            at = _lay_ids(private_ids, ps, pe, pair_ids, width, first_pair, 0, False, out, at)
            for j in range(m):
                b = i + offsets[j]
                if 0 <= b < n:
                    for k in range(shared_starts[b], _end(shared_starts, b, n_shared)):
                        out[at] = seen[j, k]
                        at += 1
                else:
                    out[at] = edges[j]
                    at += 1
            out[at] = bias
            at += 1
            at = _lay_ids(shared_ids, ss, se, pair_ids, width, first_pair, column, True, out, at)
            at = _lay_ids(private_ids, ps, pe, pair_ids, width, first_pair, column, True, out, at)
            lens[i] = at - row
    return at


cdef struct _Kept:
    double p
    long long words


cdef int _by_p_then_words(const void *a, const void *b) noexcept nogil:
    """qsort's order of best_expected_f1: by P(content), then words, highest first. (Blocks equal in both add the same
    terms whichever comes first, so the unstable sort gives the reference's sums.)"""
    cdef const _Kept *x = <const _Kept *> a
    cdef const _Kept *y = <const _Kept *> b
    if x.p != y.p:
        return -1 if x.p > y.p else 1
    if x.words != y.words:
        return -1 if x.words > y.words else 1
    return 0


def best_expected_f1(list word_counts, list p_content):
    """The highest expected word F1 of a page over the ways to keep its blocks: cleaner.label.decide.best_expected_f1,
    its readable reference (which documents the method), computed with the same floats in the same order -- the
    expected gold words summed block by block, the hit and kept words running sums over the blocks with words by
    P(content) and words, highest first -- over C arrays instead of six NumPy calls on lists converted each time."""
    cdef Py_ssize_t n = len(word_counts), i, m = 0
    cdef double expected_gold = 0.0, hit = 0.0, best = 0.0, value
    cdef long long w, kept = 0
    cdef bint nan = False, any_value = False
    if len(p_content) != n:
        raise ValueError("best_expected_f1: one P(content) a block")
    cdef _Kept *blocks = <_Kept *> malloc((n if n else 1) * sizeof(_Kept))
    if blocks == NULL:
        raise MemoryError()
    try:
        for i in range(n):
            w = word_counts[i]
            value = p_content[i]
            expected_gold += <double> w * value
            if w != 0:
                blocks[m].p = value
                blocks[m].words = w
                m += 1
        if m == 0:
            return 0.0
        qsort(blocks, m, sizeof(_Kept), _by_p_then_words)
        for i in range(m):
            hit += <double> blocks[i].words * blocks[i].p
            kept += blocks[i].words
            value = 2 * hit / (<double> kept + expected_gold)
            if value != value:
                nan = True
            elif not any_value or value > best:
                best = value
                any_value = True
        if nan:  # (NumPy's max of an array holding a NaN is NaN, which the reference gives back as 0.0)
            return 0.0
        return best if best > 0.0 else 0.0
    finally:
        free(blocks)
