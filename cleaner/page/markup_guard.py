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
  <b><div>x</b>y n times                       40,000    4.8 s     nesting: an end tag with nothing of its name
                                                                   open closes no level (the adoption agency)

Every other shape measured there (many children, comments, tables, the adoption agency on <a>, identical
formatting elements, <p> in <button>, options outside a <select>, entities) is linear and left alone.

What it costs an ordinary page: the tag scan runs only when the page has more start tags than
[limits] max_nesting (counted in one pass, so the scan is skipped by almost every page of 2007: no page can
nest, fill a select or keep formatting elements open further than it has start tags; below that, a tree
many times the page's size is bounded by the walk's [limits] max_nodes), and long tags are found by hopping
from bracket to bracket with `str.rfind`, a window of twice max_attributes characters at a time. Both read
the text as Lexbor's tokenizer roughly does, not exactly: a tag whose quoted attribute values hold `<` or `>`
is not seen as one long tag (docs/faults.md, "Left out").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Final

from .. import compiled_twin
from ..config import Config

# Tags whose end the HTML5 tree builder implies, so an unclosed one does not nest deeper.
_AUTO_CLOSED: Final = frozenset(
    "p li dt dd tr td th option optgroup thead tbody tfoot rb rt rp colgroup caption".split()
)
_VOID: Final = frozenset("area base br col embed hr img input link meta param source track wbr".split())
# The HTML5 "formatting elements": the tree builder keeps them in its list of active formatting elements
# and reopens (reconstructs) those a block closed around them before the next text or element.
_FORMATTING: Final = frozenset("a b big code em font i nobr s small strike strong tt u".split())
# A start tag of these closes an open one of the same name (the adoption agency), so it leaves the list.
_SELF_CLOSING_FORMATTING: Final = frozenset(("a", "nobr"))
# The tree builder keeps at most this many identical formatting elements in its list (the Noah's Ark clause).
_NOAH: Final = 3
# Tags that end an open <select> (in the "in select" insertion mode).
_SELECT_ENDS: Final = frozenset(("select", "input", "keygen", "textarea"))
_OPTIONS: Final = frozenset(("option", "optgroup"))
# A tag for the scan (whether it closes itself: the character before its `>`). Greedy, as the lazy `[^>]*?(/?)>`
# it replaces tried the end at every character of a tag: 60 ms on a shared page whose tags hold JSON.
_TAG_RE: Final = re.compile(r"<(/?)([a-zA-Z][a-zA-Z0-9:-]*)[^>]*>")


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
_NO_LIMIT: Final = 1 << 62


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
    if more_start_tags_than(html, limits.max_nesting):
        html = _scan_tags(html, limits, capped)
    return GuardedMarkup(html, tuple(capped))


def leaves_utf8_unchanged(utf8: bytes, limits: MarkupLimits) -> bool | None:
    """Whether guard_markup leaves the text whose exact UTF-8 `utf8` is as it is, read from the bytes without
    decoding them: True when it does, False when it may not (then only the guard run on the text knows); None
    without the compiled guard. Its definition is `guard_markup(utf8.decode(), limits).html is` that text, and
    tests hold it to it. A page it clears is parsed from its bytes and its text is never built: the UTF-8 decoding
    of a whole page was 1.3 M instructions of a 2025 page and 38 % of its last-level cache misses (docs/speed.md).
    * The attribute cap: the tags it may cut, a superset at byte offsets (compiled_guard.tags_of_long_runs_utf8),
      are tried with the cap's own pattern written for UTF-8 (_first_attributes_utf8, read in one compiled pass by
      compiled_guard.has_attributes_utf8): none with more attributes than the cap, nothing cut.
    * The tag scan: compiled_guard.scan_leaves_utf8_unchanged reads the bytes as the text's scan reads the text."""
    if _compiled_guard is None:
        return None
    if limits.max_attributes < _NO_LIMIT:
        if limits.max_attributes <= 0:
            return False  # (every tag with an attribute is cut: the text's guard decides)
        over = limits.max_attributes + 1  # (_first_attributes_utf8(over).match, compiled: has_attributes_utf8)
        for start in _compiled_guard.tags_of_long_runs_utf8(utf8, 2 * limits.max_attributes):
            if _compiled_guard.has_attributes_utf8(utf8, start, over):
                return False
    return bool(_compiled_guard.scan_leaves_utf8_unchanged(utf8, limits.max_nesting, limits.max_select_options,
                                                           limits.max_reopened_formatting))


def more_start_tags_than(html: str, limit: int) -> bool:
    """Whether more than `limit` of the '<' in `html` are not followed by '/'. Counted in one compiled pass
    (compiled_guard.count_start_brackets) when it is built; else by `str.count`, the second count, twice as slow,
    only when the first is over (most pages of 2007 have fewer '<' than [limits] max_nesting, most of 2025 more)."""
    if _compiled_guard is not None:
        return bool(_compiled_guard.count_start_brackets(html) > limit)
    brackets = html.count("<")
    return brackets > limit and brackets - html.count("</") > limit


def cap_nesting(html: str, max_depth: int) -> tuple[str, bool]:
    """Flatten elements nested deeper than `max_depth` (their text is kept): the guard's nesting cap alone."""
    guarded = guard_markup(html, MarkupLimits(max_depth, _NO_LIMIT, _NO_LIMIT, _NO_LIMIT))
    return guarded.html, bool(guarded.capped)


def _tags_of_long_runs(html: str, min_chars: int):
    """The start of every tag whose text runs at least `min_chars` characters without a `<` or `>` (where a
    tag of that many attributes must lie). Hops from bracket to bracket a window at a time with str.rfind, so
    an ordinary page costs about len(html) / min_chars steps, and no character is read twice by a regexp."""
    n = len(html)
    pos = 0
    while pos + min_chars <= n:
        end = pos + min_chars
        bracket = max(html.rfind("<", pos, end), html.rfind(">", pos, end))
        if bracket >= 0:
            pos = bracket + 1  # a long run can only start after the window's last bracket
            continue
        # html[pos:end] holds no bracket: a long run, a tag's if a tag's name opens it
        if pos > 0 and html[pos - 1] == "<" and html[pos : pos + 1].isascii() and html[pos].isalpha():
            yield pos - 1
        after = [i for i in (html.find("<", end), html.find(">", end)) if i >= 0]
        if not after:
            return
        pos = min(after) + 1


# One attribute as the tokenizer reads it from where the tag's name (or the attribute before) ends: separators,
# a name up to whitespace, `/`, `>` or `=`, then an optional value, quoted or not. Atomic and possessive: no
# backtracking, whatever the text.
_ONE_ATTRIBUTE: Final = r"""(?>[\s/]*+[^\s/>][^\s/>=]*+(?:\s*+=\s*+(?:"[^"]*+"?|'[^']*+'?|[^\s>]*+))?)"""
_REST_OF_TAG: Final = re.compile(_ONE_ATTRIBUTE + r"*+[\s/]*+")
# Where a script's (a style's, ...) text starts or ends: its text holds no tags, whatever it looks like.
_RAW_TEXT_TAG: Final = re.compile(r"<(/?)(script|style|textarea|title|xmp|iframe|noembed|noframes)\b",
                           re.IGNORECASE)


@lru_cache(maxsize=8)
def _first_attributes(n: int) -> re.Pattern[str]:
    """A start tag and its first n attributes (no match: it has fewer)."""
    return re.compile(r"<[a-zA-Z][^\s/>]*+" + _ONE_ATTRIBUTE + "{" + str(n) + "}")


# _ONE_ATTRIBUTE for a text's UTF-8, matching what it matches in the text, byte for byte: `\s` of a str pattern is
# every character str.isspace() takes, written here as its UTF-8 sequences (_WHITESPACE_UTF8); a class that excludes
# it takes, in runs, every byte that cannot start one of them (_not_space_utf8), and the four bytes that can only
# where none starts. Every other byte of a character (0x80-0xBF, never ASCII, never a start) is taken by the same
# repeated classes that take the character in the text. (A look-ahead at every byte cost 1.6 M instructions a 2025
# page, on the long tags the cap tries: inline SVG paths, data: URLs.)
_WHITESPACE_UTF8: Final = (rb"(?:[\t\n\x0b\x0c\r\x1c-\x1f ]|\xc2[\x85\xa0]|\xe1\x9a\x80|\xe2\x80[\x80-\x8a\xa8\xa9\xaf]"
                           rb"|\xe2\x81\x9f|\xe3\x80\x80)")
_SPACE_STARTS: Final = rb"\t\n\x0b\x0c\r\x1c-\x1f \xc2\xe1\xe2\xe3"


def _not_space_utf8(excluded: bytes, run: bool) -> bytes:
    """A character of the text that is not whitespace (Python's `\\s`) and not one of `excluded` (ASCII), as UTF-8
    bytes; `run`: a run of them (possessive), else one byte of one."""
    starts = rb"(?!" + _WHITESPACE_UTF8 + rb")[\xc2\xe1\xe2\xe3]"
    if run:
        return rb"(?:[^" + excluded + _SPACE_STARTS + rb"]++|" + starts + rb")*+"
    return rb"(?:[^" + excluded + _SPACE_STARTS + rb"]|" + starts + rb")"


_ONE_ATTRIBUTE_UTF8: Final = (
    rb"(?>(?:" + _WHITESPACE_UTF8 + rb"|/)*+" + _not_space_utf8(rb"/>", False) + _not_space_utf8(rb"/>=", True)
    + rb"(?:" + _WHITESPACE_UTF8 + rb"*+=" + _WHITESPACE_UTF8 + rb"*+"
    rb"""(?:"[^"]*+"?|'[^']*+'?|""" + _not_space_utf8(rb">", True) + rb"))?)")


@lru_cache(maxsize=8)
def _first_attributes_utf8(n: int) -> re.Pattern[bytes]:
    """_first_attributes(n) for a text's UTF-8: it matches the bytes of what that matches in the text."""
    return re.compile(rb"<[a-zA-Z]" + _not_space_utf8(rb"/>", True) + _ONE_ATTRIBUTE_UTF8 + b"{%d}" % n)


def _cap_attributes(html: str, max_attributes: int, capped: list[str]) -> str:
    """Keep the first max_attributes attributes of every start tag. Lexbor compares each new attribute of a
    tag with all those before it (80,000 distinct ones took 89 s); a tag that long is no reader's text."""
    if max_attributes >= _NO_LIMIT:
        return html
    cuts: list[tuple[int, int]] = []
    raw_text_tags = _RAW_TEXT_TAG.finditer(html)
    raw_text_from = -1  # where the raw text read so far starts (-1: none open)
    raw_tag = next(raw_text_tags, None)
    min_chars = 2 * max_attributes
    starts = (_compiled_guard.tags_of_long_runs(html, min_chars) if _compiled_guard is not None and min_chars > 0
              else _tags_of_long_runs(html, min_chars))
    for start in starts:
        if cuts and start < cuts[-1][1] or not _first_attributes(max_attributes + 1).match(html, start):
            continue  # inside a tag already cut, or no more attributes than the cap
        while raw_tag is not None and raw_tag.start() < start:  # (only pages with such a tag read on)
            raw_text_from = -1 if raw_tag.group(1) else raw_tag.start()
            raw_tag = next(raw_text_tags, None)
        if raw_text_from >= 0:
            continue  # in a script's text (a shared wcxb page: JavaScript that reads as a tag of 580 attributes)
        cut_from = _first_attributes(max_attributes).match(html, start).end()  # type: ignore[union-attr]
        cut_to = _REST_OF_TAG.match(html, cut_from).end()  # type: ignore[union-attr]  # (it matches "")
        if cut_to > cut_from:
            cuts.append((cut_from, cut_to))
    if not cuts:
        return html
    capped.append("attributes")
    return _apply(html, [(start, end, "") for start, end in cuts])


_compiled_guard = compiled_twin("page.compiled_guard")  # (None: the references here run)
compiled_scan = None if _compiled_guard is None else _compiled_guard.scan_edits


def _scan_tags(html: str, limits: MarkupLimits, capped: list[str]) -> str:
    """One pass over the tags: nesting deeper than max_nesting flattened, the options of a select past
    max_select_options dropped, and, when the tree builder would reopen more than max_reopened_formatting
    formatting elements, every formatting tag dropped (their text is kept)."""
    scan = compiled_scan or scan_edits
    edits, caps = scan(html, limits.max_nesting, limits.max_select_options, limits.max_reopened_formatting)
    capped.extend(caps)
    return _apply(html, edits) if edits else html


def scan_edits(html: str, max_depth: int, max_options: int, max_reopened: int) -> tuple[list, list[str]]:
    """The scan of _scan_tags, readable: (the edits, in order: (start, end, replacement); the caps that made
    them). The reference of cleaner/page/compiled_guard.pyx, which must give the same (tests/test_parser_bombs.py)."""
    capped: list[str] = []
    edits: list[tuple[int, int, str]] = []
    depth = 0
    in_select = False
    options = 0
    # Formatting elements left open, by identity (the tag as written) and by name (most recent last), and the
    # running estimate of the elements the tree builder reopens: at every start tag, those left open.
    open_by_tag: dict[str, int] = {}
    open_by_name: dict[str, list[str]] = {name: [] for name in _FORMATTING}
    listed = 0  # formatting elements in the builder's list (at most _NOAH identical ones)
    reopened = 0
    formatting_tags: list[tuple[int, int]] = []
    nesting_capped = options_capped = False
    for m in _TAG_RE.finditer(html):
        slash, name = m.group(1, 2)
        closing = bool(slash)
        name = name.lower()
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
        if not closing:
            # Those open before this tag: an element's own start reopens nothing (`<b>x</b>` a million times
            # reopens none; the bomb's paragraphs each reopen all n).
            reopened += listed
        if name in _FORMATTING:
            formatting_tags.append(m.span())
            stack = open_by_name[name]
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
        if name in _VOID or name in _AUTO_CLOSED or html[m.end() - 2] == "/":
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
    if reopened > max_reopened:
        # Dropping the tags that are in the list by then would leave the reopening they already caused, so
        # all go: inline tags, their text joins its neighbours as it did.
        dropped = {start for start, _, _ in edits}
        edits += [(start, end, "") for start, end in formatting_tags if start not in dropped]
        edits.sort()
        capped.append("formatting")
    return edits, capped


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
