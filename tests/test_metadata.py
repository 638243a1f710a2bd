"""The page's metadata (cleaner/page/metadata.py, docs/metadata.md): each source, the precedence between them, a
missing value, real shared pages, and the columns through clean_html, `cleaner clean --format jsonl` and the
Parquet of `cleaner clean-warc`."""

from __future__ import annotations

import json
import subprocess
import sys

import pyarrow.parquet as pq
import pytest
from conftest import ROOT, make_warc
from test_clean_warc_local import clean_warc, no_spark  # noqa: F401  (no_spark: the fixture)

from cleaner.api import clean_html
from cleaner.config import load_config
from cleaner.gold.data import read_html_file
from cleaner.output.schema import SCHEMA
from cleaner.page.metadata import FIELDS, PageMetadata, iso_date, read_metadata
from cleaner.page.segment import parse_html, segment_tree

BODY = "<body><article><h1>A headline</h1><p>" + "A sentence of the article's text, long enough. " * 8 + \
    "</p></article></body>"


def meta_of(head: str, body: str = BODY) -> PageMetadata:
    """The metadata of a page with this <head> content, read as clean_html reads it (the segmenter's walk)."""
    config = load_config()
    seg = segment_tree(parse_html(f"<!doctype html><html><head>{head}</head>{body}</html>", config), config)
    return read_metadata(seg.page, seg.title)


def ld(obj: object) -> str:
    return f'<script type="application/ld+json">{json.dumps(obj)}</script>'


def test_json_ld_article():
    m = meta_of(ld({
        "@context": "https://schema.org", "@type": "NewsArticle", "headline": "The JSON-LD headline",
        "datePublished": "2024-05-03T08:15:00+02:00", "dateModified": "2024-06-01",
        "author": [{"@type": "Person", "name": "Ann Author"}, {"@type": "Person", "name": "Bob Writer"}],
        "publisher": {"@type": "Organization", "name": "The Daily Example"},
        "url": "https://news.example/story/1", "description": "What the story says &amp; more.",
    }) + "<title>The title | The Daily Example</title>")
    assert m == PageMetadata("The JSON-LD headline", "2024-05-03", "Ann Author; Bob Writer", "The Daily Example",
                             "https://news.example/story/1", "What the story says & more.", None)


def test_json_ld_graph_authors_as_strings_and_objects_that_are_not_the_page():
    m = meta_of(ld({"@context": "https://schema.org", "@graph": [
        {"@type": "WebSite", "name": "Example Site", "url": "https://example.org/"},
        {"@type": "VideoObject", "name": "An embedded video", "uploadDate": "2020-01-01"},
        {"@type": "WebPage", "name": "The page's name", "datePublished": "2023-02-01",
         "description": "The page described"},
        {"@type": ["BlogPosting"], "headline": "The post", "author": "Carla Blogger",
         "mainEntityOfPage": {"@id": "https://example.org/post"}},
    ]}))
    # the article before the web page, the web page before nothing; a video is a part of the page, not it
    assert (m.title, m.published, m.author, m.description) == ("The post", "2023-02-01", "Carla Blogger",
                                                               "The page described")
    assert m.site_name == "Example Site"  # no publisher: the WebSite's name, after og:site_name (none here)


def test_opengraph():
    m = meta_of('<meta property="og:title" content="The OG title"><meta property="og:site_name" content="OG Site">'
                '<meta property="og:url" content="https://og.example/a"><meta property="og:description" '
                'content="OG description"><meta property="article:published_time" content="2021-12-31T23:59:00Z">'
                '<meta property="article:author" content="https://www.facebook.com/someone">'
                '<meta name="author" content="Dana Meta"><title>Other title</title>')
    # article:author holds a profile URL, not a name: the next source's name is taken
    assert m == PageMetadata("The OG title", "2021-12-31", "Dana Meta", "OG Site", "https://og.example/a",
                             "OG description", None)


def test_dublin_core():
    m = meta_of('<meta name="DC.title" content="The DC title"><meta name="DC.date" content="2009-07-15">'
                '<meta name="DC.creator" content="Eve Creator"><meta name="DC.publisher" content="DC Press">'
                '<meta name="DC.description" content="DC description"><title>Other</title>')
    assert m == PageMetadata("The DC title", "2009-07-15", "Eve Creator", "DC Press", None, "DC description", None)
    m = meta_of('<meta name="dcterms.title" content="Terms title"><meta name="dcterms.issued" content="2010/03/04">'
                '<meta name="dcterms.creator" content="Frank Terms">')
    assert (m.title, m.published, m.author) == ("Terms title", "2010-03-04", "Frank Terms")


def test_plain_meta_names_canonical_link_and_title():
    m = meta_of('<title> The  page\n title </title><meta name="author" content="Gina Plain">'
                '<meta name="description" content=" A plain description. "><meta name="date" content="20190412">'
                '<meta name="application-name" content="App Site">'
                '<link rel="canonical" href="https://plain.example/page"><meta property="og:url" '
                'content="https://plain.example/other">')
    # the canonical link before og:url; the <title> whitespace-normalised as the title of last resort
    assert m == PageMetadata("The page title", "2019-04-12", "Gina Plain", "App Site", "https://plain.example/page",
                             "A plain description.", None)


def test_precedence_json_ld_over_opengraph_over_dublin_core_over_meta():
    head = ('<meta name="description" content="meta"><meta name="DC.description" content="dc">'
            '<meta property="og:description" content="og">')
    assert meta_of(head).description == "og"
    assert meta_of(head + ld({"@type": "Article", "description": "json-ld"})).description == "json-ld"
    assert meta_of('<meta name="DC.description" content="dc"><meta name="description" content="meta">'
                   ).description == "dc"
    # og:title before the JSON-LD name of a thing that is not an article (a product line, a software)
    m = meta_of('<meta property="og:title" content="Buy the thing">' + ld({"@type": "Product", "name": "Thing"}))
    assert m.title == "Buy the thing"
    assert meta_of(ld({"@type": "Product", "name": "Thing"}) + "<title>Thing | Shop</title>").title == "Thing"


def test_missing_values_are_none():
    m = meta_of("")
    assert m == PageMetadata() and all(v is None for v in m.as_dict().values())
    assert tuple(m.as_dict()) == FIELDS
    # values that are not usable: a relative canonical link, a date that is no date, an empty content
    m = meta_of('<link rel="canonical" href="/relative"><meta name="date" content="sometime">'
                '<meta name="author" content=""><title>   </title>' + ld({"@type": "Article", "headline": ""}))
    assert m == PageMetadata()
    assert meta_of("broken", "<p>no head at all</p>") == PageMetadata()
    assert meta_of('<script type="application/ld+json">{"@type": "Article", "headline": </script>') == PageMetadata()


def test_dates():
    assert iso_date("2024-05-03T08:15:00+02:00") == "2024-05-03"
    assert iso_date("2024/5/3") == "2024-05-03"
    assert iso_date("20240503") == "2024-05-03"
    assert iso_date("Tue, 15 Nov 2022 08:12:31 GMT") == "2022-11-15"
    assert iso_date("Published 2017-03-28 10:00") == "2017-03-28"
    for bad in ("", "2024-13-40", "0001-01-01", "yesterday", None, 20240503):
        assert iso_date(bad) is None
    # microdata in the body, and the day in the canonical URL's path before a timestamp in UTC of the next day
    assert meta_of("", '<body><span itemprop="datePublished" content="2016-08-09">Aug 9</span><p>x</p></body>'
                   ).published == "2016-08-09"
    m = meta_of('<link rel="canonical" href="https://x.example/news/2017/04/07/story/">'
                + ld({"@type": "NewsArticle", "datePublished": "2017-04-08T00:36:08Z"}))
    assert m.published == "2017-04-07"


def test_markup_and_entities_in_values_are_text():
    m = meta_of(ld({"@type": "Article", "headline": "Fish &amp; chips", "description":
                    "Our reporter <a href=\"https://x.example\">Hal</a> has more."}))
    assert (m.title, m.description) == ("Fish & chips", "Our reporter Hal has more.")


def test_clean_html_gives_the_metadata_and_the_page_type():
    page = ("<html><head><title>A title</title>" + ld({"@type": "NewsArticle", "headline": "News",
            "datePublished": "2020-02-02"}) + "</head>" + BODY + "</html>").encode()
    r = clean_html(page)
    assert r.ok and r.metadata is not None
    assert (r.metadata.title, r.metadata.published, r.metadata.page_type) == ("News", "2020-02-02", "article")
    assert r.title == "A title"  # CleanResult.title stays the <title>
    assert r.metadata_columns() == r.metadata.as_dict()
    # kept for a page rejected after it was read; none for one refused before
    rejected = clean_html(b"<html><head><meta name='author' content='Ivy'></head><body></body></html>")
    assert rejected.status == "rejected" and rejected.metadata.author == "Ivy"
    assert clean_html(b"").metadata_columns() == dict.fromkeys(FIELDS)


# A page of each shared set whose metadata a person checked in its HTML.
KNOWN = {
    # datePublished "2017-04-08T00:36:08.53Z" is the evening of the 7th in Alabama, as its URL says
    "chaos/html/affair_2.html": {"published": "2017-04-07", "author": "Brian Lyman",
                                 "site_name": "The Montgomery Advertiser", "page_type": "article"},
    "big5-2017/html/amazon_1.html": {"title": "Amazon buys Middle East e-commerce giant Souq",
                                     "published": "2017-03-28", "author": "Zahraa Alkhalisi",
                                     "canonical_url": "http://money.cnn.com/2017/03/28/investing/souq-amazon/index.html"},
    "fundus/html/au-WestAustralian_2024_11_26.html": {"published": "2024-11-26", "author": "Dan Jervis-Bardy",
                                                      "site_name": "The West Australian"},
    "wcxb/html/0001.html.gz": {"published": "2025-09-04", "author": "Andrew King", "page_type": "article"},
    "wcxb/html/0606.html.gz": {"title": "Men's Loke Jacket", "published": None, "page_type": "product"},
}


@pytest.mark.parametrize("path", sorted(KNOWN))
def test_real_pages(data_dir, path):
    r = clean_html(read_html_file(data_dir / path))
    assert r.metadata is not None
    assert {k: getattr(r.metadata, k) for k in KNOWN[path]} == KNOWN[path]


def test_clean_jsonl_has_the_columns(data_dir, tmp_path):
    out = tmp_path / "pages.jsonl"
    subprocess.run([sys.executable, "-m", "cleaner.tools.cli", "clean", str(data_dir / "big5-2017/html/amazon_1.html"),
                    "--out", str(out), "--format", "jsonl"], check=True, capture_output=True, cwd=ROOT)
    (doc,) = [json.loads(line) for line in out.read_text().splitlines()]
    assert set(FIELDS) <= set(doc)
    assert doc["published"] == "2017-03-28" and doc["site_name"] == "CNNMoney"


def test_clean_warc_parquet_has_the_columns(data_dir, no_spark, tmp_path):  # noqa: F811
    warc = make_warc(tmp_path / "news.warc.gz", data_dir / "big5-2017" / "html", "--limit", "6")
    r = clean_warc(warc, "--out", tmp_path / "out", "--jobs", "1", env=no_spark)
    assert r.returncode == 0, r.stderr[-3000:]
    table = pq.read_table(tmp_path / "out")
    for name in FIELDS:
        assert table.schema.field(name).type == SCHEMA.field(name).type and SCHEMA.field(name).nullable
    rows = table.to_pylist()
    assert len(rows) == 6
    amazon = next(row for row in rows if row["canonical_url"] and "souq-amazon" in row["canonical_url"])
    assert (amazon["published"], amazon["author"], amazon["page_type"]) == ("2017-03-28", "Zahraa Alkhalisi",
                                                                            "article")
    assert sum(row["title"] is not None for row in rows) == 6
