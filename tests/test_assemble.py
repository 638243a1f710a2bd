from cleaner.assemble import assemble


def test_labels_become_cleaneval_segments_and_statistics():
    texts = ["Menu", "Title", "First", "part", "item", "Footer"]
    labels = ["other", "header", "paragraph", "continuation", "list", "other"]
    out = assemble(texts, labels, confidences=[0.9, 0.8, 0.7, 0.6, 0.5, 1.0])
    assert out.cleaneval == "<h> Title\n<p> First part\n<l> item"
    assert out.plain == "Title\nFirst part\nitem"
    s = out.stats
    assert s.n_blocks == 6 and s.n_segments == 3
    assert s.per_label["other"].blocks == 2 and s.per_label["other"].words == 2 and s.per_label["other"].chars == 10
    assert sum(v.blocks for v in s.per_label.values()) == s.n_blocks
    assert s.words_total == 6 and s.words_kept == 4 and abs(s.kept_word_share - 4 / 6) < 1e-9
    assert abs(s.mean_confidence - 0.75) < 1e-9


def test_continuation_after_boilerplate_opens_a_paragraph():
    out = assemble(["nav", "orphan"], ["other", "continuation"])
    assert out.cleaneval == "<p> orphan"


def test_literal_markers_in_page_text_do_not_open_segments():
    from cleaner.score import score_document

    out = assemble(["Use the <p> tag and <H> too"], ["paragraph"])
    assert out.cleaneval == "<p> Use the &lt;p> tag and &lt;H> too"
    assert out.plain == "Use the <p> tag and <H> too"
    assert score_document(out.cleaneval, "<p>Use the p tag and H too").f1 == 1.0
