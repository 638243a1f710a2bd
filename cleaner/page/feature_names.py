"""The attribute names of the block features (cleaner.page.features), built once per naming.

Numeric values become `family.name=bin` through tables precomputed for every integer input (BinTable), open
vocabularies (tag names, id/class tokens, a neighbour's prefix) through caches that name each value once
(PrefixCache), and AttributeNames holds every name a page's rows can carry, readable or as the codes of a
model's codec (cleaner.label.model.AttributeCodec).
"""

from __future__ import annotations

from bisect import bisect_right
from typing import Any

# scripts/build_native.py compiles this module with mypyc: its classes become C types, whose lookups the features'
# compiled code calls directly. Nothing here changes how the module runs as Python.
from ..config import Config
from .cues import CueNames, CueSettings


def _fmt(x: float) -> str:
    return str(int(x)) if float(x).is_integer() and abs(x) >= 1 else f"{x:g}"


def _bin_label(bins: list[float], value: float) -> str:
    """The largest bin less-or-equal to `value` (the smallest bin when below all)."""
    i = bisect_right(bins, value) - 1
    return _fmt(bins[i if i >= 0 else 0])


class BinTable:
    """Precomputed attribute names `name=bin` for integer inputs 0..cap: `table[i]`.

    Feature extraction runs per block on every page, so formatting and bisecting are done
    once here, and a lookup is an index into a list; inputs above `cap` get cap's name, and a
    negative input, a bug upstream and not a bin, is a KeyError. `namer` turns each name into what
    a row carries (the name itself, or its code). (A compiled class: the features' compiled code calls
    its lookup directly, where a dict subclass's subscript cost 36-44 ns, docs/speed.md, stop 55.)"""

    def __init__(self, name: str, bins: list[float], cap: int, scale: float = 1.0, namer=None):
        labels: list = [f"{name}={_bin_label(bins, i / scale)}" for i in range(cap + 1)]
        if namer is not None:
            labels = [namer(x) for x in labels]
        self.labels = labels
        self.cap = cap

    def __getitem__(self, i: int) -> object:
        if i > self.cap:
            i = self.cap
        elif i < 0:
            raise KeyError(i)
        return self.labels[i]


# A value no open vocabulary holds (HTML parsers replace NUL in attribute values): PrefixCache names it to learn what a
# codec names the values no model knows.
UNSEEN = "\x00"


class PrefixCache:
    """name -> `prefix` + name, built once: an attribute as a neighbour sees it (`-1:` ...), or a
    value of an open vocabulary as an attribute (`idclass.` + token); with a `codec`, straight to
    the code of the prefixed name (cleaner.label.model.AttributeCodec). (A compiled class, as BinTable.)"""

    MAX_ENTRIES = 50_000  # tag names and id/class tokens are an open vocabulary on a real crawl

    def __init__(self, prefix: str, codec=None, known: frozenset[str] | None = None):
        """`known`, with a codec: the values whose names the model behind the codec may know (its sidecar's
        `idclass_tokens`, cleaner.learn.train.known_idclass_tokens); any other value is named as a name no model
        knows, without computing its codes. None: every value is named through the codec."""
        self.prefix = prefix
        self.codec = codec
        self.names: dict[str, object] = {}
        self.known = known if codec is not None else None
        # What the codec names a value no model knows by (its "unknown" id): UNSEEN is no id/class token (a parser
        # replaces NUL), so its names are in no model's vocabulary.
        self.unknown: object = codec[prefix + UNSEEN] if self.known is not None else None

    def __getitem__(self, key: str) -> object:
        value = self.names.get(key)  # (never None: a name or its code)
        if value is None:
            value = self._missing(key)
        return value

    def names_of(self, keys: tuple[str, ...]) -> list[object]:
        """[self[key] for key in keys], in compiled code (a block's id/class tokens: mapped through the bound
        `__getitem__` from Python's `map`, every token cost a generic call)."""
        names = self.names
        out: list[object] = []
        for key in keys:
            value = names.get(key)
            out.append(value if value is not None else self._missing(key))
        return out

    def _missing(self, key: str) -> object:
        names = self.names
        if len(names) >= self.MAX_ENTRIES:
            names.clear()
        known = self.known
        value: object
        if known is not None and key not in known:
            # A token of a site the model never saw: its names under every prefix and convention are in no model's
            # vocabulary, and naming it through the codec computed a BLAKE2b code for each (about 20 a token,
            # 1.7 M instructions a page of 2025: docs/speed.md, stop 69) to find that out.
            value = self.unknown
        else:
            value = self.prefix + key
            if self.codec is not None:
                value = self.codec[value]
        names[key] = value
        return value


class AttributeNames:
    """Every attribute name a page's rows can carry, in one naming, with the text cache kept in it.

    Readable (no codec), or with a codec (cleaner.label.model.AttributeCodec) the codes of the
    attributes that stay with their block. Attributes of the `window_families` are also seen by
    the neighbours under a prefix (`-1:`...): readable, or with a `window` naming one integer each that
    stands for all of those ids. Naming at the source spares encoding every row afterwards (-0.4 ms a page)."""

    def __init__(self, config: Config, window_families: frozenset[str], cues: CueSettings, codec=None, window=None):
        """`window`: with a codec, what names the `window_families`' attributes (a mapping from a readable attribute
        to an integer: cleaner.label.crf.WindowIds' local ids, which stand for the attribute's ids as its block's own
        and as each neighbour sees it); None: they stay readable."""
        self.codec = codec  # held: FeatureExtractor keys its namings by id(codec) and id(window)
        self.window = window

        def target(family: str):
            """What names `family`'s attributes: the codec, the window's naming, or None (readable)."""
            if codec is None:
                return None
            return window if family in window_families else codec

        def namer(family: str):
            named_by = target(family)
            return None if named_by is None else named_by.__getitem__

        def name(family: str, attribute: str):
            f = namer(family)
            return attribute if f is None else f(attribute)

        def table(family: str, attribute: str, bins, cap: int, scale: float = 1.0) -> BinTable:
            return BinTable(f"{family}.{attribute}" if attribute else family, bins, cap, scale, namer(family))

        fc = config["features"]
        bins = fc["bins"]
        count_cap = int(max(bins["count"])) + 1
        doc_cap = int(max(bins["document"])) + 1

        def count(family: str, attribute: str) -> BinTable:
            return table(family, attribute, bins["count"], count_cap)

        def rel(family: str, attribute: str) -> BinTable:
            # Relative values are looked up as whole per-mille.
            return table(family, attribute, bins["relative"], 1000, 1000.0)

        self.bias = name("", "bias")  # (no family: always the block's own)
        self.containers = [(tag, name("container", "container." + tag)) for tag in ("p", "a", "u", "img")]
        # Every `class_<name>` list of [features] is a container class `container.class-<name>`.
        self.classes = [
            (name("container", "container." + key.replace("_", "-")), frozenset(tags))
            for key, tags in fc.items() if key.startswith("class_")
        ]
        split_cap = int(max(bins["split"])) + 1
        self.t_split = [table("split", k, bins["split"], split_cap)
                        for k in ("p", "br", "hr", "class-inline", "class-block")]
        self.t_char = [(count("char", k), rel("char", k + ".rel")) for k in ("alpha", "num", "punct", "white", "other")]
        self.t_token = [(count("token", k), rel("token", k + ".rel")) for k in ("alpha", "num", "mix", "other")]
        self.t_sent_count = count("sentence", "count")
        self.t_sent_len = count("sentence", "avg-length")
        self.sent_begin = name("sentence", "sentence.begin")
        self.sent_end = name("sentence", "sentence.end")
        self.re_url = name("regexp", "regexp.url")
        self.re_date = name("regexp", "regexp.date")
        self.re_time = name("regexp", "regexp.time")
        self.re_bullet = name("regexp", "regexp.bullet")
        self.t_density = count("density", "text")
        self.in_link = name("density", "density.in-link")
        self.t_link = rel("density", "group-link")
        self.t_dup = count("dup", "count")
        self.dup_first = name("dup", "dup.first")
        self.t_div = rel("group", "div-word-ratio")
        self.t_td = rel("group", "td-word-ratio")
        self.div_none = name("group", "group.div-word-ratio=none")
        self.td_none = name("group", "group.td-word-ratio=none")
        self.t_pos = table("position", "", bins["position"], 1000, 1000.0)
        self.t_doc = [table("document", k, bins["document"], doc_cap)
                      for k in ("word-count", "sentence-count", "block-count")]
        self.t_doc_rel = [rel("document", k) for k in ("max-div-group", "max-td-group")]
        # Open vocabularies (tag names, id/class tokens): each value is named once, then looked up.
        self.tag_self = PrefixCache("tag.self=", target("tag"))
        self.tag_parent = PrefixCache("tag.parent=", target("tag"))
        self.tag_artificial = PrefixCache("tag.artificial=", target("tag"))
        # (the tokens the model may know: the codec's `idclass_tokens`, which cleaner.label.crf_model gives it)
        self.idclass = PrefixCache("idclass.", target("idclass"), getattr(codec, "idclass_tokens", None))
        repeat_bins = cues.repeat_bins
        self.cues = CueNames(cues, lambda attribute: name("cue", attribute), namer("cue"),
                             table("cue", "repeat", repeat_bins, int(max(repeat_bins)) + 1))
        # text -> (shared attributes, private attributes, sentence ends): FeatureExtractor._block_own
        self.text_cache: dict[str, tuple[list, list, int]] = {}
        # What names a text's attributes in one compiled call (compiled_text.TextAttributes), when the features have
        # it: FeatureExtractor._naming sets it.
        self.text_attributes: Any = None
        # The compiled pass that writes a model's rows as C integers (compiled_rows.RowPass), for a naming with a
        # window, when it is built: FeatureExtractor._naming sets it.
        self.row_pass: Any = None
        # The attributes of a block's markup context, cached by the context (FeatureExtractor._block_own): the
        # walk gives every block of an element, and of its like siblings, the same ancestors and id/class
        # tokens. ancestors -> the `container` attributes; id/class tokens -> the `idclass` and `cue.idclass`
        # attributes.
        self.container_cache: dict[frozenset, list] = {}
        self.idclass_cache: dict[tuple, tuple[list, list]] = {}
