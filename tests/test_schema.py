"""The output record schema (cleaner/output/schema.py): one definition, exported JSON, rows."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import datetime, timezone

import pyarrow as pa
import pytest

from cleaner.api import CleanResult, clean_html
from cleaner.config import load_config
from cleaner.label.model import load_model
from cleaner.output.schema import (
    COLUMNS, LABEL_STATS, PARTITION_COLUMNS, SCHEMA, build_row, parse_warc_date, row_values,
    schema_json_text, to_table, url_host,
)
from cleaner.page.metadata import FIELDS as METADATA_FIELDS
from cleaner.warc import WarcFileStats, iter_html_records, write_html_warc

from conftest import ROOT


def test_exported_schema_file_matches_code():
    path = ROOT / "schemas" / "cleaned_record.json"
    assert path.exists(), "run: python scripts/export_schema.py"
    assert path.read_text(encoding="utf-8") == schema_json_text(), \
        "schemas/cleaned_record.json differs from cleaner/output/schema.py: run python scripts/export_schema.py"


def test_export_script_check_mode(tmp_path):
    script = ROOT / "scripts" / "export_schema.py"
    ok = subprocess.run([sys.executable, str(script), "--check"], capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr
    stale = tmp_path / "s.json"
    stale.write_text("{}\n")
    bad = subprocess.run([sys.executable, str(script), "--check", "--out", str(stale)],
                         capture_output=True, text=True)
    assert bad.returncode == 1 and "out of date" in bad.stderr
    subprocess.run([sys.executable, str(script), "--out", str(stale)], check=True,
                   capture_output=True)
    assert stale.read_text() == schema_json_text()


def test_schema_has_the_required_fields():
    required = {
        "record_id", "warc_file", "warc_offset", "warc_date", "url", "host", "http_status",
        "content_type", "http_charset", "encoding", "encoding_source", "status", "reason",
        "title", "cleaneval", "n_blocks", "label_stats", "kept_word_share", "mean_confidence",
        "expected_precision", "expected_recall", "expected_f1", "model_hash", "feature_version", "processing_ms",
        # the corpus columns (schema 4; plain became text)
        "id", "text", "language", "language_score", "text_hash", "minhash", "minhash_bands", "text_chars",
        "text_words", "text_lines", "mean_word_length", "alpha_word_share", "end_punct_line_share",
        "dup_line_share", "dup_line_char_share",
    }
    assert required <= set(SCHEMA.names)
    assert set(PARTITION_COLUMNS) <= set(SCHEMA.names)
    assert [f.name for f in LABEL_STATS] == ["header", "paragraph", "list", "continuation", "other"]
    for label in LABEL_STATS:
        assert [f.name for f in label.type] == ["blocks", "words", "chars"]
    exported = json.loads(schema_json_text())
    assert [f["name"] for f in exported["fields"]] == list(COLUMNS)


def test_parse_warc_date_and_host():
    assert parse_warc_date("2024-03-01T12:34:56Z") == datetime(2024, 3, 1, 12, 34, 56, tzinfo=timezone.utc)
    assert parse_warc_date("2024-03-01T12:34:56.5Z").microsecond == 500000
    assert parse_warc_date("20240301123456") == datetime(2024, 3, 1, 12, 34, 56, tzinfo=timezone.utc)
    assert parse_warc_date("2024-03-01T14:34:56+02:00") == datetime(2024, 3, 1, 12, 34, 56, tzinfo=timezone.utc)
    assert parse_warc_date("yesterday") is None and parse_warc_date(None) is None
    assert parse_warc_date("2024-13-45T00:00:00Z") is None
    assert url_host("http://User@WWW.Example.COM:8080/x") == "www.example.com"
    assert url_host("file:///tmp/x") is None and url_host("") is None
    assert url_host("http://[::1]/") == "::1"


@pytest.fixture(scope="module")
def records(tmp_path_factory, data_dir):
    pages = sorted((data_dir / "cleaneval-dev" / "html").glob("*.html"))[:6]
    warc = tmp_path_factory.mktemp("warc") / "s.warc.gz"
    items = [(f"http://example.test/{p.name}", p.read_bytes()) for p in pages]
    items.append(("http://example.test/empty.html", b"<html><body>   </body></html>"))
    write_html_warc(items, warc, date="2024-01-02T03:04:05Z")
    stats = WarcFileStats()
    with open(warc, "rb") as fh:
        recs = list(iter_html_records(fh, str(warc), stats))
    assert stats.accounted and len(recs) == 7
    return recs


def test_build_row_fits_the_schema(records, small_model):
    model, config = load_model(small_model), load_config()
    rows = []
    for rec in records:
        result = clean_html(rec.payload, http_charset=rec.http_charset, model=model, config=config)
        row = build_row(rec, result, crawl="test", processing_ms=12.5)
        assert tuple(row) == COLUMNS
        assert row_values(row) == tuple(row[c] for c in COLUMNS)
        assert row["record_id"] == rec.record_id and row["warc_offset"] == rec.offset
        assert row["cleaneval"] == result.cleaneval
        # the names corpus tools read: id is the WARC-Record-ID, text the plain text (`--format txt`)
        assert row["id"] == rec.record_id and row["text"] == result.plain
        if result.status == "rejected":
            assert row["language"] == "und" and row["text_hash"] is None and row["minhash_bands"] is None
        else:
            assert row["text_chars"] == len(result.plain) and row["text_hash"] is not None
        # the page's metadata (docs/metadata.md): its title is the <title> where the page says no more
        assert {k: row[k] for k in METADATA_FIELDS} == result.metadata_columns()
        assert row["title"] == (result.metadata.title if result.metadata else None)
        assert row["status"] == result.status and row["reason"] == result.reason
        assert row["host"] == "example.test" and row["fetch_day"] == "2024-01-02"
        assert row["model_hash"] == model.hash and row["processing_ms"] == 12.5
        if result.stats is not None:
            per = result.stats.per_label
            assert row["label_stats"]["paragraph"]["words"] == per["paragraph"].words
            assert row["words_kept"] == result.stats.words_kept
        rows.append(row)
    assert {r["status"] for r in rows} == {"cleaned", "rejected"}
    assert sum(bool(r["title"]) for r in rows) >= 3
    table = to_table(rows)  # raises when a value does not fit its type or nullability
    assert table.schema.equals(SCHEMA, check_metadata=False)
    assert table.num_rows == len(records)


def test_build_row_for_a_result_without_stats(records):
    result = CleanResult("rejected", "internal_error", error="boom")
    row = build_row(records[0], result, crawl="c")
    assert row["label_stats"] is None and row["kept_word_share"] is None
    assert row["cleaneval"] == "" and row["processing_ms"] == 0.0
    to_table([row])


def test_schema_round_trips_through_parquet(tmp_path, records):
    import pyarrow.parquet as pq

    row = build_row(records[0], CleanResult("rejected", "empty"), crawl="c")
    pq.write_table(to_table([row]), tmp_path / "x.parquet", compression="zstd")
    back = pq.read_table(tmp_path / "x.parquet")
    assert back.schema.equals(SCHEMA, check_metadata=False)
    assert back.to_pylist()[0]["record_id"] == row["record_id"]
    assert isinstance(SCHEMA.field("label_stats").type, pa.StructType)
