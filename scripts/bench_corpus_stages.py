#!/usr/bin/env python
"""CPU a page of each corpus column (docs/corpus_columns.md), over the `text` column of a job's Parquet output.

    .venv/bin/python scripts/bench_corpus_stages.py out/bench/out-local [--rounds 3]

(`scripts/bench_job.py` leaves that output: 2,062 pages of cleaneval-final and dragnet.) Each stage runs over every
text, `--rounds` times; the best round is reported, in ms a page (wall clock in a quiet loop). Run two revisions one
after the other in the same sitting and compare them, not figures from other sittings.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import pyarrow.parquet as pq  # noqa: E402

from cleaner.output.corpus import default_corpus_columns  # noqa: E402
from cleaner.output.dedup import exact_hash, word_hashes, words_of  # noqa: E402
from cleaner.output.signals import text_signals  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("parquet", type=Path, help="a folder of the job's Parquet output")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args(argv)
    texts = [t or "" for t in pq.read_table(args.parquet, columns=["text"]).column("text").to_pylist()]
    columns = default_corpus_columns()
    words = [words_of(t) for t in texts]
    hashes = [word_hashes(w) for w in words]

    def best(stage, inputs) -> float:
        times = []
        for _ in range(args.rounds):
            t = time.perf_counter()
            for x in inputs:
                stage(x)
            times.append(time.perf_counter() - t)
        return min(times) / len(texts) * 1000

    print(f"{len(texts)} texts, {sum(map(len, texts)) / len(texts):.0f} characters on average; ms a page:")
    for name, stage, inputs in (
        ("all columns", columns.columns, texts),
        ("language (CLD2)", lambda t: columns.langid.identify(t) if t else None, texts),
        ("dedup words", words_of, texts),
        ("word hashes", word_hashes, words),
        ("MinHash keys", columns.minhash.keys_of_hashes, hashes),
        ("exact hash", exact_hash, hashes),
        ("signals", text_signals, texts),
    ):
        print(f"  {name:16s} {best(stage, inputs):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
