"""The output folder loads as it looks (issue 44): `datasets.load_dataset(OUT)`, `load_dataset("parquet",
data_dir=OUT)`, DuckDB's `'OUT/**/*.parquet'` and `spark.read.parquet(OUT)` each give the current documents, once
each, for the output of `cleaner clean-warc` and of the Spark job, in which one WARC was cleaned twice (it changed
between the runs). Real datasets, real DuckDB, real Spark in local mode, real WARCs built with scripts/make_warc.py.
"""

from __future__ import annotations

import collections
import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from conftest import ROOT, make_warc

os.environ["PYSPARK_PYTHON"] = sys.executable
os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")

from jobs.runs import SUPERSEDED, newest_rows_sql  # noqa: E402

KEY = ("warc_file", "warc_offset", "url")


@pytest.fixture(scope="module")
def spark():
    from pyspark.sql import SparkSession

    session = (SparkSession.builder.master("local[2]").appName("test_loaders")
               .config("spark.driver.host", "127.0.0.1")
               .config("spark.driver.bindAddress", "127.0.0.1")
               .config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false")
               .getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    return session  # stopped by whichever session fixture ends last (getOrCreate: one session per process)


def _versions(data_dir: Path, d: Path) -> tuple[Path, Path, Path]:
    """x.warc.gz in its first version, y.warc.gz, and the pages of x's second version (other pages, other size)."""
    x = make_warc(d / "x.warc.gz", str(data_dir / "cleaneval-final" / "html"), "--limit", "6")
    y = make_warc(d / "y.warc.gz", str(data_dir / "dragnet" / "html"), "--limit", "5")
    return x, y, data_dir / "cleanportaleval" / "html"


def _keys(rows) -> collections.Counter:
    return collections.Counter(tuple(r[k] for k in KEY) for r in rows)


def _current(out: Path) -> collections.Counter:
    """The newest rows of every WARC file, by the shipped view (the docs' query)."""
    import duckdb

    rel = duckdb.sql(newest_rows_sql(str(out)))
    return _keys(dict(zip(rel.columns, row, strict=True)) for row in rel.fetchall())


def _assert_every_reader_sees_the_current_rows(out: Path, spark, cache: Path, x: Path, y: Path, n_x: int,
                                               n_y: int) -> None:
    import datasets
    import duckdb

    expected = _current(out)
    assert sum(expected.values()) == n_x + n_y and max(expected.values()) == 1
    assert {k[0] for k in expected} == {str(x), str(y)}
    assert sum(1 for k in expected if k[0] == str(x)) == n_x  # the second version's rows only
    datasets.disable_progress_bars()
    seen = {
        "load_dataset(OUT)": _keys(datasets.load_dataset(str(out), split="train", cache_dir=str(cache / "a"))),
        "load_dataset(parquet, data_dir=OUT)": _keys(datasets.load_dataset(
            "parquet", data_dir=str(out), split="train", cache_dir=str(cache / "b"))),
        "duckdb OUT/**/*.parquet": _keys(
            dict(zip(KEY, r, strict=True))
            for r in duckdb.sql(f"SELECT {', '.join(KEY)} FROM '{out}/**/*.parquet'").fetchall()),
        "spark.read.parquet(OUT)": _keys(r.asDict() for r in spark.read.parquet(str(out)).select(*KEY).collect()),
    }
    for reader, keys in seen.items():
        assert keys == expected, f"{reader}: {sum(keys.values())} rows, {len(keys)} distinct, {len(expected)} current"


def _second_version(x: Path, pages: Path) -> None:
    before = x.stat().st_size
    make_warc(x, str(pages), "--limit", "7")
    assert x.stat().st_size != before


@pytest.mark.spark
@pytest.mark.xdist_group("spark")
def test_clean_warc_output_loads_as_it_looks_after_a_file_is_cleaned_again(data_dir, spark, tmp_path):
    x, y, pages = _versions(data_dir, tmp_path)
    out = tmp_path / "out"

    def clean_warc(*args):
        done = subprocess.run([sys.executable, "-m", "cleaner.tools.cli", "clean-warc", str(x), str(y), "--out",
                               str(out), *args], capture_output=True, text=True, timeout=600, cwd=ROOT)
        assert done.returncode == 0, done.stderr[-3000:]

    clean_warc("--jobs", "1")  # one task: x and y share a data file, which the second run must rewrite
    first = [p for p in out.rglob("*.parquet")]
    assert len(first) == 1 and set(pq.read_table(first[0]).column("warc_file").to_pylist()) == {str(x), str(y)}
    _second_version(x, pages)
    clean_warc("--jobs", "1", "--skip-done")

    # the older run's data file holds y's rows only now; x's old rows are kept aside where no reader looks
    assert set(pq.read_table(first[0]).column("warc_file").to_pylist()) == {str(y)}
    runs = sorted(out.glob("run=*"))
    marker = json.loads((out / SUPERSEDED / f"{runs[1].name[4:]}.json").read_text())
    assert marker["data_files"] == [{"path": str(first[0].relative_to(out)), "rows_removed": 6, "rows_kept": 5}]
    kept_aside = list((out / SUPERSEDED).rglob("*.superseded"))
    assert len(kept_aside) == 1 and pq.read_table(kept_aside[0]).num_rows == 11
    # run records where no reader looks, the dataset card's YAML, nothing with a `_` name
    assert (out / ".run.json").exists() and (out / ".huggingface.yaml").exists()
    assert not [p for p in out.rglob("_*")]
    _assert_every_reader_sees_the_current_rows(out, spark, tmp_path / "hf", x, y, 7, 5)


@pytest.mark.spark
@pytest.mark.xdist_group("spark")
def test_spark_job_output_loads_as_it_looks_after_a_file_is_cleaned_again(data_dir, spark, tmp_path):
    from jobs.clean_warc import CleanWarcJob

    x, y, pages = _versions(data_dir, tmp_path)
    out = tmp_path / "out"

    def run(*args):
        job = CleanWarcJob(["--input", str(x), str(y), "--output", str(out), *args])
        job.prepare()
        return job.run(spark)

    run()
    assert list(out.glob("run=*/_SUCCESS")) == []  # Spark's marker: `datasets` would read it as a data file
    _second_version(x, pages)
    second = run("--skip-done")
    assert second["supersedes"] == {str(x): sorted(out.glob("run=*"))[0].name[4:]}
    assert (out / SUPERSEDED / f"{second['run_id']}.json").exists()
    _assert_every_reader_sees_the_current_rows(out, spark, tmp_path / "hf", x, y, 7, 5)


def test_an_output_of_the_earlier_layout_is_moved_to_the_new_one(data_dir, tmp_path):
    """`_run.json`, `_runs/`, `_staging/` (the layout `datasets` read as data): the next run moves them."""
    x, y, _ = _versions(data_dir, tmp_path)
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "cleaner.tools.cli", "clean-warc", "--out", str(out), "--jobs", "1"]
    assert subprocess.run([*cmd, str(x)], capture_output=True, timeout=600, cwd=ROOT).returncode == 0
    run = next(out.glob("run=*"))
    (run / ".run.json").rename(run / "_run.json")
    (out / ".runs").rename(out / "_runs")
    (out / ".run.json").rename(out / "_run.json")
    (out / "_staging" / "20200101T000000Z-dead00").mkdir(parents=True)
    done = subprocess.run([*cmd, str(x), str(y), "--skip-done"], capture_output=True, text=True, timeout=600,
                          cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "1 of 2 input files already done" in done.stderr  # the old record still says what is done
    assert not [p for p in out.rglob("_*")]
    assert (run / ".run.json").exists() and len(list((out / ".runs").glob("*.json"))) == 2


def test_a_json_lines_output_whose_first_file_has_a_column_null_throughout_loads_by_its_folder(data_dir, tmp_path):
    """`load_dataset(OUT)` of `clean-warc --format jsonl`: `datasets` types each column by the first file it reads,
    so a column null throughout that file (old pages: no canonical URL) was typed null and the next file's strings
    failed to load (DatasetGenerationError). The dataset card declares the rows' features (the job's schema)."""
    import datasets
    import gzip

    from cleaner.output.schema import SCHEMA

    x = make_warc(tmp_path / "x.warc.gz", str(data_dir / "cleaneval-final" / "html"), "--limit", "40")
    y = make_warc(tmp_path / "y.warc.gz", str(data_dir / "wcxb" / "html"), "--limit", "1")
    out = tmp_path / "out"
    done = subprocess.run([sys.executable, "-m", "cleaner.tools.cli", "clean-warc", str(x), str(y), "--out", str(out),
                           "--format", "jsonl", "--jobs", "2"], capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    files = sorted(out.rglob("*.json.gz"))
    rows = [[json.loads(line) for line in gzip.open(f, "rt")] for f in files]
    # what makes the case: the first file has no canonical_url at all, a later one has one
    assert len(files) == 2 and all(r["canonical_url"] is None for r in rows[0])
    assert any(r["canonical_url"] for r in rows[1])

    datasets.disable_progress_bars()
    loaded = datasets.load_dataset(str(out), split="train", cache_dir=str(tmp_path / "hf"))
    assert loaded.num_rows == 41
    assert loaded.features == datasets.Features.from_arrow_schema(SCHEMA.remove(SCHEMA.get_field_index("crawl")))
    assert sorted(loaded["canonical_url"], key=str) == sorted((r["canonical_url"] for f in rows for r in f), key=str)
    assert _keys(loaded) == _keys(r for f in rows for r in f)
