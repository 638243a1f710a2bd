"""Tagging with a CRFsuite model: the state scores in numpy, the chain in compiled code.

A linear-chain CRF's state score is a sum of one weight vector (one weight per label) per attribute, so
the model's state weights are read into a matrix once and rows of attribute ids are scored with one
gather and one `reduceat`. The chain (Viterbi labels, forward-backward marginals) then runs over those
(blocks, labels) scores and the model's own transitions in `cleaner.label.compiled_chain` (Cython, built by
scripts/build_native.py; readable reference: cleaner.label.chain), which follows CRFsuite's computation
step for step: the labels are CRFsuite's and the marginals equal its bit for bit on the shared pages
(tests/test_chain.py). CRFsuite itself still trains the models.

Until stop 47 CRFsuite ran the chain too, given a *proxy* of the model (one carrier attribute per label
whose value was that label's score): building its items and asking it ~600 marginals a page one call at a
time cost more than the chain itself (docs/speed.md, stop 47).

Attribute ids come from a `Vocabulary` shared by the models that read the same rows (a
stacked model's two passes), so a page's features are named once for both; id 0 is every
attribute no model knows (CRFsuite skips those too).

The model file is read by cleaner.label.crfsuite_file.
"""

from __future__ import annotations

import copy
import hashlib
import threading
from collections.abc import Callable, Sequence
from itertools import chain
from typing import Final

import numpy as np
from mypy_extensions import mypyc_attr

from .. import compiled_twin
from . import chain as reference_chain
from .crfsuite_file import (  # noqa: F401 (TRANSITION: read from here too)
    STATE,
    TRANSITION,
    CrfsuiteModel,
    read_crfsuite,
)

compiled_chain = compiled_twin("label.compiled_chain")
compiled_codes = compiled_twin("label.compiled_codes")


def encode_attribute_reference(attribute: str) -> bytes:
    """The 48-bit code under which an encoded model stores a readable attribute (12 hex digits): the readable
    reference of compiled_codes.attribute_code, which `encode_attribute` is when it is built."""
    return hashlib.blake2b(attribute.encode("utf-8", "surrogatepass"), digest_size=6).hexdigest().encode()


# (A page of a site not seen before hashes a few hundred names: through hashlib 5,800 instructions each, compiled
# 1,900; cleaner/label/compiled_codes.pyx.)
encode_attribute: Callable[[str], bytes] = (
    encode_attribute_reference if compiled_codes is None else compiled_codes.attribute_code)


class Vocabulary:
    """Attribute name (as the model files store it) -> id, over every model that reads the same
    rows; ids start at 1, 0 is "no model knows it"."""

    def __init__(self, models: list[CrfsuiteModel]):
        self.index: dict[bytes, int] = {}
        for m in models:
            for name in m.attributes:
                if name not in self.index:
                    self.index[name] = len(self.index) + 1

    def __len__(self) -> int:
        return len(self.index) + 1

    def state_matrix(self, model: CrfsuiteModel) -> np.ndarray:
        """(len(self), labels) state weights of `model` laid over these ids (row 0 zero)."""
        ids = np.array([self.index[a] for a in model.attributes], dtype=np.intp)
        w = np.zeros((len(self), len(model.labels)))
        s = model.features[model.features["type"] == STATE]
        np.add.at(w, (ids[s["src"]], s["dst"]), s["weight"])
        return w


@mypyc_attr(native_class=False)
class AttributeIds(dict):
    """Readable attribute -> its id in a `Vocabulary`, named as the models store it: its code
    (`encode_attribute`) or, for models stored readable, the name itself. A codec for
    FeatureExtractor.extract, so rows come out as ids; bounded, because id/class tokens are an open
    vocabulary on a real crawl."""

    MAX_ENTRIES = 150_000

    def __init__(self, vocabulary: Vocabulary, encoded: bool):
        super().__init__()
        self.vocabulary = vocabulary
        self.encoded = encoded
        # The id/class tokens the model may know (CrfModel.idclass_tokens), which the features read; None: any.
        self.idclass_tokens: frozenset[str] | None = None

    def __missing__(self, key: str) -> int:
        if len(self) >= self.MAX_ENTRIES:
            self.clear()
        i = self[key] = self.id_of(key)
        return i

    def id_of(self, attribute: str) -> int:
        """The vocabulary id of a readable attribute (0: no model knows it), uncached."""
        name = encode_attribute(attribute) if self.encoded else attribute.encode("utf-8", "surrogatepass")
        return self.vocabulary.index.get(name, 0)

    def encode(self, rows) -> list[list[int]]:
        """Rows of readable attributes or of attribute names as stored (bytes), as ids; rows of ids
        are returned as they are."""
        first = next((r[0] for r in rows if r), 0)
        if isinstance(first, int):
            return rows
        if isinstance(first, bytes):
            index = self.vocabulary.index
            return [[index.get(a, 0) for a in row] for row in rows]
        get = self.__getitem__
        return [list(map(get, row)) for row in rows]


@mypyc_attr(native_class=False)
class ConjoinedIds(AttributeIds):
    """AttributeIds for rows that a variant extends with copies of some of their attributes: a
    convention-aware model's rows (cleaner.label.convention), which under a convention gain its bias
    attribute and then, in row order, a copy `conv|name` of each of the block's own attributes whose
    name starts with one of `prefixes`.

    Such an attribute is named here by a *pair id* (`first_pair` and up) standing for its own id and
    its copies' ids under every variant (`pair_table`), so that WindowRows.conjoined lays out a
    variant's rows from the ids alone, without readable rows. A pair id is dealt out once per
    distinct (own id, copies' ids): it stays valid when the name cache is cleared (the extractor
    keeps what the codec gave it), and there are at most as many as the model has attributes. Pairs
    are dealt and the table extended under a lock: a model labels pages in several threads at once,
    and two threads dealing the same id would give one of them another attribute's copies."""

    def __init__(self, vocabulary: Vocabulary, encoded: bool, copy_prefixes: tuple[str, ...],
                 prefixes: tuple[str, ...]):
        """`copy_prefixes`: per variant, what its copy of an attribute puts before the name ("main|")."""
        super().__init__(vocabulary, encoded)
        self.copy_prefixes = copy_prefixes
        self.prefixes = prefixes
        self.first_pair = len(vocabulary)
        self._pairs: dict[tuple[int, ...], int] = {}
        # The pairs' rows, in a buffer that doubles when full: the table was concatenated anew whenever a page
        # brought a new pair, a copy of the whole table (36,000 pairs, 1.4 MB, after one pass over the shared
        # pages; 77 us a page, 2-3 % of a page's time on a crawl whose pages keep bringing pairs).
        self._buffer = np.zeros((1024, 1 + len(copy_prefixes)), np.intp)  # (its first rows: the pairs not in `_new`)
        self._new: list[tuple[int, ...]] = []  # pairs dealt out since the table was last extended
        self._lock = threading.Lock()

    def __missing__(self, key: str) -> int:
        if len(self) >= self.MAX_ENTRIES:
            self.clear()
        if not key.startswith(self.prefixes):
            i = self.id_of(key)
        else:
            if self.encoded and compiled_codes is not None:  # (the loop below in one compiled call)
                ids: tuple[int, ...] = compiled_codes.code_ids(self.vocabulary.index, key, self.copy_prefixes)
            else:
                ids = (self.id_of(key),) + tuple(self.id_of(prefix + key) for prefix in self.copy_prefixes)
            pair = self._pairs.get(ids)  # (most names bring a pair dealt already, the unknown one's above all:
            if pair is None:              # read without the lock, as a dict is read whole under the GIL)
                with self._lock:
                    pair = self._pairs.get(ids)
                    if pair is None:
                        pair = self._pairs[ids] = self.first_pair + len(self._pairs)
                        self._new.append(ids)
            i = pair
        self[key] = i
        return i

    def pair_table(self) -> np.ndarray:
        """(pairs, 1 + variants) ids: per pair id (less `first_pair`) its attribute's own id, then its
        copy's under each variant."""
        with self._lock:
            filled = len(self._pairs) - len(self._new)  # (both grow under the lock)
            if self._new:
                new = np.array(self._new, np.intp)
                if filled + len(new) > len(self._buffer):
                    # A new buffer: a view given out before keeps reading the old one, whose rows are the same.
                    grown = np.zeros((max(2 * len(self._buffer), filled + len(new)), self._buffer.shape[1]), np.intp)
                    grown[:filled] = self._buffer[:filled]
                    self._buffer = grown
                self._buffer[filled:filled + len(new)] = new
                filled += len(new)
                self._new = []
            return self._buffer[:filled]


def interleave(parts: list[tuple[np.ndarray, np.ndarray]]) -> FlatRows:
    """Rows laid out from `parts`, each (values in block order, how many of them each block has):
    block i's row is part 0's values of block i, then part 1's, and so on."""
    lens = np.stack([counts for _, counts in parts], axis=1)  # (blocks, parts)
    ends = np.cumsum(lens.ravel()).reshape(lens.shape)
    starts = ends - lens  # where each part of each block goes in the flat rows
    flat = np.empty(int(ends[-1, -1]), np.intp)
    for j, (values, counts) in enumerate(parts):
        offset = np.repeat(starts[:, j] - (np.cumsum(counts) - counts), counts)
        flat[offset + np.arange(len(values))] = values
    return FlatRows(flat=flat, lens=lens.sum(axis=1).tolist())


class FlatRows:
    """Rows of attribute ids flattened into one array: what scoring needs, computed once per page
    however many passes score it (flattening costs about as much as the weights' gather)."""

    __slots__ = ("n", "flat", "starts", "full")

    def __init__(self, rows: list[list[int]] | None = None, *, flat: np.ndarray | None = None,
                 lens: list[int] | np.ndarray | None = None, starts: np.ndarray | None = None,
                 has_empty: bool | None = None):
        """From `rows` (lists of ids), or from their ids laid end to end (`flat`) with each row's length (`lens`) or
        where each row begins (`starts`, and `has_empty`: whether a row is empty)."""
        if rows is not None:
            if compiled_chain is not None and isinstance(rows, list):
                # (the starts and the ids in two compiled passes over the rows: no list of lengths made and converted)
                starts = np.empty(len(rows), np.intp)
                total, empty = compiled_chain.row_starts(rows, starts)
                flat = np.empty(total, np.intp)
                compiled_chain.flatten_rows(rows, flat)
                has_empty = empty > 0
            else:
                lens = list(map(len, rows))
                flat = np.fromiter(chain.from_iterable(rows), np.intp, sum(lens))
        if flat is None or (lens is None and starts is None):
            raise TypeError("FlatRows needs rows, or flat ids with their row lengths or starts")
        if starts is None:
            assert lens is not None
            starts = np.zeros(len(lens), np.intp)
            np.cumsum(lens[:-1], out=starts[1:])
            if has_empty is None:
                has_empty = bool(0 in lens)
        elif has_empty is None:
            has_empty = bool(0 in np.diff(starts, append=len(flat)))
        self.n = len(starts)
        self.flat: np.ndarray = flat
        self.starts: np.ndarray = starts
        # reduceat gives an empty row the next row's first weight: rows without attributes are summed apart
        self.full = np.flatnonzero(np.diff(starts, append=len(flat))) if has_empty else None

    def sum(self, state: np.ndarray, flat: np.ndarray | None = None) -> np.ndarray:
        """(rows, labels): per row the sum of its ids' rows of `state` (of `flat`'s ids when given:
        other ids laid out as these rows)."""
        flat = self.flat if flat is None else flat
        if not flat.size:
            return np.zeros((self.n, state.shape[1]))
        if compiled_chain is not None:  # the same sums, in the same order, without gathering the rows
            out = np.zeros((self.n, state.shape[1]))
            compiled_chain.row_sums(state, flat, self.starts, out)
            return out
        if self.full is None:
            return np.add.reduceat(state[flat], self.starts)
        out = np.zeros((self.n, state.shape[1]))
        out[self.full] = np.add.reduceat(state[flat], self.starts[self.full])
        return out


def window_offsets(window: int) -> list[int]:
    """The neighbours' offsets a block reads, in the order WindowRows keeps them: -1, +1, -2, +2..."""
    return [offset for k in range(1, window + 1) for offset in (-k, k)]


@mypyc_attr(native_class=False)
class WindowIds(dict):
    """The naming of the window families' attributes (FeatureExtractor.extract_parts' `window`): a readable
    attribute -> a local id, and per local id the attribute's id as its block's own and as each neighbour offset
    sees it (`table()`, one row each), so that a page's shared attributes come out of the features as integers and
    their ids at every offset are one gather (WindowRows). Only attributes some model knows under one of those
    names get a local id of their own; every other one is local id 0, whose ids are all 0 ("no model knows it"):
    so the ids are bounded by the model's vocabulary and stay valid for the life of the process, cached by the
    features' names and text cache (a bounded cache of open-vocabulary names, reset, would have to reset those
    too). Ids are dealt under a lock: pages labelled in several threads at once would otherwise deal one local
    id to two names, or lay out the table's columns in another order than the ids."""

    def __init__(self, extractor, codec) -> None:
        super().__init__()
        self.extractor = extractor
        self.codec = codec
        self.offsets = window_offsets(extractor.window)
        self._lock = threading.Lock()
        self._table = np.zeros((1 + len(self.offsets), 1), np.intp)  # local id 0: known to no model
        self._new: list[list[int]] = []  # columns dealt since the table was last extended

    def __missing__(self, name: str) -> int:
        codec = self.codec
        with self._lock:
            if name in self:  # (dealt by another thread meanwhile)
                i: int = self[name]
                return i
            column = [codec[name]] + [self.extractor.neighbour_names(offset, codec)[name] for offset in self.offsets]
            if not any(column):
                return 0  # (not kept: the names' own caches keep it, and the unknown are an open vocabulary)
            i = self[name] = len(self) + 1  # (the kept names are local ids 1.., 0 the unknown)
            self._new.append(column)
            return i

    def table(self) -> np.ndarray:
        """(1 + offsets, local ids) ids: column i the ids of local id i, row 0 as its block's own, row j as
        offset j (window_offsets) sees it."""
        with self._lock:
            if self._new:  # (extended, not rebuilt: a page brings a few new names, the table holds thousands)
                self._table = np.concatenate([self._table, np.array(self._new, np.intp).T], axis=1)
                self._new = []
            return self._table


_WINDOW_IDS: Final[dict[tuple[int, int], WindowIds]] = {}


def window_ids(extractor, codec) -> WindowIds:
    """The WindowIds of a FeatureExtractor and a codec, one per pair for the life of the process."""
    key = (id(extractor), id(codec))  # (the entry holds both, so their ids are not reused meanwhile)
    ids = _WINDOW_IDS.get(key)
    if ids is None:
        ids = _WINDOW_IDS[key] = WindowIds(extractor, codec)
    return ids


def window_rows(extractor, blocks, counts, codec, page=None) -> WindowRows:
    """The WindowRows of the blocks (a BlockTable, `counts` their BlockCounts): their attributes named with `codec`
    (AttributeIds) and the window's ids by `extractor` (a FeatureExtractor), `page` its PageMarks."""
    parts = extractor.extract_parts(blocks, counts, codec, page, window_ids(extractor, codec))
    return WindowRows(parts, codec, extractor)


@mypyc_attr(native_class=False)  # (own_only copies it: a compiled class cannot be copied without its __init__)
class WindowRows:
    """A page's attribute ids as `FeatureExtractor.extract_parts` leaves them, scored without laying
    out each block's row of its own and its neighbours' attributes.

    The state score of block i is the sum over its own attributes and over the shared attributes of
    blocks i-k..i+k under their offset's prefix. The shared attributes come named by WindowIds, and their
    ids at each offset are gathered in one flat array per offset (the shared rows' layout); each
    offset's sums are computed per block and added to the block k places away. Building the rows
    instead cost ~1.5 ms a page: a list per block and offset, and the flattening of ~58 ids a block
    (docs/speed.md, stop 21).
    Scores equal those of the laid-out rows up to the order of the sums (~1e-15)."""

    __slots__ = ("n", "private", "shared", "neighbours", "codec", "window")

    def __init__(self, parts, codec, extractor):
        """`parts`: AttributeParts named with `codec` (AttributeIds) and the window_ids of (`extractor`, `codec`) by
        `extractor`, the FeatureExtractor that names a neighbour's attributes and the page's ends (and knows the
        window): what `window_rows` makes."""
        window = window_ids(extractor, codec)
        if parts.window is not window:
            raise TypeError("WindowRows needs parts named by window_ids(extractor, codec) (window_rows)")
        self.codec = codec
        shared = parts.shared
        if parts.flat is not None:  # (written as C integers by the compiled pass: compiled_rows.RowPass)
            local, starts, has_empty, private, private_starts = parts.flat
            self.private = FlatRows(flat=private, starts=private_starts, has_empty=False)  # (the bias: never empty)
        elif compiled_chain is not None:
            self.private = FlatRows(parts.private)
            starts = np.empty(len(shared), np.intp)
            total, empty = compiled_chain.row_starts(shared, starts)
            local = np.empty(total, np.intp)
            compiled_chain.flatten_rows(shared, local)
            has_empty = empty > 0
        else:
            self.private = FlatRows(parts.private)
            lens = list(map(len, shared))
            local = np.fromiter(chain.from_iterable(shared), np.intp, sum(lens))
            starts = np.zeros(len(lens), np.intp)
            np.cumsum(lens[:-1], out=starts[1:])
            has_empty = 0 in lens
        self.n = self.private.n
        ids = window.table().take(local, axis=1)  # (take: a fifth of the time of indexing, and C-ordered)
        self.shared = FlatRows(flat=ids[0], starts=starts, has_empty=has_empty)
        # (offset, ids of the shared attributes under its prefix, id of the page's end at it)
        self.window = ids  # (1 + offsets, shared ids): row j is `neighbours[j - 1]`'s ids
        self.neighbours = [(offset, ids[j], extractor.edge(offset, codec)[0])
                           for j, offset in enumerate(window_offsets(extractor.window), 1)]

    def __len__(self) -> int:
        return self.n

    def own_only(self) -> WindowRows:
        """The same page with no neighbours' attributes: what a model reading only each block's own sees."""
        view = copy.copy(self)
        view.neighbours = []
        return view

    def _conjoined_codec(self) -> ConjoinedIds:
        codec = self.codec
        if not isinstance(codec, ConjoinedIds):
            raise TypeError("WindowRows.conjoined needs rows named with a ConjoinedIds codec")
        return codec

    def conjoined(self, variant: int, bias: int) -> FlatRows:
        """The page's rows under a variant of ConjoinedIds rows (this page's codec), laid out as
        `FeatureExtractor.extract` and the variant lay them out: per block its own attributes (the
        window families' first), each neighbour's in `window_offsets` order (or the page's end), the
        variant's `bias` attribute (an id), then the variant's copy of each own attribute a pair id
        names, in row order. Laid out in that order, a block's sum is added up in the order the
        readable rows give it, so the scores are equal to the last bit, not up to rounding. Laying out
        ids takes one compiled pass (a few NumPy calls in `conjoined_reference`), where building the readable
        rows, rewriting and encoding them took ~2 ms more (docs/modern.md, section 4)."""
        if compiled_chain is None:
            return self.conjoined_reference(variant, bias)
        codec = self._conjoined_codec()
        # The same rows in one compiled pass (cleaner/label/compiled_chain.pyx, lay_conjoined): the reference's
        # NumPy calls cost 4.4 M instructions a page, most of them NumPy's own per call (docs/speed.md, stop 51).
        neighbours = self.neighbours
        shared, private = self.shared, self.private
        seen = self.window[1:1 + len(neighbours)]  # (the neighbours' ids as laid out already: no copy)
        arrays = (shared.flat, shared.starts, private.flat, private.starts,
                  np.array([offset for offset, _, _ in neighbours], np.intp), seen,
                  np.array([edge for _, _, edge in neighbours], np.intp), codec.pair_table(), codec.first_pair,
                  variant, bias)
        lens = np.empty(self.n, np.intp)
        flat = np.empty(compiled_chain.conjoined_bound(self.n, len(shared.flat), len(private.flat), len(neighbours)),
                        np.intp)
        return FlatRows(flat=flat[:compiled_chain.lay_conjoined(*arrays, lens, flat)], lens=lens)

    def conjoined_reference(self, variant: int, bias: int) -> FlatRows:
        """`conjoined` in NumPy: the readable reference of its compiled pass (and what runs without the build)."""
        codec = self._conjoined_codec()
        n = self.n
        table = codec.pair_table()
        parts: list[tuple[np.ndarray, np.ndarray]] = []
        copy_blocks, copy_ids = [], []
        for rows in (self.shared, self.private):
            flat = rows.flat
            at = np.flatnonzero(flat >= codec.first_pair)
            pairs = table[flat[at] - codec.first_pair]
            own = flat.copy()
            own[at] = pairs[:, 0]
            parts.append((own, np.diff(rows.starts, append=len(flat))))
            copy_blocks.append(np.searchsorted(rows.starts, at, "right") - 1)
            copy_ids.append(pairs[:, 1 + variant])
        shared_lens, shared_starts = parts[0][1], self.shared.starts
        for offset, ids, edge in self.neighbours:
            k = min(abs(offset), n)  # blocks that read past the page's end at this offset
            edges, ones = np.full(k, edge, np.intp), np.ones(k, np.intp)
            if offset < 0:  # block i reads block i-k: the shared attributes of the first n-k blocks
                seen = ids[: shared_starts[n - k]] if k < n else ids[:0]
                parts.append((np.concatenate([edges, seen]), np.concatenate([ones, shared_lens[: n - k]])))
            else:  # block i reads block i+k: those of the last n-k blocks
                seen = ids[shared_starts[k]:] if k < n else ids[:0]
                parts.append((np.concatenate([seen, edges]), np.concatenate([shared_lens[k:], ones])))
        parts.append((np.full(n, bias, np.intp), np.ones(n, np.intp)))
        blocks = np.concatenate(copy_blocks)
        order = np.argsort(blocks, kind="stable")  # per block its shared attributes' copies, then its private ones'
        parts.append((np.concatenate(copy_ids)[order], np.bincount(blocks, minlength=n)))
        return interleave(parts)

    def sum(self, state: np.ndarray) -> np.ndarray:
        """(blocks, labels): per block the sum of the `state` rows of every attribute it reads."""
        n = self.n
        out = self.private.sum(state)
        out += self.shared.sum(state)
        for offset, ids, edge in self.neighbours:
            seen = self.shared.sum(state, ids)  # block j's shared attributes, as block j - offset sees them
            k = abs(offset)
            m = max(n - k, 0)
            if offset < 0:  # block i reads block i-k; the first k read the page's beginning
                out[k:] += seen[:m]
                out[:k] += state[edge]
            else:  # block i reads block i+k; the last k read the page's end
                out[:m] += seen[k:]
                out[m:] += state[edge]
        return out


def read_only(array: np.ndarray) -> np.ndarray:
    """`array`, no longer writeable: what threads share must not be written by any of them."""
    array.flags.writeable = False
    return array


class ChainWeights:
    """What a model's taggers read and never write: its state weights over a vocabulary's ids, its
    transitions and its labels. Built once per model and shared by every thread's `ScoringTagger` (the
    arrays are read-only): building the state matrix again for the Arrow writer's thread cost ~2.6 M
    instructions a page of the job's task."""

    def __init__(self, vocabulary: Vocabulary, model: CrfsuiteModel):
        self.state = read_only(vocabulary.state_matrix(model))
        self.transitions = read_only(np.array(model.transitions, dtype=np.float64, order="C"))  # (a copy)
        self.labels: tuple[str, ...] = tuple(model.labels)


class ThreadTaggers:
    """A model's taggers, one per thread (a tagger holds the sequence it last set), all reading the one
    `ChainWeights` of the model, built when the first tagger is opened."""

    def __init__(self, vocabulary: Vocabulary, model: CrfsuiteModel):
        self._vocabulary = vocabulary
        self._model = model
        self._weights: ChainWeights | None = None
        self._building = threading.Lock()
        self._threads = threading.local()

    def weights(self) -> ChainWeights:
        weights = self._weights
        if weights is None:
            with self._building:  # (threads opening their first taggers at once build the weights once)
                weights = self._weights
                if weights is None:
                    weights = self._weights = ChainWeights(self._vocabulary, self._model)
        return weights

    def tagger(self) -> ScoringTagger:
        """This thread's tagger."""
        tagger: ScoringTagger | None = getattr(self._threads, "tagger", None)
        if tagger is None:
            tagger = ScoringTagger(self.weights())
            self._threads.tagger = tagger
        return tagger


class ScoringTagger:
    """A CRFsuite tagger's interface (`set`, `tag`, `marginal`, `labels`) over rows of attribute ids
    (`AttributeIds`): the rows are scored here and the chain is run by `cleaner.label.compiled_chain` (module
    docstring). One per thread: it holds the sequence last set; the model's weights it reads are shared
    (`ChainWeights`; `ThreadTaggers` opens one per thread)."""

    def __init__(self, weights: ChainWeights):
        self.weights = weights
        self.state = weights.state
        self.transitions = weights.transitions
        self._labels = list(weights.labels)
        self._label_index = {y: i for i, y in enumerate(self._labels)}
        self._scores = np.zeros((0, len(self._labels)))
        self._array: np.ndarray | None = None  # the marginals of the sequence set, (blocks, labels)
        self._marginals: list[list[float]] | None = None  # the same as lists, made when asked for

    def scores(self, rows) -> np.ndarray:
        """(blocks, labels) state scores: per block the sum of its attributes' weights. `rows`: lists of
        attribute ids, `FlatRows` (rows flattened once for every pass that reads them), `WindowRows`
        or a (blocks, columns) array of ids."""
        if isinstance(rows, np.ndarray):  # (blocks, columns): a view of the first pass (cleaner.label.stacking)
            return self.state[rows].sum(axis=1)
        if not isinstance(rows, (FlatRows, WindowRows)):
            rows = FlatRows(rows)
        return rows.sum(self.state)

    def set(self, rows, *more) -> None:
        """Set the blocks to tag by their rows; `more` rows (one per block) add their attributes' scores."""
        s = self.scores(rows)
        for extra in more:
            s += self.scores(extra)
        self.set_scores(s)

    def set_scores(self, scores: np.ndarray) -> None:
        """Set the blocks to tag by a (blocks, labels) array of state scores."""
        self._scores = np.ascontiguousarray(scores, dtype=np.float64)
        self._array = None
        self._marginals = None

    def tag(self) -> list[str]:
        """The Viterbi labels of the blocks set."""
        scores, labels = self._scores, self._labels
        if compiled_chain is not None:
            path = np.empty(len(scores), np.intp)
            compiled_chain.viterbi(scores, self.transitions, path)
            return [labels[i] for i in path.tolist()]
        return [labels[i] for i in reference_chain.viterbi(scores.tolist(), self.transitions.tolist())]

    def marginal_array(self) -> np.ndarray:
        """(blocks, labels) marginal probabilities (in `labels()` order), computed once per sequence. What a page is
        asked of them is read from this array in one call each (`marginal_column`, `label_marginals`, `marginal_row`,
        `marginals_at`): converting the whole table to lists of floats and reading it a block at a time from
        interpreted code cost ~0.5 M instructions a page of 2025 (docs/speed.md)."""
        if self._array is None:
            scores = self._scores
            if compiled_chain is not None:
                out = np.empty_like(scores)
                compiled_chain.marginals(scores, self.transitions, out)
            else:  # (the same floats: an array of the reference's lists holds them bit for bit)
                table = reference_chain.marginals(scores.tolist(), self.transitions.tolist())
                out = np.array(table, dtype=np.float64).reshape(scores.shape)
            self._array = out
        return self._array

    def marginal_table(self) -> list[list[float]]:
        """Per block, the marginal probability of each label (in `labels()` order), computed once per sequence."""
        if self._marginals is None:
            self._marginals = self.marginal_array().tolist()
        return self._marginals

    def marginal_column(self, label: str) -> list[float]:
        """Every block's marginal probability of `label`."""
        column: list[float] = self.marginal_array()[:, self._label_index[label]].tolist()
        return column

    def label_marginals(self, labels: Sequence[str]) -> list[float]:
        """Block i's marginal probability of labels[i], for every block: `marginal(labels[i], i)` in one call."""
        index = self._label_index
        table = self.marginal_array()
        values: list[float] = table[np.arange(len(labels)), [index[y] for y in labels]].tolist()
        return values

    def marginal_row(self, position: int) -> dict[str, float]:
        """{label: marginal probability} of one block."""
        return dict(zip(self._labels, self.marginal_array()[position].tolist()))

    def marginal(self, label: str, position: int) -> float:
        value: float = self.marginal_array().item(position, self._label_index[label])
        return value

    def marginals_at(self, labels: Sequence[str], positions: list[int]) -> list[list[float]]:
        """Per label of `labels`, its marginal probability at each block of `positions`: one call for what
        `marginal` answers one at a time."""
        ys = [self._label_index[label] for label in labels]
        # (rows then columns: np.ix_ would build the same (positions, ys) table at 40,000 instructions a call)
        columns: list[list[float]] = self.marginal_array()[positions][:, ys].T.tolist()
        return columns

    def labels(self) -> list[str]:
        return list(self._labels)
