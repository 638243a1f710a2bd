"""The job's output formats: Parquet (the default), or JSON Lines compressed with gzip or zstd.

Spark's JSON writer has gzip but no zstd codec here (Hadoop's needs its native library): for zstd it writes
plain JSON Lines and `finish` compresses each file on the driver, so zstd needs a local output directory
(checked before Spark starts). Both formats hold the same rows and fields (cleaner/output/schema.py), partitioned
into the same Hive directories; the
partition columns (`crawl`, ...) are in the directory names, not in the records, in both. JSON Lines is for
tools that read it (datatrove's JsonlReader, `datasets.load_dataset("json", ...)`, jq): one object a line,
every field present (a null is written as null, not left out), timestamps in ISO 8601 UTC, `label_stats`
a nested object, the list columns arrays.
"""

from __future__ import annotations

import gzip
import io

FORMATS = ("parquet", "jsonl")
JSONL_COMPRESSIONS = ("gzip", "zstd")
# file names Spark gives each format's data files
_SUFFIXES = {"parquet": (".parquet",), "jsonl": (".json.gz", ".json.zst", ".json")}
NAMES = {"parquet": "Parquet", "jsonl": "JSON Lines"}


def write(df, path: str, fmt: str, job: dict, part_cols: list[str]) -> None:
    """Write the rows of `df` to `path` (a directory that must not exist) in `fmt`."""
    writer = df.write.mode("errorifexists")
    if part_cols:
        writer = writer.partitionBy(*part_cols)
    if fmt == "jsonl":
        codec = "none" if job["jsonl_compression"] == "zstd" else job["jsonl_compression"]  # zstd: see finish
        (writer.option("compression", codec)
         .option("ignoreNullFields", "false")  # every field in every line, as the Parquet has them
         .option("timestampFormat", "yyyy-MM-dd'T'HH:mm:ss.SSSSSSXXX")
         .json(path))
    else:
        writer.option("compression", job["compression"]).parquet(path)


def write_jsonl_batches(batches, folder: str, part_cols: list[str], stem: str, compression: str) -> None:
    """`cleaner clean-warc --format jsonl` (jobs/pool.py): the rows of Arrow `batches` as Spark's JSON writer writes
    them (above): one object a line with every field but the partition columns (in the Hive folder names), nulls
    written, timestamps ISO 8601 UTC with microseconds, into `folder/[col=value/]<stem>.json.gz` (gzip) or `.json`
    (zstd: compressed by `finish`, as for Spark)."""
    import json
    import os

    handles: dict[tuple, io.BufferedIOBase] = {}
    suffix = ".json.gz" if compression == "gzip" else ".json"
    try:
        for batch in batches:
            for row in batch.to_pylist():
                key = tuple(row.pop(c) for c in part_cols)
                fh = handles.get(key)
                if fh is None:
                    sub = os.path.join(folder, *(f"{c}={_hive_value(v)}" for c, v in zip(part_cols, key)))
                    os.makedirs(sub, exist_ok=True)
                    path = os.path.join(sub, stem + suffix)
                    fh = handles[key] = gzip.open(path, "wb") if suffix == ".json.gz" else open(path, "wb")
                fh.write(json.dumps(row, default=_json_value, ensure_ascii=False).encode("utf-8") + b"\n")
    finally:
        for fh in handles.values():
            fh.close()


def _json_value(value):
    import datetime

    if isinstance(value, datetime.datetime):  # Spark's timestampFormat above, in UTC
        utc = value.astimezone(datetime.UTC) if value.tzinfo else value
        return utc.strftime("%Y-%m-%dT%H:%M:%S.%f") + "Z"
    if isinstance(value, datetime.date):
        return value.isoformat()
    raise TypeError(f"{type(value).__name__} is not JSON")


def _hive_value(value) -> str:
    import urllib.parse

    return "__HIVE_DEFAULT_PARTITION__" if value is None else urllib.parse.quote(str(value), safe=" -_.")


def needs_local_output(job: dict) -> bool:
    """Whether the output settings can only be written to a local directory (zstd JSON Lines: see finish)."""
    return job["format"] == "jsonl" and job["jsonl_compression"] == "zstd"


def finish(staging_files: list[tuple[str, int]], job: dict) -> list[tuple[str, int]]:
    """The staged data files once complete: for zstd JSON Lines, each plain `.json` file Spark wrote is
    compressed to `.json.zst` beside it (level `compression_level`) and removed. Local paths only."""
    if not needs_local_output(job):
        return staging_files
    import os

    import zstandard

    out = []
    for path, _ in staging_files:
        if not path.endswith(".json"):
            out.append((path, os.path.getsize(path)))
            continue
        target = path + ".zst"
        cctx = zstandard.ZstdCompressor(level=int(job["compression_level"]))
        with open(path, "rb") as src, open(target, "wb") as dst:
            cctx.copy_stream(src, dst)
        os.unlink(path)
        head, name = os.path.split(path)
        crc = os.path.join(head, f".{name}.crc")  # Hadoop's checksum of the plain file, stale now
        if os.path.exists(crc):
            os.unlink(crc)
        out.append((target, os.path.getsize(target)))
    return out


def is_data_file(path: str, fmt: str) -> bool:
    return path.endswith(_SUFFIXES[fmt])


def count_rows(spark, fs, staging: str, files: list[tuple[str, int]], fmt: str) -> int:
    """Rows in the staged files: from the Parquet footers or the JSON lines (local), or with Spark."""
    if fs.kind == "local":
        if fmt == "parquet":
            import pyarrow.parquet as pq

            return sum(pq.ParquetFile(p).metadata.num_rows for p, _ in files)
        return sum(_count_lines(p) for p, _ in files)
    reader = spark.read.parquet if fmt == "parquet" else spark.read.json
    return reader(fs.spark_path(staging)).count()


def _count_lines(path: str) -> int:
    with open(path, "rb") as raw:
        fh: io.BufferedIOBase
        if path.endswith(".gz"):
            fh = gzip.GzipFile(fileobj=raw)
        elif path.endswith(".zst"):
            import zstandard

            fh = io.BufferedReader(zstandard.ZstdDecompressor().stream_reader(raw, read_across_frames=True))
        else:
            fh = raw
        return sum(1 for _ in fh)
