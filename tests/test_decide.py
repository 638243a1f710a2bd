from cleaner.label.decide import (
    DecisionSettings,
    decide,
    drop_repeats,
    headline_block,
    keep_headline,
    max_subsequence,
    settle,
)
from cleaner.page.segment import segment_blocks, table_of
from cleaner.page.text import count_words


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
    # label() reads P(other) for every block and whole rows only for rescued blocks;
    # the result must equal deciding on the full marginal table.
    from cleaner.config import load_config
    from cleaner.gold.data import find_pages
    from cleaner.page.decode import decode_html
    from cleaner.label.model import load_model
    from cleaner.page.segment import segment_blocks

    config = load_config()
    model = load_model()
    settings = DecisionSettings(content_threshold=0.3, fallback_min_kept_share=0.02)
    rescued = 0
    for page in find_pages(data_dir, ["cleaneval-final"])[:40:4]:
        blocks = segment_blocks(decode_html(page.html_path.read_bytes(), config=config).text, config).blocks
        feats = model.extractor().extract(table_of(blocks))
        words = [len(b.text.split()) for b in blocks]
        labels, probs, how, p_other, table = model.label(feats, words, settings, marginals=True)
        viterbi, _ = model.tag(feats, marginals=False, word_counts=words, decision=settings)
        expected, expected_how = decide(viterbi, table, words, settings)
        assert (labels, how) == (expected, expected_how)
        assert probs == [row[y] for row, y in zip(table, expected)]
        assert p_other == [row["other"] for row in table]
        rescued += sum(a != b for a, b in zip(viterbi, labels))
    assert rescued > 0  # the lazy rows were exercised


def test_the_best_expected_f1_is_the_best_over_every_choice_of_blocks():
    import itertools
    import random

    from cleaner.label.decide import best_expected_f1

    rng = random.Random(7)
    for _ in range(200):
        n = rng.randint(1, 7)
        words = [rng.choice([0, 1, 3, 20, 150]) for _ in range(n)]
        p = [rng.random() for _ in range(n)]
        gold = sum(w * q for w, q in zip(words, p))
        brute = 0.0
        for keep in itertools.product([False, True], repeat=n):
            hit = sum(w * q for w, q, k in zip(words, p, keep) if k)
            kept = sum(w for w, k in zip(words, keep) if k)
            if kept:
                brute = max(brute, 2 * hit / (kept + gold))
        assert abs(best_expected_f1(words, p) - brute) < 1e-12


def _best_expected_f1_loop(word_counts, p_content):
    """best_expected_f1 as a loop: the blocks with words by P(content) and words, highest first, each choice's hit
    and kept words summed as it goes (its NumPy form must give the same float)."""
    expected_gold = sum(w * p for w, p in zip(word_counts, p_content))
    best = hit = kept = 0.0
    for p, w in sorted(zip(p_content, word_counts), reverse=True):
        if not w:
            continue
        hit += w * p
        kept += w
        f1 = 2 * hit / (kept + expected_gold)
        if f1 > best:
            best = f1
    return best


def test_the_best_expected_f1_is_the_loops_to_the_last_bit():
    import random

    from cleaner.label.decide import best_expected_f1, best_expected_f1_reference

    rng = random.Random(11)
    for _ in range(500):
        n = rng.randint(0, 400)
        words = [rng.choice([0, 0, 1, 2, 3, 7, 20, 150, 2000]) for _ in range(n)]
        # ties in P (equal values, zeros, ones) and in both, as a page's marginals give them
        p = [rng.choice([0.0, 1.0, 0.5, rng.random(), rng.random() * 1e-9, 1 - rng.random() * 1e-12])
             for _ in range(n)]
        # (the compiled one when it is built, compiled_chain.best_expected_f1, and its NumPy reference)
        assert best_expected_f1(words, p) == _best_expected_f1_loop(words, p) == best_expected_f1_reference(words, p)
    assert best_expected_f1([0, 0], [0.5, 0.9]) == 0.0 == best_expected_f1([], [])
    assert best_expected_f1([3, 5], [0.0, 0.0]) == 0.0


def test_on_a_page_the_model_is_unsure_of_the_threshold_drops_to_half_its_best_expected_f1():
    # P(content) 0.9 for the sure block, 0.4 for two that look like content: F* = 0.73 keeping the first three,
    # so the F1-optimal threshold is 0.365 and the 0.4 blocks are worth keeping; 0.1 is not.
    p_content = [0.9, 0.4, 0.4, 0.1]
    rows = [{"other": 1 - q, "paragraph": q} for q in p_content]
    labels = ["paragraph", "other", "other", "other"]
    words = [100, 80, 80, 80]
    plain = decide(labels, rows, words, DecisionSettings())
    optimal = decide(labels, rows, words, DecisionSettings(f1_optimal_threshold=True))
    assert plain == (labels, "viterbi")
    assert optimal == (["paragraph", "paragraph", "paragraph", "other"], "threshold")
    # On a page the model is sure of, F* / 2 is above the configured threshold, which stands.
    sure = [{"other": 0.01, "paragraph": 0.99}] * 3 + [{"other": 0.6, "paragraph": 0.4}]
    assert decide(["paragraph"] * 3 + ["other"], sure, [50] * 4, DecisionSettings(f1_optimal_threshold=True)) == (
        ["paragraph"] * 3 + ["other"], "viterbi")


def test_the_setting_must_be_a_boolean():
    import pytest

    from cleaner.config import load_config

    config = load_config().overlay({"decision": {"f1_optimal_threshold": "yes"}}, "test")
    with pytest.raises(ValueError, match="f1_optimal_threshold"):
        DecisionSettings.from_config(config)
    assert DecisionSettings.from_config(load_config()).f1_optimal_threshold is True  # the default


def test_a_stacked_models_first_pass_decides_as_it_was_trained_to(data_dir):
    # The second pass was trained on first-pass labellings decided without the F1-optimal threshold:
    # the setting changes the final decision only, never what the second pass reads.
    from cleaner.config import load_config
    from cleaner.gold.data import find_pages
    from cleaner.page.decode import decode_html
    from cleaner.label.model import load_model
    from cleaner.page.segment import segment_blocks

    config = load_config()
    model = load_model("cleaneval-2012")  # (the stacked packaged model)
    assert model.stacking is not None
    on, off = DecisionSettings(f1_optimal_threshold=True), DecisionSettings()
    changed = 0
    for page in find_pages(data_dir, ["cleaneval-final"])[:9]:  # (pages 61, 63 and 68 are decided differently)
        blocks = segment_blocks(decode_html(page.html_path.read_bytes(), config=config).text, config).blocks
        feats = model.extractor().extract(table_of(blocks))
        words = [len(b.text.split()) for b in blocks]
        assert model.tag(feats, word_counts=words, decision=on) == model.tag(feats, word_counts=words, decision=off)
        changed += model.label(feats, words, on).labels != model.label(feats, words, off).labels
    assert changed


def test_the_f1_optimal_threshold_only_ever_adds_blocks_and_keeps_the_fallback():
    # Blocks kept for F1 come after the fallback: a page that keeps almost nothing still falls back to its most
    # content-like region (kept words counted before would stop it), and nothing kept without the setting is dropped.
    import random

    rng = random.Random(3)
    fallbacks = 0
    for _ in range(300):
        n = rng.randint(1, 30)
        q = [rng.random() ** rng.choice([1, 3, 6]) for _ in range(n)]  # P(content), often small
        rows = [{"other": 1 - x, "paragraph": x * 0.7, "list": x * 0.3} for x in q]
        labels = [rng.choice(["other", "other", "other", "paragraph"]) for _ in range(n)]
        words = [rng.choice([0, 1, 5, 40, 300]) for _ in range(n)]
        off, how_off = decide(labels, rows, words, DecisionSettings())
        on, how_on = decide(labels, rows, words, DecisionSettings(f1_optimal_threshold=True))
        assert all(b != "other" for a, b in zip(off, on) if a != "other")
        assert how_on == how_off or (how_off, how_on) == ("viterbi", "threshold")
        fallbacks += how_off == "fallback"
    assert fallbacks


_HEADLINE_PAGE = """<html><head><title>Storm hits the coast overnight | Daily Example</title></head><body>
<nav><a href="/">Home</a> <a href="/news">News</a></nav>
<h1 class="brand">Daily Example</h1>
<article><h1>Storm <em>hits</em> the coast overnight</h1>
<p>The storm reached the coast at night and left thousands without power.</p></article>
<h1>Storm elsewhere</h1></body></html>"""


def test_the_headline_is_the_first_h1_block_whose_words_are_in_the_title():
    blocks = segment_blocks(_HEADLINE_PAGE).blocks
    title = segment_blocks(_HEADLINE_PAGE).title
    run = headline_block(table_of(blocks), title)
    # the headline's three blocks (its <em> splits it), not the site name's <h1>, which holds fewer title words
    assert [blocks[i].text for i in run] == ["Storm", "hits", "the coast overnight"]
    assert headline_block(table_of(blocks), "") == []
    assert headline_block(table_of(blocks), "Something else entirely") == []


def test_a_dropped_headline_is_kept_only_when_a_block_after_it_is_kept():
    labels = ["other", "other", "other", "paragraph", "other"]
    assert keep_headline(labels, [1, 2]) == ["other", "header", "continuation", "paragraph", "other"]
    assert keep_headline(labels, []) == labels
    assert keep_headline(["other", "other", "other"], [1]) == ["other", "other", "other"]  # nothing after it kept
    assert keep_headline(["other", "list", "other", "paragraph"], [1, 2]) == ["other", "list", "other", "paragraph"]


def test_clean_html_keeps_the_headline_with_the_setting_and_not_by_default():
    from cleaner.api import clean_html
    from cleaner.config import load_config
    from cleaner.label.model import load_model

    model = load_model()  # the packaged default

    page = _HEADLINE_PAGE.encode()
    on = clean_html(page, model=model, keep_blocks=True,
                    config=load_config().overlay({"decision": {"keep_headline": ["main"]}}, "test"))
    off = clean_html(page, model=model, keep_blocks=True)  # the default convention, main: off
    run = headline_block(table_of(on.blocks), on.title)
    assert len(run) == 3
    assert on.labels == keep_headline(off.labels, run)
    # the default model keeps part of this headline itself ("hits the coast overnight"); the setting completes only
    # a headline the labelling dropped whole, shown next
    assert "hits the coast overnight" in on.plain
    # and on a page whose labelling drops the headline, the setting is what keeps it
    dropped = ["other"] * len(off.labels)
    dropped[-2] = "paragraph"
    assert keep_headline(dropped, run)[run[0]] == "header"


def test_keep_headline_names_conventions_and_the_article_one_keeps_it():
    import pytest

    from cleaner.config import load_config

    for bad in ("yes", True, ["opinion"]):
        with pytest.raises(ValueError, match="keep_headline"):
            DecisionSettings.from_config(load_config().overlay({"decision": {"keep_headline": bad}}, "test"))
    settings = DecisionSettings.from_config(load_config())
    assert settings.keeps_headline("article")
    assert not settings.keeps_headline("main") and not settings.keeps_headline(None)


def test_fill_main_keeps_main_container_blocks_between_the_first_and_the_last_kept():
    p_content = [0.05, 0.9, 0.2, 0.05, 0.2, 0.9, 0.3]
    rows = [{"other": 1 - q, "paragraph": q} for q in p_content]
    labels = ["other", "paragraph", "other", "other", "other", "paragraph", "other"]
    inside = [True, True, True, True, False, True, True]
    settings = DecisionSettings(fill_main=("main",), fill_main_threshold=0.1)
    filled, how = decide(labels, rows, [5] * 7, settings, inside=inside)
    # block 2: inside, between, above 0.1 -> kept; 3: below the threshold; 4: outside the container;
    # 0 and 6: before the first and after the last kept block
    assert filled == ["other", "paragraph", "paragraph", "other", "other", "paragraph", "other"]
    assert how == "threshold"
    # without the container (a convention that does not fill it, a page without prose) nothing changes
    assert decide(labels, rows, [5] * 7, settings)[0] == labels


def test_fill_to_end_fills_the_main_container_from_the_first_kept_block_to_its_end():
    # [decision] fill_main_to_end (a product's description after the widgets kept last): past the last kept block too,
    # never before the first, never outside the container or below the threshold.
    p_content = [0.2, 0.9, 0.2, 0.05, 0.2, 0.9, 0.3, 0.3]
    rows = [{"other": 1 - q, "paragraph": q} for q in p_content]
    labels = ["other", "paragraph", "other", "other", "other", "paragraph", "other", "other"]
    inside = [True, True, True, True, False, True, True, False]
    settings = DecisionSettings(fill_main=("main",), fill_main_threshold=0.1)
    filled, _ = decide(labels, rows, [5] * 8, settings, inside=inside, fill_to_end=True)
    assert filled == ["other", "paragraph", "paragraph", "other", "other", "paragraph", "paragraph", "other"]
    assert decide(labels, rows, [5] * 8, settings, inside=inside)[0][6] == "other"  # (to the last kept only)


def test_the_fills_page_types_are_the_typers_and_products_fill_to_the_end():
    import pytest

    from cleaner.config import load_config

    for key in ("fill_main_heaviest", "fill_main_to_end"):
        for bad in ("listing", ["blog"]):
            with pytest.raises(ValueError, match=key):
                DecisionSettings.from_config(load_config().overlay({"decision": {key: bad}}, "test"))
    settings = DecisionSettings.from_config(load_config())
    assert settings.fill_main_heaviest == ("listing", "unknown") and settings.fill_main_to_end == ("product",)


def test_fill_main_names_conventions_and_main_fills_but_article_does_not():
    import pytest

    from cleaner.config import load_config

    for bad in ("main", ["opinion"]):
        with pytest.raises(ValueError, match="fill_main"):
            DecisionSettings.from_config(load_config().overlay({"decision": {"fill_main": bad}}, "test"))
    settings = DecisionSettings.from_config(load_config())
    assert settings.fills_main("main") and settings.fill_main_threshold == 0.1
    assert not settings.fills_main("article") and not settings.fills_main(None)


def test_clean_html_under_main_adds_only_blocks_of_the_main_container(data_dir):
    from cleaner.api import clean_html
    from cleaner.config import load_config
    from cleaner.gold.data import find_pages
    from cleaner.label.model import load_model
    from cleaner.page.cues import main_container

    model = load_model()  # the packaged default, convention main
    off_config = load_config().overlay({"decision": {"fill_main": []}}, "test")
    pages = [p for p in find_pages(data_dir, ["wcxb"]) if p.key in ("wcxb/0006", "wcxb/0009")]
    assert len(pages) == 2
    for page in pages:
        html = page.read_html()
        on = clean_html(html, model=model, keep_blocks=True)
        off = clean_html(html, model=model, keep_blocks=True, config=off_config)
        kept = [i for i, y in enumerate(off.labels) if y != "other"]
        # nothing kept is dropped (the marker typer may retype a kept block beside a new one)
        assert all(on.labels[i] != "other" for i in kept)
        added = [i for i, (a, b) in enumerate(zip(on.labels, off.labels)) if a != "other" and b == "other"]
        assert added, page.key  # these pages keep more of their main content
        table = table_of(on.blocks)
        inside = main_container(table, model.extractor().counts(table), on.page, model.extractor().cues)
        assert inside is not None
        assert all(inside[i] and kept[0] < i < kept[-1] for i in added)
        assert len(on.plain) > len(off.plain)


def test_drop_repeats_keeps_the_first_copy_of_a_repeated_segment():
    first = "Make each cup of tea or coffee feel special with a handmade mug."
    texts = ["Menu", first, "Handmade stoneware.", "Size: 9 cm", first.upper(), "Handmade stoneware.",
             "Add to cart", "Add to cart", "See", "it"]
    labels = ["other", "paragraph", "paragraph", "list", "paragraph", "continuation",
              "paragraph", "paragraph", "paragraph", "continuation"]
    gaps = ["\n"] * 10
    words = [count_words(t) for t in texts]
    out = drop_repeats(labels, texts, gaps, words, min_words=3)
    # the segment 4-5 (a block and its continuation) holds more words than 1: kept; the second
    # "Add to cart" (3 words) repeats the first: dropped; nothing else changes
    assert out == ["other", "paragraph", "paragraph", "list", "paragraph", "continuation",
                   "paragraph", "other", "paragraph", "continuation"]
    # case and punctuation aside, a repeat of the same words is a repeat
    shouted = first.upper().replace(" ", "  ")
    assert drop_repeats(["paragraph", "paragraph"], [first, shouted], None, [12, 12], 3) == [
        "paragraph", "other"]
    # shorter than min_words: kept twice (a table's "Yes" rows, a refrain)
    assert drop_repeats(labels, texts, gaps, words, min_words=4)[7] == "paragraph"
    # a block touching the one before it (gap "") is one segment with it, whatever its label
    assert drop_repeats(["paragraph", "paragraph", "paragraph"], ["Read the", "full text", "Read the"],
                        ["\n", "", "\n"], [2, 2, 2], 2) == ["paragraph", "paragraph", "paragraph"]


def test_drop_repeats_names_conventions_and_settle_drops_them_for_main_and_article_only():
    import pytest

    from cleaner.config import load_config

    for bad in ("main", ["opinion"]):
        with pytest.raises(ValueError, match="drop_repeats"):
            DecisionSettings.from_config(load_config().overlay({"decision": {"drop_repeats": bad}}, "test"))
    settings = DecisionSettings.from_config(load_config())
    assert settings.drops_repeats("main") and settings.drops_repeats("article")
    assert not settings.drops_repeats("cleaneval") and not settings.drops_repeats(None)
    text = "Suitable for use in dishwashers and microwave ovens, with care when stacking."
    labels = ["paragraph", "paragraph"]
    no_headline = list[int]
    assert settle(labels, settings, "main", [text, text], None, [13, 13], no_headline) == ["paragraph", "other"]
    assert settle(labels, settings, "cleaneval", [text, text], None, [13, 13], no_headline) == labels


def test_clean_html_under_main_shows_a_responsive_pages_description_once(data_dir):
    from cleaner.api import clean_html
    from cleaner.config import load_config
    from cleaner.gold.data import find_pages
    from cleaner.label.model import load_model

    # wcxb/0610 holds its product description twice (one copy per screen size); its gold holds it once
    model = load_model()
    page = next(p for p in find_pages(data_dir, ["wcxb"]) if p.key == "wcxb/0610")
    sentence = "Make each cup of tea or coffee feel special with a Ghost Wares ceramic mug."
    off = clean_html(page.read_html(), model=model,
                     config=load_config().overlay({"decision": {"drop_repeats": []}}, "test"))
    on = clean_html(page.read_html(), model=model)
    assert off.plain.count(sentence) == 2
    assert on.plain.count(sentence) == 1
    # only the repeat went: every line of the output is one of the longer output's
    assert set(on.plain.splitlines()) <= set(off.plain.splitlines())


def test_the_compiled_words_key_is_the_references():
    """drop_repeats compares a segment's words by their key (decide.words_key: each `\\w+` of the case-folded text and
    a space), compiled as compiled_text.words_key: the same key for every text, with digits that are not decimal,
    combining marks, `_`, letters outside the BMP and letters whose case folding is longer or ASCII among them."""
    import random

    import pytest

    compiled = pytest.importorskip("cleaner.page.compiled_text", reason="not built (scripts/build_native.py)")
    from cleaner.label.decide import words_key

    rng = random.Random(2)
    alphabet = "aB_ 1.,-éÉ中٣²½\u0301\U00010400xßİΣ\t"
    texts = ["", " ", "a", "a b", "_x_", "a.b", "e\u0301t\u00e9", "²½", "Straße", "İ", "ΣΑΣ", "\U00010400"]
    texts += ["".join(rng.choice(alphabet) for _ in range(n)) for n in range(50) for _ in range(60)]
    for text in texts:
        assert compiled.words_key(text) == words_key(text), repr(text)
    assert words_key("The cat, the HAT.") == "the cat the hat "
