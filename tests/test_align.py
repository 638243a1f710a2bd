from cleaner.gold.align import align_blocks
from cleaner.output.assemble import assemble
from cleaner.page.segment import segment_blocks, table_of


def labels(html: str, gold: str) -> list[str]:
    return align_blocks(segment_blocks(html).blocks, gold).labels


def test_markers_start_segments_and_continuations_join():
    html = "<div>Menu Home</div><h2>Big title</h2><p>First part <b>bold</b> end.</p><ul><li>item one</li></ul>"
    gold = "<h>Big title\n<p>First part bold end.\n<l>item one"
    assert labels(html, gold) == ["other", "header", "paragraph", "continuation", "continuation", "list"]


def test_unaligned_blocks_are_other_and_coverage_is_reported():
    blocks = segment_blocks("<p>alpha beta</p><p>gamma delta</p>").blocks
    al = align_blocks(blocks, "<p>alpha beta\n<p>missing words here")
    assert al.labels == ["paragraph", "other"]
    assert al.gold_words == 5 and al.aligned_gold_words == 2 and abs(al.coverage - 0.4) < 1e-9


def test_text_before_first_marker_is_a_paragraph():
    assert labels("<p>intro text</p><h1>head</h1>", "intro text\n<h>head") == ["paragraph", "header"]


def test_dragnet_gold_without_markers_uses_lines_and_containers():
    html = "<nav>skip</nav><h1>The title</h1><p>Para one <i>goes</i> on.</p><p>Para two.</p><li>A comment</li>"
    gold = "The title\nPara one goes on.\nPara two.\n!@#$%^&*()  COMMENTS\nA comment"
    assert labels(html, gold) == ["other", "header", "paragraph", "continuation", "continuation", "paragraph", "list"]


def test_block_with_minority_of_aligned_words_is_other():
    assert labels("<p>the cat</p><p>share this on the web now</p>", "<p>the cat the") == ["paragraph", "other"]


def test_aligned_labels_reassemble_to_the_gold():
    from cleaner.gold.score import score_document

    html = "<div>nav</div><h1>Head</h1><p>Body <a href=x>text</a> here.</p><li>one</li><li>two</li>"
    gold = "<h>Head\n<p>Body text here.\n<l>one\n<l>two"
    blocks = segment_blocks(html).blocks
    out = assemble(table_of(blocks), align_blocks(blocks, gold).labels)
    assert out.cleaneval == "<h> Head\n<p> Body text here.\n<l> one\n<l> two"
    s = score_document(out.cleaneval, gold)
    assert s.f1 == 1.0 and s.markup_f1 == 1.0


def test_real_page_alignment(data_dir):
    from cleaner.page.decode import decode_html
    from cleaner.gold.gold import read_gold

    html = (data_dir / "cleaneval-dev/html/1.html").read_bytes()
    al = align_blocks(segment_blocks(decode_html(html).text).blocks, read_gold(data_dir / "cleaneval-dev/gold/1.txt"))
    assert al.coverage > 0.9
    assert {"header", "paragraph", "list", "other"} <= set(al.labels)


def test_stub_and_script_only_golds_have_low_coverage(data_dir):
    from cleaner.page.decode import decode_html
    from cleaner.gold.gold import read_gold

    html = (data_dir / "dragnet/html/R237.html").read_bytes()
    al = align_blocks(segment_blocks(decode_html(html).text).blocks, read_gold(data_dir / "dragnet/gold/R237.txt"))
    assert al.coverage < 0.5
