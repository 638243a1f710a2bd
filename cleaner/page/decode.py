"""Bytes -> text: decide a page's character encoding and decode it without ever raising.

Order of evidence (the WHATWG "encoding sniffing" order, with the corpus-oriented changes
measured in docs/decoding.md; each is a key of ``[decode]``):

1. **bom**: a UTF-8, UTF-16LE or UTF-16BE byte-order mark wins over everything and is stripped.
2. **http**: the HTTP ``Content-Type`` charset, when the caller gives one and it is a known label
   (a UTF-16 label on bytes without a NUL in the first KiB is ignored).
3. **meta**: a prescan of the first ``prescan_bytes`` bytes (after a CleanEval wrapper line) for
   ``<meta charset=...>`` or ``<meta ... content="...; charset=...">``, comments skipped; the first
   meta with a *known* label wins (unknown labels are skipped, as the spec says). Lenient on one
   point: the content= form counts without checking for http-equiv="Content-Type".
4. **detector**: bytes with non-ASCII content that are valid UTF-8 are UTF-8 (``utf8_first``);
   otherwise faust-cchardet (uchardet) on the first ``detector_bytes`` bytes, its answer kept when
   its confidence is at least ``min_detector_confidence``, browsers can decode it
   (``detector_whatwg_only``) and the Western guard below does not overrule it.
5. **default**: UTF-8 — by default with each invalid byte read as windows-1252 (see
   ``invalid_declared_utf8``), so that no U+FFFD is produced.

Pure-ASCII bytes (no ESC, which announces ISO-2022-JP, and no NUL) skip the detector.

Labels are mapped as browsers map them (the WHATWG Encoding Standard label table, below):
iso-8859-1/latin1/us-ascii/ascii -> windows-1252, gb2312/GBK -> gb18030 (the WHATWG GBK decoder is
the gb18030 decoder), big5 -> big5hkscs, euc-kr/ks_c_5601 -> cp949, Shift_JIS labels -> cp932
(windows-31j, what browsers decode Shift_JIS with), UTF-16 labels found by the meta prescan ->
UTF-8. Unknown labels, and the labels of the WHATWG "replacement" encoding (iso-2022-kr,
hz-gb-2312, ...), are ignored so that the next step decides.

Measured departures from browsers (docs/decoding.md):

* ``invalid_declared_utf8``: HTTP/meta declare UTF-8 but the bytes are not valid UTF-8 —
  ``"trust"`` (browsers: U+FFFD), ``"detect"`` (ask the detector) or ``"repair"`` (default:
  UTF-8 where valid, each invalid byte as windows-1252; 2007 pages often paste windows-1252 text
  into a UTF-8 template). A repaired page with no valid multi-byte UTF-8 at all is reported as
  ``cp1252``, which is exactly what it was decoded as.
* ``valid_utf8_wins``: non-ASCII bytes that are valid UTF-8 are decoded as UTF-8 even under a
  legacy label (the label is stale; valid multi-byte UTF-8 does not happen by chance).
* Western guard (``western_guard``): uchardet reads English pages with a few windows-1252 curly
  quotes as IBM865, MacCentralEurope, windows-1250, ISO-8859-2, ... A single-byte answer other than
  windows-1252 becomes windows-1252 when the non-ASCII bytes, read as windows-1252, look Western
  and the text's letters are almost all ASCII. An ISO-8859-x answer on bytes that use 0x80-0x9F
  becomes its windows- sibling.

``DecodedPage.replacements`` counts the U+FFFD produced by decoding only: U+FFFD characters that
the bytes themselves encode (``EF BF BD`` in UTF-8) are not counted. The count is exact and costs
a second decode only on pages whose text contains U+FFFD at all.

CleanEval / CleanPortalEval inputs start with a wrapper line ``<text id="URL" title="..."
encoding="...">`` and end with ``</text>``: both are removed from ``text`` and the wrapper's
attributes (HTML entities decoded) are returned in ``wrapper``. Its ``encoding`` attribute is
*not* used for decoding (it is often "unset" or wrong).
"""

from __future__ import annotations

import codecs
import html
import re
import threading

from .. import compiled_twin
from .charsets import (
    ASCII_WHITESPACE,
    LABELS,
    UTF16_CODECS,
    codec_for_detector,
    detect_charset,
    lookup_label,
    western_guard,
)

__all__ = ["DecodedPage", "decode_html", "detect_charset", "lookup_label", "LABELS", "SOURCES"]

SOURCES = ("bom", "http", "meta", "detector", "default")


class DecodedPage:
    """One page decoded: its text, the codec and where the codec came from, the replacements decoding made, the
    CleanEval wrapper's attributes, and its exact UTF-8 when it has one.

    A page that is valid UTF-8 (or ASCII read as such) and has no wrapper line is kept as its bytes, and `text` is
    built from them the first time it is asked for: the cleaning parses such a page from its bytes and, when the
    guard can tell from them that it changes nothing (most pages), never needs the text at all
    (cleaner.page.segment.parse_html). Immutable, and equal to another page of the same fields whether or not
    its text has been built yet."""

    __slots__ = ("_text", "encoding", "source", "replacements", "wrapper", "utf8")

    _text: str | None  # None until `text` is first asked for (then built from `utf8`)
    encoding: str  # Python codec name used (codecs.lookup(...).name, e.g. "utf-8", "cp1252")
    source: str  # one of SOURCES
    replacements: int  # U+FFFD produced by decoding (not those encoded in the bytes)
    wrapper: dict | None  # attributes of a CleanEval <text ...> wrapper line, when present
    # The page's bytes when they are exactly `text` encoded as UTF-8 (valid UTF-8 or ASCII read as such, no BOM, no
    # wrapper line taken off), else None: the parser is then given them as they are rather than the text encoded
    # again (cleaner.page.segment.parse_html), the same bytes at no cost (2 % of a page's instructions).
    utf8: bytes | None

    def __init__(self, text: str | None, encoding: str, source: str, replacements: int, wrapper: dict | None,
                 utf8: bytes | None = None) -> None:
        """`text` None: the text is `utf8` decoded, built when first asked for."""
        if text is None and utf8 is None:
            raise ValueError("DecodedPage: neither the text nor its UTF-8")
        for name, value in (("_text", text), ("encoding", encoding), ("source", source),
                            ("replacements", replacements), ("wrapper", wrapper), ("utf8", utf8)):
            object.__setattr__(self, name, value)

    @property
    def text(self) -> str:
        text = self._text
        if text is None:
            assert self.utf8 is not None  # (__init__ says so)
            text = self.utf8.decode("utf-8")  # (valid: checked when the page was decoded)
            object.__setattr__(self, "_text", text)
        return text

    @property
    def text_if_built(self) -> str | None:
        """The text if it has been built (or was given), else None: its UTF-8 (`utf8`) is then the page."""
        return self._text

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"DecodedPage is immutable: cannot set {name}")

    def _fields(self) -> tuple:
        return (self.text, self.encoding, self.source, self.replacements, self.wrapper, self.utf8)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, DecodedPage):
            return NotImplemented
        return self._fields() == other._fields()

    __hash__ = None  # type: ignore[assignment]  # (the wrapper is a dict)

    def __repr__(self) -> str:
        text = self._text if self._text is not None else f"<{len(self.utf8 or b'')} bytes of UTF-8, not decoded>"
        return (f"DecodedPage(text={text!r}, encoding={self.encoding!r}, source={self.source!r}, "
                f"replacements={self.replacements!r}, wrapper={self.wrapper!r}, utf8=...)")

    def __reduce__(self) -> tuple:
        return (DecodedPage, (self._text, self.encoding, self.source, self.replacements, self.wrapper, self.utf8))


# --------------------------------------------------------------------------------------------
# Meta prescan and the CleanEval wrapper
# --------------------------------------------------------------------------------------------
_COMMENT_RE = re.compile(rb"<!--.*?(?:-->|\Z)", re.S)
_META_RE = re.compile(rb"<meta[\s/][^>]*>?", re.I)
_ATTR_RE = re.compile(
    rb"""([^\s/>"'=][^\s/>=]*)(?:\s*=\s*(?:"([^"]*)"?|'([^']*)'?|([^\s>]*)))?"""
)
_CONTENT_CHARSET_RE = re.compile(
    rb"""charset\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s;"']+))""", re.I
)
_HTTP_CHARSET_RE = re.compile(r"""charset\s*=\s*["']?([^\s;"']+)""", re.I)

# Wrapper: optional BOM and blank lines, then <text attr="..." ...> (attribute values in double
# quotes, as the CleanEval tools write them); the rest of that line is dropped with it.
_WRAPPER_RE = re.compile(r"""\A\ufeff?\s*<text((?:\s+[\w:.-]+\s*=\s*"[^"]*")+)\s*>[ \t]*(?:\r?\n)?""")
_WRAPPER_ATTR_RE = re.compile(r"""([\w:.-]+)\s*=\s*"([^"]*)\"""")
_WRAPPER_BYTES_RE = re.compile(rb"""\A\s*<text(?:\s+[\w:.-]+\s*=\s*"[^"]*")+\s*>""")


def _meta_label(window: bytes) -> str | None:
    """Codec from the first <meta> in `window` that carries a known charset label."""
    if b"<!--" in window:
        window = _COMMENT_RE.sub(b" ", window)
    for tag in _META_RE.finditer(window):
        charset = content = None
        for m in _ATTR_RE.finditer(tag.group(0), 5):
            name = m.group(1).lower()
            value = m.group(2) if m.group(2) is not None else (
                m.group(3) if m.group(3) is not None else m.group(4))
            if name == b"charset" and charset is None:
                charset = value or b""
            elif name == b"content" and content is None:
                content = value or b""
        codec = None
        if charset is not None:
            codec = lookup_label(charset) or lookup_label(charset.rstrip(b"/"))
        # Lenient on purpose: a content="...charset=..." counts without checking that
        # http-equiv="Content-Type" is present (pages often write name= instead).
        if codec is None and content:
            cm = _CONTENT_CHARSET_RE.search(content)
            if cm:
                codec = lookup_label(cm.group(1) or cm.group(2) or cm.group(3) or b"")
        if codec is not None:
            # A page that says UTF-16 in ASCII is not UTF-16 (WHATWG: use UTF-8).
            return "utf-8" if codec in UTF16_CODECS else codec
    return None


def _http_label(http_charset: str | bytes) -> str | None:
    if isinstance(http_charset, (bytes, bytearray)):
        http_charset = bytes(http_charset).decode("latin-1")
    value = http_charset.strip(ASCII_WHITESPACE)
    if "=" in value or ";" in value:  # a whole Content-Type value was passed
        m = _HTTP_CHARSET_RE.search(value)
        if not m:
            return None
        value = m.group(1)
    return lookup_label(value.strip("\"'"))


# --------------------------------------------------------------------------------------------
# Decoding helpers
# --------------------------------------------------------------------------------------------
_tls = threading.local()


def _count_replace(exc: UnicodeError) -> tuple[str, int]:
    if not isinstance(exc, UnicodeDecodeError):  # registered for decoding only
        raise exc
    _tls.count = getattr(_tls, "count", 0) + 1
    return ("\ufffd", exc.end)


def _cp1252_fallback(exc: UnicodeError) -> tuple[str, int]:
    """Decode each byte of an invalid UTF-8 sequence as windows-1252 (undefined bytes as in
    WHATWG's windows-1252: the C1 control with the same number)."""
    if not isinstance(exc, UnicodeDecodeError):  # registered for decoding only
        raise exc
    bad = exc.object[exc.start:exc.end]
    _tls.repaired = getattr(_tls, "repaired", 0) + len(bad)
    return ("".join(_CP1252_BYTE[b] for b in bad), exc.end)


_CP1252_BYTE = [bytes([b]).decode("cp1252", errors="ignore") or chr(b) for b in range(256)]
_COUNT_ERRORS = "webcleaner.decode.countreplace"
_REPAIR_ERRORS = "webcleaner.decode.cp1252fallback"
codecs.register_error(_COUNT_ERRORS, _count_replace)
codecs.register_error(_REPAIR_ERRORS, _cp1252_fallback)


def _decode(data: bytes, codec: str, errors: str = "replace") -> tuple[str, str, int]:
    """Decode never raising; returns (text, codec actually used, replacements produced)."""
    try:
        text = data.decode(codec, errors)
    except Exception:  # unknown codec or a codec bug: fall back to UTF-8
        codec, errors = "utf-8", "replace"
        text = data.decode(codec, errors)
    if "\ufffd" not in text:
        return text, codec, 0
    # Exact count of the replacements produced, without the U+FFFD that the bytes encode.
    _tls.count = 0
    try:
        data.decode(codec, _COUNT_ERRORS)
        count = _tls.count
    except Exception:
        count = text.count("\ufffd")
    return text, codec, count


_HIGH_BYTES = bytes(range(0x80, 0x100))


def _decode_repair(data: bytes) -> tuple[str, str, int]:
    """UTF-8 where the bytes are valid UTF-8, windows-1252 for every byte that is not. Produces
    no U+FFFD. Reported as "cp1252" when no byte was valid multi-byte UTF-8 (the text is then
    exactly the WHATWG windows-1252 decoding), else as "utf-8"."""
    _tls.repaired = 0
    text = data.decode("utf-8", _REPAIR_ERRORS)
    high = len(data) - len(data.translate(None, _HIGH_BYTES))
    return text, ("cp1252" if high and _tls.repaired >= high else "utf-8"), 0


def _strict_utf8(data: bytes) -> str | None:
    """The text when `data` is valid UTF-8 (decoded once and reused), else None: the readable reference of
    compiled_guard.is_utf8 (`_is_utf8`), which tells the same without building the text."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


_is_utf8 = None if (_compiled_guard := compiled_twin("page.compiled_guard")) is None else _compiled_guard.is_utf8

# A CleanEval wrapper line is looked for in the text's first 4,096 characters (_strip_wrapper): at most four times as
# many bytes of UTF-8.
_WRAPPER_WITHIN_BYTES = 4 * 4096


def _utf8_page(data: bytes, source: str, text: str | None = None) -> DecodedPage:
    """The page of `data`, known to be valid UTF-8, read as UTF-8 (`text`: its text, if built already). Without a
    wrapper line its text is left to be built when asked for (DecodedPage)."""
    if b"<text" in data[:_WRAPPER_WITHIN_BYTES]:  # (a wrapper may be there: _page reads it off the text)
        return _page(data.decode("utf-8") if text is None else text, "utf-8", source, 0, data)
    return DecodedPage(text, "utf-8", source, 0, None, data)


def _decode_config(config) -> dict:
    """The whole [decode] section: a Config's, or a partial one (a dict with a "decode" section, or the
    section itself) laid over conf/default.toml's, whose values are the only defaults."""
    from cleaner.config import Config, load_config

    if isinstance(config, Config):
        return config["decode"]
    default = load_config()["decode"]
    if config is None:
        return default
    section = config.get("decode", config) if isinstance(config, dict) else {}
    return {**default, **section} if isinstance(section, dict) else default


_BOMS = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)


def _bom(data: bytes) -> tuple[str, int] | None:
    for bom, codec in _BOMS:
        if data.startswith(bom):
            return codec, len(bom)
    return None


def _strip_wrapper(text: str) -> tuple[str, dict | None]:
    if "<text" not in text[:4096]:
        return text, None
    m = _WRAPPER_RE.match(text)
    if not m:
        return text, None
    attrs = {k: html.unescape(v) for k, v in _WRAPPER_ATTR_RE.findall(m.group(1))}
    body = text[m.end():]
    page = body.lstrip()
    if page.startswith("\ufeff"):  # the page's own byte-order mark after CleanEval's line: not text (as at the start)
        body = body[: len(body) - len(page)] + page[1:]
    tail = body[-64:].rstrip()
    if tail.endswith("</text>"):
        body = body.rstrip()[:-7].rstrip()
    return body, attrs


def decode_html(data: bytes, http_charset: str | None = None, config=None) -> DecodedPage:
    """Decode the bytes of one HTML page. Never raises for any bytes input.

    `http_charset` is the charset parameter of the HTTP Content-Type header (a bare label, or the
    whole header value); `config` is a Config, a dict with a "decode" section, or the [decode]
    section itself (default: conf/default.toml).
    """
    if not isinstance(data, bytes):
        data = bytes(data)  # bytearray / memoryview; anything else raises TypeError, by design
    cfg = _decode_config(config)
    prescan_bytes = int(cfg["prescan_bytes"])
    min_conf = float(cfg["min_detector_confidence"])
    detector_bytes = int(cfg["detector_bytes"])
    invalid_utf8 = cfg["invalid_declared_utf8"]
    valid_utf8_wins = bool(cfg["valid_utf8_wins"])
    utf8_first = bool(cfg["utf8_first"])

    # 1. BOM
    bom = _bom(data)
    if bom is not None:
        codec, skip = bom
        text, codec, n = _decode(data[skip:], codec)
        return _page(text, codec, "bom", n)

    # Pure ASCII (no ESC, which would announce ISO-2022-JP): no detection is needed. A declared
    # legacy label would decode it to the same text; the declaration is still reported.
    # (NUL bytes: maybe BOM-less UTF-16, which the detector may recognise.)
    ascii_only = data.isascii() and b"\x1b" not in data and b"\x00" not in data

    # 2. HTTP charset, 3. meta prescan
    declared: str | None = None
    source = "default"  # where `declared` comes from: http or meta
    if http_charset:
        declared = _http_label(http_charset)
        # A UTF-16 header on bytes without a single NUL in the first KiB is a lie.
        if declared in UTF16_CODECS and b"\x00" not in data[:1024]:
            declared = None
        if declared is not None:
            source = "http"
    if declared is None and prescan_bytes > 0:
        start = 0
        w = _WRAPPER_BYTES_RE.match(data, 0, 8192) if data[:64].lstrip()[:5] == b"<text" else None
        if w:
            start = w.end()
        declared = _meta_label(data[start:start + prescan_bytes])
        if declared is not None:
            source = "meta"

    if ascii_only:
        if declared is None or declared == "utf-8":
            return _utf8_page(data, source)
        text, codec, n = _decode(data, declared)
        return _page(text, codec, source, n, data)

    # Valid UTF-8 is decided once: `valid_utf8`, and `utf8` its text when deciding it built the text (the readable
    # reference, _strict_utf8; the compiled check builds none).
    need_utf8 = declared == "utf-8" or utf8_first or (valid_utf8_wins and declared not in UTF16_CODECS)
    utf8: str | None = None
    if not need_utf8:
        valid_utf8 = False
    elif _is_utf8 is not None:
        valid_utf8 = bool(_is_utf8(data))
    else:
        utf8 = _strict_utf8(data)
        valid_utf8 = utf8 is not None
    # Only non-ASCII bytes are evidence for UTF-8 (ISO-2022-JP, for one, is 7-bit).
    utf8_evidence = valid_utf8 and not data.isascii()

    if declared is not None:
        if declared == "utf-8":
            if valid_utf8:
                return _utf8_page(data, source, utf8)
            if invalid_utf8 == "trust":
                text, codec, n = _decode(data, "utf-8")
                return _page(text, codec, source, n)
            if invalid_utf8 == "repair":
                text, codec, n = _decode_repair(data)
                return _page(text, codec, source, n)
            # "detect": fall through to the detector
        elif valid_utf8_wins and utf8_evidence and declared not in UTF16_CODECS:
            # Valid multi-byte UTF-8 under a legacy label: the label is stale (measured).
            return _utf8_page(data, "detector", utf8)
        else:
            text, codec, n = _decode(data, declared)
            return _page(text, codec, source, n)

    # 4. detector: valid UTF-8 first, then the C detector on a bounded sample
    if utf8_first and utf8_evidence:
        return _utf8_page(data, "detector", utf8)
    sample = data[:detector_bytes] if detector_bytes > 0 else data
    try:
        label, confidence = detect_charset(sample)
    except Exception:
        label, confidence = None, 0.0
    guess: str | None = (codec_for_detector(label, bool(cfg["detector_whatwg_only"]))
                         if confidence >= min_conf else None)
    if guess is not None and guess != "utf-8":
        guess = western_guard(guess, sample, cfg)
    if guess is not None and guess != "utf-8":
        text, codec, n = _decode(data, guess)
        return _page(text, codec, "detector", n)
    # 5. default (or a detector that says UTF-8 on invalid UTF-8)
    src = "detector" if guess == "utf-8" else source
    if invalid_utf8 == "repair":
        text, codec, n = _decode_repair(data)
    else:
        text, codec, n = _decode(data, "utf-8")
    return _page(text, codec, src, n)


def _page(text: str, codec: str, source: str, replacements: int, data: bytes | None = None) -> DecodedPage:
    """`data`: the bytes `text` was decoded from, when they may be its exact UTF-8 (kept as DecodedPage.utf8 only
    when they are: read as UTF-8 or ASCII without a replacement, and no wrapper line taken off)."""
    try:
        name = codecs.lookup(codec).name
    except LookupError:
        name = codec
    body, wrapper = _strip_wrapper(text)
    exact = data is not None and name in ("utf-8", "ascii") and not replacements and body is text
    return DecodedPage(body, name, source, replacements, wrapper, data if exact else None)
