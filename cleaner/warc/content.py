"""What a record's headers and first bytes say: media type and charset, URL, HTTP status, whether the bytes
are HTML (a WHATWG-like sniff)."""

from __future__ import annotations

import re
from typing import overload

HTML_MIMES = frozenset({"text/html", "application/xhtml+xml"})
# Content types that say nothing useful: the payload is sniffed.
SNIFF_MIMES = frozenset({
    "", "text/plain", "application/octet-stream", "binary/octet-stream", "application/binary",
    "application/unknown", "application/x-unknown", "unknown/unknown", "text/unknown", "*/*",
    "application/x-download", "application/force-download", "application/http", "invalid",
})

_MIME_RX = re.compile(r"^[a-z0-9!#$&^_.+*-]+/[a-z0-9!#$&^_.+*-]+$")
_CHARSET_RX = re.compile(r"""charset\s*=\s*["']?\s*([^"';,\s]+)""", re.I)
_URL_SAFE_RX = re.compile(rb"[\x21-\x7e]*\Z")

_TAG_PREFIXES = (
    b"<!doctype html", b"<html", b"<head", b"<body", b"<script", b"<iframe", b"<h1", b"<h2",
    b"<h3", b"<div", b"<font", b"<table", b"<a", b"<style", b"<title", b"<b", b"<br", b"<p",
    b"<meta", b"<link", b"<span", b"<center", b"<form", b"<ul", b"<noscript", b"<base",
)
_TAG_END = frozenset(b" >\t\n\r\x0c/")


def sniff_html(data: bytes) -> bool:
    """WHATWG-like HTML sniff on the first bytes: optional BOM and whitespace, then a
    known HTML tag (followed by a tag-terminating byte), `<!--`, or an XML declaration
    followed by `<html` within the first 1 KiB."""
    head = data[:1024]
    if head.startswith(b"\xef\xbb\xbf"):
        head = head[3:]
    elif head[:2] in (b"\xff\xfe", b"\xfe\xff"):
        codec = "utf-16-le" if head[:2] == b"\xff\xfe" else "utf-16-be"
        head = head[2:].decode(codec, "ignore").encode("latin-1", "ignore")
    head = head.lstrip(b" \t\n\r\x0c")
    low = head[:64].lower()
    if low.startswith(b"<!--"):
        return True
    if low.startswith(b"<?xml"):
        return b"<html" in head.lower()
    for prefix in _TAG_PREFIXES:
        if low.startswith(prefix):
            nxt = low[len(prefix):len(prefix) + 1]
            if not nxt or nxt[0] in _TAG_END:
                return True
    return False



def mime_and_charset(value: str | None) -> tuple[str, str | None]:
    if not value:
        return "", None
    value = clean_str(value)
    mime = value.split(";", 1)[0].strip().lower()
    if mime and not _MIME_RX.match(mime):
        mime = "invalid"
    m = _CHARSET_RX.search(value)
    charset = m.group(1).strip().lower() if m else None
    return mime, charset


@overload
def clean_str(value: str) -> str: ...
@overload
def clean_str(value: None) -> None: ...
def clean_str(value: str | None) -> str | None:
    if value is None:
        return None
    try:
        value.encode("utf-8")
        return value
    except UnicodeEncodeError:
        return value.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def clean_url(value: str | None) -> str:
    """WARC-Target-URI as a safe string: trimmed, <...> removed (wget 1.19 bug),
    whitespace and control characters %-encoded; bytes that are not valid UTF-8 were already
    %-encoded when the header was decoded (valid UTF-8 IRIs are kept as they are)."""
    if not value:
        return ""
    raw = value.strip().encode("utf-8", "surrogateescape")
    if raw.startswith(b"<") and raw.endswith(b">"):
        raw = raw[1:-1].strip()
    if _URL_SAFE_RX.match(raw):
        return raw.decode("ascii")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return "".join(chr(b) if 0x20 < b < 0x7F else f"%{b:02X}" for b in raw)
    return "".join(c if (ord(c) > 0x20 and ord(c) != 0x7F and not 0x80 <= ord(c) <= 0x9F)
                   else "".join(f"%{b:02X}" for b in c.encode("utf-8")) for c in text)


def http_status(http_headers) -> int | None:
    if not http_headers:
        return None
    try:
        code = int(http_headers.get_statuscode())
    except (ValueError, TypeError, AttributeError):
        return None
    return code if 100 <= code <= 999 else None
