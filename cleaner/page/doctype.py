"""Whether a page is written in HTML5 markup: its `<!DOCTYPE html>`, read from the raw bytes before any parse.

Why a model cares: the doctype dates a page's markup. The HTML5 doctype is on none of CleanEval's 739 pages (2007)
and none of big5's pages of 2005 and 2009, and on 1,462 of wcxb's 1,497 pages of 2025 (docs/modern.md section 31).
The all-text convention's two models are each best on their own era's pages, so the doctype picks between them
(cleaner.label.model.ServingModel.for_page, [model.html5_by_convention]).

What counts: `<!DOCTYPE html>` in any case and spacing, and the legacy-compat form the HTML5 standard allows for
XML tools (`<!DOCTYPE html SYSTEM "about:legacy-compat">`); a doctype with a public identifier (HTML 4, XHTML 1) is
older markup. The first DOCTYPE_WINDOW bytes are searched: a doctype comes first in a page, after at most a byte
order mark, an XML declaration, comments or a CleanEval wrapper's `<text>` tag. A page in UTF-16 or UTF-32 never
matches (its doctype is not these bytes) and is read as older markup, as one without a doctype is.
"""

from __future__ import annotations

import re

DOCTYPE_WINDOW = 4096  # bytes searched from the page's start

_HTML5_DOCTYPE = re.compile(rb"<!doctype\s+html\s*(?:system\s+[\"']about:legacy-compat[\"']\s*)?>", re.IGNORECASE)


def declares_html5(data: bytes) -> bool:
    """Whether the page's bytes declare HTML5 markup (module docstring)."""
    return _HTML5_DOCTYPE.search(data, 0, DOCTYPE_WINDOW) is not None
