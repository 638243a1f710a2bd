"""Writing small deterministic test/benchmark WARCs (scripts/make_warc.py)."""

from __future__ import annotations

import io
import itertools
import os
import urllib.parse
import uuid
from collections.abc import Iterable
from datetime import UTC, datetime
from email.utils import format_datetime

from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

_ID_NAMESPACE = uuid.UUID("6f1c3f5e-1d2b-5c55-9a86-7a4b8d1f0e21")


def _as_datetime(value) -> datetime:
    if value is None:
        return datetime(2000, 1, 1, tzinfo=UTC)
    if isinstance(value, (int, float)):
        return datetime.fromtimestamp(value, tz=UTC)
    if isinstance(value, str):
        value = datetime.fromisoformat(value.replace("Z", "+00:00"))
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.astimezone(UTC).replace(microsecond=0)


def _warc_date(dt: datetime) -> str:
    return dt.strftime("%Y-%m-%dT%H:%M:%SZ")


def _record_id(*parts) -> str:
    return f"<urn:uuid:{uuid.uuid5(_ID_NAMESPACE, chr(0x1F).join(str(p) for p in parts))}>"


def write_html_warc(pages: Iterable[tuple], out_path, *, charset: str | None = None,
                    date=None, with_requests: bool = False, gzip: bool = True,
                    server: str = "make_warc/1.0", description: str | None = None) -> int:
    """Write a WARC with one warcinfo record and a `response` record per page.

    pages: (url, body_bytes) or (url, body_bytes, date) tuples; the body is the HTTP
    payload, unchanged. Every record id is derived from the page's position and URL and
    every date comes from `date` (or the page's own date), so the output is byte-for-byte
    reproducible. With gzip=True each record is its own gzip member. With with_requests
    a `request` record precedes each response. Returns the number of response records."""
    fixed = _as_datetime(date) if date is not None else None
    pages = iter(pages)
    first = next(pages, None)
    if first is not None:
        pages = itertools.chain([first], pages)
    n = 0
    out_path = os.fspath(out_path)
    with open(out_path, "wb") as fh:
        writer = WARCWriter(fh, gzip=gzip)
        info_date = fixed or _as_datetime(first[2] if first is not None and len(first) > 2
                                          else None)
        info = {"software": "webcleaner write_html_warc (warcio)",
                "format": "WARC File Format 1.0",
                "description": description or "HTML pages for the web-page cleaner"}
        info_bytes = "".join(f"{k}: {v}\r\n" for k, v in info.items()).encode("utf-8")
        rec = writer.create_warc_record(
            "", "warcinfo", payload=io.BytesIO(info_bytes), length=len(info_bytes),
            warc_content_type="application/warc-fields",
            warc_headers_dict={
                "WARC-Record-ID": _record_id("warcinfo", os.path.basename(out_path)),
                "WARC-Date": _warc_date(info_date),
                "WARC-Filename": os.path.basename(out_path),
            })
        writer.write_record(rec)
        ctype = f"text/html; charset={charset}" if charset else "text/html"
        for index, page in enumerate(pages):
            url, body = page[0], bytes(page[1])
            dt = fixed or _as_datetime(page[2] if len(page) > 2 else None)
            wdate = _warc_date(dt)
            resp_id = _record_id("response", index, url)
            if with_requests:
                parsed = urllib.parse.urlsplit(url)
                target = parsed.path or "/"
                if parsed.query:
                    target += "?" + parsed.query
                req_headers = StatusAndHeaders(
                    f"GET {target} HTTP/1.1",
                    [("Host", parsed.netloc or "localhost"), ("User-Agent", server),
                     ("Accept", "text/html,*/*")],
                    is_http_request=True)
                req = writer.create_warc_record(
                    url, "request", http_headers=req_headers,
                    warc_headers_dict={"WARC-Record-ID": _record_id("request", index, url),
                                       "WARC-Date": wdate,
                                       "WARC-Concurrent-To": resp_id})
                writer.write_record(req)
            http_headers = StatusAndHeaders("200 OK", [
                ("Content-Type", ctype),
                ("Content-Length", str(len(body))),
                ("Date", format_datetime(dt, usegmt=True)),
                ("Server", server),
            ], protocol="HTTP/1.1")
            resp = writer.create_warc_record(
                url, "response", payload=io.BytesIO(body), length=len(body),
                http_headers=http_headers,
                warc_headers_dict={"WARC-Record-ID": resp_id, "WARC-Date": wdate})
            writer.write_record(resp)
            n += 1
    return n
