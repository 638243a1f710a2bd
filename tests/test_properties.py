"""Properties of clean_html on random and mutated real pages (hypothesis).

* it never raises;
* cleaning removes, never invents: the output's text is the page's blocks' text, in order, less what was dropped;
* per-document label statistics add up to the blocks and words of the page.
"""

import re

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from cleaner.api import clean_html
from cleaner.label.model import load_model

_SURROGATE = re.compile("[\ud800-\udfff]")
SEEDS = ["cleaneval-dev/html/1.html", "cleaneval-final/html/429.html", "dragnet/html/100.html",
         "cleanportaleval/html/bbc.co.uk_news_04.html"]


@pytest.fixture(scope="module")
def model(small_model):
    return load_model(small_model)


@pytest.fixture(scope="module")
def seeds(data_dir):
    return [(data_dir / s).read_bytes()[:60_000] for s in SEEDS]


mutation = st.one_of(
    st.tuples(st.just("delete"), st.floats(0, 1), st.floats(0, 0.2)),
    st.tuples(st.just("duplicate"), st.floats(0, 1), st.floats(0, 0.1)),
    st.tuples(st.just("insert"), st.floats(0, 1), st.binary(min_size=1, max_size=64)),
    st.tuples(st.just("truncate"), st.floats(0, 1), st.none()),
)


def mutate(data: bytes, ops) -> bytes:
    for op, where, arg in ops:
        i = int(where * len(data))
        if op == "delete":
            data = data[:i] + data[i + int(arg * len(data)):]
        elif op == "duplicate":
            data = data[:i] + data[i:i + int(arg * len(data))] * 2 + data[i:]
        elif op == "insert":
            data = data[:i] + arg + data[i:]
        else:
            data = data[:i]
    return data


def check(res):
    assert res.status in ("cleaned", "rejected")
    if res.blocks is None:
        return
    # Every character of the output comes from the page's blocks, in their order: nothing made up,
    # nothing repeated. (Words are not compared: blocks that touch join into one word, "i<b>n</b>".)
    # (Lone surrogates are written as U+FFFD in the output.)
    page = _SURROGATE.sub("\ufffd", "".join("".join((b.shown or b.text).split()) for b in res.blocks))
    page_chars = iter(page)
    assert all(c in page_chars for c in "".join(res.plain.split())), "the output has text the page does not have"
    s = res.stats
    assert sum(v.blocks for v in s.per_label.values()) == s.n_blocks == len(res.blocks)
    assert sum(v.words for v in s.per_label.values()) == s.words_total
    assert s.words_kept == sum(v.words for k, v in s.per_label.items() if k != "other")


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, len(SEEDS) - 1), ops=st.lists(mutation, min_size=1, max_size=4))
def test_mutated_real_pages(model, seeds, seed, ops):
    check(clean_html(mutate(seeds[seed], ops), model=model, keep_blocks=True))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(pieces=st.lists(st.sampled_from(list("<>/=\"' abcdiphlu&;#x0123\n\t日本") + [
    "<p>", "</div>", "<li>", "<br>", "&amp;", "<script>", "<!--", "-->", "<pre>", "&#xD800;", "<h1>", "word "]),
    max_size=200))
def test_random_markup(model, pieces):
    check(clean_html("".join(pieces).encode("utf-8"), model=model, keep_blocks=True))
