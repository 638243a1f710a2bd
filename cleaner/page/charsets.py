"""Character encodings as pages name them and as a detector guesses them: the WHATWG label table
(`lookup_label`), a detector's answer as a codec (`codec_for_detector`), the Western guard that overrules
uchardet's single-byte guesses on English pages (`western_guard`), and the detector itself
(`detect_charset`). cleaner.page.decode weighs this evidence in its order and decodes the page
(its docstring: the order, and the measured departures from browsers)."""

from __future__ import annotations

import codecs
import re

import cchardet

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

ASCII_WHITESPACE = " \t\n\f\r"  # what WHATWG strips around a label
UTF16_CODECS = ("utf-16-le", "utf-16-be")  # a UTF-16 label is believed only on bytes with NULs (cleaner.page.decode)


def lookup_label(label: str | bytes | None) -> str | None:
    """WHATWG "get an encoding": the Python codec for a label, or None for an unknown label."""
    if label is None:
        return None
    if isinstance(label, (bytes, bytearray)):
        label = bytes(label).decode("latin-1")
    return LABELS.get(label.strip(ASCII_WHITESPACE).lower())


_WHATWG_CODECS = frozenset(_WHATWG)


def codec_for_detector(name: str | None, whatwg_only: bool = True) -> str | None:
    """Codec for a detector's answer; with `whatwg_only`, None unless browsers know the
    encoding (uchardet also answers IBM852/855/865, MacCentralEurope, VISCII, ...)."""
    if not name:
        return None
    key = name.strip(ASCII_WHITESPACE).lower()
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


def western_guard(codec: str, sample: bytes, cfg: dict) -> str:
    """The detector's single-byte `codec` for `sample`, or windows-1252 when the Western guard overrules it
    (`cfg`: the [decode] section); an ISO-8859-x that uses 0x80-0x9F becomes its windows- sibling."""
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
