"""Block features: Victor's families plus the strongest of Dragnet's, as CRFsuite attributes.

Every feature is a string attribute `family.name=value` (binary in the CRF). Numeric values
are mapped to bins from `conf/` ("largest bin less-or-equal to the value"), as Victor did,
so the CRF learns thresholds without scaling issues. Each block also carries the features
of its neighbours within `[features] window`, prefixed with the offset (`-1:` / `+1:`),
restricted to `window_families`.

Families (the prefix of every attribute, used for ablation):
  container  ancestor classes (p, a, u, img, header, bold, italic, list, form)
  split      p / br / hr / inline / block tags between the previous block and this one
  char       character classes, absolute and relative
  token      whitespace-token classes, absolute and relative
  sentence   sentence count, mean length, begins/ends like a sentence
  dup        duplicate text within the document
  regexp     url, date, time, bullet
  group      div-group and td-group word ratios (words outside links)
  position   relative position in the document
  document   document-level sizes
  tag        the innermost tag and its parent (Dragnet-era markup cue)
  idclass    id/class tokens of the ancestors (Dragnet)
  density    text density per 80-char line and link density of block and group (Kohlschütter/Dragnet)
  cue        what today's boilerplate is called ([features.cues]), in id/class tokens, short texts, the
             page's type, repeated items and code (cleaner.page.cues)
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

# scripts/build_native.py compiles this module with mypyc; the classes that subclass dict or list stay
# interpreted classes (mypyc_attr), the rest become C types. Nothing here changes how the module runs as Python.
from mypy_extensions import mypyc_attr

from .. import compiled_twin
from ..config import Config, load_config
from .cues import CueSettings, block_cues, idclass_cues, page_cue_context, text_cues
from .feature_names import AttributeNames, PrefixCache
from .page_marks import PageMarks
from .segment import BlockCounts, BlockTable
from .text import compiled_text_module, count_words, measure_text

FAMILIES: Final = (
    "container", "split", "char", "token", "sentence", "dup", "regexp", "group",
    "position", "document", "tag", "idclass", "density", "cue",
)  # fmt: skip
# `cue` is opt-in (`--families`) until measured on all folds (docs/modern.md). The `run` (inline-run density),
# `cetr` (CETR tag ratios) and `title` (the block against the page's <title>) families were measured and
# removed (docs/ablation.md keeps their figures).
DEFAULT_FAMILIES: Final = tuple(f for f in FAMILIES if f != "cue")
FEATURE_VERSION: Final = "1"
# The caches of a text's attributes and of a markup context's (AttributeNames.text_cache; container_cache and
# idclass_cache, each) are bounded, so memory stays flat over millions of pages, and small: on shuffled shared pages
# 2,000 entries each cleaned about 4 % faster than 30,000 and 20,000 (docs/speed.md, stop 74). What a small cache loses
# in hits (a site's boilerplate met again pages later) costs less than the CPU cache misses of a dict of tens of
# thousands of entries, each holding lists of ids, read at every block.
TEXT_CACHE_ENTRIES: Final = 2_000
CONTEXT_CACHE_ENTRIES: Final = 2_000

# What a tag opened or closed before a block adds to the split family's counts (FeatureExtractor._split_kind): p, br
# or hr (one at most), and inline or block (one at most).
SPLIT_P: Final = 1
SPLIT_BR: Final = 2
SPLIT_HR: Final = 4
SPLIT_INLINE: Final = 8
SPLIT_BLOCK: Final = 16


class FamilySwitches:
    """Which of the FAMILIES a set holds, one field each: the features read them at every block, where a lookup in
    the set cost 0.3-0.5 M instructions a page."""

    def __init__(self, families: frozenset[str]) -> None:
        self.container = "container" in families
        self.split = "split" in families
        self.char = "char" in families
        self.token = "token" in families
        self.sentence = "sentence" in families
        self.dup = "dup" in families
        self.regexp = "regexp" in families
        self.group = "group" in families
        self.position = "position" in families
        self.document = "document" in families
        self.tag = "tag" in families
        self.idclass = "idclass" in families
        self.density = "density" in families
        self.cue = "cue" in families


@mypyc_attr(native_class=False)
class AttributeRows(list):
    """A page's attribute rows, one list per block, as `FeatureExtractor.extract` makes them: each
    row holds the block's own attributes first and its neighbours' (`-1:`... `+1:`...) after them,
    and `own_counts[i]` says how many of row i's attributes are its own (a model that reads only
    those is given `row[:own_counts[i]]`)."""

    __slots__ = ("own_counts",)
    own_counts: list[int]


@dataclass(slots=True)
class AttributeParts:
    """A page's attributes before the neighbour window is laid on (FeatureExtractor.extract_parts)."""

    shared: list[list]  # per block, the window families' attributes: readable, or named by `window`
    private: list[list]  # per block, the others, named with the codec (the bias first: never empty)
    window: Any = None  # what named `shared` (extract_parts' `window`), None: readable
    # The compiled pass's rows (compiled_rows.RowPass.run), `shared` and `private` then empty: (shared ids, their rows'
    # starts, whether a shared row is empty, private ids, their rows' starts), NumPy intp arrays and a bool.
    flat: Any = None


def block_columns(blocks: BlockTable, counts: BlockCounts) -> tuple[list, ...]:
    """What compiled_rows.RowPass reads of the blocks, the table's own lists (texts, ancestors, opened and closed tags,
    containers, artificial, in_link, id/class tokens, div and td groups, words, words in links, repeat, repeated
    item, characters): read here, where each is a C struct's field, and not from Cython, where each is a generic
    attribute lookup."""
    return (blocks.text, blocks.ancestors, blocks.opened, blocks.closed, blocks.containers, blocks.artificial,
            blocks.in_link, blocks.idclass, blocks.div_group, blocks.td_group, counts.words, counts.link_words,
            blocks.repeat, blocks.repeat_item, counts.chars)


def own_attribute_count(row) -> int:
    """How many of a readable row's attributes are the block's own: the neighbours' come after them
    and are the only ones that start with their offset's sign."""
    for k, attribute in enumerate(row):
        if attribute[0] in "+-":
            return k
    return len(row)


def compiled_measure(sentence_split: str, sentence_end: str) -> Callable[[str, bool], tuple[int, ...]] | None:
    """cleaner/page/compiled_text.pyx's measure_text if it is built and implements these sentence patterns."""
    compiled = compiled_text_module()
    if compiled is None or (sentence_split, sentence_end) != (compiled.SENTENCE_SPLIT, compiled.SENTENCE_END):
        return None
    measure: Callable[[str, bool], tuple[int, ...]] = compiled.measure_text
    return measure


class FeatureExtractor:
    """Compiled settings (bins, regexps, tag classes) turned into a fast per-document function."""

    def __init__(self, config: Config | None = None, families: tuple[str, ...] | None = None):
        self.config = config or load_config()
        fc = self.config["features"]
        self.families = frozenset(families or DEFAULT_FAMILIES)
        rx = fc["regexp"]
        self.re_url = re.compile(rx["url"])
        self.url_hints = tuple(h.lower() for h in fc["url_hints"])
        self.re_date = re.compile(rx["date"])
        self.re_time = re.compile(rx["time"])
        self.re_bullet = re.compile(rx["bullet"])
        self.re_sent_end = re.compile(rx["sentence_end"])
        self.re_sent_split = re.compile(rx["sentence_split"])
        self.inline = frozenset(fc["inline_tags"])
        self.block_tags = frozenset(self.config["segment"]["block_tags"])
        self.split_kinds: dict[str, int] = {}  # tag -> _split_kind(tag), bounded like the context caches
        self.window = int(fc["window"])
        self.window_families = frozenset(fc["window_families"]) & self.families
        self.on = FamilySwitches(self.families)
        self.windowed = FamilySwitches(self.window_families)
        # Sentence ends are counted once per text for `sentence.end` and `document.sentence-count`.
        self.count_sentence_ends = not self.families.isdisjoint(("sentence", "document"))
        self.max_idclass = int(fc["max_idclass_tokens_per_block"])
        self.per_character_tokens = bool(fc["per_character_tokens"])
        self.cues = CueSettings(self.config)
        # The text's counts in one compiled pass (cleaner/page/compiled_text.pyx) when it implements the configured
        # sentence patterns, else by the readable reference, cleaner.page.text.measure_text.
        self.compiled_measure = compiled_measure(rx["sentence_split"], rx["sentence_end"])
        compiled = compiled_text_module()
        self.count_words: Callable[[str], int] = compiled.count_words if compiled is not None else count_words
        # The date, time and bullet regexps search only the texts their compiled gates pass (a necessary condition,
        # read in one pass: compiled_text.may_match_date, may_match_time, may_match_bullet) when the gates are written
        # for the configured patterns; else every text (with a digit, for dates and times), as the reference does.
        self.may_date: Callable[[str], bool] | None = (
            compiled.may_match_date if compiled is not None and rx["date"] == compiled.DATE else None)
        self.may_time: Callable[[str], bool] | None = (
            compiled.may_match_time if compiled is not None and rx["time"] == compiled.TIME else None)
        self.may_bullet: Callable[[str], bool] | None = (
            compiled.may_match_bullet if compiled is not None and rx["bullet"] == compiled.BULLET else None)
        self._prefixed: dict[tuple[int, int], PrefixCache] = {}
        self._names: dict[tuple[int, int], AttributeNames] = {}

    def attribute_names(self, codec, window=None) -> AttributeNames:
        """The names this extractor's rows carry with `codec` and `window` (extract_parts' arguments), made once."""
        return self._naming(codec, window)

    def _naming(self, codec, window=None) -> AttributeNames:
        key = (id(codec), id(window))  # (the names hold both, so their ids are not reused meanwhile)
        names = self._names.get(key)
        if names is None:
            names = self._names[key] = AttributeNames(self.config, self.window_families, self.cues, codec, window)
            names.text_attributes = self._compiled_text_attributes(names)
            if window is not None:
                names.row_pass = self._compiled_row_pass(names)
        return names

    def _compiled_row_pass(self, names: AttributeNames) -> Any:
        """compiled_rows.RowPass for a model's naming (a codec and a window), when it is built; else None (the
        reference, parts_reference, runs)."""
        compiled = compiled_twin("page.compiled_rows")
        if compiled is None:
            return None
        return compiled.RowPass(self, names)

    def _compiled_text_attributes(self, names: AttributeNames) -> Any:
        """compiled_text.TextAttributes for `names` when it computes what _text_features does: built, with this
        extractor's sentence patterns (compiled_measure) and regexp gates; else None (the reference runs)."""
        compiled = compiled_text_module()
        if compiled is None or self.compiled_measure is None:
            return None
        return compiled.TextAttributes(self, names, text_cues)

    # -- per block ---------------------------------------------------------------------

    def _block_own(self, blocks: BlockTable, i: int, counts: BlockCounts, shared: list, private: list,
                   v: AttributeNames, page_named: dict[int, tuple[list, list]]) -> int:
        """Append block i's own attributes: `shared` ones are also given to neighbours. Returns the
        number of sentence ends in the block's text (for the page's `document.sentence-count`). `page_named`: the
        page's id/class attributes so far, by the identity of a block's tokens (the caller's, one per page)."""
        on = self.on
        windowed = self.windowed
        text = blocks.text[i]
        if on.container:
            out = shared if windowed.container else private
            anc = blocks.ancestors[i]
            names = v.container_cache.get(anc)
            if names is None:
                names = self.container_names(v, anc)
            out.extend(names)
        if on.split:
            out = shared if windowed.split else private
            p = br = hr = inline = block = 0
            kinds = self.split_kinds
            tag_counts = blocks.opened[i]
            for _ in range(2):  # the opened tags, then the closed (a loop over a tuple of the two: a generic iterator)
                for tag, n in tag_counts.items():
                    kind = kinds.get(tag)
                    if kind is None:
                        kind = self._split_kind(tag)
                    if not kind:
                        continue
                    if kind & SPLIT_P:
                        p += n
                    elif kind & SPLIT_BR:
                        br += n
                    elif kind & SPLIT_HR:
                        hr += n
                    if kind & SPLIT_INLINE:
                        inline += n
                    elif kind & SPLIT_BLOCK:
                        block += n
                tag_counts = blocks.closed[i]
            # Zero counts are left out: absence encodes zero (reference coding), which
            # halves the attributes per block and the CRF's time. (One test a count: a zip over the counts cost
            # two iterators and a tuple a block, 0.8 M instructions a page of 2025.)
            t_split = v.t_split
            if p:
                out.append(t_split[0][p])
            if br:
                out.append(t_split[1][br])
            if hr:
                out.append(t_split[2][hr])
            if inline:
                out.append(t_split[3][inline])
            if block:
                out.append(t_split[4][block])
        # Attributes that depend on the text alone are cached across blocks and pages:
        # boilerplate ("Home", "|", "Contact us") repeats, 45% of blocks in the shared pages.
        cached = v.text_cache.get(text)
        if cached is None:
            cached = self.text_names(v, text, counts.words[i], counts.chars[i])
        shared.extend(cached[0])
        private.extend(cached[1])
        if on.tag:
            out = shared if windowed.tag else private
            cont = blocks.containers[i]
            out.append(v.tag_self[cont[-1] if cont else "-"])
            out.append(v.tag_parent[cont[-2] if len(cont) > 1 else "-"])
            artificial = blocks.artificial[i]
            if artificial:
                out.append(v.tag_artificial[artificial])
        if on.density and blocks.in_link[i]:
            (shared if windowed.density else private).append(v.in_link)
        tokens = blocks.idclass[i]
        if tokens and (on.idclass or on.cue):
            # The walk gives the blocks of an element, and of its like siblings, one tuple of tokens: three blocks
            # in four find it named on this page by its identity (`page_named`, alive no longer than the blocks),
            # without the cut to max_idclass (a new tuple: most blocks have more) and the hash of its tokens.
            key = id(tokens)
            named = page_named.get(key)
            if named is None:
                named = page_named[key] = self.idclass_names(v, tokens)
            if named[0]:
                (shared if windowed.idclass else private).extend(named[0])
            if named[1]:
                (shared if windowed.cue else private).extend(named[1])
        return cached[2]

    # -- what a cache does not hold yet: named once, for the reference and the compiled pass alike -----------

    def container_names(self, v: AttributeNames, anc: frozenset) -> list:
        """The `container` attributes of a block whose ancestor tags are `anc`, cached in `v` (bounded)."""
        names = [name for tag, name in v.containers if tag in anc]
        names += [name for name, tags in v.classes if not anc.isdisjoint(tags)]
        if len(v.container_cache) >= CONTEXT_CACHE_ENTRIES:
            v.container_cache.clear()
        v.container_cache[anc] = names
        return names

    def text_names(self, v: AttributeNames, text: str, n_words: int, n_chars: int) -> tuple[list, list, int]:
        """(shared attributes, private attributes, sentence ends) of a block's `text`, cached in `v` (bounded): in one
        compiled call (compiled_text.TextAttributes) when it is built, else by _text_features."""
        compiled = v.text_attributes
        if compiled is not None:
            cached: tuple[list, list, int] = compiled.attributes(text, n_words, n_chars)
        else:
            sh: list = []
            pr: list = []
            cached = (sh, pr, self._text_features(text, n_words, n_chars, sh, pr, v))
        cache = v.text_cache
        if len(cache) >= TEXT_CACHE_ENTRIES:
            cache.clear()
        cache[text] = cached
        return cached

    def idclass_names(self, v: AttributeNames, tokens: tuple[str, ...]) -> tuple[list, list]:
        """(the `idclass` attributes, the `cue` ones) of a block's id/class `tokens` (the first max_idclass of them),
        cached in `v` by the tokens (bounded)."""
        if len(tokens) > self.max_idclass:
            tokens = tokens[: self.max_idclass]
        named = v.idclass_cache.get(tokens)
        if named is None:
            on = self.on
            named = (v.idclass.names_of(tokens) if on.idclass else [],
                     idclass_cues(v.cues, tokens) if on.cue else [])
            if len(v.idclass_cache) >= CONTEXT_CACHE_ENTRIES:
                v.idclass_cache.clear()
            v.idclass_cache[tokens] = named
        return named

    def _split_kind(self, tag: str) -> int:
        """The split counts `tag` adds to (SPLIT_*), found once per tag: a block's tags were compared with three
        names and looked up in two sets each."""
        kind = SPLIT_P if tag == "p" else SPLIT_BR if tag == "br" else SPLIT_HR if tag == "hr" else 0
        if tag in self.inline:
            kind |= SPLIT_INLINE
        elif tag in self.block_tags:
            kind |= SPLIT_BLOCK
        if len(self.split_kinds) >= CONTEXT_CACHE_ENTRIES:  # (custom element names are any number)
            self.split_kinds.clear()
        self.split_kinds[tag] = kind
        return kind

    def _may_hold_url(self, text: str) -> bool:
        """Whether the url regexp can match `text`, by cheap substring tests: models were trained
        searching only texts with a dot or an @, and every match holds one of the url hints."""
        if "." not in text and "@" not in text:
            return False
        if not self.url_hints:
            return True
        low = text.lower()
        return any(h in low for h in self.url_hints)

    def _text_features(self, text: str, n_words: int, n_chars: int, shared: list, private: list, v: AttributeNames
                       ) -> int:
        """Attributes of the char, token, sentence, regexp and text-density families; returns the
        number of sentence ends in `text` (0 or 1: the regexp is anchored at the end), which
        `sentence.end` and the page's `document.sentence-count` both read. The readable reference of
        compiled_text.TextAttributes.attributes, which runs in its place when it is built (_naming)."""
        on = self.on
        measure = self.compiled_measure
        m: tuple[int, ...] = (measure(text, self.per_character_tokens) if measure is not None
                              else measure_text(text, self.per_character_tokens, self.re_sent_split, self.re_sent_end))
        ends = m[11] if self.count_sentence_ends else 0
        windowed = self.windowed
        chars = n_chars or 1
        if on.char:
            out = shared if windowed.char else private
            for (t_abs, t_rel), n in zip(v.t_char, m[0:5]):
                if n:
                    out.append(t_abs[n])
                    out.append(t_rel[n * 1000 // chars])
        if on.token:
            out = shared if windowed.token else private
            nt = m[9] or 1
            for (t_abs, t_rel), n in zip(v.t_token, m[5:9]):
                if n:
                    out.append(t_abs[n])
                    out.append(t_rel[n * 1000 // nt])
        if on.sentence:
            out = shared if windowed.sentence else private
            n_sent = m[10]
            out.append(v.t_sent_count[n_sent])
            out.append(v.t_sent_len[n_words // n_sent if n_sent else 0])
            first = text[:1]
            if first.isupper() or (first.isalpha() and not first.islower()):
                out.append(v.sent_begin)
            if ends:
                out.append(v.sent_end)
        if on.regexp:
            out = shared if windowed.regexp else private
            # Cheap gates first: dates and times need a digit, a URL passes _may_hold_url.
            if self._may_hold_url(text) and self.re_url.search(text):
                out.append(v.re_url)
            if m[1]:
                may_date, may_time = self.may_date, self.may_time
                if (may_date is None or may_date(text)) and self.re_date.search(text):
                    out.append(v.re_date)
                if (may_time is None or may_time(text)) and self.re_time.search(text):
                    out.append(v.re_time)
            may_bullet = self.may_bullet
            if (may_bullet is None or may_bullet(text)) and self.re_bullet.match(text):
                out.append(v.re_bullet)
        if on.cue and n_words <= self.cues.max_words:
            text_cues(self.cues, v.cues, text, shared if windowed.cue else private)
        if on.density:
            lines = -(-n_chars // 80) or 1
            (shared if windowed.density else private).append(v.t_density[n_words // lines])
        return ends

    # -- per document ------------------------------------------------------------------

    def counts(self, blocks: BlockTable) -> BlockCounts:
        """The words, characters and words in links of each block."""
        # (Counted afresh, not cached by the text as the attributes are: the compiled count reads an ASCII text at one
        # table lookup a character, cheaper than a lookup in a dict of 30,000 texts, docs/speed.md stop 74.)
        count_words = self.count_words
        words = [count_words(text) for text in blocks.text]
        return BlockCounts(words, [len(text) for text in blocks.text],
                           [n if in_link else 0 for n, in_link in zip(words, blocks.in_link)])

    def _prefixed_rows(self, offset: int, rows: list[list[str]], codec=None) -> list[list]:
        """`rows` as a neighbour at `offset` sees them (`-1:name`...), named with `codec` when given."""
        get = self.neighbour_names(offset, codec).__getitem__
        return [list(map(get, row)) for row in rows]

    def extract(self, blocks: BlockTable, counts: BlockCounts | None = None, codec=None,
                page: PageMarks | None = None) -> AttributeRows:
        """One attribute list per block (own features, then the neighbours' with offsets).
        `page` is what the page's markup says of it (Segmentation.page), read by the `cue` family only.

        With a `codec` (cleaner.label.model.AttributeCodec) the attributes come as the codes the model
        stores, the same as `codec.encode(extract(...))`, named at the source (see `AttributeNames`): a
        block's own attributes are encoded once, not once more for each neighbour that sees them."""
        parts = self.extract_parts(blocks, counts, codec, page)
        shared_rows, n = parts.shared, len(parts.private)
        # `private` rows are named already; the shared attributes are encoded here, once, as their
        # block's own (and below under each neighbour's prefix).
        own = shared_rows if codec is None else codec.encode(shared_rows)
        result = AttributeRows(o + r for o, r in zip(own, parts.private))
        result.own_counts = [len(row) for row in result]
        for k in range(1, self.window + 1):
            # Block i sees block i-k's shared attributes as `-k:...` and block i+k's as `+k:...`.
            before = self._prefixed_rows(-k, shared_rows[: n - k], codec)
            after = self._prefixed_rows(k, shared_rows[k:], codec)
            edge_before, edge_after = self.edge(-k, codec), self.edge(k, codec)
            for i, row in enumerate(result):
                row += before[i - k] if i >= k else edge_before
                row += after[i] if i + k < n else edge_after
        return result

    def extract_parts(self, blocks: BlockTable, counts: BlockCounts | None = None, codec=None,
                      page: PageMarks | None = None, window=None) -> AttributeParts:
        """The page's attributes before the neighbour window is laid on: per block the attributes of
        the `window_families` (`shared`, what neighbours see under a prefix), readable or, with a codec and a
        `window` naming (cleaner.label.crf.WindowIds), as its integers, and the others named with `codec`
        (`private`). `extract` lays them out as rows; a scorer can take the parts as they are and never build
        the neighbours' copies (cleaner.label.crf.WindowRows)."""
        if counts is None:
            counts = self.counts(blocks)
        if codec is None:
            window = None
        v = self._naming(codec, window)
        cues = page_cue_context(self.cues, v.cues, blocks, counts, page) if self.on.cue else None
        row_pass = v.row_pass
        if row_pass is not None:  # (a model's rows: written as C integers, compiled_rows.RowPass)
            return AttributeParts([], [], window, row_pass.run(block_columns(blocks, counts), cues))
        cue_feats = block_cues(cues, blocks, counts) if cues is not None else []
        return self.parts_reference(blocks, counts, v, cue_feats, window)

    def parts_reference(self, blocks: BlockTable, counts: BlockCounts, v: AttributeNames, cue_feats: list[list],
                        window=None) -> AttributeParts:
        """extract_parts' rows as lists, named by `v` (this extractor's naming of the codec and `window`), the page's
        `cue` attributes given (cleaner.page.cues.page_cues): the readable reference of compiled_rows.RowPass, which
        runs in its place for a model's rows when it is built (tests/test_compiled_rows.py holds the two equal)."""
        n = len(blocks)
        on = self.on
        windowed = self.windowed
        # Document-level aggregates.
        words, link_words = counts.words, counts.link_words
        doc_words = sum(words)
        free_words = doc_words - sum(link_words) or 1
        # div group -> [its words outside links, all its words, its words in links] (one lookup a block, not three)
        div_sums: dict[int, list[int]] = {}
        td_words: dict[int, int] = {}
        for div, td, w, lw in zip(blocks.div_group, blocks.td_group, words, link_words):
            free = w - lw
            sums = div_sums.get(div)
            if sums is None:
                div_sums[div] = [free, w, lw]
            else:
                sums[0] += free
                sums[1] += w
                sums[2] += lw
            td_words[td] = td_words.get(td, 0) + free
        keys = [text.casefold() for text in blocks.text]
        seen: dict[str, int] = {}
        for k in keys:
            seen[k] = seen.get(k, 0) + 1
        first_seen: set[str] = set()
        n_sent = 0  # sentence ends on the page (document.sentence-count)
        page_named: dict[int, tuple[list, list]] = {}  # id(a block's id/class tokens) -> their attributes (_block_own)
        shared_rows: list[list] = []
        rows: list[list] = []
        for i in range(n):
            shared: list = []
            private: list = [v.bias]
            n_sent += self._block_own(blocks, i, counts, shared, private, v, page_named)
            if on.dup:
                out = shared if windowed.dup else private
                c = seen[keys[i]]
                if c > 1:
                    out.append(v.t_dup[c])
                    if keys[i] not in first_seen:
                        out.append(v.dup_first)
                first_seen.add(keys[i])
            if on.group:
                out = shared if windowed.group else private
                g = blocks.div_group[i]
                out.append(v.t_div[div_sums[g][0] * 1000 // free_words] if g >= 0 else v.div_none)
                g = blocks.td_group[i]
                out.append(v.t_td[td_words[g] * 1000 // free_words] if g >= 0 else v.td_none)
            if on.density:
                out = shared if windowed.density else private
                sums = div_sums[blocks.div_group[i]]
                out.append(v.t_link[sums[2] * 1000 // (sums[1] or 1)])
            if on.position:
                out = shared if windowed.position else private
                out.append(v.t_pos[i * 1000 // n])
            if cue_feats:
                (shared if windowed.cue else private).extend(cue_feats[i])
            shared_rows.append(shared)
            rows.append(private)
        if on.document:
            # Last in every private row, once the blocks have counted the page's sentence ends.
            max_div = max((sums[0] for k, sums in div_sums.items() if k >= 0), default=0)
            max_td = max((w for k, w in td_words.items() if k >= 0), default=0)
            t_words, t_sentences, t_blocks = v.t_doc
            t_max_div, t_max_td = v.t_doc_rel
            doc_feats = (
                t_words[doc_words],
                t_sentences[n_sent],
                t_blocks[n],
                t_max_div[max_div * 1000 // free_words],
                t_max_td[max_td * 1000 // free_words],
            )
            for row in rows:
                row.extend(doc_feats)
        return AttributeParts(shared_rows, rows, window)

    def neighbour_names(self, offset: int, codec=None) -> PrefixCache:
        """Readable attribute -> its name as the neighbour at `offset` sees it (`-1:name`...), named
        with `codec` when given; cached across pages."""
        key = (offset, id(codec))  # (the cache holds the codec, so its id is not reused meanwhile)
        cache = self._prefixed.get(key)
        if cache is None:
            cache = self._prefixed[key] = PrefixCache(f"{offset:+d}:", codec)
        return cache

    def edge(self, offset: int, codec=None) -> tuple:
        """What a block sees at `offset` past either end of the page (`-1:BOD`, `+1:EOD`...)."""
        attribute = f"{offset:+d}:{'BOD' if offset < 0 else 'EOD'}"
        return (attribute if codec is None else codec[attribute],)

