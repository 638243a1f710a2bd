#!/usr/bin/env python
"""Benchmark the Spark job against a plain Python loop over clean_html (figures for docs/spark_job.md).

On a WARC of real pages built from ../shared/data with make_warc (default: cleaneval-final +
dragnet, 2,062 pages):

  loop      clean_html over the same payloads in one Python process (payloads read beforehand), with the
            collector thresholds of the job's workers ([runtime] gc_thresholds: 5-7 % faster than Python's own)
  loop + rows   the same, each page's output row built too as the job builds it (cleaner.output.schema.build_row:
            the corpus columns, language, dedup keys and signals, which clean_html alone does not compute): the
            job's work a page, without its reading, Arrow, Parquet and engine
  clean-warc --jobs 1   the same WARC through `cleaner clean-warc` (no JVM), the whole command timed; and its
            worker's seconds over the pieces alone (the rate of a long run: start-up and publishing left out)
  local[1]  the job in local mode on one core (JVM started beforehand; elapsed = job.run())
  local[2]  the same on two cores

and reports documents/second, the ratios (targets: local[1] and clean-warc >= 0.9 x loop, local[2] >= 1.7 x
local[1]; each job's ratio to `loop + rows` too: what the job costs beyond the work it adds a page), peak Python
worker memory (ru_maxrss reported back by each worker) and the load average before and after (other processes
share the machine). The loops run before and after the jobs, to show how much the machine's speed drifted during
the benchmark.

With --distribution it also measures the work distributions on skewed inputs (one big WARC and
several small ones) at local[2]: one task per file, packed by bytes, packed + record ranges.

With --rounds N it then runs loop, loop + rows and clean-warc --jobs 1 in turn N times and reports the median of
each round's ratios and their range (`median_ratio_clean_warc_pieces_vs_loop_rows`...).

  .venv/bin/python scripts/bench_job.py [--model M] [--distribution] [--rounds N] [--json out/bench/bench_job.json]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")

import cleaner  # noqa: E402
from cleaner.api import clean_html  # noqa: E402
from cleaner.config import load_config  # noqa: E402
from cleaner.label.model import DEFAULT_MODEL_PATH, load_model  # noqa: E402
from cleaner.output.corpus import CorpusColumns  # noqa: E402
from cleaner.output.schema import build_row, row_values  # noqa: E402
from cleaner.tools.runtime import tune_gc  # noqa: E402
from cleaner.warc import WarcFileStats, iter_html_records  # noqa: E402
from jobs.worker import corpus_columns  # noqa: E402


def make_warc(out: Path, *args: str) -> Path:
    if not out.exists():
        subprocess.run([sys.executable, str(ROOT / "scripts" / "make_warc.py"), *args,
                        "--date", "2024-01-01T00:00:00Z", "--out", str(out)], check=True)
    return out


def payloads(paths: list[Path]) -> list:
    """The HTML records of `paths` (cleaner.warc.HtmlRecord: the payload, its charset, what a row says of it)."""
    out = []
    for p in paths:
        with open(p, "rb") as fh:
            out += list(iter_html_records(fh, str(p), WarcFileStats()))
    return out


def tree_cpu_seconds(root: int | None = None) -> float:
    """CPU seconds (user + system) used so far by this process and all its live descendants
    (the JVM, the pyspark daemon and its Python workers): a figure the other processes on
    the machine do not inflate, unlike wall time."""
    root = root or os.getpid()
    tick = os.sysconf("SC_CLK_TCK")
    parent, cpu = {}, {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parent[int(d)] = int(fields[1])
        cpu[int(d)] = (int(fields[11]) + int(fields[12])) / tick
    total, todo = 0.0, [root]
    while todo:
        pid = todo.pop()
        total += cpu.get(pid, 0.0)
        todo += [c for c, p in parent.items() if p == pid]
    return total


def loop(pages, model, config, corpus: CorpusColumns | None = None) -> dict:
    """clean_html over `pages`; with `corpus`, each page's row built too, as the job's worker builds it."""
    t, c = time.perf_counter(), time.process_time()
    for rec in pages:
        result = clean_html(rec.payload, http_charset=rec.http_charset, model=model, config=config)
        if corpus is not None:
            row_values(build_row(rec, result, crawl="bench", processing_ms=0.0, corpus=corpus))
    dt, dc = time.perf_counter() - t, time.process_time() - c
    return {"docs": len(pages), "seconds": round(dt, 2), "docs_per_s": round(len(pages) / dt, 2),
            "cpu_seconds": round(dc, 2), "docs_per_cpu_s": round(len(pages) / dc, 2),
            "rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)}


def simulated_makespan(task_cpu: list[float], cores: int) -> float:
    """Tasks launched in order on the first free core (what Spark does), CPU seconds each."""
    free = [0.0] * cores
    for t in task_cpu:
        i = free.index(min(free))
        free[i] += t
    return max(free)


def session(master: str):
    from pyspark.sql import SparkSession

    t = time.perf_counter()
    spark = (SparkSession.builder.master(master).appName(f"bench_job {master}")
             .config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")
             .config("spark.driver.memory", "2g").config("spark.ui.showConsoleProgress", "false")
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    return spark, time.perf_counter() - t


def worker_native(workers) -> list[str]:
    """What the workers of a run ran (their run record's `native`: compiled, or why not), each once."""
    return sorted({w.get("native", "") for w in workers})


def run_job(spark, inputs: list[Path], out: Path, model_args: list[str], *extra: str) -> dict:
    from jobs.clean_warc import CleanWarcJob

    shutil.rmtree(out, ignore_errors=True)
    job = CleanWarcJob(["--input", *map(str, inputs), "--output", str(out), *model_args,
                        "--no-progress", *extra])
    job.prepare()
    t, c = time.perf_counter(), tree_cpu_seconds()
    rec = job.run(spark)
    wall, cpu = time.perf_counter() - t, tree_cpu_seconds() - c
    workers = rec["workers"].values()
    dist = rec["distribution"]
    cores = dist["cores"]
    return {
        "docs": rec["totals"]["html_records"],
        "seconds": round(wall, 2),
        "docs_per_s": round(rec["totals"]["html_records"] / wall, 2),
        "cpu_seconds": round(cpu, 2),
        "docs_per_cpu_s": round(rec["totals"]["html_records"] / cpu, 2),
        "task_cpu_seconds": dist["task_cpu_seconds"],
        "simulated_makespan_cpu_s": round(simulated_makespan(dist["task_cpu_seconds"], cores), 2),
        "ideal_makespan_cpu_s": round(sum(dist["task_cpu_seconds"]) / cores, 2),
        "tasks": rec["distribution"]["tasks"],
        "split_files": rec["distribution"]["split_files"],
        "index_seconds": round(rec["distribution"]["index"]["wall_seconds"], 2),
        "clean_seconds": round(sum(w["clean_seconds"] for w in workers), 2),
        "python_workers": len(rec["workers"]),
        "model_loads": sum(w["model_loads"] for w in workers),
        "peak_worker_rss_mb": max(w["max_rss_mb"] for w in workers),
        "parquet_files": rec["output"]["parquet_files"],
        "parquet_mb": round(rec["output"]["bytes_written"] / 1e6, 2),
        "worker_native": worker_native(workers),
    }


def run_clean_warc(inputs: list[Path], out: Path, model_args: list[str], jobs: int = 1) -> dict:
    """`cleaner clean-warc` (the job's worker code on a pool of local processes, no JVM) over the same WARC, as a
    user runs it: the whole command, its start included; CPU of the command and its worker processes."""
    shutil.rmtree(out, ignore_errors=True)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    subprocess.run([sys.executable, "-m", "cleaner.tools.cli", "clean-warc", *map(str, inputs), "--out", str(out),
                    "--jobs", str(jobs), "--no-progress", *model_args], check=True, cwd=ROOT)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    rec = json.loads((out / ".run.json").read_text())
    docs = rec["totals"]["html_records"]
    # the worker's seconds over its pieces (reading, cleaning, corpus columns, Arrow and Parquet): the rate of a
    # long run, whose start-up (interpreter, imports, model, offset pre-scan) and publishing are a fixed cost
    pieces = sum(f["seconds"] for f in rec["files"].values())
    return {"docs": docs, "seconds": round(wall, 2), "docs_per_s": round(docs / wall, 2),
            "cpu_seconds": round(cpu, 2), "docs_per_cpu_s": round(docs / cpu, 2),
            "pieces_seconds": round(pieces, 2), "pieces_docs_per_s": round(docs / pieces, 2),
            "fixed_seconds": round(wall - pieces, 2),
            "peak_worker_rss_mb": max(w["max_rss_mb"] for w in rec["workers"].values()),
            "worker_native": worker_native(rec["workers"].values())}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--model", type=Path, default=None, help="default: the shipped model")
    ap.add_argument("--work", type=Path, default=ROOT / "out" / "bench")
    ap.add_argument("--distribution", action="store_true", help="also measure work distributions")
    ap.add_argument("--only-distribution", action="store_true")
    ap.add_argument("--json", type=Path, default=None, help="write the figures here")
    ap.add_argument("--rounds", type=int, default=0,
                    help="then N rounds of loop, loop + rows and clean-warc --jobs 1 in turn, and the median of each "
                         "round's ratios: a machine that shares its cores moved one run's ratios by 15-20 %%")
    args = ap.parse_args(argv)
    model_path = args.model or DEFAULT_MODEL_PATH
    model, config = load_model(model_path), load_config()
    tune_gc(config)  # the loop runs with the collector settings of the job's workers (cleaner/tools/runtime.py)
    model_args = ["--model", str(model_path)]
    args.work.mkdir(parents=True, exist_ok=True)
    results: dict = {"model": str(model_path), "model_hash": model.hash, "cpus": os.cpu_count(),
                     "load_before": os.getloadavg()}

    if not args.only_distribution:
        warc = make_warc(args.work / "bench.warc.gz", str(args.data / "cleaneval-final" / "html"),
                         str(args.data / "dragnet" / "html"))
        pages = payloads([warc])
        results["pages"] = len(pages)
        results["warc_mb"] = round(warc.stat().st_size / 1e6, 2)
        print(f"bench: {len(pages)} pages, {results['warc_mb']} MB WARC", file=sys.stderr)
        corpus = corpus_columns(config)
        results["loop_before"] = loop(pages, model, config)
        print("loop:", results["loop_before"], file=sys.stderr)
        results["loop_rows_before"] = loop(pages, model, config, corpus)
        print("loop + rows:", results["loop_rows_before"], file=sys.stderr)
        run_clean_warc([warc], args.work / "warmup-local", model_args)  # (the page cache, as for the jobs)
        results["clean-warc --jobs 1"] = run_clean_warc([warc], args.work / "out-local", model_args)
        print("clean-warc --jobs 1:", results["clean-warc --jobs 1"], file=sys.stderr)
        for master in ("local[1]", "local[2]"):
            spark, start_s = session(master)
            run_job(spark, [warc], args.work / "warmup", model_args)  # JIT-free, but warms the page cache
            res = run_job(spark, [warc], args.work / "out", model_args)
            res["session_start_s"] = round(start_s, 1)
            results[master] = res
            print(master, res, file=sys.stderr)
            spark.stop()
        results["loop_rows_after"] = loop(pages, model, config, corpus)
        print("loop + rows:", results["loop_rows_after"], file=sys.stderr)
        results["loop_after"] = loop(pages, model, config)
        print("loop:", results["loop_after"], file=sys.stderr)
        for suffix, name in (("", "loop"), ("_rows", "loop_rows")):
            rate = (results[f"{name}_before"]["docs_per_s"] + results[f"{name}_after"]["docs_per_s"]) / 2
            cpu = (results[f"{name}_before"]["docs_per_cpu_s"] + results[f"{name}_after"]["docs_per_cpu_s"]) / 2
            local1, clean_warc = results["local[1]"], results["clean-warc --jobs 1"]
            results[f"ratio_local1_vs_loop{suffix}"] = round(local1["docs_per_s"] / rate, 3)
            results[f"cpu_ratio_local1_vs_loop{suffix}"] = round(local1["docs_per_cpu_s"] / cpu, 3)
            results[f"ratio_clean_warc_vs_loop{suffix}"] = round(clean_warc["docs_per_s"] / rate, 3)
            results[f"cpu_ratio_clean_warc_vs_loop{suffix}"] = round(clean_warc["docs_per_cpu_s"] / cpu, 3)
            results[f"ratio_clean_warc_pieces_vs_loop{suffix}"] = round(clean_warc["pieces_docs_per_s"] / rate, 3)
        results["ratio_local2_vs_local1"] = round(
            results["local[2]"]["docs_per_s"] / results["local[1]"]["docs_per_s"], 3)
        if args.rounds:
            results["rounds"] = rounds = []
            for _ in range(args.rounds):  # each ratio of a round taken between runs seconds apart
                plain, rows = loop(pages, model, config), loop(pages, model, config, corpus)
                local = run_clean_warc([warc], args.work / "out-local", model_args)
                rounds.append({"loop_docs_per_s": plain["docs_per_s"], "loop_rows_docs_per_s": rows["docs_per_s"],
                               "clean_warc_docs_per_s": local["docs_per_s"],
                               "clean_warc_pieces_docs_per_s": local["pieces_docs_per_s"]})
                print("round:", rounds[-1], file=sys.stderr)
            for key, of in (("clean_warc", "loop"), ("clean_warc", "loop_rows"), ("clean_warc_pieces", "loop"),
                            ("clean_warc_pieces", "loop_rows")):
                ratios = [r[f"{key}_docs_per_s"] / r[f"{of}_docs_per_s"] for r in rounds]
                results[f"median_ratio_{key}_vs_{of}"] = round(statistics.median(ratios), 3)
                results[f"range_ratio_{key}_vs_{of}"] = [round(min(ratios), 3), round(max(ratios), 3)]

    if args.distribution or args.only_distribution:
        # Skewed inputs: dragnet in one big WARC, cleaneval-final in 8 small ones.
        big = make_warc(args.work / "skew-big.warc.gz", str(args.data / "dragnet" / "html"))
        ce = sorted((args.data / "cleaneval-final" / "html").glob("*.html"))
        small = []
        for k in range(8):
            d = args.work / f"skew-pages-{k}"
            if not d.exists():
                d.mkdir()
                for p in ce[k::8]:
                    os.symlink(p, d / p.name)
            small.append(make_warc(args.work / f"skew-small-{k}.warc.gz", str(d)))
        spark, _ = session("local[2]")
        dist = {}
        for mode in ("files", "packed", "split"):
            dist[mode] = run_job(spark, [big, *small], args.work / f"dist-{mode}", model_args,
                                 "--distribution", mode)
            print(mode, dist[mode], file=sys.stderr)
        spark.stop()
        results["distribution"] = dist

    results["load_after"] = os.getloadavg()
    # The workers must have run the code the loop ran: a build made stale meanwhile (a file edited during the
    # bench) leaves them on the pure-Python reference, two to three times slower, and the ratios meaningless.
    loop_native = cleaner.NATIVE_STATUS
    results["loop_native"] = loop_native
    runs = {**{name: r for name, r in results.items() if isinstance(r, dict)}, **results.get("distribution", {})}
    differ = {name: r["worker_native"] for name, r in runs.items()
              if r.get("worker_native") not in (None, [loop_native])}
    text = json.dumps(results, indent=2)
    print(text)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(text + "\n")
    if differ:
        print(f"bench: the workers did not run what the loop ran ({loop_native}): {differ}; the ratios are not "
              "comparable", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
