#!/usr/bin/env python
"""Two cross-validation runs compared page by page, per set and per wcxb page type: the table a new cue is decided by.

    .venv/bin/python scripts/compare_pages.py BEFORE.tsv AFTER.tsv [--data ../shared/data] [--out FILE.md]

BEFORE and AFTER are `cleaner eval --cv --pages` tables (or `cleaner train --cv --pages`) of the same pages: a
baseline and a variant run with the same folds. For every set, every wcxb page type (`wcxb/pages.tsv`) and all pages:
the mean of each run, the paired difference with its 95 % bootstrap interval (2,000 resamples, seed 0, as
`cleaner eval --against`), the differences of word precision and recall, and how many pages went up and down by more
than 0.005. wcxb's rows are in WCXB's metric (the `wcxb_f1` column), word F1 beside it; the other sets in word F1.
A page only one table holds is left out and counted.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from cleaner.gold.data import load_page_types  # noqa: E402
from cleaner.gold.score import bootstrap_interval  # noqa: E402
from cleaner.learn.evaluate import read_page_table  # noqa: E402

MOVED = 0.005  # a page counts as up or down beyond this


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def _row(name: str, pairs: list[tuple[dict, dict]], metric: str) -> str:
    before = [float(a[metric] or a["word_f1"]) for a, _ in pairs]
    after = [float(b[metric] or b["word_f1"]) for _, b in pairs]
    diffs = [y - x for x, y in zip(before, after)]
    ci = bootstrap_interval(diffs)
    interval = "–" if ci is None else f"{ci[0]:+.4f} to {ci[1]:+.4f}"
    dp = _mean([float(b["word_p"]) - float(a["word_p"]) for a, b in pairs])
    dr = _mean([float(b["word_r"]) - float(a["word_r"]) for a, b in pairs])
    word = ""
    if metric != "word_f1":
        word = f" (word F1 {_mean([float(b['word_f1']) - float(a['word_f1']) for a, b in pairs]):+.4f})"
    up, down = sum(d > MOVED for d in diffs), sum(d < -MOVED for d in diffs)
    return (f"| {name} | {len(pairs)} | {_mean(before):.4f} | {_mean(after):.4f} | {_mean(diffs):+.4f}{word} "
            f"| {interval} | {dp:+.4f} / {dr:+.4f} | {up} / {down} |")


def compare(before: dict[str, dict], after: dict[str, dict], types: dict[str, str]) -> str:
    """The markdown table of `after` against `before` (page -> row of read_page_table)."""
    both = sorted(set(before) & set(after))
    groups: dict[str, list[tuple[dict, dict]]] = {}
    for page in both:
        pair = (before[page], after[page])
        dataset = before[page]["dataset"]
        groups.setdefault(dataset, []).append(pair)
        if page in types:
            groups.setdefault(f"{dataset} {types[page]}", []).append(pair)
    lines = ["| set / page type | pages | before | after | difference | 95 % paired interval "
             "| precision / recall difference | pages up / down |", "|---|---|---|---|---|---|---|---|"]
    for name in sorted(groups):
        pairs = groups[name]
        metric = "wcxb_f1" if all(a.get("wcxb_f1") for a, _ in pairs) else "word_f1"
        lines.append(_row(name, pairs, metric))
    lines.append(_row("all (word F1)", [(before[p], after[p]) for p in both], "word_f1"))
    left = len(set(before) ^ set(after))
    if left:
        lines.append(f"\n{left} pages are in one table only: left out.")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("before", type=Path, help="the baseline's per-page table")
    ap.add_argument("after", type=Path, help="the variant's per-page table")
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data",
                    help="the shared data, for wcxb's page types")
    ap.add_argument("--out", type=Path, help="also write the table here")
    args = ap.parse_args(argv)
    try:
        table = compare(read_page_table(args.before), read_page_table(args.after), load_page_types(args.data))
    except (OSError, ValueError) as exc:
        print(f"compare_pages: {exc}", file=sys.stderr)
        return 2
    print(table, end="")
    if args.out:
        args.out.write_text(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
