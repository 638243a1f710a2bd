"""`cleaner clean-warc`: the WARC job on one machine, without Java or Spark.

    cleaner clean-warc crawl/*.warc.gz --out cleaned/ --jobs 4
    cleaner clean-warc --input-list warc.paths.gz --input-base /mirror/ --out cleaned/ --skip-done

The same run as `jobs/clean_warc.py` (the class below is that job with another engine): the same
checks before any work, the same plan of pieces and tasks (jobs/plan.py), the same per-record worker
(jobs/worker.py's `process_partition_arrow`, fed one task at a time), the same output directory with
its staging, publish, `.run.json` and `--skip-done` (jobs/runs.py), the same summary table. What
differs is only who runs the tasks: a pool of `--jobs` Python processes instead of Spark executors,
each writing its task's rows as Hive-partitioned Parquet files into the run's staging directory,
as a Spark task does. The output is local (a folder); inputs are local files, or s3:// and https://
objects read by the workers themselves (jobs/storage.py). Spark stays the cluster path.

A worker process that dies (a crash in native code, the OOM killer) fails the run (exit 1): nothing is
published and no input is marked done, so a re-run with --skip-done does that work again. Spark's
retry of such a task, with the record that crashed rejected as `poison` (jobs/worker.py), is Spark's
only.

Exit codes: those of the job (jobs/clean_warc.py): 0 ok, 1 the run failed or was not published (a
worker died, every page failed for one reason of the cleaner's, no input file could be read) or input files
could not be read, 2 bad usage, 3 input missing, 4 invalid model or config, 5 output directory unusable, held
by another run, written with other settings, or the lease lost.
"""

from __future__ import annotations

import argparse
import os

EPILOG = ("Exit codes: 0 ok, 1 the run failed or was not published (a worker process died; every page failed "
          "for one reason of the cleaner's; no input file could be read) or input files could not be read (not "
          "marked done), 2 bad usage, 3 input missing, 4 invalid model or config, 5 output directory unusable "
          "(holds other files, or runs already: --skip-done / --overwrite; runs of other settings: format, "
          "convention, model, config), held by another run, or its lease lost.")


def add_parser(sub) -> None:
    """Register `clean-warc` with the `cleaner` command line (cleaner.tools.cli.EXTRA_COMMAND_MODULES). Light:
    the job's modules are imported only when the command runs."""
    p = sub.add_parser(
        "clean-warc", help="clean the HTML records of WARC files into Parquet on this machine (no Spark)",
        description="Clean the HTML records of WARC/ARC files (plain, .gz, .zst) with a pool of processes and "
        "write what the Spark job (jobs/clean_warc.py) writes: OUT/run=<id>/[crawl=<c>/]part-*.parquet with the "
        "same columns, OUT/.run.json (every file's counts, errors with offsets, what was left out) and the "
        "summary table. A run is published whole or not at all; --skip-done adds only the files no published "
        "run has done.", epilog=EPILOG)
    p.add_argument("input", nargs="*", metavar="PATH",
                   help="WARC/ARC files, folders (their WARC files; the rest is listed as left out) or globs; "
                   "s3:// and https:// objects too")
    p.add_argument("--input", dest="named_input", nargs="+", action="extend", default=[], metavar="PATH",
                   help="inputs named by the Spark job's flag: the same as PATH (both may be given)")
    p.add_argument("--out", "--output", dest="output", required=True, metavar="DIR",
                   help="output folder (created)")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1, metavar="N",
                   help="worker processes (default: the machine's cores)")
    p.add_argument("--input-list", action="append", default=[], metavar="FILE",
                   help="path list, one WARC path per line, plain or gzip-compressed (Common Crawl's "
                   "warc.paths.gz) (repeatable)")
    p.add_argument("--input-base", metavar="PATH_OR_URL",
                   help="prefix of the relative entries of --input-list (a local folder, file://, s3://commoncrawl/)")
    p.add_argument("--config", "--conf", dest="config", metavar="TOML",
                   help="config overlay (default: conf/default.toml only; the job's settings in [job])")
    p.add_argument("--model", metavar="M", help="model: a packaged model's name (default, cleaneval-2012) "
                   "or a model file (default: the packaged model of the convention, [model.by_convention], and "
                   "for a page in HTML5 markup [model.html5_by_convention])")
    p.add_argument("--convention", metavar="NAME",
                   help="what to keep (docs/conventions.md): main (the main content: on an article page the article "
                   "only), cleaneval or dragnet (default: [model] convention, main); without --model it picks the "
                   "model too")
    p.add_argument("--crawl", help="crawl name for the crawl column (default: from the path)")
    p.add_argument("--partition-by", metavar="COLS",
                   help="comma-separated, of crawl, fetch_month, fetch_day, status; '' for none "
                   "(default: [job] partition_by)")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--skip-done", action="store_true", help="process only files no published run of OUT has done")
    mode.add_argument("--overwrite", action="store_true", help="delete the runs already in OUT first")
    p.add_argument("--wait", nargs="?", type=float, const=float("inf"), default=None, metavar="SECONDS",
                   help="when another run holds OUT, wait for it (at most SECONDS; no number: as long as it runs) "
                        "instead of refusing with exit 5")
    p.add_argument("--format", choices=("parquet", "jsonl"),
                   help="output files: parquet, or jsonl (JSON Lines, gzip or zstd as [job] jsonl_compression says), "
                   "the same fields, as the Spark job's --format (default: [job] format)")
    p.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="a progress line on stderr while the files are cleaned: records and MB of pages so far, their "
                   "rates, the files done (default: on a terminal only, rewritten in place; --progress elsewhere: a "
                   "line every 10 s). Ctrl-C stops at once: the files finished are published (--skip-done cleans the "
                   "rest), exit 130")
    p.add_argument("--progress-every", type=float, default=10.0, metavar="SECONDS",
                   help="with --progress off a terminal: seconds between two progress lines (default: 10)")
    p.add_argument("--target-file-mb", type=float, help=argparse.SUPPRESS)  # the Spark job's; no effect here
    p.set_defaults(func=cmd_clean_warc)


def cmd_clean_warc(args) -> int:
    from .arguments import JobError
    from .report import log, setup_logging

    setup_logging()
    if args.jobs < 1:
        log.error("error: --jobs must be at least 1")
        return 2
    from .pool import PoolCleanWarcJob

    job = PoolCleanWarcJob(args)
    try:
        job.prepare()
        record = job.run()
    except JobError as exc:
        if exc.code == 130:  # Ctrl-C while cleaning: what was kept, in one line
            log.warning("%s", exc)
        else:
            log.error("error: %s", exc)
        job.release()
        return exc.code
    except KeyboardInterrupt:
        log.warning("interrupted: no run published by this command (stopped before any file was cleaned, or "
                    "while publishing: see the output's .run.json)")
        job.release()
        return 130
    if (record.get("totals") or {}).get("failed_files"):
        return 1  # published without them; they are not done (listed in .run.json)
    return 0
