"""Text a page serves outside what a scripted browser shows: <noscript> content and JSON-LD bodies.

Some pages put their whole content where the segmenter does not look: Discourse forums serve the
posts of a thread inside <noscript> (the script-built page replaces them), a few news pages carry
the article only in a JSON-LD `articleBody`. When the page shows (almost) no text
([segment] fallback_below_chars), `fallback_html` gives the page again with its <noscript>
elements opened as ordinary <div>s and the JSON-LD article appended as an <article>, to be
segmented instead (cleaner.page.segment.segment_tree). Only near-empty pages pay for it.
"""

from __future__ import annotations

import json
import re

from selectolax.lexbor import LexborHTMLParser

_NOSCRIPT_TAG = re.compile(r"<(/?)noscript\b", re.I)
_ARTICLE_TYPES = ("article", "newsarticle", "blogposting", "reportagenewsarticle", "report", "posting")


def parse_json_ld(texts: list[str]) -> list:
    """The JSON-LD scripts' texts (cleaner.page.page_marks.PageMarks.json_ld) parsed, the broken ones left out:
    read by the fallback here and by the `cue` family's page type (cleaner.page.page_type)."""
    objects = []
    for text in texts:
        try:
            objects.append(json.loads(text or "null"))
        except (ValueError, RecursionError):
            continue  # a broken JSON-LD block is common; it holds nothing we can read
    return objects


def _json_ld_articles(tree: LexborHTMLParser, objects: list | None) -> list[tuple[str, str]]:
    """(headline, articleBody) of each JSON-LD object that has an article body."""
    if objects is None:
        objects = parse_json_ld([node.text(deep=True) for node in tree.css('script[type="application/ld+json"]')])
    found: list[tuple[str, str]] = []
    for obj in objects:
        try:
            _walk(obj, 0, found)
        except RecursionError:
            continue
    return found


def _walk(obj, depth: int, found: list[tuple[str, str]]) -> None:
    # A module function, not a closure: a closure that calls itself is a reference cycle, and the cleaner
    # makes none (the garbage collector's thresholds are raised on that promise: cleaner/tools/runtime.py).
    if depth > 6:
        return
    if isinstance(obj, list):
        for o in obj:
            _walk(o, depth + 1, found)
    elif isinstance(obj, dict):
        body = obj.get("articleBody") or (obj.get("text") if _is_article(obj) else None)
        if isinstance(body, str) and body.strip():
            headline = obj.get("headline") or obj.get("name") or ""
            found.append((headline if isinstance(headline, str) else "", body))
        for key in ("@graph", "mainEntity", "mainEntityOfPage"):
            if key in obj:
                _walk(obj[key], depth + 1, found)


def _is_article(obj: dict) -> bool:
    kind = obj.get("@type")
    kinds = kind if isinstance(kind, list) else [kind]
    return any(isinstance(k, str) and k.lower() in _ARTICLE_TYPES for k in kinds)


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def article_html(headline: str, body: str) -> str:
    """A JSON-LD article as the HTML a page would show it in (its paragraphs one a line of the body)."""
    paragraphs = [p.strip() for p in re.split(r"\n+", body) if p.strip()]
    head = f"<h1>{_escape(headline.strip())}</h1>" if headline.strip() else ""
    return "<article>" + head + "".join(f"<p>{_escape(p)}</p>" for p in paragraphs) + "</article>"


def fallback_html(tree: LexborHTMLParser, json_ld: list | None = None) -> str | None:
    """The page with its <noscript> content shown and its JSON-LD article appended, or None when it
    has neither (nothing more to show). `json_ld`: the page's JSON-LD already parsed (parse_json_ld);
    None to find and parse it here."""
    html = tree.html or ""
    has_noscript = bool(_NOSCRIPT_TAG.search(html))
    articles = _json_ld_articles(tree, json_ld)
    if not has_noscript and not articles:
        return None
    if has_noscript:
        # A <div> in place of each <noscript>: its markup is parsed as the page's own, wherever it sits.
        html = _NOSCRIPT_TAG.sub(lambda m: f"<{m.group(1)}div data-noscript", html)
    if articles:
        headline, body = max(articles, key=lambda a: len(a[1]))
        html += article_html(headline, body)
    return html
