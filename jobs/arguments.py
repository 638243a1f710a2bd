"""The job's command line (`jobs/clean_warc.py`, `cleaner-spark-job`; `cleaner clean-warc` takes its defaults) and
the [job] settings with the flags that override them applied and checked."""

from __future__ import annotations

import argparse
import re
from typing import Any

from cleaner.output.schema import PARTITION_COLUMNS

from . import formats, plan

# --simulate-crash: the points where the test hook stops the driver as if it was killed there.
CRASH_POINTS = ("before_staging", "during_write", "before_publish", "after_publish")


class JobError(Exception):
    """A failure with an exit code and a message naming what is wrong."""

    def __init__(self, code: int, message: str):
        super().__init__(message)
        self.code = code


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="clean_warc.py",
        description="Clean the HTML records of WARC files with Spark and write Parquet (or --format jsonl). "
                    "On one machine without Spark, `cleaner clean-warc` takes the same flags and writes the same "
                    "output.",
        epilog="Exit codes: 0 ok, 1 Spark job failed, run not published (every page failed for one reason "
               "of the cleaner's) or input files failed, 2 bad usage, 3 input missing, "
               "4 invalid model or config, 5 output directory unusable, held by another run (--wait), "
               "holding runs of other settings (format, convention, model, config; --overwrite), the lease "
               "lost, or run not published.")
    ap.add_argument("--input", nargs="+", action="extend", default=[], metavar="PATH_OR_GLOB",
                    help="WARC/ARC files (plain, .gz, .zst), directories, globs or URIs (hdfs://, s3a://, "
                         "s3://, https://, ...)")
    ap.add_argument("--input-list", action="append", default=[], metavar="FILE",
                    help="path list, one WARC path/URI/glob per line, plain or gzip-compressed "
                         "(Common Crawl's warc.paths.gz), local or a URI (repeatable)")
    ap.add_argument("--input-base", metavar="PATH_OR_URL",
                    help="prefix of the relative entries of --input-list: a local directory, file://, "
                         "s3://commoncrawl/, https://data.commoncrawl.org/ (default: as written)")
    ap.add_argument("--output", required=True, metavar="DIR", help="output directory (path or URI)")
    ap.add_argument("--conf", dest="config", metavar="TOML",
                    help="config overlay (default: conf/default.toml only)")
    ap.add_argument("--model", metavar="M.crfsuite",
                    help="CRF model: a file, or a packaged model's name, default or cleaneval-2012 (default: the "
                    "packaged model of the convention, [model.by_convention]: default for main, cleaneval-2012 for "
                    "cleaneval and dragnet, but default for a cleaneval page in HTML5 markup, "
                    "[model.html5_by_convention])")
    ap.add_argument("--convention", metavar="NAME",
                    help="what to keep (docs/conventions.md): main (the main content: on an article page the "
                    "article only), cleaneval (everything a reader takes for the page's text) or dragnet (the article "
                    "and its comments) (default: [model] convention, main); without --model it picks the model too")
    ap.add_argument("--master", help="Spark master when started with python (default: [job] "
                                     "master, local[*]); spark-submit's --master wins")
    ap.add_argument("--crawl", help="crawl name for the crawl column (default: from the path)")
    ap.add_argument("--partition-by", metavar="COLS",
                    help=f"comma-separated, of {', '.join(PARTITION_COLUMNS)}; '' for none "
                         "(default: [job] partition_by)")
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--skip-done", action="store_true",
                      help="process only files no published run of OUTPUT has done")
    mode.add_argument("--overwrite", action="store_true",
                      help="delete the runs already in OUTPUT first")
    ap.add_argument("--distribution", choices=plan.MODES, help="work distribution (default: "
                                                                "[job] distribution)")
    ap.add_argument("--target-file-mb", type=float, help="Parquet file size target")
    ap.add_argument("--format", choices=formats.FORMATS,
                    help="output files: parquet, or jsonl (JSON Lines, gzip or zstd as [job] jsonl_compression "
                         "says), the same fields (default: [job] format)")
    ap.add_argument("--spark-conf", action="append", default=[], metavar="KEY=VALUE",
                    help="extra Spark setting for a session started by this script (repeatable)")
    ap.add_argument("--no-progress", action="store_true", help="no Spark progress bar")
    ap.add_argument("--wait", nargs="?", type=float, const=float("inf"), default=None, metavar="SECONDS",
                    help="when another run holds the output directory, wait for it (at most SECONDS; no "
                         "number: as long as it runs) instead of refusing with exit 5")
    ap.add_argument("--simulate-crash", choices=CRASH_POINTS,
                    help=argparse.SUPPRESS)  # test hook: stop as if killed at that point
    return ap


def apply_job_flags(job: dict[str, Any], args: argparse.Namespace, source: str) -> None:
    """[job] settings (of the config read from `source`) with the flags that override them; JobError 2 names a
    flag's mistake, JobError 4 the config's."""
    j, src = job, source
    if args.partition_by is not None:
        j["partition_by"] = [c.strip() for c in args.partition_by.split(",") if c.strip()]
        bad = [c for c in j["partition_by"] if c not in PARTITION_COLUMNS]
        if bad:  # the command line's mistake, not the config's
            raise JobError(2, f"--partition-by: unknown column(s) {', '.join(bad)} "
                              f"(allowed: {', '.join(PARTITION_COLUMNS)}; '' for none)")
    if args.distribution:
        j["distribution"] = args.distribution
    if args.target_file_mb:
        j["target_file_mb"] = args.target_file_mb
    if args.format:
        j["format"] = args.format
    bad = [c for c in j["partition_by"] if c not in PARTITION_COLUMNS]
    if bad:
        raise JobError(4, f"invalid config: [job] partition_by in {src}: unknown column(s) "
                          f"{', '.join(bad)} (allowed: {', '.join(PARTITION_COLUMNS)})")
    if j["distribution"] not in plan.MODES:
        raise JobError(4, f"invalid config: [job] distribution in {src} must be one of "
                          f"{', '.join(plan.MODES)}")
    for key in ("task_bytes", "min_task_bytes", "tasks_per_core", "target_file_mb",
                "max_payload_bytes", "split_factor", "plain_byte_weight",
                "shuffle_bytes_per_output_byte"):
        if not isinstance(j[key], (int, float)) or j[key] <= 0:
            raise JobError(4, f"invalid config: [job] {key} in {src} must be a positive number")
    if j["lease_stale_s"] < 2 * j["lease_renew_s"]:
        raise JobError(4, f"invalid config: [job] lease_stale_s in {src} must be at least twice "
                          "lease_renew_s (a live run renews its lease several times before it goes stale)")
    try:
        re.compile(j["crawl_pattern"])
    except re.error as exc:
        raise JobError(4, f"invalid config: [job] crawl_pattern in {src}: {exc}") from exc
