"""The page's type as its markup declares it, for the `cue` family's `cue.page` attribute.

A crawl is half articles; the rest is forum threads, product pages, documentation and listings, and what
is content differs between them (every post of a thread, a listing's items). Many pages say what they are:
the schema.org type of their JSON-LD or microdata, their og:type; others show it in their markup (microdata
properties of offers or comments, many <pre>/<code> elements, several <article> cards). This reads that
evidence, which the segmenter gathered (cleaner.page.page_marks.PageMarks), into one coarse type from the
vocabulary of [features.cues.page]: an attribute every block of the page carries, for the CRF to weigh --
not a rule. Schema.org names and markup carry no language, so it works the same on a page in any.
"""

from __future__ import annotations

from typing import Final

from ..config import Config
from .hidden_text import parse_json_ld
from .page_marks import PageMarks

UNKNOWN: Final = "unknown"
_MAX_DEPTH: Final = 4  # @graph and mainEntity nest a level or two; deeper objects are parts, not the page


class PageTyper:
    """[features.cues.page] compiled: `of(marks)` -> a page type of its `order`, or "unknown"."""

    def __init__(self, config: Config):
        pc = config["features"]["cues"]["page"]
        self.order: list[str] = [str(t) for t in pc["order"]]
        self.types = {str(name).lower(): kind for kind, names in pc["types"].items() for name in names}
        self.og_types = {str(name).lower(): kind for kind, names in pc["og_type"].items() for name in names}
        self.itemprops = {str(name).lower(): kind for kind, names in pc["itemprop"].items() for name in names}
        self.listing_min_items = int(pc["listing_min_items"])
        self.listing_of = frozenset(pc["listing_of"])
        self.itemprop_min = int(pc["itemprop_min"])
        self.code_min = int(pc["code_min"])
        self.listing_min_articles = int(pc["listing_min_articles"])

    @property
    def names(self) -> list[str]:
        """Every value `of` can give."""
        return self.order + [UNKNOWN]

    def of(self, marks: PageMarks) -> str:
        """The page's type, typed once per page and typer: the cue features, the decision's fill and the page's
        metadata all ask for it."""
        if marks.typed_by is not self:
            marks.page_type, marks.typed_by = self._type_of(marks), self
        return marks.page_type

    def _type_of(self, marks: PageMarks) -> str:
        if marks.json_ld_objects is None:
            marks.json_ld_objects = parse_json_ld(marks.json_ld)
        # Structured data: the page's own objects (top level, @graph, mainEntity), counted by type.
        declared: dict[str, int] = {}
        for obj in marks.json_ld_objects:
            self._count_json_ld(obj, 0, declared)
        for name in marks.itemtypes:
            kind = self.types.get(name)
            if kind is not None:
                declared[kind] = declared.get(kind, 0) + 1
        kind = self.og_types.get(marks.og_type)
        if kind is not None:
            declared[kind] = declared.get(kind, 0) + 1
        if declared:
            if any(declared.get(k, 0) >= self.listing_min_items for k in self.listing_of):
                return "listing"
            for kind in self.order:
                if kind in declared:
                    return kind
        # Markup: microdata properties, code, <article> elements.
        props: dict[str, int] = {}
        for name, n in marks.itemprops.items():
            kind = self.itemprops.get(name)
            if kind is not None:
                props[kind] = props.get(kind, 0) + n
        for kind in self.order:
            if props.get(kind, 0) >= self.itemprop_min:
                return kind
        if marks.code >= self.code_min:
            return "docs"
        if marks.articles >= self.listing_min_articles:
            return "listing"
        if marks.articles:
            return "article"
        return UNKNOWN

    def _count_json_ld(self, obj, depth: int, declared: dict[str, int]) -> None:
        if depth > _MAX_DEPTH:
            return
        if isinstance(obj, list):
            for o in obj:
                self._count_json_ld(o, depth + 1, declared)
        elif isinstance(obj, dict):
            kinds = obj.get("@type")
            typed = False
            for name in kinds if isinstance(kinds, list) else (kinds,):
                if isinstance(name, str):
                    kind = self.types.get(name.replace(":", "/").rsplit("/", 1)[-1].lower())  # "schema:Product", URLs
                    if kind is not None:
                        declared[kind] = declared.get(kind, 0) + 1
                        typed = True
            if "@graph" in obj:
                self._count_json_ld(obj["@graph"], depth + 1, declared)
            # The main entity of a page of no type of ours (a WebPage's Article); a typed one's main entity is
            # part of it (an FAQPage's Questions, a QAPage's Question).
            if not typed and "mainEntity" in obj:
                self._count_json_ld(obj["mainEntity"], depth + 1, declared)
