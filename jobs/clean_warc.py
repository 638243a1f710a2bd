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

This module is the entry point and the Spark engine (`CleanWarcJob`: session, code shipped to the executors,
the tasks as one mapInArrow). The driver's flow whatever the engine is `jobs.warc_job.WarcJob`; the flags are
in jobs/arguments.py, the outcome counters in jobs/outcomes.py, `.run.json` in jobs/run_record.py, the progress
lines and the summary table in jobs/report.py.

Exit codes: 0 ok (damaged input files are recorded, not fatal), 1 the Spark job failed, the run was
not published because every page failed for one reason of the cleaner's (not of the pages'), or input
files could not be read (recorded as failed, not done: --skip-done retries them), 2 bad usage, 3 input
missing, 4 invalid model or config, 5 output directory unusable, held by another run (the message names it;
--wait queues behind it) or the run could not be published (docs/faults.md).
"""

from __future__ import annotations

import atexit
import functools
import os
import re
import shutil
import sys
import tempfile
import zipfile
from pathlib import Path

if __package__ in (None, ""):  # `python jobs/clean_warc.py` / `spark-submit jobs/clean_warc.py`
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from cleaner.output.schema import SCHEMA  # noqa: E402
from jobs import formats, tempdirs  # noqa: E402
from jobs.arguments import JobError  # noqa: E402
from jobs.report import ProgressLogger, log, setup_logging  # noqa: E402
from jobs.runs import SimulatedCrash  # noqa: E402
from jobs.warc_job import WarcJob, short_error  # noqa: E402

# strerror(ENOSPC), as a failed write of Spark's reports it: a full disk is the output's state, exit 5, one line
DISK_FULL = "No space left on device"

_SHIPPED: dict[str, str] = {}


class CleanWarcJob(WarcJob):
    """The WARC job on Spark: a session of its own (or the caller's), the tasks on its executors."""

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
        lease = self.lease
        lost: list[str] = []

        def lease_lost() -> bool:  # seen by the heartbeat (every [job] lease_renew_s): no task is worth finishing
            if lease is not None and lease.lost:
                lost.append(lease.lost)
            return bool(lost)

        progress = ProgressLogger(acc, pieces, interval=0.2 if crash_when else 1.0, crash_when=crash_when,
                                  stop_when=(lease_lost, sc.cancelAllJobs))
        markers = marker_root(worker_settings)
        tempdirs.claim(markers)  # this driver's pid in it: a sweep removes it once the driver is gone
        progress.start()
        try:
            formats.write(df, fs.spark_path(staging), j["format"], j, part_cols)
        except Exception as exc:
            if crashed_during_write:
                raise SimulatedCrash("during_write") from exc
            if lost:
                raise JobError(5, f"{lost[0]}: the Spark job was stopped early; run {run_id} not published, "
                                  "no file marked done") from exc
            self.stop_if_lease_lost(run_id, 0, n_tasks)  # a task that found the lease taken (jobs.worker)
            if DISK_FULL in str(exc):  # (the JVM's IOException, in the Py4J error's text): the output, not the job
                raise JobError(5, f"the output's disk is full ({DISK_FULL}) while Spark wrote {staging}; run "
                                  f"{run_id} not published, no file marked done: free some space and run again") \
                    from exc
            raise JobError(1, f"Spark job failed: {short_error(exc)}") from exc
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

    def _engine_record(self, spark) -> dict:
        """The engine's part of the run record."""
        sc = spark.sparkContext
        return {"spark": {"version": spark.version, "master": sc.master, "app_id": sc.applicationId,
                          "default_parallelism": sc.defaultParallelism}}


def _has_files(fs, path: str) -> bool:
    try:
        return fs.kind == "local" and any(files for _, _, files in os.walk(path))
    except Exception:
        return False


_LOCAL_MASTER_RX = re.compile(r"^local(?:\[([^,\]]+)\])?$")


def with_local_retries(master: str, max_failures: int) -> str:
    """local / local[N] / local[*] -> local[N,F]: in local mode Spark retries a failed task only when the
    master says so, so one killed Python worker would fail the run ([job] local_max_failures). A master
    that names F already, and every other master, is kept."""
    m = _LOCAL_MASTER_RX.match(master.strip())
    if not m or max_failures < 2:
        return master
    return f"local[{m.group(1) or '1'},{int(max_failures)}]"


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
        return 1  # published without them; they are not done (logged by run, listed in .run.json)
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
