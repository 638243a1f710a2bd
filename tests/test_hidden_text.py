"""Pages whose content is only in <noscript> or in a JSON-LD article body (cleaner/page/hidden_text.py)."""

import json

from cleaner.api import clean_html
from cleaner.config import load_config
from cleaner.gold.data import find_pages
from cleaner.gold.gold import read_gold
from cleaner.gold.score import score_document
from cleaner.page.segment import segment_blocks

POST = "Changing the minimum supported Rust version is a breaking change for the crates that depend on yours. "


def _texts(html: str, config=None) -> list[str]:
    return [b.text for b in segment_blocks(html, config).blocks]


def test_a_page_that_shows_nothing_but_its_noscript_is_read_from_there():
    html = (f"<html><body><div id='app'>Loading</div><noscript><div class='post'><p>{POST * 8}</p></div>"
            "</noscript></body></html>")
    assert any(POST.strip() in t for t in _texts(html))


def test_noscript_stays_unread_on_a_page_with_text_of_its_own():
    html = f"<body><article><p>{POST * 12}</p></article><noscript><p>Please enable JavaScript {POST * 8}</p></noscript></body>"
    assert not any("enable JavaScript" in t for t in _texts(html))


def test_a_tracking_pixel_noscript_does_not_replace_a_short_page():
    html = "<body><p>A short page.</p><noscript><img src='pixel.gif' alt='pixel'></noscript></body>"
    assert _texts(html) == ["A short page."]


def test_the_fallback_can_be_turned_off():
    off = load_config().overlay({"segment": {"fallback_below_chars": 0}})
    html = f"<body><div id='app'></div><noscript><p>{POST * 8}</p></noscript></body>"
    assert _texts(html, off) == []


def test_a_json_ld_article_body_is_read_when_the_html_holds_no_text():
    ld = {"@context": "https://schema.org", "@graph": [{"@type": "WebPage"}, {
        "@type": "NewsArticle", "headline": "Crates and versions", "articleBody": (POST * 4 + "\n") * 3}]}
    html = f'<html><head><script type="application/ld+json">{json.dumps(ld)}</script></head><body><div id="root"></div></body></html>'
    texts = _texts(html)
    assert texts[0] == "Crates and versions" and len(texts) == 4


def test_discourse_threads_of_wcxb_are_cleaned_not_rejected(data_dir):
    # Their posts are served inside <noscript> only; before the fallback all came out "no_text" (F1 0).
    pages = {p.key: p for p in find_pages(data_dir, ["wcxb"])}
    for key in ("wcxb/0501", "wcxb/0505", "wcxb/1591"):
        result = clean_html(pages[key].read_html())
        assert result.ok, key
        assert score_document(result.cleaneval, read_gold(pages[key].gold_path)).f1 > 0.85, key


def test_wcxb_pages_are_found_gzip_compressed(data_dir):
    pages = find_pages(data_dir, ["wcxb"])
    assert len(pages) == 1497 and pages[0].id == "0001"
    assert pages[0].read_html().lstrip()[:15].lower().startswith(b"<!doctype html")
