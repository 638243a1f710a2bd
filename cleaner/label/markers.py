"""Segment markers: each kept segment re-typed as header / paragraph / list by a second,
segment-level linear-chain CRF (the "marker typer").

Why a second stage: the block CRF decides keep / drop and where segments start well (its
starts agree with the gold at 98 % of `<p>`/`<li>`/`<h*>` boundaries), but it chooses the
marker from one block and its neighbours. The annotators' choice depends on what only the
whole segment and the whole page show: how long the segment is, how it ends, and how much
of the page the block CRF itself calls lists or headers (`docs/eval.md`, "Where markup is
lost"; `docs/ablation.md`). The typer sees the block CRF's label and marginals at the
segment's first block plus those segment and page attributes, and labels the sequence of
a page's segments. It never changes which text is kept or where a segment starts, so word
F1 is untouched.

It is trained in `cleaner train` on the block CRF's own (in-sample) labelling of the
training pages whose gold has markers: measured on validation fold 1, as good as training
it on cross-validated labellings, and no cross-validation is needed to train a model.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

import pycrfsuite  # type: ignore[import-untyped]
from mypy_extensions import mypyc_attr

from ..config import Config
from ..labels import CONTINUATION, HEADER, LIST, OTHER, PARAGRAPH
from ..page.feature_names import PrefixCache
from ..page.segment import Block, BlockTable
from ..page.text import compiled_text_module
from .crf import AttributeIds, ScoringTagger, ThreadTaggers, Vocabulary, read_crfsuite

MARKERS: Final = (HEADER, PARAGRAPH, LIST)

# (first block, end) of each kept segment, end exclusive.
Span = tuple[int, int]


def segment_spans(labels: Sequence[str]) -> list[Span]:
    """The segments of a labelling as the typer reads them: a marker label opens one,
    `continuation` extends it, `other` ends it. (cleaner.output.assemble also joins a continuation
    that follows dropped blocks to the segment before; the typer reads the unbroken run.)"""
    spans: list[Span] = []
    start = None
    for i, y in enumerate(labels):
        if y in MARKERS:
            if start is not None:
                spans.append((start, i))
            start = i
        elif y != CONTINUATION and start is not None:
            spans.append((start, i))
            start = None
    if start is not None:
        spans.append((start, len(labels)))
    return spans


def gold_markers(gold_labels: Sequence[str]) -> list[str | None]:
    """Per block, the marker of the gold segment it belongs to (None for `other`)."""
    out: list[str | None] = []
    current = PARAGRAPH
    for y in gold_labels:
        if y in MARKERS:
            current = y
        out.append(None if y == OTHER else current)
    return out


@dataclass(frozen=True)
class MarkerSettings:
    word_bins: tuple[int, ...]
    ancestor_tags: frozenset[str]
    c1: float
    c2: float
    max_iterations: int

    def __reduce__(self) -> tuple:
        # (as cleaner.label.decide.DecisionSettings's: a frozen class that mypyc compiles)
        return (MarkerSettings, (self.word_bins, self.ancestor_tags, self.c1, self.c2, self.max_iterations))

    @classmethod
    def from_config(cls, config: Config) -> MarkerSettings | None:
        """The [markers] settings, or None when the typer is disabled."""
        m = config["markers"]  # checked by load_config (cleaner/settings.py)
        if not m["enabled"]:
            return None
        return cls.from_meta(m)

    @classmethod
    def from_meta(cls, m: dict) -> MarkerSettings:
        return cls(tuple(int(b) for b in m["word_bins"]), frozenset(m["ancestor_tags"]), float(m["c1"]),
                   float(m["c2"]), int(m["max_iterations"]))

    def to_meta(self) -> dict:
        """What a model's sidecar keeps, so that the typer reads pages as it was trained."""
        return {"word_bins": list(self.word_bins), "ancestor_tags": sorted(self.ancestor_tags), "c1": self.c1,
                "c2": self.c2, "max_iterations": self.max_iterations}


# What the typer reads of one block: its attributes and its layout signature (innermost containers and div group).
BlockLayout = tuple[tuple[str, ...], tuple[tuple[str, ...], int]]


# The attribute a tag gives under each of block_attributes' prefixes, made once per tag: a segment asks about ten,
# and a name made anew per segment was a string to build and then to hash when TyperNames.attrs looks its tuple up.
_ANCESTOR_NAMES: Final[dict[str, str]] = {}
_CONTAINER_NAMES: Final[dict[str, str]] = {}
_INNER_NAMES: Final[dict[str, str]] = {}
_OPENED_NAMES: Final[dict[str, str]] = {}
_CLOSED_NAMES: Final[dict[str, str]] = {}
_TAG_NAMES_ENTRIES: Final = 5_000  # each (custom element names are any number)


def _tag_name(names: dict[str, str], prefix: str, tag: str) -> str:
    name = names.get(tag)
    if name is None:
        if len(names) >= _TAG_NAMES_ENTRIES:
            names.clear()
        name = names[tag] = prefix + tag
    return name


# (ancestor tags, containers, the typer's ancestor tags) -> the attributes they give (_context_names). Blocks of one
# element share their ancestors and containers, and the walk hands the same ancestor set back for the same chain of
# tags on every page (compiled_walk._WIDENED): intersecting, sorting and naming them at every segment cost about
# 5,000 instructions a segment. Bounded like the names.
_CONTEXT_NAMES: Final[dict[tuple[frozenset[str], tuple[str, ...], frozenset[str]], tuple[str, ...]]] = {}


def _context_names(ancestors: frozenset[str], cont: tuple[str, ...], ancestor_tags: frozenset[str]) -> tuple[str, ...]:
    """The attributes of a block's ancestors among `ancestor_tags` (sorted), of its three innermost containers and of
    the innermost one."""
    key = (ancestors, cont, ancestor_tags)
    names = _CONTEXT_NAMES.get(key)
    if names is None:
        found = [_tag_name(_ANCESTOR_NAMES, "anc=", t) for t in sorted(ancestors & ancestor_tags)]
        found += [_tag_name(_CONTAINER_NAMES, "c=", t) for t in cont[-3:]]
        found.append(_tag_name(_INNER_NAMES, "inner=", cont[-1] if cont else "-"))
        if len(_CONTEXT_NAMES) >= _TAG_NAMES_ENTRIES:
            _CONTEXT_NAMES.clear()
        names = _CONTEXT_NAMES[key] = tuple(found)
    return names


def block_attributes(block: Block, settings: MarkerSettings) -> BlockLayout:
    """What the typer reads from a segment's first block (its markup), and the block's
    layout signature (its four innermost containers and its div group: list items of one list share it), compared
    as it is, as typed_rows compares it (a hash of it, compared until stop 70, could only differ where two hashes
    collide)."""
    cont = block.containers
    attrs = list(_context_names(block.ancestors, cont, settings.ancestor_tags))
    attrs += [_tag_name(_OPENED_NAMES, "open=", t) for t in block.opened]
    attrs += [_tag_name(_CLOSED_NAMES, "close=", t) for t in block.closed]
    return tuple(attrs), (cont[-4:], block.div_group)


def _bin(value: int, bins: tuple[int, ...]) -> str:
    """The smallest bin at or above `value` ("more" above the last)."""
    for b in bins:
        if value <= b:
            return str(b)
    return "more"


def _decile(p: float) -> str:
    return str(min(9, int(p * 10)))


def _decile_names(prefix: str) -> tuple[str, ...]:
    """`prefix + _decile(p)` indexed by int(p * 10) for p in [0, 1] (1.0 -> index 10 -> "9")."""
    return tuple(prefix + str(min(9, k)) for k in range(11))


# per marker, in MARKERS order, the names of its marginal's deciles: built once, not per segment
_P_NAMES: Final = tuple((y, _decile_names(f"p.{y}=")) for y in MARKERS)
_CAPITALISED: Final = _decile_names("capitalised=")
# How str.split() sees an ASCII character, one byte each: whitespace -> " ", uppercase
# (str.isupper) -> "U", anything else -> "x".
# (bytes.translate takes a 256-byte table; only the ASCII half is ever read.)
_ASCII_SHAPE: Final = (bytes(32 if chr(b).isspace() else 85 if chr(b).isupper() else 120 for b in range(128))
                       + b"x" * 128)


# a sentence ends inside the segment: running text, not a heading (blocks' whitespace is normalised)
_SENTENCE_INSIDE: Final = re.compile(r"[.!?] ")


def text_shape(text: str) -> tuple[int, int, bool, bool]:
    """(the words of `text.split()`, those that start with an uppercase letter, `text.isupper()`, whether a sentence
    ends inside it): the readable reference of compiled_text.text_shape, which _text_shape reads when it is built."""
    # A word starts at the first character or after whitespace, so ASCII text (most segments) needs no split:
    # count those starts in a byte string of its character classes (no object per word).
    if text.isascii():
        shape = text.encode().translate(_ASCII_SHAPE)
        upper = shape.count(b" U") + shape.startswith(b"U")
        n_words = upper + shape.count(b" x") + shape.startswith(b"x")
    else:
        words = text.split()
        upper = sum(1 for w in words if w[0].isupper())
        n_words = len(words)
    return n_words, upper, text.isupper(), _SENTENCE_INSIDE.search(text) is not None


_COMPILED_TEXT: Final = compiled_text_module()
_shape_of: Callable[[str], tuple[int, int, bool, bool]] = (
    text_shape if _COMPILED_TEXT is None else _COMPILED_TEXT.text_shape)


def _last_kind(last: str) -> str:
    """How a segment's text ends: `last=` + this."""
    return "." if last in ".!?" else ":" if last == ":" else "a" if last.isalpha() else "0" if last.isdigit() else "o"


def _first_kind(first: str) -> str:
    """How a segment's text starts: `first=` + this."""
    return "U" if first.isupper() else "l" if first.islower() else "0" if first.isdigit() else "o"


def _text_shape(text: str, names: TyperNames) -> list:
    if not text:
        return []
    last, first = text[-1], text[0]
    n_words, upper, allcaps, sentence_inside = _shape_of(text)
    capitalised = upper / n_words if n_words else 0.0  # the share of words that start with an uppercase letter
    return [
        names.last[_last_kind(last)],
        names.first[_first_kind(first)],
        names.capitalised[int(capitalised * 10)],  # a share: in [0, 1]
        names.allcaps[1 if allcaps else 0],
        names.sentence_inside[1 if sentence_inside else 0],
    ]


_ATTRS_CACHE_ENTRIES: Final = 20_000  # (block markup is an open vocabulary: the cache of its ids is bounded)


class TyperNames:
    """Every attribute a segment's row can carry, in one naming: readable (what CRFsuite trains on and its tagger
    reads), or with `ids` (a typer's AttributeIds) as the ids the typer scores. Named once here, so that cleaning
    a page neither builds the rows' attribute strings nor looks them up (the encoding of readable rows cost 20,000
    instructions a segment, docs/speed.md, stop 55): the rows come out as ids, in the readable rows' order, so a
    segment's scores are summed in the same order and are equal to the last bit."""

    def __init__(self, settings: MarkerSettings, ids: AttributeIds | None = None) -> None:
        self.ids = ids
        name = self.name
        bins = settings.word_bins
        self.top = top = max(bins) if bins else 0  # (above the largest bin: "more")

        def table(prefix: str) -> list:  # indexed by a value up to the largest bin; [top + 1] is "more"
            return [name(prefix + _bin(v, bins)) for v in range(top + 2)]

        self.bias = name("bias")
        self.crf = PrefixCache("crf=", ids)
        self.words = table("words=")
        self.blocks = table("blocks=")
        self.segments = table("page.segments=")
        self.p = [(y, [name(n) for n in deciles]) for y, deciles in _P_NAMES]
        self.last = {k: name("last=" + k) for k in ".:a0o"}
        self.first = {k: name("first=" + k) for k in "Ul0o"}
        self.capitalised = [name(n) for n in _CAPITALISED]
        self.allcaps = (name("allcaps=False"), name("allcaps=True"))
        self.sentence_inside = (name("sentence-inside=False"), name("sentence-inside=True"))
        self.same_layout = (name("same-layout=False"), name("same-layout=True"))
        self.first_segment = name("first-segment")
        self.last_segment = name("last-segment")
        self.share = {y: [name(n) for n in _decile_names(f"page.{y}=")] for y in MARKERS}
        self.in_li = [name(n) for n in _decile_names("page.in-li=")]
        self._attrs: dict[tuple[str, ...], list] = {}  # a block's markup attributes (block_attributes) -> their ids
        # What typed_rows reads in place of block_attributes and _text_shape's dictionaries: the tags opened and closed
        # named per tag, a block's ancestors and containers per (ancestors, containers), the first and last characters
        # of a text by their code when ASCII (most texts; the others are asked as _text_shape asks).
        self.ancestor_tags = settings.ancestor_tags
        self.opened = PrefixCache("open=", ids)
        self.closed = PrefixCache("close=", ids)
        self._contexts: dict[tuple[frozenset[str], tuple[str, ...]], BlockContext] = {}
        self.last_ascii = [self.last[_last_kind(chr(c))] for c in range(128)]
        self.first_ascii = [self.first[_first_kind(chr(c))] for c in range(128)]

    def name(self, attribute: str):
        return attribute if self.ids is None else self.ids[attribute]

    def binned(self, table: list, value: int):
        """`table`'s name of `value` (one of `words`, `blocks`, `segments`)."""
        return table[value if value <= self.top else self.top + 1]

    def attrs(self, attrs: tuple[str, ...]) -> list:
        """A block's markup attributes (block_attributes) in this naming."""
        if self.ids is None:
            return list(attrs)
        named = self._attrs.get(attrs)
        if named is None:
            if len(self._attrs) >= _ATTRS_CACHE_ENTRIES:
                self._attrs.clear()
            named = self._attrs[attrs] = list(map(self.ids.__getitem__, attrs))
        return named

    def context(self, ancestors: frozenset[str], containers: tuple[str, ...]) -> BlockContext:
        """What typed_rows reads of a block's ancestors and containers (bounded as `attrs`)."""
        key = (ancestors, containers)
        context = self._contexts.get(key)
        if context is None:
            if len(self._contexts) >= _ATTRS_CACHE_ENTRIES:
                self._contexts.clear()
            attrs = _context_names(ancestors, containers, self.ancestor_tags)
            context = self._contexts[key] = BlockContext(
                [self.name(a) for a in attrs], "anc=li" in attrs, containers[-4:])
        return context


class BlockContext:
    """What a segment's first block's ancestors and containers give its row (TyperNames.context, for typed_rows): the
    attributes of _context_names in a naming, whether it sits in a list item (segment_features' `"anc=li" in attrs`:
    only _context_names' attributes can be that one) and the containers its layout signature reads."""

    def __init__(self, names: list, in_li: bool, tail: tuple[str, ...]) -> None:
        self.names = names
        self.in_li = in_li
        self.tail = tail


_READABLE: Final[dict[MarkerSettings, TyperNames]] = {}


def readable_names(settings: MarkerSettings) -> TyperNames:
    """The readable naming of `settings` (built once)."""
    names = _READABLE.get(settings)
    if names is None:
        names = _READABLE[settings] = TyperNames(settings)
    return names


def segment_features(
    spans: list[Span],
    labels: Sequence[str],
    marginals_at: Callable[[Sequence[str], list[int]], list[list[float]]],
    block_attrs: Callable[[int], BlockLayout],
    texts: Sequence[str],
    word_counts: Sequence[int],
    settings: MarkerSettings,
    names: TyperNames | None = None,
) -> list[list]:
    """One attribute list per segment (see the module docstring), readable, or in `names`' naming.
    `marginals_at(ys, positions)[k][m]`: the marginal probability of label ys[k] at block positions[m]."""
    if not spans:
        return []
    if names is None:
        names = readable_names(settings)
    n = len(spans)
    # Every segment's first block's marginals, asked at once: asked one at a time, three a segment, they cost
    # about 0.2 M instructions a page.
    starts = [s for s, _ in spans]
    columns = marginals_at([y for y, _ in names.p], starts)
    marker_columns = [(y, deciles, column) for (y, deciles), column in zip(names.p, columns)]
    first = [block_attrs(s) for s, _ in spans]
    crf = [labels[s] for s, _ in spans]
    # share of segments inside a list item ("li" is one of the configured ancestor_tags)
    in_li = sum(1 for attrs, _ in first if "anc=li" in attrs) / n
    page = [names.share[y][int(crf.count(y) / n * 10)] for y in MARKERS]
    page += [names.in_li[int(in_li * 10)], names.binned(names.segments, n)]
    name = names.name
    rows = []
    prev_sig = None
    for k, ((s, e), (attrs, sig), label) in enumerate(zip(spans, first, crf)):
        if e - s == 1:  # most segments: one block, nothing to join or add up
            text, words = texts[s].strip(), word_counts[s]
        else:
            text, words = " ".join(texts[s:e]).strip(), sum(word_counts[s:e])
        row = [names.bias, names.crf[label], names.binned(names.words, words), names.binned(names.blocks, e - s)]
        for y, deciles, column in marker_columns:
            p = column[k]
            row.append(deciles[int(p * 10)] if 0.0 <= p <= 1.0 else name(f"p.{y}=" + _decile(p)))
        row += names.attrs(attrs)
        row += _text_shape(text, names)
        row.append(names.same_layout[1 if sig == prev_sig else 0])
        prev_sig = sig
        if k == 0:
            row.append(names.first_segment)
        if k == n - 1:
            row.append(names.last_segment)
        rows.append(row + page)
    return rows


def typed_rows(
    spans: list[Span],
    labels: list[str],
    marginals_at: Callable[[Sequence[str], list[int]], list[list[float]]],
    blocks: BlockTable,
    texts: list[str],
    word_counts: list[int],
    names: TyperNames,
) -> list[list]:
    """segment_features' rows in `names`' naming, each segment's first block read from `blocks` itself
    (MarkerTyper.retype, with layout_of's layout). segment_features, with `block_attrs` block_attributes, is its
    readable reference: the same attributes in the same order (tests/test_markers.py). That built each block's
    attributes as strings, a tuple of them, and the tuple's ids looked up by the tuple, and asked `"anc=li" in` the
    tuple; here the ids come from caches of their parts (TyperNames.context, .opened, .closed) and the text's first
    and last characters are classed by tables (segment_features: 2.20 M instructions a page of 2025, ~21,800 a
    segment; this: 1.23 M). The layout signature is compared as what it hashes (the innermost four containers and the
    div group), not as its hash: equal whenever the hashes are but for a collision."""
    if not spans:
        return []
    n = len(spans)
    starts = [s for s, _ in spans]
    columns = marginals_at([y for y, _ in names.p], starts)
    deciles: list[list] = [d for _, d in names.p]
    contexts: list[BlockContext] = []
    crf: list[str] = []
    n_li = n_header = n_paragraph = n_list = 0  # (counted here: three list.count()s compared each label anew)
    ancestors, containers = blocks.ancestors, blocks.containers
    for s in starts:
        context = names.context(ancestors[s], containers[s])
        contexts.append(context)
        if context.in_li:
            n_li += 1
        label = labels[s]
        crf.append(label)
        if label == HEADER:
            n_header += 1
        elif label == PARAGRAPH:
            n_paragraph += 1
        elif label == LIST:
            n_list += 1
    in_li = n_li / n  # (as segment_features: an int over an int)
    page = [names.share[y][int(count / n * 10)] for y, count in zip(MARKERS, (n_header, n_paragraph, n_list))]
    page += [names.in_li[int(in_li * 10)], names.binned(names.segments, n)]
    bias, crf_names, opened, closed = names.bias, names.crf, names.opened, names.closed
    word_names: list = names.words
    block_names: list = names.blocks
    top = names.top
    last_ascii, first_ascii = names.last_ascii, names.first_ascii
    capitalised_names: list = names.capitalised
    # (as lists: a tuple attribute indexed by a variable was boxed into a new tuple at each use, three a segment)
    allcaps_names, sentence_names = list(names.allcaps), list(names.sentence_inside)
    same_layout = list(names.same_layout)
    rows: list[list] = []
    prev_tail: tuple[str, ...] = ()
    prev_group = 0
    for k in range(n):
        s, e = spans[k]
        words = word_counts[s]
        if e - s == 1:
            text = texts[s].strip()
        else:
            text = " ".join(texts[s:e]).strip()
            for i in range(s + 1, e):  # (sum() of a slice: a generic call)
                words += word_counts[i]
        context = contexts[k]
        row = [bias, crf_names[crf[k]], word_names[words if words <= top else top + 1],
               block_names[e - s if e - s <= top else top + 1]]
        for m in range(len(deciles)):
            p: float = columns[m][k]
            row.append(deciles[m][int(p * 10)] if 0.0 <= p <= 1.0 else names.name(f"p.{MARKERS[m]}=" + _decile(p)))
        row.extend(context.names)
        for tag in blocks.opened[s]:
            row.append(opened[tag])
        for tag in blocks.closed[s]:
            row.append(closed[tag])
        if text:  # (_text_shape, its reference)
            c = ord(text[-1])
            row.append(last_ascii[c] if c < 128 else names.last[_last_kind(text[-1])])
            c = ord(text[0])
            row.append(first_ascii[c] if c < 128 else names.first[_first_kind(text[0])])
            n_words, upper, allcaps, sentence_inside = _shape_of(text)
            capitalised = upper / n_words if n_words else 0.0
            row.append(capitalised_names[int(capitalised * 10)])
            row.append(allcaps_names[1 if allcaps else 0])
            row.append(sentence_names[1 if sentence_inside else 0])
        group = blocks.div_group[s]
        row.append(same_layout[1 if k > 0 and group == prev_group and context.tail == prev_tail else 0])
        prev_tail, prev_group = context.tail, group
        if k == 0:
            row.append(names.first_segment)
        if k == n - 1:
            row.append(names.last_segment)
        row.extend(page)
        rows.append(row)
    return rows


class PageLayout:
    """MarkerTyper.layout_of: what the typer reads of block i of a page, block_attributes(blocks.block(i), settings),
    when called; MarkerTyper.retype reads the table itself (typed_rows)."""

    def __init__(self, blocks: BlockTable, settings: MarkerSettings) -> None:
        self.blocks = blocks
        self.settings = settings

    def __call__(self, i: int) -> BlockLayout:
        return block_attributes(self.blocks.block(i), self.settings)


def table_marginals(table: Sequence[Mapping[str, float]]) -> Callable[[Sequence[str], list[int]], list[list[float]]]:
    """segment_features' `marginals_at` read from per-block {label: marginal} (as Labelling.marginals holds them)."""
    return lambda ys, positions: [[table[i][y] for i in positions] for y in ys]


def train_typer(sequences: list[tuple[list[list[str]], list[str]]], settings: MarkerSettings) -> bytes:
    """Train the typer on (segment attributes, gold markers) of each page; model bytes.
    Deterministic like the block CRF (L-BFGS, same input order)."""
    trainer = pycrfsuite.Trainer(verbose=False)
    for x, y in sequences:
        trainer.append(x, y)
    trainer.set_params({"c1": settings.c1, "c2": settings.c2, "max_iterations": settings.max_iterations})
    with tempfile.TemporaryDirectory(prefix="markers-") as tmp:
        path = os.path.join(tmp, "markers.crfsuite")
        trainer.train(path)
        with open(path, "rb") as fh:
            return fh.read()


def training_sequence(labels, marginals_at, block_attrs, texts, word_counts, gold_labels, settings):
    """(attributes, targets) of one training page's segments, or None when it has none. The
    target is the marker of the gold segment the first block belongs to; a segment that
    starts on gold boilerplate keeps the block CRF's marker (nothing to learn from it)."""
    spans = segment_spans(labels)
    if not spans:
        return None
    gm = gold_markers(gold_labels)
    x = segment_features(spans, labels, marginals_at, block_attrs, texts, word_counts, settings)
    return x, [gm[s] or labels[s] for s, _ in spans]


@mypyc_attr(allow_interpreted_subclasses=True)  # (a test checks its tagging through a subclass)
class MarkerTyper:
    """A trained typer, opened from its bytes. It tags as the block CRF does (cleaner.label.crf.ScoringTagger: the
    state scores summed from the model's weights, the chain compiled), with CRFsuite's labels to the last bit:
    CRFsuite's own tagger cost 4 µs a segment in building its items from the attribute strings alone."""

    def __init__(self, data: bytes, settings: MarkerSettings):
        self.data = data
        self.settings = settings
        try:  # read now: a corrupt typer fails at load time
            self._model = read_crfsuite(data)
        except Exception as exc:
            raise ValueError(f"not a CRFsuite model: {exc}") from exc
        self._vocabulary = Vocabulary([self._model])
        self._ids = AttributeIds(self._vocabulary, encoded=False)  # (the typer's attributes are stored readable)
        self._names = TyperNames(settings, self._ids)  # (its rows come out as ids)
        self._taggers = ThreadTaggers(self._vocabulary, self._model)  # (one per thread, the weights shared)
        self._tagger()

    def _tagger(self) -> ScoringTagger:
        return self._taggers.tagger()

    def layout_of(self, blocks: BlockTable) -> Callable[[int], BlockLayout]:
        """What the typer reads of block i of `blocks`, computed only for the blocks asked
        (a segment's first block)."""
        return PageLayout(blocks, self.settings)

    def retype(self, labels: list[str], marginals_at, block_attrs, texts, word_counts) -> list[str]:
        """`labels` with each segment's first block re-typed; everything else unchanged. `marginals_at`: as
        segment_features reads it (ScoringTagger.marginals_at)."""
        spans = segment_spans(labels)
        if not spans:
            return labels
        if isinstance(block_attrs, PageLayout) and isinstance(texts, list) and isinstance(word_counts, list):
            x = typed_rows(spans, labels, marginals_at, block_attrs.blocks, texts, word_counts, self._names)
        else:
            x = segment_features(spans, labels, marginals_at, block_attrs, texts, word_counts, self.settings,
                                 self._names)
        out = list(labels)
        tagger = self._tagger()
        tagger.set(x)
        for (s, _), marker in zip(spans, tagger.tag()):
            out[s] = marker
        return out
