"""Tests for cleaner.warc: reading the shared WARC/ARC samples (several damaged on purpose),
generated WARCs, payload decoding and damage recovery. Expected counts were measured on the
sample files and checked against their bytes (see docs/warc.md)."""

from __future__ import annotations

import gzip
import io
import random
import zlib
from pathlib import Path

import pytest
from conftest import load_script
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from warcio.archiveiterator import ArchiveIterator

from cleaner.warc import (
    MAX_MIME_KEYS,
    HtmlRecord,
    WarcFileStats,
    iter_html_records,
    open_warc,
    sniff_html,
    write_html_warc,
)

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT.parent / "shared" / "data"     # read-only; missing data fails, never skips
WARC_DIR = DATA / "warc"
WARC_FILES = sorted(p.name for p in WARC_DIR.iterdir()) if WARC_DIR.is_dir() else []

EXAMPLE_PAGE_LEN = 1270  # the example.com page stored in most warcio samples


def read_all(data_or_path, name="test", **kw) -> tuple[list[HtmlRecord], WarcFileStats]:
    stats = WarcFileStats()
    if isinstance(data_or_path, (bytes, bytearray)):
        stream = io.BytesIO(bytes(data_or_path))
    else:
        stream = open_warc(data_or_path)
    try:
        records = list(iter_html_records(stream, name, stats, **kw))
    finally:
        stream.close()
    assert stats.accounted, stats
    return records, stats


# --------------------------------------------------------------------------------------------
# The shared sample files
# --------------------------------------------------------------------------------------------

# file -> (records_read, html_records, skipped, error offsets, warnings, completed)
EXPECTED = {
    "bad.arc": (4, 0, {"damaged": 3, "empty_payload": 1}, [0, 134, 262], 0, False),
    "cc.warc.gz": (1, 1, {}, [], 0, True),
    "example-bad-non-chunked.warc.gz": (
        6, 1, {"warcinfo": 2, "request": 2, "revisit": 1}, [], 1, True),
    "example-bad.warc.gz.bad": (6, 2, {"warcinfo": 1, "request": 2, "revisit": 1}, [], 1, True),
    "example-digest.warc": (4, 0, {"request": 4}, [], 0, True),
    "example-iana.org-chunked.warc": (3, 1, {"warcinfo": 1, "request": 1}, [], 0, True),
    "example-resource.warc.gz": (3, 1, {"warcinfo": 2}, [], 0, True),
    "example-space-in-target-uri.warc.gz": (
        2, 0, {"warcinfo": 1, "non_html:image/png": 1}, [], 0, True),
    "example-space-in-url.arc": (2, 1, {"warcinfo": 1}, [151], 0, False),
    "example-trunc.warc": (4, 1, {"warcinfo": 2, "request": 1}, [1197], 0, False),
    "example-wget-bad-target-uri.warc.gz": (
        6, 1, {"warcinfo": 1, "request": 1, "metadata": 1, "non_html:text/plain": 2}, [], 0,
        True),
    "example-wrong-chunks.warc.gz": (2, 1, {"request": 1}, [], 1, True),
    "example.arc": (2, 1, {"warcinfo": 1}, [], 0, True),
    "example.arc.gz": (2, 1, {"warcinfo": 1}, [], 0, True),
    "example.warc": (6, 1, {"warcinfo": 2, "request": 2, "revisit": 1}, [], 0, True),
    "example.warc.gz": (6, 1, {"warcinfo": 2, "request": 2, "revisit": 1}, [], 0, True),
    "gzip_extra_sl.warc.gz": (1, 0, {"warcinfo": 1}, [], 0, True),
    "post-test.warc.gz": (6, 0, {"non_html:application/json": 3, "request": 3}, [], 0, True),
}


def test_every_sample_file_has_an_expectation():
    assert WARC_DIR.is_dir(), f"shared WARC samples not found at {WARC_DIR}"
    assert sorted(EXPECTED) == WARC_FILES


@pytest.mark.parametrize("name", WARC_FILES)
def test_sample_file_accounting(name):
    records, stats = read_all(WARC_DIR / name, name)
    read, html, skipped, error_offsets, n_warnings, completed = EXPECTED[name]
    assert stats.file == name
    assert stats.records_read == read
    assert stats.html_records == html == len(records)
    assert stats.skipped == skipped
    assert stats.records_read == stats.html_records + sum(stats.skipped.values())
    assert [e["offset"] for e in stats.errors] == error_offsets
    assert all(isinstance(e["error"], str) and e["error"] for e in stats.errors)
    assert len(stats.warnings) == n_warnings
    assert stats.reached_end is True
    assert stats.completed is completed
    assert stats.bytes_read == (WARC_DIR / name).stat().st_size
    assert stats.seconds >= 0
    for rec in records:
        assert rec.warc_file == name
        assert rec.record_type in ("response", "resource")
        assert rec.payload.strip()
        assert sniff_html(rec.payload) or rec.content_type in ("text/html",
                                                               "application/xhtml+xml")


@pytest.mark.parametrize("name", WARC_FILES)
def test_sample_file_streamed_without_seek_or_tell(name):
    """Same result from a stream that cannot seek/tell and returns short reads."""

    class Trickle:
        def __init__(self, data):
            self._b = io.BytesIO(data)

        def read(self, n=-1):
            return self._b.read(min(n, 97) if n and n > 0 else n)

    data = (WARC_DIR / name).read_bytes()
    ref, ref_stats = read_all(data, name)
    stats = WarcFileStats()
    got = list(iter_html_records(Trickle(data), name, stats))
    assert [(r.record_id, r.offset, r.payload, r.notes) for r in got] == \
        [(r.record_id, r.offset, r.payload, r.notes) for r in ref]
    assert stats.skipped == ref_stats.skipped
    assert stats.errors == ref_stats.errors


@pytest.mark.parametrize("name", ["example.warc", "example.warc.gz", "example.arc",
                                  "example.arc.gz", "cc.warc.gz", "example-resource.warc.gz",
                                  "example-iana.org-chunked.warc",
                                  "example-wget-bad-target-uri.warc.gz"])
def test_offsets_match_warcio(name):
    records, _ = read_all(WARC_DIR / name, name)
    html_offsets = []
    with open(WARC_DIR / name, "rb") as fh:
        it = ArchiveIterator(fh, arc2warc=True)
        for rec in it:
            ctype = (rec.http_headers.get_header("Content-Type") if rec.http_headers
                     else rec.content_type) or ""
            if rec.rec_type in ("response", "resource") and "html" in ctype:
                html_offsets.append(it.get_record_offset())
    assert [r.offset for r in records] == html_offsets
    assert records


def test_example_warc_html_record():
    (rec,), stats = read_all(WARC_DIR / "example.warc.gz", "example.warc.gz")
    assert rec.record_id == "<urn:uuid:a9c51e3e-0221-11e7-bf66-0242ac120005>"
    assert rec.offset == 784
    assert rec.url == "http://example.com/"
    assert rec.warc_date == "2017-03-06T04:02:06Z"
    assert rec.http_status == 200
    assert rec.content_type == "text/html"
    assert rec.http_charset is None
    assert "content-encoding:gzip" in rec.notes          # stored gzip-encoded, decoded here
    assert rec.payload.startswith(b"<!doctype html>")
    assert len(rec.payload) == EXAMPLE_PAGE_LEN
    assert rec.payload_truncated is False
    plain, _ = read_all(WARC_DIR / "example.warc", "example.warc")
    assert plain[0].payload == rec.payload and plain[0].offset == 1197


def test_chunked_payload_stored_raw_is_dechunked():
    (rec,), _ = read_all(WARC_DIR / "example-iana.org-chunked.warc")
    raw = (WARC_DIR / "example-iana.org-chunked.warc").read_bytes()
    assert b"\r\n\r\n001c37\r\n<!doctype html>" in raw      # one chunk of 0x1c37 bytes
    assert "dechunked" in rec.notes
    assert rec.payload.startswith(b"<!doctype html>")
    assert rec.payload.rstrip().endswith(b"</html>")
    assert len(rec.payload) == 0x1C37
    assert b"001c37" not in rec.payload
    assert not any(line.strip() in (b"0", b"001c37") for line in rec.payload.splitlines())
    assert rec.http_charset == "utf-8" and rec.url == "http://www.iana.org/"


@pytest.mark.parametrize("name,offset", [("example.arc", 151), ("example.arc.gz", 171)])
def test_arc_files(name, offset):
    (rec,), stats = read_all(WARC_DIR / name, name)
    assert rec.record_id == f"{name}:{offset}"          # ARC has no ids: stable synthetic one
    assert rec.offset == offset
    assert "arc" in rec.notes and "synthetic-id" in rec.notes
    assert rec.url == "http://example.com/"
    assert rec.warc_date == "2014-02-16T05:02:21Z"
    assert rec.http_status == 200 and rec.content_type == "text/html"
    assert rec.payload.startswith(b"<!doctype html>")
    again, _ = read_all(WARC_DIR / name, name)
    assert again[0].record_id == rec.record_id


def test_bad_arc_invalid_lengths_are_damaged():
    records, stats = read_all(WARC_DIR / "bad.arc", "bad.arc")
    assert records == []
    assert [e["error"] for e in stats.errors] == [
        "invalid Content-Length '-1'", "invalid Content-Length '-1'",
        "invalid Content-Length 'abc'"]


def test_resource_records_are_yielded():
    (rec,), _ = read_all(WARC_DIR / "example-resource.warc.gz")
    assert rec.record_type == "resource"
    assert rec.http_status is None
    assert rec.content_type == "text/html" and rec.http_charset == "utf-8"
    assert rec.url == "http://example.com/"
    assert rec.payload.startswith(b"<!DOCTYPE html>")
    assert len(rec.payload) == 1303


def test_bad_target_uris():
    (rec,), _ = read_all(WARC_DIR / "example-space-in-url.arc")
    assert rec.url == ("http://example.com/index.cfm?FuseAction=Email&EmailTitle="
                       "Examples%20From%20The%20Live%20Web&IsPopUp=False")
    assert "record-truncated-payload-complete" in rec.notes
    assert len(rec.payload) == EXAMPLE_PAGE_LEN  # its HTTP length: the ARC's record separator is no part of it
    (rec,), _ = read_all(WARC_DIR / "example-wget-bad-target-uri.warc.gz")
    assert rec.url == "http://example.com/"


def test_whole_file_gzip_is_read_completely():
    records, stats = read_all(WARC_DIR / "example-bad.warc.gz.bad")
    assert [r.url for r in records] == ["http://example.com?example=1",
                                        "http://www.iana.org/domains/example"]
    assert [r.http_status for r in records] == [200, 302]   # non-200 HTML is kept
    assert all(r.offset == 0 for r in records)              # one gzip member
    assert "share one gzip member" in stats.warnings[0]["warning"]
    records, _ = read_all(WARC_DIR / "example-bad-non-chunked.warc.gz")
    assert len(records[0].payload) == EXAMPLE_PAGE_LEN


def test_record_split_across_gzip_members_is_joined():
    (rec,), stats = read_all(WARC_DIR / "example-wrong-chunks.warc.gz")
    assert "spans-gzip-members" in rec.notes
    assert rec.payload.startswith(b"<!doctype html>")
    assert rec.payload.rstrip().endswith(b"</html>")
    assert len(rec.payload) == EXAMPLE_PAGE_LEN
    assert stats.skipped == {"request": 1}


def test_wrong_content_length_in_plain_warc():
    (rec,), stats = read_all(WARC_DIR / "example-trunc.warc")
    assert stats.errors == [{"offset": 1197, "resync_offset": 2566,
                             "error": "record block not followed by a blank line "
                                      "(Content-Length wrong?)"}]
    assert "content-length-mismatch" in rec.notes
    assert "content-encoding:gzip" in rec.notes           # gzip trailer cut: still decoded
    assert len(rec.payload) == EXAMPLE_PAGE_LEN


# --------------------------------------------------------------------------------------------
# Generated WARCs
# --------------------------------------------------------------------------------------------

def _pages(n=6):
    return [(f"http://example.test/p{i}.html",
             (f"<!DOCTYPE html><html><body><p>page {i} " + "text " * (40 + 30 * i)
              + "</p></body></html>").encode()) for i in range(n)]


def _cleaneval_pages(limit=8):
    files = sorted((DATA / "cleaneval-dev" / "html").glob("*.html"))[:limit]
    return [(f"http://cleaneval.test/{p.name}", p.read_bytes()) for p in files]


@pytest.mark.parametrize("gz", [True, False])
def test_write_html_warc_round_trip(tmp_path, gz):
    pages = _pages() + _cleaneval_pages()
    out = tmp_path / ("t.warc.gz" if gz else "t.warc")
    n = write_html_warc(pages, out, date="2024-01-02T03:04:05Z", with_requests=True, gzip=gz,
                        charset="utf-8")
    assert n == len(pages)
    records, stats = read_all(out)
    assert stats.completed and not stats.errors and not stats.warnings
    assert stats.records_read == 1 + 2 * n
    assert stats.skipped == {"warcinfo": 1, "request": n}
    assert [(r.url, r.payload) for r in records] == pages
    assert all(r.http_status == 200 and r.content_type == "text/html"
               and r.http_charset == "utf-8" and r.warc_date == "2024-01-02T03:04:05Z"
               for r in records)
    assert len({r.record_id for r in records}) == n
    offsets = [r.offset for r in records]
    assert offsets == sorted(offsets) and len(set(offsets)) == n
    # deterministic
    first = out.read_bytes()
    write_html_warc(pages, out, date="2024-01-02T03:04:05Z", with_requests=True, gzip=gz,
                    charset="utf-8")
    assert out.read_bytes() == first


def test_write_html_warc_one_gzip_member_per_record(tmp_path):
    out = tmp_path / "m.warc.gz"
    write_html_warc(_pages(3), out, date="2024-01-01", with_requests=True)
    data = out.read_bytes()
    members = 0
    while data:
        d = zlib.decompressobj(31)
        d.decompress(data)
        assert d.eof
        data = d.unused_data
        members += 1
    assert members == 1 + 2 * 3
    plain = gzip.decompress(out.read_bytes())
    assert b"Content-Type: text/html\r\n" in plain and b"charset" not in plain.split(
        b"\r\n\r\n<!DOCTYPE")[0].split(b"HTTP/1.1 200 OK")[1]
    assert b"Server: make_warc/1.0\r\n" in plain and b"Date: Mon, 01 Jan 2024" in plain


def _cut_points(path):
    with open(path, "rb") as fh:
        it = ArchiveIterator(fh)
        return [(it.get_record_offset(), it.get_record_length(), rec.rec_type) for rec in it]


def test_truncated_last_member_keeps_earlier_records(tmp_path):
    pages = _pages(5)
    out = tmp_path / "t.warc.gz"
    write_html_warc(pages, out, date="2024-01-01")
    data = out.read_bytes()
    members = _cut_points(out)
    last_start = members[-1][0]
    cut = data[:last_start + (len(data) - last_start) // 2]
    records, stats = read_all(cut)
    assert [r.payload for r in records] == [p[1] for p in pages[:-1]]
    assert stats.errors and stats.errors[0]["offset"] == last_start
    assert stats.completed is False and stats.reached_end is True


@pytest.mark.parametrize("gz", [True, False])
def test_truncation_at_every_byte(tmp_path, gz):
    """Cut a small WARC at every byte: never raises, accounting holds, and every record
    that lies entirely before the cut is yielded unchanged."""
    pages = _pages(3)
    out = tmp_path / ("t.warc.gz" if gz else "t.warc")
    write_html_warc(pages, out, date="2024-01-01", with_requests=True, gzip=gz)
    data = out.read_bytes()
    responses = [(o, o + n) for o, n, t in _cut_points(out) if t == "response"]
    for cut in range(0, len(data) + 1, 3 if gz else 11):
        records, stats = read_all(data[:cut])
        complete = [i for i, (o, end) in enumerate(responses) if end <= cut]
        got = {r.offset: r for r in records}
        for i in complete:
            assert got[responses[i][0]].payload == pages[i][1]
        assert len(records) <= len(complete) + 1
        for r in records:
            assert r.payload in [p[1] for p in pages]


def test_corrupt_member_in_the_middle_resyncs(tmp_path):
    pages = _pages(5)
    out = tmp_path / "c.warc.gz"
    write_html_warc(pages, out, date="2024-01-01")
    data = bytearray(out.read_bytes())
    members = _cut_points(out)
    start, length, rtype = members[3]          # the 3rd response (warcinfo is member 0)
    assert rtype == "response"
    mid = start + length // 2
    data[mid:mid + 40] = bytes(40)
    records, stats = read_all(bytes(data))
    assert [r.payload for r in records] == [pages[i][1] for i in (0, 1, 3, 4)]
    # The member is small: zlib fails before its header could be parsed, so it is not a
    # record (an error only). A big member failing after its header is "damaged" (below).
    assert stats.skipped == {"warcinfo": 1}
    (err,) = stats.errors
    assert err["offset"] == start and err["resync_offset"] == members[4][0]
    assert "gzip" in err["error"]
    assert stats.completed is False and stats.reached_end is True


def test_corrupt_big_member_after_its_header_is_damaged(tmp_path):
    big = (b"<html><body>" + random.Random(0).randbytes(300_000).hex().encode()
           + b"</body></html>")                      # 600 kB that gzip cannot shrink much
    pages = [("http://a.test/1", HTML), ("http://a.test/2", big), ("http://a.test/3", HTML)]
    out = tmp_path / "b.warc.gz"
    write_html_warc(pages, out, date="2024-01-01")
    data = bytearray(out.read_bytes())
    members = _cut_points(out)
    start, length, _ = members[2]
    data[start + length // 2:start + length // 2 + 64] = bytes(64)
    records, stats = read_all(bytes(data), max_payload_bytes=100_000)
    assert [r.url for r in records] == ["http://a.test/1", "http://a.test/3"]
    assert stats.skipped == {"warcinfo": 1, "damaged": 1}
    (err,) = stats.errors
    assert err["offset"] == start and err["resync_offset"] == members[3][0]


def test_garbage_between_gzip_members_resyncs(tmp_path):
    pages = _pages(4)
    out = tmp_path / "g.warc.gz"
    write_html_warc(pages, out, date="2024-01-01")
    data = out.read_bytes()
    members = _cut_points(out)
    pos = members[2][0]
    junk = b"\x00garbage\xff" * 10
    bad = data[:pos] + junk + data[pos:]
    records, stats = read_all(bad)
    assert [r.payload for r in records] == [p[1] for p in pages]
    assert [e["offset"] for e in stats.errors] == [pos]
    assert stats.errors[0]["resync_offset"] == pos + len(junk)


def test_plain_warc_with_bytes_missing_resyncs(tmp_path):
    pages = _pages(4)
    out = tmp_path / "p.warc"
    write_html_warc(pages, out, date="2024-01-01", gzip=False)
    data = bytearray(out.read_bytes())
    members = _cut_points(out)
    start, length, _ = members[2]
    del data[start + length // 2:start + length // 2 + 30]   # record 2 now 30 bytes short
    records, stats = read_all(bytes(data))
    assert [r.url for r in records] == [p[0] for p in pages]   # record 2 kept (see notes)
    assert "content-length-mismatch" in records[1].notes
    assert stats.errors[0]["offset"] == start
    assert stats.errors[0]["resync_offset"] == members[3][0] - 30
    assert stats.skipped == {"warcinfo": 1}


def test_garbage_in_plain_warc_resyncs():
    data = (WARC_DIR / "example.warc").read_bytes()
    bad = data[:1197] + b"this is not a warc header\r\n\r\n" + data[1197:]
    records, stats = read_all(bad)
    assert len(records) == 1 and len(records[0].payload) == EXAMPLE_PAGE_LEN
    assert stats.errors[0]["offset"] == 1197
    assert stats.errors[0]["resync_offset"] == 1197 + 29
    assert stats.skipped == {"warcinfo": 2, "request": 2, "revisit": 1}


def test_truncated_gzip_file(tmp_path):
    data = (WARC_DIR / "example.warc.gz").read_bytes()
    records, stats = read_all(data[:1500])       # cut inside the response member (784..2012)
    assert records == []
    assert stats.records_read == 3 and stats.skipped == {"warcinfo": 2, "damaged": 1}
    assert stats.errors[0]["offset"] == 784
    assert stats.completed is False


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_random_damage_never_raises(data):
    base = (WARC_DIR / data.draw(st.sampled_from(
        ["example.warc.gz", "example.warc", "example.arc", "example-iana.org-chunked.warc",
         "cc.warc.gz"]))).read_bytes()
    buf = bytearray(base)
    for _ in range(data.draw(st.integers(1, 4))):
        kind = data.draw(st.sampled_from(["flip", "delete", "insert", "cut"]))
        pos = data.draw(st.integers(0, max(0, len(buf) - 1)))
        if kind == "flip" and buf:
            buf[pos] ^= data.draw(st.integers(1, 255))
        elif kind == "delete":
            del buf[pos:pos + data.draw(st.integers(1, 64))]
        elif kind == "insert":
            buf[pos:pos] = data.draw(st.binary(min_size=1, max_size=64))
        else:
            del buf[pos:]
    records, stats = read_all(bytes(buf), max_payload_bytes=data.draw(
        st.sampled_from([10, 1000, 10_000_000])))
    assert stats.html_records == len(records)
    assert isinstance(stats.completed, bool)


# --------------------------------------------------------------------------------------------
# Hand-built records: payload handling, selection, URLs
# --------------------------------------------------------------------------------------------

def warc_record(block: bytes, rec_type=b"response", url=b"http://example.test/",
                extra: bytes = b"", record_id=b"<urn:uuid:00000000-0000-0000-0000-000000000001>",
                content_type=b"application/http; msgtype=response", gz=True) -> bytes:
    head = (b"WARC/1.0\r\nWARC-Type: " + rec_type + b"\r\nWARC-Record-ID: " + record_id
            + b"\r\nWARC-Date: 2024-01-01T00:00:00Z\r\nWARC-Target-URI: " + url
            + b"\r\nContent-Type: " + content_type + b"\r\n" + extra
            + b"Content-Length: " + str(len(block)).encode() + b"\r\n\r\n")
    rec = head + block + b"\r\n\r\n"
    return gzip.compress(rec, mtime=0) if gz else rec


def http_block(body: bytes, headers: list[tuple[str, str]] | None = None,
               status=b"200 OK") -> bytes:
    hdrs = headers if headers is not None else [("Content-Type", "text/html")]
    head = b"HTTP/1.1 " + status + b"\r\n" + b"".join(
        f"{k}: {v}\r\n".encode() for k, v in hdrs) + b"\r\n"
    return head + body


HTML = b"<html><head><title>t</title></head><body><p>Hello</p></body></html>"


def test_gzip_content_encoding_is_decoded():
    body = gzip.compress(HTML, mtime=0)
    data = warc_record(http_block(body, [("Content-Type", "text/html; charset=ISO-8859-1"),
                                         ("Content-Encoding", "gzip")]))
    (rec,), _ = read_all(data)
    assert rec.payload == HTML
    assert "content-encoding:gzip" in rec.notes
    assert rec.http_charset == "iso-8859-1"


@pytest.mark.parametrize("coding,encode", [
    ("deflate", lambda b: zlib.compress(b)),
    ("deflate", lambda b: zlib.compress(b)[2:-4]),                 # raw deflate (common)
    ("x-gzip", lambda b: gzip.compress(b, mtime=0)),
])
def test_other_content_encodings(coding, encode):
    data = warc_record(http_block(encode(HTML), [("Content-Type", "text/html"),
                                                 ("Content-Encoding", coding)]))
    (rec,), _ = read_all(data)
    assert rec.payload == HTML


def test_brotli_content_encoding():
    brotli = pytest.importorskip("brotli")
    data = warc_record(http_block(brotli.compress(HTML), [("Content-Type", "text/html"),
                                                          ("Content-Encoding", "br")]))
    (rec,), _ = read_all(data)
    assert rec.payload == HTML and "content-encoding:br" in rec.notes


def test_corrupt_gzip_payload_keeps_decoded_prefix():
    body = (b"<html><body>" + random.Random(1).randbytes(20_000).hex().encode()
            + b"</body></html>")
    gz = bytearray(gzip.compress(body, mtime=0))
    gz[len(gz) // 2:len(gz) // 2 + 50] = bytes(50)
    data = warc_record(http_block(bytes(gz), [("Content-Type", "text/html"),
                                              ("Content-Encoding", "gzip")]))
    (rec,), _ = read_all(data)
    assert "content-encoding:gzip:error" in rec.notes
    assert rec.payload.startswith(b"<html><body>") and 0 < len(rec.payload) < len(body)


def test_content_encoding_header_on_decoded_body_keeps_bytes():
    for coding in ("gzip", "deflate"):
        data = warc_record(http_block(HTML, [("Content-Type", "text/html"),
                                             ("Content-Encoding", coding)]))
        (rec,), _ = read_all(data)
        assert rec.payload == HTML and f"content-encoding:{coding}:not-encoded" in rec.notes


def test_chunked_and_gzipped():
    gz = gzip.compress(HTML, mtime=0)
    chunked = b"".join(b"%x\r\n%s\r\n" % (len(gz[i:i + 10]), gz[i:i + 10])
                       for i in range(0, len(gz), 10)) + b"0\r\n\r\n"
    data = warc_record(http_block(chunked, [("Content-Type", "text/html"),
                                            ("Transfer-Encoding", "chunked"),
                                            ("Content-Encoding", "gzip")]))
    (rec,), _ = read_all(data)
    assert rec.payload == HTML
    assert rec.notes == ["dechunked", "content-encoding:gzip"]


def test_transfer_encoding_chunked_lie_keeps_raw_bytes():
    data = warc_record(http_block(HTML, [("Content-Type", "text/html"),
                                         ("Transfer-Encoding", "chunked")]))
    (rec,), _ = read_all(data)
    assert rec.payload == HTML and "chunked-header-not-chunked" in rec.notes


def test_chunk_size_larger_than_body_is_not_chunked():
    body = b"deadbeef\r\n<html><body>x</body></html>"
    data = warc_record(http_block(body, [("Content-Type", "text/html"),
                                         ("Transfer-Encoding", "chunked")]))
    (rec,), _ = read_all(data)
    assert rec.payload == body and "chunked-header-not-chunked" in rec.notes


def test_broken_chunking_midway():
    body = b"f\r\n<html><body>abc\r\nzz-not-a-size\r\n</body></html>"
    data = warc_record(http_block(body, [("Content-Type", "text/html"),
                                         ("Transfer-Encoding", "chunked")]))
    (rec,), _ = read_all(data)
    assert rec.payload == b"<html><body>abczz-not-a-size\r\n</body></html>"
    assert "chunked-invalid" in rec.notes


def test_decompression_bomb_is_capped():
    bomb = gzip.compress(b"<html><body><p>" + bytes(50_000_000), compresslevel=6, mtime=0)
    assert len(bomb) < 100_000
    data = warc_record(http_block(bomb, [("Content-Type", "text/html"),
                                         ("Content-Encoding", "gzip")]))
    (rec,), stats = read_all(data)
    assert rec.payload_truncated is True
    assert len(rec.payload) == 10_000_000
    assert rec.payload.startswith(b"<html><body><p>\x00")
    assert stats.truncated_payloads == 1
    (rec,), _ = read_all(data, max_payload_bytes=1000)
    assert len(rec.payload) == 1000 and rec.payload_truncated


def test_large_plain_payload_is_cut_and_rest_drained():
    big = b"<html><body>" + b"a" * 300_000 + b"</body></html>"
    data = warc_record(http_block(big)) + warc_record(http_block(HTML), url=b"http://b.test/")
    records, stats = read_all(data, max_payload_bytes=100_000)
    assert [len(r.payload) for r in records] == [100_000, len(HTML)]
    assert [r.payload_truncated for r in records] == [True, False]
    assert records[1].url == "http://b.test/"


@pytest.mark.parametrize("ctype,body,expected", [
    ("text/plain", b"\xef\xbb\xbf  <!DOCTYPE html><html></html>", "html"),
    ("application/octet-stream", b"\n\n<HTML><BODY>x</BODY></HTML>", "html"),
    (None, b"<div>hello</div>", "html"),
    ("text/plain", b"just some text <html>", "non_html:text/plain"),
    ("application/octet-stream", b"\x89PNG\r\n\x1a\n....", "non_html:application/octet-stream"),
    ("image/png", b"<html>looks like html but typed as png</html>", "non_html:image/png"),
    ("application/xhtml+xml", b"<?xml version='1.0'?><html/>", "html"),
    ("TEXT/HTML; Charset=\"UTF-8\"", b"not sniffable but typed as html", "html"),
])
def test_html_selection(ctype, body, expected):
    headers = [("Content-Type", ctype)] if ctype is not None else []
    records, stats = read_all(warc_record(http_block(body, headers)))
    if expected == "html":
        assert len(records) == 1 and records[0].payload == body
        if ctype in (None, "text/plain", "application/octet-stream"):
            assert "sniffed-html" in records[0].notes
    else:
        assert records == [] and stats.skipped == {expected: 1}


def test_non_200_html_is_kept_and_empty_payload_skipped():
    data = (warc_record(http_block(HTML, status=b"404 Not Found"))
            + warc_record(http_block(b"", status=b"204 No Content"))
            + warc_record(http_block(b"  \r\n ")))
    records, stats = read_all(data)
    assert [r.http_status for r in records] == [404]
    assert stats.skipped == {"empty_payload": 2}


def test_response_without_http_headers_keeps_first_line():
    data = warc_record(b"<html>\n<body>raw page, no HTTP headers</body></html>")
    (rec,), _ = read_all(data)
    assert rec.payload.startswith(b"<html>\n<body>") and rec.http_status is None
    assert "sniffed-html" in rec.notes


def test_record_types_are_counted():
    data = b"".join([
        warc_record(b"a: b\r\n", rec_type=b"warcinfo", content_type=b"application/warc-fields"),
        warc_record(b"GET / HTTP/1.1\r\n\r\n", rec_type=b"request"),
        warc_record(b"x: y\r\n", rec_type=b"metadata"),
        warc_record(http_block(b""), rec_type=b"revisit"),
        warc_record(HTML, rec_type=b"conversion", content_type=b"text/html"),
        warc_record(HTML, rec_type=b"continuation", content_type=b"text/html"),
        warc_record(HTML, rec_type=b"resource", content_type=b"text/html"),
        warc_record(b"hello", rec_type=b"resource", content_type=b"text/plain"),
        warc_record(HTML, rec_type=b"strange"),
    ])
    records, stats = read_all(data)
    assert [r.record_type for r in records] == ["resource"]
    assert stats.skipped == {"warcinfo": 1, "request": 1, "metadata": 1, "revisit": 1,
                             "conversion": 1, "continuation": 1, "non_html:text/plain": 1,
                             "unknown_type": 1}


def test_distinct_mime_keys_are_capped():
    data = b"".join(warc_record(http_block(b"x", [("Content-Type", f"image/x-{i}")]))
                    for i in range(MAX_MIME_KEYS + 10))
    _, stats = read_all(data)
    assert len(stats.skipped) == MAX_MIME_KEYS + 1
    assert stats.skipped["non_html:other"] == 10


def test_missing_record_id_and_invalid_utf8_url():
    data = warc_record(http_block(HTML), url=b"http://ex.test/caf\xe9 au lait",
                       record_id=b"", gz=False)
    data = data.replace(b"WARC-Record-ID: \r\n", b"")
    (rec,), _ = read_all(data, name="f.warc")
    assert rec.record_id == "f.warc:0" and "synthetic-id" in rec.notes
    assert rec.url == "http://ex.test/caf%E9%20au%20lait"
    data = warc_record(http_block(HTML), url="http://ex.test/café".encode())
    (rec,), _ = read_all(data)
    assert rec.url == "http://ex.test/café"
    data = warc_record(http_block(HTML), url="http://ex.test/café".encode() + b"\xff\t")
    (rec,), _ = read_all(data)
    assert rec.url == "http://ex.test/café%FF"


def test_missing_content_length_resyncs():
    first = warc_record(http_block(HTML), gz=False).replace(b"Content-Length", b"X-Length")
    data = first + warc_record(http_block(HTML), url=b"http://second.test/", gz=False)
    records, stats = read_all(data)
    assert [r.url for r in records] == ["http://second.test/"]
    assert stats.skipped == {"damaged": 1}
    assert stats.errors[0]["offset"] == 0 and stats.errors[0]["resync_offset"] == len(first)


def test_stream_error_is_recorded_not_raised():
    data = (WARC_DIR / "example.warc").read_bytes()

    class Failing(io.BytesIO):
        def read(self, n=-1):
            if self.tell() > 2000:
                raise OSError("connection reset")
            return super().read(n)

    stats = WarcFileStats()
    records = list(iter_html_records(Failing(data), "f", stats))
    assert stats.accounted
    assert any("connection reset" in e["error"] for e in stats.errors)
    assert stats.reached_end is False and stats.completed is False
    assert len(records) <= 1


def test_consumer_stopping_early_keeps_stats_consistent():
    data = b"".join(warc_record(http_block(HTML), url=f"http://e.test/{i}".encode())
                    for i in range(5))
    stats = WarcFileStats()
    it = iter_html_records(io.BytesIO(data), "f", stats)
    next(it)
    next(it)
    it.close()
    assert stats.html_records == 2 and stats.accounted
    assert stats.completed is False and stats.reached_end is False


def test_sniff_html():
    assert sniff_html(b"<!doctype html>")
    assert sniff_html(b"  \r\n<html lang=en>")
    assert sniff_html(b"<!-- comment -->")
    assert sniff_html(b"<p>x")
    assert sniff_html(b"<br/>")
    assert sniff_html("\ufeff<html>".encode("utf-16"))
    assert not sniff_html(b"<pre>x")          # <p must be followed by space, > or /
    assert not sniff_html(b"<?xml version='1.0'?><rss>")
    assert not sniff_html(b"{\"a\": 1}")
    assert not sniff_html(b"")


# --------------------------------------------------------------------------------------------
# scripts/make_warc.py
# --------------------------------------------------------------------------------------------

def _load_script():
    return load_script("make_warc")


def test_make_warc_cli(tmp_path):
    make_warc = _load_script()
    src = tmp_path / "mydata" / "html"
    src.mkdir(parents=True)
    (src / "10.html").write_bytes(b'<text id="http://real.test/a?b=1" title="t">\n<p>ten</p>')
    (src / "2.html").write_bytes(b"<html><body>two</body></html>")
    (src / "notes.txt").write_bytes(b"ignored")
    out = tmp_path / "o.warc.gz"
    rc = make_warc.main([str(tmp_path / "mydata"), "--out", str(out), "--repeat", "2",
                         "--with-requests", "--date", "2024-05-06T07:08:09Z",
                         "--charset", "windows-1252"])
    assert rc == 0
    records, stats = read_all(out)
    assert [r.url for r in records] == [
        "http://example.test/mydata/2.html", "http://real.test/a?b=1",
        "http://example.test/mydata/2.html?repeat=1", "http://real.test/a?b=1&repeat=1"]
    assert [r.payload for r in records] == [(src / "2.html").read_bytes(),
                                            (src / "10.html").read_bytes()] * 2
    assert stats.skipped == {"warcinfo": 1, "request": 4}
    assert {r.http_charset for r in records} == {"windows-1252"}
    assert {r.warc_date for r in records} == {"2024-05-06T07:08:09Z"}
    assert len({r.record_id for r in records}) == 4
    first = out.read_bytes()
    make_warc.main([str(src / "2.html"), str(src / "10.html"), "--out", str(out),
                    "--repeat", "2", "--with-requests", "--date", "2024-05-06T07:08:09Z",
                    "--charset", "windows-1252"])
    assert out.read_bytes() == first                       # deterministic
    make_warc.main([str(src), "--out", str(out), "--limit", "1", "--url-prefix",
                    "http://x.test/base"])
    records, _ = read_all(out)
    assert [r.url for r in records] == ["http://x.test/base/mydata/2.html"]
    assert records[0].http_charset is None


def test_make_warc_packs_gzip_compressed_pages_decompressed(tmp_path):
    """A saved `.html.gz` page (wcxb's pages are stored so) is packed as the page it holds, every gzip member of it,
    at the URL of its file; make_warc refused them before (issue 44)."""
    make_warc = _load_script()
    src = tmp_path / "pages"
    src.mkdir()
    page = b"<html><body><p>" + b"word " * 200 + b"</p></body></html>"
    (src / "a.html.gz").write_bytes(gzip.compress(page[:100], mtime=0) + gzip.compress(page[100:], mtime=0))
    (src / "b.html").write_bytes(b"<html><body>b</body></html>")
    out = tmp_path / "o.warc.gz"
    assert make_warc.main([str(src), "--out", str(out)]) == 0
    records, _ = read_all(out)
    assert [(r.url, r.payload) for r in records] == [("http://example.test/pages/a.html.gz", page),
                                                     ("http://example.test/pages/b.html", (src / "b.html").read_bytes())]


def test_make_warc_help(capsys):
    make_warc = _load_script()
    with pytest.raises(SystemExit) as exc:
        make_warc.main(["--help"])
    assert exc.value.code == 0
    assert "--url-prefix" in capsys.readouterr().out


@pytest.mark.parametrize("block", [
    b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n" + HTML,  # no blank line
    b"HTTP/1.1 200 OK\r\n" + HTML,  # no headers, no blank line
    b"HTTP/1.1 200 OK\r\nContent-Type text/html\r\n\x00\xff junk: \r\n" + HTML,  # garbage lines
])
def test_broken_http_header_block_keeps_the_page(block):
    (rec,), stats = read_all(warc_record(block))
    assert rec.payload == HTML and rec.http_status == 200
    assert "http-headers-unterminated" in rec.notes and stats.accounted


def test_warc_0_18_and_0_17_records_are_read():
    for version in (b"WARC/0.18", b"WARC/0.17"):
        for gz in (True, False):
            raw = warc_record(http_block(HTML), gz=False).replace(b"WARC/1.0", version)
            (rec,), stats = read_all(gzip.compress(raw, mtime=0) if gz else raw)
            assert rec.payload == HTML and stats.completed, (version, gz)


# --------------------------------------------------------------------------------------------
# zstd-compressed WARCs (.warc.zst): read with or without a dictionary, refused clearly otherwise
# --------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def plain_warc(tmp_path_factory) -> Path:
    """A plain WARC of 8 shared pages, built by scripts/make_warc.py."""
    import subprocess
    import sys

    out = tmp_path_factory.mktemp("zst") / "pages.warc"
    subprocess.run([sys.executable, str(ROOT / "scripts" / "make_warc.py"), str(DATA / "cleaneval-dev" / "html"),
                    "--limit", "8", "--no-gzip", "--with-requests", "--date", "2024-05-06T07:08:09Z",
                    "--out", str(out)], check=True, capture_output=True)
    return out


def _same_records(a: list[HtmlRecord], b: list[HtmlRecord]) -> bool:
    return [(r.offset, r.record_id, r.url, r.payload) for r in a] == [(r.offset, r.record_id, r.url, r.payload)
                                                                       for r in b]


@pytest.mark.parametrize("dictionary,compress_dict", [(True, True), (True, False), (False, False)],
                         ids=["compressed-dictionary-frame", "raw-dictionary-frame", "no-dictionary"])
def test_zstd_warc_reads_as_the_plain_warc(plain_warc, tmp_path, dictionary, compress_dict):
    from zstd_warc import write_zstd_warc

    expected, plain_stats = read_all(plain_warc)
    zst = write_zstd_warc(plain_warc, tmp_path / "pages.warc.zst", dictionary=dictionary,
                          compress_dict=compress_dict)
    assert zst.stat().st_size < plain_warc.stat().st_size / 2
    recs, stats = read_all(zst)
    assert len(recs) == 8 and _same_records(recs, expected)  # offsets: of the decompressed WARC
    assert stats.records_read == plain_stats.records_read and stats.skipped == plain_stats.skipped
    assert stats.completed and not stats.errors and stats.accounted
    # the same bytes streamed without seek or tell in short reads, and under any name: recognised by content
    class Trickle:
        def __init__(self, data):
            self._b = io.BytesIO(data)

        def read(self, n=-1):
            return self._b.read(min(n, 97) if n and n > 0 else n)

    stats2 = WarcFileStats()
    again = list(iter_html_records(Trickle(zst.read_bytes()), "renamed.warc.gz", stats2))
    assert _same_records(again, expected) and stats2.completed


def test_zstd_warc_without_its_dictionary_is_refused_with_the_reason(plain_warc, tmp_path):
    from zstd_warc import write_zstd_warc

    zst = write_zstd_warc(plain_warc, tmp_path / "nodict.warc.zst", with_dict_frame=False)
    recs, stats = read_all(zst)
    assert recs == [] and stats.records_read == 0 and not stats.completed
    assert len(stats.errors) == 1 and stats.errors[0]["offset"] == 0
    assert "zstd" in stats.errors[0]["error"] and "dictionary" in stats.errors[0]["error"]
    # a dictionary frame cut short
    data = zst.read_bytes()
    from cleaner.warc import ZSTD_DICT_MAGIC

    recs, stats = read_all(ZSTD_DICT_MAGIC + (1000).to_bytes(4, "little") + data[:100])
    assert recs == [] and "dictionary frame cut short" in stats.errors[0]["error"]


def _declare_huge_length(warc: Path, index: int, gz: bool) -> tuple[bytes, int]:
    """The bytes of `warc` with record `index`'s Content-Length (of the WARC header) set to 999999999: a
    record that claims to run far past the end of the file. Also the offset of that record."""
    import re

    data = warc.read_bytes()
    if not gz:
        starts = [m.start() for m in re.finditer(rb"(?:^|\r\n)WARC/1\.[01]\r\n", data)]
        starts = [s + 2 if data[s:s + 2] == b"\r\n" else s for s in starts]
        s = starts[index]
        head_end = data.index(b"\r\n\r\n", s)
        head = re.sub(rb"Content-Length: \d+", b"Content-Length: 999999999", data[s:head_end])
        return data[:s] + head + data[head_end:], s
    members, rest, offsets, pos = [], data, [], 0
    while rest:
        d = zlib.decompressobj(31)
        plain = d.decompress(rest)
        offsets.append(pos)
        pos += len(rest) - len(d.unused_data)
        members.append(gzip.compress(plain) if len(members) != index else gzip.compress(
            re.sub(rb"Content-Length: \d+", b"Content-Length: 999999999", plain, count=1)))
        rest = d.unused_data
    offset = sum(len(m) for m in members[:index])
    return b"".join(members), offset


@pytest.mark.parametrize("gz", [False, True])
def test_a_huge_content_length_in_the_middle_resyncs_at_the_next_record(tmp_path, gz):
    """A record declaring Content-Length 999999999 in the middle of a file swallowed every record after it (the
    file ended there, `incomplete`, the page's text garbled with the next records): the reader resynchronises at
    the next record header, as after other damage, and keeps the damaged record's own page (its HTTP length)."""
    from conftest import make_warc

    pages = sorted((DATA / "cleaneval-final" / "html").glob("*.html"))[:40]
    built = make_warc(tmp_path / ("w.warc.gz" if gz else "w.warc"), *map(str, pages),
                      "--repeat", "4", *([] if gz else ["--no-gzip"]))
    data, offset = _declare_huge_length(built, 16, gz)  # record 16: the 16th page (record 0 is the warcinfo)
    damaged = tmp_path / ("d.warc.gz" if gz else "d.warc")
    damaged.write_bytes(data)
    if not gz:  # more follows than the reader keeps behind it: it seeks back (a gzip member ends the record)
        assert len(data) - offset > 3 * (1 << 20)
    records, stats = read_all(damaged, resync_history_bytes=1)
    assert len(records) == 160 and stats.records_read == 161
    assert [r.payload for r in records] == [p.read_bytes() for p in pages] * 4  # nothing garbled, nothing lost
    (error,) = stats.errors
    assert error["offset"] == offset and error["error"].startswith("record truncated: ")
    assert error["resync_offset"] is not None and error["resync_offset"] > offset  # not the input's end

    class Pipe(io.RawIOBase):  # a stream that cannot seek (an HTTP body): the kept history is all there is
        def __init__(self, data):
            self._data = io.BytesIO(data)

        def readable(self):
            return True

        def readinto(self, buf):
            chunk = self._data.read(len(buf))
            buf[:len(chunk)] = chunk
            return len(chunk)

    small = data[:offset + 600_000] if not gz else data  # within the default history
    piped = list(iter_html_records(Pipe(small), "piped", st := WarcFileStats()))
    assert st.errors[0]["resync_offset"] is not None and len(piped) > 17


def test_a_record_cut_at_the_end_of_the_file_is_still_the_input_ending_there(tmp_path):
    """The resync after a too-long record finds no next record when the file was cut in its last record: the
    error keeps no resync offset (the job then calls the file `incomplete`)."""
    from conftest import make_warc

    built = make_warc(tmp_path / "w.warc", str(DATA / "cleaneval-dev" / "html"), "--limit", "5", "--no-gzip")
    data = built.read_bytes()
    records, stats = read_all(data[:-300])
    assert len(records) == 4 and stats.errors[-1]["error"].startswith("record truncated: ")
    assert stats.errors[-1].get("resync_offset") is None
