"""Time the scorer (cleaner.gold.score) over every gold file, against another revision's, in one run.

    .venv/bin/python scripts/bench_score.py --against HEAD~1 [--rounds 5]

Each gold text is scored against a prediction made of it (its second half, then its first: the
words are the gold's, out of order, so the LCS and the edit distance do real work), and its words
are taken alone. The two versions are timed in alternate rounds in one process, so that both see
the same machine speed (it drifts by 10-20 % within an hour, docs/speed.md); the table gives each
round's ms per page and the ratio of the medians.
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from cleaner.gold import score as current  # noqa: E402
from cleaner.gold.gold import read_gold  # noqa: E402


def scorer_of(rev: str):
    """cleaner/gold/score.py as it is at git revision `rev`, imported as a module of its own."""
    source = subprocess.run(["git", "-C", str(ROOT), "show", f"{rev}:cleaner/gold/score.py"], check=True,
                            capture_output=True, text=True).stdout
    path = Path(tempfile.mkdtemp()) / "score_at_rev.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("score_at_rev", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # (dataclasses look their module up there)
    spec.loader.exec_module(module)
    return module


def one_pass(scorer, pairs) -> tuple[float, float]:
    """ms per page to score every pair, and to take the words of every gold."""
    t0 = time.process_time()
    for pred, gold in pairs:
        scorer.score_document(pred, gold)
    t1 = time.process_time()
    for _, gold in pairs:
        scorer.words(gold)
    t2 = time.process_time()
    return (t1 - t0) * 1000 / len(pairs), (t2 - t1) * 1000 / len(pairs)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data"))
    ap.add_argument("--against", default="HEAD", help="git revision whose scorer to compare with (default HEAD)")
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args(argv)
    golds = [read_gold(p) for p in sorted(Path(args.data).glob("*/gold/*.txt"))]
    pairs = []
    for g in golds:
        lines = g.splitlines()
        half = len(lines) // 2
        pairs.append(("\n".join(lines[half:] + lines[:half]), g))
    other = scorer_of(args.against)
    timings: dict[str, list[tuple[float, float]]] = {args.against: [], "working tree": []}
    for _ in range(args.rounds):
        timings[args.against].append(one_pass(other, pairs))
        timings["working tree"].append(one_pass(current, pairs))
    print(f"{len(pairs)} gold files, {args.rounds} rounds alternated (CPU ms per page)\n")
    print("| scorer | score_document, each round | median | words(), each round | median |\n|---|---|---|---|---|")
    med = {}
    for name, runs in timings.items():
        med[name] = (statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs))
        print(f"| {name} | {' '.join(f'{r[0]:.2f}' for r in runs)} | {med[name][0]:.2f} "
              f"| {' '.join(f'{r[1]:.3f}' for r in runs)} | {med[name][1]:.3f} |")
    a, b = med[args.against], med["working tree"]
    print(f"\nratio working tree / {args.against}: score_document {b[0] / a[0]:.3f}, words {b[1] / a[1]:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
