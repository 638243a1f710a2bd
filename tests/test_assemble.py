import pytest

from cleaner.output.assemble import assemble


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
    from cleaner.gold.score import score_document

    out = assemble(["Use the <p> tag and <H> too"], ["paragraph"])
    assert out.cleaneval == "<p> Use the &lt;p> tag and &lt;H> too"
    assert out.plain == "Use the <p> tag and <H> too"
    assert score_document(out.cleaneval, "<p>Use the p tag and H too").f1 == 1.0


def test_expected_scores_follow_the_blocks_content_probabilities():
    from cleaner.output.assemble import expected_scores

    # kept: 10 words at P(content) 0.9 and 10 at 0.5; dropped: 20 words at 0.2 and 40 at 0.0
    words, kept, p = [10, 10, 20, 40], [True, True, False, False], [0.9, 0.5, 0.2, 0.0]
    precision, recall, f1 = expected_scores(words, kept, p)
    assert precision == pytest.approx(14 / 20)  # 9 + 5 expected gold words of the 20 kept
    assert recall == pytest.approx(14 / 18)  # of 9 + 5 + 4 expected gold words
    assert f1 == pytest.approx(2 * precision * recall / (precision + recall))
    # sure of everything: 1; nothing kept of a page with likely content: recall 0
    assert expected_scores([5, 5], [True, False], [1.0, 0.0]) == (1.0, 1.0, 1.0)
    assert expected_scores([5, 5], [False, False], [0.8, 0.1])[1:] == (0.0, 0.0)
    # the statistics carry them when the labeller gives P(content), and not otherwise
    out = assemble(["Menu", "Some text here"], ["other", "paragraph"], [0.9, 0.8], [1, 3], p_content=[0.1, 0.8])
    assert out.stats.expected_precision == pytest.approx(0.8)
    assert out.stats.expected_recall == pytest.approx(2.4 / 2.5)
    assert out.stats.to_dict()["expected_f1"] == round(out.stats.expected_f1, 6)
    assert assemble(["Menu"], ["other"]).stats.expected_f1 is None
