#!/usr/bin/env python
"""Instructions a page of the whole cleaning, counted by callgrind: a figure the machine's load does not move, so two
versions can be compared in any sitting (docs/speed.md quotes it at every step).

    .venv/bin/python scripts/count_instructions.py [--pages 60] [--top 40] [--keep DIR] [--model M --fold K]

Two runs of one loop under `valgrind --tool=callgrind`, at the same time (one a core):
  * the warm-up: the packaged default model loaded, then 30 wcxb pages cleaned (every 50th from the 2nd), which fills
    the name and text caches with what any page of 2025 brings;
  * the same, then N other wcxb pages (every 25th: 60 by default), each cleaned once.
Instructions a page = (second - first) / N: the cleaning of pages whose texts, id/class values and attribute names the
caches have not seen, as on a crawl, without the model's loading and the imports. Both runs read and decompress all
30 + N pages first, so the difference holds no gzip (at stop 52 it did: 3.3 M of its 92.8 M a page). (Until stop 51
the loop cleaned the same 30 pages twice, so half the pages found their texts cached: 74.7 M a page there is 102 M a
page here.)

The packaged default was trained on every wcxb page, so the id/class tokens of the pages counted are its own; a crawl's
pages come from sites no model saw. `--model M --fold K` counts a fold model of `cleaner eval --cv --unseen-sites
--fold-models` on pages of the fold it held out (the warm-up every 8th of them, the measured every 4th): sites it never
saw, what a crawl costs where the naming of new tokens matters (docs/speed.md, stop 69).

`--sets dragnet,cleaneval-final` counts the old sets' pages instead: smaller pages, where a page's fixed costs (the
settings, the model's calls, the metadata, the deadline's timer) weigh more than on the pages of 2025.

Prints the total a page and the inclusive count a page of the `--top` functions that cost most (the project's
compiled stages, Lexbor, the regexp engine). Needs valgrind (`apt-get install valgrind`; exit 2 without it) and the
compiled stages (scripts/build_native.py): with them missing, the pure-Python reference is counted, and said so.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# The loop each run executes (argv: data directory, number of measured pages, the project's root, 1 to clean the
# measured pages or 0 for the warm-up only, the config overlay); it prints the compiled status and how many pages
# timed out or failed (their counts would not be the cleaning's).
_LOOP = r"""
import gzip, os, sys
sys.path.insert(0, sys.argv[3])
import cleaner
from cleaner.api import clean_html
from cleaner.gold.data import find_pages
from cleaner.label.model import load_model
from cleaner.tools.runtime import tune_gc
from cleaner.config import load_config

# No CPU deadline: under callgrind a page takes ~50 times its CPU, and the deadline's SIGPROF would reject it
# (or, delivered late by valgrind after the handler is gone, kill the run).
config = load_config(sys.argv[5])
tune_gc(config)
pages = find_pages(sys.argv[1], sys.argv[8].split(","))
n, measured = int(sys.argv[2]), sys.argv[4] == "1"
model_path, fold = sys.argv[6] or None, int(sys.argv[7])
if fold >= 0:  # (a fold model's held-out pages: their sites are new to it, as a crawl's are)
    from cleaner.gold.data import load_folds
    folds = load_folds(sys.argv[1])
    pages = [p for p in pages if folds.get(p.key) == fold]
    warm_up, more = pages[1::8][:30], pages[::4][:n]
else:
    warm_up, more = pages[1::50], pages[::25][:n]
def raw(page):
    data = page.html_path.read_bytes()
    return gzip.decompress(data) if page.html_path.name.endswith(".gz") else data
# Both runs read and decompress every page, so the difference is the cleaning alone.
todo = [raw(p) for p in warm_up + more]
model = load_model(model_path)
# (two of these pages hold no text: rejected as no_text, as always; a timeout or an internal error is not the cleaning)
not_ok = sum(clean_html(data, model=model, config=config).reason in ("timeout", "internal_error")
             for data in todo[: len(warm_up) + (len(more) if measured else 0)])
print(cleaner.NATIVE_STATUS, not_ok, flush=True)
# Out without the interpreter's shutdown: its last collections walk every object left, and their cost moved with
# what the modules keep (stop 58: 0.66 M "a page" that was the shutdown's, not the pages').
os._exit(0)
"""


def _inclusive(out_file: Path) -> dict[str, int]:
    """Function -> inclusive instructions, from callgrind_annotate."""
    text = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--threshold=100", str(out_file)],
                          capture_output=True, text=True, check=True).stdout
    costs: dict[str, int] = {}
    for line in text.splitlines():
        m = re.match(r"\s*([\d,]+)\s+\(\s*[\d.]+%\)\s+(.*)$", line)
        if not m:
            continue
        name = re.sub(r"\s*\[.*\]\s*$", "", m.group(2)).strip()
        name = re.sub(r"^.*/(c|tmp-cython|Objects|Python|Modules)/", "", name)
        costs[name] = max(costs.get(name, 0), int(m.group(1).replace(",", "")))
    return costs


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--pages", type=int, default=60, help="pages measured after the warm-up (default 60)")
    ap.add_argument("--top", type=int, default=40, help="functions listed (default 40)")
    ap.add_argument("--keep", type=Path, help="keep the two callgrind files in this directory")
    ap.add_argument("--model", type=Path, help="the model to clean with (default: the packaged default, which was "
                    "trained on every wcxb page, so that the id/class tokens of the pages counted are all its own)")
    ap.add_argument("--fold", type=int, metavar="K",
                    help="with --model, a fold model of `cleaner eval --cv --fold-models`: warm up on and count "
                         "wcxb pages of its held-out fold K (folds.tsv) only, sites it never saw, as a crawl's")
    ap.add_argument("--sets", default="wcxb", help="the sets whose pages are counted, comma-separated (default wcxb, "
                    "the pages of 2025; the old sets' pages are smaller, so a page's fixed costs weigh more there)")
    args = ap.parse_args(argv)
    if args.fold is not None and args.model is None:
        ap.error("--fold K counts a fold model on its held-out pages: give it with --model")
    if shutil.which("valgrind") is None or shutil.which("callgrind_annotate") is None:
        print("valgrind is not installed (apt-get install valgrind)", file=sys.stderr)
        return 2
    work = Path(tempfile.mkdtemp(prefix="count-instructions-")) if args.keep is None else args.keep
    work.mkdir(parents=True, exist_ok=True)
    loop = work / "loop.py"
    loop.write_text(_LOOP)
    overlay = work / "no-deadline.toml"
    overlay.write_text("[limits]\ntime_budget_s = 0\n")
    # One string hash for every run: with Python's random one, each run's dictionaries and sets collide differently,
    # which moved a function's count by up to 0.3 M a page between two runs of the same code (stop 58).
    # One BLAS thread too: an idle OpenBLAS thread spinning beside the loop was counted, as the load of the moment let
    # it spin (0.14 M a page between two runs at stop 63).
    env = dict(os.environ, PYTHONHASHSEED=os.environ.get("PYTHONHASHSEED", "0"), OPENBLAS_NUM_THREADS="1")
    runs = {}
    for n in (0, args.pages):
        out = work / f"callgrind.{n}.out"
        runs[n] = (out, subprocess.Popen(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", sys.executable, str(loop),
             str(args.data), str(args.pages), str(ROOT), "1" if n else "0", str(overlay),
             str(args.model.resolve()) if args.model else "", str(-1 if args.fold is None else args.fold), args.sets],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env))
    status = ""
    for _, proc in runs.values():
        stdout, stderr = proc.communicate()
        if proc.returncode != 0:
            print(stderr[-2000:], file=sys.stderr)
            return 1
        status, not_ok = stdout.strip().rsplit(maxsplit=1)
        if not_ok != "0":
            print(f"{not_ok} pages timed out or failed: their counts are not the cleaning's", file=sys.stderr)
            return 1
    base, full = _inclusive(runs[0][0]), _inclusive(runs[args.pages][0])
    per_page = {name: (cost - base.get(name, 0)) / args.pages for name, cost in full.items()}
    where = "" if args.fold is None else f" of fold {args.fold} (held out of {args.model.name})"
    print(f"{status}\n{args.pages} {args.sets} pages{where} after a warm-up of 30: "
          f"{per_page.get('PROGRAM TOTALS', 0) / 1e6:.1f} M instructions a page\n")
    wanted = re.compile(r"CPyDef_|__pyx_pw_|__pyx_f_|lxb_html_document_parse$|sre_search$|_blake2b_hexdigest$"
                        r"|PyUnicode_DecodeUTF8Stateful$|gc_collect_main$")
    rows = sorted(((cost, name) for name, cost in per_page.items() if wanted.search(name)), reverse=True)
    for cost, name in rows[: args.top]:
        print(f"{cost / 1e6:7.2f}  {name[:140]}")
    if args.keep is None:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
