"""The kept blocks as Markdown (cleaner.output.markdown, issue 42): headings, lists, tables, code, quotes, math.

Most tests render a small page with every block kept (labels given, no model), through the real segmenter and the
real second walk of the page's tree (cleaner.page.structure); the others go through clean_html, the command line
and shared pages.
"""

from __future__ import annotations

import html as html_lib
import re
import subprocess
import sys

import pytest

from cleaner.api import clean_html
from cleaner.config import load_config
from cleaner.gold.data import read_html_file
from cleaner.labels import CONTINUATION, OTHER, PARAGRAPH
from cleaner.output.markdown import MarkdownOptions, render_markdown
from cleaner.page.decode import decode_html
from cleaner.page.pipeline import read_page
from cleaner.page.segment import parse_html, segment_tree
from cleaner.page.structure import read_elements

CONFIG = load_config()
DROP = frozenset(CONFIG["segment"]["drop_tags"])


def _markdown(body: str, options: MarkdownOptions | None = None, keep=None, tree_of: str | None = None):
    """The Markdown of `body` with every block kept (or those `keep(block)` says; a block on a line of its own a
    paragraph, else a continuation, as the model would label them), its tree read from the page itself (or from
    `tree_of`, another page: the numbering then disagrees)."""
    page = f"<html><body>{body}</body></html>"
    parsed = parse_html(page, CONFIG)
    seg = segment_tree(parsed, CONFIG)
    tree = parse_html(f"<html><body>{tree_of}</body></html>", CONFIG) if tree_of is not None else parsed
    labels = [OTHER if keep is not None and not keep(b) else PARAGRAPH if b.gap == "\n" else CONTINUATION
              for b in seg.blocks]
    return render_markdown(seg.blocks, labels, seg.page.element_parent,
                           lambda targets, alone: read_elements(tree, seg.page, targets, DROP, alone=alone), options)


def md(body: str, **kw) -> str:
    return _markdown(body, **kw).text


def test_headings_by_level_and_paragraphs():
    out = md("<h1>Title <i>here</i></h1><p>One paragraph.</p><h2>Part<br>two</h2><h3>Sub</h3><p>Two<br>lines.</p>")
    assert out == "# Title here\n\nOne paragraph.\n\n## Part two\n\n### Sub\n\nTwo\n\nlines."
    # a segment that the page breaks with <br> stays one paragraph, its lines kept
    page = "<html><body><p>Two<br>lines.</p></body></html>"
    seg = segment_tree(parse_html(page, CONFIG), CONFIG)
    assert render_markdown(seg.blocks, [PARAGRAPH, CONTINUATION], seg.page.element_parent).text == "Two\nlines."


def test_lists_nested_and_ordered():
    out = md("<ul><li>apples</li><li>pears<ol><li>green</li><li>red <b>ones</b></li></ol></li>"
             "<li>plums</li></ul><p>After.</p><ol><li>first</li><li>second</li></ol>")
    assert out == ("- apples\n- pears\n  1. green\n  2. red ones\n- plums\n\nAfter.\n\n1. first\n2. second")


def test_inline_code_quote_and_escapes():
    out = md("<p>Call <code>len(x)</code> or <code>a`b</code>.</p><blockquote><p>Quoted words.</p></blockquote>"
             "<p># not a heading</p>")
    assert out == "Call `len(x)` or ``a`b``.\n\n> Quoted words.\n\n\\# not a heading"


def test_pre_kept_exactly_with_blank_lines_and_language():
    code = "def f(x):\n\treturn  x  \n\n\n# done &lt;ok&gt;"
    out = md(f'<p>Code:</p><pre><code class="language-python">{code}\n</code></pre><p>End.</p>')
    assert out == "Code:\n\n```python\n" + html_lib.unescape(code) + "\n```\n\nEnd."
    # a highlighter's spans and line <div>s, <br>, a lang- class on the <pre>, a fence inside the code
    out = md('<pre class="lang-js"><span class="k">let</span> a;<br>```<div>b</div><div>c</div></pre>')
    assert out == "````js\nlet a;\n```\nb\nc\n````"
    # Sphinx names the language on a <div> around the <pre>
    out = md('<div class="highlight-shell"><div class="highlight"><pre>ls -l\n\ncd /</pre></div></div>')
    assert out == "```shell\nls -l\n\ncd /\n```"


def test_pre_kept_whole_when_one_line_is():
    out = md("<pre>one\n\ntwo\nthree</pre>", keep=lambda b: b.text == "two")
    assert out == "```\none\n\ntwo\nthree\n```"


def test_data_table_header_escapes_and_spans():
    out = md("<table><thead><tr><th>Name</th><th colspan=2>Cost | price</th></tr></thead>"
             "<tr><td rowspan=2>quick</td><td>n<sup>2</sup></td><td>worst</td></tr>"
             "<tr><td>n log n</td><td>mean</td></tr><tr><td>merge</td><td><code>n log n</code></td>"
             "<td>all</td></tr></table>")
    assert out == ("| Name | Cost \\| price |  |\n| --- | --- | --- |\n| quick | n2 | worst |\n"
                   "| quick | n log n | mean |\n| merge | `n log n` | all |")


def test_a_heading_in_a_data_table_is_its_text():
    out = md("<table><tr><td><h3>Undergraduate</h3></td><td>cost</td></tr><tr><td>Part-time</td><td>$455</td></tr>"
             "</table>")
    assert out == "|  |  |\n| --- | --- |\n| Undergraduate | cost |\n| Part-time | $455 |"


def test_table_without_th_has_an_empty_header_and_a_caption():
    out = md("<table><caption>Prices</caption><tr><td>tea</td><td>2</td></tr><tr><td>coffee</td><td>3</td></tr>"
             "</table>")
    assert out == "Prices\n\n|  |  |\n| --- | --- |\n| tea | 2 |\n| coffee | 3 |"


@pytest.mark.parametrize("body", [
    # one column
    "<table><tr><td>Intro text.</td></tr><tr><td>More text.</td></tr></table>",
    # code inside
    "<table><tr><td><pre>x = 1</pre></td><td>Links</td></tr><tr><td>a</td><td>b</td></tr></table>",
    # a long cell
    "<table><tr><td>" + "word " * 200 + "</td><td>menu</td></tr><tr><td>a</td><td>b</td></tr></table>",
    '<table role="presentation"><tr><td>a</td><td>b</td></tr><tr><td>c</td><td>d</td></tr></table>',
    # most rows hold one text (a banner row, a row of links beside an empty cell)
    "<table><tr><td>Welcome to the site</td><td></td></tr><tr><td>News and more</td><td> </td></tr>"
    "<tr><td>a</td><td>b</td></tr></table>",
])
def test_layout_tables_are_not_tables(body):
    out = _markdown(body)
    assert "| --- |" not in out.text
    assert out.layout_tables == 1 and out.tables == 0


def test_nested_data_table_inside_a_layout_table_is_a_table():
    """Tables in a table: the outer one holds the page's columns, the inner one data."""
    out = md("<table><tr><td><table><tr><th>k</th><th>v</th></tr><tr><td>a</td><td>1</td></tr></table></td>"
             "<td>Side</td></tr></table>")
    assert out == "| k | v |\n| --- | --- |\n| a | 1 |\n\nSide"


def test_table_mostly_dropped_is_lines():
    body = ("<table><tr><th>Price</th><th>Stock</th></tr><tr><td>one dollar and more</td><td>ten in store now</td>"
            "</tr><tr><td>two dollars and fifty</td><td>none left at all</td></tr></table>")
    out = md(body, keep=lambda b: b.text == "Price")
    assert out == "Price"


def test_math_inline_and_display():
    tex = ('<math{}><semantics><mi>x</mi><annotation encoding="application/x-tex">x^2</annotation></semantics>'
           '</math>')
    out = md(f"<p>So {tex.format('')} grows.</p><p>Then {tex.format(' display=block')} holds.</p>")
    assert out == "So $x^2$ grows.\n\nThen\n\n$$x^2$$\n\nholds."


def test_links_and_images_only_when_asked():
    body = '<p>See <a href="/doc (1)">the <code>docs</code></a> and <img src="i.png" alt="a cat"> here.</p>'
    assert md(body) == "See the `docs` and here."
    out = md(body, options=MarkdownOptions(links=True, images=True))
    assert out == "See [the `docs`](</doc (1)>) and ![a cat](i.png) here."


def test_emphasis_only_when_asked():
    body = ("<p>Merge sort is <strong>stable</strong>, heap sort is <em>not</em>: <i>the <b>nested</b> case</i>, "
            "<b>a</b><b>b</b> touching, intra<em>word</em>, <b> </b>empty, <b><code>sort()</code></b>, "
            "<code>f(<b>x</b>)</code>.</p>")
    assert md(body) == ("Merge sort is stable, heap sort is not: the nested case, ab touching, intraword, empty, "
                        "`sort()`, `f(x)`.")
    assert md(body, options=MarkdownOptions(emphasis=True)) == (
        "Merge sort is **stable**, heap sort is *not*: *the **nested** case*, **ab** touching, intra*word*, empty, "
        "**`sort()`**, `f(x)`.")  # (a code span's text is literal: no emphasis inside it)


def test_emphasis_with_links_follows_the_nesting_and_leaves_headings_plain():
    body = ('<h2>Why <em>stable</em> matters</h2><p><a href="/proof"><b>The proof</b> here</a> and '
            '<b><a href="/more">more</a> reading</b>.</p>'
            "<table><tr><th>name</th><th>stable</th></tr><tr><td><b>merge</b></td><td><i>yes</i></td></tr></table>")
    out = md(body, options=MarkdownOptions(links=True, emphasis=True))
    assert out == ("## Why stable matters\n\n[**The proof** here](/proof) and **[more](/more) reading**.\n\n"
                   "| name | stable |\n| --- | --- |\n| **merge** | *yes* |")


def test_numbering_that_disagrees_falls_back_to_the_blocks():
    body = "<pre>a\n\nb</pre><table><tr><th>k</th><th>v</th></tr><tr><td>x</td><td>1</td></tr></table>"
    good = _markdown(body)
    assert good.text.startswith("```\na\n\nb\n```") and good.tables == 1 and good.fallback is None
    # the tree of another page (one more element first): the walk's numbering disagrees, nothing is taken from it
    out = _markdown(body, tree_of="<p>x</p>" + body)
    assert out.fallback == "numbering" and out.tables == 0
    assert out.text == "```\na\nb\n```\n\nk\n\nv\n\nx\n\n1"  # (each cell a segment, as labelled)


def test_the_segmenters_fallback_tree_is_read_too():
    """A page that shows almost nothing but its <noscript> (Discourse): the blocks are cut from the fallback's
    tree (cleaner.page.hidden_text), which the second walk reads too."""
    rows = "".join(f"<tr><td>post {k}</td><td>{k} replies</td></tr>" for k in range(40))
    page = (f"<html><body><p>Loading</p><noscript><table><tr><th>Topic</th><th>Replies</th></tr>{rows}</table>"
            "<p>" + "Words of the thread that a reader reads. " * 20 + "</p></noscript></body></html>")
    read = read_page(page.encode(), CONFIG, keep_tree=True)
    seg = read.segmentation
    assert any(b.text == "post 3" for b in seg.blocks)  # (the fallback was taken)
    labels = [PARAGRAPH] * len(seg.blocks)
    out = render_markdown(seg.blocks, labels, seg.page.element_parent,
                          lambda targets, alone: read_elements(read.parsed, seg.page, targets, DROP, alone=alone))
    assert out.fallback is None and out.tables == 1 and "| post 3 | 3 replies |" in out.text


def test_clean_html_markdown_only_when_asked_and_text_unchanged(data_dir):
    page = (data_dir / "wcxb" / "html" / "0435.html.gz")
    data = read_html_file(page)
    plain = clean_html(data)
    assert plain.markdown is None
    with_md = clean_html(data, markdown=True)
    assert with_md.plain == plain.plain and with_md.cleaneval == plain.cleaneval
    assert with_md.markdown and "markdown" in with_md.timings_ms
    assert read_page(data, CONFIG).parsed is None  # (the tree is kept only for the Markdown)
    assert clean_html(b"   ", markdown=True).markdown is None  # a rejected page has none


PRE = re.compile(r"<pre\b[^>]*>([^<]*)</pre>", re.I)


@pytest.mark.parametrize("page_id", ["0390", "0435", "2534"])
def test_shared_pages_code_blocks_exact(data_dir, page_id):
    """Every kept <pre> of plain text (no markup inside) of a few wcxb documentation pages is in the Markdown
    exactly, its blank lines included, as the page's source gives it (the parser drops one newline after
    <pre>; the fence ends the last line)."""
    data = read_html_file(data_dir / "wcxb" / "html" / f"{page_id}.html.gz")
    result = clean_html(data, markdown=True)
    assert result.ok and result.markdown_fallback is None
    checked = blank = 0
    for match in PRE.finditer(decode_html(data).text):
        text = html_lib.unescape(match.group(1)).removeprefix("\n").rstrip("\n")
        lines = [line.strip() for line in text.split("\n") if line.strip()]
        if not lines or not all(line in result.plain for line in lines):
            continue  # (not kept)
        assert re.search(r"^```[\w+#.-]*\n" + re.escape(text) + r"\n```$", result.markdown, re.M), text[:80]
        checked += 1
        blank += "\n\n" in text
    assert checked >= 2 and (blank >= 1 or page_id == "0390")


def test_shared_page_tables(data_dir):
    """A wcxb page's price tables: pipe tables, header row from its <th> cells."""
    result = clean_html(read_html_file(data_dir / "wcxb" / "html" / "0053.html.gz"), markdown=True)
    assert "| Package | Fee |\n| --- | --- |\n" in result.markdown
    assert "| 5 personal training sessions | Student: $190 RecSports Member: $240 |" in result.markdown


def test_cli_format_markdown(tmp_path):
    page = tmp_path / "page.html"
    page.write_text("<html><body><article><h1>Sorting lists</h1><p>Merge sort and heap sort are two classic "
                    "algorithms for ordering a list of items, and both of them are taught in every course.</p>"
                    "<pre>sorted(items)\n\nheapq.heapify(items)</pre></article></body></html>")
    run = subprocess.run([sys.executable, "-m", "cleaner.tools.cli", "clean", str(page), "--format", "markdown"],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert "```\nsorted(items)\n\nheapq.heapify(items)\n```" in run.stdout
    assert "Merge sort and heap sort" in run.stdout
    run = subprocess.run([sys.executable, "-m", "cleaner.tools.cli", "clean", str(page), "--links"],
                         capture_output=True, text=True)
    assert run.returncode == 2 and "--format markdown" in run.stderr
    page.write_text(page.read_text().replace("two classic", "two <em>classic</em>"))
    run = subprocess.run([sys.executable, "-m", "cleaner.tools.cli", "clean", str(page), "--format", "markdown",
                          "--emphasis"], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert "Merge sort and heap sort are two *classic* algorithms" in run.stdout


def test_cli_markdown_flags_are_the_options():
    import dataclasses

    from cleaner.tools.cli_clean import MARKDOWN_FLAGS

    assert tuple(f.name for f in dataclasses.fields(MarkdownOptions)) == MARKDOWN_FLAGS


def test_job_markdown_column_opt_in(data_dir, tmp_path):
    """`cleaner clean-warc` (the job on local processes) fills the markdown column with [corpus] markdown = true,
    the same Markdown clean_html gives with the options [corpus] asks for, and leaves it null otherwise; the text
    column is the same either way."""
    import os

    import pyarrow.parquet as pq
    from conftest import make_warc

    page = data_dir / "wcxb" / "html" / "0435.html.gz"
    warc = make_warc(tmp_path / "page.warc.gz", page)
    overlay = tmp_path / "markdown.toml"
    overlay.write_text("[corpus]\nmarkdown = true\nmarkdown_links = true\nmarkdown_emphasis = true\n")
    env = {k: v for k, v in os.environ.items() if k not in ("JAVA_HOME", "SPARK_HOME")}
    rows = {}
    for name, extra in (("plain", []), ("markdown", ["--config", str(overlay)])):
        run = subprocess.run([sys.executable, "-m", "cleaner.tools.cli", "clean-warc", str(warc), "--out",
                              str(tmp_path / name), "--jobs", "1", *extra], capture_output=True, text=True,
                             timeout=600, env=env)
        assert run.returncode == 0, run.stderr[-3000:]
        (rows[name],) = pq.read_table(tmp_path / name).to_pylist()
    assert rows["plain"]["markdown"] is None
    assert rows["markdown"]["text"] == rows["plain"]["text"]
    options = MarkdownOptions(links=True, emphasis=True)  # ([corpus] markdown_links, markdown_emphasis)
    assert rows["markdown"]["markdown"] == clean_html(read_html_file(page), markdown=options).markdown
    assert "\n```\n" in rows["markdown"]["markdown"]


def test_datatrove_step_markdown(data_dir):
    pytest.importorskip("datatrove")
    from cleaner.tools.datatrove import WebCleanerExtractor

    data = read_html_file(data_dir / "wcxb" / "html" / "0435.html.gz")
    text, meta = WebCleanerExtractor(output="markdown").clean(data.decode("utf-8"))
    assert meta["cleaner_status"] == "cleaned"
    assert text == clean_html(data, http_charset="utf-8", markdown=True).markdown and "\n```\n" in text
    options = MarkdownOptions(links=True, emphasis=True)
    text, _ = WebCleanerExtractor(output="markdown", markdown_options=options).clean(data.decode("utf-8"))
    assert text == clean_html(data, http_charset="utf-8", markdown=options).markdown and "](http" in text
