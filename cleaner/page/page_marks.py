"""What the markup says of the page as a whole (PageMarks), read while the segmenter walks the page
(cleaner.page.segment): the head's <title>, og:type, <meta> values, canonical link and JSON-LD, the body's
JSON-LD scripts and microdata itemtypes, with the counts the walk keeps. Counted here, interpreted by the `cue`
family's page type (cleaner.page.page_type), by the segmenter's JSON-LD fallback (cleaner.page.hidden_text) and
by the page's metadata (cleaner.page.metadata: title, date, author, ...).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final

from selectolax.lexbor import LexborHTMLParser, LexborNode

from .text import normalise_space

TITLE_MAX_CHARS: Final = 1000
# A head holds 10-60 <meta> elements; a page that holds thousands (generated junk) keeps only its first ones.
HEAD_META_MAX: Final = 200


@dataclass(slots=True)
class PageMarks:
    """What the markup says about the page as a whole, gathered during the walk for the `cue` family's
    page type (cleaner.page.page_type): counted here, interpreted there."""

    json_ld: list[str] = field(default_factory=list)  # the text of every <script type="application/ld+json">
    og_type: str = ""  # <meta property="og:type" content=...>, lower case
    itemtypes: list[str] = field(default_factory=list)  # microdata itemtype names of outermost itemscopes, lower case
    itemprops: dict[str, int] = field(default_factory=dict)  # microdata itemprop name (lower case) -> elements
    articles: int = 0  # <article> elements
    code: int = 0  # <pre> and <code> elements
    # The head's <meta> values by their name, property or itemprop, lower case ("og:title", "dc.date"), the first
    # of each name: the page's metadata (cleaner.page.metadata) reads them.
    head_meta: dict[str, str] = field(default_factory=dict)
    canonical: str = ""  # the head's first <link rel="canonical" href=...>, as written
    # The content (or datetime) of the page's first microdata itemprop="datePublished" (head or body).
    date_published: str = ""
    # The JSON-LD parsed (cleaner.page.hidden_text.parse_json_ld), once, by whichever reader needs it first.
    json_ld_objects: list | None = None
    # The page's type (cleaner.page.page_type.PageTyper.of), once, and the typer that gave it.
    page_type: str = ""
    typed_by: Any = None
    # The parent of every element, numbered in document order (the walk's root 0, its own parent): where a
    # block's element sits in the page (the cue family's main container, cleaner.cues.main_relations).
    element_parent: list[int] = field(default_factory=list)
    # Per element the group of its signature (parent, tag, class; -1: none), and per group its elements: the repeated
    # items (cleaner.page.segment.mark_repeats), whose heaviest group the cue family finds
    # (cleaner.page.cues.heaviest_items).
    element_group: list[int] = field(default_factory=list)
    group_size: list[int] = field(default_factory=list)
    # The blocks' place against the main container (cleaner.page.cues.page_relations), once a page: the cue family and
    # the fill of the main container both read it. (blocks, counts, min_words, share, relations) of the last call.
    relations_memo: tuple | None = field(default=None, compare=False, repr=False)
    # (blocks, counts, repeat_min, heaviest_items' result): the cue family and the fill both ask (cleaner.page.cues)
    heaviest_memo: tuple | None = field(default=None, compare=False, repr=False)


def add_itemtypes(value: str | None, out: list[str]) -> None:
    """The schema.org type names of an itemtype attribute ("https://schema.org/Product" -> "product")."""
    if value:
        for url in value.split():
            out.append(url.rstrip("/").rsplit("/", 1)[-1].lower())


def read_script(node: LexborNode, marks: PageMarks) -> None:
    """Keep the text of a JSON-LD script (PageMarks.json_ld)."""
    attrs = node.attributes
    if attrs and is_json_ld(attrs.get("type")):
        marks.json_ld.append(node.text(deep=True))


def is_json_ld(kind: str | None) -> bool:
    """Whether a <script> of this type attribute (as written) holds JSON-LD."""
    return kind == "application/ld+json"


def page_title(tree: LexborHTMLParser) -> str:
    """The text of the head's first <title> (a <title> in the body is an SVG's or a stray one)."""
    return read_head(tree, PageMarks())


def read_head(tree: LexborHTMLParser, marks: PageMarks) -> str:
    """The text of the head's first <title> (page_title), and the head's og:type and JSON-LD into `marks`."""
    head = tree.head
    # The parser puts a document's <title> among the head's children; walking them costs ~1 µs,
    # a CSS query ~50 µs (its selector is compiled on every call).
    node = head.child if head is not None else None
    title: str | None = None
    while node is not None:
        tag = node.tag
        if tag == "title":
            if title is None:
                title = normalise_space(node.text(deep=True)[:TITLE_MAX_CHARS])
        elif tag == "meta":
            attrs = node.attributes
            if attrs:
                if not marks.og_type and attrs.get("property") == "og:type":
                    marks.og_type = (attrs.get("content") or "").strip().lower()
                read_meta(attrs, marks.head_meta)
        elif tag == "link":
            if not marks.canonical:
                attrs = node.attributes
                if attrs and (attrs.get("rel") or "").strip().lower() == "canonical":
                    marks.canonical = (attrs.get("href") or "").strip()
        elif tag == "script":
            read_script(node, marks)
        node = node.next
    return title or ""


def read_meta(attrs: dict, out: dict[str, str]) -> None:
    """A <meta>'s value under its name, property or itemprop (lower case), unless that name has one already."""
    content = attrs.get("content")
    if not content or len(out) >= HEAD_META_MAX:
        return
    for key in ("property", "name", "itemprop"):
        name = attrs.get(key)
        if name:
            name = name.strip().lower()
            if name and name not in out:
                out[name] = content
