#!/usr/bin/env python
"""Instructions a page of the job's worker, stage by stage, counted by callgrind: what the job costs beyond the
cleaning (issue 45, item 5: the job within 10 % of the library loop), in a figure the machine's load does not move.
Wall-clock ratios of `scripts/bench_job.py` moved by 15-20 % between two runs of the same code on a shared machine.

    .venv/bin/python scripts/count_job_instructions.py [--pages 120] [--keep DIR]

Two WARCs are written with scripts/make_warc.py from wcxb pages of 2025 (every 10th from the 4th): 30 pages to warm
the caches, then `--pages` others. Each run loads the packaged default model, runs the pool worker's whole task
(jobs.pool.run_task's steps: jobs.worker.process_partition_arrow and pyarrow's dataset writer, zstd Parquet) over the
warm-up WARC, reads the measured WARC's records into memory, and then does one of:

  none       nothing more (subtracted from the others)
  loop       clean_html over the records (the library loop of bench_job.py)
  rows       the same, and each page's output row (cleaner.output.schema.build_row: the corpus columns)
  piece      the worker's piece over the WARC file (jobs.worker.process_piece: reading, the poison marker, cleaning,
             rows)
  task       the pool worker's task over it (piece, then Arrow record batches and the Parquet file): what
             `cleaner clean-warc` does a page

and prints the instructions a page of each, what each stage adds, and loop / task and rows / task (the job's rate
as a share of the loop's, were instructions time). Spark's workers do `piece` and the Arrow batches; the JVM's
Parquet is not counted. Needs valgrind (exit 2 without it).
"""

from __future__ import annotations

import argparse
import gzip
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MODES = ("none", "loop", "rows", "piece", "task")

# argv: the project's root, the mode, the warm-up WARC, the measured WARC, the work directory, the config overlay
_RUN = r"""
import os, sys
sys.path.insert(0, sys.argv[1])
mode, warm, measured, work = sys.argv[2:6]
import pyarrow as pa
import pyarrow.dataset as ds
import cleaner
from cleaner.api import clean_html
from cleaner.config import load_config
from cleaner.label.model import load_model
from cleaner.output.schema import SCHEMA, build_row, row_values
from cleaner.tools.runtime import tune_gc
from cleaner.warc import WarcFileStats, iter_html_records
import jobs.worker as worker
from jobs.pool import PieceCounters, Shared

config = load_config(sys.argv[6])
model = load_model()
model.open()
model._extractor = model.extractor(config)  # as jobs.worker._state builds it
tune_gc(config)
worker._STATE["bench"] = (model, config)  # the worker's state, as a broadcast leaves it
corpus = worker.corpus_columns(config)

def task(warc, number):  # jobs.pool.run_task's steps, with this process's model
    spec = {"task": number, "pieces": [{"uri": warc, "key": f"{warc}#0", "crawl": "bench"}]}
    ids = pa.record_batch([pa.array([number], pa.int32())], names=["task"])
    batches = worker.process_partition_arrow([ids], Shared({"key": "bench"}), PieceCounters(), {"run_id": "bench"},
                                             Shared({number: spec}))
    fmt = ds.ParquetFileFormat()
    ds.write_dataset(pa.RecordBatchReader.from_batches(SCHEMA, batches), os.path.join(work, f"out-{mode}-{number}"),
                     format=fmt, file_options=fmt.make_write_options(compression="zstd", compression_level=3),
                     basename_template="part-{i}.parquet", existing_data_behavior="overwrite_or_ignore",
                     use_threads=False)

task(warm, 0)
with open(measured, "rb") as fh:
    records = list(iter_html_records(fh, measured, WarcFileStats()))
if mode == "loop":
    for r in records:
        clean_html(r.payload, http_charset=r.http_charset, model=model, config=config)
elif mode == "rows":
    for r in records:
        result = clean_html(r.payload, http_charset=r.http_charset, model=model, config=config)
        row_values(build_row(r, result, crawl="bench", processing_ms=0.0, corpus=corpus))
elif mode == "piece":
    for _ in worker.process_piece({"uri": measured, "key": f"{measured}#0", "crawl": "bench"}, model, config,
                                  {"run_id": "bench"}):
        pass
elif mode == "task":
    task(measured, 1)
print(cleaner.NATIVE_STATUS, len(records), flush=True)
os._exit(0)  # (out without the interpreter's shutdown, as scripts/count_instructions.py says why)
"""


def _pages_warc(data: Path, names: list[str], out: Path, work: Path) -> Path:
    """A WARC of these wcxb pages, written by the project's make_warc from decompressed copies in `work`."""
    folder = work / out.stem
    folder.mkdir(parents=True, exist_ok=True)
    for name in names:
        (folder / name.removesuffix(".gz")).write_bytes(gzip.decompress((data / "wcxb" / "html" / name).read_bytes()))
    subprocess.run([sys.executable, str(ROOT / "scripts" / "make_warc.py"), str(folder), "--out", str(out),
                    "--date", "2025-01-01T00:00:00Z"], check=True, capture_output=True)
    return out


def _total(out_file: Path) -> int:
    with open(out_file) as fh:
        for line in fh:
            if line.startswith("totals:") or line.startswith("summary:"):
                return int(line.split()[1])
    raise ValueError(f"no total in {out_file}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--pages", type=int, default=120, help="pages measured after the warm-up (default 120)")
    ap.add_argument("--keep", type=Path, help="keep the WARCs and the callgrind files in this directory")
    args = ap.parse_args(argv)
    if shutil.which("valgrind") is None:
        print("valgrind is not installed (apt-get install valgrind)", file=sys.stderr)
        return 2
    work = Path(tempfile.mkdtemp(prefix="count-job-")) if args.keep is None else args.keep
    work.mkdir(parents=True, exist_ok=True)
    names = sorted(p.name for p in (args.data / "wcxb" / "html").glob("*.html.gz"))[3::10]
    warm = _pages_warc(args.data, names[:30], work / "warm.warc.gz", work)
    measured = _pages_warc(args.data, names[30:30 + args.pages], work / "measured.warc.gz", work)
    script = work / "run.py"
    script.write_text(_RUN)
    overlay = work / "no-deadline.toml"  # (no CPU deadline under callgrind: scripts/count_instructions.py)
    overlay.write_text("[limits]\ntime_budget_s = 0\n")
    # One string hash for every run, and OpenBLAS's threads, which spin, kept out
    env = dict(os.environ, PYTHONHASHSEED=os.environ.get("PYTHONHASHSEED", "0"), OPENBLAS_NUM_THREADS="1")
    totals: dict[str, int] = {}
    status = ""
    for pair in (MODES[:2], MODES[2:4], MODES[4:]):  # two at a time, one a core
        procs = {}
        for mode in pair:
            out = work / f"callgrind.{mode}.out"
            procs[mode] = (out, subprocess.Popen(
                ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", sys.executable, str(script),
                 str(ROOT), mode, str(warm), str(measured), str(work), str(overlay)],
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env))
        for mode, (out, proc) in procs.items():
            stdout, stderr = proc.communicate()
            if proc.returncode != 0:
                print(stderr[-2000:], file=sys.stderr)
                return 1
            status, records = stdout.strip().rsplit(maxsplit=1)
            if int(records) != args.pages:
                print(f"the measured WARC holds {records} records, not {args.pages}", file=sys.stderr)
                return 1
            totals[mode] = _total(out)
    per_page = {mode: (totals[mode] - totals["none"]) / args.pages / 1e6 for mode in MODES[1:]}
    print(f"{status}\n{args.pages} wcxb pages after a warm-up of 30, M instructions a page:")
    previous = 0.0
    for mode in MODES[1:]:
        print(f"  {mode:6s} {per_page[mode]:6.2f}  (+{per_page[mode] - previous:5.2f})")
        previous = per_page[mode]
    shares = [f"{a} / {b} {per_page[a] / per_page[b]:.3f}" for b in ("task", "piece") for a in ("loop", "rows")]
    print(", ".join(shares))
    if args.keep is None:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
