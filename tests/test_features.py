from cleaner.page.features import FeatureExtractor
from cleaner.page.segment import Block, segment_blocks, table_of
from cleaner.page.text import char_classes, count_words


def block(text: str, containers=("body", "p"), **kw) -> Block:
    """A block builder: only what a feature test needs."""
    return Block(text=text, containers=tuple(containers), ancestors=frozenset(containers), **kw)


def feats(blocks, window=0, **kw):
    from cleaner.config import Config, load_config, _merge

    cfg = Config(_merge(load_config().data, {"features": {"window": window}}))
    return FeatureExtractor(cfg, **kw).extract(table_of(blocks))


def test_character_classes_work_for_every_script():
    assert char_classes("Abc 12, d!") == (4, 2, 2, 2, 0)
    assert char_classes("日本語。") == (3, 0, 1, 0, 0)
    assert char_classes("€5") == (0, 1, 0, 0, 1)


def test_words_count_cjk_by_code_point():
    assert count_words("日本語 text") == 4
    assert count_words("Hello, wide world") == 3


def test_ascii_word_count_is_the_word_regexps():
    # count_words has an ASCII shortcut; it must count what `words` finds, punctuation and
    # underscores included.
    import random

    from cleaner.page.text import words

    rng = random.Random(7)
    alphabet = "ab Z9_-.,'@/\t\n\x00~"
    for _ in range(3000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 30)))
        assert count_words(text) == len(words(text)), repr(text)
    assert count_words("e-mail: a_b@c.org, 3.5%") == 7  # e mail a_b c org 3 5


def test_url_regexp_sees_only_texts_with_a_url_hint():
    blocks = [block("See www.example.org today."), block("Mail X@Y.ORG now."), block("HTTPS://A.B/c."),
              block("A plain sentence. Another one.")]
    urls = ["regexp.url" in f for f in feats(blocks)]
    assert urls == [True, True, True, False]


def test_url_hints_must_be_strings(tmp_path):
    import pytest

    from cleaner.config import ConfigError, load_config

    bad = tmp_path / "bad.toml"
    bad.write_text('[features]\nurl_hints = "www."\n')
    with pytest.raises(ConfigError, match="url_hints"):
        load_config(bad)


def test_container_classes():
    (f,) = feats([block("x", ("body", "ul", "li", "a", "b"), in_link=True)])
    assert {"container.a", "container.class-list", "container.class-bold"} <= set(f)
    assert "container.class-header" not in f and "container.p" not in f


def test_html5_landmarks_are_container_classes():
    (nav, main) = feats([block("Home", ("body", "nav", "ul", "li", "a")), block("Text.", ("body", "main", "article", "p"))])
    assert "container.class-nav" in nav and "container.class-main" not in nav
    assert "container.class-main" in main and "container.class-nav" not in main


def test_container_classes_come_from_the_config():
    from cleaner.config import Config, _merge, load_config

    cfg = Config(_merge(load_config().data, {"features": {"window": 0, "class_figure": ["figure", "figcaption"]}}))
    (f,) = FeatureExtractor(cfg).extract(table_of([block("A caption", ("body", "figure", "figcaption"))]))
    assert "container.class-figure" in f


def test_hidden_blocks_get_a_container_class_unless_configured_away():
    from cleaner.config import load_config

    html = '<div style="display:none"><p>Log in</p></div><p>Text.</p>'
    default = load_config()
    without = default.overlay({"features": {"class_hidden": []}}, "test")
    for cfg, expected in ((default, True), (without, False)):
        hidden, shown = FeatureExtractor(cfg).extract(segment_blocks(html, cfg).table)
        assert ("container.class-hidden" in hidden) is expected
        assert "container.class-hidden" not in shown


def test_numeric_values_are_binned_largest_less_or_equal():
    text = "one two three four five six seven eight nine ten eleven twelve"  # 12 alpha tokens
    (f,) = feats([block(text)])
    assert "token.alpha=10" in f  # bins ... 10, 15 ...: 12 -> 10
    assert "token.alpha.rel=1" in f
    assert not any(x.startswith("token.num") for x in f)  # zero counts are left out


def test_sentence_and_regexp_features():
    (f,) = feats([block("Visit www.example.com on 12/03/2007 at 10:30 pm. It is fine.")])
    assert {"regexp.url", "regexp.date", "regexp.time", "sentence.begin", "sentence.end"} <= set(f)
    assert "sentence.count=2" in f
    (g,) = feats([block("• a bulleted item")])
    assert "regexp.bullet" in g


def test_text_written_without_spaces_has_sentences_and_tokens():
    # Japanese puts no space after its full stops: three sentences, not one of 40 "words"; its Han and kana are a
    # token each, as its words are counted, not one long "other" token.
    text = "東京都は13日、新しい計画を発表した。費用は約1億円になる。「よかった」と話した。"
    (f,) = feats([block(text)])
    assert {"sentence.count=3", "sentence.begin", "sentence.end"} <= set(f)
    assert "token.alpha=30" in f and "token.other=5" in f  # 31 Han and kana; 、 。 。「 」 。
    assert not any(x.startswith("token.other.rel=1") for x in f)
    # Korean and every spaced script are split at spaces and stops followed by a space, as before.
    (k,) = feats([block("서울시는 13일 계획을 발표했다. 비용은 1억 원이다.")])
    assert "sentence.count=2" in k and "token.alpha=3" in k


def test_a_model_reads_tokens_as_it_was_trained():
    # cleaneval-2012 was trained before per_character_tokens: its features are what it learnt from, whitespace
    # tokens, while a config of today splits Han and kana (cleaner.config.LEGACY_VALUES).
    from cleaner.config import load_config
    from cleaner.label.model import load_model

    text = "東京都は新しい計画を発表した"
    old = load_model("cleaneval-2012")
    assert old.feature_config(load_config())["features"]["per_character_tokens"] is False
    (f,) = old.extractor(load_config()).extract(table_of([block(text)]))
    assert "token.alpha=1" in f  # the whole text, one token
    (g,) = feats([block(text)])
    assert "token.alpha=10" in g  # 14 characters, 14 tokens
    # the packaged default was trained with it
    assert load_model("default").feature_config(load_config())["features"]["per_character_tokens"] is True


def test_duplicates_are_counted_and_first_marked():
    f = feats([block("Home"), block("Story"), block("home")])
    assert "dup.first" in f[0] and "dup.count=2" in f[0]
    assert "dup.first" not in f[2] and "dup.count=2" in f[2]
    assert not any(x.startswith("dup.") for x in f[1])


def test_group_word_ratio_counts_words_outside_links():
    blocks = segment_blocks(
        "<div>one two three four five six</div><div><a href=x>l1 l2 l3 l4</a> x y</div>"
    ).blocks
    f = feats(blocks)
    # free words: 6 + 2 = 8; first div 6/8 = 0.75 -> bin 0.7; link div 2/8 = 0.25 -> 0.2
    assert "group.div-word-ratio=0.7" in f[0]
    assert "group.div-word-ratio=0.2" in f[1]


def test_neighbour_window_adds_prefixed_features():
    f = feats([block("A", ("body", "h1")), block("B")], window=1)
    assert "-1:BOD" in f[0] and "+1:container.class-header" not in f[0]
    assert "-1:container.class-header" in f[1] and "+1:EOD" in f[1]


def test_families_can_be_switched_off_for_ablation():
    (f,) = feats([block("Some text here.")], families=("char",))
    assert f[0] == "bias" or "bias" in f
    assert all(x == "bias" or x.startswith("char.") for x in f)


from hypothesis import given, settings, strategies as st  # noqa: E402


@settings(deadline=None)  # a loaded CI machine once took 296 ms for one case; the check is about counts
@given(st.text(alphabet=st.characters(max_codepoint=127), max_size=40))
def test_ascii_fast_path_counts_like_the_general_path(text):
    import cleaner.page.text as t

    general = (
        t._run_length(t._ALPHA_RE, text), t._run_length(t._DIGIT_RE, text), t._run_length(t._PUNCT_RE, text),
        t._run_length(t._SPACE_RE, text),
    )
    assert char_classes(text)[:4] == general
    assert sum(char_classes(text)) == len(text)


def test_url_hints_change_speed_not_features(data_dir):
    # url_hints is left out of the config hash (a model trained before it existed, and its stored
    # cross-validation, stay current), so it must never change a row: every 10th shared page, with
    # and without the pre-test.
    from conftest import sampled_pages

    from cleaner.config import load_config
    from cleaner.page.decode import decode_html
    from cleaner.page.segment import segment_blocks

    config = load_config()
    unhinted = config.overlay({"features": {"url_hints": []}})
    assert unhinted.section_hash() == config.section_hash()
    assert config.overlay({"features": {"window": 2}}).section_hash() != config.section_hash()
    with_hints, without = FeatureExtractor(config), FeatureExtractor(unhinted)
    pages = sampled_pages(data_dir, 10)
    assert len(pages) > 200
    n_url = 0
    for page in pages:
        blocks = segment_blocks(decode_html(page.read_html()).text, config).blocks
        rows = with_hints.extract(table_of(blocks))
        assert rows == without.extract(table_of(blocks)), page.key
        n_url += sum("regexp.url" in r for r in rows)
    assert n_url > 100  # the pages do exercise the url regexp


# -- the page's <title> (the output's `title`) ---------------------------------------------------------

def test_segmenter_reads_the_head_title_only():
    assert segment_blocks("<head><title> Big  news &amp; more </title></head><p>x").title == "Big news & more"
    # an SVG's <title> in the body is a tooltip, not the page's
    assert segment_blocks("<body><p>x<svg><title>icon</title></svg>").title == ""
    assert segment_blocks("").title == ""


def test_the_family_switches_name_every_family():
    """FamilySwitches has a field for each of FAMILIES (a family added without its field would be read as off)."""
    from cleaner.page.features import FAMILIES, FamilySwitches

    every, none = FamilySwitches(frozenset(FAMILIES)), FamilySwitches(frozenset())
    assert all(getattr(every, f) is True and getattr(none, f) is False for f in FAMILIES)
