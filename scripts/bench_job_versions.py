#!/usr/bin/env python
"""The job's speed at two code versions, in one sitting: `python jobs/clean_warc.py` of a base revision (a
`git archive` of it in a temporary directory, with this checkout's compiled stages when their sources are the
same) and of this checkout, run alternately on the same WARC, pairs of runs, medians.

Each run is its own process (its own JVM); what is compared is the job's own `elapsed_s` of `.run.json` (from
the start of the run to the published record: planning, cleaning, writing, checks, publish), so the JVM's
start, which varies most on a shared machine, is left out. Wall time of the whole process is reported too.

    .venv/bin/python scripts/bench_job_versions.py --base 0aee71c [--pages 400] [--pairs 3] [--json out.json]
"""

from __future__ import annotations

import argparse
import io
import json
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT.parent / "shared" / "data"


def checkout(rev: str, dest: Path) -> Path:
    data = subprocess.run(["git", "-C", str(ROOT), "archive", "--format=tar", rev], capture_output=True,
                          check=True).stdout
    with tarfile.open(fileobj=io.BytesIO(data)) as tf:
        tf.extractall(dest, filter="data")
    native = ROOT / "cleaner" / "_native"
    if native.is_dir():  # used by the base only where its sources are the ones built (a SHA-256 manifest)
        shutil.copytree(native, dest / "cleaner" / "_native", dirs_exist_ok=True)
    return dest


def run(tree: Path, warc: Path, out: Path, master: str) -> dict:
    shutil.rmtree(out, ignore_errors=True)
    # PYTHONPATH: the driver and the Python workers (started by the JVM with this environment) import the
    # tree's own `cleaner`, not the one installed in the venv
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable, SPARK_LOCAL_IP="127.0.0.1", PYTHONPATH=str(tree))
    t = time.perf_counter()
    subprocess.run([sys.executable, str(tree / "jobs" / "clean_warc.py"), "--input", str(warc), "--output", str(out),
                    "--master", master, "--no-progress", "--partition-by", ""], env=env, check=True,
                   capture_output=True, cwd=tree)
    wall = time.perf_counter() - t
    rec = json.loads((out / ".run.json").read_text())
    return {"elapsed_s": rec["elapsed_s"], "wall_s": round(wall, 2), "docs": rec["totals"]["html_records"],
            "master": rec["spark"]["master"]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base", required=True, help="git revision to compare with")
    ap.add_argument("--pages", type=int, default=400)
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--master", default="local[2]", help="the same for both (the base had no default retries)")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench_job_versions-"))
    try:
        base = checkout(args.base, work / "base")
        warc = work / "bench.warc.gz"
        subprocess.run([sys.executable, str(ROOT / "scripts" / "make_warc.py"), str(DATA / "cleaneval-final" / "html"),
                        "--limit", str(args.pages), "--date", "2024-01-01T00:00:00Z", "--out", str(warc)],
                       check=True, capture_output=True)
        results: dict[str, list[dict]] = {"base": [], "this": []}
        for i in range(args.pairs):
            order = [("base", base), ("this", ROOT)] if i % 2 == 0 else [("this", ROOT), ("base", base)]
            for name, tree in order:
                r = run(tree, warc, work / f"out-{name}", args.master)
                results[name].append(r)
                print(name, json.dumps(r), flush=True)
        summary = {name: {"elapsed_s_median": statistics.median(r["elapsed_s"] for r in rs),
                          "wall_s_median": statistics.median(r["wall_s"] for r in rs)} for name, rs in results.items()}
        summary["ratio_elapsed_this_over_base"] = round(summary["this"]["elapsed_s_median"]
                                                        / summary["base"]["elapsed_s_median"], 3)
        summary["ratio_wall_this_over_base"] = round(summary["this"]["wall_s_median"]
                                                     / summary["base"]["wall_s_median"], 3)
        summary["load_average"] = os.getloadavg()
        print(json.dumps(summary, indent=1))
        if args.json:
            args.json.write_text(json.dumps({"runs": results, "summary": summary, "base": args.base,
                                             "pages": args.pages}, indent=1) + "\n")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
