"""The Spark job (jobs/clean_warc.py): real Spark, real WARCs built with scripts/make_warc.py.

Spark tests are marked `spark` (conftest puts them on one xdist worker) and share one
local[2] session; the tests about the command line run it as a subprocess, and the cluster
test starts a standalone master and worker from the installed pyspark.
"""

from __future__ import annotations

import collections
import contextlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from conftest import ROOT, WARC_DATE, make_warc, two_markups

os.environ["PYSPARK_PYTHON"] = sys.executable
os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
sys.path.insert(0, str(ROOT))

import cleaner  # noqa: E402
from cleaner.api import clean_html  # noqa: E402
from cleaner.config import load_config  # noqa: E402
from cleaner.label.model import load_model, resolve_model_path  # noqa: E402
from cleaner.tools.runtime import gc_thresholds  # noqa: E402
from cleaner.output.schema import SCHEMA  # noqa: E402
from cleaner.warc import WarcFileStats, iter_html_records  # noqa: E402
from jobs import plan, scan  # noqa: E402
from jobs.runs import SimulatedCrash  # noqa: E402
from jobs.storage import InputFile, RangeReader  # noqa: E402

JOB = ROOT / "jobs" / "clean_warc.py"
DATE = WARC_DATE
KEY = ("warc_file", "warc_offset", "record_id")


# ------------------------------------------------------------------------------------------
# Fixtures
# ------------------------------------------------------------------------------------------

@pytest.fixture(scope="session")
def warcs(tmp_path_factory, data_dir) -> dict[str, Path]:
    """Four small WARCs (57 pages in all) built from the shared pages with make_warc."""
    d = tmp_path_factory.mktemp("warcs")
    dev = data_dir / "cleaneval-dev" / "html"
    dev_pages = sorted(dev.glob("*.html"), key=lambda p: int(p.stem))
    part_a = d / "pages_a"
    part_a.mkdir()
    for p in dev_pages[:20]:
        shutil.copy(p, part_a / p.name)
    part_d = d / "pages_d"
    part_d.mkdir()
    for p in dev_pages[20:32]:
        shutil.copy(p, part_d / p.name)
    return {
        "a": make_warc(d / "a.warc.gz", str(part_a), "--with-requests"),
        "b": make_warc(d / "b.warc.gz", str(data_dir / "dragnet" / "html"), "--limit", "15"),
        "c": make_warc(d / "c.warc", str(data_dir / "cleanportaleval" / "html"), "--limit", "10",
                        "--no-gzip", "--with-requests"),
        "d": make_warc(d / "d.warc.gz", str(part_d)),
    }


@pytest.fixture(scope="session")
def model_and_config(small_model):
    return load_model(small_model), load_config()


@pytest.fixture(scope="session")
def spark():
    from pyspark.sql import SparkSession

    session = (SparkSession.builder.master("local[2]").appName("test_job")
               .config("spark.driver.host", "127.0.0.1")
               .config("spark.driver.bindAddress", "127.0.0.1")
               .config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false")
               .getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.fixture(scope="session")
def split_conf(tmp_path_factory) -> Path:
    """Tiny task targets, so that even these small WARCs are cut into record ranges."""
    p = tmp_path_factory.mktemp("conf") / "split.toml"
    p.write_text("[job]\nmin_task_bytes = 1\ntasks_per_core = 3\n")
    return p


def run_job(spark, *args) -> dict:
    from jobs.clean_warc import CleanWarcJob

    job = CleanWarcJob([str(a) for a in args])
    job.prepare()
    return job.run(spark)


def read_rows(out: Path) -> list[dict]:
    """Every published row (pyarrow skips .staging and .runs; partition columns come back)."""
    table = pq.read_table(out)
    return table.to_pylist()


def direct_records(path: Path) -> tuple[list, WarcFileStats]:
    stats = WarcFileStats()
    with open(path, "rb") as fh:
        recs = list(iter_html_records(fh, str(path), stats))
    return recs, stats


def assert_accounted(record: dict) -> None:
    for uri, f in record["files"].items():
        n_rej, n_skip = sum(f["rejected"].values()), sum(f["skipped"].values())
        assert f["cleaned"] + n_rej + n_skip == f["records_read"], uri
        assert f["cleaned"] + n_rej == f["html_records"], uri
        assert f["accounted"], uri
    t = record["totals"]
    assert t["cleaned"] + sum(t["rejected"].values()) == t["html_records"] == \
        record["output"]["rows_written"]
    # every cleaned record is counted in one band of expected word F1, per file and in total
    assert sum(t["expected_f1"].values()) == t["cleaned"]
    assert all(sum(f["expected_f1"].values()) == f["cleaned"] for f in record["files"].values())
    assert t["html_records"] + sum(t["skipped"].values()) == t["records_read"]


# ------------------------------------------------------------------------------------------
# Pure Python parts: offset scan, record ranges, planner
# ------------------------------------------------------------------------------------------

def _read_range(path: Path, start: int, end: int | None):
    stats = WarcFileStats()
    fh = RangeReader(open(path, "rb"), start, end) if (start or end is not None) else open(path, "rb")
    with fh:
        return [(r.offset, r.record_id) for r in iter_html_records(fh, str(path), stats)], stats


@pytest.mark.parametrize("name", ["a", "c"])
def test_record_ranges_partition_a_file_exactly(warcs, name):
    path = warcs[name]
    size = path.stat().st_size
    with open(path, "rb") as fh:
        offsets = scan.record_offsets(fh, size, path.suffix == ".gz")
    assert offsets and offsets[0] == 0
    whole, whole_stats = _read_range(path, 0, None)
    for pieces in (2, 3, 7):
        cuts = scan.cut_points(offsets, size, pieces)
        assert cuts[0] == 0 and cuts[-1] == size and cuts == sorted(set(cuts))
        assert set(cuts[1:-1]) <= set(offsets)
        got, read = [], collections.Counter()
        for start, end in zip(cuts, cuts[1:]):
            recs, st = _read_range(path, start, end)
            assert st.accounted and not st.errors
            got += recs
            read["records"] += st.records_read
            for k, v in st.skipped.items():
                read[k] += v
        assert got == whole  # same records, same absolute offsets, same order
        assert read["records"] == whole_stats.records_read
        assert {k: read[k] for k in whole_stats.skipped} == whole_stats.skipped


def test_scan_refuses_files_it_cannot_cut(data_dir):
    warc = data_dir / "warc"
    for name in ("example-trunc.warc", "example-bad.warc.gz.bad", "example.arc.gz", "bad.arc"):
        p = warc / name
        with open(p, "rb") as fh:
            assert scan.record_offsets(fh, p.stat().st_size, ".gz" in name) is None, name
    from warcio.archiveiterator import ArchiveIterator

    for name in ("example.warc.gz", "example.warc", "example-resource.warc.gz"):
        p = warc / name
        with open(p, "rb") as fh:
            it = ArchiveIterator(fh)
            expected = [it.get_record_offset() for _ in it]
        with open(p, "rb") as fh:
            assert scan.record_offsets(fh, p.stat().st_size, ".gz" in name) == expected, name


def test_planner_packs_small_files_and_splits_big_ones():
    files = [InputFile("/w/big.warc.gz", 900)] + [InputFile(f"/w/s{i}.warc.gz", 50) for i in range(6)]
    settings = plan.PlanSettings(min_task_bytes=1, tasks_per_core=2)
    target = plan.piece_target(files, 2, settings)
    assert target == pytest.approx(1200 / 4)
    assert [f.uri for f in plan.split_candidates(files, target, settings)] == ["/w/big.warc.gz"]
    cuts = {"/w/big.warc.gz": [0, 300, 600, 900]}
    pieces = plan.make_pieces(files, {}, target, settings, cuts)
    assert len(pieces) == 3 + 6
    tasks = plan.pack(pieces, target, 2, settings)
    loads = [sum(p["cost"] for p in t) for t in tasks]
    assert len(tasks) == 4 and max(loads) == 300 and sum(loads) == 1200
    assert sorted(p["key"] for t in tasks for p in t) == sorted(p["key"] for p in pieces)
    # without splitting, the big file is one task and bounds the run
    packed = plan.PlanSettings(mode="packed", min_task_bytes=1, tasks_per_core=2)
    assert plan.split_candidates(files, target, packed) == []
    tasks = plan.pack(plan.make_pieces(files, {}, target, packed), target, 2, packed)
    assert max(sum(p["cost"] for p in t) for t in tasks) == 900
    # one task per file
    per_file = plan.PlanSettings(mode="files")
    assert len(plan.pack(plan.make_pieces(files, {}, target, per_file), target, 2, per_file)) == 7
    # uncompressed bytes weigh less
    assert plan.file_cost(InputFile("/w/x.warc", 1000), settings) == pytest.approx(300)


# ------------------------------------------------------------------------------------------
# (e) fail fast, before Spark starts
# ------------------------------------------------------------------------------------------

def _cli(*args, timeout=120, env=None):
    e = dict(os.environ, PYSPARK_PYTHON=sys.executable, SPARK_LOCAL_IP="127.0.0.1")
    e.update(env or {})
    return subprocess.run([sys.executable, str(JOB), *map(str, args)], capture_output=True,
                          text=True, timeout=timeout, env=e, cwd=ROOT)


def test_a_packaged_model_by_name_from_any_folder(warcs, tmp_path, monkeypatch):
    from cleaner.label.model import DEFAULT_MODEL_PATH
    from jobs.clean_warc import CleanWarcJob

    monkeypatch.chdir(tmp_path)  # not the checkout: the name is not a path here
    job = CleanWarcJob(["--input", str(warcs["a"]), "--output", str(tmp_path / "o"), "--model", "cleaneval-2012"])
    job.prepare()
    packaged = DEFAULT_MODEL_PATH.with_name("cleaneval-2012.crfsuite").resolve()
    assert job.serving.path.resolve() == packaged  # what .run.json records
    assert job.model.hash == load_model(packaged).hash


def test_fails_fast_naming_the_bad_input_model_or_config(tmp_path, warcs, small_model):
    out = tmp_path / "out"
    bad_model = tmp_path / "broken.crfsuite"
    bad_model.write_bytes(b"not a model")
    (tmp_path / "broken.crfsuite.json").write_text("{}")
    bad_conf = tmp_path / "bad.toml"
    bad_conf.write_text("[limits\nmax_html_bytes = 1\n")
    bad_job = tmp_path / "badjob.toml"
    bad_job.write_text('[job]\npartition_by = ["host"]\n')
    conv_conf = tmp_path / "conv.toml"  # a convention, but the model was trained without conventions
    conv_conf.write_text('[model]\nconvention = "opinion"\n')
    empty_dir = tmp_path / "emptydir"
    empty_dir.mkdir()
    (empty_dir / "notes.txt").write_text("not a WARC")
    listing = tmp_path / "list.txt"
    listing.write_text(f"# inputs\n{warcs['a']}\n{tmp_path / 'gone.warc.gz'}\n")
    cases = [
        (["--input", tmp_path / "missing.warc.gz", "--model", small_model], 3, "missing.warc.gz"),
        (["--input", str(tmp_path / "nothing-*.warc.gz"), "--model", small_model], 3, "nothing-*"),
        (["--input-list", listing, "--model", small_model], 3, "gone.warc.gz"),
        (["--input-list", tmp_path / "nolist.txt", "--model", small_model], 3, "nolist.txt"),
        (["--input", empty_dir, "--model", small_model], 3, "emptydir"),
        (["--input", warcs["a"], "--model", tmp_path / "absent.crfsuite"], 4, "absent.crfsuite"),
        (["--input", warcs["a"], "--model", bad_model], 4, "broken.crfsuite"),
        (["--input", warcs["a"], "--model", small_model, "--conf", bad_conf], 4, "bad.toml"),
        (["--input", warcs["a"], "--model", small_model, "--conf", bad_job], 4, "partition_by"),
        (["--input", warcs["a"], "--model", small_model, "--conf", conv_conf], 4, "not trained with annotation conventions"),
        (["--input", warcs["a"], "--model", small_model, "--convention", "main"], 4,
         "not trained with annotation conventions"),
        (["--input", warcs["a"], "--convention", "opinion"], 4, "unknown convention 'opinion'"),
    ]
    for args, code, name in cases:
        t = time.perf_counter()
        r = _cli(*args, "--output", out)
        assert r.returncode == code, (args, r.returncode, r.stderr[-2000:])
        assert name in r.stderr, (name, r.stderr[-2000:])
        assert "SparkContext" not in r.stderr and "log4j" not in r.stderr  # no JVM was started
        assert time.perf_counter() - t < 60
        assert not out.exists()
    r = _cli("--output", out, "--model", small_model)
    assert r.returncode == 2 and "no input" in r.stderr


# ------------------------------------------------------------------------------------------
# (a) local mode: counts reconcile, every row equals clean_html on the same page
# ------------------------------------------------------------------------------------------

@pytest.mark.spark
@pytest.mark.xdist_group("spark")
def test_local_run_matches_clean_html(spark, warcs, small_model, split_conf, model_and_config,
                                      tmp_path):
    out = tmp_path / "out"
    inputs = [warcs["a"], warcs["b"], warcs["c"]]
    record = run_job(spark, "--input", *inputs, "--output", out, "--model", small_model,
                     "--conf", split_conf, "--crawl", "testcrawl")
    run_json = json.loads((out / ".run.json").read_text())
    assert run_json == json.loads(json.dumps(record, default=str))
    assert (out / f"run={record['run_id']}" / ".run.json").exists()
    assert (out / ".runs" / f"{record['run_id']}.json").exists()
    assert not list((out / ".staging").glob("*"))
    assert_accounted(record)
    assert record["distribution"]["split_files"] >= 1  # record ranges were exercised
    assert record["distribution"]["tasks"] >= 3
    assert record["model"]["hash"] == model_and_config[0].hash
    assert set(record["inputs"]) == {str(p) for p in inputs}
    thresholds = list(gc_thresholds(model_and_config[1]))
    for w in record["workers"].values():  # the model is opened once per Python worker
        assert w["model_loads"] == 1
        assert w["gc_thresholds"] == thresholds  # and the worker cleans with the collector tuned
        assert w["native"] == cleaner.NATIVE_STATUS  # and with the compiled stages the driver has

    rows = read_rows(out)
    assert len(rows) == record["output"]["rows_written"] == record["totals"]["html_records"]
    assert len({tuple(r[k] for k in KEY) for r in rows}) == len(rows)  # no duplicates
    by_key = {tuple(r[k] for k in KEY): r for r in rows}
    model, config = model_and_config
    n = 0
    for path in inputs:
        recs, stats = direct_records(path)
        f = record["files"][os.path.realpath(path)]  # inputs are recorded by their real path
        assert f["records_read"] == stats.records_read and f["skipped"] == stats.skipped
        assert f["html_records"] == len(recs) and f["status"] == "done"
        per_status = collections.Counter()
        for rec in recs:
            row = by_key[(str(path), rec.offset, rec.record_id)]
            res = clean_html(rec.payload, http_charset=rec.http_charset, model=model, config=config)
            assert row["cleaneval"] == res.cleaneval and row["text"] == res.plain
            assert (row["status"], row["reason"]) == (res.status, res.reason)
            assert row["n_blocks"] == res.n_blocks and row["encoding"] == res.encoding
            assert row["url"] == rec.url and row["crawl"] == "testcrawl"
            assert row["run"] == record["run_id"]
            assert row["model_hash"] == model.hash
            if res.stats is not None:
                assert row["label_stats"]["other"]["words"] == res.stats.per_label["other"].words
                assert row["kept_word_share"] == pytest.approx(res.stats.kept_word_share)
            per_status[row["status"] if row["status"] == "cleaned" else row["reason"]] += 1
            n += 1
        assert per_status["cleaned"] == f["cleaned"]
        assert {k: v for k, v in per_status.items() if k != "cleaned"} == f["rejected"]
    assert n == len(rows)

    # the Parquet files carry the schema of cleaner/output/schema.py (partition column in the path)
    files = sorted(out.glob("run=*/crawl=testcrawl/*.parquet"))
    assert files and all(".zstd." in p.name for p in files)
    written = pq.read_schema(files[0])
    expected = [f for f in SCHEMA if f.name != "crawl"]
    assert written.names == [f.name for f in expected]
    for f in expected:
        assert written.field(f.name).type == f.type, f.name
    assert pq.ParquetFile(files[0]).metadata.row_group(0).column(0).compression == "ZSTD"


# ------------------------------------------------------------------------------------------
# (b) the damaged sample WARCs: the job carries on, errors with file and offset
# ------------------------------------------------------------------------------------------

@pytest.mark.spark
@pytest.mark.xdist_group("spark")
def test_damaged_warcs_are_recorded_not_fatal(spark, data_dir, small_model, tmp_path):
    out = tmp_path / "out"
    inputs = sorted((data_dir / "warc").iterdir())
    record = run_job(spark, "--input", *inputs, "--output", out, "--model", small_model,
                     "--partition-by", "")
    assert_accounted(record)
    assert len(record["files"]) == len(inputs)
    damaged = 0
    for path in inputs:
        recs, stats = direct_records(path)
        f = record["files"][str(path.resolve())]  # a file's identity is its real path (a symlinked data folder)
        # example-space-in-url.arc ends 12 bytes short of its last record: incomplete at that record
        assert f["status"] == ("incomplete" if path.name == "example-space-in-url.arc" else "done"), path
        assert f["records_read"] == stats.records_read and f["html_records"] == len(recs)
        assert f["skipped"] == stats.skipped
        assert [e["offset"] for e in f["errors"]] == [e["offset"] for e in stats.errors]
        damaged += bool(stats.errors)
    assert damaged >= 3
    assert record["totals"]["damaged_files"] == damaged
    assert record["errors"] and all(set(e) >= {"file", "offset", "error"} for e in record["errors"])
    trunc = [e for e in record["errors"] if e["file"].endswith("example-trunc.warc")]
    assert trunc and trunc[0]["offset"] == 1197
    rows = read_rows(out)
    assert len(rows) == record["totals"]["html_records"] > 0
    assert {r["warc_file"] for r in rows} <= {os.path.realpath(p) for p in inputs}


# ------------------------------------------------------------------------------------------
# (c) --skip-done and crashes: every record exactly once
# ------------------------------------------------------------------------------------------

def _published_ids(out: Path) -> list[str]:
    return sorted(p.name[4:] for p in out.glob("run=*"))


@pytest.mark.spark
@pytest.mark.xdist_group("spark")
def test_skip_done_and_crash_recovery_leave_every_record_once(spark, warcs, small_model, tmp_path):
    from jobs.clean_warc import JobError

    out = tmp_path / "out"
    a, b, d = warcs["a"], warcs["b"], warcs["d"]
    common = ["--output", out, "--model", small_model, "--partition-by", "fetch_day"]
    r1 = run_job(spark, "--input", a, *common)
    assert set(r1["files"]) == {str(a)}

    with pytest.raises(JobError) as err:  # the output holds runs: refuse to add duplicates
        run_job(spark, "--input", a, b, *common)
    assert err.value.code == 5 and "--skip-done" in str(err.value)

    r2 = run_job(spark, "--input", a, b, *common, "--skip-done")
    assert set(r2["files"]) == {str(b)} and set(r2["skipped_done"]) == {str(a)}

    with pytest.raises(JobError) as err:  # a different directory layout would break readers
        run_job(spark, "--input", d, "--output", out, "--model", small_model, "--skip-done")
    assert err.value.code == 5 and "partitioned by fetch_day" in str(err.value)

    # crash after staging, before the publishing rename: nothing of d is visible
    with pytest.raises(SimulatedCrash):
        run_job(spark, "--input", a, b, d, *common, "--skip-done", "--simulate-crash", "before_publish")
    staged = list((out / ".staging").iterdir())
    assert len(staged) == 1 and list(staged[0].rglob("*.parquet"))
    assert len(_published_ids(out)) == 2
    assert {r["warc_file"] for r in read_rows(out)} == {str(a), str(b)}

    # re-run: the staged run is discarded, d is processed; crash right after the rename
    with pytest.raises(SimulatedCrash):
        run_job(spark, "--input", a, b, d, *common, "--skip-done", "--simulate-crash", "after_publish")
    assert not list((out / ".staging").iterdir())
    ids = _published_ids(out)
    assert len(ids) == 3 and not (out / ".runs" / f"{ids[-1]}.json").exists()

    # re-run: d is already done (its run was published); the index is rolled forward
    r4 = run_job(spark, "--input", a, b, d, *common, "--skip-done")
    assert r4["status"] == "nothing_to_do" and set(r4["skipped_done"]) == {str(a), str(b), str(d)}
    assert sorted(p.stem for p in (out / ".runs").glob("*.json")) == ids
    assert json.loads((out / ".run.json").read_text())["run_id"] == ids[-1]

    rows = read_rows(out)
    keys = collections.Counter(tuple(r[k] for k in KEY) for r in rows)
    assert max(keys.values()) == 1  # no duplicates
    expected = set()
    for path in (a, b, d):
        expected |= {(str(path), r.offset, r.record_id) for r in direct_records(path)[0]}
    assert set(keys) == expected  # no gaps
    assert {r["fetch_day"] for r in rows} == {DATE[:10]}


# ------------------------------------------------------------------------------------------
# Hadoop FileSystem paths (what hdfs:// and s3a:// use), exercised on file:// URIs
# ------------------------------------------------------------------------------------------

@pytest.mark.spark
@pytest.mark.xdist_group("spark")
def test_hadoop_filesystem_backends(spark, warcs, tmp_path):
    from jobs import inputs, storage
    from jobs.runs import OutputDir

    listed, _ = inputs.resolve_jvm(spark, [f"file://{warcs['a'].parent}/*.warc.gz"])
    assert sorted(Path(f.uri[len("file:"):]).name for f in listed) == ["a.warc.gz", "b.warc.gz", "d.warc.gz"]
    assert all(f.size == Path(f.uri[len("file:"):]).stat().st_size for f in listed)
    with pytest.raises(storage.InputError, match="nope"):
        inputs.resolve_jvm(spark, [f"file://{tmp_path}/nope/*.warc.gz"])

    with storage._remote_open(f"file://{warcs['a']}", seekable=True) as fh:  # pyarrow.fs path
        assert fh.read(2) == b"\x1f\x8b"

    root = f"file://{tmp_path}/hout"
    fs = storage.HadoopFS(spark, root)
    out = OutputDir(fs, root)
    fs.mkdirs(out.staging_dir("r1"))
    fs.write_text(fs.join(out.staging_dir("r1"), "part-0.parquet"), "x")
    assert out.recover() == {} and fs.listdir(fs.join(root, ".staging")) == []
    fs.mkdirs(out.staging_dir("r2"))
    fs.write_text(fs.join(out.staging_dir("r2"), "part-0.parquet"), "data")
    record = {"run_id": "r2", "files": {"/w/x.warc.gz": {"status": "done"}}}
    out.publish("r2", record)
    assert out.published_ids() == ["r2"] and out.is_ours()
    assert json.loads(fs.read_text(fs.join(root, ".run.json")))["run_id"] == "r2"
    assert [Path(p).name for p, n in fs.files(root)] == ["part-0.parquet"]
    assert out.recover()["r2"] == record
    out.clear()
    assert out.published_ids() == []


# ------------------------------------------------------------------------------------------
# (d) the README's DuckDB queries on a real job output
# ------------------------------------------------------------------------------------------

def readme_duckdb_queries() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Querying the output", 1)[1]
    duck = section.split("### DuckDB", 1)[1].split("\n## ", 1)[0]
    return [q.strip() for q in re.findall(r"```sql\n(.*?)```", duck, re.S)]


@pytest.mark.spark
@pytest.mark.xdist_group("spark")
def test_readme_duckdb_queries_run_on_job_output(spark, warcs, small_model, tmp_path):
    import duckdb

    out = tmp_path / "out"
    record = run_job(spark, "--input", warcs["b"], warcs["d"], "--output", out, "--model",
                     small_model, "--partition-by", "crawl,fetch_month")
    queries = readme_duckdb_queries()
    assert len(queries) >= 2
    con = duckdb.connect()
    for q in queries:
        sql = q.replace("'out/", f"'{out}/")
        assert str(out) in sql, q
        result = con.execute(sql).fetchall()
        assert result, q
        cols = [c[0] for c in con.description]
        if "docs" in cols:
            assert sum(r[cols.index("docs")] for r in result) == record["totals"]["html_records"]


# ------------------------------------------------------------------------------------------
# The command line (a crash by "kill" and a re-run), and (f) the cluster test
# ------------------------------------------------------------------------------------------

def _sorted_rows(out: Path) -> list[dict]:
    rows = read_rows(out)
    for r in rows:
        r.pop("processing_ms")
        r.pop("run")
    return sorted(rows, key=lambda r: tuple(r[k] for k in KEY))


@pytest.fixture(scope="session")
def cli_output(tmp_path_factory, warcs, small_model, spark) -> Path:
    """Local-mode output of a/c, after `python jobs/clean_warc.py` died right after staging
    (the process exits at once, as if killed) and the job was run again."""
    from jobs.clean_warc import main

    out = tmp_path_factory.mktemp("cli") / "out"
    args = ["--input", warcs["a"], warcs["c"], "--output", out, "--model", small_model,
            "--crawl", "cli"]
    crashed = _cli(*args, "--master", "local[2]", "--simulate-crash", "before_publish",
                   timeout=300)
    assert crashed.returncode == 70, crashed.stderr[-3000:]
    assert "simulated crash before_publish" in crashed.stderr
    assert re.search(r"WARC \d/2 done: a\.warc\.gz: \d+ records, \d+ cleaned, \d+ rejected",
                     crashed.stderr)
    assert list((out / ".staging").iterdir()) and not list(out.glob("run=*"))
    # the re-run (in-process, on the test session, to save a JVM start)
    assert main([str(a) for a in args], spark=spark) == 0
    assert not list((out / ".staging").iterdir())
    return out


@pytest.mark.spark
@pytest.mark.xdist_group("spark")
def test_summary_table(spark, warcs, small_model, tmp_path, capsys):
    from jobs.clean_warc import main

    assert main(["--input", str(warcs["d"]), "--output", str(tmp_path / "o"),
                 "--model", str(small_model)], spark=spark) == 0
    text = capsys.readouterr().out
    assert re.search(r"^d\.warc\.gz +13 +12 +\d+ +\d+ +1 +0 ", text, re.M), text
    assert "TOTAL" in text and "rows written: 12 in 1 Parquet files" in text
    assert main(["--input", str(warcs["d"]), "--output", str(tmp_path / "o"),
                 "--model", str(small_model)], spark=spark) == 5  # already published
    assert "truncated:" not in text
    # pages over [limits] max_blocks are cleaned up to it: the summary and .run.json say how many
    conf = tmp_path / "limit.toml"
    conf.write_text("[limits]\nmax_blocks = 60\n")
    assert main(["--input", str(warcs["d"]), "--output", str(tmp_path / "t"), "--model", str(small_model),
                 "--conf", str(conf)], spark=spark) == 0
    text = capsys.readouterr().out
    cut = sum(r["blocks_truncated"] for r in read_rows(tmp_path / "t"))
    assert 0 < cut < 12
    assert f"truncated: {cut} pages had more than 60 blocks ([limits] max_blocks)" in text, text
    run = json.loads((tmp_path / "t/.run.json").read_text())
    assert run["totals"]["blocks_truncated"] == cut
    assert sum(f["blocks_truncated"] for f in run["files"].values()) == cut


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_port(port: int, proc, timeout: float = 90) -> None:
    end = time.time() + timeout
    while time.time() < end:
        if proc.poll() is not None:
            raise RuntimeError(f"daemon exited with {proc.returncode}")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.5)
    raise TimeoutError(f"nothing listens on port {port}")


def _stop(proc) -> None:
    if proc is None or proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=20)
    except Exception:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait(timeout=10)


@contextlib.contextmanager
def standalone_cluster(spark_home: Path, env: dict, work: Path, logs: Path):
    """A Spark standalone master and one 2-core worker on 127.0.0.1, stopped on exit;
    yields (master URL, worker process)."""
    port = _free_port()
    master = worker = None
    try:
        master = subprocess.Popen(
            [str(spark_home / "bin" / "spark-class"), "org.apache.spark.deploy.master.Master",
             "--host", "127.0.0.1", "--port", str(port), "--webui-port", str(_free_port())],
            env=env, stdout=open(logs / "master.log", "wb"), stderr=subprocess.STDOUT,
            start_new_session=True)
        _wait_port(port, master)
        url = f"spark://127.0.0.1:{port}"
        worker = subprocess.Popen(
            [str(spark_home / "bin" / "spark-class"), "org.apache.spark.deploy.worker.Worker",
             "--host", "127.0.0.1", "--cores", "2", "--memory", "2g",
             "--webui-port", str(_free_port()), "--work-dir", str(work), url],
            env=env, stdout=open(logs / "worker.log", "wb"), stderr=subprocess.STDOUT,
            start_new_session=True)
        yield url, worker
    finally:
        _stop(worker)
        _stop(master)


def submit_command(spark_home: Path, url: str) -> list[str]:
    """spark-submit to the standalone master, with the settings every cluster test uses."""
    return [str(spark_home / "bin" / "spark-submit"), "--master", url,
            "--conf", "spark.driver.host=127.0.0.1", "--conf", "spark.executor.memory=1g",
            "--conf", "spark.ui.enabled=false", "--conf", f"spark.pyspark.python={sys.executable}"]


@pytest.mark.spark
@pytest.mark.xdist_group("spark")
def test_standalone_cluster_output_equals_local_output(tmp_path, warcs, small_model, cli_output):
    """(One test with the CLI checks, so that the CLI fixture is built once even when xdist
    spreads Spark tests over workers.)"""
    import pyspark

    # the local-mode output, after the crash and the re-run
    local = json.loads((cli_output / ".run.json").read_text())
    assert_accounted(local)
    assert local["spark"]["master"] == "local[2]"
    local_rows = read_rows(cli_output)
    assert len(local_rows) == local["output"]["rows_written"]
    expected = set()
    for path in (warcs["a"], warcs["c"]):
        expected |= {(str(path), r.offset, r.record_id) for r in direct_records(path)[0]}
    assert {tuple(r[k] for k in KEY) for r in local_rows} == expected
    assert len(local_rows) == len(expected)

    spark_home = Path(pyspark.__file__).parent
    env = dict(os.environ, SPARK_HOME=str(spark_home), SPARK_LOCAL_IP="127.0.0.1",
               PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable,
               SPARK_LOG_DIR=str(tmp_path / "logs"), SPARK_WORKER_DIR=str(tmp_path / "work"))
    logs = tmp_path / "logs"
    logs.mkdir()
    with standalone_cluster(spark_home, env, tmp_path / "work", logs) as (url, _worker):
        out = tmp_path / "out"
        submit = subprocess.run(
            submit_command(spark_home, url)
            + [str(JOB), "--input", str(warcs["a"]), str(warcs["c"]), "--output", str(out),
               "--model", str(small_model), "--crawl", "cli", "--no-progress"],
            env=env, capture_output=True, text=True, timeout=300, cwd=tmp_path)
        assert submit.returncode == 0, submit.stderr[-4000:] + (logs / "worker.log").read_text()[-2000:]
        record = json.loads((out / ".run.json").read_text())
        assert record["spark"]["master"] == url
        assert_accounted(record)
        assert record["totals"] == local["totals"]
        assert _sorted_rows(out) == _sorted_rows(cli_output)


def test_cleaned_records_are_counted_by_band_of_expected_f1():
    from jobs.outcomes import by_band, expected_f1_band

    assert [expected_f1_band(x) for x in (1.0, 0.9, 0.85, 0.8, 0.5, 0.49, 0.0, None)] == \
        ["0.9-1", "0.9-1", "0.8-0.9", "0.8-0.9", "0.5-0.8", "0-0.5", "0-0.5", "none"]
    assert list(by_band({"none": 1, "0-0.5": 2, "0.9-1": 5, "0.5-0.8": 0})) == ["0.9-1", "0-0.5", "none"]


# ------------------------------------------------------------------------------------------
# (e) inputs as Common Crawl users give them; settings and systematic failures (issue 30)
# ------------------------------------------------------------------------------------------

def test_path_lists_gzip_and_base_prefix(tmp_path, warcs):
    import gzip

    from jobs import inputs
    from jobs.storage import InputError

    listing = tmp_path / "warc.paths.gz"
    listing.write_bytes(gzip.compress(b"# a Common Crawl path list\ncrawl-data/a.warc.gz\n\n/abs/b.warc.gz\n"
                                      b"s3://other/c.warc.gz\n"))
    assert inputs.read_input_list(str(listing)) == ["crawl-data/a.warc.gz", "/abs/b.warc.gz", "s3://other/c.warc.gz"]
    expected = {
        "s3://commoncrawl/": "s3://commoncrawl/crawl-data/a.warc.gz",
        "https://data.commoncrawl.org": "https://data.commoncrawl.org/crawl-data/a.warc.gz",
        "file:///mirror/": "file:///mirror/crawl-data/a.warc.gz",
        "/mirror": "/mirror/crawl-data/a.warc.gz",
    }
    for base, first in expected.items():  # relative entries joined; absolute paths and URIs left alone
        assert inputs.read_input_list(f"file://{listing}", base) == [first, "/abs/b.warc.gz", "s3://other/c.warc.gz"]
    junk = tmp_path / "junk.paths"
    junk.write_bytes(b"\x8b\xff\x00 not text")
    with pytest.raises(InputError, match="not UTF-8"):
        inputs.read_input_list(str(junk))


def test_settings_lists_and_usage_are_checked_before_spark(tmp_path, warcs, small_model):
    """A bad [section] or key, a wrong type, a list that is not text: one line naming it, no JVM."""
    out = tmp_path / "out"
    lots = tmp_path / "lots.toml"
    lots.write_text('[limits]\nmax_blocks = "lots"\n')
    limitz = tmp_path / "limitz.toml"
    limitz.write_text("[limitz]\nmax_blocks = 3\n")
    junk = tmp_path / "junk.paths"
    junk.write_bytes(b"\x8b\xff\x00 not text")
    cases = [
        (["--input", warcs["a"], "--conf", lots], 4, f"{lots}: [limits] max_blocks must be an integer"),
        (["--input", warcs["a"], "--conf", limitz], 4, f"{limitz}: unknown section [limitz]"),
        (["--input", warcs["a"], "--partition-by", "host"], 2, "--partition-by: unknown column(s) host"),
        (["--input-list", junk], 3, "is not UTF-8 text"),
        (["--input", warcs["a"], "--input-base", tmp_path], 2, "--input-base prefixes the entries of --input-list"),
    ]
    for args, code, message in cases:
        r = _cli(*args, "--model", small_model, "--output", out)
        assert r.returncode == code, (args, r.returncode, r.stderr[-2000:])
        assert message in r.stderr and "default.toml" not in r.stderr, (message, r.stderr[-2000:])
        assert "Traceback" not in r.stderr and "SparkContext" not in r.stderr
        assert not out.exists()


@pytest.mark.spark
@pytest.mark.xdist_group("spark")
def test_directory_zstd_and_path_list_inputs(spark, warcs, small_model, tmp_path, capsys):
    """A directory as Common Crawl mirrors hold them: every path left out is listed with its reason,
    a .warc.zst (dictionary frame) is cleaned, one whose dictionary is missing is failed, not done;
    a gzip path list with --input-base then retries only that one (--skip-done)."""
    import gzip

    from jobs.clean_warc import CleanWarcJob, main
    from zstd_warc import write_zstd_warc

    d = tmp_path / "crawl"
    (d / "_old").mkdir(parents=True)
    (d / "sub").mkdir()
    shutil.copy(warcs["a"], d / "a.warc.gz")
    shutil.copy(warcs["d"], d / "_old" / "a.warc.gz")
    write_zstd_warc(warcs["c"], d / "x.warc.zst")
    write_zstd_warc(warcs["c"], d / "nodict.warc.zst", with_dict_frame=False)
    part = d / "sub" / "CC-MAIN-20240301-00001.warc.gz.part"
    shutil.copy(warcs["d"], part)
    (d / "notes.txt").write_text("not a WARC")
    out = tmp_path / "out"
    assert main(["--input", str(d), "--output", str(out), "--model", str(small_model), "--partition-by", ""],
                spark=spark) == 1  # published, but one input failed
    text = capsys.readouterr().out
    record = json.loads((out / ".run.json").read_text())
    left = {s["path"]: s["reason"] for s in record["inputs_skipped"]}
    assert set(left) == {f"{d}/_old/", f"{d}/notes.txt", str(part)}
    assert "starts with '_'" in left[f"{d}/_old/"] and "unfinished download" in left[str(part)]
    assert "not a WARC/ARC file name" in left[f"{d}/notes.txt"]
    assert "inputs left out: 3" in text and all(p in text for p in left)
    assert set(record["inputs"]) == {str(d / n) for n in ("a.warc.gz", "x.warc.zst", "nodict.warc.zst")}

    recs, stats = direct_records(warcs["c"])
    zst = record["files"][str(d / "x.warc.zst")]
    assert zst["status"] == "done" and zst["records_read"] == stats.records_read
    assert zst["html_records"] == len(recs) and zst["skipped"] == stats.skipped
    rows = [r for r in read_rows(out) if r["warc_file"] == str(d / "x.warc.zst")]
    assert sorted((r["warc_offset"], r["record_id"]) for r in rows) == sorted((r.offset, r.record_id) for r in recs)
    nodict = record["files"][str(d / "nodict.warc.zst")]
    assert nodict["status"] == "failed" and "dictionary" in nodict["open_error"]
    assert record["totals"]["failed_files"] == 1 and re.search(r"^TOTAL .* 1 failed$", text, re.M), text
    assert_accounted(record)

    listing = tmp_path / "warc.paths.gz"
    listing.write_bytes(gzip.compress(b"x.warc.zst\nnodict.warc.zst\na.warc.gz\n"))
    job = CleanWarcJob(["--input-list", str(listing), "--input-base", str(d), "--output", str(out),
                        "--model", str(small_model), "--partition-by", "", "--skip-done"])
    job.prepare()
    assert [f.uri for f in job.local_files] == [str(d / n) for n in ("x.warc.zst", "nodict.warc.zst", "a.warc.gz")]
    from jobs.clean_warc import JobError

    runs_before = sorted(out.glob("run=*"))
    # only the failed file is tried again; it still cannot be read, so there is nothing to publish (issue 43: an
    # empty run was published)
    with pytest.raises(JobError, match=r"nothing to publish: 1 of 1 input files could not be read \(nodict"):
        job.run(spark)
    assert sorted(out.glob("run=*")) == runs_before


@pytest.mark.spark
@pytest.mark.xdist_group("spark")
def test_a_run_whose_every_page_failed_for_one_reason_is_not_published(spark, warcs, small_model, tmp_path):
    """A valid config that breaks every page (a CPU budget of 1 us): no run, no file marked done."""
    from jobs.clean_warc import JobError
    from jobs.runs import OutputDir, done_files
    from jobs.storage import LocalFS

    conf = tmp_path / "tiny_budget.toml"
    conf.write_text("[limits]\ntime_budget_s = 1e-6\n")
    out = tmp_path / "out"
    with pytest.raises(JobError) as info:
        run_job(spark, "--input", warcs["d"], "--output", out, "--model", small_model, "--conf", conf)
    assert info.value.code == 1
    assert "every one of the 12 HTML records was rejected as timeout" in str(info.value)
    assert not list(out.glob("run=*")) and not list(out.glob(".staging/*"))
    assert done_files(OutputDir(LocalFS(), str(out)).recover()) == {}


@pytest.mark.spark
@pytest.mark.xdist_group("spark")
def test_jvm_listed_directories_list_what_they_leave_out(spark, warcs, tmp_path):
    """Remote directories (hdfs://, s3a://, ...) are walked by the JVM with the same rules (here file://)."""
    from jobs import inputs
    from jobs.storage import InputError

    d = tmp_path / "remote"
    (d / "_tmp").mkdir(parents=True)
    (d / "sub").mkdir()
    shutil.copy(warcs["a"], d / "a.warc.gz")
    shutil.copy(warcs["d"], d / "_tmp" / "d.warc.gz")
    shutil.copy(warcs["c"], d / "sub" / "c.warc")
    shutil.copy(warcs["b"], d / "sub" / "b.warc.gz.part")
    (d / "_SUCCESS").write_text("")
    files, left = inputs.resolve_jvm(spark, [f"file://{d}"])
    assert sorted(Path(f.uri[len("file:"):]).relative_to(d).as_posix() for f in files) == ["a.warc.gz", "sub/c.warc"]
    assert all(f.size == Path(f.uri[len("file:"):]).stat().st_size for f in files)
    reasons = {Path(s["path"][len("file:"):]).relative_to(d).as_posix() + ("/" if s["path"].endswith("/") else ""):
               s["reason"] for s in left}
    assert set(reasons) == {"_tmp/", "_SUCCESS", "sub/b.warc.gz.part"}
    assert "unfinished download" in reasons["sub/b.warc.gz.part"]
    (tmp_path / "empty" / "x").mkdir(parents=True)
    (tmp_path / "empty" / "notes.txt").write_text("not a WARC")
    with pytest.raises(InputError, match="matches no WARC/ARC file"):
        inputs.resolve_jvm(spark, [f"file://{tmp_path}/empty"])


def test_only_a_whole_run_failing_for_one_reason_of_the_cleaners_is_held_back():
    from jobs.outcomes import Outcome, systematic_failure

    def piece(cleaned=0, **rejected):
        return Outcome(html_records=cleaned + sum(rejected.values()), cleaned=cleaned, rejected=rejected)

    assert systematic_failure([piece(parse_error=3), piece(parse_error=4)]) == \
        "every one of the 7 HTML records was rejected as parse_error"
    assert systematic_failure([piece(parse_error=3), piece(cleaned=1)]) is None      # some pages cleaned
    assert systematic_failure([piece(parse_error=3, timeout=4)]) is None             # two reasons
    assert systematic_failure([piece(no_content=9)]) is None                         # the pages' own reason
    assert systematic_failure([piece(timeout=4)]) is None                            # too few to tell
    assert systematic_failure([piece()]) is None


@pytest.mark.spark
@pytest.mark.xdist_group("spark")
def test_the_job_cleans_by_the_convention_asked(spark, data_dir, tmp_path):
    """The packaged default model keeps the main content (`main`: a blog post without its readers' comments)
    unless the job is given another convention, which the model [model.by_convention] names for it cleans (dragnet:
    cleaneval-2012, trained without conventions), in the workers too; the run record says which model and which
    convention. (Last in the file: the session's Python workers then open another model, which
    test_local_run_matches_clean_html counts.)"""
    # dragnet/42: a blog post whose Dragnet gold keeps the comments (tests/test_convention.py)
    post, comment = "I encourage you to visit the Rosa Mystica shrine", "Sad but I know nothing about Catholic Church"
    warc = make_warc(tmp_path / "post.warc.gz", data_dir / "dragnet" / "html" / "42.html")
    texts = {}
    for convention in ("", "dragnet"):
        out = tmp_path / (convention or "default")
        record = run_job(spark, "--input", warc, "--output", out, "--partition-by", "",
                         *(["--convention", convention] if convention else []))
        path = resolve_model_path("cleaneval-2012" if convention else "default").resolve()
        model = load_model(path)
        assert record["model"]["convention"] == (convention or "main")
        assert record["model"]["tagging_convention"] == (None if convention else "main")
        assert (record["model"]["path"], record["model"]["hash"]) == (str(path), model.hash)
        (row,) = read_rows(out)
        assert row["status"] == "cleaned" and row["model_hash"] == model.hash
        texts[convention] = row["text"]
    assert post in texts[""] and comment not in texts[""]
    assert post in texts["dragnet"] and comment in texts["dragnet"]
    # cleaneval: the page in HTML5 markup goes to the default ([model.html5_by_convention]), in the workers too
    warc = make_warc(tmp_path / "two.warc.gz", two_markups(data_dir, tmp_path / "pages"))
    record = run_job(spark, "--input", warc, "--output", tmp_path / "cleaneval", "--partition-by", "",
                     "--convention", "cleaneval")
    default, old = load_model(), load_model("cleaneval-2012")
    assert (record["model"]["hash"], record["model"]["html5_pages"]["hash"]) == (old.hash, default.hash)
    assert record["model"]["html5_pages"]["tagging_convention"] == "cleaneval"
    rows = {row["url"].rsplit("/", 1)[-1]: row["model_hash"] for row in read_rows(tmp_path / "cleaneval")}
    assert rows == {"xhtml.html": old.hash, "html5.html": default.hash}
