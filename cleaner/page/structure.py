"""The page's elements read again for a rendering that needs more than the blocks: what cleaner.output.markdown
asks of the tree (a table's rows and cells, a `<pre>` as a browser shows it, a link's address).

The segmenter (cleaner.page.segment) gives every block the number of the element its text sits in, in document
order, and every element its parent's number (`PageMarks.element_parent`); it keeps no tree. When Markdown is
asked for, the page's tree (the one the blocks were cut from, `PageBlocks.parsed`) is walked a second time here,
numbering elements exactly as the segmenter's walk does: from `<body>` (or the root when there is none), every
element node whose tag is not in [segment] drop_tags counts, the content of a dropped element is not entered, nor
that of a formula's drawn copy (cleaner.page.math.is_rendered_copy). It goes only into the elements that hold
one asked for, stepping over the others by the segmenter's count of their elements, and it checks its numbering
against `element_parent` on the way: on any disagreement (a page the segmenter read through its fallback,
cleaner.page.hidden_text, whose tree is another) it gives the fallback's tree a try and then gives up (None), and
the renderer falls back to the blocks alone.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

from selectolax.lexbor import LexborHTMLParser, LexborNode

from .hidden_text import fallback_html, parse_json_ld
from .math import is_rendered_copy
from .page_marks import PageMarks
from .segment import ParsedHtml


@dataclass(slots=True)
class Element:
    """An element of the page, as the walk found it: its tag, its parent's number, its node."""

    tag: str
    parent: int
    node: LexborNode
    _attrs: dict | None = None

    @property
    def attrs(self) -> dict:
        """Its attributes (read from the node when first asked for)."""
        if self._attrs is None:
            self._attrs = self.node.attributes or {}
        return self._attrs


def subtree_end(element_parent: list[int], element: int) -> int:
    """The number after the last element inside `element` (elements are numbered in document order, so an
    element's subtree is the run of numbers after it whose parents are at least its own number)."""
    end = element + 1
    n = len(element_parent)
    while end < n and element_parent[end] >= element:
        end += 1
    return end


def read_elements(parsed: ParsedHtml, page: PageMarks, targets: Iterable[int], drop: frozenset[str],
                  formulas: bool = True, alone: Iterable[int] = ()) -> dict[int, Element] | None:
    """The elements `targets` and every element inside them (only themselves for those also in `alone`: a
    `<pre>`, whose text is read from its node), by number; None when this walk's numbering does not agree with
    the segmenter's (module docstring). `formulas`: whether the page may hold a formula's drawn copy (False when
    its text names neither MathJax nor KaTeX: then no element's attributes need reading to count)."""
    element_parent = page.element_parent
    alone = set(alone)
    ranges = sorted((t, t + 1 if t in alone else subtree_end(element_parent, t))
                    for t in set(targets) if 0 < t < len(element_parent))
    if not ranges:
        return {}
    found = _walk(parsed.tree, element_parent, ranges, drop, formulas)
    if found is not None:
        return found
    if page.json_ld_objects is None:
        page.json_ld_objects = parse_json_ld(page.json_ld)
    alt = fallback_html(parsed.tree, page.json_ld_objects)  # the page the segmenter may have read instead
    if alt is None:
        return None
    return _walk(LexborHTMLParser(alt), element_parent, ranges, drop, formulas)


def _walk(tree: LexborHTMLParser, element_parent: list[int], ranges: list[tuple[int, int]], drop: frozenset[str],
          formulas: bool) -> dict[int, Element] | None:
    """The elements inside `ranges`, or None when the tree's numbering disagrees with `element_parent`.

    Only the elements on the way to the ranges are visited, with their siblings: an element with nothing asked
    for inside it is stepped over, its number of elements (known from `element_parent`) added at once. Every
    element visited is checked (its parent's number, and that its parent has as many children as the
    segmenter's walk counted, up to the root: the walk goes on past the last range, stepping over what follows),
    so a tree that differs where the walk goes is found out; one that differs inside an element stepped over is
    numbered alike around it, by the segmenter's own count."""
    root = tree.body or tree.root
    n_elements = len(element_parent)
    if root is None or n_elements < 2:
        return None
    on_the_way: set[int] = set()  # the ancestors of the ranges' elements: the walk goes into them
    for start, _ in ranges:
        e = element_parent[start]
        while e > 0 and e not in on_the_way:
            on_the_way.add(e)
            e = element_parent[e]
    found: dict[int, Element] = {}
    r = 0
    start, end = ranges[0]
    # [the parent's number, the next child's number, the parent's node]; the first is above the root (number 0)
    frames: list[list] = [[0, 1, None]]
    node: LexborNode | None = root
    while True:
        if node is None:  # the children of frames[-1] are all seen
            parent, following, parent_node = frames.pop()
            if following < n_elements and element_parent[following] >= parent:
                return None  # the segmenter counted more elements in it
            frames[-1][1] = following
            if len(frames) == 1:
                break
            node = parent_node.next
            continue
        tag = node.tag
        if tag and tag[0] != "-" and tag[0] != "!" and tag not in drop:
            frame = frames[-1]
            n = frame[1]
            if n >= n_elements:  # past where the segmenter stopped (a truncated page): nothing more to check
                break
            if element_parent[n] != frame[0]:
                return None
            while n >= end and r + 1 < len(ranges):
                r += 1
                start, end = ranges[r]
            inside = start <= n < end
            if inside:
                found[n] = Element(tag, frame[0], node)
            descend = (inside and end > n + 1 or n in on_the_way) and node.child is not None
            if descend and formulas:
                attrs = node.attributes
                descend = not (attrs and is_rendered_copy(attrs))
            if descend:
                frames.append([n, n + 1, node])
                node = node.child
                continue
            frame[1] = subtree_end(element_parent, n)  # (stepped over: its elements counted at once)
        if len(frames) == 1:  # (the root's siblings are not the page's)
            break
        node = node.next
    return found if all(start in found for start, _ in ranges) else None


# What a browser lays out as a block inside a <pre> (a highlighter's line <div>s): a line break before and after.
_BLOCK_IN_PRE: Final = frozenset((
    "address", "article", "aside", "blockquote", "center", "dd", "details", "div", "dl", "dt", "figure",
    "footer", "form", "h1", "h2", "h3", "h4", "h5", "h6", "header", "hr", "li", "main", "nav", "ol", "p", "pre",
    "section", "table", "tr", "ul", "xmp", "listing", "plaintext",
))
# Elements inside a <pre> that a browser does not show (as [segment] drop_tags, but a <button>'s text is shown).
DROP_IN_PRE: Final = frozenset((
    "script", "style", "noscript", "template", "embed", "iframe", "svg", "math", "canvas",
    "audio", "video", "map", "head", "select", "option", "datalist", "textarea", "frameset", "frame",
    "noframes", "param", "source", "track",
))
# What inside a <pre> is not shown as the text of its nodes: line breaks, block elements and elements not shown;
# and the elements that may be hidden by an attribute (most `style`s inside a <pre> are a highlighter's colours).
_NOT_PLAIN_IN_PRE: Final = ", ".join(sorted(_BLOCK_IN_PRE | DROP_IN_PRE | {"br"}))
_MAY_HIDE: Final = "[hidden], [style]"
_HIDING: Final = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.I)


def pre_text(node: LexborNode, drop: frozenset[str] = DROP_IN_PRE) -> str:
    """The text of a `<pre>` as a browser's `innerText` gives it: every character of its text nodes (the
    newline right after `<pre>` the parser already dropped), `<br>` a line break, a block element inside it
    (a highlighter's line `<div>`) on lines of its own, elements not displayed left out; newlines at the end
    removed (a fenced code block ends its last line itself)."""
    # Whether an element inside is hidden: asked of each element only when one is (reading every highlighted
    # span's attributes is most of the time of a <pre> read node by node).
    hiding = any(_hidden(element) for element in node.css(_MAY_HIDE))
    if not hiding and node.css_first(_NOT_PLAIN_IN_PRE) is None:  # (most: text and inline spans only, at once)
        return (node.text(deep=True) or "").rstrip("\n")
    items: list[str | int] = []  # texts, and required line breaks (counts) between them
    stack: list[tuple[int, LexborNode | None]] = []
    child = node.child
    while True:
        while child is None:
            if not stack:
                return _joined(items).rstrip("\n")
            brk, child = stack.pop()
            if brk:
                items.append(brk)
        tag = child.tag
        if tag == "-text":
            text = child.text_content
            if text:
                items.append(text)
            child = child.next
        elif tag == "br":
            items.append("\n")
            child = child.next
        elif not tag or tag[0] in "-!" or tag in drop or (hiding and _hidden(child)):
            child = child.next
        else:
            brk = 2 if tag == "p" else 1 if tag in _BLOCK_IN_PRE else 0
            if brk:
                items.append(brk)
            stack.append((brk, child.next))
            child = child.child


def _hidden(node: LexborNode) -> bool:
    attrs = node.attributes
    if not attrs:
        return False
    if "hidden" in attrs:
        return True
    style = attrs.get("style")
    return isinstance(style, str) and _HIDING.search(style) is not None


def _joined(items: list[str | int]) -> str:
    """innerText's last step: runs of required line breaks become the most newlines any of them asks for, and
    none at either end."""
    out: list[str] = []
    pending = 0
    for item in items:
        if isinstance(item, int):
            pending = max(pending, item)
        else:
            if pending and out:
                out.append("\n" * pending)
            pending = 0
            out.append(item)
    return "".join(out)


_LANGUAGE: Final = re.compile(r"(?:^|\s)(?:language|lang)-([A-Za-z0-9_+#.-]+)")
_HIGHLIGHT: Final = re.compile(r"(?:^|\s)(?:highlight-source|highlight)-([A-Za-z0-9_+#.-]+)")
_NO_LANGUAGE: Final = frozenset(("none", "nohighlight", "plain", "plaintext", "default", "notranslate", "height"))


def code_language(node: LexborNode) -> str:
    """The language a `<pre>` names for its code, from a `language-*`, `lang-*` or `highlight-*` class of its
    own, of the `<code>` inside it, or of the two elements around it (Sphinx's `highlight-python`, GitHub's
    `highlight-source-js`); '' when none does."""
    candidates: list[LexborNode] = [node]
    child = node.child
    while child is not None:
        if child.tag == "code":
            candidates.append(child)
            break
        child = child.next
    up = node.parent
    for _ in range(2):
        if up is None:
            break
        candidates.append(up)
        up = up.parent
    classes = [(candidate.attributes or {}).get("class") or "" for candidate in candidates]
    for pattern in (_LANGUAGE, _HIGHLIGHT):  # (language-* first: "highlight-height language-typescript")
        for value in classes:
            for match in pattern.finditer(value):
                name = match.group(1).lower()
                if name not in _NO_LANGUAGE:
                    return name
    return ""
