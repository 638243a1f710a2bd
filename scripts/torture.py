#!/usr/bin/env python
"""Run a catalogue of hostile inputs through the Spark job (one run) and print one table.

    python scripts/torture.py [--model M.crfsuite] [--markdown docs/torture.md] [--keep DIR]

The inputs are generated into a temporary directory (large ones on the fly, never committed)
plus the damaged sample files of ../shared/data/warc. Every input is its own WARC file, so
the per-file counters of the run record (`.run.json`) and the rows of that file give each
input's outcome: records read, rows written, rejected by reason, skipped, errors. Each input
has an expected outcome; the exit code is 1 when any input FAILs.

The job runs on `local[2,3]` (2 cores, a task may fail 3 times) with the test hook
CLEANER_FAULT_INJECT set, so the poison record really crashes its Python worker and the
retried task reports it as `poison`. tests/test_torture.py runs this script.
"""

from __future__ import annotations

import argparse
import gzip
import os
import random
import shutil
import sys
import tempfile
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from parser_bombs import SHAPES as BOMB_SHAPES  # noqa: E402  (this script's folder, scripts/)

SHARED = ROOT.parent / "shared" / "data"
POISON = "torture-poison"
# (shape of scripts/parser_bombs.py, units, hazard): the slow shapes at a size Lexbor took seconds on
PARSER_BOMBS = [
    ("attributes-distinct", 80_000, "one tag with 80,000 distinct attributes (0.5 MB; Lexbor alone 89 s)"),
    ("options-unclosed", 80_000, "a <select> of 80,000 unclosed <option>s (0.7 MB; Lexbor alone 129 s)"),
    ("formatting-reconstructed", 2_500,
     "2,500 distinct <b> left open, reopened in 2,500 paragraphs (60 KB; Lexbor alone 6.9 s)"),
    ("adoption-b-div", 40_000, "<b><div>x</b>y 40,000 times, nesting by the adoption agency (Lexbor alone 4.8 s)"),
]
BAD_REASONS = {"internal_error", "timeout", "parse_error", "decode_failed"}


# ------------------------------------------------------------------------------------------
# Building records
# ------------------------------------------------------------------------------------------

_ids = iter(range(1, 10**9))


def record(block: bytes, *, rec_type: bytes = b"response", url: bytes = b"http://torture.test/",
           version: bytes = b"WARC/1.0", extra: bytes = b"", gz: bool = True,
           content_type: bytes = b"application/http; msgtype=response") -> bytes:
    rid = b"<urn:uuid:00000000-0000-4000-8000-%012d>" % next(_ids)
    head = (version + b"\r\nWARC-Type: " + rec_type + b"\r\nWARC-Record-ID: " + rid
            + b"\r\nWARC-Date: 2024-01-01T00:00:00Z\r\nWARC-Target-URI: " + url
            + b"\r\nContent-Type: " + content_type + b"\r\n" + extra
            + b"Content-Length: " + str(len(block)).encode() + b"\r\n\r\n")
    rec = head + block + b"\r\n\r\n"
    return gzip.compress(rec, compresslevel=6, mtime=0) if gz else rec


def http(body: bytes, headers: list[tuple[str, str]] | None = None) -> bytes:
    hdrs = [("Content-Type", "text/html")] if headers is None else headers
    return (b"HTTP/1.1 200 OK\r\n" + b"".join(f"{k}: {v}\r\n".encode() for k, v in hdrs)
            + b"\r\n" + body)


def page(i: int = 0) -> bytes:
    """A real page (CleanEval dev), or a small synthetic one when the data is missing."""
    d = SHARED / "cleaneval-dev" / "html"
    pages = sorted(d.glob("*.html"), key=lambda p: int(p.stem)) if d.is_dir() else []
    if pages:
        return pages[i % len(pages)].read_bytes()
    return (b"<html><head><title>Page %d</title></head><body>" % i
            + b"<p>This is a paragraph of ordinary text, long enough to be kept.</p>" * 20
            + b"</body></html>")


def other_page(i: int = 0) -> bytes:
    """A real page that starts like HTML (Dragnet; CleanEval pages start with <text>)."""
    d = SHARED / "dragnet" / "html"
    pages = sorted(d.glob("*.html")) if d.is_dir() else []
    return pages[i % len(pages)].read_bytes() if pages else b"<!doctype html>" + page(i)


def chunked(body: bytes, size: int = 1000) -> bytes:
    out = b"".join(b"%x\r\n%s\r\n" % (len(body[i:i + size]), body[i:i + size])
                   for i in range(0, len(body), size))
    return out + b"0\r\n\r\n"


def bomb(size: int) -> bytes:
    """gzip of an HTML page of `size` bytes, built in blocks (a few hundred KB)."""
    comp = zlib.compressobj(9, zlib.DEFLATED, 31)
    parts = [comp.compress(b"<html><body><p>")]
    block = b"a" * (1 << 20)
    for _ in range(size >> 20):
        parts.append(comp.compress(block))
    parts.append(comp.compress(b"</p></body></html>") + comp.flush())
    return b"".join(parts)


def write_plain_big(path: Path, size: int) -> None:
    """An uncompressed WARC with one HTML page of `size` bytes, streamed to disk."""
    body_head = b"<html><body>"
    unit = b"<p>" + b"word " * 200 + b"</p>\n"
    n = (size - len(body_head)) // len(unit)
    body_len = len(body_head) + n * len(unit)
    block_head = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n"
    head = (b"WARC/1.0\r\nWARC-Type: response\r\nWARC-Record-ID: <urn:uuid:big-page>\r\n"
            b"WARC-Date: 2024-01-01T00:00:00Z\r\nWARC-Target-URI: http://torture.test/100mb\r\n"
            b"Content-Type: application/http; msgtype=response\r\nContent-Length: "
            + str(len(block_head) + body_len).encode() + b"\r\n\r\n")
    with open(path, "wb") as fh:
        fh.write(head + block_head + body_head)
        chunk = unit * 1000
        for _ in range(n // 1000):
            fh.write(chunk)
        fh.write(unit * (n % 1000))
        fh.write(b"\r\n\r\n")


# ------------------------------------------------------------------------------------------
# The catalogue
# ------------------------------------------------------------------------------------------

@dataclass
class Case:
    name: str            # file name of the input
    hazard: str          # what it is
    expected: str        # expected outcome, in words
    check: Callable      # (file record, rows of the file) -> bool
    path: Path | None = None


def _rows_ok(rows) -> bool:
    return all(r["reason"] not in BAD_REASONS for r in rows)


def _has_note(rows, note) -> bool:
    return any(note in (r["reader_notes"] or []) for r in rows)


def build(tmp: Path) -> list[Case]:
    cases: list[Case] = []

    def gen(name, hazard, expected, check, data: bytes | None = None):
        p = tmp / name
        if data is not None:
            p.write_bytes(data)
        cases.append(Case(name, hazard, expected, check, p))

    good = [record(http(page(i)), url=b"http://torture.test/p%d" % i) for i in range(5)]

    # --- WARC level ---------------------------------------------------------------------
    data = b"".join(good)
    gen("truncated-gzip.warc.gz", "gzip file cut inside its last member",
        "4 of 5 pages kept, error with offset",
        lambda f, rows: len(rows) == 4 and f["errors"] and _rows_ok(rows),
        data[:len(data) - len(good[-1]) // 2])
    members = list(good)
    bad = bytearray(members[2])
    for i in range(len(bad) // 3, len(bad) // 3 + 64):
        bad[i] ^= 0x5A
    members[2] = bytes(bad)
    gen("corrupt-member.warc.gz", "a corrupt gzip member in the middle",
        "resync at the next member: 4 of 5 pages, error with offset",
        lambda f, rows: len(rows) == 4 and f["errors"]
        and {r["url"] for r in rows} >= {"http://torture.test/p3", "http://torture.test/p4"},
        b"".join(members))
    gen("chunked-raw.warc.gz", "Transfer-Encoding: chunked payload stored raw",
        "de-chunked and cleaned",
        lambda f, rows: len(rows) == 1 and _has_note(rows, "dechunked") and _rows_ok(rows),
        record(http(chunked(page(1)), [("Content-Type", "text/html"),
                                       ("Transfer-Encoding", "chunked")])))
    gen("lying-transfer-encoding.warc.gz", "Transfer-Encoding: chunked on a plain body",
        "raw bytes kept, cleaned",
        lambda f, rows: len(rows) == 1 and _has_note(rows, "chunked-header-not-chunked")
        and _rows_ok(rows),
        record(http(page(2), [("Content-Type", "text/html"), ("Transfer-Encoding", "chunked")])))
    gen("content-encoding-gzip.warc.gz", "Content-Encoding: gzip payload", "decoded, cleaned",
        lambda f, rows: len(rows) == 1 and _has_note(rows, "content-encoding:gzip")
        and _rows_ok(rows) and rows[0]["payload_bytes"] == len(page(3)),
        record(http(gzip.compress(page(3), mtime=0), [("Content-Type", "text/html"),
                                                      ("Content-Encoding", "gzip")])))
    gen("content-encoding-deflate.warc.gz", "Content-Encoding: deflate payload",
        "decoded, cleaned",
        lambda f, rows: len(rows) == 1 and _has_note(rows, "content-encoding:deflate")
        and _rows_ok(rows) and rows[0]["payload_bytes"] == len(page(4)),
        record(http(zlib.compress(page(4)), [("Content-Type", "text/html"),
                                             ("Content-Encoding", "deflate")])))
    try:
        import brotli

        gen("content-encoding-br.warc.gz", "Content-Encoding: br payload", "decoded, cleaned",
            lambda f, rows: len(rows) == 1 and _has_note(rows, "content-encoding:br")
            and _rows_ok(rows) and rows[0]["payload_bytes"] == len(page(5)),
            record(http(brotli.compress(page(5)), [("Content-Type", "text/html"),
                                                   ("Content-Encoding", "br")])))
    except ImportError:  # pragma: no cover - brotli is a dependency
        pass
    gen("decompression-bomb.warc.gz", "gzip Content-Encoding inflating to 200 MB (200 KB on disk)",
        "decoding cut at the 10 MB cap: too_large",
        lambda f, rows: len(rows) == 1 and rows[0]["reason"] == "too_large"
        and rows[0]["payload_truncated"],
        record(http(bomb(200 << 20), [("Content-Type", "text/html"),
                                      ("Content-Encoding", "gzip")])))
    revisit = record(b"HTTP/1.1 304 Not Modified\r\n\r\n", rec_type=b"revisit",
                     extra=b"WARC-Profile: http://netpreserve.org/warc/1.0/revisit/"
                           b"identical-payload-digest\r\n")
    gen("revisit.warc.gz", "a revisit record next to a response",
        "revisit counted as skipped, no row; the page cleaned",
        lambda f, rows: f["skipped"].get("revisit") == 1 and len(rows) == 1,
        revisit + good[0])
    gen("target-uri-spaces-bad-utf8.warc.gz", "WARC-Target-URI with spaces and invalid UTF-8",
        "URL %-encoded, page cleaned",
        lambda f, rows: len(rows) == 1 and " " not in rows[0]["url"]
        and "%FF" in rows[0]["url"].upper() and _rows_ok(rows),
        record(http(page(6)), url=b"http://torture.test/a page/\xff\xfe?q=x y"))
    gen("no-content-type.warc.gz", "response without any Content-Type",
        "sniffed as HTML, cleaned",
        lambda f, rows: len(rows) == 1 and _has_note(rows, "sniffed-html") and _rows_ok(rows),
        record(http(other_page(7), [("Server", "x")]),
               content_type=b"application/octet-stream"))
    gen("broken-http-headers.warc.gz", "HTTP header block without its blank line",
        "headers end where the page starts: page kept, cleaned",
        lambda f, rows: len(rows) == 1 and _has_note(rows, "http-headers-unterminated")
        and rows[0]["payload_bytes"] == len(page(8)) and _rows_ok(rows),
        record(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n" + page(8)))
    gen("warc-0.18.warc", "WARC/0.18 and WARC/0.17 records (uncompressed)",
        "read like WARC/1.0: 2 pages",
        lambda f, rows: len(rows) == 2 and f["completed"] and _rows_ok(rows),
        record(http(page(9)), version=b"WARC/0.18", gz=False)
        + record(http(page(10)), version=b"WARC/0.17", gz=False))

    # --- page level -----------------------------------------------------------------------
    p = tmp / "page-100mb.warc"
    write_plain_big(p, 100_000_000)
    cases.append(Case(p.name, "one 100 MB HTML page (uncompressed WARC)",
                      "too_large; the rest of the record drained",
                      lambda f, rows: len(rows) == 1 and rows[0]["reason"] == "too_large"
                      and f["completed"], p))
    gen("nesting-1m.warc.gz", "1,000,000 nested <div> elements",
        "nesting flattened: row written in budget, no timeout/error",
        lambda f, rows: len(rows) == 1 and _rows_ok(rows),
        record(http(b"<html><body>" + b"<div>" * 1_000_000 + b"<p>deep text here</p>")))
    gen("million-nodes.warc.gz", "1,200,000 elements (9.6 MB)",
        "blocks capped at max_blocks, no timeout/error",
        lambda f, rows: len(rows) == 1 and _rows_ok(rows) and rows[0]["blocks_truncated"],
        record(http(b"<html><body>" + b"<b>x</b>" * 1_200_000 + b"</body></html>")))
    gen("giant-attribute.warc.gz", "a 9 MB attribute value",
        "row written, no timeout/error",
        lambda f, rows: len(rows) == 1 and _rows_ok(rows),
        record(http(b'<html><body><p title="' + b"a" * 9_000_000 + b'">x</p>'
                    + page(11).split(b"<body", 1)[-1])))
    gen("giant-text-node.warc.gz", "a 9 MB text node",
        "row written, no timeout/error",
        lambda f, rows: len(rows) == 1 and _rows_ok(rows),
        record(http(b"<html><body><p>" + b"word " * 1_800_000 + b"</p></body></html>")))
    surrogate = (b"<html><body><h1>Lone surrogates</h1><p>Entities &#xD800; &#55296; &#xDFFF; "
                 b"&#x110000; and raw \xed\xa0\x80 bytes in an otherwise normal paragraph of "
                 b"text that is long enough to be kept by the cleaner.</p>" + page(12) + b"</body>")
    gen("lone-surrogates.warc.gz", "lone-surrogate entities and bytes, invalid code points",
        "replaced; the row is stored in Parquet",
        lambda f, rows: len(rows) == 1 and _rows_ok(rows)
        and "\ud800" not in (rows[0]["text"] or ""),
        record(http(surrogate, [("Content-Type", "text/html; charset=utf-8")])))
    # Parser time bombs (scripts/parser_bombs.py, docs/faults.md "Parser time bombs"): Lexbor alone took the
    # seconds given on each; the pre-parse guard caps the shape, the page is cleaned with the text around it.
    for shape, n, hazard in PARSER_BOMBS:
        gen(f"parser-bomb-{shape}.warc.gz", hazard, "guard cuts the shape before the parse: cleaned in budget",
            # (in budget and cleaned; whether the short paragraph after the bomb is kept is the model's call, and
            # the small test model drops it on some shapes: tests/test_parser_bombs.py checks the text around it)
            lambda f, rows: len(rows) == 1 and rows[0]["status"] == "cleaned"
            and rows[0]["processing_ms"] < 10_000,
            record(http(BOMB_SHAPES[shape](n))))
    rnd = random.Random(4)
    gen("binary-as-html.warc.gz", "300 KB of random bytes labelled text/html",
        "rejected as not_text",
        lambda f, rows: len(rows) == 1 and rows[0]["reason"] == "not_text",
        record(http(bytes(rnd.randrange(256) for _ in range(300_000)))))

    # --- resource containment -------------------------------------------------------------
    gen("poison.warc.gz", "a page that segfaults the parser (CLEANER_FAULT_INJECT), among 4",
        "worker crash, task retried: `poison` row, the other 4 pages once",
        lambda f, rows: len(rows) == 5 and sum(r["reason"] == "poison" for r in rows) == 1
        and len({r["url"] for r in rows}) == 5,
        b"".join(good[:2]) + record(http(page(13)), url=f"http://torture.test/{POISON}".encode())
        + b"".join(good[2:4]))

    # --- the shared samples (real files) --------------------------------------------------
    expected_shared = {  # name: (records read, HTML rows, errors expected)  (docs/warc.md)
        "bad.arc": (4, 0, True),
        "example-bad.warc.gz.bad": (6, 2, False),
        "example-bad-non-chunked.warc.gz": (6, 1, False),
        "example-iana.org-chunked.warc": (3, 1, False),
        "example-space-in-url.arc": (2, 1, True),
        "example-trunc.warc": (4, 1, True),
        "example-wget-bad-target-uri.warc.gz": (6, 1, False),
        "example-wrong-chunks.warc.gz": (2, 1, False),
        "example-space-in-target-uri.warc.gz": (2, 0, False),
        "example.arc": (2, 1, False),
        "example.arc.gz": (2, 1, False),
        "example.warc": (6, 1, False),
        "gzip_extra_sl.warc.gz": (1, 0, False),
    }
    for name, (n_read, n_html, errs) in expected_shared.items():
        path = SHARED / "warc" / name
        if not path.exists():
            continue
        cases.append(Case(
            f"shared/{name}", "real sample file (../shared/data/warc)",
            f"{n_read} read, {n_html} rows" + (", errors with offsets" if errs else ""),
            lambda f, rows, n_read=n_read, n_html=n_html, errs=errs:
            f["records_read"] == n_read and len(rows) == n_html
            and bool(f["errors"]) == errs and _rows_ok(rows), path))
    return cases


# ------------------------------------------------------------------------------------------
# Running and reporting
# ------------------------------------------------------------------------------------------

COLUMNS = ["warc_file", "url", "status", "reason", "error", "reader_notes", "payload_bytes",
           "payload_truncated", "blocks_truncated", "sanitized_chars", "text", "processing_ms"]


def _outcome(f: dict, rows: list[dict]) -> str:
    parts = []
    by = {}
    for r in rows:
        k = "cleaned" if r["status"] == "cleaned" else r["reason"]
        by[k] = by.get(k, 0) + 1
    parts.append(", ".join(f"{k} {v}" for k, v in sorted(by.items())) or "no rows")
    notes = sorted({n for r in rows for n in (r["reader_notes"] or [])
                    if not n.startswith("segment")})
    if notes:
        parts.append("notes: " + ", ".join(notes))
    if any(r["payload_truncated"] for r in rows):
        parts.append("payload capped")
    if any(r["blocks_truncated"] for r in rows):
        parts.append("blocks capped")
    if any(r["sanitized_chars"] for r in rows):
        parts.append(f"{sum(r['sanitized_chars'] for r in rows)} chars sanitised")
    if rows:
        parts.append(f"max {max(r['processing_ms'] for r in rows) / 1000:.1f} s")
    if f["errors"]:
        offs = ", ".join(f"@{e.get('offset')}" for e in f["errors"][:3])
        parts.append(f"{len(f['errors'])} error(s) {offs}")
    return "; ".join(parts)


def run(model: str | None = None, keep: Path | None = None, master: str = "local[2,3]") -> tuple[list[dict], dict]:
    """Build the catalogue, run the job once, return (table rows, run record)."""
    import pyarrow.parquet as pq

    os.environ["PYSPARK_PYTHON"] = os.environ.get("PYSPARK_PYTHON") or sys.executable
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ["CLEANER_FAULT_INJECT"] = f"segfault:{POISON}"  # read by the Python workers
    from jobs.clean_warc import CleanWarcJob, setup_logging

    setup_logging()
    tmp = Path(tempfile.mkdtemp(prefix="torture-", dir=keep))
    try:
        t = time.perf_counter()
        (tmp / "in").mkdir()
        cases = build(tmp / "in")
        built = time.perf_counter() - t
        out = tmp / "out"
        argv = ["--input", *[str(c.path) for c in cases], "--output", str(out),
                "--partition-by", "", "--master", master, "--no-progress",
                "--spark-conf", "spark.ui.enabled=false"]
        if model:
            argv += ["--model", str(model)]
        job = CleanWarcJob(argv)
        job.prepare()
        record = job.run()
        rows_by_file: dict[str, list[dict]] = {}
        for r in pq.read_table(out, columns=COLUMNS).to_pylist():
            rows_by_file.setdefault(r["warc_file"], []).append(r)
        table = []
        for c in cases:
            uri = os.path.realpath(c.path)  # the job records inputs by their real path
            f = record["files"][uri]
            rows = rows_by_file.get(uri, [])
            try:
                ok = bool(c.check(f, rows)) and f["accounted"]
            except Exception as exc:  # a broken expectation is a FAIL, not a crash
                ok = False
                print(f"check of {c.name} raised {exc!r}", file=sys.stderr)
            table.append({
                "input": c.name, "hazard": c.hazard, "expected": c.expected,
                "outcome": _outcome(f, rows), "read": f["records_read"], "written": len(rows),
                "rejected": ", ".join(f"{k} {v}" for k, v in f["rejected"].items()) or "-",
                "skipped": ", ".join(f"{k} {v}" for k, v in f["skipped"].items()) or "-",
                "result": "PASS" if ok else "FAIL",
            })
        record["_torture"] = {"build_s": round(built, 1), "inputs": len(cases)}
        return table, record
    finally:
        if keep is None:
            shutil.rmtree(tmp, ignore_errors=True)


def markdown(table: list[dict], record: dict) -> str:
    esc = lambda s: str(s).replace("|", "\\|")  # noqa: E731
    lines = ["# Torture run: hostile inputs through the Spark job",
             "",
             "Generated by `python scripts/torture.py --markdown docs/torture.md` (also run by "
             "`tests/test_torture.py`, marked `spark`). Every input is its own WARC file, all "
             "run through `jobs/clean_warc.py` in one job on `local[2,3]`; large inputs are "
             "generated in a temporary directory. `shared/` files are the samples of "
             "`../shared/data/warc`. read / written / rejected / skipped are the per-file "
             "counters of `.run.json` and the rows of the Parquet output.",
             "",
             "| input | hazard | expected | outcome | read | written | rejected | skipped | result |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in table:
        lines.append("| " + " | ".join(esc(r[k]) for k in (
            "input", "hazard", "expected", "outcome", "read", "written", "rejected", "skipped",
            "result")) + " |")
    t = record["totals"]
    n_pass = sum(r["result"] == "PASS" for r in table)
    lines.append("")
    lines.append(f"{n_pass}/{len(table)} PASS. One job run ({record['spark']['master']}): "
                 f"{t['records_read']} records read, {record['output']['rows_written']} rows "
                 f"written, rejected {t['rejected']}, {t['errors']} reader errors; "
                 f"{record['elapsed_s']:.0f} s for the job, "
                 f"{record['_torture']['build_s']:.0f} s to build the inputs.")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", help="CRF model (default: the packaged one)")
    ap.add_argument("--markdown", type=Path, help="also write the table to this file")
    ap.add_argument("--keep", type=Path, help="build inputs/output under this directory, kept")
    ap.add_argument("--master", default="local[2,3]", help="Spark master (needs task retries)")
    a = ap.parse_args(argv)
    table, record = run(a.model, a.keep, a.master)
    text = markdown(table, record)
    sys.stdout.write("\n" + text)
    if a.markdown:
        a.markdown.write_text(text)
    return 0 if all(r["result"] == "PASS" for r in table) else 1


if __name__ == "__main__":
    sys.exit(main())
