#!/usr/bin/env python
"""Clean the HTML pages of WARC files with Spark; write Parquet (one row per HTML record).

    python jobs/clean_warc.py --input 'warcs/*.warc.gz' --output out/        # local[*]
    spark-submit jobs/clean_warc.py --input s3a://bucket/warcs/ --output s3a://bucket/out/

Both behave the same; `python` starts a local-mode session (all cores; --master to change),
spark-submit uses the session it was given. The shape follows Common Crawl's cc-pyspark
(`sparkcc.py`): a job class with parsed arguments, a per-partition generator over WARC
records (jobs/worker.py), counters for every outcome. What differs: the model and config are
broadcast once and opened once per Python worker; work is planned by bytes (jobs/plan.py);
output is published atomically with a run record (jobs/runs.py).

Exit codes: 0 ok (damaged input files are recorded, not fatal), 1 the Spark job failed, the run was
not published because every page failed for one reason of the cleaner's (not of the pages'), or input
files could not be read (recorded as failed, not done: --skip-done retries them), 2 bad usage, 3 input
missing, 4 invalid model or config, 5 output directory unusable, held by another run (the message names it;
--wait queues behind it) or the run could not be published (docs/faults.md).
"""

from __future__ import annotations

import argparse
import atexit
import functools
import logging
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import zipfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # `python jobs/clean_warc.py` / `spark-submit jobs/clean_warc.py`
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import cleaner  # noqa: E402
from cleaner.config import ConfigError, load_config  # noqa: E402
from cleaner.convention import ConventionError  # noqa: E402
from cleaner.model import ModelError, load_model, resolve_model_path  # noqa: E402
from cleaner.schema import PARTITION_COLUMNS, SCHEMA, SCHEMA_VERSION  # noqa: E402
from jobs import formats, inputs, plan, tempdirs  # noqa: E402
from jobs.lease import Lease, LeaseHeld, LeaseLost, LeaseSettings  # noqa: E402
from jobs.runs import (  # noqa: E402
    OutputDir,
    OutputError,
    PublishError,
    SimulatedCrash,
    done_files,
    new_run_id,
    newest_versions,
    overlap,
    same_version,
)
from jobs.storage import HadoopFS, InputError, LocalFS, base_name, is_local, local_path, resolve_local  # noqa: E402
from jobs.worker import EXPECTED_F1_BANDS  # noqa: E402

log = logging.getLogger("clean_warc")
ROOT = Path(__file__).resolve().parent.parent

# Rejection reasons that say the cleaner failed, not the page: a run whose every page was rejected for one
# of them (a config or model that breaks every page) is not published, so its files are not marked done.
SYSTEMATIC_REASONS = ("internal_error", "parse_error", "decode_failed", "timeout", "poison")
# ... when the run has at least this many HTML records: fewer pages that all fail may just be bad pages, and
# a run of them held back would be held back again by every --skip-done run, never done.
SYSTEMATIC_MIN_RECORDS = 5


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
        description="Clean the HTML records of WARC files with Spark and write Parquet.",
        epilog="Exit codes: 0 ok, 1 Spark job failed, run not published (every page failed for one reason "
               "of the cleaner's) or input files failed, 2 bad usage, 3 input missing, "
               "4 invalid model or config, 5 output directory unusable, held by another run (--wait) "
               "or run not published.")
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
                    "packaged cleaner/models/default.crfsuite)")
    ap.add_argument("--convention", metavar="NAME",
                    help="what to keep, for a convention-aware model (the packaged default; docs/conventions.md): "
                    "main (the main content: on an article page the article only), cleaneval (everything a reader "
                    "takes for the page's text) or dragnet (the article and its comments) (default: [model] "
                    "convention, main)")
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


class _JobLogHandler(logging.StreamHandler):
    """The job's stderr handler, marked so that setup_logging adds it once."""

    _clean_warc = True


def setup_logging() -> None:
    if not any(getattr(h, "_clean_warc", False) for h in log.handlers):
        h = _JobLogHandler(sys.stderr)
        h.setFormatter(logging.Formatter("%(asctime)s clean_warc: %(message)s", "%H:%M:%S"))
        log.addHandler(h)
    log.setLevel(logging.INFO)
    log.propagate = False




def code_version() -> dict:
    out: dict[str, str | bool] = {"webcleaner": cleaner.__version__, "schema": SCHEMA_VERSION}
    try:
        import pyspark
        out["pyspark"] = pyspark.__version__
    except ImportError:  # pragma: no cover
        pass
    if (ROOT / ".git").exists():
        try:
            out["git_commit"] = subprocess.run(
                ["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True,
                timeout=5, check=True).stdout.strip()
            dirty = subprocess.run(
                ["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no"],
                capture_output=True, text=True, timeout=5).stdout.strip()
            out["git_dirty"] = bool(dirty)
        except Exception:
            pass
    return out


# ------------------------------------------------------------------------------------------
# Progress: one line per finished WARC, read from the accumulator while the job runs
# ------------------------------------------------------------------------------------------

class ProgressLogger(threading.Thread):
    def __init__(self, acc, pieces: list[dict], interval: float = 1.0, crash_when=None):
        super().__init__(name="clean_warc-progress", daemon=True)
        self.acc = acc
        self.crash_when = crash_when  # test hook --simulate-crash during_write: (when, crash)
        self.interval = interval
        self.parts: dict[str, int] = {}
        for p in pieces:
            self.parts[p["uri"]] = p["parts"]
        self.order = list(dict.fromkeys(p["uri"] for p in pieces))
        self.logged: set[str] = set()
        self._stop_event = threading.Event()

    def run(self) -> None:
        while not self._stop_event.wait(self.interval):
            self.poll()

    def stop(self) -> None:
        self._stop_event.set()
        self.join(timeout=10)
        self.poll()

    def poll(self) -> None:
        try:
            snap = self.acc.value
        except Exception:
            return
        if self.crash_when is not None and self.crash_when[0]():  # the write is under way: stop the job
            self.crash_when[1]()
            self.crash_when = None
        by_file: dict[str, list[dict]] = {}
        for st in snap.values():
            by_file.setdefault(st["file"], []).append(st)
        for uri, sts in by_file.items():
            if uri in self.logged or len(sts) < self.parts.get(uri, 1):
                continue
            self.logged.add(uri)
            f = merge_file_stats(sts)
            extra = f" ({f['pieces']} ranges)" if f["pieces"] > 1 else ""
            err = f", OPEN FAILED: {f['open_error']}" if f["open_error"] else ""
            log.info("WARC %d/%d done: %s%s: %d records, %d cleaned, %d rejected, %d skipped, "
                     "%d errors, %.1f s%s", len(self.logged), len(self.parts), base_name(uri), extra,
                     f["records_read"], f["cleaned"], sum(f["rejected"].values()),
                     sum(f["skipped"].values()), len(f["errors"]), f["seconds"], err)


def _bands(counts: dict) -> dict:
    """Counts by band of expected word F1, the surest band first (jobs.worker.EXPECTED_F1_BANDS)."""
    order = [name for _, name in EXPECTED_F1_BANDS] + ["none"]
    return {name: counts[name] for name in order if counts.get(name)}


def _add_counts(into: dict, more: dict) -> None:
    for k, v in more.items():
        into[k] = into.get(k, 0) + v


def merge_file_stats(pieces: list[dict]) -> dict:
    """The counters of one file from the counters of its pieces."""
    pieces = sorted(pieces, key=lambda s: s["start"])
    out: dict[str, Any] = {
        "records_read": 0, "html_records": 0, "cleaned": 0, "rejected": {}, "expected_f1": {}, "skipped": {},
        "errors": [], "warnings": 0, "seconds": 0.0, "cpu_seconds": 0.0, "clean_seconds": 0.0,
        "bytes_read": 0, "truncated_payloads": 0, "blocks_truncated": 0, "pieces": len(pieces), "open_error": None,
        "completed": True}
    for s in pieces:
        for k in ("records_read", "html_records", "cleaned", "bytes_read", "truncated_payloads"):
            out[k] += s[k]
        out["blocks_truncated"] += s.get("blocks_truncated", 0)
        for k in ("seconds", "cpu_seconds", "clean_seconds"):
            out[k] += s[k]
        _add_counts(out["rejected"], s["rejected"])
        _add_counts(out["expected_f1"], s.get("expected_f1", {}))
        _add_counts(out["skipped"], s["skipped"])
        out["errors"].extend(s["errors"])
        out["warnings"] += len(s["warnings"])
        out["open_error"] = out["open_error"] or s["open_error"]
        out["first_internal_error"] = out.get("first_internal_error") or s.get("first_internal_error")
        out["completed"] = out["completed"] and s["completed"]
    out["rejected"] = dict(sorted(out["rejected"].items()))
    out["skipped"] = dict(sorted(out["skipped"].items()))
    return out


# ------------------------------------------------------------------------------------------
# The job
# ------------------------------------------------------------------------------------------

_SHIPPED: dict[str, str] = {}


class CleanWarcJob:
    """cc-pyspark-style job: parse arguments, validate, run on a SparkSession."""

    name = "clean_warc"
    command = "jobs/clean_warc.py"  # how the run record names the command that made it

    def __init__(self, argv: list[str] | None = None):
        self.argv = list(sys.argv[1:] if argv is None else argv)
        self.args = build_parser().parse_args(self.argv)
        self.prepared = False
        self.lease: Lease | None = None  # taken in prepare (a local output) or run (a remote one)
        self.convention: str | None = None  # what the model cleans by (set in prepare; None: no conventions)

    # --- before Spark -------------------------------------------------------------------

    def prepare(self) -> None:
        """Check everything that can be checked without Spark; raise JobError."""
        a = self.args
        try:
            self.config = load_config(a.config)
        except ConfigError as exc:
            raise JobError(4, f"invalid config: {exc}") from exc
        self.job = dict(self.config["job"])  # every key checked by load_config (cleaner/settings.py)
        self._check_job_settings()
        try:
            self.model = load_model(a.model)
        except ModelError as exc:
            hint = "" if a.model else " (train one with `cleaner train`, or pass --model)"
            raise JobError(4, f"unreadable model: {exc}{hint}") from exc
        try:  # --convention, else [model] convention of --conf, for a convention-aware model (cleaner/convention.py)
            self.convention = self.model.tagging_convention(self.config, a.convention)
        except ConventionError as exc:
            raise JobError(4, f"invalid {'--convention' if a.convention else 'config'}: {exc}") from exc
        if a.convention:  # the workers read it from the config they are sent
            self.config = self.config.overlay({"model": {"convention": a.convention}})
        self.model_path = str(resolve_model_path(a.model).resolve())  # a packaged model's name: its file
        if a.input_base and not a.input_list:
            raise JobError(2, "--input-base prefixes the entries of --input-list: give --input-list FILE too")
        items = list(a.input)
        try:
            if a.input_base:
                inputs.check_base(a.input_base)
            for lst in a.input_list:
                items += inputs.read_input_list(lst, a.input_base)
        except InputError as exc:
            raise JobError(3, str(exc)) from exc
        if not items:
            raise JobError(2, "no input: give --input PATH... or --input-list FILE")
        try:
            python_remote, items_left = inputs.split_python_remote(items)
            expanded, self.local_skipped = inputs.expand_directories(items_left)
            self.local_files, self.remote_items = resolve_local(expanded)
            self.local_files += inputs.stat_python_remote(python_remote)
        except InputError as exc:
            raise JobError(3, str(exc)) from exc
        for s in self.local_skipped:
            log.warning("input left out: %s: %s", s["path"], s["reason"])
        self.inputs_given = items
        self.output_local = is_local(a.output)
        self.lease = None
        if a.wait is not None and a.wait < 0:
            raise JobError(2, "--wait SECONDS must be 0 or more")
        if formats.needs_local_output(self.job) and not self.output_local:
            raise JobError(4, f"invalid config: [job] jsonl_compression = \"zstd\" in {self.config.source} needs "
                              "a local --output (Spark's JSON writer has no zstd codec); use \"gzip\"")
        if self.output_local:
            root = os.path.abspath(local_path(a.output))
            try:
                probe_output(root)
            except OSError as exc:
                raise JobError(5, f"output directory {root} is not usable: {exc.strerror or exc}") from exc
            out = OutputDir(LocalFS(), root)
            self._take_lease(out)
            try:
                self._check_output(out)
            except JobError:
                self.release()
                raise
        self.prepared = True

    def _take_lease(self, out: OutputDir) -> None:
        """Hold the output directory for this run (jobs/lease.py); exit 5 naming the holder."""
        self.lease = Lease(out.fs, out.root, new_run_id(), LeaseSettings.from_config(self.job),
                           new_run_id=new_run_id)
        try:
            self.lease.acquire(self.args.wait)
        except LeaseHeld as exc:
            self.lease = None
            raise JobError(5, str(exc)) from exc
        except OSError as exc:
            self.lease = None
            raise JobError(5, f"output directory {out.root}: cannot take its lease: {exc}") from exc

    def release(self, crashed: bool = False) -> None:
        """Give the output directory back (a simulated crash leaves the lease behind, as a kill would)."""
        if self.lease is not None:
            if crashed:
                self.lease.abandon()
            else:
                self.lease.release()

    def _check_job_settings(self) -> None:
        j, src = self.job, self.config.source
        if self.args.partition_by is not None:
            j["partition_by"] = [c.strip() for c in self.args.partition_by.split(",") if c.strip()]
            bad = [c for c in j["partition_by"] if c not in PARTITION_COLUMNS]
            if bad:  # the command line's mistake, not the config's
                raise JobError(2, f"--partition-by: unknown column(s) {', '.join(bad)} "
                                  f"(allowed: {', '.join(PARTITION_COLUMNS)}; '' for none)")
        if self.args.distribution:
            j["distribution"] = self.args.distribution
        if self.args.target_file_mb:
            j["target_file_mb"] = self.args.target_file_mb
        if self.args.format:
            j["format"] = self.args.format
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

    def _check_output(self, out: OutputDir) -> None:
        if not out.is_ours():
            raise JobError(5, f"output directory {out.root} holds files this job did not write; "
                              "give an empty or new directory")
        if not self.args.skip_done and not self.args.overwrite and out.published_ids():
            raise JobError(5, f"output directory {out.root} already holds "
                              f"{len(out.published_ids())} published run(s): use --skip-done to "
                              "add only new WARC files, or --overwrite to replace them")

    # --- Spark --------------------------------------------------------------------------

    def create_session(self):
        from pyspark.sql import SparkSession

        a, j = self.args, self.job
        builder = SparkSession.builder.appName(j["app_name"])
        submitted = "PYSPARK_GATEWAY_PORT" in os.environ  # started by spark-submit
        if submitted:
            if a.master:
                log.warning("--master %s ignored: spark-submit's --master decides", a.master)
        else:
            master = a.master or j["master"]
            master = with_local_retries(master, j["local_max_failures"])
            builder = builder.master(master)
            if master.startswith("local"):
                # Local mode needs no network, and its workers must be this Python.
                os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
                os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
                builder = (builder.config("spark.driver.host", "127.0.0.1")
                           .config("spark.driver.bindAddress", "127.0.0.1")
                           .config("spark.driver.memory", j["driver_memory"]))
            builder = builder.config("spark.ui.showConsoleProgress",
                                     str(bool(j["progress_bar"]) and not a.no_progress).lower())
            builder = builder.config("spark.python.worker.reuse", "true")
        for item in a.spark_conf:
            key, sep, value = item.partition("=")
            if not sep:
                raise JobError(2, f"--spark-conf expects KEY=VALUE, got {item!r}")
            builder = builder.config(key.strip(), value.strip())
        spark = builder.getOrCreate()
        spark.sparkContext.setLogLevel(j["log_level"])
        return spark

    def run(self, spark=None) -> dict:
        """Run on `spark` (an existing session is reused and left running) or on a session
        of its own (stopped at the end). Returns the run record."""
        if not self.prepared:
            self.prepare()
        crashed = False
        try:
            return self._run_on(spark)
        except SimulatedCrash:
            crashed = True
            raise
        finally:
            self.release(crashed)

    def _run_on(self, spark) -> dict:
        own = spark is None
        self.own_session = own
        if own:
            spark = self.create_session()
        saved = self._apply_sql_conf(spark)
        try:
            return self._run(spark)
        finally:
            for key, value in saved.items():
                try:
                    if value is None:
                        spark.conf.unset(key)
                    else:
                        spark.conf.set(key, value)
                except Exception:
                    pass
            if own:
                spark.stop()

    def _apply_sql_conf(self, spark) -> dict:
        j = self.job
        advisory = int(j["target_file_mb"] * (1 << 20) * j["shuffle_bytes_per_output_byte"])
        settings = {
            "spark.sql.session.timeZone": "UTC",
            "spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS",
            "spark.sql.parquet.compression.codec": j["compression"],
            "spark.sql.adaptive.enabled": "true",
            "spark.sql.adaptive.coalescePartitions.parallelismFirst": "false",
            "spark.sql.adaptive.advisoryPartitionSizeInBytes": str(advisory),
            "spark.sql.files.maxRecordsPerFile": "0",
        }
        saved = {}
        for key, value in settings.items():
            try:
                saved[key] = spark.conf.get(key, None)
            except Exception:
                saved[key] = None
            spark.conf.set(key, value)
        spark.sparkContext._jsc.hadoopConfiguration().set(
            "parquet.compression.codec.zstd.level", str(int(j["compression_level"])))
        return saved

    def _ship_code(self, sc) -> None:
        """Make `jobs` importable on the workers (the accumulator type and the partition
        function live there). From a source tree: zip it and addPyFile; from a zip given
        with --py-files: already there."""
        import jobs

        pkg = Path(jobs.__file__).resolve().parent
        if not pkg.is_dir():
            return
        key = sc.applicationId
        if key in _SHIPPED:
            return
        tmp = tempfile.mkdtemp(prefix=f"{tempdirs.CODE_PREFIX}{os.getpid()}-")  # the pid: swept once it is gone
        atexit.register(shutil.rmtree, tmp, True)
        zpath = os.path.join(tmp, f"clean_warc_jobs_{key.replace('-', '_')}.zip")
        with zipfile.ZipFile(zpath, "w", zipfile.ZIP_DEFLATED) as zf:
            for py in sorted(pkg.glob("*.py")):
                zf.write(py, f"jobs/{py.name}")
        sc.addPyFile(zpath)
        _SHIPPED[key] = zpath

    def crawl_name(self, uri: str) -> str:
        if self.args.crawl:
            return self.args.crawl
        m = re.search(self.job["crawl_pattern"], uri)
        if m:
            return m.group(1) if m.groups() else m.group(0)
        return self.job["default_crawl"]

    # --- what the engine does: Spark here; jobs/pool.py does the same on local processes (cleaner clean-warc) ---

    def _start_engine(self, spark) -> None:
        self._ship_code(spark.sparkContext)

    def _cores(self, spark) -> int:
        return max(1, spark.sparkContext.defaultParallelism)

    def _scan_offsets(self, spark, run_id: str, specs: list[dict]) -> list[dict]:
        """jobs.worker.index_file of each spec, on the executors."""
        from jobs.worker import index_file

        sc = spark.sparkContext
        sc.setJobDescription(f"clean_warc {run_id}: offset pre-scan of {len(specs)} files")
        return sc.parallelize(specs, len(specs)).map(functools.partial(index_file, settings={})).collect()

    def _clean_pieces(self, spark, run_id: str, pieces: list[dict], task_specs: list[dict], fs, staging: str,
                      n_files: int) -> dict[str, dict]:
        """Clean every task's pieces (jobs.worker) into Parquet files under `staging`: {piece key: counters}."""
        from pyspark.sql.pandas.types import from_arrow_schema

        from jobs.worker import PieceStatsParam, marker_root, process_partition_arrow

        j = self.job
        part_cols = list(j["partition_by"])
        sc = spark.sparkContext
        bc = sc.broadcast(self._worker_payload())
        acc = sc.accumulator({}, PieceStatsParam())
        worker_settings = self._worker_settings(run_id)
        # One task spec per partition: task ids from spark.range, rows back as Arrow batches.
        specs_bc = sc.broadcast(task_specs)
        n_tasks = len(task_specs)
        ids = spark.range(0, n_tasks, 1, n_tasks).selectExpr("CAST(id AS INT) AS task")
        df = ids.mapInArrow(
            functools.partial(process_partition_arrow, bc=bc, acc=acc, settings=worker_settings, specs_bc=specs_bc),
            from_arrow_schema(SCHEMA),
        )
        df = df.hint("rebalance", *part_cols)
        sc.setJobDescription(f"clean_warc {run_id}: {n_files} WARC files")
        crash_when = None
        crashed_during_write: list[bool] = []
        if self.args.simulate_crash == "during_write":  # once Spark has written into the staging directory

            def crash() -> None:
                if self.own_session:  # the process exits at once, as a killed driver would
                    sys.stderr.write("clean_warc: simulated crash during_write\n")
                    sys.stderr.flush()
                    os._exit(70)
                crashed_during_write.append(True)  # a session of the caller's: the job stops, the run ends
                sc.cancelAllJobs()

            crash_when = (functools.partial(_has_files, fs, staging), crash)
        progress = ProgressLogger(acc, pieces, interval=0.2 if crash_when else 1.0, crash_when=crash_when)
        markers = marker_root(worker_settings)
        tempdirs.claim(markers)  # this driver's pid in it: a sweep removes it once the driver is gone
        progress.start()
        try:
            formats.write(df, fs.spark_path(staging), j["format"], j, part_cols)
        except Exception as exc:
            if crashed_during_write:
                raise SimulatedCrash("during_write") from exc
            raise JobError(1, f"Spark job failed: {_short(exc)}") from exc
        finally:
            progress.stop()
            sc.setJobDescription(None)
            if not crashed_during_write:
                shutil.rmtree(markers, ignore_errors=True)  # this node's, on every way out
        if crashed_during_write:
            raise SimulatedCrash("during_write")
        piece_stats = dict(acc.value)
        bc.unpersist()
        return piece_stats

    def _worker_payload(self) -> dict:
        """What every worker builds its model and config from (jobs.worker._state), sent once."""
        config_key = self.config.section_hash(tuple(self.config.data), self.model.meta.get("families", ()))
        return {
            "key": f"{self.model.hash}:{config_key}",
            "model": self.model.data, "meta": self.model.meta, "markers": self.model.markers,
            "first_pass": self.model.first_pass,
            "config": self.config.to_json(), "config_source": self.config.source,
        }

    def _worker_settings(self, run_id: str) -> dict:
        j = self.job
        return {"max_payload_bytes": int(j["max_payload_bytes"]), "run_id": run_id,
                "marker_dir": str(j["marker_dir"] or "")}

    def _engine_record(self, spark) -> dict:
        """The engine's part of the run record."""
        sc = spark.sparkContext
        return {"spark": {"version": spark.version, "master": sc.master, "app_id": sc.applicationId,
                          "default_parallelism": sc.defaultParallelism}}

    def _run(self, spark) -> dict:
        a, j = self.args, self.job
        started = datetime.now(UTC)
        t0 = time.perf_counter()
        self._start_engine(spark)

        # inputs
        files = list(self.local_files)
        skipped_inputs = list(self.local_skipped)
        if self.remote_items:
            try:
                found, left = inputs.resolve_jvm(spark, self.remote_items)
            except InputError as exc:
                raise JobError(3, str(exc)) from exc
            files += found
            skipped_inputs += left
            for s in left:
                log.warning("input left out: %s: %s", s["path"], s["reason"])
        files = list({f.uri: f for f in files}.values())  # canonical uris (realpath): one file by two paths once
        self.skipped_inputs = skipped_inputs  # recorded in _run.json and the summary

        # output directory: take it (the lease), recover, decide what is to do
        fs: LocalFS | HadoopFS
        if self.output_local:
            fs = LocalFS()
            root = os.path.abspath(local_path(a.output))
        else:
            fs = HadoopFS(spark, a.output)
            root = a.output
        out = OutputDir(fs, root)
        try:
            if self.lease is None:  # a remote output: taken now that its file system is at hand
                try:
                    fs.mkdirs(root)
                except Exception as exc:
                    raise JobError(5, f"output directory {root} is not usable: {_short(exc)}") from exc
                self._take_lease(out)
            self._check_output(out)
            if a.overwrite:
                out.clear()
            fs.mkdirs(root)
            published = out.recover()
        except OutputError as exc:
            raise JobError(5, str(exc)) from exc
        except OSError as exc:
            raise JobError(5, f"output directory {root} is not usable: {exc}") from exc
        tempdirs.sweep(self.job["marker_dir"])
        part_cols = list(j["partition_by"])
        for rid, rec in sorted(published.items()):
            earlier = (rec.get("output") or {}).get("partition_by")
            if earlier is not None and list(earlier) != part_cols:
                raise JobError(5, f"output directory {root} is partitioned by "
                                  f"{','.join(earlier) or '(nothing)'} (run {rid}); this run would "
                                  f"use {','.join(part_cols) or '(nothing)'}: pass --partition-by "
                                  f"'{','.join(earlier)}' or use another output directory")
        done = done_files(published, files) if a.skip_done else {}
        todo = [f for f in files if f.uri not in done]
        skipped_done = {f.uri: done[f.uri] for f in files if f.uri in done}
        self.superseded = superseded_files(published, todo) if a.skip_done else {}
        for uri, (rid, info) in self.superseded.items():
            log.info("%s changed since run %s (%s): cleaned again, its rows in this run supersede those of %s",
                     base_name(uri), rid, info.get("status"), rid)
        for uri, rid in skipped_done.items():
            info = published[rid]["files"][uri]
            if info.get("status") == "incomplete":
                log.warning("%s ended early at byte %s in run %s and has not changed since: not read again "
                            "(it is cleaned again once its size or modification time changes)",
                            base_name(uri), info.get("incomplete_at"), rid)
        if skipped_done:
            log.info("--skip-done: %d of %d input files already done by earlier runs",
                     len(skipped_done), len(files))
        if not todo:
            log.info("nothing to do: every input file is done in %s", root)
            return {"status": "nothing_to_do", "inputs": [f.uri for f in files],
                    "inputs_skipped": skipped_inputs, "skipped_done": skipped_done, "rows_written": 0}

        lease = self.lease
        assert lease is not None  # taken in prepare() (a local output) or above (a remote one), else raised
        run_id = ordered_run_id(lease.run_id, published)
        planned = set(published)
        if a.simulate_crash == "before_staging":
            raise SimulatedCrash("before_staging")
        log.info("run %s: %d WARC files (%.1f MB) -> %s", run_id, len(todo),
                 sum(f.size for f in todo) / 1e6, root)

        # plan
        settings = plan.PlanSettings.from_config(j)
        cores = self._cores(spark)
        target = plan.piece_target(todo, cores, settings)
        crawl_of = {f.uri: self.crawl_name(f.uri) for f in todo}
        cands = plan.split_candidates(todo, target, settings)
        cuts: dict[str, list[int]] = {}
        index_info = {"files": len(cands), "split": 0, "seconds": 0.0, "wall_seconds": 0.0}
        if cands:
            ti = time.perf_counter()
            specs = [{"uri": f.uri, "size": f.size, "pieces": plan.pieces_wanted(f, target, settings)}
                     for f in cands]
            try:
                results = self._scan_offsets(spark, run_id, specs)
            except Exception as exc:  # an optimisation only: read those files whole
                log.warning("offset pre-scan failed (%s): big files are read whole", _short(exc))
                results = []
            for r in results:
                index_info["seconds"] += r["seconds"]
                if r["cuts"]:
                    cuts[r["uri"]] = r["cuts"]
            index_info["split"] = len(cuts)
            index_info["wall_seconds"] = time.perf_counter() - ti
            log.info("offset pre-scan: %d of %d big files split into record ranges (%.1f s)",
                     len(cuts), len(cands), index_info["wall_seconds"])
        pieces = plan.make_pieces(todo, crawl_of, target, settings, cuts)
        tasks = plan.pack(pieces, target, cores, settings)
        task_specs = [{"task": i, "pieces": t} for i, t in enumerate(tasks)]
        dist = dict(plan.describe(tasks), mode=settings.mode, cores=cores,
                    piece_target_bytes=int(target), index=index_info)
        log.info("%d pieces in %d tasks on %d cores (%s)", dist["pieces"], dist["tasks"], cores,
                 settings.mode)

        # run
        staging = out.staging_dir(run_id)
        piece_stats = self._clean_pieces(spark, run_id, pieces, task_specs, fs, staging, len(todo))
        for st in piece_stats.values():
            for rec_key in st.get("poison_candidates") or ():
                log.warning("poison record in %s at %s (offset:record id): it crashed the "
                            "Python worker and was rejected as `poison`", base_name(st["file"]),
                            rec_key)

        missing = [p["key"] for p in pieces if p["key"] not in piece_stats]
        if missing:
            raise JobError(1, f"counters missing for {len(missing)} pieces (e.g. {missing[0]}); "
                              "run not published")
        per_file: dict[str, list[dict]] = {}
        for p in pieces:
            per_file.setdefault(p["uri"], []).append(piece_stats[p["key"]])
        rows_expected = sum(s["html_records"] for s in piece_stats.values())
        parquet_files = [(p, n) for p, n in fs.files(staging) if formats.is_data_file(p, j["format"])]
        parquet_files = formats.finish(parquet_files, j)  # zstd JSON Lines: compressed here (jobs/formats.py)
        rows_written = formats.count_rows(spark, fs, staging, parquet_files, j["format"]) if rows_expected else 0
        if rows_written != rows_expected:
            raise JobError(1, f"staged output has {rows_written} rows, counters say "
                              f"{rows_expected}: run not published")

        systematic = systematic_failure(piece_stats.values())
        if systematic:
            out.fs.delete(staging)
            raise JobError(1, f"{systematic}: run {run_id} not published, no input file marked done "
                              "(a failure of the cleaner, not of the pages: check --conf and --model)")

        elapsed = time.perf_counter() - t0
        record = self._record(run_id, started, elapsed, files, todo, skipped_done, crawl_of,
                              per_file, piece_stats, dist, out, staging, parquet_files,
                              rows_written, self._engine_record(spark))

        def before_commit() -> None:  # the last checks before the rename that publishes
            try:
                lease.check()
            except (LeaseLost, OSError) as exc:
                raise PublishError(str(exc)) from exc
            clash = overlap(todo, out.published_since(planned))
            if clash:
                uri, other = clash[0]
                raise PublishError(f"run {other} published {len(clash)} of this run's files since it planned "
                                   f"(e.g. {base_name(uri)}): publishing would duplicate their rows")
        try:
            note = out.publish(run_id, record, crash_at=a.simulate_crash, before_commit=before_commit)
        except SimulatedCrash:
            raise
        except PublishError as exc:
            try:
                out.fs.delete(staging)
            except Exception:
                pass
            raise JobError(5, f"run {run_id} not published in {root} (no file marked done): {exc}") from exc
        except Exception as exc:
            raise JobError(5, f"run {run_id} not published in {root} (no file marked done): {exc}") from exc
        if note:
            log.warning("%s", note)
        print_summary(record, sys.stdout)
        failed = [u for u, f in record["files"].items() if f["status"] == "failed"]
        if failed:
            log.warning("%d files could not be opened and are not marked done (a --skip-done run "
                        "retries them): %s", len(failed), ", ".join(failed[:5]))
        return record

    def _record(self, run_id, started, elapsed, files, todo, skipped_done, crawl_of, per_file,
                piece_stats, dist, out, staging, parquet_files, rows_written, engine: dict) -> dict:
        j = self.job
        size_of = {f.uri: f.size for f in todo}
        mtime_of = {f.uri: f.mtime_ns for f in todo}
        file_records = {}
        errors = []
        totals: dict[str, Any] = {"files": len(todo), "records_read": 0, "html_records": 0, "cleaned": 0,
                  "rejected": {}, "expected_f1": {}, "skipped": {}, "errors": 0, "failed_files": 0,
                  "incomplete_files": 0, "damaged_files": 0, "blocks_truncated": 0}
        for uri in [f.uri for f in todo]:
            m = merge_file_stats(per_file[uri])
            rejected_n, skipped_n = sum(m["rejected"].values()), sum(m["skipped"].values())
            accounted = m["cleaned"] + rejected_n + skipped_n == m["records_read"] \
                and m["cleaned"] + rejected_n == m["html_records"]
            if not m["open_error"] and not m["records_read"] and m["errors"]:
                # nothing in it could be read as a WARC/ARC record: failed, not done (not an empty file)
                m["open_error"] = f"no WARC/ARC record could be read: {m['errors'][0]['error']}"[:500]
                m["errors"] = []
            ended_at = ended_early(m)
            status = "failed" if m["open_error"] else "incomplete" if ended_at is not None else "done"
            file_records[uri] = {
                "name": base_name(uri), "size": size_of[uri], "mtime_ns": mtime_of[uri], "crawl": crawl_of[uri],
                "status": status, "open_error": m["open_error"], "incomplete_at": ended_at,
                "records_read": m["records_read"], "html_records": m["html_records"],
                "cleaned": m["cleaned"], "rejected": m["rejected"], "expected_f1": _bands(m["expected_f1"]),
                "skipped": m["skipped"],
                "accounted": accounted, "completed": m["completed"],
                "errors": m["errors"], "warnings": m["warnings"],
                "truncated_payloads": m["truncated_payloads"], "blocks_truncated": m["blocks_truncated"],
                "pieces": m["pieces"],
                "seconds": round(m["seconds"], 3), "clean_seconds": round(m["clean_seconds"], 3),
                "cpu_seconds": round(m["cpu_seconds"], 3), "bytes_read": m["bytes_read"],
            }
            if not accounted:
                log.error("accounting mismatch in %s: %s", uri, file_records[uri])
            if m.get("first_internal_error"):
                file_records[uri]["first_internal_error"] = m["first_internal_error"]
                log.warning("%s: %d records rejected as internal_error, first at offset %s: %s",
                            base_name(uri), m["rejected"].get("internal_error", 0),
                            m["first_internal_error"]["offset"], m["first_internal_error"]["error"])
            for k in ("records_read", "html_records", "cleaned"):
                totals[k] += m[k]
            _add_counts(totals["rejected"], m["rejected"])
            _add_counts(totals["expected_f1"], m["expected_f1"])
            _add_counts(totals["skipped"], m["skipped"])
            totals["errors"] += len(m["errors"])
            totals["blocks_truncated"] += m["blocks_truncated"]
            totals["failed_files"] += status == "failed"
            totals["incomplete_files"] += status == "incomplete"
            totals["damaged_files"] += bool(m["errors"])
            if m["open_error"]:
                errors.append({"file": uri, "offset": None, "error": m["open_error"]})
            errors.extend({"file": uri, **e} for e in m["errors"])
        totals["rejected"] = dict(sorted(totals["rejected"].items()))
        totals["expected_f1"] = _bands(totals["expected_f1"])
        totals["skipped"] = dict(sorted(totals["skipped"].items()))
        workers: dict[str, dict] = {}
        for s in piece_stats.values():
            w = workers.setdefault(str(s["pid"]), {"pieces": 0, "tasks": set(), "model_loads": 0,
                                                   "max_rss_mb": 0.0, "clean_seconds": 0.0})
            w["pieces"] += 1
            w["tasks"].add(s["task"])
            w["model_loads"] = max(w["model_loads"], s["model_loads_in_process"])
            w["max_rss_mb"] = max(w["max_rss_mb"], round(s["max_rss_kb"] / 1024, 1))
            w["clean_seconds"] = round(w["clean_seconds"] + s["clean_seconds"], 3)
            w["gc_thresholds"] = s["gc_thresholds"]  # as the worker cleaned ([runtime], cleaner/runtime.py)
            # whether it ran the compiled stages (cleaner/__init__.py): without them a page costs 15-20 % more CPU
            w["native"] = s.get("native")
        for w in workers.values():
            w["tasks"] = len(w["tasks"])
        per_task: dict[int, list[float]] = {}
        for s in piece_stats.values():
            t = per_task.setdefault(int(s["task"]), [0.0, 0.0])
            t[0] += s["seconds"]
            t[1] += s["cpu_seconds"]
        dist = dict(dist, task_seconds=[round(per_task[i][0], 3) for i in sorted(per_task)],
                    task_cpu_seconds=[round(per_task[i][1], 3) for i in sorted(per_task)])
        run_dir = out.run_dir(run_id)
        staged_root = staging.rstrip("/") + "/"
        out_files = [{"path": p[len(staged_root):] if p.startswith(staged_root) else p, "bytes": n}
                     for p, n in parquet_files]
        return {
            "run_id": run_id,
            "job": self.name,
            "status": "published",
            "started_at": started.isoformat(timespec="seconds"),
            "finished_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "elapsed_s": round(elapsed, 3),
            "docs_per_s": round(totals["html_records"] / elapsed, 2) if elapsed > 0 else None,
            "code_version": code_version(),
            "command": [self.command, *self.argv],
            **engine,
            "config_source": self.config.source,
            "config": dict(self.config.data, job=j),
            "model": {"path": self.model_path, "hash": self.model.hash,
                      "feature_version": self.model.feature_version,
                      "convention": self.convention,  # None: a model trained without conventions
                      "labels": self.model.labels},
            "inputs": [f.uri for f in files],
            "inputs_skipped": getattr(self, "skipped_inputs", []),
            "skipped_done": skipped_done,
            # files cleaned again because they changed: {uri: the run whose rows of it this run supersedes}
            "supersedes": {u: rid for u, (rid, _) in getattr(self, "superseded", {}).items()},
            "output": {"root": out.root, "run_dir": run_dir, "partition_by": list(j["partition_by"]),
                       "format": j["format"],  # parquet_files counts the data files of either format
                       "compression": j["compression"] if j["format"] == "parquet" else j["jsonl_compression"],
                       "target_file_mb": j["target_file_mb"],
                       "rows_written": rows_written, "parquet_files": len(out_files),
                       "bytes_written": sum(f["bytes"] for f in out_files), "files": out_files},
            "distribution": dist,
            "totals": totals,
            "files": file_records,
            "errors": errors,
            "workers": workers,
        }


# The errors of the WARC reader (cleaner/warc.py) that say the input ended inside a gzip member or a record.
_EOF_ERRORS = ("gzip member truncated", "record truncated:")


def ended_early(merged: dict) -> int | None:
    """The byte offset where a file ended early (its last error is the input ending inside a gzip member or a
    record: a copy still in progress, a cut download), else None. Damage in the middle of a file, after
    which the reader found the next record and read to the end, is not ending early."""
    errors = merged.get("errors") or []
    if not errors or merged.get("open_error"):
        return None
    last = max(errors, key=lambda e: e.get("offset", -1))
    if str(last.get("error", "")).startswith(_EOF_ERRORS) and last.get("resync_offset") is None:
        return int(last["offset"])
    if "resync_offset" in last and last["resync_offset"] is None:
        return int(last["offset"])  # unreadable from there on: no next record up to the end (cut in a header)
    return None


def superseded_files(published: dict, todo) -> dict:
    """{uri: (run id, files entry)} of this run's files that an earlier run recorded in another version."""
    newest = newest_versions(published)
    return {f.uri: newest[f.uri] for f in todo
            if f.uri in newest and newest[f.uri][1].get("status") in ("done", "incomplete")
            and not same_version(newest[f.uri][1], f.size, f.mtime_ns)}


def _has_files(fs, path: str) -> bool:
    try:
        return fs.kind == "local" and any(files for _, _, files in os.walk(path))
    except Exception:
        return False


def probe_output(root: str) -> None:
    """Create the output directory if needed and prove it writable (a probe file written and removed), so
    an unusable output stops the run before any work. Raises OSError."""
    if os.path.exists(root) and not os.path.isdir(root):
        raise NotADirectoryError(20, "not a directory")
    os.makedirs(root, exist_ok=True)
    probe = os.path.join(root, f".probe-{os.getpid()}-{os.urandom(3).hex()}")
    fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.write(fd, b"probe\n")
    finally:
        os.close(fd)
        try:
            os.unlink(probe)
        except FileNotFoundError:  # removed by a run recovering the directory (it sweeps probes of killed runs)
            pass


_LOCAL_MASTER_RX = re.compile(r"^local(?:\[([^,\]]+)\])?$")


def with_local_retries(master: str, max_failures: int) -> str:
    """local / local[N] / local[*] -> local[N,F]: in local mode Spark retries a failed task only when the
    master says so, so one killed Python worker would fail the run ([job] local_max_failures). A master
    that names F already, and every other master, is kept."""
    m = _LOCAL_MASTER_RX.match(master.strip())
    if not m or max_failures < 2:
        return master
    return f"local[{m.group(1) or '1'},{int(max_failures)}]"


def ordered_run_id(run_id: str, published: dict) -> str:
    """`run_id`, or an id after every published one when the clock says otherwise (ids sort by time, and the
    newest run of a file is the one with the greatest id)."""
    latest = max(published, default="")
    if run_id > latest:
        return run_id
    return f"{latest}-{os.urandom(2).hex()}"


def systematic_failure(piece_stats) -> str | None:
    """What went wrong when every HTML record of the run (at least SYSTEMATIC_MIN_RECORDS) was rejected for
    one reason that says the cleaner failed rather than the page (SYSTEMATIC_REASONS), else None."""
    rejected: dict[str, int] = {}
    html = cleaned = 0
    for s in piece_stats:
        html += s["html_records"]
        cleaned += s["cleaned"]
        _add_counts(rejected, s["rejected"])
    if html < SYSTEMATIC_MIN_RECORDS or cleaned or len(rejected) != 1:
        return None
    reason = next(iter(rejected))
    if reason not in SYSTEMATIC_REASONS:
        return None
    return f"every one of the {html} HTML records was rejected as {reason}"


def _short(exc: BaseException) -> str:
    text = str(exc).strip()
    for line in text.splitlines():
        if "Error" in line or "Exception" in line:
            return line.strip()[:500]
    return (text.splitlines()[0] if text else type(exc).__name__)[:500]


# ------------------------------------------------------------------------------------------
# Summary table
# ------------------------------------------------------------------------------------------

def print_summary(record: dict, stream, max_files: int = 40) -> None:
    t = record["totals"]
    rows = []
    for f in record["files"].values():
        rows.append((f["name"], f["records_read"], f["html_records"], f["cleaned"],
                     sum(f["rejected"].values()), sum(f["skipped"].values()), len(f["errors"]),
                     f"{f['seconds']:.1f}", f["status"]))
    width = max([len("file"), len("TOTAL")] + [min(len(r[0]), 48) for r in rows])
    head = ("file", "records", "html", "cleaned", "rejected", "skipped", "errors", "seconds",
            "status")
    fmt = f"{{:<{width}}} {{:>8}} {{:>7}} {{:>8}} {{:>9}} {{:>8}} {{:>7}} {{:>8}}  {{}}"
    w = stream.write
    w(f"\nclean_warc run {record['run_id']}: {t['files']} WARC files, "
      f"{record['distribution']['tasks']} tasks ({record['distribution']['split_files']} files "
      f"split into record ranges)\n")
    w(fmt.format(*head) + "\n")
    for r in rows[:max_files]:
        name = r[0] if len(r[0]) <= 48 else "..." + r[0][-45:]
        w(fmt.format(name, *r[1:]) + "\n")
    if len(rows) > max_files:
        w(f"... {len(rows) - max_files} more files (see _run.json)\n")
    w(fmt.format("TOTAL", t["records_read"], t["html_records"], t["cleaned"],
                 sum(t["rejected"].values()), sum(t["skipped"].values()), t["errors"],
                 f"{record['elapsed_s']:.1f}", f"{t['failed_files']} failed") + "\n")
    if t["rejected"]:
        w("rejected: " + ", ".join(f"{k} {v}" for k, v in t["rejected"].items()) + "\n")
    if t.get("expected_f1"):
        w("cleaned by expected word F1: " + ", ".join(f"{k} {v}" for k, v in t["expected_f1"].items()) + "\n")
    if t.get("blocks_truncated"):
        max_blocks = record["config"].get("limits", {}).get("max_blocks")
        w(f"truncated: {t['blocks_truncated']} pages had more than {max_blocks} blocks ([limits] max_blocks): only "
          "the first were cleaned (column blocks_truncated)\n")
    if t["skipped"]:
        w("skipped:  " + ", ".join(f"{k} {v}" for k, v in t["skipped"].items()) + "\n")
    left = record.get("inputs_skipped") or []
    if left:
        w(f"inputs left out: {len(left)} (each with its reason in _run.json inputs_skipped)\n")
        for s in left[:10]:
            w(f"  {s['path']}: {s['reason']}\n")
        if len(left) > 10:
            w(f"  ... {len(left) - 10} more\n")
    o = record["output"]
    w(f"rows written: {o['rows_written']} in {o['parquet_files']} {formats.NAMES[o.get('format', 'parquet')]} files "
      f"({o['bytes_written'] / 1e6:.2f} MB) -> {o['run_dir']}\n")
    w(f"elapsed {record['elapsed_s']:.1f} s, {record['docs_per_s']} documents/s; "
      f"errors: {t['errors']} in {t['damaged_files']} files (file + offset in _run.json)\n")
    stream.flush()


# ------------------------------------------------------------------------------------------
# Entry points
# ------------------------------------------------------------------------------------------

def main(argv: list[str] | None = None, spark=None) -> int:
    """Run the job; returns the exit code. `spark`: reuse an existing session."""
    setup_logging()
    job = CleanWarcJob(argv)
    try:
        job.prepare()
        record = job.run(spark)
    except JobError as exc:
        log.error("error: %s", exc)
        job.release()
        return exc.code
    if (record.get("totals") or {}).get("failed_files"):
        return 1  # published without them; they are not done (logged by run, listed in _run.json)
    return 0


def cli() -> int:
    try:
        return main()
    except SimulatedCrash as exc:
        # The test hook: stop at once, as a killed process would (no cleanup, no spark.stop).
        sys.stderr.write(f"clean_warc: simulated crash {exc}\n")
        sys.stderr.flush()
        os._exit(70)


if __name__ == "__main__":
    sys.exit(cli())
