"""Issue 43, "Nothing stalls": parser time bombs and the annotator's lock.

The pages are scripts/parser_bombs.py's shapes (docs/faults.md, "Parser time bombs"), each at a size that
Lexbor took seconds to parse before the pre-parse guard (cleaner.page.markup_guard), cleaned by the real
parser: each must come back cleaned, with the text around the bomb kept and the guard's cap named, in a
fraction of the CPU the parse alone took. The CPU bound (2 s) is generous, a regression guard: the pages
take 0.1-0.3 s here.
"""

from __future__ import annotations

import re
import threading
import time

import pytest
from conftest import load_script
from hypothesis import given, settings
from hypothesis import strategies as st

from cleaner.api import clean_html
from cleaner.page.markup_guard import MarkupLimits, guard_markup


def _bombs():
    return load_script("parser_bombs")


BOMBS = _bombs()
CPU_BOUND_S = 2.0

# shape, units, Lexbor's CPU seconds before the guard (scripts/parser_bombs.py), the cap that defuses it
SLOW_SHAPES = [
    ("attributes-distinct", 80_000, 89.0, "attributes"),
    ("attributes-valued", 40_000, 5.6, "attributes"),
    ("attributes-in-noscript", 40_000, 4.5, "attributes"),
    ("options-unclosed", 80_000, 129.0, "options"),
    ("options-closed", 40_000, 10.5, "options"),
    ("options-in-optgroups", 40_000, 9.4, "options"),
    ("formatting-reconstructed", 2_500, 6.9, "formatting"),
    ("formatting-distinct", 20_000, 4.2, "nesting"),
    ("adoption-b-div", 40_000, 4.8, "nesting"),
    ("nesting-div", 80_000, 14.4, "nesting"),
]


@pytest.fixture(scope="module")
def warm():
    clean_html(b"<html><body><p>A first page loads the model.</p></body></html>")


@pytest.mark.parametrize("shape,n,before_s,cap", SLOW_SHAPES, ids=[s[0] for s in SLOW_SHAPES])
def test_a_parser_bomb_is_cleaned_within_a_small_cpu_time(warm, shape, n, before_s, cap):
    page = BOMBS.SHAPES[shape](n)
    t = time.process_time()
    res = clean_html(page)
    cpu = time.process_time() - t
    assert (res.status, res.reason) == ("cleaned", None), (res.reason, res.error)
    assert "Some text before the bomb" in res.plain and "Some text after the bomb" in res.plain
    assert cap in res.markup_capped
    assert cpu < CPU_BOUND_S, f"{shape} x {n}: {cpu:.2f} s of CPU (Lexbor alone took {before_s} s before the guard)"


def test_a_small_page_that_parses_into_a_huge_tree_is_walked_only_so_far(warm):
    """1,000 distinct <b> left open and reopened in each of 1,000 paragraphs: 24 KB and 2,005 start tags, too
    few for the guard's tag scan ([limits] max_nesting), parse into 660,000 elements (Lexbor 0.15 s), whose
    walk took 6.9 s of CPU. The walk stops at [limits] max_nodes, as at max_blocks: the page is truncated."""
    page = BOMBS.SHAPES["formatting-reconstructed"](1_000)
    t = time.process_time()
    res = clean_html(page)
    cpu = time.process_time() - t
    assert (res.status, res.reason) == ("cleaned", None)
    assert res.blocks_truncated and "Some text before the bomb" in res.plain
    assert cpu < 2 * CPU_BOUND_S, f"{cpu:.2f} s of CPU (6.9 s before [limits] max_nodes)"


def test_a_tag_keeps_its_first_attributes_and_their_values():
    limits = MarkupLimits(3000, 3, 1000, 500_000)
    html = '<p a="1 > 2" b=\'x\' c d=e f g>text</p>'
    assert guard_markup(html, limits).html == '<p a="1 > 2" b=\'x\' c>text</p>'  # read as the tokenizer does
    assert guard_markup(html, MarkupLimits(3000, 6, 1000, 500_000)).html == html
    attrs = " ".join(f'x{i}="v"' for i in range(10))
    guarded = guard_markup(f'<div id="keep" class=\'k\' hidden {attrs}>text</div>', limits)
    assert guarded.html == "<div id=\"keep\" class='k' hidden>text</div>"
    assert guarded.capped == ("attributes",)


def test_a_script_s_text_is_no_tag():
    """`<x` in a script is text to the tokenizer (a shared wcxb page's JavaScript read as a tag of 580
    attributes), however long."""
    limits = MarkupLimits(3000, 3, 1000, 500_000)
    js = "if (a <arguments.length && b || c || d || e || f) { g(); }"
    html = f"<html><head><SCRIPT type=x>{js}</script></head><body><p a b c d e f g h>t</p></body></html>"
    guarded = guard_markup(html, limits)
    assert js in guarded.html and "<p a b c>t</p>" in guarded.html


def test_options_past_the_cap_go_only_inside_a_select():
    limits = MarkupLimits(5, 1000, 2, 500_000)
    html = "<select>" + "<option>o" * 5 + "</select>" + "<option>p" * 5
    guarded = guard_markup(html, limits)
    assert guarded.html == "<select><option>o<option>oooo</select>" + "<option>p" * 5
    assert guarded.capped == ("options",)


def test_the_guard_leaves_every_ordinary_shape_alone():
    limits = MarkupLimits.from_config(__import__("cleaner.config", fromlist=["load_config"]).load_config())
    for shape in ("children-flat", "formatting-identical", "adoption-a", "table-cells-unclosed", "li-unclosed",
                  "comments-many", "options-outside-select", "options-in-datalist"):
        page = BOMBS.SHAPES[shape](2_000).decode()
        assert guard_markup(page, limits).html == page, shape


def test_annotate_loads_a_page_while_another_is_being_parsed(tmp_path):
    """A slow page loading in one thread must not hold up a small page in another: the annotator held a lock
    across the parse, and the small page waited for the slow one. The slow page is 9.5 MB of paragraphs, just
    under `max_html_bytes`, so that it takes ~0.6 s even on a fast machine: the compiled passes hold the GIL for
    tens of milliseconds at a time, and a slow page of 0.3 s (4 MB) left too little margin."""
    from cleaner.tools.annotate import Annotator

    (tmp_path / "slow.html").write_bytes(b"<html><body>" + b"<p>word word word</p>" * 450_000 + b"</body></html>")
    (tmp_path / "small.html").write_bytes(b"<html><body><p>A small page with a paragraph of text.</p></body></html>")
    annotator = Annotator(tmp_path)
    done: dict[str, float] = {}

    def load(name: str) -> None:
        assert annotator.page(name)["status"] == "ok"
        done[name] = time.perf_counter()

    start = time.perf_counter()
    slow = threading.Thread(target=load, args=("slow.html",))
    slow.start()
    time.sleep(0.1)  # the slow page is being read
    asked = time.perf_counter()
    small = threading.Thread(target=load, args=("small.html",))
    small.start()
    small.join(timeout=60)
    slow.join(timeout=60)
    assert set(done) == {"slow.html", "small.html"}
    slow_s, small_s = done["slow.html"] - start, done["small.html"] - asked
    assert done["small.html"] < done["slow.html"], f"the small page waited: {small_s:.2f} s (slow page {slow_s:.2f} s)"
    assert small_s < slow_s / 2


# The tag scan compiled (cleaner/page/compiled_guard.pyx) against its reference (markup_guard.scan_edits).
_TRICKY = [
    "", "<", "<a", "a>", "<>", "</>", "</ a>", "<<a>", "<a<b>", "<A HREF=x>y</A>", "<br/><br />x<hr/>",
    "<svg:rect/>", "<my-element data-x='1'>x</my-element>", "<h1>t</h1><Select><OPTION>a<optgroup>b</select>",
    "<b><i><u>x</b></i>y", "<nobr><nobr>x", "<a href='x>y'>z</a>", "<textarea><option>x", "<é>x", "<a\u00e9>x",
    "<abcdefghij>x</abcdefghij>", "<code>x</code><strike>y",
]


@pytest.mark.parametrize("limits", [(3000, 1000, 500_000), (3, 2, 10), (40, 0, 50)])
def test_the_compiled_tag_scan_gives_the_references_edits(limits, data_dir):
    compiled = pytest.importorskip("cleaner.page.compiled_guard", reason="not built (scripts/build_native.py)")
    from conftest import sampled_pages

    from cleaner.page.decode import decode_html
    from cleaner.page.markup_guard import scan_edits

    pages = [p.read_html() for p in sampled_pages(data_dir, 40)]
    bombs = [BOMBS.SHAPES[shape](2_000) for shape, *_ in SLOW_SHAPES]
    texts = _TRICKY + [decode_html(data).text for data in pages + bombs]
    texts += ["".join(t) for t in zip(*[iter(_TRICKY * 3)] * 7)]  # the tricky ones run together
    for text in texts:
        assert compiled.scan_edits(text, *limits) == scan_edits(text, *limits), text[:200]


def test_the_compiled_bracket_count_is_the_references(data_dir):
    """The guard's gate counts the '<' not followed by '/' in one compiled pass: the same decision as the
    reference's two `str.count`, on texts of every width (one, two and four bytes a character)."""
    compiled = pytest.importorskip("cleaner.page.compiled_guard", reason="not built (scripts/build_native.py)")
    from conftest import sampled_pages

    from cleaner.page.decode import decode_html
    from cleaner.page.markup_guard import more_start_tags_than

    texts = _TRICKY + ["<</", "</<", "<<", "x<", "<\u4e2d</", "\U0001f600<a></a><", "é<" * 5, "</" * 5]
    texts += [decode_html(p.read_html()).text for p in sampled_pages(data_dir, 20)]
    widths = set()
    for text in texts:
        top = max(map(ord, text), default=0)
        widths.add(1 if top < 0x100 else 2 if top < 0x10000 else 4)
        expected = text.count("<") - text.count("</")
        assert compiled.count_start_brackets(text) == expected, text[:200]
        for limit in (expected - 1, expected, expected + 1):
            assert more_start_tags_than(text, limit) == (expected > limit)
    assert widths == {1, 2, 4}


@settings(max_examples=500, deadline=None)
@given(text=st.text(alphabet="<>aZé中\U0001f600 =", max_size=60), min_chars=st.integers(1, 8))
def test_the_compiled_long_runs_are_the_references_on_generated_texts(text, min_chars):
    compiled = pytest.importorskip("cleaner.page.compiled_guard", reason="not built (scripts/build_native.py)")
    from cleaner.page.markup_guard import _tags_of_long_runs

    assert compiled.tags_of_long_runs(text, min_chars) == list(_tags_of_long_runs(text, min_chars))


def test_the_compiled_long_runs_are_the_references(data_dir):
    """The attribute cap's search for tags of many attributes (runs of text without a bracket), compiled: the
    reference's tags on the shared pages and the bombs, in texts of every width, for runs of several lengths."""
    compiled = pytest.importorskip("cleaner.page.compiled_guard", reason="not built (scripts/build_native.py)")
    from conftest import sampled_pages

    from cleaner.page.decode import decode_html
    from cleaner.page.markup_guard import _tags_of_long_runs

    texts = [decode_html(p.read_html()).text for p in sampled_pages(data_dir, 20)]
    texts += [decode_html(BOMBS.SHAPES[shape](2_000)).text for shape, *_ in SLOW_SHAPES]
    texts += [t.replace("e", "\u4e2d") for t in texts[::4]] + [t.replace("a", "\U0001f600") for t in texts[::4]]
    found = 0
    for text in texts + _TRICKY:
        for min_chars in (1, 7, 40, 1000):
            expected = list(_tags_of_long_runs(text, min_chars))
            assert compiled.tags_of_long_runs(text, min_chars) == expected, (min_chars, text[:200])
            found += bool(expected)
    assert found > 20
    with pytest.raises(ValueError):
        compiled.tags_of_long_runs("<a>", 0)


def test_the_compiled_byte_count_is_the_references():
    """The binary sniff counts a page's control bytes in one compiled pass: the reference's count (the bytes
    `translate` deletes) for every byte value, in and out of the set, and on generated bytes."""
    compiled = pytest.importorskip("cleaner.page.compiled_guard", reason="not built (scripts/build_native.py)")
    import random

    from cleaner.page.pipeline import _CONTROL, count_bytes, looks_binary

    rng = random.Random(56)
    samples = [bytes([b]) for b in range(256)] + [b"", bytes(range(256)) * 3]
    samples += [rng.randbytes(rng.randrange(0, 5000)) for _ in range(50)]
    # every byte value at every place of eight, among ASCII letters or among bytes that borrow (0x80-0xFF, 0x20, 0x00)
    samples += [bytes([fill] * at + [b] + [fill] * (7 - at)) for b in range(256) for at in range(8)
                for fill in (0x61, 0xFF, 0x80, 0x20, 0x00)]
    # text with a control byte here and there (eight bytes at a time are passed when they hold none), of every length
    samples += [bytes(rng.choice(b"<p>text &amp; more\t\n\r") if rng.random() < 0.97 else rng.randrange(0, 256)
                      for _ in range(rng.randrange(0, 300))) for _ in range(300)]
    for data in samples:
        for which in (_CONTROL, b"", bytes(range(0x80, 0x100)), b"\x00", b"\x1f\x7f", b"\x00 "):
            assert compiled.count_bytes(data, which) == count_bytes(data, which)
    assert looks_binary(b"\x01\x02 text" * 100, None) and not looks_binary(b"<p>text</p>\t\n" * 100, None)


# The guard read from a page's UTF-8 (compiled_guard.leaves_utf8_unchanged, scan_edits_utf8): most pages are parsed
# from their bytes and never decoded, so it must clear a page only when the guard of its text changes nothing.
def _byte_offsets(text: str) -> list[int]:
    """Per character offset of `text` (and its end), the byte offset of its UTF-8."""
    out, at = [], 0
    for ch in text:
        out.append(at)
        at += len(ch.encode("utf-8", "surrogatepass"))
    return out + [at]


@pytest.mark.parametrize("limits", [(3000, 1000, 500_000), (3, 2, 10), (40, 0, 50)])
def test_the_tag_scan_of_the_utf8_makes_the_texts_edits(limits, data_dir):
    compiled = pytest.importorskip("cleaner.page.compiled_guard", reason="not built (scripts/build_native.py)")
    from conftest import sampled_pages

    from cleaner.page.decode import decode_html

    texts = _TRICKY + [decode_html(p.read_html()).text for p in sampled_pages(data_dir, 30)]
    texts += [decode_html(BOMBS.SHAPES[shape](2_000)).text for shape, *_ in SLOW_SHAPES]
    texts += [t.replace("e", "\u4e2d").replace("a", "\U0001f600") for t in texts[::3]]  # every width of character
    for text in texts:
        edits, caps = compiled.scan_edits(text, *limits)
        at = _byte_offsets(text)
        assert compiled.scan_edits_utf8(text.encode(), *limits) == (
            [(at[start], at[end], put) for start, end, put in edits], caps), text[:200]


def test_a_page_is_parsed_from_its_bytes_only_when_the_guard_leaves_its_text_as_it_is(data_dir):
    pytest.importorskip("cleaner.page.compiled_guard", reason="not built (scripts/build_native.py)")
    from conftest import sampled_pages

    from cleaner.config import load_config
    from cleaner.page.decode import decode_html
    from cleaner.page.markup_guard import MarkupLimits, guard_markup, leaves_utf8_unchanged

    shipped = MarkupLimits.from_config(load_config())
    tight = [MarkupLimits(40, 3, 5, 50), MarkupLimits(3000, 1, 1000, 500_000), MarkupLimits(10**9, 10**9, 1, 1)]
    texts = [decode_html(p.read_html()).text for p in sampled_pages(data_dir, 60)]
    texts += [decode_html(BOMBS.SHAPES[shape](5_000)).text for shape, *_ in SLOW_SHAPES]
    texts += _TRICKY + ["<a " + "x " * 600 + ">t</a>", "<p>" + "é" * 700 + "<a" + "é" * 400 + ">"]
    cleared = {True: 0, False: 0}
    for text in texts:
        for limits in [shipped] + tight:
            unchanged = guard_markup(text, limits).html is text
            fast = leaves_utf8_unchanged(text.encode(), limits)
            assert not fast or unchanged, (limits, text[:200])  # never a page the guard would change
            if limits is shipped:
                cleared[bool(fast)] += unchanged
    # and the bytes clear nearly every ordinary page (the pages of the sample the guard leaves as they are)
    assert cleared[True] >= 0.95 * (cleared[True] + cleared[False]), cleared


@settings(max_examples=500, deadline=None)
@given(text=st.text(alphabet="<>/aAbiupé中\U0001f600 =\"'", max_size=80), nesting=st.integers(0, 6),
       attributes=st.integers(1, 4))
def test_the_bytes_clear_only_what_the_text_guard_leaves_on_generated_markup(text, nesting, attributes):
    pytest.importorskip("cleaner.page.compiled_guard", reason="not built (scripts/build_native.py)")
    from cleaner.page.markup_guard import MarkupLimits, guard_markup, leaves_utf8_unchanged

    limits = MarkupLimits(nesting, attributes, 2, 3)
    if leaves_utf8_unchanged(text.encode(), limits):
        assert guard_markup(text, limits).html is text


@settings(max_examples=2000, deadline=None)
@given(tag=st.text(alphabet="<>/=\"' \tab\u00a0\u2003\u3000\u2013é中\U0001f600\x1c\x85\u205f\u1680\u2028\u202f"
                   "\u2030\u3001\u00c2", max_size=30),
       n=st.integers(1, 4))
def test_the_attribute_caps_pattern_for_utf8_matches_what_it_matches_in_the_text(tag, n):
    # every character str's \s takes (the no-break and ideographic spaces among them) and characters of every length
    from cleaner.page.markup_guard import _first_attributes, _first_attributes_utf8

    text = "<a" + tag
    in_text = _first_attributes(n).match(text)
    in_bytes = _first_attributes_utf8(n).match(text.encode())
    assert (in_bytes.end() if in_bytes else None) == (len(text[: in_text.end()].encode()) if in_text else None)


@settings(max_examples=500, deadline=None)
@given(text=st.text(alphabet="<>aZé中\U0001f600 =", max_size=60), min_chars=st.integers(1, 8))
def test_the_long_runs_of_the_utf8_hold_every_long_run_of_the_text(text, min_chars):
    compiled = pytest.importorskip("cleaner.page.compiled_guard", reason="not built (scripts/build_native.py)")

    at = _byte_offsets(text)
    in_bytes = compiled.tags_of_long_runs_utf8(text.encode(), min_chars)
    assert {at[start] for start in compiled.tags_of_long_runs(text, min_chars)} <= set(in_bytes)
    assert compiled.tags_of_long_runs_utf8(text.encode(), 1) == [at[s] for s in compiled.tags_of_long_runs(text, 1)]


@settings(max_examples=3000, deadline=None)
@given(tag=st.one_of(
    st.text(alphabet="<>/=\"' \tab\u00a0\u2003\u3000\u2013é中\U0001f600\x1c\x85\u205f\u1680\u2028\u202f\u2030"
            "\u3001\u00c2\u0085\u2029\u180e", max_size=40).map(lambda t: ("<a" + t).encode()),
    st.binary(max_size=40).map(lambda b: b"<a" + b),
    st.lists(st.sampled_from([b" ", b"/", b"=", b'"', b"'", b">", b"x", b"\xc2\xa0", b"\xc2", b"\xe2\x80\x83",
                              b"\xe2\x80", b"\xe3\x80\x80", b"\xe1\x9a\x80", b"\xe2\x81\x9f", b"\xe2\x80\xaf", b"\t"]),
             max_size=30).map(lambda parts: b"<b" + b"".join(parts))),
    n=st.integers(1, 5), start=st.integers(0, 2))
def test_the_compiled_attribute_count_is_the_caps_pattern(tag, n, start):
    """compiled_guard.has_attributes_utf8 (the cap's check on a page's UTF-8, one pass) matches where its reference,
    the cap's pattern for UTF-8, matches: on generated tags of every whitespace character, cut UTF-8 sequences and
    quotes, and at offsets where no tag starts."""
    compiled = pytest.importorskip("cleaner.page.compiled_guard", reason="not built (scripts/build_native.py)")
    from cleaner.page.markup_guard import _first_attributes_utf8

    data = b"xy" + tag
    at = start if start < 2 else 2
    assert compiled.has_attributes_utf8(data, at, n) == bool(_first_attributes_utf8(n).match(data, at))


def test_the_compiled_attribute_count_is_the_caps_pattern_on_the_long_tags_of_the_shared_pages(data_dir):
    """The tags the cap tries on the shared pages (the long runs, at the shipped cap and at tighter ones), and tags
    of exactly the cap's count of attributes, with and without values."""
    compiled = pytest.importorskip("cleaner.page.compiled_guard", reason="not built (scripts/build_native.py)")
    from conftest import sampled_pages

    from cleaner.page.markup_guard import _first_attributes_utf8

    pages = [p.read_html() for p in sampled_pages(data_dir, 10)]
    pages += [b"<a " + b"x " * 500 + b">", b"<a " + b"x " * 499 + b">", b'<a ' + b'x="1"' * 501 + b">",
              b"<svg d=" + b"M0 0L1 1" * 300 + b">", "<a \u3000é=中 ".encode() * 300]
    tried = 0
    for data in pages:
        for count in (501, 20, 3):
            for start in compiled.tags_of_long_runs_utf8(data, 2 * (count - 1)):
                assert compiled.has_attributes_utf8(data, start, count) == bool(
                    _first_attributes_utf8(count).match(data, start)), (count, data[start:start + 200])
                tried += 1
    assert tried > 100


def _tags_of_long_runs_utf8_reference(data: bytes, min_run: int) -> list[int]:
    """Every '<' that an ASCII letter and then, with it, at least `min_run` bytes without a bracket follow."""
    return [m.start() for m in re.finditer(rb"<(?=[A-Za-z][^<>]{%d})" % (min_run - 1), data)]


@settings(max_examples=1500, deadline=None)
@given(data=st.lists(st.sampled_from([b"<", b">", b"a", b"Z", b"1", b" ", b"\xc3\xa9", b"<a", b"</", b"x" * 9]),
                     max_size=80).map(b"".join), min_run=st.integers(1, 12))
def test_the_long_runs_of_the_utf8_are_every_run_that_long(data, min_run):
    """compiled_guard.tags_of_long_runs_utf8, which hops a window at a time, finds every tag a long run follows and
    nothing else, on generated bytes (runs of every length around the window's, brackets at its edges)."""
    compiled = pytest.importorskip("cleaner.page.compiled_guard", reason="not built (scripts/build_native.py)")
    assert compiled.tags_of_long_runs_utf8(data, min_run) == _tags_of_long_runs_utf8_reference(data, min_run)


def test_the_long_runs_of_the_shared_pages_are_every_run_that_long(data_dir):
    compiled = pytest.importorskip("cleaner.page.compiled_guard", reason="not built (scripts/build_native.py)")
    from conftest import sampled_pages

    found = 0
    for page in sampled_pages(data_dir, 10):
        data = page.read_html()
        for min_run in (1000, 40, 6, 1):
            got = compiled.tags_of_long_runs_utf8(data, min_run)
            assert got == _tags_of_long_runs_utf8_reference(data, min_run), (page.key, min_run)
            found += len(got)
    assert found > 1000
