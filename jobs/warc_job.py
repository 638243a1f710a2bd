"""The WARC job whatever runs its tasks: the checks before any work, the inputs, the output directory (lease,
recovery, --skip-done), the plan of pieces and tasks, the checks of the counters, the run record and publishing.

`WarcJob` leaves the engine steps to its subclasses: Spark executors (`jobs.clean_warc.CleanWarcJob`, the
spark-submit entry point) or a pool of local processes (`jobs.pool.PoolCleanWarcJob`, `cleaner clean-warc`).
"""

from __future__ import annotations

import os
import re
import sys
import time
from datetime import UTC, datetime

from cleaner.config import ConfigError, load_config
from cleaner.label.convention import ConventionError
from cleaner.label.model import model_for_convention
from cleaner.label.model_files import ModelError
from cleaner.output.run_settings import output_settings, settings_difference

from . import formats, inputs, plan, tempdirs
from .arguments import JobError, apply_job_flags, build_parser
from .lease import Lease, LeaseHeld, LeaseLost, LeaseSettings
from .outcomes import PieceOutcome, systematic_failure
from .report import log, print_summary
from .run_record import recorded_settings, run_record
from .runs import (
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
from .storage import HadoopFS, InputError, LocalFS, base_name, is_local, local_path, resolve_local
from .worker import model_payload


class Interrupted(Exception):
    """Ctrl-C while the pieces were cleaned (jobs/pool.py): the counters of the pieces of the files kept whole
    (`files`, their rows alone left in the staging), of `of` files planned; `records` cleaned in all."""

    def __init__(self, counters: dict[str, dict], files: set[str], of: int, records: int):
        super().__init__("interrupted")
        self.counters, self.files, self.of, self.records = counters, files, of, records


class WarcJob:
    """cc-pyspark-style job: parse arguments, validate, plan, run the tasks on an engine, publish."""

    name = "clean_warc"
    command = "jobs/clean_warc.py"  # how the run record names the command that made it

    def __init__(self, argv: list[str] | None = None):
        self.argv = list(sys.argv[1:] if argv is None else argv)
        self.args = build_parser().parse_args(self.argv)
        self.prepared = False
        self.lease: Lease | None = None  # taken in prepare (a local output) or run (a remote one)

    @property
    def model(self):
        """The model that cleans the run's pages (the HTML5 pages' aside: self.serving.html5); set by prepare."""
        return self.serving.model

    # --- before any engine -------------------------------------------------------------------------------

    def prepare(self) -> None:
        """Check everything that can be checked without Spark; raise JobError."""
        a = self.args
        try:
            self.config = load_config(a.config)
        except ConfigError as exc:
            raise JobError(4, f"invalid config: {exc}") from exc
        self.job = dict(self.config["job"])  # every key checked by load_config (cleaner/settings.py)
        apply_job_flags(self.job, self.args, self.config.source)
        try:  # --model, else the model of the convention chosen (--convention, else [model] convention of --conf)
            serving = model_for_convention(self.config, a.model, a.convention)
        except ModelError as exc:
            hint = "" if a.model else " (train one with `cleaner train`, or pass --model)"
            raise JobError(4, f"unreadable model: {exc}{hint}") from exc
        except ConventionError as exc:
            raise JobError(4, f"invalid {'--convention' if a.convention else 'config'}: {exc}") from exc
        self.serving = serving
        # The workers are sent the models' bytes (jobs.worker._state): the model reads the convention it tags with
        # from the config they are sent, the HTML5 pages' model (if any) is sent with its own.
        self.config = serving.config_for(self.config)
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

    def stop_if_lease_lost(self, run_id: str, done: int, total: int) -> None:
        """Between tasks: a run that lost its lease (taken over after a pause longer than the stale time, removed by
        hand) cannot publish, so it stops cleaning now rather than at the end (JobError 5)."""
        if self.lease is None:
            return
        try:
            self.lease.check()
        except LeaseLost as exc:
            raise JobError(5, f"{exc}: stopped after {done} of {total} tasks; run {run_id} not published, "
                              "no file marked done") from exc
        except OSError:  # a passing storage error: the heartbeat and the check at publish still stand
            pass

    def _check_output(self, out: OutputDir) -> None:
        if not out.is_ours():
            raise JobError(5, f"output directory {out.root} holds files this job did not write; "
                              "give an empty or new directory")
        if not self.args.skip_done and not self.args.overwrite and out.published_ids():
            raise JobError(5, f"output directory {out.root} already holds "
                              f"{len(out.published_ids())} published run(s): use --skip-done to "
                              "add only new WARC files, or --overwrite to replace them")

    # --- Spark --------------------------------------------------------------------------

    def crawl_name(self, uri: str) -> str:
        if self.args.crawl:
            return self.args.crawl
        m = re.search(self.job["crawl_pattern"], uri)
        if m:
            return m.group(1) if m.groups() else m.group(0)
        return self.job["default_crawl"]

    # --- what the engine does: Spark here; jobs/pool.py does the same on local processes (cleaner clean-warc) ---

    def _worker_payload(self) -> dict:
        """What every worker builds its model and config from (jobs.worker._state), sent once."""
        model, html5 = self.serving.model, self.serving.html5
        config_key = self.config.section_hash(tuple(self.config.data), model.meta.get("families", ()))
        return {
            "key": f"{self.serving.hash}:{config_key}",
            **model_payload(model),
            # the HTML5 pages' model and the convention it is given ([model.html5_by_convention]), or None
            "html5": None if html5 is None else {**model_payload(html5.model), "convention": html5.convention},
            "config": self.config.to_json(), "config_source": self.config.source,
        }

    def _worker_settings(self, run_id: str) -> dict:
        j = self.job
        settings = {"max_payload_bytes": int(j["max_payload_bytes"]), "run_id": run_id,
                    "marker_dir": str(j["marker_dir"] or "")}
        if self.output_local and self.lease is not None:  # workers check it between pieces (jobs.worker)
            settings["lease"] = {"path": self.lease.path, "token": self.lease.token}
        return settings

    # --- what the engine does: Spark (jobs/clean_warc.py) or local processes (jobs/pool.py) ---------------

    def _start_engine(self, spark) -> None:
        raise NotImplementedError

    def _cores(self, spark) -> int:
        raise NotImplementedError

    def _scan_offsets(self, spark, run_id: str, specs: list[dict]) -> list[dict]:
        """jobs.worker.index_file of each spec."""
        raise NotImplementedError

    def _clean_pieces(self, spark, run_id: str, pieces: list[dict], task_specs: list[dict], fs, staging: str,
                      n_files: int) -> dict[str, dict]:
        """Clean every task's pieces (jobs.worker) into files under `staging`: {piece key: PieceOutcome dict}."""
        raise NotImplementedError

    def _engine_record(self, spark) -> dict:
        """The engine's part of the run record."""
        raise NotImplementedError

    # --- the run ----------------------------------------------------------------------------------------

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
        self.skipped_inputs = skipped_inputs  # recorded in .run.json and the summary

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
                    raise JobError(5, f"output directory {root} is not usable: {short_error(exc)}") from exc
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
        # One output holds rows of one kind: a run with another format, convention, model or config (--skip-done
        # with --convention cleaneval after a run by the default) is refused, naming the difference.
        now = output_settings(j["format"], self.serving.chosen, self.serving.hash, self.config)
        for rid, rec in sorted(published.items()):
            difference = settings_difference(recorded_settings(rec), now)
            if difference:
                raise JobError(5, f"output directory {root} holds run {rid} cleaned with other settings "
                                  f"({difference}): use another output directory, or --overwrite to replace it")
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
                log.warning("offset pre-scan failed (%s): big files are read whole", short_error(exc))
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
        stopped: Interrupted | None = None
        try:
            cleaned = self._clean_pieces(spark, run_id, pieces, task_specs, fs, staging, len(todo))
        except Interrupted as stop:  # Ctrl-C: publish the files cleaned whole, leave the rest to --skip-done
            stopped, cleaned = stop, stop.counters
            if not stop.files:
                try:
                    out.fs.delete(staging)
                except Exception:
                    pass
                raise JobError(130, f"interrupted: nothing kept, no file was finished ({stop.records:,} records "
                                    f"cleaned in {stop.of} files dropped); run {run_id} not published, --skip-done "
                                    "or a new run cleans them") from None
            pieces = [p for p in pieces if p["uri"] in stop.files]
            todo = [f for f in todo if f.uri in stop.files]
            self.superseded = {u: v for u, v in self.superseded.items() if u in stop.files}
        except JobError:
            # Not published (a failed task, a full disk, the lease lost): its staging is nobody's, gone now rather
            # than at the next run. A simulated crash leaves it, as a kill would.
            try:
                out.fs.delete(staging)
            except Exception:
                pass
            raise
        finished = {key: PieceOutcome.from_dict(value) for key, value in cleaned.items()}
        for piece in finished.values():
            for rec_key in piece.poison_candidates:
                log.warning("poison record in %s at %s (offset:record id): it crashed the "
                            "Python worker and was rejected as `poison`", base_name(piece.file),
                            rec_key)

        missing = [p["key"] for p in pieces if p["key"] not in finished]
        if missing:
            raise JobError(1, f"counters missing for {len(missing)} pieces (e.g. {missing[0]}); "
                              "run not published")
        per_file: dict[str, list[PieceOutcome]] = {}
        for p in pieces:
            per_file.setdefault(p["uri"], []).append(finished[p["key"]])
        rows_expected = sum(d.outcome.html_records for d in finished.values())
        parquet_files = [(p, n) for p, n in fs.files(staging) if formats.is_data_file(p, j["format"])]
        parquet_files = formats.finish(parquet_files, j)  # zstd JSON Lines: compressed here (jobs/formats.py)
        rows_written = formats.count_rows(spark, fs, staging, parquet_files, j["format"]) if rows_expected else 0
        if rows_written != rows_expected:
            raise JobError(1, f"staged output has {rows_written} rows, counters say "
                              f"{rows_expected}: run not published")

        systematic = systematic_failure(d.outcome for d in finished.values())
        if systematic:
            out.fs.delete(staging)
            raise JobError(1, f"{systematic}: run {run_id} not published, no input file marked done "
                              "(a failure of the cleaner, not of the pages: check --conf and --model)")

        elapsed = time.perf_counter() - t0
        record = run_record(
            run_id=run_id, job=self.name, command=[self.command, *self.argv], started=started, elapsed=elapsed,
            config=self.config, settings=j, serving=self.serving, files=files, todo=todo,
            inputs_skipped=self.skipped_inputs, skipped_done=skipped_done, superseded=self.superseded,
            crawl_of=crawl_of, per_file=per_file, pieces=finished, dist=dist, out=out, staging=staging,
            parquet_files=parquet_files, rows_written=rows_written, engine=self._engine_record(spark))

        failed = {u: f for u, f in record["files"].items() if f["status"] == "failed"}
        if len(failed) == len(record["files"]):
            # Nothing a reader could use and nothing to mark done: a published empty run would only make the next
            # try on this output refuse (it "already holds a published run").
            out.fs.delete(staging)
            uri, first = next(iter(failed.items()))
            raise JobError(1, f"nothing to publish: {len(failed)} of {len(failed)} input files could not be read "
                              f"({base_name(uri)}: {first.get('open_error')}): run {run_id} not published, "
                              "no file marked done")

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
        if self.superseded and out.fs.kind != "local":
            log.warning("%d files cleaned again: their older rows stay in the earlier runs of this output (not a local "
                        "folder); read the newest rows of each file (docs/faults.md, \"Reading the newest rows\")",
                        len(self.superseded))
        try:  # after the commit: the older rows of the files cleaned again out of plain readers' way (jobs/runs.py)
            out.prune_superseded(run_id, record)
        except Exception as exc:  # the run is published; the next run's recovery finishes this
            log.warning("run %s is published, but the rows it superseded are still in the older runs (%s); the "
                        "next run takes them out", run_id, short_error(exc))
        print_summary(record, sys.stdout)
        if stopped is not None:
            rest = stopped.of - len(stopped.files)
            raise JobError(130, f"interrupted: kept {len(stopped.files)} of {stopped.of} files whole "
                                f"({rows_written:,} rows) in run {run_id}; not kept: {rest} files stopped midway, "
                                "which --skip-done cleans")
        if failed:
            log.warning("%d files could not be opened and are not marked done (a --skip-done run "
                        "retries them): %s", len(failed), ", ".join(list(failed)[:5]))
        return record


def superseded_files(published: dict, todo) -> dict:
    """{uri: (run id, files entry)} of this run's files that an earlier run recorded in another version."""
    newest = newest_versions(published)
    return {f.uri: newest[f.uri] for f in todo
            if f.uri in newest and newest[f.uri][1].get("status") in ("done", "incomplete")
            and not same_version(newest[f.uri][1], f.size, f.mtime_ns)}


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


def ordered_run_id(run_id: str, published: dict) -> str:
    """`run_id`, or an id after every published one when the clock says otherwise (ids sort by time, and the
    newest run of a file is the one with the greatest id)."""
    latest = max(published, default="")
    if run_id > latest:
        return run_id
    return f"{latest}-{os.urandom(2).hex()}"


def short_error(exc: BaseException) -> str:
    text = str(exc).strip()
    for line in text.splitlines():
        if "Error" in line or "Exception" in line:
            return line.strip()[:500]
    return (text.splitlines()[0] if text else type(exc).__name__)[:500]
