"""The kept blocks as Markdown: headings, lists, tables, code, block quotes and formulas (issue 42).

It adds to the labels and reads them as they are: the blocks kept are those of the text column (the labeller's
labels with `cleaner.output.assemble.keep_touching`), cut into the same segments, and the text column itself is
not touched. What the Markdown adds comes from where each kept block sits in the page:

* its ancestors' tags, which every block carries (`Block.containers`, innermost 24) with its element's number
  (`Block.element`) and every element's parent (`PageMarks.element_parent`): a heading's level (`#` to `######`),
  list items (`-`, `1.`, nested ones indented under their item), block quotes (`>`), inline `<code>` (backticks);
* and, only when a kept block needs what no block says, a second walk of the page's tree
  (cleaner.page.structure.read_elements): a data table's rows and cells (colspan, rowspan), a `<pre>` as a
  browser shows it (blank lines, every space) with its language (`language-*`, `lang-*` classes), a link's
  address (`links`), an image's address (`images`). A page whose tree cannot be read again (the walk's numbering
  disagrees) is rendered from its blocks alone, `MarkdownOut.fallback` says why: a `<pre>` is fenced from its
  kept lines, a table's cells are lines.

Rules:
* A segment of the text is a Markdown block of its own (a heading's segments are one heading, a `<pre>`'s one
  code block); a heading, a list item, a block quote, a `<pre>` or a table starts one too. Blocks are separated
  by a blank line, list items by a line break (a tight list).
* A data table is a GFM pipe table, written whole where its first kept block is, when at least a third of its
  words are kept; its first row is the header when it is made of `<th>` cells (or sits in `<thead>`), else the
  header row is empty. A colspan leaves the cells it spans empty; a rowspan repeats the cell in each row it
  spans, so that every row reads whole. `|` in a cell is escaped, a cell's lines are joined by spaces. A layout
  table (nested tables, a `<pre>` inside, one column, one row without `<th>`, most rows with one
  text, a cell of more than LAYOUT_CELL_WORDS words, `role="presentation"`) is not a table: its cells are read
  as paragraphs.
* A `<pre>` with a kept line is a fenced code block holding every character of it, as `innerText` gives it.
* Formulas are already TeX (cleaner.page.math): `$...$` inline, `$$...$$` a block of its own.
* Image alt texts are left out unless `images` is asked for (`![alt](src)`), as trafilatura does.
* A line of text that would read as Markdown syntax (`# `, `> `, a fence, a rule) is escaped with
  a backslash; nothing else in the text is.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Final

from ..labels import CONTINUATION, OTHER
from ..page.segment import Block
from ..page.structure import Element, code_language, pre_text, subtree_end
from .assemble import keep_touching

# A cell with more words than this is a page's column, not a datum: its table is a layout table.
LAYOUT_CELL_WORDS: Final = 150
# A data table is written whole when at least this share of its words is kept (else its kept cells are lines).
TABLE_KEPT_SHARE: Final = 1 / 3
# More columns than this: not a table a reader reads as one (nor one worth a pipe table).
MAX_COLUMNS: Final = 64


@dataclass(frozen=True)
class MarkdownOptions:
    """What the Markdown adds on request, as trafilatura's `include_links` / `include_images` /
    `include_formatting`."""

    links: bool = False
    images: bool = False
    emphasis: bool = False  # <strong>/<b> as **bold**, <em>/<i> as *italic*


def markdown_options(corpus) -> MarkdownOptions | None:
    """The Markdown a job's [corpus] settings ask for (cleaner.settings.Corpus: markdown, markdown_links,
    markdown_images, markdown_emphasis); None when it asks for none."""
    if not corpus.markdown:
        return None
    return MarkdownOptions(links=corpus.markdown_links, images=corpus.markdown_images,
                           emphasis=corpus.markdown_emphasis)


@dataclass
class MarkdownOut:
    text: str
    # Why the page's tree was not read again and the Markdown was made from the blocks alone ("numbering": the
    # second walk's element numbers disagree with the segmenter's); None when it was read, or not needed.
    fallback: str | None = None
    tables: int = 0  # data tables written as pipe tables
    layout_tables: int = 0  # tables with kept text read as layout
    code_blocks: int = 0
    walked: bool = False  # whether the tree was walked again


# A read of the page's tree: element numbers asked for, those of them asked for alone -> those elements and
# everything inside them (but those alone), or None (cleaner.page.structure.read_elements).
TreeReader = Callable[[set[int], set[int]], "dict[int, Element] | None"]

# The frame of an element: what its ancestors (and itself) make of the text inside it.
# (one a line: a Final constant is compiled into the code that reads it, not looked up as a global)
_HEAD: Final = 0
_LIST: Final = 1
_CUR_LIST: Final = 2
_QUOTE: Final = 3
_PRE: Final = 4
_TABLES: Final = 5
_ROW: Final = 6
_CELL: Final = 7
_CODE: Final = 8
_LINK: Final = 9
_STRONG: Final = 10
_EM: Final = 11
_ROOT_FRAME: Final[tuple] = (None, (), None, 0, -1, (), -1, -1, -1, -1, -1, -1)
_HEADINGS: Final = {f"h{k}": k for k in range(1, 7)}
_LISTS: Final = {"ul": False, "ol": True, "menu": False, "dir": False}
_INLINE_CODE: Final = frozenset(("code", "kbd", "samp", "tt"))
_EMPHASIS: Final = {"strong": _STRONG, "b": _STRONG, "em": _EM, "i": _EM}
_MARKER: Final = {_STRONG: "**", _EM: "*"}
# The tags that change a frame (_combine); any other leaves it as it is. Emphasis only when asked for, so that
# without it the frames are the ones they were.
_STRUCTURAL: Final = frozenset((*_HEADINGS, "li", *_LISTS, "blockquote", "pre", "table", "tr", "td", "th",
                                *_INLINE_CODE, "a"))
_STRUCTURAL_WITH_EMPHASIS: Final = _STRUCTURAL | frozenset(_EMPHASIS)


def _combine(f: tuple, tag: str, e: int) -> tuple:
    if tag in _HEADINGS:
        return ((e, _HEADINGS[tag]),) + f[1:] if f[_HEAD] is None else f
    if tag == "li":
        cur = f[_CUR_LIST]
        item = (e, cur[0] if cur else -1, cur[1] if cur else False)
        return f[:1] + (f[_LIST] + (item,), None) + f[3:]
    if tag in _LISTS:
        return f[:2] + ((e, _LISTS[tag]),) + f[3:]
    if tag == "blockquote":
        return f[:3] + (f[_QUOTE] + 1,) + f[4:]
    if tag == "pre":
        return f[:4] + (e,) + f[5:] if f[_PRE] < 0 else f
    if tag == "table":
        return f[:5] + (f[_TABLES] + (e,), -1, -1) + f[8:]
    if tag == "tr":
        return f[:6] + (e, -1) + f[8:]
    if tag == "td" or tag == "th":
        return f[:7] + (e,) + f[8:]
    if tag in _INLINE_CODE:
        return f[:8] + (e,) + f[9:] if f[_PRE] < 0 and f[_CODE] < 0 else f
    if tag == "a":  # (an anchor without href is "a-nohref")
        return f[:9] + (e,) + f[10:]
    if tag in _EMPHASIS:  # (the outermost of nested ones; none inside code, whose text is literal)
        slot = _EMPHASIS[tag]
        return f[:slot] + (e,) + f[slot + 1:] if f[slot] < 0 and f[_PRE] < 0 and f[_CODE] < 0 else f
    return f


class _Frames:
    """Each block's frame, from its containers and the element numbers (memoised per element)."""

    def __init__(self, element_parent: list[int], emphasis: bool = False):
        self.parent = element_parent
        self.structural = _STRUCTURAL_WITH_EMPHASIS if emphasis else _STRUCTURAL
        self.memo: dict[int, tuple] = {}
        # element -> (its frame, the key of the Markdown block its text is in); the same by the frame's id (the
        # frames are held by `memo`, so their ids stay theirs)
        self.keys: dict[int, tuple] = {}
        self.frame_keys: dict[int, tuple] = {}

    def keyed(self, b: Block) -> tuple[tuple, tuple]:
        hit = self.keys.get(b.element)
        if hit is None:
            f = self.of(b)
            hit = self.frame_keys.get(id(f))  # (the elements inside a <pre>, a cell, a paragraph share their frame)
            if hit is None:
                if f[_PRE] >= 0:
                    key: tuple = ("pre", f[_PRE])
                elif f[_TABLES]:
                    key = ("cells", f[_TABLES][-1], f[_HEAD], f[_LIST][-1][0] if f[_LIST] else -1, f[_QUOTE])
                else:
                    key = ("flow", f[_HEAD], f[_LIST][-1][0] if f[_LIST] else -1, f[_QUOTE])
                hit = self.frame_keys[id(f)] = (f, key)
            self.keys[b.element] = hit
        return hit

    def of(self, b: Block) -> tuple:
        e = b.element
        if e <= 0 or e >= len(self.parent):
            return _ROOT_FRAME
        memo = self.memo
        f = memo.get(e)
        if f is not None:
            return f
        containers = b.containers
        k = len(containers) - 1
        path = []
        x = e
        while x > 0 and x not in memo:
            path.append((x, containers[k] if k >= 0 else ""))
            x = self.parent[x]
            k -= 1
        f = memo[x] if x > 0 else _ROOT_FRAME
        structural = self.structural
        for x, tag in reversed(path):
            if tag in structural:
                f = _combine(f, tag, x)
            memo[x] = f
        return f


@dataclass
class _Unit:
    key: tuple
    frame: tuple
    pieces: list = field(default_factory=list)  # (gap, text, frame, block, its index)


# A line of text that Markdown would read as a heading, a quote, a fence or a rule (a list marker in the text is
# left as it is: read as a list item, it says what the page shows).
_BLOCK_SYNTAX: Final = re.compile(r"#{1,6}(?:\s|$)|>|`{3,}|~{3,}|[=_*-]{3,}\s*$")


def _escape_line(line: str) -> str:
    return "\\" + line if _BLOCK_SYNTAX.match(line) else line


def _code_span(inner: str) -> str:
    inner = inner.replace("\n", " ")
    if not inner.strip():
        return inner
    longest = max((len(run) for run in re.findall(r"`+", inner)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if inner[0] == "`" or inner[-1] == "`" else ""
    return f"{fence}{pad}{inner}{pad}{fence}"


def _url(value: str) -> str:
    value = value.strip()
    return f"<{value}>" if any(c in value for c in " ()<>") else value


class _Renderer:
    def __init__(self, blocks: Sequence[Block], labels: list[str], element_parent: list[int],
                 read_tree: TreeReader | None, options: MarkdownOptions):
        self.blocks = blocks
        self.gaps = [b.gap for b in blocks]
        self.kept = keep_touching(labels, self.gaps)
        self.parent = element_parent
        self.frames = _Frames(element_parent, options.emphasis)
        self.read_tree = read_tree
        self.options = options
        self.tree: dict[int, Element] = {}
        self.out = MarkdownOut("")

    # -- which blocks belong together ---------------------------------------------------------------------------
    def units(self) -> list[_Unit]:
        blocks, kept, gaps = self.blocks, self.kept, self.gaps
        keyed = self.frames.keyed
        images = self.options.images
        units: list[_Unit] = []
        unit: _Unit | None = None
        previous = -1
        for i in [i for i, label in enumerate(kept) if label != OTHER]:
            b = blocks[i]
            display = False
            if b.artificial is not None:
                if b.artificial == "img-alt" and not images:
                    continue
                display = b.artificial == "math" and b.text.startswith("$$")
            if previous == i - 1:
                gap = gaps[i]
                touching = gap == ""
            else:
                gap = "\n" if previous < 0 or "\n" in gaps[previous + 1: i + 1] else " "
                touching = False
            f, key = keyed(b)
            if (unit is None or display or unit.key != key
                    or not (kept[i] == CONTINUATION or touching  # (continues_segment)
                            or f[_HEAD] is not None or f[_PRE] >= 0)):
                unit = _Unit(("math", i) if display else key, f)
                units.append(unit)
                gap = ""
            unit.pieces.append((gap, b.text if b.shown is None else b.shown, f, b, i))
            previous = i
        return units

    # -- the tree, read once for every element that needs it ----------------------------------------------------
    def read(self, units: list[_Unit]) -> None:
        targets: dict[int, str] = {}  # element -> the tag its blocks say it has
        for unit in units:
            if unit.key[0] == "pre":
                targets[unit.key[1]] = "pre"
            elif unit.key[0] == "cells" and unit.key[1] not in self.tables_checked:
                t = unit.key[1]
                self.tables_checked.add(t)
                if self.table_candidate(t):
                    targets[t] = "table"
                    self.candidates.add(t)
            if self.options.links or self.options.images:
                for _, _, f, b, _ in unit.pieces:
                    if self.options.links and f[_LINK] >= 0:
                        targets[f[_LINK]] = "a"
                    if b.artificial == "img-alt":
                        targets[b.element] = "img"
        if not targets or self.read_tree is None:
            if targets:
                self.out.fallback = "no tree"
            return
        self.out.walked = True
        found = self.read_tree(set(targets), {e for e, tag in targets.items() if tag != "table"})
        if found is None or any(found[e].tag != tag for e, tag in targets.items()):
            self.out.fallback = "numbering"
            return
        self.tree = found

    def block_run(self, t: int) -> range:
        """The blocks inside element t: a run of consecutive blocks (document order)."""
        end = subtree_end(self.parent, t)
        first = self.first_block.get(t)
        if first is None:
            return range(0)
        blocks = self.blocks
        lo = first
        while lo > 0 and t <= blocks[lo - 1].element < end:
            lo -= 1
        hi = first
        while hi + 1 < len(blocks) and t <= blocks[hi + 1].element < end:
            hi += 1
        return range(lo, hi + 1)

    def table_candidate(self, t: int) -> bool:
        """What the blocks say of table t: not a layout table as far as they show (no table or <pre> inside, no
        long cell, at least two cells with text)."""
        frame_of = self.frames.of
        words: dict[int, int] = {}
        for i in self.block_run(t):
            b = self.blocks[i]
            f = frame_of(b)
            tables = f[_TABLES]
            if tables[-1] != t or f[_PRE] >= 0:
                return False
            if f[_CELL] >= 0:
                n = words.get(f[_CELL], 0) + len(b.text.split())
                if n > LAYOUT_CELL_WORDS:
                    return False
                words[f[_CELL]] = n
        return len(words) >= 2

    # -- rendering ------------------------------------------------------------------------------------------------
    def render(self) -> MarkdownOut:
        self.tables_checked: set[int] = set()
        self.candidates: set[int] = set()
        self.first_block: dict[int, int] = {}
        units = self.units()
        for unit in units:
            if unit.key[0] == "cells" and unit.key[1] not in self.first_block:
                self.first_block[unit.key[1]] = unit.pieces[0][4]
        self.read(units)
        parts: list[str] = []
        previous_list = False
        done: set[tuple] = set()
        self.numbers: dict[int, int] = {}  # list element -> items numbered so far
        self.item_marker: dict[int, str] = {}  # list item element -> its marker
        for unit in units:
            kind = unit.key[0]
            is_list = False
            if kind == "pre":
                if unit.key in done:
                    continue
                done.add(unit.key)
                text = self.code_block(unit)
            elif kind == "cells" and unit.key[1] in self.candidates:
                table_key = ("table", unit.key[1])
                if table_key in done:
                    continue
                table = self.table(unit.key[1])
                if table is None:  # a layout table after all
                    self.candidates.discard(unit.key[1])
                    done.add(("layout", unit.key[1]))
                    self.out.layout_tables += 1
                    text, is_list = self.flow(unit)
                else:
                    done.add(table_key)
                    text = table
            else:
                if kind == "cells" and ("layout", unit.key[1]) not in done:
                    done.add(("layout", unit.key[1]))
                    self.out.layout_tables += 1
                text, is_list = self.flow(unit)
            if not text:
                continue
            if parts:
                parts.append("\n" if is_list and previous_list else "\n\n")
            parts.append(text)
            previous_list = is_list
        self.out.text = "".join(parts)
        return self.out

    def inline(self, pieces: list, lines: bool = True, emphasis: bool = True) -> str:
        """Pieces joined by their gaps, with inline code in backticks and (on request) links, images and
        emphasis. The spans a piece sits in are opened outermost first (emphasis and link in their elements'
        order, an ancestor's number being smaller; then code, whose span holds no markup) and closed innermost
        first where the next piece leaves them; two emphasis elements of a kind that touch are one span
        (`<b>a</b><b>b</b>` is **ab**)."""
        links = self.options.links
        emphasis = emphasis and self.options.emphasis
        stack: list[list[str]] = [[]]
        spans: list[tuple[int, int]] = []  # the open spans, outermost first: (frame slot, element)
        for gap, text, f, b, _ in pieces:
            if b.artificial == "img-alt":
                element = self.tree.get(b.element)
                src = element.attrs.get("src") if element is not None else None
                text = f"![{text}]({_url(src)})" if src else f"![{text}]()"
            if not spans and f[_CODE] < 0 and (not links or f[_LINK] < 0) and (
                    not emphasis or (f[_STRONG] < 0 and f[_EM] < 0)):
                stack[-1].append(gap)  # (most pieces: plain text outside any span)
                stack[-1].append(text)
                continue
            wanted: list[tuple[int, int]] = []
            if emphasis and (f[_STRONG] >= 0 or f[_EM] >= 0):
                wanted = sorted((f[slot], slot) for slot in (_STRONG, _EM, _LINK) if f[slot] >= 0
                                and (links or slot != _LINK))
                wanted = [(slot, e) for e, slot in wanted]
            elif links and f[_LINK] >= 0:
                wanted.append((_LINK, f[_LINK]))
            if f[_CODE] >= 0:
                wanted.append((_CODE, f[_CODE]))
            same = 0
            while same < len(spans) and same < len(wanted):
                if spans[same] != wanted[same]:
                    if not (gap == "" and spans[same][0] == wanted[same][0] and wanted[same][0] in _MARKER):
                        break
                    spans[same] = wanted[same]  # (touching emphasis of the same kind: the span goes on)
                same += 1
            while len(spans) > same:
                self.close_span(stack, spans.pop())
            stack[-1].append(gap)
            for span in wanted[same:]:
                spans.append(span)
                stack.append([])
            stack[-1].append(text)
        while spans:
            self.close_span(stack, spans.pop())
        text = "".join(stack[0])
        return text if lines else " ".join(text.split("\n"))

    def close_span(self, stack: list[list[str]], span: tuple[int, int]) -> None:
        """The innermost open span written into the one around it: `code`, [text](address), **bold**, *italic*
        (a span with no text is its text alone)."""
        inner = "".join(stack.pop())
        slot, e = span
        if slot == _CODE:
            stack[-1].append(_code_span(inner))
        elif slot == _LINK:
            element = self.tree.get(e)
            href = element.attrs.get("href") if element is not None else None
            stack[-1].append(f"[{inner.replace(chr(10), ' ')}]({_url(href)})" if href and inner.strip()
                             else inner)
        else:
            marker = _MARKER[slot]
            stack[-1].append(f"{marker}{inner}{marker}" if inner.strip() else inner)

    def flow(self, unit: _Unit) -> tuple[str, bool]:
        f = unit.frame
        if unit.key[0] == "math":
            return "".join(p[1] for p in unit.pieces), False
        head = f[_HEAD]
        text = self.inline(unit.pieces, lines=head is None, emphasis=head is None)  # (a heading is strong already)
        if not text.strip():
            return "", False
        if head is not None:
            line = "#" * head[1] + " " + text.strip()
            return self.prefixed([line], f)[0], False
        lines = [_escape_line(line) for line in text.split("\n")]
        return self.prefixed(lines, f)

    def prefixed(self, lines: list[str], f: tuple) -> tuple[str, bool]:
        """Lines with their block quote's `>` and their list item's marker or indentation."""
        items = f[_LIST]
        indent = ""
        marker = ""
        if items:
            for li, _, _ in items[:-1]:
                known = self.item_marker.get(li)
                if known is not None:
                    indent += " " * len(known)
            li, lst, ordered = items[-1]
            known = self.item_marker.get(li)
            if known is None:
                if ordered:
                    n = self.numbers[lst] = self.numbers.get(lst, 0) + 1
                    known = f"{n}. "
                else:
                    known = "- "
                self.item_marker[li] = known
                marker = known
        quote = "> " * f[_QUOTE]
        out = []
        for k, line in enumerate(lines):
            if items:
                lead = indent + (marker if k == 0 and marker else " " * len(self.item_marker[items[-1][0]]))
            else:
                lead = ""
            out.append((quote + lead + line).rstrip() if line else quote.rstrip())
        return "\n".join(out), bool(items)

    def code_block(self, unit: _Unit) -> str:
        pre = unit.key[1]
        element = self.tree.get(pre)
        if element is not None:
            text = pre_text(element.node)
            language = code_language(element.node)
        else:  # the blocks alone: the kept lines, without the blank ones
            text = "".join(p[0] + p[1] for p in unit.pieces)
            language = ""
        if not text.strip():
            return ""
        self.out.code_blocks += 1
        longest = max((len(run) for run in re.findall(r"^\s*(`{3,})", text, re.M)), default=2)
        fence = "`" * max(3, longest + 1)
        return f"{fence}{language}\n{text}\n{fence}"

    def table(self, t: int) -> str | None:
        """Table t as a GFM pipe table, or None when it is a layout table after all (or too little is kept)."""
        tree = self.tree
        table = tree.get(t)
        if table is None:
            return None
        role = (table.attrs.get("role") or "").lower()
        if role in ("presentation", "none"):
            return None
        rows: list[int] = []
        cells: dict[int, list[int]] = {}
        header_rows: set[int] = set()
        end = subtree_end(self.parent, t)
        for e in range(t + 1, end):
            element = tree.get(e)
            if element is None:
                return None
            if element.tag == "table":
                return None
            if element.tag == "tr":
                rows.append(e)
                cells[e] = []
                parent = tree.get(element.parent)
                if parent is not None and parent.tag == "thead":
                    header_rows.add(e)
            elif element.tag in ("td", "th") and element.parent in cells:
                cells[element.parent].append(e)
        # the cells' texts, from all their blocks (kept or not: the table is written whole)
        text_of: dict[int, list] = {}
        kept_words = all_words = 0
        frame_of = self.frames.of
        images = self.options.images
        caption: list = []
        for i in self.block_run(t):
            b = self.blocks[i]
            if b.artificial == "img-alt" and not images:
                continue
            f = frame_of(b)
            n = len(b.text.split())
            all_words += n
            if self.kept[i] != OTHER:
                kept_words += n
            pieces = text_of.setdefault(f[_CELL], []) if f[_CELL] >= 0 else caption
            pieces.append((b.gap if pieces else "", b.shown if b.shown is not None else b.text, f, b, i))
        if all_words and kept_words < TABLE_KEPT_SHARE * all_words:
            return None
        grid: list[list[str]] = []
        pending: dict[tuple[int, int], str] = {}
        header = False
        for r, tr in enumerate(rows):
            row: list[str] = []
            all_th = bool(cells[tr])
            for c_el in cells[tr]:
                while (r, len(row)) in pending:
                    row.append(pending.pop((r, len(row))))
                element = tree[c_el]
                if element.tag != "th":
                    all_th = False
                colspan = _span(element.attrs, "colspan", 1000)
                rowspan = _span(element.attrs, "rowspan", 65534)
                if rowspan == 0:
                    rowspan = len(rows) - r
                text = self.cell_text(text_of.get(c_el, []))
                c = len(row)
                row.append(text)
                row.extend([""] * (colspan - 1))
                if len(row) > MAX_COLUMNS:
                    return None
                for dr in range(1, min(rowspan, len(rows) - r)):
                    for k in range(colspan):
                        pending[(r + dr, c + k)] = text if k == 0 else ""
            while (r, len(row)) in pending:
                row.append(pending.pop((r, len(row))))
            if r == 0:
                header = all_th or tr in header_rows
            grid.append(row)
        width = max((len(row) for row in grid), default=0)
        if width < 2 or (len(grid) < 2 and not header) or not any(any(row) for row in grid):
            return None
        if sum(sum(1 for c in row if c) >= 2 for row in grid) * 2 < len(grid):
            return None  # most rows hold one text: a column of the page's layout, not a row of data
        for row in grid:
            row.extend([""] * (width - len(row)))
        lines = []
        if caption:
            text = self.inline(caption, lines=False).strip()
            if text:
                lines.extend([_escape_line(text), ""])
        head = grid[0] if header else [""] * width
        body = grid[1:] if header else grid
        lines.append(_pipe_row(head))
        lines.append("|" + "|".join([" --- "] * width) + "|")
        lines.extend(_pipe_row(row) for row in body)
        self.out.tables += 1
        return "\n".join(lines)

    def cell_text(self, pieces: list) -> str:
        text = self.inline(pieces, lines=False) if pieces else ""
        return " ".join(text.split()).replace("|", "\\|")


def _span(attrs: dict | None, name: str, limit: int) -> int:
    value = attrs.get(name) if attrs else None
    if not value:
        return 1
    digits = re.match(r"\s*(\d+)", value)
    if digits is None:
        return 1
    return min(int(digits.group(1)), limit) if name == "rowspan" else max(1, min(int(digits.group(1)), limit))


def _pipe_row(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def render_markdown(blocks: Sequence[Block], labels: list[str], element_parent: list[int],
                    read_tree: TreeReader | None = None, options: MarkdownOptions | None = None) -> MarkdownOut:
    """The kept blocks of a page as Markdown (module docstring). `labels`: the labeller's, as the text column is
    assembled from; `element_parent`: the segmentation's (`PageMarks.element_parent`); `read_tree`: the second
    walk of the page's tree (cleaner.page.structure.read_elements bound to the page), called at most once and
    only when a kept block needs it; None: the blocks alone."""
    return _Renderer(blocks, labels, element_parent, read_tree, options or MarkdownOptions()).render()
