from cleaner.page.markup_guard import cap_nesting
from cleaner.page.segment import HIDDEN, segment_blocks


def texts(html: str) -> list[str]:
    return [b.text for b in segment_blocks(html).blocks]


def test_a_block_is_text_between_two_tags():
    assert texts("<p>Hello <i>world</i>!</p>") == ["Hello", "world", "!"]


def test_entities_decoded_and_whitespace_normalised():
    assert texts("<p>  Fish&nbsp;&amp;\n\tchips  </p>") == ["Fish & chips"]


def test_text_free_elements_are_dropped():
    html = ("<body><script>var x = 'no';</script><style>p{}</style><noscript>no</noscript>"
            "<template>no</template><iframe>no</iframe><svg><text>no</text></svg><!-- no --><p>yes</p></body>")
    assert texts(html) == ["yes"]


def test_img_alt_becomes_an_artificial_block():
    blocks = segment_blocks('<p>before<img src="x.png" alt=" A  cat "><img src="y.png">after</p>').blocks
    assert [(b.text, b.artificial) for b in blocks] == [("before", None), ("A cat", "img-alt"), ("after", None)]


def test_every_pre_line_is_a_block():
    blocks = segment_blocks("<pre>line one\n\n  line two\nline three</pre>").blocks
    assert [b.text for b in blocks] == ["line one", "line two", "line three"]
    assert {b.artificial for b in blocks} == {"pre-line"}


def test_containers_tags_between_blocks_and_link():
    blocks = segment_blocks("<div><h1>Title</h1><p>Text <a href='/'>link</a></p><br><hr>Tail</div>").blocks
    title, text, link, tail = blocks
    assert title.containers == ("body", "div", "h1")
    assert text.opened == {"p": 1} and text.closed == {"h1": 1}
    assert link.in_link and not text.in_link
    assert tail.opened == {"br": 1, "hr": 1} and tail.closed == {"a": 1, "p": 1, "br": 1, "hr": 1}


def test_div_and_td_groups():
    html = ("<div>a<div>b</div>c</div><table><tr><td>d<b>e</b></td><td>f</td></tr></table>")
    a, b, c, d, e, f = segment_blocks(html).blocks
    assert a.div_group == c.div_group != b.div_group
    assert d.td_group == e.td_group != f.td_group
    assert d.div_group == -1 and a.td_group == -1


def test_id_class_tokens_of_ancestors_innermost_first():
    (b,) = segment_blocks('<div id="main-content"><p class="Story Body_text">x</p></div>').blocks
    assert b.idclass == ("story", "body", "text", "main", "content")


def test_deep_nesting_is_iterative_and_bounded():
    n = 100_000
    seg = segment_blocks("<div>" * n + "deep text" + "</div>" * n)
    assert [b.text for b in seg.blocks] == ["deep text"]
    assert seg.nesting_capped


def test_cap_nesting_leaves_ordinary_pages_alone():
    html = "<div><p>a</p><p>b</p></div>" * 10
    assert cap_nesting(html, 50) == (html, False)
    flattened, capped = cap_nesting("<b>" * 100 + "x", 10)
    assert capped and flattened.count("<b>") == 10 and "x" in flattened


def test_max_blocks_limit_truncates(tmp_path):
    from cleaner.config import load_config

    cfg_file = tmp_path / "c.toml"
    cfg_file.write_text("[limits]\nmax_blocks = 5\n")
    seg = segment_blocks("<p>x</p>" * 20, load_config(cfg_file))
    assert len(seg.blocks) == 5 and seg.truncated


def test_cjk_page_segments():
    assert texts("<p>日本語の<b>テキスト</b>です。</p>") == ["日本語の", "テキスト", "です。"]


def test_anchor_without_href_is_not_a_link():
    blocks = segment_blocks('<a name="top"><p>Article text.</p><a href="/x">real link</a>').blocks
    article, link = blocks
    assert not article.in_link and "a" not in article.ancestors
    assert link.in_link and "a" in link.ancestors


def test_whitespace_normalisation_is_the_regexps():
    # normalise_space splits and joins instead of re.sub(r"\s+", " ").strip(): the same for
    # every character up to U+30FF (all of Unicode's whitespace) and the BOM.
    import re

    from cleaner.page.text import normalise_space

    for c in [chr(i) for i in range(0x3100)] + ["\ufeff", "\U0001f600"]:
        text = f"{c} a{c}{c}b {c}"
        assert normalise_space(text) == re.sub(r"\s+", " ", text).strip(), hex(ord(c))


def test_blocks_under_hidden_elements_are_marked():
    html = ('<div style="Display : NONE"><p>menu <b>item</b></p></div><p hidden>pop-up</p>'
            '<span aria-hidden="true">icon</span><div style="visibility:hidden">hint</div>'
            '<div style="overflow: hidden; width: 9px">shown</div><p aria-hidden="false">also shown</p><p>text</p>')
    marked = {b.text: HIDDEN in b.ancestors for b in segment_blocks(html).blocks}
    assert marked == {"menu": True, "item": True, "pop-up": True, "icon": True, "hint": True,
                      "shown": False, "also shown": False, "text": False}


def test_overlays_shut_when_the_page_opens_are_marked_hidden():
    # A <dialog> without `open` is not drawn (the HTML standard's style sheet); a modal dialog and an element a script
    # framework cloaks until it has drawn it are shut when the page opens (wcxb/0580: a shop's terms of service in a
    # Vue modal). An open dialog, a non-modal one and `aria-modal="false"` are shown.
    html = ('<dialog id="d"><p>closed dialog</p></dialog><dialog open><p>open dialog</p></dialog>'
            '<div role="dialog" aria-modal="true" class="z-takeover"><h3>Terms of service</h3><p>terms</p></div>'
            '<div v-cloak v-show="isOpen"><p>vue drawer</p></div><div x-cloak><p>alpine pop-up</p></div>'
            '<section ng-cloak><p>angular panel</p></section><div role="dialog" aria-modal="false"><p>modeless</p></div>'
            '<div role="dialog"><p>plain dialog role</p></div><p>text</p>')
    marked = {b.text: HIDDEN in b.ancestors for b in segment_blocks(html).blocks}
    assert marked == {"closed dialog": True, "open dialog": False, "Terms of service": True, "terms": True,
                      "vue drawer": True, "alpine pop-up": True, "angular panel": True, "modeless": False,
                      "plain dialog role": False, "text": False}


def test_blocks_their_table_and_counts_survive_pickling_and_copying():
    # Pools hand blocks back inside prepared documents (cleaner train, typer_cv): the compiled classes are rebuilt
    # through their __init__, which pickle's default (the class called without arguments) cannot do
    import copy
    import pickle

    from cleaner.page.segment import BlockCounts

    seg = segment_blocks('<div id="main" class="post"><p>One <a href="/x">two</a></p><pre>  x = 1</pre></div>')
    blocks = seg.blocks
    blocks[0].repeat, blocks[0].repeat_item = 3, 7
    for b in blocks:
        for again in (pickle.loads(pickle.dumps(b)), copy.deepcopy(b), copy.copy(b)):
            assert again == b and type(again) is type(b)
    table = seg.table
    for again in (pickle.loads(pickle.dumps(table)), copy.deepcopy(table), pickle.loads(pickle.dumps(seg)).table):
        assert again == table and type(again) is type(table) and again.blocks() == table.blocks()
    counts = BlockCounts([3, 1], [17, 4], [1, 0])
    assert pickle.loads(pickle.dumps(counts)) == counts == copy.deepcopy(counts)
