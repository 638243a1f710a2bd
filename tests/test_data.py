"""Page collections and the site of a page (used to hold whole sites out of training)."""

from cleaner.data import page_site
from cleaner.train import PreparedDoc, fold_training_docs


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


def test_site_filter_is_shared_by_the_crf_and_the_seed_systems():
    from cleaner.data import without_sites_of

    train = [_doc("set/2", 2), _doc("set/3", 2)]
    assert without_sites_of(train, [_doc("set/1", 1)], None) == train
    kept = without_sites_of(train, [_doc("set/1", 1)], {"set/1": "a.org", "set/2": "a.org", "set/3": "b.org"})
    assert [d.key for d in kept] == ["set/3"]
