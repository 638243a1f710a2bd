"""Executor side of the job (imported on the Python workers; no Spark imports needed).

* The model and config arrive once per worker process as one broadcast value
  {"key", "model", "meta", "markers", "first_pass", "html5", "config"} ("html5": the model of the pages in HTML5
  markup and its convention, where the run's convention has one, [model.html5_by_convention]); `_state()` builds
  the ServingModel/Config from it once and keeps them in a module-level cache keyed by the models' hashes + config
  hash, so the CRFsuite tagger is opened once per Python worker and reused by every later task of that worker
  (Spark reuses Python workers: spark.python.worker.reuse, on by default).
* `process_partition` is the per-partition generator (cc-pyspark's `process_warcs`): for
  each piece of its task (a whole WARC or a record range) it streams HTML records with
  `cleaner.warc.iter_html_records`, cleans each with `clean_html`, yields one row tuple in
  schema order, and when the piece is done adds the piece's outcome (jobs/outcomes.py) to the accumulator.
* Counters travel back through a Spark accumulator whose value is a dict keyed by piece
  ({uri}#{start}); merging is "last write wins" on identical values, so a re-executed task
  (failure, speculation, stage retry) cannot count a piece twice.
* Poison records (resource containment): before cleaning a record the worker writes the
  record (offset + id) into a node-local marker file of the piece and task attempt
  (`_PoisonGuard`), with Python's faulthandler pointed at a crash file next to it. When the
  Python worker dies in native code (SIGSEGV, SIGABRT, SIGBUS, ...), Spark retries the task;
  the retry (attemptNumber > 0) reads the markers of the failed attempts and emits the
  record that crashed as `rejected`/`poison` instead of cleaning it again. A record that
  was being cleaned when two attempts died without a fatal-signal trace (SIGKILL, the OOM
  killer) is poison too; one such death alone is retried normally (an executor lost for
  another reason must not reject a good page). Markers are node-local: a retry scheduled
  on another node sees none and falls back to Spark's normal retry count.
"""

from __future__ import annotations

import faulthandler
import gc
import hashlib
import json
import os
import resource
import tempfile
import time
from collections.abc import Callable, Generator
from typing import TYPE_CHECKING

import cleaner
from cleaner.api import CleanResult, clean_html
from cleaner.config import Config
from cleaner.label.crf_model import CrfModel
from cleaner.label.model import ServingModel
from cleaner.output.corpus import CorpusColumns
from cleaner.output.markdown import markdown_options
from cleaner.output.schema import build_row, row_values
from cleaner.tools.runtime import tune_gc
from cleaner.warc.read import iter_html_records
from cleaner.warc.records import WarcFileStats

from . import scan
from .outcomes import Outcome, PieceOutcome
from .storage import is_gzip_name, open_input

if TYPE_CHECKING:  # the type checker sees the accumulator type; at run time pyspark may be missing
    from pyspark.accumulators import AccumulatorParam as _AccumulatorParam
else:
    try:  # the accumulator type must be importable on both sides
        from pyspark.accumulators import AccumulatorParam as _AccumulatorParam
    except ImportError:  # pragma: no cover - workers always have pyspark
        _AccumulatorParam = object

_STATE: dict[str, tuple[ServingModel, Config]] = {}
_MODEL_LOADS = 0
_CORPUS: dict[str, CorpusColumns] = {}  # by the [corpus] section's hash: MinHash parameters drawn once


class PieceStatsParam(_AccumulatorParam):
    """Accumulator of {piece key: PieceOutcome.to_dict()}. Copy-on-merge, so the driver can read a
    consistent snapshot while the accumulator server thread merges updates."""

    def zero(self, value):
        return {}

    def addInPlace(self, a, b):
        if not b:
            return a
        if not a:
            return dict(b)
        merged = dict(a)
        merged.update(b)
        return merged


def model_payload(model: CrfModel) -> dict:
    """What a worker rebuilds `model` from (_state): its file's bytes, its sidecar and its companions."""
    return {"model": model.data, "meta": model.meta, "markers": model.markers, "first_pass": model.first_pass}


def _opened_model(value: dict, config: Config) -> CrfModel:
    model = CrfModel(value["model"], value["meta"], value.get("markers"), value.get("first_pass"))
    model.open()  # open CRFsuite (and the typer, the first pass) now, once
    # Build the feature extractor from the broadcast config now: CrfModel.extractor() without
    # a config would read conf/default.toml from disk, which a packed environment on an
    # executor does not have (the model's own [segment]/[features] win either way).
    model._extractor = model.extractor(config)
    return model


def _state(bc) -> tuple[ServingModel, Config, bool]:
    """(serving model, config, opened_now) for the broadcast, built once per Python process."""
    global _MODEL_LOADS
    value = bc.value
    key = value["key"]
    hit = _STATE.get(key)
    if hit is not None:
        return hit[0], hit[1], False
    config = Config.from_json(value["config"], source=value.get("config_source", "<broadcast>"))
    model = _opened_model(value, config)
    # The convention the model is given is the broadcast config's (ServingModel.config_for); the HTML5 pages' model
    # comes with its own. (No file: a worker's models are the bytes it was sent.)
    tags = model.tagging_convention(config)
    html5 = value.get("html5")
    serving = ServingModel(model, None, tags, tags,
                           None if html5 is None else ServingModel(_opened_model(html5, config), None,
                                                                   html5["convention"], html5["convention"]))
    tune_gc(config)  # this Python worker's work is cleaning pages ([runtime], cleaner/tools/runtime.py)
    _STATE.clear()  # one model per process: a new job's model replaces the old one
    _STATE[key] = (serving, config)
    _MODEL_LOADS += 1
    return serving, config, True


POISON_REASON = "poison"
FAULT_ENV = "CLEANER_FAULT_INJECT"  # tests only: "segfault:<url substring>" or "kill:<url substring>"


def _fault_spec() -> str | None:
    spec = os.environ.get(FAULT_ENV, "")
    kind, sep, needle = spec.partition(":")
    return spec if kind in ("segfault", "kill") and sep and needle else None


def _inject_fault(url: str | None, spec: str | None) -> None:
    """Test hook: a real crash of the real Python worker, `segfault` (a NULL pointer read: poison) or
    `kill` (SIGKILL, in the first attempt of the task only: a worker lost once, as to the OOM killer)."""
    if not spec:
        return
    kind, _, needle = spec.partition(":")
    if not (url and needle in url):
        return
    if kind == "segfault":
        import ctypes

        ctypes.string_at(0)
    elif kind == "kill" and _attempt() == 0:
        import signal

        os.kill(os.getpid(), signal.SIGKILL)


def _attempt() -> int:
    try:
        from pyspark import TaskContext

        ctx = TaskContext.get()
        return int(ctx.attemptNumber()) if ctx is not None else 0
    except Exception:
        return 0


def marker_root(settings: dict) -> str:
    base = settings.get("marker_dir") or os.path.join(tempfile.gettempdir(), "clean_warc-markers")
    return os.path.join(base, str(settings.get("run_id") or "adhoc"))


class _PoisonGuard:
    """Node-local markers of the record being cleaned, per piece and task attempt."""

    def __init__(self, piece: dict, settings: dict, attempt: int):
        self.attempt = attempt
        self.poison: dict[tuple, str] = {}
        self.fd = None
        self.marker_bytes = 0  # the length of the marker file (records are written over it, padded to it)
        self.crash_fh = None
        self.dir = None
        self.stem = None
        try:
            self.dir = marker_root(settings)
            os.makedirs(self.dir, exist_ok=True)
            self.stem = os.path.join(self.dir, hashlib.sha1(piece["key"].encode()).hexdigest()[:20])
            if attempt > 0:
                self._read_previous()
            self.fd = os.open(f"{self.stem}.{attempt}.json",
                              os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            if not faulthandler.is_enabled():  # else Spark's own handler: count deaths only
                self.crash_fh = open(f"{self.stem}.{attempt}.crash", "w")
                faulthandler.enable(file=self.crash_fh, all_threads=False)
        except OSError:  # no usable local directory: no containment, never a failure
            self.close(remove=False)

    def _read_previous(self) -> None:
        seen: dict[tuple, list[str]] = {}
        for a in range(self.attempt):
            try:
                with open(f"{self.stem}.{a}.json") as fh:
                    cur = json.load(fh)
            except (OSError, ValueError):
                continue
            key = (cur["offset"], cur["record_id"])
            try:
                crashed = os.path.getsize(f"{self.stem}.{a}.crash") > 0
            except OSError:
                crashed = False
            seen.setdefault(key, []).append("fatal signal" if crashed else "died")
        for key, deaths in seen.items():
            if "fatal signal" in deaths or len(deaths) >= 2:
                why = ("crashed the Python worker (fatal signal)" if "fatal signal" in deaths
                       else f"the Python worker died {len(deaths)} times on it")
                self.poison[key] = f"poison: {why} in earlier attempt(s) of this task; not retried"

    def check(self, rec) -> str | None:
        """The poison message for `rec`, or None after noting it as the current record."""
        why = self.poison.get((rec.offset, rec.record_id))
        if why is None and self.fd is not None:
            data = json.dumps({"offset": rec.offset, "record_id": rec.record_id}).encode()
            # Written over the last record in one pwrite, padded with the spaces JSON allows after a value: a
            # truncate first (two calls, 21 us a record against 7 on ext4) left the file empty between them, and a
            # worker killed there left no marker of the record it died on.
            if len(data) < self.marker_bytes:
                data = data.ljust(self.marker_bytes)
            try:
                os.pwrite(self.fd, data, 0)
                self.marker_bytes = len(data)
            except OSError:
                pass
        return why

    def close(self, remove: bool = True) -> None:
        if self.crash_fh is not None:
            faulthandler.disable()
            self.crash_fh.close()
            self.crash_fh = None
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None
        if remove and self.stem:  # the piece is done: forget every attempt's markers
            for a in range(self.attempt + 1):
                for ext in ("json", "crash"):
                    try:
                        os.unlink(f"{self.stem}.{a}.{ext}")
                    except OSError:
                        pass


def _max_rss_kb() -> int:
    return int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)


def corpus_columns(config: Config) -> CorpusColumns:
    """The corpus columns of `config`'s [corpus] settings, built once per process."""
    key = config.section_hash(("corpus",))
    hit = _CORPUS.get(key)
    if hit is None:
        _CORPUS.clear()
        hit = _CORPUS[key] = CorpusColumns.from_settings(config.settings.corpus)
    return hit


# Called after each record with (piece key, payload bytes): the progress of `cleaner clean-warc` inside a file
# (jobs/pool.py sets it in its worker processes; Spark's workers leave it None).
RECORD_HOOK: Callable[[str, int], None] | None = None


def process_piece(piece: dict, serving: ServingModel, config: Config, settings: dict
                  ) -> Generator[tuple, None, PieceOutcome]:
    """Yield the row tuples of one piece; return its outcome (jobs/outcomes.py) when done."""
    uri = piece["uri"]
    model = serving.model  # (what a record rejected before cleaning names)
    corpus = corpus_columns(config)
    markdown = markdown_options(config.settings.corpus)  # (None: no markdown column)
    t0 = time.perf_counter()
    c0 = time.process_time()
    stats = WarcFileStats()
    counts = Outcome(pieces=1)
    max_payload = int(settings.get("max_payload_bytes", 10_000_000))
    fault = _fault_spec()
    attempt = _attempt()
    poisoned: list[str] = []
    try:
        fh = open_input(uri, piece.get("start") or 0, piece.get("end"))
    except Exception as exc:
        counts.open_error = f"cannot open: {type(exc).__name__}: {exc}"[:500]
        fh = None
    if fh is not None:
        guard = _PoisonGuard(piece, settings, attempt)
        poisoned = sorted(f"{k[0]}:{k[1]}" for k in guard.poison)
        completed = False
        try:
            for rec in iter_html_records(fh, uri, stats, max_payload_bytes=max_payload):
                t = time.perf_counter()
                poison = guard.check(rec)
                if poison is None and rec.payload_truncated:
                    # cut at the reader's cap (a huge page, a decompression bomb): never
                    # clean a page prefix; the same rejection as clean_html's size cap
                    result = CleanResult("rejected", "too_large",
                                         error=f"payload over {max_payload} bytes (reader cap)",
                                         model_hash=model.hash,
                                         feature_version=model.feature_version)
                elif poison is None:
                    _inject_fault(rec.url, fault)
                    result = clean_html(rec.payload, http_charset=rec.http_charset, model=serving,
                                        config=config, markdown=markdown or False)
                else:
                    result = CleanResult("rejected", POISON_REASON, error=poison,
                                         model_hash=model.hash,
                                         feature_version=model.feature_version)
                ms = (time.perf_counter() - t) * 1000.0
                counts.clean_seconds += ms / 1000.0
                try:
                    row = build_row(rec, result, crawl=piece["crawl"], processing_ms=ms, corpus=corpus)
                except Exception as exc:  # defensive: a row must exist for every record
                    bad = CleanResult("rejected", "internal_error",
                                      error=f"row: {type(exc).__name__}: {exc}"[:500],
                                      model_hash=model.hash, feature_version=model.feature_version)
                    row = build_row(rec, bad, crawl=piece["crawl"], processing_ms=ms, corpus=corpus)
                if row["blocks_truncated"]:
                    counts.blocks_truncated += 1
                if row["status"] == "cleaned":
                    counts.count_cleaned(row["expected_f1"])
                else:
                    reason = row["reason"] or "unknown"
                    counts.count_rejected(reason)
                    if reason == "internal_error" and counts.first_internal_error is None:
                        counts.first_internal_error = {"offset": rec.offset, "error": row["error"]}
                if RECORD_HOOK is not None:
                    RECORD_HOOK(piece["key"], len(rec.payload or b""))
                yield row_values(row)
            completed = True
        finally:
            guard.close(remove=completed)
            try:
                fh.close()
            except Exception:
                pass
    counts.records_read, counts.html_records = stats.records_read, stats.html_records
    counts.skipped, counts.errors, counts.warnings = dict(stats.skipped), list(stats.errors), list(stats.warnings)
    counts.reached_end = stats.reached_end
    counts.completed = stats.completed and counts.open_error is None
    counts.bytes_read, counts.truncated_payloads = stats.bytes_read, stats.truncated_payloads
    counts.seconds, counts.cpu_seconds = time.perf_counter() - t0, time.process_time() - c0
    counts.reader_seconds = stats.seconds
    return PieceOutcome(file=uri, start=piece.get("start") or 0, end=piece.get("end"), part=piece.get("part", 0),
                        parts=piece.get("parts", 1), outcome=counts, attempt=attempt, poison_candidates=poisoned)


class LeaseLostInWorker(Exception):
    """The run's lease on its output is no longer its own: the task stops before its next piece (the run cannot
    publish, so cleaning on would be wasted; the driver then says why, jobs.warc_job.stop_if_lease_lost)."""


def check_lease(settings: dict) -> None:
    """Between pieces: raise LeaseLostInWorker when the lease file of a local output no longer holds this run's
    token (taken over, removed by hand). A lease unreadable for another reason passes: the driver checks too."""
    lease = settings.get("lease")
    if not lease:
        return
    try:
        with open(lease["path"], encoding="utf-8") as fh:
            token = json.load(fh).get("token")
    except FileNotFoundError:
        token = None
    except (OSError, ValueError):
        return
    if token != lease["token"]:
        raise LeaseLostInWorker(f"the lease {lease['path']} is no longer this run's")


def process_partition(iterator, bc, acc, settings: dict):
    """mapPartitions function: task specs in, row tuples out (each piece's outcome to `acc`, as a dict)."""
    for task in iterator:
        serving, config, opened = _state(bc)
        for piece in task["pieces"]:
            check_lease(settings)
            done = yield from process_piece(piece, serving, config, settings)
            done.task, done.pid, done.max_rss_kb = task["task"], os.getpid(), _max_rss_kb()
            done.model_loads_in_process, done.opened_model = _MODEL_LOADS, opened
            done.gc_thresholds, done.native = list(gc.get_threshold()), cleaner.NATIVE_STATUS
            opened = False
            acc.add({piece["key"]: done.to_dict()})


def process_partition_arrow(batches, bc, acc, settings: dict, specs_bc, batch_rows: int = 256):
    """mapInArrow function: batches of task ids in, Arrow record batches of rows out.

    Rows cross to the JVM as Arrow columns instead of pickled tuples, so the JVM no longer
    unpickles and converts every row; that JVM work otherwise competes with the Python
    workers for the cores (measured: local[2] 1.66x local[1] with pickled rows).
    """
    import pyarrow as pa

    from cleaner.output.schema import SCHEMA

    def tasks():
        for batch in batches:
            for task_id in batch.column(0).to_pylist():
                yield specs_bc.value[task_id]

    def batch(rows: list[tuple]) -> pa.RecordBatch:
        # column by column from the row tuples (schema order): the same batch as from_pylist over one dict a row,
        # without the dicts (0.024 against 0.040 ms a row)
        return pa.RecordBatch.from_arrays([pa.array(column, type=field.type)
                                           for column, field in zip(zip(*rows), SCHEMA)], schema=SCHEMA)

    buf: list[tuple] = []
    for values in process_partition(tasks(), bc, acc, settings):
        buf.append(values)
        if len(buf) >= batch_rows:
            yield batch(buf)
            buf = []
    if buf:
        yield batch(buf)


def index_file(f: dict, settings: dict) -> dict:
    """Offset pre-scan of one file -> {"uri", "cuts" or None, "records", "seconds"}."""
    t0 = time.perf_counter()
    try:
        with open_input(f["uri"]) as fh:
            offsets = scan.record_offsets(fh, f["size"], is_gzip_name(f["uri"]))
    except Exception as exc:
        return {"uri": f["uri"], "cuts": None, "records": 0, "seconds": time.perf_counter() - t0,
                "error": f"{type(exc).__name__}: {exc}"[:300]}
    cuts = scan.cut_points(offsets, f["size"], f["pieces"]) if offsets else None
    return {"uri": f["uri"], "cuts": cuts if cuts and len(cuts) > 2 else None,
            "records": len(offsets or ()), "seconds": time.perf_counter() - t0}

