"""The Markdown against what Chromium shows (scripts/check_fidelity.py, docs/fidelity.md "Markdown"), on a few
wcxb pages with code and tables: every kept <pre> exact, every kept data table's rows right, and at least as
good as trafilatura's Markdown on the same pages.

The browser is Debian's chromium (tests/browser_setup.py), driven by Playwright with scripts off.
"""

from __future__ import annotations

import sys

import pytest
from browser_setup import chromium_or_skip, scriptless_context
from conftest import load_script

from cleaner.api import clean_html
from cleaner.gold.data import read_html_file
from cleaner.page.decode import decode_html

pytestmark = pytest.mark.xdist_group("browser")

# documentation pages with code blocks (blank lines in most), and pages with price and cost tables
PAGES = ("0390", "0435", "2534", "0053", "0062")


def _script(name: str):
    return load_script(name)


@pytest.fixture(scope="module")
def check():
    _script("fidelity")
    return _script("check_fidelity")


@pytest.fixture(scope="module")
def tab(check):
    with scriptless_context(chromium_or_skip()) as context:
        yield sys.modules["fidelity"].open_page(context)


def test_the_measure_sees_a_lost_blank_line_and_a_shifted_cell(check):
    gold = {"pres": ["a\n\n  b\n"], "tables": [[[["k", 1, 1], ["v", 1, 1]], [["x", 2, 1], ["1", 1, 1]],
                                                [["2", 1, 1]]]]}
    good = "```\na\n\n  b\n```\n\n| k | v |\n| --- | --- |\n| x | 1 |\n| x | 2 |"
    bad = "```\na\n  b\n```\n\n| k | v |\n| --- | --- |\n| x | 1 |\n| 2 |  |"
    tallies = {s: check.Tally() for s in ("good", "bad")}
    assert check.check_page(gold, {"good": good, "bad": bad}, tallies, "page") == (1, 1)
    assert tallies["good"].code == [1, 1, 1] and tallies["good"].tables == [1, 1, 3, 3]
    assert tallies["bad"].code == [1, 0, 0] and tallies["bad"].tables == [1, 0, 3, 2]


def test_code_and_tables_as_chromium_shows_them(check, tab, data_dir):
    tallies = {s: check.Tally() for s in check.SYSTEMS}
    for page_id in PAGES:
        data = read_html_file(data_dir / "wcxb" / "html" / f"{page_id}.html.gz")
        html = decode_html(data).text
        result = clean_html(data, markdown=True)
        assert result.markdown_fallback is None
        outputs = {"webcleaner": result.markdown, "trafilatura": check.trafilatura_markdown(html)}
        check.check_page(check.gold_of(tab, html), outputs, tallies, page_id)
    ours, theirs = tallies["webcleaner"], tallies["trafilatura"]
    kept, exact, _ = ours.code
    assert kept >= 20 and exact == kept, ours.wrong
    tables, right, rows, rows_right = ours.tables
    assert tables >= 3 and right == tables, ours.wrong
    assert exact / kept >= theirs.code[1] / max(1, theirs.code[0])
    assert rows_right / rows >= theirs.tables[3] / max(1, theirs.tables[2])
