"""The WARC job's tasks on a pool of local processes instead of Spark executors (`cleaner clean-warc`).

`PoolCleanWarcJob` is `jobs.warc_job.WarcJob` with its engine steps done here: everything else
(the checks, the plan, the output directory, the counters, the run record, publishing, the summary)
is the job's own code. Each task runs in a worker process through `jobs.worker.process_partition_arrow`,
the function Spark's `mapInArrow` runs, given what it reads from Spark: the model and config as a
broadcast's `.value`, the task's spec, and an accumulator's `.add` for its counters. The worker writes
its rows as the task's Parquet files under the run's staging directory, Hive-partitioned by the
partition columns (the columns live in the folder names, not in the files), as Spark writes them.
"""

from __future__ import annotations

import argparse
import multiprocessing
import shutil
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool

from . import tempdirs
from .arguments import JobError, build_parser
from .report import ProgressLogger
from .warc_job import WarcJob
from .worker import index_file, marker_root, process_partition_arrow


class Shared:
    """What the worker reads from a Spark broadcast: its `.value`."""

    def __init__(self, value):
        self.value = value


class PieceCounters:
    """What the worker adds its counters to, as to a Spark accumulator: {piece key: counters}."""

    def __init__(self):
        self.value: dict[str, dict] = {}

    def add(self, more: dict) -> None:
        self.value.update(more)  # a piece's counters are whole: the last write wins, as in PieceStatsParam


_MODEL: Shared | None = None  # each worker process's model and config (set once, by _start_worker)


def _start_worker(payload: dict) -> None:
    global _MODEL
    _MODEL = Shared(payload)


def run_task(task: dict, settings: dict, staging: str, part_cols: list[str], compression: str,
             level: int) -> dict[str, dict]:
    """Clean one task's pieces into Parquet files under `staging`; its counters by piece."""
    import pyarrow as pa
    import pyarrow.dataset as ds

    from cleaner.output.schema import SCHEMA

    counters = PieceCounters()
    ids = pa.record_batch([pa.array([task["task"]], pa.int32())], names=["task"])
    batches = process_partition_arrow([ids], _MODEL, counters, settings, Shared({task["task"]: task}))
    fmt = ds.ParquetFileFormat()
    ds.write_dataset(
        pa.RecordBatchReader.from_batches(SCHEMA, batches), staging, format=fmt,
        file_options=fmt.make_write_options(compression=compression, compression_level=level),
        partitioning=part_cols or None, partitioning_flavor="hive" if part_cols else None,
        # part-<task>-<n>: one task's files never meet another's, as Spark names them by task
        basename_template=f"part-{task['task']:05d}-{{i}}.{compression}.parquet",
        existing_data_behavior="overwrite_or_ignore", use_threads=False,
    )
    return counters.value


def _job_namespace(args: argparse.Namespace) -> argparse.Namespace:
    """The `cleaner clean-warc` arguments over the Spark job's defaults: CleanWarcJob reads every flag of the
    job's parser, so each one it has and clean-warc does not (--master, --format, ...) takes the job's default
    here, also the next one added (no list of them to keep in step)."""
    job_defaults = vars(build_parser().parse_args(["--output", str(args.output)]))
    given = vars(args).copy()
    # PATH and --input (the Spark job's flag) name inputs alike
    given["input"] = [*given.get("input", []), *given.pop("named_input", [])]
    return argparse.Namespace(**(job_defaults | {"no_progress": True} | given))


def _command_line(a: argparse.Namespace) -> list[str]:
    """The run's command as the record names it (the parsed arguments, not sys.argv: tests call it in-process)."""
    argv = [*a.input, "--out", a.output, "--jobs", str(a.jobs)]
    for lst in a.input_list:
        argv += ["--input-list", lst]
    for flag in ("input_base", "config", "model", "convention", "crawl", "partition_by"):
        if getattr(a, flag) is not None:
            argv += ["--" + flag.replace("_", "-"), getattr(a, flag)]
    return argv + (["--skip-done"] if a.skip_done else []) + (["--overwrite"] if a.overwrite else [])


class PoolCleanWarcJob(WarcJob):
    """The WARC job with a process pool of `args.jobs` workers as its engine (no JVM, no Spark)."""

    command = "cleaner clean-warc"

    def __init__(self, args: argparse.Namespace):  # parsed by `cleaner clean-warc` (jobs/local_job.py)
        self.args = _job_namespace(args)
        self.argv = _command_line(self.args)
        self.prepared = False
        self.lease = None  # taken by prepare() (jobs/lease.py), given back by run() or the command on every way out
        self.pool: ProcessPoolExecutor | None = None

    def prepare(self) -> None:
        super().prepare()
        if self.job["format"] != "parquet":
            raise JobError(4, f"[job] format = {self.job['format']!r} in {self.config.source}: clean-warc writes "
                              "Parquet only; JSON Lines are the Spark job's (--format jsonl)")
        if not self.output_local:
            raise JobError(2, f"--out {self.args.output}: clean-warc writes to a local folder; the Spark job "
                              "(jobs/clean_warc.py, cleaner-spark-job) writes to other file systems")
        if self.remote_items:
            raise JobError(2, f"{self.remote_items[0]}: clean-warc reads local files and s3:// / https:// objects; "
                              "other file systems (hdfs://, s3a://, ...) are listed by Spark: use the Spark job")

    def run(self, spark=None) -> dict:
        if not self.prepared:
            self.prepare()
        try:
            return self._run(None)
        finally:
            if self.pool is not None:
                self.pool.shutdown(wait=True, cancel_futures=True)
                self.pool = None
            self.release()

    # --- the engine steps (jobs/clean_warc.py's are Spark's) --------------------------------------------------

    def _start_engine(self, spark) -> None:
        # Each worker process gets the model and config once, as a Spark executor gets the broadcast.
        self.pool = ProcessPoolExecutor(max_workers=self.args.jobs, mp_context=multiprocessing.get_context(),
                                        initializer=_start_worker, initargs=(self._worker_payload(),))

    def _cores(self, spark) -> int:
        return self.args.jobs

    def _scan_offsets(self, spark, run_id: str, specs: list[dict]) -> list[dict]:
        assert self.pool is not None  # started by _start_engine before the scan
        return list(self.pool.map(index_file, specs, [{}] * len(specs)))

    def _clean_pieces(self, spark, run_id: str, pieces: list[dict], task_specs: list[dict], fs, staging: str,
                      n_files: int) -> dict[str, dict]:
        j = self.job
        settings = self._worker_settings(run_id)
        counters = PieceCounters()
        progress = ProgressLogger(counters, pieces)  # polled after each task, not from its thread
        fs.mkdirs(staging)
        tempdirs.claim(marker_root(settings))  # this driver's pid in it: a sweep removes it once the driver is gone
        # tasks come planned largest first (jobs/plan.py): submitted in that order, as Spark launches them
        assert self.pool is not None  # started by _start_engine before the pieces are cleaned
        running = {self.pool.submit(run_task, task, settings, staging, list(j["partition_by"]), j["compression"],
                                    int(j["compression_level"])): task["task"] for task in task_specs}
        try:
            while running:
                done, _ = wait(running, return_when=FIRST_COMPLETED)
                for future in done:
                    task_id = running.pop(future)
                    try:
                        counters.add(future.result())
                    except BrokenProcessPool as exc:
                        raise JobError(1, f"a worker process died during task {task_id} (a crash in native code "
                                          f"or the OOM killer?): run {run_id} not published, no input file "
                                          "marked done") from exc
                    except Exception as exc:
                        self.stop_if_lease_lost(run_id, len(task_specs) - len(running) - 1, len(task_specs))
                        raise JobError(1, f"task {task_id} failed: {type(exc).__name__}: {exc}"[:500]
                                          + f"; run {run_id} not published") from exc
                    progress.poll()
                    self.stop_if_lease_lost(run_id, len(task_specs) - len(running), len(task_specs))
        finally:
            for future in running:
                future.cancel()
            shutil.rmtree(marker_root(settings), ignore_errors=True)
        return counters.value

    def _engine_record(self, spark) -> dict:
        return {"spark": None,
                "processes": {"workers": self.args.jobs, "start_method": multiprocessing.get_start_method()}}
