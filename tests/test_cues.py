"""The opt-in `cue` family ([features.cues]): boilerplate names, the page type, repeated items and code; and the
`#main` pseudo-tag of the segmenter."""

import re

from cleaner.config import load_config
from cleaner.page.features import DEFAULT_FAMILIES, FeatureExtractor
from cleaner.page.segment import MAIN, segment_blocks, table_of

PAGE = ("<body><div class='cookieBanner'><p>We use cookies to improve your experience.</p></div>"
        "<div itemprop='articleBody'><p>Advertisement</p><p>By Jane Doe</p><p>The council voted on Monday to keep the "
        "library open for another ten years, after a long campaign by its readers.</p>"
        "<figure><figcaption>Foto: dpa</figcaption></figure><p>Lesen Sie auch</p></div>"
        "<ul class='share-bar'><li>Share</li></ul></body>")


def _cues() -> dict[str, list[str]]:
    blocks = segment_blocks(PAGE).blocks
    rows = FeatureExtractor(load_config(), DEFAULT_FAMILIES + ("cue",)).extract(table_of(blocks))
    return {b.text: sorted(a for a in row if a.startswith(("cue.text=", "cue.idclass="))) for b, row in zip(blocks, rows)}


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
    rows = FeatureExtractor(load_config()).extract(table_of(blocks))
    assert not any(a.startswith("cue.") for row in rows for a in row)


def test_role_main_and_itemprop_article_body_mark_the_main_content():
    blocks = segment_blocks("<body><p>menu</p><div role='main'><p>a</p></div><div itemprop='articleBody'>b</div></body>").blocks
    assert [MAIN in b.ancestors for b in blocks] == [False, True, True]


# -- page type, repeated items, code ---------------------------------------------------------------------------

CUE_FAMILIES = DEFAULT_FAMILIES + ("cue",)


def _page_cues(html: str) -> list[tuple[str, list[str]]]:
    """(text, its page-level cue attributes) of each block of `html`, as clean_html's features see them."""
    seg = segment_blocks(html)
    rows = FeatureExtractor(load_config(), CUE_FAMILIES).extract(seg.table, page=seg.page)
    page_cues = ("cue.page=", "cue.repeat", "cue.code")
    return [(b.text, sorted(a for a in row if a.startswith(page_cues))) for b, row in zip(seg.blocks, rows)]


def _page_type(html: str) -> str:
    (kind,) = {a for _, attrs in _page_cues(html) for a in attrs if a.startswith("cue.page=")}
    return kind.split("=", 1)[1]


def _json_ld(obj: str) -> str:
    return f'<script type="application/ld+json">{obj}</script>'


BODY = "<body><h1>Titel</h1><p>Ein Absatz mit genug Text, damit die Seite etwas zeigt.</p></body>"


def test_every_block_carries_the_page_type_its_json_ld_declares():
    product = "<html><head>" + _json_ld('{"@context": "https://schema.org", "@type": "Product", "name": "Schuh", '
                                         '"offers": {"@type": "Offer", "price": "59.90"}}') + "</head>" + BODY
    assert {tuple(a) for _, a in _page_cues(product)} == {("cue.page=product",)}
    graph = _json_ld('{"@graph": [{"@type": "WebSite"}, {"@type": "BreadcrumbList"}, {"@type": ["NewsArticle"]}]}')
    assert _page_type("<head>" + graph + "</head>" + BODY) == "article"
    thread = _json_ld('{"@type": "QAPage", "mainEntity": {"@type": "Question", "name": "Wie?"}}')
    assert _page_type("<head>" + thread + "</head>" + BODY) == "forum"
    docs = _json_ld('{"@type": "TechArticle", "headline": "API"}')  # a TechArticle is documentation, not news
    assert _page_type("<head>" + docs + "</head>" + BODY) == "docs"
    # An FAQ (sites add one to articles for search engines) names a part of the page, and its questions are no
    # forum thread; a WebPage's main entity is what the page is.
    faq = _json_ld('{"@type": "FAQPage", "mainEntity": [{"@type": "Question", "name": "Wie?"}]}')
    assert _page_type("<head>" + faq + "</head>" + BODY) == "unknown"
    assert _page_type("<head>" + faq + _json_ld('{"@type": "BlogPosting"}') + "</head>" + BODY) == "article"
    page = _json_ld('{"@type": "WebPage", "mainEntity": {"@type": "Article", "headline": "Titel"}}')
    assert _page_type("<head>" + page + "</head>" + BODY) == "article"


def test_json_ld_in_the_body_counts_and_a_broken_block_is_skipped():
    html = "<body>" + _json_ld("{broken") + _json_ld('{"@type": "CollectionPage"}') + BODY[6:]
    assert _page_type(html) == "listing"


def test_several_top_level_products_make_a_listing_and_nested_types_do_not_count():
    items = ",".join('{"@type": "Product", "name": "P%d"}' % i for i in range(4))
    assert _page_type("<head>" + _json_ld(f"[{items}]") + "</head>" + BODY) == "listing"
    # An article's comments (a nested Comment) do not make it a forum thread.
    article = '{"@type": "BlogPosting", "comment": [{"@type": "Comment", "text": "Toll!"}]}'
    assert _page_type("<head>" + _json_ld(article) + "</head>" + BODY) == "article"


def test_og_type_and_microdata_declare_the_type_without_json_ld():
    assert _page_type('<head><meta property="og:type" content="product"></head>' + BODY) == "product"
    assert _page_type('<head><meta property="og:type" content="website"></head>' + BODY) == "unknown"
    # A declared type wins over the markup: related stories in <article> cards do not make an article a listing.
    related = "<body><h1>Nachricht</h1><p>Text.</p>" + "<article><h2>Mehr</h2><p>Kurz.</p></article>" * 6 + "</body>"
    assert _page_type('<head><meta property="og:type" content="article"></head>' + related) == "article"
    microdata = ('<body><div itemscope itemtype="https://schema.org/DiscussionForumPosting"><p>Frage</p>'
                 '<div itemprop="comment" itemscope itemtype="https://schema.org/Comment"><p>Antwort</p></div></div></body>')
    assert _page_type(microdata) == "forum"


def test_markup_gives_the_type_when_nothing_declares_it():
    offers = "<body><h1>Kamera</h1><div itemprop='offers'><span itemprop='price'>199 €</span></div></body>"
    assert _page_type(offers) == "product"
    code = "<body><h1>API</h1>" + "<p>Aufruf:</p><pre><code>client.get(url)</code></pre>" * 3 + "</body>"
    assert _page_type(code) == "docs"
    cards = "<body>" + "<article><h2>Beitrag</h2><p>Kurz.</p></article>" * 4 + "</body>"
    assert _page_type(cards) == "listing"
    assert _page_type("<body><article><h1>Nachricht</h1><p>Text.</p></article></body>") == "article"
    assert _page_type(BODY) == "unknown"


def test_blocks_in_repeated_items_get_the_number_of_items_and_link_lists_are_told_apart():
    html = ("<body><ul class='menu'>" + "".join(f"<li><a href='/{i}'>Rubrik {i}</a></li>" for i in range(6)) + "</ul>"
            "<div class='results'>" + "".join(f"<div class='result'><h3><a href='/p{i}'>Produkt {i}</a></h3>"
                                              f"<p>Eine Beschreibung des Produkts mit einigen Worten.</p></div>"
                                              for i in range(12)) + "</div>"
            "<div class='text'><p>Erster Absatz.</p><p>Zweiter Absatz.</p><p>Dritter Absatz.</p></div></body>")
    cues = dict(_page_cues(html))
    # 6 items: bin 5; 12 items, most of their words not links: bin 10 (and each told with the page's type)
    assert cues["Rubrik 0"] == ["cue.page=unknown", "cue.repeat-links", "cue.repeat=5", "cue.repeat@unknown"]
    assert cues["Produkt 3"] == ["cue.page=unknown", "cue.repeat=10", "cue.repeat@unknown"]
    assert cues["Eine Beschreibung des Produkts mit einigen Worten."] == ["cue.page=unknown", "cue.repeat=10",
                                                                     "cue.repeat@unknown"]
    # An article's paragraphs are siblings of one tag, but not items.
    assert cues["Zweiter Absatz."] == ["cue.page=unknown"]


def test_two_siblings_are_no_repetition_and_the_signature_holds_the_class():
    html = ("<body><div class='a'><p>eins</p></div><div class='a'><p>zwei</p></div>"
            "<div class='b'><p>drei</p></div><div class='c'><p>vier</p></div></body>")
    assert [b.repeat for b in segment_blocks(html).blocks] == [0, 0, 0, 0]


def test_code_blocks_get_the_code_cue():
    cues = dict(_page_cues("<body><p>Run <code>make</code> first:</p><pre>cd src\nmake install</pre><p>Done.</p></body>"))
    assert "cue.code" in cues["make"] and "cue.code" in cues["make install"]
    assert "cue.code" not in cues["Run"] and "cue.code" not in cues["Done."]


def test_page_cues_work_on_a_page_in_another_script():
    html = ("<head>" + _json_ld('{"@type": "NewsArticle", "headline": "東京で新しい図書館が開館"}') + "</head><body>"
            "<ul>" + "".join(f"<li><a href='/{i}'>関連記事{i}</a></li>" for i in range(3)) + "</ul>"
            "<p>東京で新しい図書館が開館した。</p></body>")
    cues = dict(_page_cues(html))
    # The repeated item is told once more with the page's type (cue.repeat@article).
    assert cues["関連記事1"] == ["cue.page=article", "cue.repeat-links", "cue.repeat=3", "cue.repeat@article"]
    assert cues["東京で新しい図書館が開館した。"] == ["cue.page=article"]


# -- the literal prefilter of the cue regexps (cleaner.page.cues.cue_prefilter) ----------------------------------

TRICKY = ["", "CooKIE settings", "Coo\u212aIE settings", "\u017fubscribe now", "PR\u0130VACY POLICY", "PRIVACY POLICY",
          "NEWSLETTER", "Sign Up", "ADVERTISEMENT", "Advertisement", "ad", "Share", "SHARE this", "BY Jane Doe",
          "von Hans", "Photo: AP", "photos : x", "Getty Images", "\u00a9 2024", "Publicit\u00e9", "Read MORE",
          "Lesen Sie auch", "\u00e0 lire aussi", "Subscribers only", "already a SUBSCRIBER", "\u30af\u30c3\u30ad\u30fc",
          "Scroll To Continue", "the council voted", "a\u212a", "\u017f", "\u0131", "I", "i", "k", "K", "s", "S"]


def _real_texts(data_dir, every: int = 60) -> list[str]:
    from conftest import sampled_pages

    from cleaner.page.pipeline import read_page_to_score

    texts = []
    for page in sampled_pages(data_dir, every):
        texts += [b.text for b in read_page_to_score(page.read_html(), load_config()).segmentation.blocks]
    return texts


def _slow_cues(ex: FeatureExtractor, text: str) -> list[str]:
    """The cue.text attributes as running every regexp gives them."""
    from cleaner.page.text import count_words

    if count_words(text) > ex.cues.max_words:
        return []
    return sorted("cue.text=" + n for n, rx in zip(ex.cues.text_names, ex.cues.text_rx) if rx.search(text))


def test_a_cue_is_split_into_its_top_level_branches_only():
    from cleaner.page.cues import cue_branches

    def split(pattern):
        return [b.pattern for b in cue_branches(re.compile(pattern))]

    assert split(r"(?i)^(?:photo|foto)s?\s*:|getty images|\bdpa\b") == [
        r"(?i)^(?:photo|foto)s?\s*:", "(?i)getty images", r"(?i)\bdpa\b"]
    assert split(r"[|]x|y\|z|[]|]|[^]|]") == ["[|]x", r"y\|z", "[]|]", "[^]|]"]  # `|` in a class or escaped
    assert split("a(?:b|c)") == ["a(?:b|c)"]  # an inner alternation stays
    assert split(r"(a)|\1") == [r"(a)|\1"]  # a group a branch could refer to: kept whole
    assert cue_branches(re.compile("(?i)x|y"))[0].flags == re.compile("(?i)x|y").flags


def test_the_cue_prefilter_gives_the_attributes_every_regexp_gives(data_dir):
    from cleaner.page.segment import Block

    ex = FeatureExtractor(load_config(), CUE_FAMILIES)
    texts = TRICKY + _real_texts(data_dir)
    assert len(texts) > 2000
    # The prefilter itself: an ASCII text holding none of a branch's literals is matched by it nowhere.
    assert len(ex.cues.text_branches) > len(ex.cues.text_rx)  # (the default's cues are split into their branches)
    for rx, lits, fold in zip(ex.cues.text_branches, ex.cues.text_lits, ex.cues.text_fold):
        assert lits is not None  # every cue of the default config has its literals
        for text in texts:
            hay = text.lower() if fold else text
            if text.isascii() and not any(lit in hay for lit in lits):
                assert rx.search(text) is None, (rx.pattern, text)
    # And the attributes the extractor gives, block by block (a fresh extractor: no text cached).
    ex = FeatureExtractor(load_config(), CUE_FAMILIES)
    blocks = [Block(text=t, containers=("div", "p")) for t in texts]
    rows = ex.extract(table_of(blocks))
    matched = 0
    for text, row in zip(texts, rows):
        got = sorted(a for a in row if a.startswith("cue.text="))
        assert got == _slow_cues(ex, text), text
        matched += bool(got)
    assert matched > 20


def test_the_cue_prefilter_keeps_to_what_ascii_text_can_match():
    import re

    from cleaner.page.cues import cue_prefilter

    assert cue_prefilter(re.compile("(?i)cookie|consent")) == ("consent", "cookie")
    assert cue_prefilter(re.compile("(?i)^(?:ad|ads)\\b|scroll")) == ("ad", "scroll")
    assert cue_prefilter(re.compile("(?i)\\bNews(?:letter)?")) == ("news",)
    assert cue_prefilter(re.compile("Cookie")) == ("Cookie",)  # case-sensitive: compared with the text as it is
    assert cue_prefilter(re.compile("(?i)\u30af\u30c3\u30ad\u30fc|\u00a9")) == ()  # never in an ASCII text
    assert cue_prefilter(re.compile("(?i)\u017fubscribe")) is None  # the long s matches "s": always searched
    assert cue_prefilter(re.compile("(?i)cookie|\\w+ policy|[ab]x")) == (" policy", "cookie", "x")
    assert cue_prefilter(re.compile("(?i)cookie|\\w+")) is None  # a branch of no literal
    assert cue_prefilter(re.compile("(?i)(?-i:Cookie)")) is None  # local flags: not derived


def _main_relations(html: str) -> dict[str, str]:
    seg = segment_blocks(html)
    rows = FeatureExtractor(load_config(), DEFAULT_FAMILIES + ("cue",)).extract(seg.table, page=seg.page)
    return {b.text: next(a for a in row if a.startswith("cue.main=")) for b, row in zip(seg.blocks, rows)}


def test_blocks_are_placed_before_in_or_after_the_subtree_holding_most_of_the_prose():
    # No id, class or tag names the content: the prose alone says where it is, split by an ad as today's pages are.
    story = "<div><p>{}</p><div><span>Advertisement</span></div><p>{}</p></div>"
    para = "The council voted on Monday to keep the {} library open after a long campaign by its readers."
    html = ("<body><div><a href='/'>Home</a> <a href='/news'>News</a><p>Sign up for our daily newsletter</p></div>"
            + story.format(para.format("old"), para.format("town")) +
            "<div><p>Copyright 2026 by the publisher of this site</p><a href='/a'>About us</a></div></body>")
    where = _main_relations(html)
    assert where["Home"] == where["Sign up for our daily newsletter"] == "cue.main=before"
    assert where[para.format("old")] == where[para.format("town")] == where["Advertisement"] == "cue.main=in"
    assert where["Copyright 2026 by the publisher of this site"] == where["About us"] == "cue.main=after"


def test_prose_in_links_or_hidden_elements_does_not_make_the_main_container():
    para = "A long sentence of link text that reads like prose but is a teaser for another story here."
    html = (f"<body><div><a href='/1'>{para}</a></div><div hidden><p>{para} hidden</p></div>"
            "<div><p>The real story is here in a few words.</p></div></body>")
    where = _main_relations(html)
    assert where["The real story is here in a few words."] == "cue.main=in"
    assert where[para] == where[para + " hidden"] == "cue.main=before"


def test_the_main_container_that_fill_main_fills_leaves_out_comments_but_not_a_threads_posts():
    from cleaner.page.cues import main_container

    para = "The council voted on Monday to keep the {} library open after a long campaign by its readers."
    body = (f"<div><p>{para.format('old')}</p><p>{para.format('town')}</p>"
            f"<div class='comment-list'><p>{para.format('first comment on the')}</p></div></div>")
    extractor = FeatureExtractor(load_config(), DEFAULT_FAMILIES + ("cue",))

    def inside(head: str) -> dict[str, bool]:
        seg = segment_blocks(f"<html><head>{head}</head><body>{body}</body></html>")
        flags = main_container(seg.table, extractor.counts(seg.table), seg.page, extractor.cues, ("comment",))
        assert flags is not None
        return {b.text: f for b, f in zip(seg.blocks, flags)}

    blog = inside("")
    assert blog[para.format("old")] and not blog[para.format("first comment on the")]
    thread = inside('<script type="application/ld+json">{"@type": "DiscussionForumPosting"}</script>')
    assert thread[para.format("old")] and thread[para.format("first comment on the")]


def test_on_a_page_of_a_fill_main_heaviest_type_the_heaviest_groups_items_are_in_the_main_container():
    # [decision] fill_main_heaviest: a listing's items, mostly link text, lie outside the container of its most prose
    # (the intro box); on a page of a type named there they are part of the container the fill keeps from.
    from cleaner.page.cues import main_container

    intro = "<div class='intro'><p>{}</p></div>".format(
        "Every week our editors pick the new books worth reading and write a few words on each of them for you.")
    item = "<li class='row'><a href='/b{0}'>The long title of book number {0} in this week's list of picks</a></li>"
    body = intro + "<ul>" + "".join(item.format(k) for k in range(6)) + "</ul><div><a href='/'>Home</a></div>"
    extractor = FeatureExtractor(load_config(), DEFAULT_FAMILIES + ("cue",))
    seg = segment_blocks(f"<html><body>{body}</body></html>")  # (no markup of a type: `unknown`)
    assert extractor.cues.page_typer.of(seg.page) == "unknown"
    stats = extractor.counts(seg.table)
    plain = main_container(seg.table, stats, seg.page, extractor.cues)
    with_items = main_container(seg.table, stats, seg.page, extractor.cues, (), ("listing", "unknown"))
    other_type = main_container(seg.table, stats, seg.page, extractor.cues, (), ("listing",))
    assert plain is not None and with_items is not None
    texts = [b.text for b in seg.blocks]
    items = [i for i, t in enumerate(texts) if t.startswith("The long title")]
    assert len(items) == 6 and not any(plain[i] for i in items)
    assert all(with_items[i] for i in items) and other_type == plain
    assert not with_items[texts.index("Home")] and with_items[0]  # (the menu stays out, the intro in)
    # The heaviest group is found once a page for the cue family and the fill, and anew for other blocks or stats.
    from cleaner.page.cues import heaviest_items

    first = heaviest_items(seg.table, stats, seg.page, 3)
    assert first is not None and heaviest_items(seg.table, stats, seg.page, 3) is first
    again = heaviest_items(seg.table, extractor.counts(seg.table), seg.page, 3)
    assert again == first and again is not first
    first3 = table_of(seg.blocks[:3])
    assert heaviest_items(first3, extractor.counts(first3), seg.page, 3) == first[:3]


def test_the_main_container_is_found_once_a_page_and_again_for_other_blocks():
    # The cue family and the fill of the main container read one computation a page (cues.page_relations); other
    # blocks, or other stats, of the same page are placed anew, never given the relations of the first.
    from cleaner.page.cues import main_relations, page_relations

    para = "The council voted on Monday to keep the {} library open after a long campaign by its readers."
    seg = segment_blocks(f"<body><div><a href='/'>Home</a></div><div><p>{para.format('old')}</p>"
                         f"<p>{para.format('town')}</p></div><div><p>Copyright 2026</p></div></body>")
    extractor = FeatureExtractor(load_config(), DEFAULT_FAMILIES + ("cue",))
    stats = extractor.counts(seg.table)
    first = page_relations(seg.table, stats, seg.page, 5, 0.6)
    assert first == main_relations(seg.table, stats, seg.page.element_parent, 5, 0.6) == [0, 1, 1, 2]
    assert page_relations(seg.table, stats, seg.page, 5, 0.6) is first
    assert page_relations(seg.table, stats, seg.page, 5, 0.5) == [0, 1, 2, 2]  # (another share: placed anew)
    fewer = table_of(seg.blocks[:2])
    fewer_counts = extractor.counts(fewer)
    assert page_relations(fewer, fewer_counts, seg.page, 5, 0.5) == main_relations(
        fewer, fewer_counts, seg.page.element_parent, 5, 0.5)
    assert page_relations(seg.table, stats, seg.page, 50, 0.5) is None  # (no block of 50 words: no prose)


def _element_trees(data_dir, n: int = 60):
    """(PageMarks, words of each element's own blocks) of `n` shared pages: the element trees the walk gives."""
    from conftest import sampled_pages

    from cleaner.page.decode import decode_html

    for page in sampled_pages(data_dir, n):
        seg = segment_blocks(decode_html(page.read_html()).text)
        words = [0] * len(seg.page.element_parent)
        for b in seg.blocks:
            if 0 <= b.element < len(words):
                words[b.element] += len(b.text.split())
        yield seg.page, words


def test_the_compiled_main_subtree_is_the_references(data_dir):
    """The main container's subtree, compiled (compiled_walk.main_subtree), equals its reference
    (cues.main_subtree) on the element trees of shared pages and on generated trees, ties and empty pages included."""
    import random

    import pytest

    compiled = pytest.importorskip("cleaner.page.compiled_walk", reason="not built (scripts/build_native.py)")
    from cleaner.page.cues import main_subtree

    cases = [(words, page.element_parent) for page, words in _element_trees(data_dir)]
    rng = random.Random(5)
    for n in range(1, 40):
        parents = [0] + [rng.randrange(e) for e in range(1, n)]
        cases.append(([rng.choice((0, 0, 1, 3, 3)) for _ in range(n)], parents))
    cases.append(([0, 0, 0], [0, 0, 1]))  # no prose
    inside_some = 0
    for words, parents in cases:
        for share in (0.5, 0.6, 1.0):
            expected = main_subtree(words, parents, share)
            assert compiled.main_subtree(words, parents, share) == expected
            inside_some += expected is not None and 0 < sum(expected) < len(expected)
    assert inside_some > len(cases)
    with pytest.raises(ValueError):
        compiled.main_subtree([1, 1], [0, 1], 0.5)  # an element its own parent: not a tree in document order


def test_the_compiled_heaviest_subtree_is_the_references(data_dir):
    """The heaviest repeated group's items, compiled (compiled_walk.heaviest_subtree), equal their reference
    (cues.heaviest_subtree) on the element trees and groups of shared pages and on generated ones, ties, pages
    without a group and groups below the minimum included."""
    import random

    import pytest

    compiled = pytest.importorskip("cleaner.page.compiled_walk", reason="not built (scripts/build_native.py)")
    from cleaner.page.cues import heaviest_subtree

    cases = [(words, page.element_parent, page.element_group, page.group_size)
             for page, words in _element_trees(data_dir)]
    rng = random.Random(7)
    for n in range(1, 40):
        parents = [0] + [rng.randrange(e) for e in range(1, n)]
        sizes = [rng.randrange(1, 6) for _ in range(rng.randrange(0, 4))]
        groups = [-1] + [rng.randrange(-1, len(sizes)) for _ in range(1, n)]
        cases.append(([rng.choice((0, 0, 1, 3, 3)) for _ in range(n)], parents, groups, sizes))
    cases.append(([0, 0, 0], [0, 0, 1], [-1, 0, 0], [2]))  # a group of no words
    found = 0
    for words, parents, groups, sizes in cases:
        for repeat_min in (1, 3):
            expected = heaviest_subtree(words, parents, groups, sizes, repeat_min)
            assert compiled.heaviest_subtree(words, parents, groups, sizes, repeat_min) == expected
            found += expected is not None and 0 < sum(expected) < len(expected)
    assert found > len(cases) // 2
    with pytest.raises(ValueError):
        compiled.heaviest_subtree([1, 1], [0, 1], [-1, -1], [], 3)  # an element its own parent
    with pytest.raises(ValueError):
        compiled.heaviest_subtree([1, 1], [0, 0], [-1, 2], [3], 3)  # a group group_size does not hold


# A listing as Hacker News' front page is one: a site menu, and the items, titles in links with a line of their own.
_MENU = "<ul class='menu'>" + "".join(f"<li><a href='/{i}'>Section {i}</a></li>" for i in range(8)) + "</ul>"
_JOB_ROWS = "<table>" + "".join(f"<tr class='athing'><td><a href='/j{i}'>Company {i} is hiring engineers</a>"
                                f" (remote, 3 days ago)</td></tr>" for i in range(10)) + "</table>"


def _items(html: str) -> dict[str, list[str]]:
    seg = segment_blocks(html)
    rows = FeatureExtractor(load_config(), DEFAULT_FAMILIES + ("cue",)).extract(seg.table, page=seg.page)
    return {b.text: sorted(a for a in row if a.startswith("cue.items=")) for b, row in zip(seg.blocks, rows)}


def test_the_items_of_the_heaviest_repeated_group_are_told_from_menus_and_from_the_main_container():
    # A listing as Hacker News' front page is one: an intro box of prose, which the main container (weighing prose)
    # takes, and the items, titles in links with a line of their own, which hold more of the page than the menu.
    intro = "<div class='intro'><p>{}</p></div>".format(
        "Welcome to the list of this week's jobs, read by thousands of engineers who look for their next role.")
    menu, rows = _MENU, _JOB_ROWS
    items = _items(f"<body>{menu}{intro}{rows}</body>")
    assert items["Company 4 is hiring engineers"] == ["cue.items=heaviest", "cue.items=heaviest-outside",
                                                     "cue.items=heaviest@unknown", "cue.items=heaviest@url=none"]
    assert items["Section 2"] == []
    assert items[next(t for t in items if t.startswith("Welcome"))] == []
    # Where the items are the main container's, they are not outside it; a page without repetition has no such cue.
    items = _items(f"<body>{menu}{rows}</body>")
    assert items["Company 4 is hiring engineers"] == ["cue.items=heaviest", "cue.items=heaviest@unknown",
                                                     "cue.items=heaviest@url=none"]
    assert set(map(tuple, _items(f"<body>{intro}</body>").values())) == {()}


def test_the_shape_of_a_pages_url_tells_home_index_and_article_pages_apart():
    from cleaner.page.cues import CueSettings, url_shape

    settings = CueSettings(load_config())
    shapes = {
        "https://techcrunch.com/": "root",
        "https://example.org/index.html": "root",
        "https://www.wired.com/category/science/": "index",
        "https://github.com/topics/machine-learning": "index",
        "https://example.com/news?page=2": "index",
        "https://example.com/2025/09/04/top-trends/": "slug",
        "https://example.com/blog/how-we-rebuilt-our-search-engine": "slug",
        "https://www.wral.com/vehicle-rental/18236761/": "slug",
        "https://nssa.stanford.edu/news": "short",
        "/about/team": "other",  # (a canonical link may be written relative)
        "": "none",
        "http://[::1": "none",  # (not a URL)
    }
    assert {url: url_shape(url, settings) for url in shapes} == shapes


def test_every_block_carries_its_pages_url_shape_and_the_heaviest_items_it_conjoined():
    menu, rows = _MENU, _JOB_ROWS
    head = "<head><link rel='canonical' href='https://jobs.example.com/'></head>"
    seg = segment_blocks(f"<html>{head}<body>{menu}{rows}</body></html>")
    rows_ = FeatureExtractor(load_config(), DEFAULT_FAMILIES + ("cue",)).extract(seg.table, page=seg.page)
    url = {b.text: sorted(a for a in row if "url=" in a) for b, row in zip(seg.blocks, rows_)}
    assert url["Company 4 is hiring engineers"] == ["cue.items=heaviest@url=root", "cue.url=root"]
    assert url["Section 2"] == ["cue.url=root"]
    seg = segment_blocks(f"<body>{menu}</body>")  # no canonical link, no og:url
    rows_ = FeatureExtractor(load_config(), DEFAULT_FAMILIES + ("cue",)).extract(seg.table, page=seg.page)
    assert all("cue.url=none" in row for row in rows_)
    assert {a for row in rows_ for a in row if "url=" in a} == {"cue.url=none", "cue.items=heaviest@url=none"}
