"""The output directory and its run records: staging, atomic publish, recovery, --skip-done.

Layout of an output directory OUT:

    OUT/run=<run_id>/[crawl=<c>/]part-*.zstd.parquet   published runs (one directory each)
    OUT/run=<run_id>/_run.json                           that run's record (source of truth)
    OUT/_runs/<run_id>.json                              index: a copy of every published record
    OUT/_run.json                                        copy of the latest published record
    OUT/_staging/<run_id>/                               a run being written (never read)

Exactly once: a run writes its Parquet files into `_staging/<run_id>` (Spark's commit
protocol makes that directory hold exactly one copy of every task's output), checks the row
count against its counters, writes `_run.json` into it, and then publishes it with ONE
directory rename to `run=<run_id>` - the commit point. Readers (Spark ignores `_*` paths;
the DuckDB queries glob `run=*`) see all of a run or nothing of it. A crash before the
rename leaves only `_staging/<run_id>`, which the next run deletes: its files were never
recorded as done, so `--skip-done` processes them again. A crash after the rename leaves a
published run whose index copies are missing: the next run writes them (roll forward).
The set of done files is the union of the `files` of the published runs' records, so a file
is either in exactly one published run or in none. (On S3, rename is a copy: publish is then
not atomic for readers during the copy; recovery is the same.)
"""

from __future__ import annotations

import json
import logging
import secrets
import time

from .storage import json_dumps

log = logging.getLogger("clean_warc")

RUN_PREFIX = "run="
STAGING = "_staging"
RUNS = "_runs"
RUN_JSON = "_run.json"
LEASE_FILES = ("_lease.json", "_lease.takeover")  # jobs/lease.py


class OutputError(Exception):
    """The output directory cannot be used (not ours, already holds runs, ...)."""


def new_run_id() -> str:
    return time.strftime("%Y%m%dT%H%M%SZ", time.gmtime()) + "-" + secrets.token_hex(3)


class OutputDir:
    def __init__(self, fs, root: str):
        self.fs = fs
        self.root = root.rstrip("/") if len(root) > 1 else root

    # paths
    def run_dir(self, run_id: str) -> str:
        return self.fs.join(self.root, RUN_PREFIX + run_id)

    def staging_dir(self, run_id: str) -> str:
        return self.fs.join(self.root, STAGING, run_id)

    def index_path(self, run_id: str) -> str:
        return self.fs.join(self.root, RUNS, run_id + ".json")

    # state
    def entries(self) -> list[str]:
        return self.fs.listdir(self.root) if self.fs.isdir(self.root) else []

    def published_ids(self) -> list[str]:
        return sorted(e[len(RUN_PREFIX):] for e in self.entries() if e.startswith(RUN_PREFIX))

    def is_ours(self) -> bool:
        """Empty, or only holds what this job writes."""
        for e in self.entries():
            if e.startswith(RUN_PREFIX) or e in (STAGING, RUNS, RUN_JSON, *LEASE_FILES) or e.startswith("."):
                continue
            return False
        return True

    def recover(self) -> dict[str, dict]:
        """Discard unpublished (crashed) runs, roll forward the index of published ones.
        Returns {run_id: record} of the published runs."""
        # Called with the lease held (jobs/lease.py): no live run writes here, so every staged run is dead.
        staging_root = self.fs.join(self.root, STAGING)
        for run_id in self.fs.listdir(staging_root):
            log.warning("discarding unpublished run %s (a previous job stopped before "
                        "publishing it; its files were not marked done)", run_id)
            self.fs.delete(self.fs.join(staging_root, run_id))
        # temporary files of an index write that failed (disk full) or was killed: `.<name>.<random>`
        for folder in (self.root, self.fs.join(self.root, RUNS)):
            for name in self.fs.listdir(folder):
                if _is_index_temp(name):
                    log.warning("removing a temporary file left by an interrupted write: %s", name)
                    self.fs.delete(self.fs.join(folder, name))
        records: dict[str, dict] = {}
        for run_id in self.published_ids():
            path = self.fs.join(self.run_dir(run_id), RUN_JSON)
            try:
                record = json.loads(self.fs.read_text(path))
            except Exception as exc:
                raise OutputError(f"published run {self.run_dir(run_id)} has no readable "
                                  f"{RUN_JSON} ({exc}); move it away and re-run") from exc
            records[run_id] = record
            if not self.fs.exists(self.index_path(run_id)):
                log.warning("run %s was published but not indexed: indexing it now", run_id)
                self.fs.write_text(self.index_path(run_id), json_dumps(record))
        if records:
            latest = max(records)
            latest_path = self.fs.join(self.root, RUN_JSON)
            current = None
            if self.fs.exists(latest_path):
                try:
                    current = json.loads(self.fs.read_text(latest_path)).get("run_id")
                except Exception:
                    current = None
            if current != latest:
                self.fs.write_text(latest_path, json_dumps(records[latest]))
        return records

    def clear(self) -> None:
        """--overwrite: remove every run, index and staging directory (only ours)."""
        if not self.is_ours():
            raise OutputError(f"refusing to overwrite {self.root}: it holds files this job "
                              "did not write")
        for e in self.entries():
            if e.startswith(RUN_PREFIX) or e in (STAGING, RUNS, RUN_JSON):
                self.fs.delete(self.fs.join(self.root, e))

    def publish(self, run_id: str, record: dict, crash_at: str | None = None, before_commit=None) -> str | None:
        """Write the record into the staged run, rename it into place (the commit point), index it.

        Raises PublishError when the run is NOT published (nothing of it visible, no file marked done).
        Once the rename succeeded the run is published whatever follows: a failed index write (disk full)
        is returned as a message (the next run writes the index: `recover`), never raised as a failure.
        `before_commit()` runs just before the rename (the lease and overlap checks); what it raises is
        raised as it is."""
        staging = self.staging_dir(run_id)
        try:
            self.fs.write_text(self.fs.join(staging, RUN_JSON), json_dumps(record))
        except Exception as exc:  # OSError locally, a py4j error through Hadoop
            raise PublishError(f"cannot write the run record: {exc}") from exc
        if crash_at == "before_publish":
            raise SimulatedCrash("before_publish")
        if before_commit is not None:
            before_commit()
        final = self.run_dir(run_id)
        try:
            self.fs.rename(staging, final)  # the commit point
        except Exception as exc:
            raise PublishError(f"cannot rename {staging} to {final}: {exc}") from exc
        if crash_at == "after_publish":
            raise SimulatedCrash("after_publish")
        try:
            self.fs.write_text(self.index_path(run_id), json_dumps(record))
            self.fs.write_text(self.fs.join(self.root, RUN_JSON), json_dumps(record))
        except Exception as exc:
            return (f"run {run_id} is published, but its index copies (_runs/{run_id}.json, {RUN_JSON}) could "
                    f"not be written ({exc}); the next run writes them")
        return None

    def published_since(self, planned: set[str]) -> dict[str, dict]:
        """{run id: record} of the runs published after planning (not in `planned`)."""
        out = {}
        for run_id in self.published_ids():
            if run_id in planned:
                continue
            try:
                out[run_id] = json.loads(self.fs.read_text(self.fs.join(self.run_dir(run_id), RUN_JSON)))
            except Exception:
                out[run_id] = {"files": {}, "unreadable": True}
        return out


def same_version(info: dict, size: int, mtime_ns: int | None) -> bool:
    """Whether a file recorded by a run (`info`: its `files` entry) is the file now seen with `size` and
    `mtime_ns`. A record or a store without a modification time compares sizes only."""
    if info.get("size") != size:
        return False
    recorded = info.get("mtime_ns")
    return recorded is None or mtime_ns is None or recorded == mtime_ns


def newest_versions(records: dict[str, dict]) -> dict[str, tuple[str, dict]]:
    """{file uri: (run id, files entry)} of the newest published run that covers each file (run ids sort by
    time, and runs of one output do not overlap: the lease)."""
    newest: dict[str, tuple[str, dict]] = {}
    for run_id in sorted(records):
        for uri, info in (records[run_id].get("files") or {}).items():
            newest[uri] = (run_id, info)
    return newest


def done_files(records: dict[str, dict], files=None) -> dict[str, str]:
    """{file uri: run id} of the files a published run has done, in the version now seen.

    `files`: the InputFile list (uri, size, mtime_ns) of this run; without it, a file counts as done when its
    newest run did it (whatever its version). A file counts as done when its newest run recorded it `done`,
    or `incomplete` (it ended early) and it has not changed since: reading the same bytes again ends at the
    same place. A `failed` file (could not be opened) is never done. A file whose size or modification time
    changed is cleaned again, and its rows in the new run supersede the old ones (docs/faults.md)."""
    newest = newest_versions(records)
    done: dict[str, str] = {}
    seen = {f.uri: f for f in files} if files is not None else None
    for uri, (run_id, info) in newest.items():
        status = info.get("status")
        if status not in ("done", "incomplete"):
            continue
        if seen is None:
            if status == "done":
                done[uri] = run_id
            continue
        f = seen.get(uri)
        if f is not None and same_version(info, f.size, f.mtime_ns):
            done[uri] = run_id
    return done


def overlap(todo, published: dict[str, dict]) -> list[tuple[str, str]]:
    """[(file uri, run id)] of this run's files that runs published since it planned also cover (the
    optimistic check at publish, as Delta Lake and Iceberg commit)."""
    uris = {f.uri for f in todo}
    hits = []
    for run_id, rec in sorted(published.items()):
        if rec.get("unreadable"):
            hits.append(("(unreadable record)", run_id))
            continue
        hits += [(u, run_id) for u in rec.get("files") or {} if u in uris]
    return hits


def _is_index_temp(name: str) -> bool:
    # the temporary names of LocalFS.write_text (`.<run_id>.json.<random>`, `._run.json.<random>`), of
    # HadoopFS.write_text (`.<name>.tmp`)
    # and the output probe's (`.probe-<pid>-<random>`, jobs/clean_warc.py)
    return name.startswith(".") and (".json." in name or name.endswith(".json.tmp") or name.startswith(".probe-"))


class PublishError(Exception):
    """The run was not published (nothing of it is visible)."""


class SimulatedCrash(RuntimeError):
    """Raised by the test hook --simulate-crash (the CLI turns it into an immediate exit)."""
