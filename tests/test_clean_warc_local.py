"""`cleaner clean-warc`: the WARC job on local processes, without Java or Spark (jobs/local_job.py, jobs/pool.py).

Real WARCs built from the shared pages with scripts/make_warc.py (and a damaged one of the shared samples),
the real command in a subprocess, the real Spark job on the same files for the comparison.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from conftest import ROOT, WARC_DATE, make_warc, two_markups

DATE = WARC_DATE
KEY = ("warc_file", "warc_offset", "record_id")


@pytest.fixture(scope="module")
def warcs(tmp_path_factory, data_dir) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("warcs")
    return {
        "a": make_warc(d / "a.warc.gz", str(data_dir / "cleaneval-final" / "html"), "--limit", "25",
                        "--with-requests"),
        "b": make_warc(d / "b.warc", str(data_dir / "dragnet" / "html"), "--limit", "15", "--no-gzip"),
        "c": make_warc(d / "c.warc.gz", str(data_dir / "cleanportaleval" / "html"), "--limit", "8"),
        "damaged": data_dir / "warc" / "example-trunc.warc",
    }


@pytest.fixture(scope="module")
def no_spark(tmp_path_factory) -> dict[str, str]:
    """An environment where pyspark cannot be imported and no Java is on the PATH: what a machine without
    Spark looks like to the command."""
    d = tmp_path_factory.mktemp("nospark")
    (d / "pyspark.py").write_text('raise ImportError("no Spark on this machine")\n')
    path = ":".join(p for p in os.environ.get("PATH", "").split(":") if not (Path(p) / "java").exists())
    env = {k: v for k, v in os.environ.items() if k not in ("JAVA_HOME", "SPARK_HOME", "PYTHONPATH")}
    return env | {"PYTHONPATH": str(d), "PATH": path}


def clean_warc(*args, env) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "cleaner.tools.cli", "clean-warc", *map(str, args)],
                          capture_output=True, text=True, timeout=600, env=env, cwd=ROOT)


def rows_of(out: Path) -> list[dict]:
    """Every published row, partition columns back from the folder names; timing and run aside."""
    rows = pq.read_table(out).to_pylist()  # pyarrow leaves out .staging and .runs
    for r in rows:
        r.pop("processing_ms")
        r.pop("run")
    return sorted(rows, key=lambda r: tuple(r[k] for k in KEY))


def published(out: Path) -> list[Path]:
    return sorted(out.glob("run=*"))


def counts(record: dict) -> dict:
    """What a run counted, per file and in total, without times and paths."""
    per_file = {}
    for f in record["files"].values():
        per_file[f["name"]] = {k: f[k] for k in ("status", "records_read", "html_records", "cleaned", "rejected",
                                                 "expected_f1", "skipped", "accounted", "completed",
                                                 "truncated_payloads", "blocks_truncated")}
        per_file[f["name"]]["errors"] = [{k: e[k] for k in ("offset", "error")} for e in f["errors"]]
    return {"totals": record["totals"], "files": per_file, "rows": record["output"]["rows_written"],
            "partition_by": record["output"]["partition_by"], "model": record["model"]["hash"]}


@pytest.mark.spark
@pytest.mark.xdist_group("spark")
def test_the_same_rows_and_counts_as_the_spark_job_without_java_or_spark(warcs, no_spark, tmp_path):
    inputs = [warcs["a"], warcs["b"], warcs["damaged"]]
    local = tmp_path / "local"
    r = clean_warc(*inputs, "--out", local, "--jobs", "2", "--crawl", "CC-TEST", env=no_spark)
    assert r.returncode == 0, r.stderr[-3000:]
    # the summary table, as the Spark job prints it
    assert "a.warc.gz" in r.stdout and "TOTAL" in r.stdout and "rows written:" in r.stdout
    assert "WARC 3/3 done" in r.stderr
    (run_dir,) = published(local)
    record = json.loads((run_dir / ".run.json").read_text())
    assert record == json.loads((local / ".run.json").read_text())
    assert record["status"] == "published" and record["spark"] is None
    assert record["processes"]["workers"] == 2
    assert record["command"][:2] == ["cleaner clean-warc", str(warcs["a"])]
    # the same layout: Hive partitions by crawl, zstd Parquet files named part-*
    files = sorted(p.relative_to(run_dir) for p in run_dir.rglob("*.parquet"))
    assert files and all(p.parts[0] == "crawl=CC-TEST" and p.name.startswith("part-") for p in files)
    assert sum(pq.ParquetFile(run_dir / p).metadata.num_rows for p in files) == record["output"]["rows_written"]
    assert all(pq.ParquetFile(run_dir / p).metadata.row_group(0).column(0).compression == "ZSTD" for p in files)

    # The Spark job on the same files: the same rows, column for column, and the same counts.
    from jobs.clean_warc import main

    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    spark_out = tmp_path / "spark"
    assert main(["--input", *map(str, inputs), "--output", str(spark_out), "--crawl", "CC-TEST",
                 "--master", "local[2]", "--no-progress"]) == 0
    spark_record = json.loads((spark_out / ".run.json").read_text())
    assert counts(record) == counts(spark_record)
    assert record["totals"]["html_records"] == 41 and record["totals"]["errors"] == 1  # 25 + 15 + the damaged one's
    local_rows, spark_rows = rows_of(local), rows_of(spark_out)
    assert len(local_rows) == len(spark_rows) == record["output"]["rows_written"]
    assert local_rows == spark_rows
    assert pq.read_schema(next(run_dir.rglob("*.parquet"))).names == \
        pq.read_schema(next(published(spark_out)[0].rglob("*.parquet"))).names


def test_clean_warc_cleans_by_the_convention_asked(data_dir, no_spark, tmp_path):
    """`--convention` as in the Spark job: the packaged default keeps a blog post without its readers' comments
    (`main`) unless asked for `dragnet`, which its own model cleans; a model trained without conventions given by
    --model refuses one, before any work."""
    # dragnet/42: a blog post whose Dragnet gold keeps the comments (tests/test_convention.py)
    post, comment = "I encourage you to visit the Rosa Mystica shrine", "Sad but I know nothing about Catholic Church"
    warc = make_warc(tmp_path / "post.warc.gz", data_dir / "dragnet" / "html" / "42.html")
    texts = {}
    for convention in ("", "dragnet"):
        out = tmp_path / (convention or "default")
        r = clean_warc(warc, "--out", out, "--jobs", "1", *(["--convention", convention] if convention else []),
                       env=no_spark)
        assert r.returncode == 0, r.stderr[-3000:]
        model = json.loads((out / ".run.json").read_text())["model"]
        assert model["convention"] == (convention or "main")
        # dragnet is cleaned by the model [model.by_convention] names for it, in the worker processes too
        assert model["path"].endswith("cleaneval-2012.crfsuite" if convention else "default.crfsuite")
        (row,) = rows_of(out)
        assert row["model_hash"] == model["hash"]
        texts[convention] = row["text"]
    assert post in texts[""] and comment not in texts[""]
    assert post in texts["dragnet"] and comment in texts["dragnet"]
    old = clean_warc(warc, "--out", tmp_path / "old", "--model", "cleaneval-2012", "--convention", "dragnet",
                     env=no_spark)
    assert old.returncode == 4 and "not trained with annotation conventions" in old.stderr
    assert not (tmp_path / "old").exists()


def test_clean_warc_cleans_cleaneval_pages_in_html5_markup_by_the_default(data_dir, no_spark, tmp_path):
    """[model.html5_by_convention] in the worker processes: under `cleaneval`, the page in HTML5 markup is cleaned by
    the default, the older one by cleaneval-2012; each row names its model, the run record both."""
    from cleaner.label.model import load_model

    warc = make_warc(tmp_path / "two.warc.gz", two_markups(data_dir, tmp_path / "pages"))
    out = tmp_path / "out"
    r = clean_warc(warc, "--out", out, "--jobs", "2", "--convention", "cleaneval", env=no_spark)
    assert r.returncode == 0, r.stderr[-3000:]
    default, old = load_model(), load_model("cleaneval-2012")
    record = json.loads((out / ".run.json").read_text())
    model = record["model"]
    assert (model["convention"], model["hash"], model["tagging_convention"]) == ("cleaneval", old.hash, None)
    assert model["path"].endswith("cleaneval-2012.crfsuite")
    assert model["html5_pages"]["path"].endswith("default.crfsuite")
    assert (model["html5_pages"]["hash"], model["html5_pages"]["tagging_convention"]) == (default.hash, "cleaneval")
    assert record["output_settings"]["model_hash"] == f"{old.hash}+{default.hash}"
    by_page = {row["url"].rsplit("/", 1)[-1]: row for row in rows_of(out)}
    assert {name: row["model_hash"] for name, row in by_page.items()} == {"xhtml.html": old.hash,
                                                                         "html5.html": default.hash}
    assert all(row["status"] == "cleaned" for row in by_page.values())
    # a run of `main` into the same output is refused: other models, another convention
    again = clean_warc(warc, "--out", out, "--jobs", "1", "--skip-done", env=no_spark)
    assert again.returncode == 5 and f"model {old.hash}+{default.hash}, this run {default.hash}" in again.stderr


def test_skip_done_overwrite_and_refusals_work_as_in_the_job(warcs, no_spark, tmp_path):
    out = tmp_path / "out"
    first = clean_warc(warcs["a"], "--out", out, "--jobs", "2", env=no_spark)
    assert first.returncode == 0, first.stderr[-3000:]
    # an output with a run in it is refused without --skip-done / --overwrite, before any work (exit 5)
    again = clean_warc(warcs["a"], warcs["c"], "--out", out, env=no_spark)
    assert again.returncode == 5, again.stderr[-3000:]
    assert "--skip-done" in again.stderr and len(published(out)) == 1
    # --skip-done: only the file no published run has done
    more = clean_warc(warcs["a"], warcs["c"], "--out", out, "--jobs", "2", "--skip-done", env=no_spark)
    assert more.returncode == 0, more.stderr[-3000:]
    assert "1 of 2 input files already done" in more.stderr
    runs = published(out)
    assert len(runs) == 2
    second = json.loads((runs[1] / ".run.json").read_text())
    assert list(second["skipped_done"]) == [str(warcs["a"])]
    assert [f["name"] for f in second["files"].values()] == ["c.warc.gz"]
    rows = rows_of(out)  # every record once over both runs
    assert len(rows) == len({tuple(r[k] for k in KEY) for r in rows}) == 25 + 8
    # nothing left to do: said, exit 0, nothing published
    idle = clean_warc(warcs["a"], warcs["c"], "--out", out, "--skip-done", env=no_spark)
    assert idle.returncode == 0 and "nothing to do" in idle.stderr
    assert len(published(out)) == 2
    # --overwrite: the earlier runs are replaced by this one
    over = clean_warc(warcs["c"], "--out", out, "--overwrite", "--jobs", "1", env=no_spark)
    assert over.returncode == 0, over.stderr[-3000:]
    assert len(published(out)) == 1 and len(rows_of(out)) == 8


def test_bad_input_gets_the_jobs_exit_codes_before_any_work(warcs, no_spark, tmp_path):
    out = tmp_path / "out"
    missing = clean_warc(tmp_path / "nope.warc.gz", "--out", out, env=no_spark)
    assert missing.returncode == 3 and "nope.warc.gz" in missing.stderr
    assert "Traceback" not in missing.stderr
    nothing = clean_warc("--out", out, env=no_spark)
    assert nothing.returncode == 2 and "no input" in nothing.stderr
    hdfs = clean_warc(warcs["a"], "--out", "hdfs:///cleaned/", env=no_spark)
    assert hdfs.returncode == 2 and "local folder" in hdfs.stderr
    bad_conf = tmp_path / "bad.toml"
    bad_conf.write_text('[limits]\nmax_blocks = "lots"\n')
    conf = clean_warc(warcs["a"], "--out", out, "--config", bad_conf, env=no_spark)
    assert conf.returncode == 4 and "max_blocks" in conf.stderr
    jobs = clean_warc(warcs["a"], "--out", out, "--jobs", "0", env=no_spark)
    assert jobs.returncode == 2
    assert not out.exists() or not published(out)
    # a folder of other files is refused, not written into (exit 5)
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("mine")
    refused = clean_warc(warcs["a"], "--out", foreign, env=no_spark)
    assert refused.returncode == 5 and (foreign / "notes.txt").read_text() == "mine"


def test_clean_warc_holds_the_output_as_the_job_does(warcs, no_spark, tmp_path):
    """A live run's lease on OUT (here this test process's) refuses a second run with exit 5 naming the holder;
    a finished run gives the lease back, so nothing of it is left in OUT."""
    from jobs.lease import LEASE, Lease, LeaseSettings
    from jobs.runs import new_run_id
    from jobs.storage import LocalFS

    out = tmp_path / "out"
    out.mkdir()
    held = Lease(LocalFS(), str(out), new_run_id(), LeaseSettings(renew_s=1.0, stale_s=60.0))
    held.acquire(None)
    try:
        refused = clean_warc(warcs["c"], "--out", out, env=no_spark)
        assert refused.returncode == 5, refused.stderr[-2000:]
        assert str(os.getpid()) in refused.stderr and "Traceback" not in refused.stderr
        assert not list(out.rglob("*.parquet"))
    finally:
        held.release()
    done = clean_warc(warcs["c"], "--out", out, env=no_spark)
    assert done.returncode == 0, done.stderr[-2000:]
    assert not (out / LEASE).exists()
    assert len(rows_of(out)) == 8


def test_skip_done_with_another_convention_is_refused_naming_the_difference(data_dir, no_spark, tmp_path):
    """`clean-warc --skip-done --convention cleaneval` into an output of the default model added rows of another
    model to it: each run records the settings that shape its rows, and a run with others is refused (exit 5,
    one line naming the difference) unless --overwrite."""
    a = make_warc(tmp_path / "a.warc.gz", data_dir / "dragnet" / "html" / "42.html")
    b = make_warc(tmp_path / "b.warc.gz", data_dir / "dragnet" / "html" / "100.html")
    out = tmp_path / "out"
    r = clean_warc(a, "--out", out, "--jobs", "1", env=no_spark)
    assert r.returncode == 0, r.stderr[-3000:]
    first = json.loads((out / ".run.json").read_text())
    assert first["output_settings"]["convention"] == "main" and first["output_settings"]["format"] == "parquet"
    r = clean_warc(a, b, "--out", out, "--jobs", "1", "--skip-done", "--convention", "cleaneval", env=no_spark)
    assert r.returncode == 5, r.stderr[-3000:]
    (line,) = [x for x in r.stderr.splitlines() if "other settings" in x]
    assert "(convention main, this run cleaneval; model " in line
    assert len(published(out)) == 1
    r = clean_warc(a, b, "--out", out, "--jobs", "1", "--skip-done", env=no_spark)  # the same settings: b only
    assert r.returncode == 0, r.stderr[-3000:]
    assert len(published(out)) == 2
    r = clean_warc(a, b, "--out", out, "--jobs", "1", "--overwrite", "--convention", "cleaneval", env=no_spark)
    assert r.returncode == 0, r.stderr[-3000:]
    assert len(published(out)) == 1


def test_nothing_publishable_publishes_no_run_and_says_so(data_dir, no_spark, tmp_path):
    """`clean-warc a.html --out DIR` published an empty run (so the next try on DIR was refused) whose summary
    said `errors: 0 in 0 files` under a per-file line of `1 errors`: no run is published when no input could be
    read, and a run with one unreadable file among others counts its error."""
    page = tmp_path / "a.html"
    page.write_bytes((data_dir / "cleaneval-dev" / "html" / "1.html").read_bytes())
    out = tmp_path / "out"
    r = clean_warc(page, "--out", out, "--jobs", "1", env=no_spark)
    assert r.returncode == 1, r.stderr[-3000:]
    (line,) = [x for x in r.stderr.splitlines() if "error:" in x]
    assert "nothing to publish: 1 of 1 input files could not be read (a.html: no WARC/ARC record" in line
    assert published(out) == [] and not (out / ".run.json").exists()
    assert list((out / ".staging").iterdir()) == []
    warc = make_warc(tmp_path / "ok.warc.gz", data_dir / "dragnet" / "html" / "42.html")
    r = clean_warc(warc, page, "--out", out, "--jobs", "1", env=no_spark)  # the next try is not refused
    assert r.returncode == 1, r.stderr[-3000:]  # published; exit 1 for the file not read (README)
    assert len(published(out)) == 1
    assert "errors: 1 in 1 files (1 not read at all" in r.stdout
    row = [x.split() for x in r.stdout.splitlines() if x.startswith("a.html")][0]
    assert row[6] == "1" and row[-1] == "failed"  # its errors column says what the progress line said


def test_a_run_that_lost_its_lease_stops_between_tasks(data_dir, no_spark, tmp_path):
    """A run whose lease was taken (a pause past the stale time, a lease removed by hand) went on cleaning to the
    end before it refused to publish: it checks the lease between pieces and tasks and stops early, exit 5, its
    staging removed, nothing published."""
    html = sorted((data_dir / "cleaneval-final" / "html").glob("*.html"))
    warcs = [make_warc(tmp_path / f"w{i}.warc.gz", *map(str, html[i * 20:(i + 1) * 20])) for i in range(8)]
    out = tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-m", "cleaner.tools.cli", "clean-warc", *map(str, warcs), "--out",
                             str(out), "--jobs", "1"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=no_spark, cwd=ROOT)
    lease = out / ".lease.json"
    planned = []
    for line in proc.stderr:  # until the run has planned its tasks and starts cleaning them
        planned.append(line)
        if " tasks on " in line:
            break
    holder = json.loads(lease.read_text())
    lease.write_text(json.dumps(dict(holder, token="another-run", run_id="20991231T000000Z-other")))
    stdout, rest = proc.communicate(timeout=300)
    stderr = "".join(planned) + rest
    assert proc.returncode == 5, stderr[-3000:]
    (line,) = [x for x in stderr.splitlines() if "error:" in x]
    assert "lost the lease" in line and "not published" in line
    done, total = line.split("stopped after ")[1].split(" tasks")[0].split(" of ")
    assert int(done) < int(total)
    assert sum(" done: " in x for x in stderr.splitlines()) < 8  # it did not clean every file first
    assert published(out) == [] and list((out / ".staging").iterdir()) == []


def test_a_full_disk_leaves_no_staging_behind(data_dir, no_spark, tmp_path):
    """After a disk-full failure an empty `.staging/<run>` stayed until the next run: the failed run removes it."""
    mnt = tmp_path / "small"
    mnt.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=96k", "tmpfs", str(mnt)], capture_output=True).returncode:
        pytest.skip("mounting a tmpfs needs root")
    try:
        warc = make_warc(tmp_path / "w.warc.gz", str(data_dir / "cleaneval-final" / "html"), "--limit", "40")
        r = clean_warc(warc, "--out", mnt / "out", "--jobs", "1", env=no_spark)
        assert r.returncode == 1, r.stderr[-3000:]
        assert "No space left on device" in r.stderr or "Errno 28" in r.stderr, r.stderr[-3000:]
        assert published(mnt / "out") == [] and list((mnt / "out" / ".staging").iterdir()) == []
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)


def test_clean_warc_takes_the_spark_jobs_input_and_output_flags(warcs, no_spark, tmp_path):
    # `clean-warc --input` failed with "ambiguous option" where the Spark job takes --input; both name inputs
    # alike (PATH and --input together), and --output is --out's other name, as the job spells it.
    out = tmp_path / "out"
    r = clean_warc(warcs["c"], "--input", warcs["b"], "--output", out, "--jobs", "1", env=no_spark)
    assert r.returncode == 0, r.stderr[-3000:]
    assert {row["warc_file"].rsplit("/", 1)[-1] for row in rows_of(out)} == {"b.warc", "c.warc.gz"}


def _jsonl_lines(path: Path) -> list[dict]:
    import gzip

    if path.suffix == ".gz":
        data = gzip.decompress(path.read_bytes())
    else:
        import zstandard

        with open(path, "rb") as fh:
            data = zstandard.ZstdDecompressor().stream_reader(fh, read_across_frames=True).read()
    return [json.loads(line) for line in data.decode("utf-8").splitlines()]


@pytest.mark.parametrize("compression, suffix", [("gzip", ".json.gz"), ("zstd", ".json.zst")])
def test_clean_warc_writes_json_lines_as_the_spark_job_does(warcs, no_spark, tmp_path, compression, suffix):
    """`clean-warc --format jsonl` (issue 44: the Spark job had it): the same rows and fields as its Parquet, every
    field but the partition columns, nulls written, timestamps as Spark's JSON writer writes them."""
    from cleaner.output.schema import SCHEMA

    conf = tmp_path / "jsonl.toml"
    conf.write_text(f'[job]\njsonl_compression = "{compression}"\n')
    parquet, jsonl = tmp_path / "parquet", tmp_path / "jsonl"
    for out, more in ((parquet, []), (jsonl, ["--format", "jsonl", "--conf", conf])):
        r = clean_warc(warcs["a"], warcs["c"], "--out", out, "--jobs", "2", *more, env=no_spark)
        assert r.returncode == 0, r.stderr[-3000:]
    files = sorted(jsonl.glob(f"run=*/crawl=*/*{suffix}"))
    record = json.loads((jsonl / ".run.json").read_text())
    assert files and record["output"]["format"] == "jsonl" and record["output"]["parquet_files"] == len(files)
    assert not list(jsonl.glob("run=*/crawl=*/*.json"))  # zstd: no plain file left beside the compressed one
    lines = [r for f in files for r in _jsonl_lines(f)]
    assert all(list(r) == [n for n in SCHEMA.names if n != "crawl"] for r in lines)  # crawl: the folder's name
    assert len(lines) == record["output"]["rows_written"] == 25 + 8
    rows = {r["id"]: r for r in pq.read_table(parquet).to_pylist()}
    assert sorted(rows) == sorted(r["id"] for r in lines)
    for r in lines:
        p = rows[r["id"]]
        for key in ("url", "status", "reason", "text", "language", "text_hash", "minhash_bands", "label_stats",
                    "title", "published", "warc_offset", "reader_notes", "expected_f1"):
            assert r[key] == p[key], key
        assert r["fetch_time"] == "2024-05-06T07:08:09.000000Z"
    assert "run=*/**/*.json.gz" in (jsonl / ".huggingface.yaml").read_text()  # the card names the JSON files
