"""cleaner.tools.datatrove: the cleaner as a datatrove step, in datatrove's own pipeline (real WarcReader, real
JsonlWriter, real LocalPipelineExecutor) on a WARC built from the shared pages with scripts/make_warc.py."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys

import pytest
from conftest import ROOT

# datatrove is in the dev extra (and the `datatrove` one): no skip, a missing install fails here
from datatrove.executor import LocalPipelineExecutor
from datatrove.pipeline.readers import WarcReader
from datatrove.pipeline.writers import JsonlWriter

from cleaner.api import clean_html
from cleaner.page.metadata import FIELDS as METADATA_FIELDS
from cleaner.tools.datatrove import WebCleanerExtractor
from cleaner.warc import WarcFileStats, iter_html_records

PAGES = 20


@pytest.fixture(scope="module")
def warc_dir(tmp_path_factory, data_dir):
    d = tmp_path_factory.mktemp("warcs")
    subprocess.run([sys.executable, str(ROOT / "scripts" / "make_warc.py"), str(data_dir / "cleaneval-final" / "html"),
                    "--limit", str(PAGES), "--with-requests", "--date", "2024-05-06T07:08:09Z",
                    "--out", str(d / "sample.warc.gz")], check=True, capture_output=True)
    return d


def _run_pipeline(reader, tmp_path) -> list[dict]:
    """`reader`, the cleaner and datatrove's JsonlWriter in datatrove's local executor: the documents written
    (the stats in tmp_path/logs/stats.json)."""
    out = tmp_path / "out"
    LocalPipelineExecutor(pipeline=[reader, WebCleanerExtractor(), JsonlWriter(str(out))], tasks=1,
                          logging_dir=str(tmp_path / "logs")).run()
    docs = []
    for f in sorted(out.glob("*.jsonl.gz")):
        with gzip.open(f, "rt") as lines:
            docs += [json.loads(line) for line in lines]
    return docs


def test_warc_reader_then_the_cleaner_then_jsonl_writer(warc_dir, tmp_path):
    docs = _run_pipeline(WarcReader(str(warc_dir), glob_pattern="*.warc.gz"), tmp_path)
    with open(warc_dir / "sample.warc.gz", "rb") as fh:  # the job's reader (cleaner.warc), for the raw bytes
        records = {r.record_id: r for r in iter_html_records(fh, "sample.warc.gz", WarcFileStats())}
    assert len(records) == PAGES
    assert len({d["id"] for d in docs}) == len(docs) and {d["id"] for d in docs} <= set(records)
    same = 0
    for d in docs:
        raw = records[d["id"]]
        m = d["metadata"]
        assert d["text"].strip() and m["cleaner_status"] == "cleaned" and m["cleaner_reason"] is None
        assert m["url"] == raw.url and 0 <= m["expected_f1"] <= 1
        try:
            raw.payload.decode("utf-8")
        except UnicodeDecodeError:
            continue  # decoded by datatrove with cchardet's guess: the text may differ from the bytes' own
        # A UTF-8 page: cleaned from datatrove's text, the same text as the job gives from the record's bytes.
        want = clean_html(raw.payload, http_charset=raw.http_charset)
        assert d["text"] == want.plain and m["title"] == want.metadata.title
        assert {k: m[k] for k in METADATA_FIELDS} == want.metadata_columns()
        assert m["expected_f1"] == pytest.approx(want.stats.expected_f1)
        same += 1
    assert same >= len(docs) // 2
    # the step's counters, in datatrove's stats file
    stats = json.loads((tmp_path / "logs" / "stats.json").read_text())
    reader = next(s for s in stats if "Warc" in s["name"])["stats"]
    mine = next(s for s in stats if "webcleaner" in s["name"])["stats"]
    # every document the reader gave is extracted, and each is forwarded or counted as dropped
    assert mine["total"] == mine["extracted"] == reader["documents"]["total"]
    assert mine["forwarded"] == len(docs) and mine["forwarded"] + mine.get("dropped", 0) == mine["total"]


def test_cleaneval_output_and_rejections_in_the_metadata(data_dir):
    step = WebCleanerExtractor(output="cleaneval")
    page = (data_dir / "cleaneval-dev" / "html" / "1.html").read_bytes()
    text, meta = step.clean(page.decode("utf-8", "replace"))
    assert text.startswith(("<p>", "<h>", "<l>")) and meta["cleaner_status"] == "cleaned"
    text, meta = step.clean("")
    assert text == "" and meta["cleaner_status"] == "rejected" and meta["cleaner_reason"] == "empty"
    with pytest.raises(ValueError, match="output must be one of"):
        WebCleanerExtractor(output="html")


def test_the_step_cleans_by_the_convention_asked(data_dir):
    """`convention` as in `cleaner clean --convention`: a blog post with its readers' comments (dragnet/42) loses
    them under the default `main` and keeps them under `dragnet`; an unknown name is refused on first use."""
    from cleaner.label.convention import ConventionError

    html = (data_dir / "dragnet" / "html" / "42.html").read_text(encoding="utf-8")
    comment = "Sad but I know nothing about Catholic Church"
    assert comment not in WebCleanerExtractor().extract(html)
    assert comment in WebCleanerExtractor(convention="dragnet").extract(html)
    with pytest.raises(ConventionError, match="unknown convention 'opinion'"):
        WebCleanerExtractor(convention="opinion").extract(html)
    # under cleaneval, the page in HTML5 markup is cleaned by the default ([model.html5_by_convention])
    from cleaner.label.model import load_model

    html5 = "<!DOCTYPE html>" + html[html.index(">") + 1:]
    step = WebCleanerExtractor(convention="cleaneval")
    assert step.clean(html)[1]["cleaner_model"] == load_model("cleaneval-2012").hash
    assert step.clean(html5)[1]["cleaner_model"] == load_model().hash


def test_the_projects_warc_reader_accounts_for_every_record_and_cleans_what_clean_warc_cleans(warc_dir, tmp_path):
    from cleaner.tools.datatrove import WebCleanerWarcReader

    docs = _run_pipeline(WebCleanerWarcReader(str(warc_dir), glob_pattern="*.warc.gz"), tmp_path)
    file_stats = WarcFileStats()
    with open(warc_dir / "sample.warc.gz", "rb") as fh:  # what clean-warc reads of the same file
        records = {r.record_id: r for r in iter_html_records(fh, "sample.warc.gz", file_stats)}
    cleaned = {rid: clean_html(r.payload, http_charset=r.http_charset) for rid, r in records.items()}
    # the pages clean-warc cleans, each once, with its text: none left out, whatever its bytes
    assert sorted(d["id"] for d in docs) == sorted(rid for rid, res in cleaned.items() if res.ok and res.plain)
    for d in docs:
        assert d["text"] == cleaned[d["id"]].plain and d["metadata"]["url"] == records[d["id"]].url
    stats = json.loads((tmp_path / "logs" / "stats.json").read_text())
    reader = {k: v["total"] if isinstance(v, dict) else v  # (a counter moved by more than 1 is kept as a dict)
              for k, v in next(s for s in stats if s["name"].endswith(WebCleanerWarcReader.name))["stats"].items()}
    # every record read is accounted for: the pages handed on, the records skipped by reason, the empty pages
    skipped = {k: v for k, v in reader.items() if k.startswith("skipped_")}
    assert reader["records"] == file_stats.records_read > PAGES  # (the WARC has request records too)
    assert reader["documents"] + reader.get("empty_page", 0) == len(records) == PAGES
    assert reader["documents"] + reader.get("empty_page", 0) + sum(skipped.values()) == reader["records"]
