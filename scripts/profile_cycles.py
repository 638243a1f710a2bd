#!/usr/bin/env python
"""Where the cleaning's time goes, by sampling the CPU (`perf record`), per function of the project, Lexbor and Python.

    .venv/bin/python scripts/profile_cycles.py [--every 2] [--top 40] [--keep DIR]

`scripts/count_instructions.py` counts instructions: a figure the machine's load does not move, but blind to what an
instruction waits for. A lookup in a dict of 30,000 texts is a few hundred instructions whether or not its entries are
in the CPU's caches; sampled, such lookups and the allocator took a fifth of the time (docs/speed.md, stop 74). This
script samples what the counts cannot see:

  * one loop cleans the shared pages (every `--every`-th, shuffled as a crawl's sites are) twice, the configured
    garbage collector as in the product, and marks when its second pass starts: the second pass is the one reported,
    its caches as warm as a long-running worker's;
  * `perf record --call-graph dwarf` samples it at 1 kHz; each sample's stack is read back (`perf script`), and
    charged to the innermost function of the project (the compiled stages' `CPyDef_` and `__pyx_` functions, and
    Lexbor's `lxb_html_document_parse`) and, inclusive, to every such function on its stack.

Prints the share of the second pass's samples of the `--top` functions, inclusive and innermost, and of the leaves
(malloc, dict lookups, ...) under each. Shares, not times: compare two versions with scripts/bench_versions.sh.
Needs `perf` (Debian's `linux-perf`; exit 2 without it) and the compiled stages (scripts/build_native.py).
"""

from __future__ import annotations

import argparse
import collections
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# The loop perf samples (argv: data directory, every N-th page, the project's root). Prints the monotonic clock
# at the start and at the end of the second pass, which perf's samples are stamped with (`-k CLOCK_MONOTONIC`): the
# interpreter's exit (its last collections walk every object) is not the pages'.
_LOOP = r"""
import gzip, random, sys, time
sys.path.insert(0, sys.argv[3])
from cleaner.api import clean_html
from cleaner.config import load_config
from cleaner.gold.data import find_pages
from cleaner.label.model import load_model
from cleaner.tools.runtime import tune_gc
config = load_config()
tune_gc(config)
pages = find_pages(sys.argv[1])[:: int(sys.argv[2])]
def raw(page):
    data = page.html_path.read_bytes()
    return gzip.decompress(data) if page.html_path.name.endswith(".gz") else data
todo = [raw(p) for p in pages]
random.Random(0).shuffle(todo)
model = load_model(None)
for data in todo:
    clean_html(data, model=model, config=config)
print("SECOND_PASS", time.clock_gettime(time.CLOCK_MONOTONIC), flush=True)
for data in todo:
    clean_html(data, model=model, config=config)
print("END", time.clock_gettime(time.CLOCK_MONOTONIC), flush=True)
"""

_PROJECT = re.compile(r"CPyDef_cleaner|__pyx_p[fw]_7cleaner|__pyx_f_7cleaner|lxb_html_document_parse")


def samples(script_output: str):
    """Each sample's stack, innermost first, its frames' names without `(inlined)`."""
    for chunk in script_output.split("\n\n"):
        lines = [line.strip() for line in chunk.strip().splitlines()[1:]]
        frames = [re.sub(r"^[0-9a-f]+ ", "", line).replace(" (inlined)", "") for line in lines if line]
        if frames:
            yield frames


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data"))
    ap.add_argument("--every", type=int, default=2, help="every N-th shared page (2: 2,262 pages, ~1 min a pass)")
    ap.add_argument("--top", type=int, default=40)
    ap.add_argument("--keep", help="keep perf.data and the loop in this directory")
    args = ap.parse_args(argv)
    if shutil.which("perf") is None:
        print("perf is not installed (apt-get install linux-perf)", file=sys.stderr)
        return 2
    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="profile-cycles-"))
    work.mkdir(parents=True, exist_ok=True)
    loop, data = work / "loop.py", work / "perf.data"
    loop.write_text(_LOOP)
    run = subprocess.run(["perf", "record", "-q", "-k", "CLOCK_MONOTONIC", "-F", "1000", "--call-graph", "dwarf,16384",
                          "-o", str(data), sys.executable, str(loop), args.data, str(args.every), str(ROOT)],
                         capture_output=True, text=True)
    start = re.search(r"SECOND_PASS ([0-9.]+)", run.stdout)
    end = re.search(r"END ([0-9.]+)", run.stdout)
    if run.returncode != 0 or start is None or end is None:
        print(run.stderr[-2000:], file=sys.stderr)
        return 1
    window = f"{start.group(1)},{end.group(1)}"
    script = subprocess.run(["perf", "script", "-i", str(data), "--time", window, "-F", "comm,ip,sym"],
                            capture_output=True, text=True).stdout
    inclusive: collections.Counter = collections.Counter()
    innermost: collections.Counter = collections.Counter()
    leaves: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    n = 0
    for frames in samples(script):
        n += 1
        own = next((f for f in frames if _PROJECT.search(f)), "(no function of the project: Python's own code)")
        innermost[own] += 1
        leaves[own][frames[0]] += 1
        for f in dict.fromkeys(f for f in frames if _PROJECT.search(f)):
            inclusive[f] += 1
    if not n:
        print("no samples in the second pass", file=sys.stderr)
        return 1
    print(f"{n} samples of the second pass over every {args.every}th shared page (1 kHz)\n")
    print("inclusive share:")
    for name, count in inclusive.most_common(args.top):
        print(f"  {100 * count / n:6.2f} %  {name}")
    print("\ninnermost function of the project, and its three costliest leaves:")
    for name, count in innermost.most_common(args.top):
        top = ", ".join(f"{leaf} {100 * c / n:.2f}" for leaf, c in leaves[name].most_common(3))
        print(f"  {100 * count / n:6.2f} %  {name}  [{top}]")
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
