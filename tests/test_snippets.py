"""Must-have and must-not snippets (cleaner.gold.snippets): found as a reader would find them in an output, and
summed as the README of scripts/peers.py says."""

from __future__ import annotations

from cleaner.gold.data import find_pages
from cleaner.gold.snippets import PageSnippets, SnippetCounts, load_snippets, snippet_counts


def test_a_snippet_is_found_across_line_breaks_case_and_compatibility_forms():
    snippets = PageSnippets(with_=("Protein continues to dominate", "ﬁne print", "missing passage"),
                            without=("Order Now", "Login"))
    counts = snippet_counts("PROTEIN continues\n to   dominate the talk.\nThe fine print.\nOrder now!", snippets)
    # (NFKC turns the ligature "ﬁ" into "fi"; "Order now" is kept, "Login" is not)
    assert counts == SnippetCounts(found=2, missed=1, kept=1, left_out=1)
    assert counts.recall == 2 / 3 and counts.precision == 2 / 3 and counts.accuracy == 3 / 5
    assert abs(counts.f1 - 2 / 3) < 1e-12
    assert snippet_counts("", PageSnippets((), ())).accuracy == 1.0  # a page that lists none judges nothing
    assert counts + counts == SnippetCounts(4, 2, 2, 2)


def test_the_gold_holds_its_pages_must_have_snippets_and_not_their_must_not(data_dir):
    """wcxb's gold texts read as outputs: what a perfect cleaner would score, so the measure measures the cleaning,
    not the way snippets are matched (the README quotes these shares)."""
    listed = load_snippets(data_dir)
    pages = [p for p in find_pages(data_dir, ["wcxb"]) if p.key in listed]
    assert len(pages) == 1497 and len(listed) == 1497
    total = SnippetCounts()
    for page in pages:
        total = total + snippet_counts(page.read_gold(), listed[page.key])
    assert total.found + total.missed == 6659 and total.kept + total.left_out == 5824
    assert total.recall > 0.99 and total.kept / (total.kept + total.left_out) < 0.005
    assert load_snippets(data_dir / "wcxb").keys() == listed.keys()  # one set's folder reads alike
