#!/usr/bin/env python
"""What a table format would cost the job: Delta Lake (delta-rs, `deltalake`) and Iceberg (`pyiceberg`, SQL
catalog on SQLite), against the job's own commit (a directory rename + JSON records, jobs/runs.py).

Run it with a Python that has the format installed (neither is a dependency of the project), e.g. in a
scratch venv:

    python3.11 -m venv /tmp/fmt && /tmp/fmt/bin/pip install deltalake 'pyiceberg[sql-sqlite,pyarrow]'
    /tmp/fmt/bin/python scripts/bench_table_formats.py --json /tmp/fmt.json

It reports, for each format installed: the installed size of the package and of what it pulls in beyond
pyarrow (which the project has), the import time (median of 5 fresh interpreters), the median time of an
append commit of `--rows` rows (`--commits` of them), whether two writers appending at once both succeed
(optimistic concurrency), and what a reader that globs plain Parquet files sees after one logical delete
(the files of a table are plain Parquet; the table's state is in its log/metadata).
"""

from __future__ import annotations

import argparse
import importlib.metadata as md
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path


def dist_size(name: str, seen: set[str]) -> int:
    """Bytes installed by distribution `name` and its requirements (not in `seen`, not pyarrow/numpy)."""
    key = name.lower().replace("_", "-")
    if key in seen or key in ("pyarrow", "numpy"):
        return 0
    seen.add(key)
    try:
        dist = md.distribution(name)
    except md.PackageNotFoundError:
        return 0
    total = 0
    for f in dist.files or ():
        try:
            total += os.path.getsize(dist.locate_file(f))
        except OSError:
            pass
    for req in dist.requires or ():
        if "extra ==" in req:
            continue
        dep = req.split(";")[0].split("[")[0]
        for sep in "<>=!~ (":
            dep = dep.split(sep)[0]
        total += dist_size(dep.strip(), seen)
    return total


def import_seconds(module: str, n: int = 5) -> float:
    code = f"import time; t = time.perf_counter(); import {module}; print(time.perf_counter() - t)"
    return statistics.median(float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                                  check=True).stdout) for _ in range(n))


def table(rows: int, start: int = 0):
    import pyarrow as pa

    ids = list(range(start, start + rows))
    return pa.table({"record_id": [f"<urn:uuid:{i:08d}>" for i in ids], "warc_file": ["f.warc.gz"] * rows,
                     "text": ["a paragraph of cleaned text " * 20] * rows})


def parquet_rows(path: Path) -> int:
    import pyarrow.parquet as pq

    return sum(pq.ParquetFile(p).metadata.num_rows for p in path.rglob("*.parquet"))


def bench_delta(tmp: Path, rows: int, commits: int) -> dict:
    from deltalake import DeltaTable, write_deltalake

    path = tmp / "delta"
    times = []
    for i in range(commits):
        t = time.perf_counter()
        write_deltalake(str(path), table(rows, i * rows), mode="append")
        times.append(time.perf_counter() - t)
    errors = []

    def append(k: int) -> None:
        try:
            write_deltalake(str(path), table(rows, 10_000_000 + k * rows), mode="append")
        except Exception as exc:
            errors.append(f"{type(exc).__name__}: {exc}"[:200])

    threads = [threading.Thread(target=append, args=(k,)) for k in range(2)]
    [t.start() for t in threads]
    [t.join() for t in threads]
    dt = DeltaTable(str(path))
    table_rows = dt.to_pyarrow_table().num_rows
    dt.delete("warc_file = 'f.warc.gz' AND record_id < '<urn:uuid:00000010>'")
    after = DeltaTable(str(path)).to_pyarrow_table().num_rows
    return {"commit_s_median": statistics.median(times), "concurrent_appends_ok": 2 - len(errors),
            "concurrent_errors": errors, "rows_via_table": table_rows,
            "rows_via_table_after_delete": after, "rows_via_plain_parquet_glob_after_delete": parquet_rows(path)}


def bench_iceberg(tmp: Path, rows: int, commits: int) -> dict:
    from pyiceberg.catalog.sql import SqlCatalog

    cat = SqlCatalog("bench", uri=f"sqlite:///{tmp}/catalog.db", warehouse=f"file://{tmp}/warehouse")
    cat.create_namespace("ns")
    tbl = cat.create_table("ns.t", schema=table(1).schema)
    times = []
    for i in range(commits):
        t = time.perf_counter()
        tbl.append(table(rows, i * rows))
        times.append(time.perf_counter() - t)
    errors = []

    def append(k: int) -> None:
        try:
            SqlCatalog("bench", uri=f"sqlite:///{tmp}/catalog.db",
                       warehouse=f"file://{tmp}/warehouse").load_table("ns.t").append(table(rows, 10_000_000 + k))
        except Exception as exc:
            errors.append(f"{type(exc).__name__}: {exc}"[:200])

    threads = [threading.Thread(target=append, args=(k,)) for k in range(2)]
    [t.start() for t in threads]
    [t.join() for t in threads]
    tbl = cat.load_table("ns.t")
    table_rows = tbl.scan().to_arrow().num_rows
    tbl.delete("record_id < '<urn:uuid:00000010>'")
    after = cat.load_table("ns.t").scan().to_arrow().num_rows
    return {"commit_s_median": statistics.median(times), "concurrent_appends_ok": 2 - len(errors),
            "concurrent_errors": errors, "rows_via_table": table_rows, "rows_via_table_after_delete": after,
            "rows_via_plain_parquet_glob_after_delete": parquet_rows(tmp / "warehouse")}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=340)
    ap.add_argument("--commits", type=int, default=20)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    report = {"python": sys.version.split()[0]}
    for dist, module, bench in (("deltalake", "deltalake", bench_delta), ("pyiceberg", "pyiceberg", bench_iceberg)):
        try:
            version = md.version(dist)
        except md.PackageNotFoundError:
            continue
        tmp = Path(tempfile.mkdtemp(prefix=f"bench_{dist}-"))
        try:
            extra = "pyiceberg.catalog.sql" if dist == "pyiceberg" else module
            report[dist] = {"version": version, "installed_mb_without_pyarrow": round(dist_size(dist, set()) / 1e6, 1),
                            "import_s_median": round(import_seconds(extra), 3), **bench(tmp, args.rows, args.commits)}
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        print(json.dumps({dist: report[dist]}, indent=1, default=str))
    if args.json:
        args.json.write_text(json.dumps(report, indent=1, default=str) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
