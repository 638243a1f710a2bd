#!/usr/bin/env python
"""Parser time bombs: small pages on which the HTML5 tree builder (Lexbor) spends time faster than linearly.

    python scripts/parser_bombs.py [--shapes S,...] [--start N] [--limit-s 20] [--markdown FILE]
    python scripts/parser_bombs.py --guard-cost [--every N]      (what the guard costs the shared pages)

For each shape the page is built with n = start, 2 start, 4 start, ... units, and its CPU time measured in a
child process (so that a bomb cannot hang the run): `parse` is Lexbor alone on the raw page
(`LexborHTMLParser(html)`, what the cleaner did before its pre-parse guard), `clean` the whole
`cleaner.api.clean_html`, guard included. A measurement is cut at --limit-s seconds (reported as `>LIMIT`).
The raw parse is measured until it passes --stop-s (then `-`: it only grows); the doubling goes on while
clean_html stays within --limit-s, up to --max-bytes (10 MB, [limits] max_html_bytes).
docs/faults.md ("Parser time bombs") holds the table; tests/test_parser_bombs.py checks the shapes.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

_HEAD = b"<html><body><p>Some text before the bomb, long enough to be a paragraph of the page.</p>"
_TAIL = b"<p>Some text after the bomb, long enough to be a paragraph of the page too.</p></body></html>"


def _page(middle: bytes) -> bytes:
    return _HEAD + middle + _TAIL


# Each shape: n -> the page. The names are those of docs/faults.md's table and of the tests.
SHAPES: dict[str, Callable[[int], bytes]] = {
    # Many attributes on one tag: distinct names, one repeated name, with values.
    "attributes-distinct": lambda n: _page(b"<div " + b" ".join(b"a%d" % i for i in range(n)) + b">x</div>"),
    "attributes-same-name": lambda n: _page(b"<div" + b" a" * n + b">x</div>"),
    "attributes-valued": lambda n: _page(b"<div " + b" ".join(b'a%d="v"' % i for i in range(n)) + b">x</div>"),
    # (<noscript> content is markup to Lexbor, which parses without scripting.)
    "attributes-in-noscript": lambda n: _page(
        b"<noscript><div " + b" ".join(b"a%d" % i for i in range(n)) + b">x</div></noscript>"),
    # A <select> of many options, unclosed and closed; options outside a select; a <datalist>.
    "options-unclosed": lambda n: _page(b"<select>" + b"<option>o" * n + b"</select>"),
    "options-closed": lambda n: _page(b"<select>" + b"<option>o</option>" * n + b"</select>"),
    "options-in-optgroups": lambda n: _page(b"<select>" + b"<optgroup><option>o</option>" * n + b"</select>"),
    "options-outside-select": lambda n: _page(b"<div>" + b"<option>o" * n + b"</div>"),
    "options-in-datalist": lambda n: _page(b"<datalist>" + b"<option>o" * n + b"</datalist>"),
    # Many children of one element, and deep nesting (the older guard: [limits] max_nesting).
    "children-flat": lambda n: _page(b"<div>" + b"<span>x</span>" * n + b"</div>"),
    "nesting-div": lambda n: _page(b"<div>" * n + b"deep"),
    # Unclosed formatting elements: identical ones (the Noah's Ark clause keeps 3 in the list), distinct ones
    # (each stays active), and distinct ones reopened in every later paragraph (reconstruction: n x n nodes).
    "formatting-identical": lambda n: _page(b"<b>x" * n),
    "formatting-distinct": lambda n: _page(b"".join(b'<b class="c%d">x' % i for i in range(n))),
    "formatting-reconstructed": lambda n: _page(
        b"<p>" + b"".join(b'<b class="c%d">' % i for i in range(n)) + b"</p>" + b"<p>x</p>" * n),
    # The adoption agency: misnested <a>, <b> around blocks, formatting closed out of order.
    "adoption-a": lambda n: _page(b"<a href=x>x" * n),
    "adoption-b-div": lambda n: _page(b"<b>" + b"<div>x</b>y" * n),
    "adoption-misnested": lambda n: _page(b"<b><i>x</b>y</i>" * n),
    # Tables: content foster-parented out of a table, cells never closed, tables in cells.
    "table-foster": lambda n: _page(b"<table>" + b"<b>x" * n + b"</table>"),
    "table-cells-unclosed": lambda n: _page(b"<table><tr>" + b"<td>x" * n + b"</table>"),
    "table-nested": lambda n: _page(b"<table><tr><td>" * n + b"x"),
    # <p> inside <button>, many open <p> in list items, headings closing headings.
    "p-in-button": lambda n: _page(b"<button>" + b"<p>x" * n + b"</button>"),
    "li-unclosed": lambda n: _page(b"<ul>" + b"<li>x" * n + b"</ul>"),
    "headings-nested": lambda n: _page(b"<h1>x" * n),
    # Huge comments: one long, many short; an unclosed one.
    "comment-long": lambda n: _page(b"<!--" + b"c" * (10 * n) + b"-->"),
    "comments-many": lambda n: _page(b"<!--c-->" * n),
    "comment-unclosed": lambda n: _page(b"<!--" + b"<p>x</p>" * n),
    # Many character references, and the tokenizer's slow states.
    "entities": lambda n: _page(b"<p>" + b"&amp;" * n + b"</p>"),
    "script-escape": lambda n: _page(b"<script><!--<script>" + b"x" * (10 * n) + b"</script>"),
}


def _child(shape: str, n: int, what: str) -> None:
    """In the child process: build the page, time one thing, print its CPU seconds as JSON."""
    import time

    data = SHAPES[shape](n)
    if what == "parse":
        from selectolax.lexbor import LexborHTMLParser

        html = data.decode("utf-8")
        t = time.process_time()
        LexborHTMLParser(html)
        print(json.dumps({"cpu_s": time.process_time() - t}))
        return
    from cleaner.api import clean_html
    from cleaner.config import load_config

    config = load_config()
    clean_html(b"<p>warm up the model</p>", config=config)
    t = time.process_time()
    r = clean_html(data, config=config)
    print(json.dumps({"cpu_s": time.process_time() - t, "status": r.status, "reason": r.reason,
                      "capped": list(r.markup_capped)}))


def measure(shape: str, n: int, what: str, limit_s: float) -> dict:
    """CPU seconds of `what` (parse, clean) on the shape's page of n units, cut at limit_s seconds."""
    cmd = [sys.executable, __file__, "--child", shape, str(n), what]
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=limit_s + 30)
    except subprocess.TimeoutExpired:
        return {"cpu_s": None}
    if out.returncode != 0:
        return {"cpu_s": None, "error": out.stderr.strip().splitlines()[-1:]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def _limited(cmd_limit: float) -> None:
    """Cut the child at `cmd_limit` seconds of CPU (RLIMIT_CPU), so the wall-clock timeout is a backstop."""
    import resource

    resource.setrlimit(resource.RLIMIT_CPU, (int(cmd_limit) + 1, int(cmd_limit) + 2))


def run(shapes: list[str], start: int, limit_s: float, stop_s: float, max_bytes: int, clean: bool) -> list[dict]:
    """Double each shape from `start`: Lexbor's raw parse until it passes stop_s (then "-": not measured on, as
    it only grows), the whole clean_html (with --clean) until it passes limit_s or the page max_bytes."""
    rows = []
    for shape in shapes:
        n = start
        parse_done = False
        while True:
            size = len(SHAPES[shape](n))
            if size > max_bytes:
                break
            row: dict = {"shape": shape, "n": n, "bytes": size}
            if not parse_done:
                row["parse_s"] = measure(shape, n, "parse", limit_s)["cpu_s"]
                parse_done = row["parse_s"] is None or row["parse_s"] > stop_s
            if clean:
                c = measure(shape, n, "clean", limit_s)
                row.update(clean_s=c["cpu_s"], outcome=c.get("reason") or c.get("status"),
                           capped=",".join(c.get("capped") or ()))
            rows.append(row)
            print(json.dumps(row), flush=True)
            if parse_done and (not clean or row["clean_s"] is None or row["clean_s"] > limit_s):
                break
            n *= 2
    return rows


def guard_cost(every: int, repeat: int) -> dict:
    """What the guard costs ordinary pages: wall-clock time of `guard_markup` on every `every`-th shared page
    (decoded), best of `repeat`, against the whole `clean_html` of the page (best of `repeat`), and the
    nesting-only guard of before for comparison. Medians over the pages, in microseconds and as a share."""
    import gzip
    import statistics
    import time

    from cleaner.api import clean_html
    from cleaner.config import load_config
    from cleaner.page.decode import decode_html
    from cleaner.page.markup_guard import MarkupLimits, guard_markup

    config = load_config()
    limits = MarkupLimits.from_config(config)
    nesting_only = MarkupLimits(limits.max_nesting, 1 << 62, 1 << 62, 1 << 62)
    data_dir = ROOT.parent / "shared" / "data"
    paths = sorted(p for p in data_dir.glob("*/html/*") if p.name.endswith((".html", ".html.gz")))[::every]
    clean_html(b"<p>warm up the model</p>", config=config)

    def best(f) -> float:
        times = []
        for _ in range(repeat):
            t = time.perf_counter()
            f()
            times.append(time.perf_counter() - t)
        return min(times)

    guard_us, old_us, page_ms, share = [], [], [], []
    for path in paths:
        raw = path.read_bytes()
        data = gzip.decompress(raw) if path.name.endswith(".gz") else raw
        text = decode_html(data, config=config).text
        g = best(lambda text=text: guard_markup(text, limits))
        o = best(lambda text=text: guard_markup(text, nesting_only))
        c = best(lambda data=data: clean_html(data, config=config))
        guard_us.append(g * 1e6)
        old_us.append(o * 1e6)
        page_ms.append(c * 1e3)
        share.append(g / c)
    return {"pages": len(paths), "guard_us_median": statistics.median(guard_us),
            "nesting_only_us_median": statistics.median(old_us), "page_ms_median": statistics.median(page_ms),
            "share_median": statistics.median(share), "share_of_total": sum(guard_us) / 1e3 / sum(page_ms),
            "share_p90": statistics.quantiles(share, n=10)[-1]}


def _fmt(row: dict, key: str, limit_s: float) -> str:
    if key not in row:
        return "-"
    return f">{limit_s:g}" if row[key] is None else f"{row[key]:.2f}"


def markdown(rows: list[dict], limit_s: float) -> str:
    lines = ["| shape | n | bytes | Lexbor parse alone (before), CPU s | clean_html with the guard, CPU s | outcome |",
             "|---|---|---|---|---|---|"]
    for r in rows:
        outcome = (r.get("outcome") or "-") + (f" ({r['capped']} capped)" if r.get("capped") else "")
        lines.append(f"| {r['shape']} | {r['n']:,} | {r['bytes']:,} | {_fmt(r, 'parse_s', limit_s)} | "
                     f"{_fmt(r, 'clean_s', limit_s)} | {outcome} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--child"]:
        _limited(float(__import__("os").environ.get("BOMB_LIMIT_S", "60")))
        _child(argv[1], int(argv[2]), argv[3])
        return 0
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shapes", default=",".join(SHAPES), help="comma-separated shape names (default: all)")
    ap.add_argument("--start", type=int, default=2500, help="first n of every shape (doubled each step)")
    ap.add_argument("--limit-s", type=float, default=20.0, help="CPU seconds after which a measurement is cut")
    ap.add_argument("--stop-s", type=float, default=5.0, help="stop timing the raw parse once it passes this")
    ap.add_argument("--max-bytes", type=int, default=10_000_000, help="stop doubling at pages this large")
    ap.add_argument("--no-clean", action="store_true", help="time the raw parse only")
    ap.add_argument("--markdown", type=Path, help="also write the table to this file")
    ap.add_argument("--guard-cost", action="store_true",
                    help="instead: what the guard costs the shared pages (wall clock, medians; run on a quiet machine)")
    ap.add_argument("--every", type=int, default=1, help="with --guard-cost: every Nth shared page")
    ap.add_argument("--repeat", type=int, default=3, help="with --guard-cost: best of this many timings")
    a = ap.parse_args(argv)
    if a.guard_cost:
        print(json.dumps(guard_cost(a.every, a.repeat), indent=1))
        return 0
    __import__("os").environ["BOMB_LIMIT_S"] = str(a.limit_s)
    shapes = [s for s in a.shapes.split(",") if s]
    unknown = [s for s in shapes if s not in SHAPES]
    if unknown:
        ap.error(f"unknown shapes {unknown}; known: {', '.join(SHAPES)}")
    rows = run(shapes, a.start, a.limit_s, a.stop_s, a.max_bytes, not a.no_clean)
    text = markdown(rows, a.limit_s)
    sys.stdout.write("\n" + text)
    if a.markdown:
        a.markdown.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
