"""scripts/peers.py: the peers' cached outputs scored by the project's scorer, and the tables."""

from __future__ import annotations

import gzip
import json
import shutil

import pytest
from conftest import ROOT, load_script

from cleaner.gold.data import Page


def _peers():
    return load_script("peers")


def _page(tmp_path, dataset: str, id_: str, gold: str) -> Page:
    folder = tmp_path / dataset
    folder.mkdir(exist_ok=True)
    (folder / f"{id_}.txt").write_text(gold)
    return Page(dataset, id_, folder / f"{id_}.html", folder / f"{id_}.txt")


def _cache(peers, cache, versions, page, outputs: dict[str, str]):
    for name in peers.SYSTEMS:
        path = peers.cache_path(cache, name, versions[name], page)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"text": outputs.get(name, ""), "cpu_ms": 1.0, "error": None}))


def test_peer_output_is_plain_text_and_the_table_pairs_project_and_best_peer(tmp_path):
    peers = _peers()
    versions = {n: "v" for n in peers.SYSTEMS}
    cache = tmp_path / "cache"
    gold = "Hello world of code\nprint the <p> tag"
    pages = [_page(tmp_path, "wcxb", f"{i}", gold) for i in range(3)]
    for page in pages:
        # the project outputs CleanEval (its markers are markers); a peer's "<p>" is a word of its text
        _cache(peers, cache, versions, page, {"project": "<p> Hello world of code", "justext": gold,
                                              "trafilatura": "Hello world"})
    scores = peers.score_pages(pages, cache, versions)
    s = scores["wcxb/0"]
    assert s.f1["justext"] == 1.0 and s.wcxb["justext"] == 1.0
    assert s.f1["project"] == pytest.approx(2 * 4 / (4 + 8))
    assert s.f1["readability"] == 0.0  # no output: an empty output
    table, off = peers.set_table(pages, scores)
    row = next(line for line in table.splitlines() if line.startswith("| wcxb |"))
    assert "| justext | -0.333 | -0.333 to -0.333 |" in row
    assert any(line.startswith("trafilatura on wcxb:") for line in off)  # 0.500 is not the README's 0.806
    by_type, _ = peers.page_type_table(pages, scores, {p.key: "forum" for p in pages})
    assert "| forum | 3 |" in by_type and "| all | 3 |" in by_type


def test_the_cache_stays_outside_the_repository(capsys):
    peers = _peers()
    with pytest.raises(SystemExit):
        peers.main(["--cache", str(ROOT / "peers-cache"), "--every", "1000"])
    assert "outside the repository" in capsys.readouterr().err


def test_the_project_column_can_come_from_a_cross_validations_page_table(tmp_path):
    from cleaner.learn.evaluate import PAGE_COLUMNS, read_page_table

    peers = _peers()
    versions = {n: "v" for n in peers.SYSTEMS}
    cache = tmp_path / "cache"
    pages = [_page(tmp_path, "wcxb", f"{i}", "Hello world") for i in range(2)]
    for page in pages:
        _cache(peers, cache, versions, page, {"project": "nothing like it", "trafilatura": "Hello world"})
    table = tmp_path / "cv.tsv"
    cells = {"page": "wcxb/0", "dataset": "wcxb", "fold": "1", "word_p": "1", "word_r": "0.5", "word_f1": "0.666667",
             "text_only": "0.5", "markup_f1": "", "expected_f1": "", "wcxb_f1": "0.7"}
    table.write_text("\t".join(PAGE_COLUMNS) + "\n" + "\t".join(cells[c] for c in PAGE_COLUMNS) + "\n")
    rows = read_page_table(table)
    scores = peers.score_pages(pages[:1], cache, versions, rows)
    assert scores["wcxb/0"].f1["project"] == pytest.approx(0.666667)
    assert scores["wcxb/0"].wcxb["project"] == 0.7 and scores["wcxb/0"].f1["trafilatura"] == 1.0
    # a table written before the WCXB column reads as well
    older = tmp_path / "older.tsv"
    older.write_text("\t".join(PAGE_COLUMNS[:-1]) + "\n" + "\t".join(cells[c] for c in PAGE_COLUMNS[:-1]) + "\n")
    assert read_page_table(older)["wcxb/0"]["word_f1"] == "0.666667"


def test_the_project_cleans_each_page_by_its_sets_convention(data_dir):
    """The project's column is scored against each set's gold: a Dragnet page keeps its readers' comments (as its
    gold does), the same page filed under a modern set (`main`) loses them."""
    project = _peers()._Project(None)
    html = (data_dir / "dragnet" / "html" / "42.html").read_bytes()
    comment = "Sad but I know nothing about Catholic Church"
    as_dragnet, as_chaos = Page("dragnet", "42", None, None), Page("chaos", "42", None, None)
    assert comment in project(html, as_dragnet) and comment not in project(html, as_chaos)


def test_each_page_is_cleaned_by_the_model_of_the_fold_that_held_it_out(data_dir, tmp_path):
    """--fold-models: a page of fold 0 is cleaned by fold-0.crfsuite, one of fold 1 by fold-1.crfsuite (here the
    packaged default and the CleanEval model, copied with their companions), as the cross-validation scored it."""
    from cleaner.api import clean_html
    from cleaner.label.model import load_model

    models = ROOT / "cleaner" / "models"
    for fold, name in ((0, "default"), (1, "cleaneval-2012")):
        for path in models.glob(f"{name}.*"):
            shutil.copy(path, tmp_path / path.name.replace(name, f"fold-{fold}", 1))
    html = gzip.decompress((data_dir / "wcxb" / "html" / "0002.html.gz").read_bytes())
    first, second = Page("wcxb", "a", None, None), Page("wcxb", "b", None, None)
    project = _peers()._Project(None, tmp_path, {"wcxb/a": 0, "wcxb/b": 1})
    by_default = clean_html(html, model=load_model(None), convention="main").cleaneval
    by_cleaneval = clean_html(html, model=load_model("cleaneval-2012")).cleaneval
    assert by_default != by_cleaneval
    assert project(html, first) == by_default and project(html, second) == by_cleaneval


def test_the_snippets_are_read_in_the_plain_text_of_every_output(tmp_path):
    """The project's CleanEval output is read without its markers and with its entities decoded; a peer's plain text
    as it is (its "<p>" is a word). The table sums the pages, by page type too, and pairs the project with the peer
    of the best snippet F1."""
    from cleaner.gold.snippets import PageSnippets

    peers = _peers()
    versions = {n: "v" for n in peers.SYSTEMS}
    cache = tmp_path / "cache"
    pages = [_page(tmp_path, "wcxb", f"{i}", "Fish &amp; chips served daily") for i in range(2)]
    listed = {p.key: PageSnippets(("fish & chips served daily",), ("Order now",)) for p in pages}
    for page in pages:
        _cache(peers, cache, versions, page, {"project": "<h>Fish &amp; chips\n<p>served daily",
                                              "trafilatura": "Fish & chips served daily\nOrder now",
                                              "justext": "<p> Fish & chips served daily"})
    scores = peers.score_pages(pages, cache, versions, None, listed)
    s = scores["wcxb/0"].snippets
    assert (s["project"].found, s["project"].kept) == (1, 0)
    assert (s["trafilatura"].found, s["trafilatura"].kept) == (1, 1)
    assert (s["justext"].found, s["justext"].kept) == (1, 0)  # ("<p> Fish ...": the snippet is inside it)
    assert s["readability"].found == 0  # no output
    table = peers.snippet_table(pages, scores, {p.key: "product" for p in pages})
    project_row = next(line for line in table.splitlines() if line.startswith("| project |"))
    assert "| 1.000 (2 of 2) | 0.000 (0 of 2) | 1.000 | 1.000 | 1.000 |" in project_row
    assert "| product | 2 |" in table and "(justext), each page's accuracy: +0.000" in table
