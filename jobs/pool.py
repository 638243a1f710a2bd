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
import os
import queue as queue_module
import re
import shutil
import signal
import sys
import threading
import time
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from . import formats, tempdirs
from . import worker as worker_module
from .arguments import JobError, build_parser
from .report import ProgressLogger, StatusLine
from .runs import without_files
from .warc_job import Interrupted, WarcJob
from .worker import index_file, marker_root, process_partition_arrow

_TASK_OF = re.compile(r"^part-(\d+)-")  # the task of a staged data file (run_task's basename_template)


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
_REPORTER: _Reporter | None = None


class _Reporter:
    """In a worker process: its records and payload bytes so far, sent to the driver at most twice a second
    (`(pid, records, bytes)`), and at the end of each task."""

    def __init__(self, channel, every: float = 0.5):
        self.channel, self.every = channel, every
        self.records = self.bytes = 0
        self.last = 0.0

    def __call__(self, key: str, nbytes: int) -> None:
        self.records += 1
        self.bytes += nbytes
        now = time.monotonic()
        if now - self.last >= self.every:
            self.send(now)

    def send(self, now: float | None = None) -> None:
        self.last = time.monotonic() if now is None else now
        self.channel.put((os.getpid(), self.records, self.bytes))


def _start_worker(payload: dict, channel=None) -> None:
    global _MODEL, _REPORTER
    # Ctrl-C reaches the whole process group: it is the driver's to handle (it stops the workers itself, at once)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _MODEL = Shared(payload)
    if channel is not None:
        _REPORTER = _Reporter(channel)
        _REPORTER.send()  # the driver learns every worker's pid
        worker_module.RECORD_HOOK = _REPORTER


def run_task(task: dict, settings: dict, staging: str, part_cols: list[str], compression: str,
             level: int, fmt_name: str = "parquet", jsonl_compression: str = "gzip") -> dict[str, dict]:
    """Clean one task's pieces into Parquet (or JSON Lines) files under `staging`; its counters by piece."""
    import pyarrow as pa
    import pyarrow.dataset as ds

    from cleaner.output.schema import SCHEMA

    counters = PieceCounters()
    ids = pa.record_batch([pa.array([task["task"]], pa.int32())], names=["task"])
    batches = process_partition_arrow([ids], _MODEL, counters, settings, Shared({task["task"]: task}))
    if fmt_name == "jsonl":
        formats.write_jsonl_batches(batches, staging, part_cols, f"part-{task['task']:05d}-0", jsonl_compression)
        if _REPORTER is not None:
            _REPORTER.send()
        return counters.value
    fmt = ds.ParquetFileFormat()
    ds.write_dataset(
        pa.RecordBatchReader.from_batches(SCHEMA, batches), staging, format=fmt,
        file_options=fmt.make_write_options(compression=compression, compression_level=level),
        partitioning=part_cols or None, partitioning_flavor="hive" if part_cols else None,
        # part-<task>-<n>: one task's files never meet another's, as Spark names them by task
        basename_template=f"part-{task['task']:05d}-{{i}}.{compression}.parquet",
        existing_data_behavior="overwrite_or_ignore", use_threads=False,
    )
    if _REPORTER is not None:
        _REPORTER.send()
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
    for flag in ("input_base", "config", "model", "convention", "crawl", "partition_by", "format"):
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
        self.channel: Any = None  # the workers' progress (pid, records, bytes): a multiprocessing queue
        self.worker_pids: set[int] = set()
        self.seen: dict[int, tuple[int, int]] = {}

    def prepare(self) -> None:
        super().prepare()
        if not self.output_local:
            raise JobError(2, f"--out {self.args.output}: clean-warc writes to a local folder; the Spark job "
                              "(jobs/clean_warc.py, cleaner-spark-job) writes to other file systems")
        if self.remote_items:
            raise JobError(2, f"{self.remote_items[0]}: clean-warc reads local files and s3:// / https:// objects; "
                              "other file systems (hdfs://, s3a://, ...) are listed by Spark: use the Spark job")

    def run(self, spark=None) -> dict:
        if not self.prepared:
            self.prepare()
        stopped = False
        on_ctrl_c = signal.getsignal(signal.SIGINT)
        try:
            return self._run(None)
        except KeyboardInterrupt:  # outside the cleaning (planning, the pre-scan): the workers are stopped now
            stopped = True
            raise
        finally:
            if self.pool is not None:
                if stopped:
                    self._stop_workers()
                self.pool.shutdown(wait=not stopped, cancel_futures=True)
                self.pool = None
            if self.channel is not None:
                self.channel.cancel_join_thread()
                self.channel = None
            self.release()
            if threading.current_thread() is threading.main_thread():
                signal.signal(signal.SIGINT, on_ctrl_c)  # ignored while an interrupted run kept its finished files

    def _stop_workers(self) -> None:
        """Kill the worker processes at once (Ctrl-C): what they were cleaning is not kept."""
        self._drain()
        for pid in self.worker_pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass

    def _drain(self) -> None:
        while self.channel is not None:
            try:
                pid, records, nbytes = self.channel.get_nowait()
            except (queue_module.Empty, OSError, ValueError, EOFError):
                return
            self.worker_pids.add(pid)
            self.seen[pid] = (records, nbytes)

    # --- the engine steps (jobs/clean_warc.py's are Spark's) --------------------------------------------------

    def _start_engine(self, spark) -> None:
        # Each worker process gets the model and config once, as a Spark executor gets the broadcast.
        context = multiprocessing.get_context()
        self.channel = context.Queue()
        self.pool = ProcessPoolExecutor(max_workers=self.args.jobs, mp_context=context,
                                        initializer=_start_worker, initargs=(self._worker_payload(), self.channel))

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
                                    int(j["compression_level"]), j["format"],
                                    j["jsonl_compression"]): task["task"] for task in task_specs}
        finished: set[int] = set()
        status = StatusLine(sys.stderr, getattr(self.args, "progress", None), pieces,
                            every=getattr(self.args, "progress_every", 10.0))
        try:
            while running:
                done, _ = wait(running, timeout=status.interval, return_when=FIRST_COMPLETED)
                self._drain()
                status.show(self.seen, counters.value)
                for future in done:
                    task_id = running.pop(future)
                    try:
                        counters.add(future.result())
                        finished.add(task_id)
                    except BrokenProcessPool as exc:
                        raise JobError(1, f"a worker process died during task {task_id} (a crash in native code "
                                          f"or the OOM killer?): run {run_id} not published, no input file "
                                          "marked done") from exc
                    except Exception as exc:
                        self.stop_if_lease_lost(run_id, len(task_specs) - len(running) - 1, len(task_specs))
                        raise JobError(1, f"task {task_id} failed: {type(exc).__name__}: {exc}"[:500]
                                          + f"; run {run_id} not published") from exc
                    status.clear()
                    progress.poll()
                    self.stop_if_lease_lost(run_id, len(task_specs) - len(running), len(task_specs))
        except KeyboardInterrupt:
            signal.signal(signal.SIGINT, signal.SIG_IGN)  # the finished files are being kept: one Ctrl-C is enough
            self._stop_workers()
            status.clear()
            raise self._keep_finished(pieces, task_specs, finished, counters.value, fs, staging) from None
        finally:
            status.clear()
            for future in running:
                future.cancel()
            shutil.rmtree(marker_root(settings), ignore_errors=True)
        return counters.value

    def _keep_finished(self, pieces: list[dict], task_specs: list[dict], finished: set[int], counters: dict,
                       fs, staging: str) -> Interrupted:
        """After Ctrl-C: the staged rows of the files whose every piece a finished task cleaned, and nothing else (the
        data files of the tasks that were stopped removed, the rows of the files they did not finish taken out of the
        others), so that the run publishes those files whole and `--skip-done` cleans the rest."""
        parts: dict[str, list[str]] = {}
        for p in pieces:
            parts.setdefault(p["uri"], []).append(p["key"])
        whole = {uri for uri, keys in parts.items() if all(k in counters for k in keys)}
        cut = set(parts) - whole
        for path, _ in fs.files(staging):
            m = _TASK_OF.match(os.path.basename(path))
            if m is None or int(m.group(1)) not in finished:
                os.remove(path)  # a stopped task's, written in part
            elif cut:
                rest, removed = without_files(path, cut)
                if removed and rest is None:  # every row of it was of a file not finished
                    os.remove(path)
                elif removed and rest is not None:
                    rest(path + ".tmp")
                    os.replace(path + ".tmp", path)
        records = sum(r for r, _ in self.seen.values())
        kept = {k: v for k, v in counters.items() if any(k == key for u in whole for key in parts[u])}
        return Interrupted(kept, whole, len(parts), records)

    def _engine_record(self, spark) -> dict:
        return {"spark": None,
                "processes": {"workers": self.args.jobs, "start_method": multiprocessing.get_start_method()}}
