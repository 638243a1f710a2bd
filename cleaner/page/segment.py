"""Precleaning and segmentation: decoded HTML text -> the page's text blocks (Victor's units), as a BlockTable.

A block is a maximal run of text between two tags, so `Hello <i>world</i>!` gives three
blocks. The CRF labels these blocks; everything it knows about markup comes from what is
recorded here: the ancestors of the block, the tags opened and closed since the previous
block, the div/td group the block belongs to, the id/class tokens of its ancestors and
whether it sits inside a link. Each block also records what a browser shows between it and
the block before (nothing, a space, a line break: Block.gap), which the assembly joins the kept
blocks with, so that `Speech<a>,</a>` reads "Speech," and not "Speech ,".

The walk also gathers what the markup says of the page as a whole (cleaner.page.page_marks: JSON-LD, og:type,
microdata, <article> and <pre>/<code> counts) and which repeated item (a card, a list item, a post) each block sits
in, for the opt-in `cue` family (cleaner.page.page_type, cleaner.page.features).

The DOM is walked iteratively with the parser's own sibling/parent pointers, and all
per-ancestor state is kept on explicit stacks with running counters, so that a page nested
100,000 elements deep costs no more per block than a flat one.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from typing import Final

from selectolax.lexbor import LexborHTMLParser, LexborNode

from .. import NATIVE_BUILD
from ..config import Config, PerConfig, load_config
from .hidden_text import fallback_html, parse_json_ld
from .markup_guard import MarkupLimits, guard_markup, leaves_utf8_unchanged
from .math import is_rendered_copy, math_block, script_block
from .page_marks import PageMarks, add_itemtypes, read_head, read_script
from .text import normalise_space

_TOKEN_SPLIT: Final = re.compile(r"[^0-9a-z]+")
# Only this many innermost ancestors are kept verbatim in Block.containers; class
# membership (header, list, ...) is tracked for all ancestors by counters.
MAX_CONTAINERS: Final = 24
# id/class tokens are gathered from at most this many innermost ancestors.
MAX_IDCLASS_DEPTH: Final = 12
# id/class values -> their tokens, kept across pages: a site's template repeats its values on every page,
# and common ones ("content", "nav") recur across sites. Bounded, checked once per page.
TOKEN_CACHE_ENTRIES: Final = 50_000
TOKEN_CACHE: Final[dict[str, tuple[str, ...]]] = {}


# init=False and the __init__ written out: mypyc compiles a written __init__ into the class, where the one the
# dataclass decorator generates runs as interpreted Python (2 us a block, 7 % of a page's time by callgrind: one
# Block per text node); the decorator still gives __eq__ and __repr__, and the fields below their defaults.
@dataclass(init=False)
class Block:
    """One text block of a page, with the markup context the features need."""

    text: str
    # Ancestor tags, outermost -> innermost (the innermost MAX_CONTAINERS only).
    containers: tuple[str, ...]
    # Every distinct ancestor tag, however deep (class membership: header, list, ...).
    ancestors: frozenset[str] = frozenset()
    # Tags opened / closed between the previous block and this one, with counts.
    opened: dict[str, int] = field(default_factory=dict)
    closed: dict[str, int] = field(default_factory=dict)
    # Group ids: blocks with the same nearest `div` (`td`) ancestor share a group; -1 = none.
    div_group: int = -1
    td_group: int = -1
    # id/class tokens of the ancestors (innermost first, deduplicated).
    idclass: tuple[str, ...] = ()
    in_link: bool = False
    depth: int = 0
    # "img-alt", "pre-line" or "math" (a formula read as TeX, cleaner.page.math) for blocks the segmenter made
    # up; None for text nodes.
    artificial: str | None = None
    # What a browser shows between the previous block and this one: "" when they touch (inline
    # elements between two text nodes add nothing: `Speech<a>,</a>`, `i<span>n</span>`), " " for
    # whitespace (collapsed as CSS `white-space: normal` does) or an image, "\n" for a line break
    # (`<br>`, the edge of a block element). The assembly joins the kept blocks with it.
    gap: str = "\n"
    # The text as shown when that differs from `text`: a line of a <pre> keeps its indentation and
    # its runs of spaces (`text`, which the features read, is whitespace-normalised like every block's).
    shown: str | None = None
    # The innermost repeated item the block sits in (an ancestor whose parent holds at least
    # [features.cues.repeat] min_siblings element children of its tag and class: cards, list items, posts):
    # how many such siblings it has (0: none) and an id of the item, shared by the blocks inside it (-1: none).
    repeat: int = 0
    repeat_item: int = -1
    # The element the block's text sits in, numbered in document order (PageMarks.element_parent; -1: none, a
    # block the fallback made up).
    element: int = -1

    def __init__(self, text: str, containers: tuple[str, ...], ancestors: frozenset[str] = frozenset(),
                 opened: dict[str, int] | None = None, closed: dict[str, int] | None = None, div_group: int = -1,
                 td_group: int = -1, idclass: tuple[str, ...] = (), in_link: bool = False, depth: int = 0,
                 artificial: str | None = None, gap: str = "\n", shown: str | None = None, repeat: int = 0,
                 repeat_item: int = -1, element: int = -1) -> None:
        self.text = text
        self.containers = containers
        self.ancestors = ancestors
        self.opened = {} if opened is None else opened
        self.closed = {} if closed is None else closed
        self.div_group = div_group
        self.td_group = td_group
        self.idclass = idclass
        self.in_link = in_link
        self.depth = depth
        self.artificial = artificial
        self.gap = gap
        self.shown = shown
        self.repeat = repeat
        self.repeat_item = repeat_item
        self.element = element

    def __reduce__(self) -> tuple:
        # Pickled as the call that makes it: a compiled class is rebuilt through its __init__, which pickle's default
        # (the class called without arguments, then the fields set) cannot do (pools return blocks with documents).
        return (Block, (self.text, self.containers, self.ancestors, self.opened, self.closed, self.div_group,
                        self.td_group, self.idclass, self.in_link, self.depth, self.artificial, self.gap, self.shown,
                        self.repeat, self.repeat_item, self.element))


# A page's blocks as the stages read them: one list a field, row i of each list block i's. The walk writes a row per
# block (the compiled walk into a buffer it moves into the lists at its end), and the features, the cues, the
# decision, the typer and the assembly read the columns: no object is made a block (a Block made, filled, read field
# by field into the columns the compiled rows read and freed again cost ~2.7 % of a page: docs/speed.md, stops 76-77).
# `Block` stays the one block as a value, for the callers that want one at a time (the seed systems, inspection,
# training's alignment): BlockTable.blocks().
class BlockTable:
    """A page's text blocks, one list a field of Block (see there what each means), in document order."""

    text: list[str]
    containers: list[tuple[str, ...]]
    ancestors: list[frozenset[str]]
    opened: list[dict[str, int]]
    closed: list[dict[str, int]]
    div_group: list[int]
    td_group: list[int]
    idclass: list[tuple[str, ...]]
    in_link: list[bool]
    depth: list[int]
    artificial: list[str | None]
    gap: list[str]
    shown: list[str | None]
    repeat: list[int]
    repeat_item: list[int]
    element: list[int]

    def __init__(self) -> None:
        self.text = []
        self.containers = []
        self.ancestors = []
        self.opened = []
        self.closed = []
        self.div_group = []
        self.td_group = []
        self.idclass = []
        self.in_link = []
        self.depth = []
        self.artificial = []
        self.gap = []
        self.shown = []
        self.repeat = []
        self.repeat_item = []
        self.element = []

    def add(self, text: str, containers: tuple[str, ...], ancestors: frozenset[str], idclass: tuple[str, ...],
            div_group: int, td_group: int, element: int, opened: dict[str, int], closed: dict[str, int], depth: int,
            artificial: str | None, gap: str, shown: str | None) -> None:
        """Add the block of `text` in the element of walk frame (tag, `containers`, `ancestors`, `idclass`,
        `div_group`, `td_group`, in_pre, `element`, in_itemscope) (see ROOT_FRAME), as both walks do: the reference
        holds its frames as tuples, the compiled walk as C structs. Its repeated item is given after the walk
        (mark_repeats)."""
        self.text.append(text)
        self.containers.append(containers)
        self.ancestors.append(ancestors)
        self.opened.append(opened)
        self.closed.append(closed)
        self.div_group.append(div_group)
        self.td_group.append(td_group)
        self.idclass.append(idclass)
        self.in_link.append("a" in ancestors)
        self.depth.append(depth)
        self.artificial.append(artificial)
        self.gap.append(gap)
        self.shown.append(shown)
        self.repeat.append(0)
        self.repeat_item.append(-1)
        self.element.append(element)

    def append(self, b: Block) -> None:
        """Add `b` as the last block."""
        self.text.append(b.text)
        self.containers.append(b.containers)
        self.ancestors.append(b.ancestors)
        self.opened.append(b.opened)
        self.closed.append(b.closed)
        self.div_group.append(b.div_group)
        self.td_group.append(b.td_group)
        self.idclass.append(b.idclass)
        self.in_link.append(b.in_link)
        self.depth.append(b.depth)
        self.artificial.append(b.artificial)
        self.gap.append(b.gap)
        self.shown.append(b.shown)
        self.repeat.append(b.repeat)
        self.repeat_item.append(b.repeat_item)
        self.element.append(b.element)

    def block(self, i: int) -> Block:
        """Block i, as a value (a copy: changing it leaves the table as it is)."""
        return Block(self.text[i], self.containers[i], self.ancestors[i], self.opened[i], self.closed[i],
                     self.div_group[i], self.td_group[i], self.idclass[i], self.in_link[i], self.depth[i],
                     self.artificial[i], self.gap[i], self.shown[i], self.repeat[i], self.repeat_item[i],
                     self.element[i])

    def blocks(self) -> list[Block]:
        """Every block, as values."""
        return [self.block(i) for i in range(len(self.text))]

    def __len__(self) -> int:
        return len(self.text)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, BlockTable) and self.columns() == other.columns()

    def __repr__(self) -> str:
        return f"BlockTable({self.blocks()!r})"

    def columns(self) -> tuple:
        """Every field's list, in Block's order."""
        return (self.text, self.containers, self.ancestors, self.opened, self.closed, self.div_group, self.td_group,
                self.idclass, self.in_link, self.depth, self.artificial, self.gap, self.shown, self.repeat,
                self.repeat_item, self.element)

    def __reduce__(self) -> tuple:
        return (table_of, (self.blocks(),))  # (a compiled class is rebuilt by a call: see Block.__reduce__)


def table_of(blocks: list[Block]) -> BlockTable:
    """The table of `blocks`."""
    table = BlockTable()
    for b in blocks:
        table.append(b)
    return table


@dataclass(slots=True)
class Segmentation:
    table: BlockTable
    n_nodes: int
    truncated: bool  # the max_blocks (or max_nodes) limit was hit
    max_depth: int
    nesting_capped: bool = False  # the pre-parse nesting guard flattened the page
    # The text of the document's <title> (in <head>), whitespace normalised; "" when there is none.
    title: str = ""
    page: PageMarks = field(default_factory=PageMarks)
    # What else the pre-parse guard cut (ParsedHtml.markup_capped; "nesting" too when nesting_capped).
    markup_capped: tuple[str, ...] = ()
    # The blocks as values, made the first time `blocks` is asked (the table is what the stages read).
    block_values: list[Block] | None = field(default=None, compare=False, repr=False)

    @property
    def blocks(self) -> list[Block]:
        """The page's blocks as values (BlockTable.blocks), made once: read them, do not change them."""
        if self.block_values is None:
            self.block_values = self.table.blocks()
        return self.block_values


@dataclass(init=False)  # (the __init__ written out, compiled by mypyc: see Block)
class BlockCounts:
    """Numbers measured on each block of a page (cleaner.page.features.FeatureExtractor.counts), one list a number,
    shared by the features, the cues and the output statistics."""

    words: list[int]
    chars: list[int]
    link_words: list[int]  # words inside a link

    def __init__(self, words: list[int], chars: list[int], link_words: list[int]) -> None:
        self.words = words
        self.chars = chars
        self.link_words = link_words

    def __reduce__(self) -> tuple:
        return (BlockCounts, (self.words, self.chars, self.link_words))  # (as Block's)


# The root of the element stack (see segment_blocks for the frame layout).
ROOT_FRAME: Final[tuple] = ("", (), frozenset(), (), -1, -1, False, 0, False)


# A pseudo-tag among a block's ancestors: some ancestor is hidden from the reader (the `hidden` attribute,
# `aria-hidden="true"`, an inline style with `display: none` / `visibility: hidden`, or an overlay shut when the page
# opens: _is_hidden). A container class names it (`[features] class_hidden = ["#hidden"]` in conf/default.toml). On
# the shared pages 30,850 of the 30,895 blocks in hidden elements are gold boilerplate (menus, pop-ups, form hints),
# but the rest hold 826 words of content (tabs a script reveals): a CRF attribute, not a rule that drops the text.
HIDDEN: Final = "#hidden"
# A pseudo-tag among a block's ancestors: some ancestor says it holds the page's main content by an attribute
# rather than a tag (`role="main"`, `itemprop="articleBody"`); `[features] class_main` lists it beside <article>
# and <main>.
MAIN: Final = "#main"
_HIDING_STYLES: Final = ("display:none", "visibility:hidden")


def _is_hidden(tag: str, attrs: dict) -> bool:
    """Whether an element is hidden from the reader by its tag and its own attributes: a `<dialog>` without `open`
    (the HTML standard's own style sheet does not draw it), the hiding attributes (`hides`) and an overlay shut when
    the page opens (`closed_overlay`). The compiled walk reads the same (compiled_walk._Attributes.hidden)."""
    if tag == "dialog" and "open" not in attrs:
        return True
    return bool(attrs) and (hides("hidden" in attrs, attrs.get("aria-hidden"), attrs.get("style"))
                            or closed_overlay(any(a in attrs for a in CLOAKS), attrs.get("aria-modal")))


# Attributes of script frameworks (Vue, Alpine, AngularJS) that hide an element until the framework has drawn it; a page
# styles them `display: none` ([v-cloak] { display: none }) and the framework then shows what its own state says: the
# modals, drawers and pop-ups such pages hold are shut when the page opens.
CLOAKS: Final = ("v-cloak", "x-cloak", "ng-cloak")


def closed_overlay(cloaked: bool, aria_modal: str | None) -> bool:
    """Whether an element is an overlay shut when the page opens: an element a framework hides until it has drawn it
    (CLOAKS), or a modal dialog (`aria-modal="true"`: a dialog that, open, blocks the page, so a page that shows its
    text at once has it shut). On the shared pages (5-word shingles found in the gold, outermost such elements): closed
    `<dialog>`s 0 of 3,792, cloaked elements 242 of 36,850, modals 2,800 of 115,478 (wcxb/0580: Allbirds' terms of
    service, 11,000 words in a Vue modal, kept whole by the default)."""
    return cloaked or aria_modal == "true"


def hides(has_hidden: bool, aria_hidden: str | None, style: str | None) -> bool:
    """_is_hidden from the three attributes it reads (the compiled walk reads them without a dict)."""
    if has_hidden or aria_hidden == "true":
        return True
    if not style:
        return False
    style = style.lower()
    if "none" not in style and "hidden" not in style:  # most styles: no copy without spaces
        return False
    style = style.replace(" ", "")
    return any(s in style for s in _HIDING_STYLES)


def idclass_tokens(value: str) -> tuple[str, ...]:
    """Lower-cased alphanumeric tokens of an id or class attribute value."""
    return tuple(t for t in _TOKEN_SPLIT.split(value.lower()) if 1 < len(t) <= 30)




# Dropped elements that a browser does not display at all; any other dropped element (a button, an
# iframe, an svg icon) is a box between its neighbours' words, and so separates them like a space.
UNDISPLAYED: Final = frozenset("script style noscript template head param source track datalist map noframes".split())
# Punctuation that closes what comes before it: after a box with no whitespace on either side (an empty watchlist
# button between a linked word and its comma), a browser shows it against the word, so no space is given.
CLOSING_PUNCTUATION: Final = frozenset(",.;:!?)]}%»”’…。、，！？：；）」』】")
# `space` in _walk when only such a box lies between two texts (True/1: whitespace, False/0: nothing).
BOX_ONLY: Final = 2


@dataclass(slots=True)
class ParsedHtml:
    """A page parsed by Lexbor (parse_html), before the walk that cuts it into blocks."""

    tree: LexborHTMLParser
    # What the pre-parse guard cut (cleaner.page.markup_guard: "nesting", "attributes", "options",
    # "formatting"); empty for an ordinary page.
    markup_capped: tuple[str, ...] = ()

    @property
    def nesting_capped(self) -> bool:
        return "nesting" in self.markup_capped


markup_limits: PerConfig[MarkupLimits] = PerConfig(MarkupLimits.from_config)  # (read once per config, not per page)


def parse_html(html: str | None, config: Config | None = None, utf8: bytes | None = None) -> ParsedHtml:
    """Decoded HTML -> its tree, after the pre-parse guard (cleaner.page.markup_guard: nested no deeper than
    [limits] max_nesting, no slower to parse than linearly on the shapes it knows). `utf8`: `html` encoded as
    UTF-8 (DecodedPage.utf8), which Lexbor reads when the guard leaves the page as it is: the bytes selectolax
    would otherwise make from `html` (its str.encode, 2 % of a page's instructions), so the same tree. With
    `utf8`, `html` may be None: the text is then built only if the guard cannot tell from the bytes that it leaves
    the page as it is (markup_guard.leaves_utf8_unchanged), which it can for most pages."""
    config = config or load_config()
    limits = markup_limits(config)
    if utf8 is not None and leaves_utf8_unchanged(utf8, limits):
        return ParsedHtml(LexborHTMLParser(utf8), ())
    if html is None:
        if utf8 is None:
            raise ValueError("parse_html: neither the text nor its UTF-8 given")
        html = utf8.decode("utf-8")
    guarded = guard_markup(html, limits)
    source: str | bytes = utf8 if utf8 is not None and guarded.html is html else guarded.html
    return ParsedHtml(LexborHTMLParser(source), guarded.capped)


def segment_blocks(html: str, config: Config | None = None) -> Segmentation:
    """Split decoded HTML into text blocks (see module docstring)."""
    config = config or load_config()
    return segment_tree(parse_html(html, config), config)


def segment_tree(parsed: ParsedHtml, config: Config | None = None, fallback: bool = True) -> Segmentation:
    """Split a parsed page into text blocks (see module docstring). A page that shows fewer than
    [segment] fallback_below_chars characters is segmented again with its <noscript> content and its
    JSON-LD article shown (cleaner.page.hidden_text), when that shows fallback_min_gain_chars more."""
    config = config or load_config()
    walk = _walker()
    seg = walk(parsed, config)
    cfg = config["segment"]
    below = int(cfg["fallback_below_chars"])
    if not fallback or below <= 0:
        return seg
    shown = 0
    for text in seg.table.text:
        shown += len(text)
        if shown >= below:
            return seg
    marks = seg.page
    if marks.json_ld_objects is None:
        marks.json_ld_objects = parse_json_ld(marks.json_ld)
    alt = fallback_html(parsed.tree, marks.json_ld_objects)
    if alt is None:
        return seg
    other = walk(ParsedHtml(LexborHTMLParser(alt), parsed.markup_capped), config)
    if sum(len(text) for text in other.table.text) < shown + int(cfg["fallback_min_gain_chars"]):
        return seg
    other.title = seg.title
    if other.page.json_ld == marks.json_ld:
        other.page.json_ld_objects = marks.json_ld_objects  # parsed once
    return other


# The walk that runs: the compiled one (cleaner/page/compiled_walk.pyx, built by scripts/build_native.py) when
# it is built and loads, else its readable reference, _walk below. Found on the first page (the compiled module
# imports this one).
_WALK: Final[list] = []


def _walker():
    if not _WALK:
        try:
            from . import compiled_walk  # type: ignore[attr-defined]

            _WALK.append(compiled_walk.walk)
        except ImportError as exc:
            if NATIVE_BUILD is not None:  # built, yet it does not load (selectolax's Lexbor changed): say so once
                print(f"[webcleaner] the compiled walk is not used ({exc})", file=sys.stderr)
            _WALK.append(_walk)
    return _WALK[0]


def _walk(parsed: ParsedHtml, config: Config) -> Segmentation:
    """The walk (module docstring), in readable Python: the reference of cleaner/page/compiled_walk.pyx, which must
    give the same Segmentation (tests/test_native.py)."""
    cfg = config["segment"]
    limits = config["limits"]
    drop = frozenset(cfg["drop_tags"])
    max_blocks = int(limits["max_blocks"])
    max_nodes = int(limits["max_nodes"])
    max_chars = int(cfg["max_block_chars"])
    alt_min = int(cfg["img_alt_min_chars"])
    # Elements that end a line as displayed: a text on either side of one is on a line of its own.
    line_tags = frozenset(cfg["block_tags"])

    rc = config["features"]["cues"]["repeat"]
    repeat_min = int(rc["min_siblings"])
    repeat_skip = frozenset(rc["skip_tags"])

    tree, capped, markup_capped = parsed.tree, parsed.nesting_capped, parsed.markup_capped
    marks = PageMarks()
    title = read_head(tree, marks)
    root = tree.body or tree.root
    blocks = BlockTable()
    if root is None:
        return Segmentation(blocks, 0, False, 0, capped, title, marks, markup_capped)

    # A frame is a tuple (tag, containers, ancestors, idclass, div_group, td_group, in_pre, element,
    # in_itemscope): building a tuple per element costs a fraction of an object's __init__.
    stack: list[tuple] = [ROOT_FRAME]
    # Repeated items: elements are numbered in document order (the root 0); each has its parent's number
    # and its signature (parent, tag, class) -- None for [features.cues.repeat] skip_tags -- and the
    # signatures are counted, by group: the elements of one signature are one group, numbered as first seen
    # (`element_group`, -1 for none; `group_size`). Which elements are items is known once their parent's children
    # are all seen, so blocks are given theirs after the walk (mark_repeats).
    element_parent: list[int] = [0]
    element_group: list[int] = [-1]
    group_size: list[int] = []
    groups: dict[tuple, int] = {}  # signature -> its group
    itemprops = marks.itemprops
    opened: dict[str, int] = {}
    closed: dict[str, int] = {}
    n_nodes = 0
    max_depth = 0
    group_seq = 0
    token_cache = TOKEN_CACHE
    if len(token_cache) >= TOKEN_CACHE_ENTRIES:
        token_cache.clear()
    add_block = blocks.add
    push = stack.append
    pop = stack.pop
    # What lies between the last block and the next one as displayed (Block.gap): whitespace, a line break.
    space: int = False  # (or BOX_ONLY)
    line_break = True

    def emit(text: str, artificial: str | None = None, shown: str | None = None) -> None:
        nonlocal opened, closed, space, line_break
        if len(text) > max_chars:
            text = text[:max_chars]
            shown = shown[:max_chars] if shown is not None else None
        top = stack[-1]
        touching = not space or (space == BOX_ONLY and text[0] in CLOSING_PUNCTUATION)
        gap = "\n" if line_break else "" if touching else " "
        add_block(text, top[1], top[2], top[3], top[4], top[5], top[7], opened, closed, len(stack) - 1, artificial, gap,
                  shown)
        opened = {}
        closed = {}
        space = False
        line_break = False

    # Iterative pre-order walk over the parser's own pointers.
    node: LexborNode | None = root
    root_id = root.mem_id
    while node is not None and len(blocks) < max_blocks and n_nodes < max_nodes:
        n_nodes += 1
        tag = node.tag
        if tag == "-text":  # (tag is None for some malformed nodes)
            raw = node.text_content
            if not raw:
                pass
            elif stack[-1][6]:  # inside pre: every line is a block, shown with its own spaces
                for k, line in enumerate(raw.split("\n")):
                    if k:
                        line_break = True
                    text = normalise_space(line)
                    if not text:
                        if line:
                            space = True
                        continue
                    if len(blocks) >= max_blocks:
                        break
                    shown = line.rstrip()
                    if not line_break and shown[0].isspace():  # spaces inside a line another node began
                        space = True
                        shown = shown.lstrip()
                    emit(text, "pre-line", None if shown == text else shown)
                    space = line[-1].isspace()
            elif raw.isspace():
                space = True
            else:
                if raw[0].isspace():
                    space = True
                emit(normalise_space(raw))
                space = raw[-1].isspace()
        elif tag and tag[0] != "-" and tag[0] != "!" and tag not in drop:
            # (comments, doctype and other non-element nodes carry no visible text)
            # -- open the element --
            parent = stack[-1]
            attrs = node.attributes
            if tag == "a" and not (attrs and attrs.get("href")):
                # An anchor without href (`<a name="top">`) is not a link; 2007-era pages often
                # leave one unclosed around the whole article, which must not read as navigation.
                tag = "a-nohref"
            idclass = parent[3]
            class_value: str | None = None
            rendered_copy = False
            if attrs:
                tokens: tuple[str, ...] = ()
                for key in ("id", "class"):
                    value = attrs.get(key)
                    if value:
                        if key == "class":
                            class_value = value
                        if "MathJax" in value or "katex-html" in value:  # (a cheap test before the exact one)
                            rendered_copy = rendered_copy or is_rendered_copy(attrs)
                        cached = token_cache.get(value)
                        if cached is None:
                            cached = token_cache[value] = idclass_tokens(value)
                        tokens += cached
                if tokens:
                    idclass = tuple(dict.fromkeys(tokens + idclass))[:24]
            element = len(element_parent)
            element_parent.append(parent[7])
            if tag in repeat_skip:
                element_group.append(-1)
            else:
                signature = (parent[7], tag, class_value)
                group = groups.get(signature)
                if group is None:
                    group = groups[signature] = len(group_size)
                    group_size.append(0)
                group_size[group] += 1
                element_group.append(group)
            if tag == "article":
                marks.articles += 1
            elif tag == "pre" or tag == "code":
                marks.code += 1
            div_group = parent[4]
            td_group = parent[5]
            if tag == "div":
                group_seq += 1
                div_group = group_seq
            elif tag == "td" or tag == "th":
                group_seq += 1
                td_group = group_seq
            containers = parent[1] + (tag,)
            if len(containers) > MAX_CONTAINERS:
                containers = containers[-MAX_CONTAINERS:]
            ancestors = parent[2]
            if tag not in ancestors:
                ancestors = ancestors | {tag}
            in_itemscope = parent[8]
            if HIDDEN not in ancestors and _is_hidden(tag, attrs):
                ancestors = ancestors | {HIDDEN}
            if attrs:
                itemprop = attrs.get("itemprop")
                if itemprop:
                    if MAIN not in ancestors and itemprop == "articleBody":
                        ancestors = ancestors | {MAIN}
                    itemprop = itemprop.lower()
                    itemprops[itemprop] = itemprops.get(itemprop, 0) + 1
                    if itemprop == "datepublished" and not marks.date_published:
                        marks.date_published = attrs.get("content") or attrs.get("datetime") or ""
                if MAIN not in ancestors and attrs.get("role") == "main":
                    ancestors = ancestors | {MAIN}
                if not in_itemscope and "itemscope" in attrs:
                    in_itemscope = True
                    add_itemtypes(attrs.get("itemtype"), marks.itemtypes)
            push((tag, containers, ancestors, idclass, div_group, td_group, parent[6] or tag == "pre", element,
                  in_itemscope))
            opened[tag] = opened.get(tag, 0) + 1
            if len(stack) > max_depth:
                max_depth = len(stack)
            if tag in line_tags:
                line_break = True
            elif tag == "img":
                # An image stands between the words on either side (its alt text, a block of its own, too).
                space = True
                alt = attrs.get("alt") if attrs else None
                if alt:
                    alt = normalise_space(alt)
                    if len(alt) >= alt_min and len(blocks) < max_blocks:
                        emit(alt, "img-alt")
                        space = True
            # (the drawn copy of a formula read from its source shows as an empty element)
            child = node.child if not rendered_copy else None
            if child is not None:
                node = child
                continue
            tag = pop()[0]  # an empty element: opened and closed at once
            closed[tag] = closed.get(tag, 0) + 1
        elif tag and tag in drop:
            # a formula (MathML, MathJax's TeX source) is read as TeX, a block of its own in its place in the line
            formula = math_block(node) if tag == "math" else script_block(node) if tag == "script" else None
            if formula is not None and len(blocks) < max_blocks:
                text, display = formula
                if display:
                    line_break = True
                emit(text, "math")
                if display:
                    line_break = True
            elif tag not in UNDISPLAYED:
                # a box (a button, an iframe, an svg icon) between its neighbours' words
                space = space or BOX_ONLY
            if tag == "script":
                read_script(node, marks)
        # Climb until a next sibling exists, closing elements on the way.
        while node is not None:
            if node.mem_id == root_id:
                node = None
                break
            nxt = node.next
            if nxt is not None:
                node = nxt
                break
            node = node.parent
            if node is None:
                break
            tag = pop()[0]
            closed[tag] = closed.get(tag, 0) + 1
            if tag in line_tags:
                line_break = True
            if node.mem_id == root_id:
                node = None
    truncated = (len(blocks) >= max_blocks or n_nodes >= max_nodes) and node is not None
    mark_repeats(blocks, element_parent, element_group, group_size, repeat_min)
    marks.element_parent = element_parent
    marks.element_group = element_group
    marks.group_size = group_size
    return Segmentation(blocks, n_nodes, truncated, max_depth - 1, capped, title, marks, markup_capped)


def mark_repeats(blocks: BlockTable, element_parent: list[int], element_group: list[int], group_size: list[int],
                 repeat_min: int) -> None:
    """Give each block the innermost repeated item it sits in (the columns BlockTable.repeat, .repeat_item). Elements
    are numbered in document order, so a parent's item is known before its children's. `element_group`: per element
    the group of its signature (-1: none), `group_size`: per group its elements; numbers, so that no signature is
    hashed again here (a tuple keeps no hash: the walk's count and this lookup hashed each element's twice)."""
    item = [-1] * len(element_parent)
    for element in range(1, len(element_parent)):
        group = element_group[element]
        if group >= 0 and group_size[group] >= repeat_min:
            item[element] = element
        else:
            item[element] = item[element_parent[element]]
    # (the columns made here, whole: the compiled walk leaves them empty rather than append a 0 and a -1 a block)
    n = len(blocks.element)
    repeat = [0] * n
    repeat_item = [-1] * n
    for i, e in enumerate(blocks.element):
        owner = item[e]
        if owner >= 0:
            repeat_item[i] = owner
            group = element_group[owner]
            if group >= 0:
                repeat[i] = group_size[group]
    blocks.repeat = repeat
    blocks.repeat_item = repeat_item
