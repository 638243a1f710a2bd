"""The pre-parse guard: the page's markup, with the shapes the HTML5 tree builder is slow on cut down, before
Lexbor parses it.

Lexbor's parse is one C call: the CPU budget (cleaner.api) can only interrupt it once it returns, so a page
on which it spends time faster than linearly must be defused before the call. Measured by
scripts/parser_bombs.py (docs/faults.md, "Parser time bombs"), Lexbor alone, CPU seconds:

  shape                                        size      before    what the guard does
  n elements nested n deep                     40,000    4.0 s     flattened below [limits] max_nesting
  one tag with n distinct attributes           40,000    4.7 s     the first [limits] max_attributes kept
  one <select> of n <option>s                  40,000    11.5 s    the options past [limits] max_select_options
                                                                   dropped: a select's content is never shown
  n distinct formatting elements left open,    2,500     6.9 s     every formatting tag dropped once the elements
  reopened in each of n later paragraphs                           the builder would reopen pass
                                                                   [limits] max_reopened_formatting

Every other shape measured there (many children, comments, tables, the adoption agency on <a>, identical
formatting elements, <p> in <button>, options outside a <select>, entities) is linear and left alone.

What it costs an ordinary page: the tag scan runs only when the page has more start tags than
[limits] max_nesting (counted with two `str.count`s, so the scan is skipped by almost every page: no
page can nest, fill a select or reopen formatting elements further than it has start tags), and the
attribute check is one regular-expression search for a tag longer than twice max_attributes characters.
Both read the text as Lexbor's tokenizer roughly does, not exactly: a tag whose quoted attribute values
hold `<` or `>` is not seen as one long tag (docs/faults.md lists what is left out).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from ..config import Config

# Tags whose end the HTML5 tree builder implies, so an unclosed one does not nest deeper.
_AUTO_CLOSED = frozenset(
    "p li dt dd tr td th option optgroup thead tbody tfoot rb rt rp colgroup caption".split()
)
_VOID = frozenset("area base br col embed hr img input link meta param source track wbr".split())
# The HTML5 "formatting elements": the tree builder keeps them in its list of active formatting elements
# and reopens (reconstructs) those a block closed around them before the next text or element.
_FORMATTING = frozenset("a b big code em font i nobr s small strike strong tt u".split())
# A start tag of these closes an open one of the same name (the adoption agency), so it leaves the list.
_SELF_CLOSING_FORMATTING = frozenset(("a", "nobr"))
# The tree builder keeps at most this many identical formatting elements in its list (the Noah's Ark clause).
_NOAH = 3
# Tags that end an open <select> (in the "in select" insertion mode).
_SELECT_ENDS = frozenset(("select", "input", "keygen", "textarea"))
_OPTIONS = frozenset(("option", "optgroup"))
_TAG_RE = re.compile(r"<(/?)([a-zA-Z][a-zA-Z0-9:-]*)[^>]*?(/?)>")
# One attribute of a start tag from where the tag's name ends (or `>`, the tag's end), as the tokenizer reads
# it: a name up to whitespace, `/`, `>` or `=`, then an optional value, quoted or not. Possessive: no
# backtracking, whatever the text.
_ATTRIBUTE = re.compile(r"""[\s/]*+(?:(>)|[^\s/>][^\s/>=]*+(?:\s*+=\s*+(?:"[^"]*+"?|'[^']*+'?|[^\s>]*+))?)""")
_TAG_NAME = re.compile(r"<[a-zA-Z][^\s/>]*+")


@dataclass(frozen=True, slots=True)
class MarkupLimits:
    """The [limits] the guard applies (cleaner/conf/default.toml explains each)."""

    max_nesting: int
    max_attributes: int
    max_select_options: int
    max_reopened_formatting: int

    @classmethod
    def from_config(cls, config: Config) -> MarkupLimits:
        limits = config["limits"]
        return cls(int(limits["max_nesting"]), int(limits["max_attributes"]), int(limits["max_select_options"]),
                   int(limits["max_reopened_formatting"]))


# Only nesting: what cap_nesting applies (a limit no page reaches turns a check off).
_NO_LIMIT = 1 << 62


@dataclass(frozen=True, slots=True)
class GuardedMarkup:
    """The page's markup as Lexbor is given it, and which caps changed it ("nesting", "attributes",
    "options", "formatting"; empty for an ordinary page, which is returned unchanged)."""

    html: str
    capped: tuple[str, ...] = ()


def guard_markup(html: str, limits: MarkupLimits) -> GuardedMarkup:
    """`html` with the shapes the tree builder is slow on cut down (module docstring)."""
    capped: list[str] = []
    html = _cap_attributes(html, limits.max_attributes, capped)
    # Every element but the html/head/body implied ones needs a start tag, so the number of '<' that do not
    # start an end tag bounds the depth, the options of a select and the formatting elements left open.
    if html.count("<") - html.count("</") > limits.max_nesting:
        html = _scan_tags(html, limits, capped)
    return GuardedMarkup(html, tuple(capped))


def cap_nesting(html: str, max_depth: int) -> tuple[str, bool]:
    """Flatten elements nested deeper than `max_depth` (their text is kept): the guard's nesting cap alone."""
    guarded = guard_markup(html, MarkupLimits(max_depth, _NO_LIMIT, _NO_LIMIT, _NO_LIMIT))
    return guarded.html, bool(guarded.capped)


@lru_cache(maxsize=8)
def _long_tag(min_chars: int) -> re.Pattern[str]:
    # A start tag of more than max_attributes attributes is at least twice that long (a name and a separator
    # each); `[^<>]` stops every try at the next tag, so the search reads each character once.
    return re.compile(r"<[a-zA-Z][^<>]{" + str(min_chars) + "}")


def _cap_attributes(html: str, max_attributes: int, capped: list[str]) -> str:
    """Keep the first max_attributes attributes of every start tag. Lexbor compares each new attribute of a
    tag with all those before it (80,000 distinct ones took 89 s); a tag that long is no reader's text."""
    if max_attributes >= _NO_LIMIT or not _long_tag(2 * max_attributes).search(html):
        return html
    cuts: list[tuple[int, int]] = []
    for m in _long_tag(2 * max_attributes).finditer(html):
        if cuts and m.start() < cuts[-1][1]:
            continue  # inside a tag already cut
        pos = _TAG_NAME.match(html, m.start()).end()  # type: ignore[union-attr]  # the search matched it
        n = 0
        cut_from = -1
        while True:
            a = _ATTRIBUTE.match(html, pos)
            if a is None or a.end() == pos or a.group(1):
                end = a.start(1) if a is not None and a.group(1) else len(html)
                break
            n += 1
            pos = a.end()
            if n == max_attributes:
                cut_from = pos
        if cut_from >= 0 and end > cut_from:
            cuts.append((cut_from, end))
    if not cuts:
        return html
    capped.append("attributes")
    return _apply(html, [(start, end, "") for start, end in cuts])


def _scan_tags(html: str, limits: MarkupLimits, capped: list[str]) -> str:
    """One pass over the tags: nesting deeper than max_nesting flattened, the options of a select past
    max_select_options dropped, and, when the tree builder would reopen more than max_reopened_formatting
    formatting elements, every formatting tag dropped (their text is kept)."""
    max_depth, max_options = limits.max_nesting, limits.max_select_options
    edits: list[tuple[int, int, str]] = []
    depth = 0
    in_select = False
    options = 0
    # Formatting elements left open, by identity (the tag as written) and by name (most recent last), and the
    # running estimate of the elements the tree builder reopens: at every start tag, those left open.
    open_by_tag: dict[str, int] = {}
    open_by_name: dict[str, list[str]] = {}
    listed = 0  # formatting elements in the builder's list (at most _NOAH identical ones)
    reopened = 0
    formatting_tags: list[tuple[int, int]] = []
    nesting_capped = options_capped = False
    for m in _TAG_RE.finditer(html):
        closing = bool(m.group(1))
        name = m.group(2).lower()
        if name in _OPTIONS and in_select:
            if not closing and name == "option":
                options += 1
            if options > max_options:  # a select's content is never shown: the extra options go
                edits.append((m.start(), m.end(), ""))
                options_capped = True
                continue
        elif name in _SELECT_ENDS and (closing or name != "select" or in_select):
            in_select = False
        elif name == "select":
            in_select, options = True, 0
        if name in _FORMATTING:
            formatting_tags.append((m.start(), m.end()))
            stack = open_by_name.setdefault(name, [])
            if closing and not stack:
                # An end tag with no element of its name open: the adoption agency closes the element it
                # finds and reopens it inside the block below, so nothing gets shallower (`<b><div>x</b>` n
                # times nests n deep).
                continue
            if closing or (name in _SELF_CLOSING_FORMATTING and stack):
                tag = stack.pop()
                count = open_by_tag[tag]
                open_by_tag[tag] = count - 1
                listed -= count <= _NOAH
            if not closing:
                tag = m.group(0)
                count = open_by_tag.get(tag, 0)
                open_by_tag[tag] = count + 1
                listed += count < _NOAH
                stack.append(tag)
        if not closing:
            reopened += listed
        if name in _VOID or name in _AUTO_CLOSED or m.group(3):
            continue
        if closing:
            depth -= 1
            drop = depth >= max_depth
        else:
            depth += 1
            drop = depth > max_depth
        if drop:
            edits.append((m.start(), m.end(), " "))
            nesting_capped = True
    if nesting_capped:
        capped.append("nesting")
    if options_capped:
        capped.append("options")
    if reopened > limits.max_reopened_formatting:
        # Dropping the tags that are in the list by then would leave the reopening they already caused, so
        # all go: inline tags, their text joins its neighbours as it did.
        dropped = {start for start, _, _ in edits}
        edits += [(start, end, "") for start, end in formatting_tags if start not in dropped]
        edits.sort()
        capped.append("formatting")
    return _apply(html, edits) if edits else html


def _apply(html: str, edits: list[tuple[int, int, str]]) -> str:
    """`html` with each (start, end) span, in order and not overlapping, replaced by its text."""
    out: list[str] = []
    last = 0
    for start, end, text in edits:
        out.append(html[last:start])
        out.append(text)
        last = end
    out.append(html[last:])
    return "".join(out)
