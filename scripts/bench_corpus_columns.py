#!/usr/bin/env python
"""The Spark job's cost per page with the corpus columns against a revision without them, in one sitting.

    .venv/bin/python scripts/bench_corpus_columns.py REV [--rounds 3] [--sets chaos fundus big5-2017]
    .venv/bin/python scripts/bench_corpus_columns.py --worker-only [--rounds 3]

REV is checked out in a temporary worktree (with this tree's .venv; its compiled stages built first, as
scripts/bench_versions.sh does). Each round runs the job in local[1] on one WARC of the shared pages (built
with scripts/make_warc.py) once with REV's code and once with the working tree's, alternated, each in its own
process with its own Spark session: a warm-up run first (page cache, Python worker, model), then the timed run.
Per run: wall ms/page of job.run, CPU ms/page of the whole process tree (driver, JVM, Python workers: what
other processes on the machine do not inflate), and the Python workers' own CPU ms/page (the job's
`distribution.task_cpu_seconds`: reading, cleaning, the corpus columns, rows to Arrow). The table gives
each round and the medians of the per-round ratios tree / REV.

--worker-only runs no Spark: the job's per-piece worker code (jobs/worker.process_piece, then the rows to Arrow
batches as mapInArrow makes them) over the same WARC in this process, with the corpus columns and with a stub
that gives every page a rejected page's columns, alternated; CPU ms/page of each and their ratio per round.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def one_run(root: Path, warc: Path, work: Path) -> dict:
    """In a child process whose PYTHONPATH is `root`: warm-up, then one timed job run."""
    sys.path.insert(0, str(root))
    import cleaner  # from `root`, before bench_job puts this tree on the path: the modules stay root's
    import jobs.clean_warc  # noqa: F401

    assert Path(cleaner.__file__).resolve().is_relative_to(root.resolve()), cleaner.__file__
    sys.path.insert(1, str(ROOT / "scripts"))
    from bench_job import run_job, session  # this tree's helpers
    spark, _ = session("local[1]")
    run_job(spark, [warc], work / "warmup", [])
    res = run_job(spark, [warc], work / "out", [])
    spark.stop()
    return {"docs": res["docs"], "wall_s": res["seconds"], "cpu_s": res["cpu_seconds"],
            "worker_cpu_s": round(sum(res["task_cpu_seconds"]), 3), "parquet_mb": res["parquet_mb"],
            "native": cleaner.NATIVE_STATUS if hasattr(cleaner, "NATIVE_STATUS") else None}


def worker_only(warc: Path, rounds: int) -> None:
    """process_piece with the corpus columns and with a stub, alternated in this process."""
    sys.path.insert(0, str(ROOT))
    import pyarrow as pa

    import jobs.worker as worker
    from cleaner.config import load_config
    from cleaner.label.model import model_for_convention
    from cleaner.output.schema import COLUMNS, SCHEMA
    from cleaner.tools.runtime import tune_gc

    config = load_config()
    model = model_for_convention(config)  # (the packaged default, opened)
    tune_gc(config)
    empty = worker.corpus_columns(config).columns("")

    class Stub:  # what the worker did before the corpus columns, as near as the schema allows
        def columns(self, text):
            return empty

    piece = {"uri": str(warc), "key": f"{warc}#0", "crawl": "bench", "start": 0, "end": None}
    real_corpus_columns = worker.corpus_columns

    def run(stub: bool) -> float:
        worker.corpus_columns = (lambda config: Stub()) if stub else real_corpus_columns
        rows = []
        try:
            cleaning = worker.process_piece(piece, model, config, {"run_id": "bench"})
            try:
                while True:
                    rows.append(next(cleaning))
            except StopIteration as done:  # the generator returns the piece's outcome (jobs/outcomes.py)
                cpu_seconds = done.value.outcome.cpu_seconds
            c = time.process_time()
            for i in range(0, len(rows), 256):
                pa.RecordBatch.from_pylist([dict(zip(COLUMNS, v)) for v in rows[i:i + 256]], schema=SCHEMA)
            arrow = time.process_time() - c
        finally:
            worker.corpus_columns = real_corpus_columns
        return (cpu_seconds + arrow) * 1000 / len(rows)

    print("| round | with corpus columns CPU ms/page | stub CPU ms/page | ratio |")
    print("|---|---|---|---|")
    ratios = []
    for rnd in range(1, rounds + 1):
        with_cols, stub = run(False), run(True)
        ratios.append(with_cols / stub)
        print(f"| {rnd} | {with_cols:.2f} | {stub:.2f} | {ratios[-1]:.3f} |", flush=True)
    print(f"\nmedian ratio: {statistics.median(ratios):.3f}")


def run_child(root: Path, warc: Path, work: Path) -> dict:
    env = dict(os.environ, PYTHONPATH=str(root), PYSPARK_PYTHON=sys.executable, SPARK_LOCAL_IP="127.0.0.1")
    out = subprocess.run([sys.executable, __file__, "--one", str(root), "--warc", str(warc), "--work", str(work)],
                         env=env, cwd=root, capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"run in {root} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("rev", nargs="?", help="the revision to compare with (a commit without the corpus columns)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--sets", nargs="+", default=["chaos", "fundus", "big5-2017"])
    ap.add_argument("--work", type=Path, default=ROOT / "out" / "bench_corpus")
    ap.add_argument("--worker-only", action="store_true",
                    help="no Spark: the worker code with and without the corpus columns, in this process")
    ap.add_argument("--one", type=Path, help=argparse.SUPPRESS)  # child: the checkout to run
    ap.add_argument("--warc", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.one:
        print(json.dumps(one_run(args.one, args.warc, args.work)))
        return 0
    if not args.rev and not args.worker_only:
        ap.error("give REV, the revision to compare with (or --worker-only)")
    args.work.mkdir(parents=True, exist_ok=True)
    warc = args.work / f"{'-'.join(args.sets)}.warc.gz"
    if not warc.exists():
        subprocess.run([sys.executable, str(ROOT / "scripts" / "make_warc.py"),
                        *(str(args.data / s / "html") for s in args.sets), "--date", "2024-01-01T00:00:00Z",
                        "--out", str(warc)], check=True)
    if args.worker_only:
        worker_only(warc, args.rounds)
        return 0
    ref = Path(tempfile.mkdtemp(prefix="bench-corpus-ref-"))
    try:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(ref), args.rev], check=True,
                       capture_output=True)
        for root in (ref, ROOT):
            subprocess.run([sys.executable, "scripts/build_native.py", "--if-stale"], cwd=root, check=False,
                           capture_output=True)
        rev_name = subprocess.run(["git", "-C", str(ref), "log", "--oneline", "-1"], capture_output=True,
                                  text=True).stdout.strip()
        print(f"REV = {rev_name}; tree = {ROOT}; {warc.name}", file=sys.stderr)
        print("| round | code | pages | wall ms/page | CPU ms/page (all processes) | worker CPU ms/page | Parquet MB |")
        print("|---|---|---|---|---|---|---|")
        ratios: dict[str, list[float]] = {"wall": [], "cpu": [], "worker": []}
        for rnd in range(1, args.rounds + 1):
            got = {}
            for name, root in (("REV", ref), ("tree", ROOT)):
                t = time.perf_counter()
                r = run_child(root, warc, args.work / name)
                got[name] = r
                n = r["docs"]
                print(f"| {rnd} | {name} | {n} | {r['wall_s'] * 1000 / n:.2f} | {r['cpu_s'] * 1000 / n:.2f} | "
                      f"{r['worker_cpu_s'] * 1000 / n:.2f} | {r['parquet_mb']} |", flush=True)
                print(f"  ({name} {r['native']}, {time.perf_counter() - t:.0f} s with the session)", file=sys.stderr)
            for key, field in (("wall", "wall_s"), ("cpu", "cpu_s"), ("worker", "worker_cpu_s")):
                ratios[key].append(got["tree"][field] / got["REV"][field])
        print()
        print("median ratio tree / REV: " + ", ".join(
            f"{k} {statistics.median(v):.3f} ({', '.join(f'{x:.3f}' for x in v)})" for k, v in ratios.items()))
    finally:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(ref)], capture_output=True)
        shutil.rmtree(ref, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
