"""Streaming WARC/ARC reading with complete accounting: `iter_html_records` and `open_warc`.

The reader runs warcio (cleaner/warc/archive.py) from the current position; after damage it resynchronises
(cleaner/warc/recover.py) and runs it again. Each record's payload is read bounded, drained, dechunked and
content-decoded (cleaner/warc/codings.py), and kept when it is HTML (cleaner/warc/content.py).
"""

from __future__ import annotations

import io
import os
import re
import time
import urllib.parse
from collections.abc import Iterator
from typing import BinaryIO

from warcio.limitreader import LimitReader

from .archive import GzipDamage, RecordIterator
from .codings import dechunk, decode_content
from .content import (
    HTML_MIMES,
    SNIFF_MIMES,
    clean_str,
    clean_url,
    http_status,
    mime_and_charset,
    sniff_html,
)
from .records import DEFAULT_MAX_PAYLOAD_BYTES, MAX_ERRORS, MAX_MIME_KEYS, HtmlRecord, WarcFileStats
from .recover import HISTORY_BYTES, RewindableSource, StreamError, find_resync
from .zstd import ZstdInputError, zstd_or_plain

SKIPPED_TYPES = frozenset({"warcinfo", "request", "metadata", "revisit", "conversion",
                           "continuation"})
_READ_BLOCK = 1 << 16


def _read_bounded(stream, limit: int) -> bytes:
    """Up to `limit` bytes of `stream`. Asked for all that is left at once: warcio's reader (bounded by the
    record's length) joins its pieces once, where 64 KB reads joined here copied a long payload once more."""
    parts = []
    got = 0
    while got < limit:
        data = stream.read(limit - got)
        if not data:
            break
        parts.append(data)
        got += len(data)
    return b"".join(parts)


def _drain(stream) -> None:
    while stream.read(_READ_BLOCK):
        pass



def _split_tokens(value: str | None) -> list[str]:
    if not value:
        return []
    return [t.strip().lower() for t in value.split(",") if t.strip()]



class _Resync(Exception):
    def __init__(self, scan_from: int):
        super().__init__(scan_from)
        self.scan_from = scan_from


class _FileReader:
    def __init__(self, stream, file_name, stats, max_payload_bytes, history):
        self.src = RewindableSource(stream, history)
        self.file = file_name
        self.stats = stats
        self.cap = max(0, int(max_payload_bytes))
        self.mime_keys: set[str] = set()
        self.multi_member_warned = False
        self.shared_ordinal: dict[int, int] = {}
        self.pending_resync: int | None = None
        self.crossing_warned = False

    # --- one record ----------------------------------------------------------------------

    def _non_html_key(self, mime: str) -> str:
        key = mime or "unknown"
        if key not in self.mime_keys:
            if len(self.mime_keys) >= MAX_MIME_KEYS:
                return "non_html:other"
            self.mime_keys.add(key)
        return "non_html:" + key

    def _process(self, it: RecordIterator, record, offset: int, synthetic_id: str):
        """Returns ("html", HtmlRecord) or ("skip", reason). Raises _Resync."""
        stats = self.stats
        rec_headers = record.rec_headers
        rec_type = (record.rec_type or "").strip().lower()
        is_arc = it.last_format != "warc"
        notes: list[str] = []
        if is_arc:
            notes.append("arc")

        damaged = False
        cl = rec_headers.get_header("Content-Length")
        if cl is None:
            stats.add_error(offset, "record without Content-Length")
            raise _Resync(offset + 1)
        if not cl.strip().isdigit():
            stats.add_error(offset, f"invalid Content-Length {cl.strip()[:40]!r}")
            damaged = True

        http = record.http_headers or None
        reason = None
        sniff = False
        mime, charset = "", None
        if rec_type in SKIPPED_TYPES:
            reason = rec_type
        elif rec_type in ("response", "resource"):
            if rec_type == "response" and http:
                mime, charset = mime_and_charset(http.get_header("Content-Type"))
            else:
                mime, charset = mime_and_charset(rec_headers.get_header("Content-Type"))
            if mime in HTML_MIMES:
                pass
            elif mime in SNIFF_MIMES:
                sniff = True
            else:
                reason = self._non_html_key(mime)
        else:
            reason = "unknown_type"

        raw = b""
        raw_over = False
        reader = it.reader
        crossed_before = reader.crossed
        try:
            reader.cross_members = True
            if reason is None and not damaged:
                raw = it.http_prefix + _read_bounded(record.raw_stream,
                                                     self.cap + 1 - len(it.http_prefix))
                if len(raw) > self.cap:
                    raw, raw_over = raw[:self.cap], True
            _drain(record.raw_stream)
        finally:
            reader.cross_members = False
        crossed = reader.crossed > crossed_before
        mismatches = len(it.length_mismatch)
        it.read_to_end()

        if len(it.length_mismatch) > mismatches:
            stats.add_error(offset, "record block not followed by a blank line "
                                 "(Content-Length wrong?)")
            notes.append("content-length-mismatch")
            if reader.decompressor is None:
                # Uncompressed input: the next record may begin before or after the point
                # the wrong Content-Length leads to; look for it from this record on.
                self.pending_resync = offset + 1
        short = 0
        if isinstance(record.raw_stream, LimitReader) and record.raw_stream.limit > 0:
            short = record.raw_stream.limit
        short_msg = f"record truncated: {short} of {cl.strip()} block bytes missing"
        if short:
            # The input ended inside the declared block. Either it was cut here (a copy in progress), or the
            # declared length is wrong (Content-Length 999999999 in the middle of a file) and the block swallowed
            # the records after it: look for the next record from this one on, as after other damage. Only when
            # none follows is the input cut here (the file is then `incomplete`).
            self.pending_resync = offset + 1
        if crossed:
            notes.append("spans-gzip-members")
            if not self.crossing_warned:
                self.crossing_warned = True
                stats.add_warning(offset, "record block continues in the next gzip member(s) "
                                       "(first such record; see notes)")
        if short and (damaged or reason is not None):
            stats.add_error(offset, short_msg)
            return "skip", "damaged"
        if damaged:
            return "skip", "damaged"
        if reason is not None:
            return "skip", reason

        payload = raw
        truncated = raw_over
        if it.http_broken:
            notes.append("http-headers-unterminated")
        te = _split_tokens(http.get_header("Transfer-Encoding")) if http else []
        ce = _split_tokens(http.get_header("Content-Encoding")) if http else []
        payload_complete = False
        http_length: int | None = None
        if "chunked" in te:
            body, status = dechunk(payload, complete_input=not raw_over and not short)
            payload_complete = status == "ok"
            if status in ("ok", "unterminated"):
                notes.append("dechunked")
                if status == "unterminated" and not raw_over:
                    notes.append("chunked-unterminated")
            elif status == "not-chunked":
                notes.append("chunked-header-not-chunked")
            else:
                notes.append("dechunked")
                notes.append("chunked-invalid")
            payload = body
        else:
            http_len = http.get_header("Content-Length") if http else None
            if http_len and http_len.strip().isdigit():
                http_length = int(http_len.strip())
                payload_complete = len(payload) >= http_length
        if short:
            if not payload_complete:
                stats.add_error(offset, short_msg)
                return "skip", "damaged"
            if http_length is not None:  # what follows the payload is no part of it (the next records' bytes)
                payload = payload[:http_length]
            stats.add_error(offset, short_msg + " (HTTP payload complete: record kept)")
            notes.append("record-truncated-payload-complete")
        codings = [t for t in te if t not in ("chunked", "identity")] + \
                  [t for t in ce if t != "identity"]
        for coding in reversed(codings):
            payload, status = decode_content(payload, coding, self.cap)
            notes.append(f"content-encoding:{coding}" if status in ("ok", "incomplete")
                         else f"content-encoding:{coding}:{status}")
            if status == "incomplete" and not truncated:
                notes.append("content-encoding-incomplete")
            if status in ("not-encoded", "unsupported", "error"):
                break
        if len(payload) > self.cap:
            payload, truncated = payload[:self.cap], True

        if not payload.strip():
            return "skip", "empty_payload"
        if sniff:
            if not sniff_html(payload):
                return "skip", self._non_html_key(mime)
            notes.append("sniffed-html")
        if truncated:
            notes.append("payload-truncated")
        seg = rec_headers.get_header("WARC-Segment-Number")
        if seg:
            notes.append(f"segment:{seg.strip()}")

        rid = None if is_arc else rec_headers.get_header("WARC-Record-ID")
        rid = clean_str(rid.strip()) if rid and rid.strip() else None
        if rid is None:
            rid = synthetic_id
            notes.append("synthetic-id")
        date = rec_headers.get_header("WARC-Date")
        return "html", HtmlRecord(
            record_id=rid,
            warc_file=self.file,
            offset=offset,
            warc_date=clean_str(date.strip()) if date else None,
            url=clean_url(rec_headers.get_header("WARC-Target-URI")),
            record_type=rec_type,
            http_status=http_status(http) if rec_type == "response" else None,
            content_type=mime,
            http_charset=charset,
            payload=payload,
            payload_truncated=truncated,
            notes=notes,
        )

    # --- one run of warcio from the current position -------------------------------------

    def _segment(self):
        """Generator over (kind, value) from one ArchiveIterator; returns the next action:
        ("end",) | ("resync", offset) | ("stop",)."""
        stats = self.stats
        it = RecordIterator(self.src)
        gen = iter(it)
        while True:
            offset = it.offset
            if len(stats.errors) >= MAX_ERRORS:
                stats.add_error(offset, f"{MAX_ERRORS} errors: rest of the file abandoned")
                return ("stop",)
            shared_before = it.multi_record_members
            try:
                record = next(gen)
            except StopIteration:
                return self._finish_segment(it, ("end",))
            except StreamError as exc:
                stats.add_error(offset, f"stream error: {exc}")
                return ("stop",)
            except GzipDamage as exc:
                stats.add_error(offset, str(exc))
                return self._finish_segment(it, ("resync", offset + 1))
            except Exception as exc:
                stats.add_error(offset, f"unreadable record header: {type(exc).__name__}: "
                                     f"{str(exc).strip()[:300]}")
                return self._finish_segment(it, ("resync", offset + 1))
            stats.records_read += 1
            synthetic_id = f"{self.file}:{offset}"
            if it.multi_record_members > shared_before:
                # Not the first record of its gzip member: warcio's offset is meaningless
                # there; report the member's offset and number the records inside it.
                offset = it.reader.member_start
                k = self.shared_ordinal[offset] = self.shared_ordinal.get(offset, 0) + 1
                synthetic_id = f"{self.file}:{offset}+{k}"
            try:
                kind, value = self._process(it, record, offset, synthetic_id)
            except _Resync as exc:
                stats.count_skip("damaged")
                return self._finish_segment(it, ("resync", exc.scan_from))
            except StreamError as exc:
                stats.count_skip("damaged")
                stats.add_error(offset, f"stream error: {exc}")
                return ("stop",)
            except Exception as exc:
                stats.count_skip("damaged")
                stats.add_error(offset, f"damaged record: {type(exc).__name__}: "
                                     f"{str(exc).strip()[:300]}")
                return self._finish_segment(it, ("resync", offset + 1))
            if kind == "skip":
                stats.count_skip(value)
            else:
                stats.html_records += 1
                if value.payload_truncated:
                    stats.truncated_payloads += 1
                yield value
            if self.pending_resync is not None:
                pos, self.pending_resync = self.pending_resync, None
                return self._finish_segment(it, ("resync", pos))

    def _finish_segment(self, it: RecordIterator, action):
        stats = self.stats
        if it.multi_record_members and not self.multi_member_warned:
            self.multi_member_warned = True
            stats.add_warning(0, "several records share one gzip member (whole-file gzip); "
                              "records after the first report the member's offset")
        tm = it.truncated_member()
        if tm is not None and not any(e["offset"] >= tm for e in stats.errors):
            stats.add_error(tm, "gzip member truncated (input ends inside it)")
        return action

    def run(self):
        stats = self.stats
        while True:
            action = yield from self._segment()
            if action[0] == "end":
                stats.reached_end = True
                return
            if action[0] == "stop":
                return
            try:
                pos = find_resync(self.src, action[1])
            except StreamError as exc:
                stats.add_error(self.src.tell(), f"stream error: {exc}")
                return
            if stats.errors:
                stats.errors[-1]["resync_offset"] = pos
            if pos is None:
                stats.reached_end = True
                return
            self.src.seek_abs(pos)


def iter_html_records(stream: BinaryIO | io.RawIOBase, file_name: str, stats: WarcFileStats,
                      max_payload_bytes: int = DEFAULT_MAX_PAYLOAD_BYTES, *,
                      resync_history_bytes: int = HISTORY_BYTES) -> Iterator[HtmlRecord]:
    """Yield the HTML records of one WARC/ARC file read from a binary stream.

    Never raises (damage and stream errors end up in `stats.errors`); `stats` is filled in
    as the iteration proceeds and is final when the iterator is exhausted or closed.
    `stats.seconds` counts only the time spent inside the iterator."""
    stats.file = file_name
    t0 = time.perf_counter()
    inside = True
    try:
        try:
            source = zstd_or_plain(stream)
        except (ZstdInputError, OSError) as exc:
            stats.add_error(0, f"cannot read: {exc}")
            return
        reader = _FileReader(source, file_name, stats, max_payload_bytes, resync_history_bytes)
        gen = reader.run()
        while True:
            try:
                rec = next(gen)
            except StopIteration:
                break
            except Exception as exc:  # defensive: a bug must not kill a Spark task
                stats.add_error(reader.src.tell(), f"internal error: {type(exc).__name__}: {exc}")
                break
            stats.seconds += time.perf_counter() - t0
            inside = False
            yield rec
            inside = True
            t0 = time.perf_counter()
        stats.completed = stats.reached_end and not stats.errors
    except Exception as exc:  # pragma: no cover - defensive
        stats.add_error(-1, f"internal error: {type(exc).__name__}: {exc}")
    finally:
        try:
            stats.bytes_read = reader.src.high_water - reader.src.start
        except Exception:
            pass
        if inside:
            stats.seconds += time.perf_counter() - t0


def open_warc(path_or_uri) -> BinaryIO:
    """Open a local WARC/ARC file (a path or a file:// URI) as a binary stream.
    Remote URIs are opened with fsspec when it is installed; the Spark job opens remote
    files itself and passes the stream to iter_html_records."""
    s = os.fspath(path_or_uri)
    if isinstance(s, bytes):
        s = os.fsdecode(s)
    if s.startswith("file:"):
        parsed = urllib.parse.urlparse(s)
        return open(urllib.parse.unquote(parsed.path), "rb", buffering=1 << 20)
    if re.match(r"^[A-Za-z][A-Za-z0-9+.-]+://", s):
        try:
            import fsspec
        except ImportError as exc:
            raise ValueError(f"cannot open {s!r}: only local paths and file:// URIs are "
                             "supported without fsspec") from exc
        return fsspec.open(s, "rb").open()
    return open(s, "rb", buffering=1 << 20)
