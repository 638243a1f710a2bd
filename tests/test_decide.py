from cleaner.decide import DecisionSettings, decide, max_subsequence


def test_max_subsequence_linear_scan():
    assert max_subsequence([-1, 2, 3, -10, 4]) == (1, 2)
    assert max_subsequence([-1, -2]) == (0, -1)
    assert max_subsequence([1, -0.5, 1]) == (0, 2)


def test_other_with_high_content_probability_is_kept_with_best_content_label():
    rows = [{"other": 0.9, "paragraph": 0.1}, {"other": 0.5, "list": 0.3, "paragraph": 0.2}, {"paragraph": 1.0}]
    labels, how = decide(["other", "other", "paragraph"], rows, [5, 5, 100], DecisionSettings())
    assert labels == ["other", "list", "paragraph"] and how == "threshold"


def test_page_labelled_all_boilerplate_falls_back_to_the_most_content_like_region():
    p = [0.9, 0.9, 0.7, 0.6, 0.7, 0.95]  # P(other): blocks 2-4 are the least boilerplate-like
    rows = [{"other": x, "paragraph": 1 - x} for x in p]
    labels, how = decide(["other"] * 6, rows, [10] * 6, DecisionSettings())
    assert how == "fallback"
    assert labels == ["other", "other", "paragraph", "paragraph", "paragraph", "other"]


def test_viterbi_is_kept_when_it_keeps_enough():
    rows = [{"other": 0.99}, {"paragraph": 0.99}]
    assert decide(["other", "paragraph"], rows, [50, 50], DecisionSettings()) == (["other", "paragraph"], "viterbi")


def test_model_decision_reads_the_same_marginals_as_the_full_table(data_dir):
    # tag_decided reads P(other) for every block and whole rows only for rescued blocks;
    # the result must equal deciding on the full marginal table.
    from cleaner.config import load_config
    from cleaner.data import find_pages
    from cleaner.decode import decode_html
    from cleaner.model import load_model
    from cleaner.segment import segment_blocks

    config = load_config()
    model = load_model()
    settings = DecisionSettings(content_threshold=0.3, fallback_min_kept_share=0.02)
    rescued = 0
    for page in find_pages(data_dir, ["cleaneval-final"])[:40:4]:
        blocks = segment_blocks(decode_html(page.html_path.read_bytes(), config=config).text, config).blocks
        feats = model.extractor().extract(blocks)
        words = [len(b.text.split()) for b in blocks]
        labels, probs, how, p_other = model.tag_decided(feats, words, settings)
        viterbi, _ = model.tag(feats, marginals=False, word_counts=words, decision=settings)
        table = model.marginals_all(len(viterbi))
        expected, expected_how = decide(viterbi, table, words, settings)
        assert (labels, how) == (expected, expected_how)
        assert probs == [row[y] for row, y in zip(table, expected)]
        assert p_other == [row["other"] for row in table]
        rescued += sum(a != b for a, b in zip(viterbi, labels))
    assert rescued > 0  # the lazy rows were exercised
