#!/usr/bin/env python
"""The segmenter's walk, compiled (cleaner/page/compiled_walk.pyx) against its readable reference
(cleaner.page.segment._walk, itself compiled by mypyc), on the same parsed pages.

    .venv/bin/python scripts/bench_walk.py [--sets wcxb] [--every 5] [--rounds 3]

Each page is decoded and parsed once (Lexbor's parse, timed too, for scale); then, round after round, every page is
walked by the reference and by the compiled walk in turn, by wall clock in a quiet loop with the runtime's
garbage-collector thresholds ([runtime], as every cleaning process sets them). Prints the median ms a page of each
round and the ratio, and checks that both walks give the same Segmentation on every page (exit 1 if not).
Figures: docs/speed.md, stop 48.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data"))
    ap.add_argument("--sets", default="wcxb", help="comma-separated shared sets")
    ap.add_argument("--every", type=int, default=5, help="every N-th page")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args(argv)

    from cleaner.config import load_config
    from cleaner.gold.data import find_pages
    from cleaner.page import segment
    from cleaner.page.decode import decode_html
    from cleaner.page.segment import parse_html
    from cleaner.tools.runtime import tune_gc

    try:
        from cleaner.page import compiled_walk  # type: ignore[attr-defined]
    except ImportError as exc:
        print(f"the compiled walk is not built or does not load ({exc}): scripts/build_native.py", file=sys.stderr)
        return 2
    config = load_config()
    tune_gc(config)
    texts = [decode_html(p.read_html()).text for p in find_pages(args.data, args.sets.split(","))[:: args.every]]
    parse_times = []
    parsed = []
    for text in texts:
        t0 = time.perf_counter()
        parsed.append(parse_html(text, config))
        parse_times.append((time.perf_counter() - t0) * 1000)
    differ = sum(segment._walk(p, config) != compiled_walk.walk(p, config) for p in parsed)
    walks = {"reference (mypyc over selectolax's nodes)": segment._walk,
             "compiled (Cython over Lexbor)": compiled_walk.walk}
    medians: dict[str, list[float]] = {name: [] for name in walks}
    for _ in range(args.rounds):
        for name, walk in walks.items():
            times = []
            for p in parsed:
                t0 = time.perf_counter()
                walk(p, config)
                times.append((time.perf_counter() - t0) * 1000)
            medians[name].append(statistics.median(times))
    print(f"{len(parsed)} pages of {args.sets}, wall ms a page (median over pages, each round; median of rounds); "
          f"{differ} pages walked differently")
    print(f"| parse (Lexbor, for scale) | {statistics.median(parse_times):.2f} | |")
    for name, values in medians.items():
        print(f"| {name} | {' / '.join(f'{v:.2f}' for v in values)} | {statistics.median(values):.2f} |")
    ref, new = (statistics.median(v) for v in medians.values())
    print(f"compiled / reference: {new / ref:.2f}")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
