#!/usr/bin/env python
"""What the Markdown costs (issue 42: at most 10 % more per page, and only when asked for).

    .venv/bin/python scripts/markdown_cost.py [--data ../shared/data] [--every 6] [--rounds 5]

Every `every`-th shared page (all sets, wcxb included) is cleaned `rounds` times without and with
`markdown=True`, the two alternating (which goes first swaps every round), in one quiet loop in one
process with the model loaded once. Per page, the median wall-clock time (perf_counter) and CPU time
(process_time) of the whole `clean_html` call each way; then over the pages: the median of the per-page ratios,
the ratio of the per-page medians' medians and of their sums, for all pages and for the pages whose tree was
walked again (a kept <pre> or data table: `_walked`), and the Markdown stage's own
milliseconds (`timings_ms["markdown"]`). The text of the two runs is checked to be the same.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from cleaner.api import clean_html  # noqa: E402
from cleaner.gold.data import find_pages  # noqa: E402
from cleaner.label.model import load_model  # noqa: E402


def _timed(data: bytes, model, markdown: bool):
    w, c = time.perf_counter(), time.process_time()
    result = clean_html(data, model=model, markdown=markdown)
    return time.perf_counter() - w, time.process_time() - c, result


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data"))
    ap.add_argument("--every", type=int, default=6)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args(argv)
    model = load_model()
    pages = find_pages(args.data)[:: args.every]
    rows = []  # (wall off, wall on, cpu off, cpu on, markdown ms, walked)
    t0 = time.monotonic()
    for page in pages:
        data = page.read_html()
        clean_html(data, model=model, markdown=True)  # (warm: the page's first parse fills caches)
        off_w: list[float] = []
        on_w: list[float] = []
        off_c: list[float] = []
        on_c: list[float] = []
        stage: list[float] = []
        walked = False
        for r in range(args.rounds):
            for markdown in ((False, True) if r % 2 == 0 else (True, False)):
                w, c, result = _timed(data, model, markdown)
                (on_w if markdown else off_w).append(w)
                (on_c if markdown else off_c).append(c)
                if markdown:
                    stage.append(result.timings_ms.get("markdown", 0.0))
                    walked = walked or _walked(result)
                else:
                    plain = result.plain
            if result.plain != plain:
                raise SystemExit(f"{page.key}: the text differs with markdown=True")
        if not result.ok:
            continue
        rows.append((statistics.median(off_w), statistics.median(on_w), statistics.median(off_c),
                     statistics.median(on_c), statistics.median(stage), walked))
    print(f"{len(rows)} cleaned pages of {len(pages)} (every {args.every}-th shared page), {args.rounds} rounds each "
          f"way, {time.monotonic() - t0:.0f} s\n")
    print("| pages | n | median ratio (wall) | ratio of medians (wall) | ratio of sums (wall) | median ratio (CPU) | "
          "ratio of sums (CPU) | Markdown stage, median ms | median page ms without |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, subset in (("all", rows), ("with code or a table", [r for r in rows if r[5]]),
                         ("without", [r for r in rows if not r[5]])):
        if not subset:
            continue
        ratio_w = statistics.median(r[1] / r[0] for r in subset)
        med_w = statistics.median(r[1] for r in subset) / statistics.median(r[0] for r in subset)
        sum_w = sum(r[1] for r in subset) / sum(r[0] for r in subset)
        ratio_c = statistics.median(r[3] / r[2] for r in subset if r[2] > 0)
        sum_c = sum(r[3] for r in subset) / sum(r[2] for r in subset)
        print(f"| {name} | {len(subset)} | {ratio_w:.3f} | {med_w:.3f} | {sum_w:.3f} | {ratio_c:.3f} | {sum_c:.3f} | "
              f"{statistics.median(r[4] for r in subset):.2f} | {statistics.median(r[0] for r in subset) * 1000:.1f} |")
    return 0


def _walked(result) -> bool:
    """Whether the Markdown walked the tree again, as its output shows it: a fenced block, a pipe table or a
    fallback (a table candidate found to be a layout table is walked too, and counted with the others)."""
    md = result.markdown or ""
    return "```" in md or "| --- |" in md or result.markdown_fallback is not None


if __name__ == "__main__":
    sys.exit(main())
