"""The page metadata (cleaner.page.metadata) against trafilatura's, and htmldate as the date's reader: agreement
per field and CPU per page on the shared modern pages.

    .venv/bin/python scripts/bench_metadata.py [--data ../shared/data] [--sets chaos,big5-2017,fundus,wcxb]
        [--every 4] [--show-dates 10]

For every page read: the cleaner's decode + parse + segmentation (the walk gathers the head and the JSON-LD),
then `read_metadata` alone is timed (what the metadata adds to the walk, which read the <meta> values anyway);
trafilatura's `extract_metadata` (its own parse; the reference; its date is htmldate's, extensive search on);
htmldate's `find_date` on the page's text, fast (extensive_search off) and as trafilatura calls it. Each is
timed with time.process_time around one call.

Agreement per field, both sides normalised (whitespace, case): `equal`, `differ`, `only ours` (trafilatura
has none), `only trafilatura`, `neither`. Titles also count as `contained` when one holds the other (a <title>
with its " | Site" suffix against the headline). The wcxb pages' page type is compared with wcxb's own (pages.tsv).
trafilatura and htmldate are the project's dev dependencies (scripts/peers.py); cleaner/ imports neither.
"""

from __future__ import annotations

import argparse
import csv
import re
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from cleaner.api import page_typer  # noqa: E402
from cleaner.config import load_config  # noqa: E402
from cleaner.gold.data import find_pages  # noqa: E402
from cleaner.page.decode import decode_html  # noqa: E402
from cleaner.page.metadata import iso_date, read_metadata  # noqa: E402
from cleaner.page.segment import parse_html, segment_tree  # noqa: E402
from cleaner.page.text import normalise_space  # noqa: E402

FIELDS = ("title", "published", "author", "site_name", "canonical_url", "description")
# trafilatura's Document attribute of each field
TRAFILATURA = {"title": "title", "published": "date", "author": "author", "site_name": "sitename",
               "canonical_url": "url", "description": "description"}
# wcxb's page types as the cue family's vocabulary names them
# A day in a URL path (/2017/04/08/, /2024-05-03-): a news site's own record of the day it published the page,
# the reference the date readers are checked against where a page's URL has one.
URL_DATE = re.compile(r"/((?:19|20)\d\d)[/-](\d\d)[/-](\d\d)(?=[/-]|$|\.)")
WCXB_TYPE = {"article": "article", "forum": "forum", "product": "product", "documentation": "docs",
             "listing": "listing", "collection": "listing", "service": "service"}


def url_date(url: str | None) -> str | None:
    m = URL_DATE.search(url or "")
    return iso_date("-".join(m.groups())) if m else None


def _norm(value: str | None) -> str:
    return normalise_space(value or "").casefold().rstrip("/")


def compare(ours: str | None, theirs: str | None, field: str) -> str:
    a, b = _norm(ours), _norm(theirs)
    if field == "author":  # trafilatura splits authors at commas and "and", joined by "; "
        a, b = (v.replace(" and ", "; ").replace(", ", "; ") for v in (a, b))
    if not a and not b:
        return "neither"
    if not b:
        return "only ours"
    if not a:
        return "only trafilatura"
    if a == b:
        return "equal"
    if field == "title" and (a in b or b in a):
        return "contained"
    return "differ"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--sets", default="chaos,big5-2017,fundus,wcxb")
    ap.add_argument("--every", type=int, default=4, help="every Nth page of each set")
    ap.add_argument("--show-dates", type=int, default=10, help="list this many pages where our date and "
                    "htmldate's differ (to check them by hand)")
    args = ap.parse_args(argv)
    import htmldate
    import trafilatura

    config = load_config()
    typer = page_typer(config)
    sets = args.sets.split(",")
    pages = [p for p in find_pages(args.data, sets)]
    by_set: dict[str, list] = {}
    for p in pages:
        by_set.setdefault(p.dataset, []).append(p)
    chosen = [p for s in sets for p in by_set.get(s, [])[:: args.every]]
    wcxb_types: dict[str, str] = {}
    wcxb_types_url: dict[str, str] = {}
    url_days: dict[str, Counter] = {k: Counter() for k in ("ours", "htmldate fast", "htmldate extensive")}
    tsv = args.data / "wcxb" / "pages.tsv"
    if tsv.exists():
        with open(tsv, newline="") as fh:
            rows = list(csv.DictReader(fh, delimiter="\t"))
        wcxb_types = {r["id"]: r["page_type"] for r in rows}
        wcxb_types_url = {r["id"]: r["url"] for r in rows}

    agreement: dict[str, Counter] = {f: Counter() for f in FIELDS}
    per_set: dict[tuple[str, str], Counter] = {}
    date_vs: dict[str, Counter] = {"htmldate fast": Counter(), "htmldate extensive": Counter()}
    cpu: dict[str, list[float]] = {k: [] for k in ("read_metadata", "page type", "trafilatura extract_metadata",
                                                   "htmldate fast", "htmldate extensive")}
    types: Counter = Counter()
    dated_by_type: dict[str, Counter] = {}  # wcxb page type -> pages, and pages each reader dates
    differing: list[tuple[str, str | None, str | None, str | None]] = []
    for page in chosen:
        data = page.read_html()
        html = decode_html(data).text
        seg = segment_tree(parse_html(html, config), config)
        t = time.process_time()
        kind = typer.of(seg.page)
        cpu["page type"].append(time.process_time() - t)
        t = time.process_time()
        meta = read_metadata(seg.page, seg.title, kind)
        cpu["read_metadata"].append(time.process_time() - t)
        t = time.process_time()
        theirs = trafilatura.extract_metadata(html)
        cpu["trafilatura extract_metadata"].append(time.process_time() - t)
        dates = {}
        for name, extensive in (("htmldate fast", False), ("htmldate extensive", True)):
            t = time.process_time()
            try:
                dates[name] = htmldate.find_date(html, extensive_search=extensive, original_date=True,
                                                 outputformat="%Y-%m-%d")
            except Exception:  # htmldate raises on some broken pages; that page has no date from it
                dates[name] = None
            cpu[name].append(time.process_time() - t)
        for field in FIELDS:
            value = getattr(theirs, TRAFILATURA[field], None) if theirs is not None else None
            if field == "published":
                value = iso_date(value)
            outcome = compare(getattr(meta, field), value, field)
            agreement[field][outcome] += 1
            per_set.setdefault((page.dataset, field), Counter())[outcome] += 1
        reference = iso_date(theirs.date) if theirs is not None else None
        url = (wcxb_types_url.get(page.id) if page.dataset == "wcxb" else None) or meta.canonical_url or (
            theirs.url if theirs is not None else None)
        day = url_date(url)
        if day:
            for name, value in (("ours", meta.published), *dates.items()):
                url_days[name][
                    "right" if value == day else "none" if not value else "wrong"] += 1
        for name, value in dates.items():
            date_vs[name][compare(value, reference, "published")] += 1
        if meta.published != dates["htmldate extensive"] and len(differing) < args.show_dates:
            differing.append((page.key, meta.published, dates["htmldate fast"], dates["htmldate extensive"]))
        if page.dataset == "wcxb" and page.id in wcxb_types:
            dated = dated_by_type.setdefault(wcxb_types[page.id], Counter())
            dated["pages"] += 1
            for name, value in (("ours", meta.published), *dates.items()):
                dated[name] += bool(value)
            types[(meta.page_type or "unknown", WCXB_TYPE.get(wcxb_types[page.id], wcxb_types[page.id]))] += 1

    n = len(chosen)
    print(f"{n} pages ({', '.join(f'{s} {len(by_set.get(s, [])[:: args.every])}' for s in sets)}), "
          f"every {args.every}th; trafilatura {trafilatura.__version__}, htmldate {htmldate.__version__}\n")
    outcomes = ("equal", "contained", "differ", "only ours", "only trafilatura", "neither")
    print("| field | " + " | ".join(outcomes) + " | agree |")
    print("|---|" + "---|" * (len(outcomes) + 1))
    for field in FIELDS:
        c = agreement[field]
        agree = (c["equal"] + c["contained"] + c["neither"]) / n
        print(f"| {field} | " + " | ".join(str(c[o]) for o in outcomes) + f" | {agree:.3f} |")
    print("\nthe date of each reader against trafilatura's (htmldate, extensive search, original date):\n")
    print("| reader | " + " | ".join(outcomes) + " |")
    print("|---|" + "---|" * len(outcomes))
    ours = agreement["published"]
    print("| ours | " + " | ".join(str(ours[o]) for o in outcomes) + " |")
    for name, c in date_vs.items():
        print(f"| {name} | " + " | ".join(str(c[o]) for o in outcomes) + " |")
    print("\nthe date of each reader against the day in the page's URL (pages whose URL has one, "
          f"{sum(url_days['ours'].values())}):\n")
    print("| reader | right | wrong | none |")
    print("|---|---|---|---|")
    for name, c in url_days.items():
        print(f"| {name} | {c['right']} | {c['wrong']} | {c['none']} |")
    print("\nper set, equal (+ contained) / differ / only ours / only trafilatura:\n")
    for s in sets:
        cells = []
        for field in FIELDS:
            c = per_set.get((s, field), Counter())
            cells.append(f"{field} {c['equal'] + c['contained']}/{c['differ']}/{c['only ours']}/"
                         f"{c['only trafilatura']}")
        print(f"* {s}: " + ", ".join(cells))
    print("\nCPU ms per page (median, mean):\n")
    print("| step | median ms | mean ms |")
    print("|---|---|---|")
    for name, values in cpu.items():
        ms = [v * 1000 for v in values]
        print(f"| {name} | {statistics.median(ms):.3f} | {statistics.fmean(ms):.3f} |")
    if types:
        print("\nwcxb page type (ours -> wcxb's, pages):\n")
        ours_total: Counter = Counter()
        for (mine, _), k in types.items():
            ours_total[mine] += k
        for mine in sorted(ours_total, key=lambda m: -ours_total[m]):
            right = types[(mine, mine)]
            spread = ", ".join(f"{w} {k}" for (m, w), k in types.most_common() if m == mine)
            print(f"* {mine}: {ours_total[mine]} pages, {right} of wcxb's type ({spread})")
    if dated_by_type:
        print("\nwcxb pages given a date, by wcxb's page type (a service page or a product rarely has one):\n")
        print("| wcxb type | pages | ours | htmldate fast | htmldate extensive |")
        print("|---|---|---|---|---|")
        for kind, c in sorted(dated_by_type.items(), key=lambda kv: -kv[1]["pages"]):
            print(f"| {kind} | {c['pages']} | {c['ours']} | {c['htmldate fast']} | {c['htmldate extensive']} |")
    if differing:
        print("\npages where our date and htmldate's (extensive) differ: page, ours, htmldate fast, extensive")
        for row in differing:
            print("  " + "  ".join(str(v) for v in row))
    return 0


if __name__ == "__main__":
    sys.exit(main())
