"""Offset index pre-scan: where a big WARC can be cut into record ranges.

A range [start, end) of a WARC can be cleaned by its own Spark task only if `start` and
`end` are exact record boundaries that a sequential read of the whole file would also
find. The scan proves that for the usual layouts and refuses everything else:

* gzipped WARC, one gzip member per record (what warcio, wget, Heritrix and Common Crawl
  write): every member is inflated (no payload parsing), and every member must hold exactly
  one WARC record: it starts with `WARC/1.x`, and header + Content-Length + CRLF CRLF equals
  the member's inflated size. Member starts are then the cut candidates.
* uncompressed WARC: record headers are parsed and Content-Length is followed by seeking;
  each block must be followed by CRLF CRLF and the next record or the end of the file.

Anything else (ARC files, whole-file gzip, a record spanning members, any damage) returns
None: the file is read whole by one task, by the tolerant reader. zstd files (`.warc.zst`) are
never offered (jobs/plan.py): their reader counts offsets in the decompressed stream. Inflating is ~1-2 % of
the cost of cleaning the same file (measured in docs/spark_job.md); only files big enough
to be split are scanned, in a Spark stage of their own (one task per file).
"""

from __future__ import annotations

import bisect
import re
import zlib

_CHUNK = 1 << 20
_HEAD_MAX = 1 << 16
_WARC_START = re.compile(rb"^WARC/1\.[01]\r\n")
_CL_RX = re.compile(rb"\r\ncontent-length:[ \t]*(\d+)[ \t]*\r\n", re.I)


def _record_block_len(head: bytes) -> int | None:
    """Bytes of one whole record (header, block, CRLF CRLF) from its first bytes, or None."""
    if not _WARC_START.match(head):
        return None
    end = head.find(b"\r\n\r\n")
    if end < 0:
        return None
    header = head[:end + 2]
    m = _CL_RX.search(header)
    if not m:
        return None
    return end + 4 + int(m.group(1)) + 4


def scan_gzip_members(fh, start: int = 0) -> list[int] | None:
    """Start offsets of the gzip members of a one-record-per-member WARC, or None."""
    offsets: list[int] = []
    pos = start
    chunk = fh.read(_CHUNK)
    while chunk:
        if chunk[:2] != b"\x1f\x8b":
            return None
        offsets.append(pos)
        d = zlib.decompressobj(31)
        head = b""
        out_len = 0
        while True:
            try:
                out = d.decompress(chunk, _CHUNK)
            except zlib.error:
                return None
            out_len += len(out)
            if len(head) < _HEAD_MAX:
                head += out[:_HEAD_MAX - len(head)]
            left = d.unused_data if d.eof else d.unconsumed_tail
            pos += len(chunk) - len(left)
            chunk = left
            if d.eof:
                break
            if not chunk:
                chunk = fh.read(_CHUNK)
                if not chunk:
                    return None  # the file ends inside a member
        if _record_block_len(head) != out_len:
            return None
        if not chunk:
            chunk = fh.read(_CHUNK)
    return offsets


def scan_plain_records(fh, size: int) -> list[int] | None:
    """Record start offsets of an uncompressed WARC, or None."""
    offsets: list[int] = []
    pos = 0
    while pos < size:
        fh.seek(pos)
        head = fh.read(_HEAD_MAX)
        n = _record_block_len(head)
        if n is None:
            return None
        fh.seek(pos + n - 4)
        if fh.read(4) != b"\r\n\r\n":
            return None
        offsets.append(pos)
        pos += n
    return offsets if pos == size else None


def record_offsets(fh, size: int, gzipped: bool) -> list[int] | None:
    if gzipped:
        return scan_gzip_members(fh)
    return scan_plain_records(fh, size)


def cut_points(offsets: list[int], size: int, pieces: int) -> list[int]:
    """Boundaries [0, c1, ..., size] of at most `pieces` ranges of about equal bytes, each
    cut at a record start (the one nearest the ideal cut)."""
    if pieces <= 1 or len(offsets) < 2:
        return [0, size]
    cuts = [0]
    for k in range(1, pieces):
        ideal = size * k / pieces
        i = bisect.bisect_left(offsets, ideal)
        best = None
        for j in (i - 1, i):
            if 0 < j < len(offsets) and offsets[j] > cuts[-1]:
                if best is None or abs(offsets[j] - ideal) < abs(best - ideal):
                    best = offsets[j]
        if best is not None and best < size:
            cuts.append(best)
    cuts.append(size)
    return cuts
