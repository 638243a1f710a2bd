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
            if e.startswith(RUN_PREFIX) or e in (STAGING, RUNS, RUN_JSON) or e.startswith("."):
                continue
            return False
        return True

    def recover(self) -> dict[str, dict]:
        """Discard unpublished (crashed) runs, roll forward the index of published ones.
        Returns {run_id: record} of the published runs."""
        staging_root = self.fs.join(self.root, STAGING)
        for run_id in self.fs.listdir(staging_root):
            log.warning("discarding unpublished run %s (a previous job stopped before "
                        "publishing it; its files were not marked done)", run_id)
            self.fs.delete(self.fs.join(staging_root, run_id))
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

    def publish(self, run_id: str, record: dict, crash_at: str | None = None) -> str:
        """Write the record into the staged run, rename it into place, index it."""
        staging = self.staging_dir(run_id)
        self.fs.write_text(self.fs.join(staging, RUN_JSON), json_dumps(record))
        if crash_at == "before_publish":
            raise SimulatedCrash("before_publish")
        final = self.run_dir(run_id)
        self.fs.rename(staging, final)  # the commit point
        if crash_at == "after_publish":
            raise SimulatedCrash("after_publish")
        self.fs.write_text(self.index_path(run_id), json_dumps(record))
        self.fs.write_text(self.fs.join(self.root, RUN_JSON), json_dumps(record))
        return final


def done_files(records: dict[str, dict]) -> dict[str, str]:
    """{file uri: run id} of files fully processed by a published run."""
    done: dict[str, str] = {}
    for run_id in sorted(records):
        for uri, info in (records[run_id].get("files") or {}).items():
            if info.get("status") == "done":
                done.setdefault(uri, run_id)
    return done


class SimulatedCrash(RuntimeError):
    """Raised by the test hook --simulate-crash (the CLI turns it into an immediate exit)."""
