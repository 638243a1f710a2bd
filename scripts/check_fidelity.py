#!/usr/bin/env python
"""Markdown fidelity against a browser (issue 42, item 3): code blocks and tables, this project and trafilatura.

    .venv/bin/python scripts/check_fidelity.py [--data ../shared/data] [--sets wcxb] [--limit N] [--worst 10]

The pages: every page of the sets named whose HTML has a `<pre>` or a `<table>` (wcxb by default). Each is
loaded in Debian's headless Chromium as scripts/fidelity.py loads it (the decoded text served as UTF-8, scripts
off, every other request refused, `<noscript>` removed), which gives the gold:

* code: the `innerText` of every `<pre>` shown (not inside another `<pre>`), newlines at its end removed;
* tables: every table shown with no table inside it, of at least two rows and two columns, as its rows of cells
  shown (`innerText`, whitespace collapsed, case-folded; a row or a cell the page's style sheet hides is left
  out), a cell spanning rows repeated in each row it spans as a browser lays it out; a row is its cells that are
  not empty, in order.

Each system's Markdown (this project: `clean_html(markdown=True)`, the packaged default model; trafilatura 2.3:
`extract(output_format="markdown", include_tables=True)`) is checked against each gold element it keeps:

* a `<pre>` is kept when at least half of its non-empty lines are in the system's output; it is exact when a
  fenced code block of the output holds exactly its text (every character: indentation, blank lines, trailing
  spaces);
* a table is kept when at least half of its non-empty cells' texts are in the output; it is right when a pipe
  table of the output has exactly its rows (empty rows aside, inline code backticks and emphasis asterisks
  aside; the table's `<caption>` written as its first row, as trafilatura writes it, is taken as its caption);
  its rows are right one by one when they are rows of some pipe table of the output.

Which elements a system keeps is its extraction's business; what is measured is what it makes of those it keeps.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
import unicodedata
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))  # browser_setup: the project's one way to get Chromium
sys.path.insert(0, str(ROOT / "scripts"))

from cleaner.api import clean_html  # noqa: E402
from cleaner.gold.data import find_pages  # noqa: E402
from cleaner.label.model import load_model  # noqa: E402
from cleaner.page.decode import decode_html  # noqa: E402

_GOLD = """() => {
    document.querySelectorAll('noscript').forEach(e => e.remove());
    const shown = e => e.getClientRects().length > 0;
    const pres = [...document.querySelectorAll('pre')]
        .filter(p => shown(p) && !(p.parentElement && p.parentElement.closest('pre')))
        .map(p => p.innerText);
    const tables = [...document.querySelectorAll('table')]
        .filter(t => shown(t) && !t.querySelector('table'))
        .map(t => [...t.rows].filter(shown)
            .map(r => [...r.cells].filter(shown).map(c => [c.innerText, c.rowSpan, c.colSpan])));
    const captions = [...document.querySelectorAll('table')]
        .filter(t => shown(t) && !t.querySelector('table'))
        .map(t => t.caption && shown(t.caption) ? t.caption.innerText : '');
    return {pres, tables, captions};
}"""

_FENCE = re.compile(r"^(`{3,}|~{3,})[^\n`]*\n(.*?)\n\1[ \t]*$", re.M | re.S)
_MARKS = re.compile(r"`+|\*\*|__")


def norm(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def fenced_blocks(markdown: str) -> set[str]:
    return {m.group(2) for m in _FENCE.finditer(markdown)}


def pipe_tables(markdown: str) -> list[list[tuple[str, ...]]]:
    """The pipe tables of a Markdown text, each as its rows of non-empty normalised cells (the separator row
    and empty rows left out)."""
    tables: list[list[tuple[str, ...]]] = []
    current: list[tuple[str, ...]] | None = None
    for line in markdown.split("\n"):
        s = line.strip()
        if s.startswith("|") and s.endswith("|") and len(s) > 1:
            if current is None:
                current = []
                tables.append(current)
            cells = [c.replace("\\|", "|") for c in re.split(r"(?<!\\)\|", s[1:-1])]
            if all(re.fullmatch(r"\s*:?-{3,}:?\s*", c) for c in cells):
                continue
            row = tuple(x for x in (norm(_MARKS.sub("", c)) for c in cells) if x)
            if row:
                current.append(row)
        else:
            current = None
    return tables


def gold_rows(table: list) -> list[tuple[str, ...]]:
    """A table's rows as a browser lays them out (module docstring): a cell spanning rows is in each of them."""
    pending: dict[tuple[int, int], str] = {}
    rows = []
    for r, cells in enumerate(table):
        row: list[str] = []
        for text, rowspan, colspan in cells:
            while (r, len(row)) in pending:
                row.append(pending.pop((r, len(row))))
            c = len(row)
            row.append(norm(text))
            row.extend([""] * (max(1, colspan) - 1))
            span = rowspan if rowspan > 0 else len(table) - r
            for dr in range(1, min(span, len(table) - r)):
                pending[(r + dr, c)] = norm(text)
        while (r, len(row)) in pending:
            row.append(pending.pop((r, len(row))))
        kept = tuple(x for x in row if x)
        if kept:
            rows.append(kept)
    return rows


def is_data_shaped(table: list) -> bool:
    return len(table) >= 2 and max((sum(max(1, c[2]) for c in row) for row in table), default=0) >= 2


def kept(pieces: list[str], output: str) -> bool:
    pieces = [p for p in pieces if p]
    return bool(pieces) and sum(p in output for p in pieces) * 2 >= len(pieces)


def trafilatura_markdown(html: str) -> str:
    import trafilatura

    return trafilatura.extract(html, output_format="markdown", include_tables=True, include_comments=False,
                               deduplicate=False) or ""


def pages_with_structure(data: str, sets: list[str]) -> list:
    out = []
    for page in find_pages(data, sets):
        raw = page.read_html()
        low = raw.lower()
        if b"<pre" in low or b"<table" in low:
            out.append(page)
    return out


SYSTEMS = ("webcleaner", "trafilatura")


class Tally:
    """What one system made of the gold elements it kept (module docstring)."""

    def __init__(self) -> None:
        self.code = [0, 0, 0]  # <pre>s kept, exact, exact but for trailing spaces
        self.tables = [0, 0, 0, 0]  # tables kept, right, their rows, rows right
        self.wrong: list[str] = []


def gold_of(tab, html: str) -> dict:
    """The browser's <pre>s and tables of a page (module docstring), from a tab of fidelity.open_page."""
    tab.body = html.encode("utf-8", "surrogatepass").decode("utf-8", "replace").encode("utf-8")
    tab.goto("http://fidelity.invalid/page", wait_until="domcontentloaded", timeout=20_000)
    return tab.evaluate(_GOLD)


def check_page(gold: dict, outputs: dict[str, str], tallies: dict[str, Tally], key: str) -> tuple[int, int]:
    """Add what each system's Markdown (`outputs`) made of the page's gold to its tally; (<pre>s, tables) the
    gold has."""
    pres = [p.rstrip("\n") for p in gold["pres"] if p.strip()]
    captions = gold.get("captions") or [""] * len(gold["tables"])
    tables = [(t, norm(c)) for t, c in zip(gold["tables"], captions) if is_data_shaped(t)]
    for system, output in outputs.items():
        tally = tallies[system]
        blocks = fenced_blocks(output)
        stripped = {"\n".join(line.rstrip() for line in b.split("\n")) for b in blocks}
        for pre in pres:
            if not kept([line.strip() for line in pre.split("\n")], output):
                continue
            tally.code[0] += 1
            exact = pre in blocks
            tally.code[1] += exact
            tally.code[2] += "\n".join(line.rstrip() for line in pre.split("\n")) in stripped
            if not exact:
                tally.wrong.append(f"code {key}: {pre[:60]!r}")
        out_tables = pipe_tables(output)
        out_rows = {row for t in out_tables for row in t}
        flat = norm(_MARKS.sub("", output.replace("\\|", "|")))
        for table, caption in tables:
            rows = gold_rows(table)
            if not rows or not kept([c for row in rows for c in row], flat):
                continue
            tally.tables[0] += 1
            # (a caption written as the table's first row is taken as the caption it is)
            right = any(t == rows or (caption and t[1:] == rows and t[0] == (caption,)) for t in out_tables)
            tally.tables[1] += right
            tally.tables[2] += len(rows)
            tally.tables[3] += sum(row in out_rows for row in rows)
            if not right:
                tally.wrong.append(f"table {key}: {' | '.join(rows[0])[:60]!r}")
    return len(pres), len(tables)


def main(argv=None) -> int:
    from browser_setup import ensure_chromium, scriptless_context
    from fidelity import open_page

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data"))
    ap.add_argument("--sets", default="wcxb")
    ap.add_argument("--ids", default="", help="only these pages (ids, comma-separated)")
    ap.add_argument("--limit", type=int, default=0, help="at most this many pages (every n-th), 0: all")
    ap.add_argument("--worst", type=int, default=10, help="list this many elements that are wrong, per system")
    args = ap.parse_args(argv)
    model = load_model()
    pages = pages_with_structure(args.data, args.sets.split(","))
    if args.ids:
        pages = [p for p in pages if p.id in args.ids.split(",")]
    if args.limit and len(pages) > args.limit:
        pages = pages[:: max(1, len(pages) // args.limit)][: args.limit]
    tallies = {s: Tally() for s in SYSTEMS}
    shown = [0, 0]  # <pre>s, tables of the gold
    fallbacks = 0
    t0 = time.monotonic()
    with scriptless_context(ensure_chromium()) as context:
        tab = open_page(context)
        for page in pages:
            data = page.read_html()
            html = decode_html(data).text
            try:
                gold = gold_of(tab, html)
            except Exception as exc:  # a page the browser cannot load in time is left out, and said
                print(f"{page.key}: browser: {type(exc).__name__}", file=sys.stderr)
                continue
            result = clean_html(data, model=model, markdown=True)
            fallbacks += result.markdown_fallback is not None
            outputs = {"webcleaner": result.markdown or "", "trafilatura": trafilatura_markdown(html)}
            n_pres, n_tables = check_page(gold, outputs, tallies, page.key)
            shown[0] += n_pres
            shown[1] += n_tables
    print(f"{len(pages)} pages with <pre> or <table> ({args.sets}) in {time.monotonic() - t0:.0f} s; the browser "
          f"shows {shown[0]} <pre> and {shown[1]} tables of two rows and two columns or more (no table inside); "
          f"Markdown made from the blocks alone (tree numbering fallback): {fallbacks} pages\n")
    print("| system | <pre> kept | exact | exact but trailing spaces | tables kept | right | rows kept | rows right |")
    print("|---|---|---|---|---|---|---|---|")
    for s in SYSTEMS:
        k, e, t = tallies[s].code
        tk, tr, rk, rr = tallies[s].tables
        print(f"| {s} | {k} | {e} ({e / k if k else 0:.1%}) | {t} ({t / k if k else 0:.1%}) | {tk} | "
              f"{tr} ({tr / tk if tk else 0:.1%}) | {rk} | {rr} ({rr / rk if rk else 0:.1%}) |")
    if args.worst:
        for s in SYSTEMS:
            print(f"\n{s}: first {args.worst} elements kept but not right:")
            for line in tallies[s].wrong[: args.worst]:
                print("  " + line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
