"""The text of kept blocks is the text a browser shows (docs/fidelity.md).

Inline elements add nothing inside a word or before punctuation; whitespace collapses as CSS
`white-space: normal` does; `<br>` and block elements break lines; `<pre>` keeps its own spaces.
Each case segments a snippet, keeps every block (the first opens a paragraph, the rest continue
it) and reads the plain text the assembly makes of it.
"""

from __future__ import annotations

import pytest

from cleaner.gold.align import CONTINUATION, HEADER, OTHER, PARAGRAPH
from cleaner.api import clean_html
from cleaner.output.assemble import assemble
from cleaner.page.segment import segment_blocks, table_of


def shown(html: str) -> str:
    blocks = segment_blocks(html).blocks
    return assemble(table_of(blocks), [PARAGRAPH] + [CONTINUATION] * (len(blocks) - 1)).plain


@pytest.mark.parametrize("html, text", [
    ("<p>Speech<a href='/s'>,</a> he said</p>", "Speech, he said"),
    ("<p>i<span>n</span> their</p>", "in their"),
    ("<p><b>bold</b>text</p>", "boldtext"),
    ("<p><b>bold</b> text</p>", "bold text"),
    ("<p><b>bold </b>text</p>", "bold text"),
    ("<p>E = mc<sup>2</sup>.</p>", "E = mc2."),
    ("<p>a<em>b</em><strong>c</strong>d<code>e</code>f</p>", "abcdef"),
    ("<p>see <a href='/x'>this page</a>.</p>", "see this page."),
    ("<p>(<i>sic</i>)</p>", "(sic)"),
    ("<p>one<!-- a comment -->word</p>", "oneword"),
    ("<p>one<script>var x;</script>word</p>", "oneword"),
    ("<p>  lots \n\t of   <b> space </b>  here  </p>", "lots of space here"),
    ("<p>a&nbsp;<b>b</b></p>", "a b"),
    ("<p>Fish&nbsp;&amp;&nbsp;chips</p>", "Fish & chips"),
    ("<p>東京<b>都</b>の<a href='/x'>人口</a>。</p>", "東京都の人口。"),
])
def test_inline_elements_add_no_space(html, text):
    assert shown(html) == text


@pytest.mark.parametrize("html, text", [
    ("<p>a<br>b</p>", "a\nb"),
    ("<p>a <br> b</p>", "a\nb"),
    ("<div>one</div><div>two</div>", "one\ntwo"),
    ("<p>one</p>two", "one\ntwo"),
    ("<ul><li>x</li><li>y</li></ul>", "x\ny"),
    ("<table><tr><td>cell</td><td>next</td></tr></table>", "cell\nnext"),
])
def test_br_and_block_elements_break_lines(html, text):
    assert shown(html) == text


def test_images_and_boxes_separate_words():
    # An image (its alt text is a block of its own) or a button stands between the words beside it.
    assert shown("<p>left<img src='a.png'>right</p>") == "left right"
    assert shown("<p>left<img src='a.png' alt='icon'>right</p>") == "left icon right"
    assert shown("<p>left<button>x</button>right</p>") == "left right"


def test_a_box_gives_no_space_before_the_punctuation_it_sits_against():
    # A word's watchlist button or icon, with no whitespace around it, shows against the word's comma or full stop
    # (us-CNBC: "bitcoin<button></button>, new investors"); with whitespace before it, the space stays.
    assert shown("<p>like <a href='/q'>bitcoin</a><span><button></button></span>, new investors</p>") == (
        "like bitcoin, new investors")
    assert shown("<p>available <a href='/api'>here</a><svg></svg>.</p>") == "available here."
    assert shown("<p>word <button></button>, next</p>") == "word , next"
    assert shown("<p>left<button></button>right</p>") == "left right"


def test_pre_keeps_its_own_whitespace():
    assert shown("<pre>  x\n  y</pre>") == "  x\n  y"
    assert shown("<pre>def f():\n    return  1\n\nf()</pre>") == "def f():\n    return  1\nf()"
    assert shown("<pre><code>a <b>b</b>\n    c<i>d</i></code></pre>") == "a b\n    cd"
    # The features read the normalised text, as before.
    assert [b.text for b in segment_blocks("<pre>  x  y</pre>").blocks] == ["x y"]


def test_block_texts_are_unchanged():
    # Only the joining changed: a text node is still a block, normalised as before (the model reads it).
    blocks = segment_blocks("<p>  Speech<a href='/s'>,</a>\n he  said</p>").blocks
    assert [(b.text, b.gap) for b in blocks] == [("Speech", "\n"), (",", ""), ("he said", " ")]


def test_a_touching_block_never_starts_a_segment():
    blocks = segment_blocks("<p>i<span>n</span> their</p>").blocks
    out = assemble(table_of(blocks), [PARAGRAPH, HEADER, CONTINUATION])
    assert out.cleaneval == "<p> in their"
    assert out.stats.n_segments == 1


def test_dropped_blocks_leave_a_space_or_the_line_break_between_them():
    blocks = segment_blocks("<p>one <b>two</b> three</p><p>four</p>").blocks
    assert assemble(table_of(blocks), [PARAGRAPH, OTHER, CONTINUATION, OTHER]).plain == "one three"
    assert assemble(table_of(blocks), [PARAGRAPH, OTHER, OTHER, CONTINUATION]).plain == "one\nfour"


def test_texts_without_gaps_join_with_spaces():
    # The seed systems and old callers pass texts: joined by spaces, as before.
    assert assemble(["a", "b"], [PARAGRAPH, CONTINUATION]).plain == "a b"
    assert assemble(["a", "b"], [PARAGRAPH, CONTINUATION], gaps=["\n", ""]).plain == "ab"
    assert assemble(["a", "b"], [PARAGRAPH, CONTINUATION], gaps=["\n", "\n"], shown={1: "  b"}).plain == "a\n  b"


def test_a_line_break_inside_a_segment_continues_it_in_cleaneval_text():
    from cleaner.gold.gold import parse_segments

    blocks = segment_blocks("<p>first line<br>second line</p><h2>Title</h2>").blocks
    out = assemble(table_of(blocks), [PARAGRAPH, CONTINUATION, HEADER])
    assert out.cleaneval == "<p> first line\nsecond line\n<h> Title"
    # The CleanEval reader (scorer, gold parser) reads the unmarked line as the same segment.
    assert [s.text.split() for s in parse_segments(out.cleaneval)] == [["first", "line", "second", "line"], ["Title"]]


def test_clean_html_output_has_no_padded_words():
    para = ("The minister gave a long <a href='/speech'>speech</a>, in which she spoke about the "
            "i<span>n</span>dustry and its <em>future</em>. The audience listened for an hour and "
            "the press reported <b>every</b> word of it the next morning in great detail.")
    html = f"<html><body><article><h1>A speech</h1><p>{para}</p><p>{para}</p></article></body></html>"
    res = clean_html(html.encode())
    assert res.ok
    assert "speech, in which" in res.plain and "industry" in res.plain and "future." in res.plain
    assert " ," not in res.plain and " ." not in res.plain


def test_a_dropped_block_touching_a_kept_one_is_kept_with_it():
    # The labeller may drop a lone "." after a link, or the "(" before an italic word: a browser
    # shows them as part of the kept text, and so does the output.
    blocks = segment_blocks("<p>see <a href='/x'>this page</a>.</p><p>(<i>sic</i>) and more</p>").blocks
    assert [b.text for b in blocks] == ["see", "this page", ".", "(", "sic", ") and more"]
    out = assemble(table_of(blocks), [PARAGRAPH, CONTINUATION, OTHER, OTHER, PARAGRAPH, CONTINUATION])
    assert out.plain == "see this page.\n(sic) and more"
    assert out.stats.per_label[OTHER].blocks == 0 and out.stats.n_segments == 2
    # Whatever is separated by a space or a line stays dropped.
    blocks = segment_blocks("<p>kept <b>dropped</b> kept</p>").blocks
    assert assemble(table_of(blocks), [PARAGRAPH, OTHER, CONTINUATION]).plain == "kept kept"
