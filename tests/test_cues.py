"""The opt-in `cue` family ([features.cues]) and the `#main` pseudo-tag of the segmenter."""

from cleaner.config import load_config
from cleaner.features import DEFAULT_FAMILIES, FeatureExtractor
from cleaner.segment import MAIN, segment_blocks

PAGE = ("<body><div class='cookieBanner'><p>We use cookies to improve your experience.</p></div>"
        "<div itemprop='articleBody'><p>Advertisement</p><p>By Jane Doe</p><p>The council voted on Monday to keep the "
        "library open for another ten years, after a long campaign by its readers.</p>"
        "<figure><figcaption>Foto: dpa</figcaption></figure><p>Lesen Sie auch</p></div>"
        "<ul class='share-bar'><li>Share</li></ul></body>")


def _cues() -> dict[str, list[str]]:
    blocks = segment_blocks(PAGE).blocks
    rows = FeatureExtractor(load_config(), DEFAULT_FAMILIES + ("cue",)).extract(blocks)
    return {b.text: sorted(a for a in row if a.startswith("cue.")) for b, row in zip(blocks, rows)}


def test_short_blocks_get_the_cue_their_text_names_in_several_languages():
    cues = _cues()
    assert "cue.text=consent" in cues["We use cookies to improve your experience."]
    assert cues["Advertisement"] == ["cue.text=ad"]
    assert cues["By Jane Doe"] == ["cue.text=byline"]
    assert cues["Foto: dpa"] == ["cue.text=caption"]
    assert cues["Lesen Sie auch"] == ["cue.text=related"]


def test_id_and_class_tokens_give_their_cue_as_substrings():
    cues = _cues()
    assert "cue.idclass=consent" in cues["We use cookies to improve your experience."]  # "cookiebanner"
    assert "cue.idclass=share" in cues["Share"] and "cue.text=share" in cues["Share"]


def test_article_text_gets_no_cue_and_the_default_families_none_at_all():
    assert _cues()[next(t for t in _cues() if t.startswith("The council"))] == []
    blocks = segment_blocks(PAGE).blocks
    rows = FeatureExtractor(load_config()).extract(blocks)
    assert not any(a.startswith("cue.") for row in rows for a in row)


def test_role_main_and_itemprop_article_body_mark_the_main_content():
    blocks = segment_blocks("<body><p>menu</p><div role='main'><p>a</p></div><div itemprop='articleBody'>b</div></body>").blocks
    assert [MAIN in b.ancestors for b in blocks] == [False, True, True]
