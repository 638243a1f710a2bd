#!/usr/bin/env python
"""Soak benchmark: clean many pages in one Python process and watch resident memory.

    .venv/bin/python scripts/soak.py [--pages 50000] [--model M]

Cycles through the shared pages, making every page's text unique (a page number is
appended to each paragraph and list item) so that the bounded caches of the feature
extractor and the model codec fill up and are recycled as on a real crawl. Prints the
resident set size (VmRSS) after a warm-up, then at every 10 % and at the end, and the
growth from the first to the last reading; and the pages a second, over the run so far and over the last 10 %, and at
the end over each whole pass through the shared pages. A cost that grows with what the process has seen shows as a
falling rate of the passes: each pass cleans the same pages (but for their numbers), where a tenth of the run holds
another mix of the sets than the tenth before (the old sets' small pages, wcxb's large ones), so the tenths' rates
move with the mix too. The garbage collector is set up as in the product's processes (`[runtime]`,
cleaner/tools/runtime.py) unless `--gc python`.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from cleaner.api import clean_html  # noqa: E402
from cleaner.config import load_config  # noqa: E402
from cleaner.gold.data import find_pages  # noqa: E402
from cleaner.label.model import load_model  # noqa: E402
from cleaner.tools.runtime import tune_gc  # noqa: E402


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pages", type=int, default=50_000)
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data"))
    ap.add_argument("--model")
    ap.add_argument("--gc", choices=("tuned", "python"), default="tuned",
                    help="the collector's thresholds: as the product's processes set them (default) or Python's own")
    args = ap.parse_args(argv)
    if args.gc == "tuned":
        tune_gc(load_config())
    model = load_model(args.model)
    blobs = [p.read_html() for p in find_pages(args.data)]
    for b in blobs[:200]:  # warm-up: tables, regexps, tagger, caches partly filled
        clean_html(b, model=model)
    readings = [(0, rss_mb())]
    print(f"{'pages':>8} {'RSS MB':>8} {'pages/s':>8} {'last 10 %':>9}")
    print(f"{0:>8} {readings[0][1]:>8.1f}")
    t0 = t_step = t_pass = time.time()
    outcomes: dict[str, int] = {}
    passes: list[float] = []  # pages a second of each whole pass through the shared pages
    step = max(1, args.pages // 10)
    for i in range(1, args.pages + 1):
        b = blobs[i % len(blobs)]
        tag = b" s%d" % i
        res = clean_html(b.replace(b"</p>", tag + b"</p>").replace(b"</li>", tag + b"</li>"), model=model)
        outcomes[res.reason or "cleaned"] = outcomes.get(res.reason or "cleaned", 0) + 1
        if i % len(blobs) == 0:
            now = time.time()
            passes.append(len(blobs) / (now - t_pass))
            t_pass = now
        if i % step == 0:
            readings.append((i, rss_mb()))
            now = time.time()
            print(f"{i:>8} {readings[-1][1]:>8.1f} {i / (now - t0):>8.1f} {step / (now - t_step):>9.1f}", flush=True)
            t_step = now
    growth = readings[-1][1] - readings[0][1]
    mid = readings[len(readings) // 2][1]
    print(f"\nRSS start {readings[0][1]:.1f} MB, middle {mid:.1f} MB, end {readings[-1][1]:.1f} MB; "
          f"growth start->end {growth:+.1f} MB, middle->end {readings[-1][1] - mid:+.1f} MB; outcomes {outcomes}")
    if passes:
        print(f"pages/s of each whole pass through the {len(blobs):,} shared pages: "
              + ", ".join(f"{rate:.1f}" for rate in passes))
    return 0


if __name__ == "__main__":
    sys.exit(main())
