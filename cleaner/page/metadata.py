"""The page's metadata (title, publication date, author, site name, canonical URL, description): what a corpus
builder filters, deduplicates and cites pages by, as trafilatura's `--with-metadata` gives it.

Read from what the segmenter's walk already gathered (cleaner.page.page_marks.PageMarks: the head's <meta>
values, its canonical link and <title>, the JSON-LD of head and body), so no second parse of the page. Each
field takes the first source that has a usable value, in this order (docs/metadata.md):

  title          JSON-LD article's headline > og:title > DC.title / dcterms.title > another JSON-LD object's
                 headline or name > <title>
  published      the day in the canonical URL's path (/2017/04/08/) > JSON-LD datePublished >
                 article:published_time > microdata itemprop="datePublished" > DC.date / dcterms.issued /
                 dcterms.created / dcterms.date > <meta name="date" | "pubdate" | "sailthru.date" | ...> >
                 JSON-LD dateCreated, uploadDate
  author         JSON-LD author (a name, a Person or Organization, a list of them) > article:author >
                 DC.creator / dcterms.creator > <meta name="author">
  site_name      JSON-LD publisher.name > og:site_name > JSON-LD WebSite name > DC.publisher > application-name
  canonical_url  <link rel="canonical"> > og:url > JSON-LD url
  description    JSON-LD description > og:description > DC.description > <meta name="description">

JSON-LD comes first: it is written for search engines from the publisher's own record of the page (the article's
headline without the " | Site" suffix a <title> carries, its exact date); OpenGraph next, then Dublin Core, then
the plain <meta> names. The title is the exception: the JSON-LD name of a thing that is not an article is often a
product line's or a software's name, not the page's ("Marketing Hub" for HubSpot's page), so og:title comes
before it. Among JSON-LD objects an article (any type ending in Article or Posting) comes before
another thing (Product, Recipe, Event, ...), which comes before a WebPage. The canonical link comes before og:url,
as its whole purpose is to name the page's URL. A day in the canonical URL's path comes before every written date:
it is the publisher's day in its own time zone, where a timestamp in UTC names the next day for an evening's
article west of Greenwich. A value that is not usable (an author that is a URL, a date that
does not parse, a relative URL) passes on to the next source.

`published` is an ISO 8601 date string, YYYY-MM-DD, the day as the page writes it (in its own time zone): sources
give a day, a minute or a second, with or without a zone, and a day is what filtering and citing need (trafilatura
and htmldate give the same form). The type of the page (`page_type`) is the `cue` family's
(cleaner.page.page_type), given by the caller.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from datetime import date
from email.utils import parsedate

from .hidden_text import parse_json_ld
from .page_marks import PageMarks
from .text import normalise_space

FIELDS = ("title", "published", "author", "site_name", "canonical_url", "description", "page_type")
VALUE_MAX_CHARS = 1000  # a title, an author, a site name; a description is cut at DESCRIPTION_MAX_CHARS
DESCRIPTION_MAX_CHARS = 2000
_MAX_DEPTH = 4  # @graph and mainEntity nest a level or two; deeper objects are parts of the page, not it
# Dates before the web, or far ahead, are a template's placeholder or a typo (htmldate's floor is 1995).
_FIRST_YEAR, _LAST_YEAR = 1990, 2100
_DATE = re.compile(r"(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})|(\d{4})(\d{2})(\d{2})(?!\d)")
_URL = re.compile(r"https?://", re.I)
_TAG = re.compile(r"</?[a-zA-Z][^<>]*>")

_META_TITLE = ("og:title", "dc.title", "dcterms.title")
_META_OPENGRAPH_PUBLISHED = ("article:published_time", "og:article:published_time", "og:pubdate")
_META_PUBLISHED = ("dc.date.issued", "dc.date", "dcterms.issued", "dcterms.created", "dcterms.date", "date",
                   "pubdate", "publishdate", "publish_date", "publish-date", "publication_date", "publicationdate",
                   "article.published", "article:published", "sailthru.date", "parsely-pub-date",
                   "citation_publication_date", "citation_date")
# A day in a URL's path (/2017/04/08/, /2024-05-03-...): the publisher's own day, in its own time zone, where a
# timestamp in UTC may name the next one (a US evening's article "2017-03-22T04:41:50Z" of /2017/03/21/).
_URL_DAY = re.compile(r"/((?:19|20)\d\d)[/-](\d\d)[/-](\d\d)(?=[/-]|\.|$)")
_META_AUTHOR = ("article:author", "dc.creator", "dcterms.creator", "author")
_META_SITE = ("og:site_name", "dc.publisher", "dcterms.publisher", "application-name")
_META_DESCRIPTION = ("og:description", "dc.description", "dcterms.description", "description")


@dataclass(slots=True)
class PageMetadata:
    """What the page says of itself; None where it says nothing usable (docs/metadata.md)."""

    title: str | None = None
    published: str | None = None  # YYYY-MM-DD, as the page writes the day
    author: str | None = None  # several authors joined by "; "
    site_name: str | None = None
    canonical_url: str | None = None  # absolute http(s) URLs only
    description: str | None = None
    page_type: str | None = None  # the `cue` family's page type (cleaner.page.page_type); None for "unknown"

    def as_dict(self) -> dict[str, str | None]:
        """The fields by name, in FIELDS order: the job's columns, the JSON output's keys. (Not dataclasses.asdict,
        which deep-copies each value: 40 us a page, twice.)"""
        return {name: getattr(self, name) for name in FIELDS}


assert tuple(PageMetadata.__dataclass_fields__) == FIELDS, "FIELDS names PageMetadata's fields in their order"


def _text(value: object, limit: int = VALUE_MAX_CHARS) -> str | None:
    """A JSON-LD or <meta> string as shown: entities decoded (JSON-LD often keeps them), markup left out (a
    description's escaped links), whitespace normalised."""
    if not isinstance(value, str):
        return None
    if "&" in value:
        value = html.unescape(value)
    if "<" in value:
        value = _TAG.sub(" ", value)
    value = normalise_space(value[: limit * 2])[:limit].strip()
    return value or None


def iso_date(value: object) -> str | None:
    """The day of a date as the page writes it (ISO 8601, RFC 2822, YYYY/MM/DD, YYYYMMDD) -> "YYYY-MM-DD"."""
    if not isinstance(value, str) or not value.strip():
        return None
    value = value.strip()
    m = _DATE.match(value) or _DATE.search(value[:40])
    if m:
        parts = m.groups()
        y, mo, d = (parts[0], parts[1], parts[2]) if parts[0] else (parts[3], parts[4], parts[5])
        year, month, day = int(y), int(mo), int(d)
    else:
        t = parsedate(value[:80])  # "Tue, 15 Nov 2022 08:12:31 GMT"
        if t is None:
            return None
        year, month, day = t[0], t[1], t[2]
    if not _FIRST_YEAR <= year <= _LAST_YEAR:
        return None
    try:
        return date(year, month, day).isoformat()
    except ValueError:
        return None


def _absolute_url(value: object) -> str | None:
    if not isinstance(value, str):
        return None
    value = value.strip()
    return value if _URL.match(value) and len(value) <= 4 * VALUE_MAX_CHARS else None


def _person(value: object, depth: int = 0) -> list[str]:
    """The names in a JSON-LD author: a string, a Person or Organization ({"name": ...}), a list of them."""
    if depth > 2:
        return []
    if isinstance(value, list):
        return [name for v in value for name in _person(v, depth + 1)]
    if isinstance(value, dict):
        value = value.get("name")
        if isinstance(value, list):  # a name given in several languages
            value = next((v for v in value if isinstance(v, str)), None)
    name = _text(value)
    return [name] if name and not _URL.match(name) else []


def _authors(names: list[str]) -> str | None:
    unique = list(dict.fromkeys(names))
    return "; ".join(unique)[:VALUE_MAX_CHARS] if unique else None


def _type_names(obj: dict) -> list[str]:
    kinds = obj.get("@type")
    return [k.replace(":", "/").rsplit("/", 1)[-1].lower() for k in (kinds if isinstance(kinds, list) else [kinds])
            if isinstance(k, str)]


_NOT_THE_PAGE = frozenset(("website", "organization", "newsmediaorganization", "corporation", "person",
                           "breadcrumblist", "listitem", "imageobject", "videoobject", "audioobject", "mediaobject",
                           "sitenavigationelement", "wpheader",
                           "wpfooter", "wpsidebar", "searchaction", "readaction", "entrypoint", "place",
                           "postaladdress", "contactpoint", "localbusiness", "brand", "rating", "aggregaterating",
                           "offer", "aggregateoffer", "itemlist", "faqpage", "question", "answer"))


def _rank(obj: dict) -> int:
    """0 an article, 1 another thing a page is about, 2 a web page, -1 what is not the page (its site, its
    publisher, its breadcrumbs, its images)."""
    names = _type_names(obj)
    if any(n.endswith("article") or n.endswith("posting") or n == "report" for n in names):
        return 0
    if any(n.endswith("page") and n != "faqpage" for n in names):
        return 2
    if names and not all(n in _NOT_THE_PAGE for n in names):
        return 1
    return -1


def _collect(obj: object, depth: int, found: list[tuple[int, int, dict]], sites: list[dict]) -> None:
    # A module function, not a closure: a closure that calls itself is a reference cycle (cleaner/tools/runtime.py).
    if depth > _MAX_DEPTH:
        return
    if isinstance(obj, list):
        for o in obj:
            _collect(o, depth + 1, found, sites)
    elif isinstance(obj, dict):
        rank = _rank(obj)
        if rank >= 0:
            found.append((rank, len(found), obj))
        elif "website" in _type_names(obj):
            sites.append(obj)
        for key in ("@graph", "mainEntity"):
            if key in obj:
                _collect(obj[key], depth + 1, found, sites)


def _first(objects: list[dict], *keys: str) -> object:
    for obj in objects:
        for key in keys:
            value = obj.get(key)
            if value:
                return value
    return None


def read_metadata(marks: PageMarks, title: str, page_type: str | None = None) -> PageMetadata:
    """The page's metadata from what the segmenter gathered (`marks`) and the head's <title> (`title`, as
    Segmentation.title holds it); `page_type` as the caller knows it ("unknown" and None give None)."""
    if marks.json_ld_objects is None:
        marks.json_ld_objects = parse_json_ld(marks.json_ld)
    found: list[tuple[int, int, dict]] = []
    sites: list[dict] = []
    try:
        _collect(marks.json_ld_objects, 0, found, sites)
    except RecursionError:
        found, sites = [], []
    meta = marks.head_meta
    out = PageMetadata(page_type=page_type if page_type and page_type != "unknown" else None)
    if not found and not sites and not meta and not marks.canonical and not marks.date_published:
        out.title = _text(title)  # (a page that says nothing of itself but its <title>: most of the old sets')
        return out
    ranked = sorted(found, key=lambda f: (f[0], f[1]))
    objects = [obj for _, _, obj in ranked]

    def first_meta(names: tuple[str, ...], read=_text) -> str | None:
        for name in names:
            value = read(meta.get(name))
            if value:
                return value
        return None

    # Each source's value is read only if every one before it gave nothing.
    articles = [obj for rank, _, obj in ranked if rank == 0]
    out.title = (_text(_first(articles, "headline")) or first_meta(_META_TITLE)
                 or _text(_first(objects, "headline")) or _text(_first(objects, "name")) or _text(title))
    out.canonical_url = (_absolute_url(marks.canonical) or _absolute_url(meta.get("og:url"))
                         or _absolute_url(_first(objects, "url")))
    day = _URL_DAY.search(out.canonical_url or "")
    out.published = (iso_date("-".join(day.groups())) if day else None) or iso_date(_first(objects, "datePublished")) \
        or first_meta(_META_OPENGRAPH_PUBLISHED, iso_date) or iso_date(marks.date_published) \
        or first_meta(_META_PUBLISHED, iso_date) or iso_date(_first(objects, "dateCreated", "uploadDate"))
    for obj in objects:
        out.author = _authors(_person(obj.get("author") or obj.get("creator")))
        if out.author:
            break
    if not out.author:
        for name in _META_AUTHOR:
            out.author = _authors(_person(meta.get(name)))
            if out.author:
                break
    publisher = _first(objects, "publisher")
    out.site_name = ((_text(publisher.get("name")) if isinstance(publisher, dict) else None)
                     or first_meta(_META_SITE[:1]) or _text(_first(sites, "name")) or first_meta(_META_SITE[1:]))
    out.description = (_text(_first(objects, "description"), DESCRIPTION_MAX_CHARS)
                       or first_meta(_META_DESCRIPTION, lambda v: _text(v, DESCRIPTION_MAX_CHARS)))
    return out
