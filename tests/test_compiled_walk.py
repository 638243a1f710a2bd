"""The segmenter's compiled walk (cleaner/page/compiled_walk.pyx) against its readable reference
(cleaner.page.segment._walk): what a user relies on is that the blocks, page marks and counters a page gives do not
depend on which walk ran, on ordinary pages, on damaged ones and on the markup the walk treats specially."""

from __future__ import annotations

import gzip
import os

import pytest
from conftest import sampled_pages
from hypothesis import given, settings
from hypothesis import strategies as st

import cleaner
from cleaner.config import load_config
from cleaner.page import segment
from cleaner.page.decode import decode_html
from cleaner.page.segment import parse_html

if os.environ.get(cleaner.PURE_PYTHON_ENV, "") not in ("", "0"):
    pytest.skip("pure Python asked for", allow_module_level=True)
compiled_walk = pytest.importorskip("cleaner.page.compiled_walk", reason="not built (scripts/build_native.py)")

CONFIG = load_config()

# Markup the walk reads specially, one case each.
CASES = {
    "plain": "<p>Hello <b>world</b>, a page.</p>",
    "head": ("<html><head><title> A  title </title><meta property='og:type' content='Article'>"
             "<link rel=canonical href='/x'><script type='application/ld+json'>{\"@type\": \"NewsArticle\"}"
             "</script></head><body><p>text</p></body></html>"),
    "json-ld in the body": "<p>a</p><script type='application/ld+json'>[{\"a\": \"ü\"}]</script><p>b</p>",
    "pre": "<pre>  def f():\n\n      return 1\n  x = <b>2</b>  \n</pre><p>after</p>",
    "anchors": "<a name=top>x</a><a href=''>y</a><a href='/z'>z</a><a>w",
    "hidden": ("<div hidden>a</div><div aria-hidden=true>b</div><div style='Display : None'>c</div>"
               "<div style='visibility:hidden'>d</div><div aria-hidden=false>e</div><div aria-hidden=TRUE>f</div>"
               "<div style='VISIBILITY: HIDDEN'>g</div><div style='display:nOnE;content:\"é\"'>h</div>"
               "<div style='display:block;overflow:hidden'>i</div><div style='border:none'>j</div><div style=''>k</div>"
               "<div style='display:non'>l</div><div style='visibility:hidde'>m</div>"),
    "overlays": ("<dialog>a</dialog><dialog open>b</dialog><dialog open=''>c</dialog><div aria-modal=true>d</div>"
                 "<div aria-modal=TRUE>e</div><div aria-modal=false>f</div><div aria-modal>g</div><div v-cloak>h</div>"
                 "<div x-cloak=''>i</div><section ng-cloak><p>j</p></section><div v-clo>k</div><p>l</p>"),
    "main": "<div role=main><p>a</p></div><div itemprop=articleBody>b</div>",
    "microdata": ("<div itemscope itemtype='https://schema.org/Product http://schema.org/Thing/'>"
                  "<span itemprop=name>n</span><time itemprop=datePublished datetime=2024-01-02>d</time>"
                  "<meta itemprop=datePublished content=2023><div itemscope itemtype=x/Inner>i</div></div>"),
    "whitespace": ("<p>\u3000a\u00a0 b\t\tc \n</p><p> </p><p>x<b> </b>y<i>\u2028</i>z</p><pre>\u00a0 q\u3000\n\t</pre>"
                   "<p>one two</p><p>one  two </p>"),
    "duplicate attributes": "<div class=a class=b id=x id=y><p class='c  D-e'>t</p></div>",
    # Attributes the compiled walk only tests, decoded when asked for: without a value, empty, duplicated.
    "attributes without values": ("<a href>a</a><a href=''>b</a><a href=x href=''>c</a><div aria-hidden>d</div>"
                                  "<div style>e</div><div style='' style='display:none'>f</div><div role>g</div>"
                                  "<div role=Main>h</div><div role=main role=x>i</div><p>j<img alt>k</p>"
                                  "<div aria-hidden=false>l</div><div itemscope itemtype>m</div>"),
    "images": "<p>a<img alt=' the  alt '>b<img alt=''>c<img>d</p>",
    "boxes and closing punctuation": "<p><a href=/w>word</a><button></button>, next<iframe></iframe>x</p>",
    "mathml": ("<p>Both cost <math><semantics><mi>O</mi><annotation encoding='application/x-tex'>O(n \\log n)"
               "</annotation></semantics></math> comparisons; <math display=block><mi>x</mi><mo>=</mo>"
               "<mn>1</mn></math> and <math alttext='a^2'><mi>a</mi></math>.</p>"),
    "mathjax": ("<p>Let <span class=MathJax_Preview>x</span><span class=MathJax id=MathJax-Element-1-Frame>"
                "<span>x</span></span><script type='math/tex'>x</script> and "
                "<script type='math/tex; mode=display'>\\sum_i i</script><span class='katex-html'>k</span>.</p>"),
    "svg and custom elements": ("<svg><clipPath><text>s</text></clipPath></svg><x-card data-a>c</x-card>"
                                "<my-el><p>p</p></my-el><foreignObject>f</foreignObject>"),
    "comments and doctype": "<!doctype html><!-- a --><p>a<!-- b -->b</p><?pi x?>",
    "tables": "<table><tr><td>a</td><th>b</th></tr><tr><td><div>c</div></td></tr></table>",
    "repeated items": "<ul>" + "".join(f"<li class=item>item {i}</li>" for i in range(6)) + "</ul>",
    "invalid text": "<p>\udcff a \x00 b &#xD800; c &#0; d</p>",
    "empty": "",
    "no body text": "<html><head><title>t</title></head><body></body></html>",
    "deep": "<div>" * 3000 + "deep" + "</div>" * 3000,
    "long block": "<p>" + "word " * 30000 + "</p>",
    # More distinct tags between two texts than the walk's tally holds before it spills into a dict (TALLIED, 16),
    # some of them again after the spill, and a name made of a known one's letters in another case.
    "many tags between two texts": ("<p>a" + "".join(f"<x-{i}><b><i>" for i in range(24)) + "<SPAN><span>"
                                    + "</span></SPAN>" + "".join("</i></b>" + f"</x-{i}>" for i in range(24))
                                    + "b</p>"),
}


def _both(html: str, config=CONFIG):
    parsed = parse_html(html, config)
    return segment._walk(parsed, config), compiled_walk.walk(parsed, config)


def test_the_compiled_walk_is_the_one_that_runs():
    segment.segment_blocks("<p>a</p>", CONFIG)
    assert segment._walker() is compiled_walk.walk


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_compiled_walk_gives_the_references_segmentation(name):
    reference, compiled = _both(CASES[name])
    assert compiled == reference
    assert compiled.page == reference.page  # (the element tree, JSON-LD, itemtypes and counts too)


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_blocks_tag_counts_come_in_the_references_order(name):
    # (the order the features and the typer read a block's opened and closed tags in, which dict equality ignores)
    reference, compiled = _both(CASES[name])
    assert [(list(b.opened.items()), list(b.closed.items())) for b in compiled.blocks] == \
        [(list(b.opened.items()), list(b.closed.items())) for b in reference.blocks]


def test_the_limits_cut_both_walks_at_the_same_place():
    # (overlay: a copy; the loaded configuration is shared by every caller in the process)
    config = load_config().overlay({"limits": {"max_blocks": 7}})
    html = "".join(f"<p>block {i}<img alt='alt {i}'></p>" for i in range(20))
    reference, compiled = _both(html, config)
    assert compiled == reference and compiled.truncated and len(compiled.blocks) == 7
    config = load_config().overlay({"limits": {"max_nodes": 15}})
    reference, compiled = _both(html, config)
    assert compiled == reference and compiled.truncated and compiled.n_nodes == 15


def test_the_formula_in_the_text_is_read_by_both():
    _, compiled = _both(CASES["mathml"])
    texts = [b.text for b in compiled.blocks]
    assert "$O(n \\log n)$" in texts and "$a^2$" in texts


def _variants(data: bytes):
    # the page, and damaged copies: cut mid-tag, nesting spliced in, invalid bytes and odd attributes
    half = len(data) // 2
    yield data
    yield data[:half]
    yield data[:half] + b"<div><span>" * 3000 + data[half:]
    yield data[:half] + b"\xed\xa0\x80\xff\xfe&#xD800;&#0;&#x110000;" + data[half:]
    yield data[:half] + b'<p id="' + b"x " * 300 + b'" class hidden style="display: none">t</p>' + data[half:]


def test_shared_pages_and_their_damaged_copies_walk_alike(data_dir):
    pages = sampled_pages(data_dir, 25)
    assert len(pages) > 100
    for page in pages:
        raw = page.html_path.read_bytes()
        raw = gzip.decompress(raw) if page.html_path.name.endswith(".gz") else raw
        for data in _variants(raw):
            reference, compiled = _both(decode_html(data).text)
            assert compiled == reference, page.html_path


@settings(max_examples=500, deadline=None)
@given(value=st.text(alphabet="aZ09-_ .:éİKﬃ\u212a\u0130", max_size=60))
def test_the_compiled_idclass_tokens_are_the_references(value):
    assert compiled_walk.idclass_tokens(value) == segment.idclass_tokens(value)


def test_the_compiled_idclass_tokens_on_tricky_values():
    for value in ["", "a", "ab", "nav-Menu__item", "x" * 30, "x" * 31, "KELVIN\u212a", "\u0130tem", "a1 b2_c3",
                  "main  content", "ﬃx"]:
        assert compiled_walk.idclass_tokens(value) == segment.idclass_tokens(value), value


_TOKENS = st.sampled_from(["nav", "main", "post", "card", "x1", "item", "content", "ab"])


@settings(max_examples=500, deadline=None)
@given(own=st.lists(_TOKENS, max_size=30), inherited=st.lists(_TOKENS, max_size=30, unique=True),
       copies=st.booleans())
def test_the_compiled_idclass_merge_is_the_references(own, inherited, copies):
    """An element's tokens merged with those it inherits (a merge already: distinct), as the reference merges
    them: `tuple(dict.fromkeys(own + inherited))[:24]`, with equal tokens that are other objects among them."""
    if copies:  # equal strings that are not the same object, as two id/class values give them
        own = ["".join(list(t)) for t in own]
    expected = tuple(dict.fromkeys(tuple(own) + tuple(inherited)))[:24]
    assert compiled_walk.merged_idclass(tuple(own), tuple(inherited)) == expected
    many = tuple(f"t{k}" for k in range(30))  # more than 24 of its own
    assert compiled_walk.merged_idclass(many + tuple(own), tuple(inherited)) == many[:24]


def test_the_compiled_whitespace_test_is_str_isspace():
    """The walk's whitespace test (_is_space: str.isspace without a call past ASCII) on every code point."""
    assert compiled_walk._is_space_check() == []


@settings(max_examples=500, deadline=None)
@given(text=st.text(alphabet=" \t\n\r\x0b\x0c\x1c\x1f\x85\xa0\u2003\u3000ab.é", max_size=40))
def test_the_compiled_walk_normalises_whitespace_as_the_reference(text):
    """A text node's whitespace, ASCII (rewritten in C) and not, between tags and inside <pre>, as the reference."""
    for html in (f"<p>{text}<b>x</b>{text}</p>", f"<pre>{text}\n{text}</pre>", f"<div>{text}</div><p>{text}"):
        reference, compiled = _both(html)
        assert compiled == reference


def test_the_compiled_repeat_groups_are_numbered_as_the_reference():
    # Many siblings of one (tag, class) under different parents, class values equal but parsed apart (each element's
    # its own str), no class, an empty class, classes differing only at their end, more groups than the compiled
    # table's first slots (64), a group of more than 256 elements (past the small ints Python keeps): every element's
    # group and every group's size, as the reference numbers them.
    long_class = "card " + "x" * 40
    parts = []
    for i in range(40):
        parts.append(f"<ul class='list {i % 3}'>")
        for j in range(7):
            cls = (f" class='{long_class}{j % 2}'" if j % 3 == 0 else " class='item'" if j % 3 == 1
                   else "" if j % 2 else " class=''")
            parts.append(f"<li{cls}><span class=item>{i} {j}</span><a href=/{j}>x</a></li>")
        parts.append(f"<li class='{long_class}{i % 2}'>end</li><p class=item>p</p></ul><script>s</script>")
    parts.append("".join(f"<div class='c{i}'><b>{i}</b></div><section class=row>{i}</section>" for i in range(300)))
    reference, compiled = _both("<body>" + "".join(parts) + "</body>")
    assert compiled.page.element_group == reference.page.element_group
    assert compiled.page.group_size == reference.page.group_size
    assert compiled.page.element_parent == reference.page.element_parent
    assert len(reference.page.group_size) > 500 and max(reference.page.group_size) == 300
    assert compiled == reference


def test_the_compiled_idclass_merges_are_the_references():
    # Many siblings sharing id/class values under different parents (each element's value its own str, equal to
    # others), id only, class only, both, an empty class, an id or class without tokens, values whose tokens repeat
    # (within a value, and between an element's id and class or its ancestors'), more distinct merges than the
    # compiled table's first slots (64): every block's idclass as the reference merges it.
    parts = []
    for i in range(30):
        parts.append(f"<div class='wrap w{i % 4}' id='section-{i % 5}'>")
        for j in range(8):
            attrs = [" class='item item-card item'", " id='item'", " id='post' class='post entry'", " class=''",
                     " id='' class='card'", " id='---' class='x'", " class='wrap'", ""][j]
            parts.append(f"<section{attrs}><p class='text text'>{i} {j}</p><span id=wrap>s {j}</span></section>")
        parts.append(f"<p id='p{i}' class='post p{i}'>end {i}</p></div>")
    parts.append("<ul id=list class='list list'>" + "".join(f"<li class='li l{i % 7}'>{i}</li>" for i in range(200))
                 + "</ul>")
    reference, compiled = _both("<body class='page'>" + "".join(parts) + "</body>")
    assert [b.idclass for b in compiled.blocks] == [b.idclass for b in reference.blocks]
    assert len({b.idclass for b in reference.blocks}) > 64
    assert compiled == reference


def test_the_compiled_tag_counts_shared_between_blocks_are_the_references():
    # Blocks opening and closing the same few tags share one dict in the compiled walk (_Walk.counts_of); more
    # distinct tallies than its 64 slots, tallies that differ only in a count or only in the order of their tags,
    # tallies of more tags than a slot keeps (5 and more) and of more than the tally's 16: every block's counts, in
    # the reference's order, and no block's dict changed by another's.
    tags = ["b", "i", "em", "span", "a", "u", "s", "q", "small", "code", "kbd", "sub", "sup", "mark", "abbr", "cite",
            "dfn", "var", "samp", "time"]
    parts = []
    for i in range(120):
        n = 1 + i % 6 if i < 100 else 17 + i % 3
        opened = [tags[(i + k) % len(tags)] for k in range(n)]
        if i % 4 == 0:
            opened = opened[::-1]
        nested = "".join(f"<{t}>" for t in opened) + f"w{i}" + "".join(f"</{t}>" for t in reversed(opened))
        parts.append(f"<p>{nested}</p>" * (1 + i % 3) + "<div><p>x</p></div>" * (i % 2 + 1))
        depth = 1 + i % 60  # the same two tags, opened and closed 1-60 times: tallies that differ in a count alone
        parts.append("<div>" * depth + "<p>y</p>" + "</div>" * depth + "<div><p>z</p></div>")
    reference, compiled = _both("<body>" + "".join(parts) + "</body>")
    expected = [(list(b.opened.items()), list(b.closed.items())) for b in reference.blocks]
    assert [(list(b.opened.items()), list(b.closed.items())) for b in compiled.blocks] == expected
    assert len({tuple(o) for o, _ in expected}) > 64
    shared = sum(a.opened is b.opened for a, b in zip(compiled.blocks, compiled.blocks[1:]))
    assert shared  # (the sharing this test is about takes place)
    assert compiled == reference
