#!/usr/bin/env python
"""On how many article pages each convention keeps the headline: the figures of the README's table of conventions.

    .venv/bin/python scripts/count_headlines.py [--data ../shared/data] [--sets fundus big5-2017 chaos]

The gold of these sets begins with the article's headline. A page counts as keeping it when its cleaned text (the
shipped default model, `main` and `article`) begins with the gold's first line, both with their markup and spacing
taken out and case-folded. Pages whose gold is empty are left out.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from cleaner.api import clean_html  # noqa: E402
from cleaner.gold.data import find_pages  # noqa: E402
from cleaner.label.model import load_model  # noqa: E402

_MARKUP = re.compile(r"<[^>]+>")


def _normal(text: str) -> str:
    return " ".join(_MARKUP.sub(" ", text).split()).casefold()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--sets", nargs="+", default=["fundus", "big5-2017", "chaos"])
    args = ap.parse_args(argv)
    model = load_model()
    print("| set | pages | `main` keeps the headline | `article` keeps it |\n|---|---|---|---|")
    for name in args.sets:
        kept = {"main": 0, "article": 0}
        pages = 0
        for page in find_pages(args.data, [name]):
            lines = [line for line in page.read_gold().splitlines() if _normal(line)]
            if not lines:
                continue
            pages += 1
            headline = _normal(lines[0])
            for convention in kept:
                text = clean_html(page.read_html(), model=model, convention=convention).plain or ""
                kept[convention] += _normal(text).startswith(headline)
        print(f"| {name} | {pages} | {kept['main']} | {kept['article']} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
