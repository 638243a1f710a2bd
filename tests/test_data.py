"""Page collections and the site of a page (used to hold whole sites out of training)."""

from cleaner.gold.data import page_site
from cleaner.learn.cv import fold_training_docs
from cleaner.learn.train import PreparedDoc


def test_site_is_the_declared_host_else_the_most_linked_one():
    assert page_site(b'<link rel="canonical" href="https://www.Example.com/a/b">'
                     b'<a href="http://other.org/">x</a>') == "example.com"
    assert page_site(b'<meta property="og:url" content="http://news.site.net:8080/x">') == "news.site.net"
    assert page_site(b'<base href="http://base.org/dir/">') == "base.org"
    links = b'<a href="http://a.org/1">1</a><a href="https://b.org/">2</a><a href="http://www.a.org/2">3</a>'
    assert page_site(links) == "a.org"
    assert page_site(b"<p>no links at all</p>") is None


def _doc(key: str, fold: int) -> PreparedDoc:
    return PreparedDoc(key, "set", fold, ["text"], [1], [["a"]], ["paragraph"], "<p> text", 1.0, 1, 1)


def test_unseen_site_folds_train_without_any_page_of_a_held_out_site():
    docs = [_doc("set/1", 1), _doc("set/2", 2), _doc("set/3", 2), _doc("set/4", 3), _doc("set/5", 2)]
    sites = {"set/1": "a.org", "set/2": "a.org", "set/3": "b.org", "set/4": None, "set/5": None}
    by_document = [d.key for d in fold_training_docs(docs, 1, 0.5)]
    assert by_document == ["set/2", "set/3", "set/4", "set/5"]
    unseen = [d.key for d in fold_training_docs(docs, 1, 0.5, sites)]
    assert unseen == ["set/3", "set/4", "set/5"]  # a.org's other page is held out with it; unknown sites stay
    # --train-without: a page listed trains no fold's model (a learning curve); held out, it is still scored
    assert [d.key for d in fold_training_docs(docs, 1, 0.5, sites, frozenset({"set/4"}))] == ["set/3", "set/5"]
    assert [d.key for d in fold_training_docs(docs, 3, 0.5, None, frozenset({"set/4"}))] == ["set/1", "set/2",
                                                                                             "set/3", "set/5"]


def test_site_filter_is_shared_by_the_crf_and_the_seed_systems():
    from cleaner.gold.data import without_sites_of

    train = [_doc("set/2", 2), _doc("set/3", 2)]
    assert without_sites_of(train, [_doc("set/1", 1)], None) == train
    kept = without_sites_of(train, [_doc("set/1", 1)], {"set/1": "a.org", "set/2": "a.org", "set/3": "b.org"})
    assert [d.key for d in kept] == ["set/3"]


# -- the modern sets ------------------------------------------------------------------------

MODERN = ("chaos", "big5-2005", "big5-2009", "big5-2013", "big5-2017", "fundus", "wcxb")
EMPTY_WCXB_GOLDS = ("0585", "0602", "0618", "2840", "2906", "2966", "3008", "4577", "4681", "4720", "4721",
                    "4722", "4750", "4763", "4788", "4802", "4829", "4850", "4868", "4871", "4893")


def test_every_modern_set_loads_with_its_gold_and_wcxb_pages_are_decompressed(data_dir):
    from cleaner.gold.data import find_pages, load_folds

    pages = find_pages(data_dir)
    folds = load_folds(data_dir)
    counts = {s: sum(p.dataset == s and p.gold_path is not None for p in pages) for s in MODERN}
    assert counts == {"chaos": 360, "big5-2005": 90, "big5-2009": 90, "big5-2013": 90, "big5-2017": 90,
                      "fundus": 116, "wcxb": 1497}
    assert all(p.key in folds for p in pages)  # every page has its fold, wcxb's ids as folds.tsv spells them
    wcxb = [p for p in pages if p.dataset == "wcxb"]
    assert wcxb[0].id == "0001" and wcxb[0].html_path.name == "0001.html.gz"
    html = wcxb[0].read_html()
    assert html.lstrip()[:1] == b"<" and b"</html>" in html.lower()  # the page, not its gzip bytes
    assert find_pages(data_dir / "wcxb")[5] == wcxb[5]  # the same page from the set's own folder


def test_a_plain_gold_reads_a_quoted_p_as_text_and_has_no_markup(data_dir):
    from cleaner.gold.data import find_pages
    from cleaner.gold.score import score_document, words

    page = next(p for p in find_pages(data_dir, ["wcxb"]) if p.id == "0662")  # quotes "<p>Hello, World!</p>"
    gold = page.read_gold()
    assert '"&lt;p>Hello, World!</p>"' in gold
    s = score_document(gold, gold)
    assert s.f1 == 1.0 and s.markup_f1 is None
    assert words('"&lt;p>Hello, World!</p>"') == ["p", "hello", "world", "p"]
    # a CleanEval gold keeps its markers
    dev = find_pages(data_dir, ["cleaneval-dev"])[0].read_gold()
    assert score_document(dev, dev).markup_f1 == 1.0


def test_the_21_empty_wcxb_golds_score_only_an_empty_output(data_dir):
    from cleaner.gold.data import find_pages
    from cleaner.gold.score import score_document

    empty = [p for p in find_pages(data_dir, ["wcxb"]) if not p.read_gold().strip()]
    assert tuple(p.id for p in empty) == EMPTY_WCXB_GOLDS
    gold = empty[0].read_gold()
    assert score_document("", gold).f1 == 1.0
    assert score_document("<p> Add to cart", gold).f1 == 0.0


def test_an_empty_gold_is_prepared_scored_and_left_out_of_training(data_dir):
    from cleaner.config import load_config
    from cleaner.gold.data import find_pages
    from cleaner.learn.cv import trainable
    from cleaner.learn.train import prepare

    pages = [p for p in find_pages(data_dir, ["wcxb"]) if p.id in ("4802", "0002")]  # empty gold, and not
    docs = prepare(pages, load_config(), processes=1, progress=False)
    assert [d.gold_words for d in docs][1] == 0 and docs[0].gold_words > 100
    assert [d.key for d in trainable(docs, 0.5)] == ["wcxb/0002"]


def test_wcxb_page_types_come_from_pages_tsv(data_dir):
    from collections import Counter

    from cleaner.gold.data import load_page_types

    types = load_page_types(data_dir)
    assert Counter(types.values()) == {"article": 793, "service": 165, "product": 119, "collection": 117,
                                       "forum": 113, "listing": 99, "documentation": 91}
    assert types["wcxb/4802"] == "forum"
    assert load_page_types(data_dir / "wcxb") == types


def test_a_listed_site_holds_the_old_pages_under_it_out_too(tmp_path):
    from cleaner.gold.data import Page, page_sites

    old = tmp_path / "old.html"
    old.write_bytes(b'<link rel="canonical" href="http://edition.cnn.com/2010/x.html"><p>old</p>')
    other = tmp_path / "other.html"
    other.write_bytes(b'<link rel="canonical" href="http://blogs.example.org/x"><p>old</p>')
    pages = [Page("old", "1", old, None), Page("old", "2", other, None), Page("chaos", "a", old, None)]
    sites = page_sites(pages, {"chaos/a": "cnn.com", "chaos/b": "chaos/b"})
    assert sites == {"old/1": "cnn.com", "old/2": "blogs.example.org", "chaos/a": "cnn.com"}


def test_unseen_site_folds_share_no_site_across_sets(data_dir):
    # --cv --unseen-sites on the shared data: no training page of a fold's model is of a site of one
    # of its test pages, whatever the sets (chaos shares domains with fundus, big5 and the old sets).
    from cleaner.tools.cli import build_parser
    from cleaner.tools.cli_common import sites_from_args
    from cleaner.gold.data import find_pages, load_folds

    pages = [p for p in find_pages(data_dir) if p.gold_path is not None]
    folds = load_folds(data_dir)
    sites = sites_from_args(build_parser().parse_args(["eval", str(data_dir), "--cv", "--unseen-sites"]), pages)
    assert sites["chaos/switch_4"] == "chaos/switch_4"  # a chaos page of no site is a site of its own
    assert sites["big5-2005/amd_1"] == "forbes.com"  # sites.tsv, not the archive.org capture's canonical link
    docs = [PreparedDoc(p.key, p.dataset, folds[p.key], ["t"], [1], [["a"]], ["paragraph"], "t", 1.0, 1, 1)
            for p in pages]
    for k in range(6):
        test_sites = {sites[d.key] for d in docs if d.fold == k} - {None}
        train = fold_training_docs(docs, k, 0.5, sites)
        assert train and not {sites[d.key] for d in train} & test_sites
        by_set = {d.dataset for d in train}
        assert {"chaos", "fundus", "wcxb", "dragnet"} <= by_set
    # a site in chaos and fundus: held out of both sets at once
    theguardian = [d for d in docs if sites[d.key] == "theguardian.com"]
    assert {d.dataset for d in theguardian} >= {"chaos", "fundus"}
    k = theguardian[0].fold
    assert not [d for d in fold_training_docs(docs, k, 0.5, sites) if sites[d.key] == "theguardian.com"]
