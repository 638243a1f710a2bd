"""The output directory and its run records: staging, atomic publish, recovery, --skip-done.

Layout of an output directory OUT:

    OUT/run=<run_id>/[crawl=<c>/]part-*.zstd.parquet   published runs (one directory each)
    OUT/run=<run_id>/.run.json                           that run's record (source of truth)
    OUT/.runs/<run_id>.json                              index: a copy of every published record
    OUT/.run.json                                        copy of the latest published record
    OUT/.staging/<run_id>/                               a run being written (never read)
    OUT/.superseded/<run_id>/run=<old>/...parquet.superseded   data files of older runs as they were before
                                                         <run_id> took out the rows of the files it cleaned again
    OUT/.huggingface.yaml                                the dataset card's YAML (`configs` / `data_files`)

Where readers look (measured, docs/spark_job.md "Reading the output"): Spark leaves out every `_*` and `.*` path;
`datasets` leaves out `.*` and `__*` paths but reads `_*` ones; DuckDB's `OUT/**/*.parquet` reads every
`*.parquet` file, hidden or not. So the run records, the index, the staging and the lease are `.`-names (they
were `_`-names: `datasets` read `_run.json` as the data), the superseded files of older runs lie in
`.superseded/` under a name that does not end in `.parquet`, and the card is `.huggingface.yaml`, which
`datasets.load_dataset(OUT)` reads as it reads a README.md's YAML header (a `README.md` is a file Spark would read
as Parquet and fail on). Outputs of the earlier layout (`_run.json`, `_runs/`, `_staging/`) are moved to this one
by `recover`.

Exactly once: a run writes its Parquet files into `_staging/<run_id>` (Spark's commit
protocol makes that directory hold exactly one copy of every task's output), checks the row
count against its counters, writes `_run.json` into it, and then publishes it with ONE
directory rename to `run=<run_id>` - the commit point. Readers (Spark and `datasets` leave out `.*`
paths; the DuckDB view globs `run=*`) see all of a run or nothing of it. A crash before the
rename leaves only `_staging/<run_id>`, which the next run deletes: its files were never
recorded as done, so `--skip-done` processes them again. A crash after the rename leaves a
published run whose index copies are missing: the next run writes them (roll forward).
The set of done files is the union of the `files` of the published runs' records, so a file
is either in exactly one published run or in none. (On S3, rename is a copy: publish is then
not atomic for readers during the copy; recovery is the same.)

A file cleaned again because it changed (`supersedes`) has rows in an older run too. Once the newer run is
published, `prune_superseded` takes them out of the older run's data files (local outputs): each data file that
holds some is hard-linked into `.superseded/<new run>/` as it was, and replaced (one atomic rename) by a copy
without them, or removed when nothing else is left in it; `.superseded/<new run>.json` then records it done.
Between the publish and the end of that step a plain reader sees those rows twice (never none); the newest-rows
view (`newest_rows_sql`) is exact throughout. A run killed in between leaves the record without its `.json`
marker, and the next run's `recover` finishes it (every step can be done again).
"""

from __future__ import annotations

import json
import logging
import os
import secrets
import shutil
import time

from .storage import json_dumps

log = logging.getLogger("clean_warc")

RUN_PREFIX = "run="
STAGING = ".staging"
RUNS = ".runs"
RUN_JSON = ".run.json"
SUPERSEDED = ".superseded"
CARD = ".huggingface.yaml"
LEASE_FILES = (".lease.json", ".lease.takeover")  # jobs/lease.py
# the earlier layout's names (`datasets` reads `_*` paths): moved to the ones above by `recover`
LEGACY_STAGING, LEGACY_RUNS, LEGACY_RUN_JSON = "_staging", "_runs", "_run.json"
LEGACY_NAMES = (LEGACY_STAGING, LEGACY_RUNS, LEGACY_RUN_JSON, "_lease.json", "_lease.takeover")
SPARK_SUCCESS = "_SUCCESS"  # Spark's commit marker: an empty file `datasets` would read as a Parquet file
SUPERSEDED_SUFFIX = ".superseded"  # not `.parquet`: DuckDB's `OUT/**/*.parquet` reads hidden folders too


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

    def record_path(self, run_id: str) -> str:
        return self.fs.join(self.run_dir(run_id), RUN_JSON)

    def is_ours(self) -> bool:
        """Empty, or only holds what this job writes."""
        for e in self.entries():
            if e.startswith(RUN_PREFIX) or e in LEGACY_NAMES or e.startswith("."):
                continue
            return False
        return True

    def recover(self) -> dict[str, dict]:
        """Discard unpublished (crashed) runs, roll forward the index of published ones.
        Returns {run_id: record} of the published runs."""
        # Called with the lease held (jobs/lease.py): no live run writes here, so every staged run is dead.
        for staging_root in (self.fs.join(self.root, STAGING), self.fs.join(self.root, LEGACY_STAGING)):
            for run_id in self.fs.listdir(staging_root):
                log.warning("discarding unpublished run %s (a previous job stopped before "
                            "publishing it; its files were not marked done)", run_id)
                self.fs.delete(self.fs.join(staging_root, run_id))
        self._move_legacy_layout()
        # temporary files of an index write that failed (disk full) or was killed: `.<name>.<random>`
        for folder in (self.root, self.fs.join(self.root, RUNS)):
            for name in self.fs.listdir(folder):
                if _is_index_temp(name):
                    log.warning("removing a temporary file left by an interrupted write: %s", name)
                    self.fs.delete(self.fs.join(folder, name))
        records: dict[str, dict] = {}
        for run_id in self.published_ids():
            path = self.record_path(run_id)
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
            self.write_card(records[latest])
        for run_id in sorted(records):  # a run killed before it took the rows it superseded out: finish it
            self.prune_superseded(run_id, records[run_id])
        return records

    def _move_legacy_layout(self) -> None:
        """An output of the earlier layout (`_run.json` in each run, `_runs/`, `_run.json`, `_staging/`): each run's
        record renamed to `.run.json` (its own folder: one rename), Spark's `_SUCCESS` files removed, the old index
        copies removed (written again from the runs' own records just after)."""
        for run_id in self.published_ids():
            old, new = self.fs.join(self.run_dir(run_id), LEGACY_RUN_JSON), self.record_path(run_id)
            if self.fs.exists(old):
                if self.fs.exists(new):
                    self.fs.delete(old)
                else:
                    log.warning("run %s: its record moves from %s to %s (where readers of the data do not look)",
                                run_id, LEGACY_RUN_JSON, RUN_JSON)
                    self.fs.rename(old, new)
            success = self.fs.join(self.run_dir(run_id), SPARK_SUCCESS)
            if self.fs.exists(success):
                self.fs.delete(success)
        for name in (LEGACY_STAGING, LEGACY_RUNS, LEGACY_RUN_JSON):
            path = self.fs.join(self.root, name)
            if self.fs.exists(path):
                self.fs.delete(path)

    def write_card(self, record: dict) -> None:
        """The dataset card's YAML (`configs` / `data_files`), which `datasets.load_dataset(OUT)` reads."""
        output = record.get("output") or {}
        text = dataset_card(output.get("format") or "parquet", output.get("partition_by") or ())
        path = self.fs.join(self.root, CARD)
        try:
            if self.fs.exists(path) and self.fs.read_text(path) == text:
                return
            self.fs.write_text(path, text)
        except Exception as exc:  # a convenience: never a reason to fail a run
            log.warning("could not write the dataset card %s: %s", path, exc)

    def prune_superseded(self, run_id: str, record: dict) -> dict | None:
        """Take the rows of the files `run_id` cleaned again (its record's `supersedes`) out of the older runs'
        data files, so that a plain reader of OUT sees each file's rows once (module docstring). Local outputs
        only (None elsewhere: the newest-rows view is then the way to read them). Idempotent; returns what it did,
        also recorded in `.superseded/<run_id>.json`."""
        superseded = record.get("supersedes") or {}
        if not superseded or self.fs.kind != "local":
            return None
        marker = self.fs.join(self.root, SUPERSEDED, run_id + ".json")
        if self.fs.exists(marker):
            return None
        files = record.get("files") or {}
        by_run: dict[str, set[str]] = {}
        for uri, old_run in superseded.items():
            # only files this run has rows of (a file it could not open keeps its older rows)
            if (files.get(uri) or {}).get("status") in ("done", "incomplete"):
                by_run.setdefault(old_run, set()).add(uri)
        done: list[dict] = []
        for old_run, uris in sorted(by_run.items()):
            done += _prune_run(self.root, self.run_dir(old_run), run_id, uris)
        self.fs.write_text(marker, json_dumps({"run_id": run_id, "supersedes": superseded, "data_files": done}))
        for d in done:
            log.info("run %s superseded %s rows of %s: %s", run_id, d["rows_removed"], d["path"],
                     "removed" if not d["rows_kept"] else f"{d['rows_kept']} rows kept")
        return {"run_id": run_id, "data_files": done}

    def clear(self) -> None:
        """--overwrite: remove every run, index and staging directory (only ours)."""
        if not self.is_ours():
            raise OutputError(f"refusing to overwrite {self.root}: it holds files this job "
                              "did not write")
        for e in self.entries():
            if e.startswith(RUN_PREFIX) or e in (STAGING, RUNS, RUN_JSON, SUPERSEDED, CARD, LEGACY_STAGING,
                                                 LEGACY_RUNS, LEGACY_RUN_JSON):
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
            success = self.fs.join(staging, SPARK_SUCCESS)
            if self.fs.exists(success):  # Spark's commit marker: `datasets` would read it as a data file
                self.fs.delete(success)
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
            return (f"run {run_id} is published, but its index copies ({RUNS}/{run_id}.json, {RUN_JSON}) could "
                    f"not be written ({exc}); the next run writes them")
        self.write_card(record)
        return None

    def published_since(self, planned: set[str]) -> dict[str, dict]:
        """{run id: record} of the runs published after planning (not in `planned`)."""
        out = {}
        for run_id in self.published_ids():
            if run_id in planned:
                continue
            try:
                out[run_id] = json.loads(self.fs.read_text(self.record_path(run_id)))
            except Exception:
                out[run_id] = {"files": {}, "unreadable": True}
        return out


def dataset_card(fmt: str, partition_by: list[str] | tuple[str, ...] = ()) -> str:
    """`.huggingface.yaml`: the YAML a dataset card's README.md would start with, read by `datasets.load_dataset(OUT)`
    (the published runs' data files; the run records, staging and superseded files are not data).

    For JSON Lines it also declares the rows' features (`dataset_info`, from cleaner.output.schema.SCHEMA without the
    partition columns, which are in the folder names): without them `datasets` takes the types of the first file, and
    a column null throughout that file (no page of it had an author) is typed null, which a later file's strings
    cannot be cast to. Parquet files carry their own schema."""
    patterns = ["run=*/**/*.parquet"] if fmt == "parquet" else [
        "run=*/**/*.json", "run=*/**/*.json.gz", "run=*/**/*.json.zst"]
    lines = ["# Written by webcleaner (cleaner clean-warc, jobs/clean_warc.py): the data files of the published runs,",
             "# for datasets.load_dataset(\"OUT\"). Run records: .run.json, .runs/.",
             "# docs/spark_job.md, \"Reading the output\".",
             "configs:", "- config_name: default", "  data_files:", "  - split: train", "    path:"]
    lines += [f'    - "{p}"' for p in patterns]
    if fmt != "parquet":
        from cleaner.output.schema import SCHEMA

        lines += ["# the rows' types (cleaner/output/schema.py), whatever the first file holds",
                  "dataset_info:", "  config_name: default", "  features:"]
        lines += _yaml_features([f for f in SCHEMA if f.name not in set(partition_by)], "  ")
    return "\n".join(lines) + "\n"


def _yaml_features(fields, indent: str) -> list[str]:
    """Arrow fields as a dataset card's `features` list (`datasets.Features` in YAML: `dtype`, `list`, `struct`)."""
    out = []
    for f in fields:
        out.append(f"{indent}- name: {f.name}")
        out += _yaml_type(f.type, indent + "  ")
    return out


def _yaml_type(type_, indent: str) -> list[str]:
    import pyarrow as pa

    if pa.types.is_struct(type_):
        return [f"{indent}struct:", *_yaml_features(list(type_), indent)]
    if pa.types.is_list(type_):
        inner = type_.value_type
        if pa.types.is_struct(inner) or pa.types.is_list(inner):
            raise ValueError(f"no dataset card type for {type_}")
        return [f"{indent}list: {_dtype(inner)}"]
    return [f"{indent}dtype: {_dtype(type_)}"]


def _dtype(type_) -> str:
    import pyarrow as pa

    if pa.types.is_timestamp(type_):
        return f"timestamp[{type_.unit}" + (f", tz={type_.tz}]" if type_.tz else "]")
    names = {pa.string(): "string", pa.int32(): "int32", pa.int64(): "int64", pa.float64(): "float64",
             pa.bool_(): "bool"}
    if type_ not in names:
        raise ValueError(f"no dataset card type for {type_}")
    return names[type_]


def newest_rows_sql(out: str, fmt: str = "parquet") -> str:
    """A DuckDB query of the newest rows of every WARC file in `out`: exact at every moment, also while a run that
    cleaned a changed file again is being published, or where superseded rows are not taken out (a remote output)."""
    reader = "read_parquet" if fmt == "parquet" else "read_json_auto"
    glob = f"{out.rstrip('/')}/run=*/**/*.{'parquet' if fmt == 'parquet' else 'json*'}"
    return (f"SELECT * FROM {reader}('{glob}', hive_partitioning = true, union_by_name = true) "
            "QUALIFY run = max(run) OVER (PARTITION BY warc_file)")


def _data_files(folder: str) -> list[str]:
    out = []
    for root, dirs, names in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith(("_", ".")))
        out += [os.path.join(root, n) for n in sorted(names)
                if not n.startswith(("_", ".")) and n.endswith((".parquet", ".json", ".json.gz", ".json.zst"))]
    return out


def _prune_run(root: str, run_dir: str, by_run: str, uris: set[str]) -> list[dict]:
    """Take the rows of `uris` out of the data files of `run_dir` (a local published run): each file holding some is
    hard-linked into `.superseded/<by_run>/` as it is, then replaced by a copy without them (an atomic rename) or
    removed when none is left. Doing it again does nothing more."""
    done = []
    for path in _data_files(run_dir):
        kept, removed = without_files(path, uris)
        if removed == 0:
            continue
        rel = os.path.relpath(path, root)
        keep = os.path.join(root, SUPERSEDED, by_run, rel + SUPERSEDED_SUFFIX)
        os.makedirs(os.path.dirname(keep), exist_ok=True)
        if os.path.exists(keep):
            os.remove(keep)
        try:
            os.link(path, keep)
        except OSError:
            shutil.copy2(path, keep)
        tmp = os.path.join(os.path.dirname(path), f".{os.path.basename(path)}.{by_run}.prune")
        crc = os.path.join(os.path.dirname(path), f".{os.path.basename(path)}.crc")
        if os.path.exists(crc):  # Hadoop's checksum of the file Spark wrote: Spark refuses the new bytes under it
            os.remove(crc)
        if kept is None:
            os.remove(path)
        else:
            kept(tmp)
            os.replace(tmp, path)  # readers see the old file or the new one, never a part of one
        done.append({"path": rel, "rows_removed": removed, "rows_kept": 0 if kept is None else kept.rows})
    return done


class _Rewrite:
    """Writes the rows left of a data file to a path."""

    def __init__(self, write, rows: int):
        self.write, self.rows = write, rows

    def __call__(self, path: str) -> None:
        self.write(path)


def without_files(path: str, uris: set[str]) -> tuple[_Rewrite | None, int]:
    """(a writer of the rows of `path` whose warc_file is not in `uris`, or None when none is left; rows taken out)."""
    if path.endswith(".parquet"):
        import pyarrow as pa
        import pyarrow.compute as pc
        import pyarrow.parquet as pq

        pf = pq.ParquetFile(path)
        column = pq.read_table(path, columns=["warc_file"]).column("warc_file")
        hits = pc.is_in(column, value_set=pa.array(sorted(uris), pa.string()))
        removed = int(pc.sum(hits).as_py() or 0)
        if removed == 0:
            return None, 0
        if removed == len(column):
            return None, removed
        table = pq.read_table(path).filter(pc.invert(pc.fill_null(hits, False)))
        codec = pf.metadata.row_group(0).column(0).compression.lower() if pf.metadata.num_row_groups else "zstd"

        def write(target: str) -> None:
            pq.write_table(table, target, compression=None if codec == "uncompressed" else codec)
        return _Rewrite(write, table.num_rows), removed
    opener = _json_opener(path)
    with opener(path, "rb") as fh:
        lines = fh.read().splitlines(keepends=True)
    left = [ln for ln in lines if ln.strip() and json.loads(ln).get("warc_file") not in uris]
    removed = sum(1 for ln in lines if ln.strip()) - len(left)
    if removed == 0 or not left:
        return None, removed

    def write_json(target: str) -> None:
        with opener(target, "wb") as out:
            out.write(b"".join(left))
    return _Rewrite(write_json, len(left)), removed


def _json_opener(path: str):
    if path.endswith(".gz"):
        import gzip

        return gzip.open
    if path.endswith(".zst"):
        import zstandard

        return lambda p, mode: zstandard.open(p, mode)
    return open


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
    return name.startswith(".") and (".json." in name or name.endswith(".json.tmp") or name.startswith(".probe-")
                                     or name.startswith(f".{CARD}."))


class PublishError(Exception):
    """The run was not published (nothing of it is visible)."""


class SimulatedCrash(RuntimeError):
    """Raised by the test hook --simulate-crash (the CLI turns it into an immediate exit)."""
