"""The evaluation report's markup diagnosis: the model's output rescored with parts of the gold."""

from __future__ import annotations

import pytest

from cleaner.output.assemble import assemble
from cleaner.learn.evaluate import figures, markup_diagnosis, read_page_table, write_report
from cleaner.gold.score import score_document
from cleaner.learn.train import DocResult, PreparedDoc

TEXTS = ["Results", "The team won the final", "on Sunday.", "Tickets", "Contact us"]
GOLD_LABELS = ["header", "paragraph", "continuation", "list", "other"]
GOLD = "<h>Results\n<p>The team won the final on Sunday.\n<l>Tickets\n"


def _case(pred_labels, key="set/1", dataset="cleaneval-final"):
    counts = [len(t.split()) for t in TEXTS]
    doc = PreparedDoc(key, dataset, 0, TEXTS, counts, [], GOLD_LABELS, GOLD, 1.0, 8, 10)
    out = assemble(TEXTS, pred_labels, None, counts)
    result = DocResult(key, dataset, 0, score_document(out.cleaneval, GOLD), GOLD_LABELS, pred_labels,
                       out.cleaneval, 1.0)
    return result, doc


def test_gold_markers_recover_marker_errors_only():
    # Right text and segment starts, two of three markers wrong: markup 1/3, and 1.0 once
    # the starts take the gold's markers.
    result, doc = _case(["paragraph", "paragraph", "continuation", "paragraph", "other"])
    (diag,) = markup_diagnosis([result], [doc])
    assert round(diag.predicted, 3) == 0.333
    assert diag.with_gold_markers == 1.0
    assert diag.with_gold_segments == 1.0
    assert diag.marker_confusion["header"]["paragraph"] == 1
    assert diag.marker_confusion["list"]["paragraph"] == 1
    assert diag.marker_confusion["paragraph"]["paragraph"] == 1


def test_gold_segments_recover_a_wrong_split_but_not_lost_text():
    # "on Sunday." wrongly starts a segment (a split error the gold's markers cannot fix);
    # "Tickets" is dropped (lost text that neither can fix).
    result, doc = _case(["header", "paragraph", "paragraph", "other", "other"])
    (diag,) = markup_diagnosis([result], [doc])
    assert diag.with_gold_markers == diag.predicted  # the markers were right
    assert diag.predicted < diag.with_gold_segments < 1.0
    # precision 1, recall 2/3 once the split is undone
    assert round(diag.with_gold_segments, 3) == 0.8


def test_sets_without_markup_are_left_out_and_report_has_section(tmp_path):
    marked = _case(["paragraph", "paragraph", "continuation", "paragraph", "other"])
    doc_u = PreparedDoc("dn/1", "dragnet", 0, ["Some text"], [2], [], ["paragraph"], "Some text", 1.0, 2, 2)
    res_u = DocResult("dn/1", "dragnet", 0, score_document("<p>Some text", "Some text"), ["paragraph"],
                      ["paragraph"], "<p>Some text", 1.0)
    diags = markup_diagnosis([marked[0], res_u], [marked[1], doc_u])
    assert [d.dataset for d in diags] == ["cleaneval-final"]
    path = write_report(figures([marked[0], res_u]), tmp_path / "r.md", "t", "", diags)
    text = path.read_text()
    assert "## Where markup is lost" in text
    assert "| cleaneval-final | 1 | 0.333 | 1.000 | 1.000 |" in text


def test_the_expected_f1_check_ranks_and_flags_pages():
    from types import SimpleNamespace

    from cleaner.learn.evaluate import expected_f1_check, expected_f1_table

    def page(dataset, expected, real):
        return SimpleNamespace(dataset=dataset, expected_f1=expected, score=SimpleNamespace(f1=real))

    # set a: the expected F1 orders the pages as the real one does, and rates both bad pages lowest
    a = [page("a", e, r) for e, r in ((0.2, 0.1), (0.5, 0.6), (0.9, 0.85), (0.95, 0.99), (0.97, 0.98))]
    # set b: reversed, and a page without an expected F1 (a seed system's) is left out
    b = [page("b", e, r) for e, r in ((0.9, 0.1), (0.5, 0.9), (0.2, 0.95))] + [page("b", None, 0.5)]
    rows = {x["dataset"]: x for x in expected_f1_check(a + b)}
    assert rows["a"]["rho"] == pytest.approx(0.9) and rows["a"]["auc"] == 1.0 and rows["a"]["bad"] == 2
    assert rows["b"]["rho"] == pytest.approx(-1.0) and rows["b"]["auc"] == 0.0 and rows["b"]["docs"] == 3
    assert rows["all"]["docs"] == 8 and rows["a"]["low_fifth_real"] == pytest.approx(0.1)
    assert "| a | 5 | 2 | 0.900 | 1.000 |" in expected_f1_table(list(rows.values()))


def test_the_wcxb_metric_column_shows_only_where_a_group_has_it():
    from cleaner.learn.evaluate import page_type_figures, summary_table, wcxb_scores

    marked, doc = _case(["paragraph", "paragraph", "continuation", "paragraph", "other"])
    plain = summary_table(figures([marked]))
    assert "WCXB metric" not in plain and plain.splitlines()[0].count("|") == 14  # the old reports' columns
    w_doc = PreparedDoc("wcxb/1", "wcxb", 0, ["Some text"], [2], [], ["paragraph"], "Some text here", 1.0, 3, 2)
    w_res = DocResult("wcxb/1", "wcxb", 0, score_document("<p>Some text", "Some text here"), ["paragraph"],
                      ["paragraph"], "<p>Some text", 1.0)
    wcxb = wcxb_scores([marked, w_res], [doc, w_doc])
    assert wcxb == {"wcxb/1": pytest.approx(0.8)}
    table = summary_table(figures([marked, w_res], wcxb=wcxb))
    assert "| WCXB metric |" in table and "| 0.800 |" in table
    assert table.splitlines()[2].endswith("| – |")  # cleaneval-final: no WCXB metric
    (by_type,) = page_type_figures([marked, w_res], {"wcxb/1": "forum"}, wcxb)
    assert (by_type.dataset, by_type.n_docs, by_type.wcxb_f1) == ("wcxb: forum", 1, pytest.approx(0.8))


def test_snippets_are_judged_in_the_text_a_reader_gets_and_shown_only_where_a_group_lists_them():
    from cleaner.gold.snippets import PageSnippets, SnippetCounts
    from cleaner.learn.evaluate import page_type_figures, snippet_scores, summary_table

    marked, _ = _case(["paragraph", "paragraph", "continuation", "paragraph", "other"])
    w_res = DocResult("wcxb/1", "wcxb", 0, score_document("<h>Prices &amp; plans\n<p>Some text", "Some text here"),
                      ["header", "paragraph"], ["header", "paragraph"], "<h>Prices &amp; plans\n<p>Some text", 1.0)
    # Read as the scorer reads the output: entities decoded, markers gone, the segments one a line
    listed = {"wcxb/1": PageSnippets(with_=("prices & plans some text", "missing words"), without=("p some", "Text"))}
    snippets = snippet_scores([marked, w_res], listed)
    assert snippets == {"wcxb/1": SnippetCounts(found=1, missed=1, kept=1, left_out=1)}
    plain = summary_table(figures([marked]))
    assert "snippet" not in plain  # no page lists snippets: the old reports' columns
    table = summary_table(figures([marked, w_res], snippets=snippets))
    assert "| snippet F1 | snippet acc |" in table
    rows = {line.split(" | ")[0].lstrip("| "): line for line in table.splitlines()[2:]}
    assert rows["wcxb"].endswith("| 0.500 | 0.500 |") and rows["cleaneval-final"].endswith("| – | – |")
    (by_type,) = page_type_figures([marked, w_res], {"wcxb/1": "forum"}, None, snippets)
    assert by_type.snippets == SnippetCounts(1, 1, 1, 1)


def test_compare_pages_pairs_two_cv_tables_by_set_and_wcxb_page_type(tmp_path):
    from conftest import load_script

    from cleaner.learn.evaluate import PAGE_COLUMNS

    compare_pages = load_script("compare_pages")

    def table(path, rows):
        path.write_text("\n".join(["\t".join(PAGE_COLUMNS)] + ["\t".join(map(str, r)) for r in rows]) + "\n")
        return path

    # page, dataset, fold, P, R, F1, text_only, markup, expected, WCXB metric (wcxb only)
    before = table(tmp_path / "a.tsv", [
        ("wcxb/1", "wcxb", 0, 0.5, 0.9, 0.6, "", "", "", 0.62), ("wcxb/2", "wcxb", 1, 0.8, 0.8, 0.8, "", "", "", 0.8),
        ("wcxb/3", "wcxb", 2, 0.9, 0.9, 0.9, "", "", "", 0.9), ("chaos/a", "chaos", 0, 1, 1, 0.95, "", "", "", ""),
        ("chaos/b", "chaos", 1, 1, 1, 0.9, "", "", "", ""), ("chaos/gone", "chaos", 1, 1, 1, 0.9, "", "", "", "")])
    after = table(tmp_path / "b.tsv", [
        ("wcxb/1", "wcxb", 0, 0.7, 0.9, 0.7, "", "", "", 0.72), ("wcxb/2", "wcxb", 1, 0.8, 0.8, 0.8, "", "", "", 0.8),
        ("wcxb/3", "wcxb", 2, 0.9, 0.9, 0.9, "", "", "", 0.9), ("chaos/a", "chaos", 0, 1, 1, 0.94, "", "", "", ""),
        ("chaos/b", "chaos", 1, 1, 1, 0.9, "", "", "", "")])
    types = {"wcxb/1": "product", "wcxb/2": "product", "wcxb/3": "article"}
    rows = compare_pages.compare(read_page_table(before), read_page_table(after), types).splitlines()
    line = {r.split(" | ")[0].lstrip("| "): r for r in rows if r.startswith("| ")}
    # wcxb's product pages in WCXB's metric (+0.10 on one of two pages), word F1 and precision beside it.
    assert line["wcxb product"].startswith("| wcxb product | 2 | 0.7100 | 0.7600 | +0.0500 (word F1 +0.0500) |")
    assert line["wcxb product"].endswith("| +0.1000 / +0.0000 | 1 / 0 |")
    assert "| wcxb article | 1 | 0.9000 | 0.9000 | +0.0000 (word F1 +0.0000) | – |" in line["wcxb article"]
    # The other sets in word F1; a page one table lacks is left out and said.
    assert line["chaos"].startswith("| chaos | 2 | 0.9250 | 0.9200 | -0.0050 |")
    assert line["chaos"].endswith("| 0 / 1 |")
    assert line["all (word F1)"].startswith("| all (word F1) | 5 |")
    assert rows[-1] == "1 pages are in one table only: left out."
