"""Reading and parsing hand-cleaned gold files (CleanEval and Dragnet formats).

The gold text is the reference every quality figure is computed against, so its
parsing is shared by the scorer (`cleaner.gold.score`) and by the code that turns gold
into training labels: both must see exactly the same segments and words.

Format (see the data README, "Gold files"):

* encoding: a byte-order mark decides; without one UTF-8, falling back to
  windows-1252 (about 90 files are not valid UTF-8);
* an optional leading ``URL: ...`` line, not content;
* CleanEval markers ``<p>``, ``<h>``, ``<l>`` (any case, anywhere in a line) start
  a new segment; text before the first marker is an unmarked segment;
* Dragnet separator lines (``!@#$%^&*()  COMMENTS`` and its misspellings) between
  article and comments are dropped.

HTML entities are deliberately *not* decoded here: the scorer decodes them when it
tokenises, and decoding before splitting would turn ``&lt;p&gt;`` into a marker.
"""

from __future__ import annotations

import codecs
import html
import re
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "MARKERS",
    "Segment",
    "decode_gold",
    "read_gold",
    "has_markers",
    "is_dragnet_separator",
    "parse_segments",
    "as_plain_text",
]

MARKERS = ("p", "h", "l")

_MARKER_RE = re.compile(r"<([phl])>", re.IGNORECASE)

# Dragnet separator: a run of the shifted digit-row symbols !@#$%^&*() (spaces and
# tabs allowed inside, as in "!@ $%^&*()"), optionally followed by one word
# (COMMENTS, COMMNENTS, CORRECTED, ...). Requiring at least 4 *distinct* symbols
# keeps content lines such as "***", "###" or "(((((hugs)))))" out.
_SEPARATOR_RE = re.compile(r"(?P<symbols>[!@#$%^&*()][!@#$%^&*()\s]*?)\s*(?P<word>[A-Za-z]+)?")
_SEPARATOR_SYMBOLS = frozenset("!@#$%^&*()")
_SEPARATOR_MIN_DISTINCT = 4

_URL_PREFIX = "URL:"

_BOMS = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)


def _c1_passthrough(err: UnicodeError) -> tuple[str, int]:
    """Map the five bytes windows-1252 leaves undefined (0x81, 0x8D, ...) to U+0081...

    This is what browsers (WHATWG) do; Python's cp1252 codec raises instead, and a
    gold file must always decode.
    """
    if not isinstance(err, UnicodeDecodeError):
        raise err
    bad = err.object[err.start : err.end]
    return "".join(chr(b) for b in bad), err.end


_CP1252_ERRORS = "cleaner.gold.gold.c1passthrough"
codecs.register_error(_CP1252_ERRORS, _c1_passthrough)


@dataclass(frozen=True)
class Segment:
    """One paragraph/heading/list item of a gold or predicted text.

    ``marker`` is ``'p'``, ``'h'``, ``'l'`` (always lower case) or ``None`` for text
    before the first marker (and for all of a Dragnet file). ``text`` is stripped of
    surrounding whitespace, entities not decoded.
    """

    marker: str | None
    text: str


def decode_gold(data: bytes) -> str:
    """Decode gold bytes: a BOM decides, else UTF-8, else windows-1252.

    Five Dragnet golds are UTF-16LE with a BOM; about 90 files are windows-1252
    without declaring it. The BOM is removed. With a BOM, undecodable bytes are
    replaced rather than raising, since the BOM is authoritative.
    """
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            return data[len(bom) :].decode(encoding, errors="replace")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("cp1252", errors=_CP1252_ERRORS)


def read_gold(path: str | Path) -> str:
    """Read and decode one gold file (see `decode_gold`)."""
    return decode_gold(Path(path).read_bytes())


def has_markers(text: str) -> bool:
    """True when the text contains at least one ``<p>``/``<h>``/``<l>`` marker (any case).

    Decides whether markup figures are meaningful for a gold text.
    """
    return _MARKER_RE.search(text) is not None


def is_dragnet_separator(line: str) -> bool:
    """True for a Dragnet article/comments separator line, e.g. ``!@#$%^&*()  COMMENTS``.

    The annotators typed it by hand: the symbol run and the word vary
    (``!@ $%^&*()``, ``!#@$%^&*()``, ``COMMNENTS``, ``CORRECTED``, no word at all,
    trailing tabs), so the test is structural rather than a fixed string.
    """
    match = _SEPARATOR_RE.fullmatch(line.strip())
    if match is None:
        return False
    distinct = set(match.group("symbols")) & _SEPARATOR_SYMBOLS
    return len(distinct) >= _SEPARATOR_MIN_DISTINCT


def _drop_url_line(lines: list[str]) -> list[str]:
    """Drop the ``URL: ...`` header if it is the first non-blank line.

    71 CleanEval golds have blank lines before it, so "first line" means first
    non-blank line; a ``URL:`` later in the text is content and kept.
    """
    for i, line in enumerate(lines):
        if line.strip():
            if line.lstrip().startswith(_URL_PREFIX):
                return lines[:i] + lines[i + 1 :]
            return lines
    return lines


def _clean_lines(text: str) -> str:
    """Text without the URL header and Dragnet separator lines, lines joined by ``\\n``."""
    lines = _drop_url_line(text.splitlines())
    return "\n".join(line for line in lines if not is_dragnet_separator(line))


def parse_segments(text: str) -> list[Segment]:
    """Split a gold (or predicted) text into segments.

    A marker starts a new segment wherever it occurs in a line; text without a
    marker continues the current segment. Segments whose text is blank (e.g. an
    empty ``<p>``, or only whitespace before the first marker) are omitted: they
    carry nothing to align, and the scorer would ignore them anyway.
    """
    parts = _MARKER_RE.split(_clean_lines(text))
    # parts = [before_first_marker, marker1, text1, marker2, text2, ...]
    segments: list[Segment] = []
    pre = parts[0].strip()
    if pre:
        segments.append(Segment(None, pre))
    for i in range(1, len(parts), 2):
        body = parts[i + 1].strip()
        if body:
            segments.append(Segment(parts[i].lower(), body))
    return segments


def as_plain_text(text: str) -> str:
    """A plain text (no markers: article, main-content and Dragnet gold, a peer's output) written so
    that `parse_segments` reads every ``<p>``/``<h>``/``<l>`` in it as text: the ``<`` becomes
    ``&lt;``, which the scorer decodes back when it takes the words. Two wcxb golds quote HTML
    (``"<p>Hello, World!</p>"``): read as markers, the quote would start segments, lose its word
    "p" and make markup figures of a gold that has no markup."""
    return _MARKER_RE.sub(lambda m: "&lt;" + m.group(0)[1:], text)


def read_text(text: str) -> str:
    """A gold or predicted text as the scorer reads its words: its segments' texts, one a line, without markers, their
    entities decoded (a peer's plain text goes through `as_plain_text` first, as the scorer is given it)."""
    return html.unescape("\n".join(seg.text for seg in parse_segments(text)))
