"""Tests for cleaner.gold.gold: decoding and segmenting gold files."""

from __future__ import annotations

import codecs
from pathlib import Path

import pytest

from cleaner.gold.gold import (
    Segment,
    decode_gold,
    has_markers,
    is_dragnet_separator,
    parse_segments,
    read_gold,
)

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
needs_data = pytest.mark.skipif(not DATA.is_dir(), reason=f"data not found at {DATA}")


# --- decoding ---------------------------------------------------------------------------


def test_decode_utf8_without_bom():
    assert decode_gold("Café <p>naïve".encode("utf-8")) == "Café <p>naïve"


def test_decode_utf8_bom_is_removed():
    assert decode_gold(codecs.BOM_UTF8 + "URL: x\n<p>é".encode("utf-8")) == "URL: x\n<p>é"


def test_decode_utf16le_bom():
    data = codecs.BOM_UTF16_LE + "Héllo\r\n<P>wörld".encode("utf-16-le")
    assert decode_gold(data) == "Héllo\r\n<P>wörld"


def test_decode_utf16be_bom():
    data = codecs.BOM_UTF16_BE + "Héllo <h>€".encode("utf-16-be")
    assert decode_gold(data) == "Héllo <h>€"


def test_decode_windows1252_fallback():
    # 0xE9 = é, 0x93/0x94 = curly quotes, 0x80 = € in windows-1252; invalid as UTF-8.
    assert decode_gold(b"caf\xe9 \x93quoted\x94 \x80") == "café “quoted” €"


def test_decode_windows1252_undefined_bytes_do_not_raise():
    # 0x81 and 0x9D are undefined in windows-1252: mapped to U+0081/U+009D like browsers do.
    assert decode_gold(b"a\xe9\x81b\x9d") == "aé\x81b\x9d"


def test_decode_valid_utf8_is_not_taken_for_windows1252():
    # "é" in UTF-8 is C3 A9, which windows-1252 would read as "Ã©".
    assert decode_gold(b"\xc3\xa9t\xc3\xa9") == "été"


def test_read_gold(tmp_path):
    path = tmp_path / "g.txt"
    path.write_bytes(codecs.BOM_UTF16_LE + "<p>x".encode("utf-16-le"))
    assert read_gold(path) == "<p>x"
    assert read_gold(str(path)) == "<p>x"


# --- separators ------------------------------------------------------------------------

# Every variant found in dragnet/gold/*.txt.
REAL_SEPARATORS = [
    "!@#$%^&*()  COMMENTS",
    "!@#$%^&*() COMMENTS",
    "!@ $%^&*()  COMMENTS",
    "!@#$%^&*()   COMMENTS",
    "!!@#$%^&*()  COMMENTS",
    "!@#$%^&*()",
    "!@#$%^&*   COMMENTS",
    "!#@$%^&*()  COMMENTS",
    "!@#$%^&**()  COMMENTS",
    "!@#$%^&*()  CORRECTED",
    "!@#$%^&*()  \tCOMMENTS",
    "  #$%^&*()  COMMENTS",
    "!@#$%$%^&*()  COMMENTS",
    "!@#$%^&*()  COMMENTS\t",
    "!@#$%^&*()  COMMNENTS",
    "@#$%^&*() COMMENTS",
    "!@#$%^&*()  COMMENTS\r",
]

# Content lines of real golds that look a bit like separators.
NOT_SEPARATORS = [
    "",
    "   ",
    "***",
    "###",
    "*" * 80,
    "(((((hugs)))))",
    "***spoilers***",
    "YAY!!!!!!!!!!!!!!!!",
    "what is it with @!$%#s and phones?",
    "COMMENTS",
    "Total Comments (3)",
    "!@#$%^&*()  COMMENTS and more words",
    "<p>",
    "<p> !@#$%^&*() COMMENTS",
]


@pytest.mark.parametrize("line", REAL_SEPARATORS)
def test_separator_variants(line):
    assert is_dragnet_separator(line)


@pytest.mark.parametrize("line", NOT_SEPARATORS)
def test_not_separator(line):
    assert not is_dragnet_separator(line)


# --- markers and segments ----------------------------------------------------------------


def test_has_markers():
    assert has_markers("x <p>y")
    assert has_markers("<H>title")
    assert has_markers("a<l>b")
    assert not has_markers("plain text")
    assert not has_markers("</p> <br> <pre> &lt;p&gt;")


def test_parse_plain_text_is_one_unmarked_segment():
    assert parse_segments("line one\nline two\n") == [Segment(None, "line one\nline two")]


def test_parse_empty_and_blank():
    assert parse_segments("") == []
    assert parse_segments("  \n\t\n") == []


def test_parse_markers_start_segments_and_text_continues_segment():
    text = "<h>Title\n<p>First line\ncontinued\n<l>item"
    assert parse_segments(text) == [
        Segment("h", "Title"),
        Segment("p", "First line\ncontinued"),
        Segment("l", "item"),
    ]


def test_parse_markers_mid_line_and_any_case():
    assert parse_segments("intro <P>para one <H>head<l>item") == [
        Segment(None, "intro"),
        Segment("p", "para one"),
        Segment("h", "head"),
        Segment("l", "item"),
    ]


def test_parse_omits_empty_segments():
    assert parse_segments("<p>\n<p>  <h>x\n<l>") == [Segment("h", "x")]


def test_parse_segment_without_words_is_kept():
    # Only blank segments are omitted; the scorer decides what a word-less one counts for.
    assert parse_segments("<p>***") == [Segment("p", "***")]


def test_parse_url_line_dropped():
    assert parse_segments("URL: http://a.b/c\n<p>x") == [Segment("p", "x")]


def test_parse_url_line_after_blank_lines_dropped():
    # 71 CleanEval golds have blank lines (or a BOM) before the URL line.
    assert parse_segments("\n  \nURL: http://a.b/c\n<p>x") == [Segment("p", "x")]


def test_parse_url_line_later_in_text_is_content():
    assert parse_segments("<p>a\nURL: http://a.b/") == [Segment("p", "a\nURL: http://a.b/")]


def test_parse_dragnet_separator_dropped():
    text = "Article text.\n\n!@#$%^&*()  COMMENTS\n\nA comment."
    assert parse_segments(text) == [Segment(None, "Article text.\n\n\nA comment.")]


def test_parse_does_not_decode_entities_or_take_closing_tags_as_markers():
    assert parse_segments("&lt;p&gt;a &amp; b</p>") == [Segment(None, "&lt;p&gt;a &amp; b</p>")]


def test_parse_crlf():
    assert parse_segments("URL: x\r\n<p>a\r\nb\r\n") == [Segment("p", "a\nb")]


# --- real gold files ------------------------------------------------------------------


@needs_data
def test_real_dragnet_27_is_utf16le():
    path = DATA / "dragnet" / "gold" / "27.txt"
    assert path.read_bytes()[:2] == codecs.BOM_UTF16_LE
    text = read_gold(path)
    assert text.startswith("Paulo Coelho's Blog")
    assert "\x00" not in text
    segments = parse_segments(text)
    assert len(segments) == 1 and segments[0].marker is None


@needs_data
def test_real_windows1252_golds():
    # Not valid UTF-8 (a stray 0xBB / 0xB7), so the whole file is windows-1252.
    assert "voting »" in read_gold(DATA / "cleaneval-final" / "gold" / "212.txt")
    assert "<p>· City of" in read_gold(DATA / "cleaneval-dev" / "gold" / "59.txt")


@needs_data
def test_real_cleaneval_gold_segments():
    # Blank line, then a <h> line: the first segments are headings.
    segments = parse_segments(read_gold(DATA / "cleaneval-final" / "gold" / "161.txt"))
    assert segments[0] == Segment("h", "April 2, 1998")
    assert segments[1] == Segment("h", "Time, economy leave Moscow's St. Basil's in sorry condition")
    assert segments[4].marker == "p" and segments[4].text.startswith("MOSCOW -- It's still")


@needs_data
def test_real_cleaneval_url_line_dropped():
    text = read_gold(DATA / "cleaneval-dev" / "gold" / "1.txt")
    assert text.startswith("URL: http://1-las-vegas-real-estate.com/")
    segments = parse_segments(text)
    assert segments[0].marker == "p"
    assert segments[0].text.startswith("If you feel it's time")
    assert all("las-vegas-real-estate" not in s.text for s in segments)


@needs_data
def test_real_dragnet_separator_count():
    # README says 416 files by its own count; the variants above occur in 424 files, each once.
    files = sorted((DATA / "dragnet" / "gold").glob("*.txt"))
    assert len(files) == 1381
    counts = [sum(map(is_dragnet_separator, read_gold(f).splitlines())) for f in files]
    assert sum(1 for c in counts if c) == 424
    assert max(counts) == 1
