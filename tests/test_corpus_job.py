"""The job's output as a corpus pipeline reads it: Hugging Face `datasets` and DuckDB on the Parquet (and the
JSON Lines of --format jsonl), checking id, text, language and the dedup keys (docs/corpus_columns.md).

One real WARC (scripts/make_warc.py) of shared pages: German, Japanese and English ones, an exact copy of one
English page, and a copy of another with one word changed (a near duplicate). The DuckDB queries are the
ones docs/corpus_columns.md shows, read from it."""

from __future__ import annotations

import gzip
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT

pytestmark = [pytest.mark.slow, pytest.mark.spark]

pyspark = pytest.importorskip("pyspark")
os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")  # local files only: datasets must not ask the Hub for anything
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")

from cleaner.api import clean_html  # noqa: E402
from cleaner.output.schema import PARTITION_COLUMNS, SCHEMA  # noqa: E402
from cleaner.warc import WarcFileStats, iter_html_records  # noqa: E402

DOCS = ROOT / "docs" / "corpus_columns.md"


@pytest.fixture(scope="module")
def pages(tmp_path_factory, data_dir) -> Path:
    d = tmp_path_factory.mktemp("corpus_pages")
    fundus = data_dir / "fundus" / "html"
    shutil.copy(sorted(fundus.glob("de-*.html"))[0], d / "de.html")
    shutil.copy(sorted(fundus.glob("jp-Asahi*.html"))[0], d / "ja.html")
    chaos = data_dir / "chaos" / "html"
    shutil.copy(chaos / "apple_1.html", d / "en_a.html")
    shutil.copy(chaos / "apple_1.html", d / "en_a_copy.html")  # an exact duplicate
    page = (chaos / "typhoon_3.html").read_bytes()
    shutil.copy(chaos / "typhoon_3.html", d / "en_b.html")
    # a near duplicate: eight words that the clean text holds once, spread over it, changed wherever the page has them
    # (one word changed in a long text can leave every band's minimum as it was)
    words = clean_html(page).plain.split()
    once = [w for w in words if w.isalpha() and len(w) >= 6 and words.count(w) == 1 and w.encode() in page]
    assert len(once) >= 8
    for word in once[:: max(1, len(once) // 8)][:8]:
        page = page.replace(word.encode(), b"zanzibar")
    (d / "en_b_edited.html").write_bytes(page)
    return d


@pytest.fixture(scope="module")
def warc(pages, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("corpus_warc") / "corpus.warc.gz"
    subprocess.run([sys.executable, str(ROOT / "scripts" / "make_warc.py"), str(pages), "--date",
                    "2024-05-06T07:08:09Z", "--out", str(out)], check=True, capture_output=True)
    return out


@pytest.fixture(scope="module")
def spark():
    from pyspark.sql import SparkSession

    session = (SparkSession.builder.master("local[2]").appName("test_corpus_job")
               .config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")
               .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
               .getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    return session  # left running: test_job.py's session fixture gets this one back


def run_job(spark, *args) -> dict:
    from jobs.clean_warc import CleanWarcJob

    job = CleanWarcJob([str(a) for a in args])
    job.prepare()
    return job.run(spark)


@pytest.fixture(scope="module")
def parquet_out(spark, warc, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("corpus_out") / "out"
    record = run_job(spark, "--input", warc, "--output", out, "--crawl", "testcrawl", "--no-progress")
    assert record["output"]["rows_written"] == 6 and record["output"]["format"] == "parquet"
    return out


@pytest.fixture(scope="module")
def records(warc) -> dict[str, object]:
    """The WARC's HTML records by the file name of their page."""
    with open(warc, "rb") as fh:
        recs = list(iter_html_records(fh, str(warc), WarcFileStats()))
    return {r.url.rsplit("/", 1)[-1]: r for r in recs}


def doc_queries() -> dict[str, str]:
    """The ```sql blocks of docs/corpus_columns.md by the heading above them ("exact duplicates", ...)."""
    text = DOCS.read_text(encoding="utf-8")
    out = {}
    for m in re.finditer(r"^### DuckDB: ([^\n(]+?)\s*(?:\(.*\))?\n+```sql\n(.*?)```", text, re.M | re.S):
        out[m.group(1)] = m.group(2)
    return out


def test_datasets_reads_id_text_language_and_hashes(parquet_out, records):
    import datasets

    files = sorted(str(p) for p in parquet_out.glob("run=*/crawl=*/*.parquet"))
    ds = datasets.load_dataset("parquet", data_files=files, split="train",
                               cache_dir=str(parquet_out.parent / "hf_cache"))
    assert {"id", "text", "language", "language_score", "text_hash", "minhash_bands"} <= set(ds.column_names)
    by_name = {r["url"].rsplit("/", 1)[-1]: r for r in ds}
    assert set(by_name) == set(records)
    for name, rec in records.items():
        row = by_name[name]
        assert row["id"] == rec.record_id  # the WARC-Record-ID, under the name datasets and datatrove read
        assert row["text"] == clean_html(rec.payload, http_charset=rec.http_charset).plain
        assert row["status"] == "cleaned" and len(row["minhash_bands"]) == 14
    langs = {name: (r["language"], r["language_score"]) for name, r in by_name.items()}
    assert langs["de.html"][0] == "de" and langs["ja.html"][0] == "ja" and langs["en_a.html"][0] == "en"
    assert all(score >= 0.9 for _, score in langs.values()), langs
    assert by_name["en_a.html"]["text_hash"] == by_name["en_a_copy.html"]["text_hash"]
    assert by_name["en_b.html"]["text_hash"] != by_name["en_b_edited.html"]["text_hash"]
    assert len({r["text_hash"] for r in ds}) == 5


def test_the_spark_job_writes_the_page_metadata(parquet_out, records):
    """The metadata columns (docs/metadata.md), as clean_html reads them, and null where a page says nothing."""
    import pyarrow.parquet as pq

    rows = {r["url"].rsplit("/", 1)[-1]: r for r in pq.read_table(parquet_out).to_pylist()}
    for name, rec in records.items():
        want = clean_html(rec.payload, http_charset=rec.http_charset).metadata_columns()
        assert {k: rows[name][k] for k in want} == want
    # fundus: the German and the Japanese page declare their day; every page has a title
    assert all(rows[name]["published"] for name in ("de.html", "ja.html"))
    assert all(r["title"] for r in rows.values()) and rows["de.html"]["page_type"] == "article"


def test_text_is_what_the_cli_writes_as_txt(parquet_out, pages):
    import pyarrow.parquet as pq

    rows = pq.read_table(parquet_out).to_pylist()
    row = next(r for r in rows if r["url"].endswith("/de.html"))
    cli = subprocess.run([sys.executable, "-m", "cleaner.tools.cli", "clean", str(pages / "de.html"), "--format", "txt"],
                         capture_output=True, text=True, cwd=ROOT)
    assert cli.returncode == 0, cli.stderr
    assert cli.stdout == row["text"] + "\n" and "<p>" not in row["text"]


def test_the_docs_duckdb_queries_find_exact_and_near_duplicates(parquet_out):
    import duckdb

    queries = doc_queries()
    assert {"exact duplicates", "near-duplicate pairs", "a Gopher-style filter"} <= set(queries)
    con = duckdb.connect()

    def run(name):
        sql = queries[name].replace("'out/run=*/**/*.parquet'", f"'{parquet_out}/run=*/**/*.parquet'")
        rel = con.sql(sql)
        return [dict(zip(rel.columns, row)) for row in rel.fetchall()]

    exact = run("exact duplicates")
    assert len(exact) == 1 and exact[0]["copies"] == 2 and exact[0]["first_url"].endswith("/en_a.html")
    pairs = run("near-duplicate pairs")
    names = {tuple(sorted((p["url_a"].rsplit("/", 1)[-1], p["url_b"].rsplit("/", 1)[-1]))): p["shared_bands"]
             for p in pairs}
    assert names.get(("en_a.html", "en_a_copy.html")) == 14  # an exact copy shares every band
    assert 1 <= names.get(("en_b.html", "en_b_edited.html"), 0) < 14  # one word changed: some bands
    assert set(names) == {("en_a.html", "en_a_copy.html"), ("en_b.html", "en_b_edited.html")}
    kept = run("a Gopher-style filter")
    assert {r["language"] for r in kept} <= {"en"} and kept  # English pages pass, the others are left out


def _read_jsonl(path: Path) -> list[dict]:
    if path.suffix == ".gz":
        data = gzip.decompress(path.read_bytes())
    else:
        import zstandard

        with open(path, "rb") as fh:
            data = zstandard.ZstdDecompressor().stream_reader(fh, read_across_frames=True).read()
    return [json.loads(line) for line in data.decode("utf-8").splitlines()]


@pytest.mark.parametrize("compression,suffix", [("gzip", ".json.gz"), ("zstd", ".json.zst")])
def test_jsonl_holds_the_same_fields_as_the_parquet(spark, warc, parquet_out, tmp_path, compression, suffix):
    import datasets
    import pyarrow.parquet as pq

    conf = tmp_path / "jsonl.toml"
    conf.write_text(f'[job]\njsonl_compression = "{compression}"\n')
    out = tmp_path / "out"
    record = run_job(spark, "--input", warc, "--output", out, "--crawl", "testcrawl", "--no-progress",
                     "--format", "jsonl", "--conf", conf)
    files = sorted(out.glob(f"run=*/crawl=*/*{suffix}"))
    assert files and record["output"]["rows_written"] == 6 and record["output"]["parquet_files"] == len(files)
    assert not list(out.glob("run=*/crawl=*/*.json"))  # zstd: no plain file left beside the compressed one
    lines = [r for f in files for r in _read_jsonl(f)]
    # every field of the schema but the partition column (in the directory name, as in the Parquet)
    want_fields = [n for n in SCHEMA.names if n != "crawl"]
    assert all(list(r) == want_fields for r in lines)
    assert "crawl" in PARTITION_COLUMNS
    parquet = {r["id"]: r for r in pq.read_table(parquet_out).to_pylist()}
    for r in lines:
        p = parquet[r["id"]]
        for key in ("text", "language", "text_hash", "minhash_bands", "minhash", "text_words", "dup_line_share",
                    "label_stats", "title", "published", "author", "site_name", "canonical_url", "description",
                    "page_type"):
            assert r[key] == p[key], key
        assert r["fetch_time"] == "2024-05-06T07:08:09.000000Z"
    if compression == "gzip":  # datasets reads it as it is
        ds = datasets.load_dataset("json", data_files=[str(f) for f in files], split="train",
                                   cache_dir=str(tmp_path / "hf_cache"))
        assert sorted(ds["id"]) == sorted(parquet) and set(ds["language"]) == {"de", "ja", "en"}


def test_zstd_json_lines_to_a_remote_output_is_refused_before_spark(warc, tmp_path):
    from jobs.clean_warc import CleanWarcJob, JobError

    conf = tmp_path / "zstd.toml"
    conf.write_text('[job]\njsonl_compression = "zstd"\n')
    job = CleanWarcJob(["--input", str(warc), "--output", "hdfs://namenode/cleaned", "--format", "jsonl",
                        "--conf", str(conf)])
    with pytest.raises(JobError) as err:
        job.prepare()
    assert err.value.code == 4 and "jsonl_compression" in str(err.value) and str(conf) in str(err.value)
    CleanWarcJob(["--input", str(warc), "--output", "hdfs://namenode/cleaned", "--format", "jsonl"]).prepare()
