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
from dataclasses import dataclass

import cchardet

__all__ = ["DecodedPage", "decode_html", "detect_charset", "lookup_label", "SOURCES"]

SOURCES = ("bom", "http", "meta", "detector", "default")


@dataclass(frozen=True)
class DecodedPage:
    text: str
    encoding: str  # Python codec name used (codecs.lookup(...).name, e.g. "utf-8", "cp1252")
    source: str  # one of SOURCES
    replacements: int  # U+FFFD produced by decoding (not those encoded in the bytes)
    wrapper: dict | None  # attributes of a CleanEval <text ...> wrapper line, when present


# --------------------------------------------------------------------------------------------
# WHATWG Encoding Standard label table (https://encoding.spec.whatwg.org/#names-and-labels),
# written out by hand; value: the Python codec that decodes like the browser's decoder.
# --------------------------------------------------------------------------------------------
_WHATWG: dict[str, tuple[str, ...]] = {
    "utf-8": ("unicode-1-1-utf-8", "unicode11utf8", "unicode20utf8", "utf-8", "utf8",
              "x-unicode20utf8"),
    "cp866": ("866", "cp866", "csibm866", "ibm866"),
    "iso8859-2": ("csisolatin2", "iso-8859-2", "iso-ir-101", "iso8859-2", "iso88592",
                  "iso_8859-2", "iso_8859-2:1987", "l2", "latin2"),
    "iso8859-3": ("csisolatin3", "iso-8859-3", "iso-ir-109", "iso8859-3", "iso88593",
                  "iso_8859-3", "iso_8859-3:1988", "l3", "latin3"),
    "iso8859-4": ("csisolatin4", "iso-8859-4", "iso-ir-110", "iso8859-4", "iso88594",
                  "iso_8859-4", "iso_8859-4:1988", "l4", "latin4"),
    "iso8859-5": ("csisolatincyrillic", "cyrillic", "iso-8859-5", "iso-ir-144", "iso8859-5",
                  "iso88595", "iso_8859-5", "iso_8859-5:1988"),
    "iso8859-6": ("arabic", "asmo-708", "csiso88596e", "csiso88596i", "csisolatinarabic",
                  "ecma-114", "iso-8859-6", "iso-8859-6-e", "iso-8859-6-i", "iso-ir-127",
                  "iso8859-6", "iso88596", "iso_8859-6", "iso_8859-6:1987"),
    "iso8859-7": ("csisolatingreek", "ecma-118", "elot_928", "greek", "greek8", "iso-8859-7",
                  "iso-ir-126", "iso8859-7", "iso88597", "iso_8859-7", "iso_8859-7:1987",
                  "sun_eu_greek"),
    "iso8859-8": ("csiso88598e", "csisolatinhebrew", "hebrew", "iso-8859-8", "iso-8859-8-e",
                  "iso-ir-138", "iso8859-8", "iso88598", "iso_8859-8", "iso_8859-8:1988",
                  "visual", "csiso88598i", "iso-8859-8-i", "logical"),
    "iso8859-10": ("csisolatin6", "iso-8859-10", "iso-ir-157", "iso8859-10", "iso885910", "l6",
                   "latin6"),
    "iso8859-13": ("iso-8859-13", "iso8859-13", "iso885913"),
    "iso8859-14": ("iso-8859-14", "iso8859-14", "iso885914"),
    "iso8859-15": ("csisolatin9", "iso-8859-15", "iso8859-15", "iso885915", "iso_8859-15",
                   "l9"),
    "iso8859-16": ("iso-8859-16",),
    "koi8-r": ("cskoi8r", "koi", "koi8", "koi8-r", "koi8_r"),
    "koi8-u": ("koi8-ru", "koi8-u"),
    "mac-roman": ("csmacintosh", "mac", "macintosh", "x-mac-roman"),
    "cp874": ("dos-874", "iso-8859-11", "iso8859-11", "iso885911", "tis-620", "windows-874"),
    "cp1250": ("cp1250", "windows-1250", "x-cp1250"),
    "cp1251": ("cp1251", "windows-1251", "x-cp1251"),
    "cp1252": ("ansi_x3.4-1968", "ascii", "cp1252", "cp819", "csisolatin1", "ibm819",
               "iso-8859-1", "iso-ir-100", "iso8859-1", "iso88591", "iso_8859-1",
               "iso_8859-1:1987", "l1", "latin1", "us-ascii", "windows-1252", "x-cp1252",
               # x-user-defined: the meta prescan turns it into windows-1252.
               "x-user-defined"),
    "cp1253": ("cp1253", "windows-1253", "x-cp1253"),
    "cp1254": ("cp1254", "csisolatin5", "iso-8859-9", "iso-ir-148", "iso8859-9", "iso88599",
               "iso_8859-9", "iso_8859-9:1989", "l5", "latin5", "windows-1254", "x-cp1254"),
    "cp1255": ("cp1255", "windows-1255", "x-cp1255"),
    "cp1256": ("cp1256", "windows-1256", "x-cp1256"),
    "cp1257": ("cp1257", "windows-1257", "x-cp1257"),
    "cp1258": ("cp1258", "windows-1258", "x-cp1258"),
    "mac-cyrillic": ("x-mac-cyrillic", "x-mac-ukrainian"),
    # GBK and gb18030 share the gb18030 decoder in the WHATWG standard.
    "gb18030": ("chinese", "csgb2312", "csiso58gb231280", "gb2312", "gb_2312", "gb_2312-80",
                "gbk", "iso-ir-58", "x-gbk", "gb18030"),
    "big5hkscs": ("big5", "big5-hkscs", "cn-big5", "csbig5", "x-x-big5"),
    "euc_jp": ("cseucpkdfmtjapanese", "euc-jp", "x-euc-jp"),
    "iso2022_jp": ("csiso2022jp", "iso-2022-jp"),
    "cp932": ("csshiftjis", "ms932", "ms_kanji", "shift-jis", "shift_jis", "sjis",
              "windows-31j", "x-sjis"),
    "cp949": ("cseuckr", "csksc56011987", "euc-kr", "iso-ir-149", "korean", "ks_c_5601-1987",
              "ks_c_5601-1989", "ksc5601", "ksc_5601", "windows-949"),
    "utf-16-be": ("unicodefffe", "utf-16be"),
    "utf-16-le": ("csunicode", "iso-10646-ucs-2", "ucs-2", "unicode", "unicodefeff", "utf-16",
                  "utf-16le"),
}

LABELS: dict[str, str] = {label: codec for codec, labels in _WHATWG.items() for label in labels}

# Names the C detectors return that are not WHATWG labels (detector output only, never page labels).
_DETECTOR_ALIASES = {
    "uhc": "cp949",
    "iso-2022-cn": "",  # WHATWG "replacement": not decodable by browsers
    "iso-2022-kr": "",
    "hz-gb-2312": "",
    "euc-tw": "",
    "x-iso-10646-ucs-4-3412": "",
    "x-iso-10646-ucs-4-2143": "",
}

_WS = " \t\n\f\r"
_UTF16 = ("utf-16-le", "utf-16-be")


def lookup_label(label: str | bytes | None) -> str | None:
    """WHATWG "get an encoding": the Python codec for a label, or None for an unknown label."""
    if label is None:
        return None
    if isinstance(label, (bytes, bytearray)):
        label = bytes(label).decode("latin-1")
    return LABELS.get(label.strip(_WS).lower())


_WHATWG_CODECS = frozenset(_WHATWG)


def _codec_for_detector(name: str | None, whatwg_only: bool = True) -> str | None:
    """Codec for a detector's answer; with `whatwg_only`, None unless browsers know the
    encoding (uchardet also answers IBM852/855/865, MacCentralEurope, VISCII, ...)."""
    if not name:
        return None
    key = name.strip(_WS).lower()
    if key in LABELS:
        return LABELS[key]
    if key in _DETECTOR_ALIASES:
        return _DETECTOR_ALIASES[key] or None
    try:
        codec = codecs.lookup(key).name
    except LookupError:
        return None
    return codec if not whatwg_only or codec in _WHATWG_CODECS else None


# --------------------------------------------------------------------------------------------
# Western guard. uchardet, given an English page with a handful of non-ASCII bytes (curly quotes
# and dashes in windows-1252, an accented name), often answers a Central European, Nordic or
# Vietnamese code page (see docs/decoding.md). When the detector answers a single-byte encoding
# other than windows-1252, the bytes read as windows-1252 look Western (typographic punctuation,
# or accented letters next to ASCII letters) and the text's letters are almost all ASCII, the
# page is decoded as windows-1252. Dense non-ASCII text (Polish, Czech, Russian, Greek, ...) is
# left to the detector.
# --------------------------------------------------------------------------------------------
_SINGLE_BYTE = frozenset(_WHATWG) - {"utf-8", "utf-16-le", "utf-16-be", "gb18030", "big5hkscs",
                                     "euc_jp", "iso2022_jp", "cp932", "cp949", "cp1252"}
# ISO-8859-x never uses 0x80-0x9F (C1 controls); a page that does is in the windows- sibling.
_ISO_TO_WINDOWS = {"iso8859-2": "cp1250", "iso8859-4": "cp1257", "iso8859-6": "cp1256",
                   "iso8859-7": "cp1253", "iso8859-8": "cp1255", "iso8859-13": "cp1257",
                   "iso8859-15": "cp1252"}
_C1_RE = re.compile(rb"[\x80-\x9f]")
_HIGH_RE = re.compile(rb"[\x80-\xff]")
_ASCII_LETTERS = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
_NOT_ASCII_LETTERS = bytes(b for b in range(256) if b not in _ASCII_LETTERS)
# windows-1252 bytes that are punctuation/symbols commonly found in English text.
_CP1252_PUNCT = frozenset(
    b"\x80\x82\x84\x85\x86\x87\x89\x8b\x91\x92\x93\x94\x95\x96\x97\x98\x99\x9b\xa0"
    b"\xa1\xa2\xa3\xa5\xa6\xa7\xa8\xa9\xab\xac\xad\xae\xaf\xb0\xb1\xb2\xb3\xb4\xb5\xb6"
    b"\xb7\xb8\xb9\xba\xbb\xbc\xbd\xbe\xbf\xd7\xf7"
)
_CP1252_LETTERS = (frozenset(range(0xC0, 0x100)) - {0xD7, 0xF7}) | frozenset(
    b"\x83\x8a\x8c\x8e\x9a\x9c\x9e\x9f\xaa")
_MARKUP_RE = re.compile(
    rb"<script\b.*?</script\s*>|<style\b.*?</style\s*>|<!--.*?-->|<[^>]*>", re.S | re.I)


def _western_share(sample: bytes) -> float:
    high = west = 0
    n = len(sample)
    for m in _HIGH_RE.finditer(sample):
        i = m.start()
        b = sample[i]
        high += 1
        if b in _CP1252_PUNCT or b in _CP1252_LETTERS and (
            (i > 0 and sample[i - 1] in _ASCII_LETTERS)
            or (i + 1 < n and sample[i + 1] in _ASCII_LETTERS)
        ):
            west += 1
    return west / high if high else 1.0


def _non_ascii_letter_ratio(sample: bytes) -> float:
    """Non-ASCII letters (read as windows-1252) per ASCII letter, in the text outside markup."""
    text = _MARKUP_RE.sub(b" ", sample)
    ascii_letters = len(text.translate(None, _NOT_ASCII_LETTERS))
    high_letters = sum(1 for m in _HIGH_RE.finditer(text) if text[m.start()] in _CP1252_LETTERS)
    return high_letters / max(1, ascii_letters)


def _guard(codec: str, sample: bytes, cfg: dict) -> str:
    if codec in _ISO_TO_WINDOWS and _C1_RE.search(sample):
        codec = _ISO_TO_WINDOWS[codec]
    if codec in _SINGLE_BYTE and cfg["western_guard"]:
        if (_western_share(sample) >= float(cfg["western_min_share"])
                and _non_ascii_letter_ratio(sample) < float(cfg["western_max_letter_ratio"])):
            return "cp1252"
    return codec


# --------------------------------------------------------------------------------------------
# The detector: faust-cchardet (uchardet), a pinned dependency. resiliparse's uchardet wrapper, offered beside it
# as a setting, was measured the same on the shared pages at 3x the time and removed (docs/decoding.md).
# --------------------------------------------------------------------------------------------
def detect_charset(sample: bytes) -> tuple[str | None, float]:
    """uchardet's guess for `sample`: a label (None when it has none) and its confidence (0 to 1)."""
    result = cchardet.detect(sample)
    return result.get("encoding"), float(result.get("confidence") or 0.0)


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
            return "utf-8" if codec in _UTF16 else codec
    return None


def _http_label(http_charset: str | bytes) -> str | None:
    if isinstance(http_charset, (bytes, bytearray)):
        http_charset = bytes(http_charset).decode("latin-1")
    value = http_charset.strip(_WS)
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
    """The text when `data` is valid UTF-8 (decoded once and reused), else None."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


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
        if declared in _UTF16 and b"\x00" not in data[:1024]:
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
        text, codec, n = _decode(data, declared or "utf-8")
        return _page(text, codec, source, n)

    # Valid UTF-8 is decided once; `utf8` is its text, or None when the bytes are not UTF-8.
    need_utf8 = declared == "utf-8" or utf8_first or (valid_utf8_wins and declared not in _UTF16)
    utf8 = _strict_utf8(data) if need_utf8 else None
    # Only non-ASCII bytes are evidence for UTF-8 (ISO-2022-JP, for one, is 7-bit).
    utf8_evidence = utf8 is not None and not data.isascii()

    if declared is not None:
        if declared == "utf-8":
            if utf8 is not None:
                return _page(utf8, "utf-8", source, 0)
            if invalid_utf8 == "trust":
                text, codec, n = _decode(data, "utf-8")
                return _page(text, codec, source, n)
            if invalid_utf8 == "repair":
                text, codec, n = _decode_repair(data)
                return _page(text, codec, source, n)
            # "detect": fall through to the detector
        elif valid_utf8_wins and utf8 is not None and utf8_evidence and declared not in _UTF16:
            # Valid multi-byte UTF-8 under a legacy label: the label is stale (measured).
            return _page(utf8, "utf-8", "detector", 0)
        else:
            text, codec, n = _decode(data, declared)
            return _page(text, codec, source, n)

    # 4. detector: valid UTF-8 first, then the C detector on a bounded sample
    if utf8_first and utf8 is not None and utf8_evidence:
        return _page(utf8, "utf-8", "detector", 0)
    sample = data[:detector_bytes] if detector_bytes > 0 else data
    try:
        label, confidence = detect_charset(sample)
    except Exception:
        label, confidence = None, 0.0
    guess: str | None = (_codec_for_detector(label, bool(cfg["detector_whatwg_only"]))
                         if confidence >= min_conf else None)
    if guess is not None and guess != "utf-8":
        guess = _guard(guess, sample, cfg)
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


def _page(text: str, codec: str, source: str, replacements: int) -> DecodedPage:
    try:
        name = codecs.lookup(codec).name
    except LookupError:
        name = codec
    body, wrapper = _strip_wrapper(text)
    return DecodedPage(body, name, source, replacements, wrapper)
