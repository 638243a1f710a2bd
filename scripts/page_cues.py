#!/usr/bin/env python
"""Where the `cue` family's page-level attributes fire on the wcxb pages, by WCXB's page type.

    .venv/bin/python scripts/page_cues.py [--data ../shared/data] [--every 4]

For every `--every`-th wcxb page (read as clean_html reads it: cleaner.page.pipeline.read_page), prints a
Markdown table: per page type, the share of pages given each `cue.page` value (cleaner.page.page_type) and the
share of blocks with `cue.repeat`, `cue.repeat-links` and `cue.code` (docs/modern.md, section 3).
With `--time`, also the CPU milliseconds per page of preparing the features (segmenting and extracting,
the default families with and without `cue`) over every `--every`-th page of all shared sets: the median of
`--rounds` rounds, the two variants alternated within each round.
"""

from __future__ import annotations

import argparse
import csv
import statistics
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from cleaner.config import load_config  # noqa: E402
from cleaner.gold.data import find_pages  # noqa: E402
from cleaner.page.features import DEFAULT_FAMILIES, FeatureExtractor  # noqa: E402
from cleaner.page.pipeline import PageRejected, read_page  # noqa: E402

BLOCK_CUES = ("cue.repeat", "cue.repeat-links", "cue.code")


def fire_table(data: Path, every: int) -> str:
    config = load_config()
    extractor = FeatureExtractor(config, DEFAULT_FAMILIES + ("cue",))
    kinds = extractor.cues.page_typer.names
    with open(data / "wcxb" / "pages.tsv", encoding="utf-8") as fh:
        page_type = {row["id"]: row["page_type"] for row in csv.DictReader(fh, delimiter="\t")}
    pages = find_pages(data, ["wcxb"])[::every]
    n_pages: Counter = Counter()
    given: dict[str, Counter] = defaultdict(Counter)
    blocks: Counter = Counter()
    fired: dict[str, Counter] = defaultdict(Counter)
    for page in pages:
        kind = page_type[page.id]
        n_pages[kind] += 1
        try:
            read = read_page(page.read_html(), config)
        except PageRejected:
            given[kind]["(no blocks)"] += 1
            continue
        seg = read.segmentation
        rows = extractor.extract(seg.blocks, page=seg.page)
        given[kind][next(a for a in rows[0] if a.startswith("cue.page="))[9:]] += 1
        blocks[kind] += len(rows)
        for row in rows:
            names = {a.split("=", 1)[0] for a in row if a.startswith("cue.")}
            for cue in BLOCK_CUES:
                if cue in names:
                    fired[kind][cue] += 1
    head = ["page type (pages)"] + [f"`{k}`" for k in kinds] + ["blocks `repeat`", "`repeat-links`", "`code`"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for kind in sorted(n_pages, key=lambda k: -n_pages[k]):
        n = n_pages[kind]
        cells = [f"{kind} ({n})"] + [f"{given[kind][k] / n:.2f}" if given[kind][k] else "" for k in kinds]
        cells += [f"{fired[kind][c] / max(blocks[kind], 1):.2f}" for c in BLOCK_CUES]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def time_table(data: Path, every: int, rounds: int) -> str:
    config = load_config()
    variants = {"default families": FeatureExtractor(config), "with `cue`": FeatureExtractor(
        config, DEFAULT_FAMILIES + ("cue",))}
    blobs = [p.read_html() for p in find_pages(data)[::every]]
    results: dict[str, list[float]] = defaultdict(list)
    for r in range(rounds):
        order = list(variants) if r % 2 == 0 else list(reversed(variants))
        for name in order:
            extractor = variants[name]
            spent = []
            for blob in blobs:
                c0 = time.thread_time()
                try:
                    seg = read_page(blob, config).segmentation
                except PageRejected:
                    continue
                extractor.extract(seg.blocks, page=seg.page)
                spent.append((time.thread_time() - c0) * 1000)
            results[name].append(statistics.median(spent))
    lines = [f"| variant ({len(blobs)} pages) | " + " | ".join(f"round {r + 1}" for r in range(rounds)) + " | median |",
             "|" + "---|" * (rounds + 2)]
    for name, values in results.items():
        lines.append(f"| {name} | " + " | ".join(f"{v:.2f}" for v in values) + f" | {statistics.median(values):.2f} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data"))
    ap.add_argument("--every", type=int, default=4)
    ap.add_argument("--time", action="store_true")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args(argv)
    data = Path(args.data)
    if args.time:
        print(time_table(data, args.every, args.rounds))
    else:
        print(fire_table(data, args.every))
    return 0


if __name__ == "__main__":
    sys.exit(main())
