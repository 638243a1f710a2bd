"""Streaming WARC/ARC reading with complete accounting (no Spark here).

`iter_html_records(stream, file_name, stats)` walks one WARC or ARC file (plain or gzipped,
one gzip member per record or one member for the whole file; or zstd-compressed, `.warc.zst`, with
or without the dictionary frame of the IIPC warc.zst convention) with `warcio.ArchiveIterator`
(arc2warc=True) and yields an `HtmlRecord` for every HTML page; everything else is counted
in `stats.skipped` under a reason. The invariant

    stats.html_records + sum(stats.skipped.values()) == stats.records_read

holds at every yield and after the iterator ends, however the file is damaged: a record is
counted as read as soon as its WARC/ARC header block has been parsed. A record that damage
cut short (block shorter than its Content-Length, invalid or missing Content-Length, gzip
member broken inside its body) is counted as `skipped["damaged"]` and not yielded - unless
its HTTP payload is provably complete (HTTP Content-Length reached, or chunked body with its
final chunk), in which case it is yielded with a note. Bytes that cannot be parsed as a record
header at all are not records: they appear only in `stats.errors` (with the byte offset)
and the reader resynchronises at the next gzip member or `WARC/1.x` / ARC header line after
the damage. The iterator never raises. Pass a fresh WarcFileStats per file. A zstd file is recognised by its first
bytes, whatever its name; its record offsets (and `bytes_read`) are those of the decompressed WARC.

Payloads are read with a bounded read (max_payload_bytes + 1 raw bytes), the rest of the
record is drained, Transfer-Encoding: chunked is undone with verification (raw bytes kept
when the body is not really chunked) and Content-Encoding gzip/deflate/br is decoded with an
output cap, so memory stays at about two times max_payload_bytes plus an 8 MiB rewind
window of raw bytes (used only to resynchronise non-seekable streams after damage).

`write_html_warc` writes small deterministic test/benchmark WARCs (see scripts/make_warc.py).
See docs/warc.md for the accounting rules and the behaviour on the damaged sample files.
"""

from __future__ import annotations

import collections
import io
import itertools
import os
import re
import time
import urllib.parse
import uuid
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from email.utils import format_datetime
from typing import IO, BinaryIO, cast, overload

from warcio.archiveiterator import ArchiveIterator
from warcio.bufferedreaders import DecompressingBufferedReader
from warcio.exceptions import ArchiveLoadFailed
from warcio.limitreader import LimitReader
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

try:  # optional: only used for Content-Encoding: br
    import brotli as _brotli
except ImportError:  # pragma: no cover - depends on the environment
    _brotli = None

__all__ = [
    "HtmlRecord",
    "WarcFileStats",
    "iter_html_records",
    "open_warc",
    "sniff_html",
    "write_html_warc",
    "DEFAULT_MAX_PAYLOAD_BYTES",
]

DEFAULT_MAX_PAYLOAD_BYTES = 10_000_000

HTML_MIMES = frozenset({"text/html", "application/xhtml+xml"})
# Content types that say nothing useful: the payload is sniffed.
SNIFF_MIMES = frozenset({
    "", "text/plain", "application/octet-stream", "binary/octet-stream", "application/binary",
    "application/unknown", "application/x-unknown", "unknown/unknown", "text/unknown", "*/*",
    "application/x-download", "application/force-download", "application/http", "invalid",
})
SKIPPED_TYPES = frozenset({"warcinfo", "request", "metadata", "revisit", "conversion",
                           "continuation"})
MAX_MIME_KEYS = 50           # distinct "non_html:<mime>" keys per file; the rest -> non_html:other
MAX_ERRORS = 1000            # after this many errors in one file, stop reading it
_READ_BLOCK = 1 << 16
_SCAN_BLOCK = 1 << 20
_PEEK = 1 << 16
_HISTORY = 8 << 20           # raw bytes kept behind the read position for resynchronisation

_MIME_RX = re.compile(r"^[a-z0-9!#$&^_.+*-]+/[a-z0-9!#$&^_.+*-]+$")
_CHARSET_RX = re.compile(r"""charset\s*=\s*["']?\s*([^"';,\s]+)""", re.I)
_WARC_LINE_RX = re.compile(rb"WARC/(?:1\.[01]|0\.1[78])\r?\n")
_ARC_LINE_RX = re.compile(
    rb"(?:https?|ftp|ftps|dns|filedesc):[^\r\n]{1,8192}? \S+ \d{12,18} \S+ -?\d+\r?\n")
_PLAIN_RESYNC_RX = re.compile(rb"(?<=\n)(?:" + _WARC_LINE_RX.pattern + rb"|"
                              + _ARC_LINE_RX.pattern + rb")")
_URL_SAFE_RX = re.compile(rb"[\x21-\x7e]*\Z")
_URI_SCHEME_RX = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


# --------------------------------------------------------------------------------------------
# Data classes
# --------------------------------------------------------------------------------------------

@dataclass
class HtmlRecord:
    """One HTML page found in a WARC/ARC file."""

    record_id: str            # WARC-Record-ID, or "<file>:<offset>" (ARC records, missing id)
    warc_file: str
    offset: int               # byte offset of the record in the file (ArchiveIterator offset)
    warc_date: str | None
    url: str                  # WARC-Target-URI; spaces, control chars, invalid UTF-8 %-encoded
    record_type: str          # "response" | "resource"
    http_status: int | None
    content_type: str         # mime only, lowercased ("" when missing)
    http_charset: str | None  # charset parameter of the Content-Type, lowercased
    payload: bytes            # after de-chunking and content decoding
    payload_truncated: bool = False
    notes: list[str] = field(default_factory=list)


@dataclass
class WarcFileStats:
    """Accounting for one file. Invariant: html_records + sum(skipped) == records_read."""

    file: str = ""
    records_read: int = 0             # records whose header block was parsed
    html_records: int = 0             # records yielded
    skipped: dict[str, int] = field(default_factory=dict)   # reason -> count
    errors: list[dict] = field(default_factory=list)        # {"offset", "error"[, "resync_offset"]}
    warnings: list[dict] = field(default_factory=list)      # nothing lost: {"offset", "warning"}
    bytes_read: int = 0               # raw bytes read from the stream
    truncated_payloads: int = 0       # yielded records with payload_truncated
    reached_end: bool = False         # the input was read to its end (possibly after resyncs)
    completed: bool = False           # reached_end and no errors
    seconds: float = 0.0              # time spent inside the iterator (not in the consumer)

    @property
    def accounted(self) -> bool:
        return self.html_records + sum(self.skipped.values()) == self.records_read

    def to_dict(self) -> dict:
        return asdict(self)

    def _skip(self, reason: str) -> None:
        self.skipped[reason] = self.skipped.get(reason, 0) + 1

    def _error(self, offset: int, error: str) -> dict:
        entry = {"offset": int(offset), "error": error}
        self.errors.append(entry)
        return entry

    def _warning(self, offset: int, warning: str) -> None:
        self.warnings.append({"offset": int(offset), "warning": warning})


# --------------------------------------------------------------------------------------------
# Raw stream wrapper: absolute offsets and a bounded rewind window
# --------------------------------------------------------------------------------------------

class _StreamError(Exception):
    """The underlying stream itself failed (I/O error): not recoverable by resync."""


class _Source:
    """Wraps the caller's binary stream: tell() is the absolute offset, and the last
    `history` bytes behind the read position can be re-read (used only to resynchronise
    after damage, so non-seekable streams work too)."""

    def __init__(self, fh: BinaryIO, history: int = _HISTORY):
        self._fh = fh
        try:
            start = int(fh.tell())
        except Exception:
            start = 0
        self.start = start
        self._chunks: collections.deque[tuple[int, bytes]] = collections.deque()
        self._end = start      # absolute end of everything read from fh
        self._pos = start      # current read position
        self._history = max(int(history), _SCAN_BLOCK + 2 * _PEEK)
        self.eof = False

    @property
    def high_water(self) -> int:
        return self._end

    @property
    def history_start(self) -> int:
        return self._chunks[0][0] if self._chunks else self._end

    def tell(self) -> int:
        return self._pos

    def seek_abs(self, pos: int) -> int:
        pos = max(min(pos, self._end), self.history_start)
        self._pos = pos
        return pos

    def _replay(self, size: int) -> bytes:
        out = []
        want = min(size, self._end - self._pos)
        for start, data in self._chunks:
            if want <= 0:
                break
            stop = start + len(data)
            if stop <= self._pos:
                continue
            lo = self._pos - start
            piece = data[lo:lo + want]
            out.append(piece)
            self._pos += len(piece)
            want -= len(piece)
        return b"".join(out)

    def read(self, size: int = -1) -> bytes:
        if size is None or size < 0:
            size = _SCAN_BLOCK
        if size == 0:
            return b""
        if self._pos < self._end:
            return self._replay(size)
        if self.eof:
            return b""
        try:
            data = self._fh.read(size)
        except Exception as exc:  # the caller's stream failed
            raise _StreamError(f"{type(exc).__name__}: {exc}") from exc
        if not data:
            self.eof = True
            return b""
        data = bytes(data)
        self._chunks.append((self._end, data))
        self._end += len(data)
        self._pos = self._end
        limit = self._pos - self._history
        while len(self._chunks) > 1 and self._chunks[0][0] + len(self._chunks[0][1]) <= limit:
            self._chunks.popleft()
        return data

    def close(self) -> None:  # warcio may call close(); the caller owns the stream
        pass


# --------------------------------------------------------------------------------------------
# zstd-compressed WARCs (.warc.zst)
# --------------------------------------------------------------------------------------------

# The IIPC's warc.zst convention (as in Common Crawl's and wget's zstd WARCs): one or more zstd frames per
# record, optionally preceded by a skippable frame with this magic that carries the dictionary the frames
# were compressed with (itself zstd-compressed or raw).
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
ZSTD_DICT_MAGIC = b"\x5d\x2a\x4d\x18"  # skippable frame 0x184D2A5D, little-endian
_ZSTD_SKIPPABLE_HIGH = b"\x2a\x4d\x18"  # skippable frames 0x184D2A50-5F (the low nibble varies)


class ZstdInputError(Exception):
    """A zstd WARC that cannot be read (no zstandard, a broken dictionary frame)."""


class _Prefixed(io.RawIOBase):
    """The caller's stream with bytes already read from it put back in front."""

    def __init__(self, head: bytes, fh, start: int):
        super().__init__()
        self._head, self._fh, self._pos = head, fh, start

    def readable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def read(self, size: int = -1) -> bytes:
        if self._head:
            data = self._head if size is None or size < 0 else self._head[:size]
            self._head = self._head[len(data):]
        else:
            data = self._fh.read(size)
        self._pos += len(data)
        return data

    def readinto(self, buf) -> int:
        data = self.read(len(buf))
        buf[:len(data)] = data
        return len(data)


class _ZstdStream(io.RawIOBase):
    """The decompressed bytes of a zstd WARC; tell() counts them, so record offsets of a .warc.zst are
    offsets into the decompressed WARC (a zstd file has no byte offset a reader could seek to)."""

    def __init__(self, reader):
        super().__init__()
        self._reader, self._pos = reader, 0

    def readable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def read(self, size: int = -1) -> bytes:
        try:
            data = self._reader.read(1 << 20 if size is None or size < 0 else size)
        except Exception as exc:  # zstandard.ZstdError: damage, or a dictionary the frames do not match
            hint = (" (the frames need a dictionary: a warc.zst carries it in a skippable frame at its "
                    "start, and this one has none or another)" if "dictionary" in str(exc).lower() else "")
            raise OSError(f"zstd: {exc}{hint}") from None
        self._pos += len(data)
        return data

    def readinto(self, buf) -> int:
        data = self.read(len(buf))
        buf[:len(data)] = data
        return len(data)


def _read_exact(fh, n: int) -> bytes:
    out = b""
    while len(out) < n:
        chunk = fh.read(n - len(out))
        if not chunk:
            break
        out += chunk
    return out


def _zstd_dictionary(fh):
    """The dictionary of a warc.zst's leading skippable frame (its magic already read)."""
    import zstandard

    size = _read_exact(fh, 4)
    data = _read_exact(fh, int.from_bytes(size, "little")) if len(size) == 4 else b""
    if len(size) < 4 or len(data) < int.from_bytes(size, "little"):
        raise ZstdInputError("zstd dictionary frame cut short: the file ends inside it")
    if data.startswith(ZSTD_MAGIC):  # the dictionary is itself compressed (the usual case)
        try:
            data = zstandard.ZstdDecompressor().decompressobj().decompress(data)
        except zstandard.ZstdError as exc:
            raise ZstdInputError(f"zstd dictionary frame does not decompress: {exc}") from None
    return zstandard.ZstdCompressionDict(data)


def _maybe_zstd(fh: BinaryIO | io.RawIOBase) -> io.RawIOBase:
    """`fh` itself (with its first bytes put back), or its zstd-decompressed content."""
    try:
        start = int(fh.tell())
    except Exception:
        start = 0
    head = _read_exact(fh, 4)
    is_dict = head == ZSTD_DICT_MAGIC
    if head != ZSTD_MAGIC and not is_dict and not (head[1:] == _ZSTD_SKIPPABLE_HIGH and head[0] & 0xF0 == 0x50):
        return _Prefixed(head, fh, start)
    try:
        import zstandard
    except ImportError:  # pragma: no cover - a dependency of the package
        raise ZstdInputError("zstd-compressed WARC, but the zstandard package is not installed") from None
    if is_dict:
        dctx = zstandard.ZstdDecompressor(dict_data=_zstd_dictionary(fh))
        raw: BinaryIO | io.RawIOBase = fh
    else:  # frames without a dictionary (another skippable frame is skipped by the decompressor)
        dctx = zstandard.ZstdDecompressor()
        raw = _Prefixed(head, fh, start)
    # cast: an io.RawIOBase reads bytes as an IO[bytes] does, but typeshed does not make it one
    return _ZstdStream(dctx.stream_reader(cast(IO[bytes], raw), read_size=1 << 17, read_across_frames=True))


# --------------------------------------------------------------------------------------------
# warcio adaptations (instance-level, nothing global is patched)
# --------------------------------------------------------------------------------------------

class _GzipDamage(Exception):
    def __init__(self, msg: str, member_start: int):
        super().__init__(msg)
        self.member_start = member_start


_SURROGATE_RX = re.compile("[\udc80-\udcff]")


def _decode_header_line(line):
    """Header lines as UTF-8; bytes that are not valid UTF-8 become %XX (warcio would decode
    the whole line as Latin-1). No surrogates: they would break loggers and serialisers."""
    if isinstance(line, bytes):
        try:
            return line.decode("utf-8")
        except UnicodeDecodeError:
            return _SURROGATE_RX.sub(lambda m: "%%%02X" % (ord(m.group()) - 0xDC00),
                                     line.decode("utf-8", "surrogateescape"))
    return line


def _looks_like_record_start(data: bytes) -> bool:
    data = data.lstrip(b"\r\n")
    if _WARC_LINE_RX.match(data):
        return True
    line = data.split(b"\n", 1)[0] + b"\n"
    return bool(_ARC_LINE_RX.match(line))


def _plausible_header_block(data: bytes) -> bool:
    """A WARC header block with WARC-Type and Content-Length, or an ARC header line."""
    if not data.startswith(b"WARC/"):
        return True    # ARC header line: the regex is the check
    end = data.find(b"\r\n\r\n")
    if end < 0:
        end = data.find(b"\n\n")
    block = data[:end if end >= 0 else len(data)].lower()
    return b"\nwarc-type:" in block and b"\ncontent-length:" in block


class _Reader(DecompressingBufferedReader):
    """warcio's gzip-sniffing buffered reader, plus:
    - a corrupt gzip member after the first raises _GzipDamage (warcio silently swallows
      the rest of the file);
    - a gzip member cut by the end of the input is remembered (warcio ignores it);
    - leading CR/LF of a member that starts a record are dropped (some writers put the
      record separator at the start of the next member; warcio would see an empty record);
    - with `cross_members` set (while a record body is read), a record whose block
      continues in the next gzip member is followed into it, unless that member starts a
      new record (example-wrong-chunks.warc.gz)."""

    def __init__(self, stream, block_size=16384):
        self.seen_gzip = False
        self.cross_members = False
        self.crossed = 0
        self.truncated_member: int | None = None
        self.member_start = stream.tell()
        self._member_fed = 0
        self._at_member_start = True
        super().__init__(stream, block_size=block_size)

    def _init_decomp(self, decomp_type):
        super()._init_decomp(decomp_type)
        self._member_fed = 0
        self._at_member_start = True

    def read_next_member(self):
        if not self.decompressor or not self.decompressor.unused_data:
            return False
        self.member_start = self.stream.tell() - len(self.decompressor.unused_data)
        return super().read_next_member()

    def _decompress(self, data):
        if self.decompressor is None or not data:
            return data
        self._member_fed += len(data)
        try:
            out = self.decompressor.decompress(data)
        except zlib.error as exc:
            if self.num_block_read == 0 and not self.seen_gzip:
                self.decompressor = None       # not gzip at all: plain WARC/ARC
                return data
            raise _GzipDamage(f"corrupt gzip member: {exc}", self.member_start) from exc
        self.seen_gzip = True
        return out

    def _process_read(self, data):
        if not data:
            if (self.decompressor is not None and not self.decompressor.eof
                    and self._member_fed > 0 and self.truncated_member is None):
                self.truncated_member = self.member_start
            self.buff = None
            return
        data = self._decompress(data)
        if self._at_member_start and self.decompressor is not None:
            stripped = data.lstrip(b"\r\n")
            if stripped:
                self._at_member_start = False
            data = stripped
        elif data:
            self._at_member_start = False
        self.buff_size = len(data)
        self.num_read += self.buff_size
        self.num_block_read += self.buff_size
        self.buff = io.BytesIO(data)

    def _buff_empty(self) -> bool:
        return not self.buff or self.buff.tell() >= self.buff_size

    def _next_member_continues_record(self) -> bool:
        data = self.decompressor.unused_data
        if len(data) < _PEEK:
            # Peek at the following raw bytes without consuming them (_Source can rewind).
            pos = self.stream.tell()
            parts = [data]
            got = len(data)
            while got < _PEEK:
                more = self.stream.read(_PEEK - got)
                if not more:
                    break
                parts.append(more)
                got += len(more)
            self.stream.seek_abs(pos)
            data = b"".join(parts)
        try:
            head = zlib.decompressobj(31).decompress(data[:_PEEK], 512)
        except zlib.error:
            return False
        if not head:
            return False
        return not _looks_like_record_start(head)

    def _fillbuff(self, block_size=None):
        super()._fillbuff(block_size)
        while (self.cross_members and self._buff_empty() and self.decompressor is not None
               and self.decompressor.unused_data and self._next_member_continues_record()):
            super().read_next_member()
            self.member_start = self.stream.tell() - len(self.starting_data or b"")
            self._at_member_start = False
            self.crossed += 1
            super()._fillbuff(block_size)


class _Iter(ArchiveIterator):
    """ArchiveIterator over a _Source with the adaptations above and:
    - records sharing one gzip member (whole-file gzip) are read instead of raising;
    - the format of the last parsed header ("warc", "arc2warc") is remembered;
    - an ARC header line must start with a URI scheme (else it is not a record);
    - a response block that does not start with "HTTP/" keeps its first line as payload;
    - the "record not followed by newline" warning is recorded instead of printed."""

    def __init__(self, src: _Source):
        super().__init__(src, arc2warc=True)
        self.reader: _Reader = _Reader(src, block_size=self.reader.block_size)
        self.last_format = None
        self.http_prefix = b""
        self.http_broken = False
        self.multi_record_members = 0
        self.length_mismatch: list[int] = []
        self._truncated_member: int | None = None
        loader = self.loader
        loader.warc_parser.decode_header = _decode_header_line
        loader.http_parser.decode_header = _decode_header_line
        orig_detect = loader._detect_type_load_headers
        orig_http = loader.load_http_headers

        def detect(stream, statusline=None, known_format=None):
            fmt, headers = orig_detect(stream, statusline, known_format)
            if fmt != "warc":
                uri = headers.get_header("WARC-Target-URI") or headers.get_header("uri") or ""
                if (headers.get_header("WARC-Type") != "warcinfo"
                        and not _URI_SCHEME_RX.match(uri)):
                    raise ArchiveLoadFailed("Unknown archive format, first line: " + uri[:200])
            self.last_format = fmt
            return fmt, headers

        def load_http(rec_type, uri, stream, length):
            self.http_prefix = b""
            self.http_broken = False
            if length == 0:
                return None
            if rec_type != "response":
                try:
                    return orig_http(rec_type, uri or "", stream, length)
                except EOFError:
                    return None
            line = stream.readline()
            if not line:
                return None
            if line[:5].upper() != b"HTTP/":
                self.http_prefix = line
                return None
            # The header block ends at its blank line, or, when that is missing (a broken
            # block), at the first line that starts the page: kept as payload, not eaten
            # as headers.
            lines = []
            while True:
                h = stream.readline()
                if not h or not h.strip(b"\r\n"):
                    break
                if h[:1] == b"<" or sniff_html(h):
                    self.http_prefix = h
                    self.http_broken = True
                    break
                lines.append(h)
            try:
                return loader.http_parser.parse(io.BytesIO(b"".join(lines) + b"\r\n"), line)
            except EOFError:
                return None

        loader._detect_type_load_headers = detect
        loader.load_http_headers = load_http

    def close(self):
        if self.reader is not None:
            self._truncated_member = self.reader.truncated_member
        super().close()

    def truncated_member(self) -> int | None:
        if self.reader is not None:
            return self.reader.truncated_member
        return self._truncated_member

    def _raise_invalid_gzip_err(self):
        self.multi_record_members += 1

    def _consume_blanklines(self):
        empty_size = 0
        first_line = True
        while True:
            line = self.reader.readline()
            if len(line) == 0:
                return None, empty_size
            if len(line.rstrip()) == 0 or first_line:
                empty_size += len(line)
                if len(line.rstrip()) != 0:
                    self.length_mismatch.append(
                        self.fh.tell() - self.reader.rem_length() - empty_size)
                    self.err_count += 1
                first_line = False
                continue
            return line, empty_size


# --------------------------------------------------------------------------------------------
# Payload helpers
# --------------------------------------------------------------------------------------------

_TAG_PREFIXES = (
    b"<!doctype html", b"<html", b"<head", b"<body", b"<script", b"<iframe", b"<h1", b"<h2",
    b"<h3", b"<div", b"<font", b"<table", b"<a", b"<style", b"<title", b"<b", b"<br", b"<p",
    b"<meta", b"<link", b"<span", b"<center", b"<form", b"<ul", b"<noscript", b"<base",
)
_TAG_END = frozenset(b" >\t\n\r\x0c/")


def sniff_html(data: bytes) -> bool:
    """WHATWG-like HTML sniff on the first bytes: optional BOM and whitespace, then a
    known HTML tag (followed by a tag-terminating byte), `<!--`, or an XML declaration
    followed by `<html` within the first 1 KiB."""
    head = data[:1024]
    if head.startswith(b"\xef\xbb\xbf"):
        head = head[3:]
    elif head[:2] in (b"\xff\xfe", b"\xfe\xff"):
        codec = "utf-16-le" if head[:2] == b"\xff\xfe" else "utf-16-be"
        head = head[2:].decode(codec, "ignore").encode("latin-1", "ignore")
    head = head.lstrip(b" \t\n\r\x0c")
    low = head[:64].lower()
    if low.startswith(b"<!--"):
        return True
    if low.startswith(b"<?xml"):
        return b"<html" in head.lower()
    for prefix in _TAG_PREFIXES:
        if low.startswith(prefix):
            nxt = low[len(prefix):len(prefix) + 1]
            if not nxt or nxt[0] in _TAG_END:
                return True
    return False


def _read_bounded(stream, limit: int) -> bytes:
    parts = []
    got = 0
    while got < limit:
        data = stream.read(min(_READ_BLOCK, limit - got))
        if not data:
            break
        parts.append(data)
        got += len(data)
    return b"".join(parts)


def _drain(stream) -> None:
    while stream.read(_READ_BLOCK):
        pass


def _dechunk(raw: bytes, complete_input: bool = True) -> tuple[bytes, str]:
    """Undo HTTP chunked transfer coding. Status: "ok" (terminating 0-chunk seen),
    "unterminated" (data ends inside/without the last chunk), "not-chunked" (first size
    line invalid: raw returned), "invalid" (broke after valid chunks: rest appended raw)."""
    out: list[bytes] = []
    pos = 0
    n = len(raw)
    while True:
        eol = raw.find(b"\n", pos, pos + 256)
        if eol < 0:
            if pos >= n or (n - pos < 256 and re.fullmatch(rb"[0-9a-fA-F]*\r?", raw[pos:])):
                return (b"".join(out), "unterminated") if pos else (raw, "not-chunked")
            return (raw, "not-chunked") if pos == 0 else (b"".join(out) + raw[pos:], "invalid")
        size_field = raw[pos:eol].rstrip(b"\r").split(b";", 1)[0].strip()
        if not size_field or len(size_field) > 16 or not re.fullmatch(rb"[0-9a-fA-F]+",
                                                                       size_field):
            return (raw, "not-chunked") if pos == 0 else (b"".join(out) + raw[pos:], "invalid")
        size = int(size_field, 16)
        if size == 0:
            return b"".join(out), "ok"
        start = eol + 1
        end = start + size
        if end >= n:
            if pos == 0 and complete_input and end > n:
                return raw, "not-chunked"     # "size" line announces more than there is
            out.append(raw[start:end])
            return b"".join(out), "unterminated"
        out.append(raw[start:end])
        if raw.startswith(b"\r\n", end):
            pos = end + 2
        elif raw.startswith(b"\n", end):
            pos = end + 1
        elif end + 1 >= n:
            return b"".join(out), "unterminated"
        else:
            return b"".join(out) + raw[end:], "invalid"


def _zlib_decode(data: bytes, wbits: int, cap: int) -> tuple[bytes, str]:
    """Decode one or more concatenated zlib/gzip streams, at most cap + 1 output bytes.
    Status: "ok" (complete, or output above cap), "incomplete" (input ends inside the
    stream), "error" (corrupt after some output: the output so far is returned) or
    "bad-start" (not this encoding at all)."""
    out: list[bytes] = []
    got = 0
    d = zlib.decompressobj(wbits)
    pos = 0
    started = False            # current stream produced output
    first = True               # still in the first stream
    block = 64                 # a tiny first block: a wrong header fails before any output
    while True:
        if got > cap:
            return b"".join(out), "ok"
        tail = d.unconsumed_tail
        if tail:
            inp = tail
        elif pos < len(data):
            inp = data[pos:pos + block]
            pos += len(inp)
            block = 16384
        else:
            return b"".join(out), "incomplete"
        try:
            piece = d.decompress(inp, cap + 1 - got)
        except zlib.error:
            if first:
                return (b"", "bad-start") if pos <= 64 else (b"".join(out), "error")
            # a later stream: garbage after a complete one, or a corrupt one
            return b"".join(out), ("error" if started else "ok")
        if piece:
            started = True
        out.append(piece)
        got += len(piece)
        if d.eof:
            rest = d.unused_data + data[pos:]
            if not rest.strip(b"\x00\r\n \t"):
                return b"".join(out), "ok"
            data, pos = rest, 0
            d = zlib.decompressobj(wbits)   # another member follows (or garbage)
            started = first = False


def _decode_content(data: bytes, coding: str, cap: int) -> tuple[bytes, str]:
    """Returns (output, status); status in ok | incomplete | error | not-encoded |
    unsupported. Output is at most cap + 1 bytes (decompression bombs)."""
    attempts: tuple[int, ...]
    if coding in ("gzip", "x-gzip"):
        attempts = (47,)          # gzip or zlib header, auto-detected
    elif coding == "deflate":
        attempts = (15, -15)      # zlib-wrapped (correct) or raw deflate (common)
    elif coding == "br" and _brotli is not None:
        try:
            dec = _brotli.Decompressor()
            out = dec.process(data, output_buffer_limit=cap + 1)
        except TypeError:         # old brotli without an output limit: do not risk it
            return data, "unsupported"
        except Exception:
            return data, "not-encoded"
        return out, ("ok" if dec.is_finished() or len(out) > cap else "incomplete")
    else:
        return data, "unsupported"
    for wbits in attempts:
        out, status = _zlib_decode(data, wbits, cap)
        if wbits < 0 and status != "ok":
            continue              # raw deflate has no header: accept only a clean decode
        if status != "bad-start":
            return out, status
    # Not decodable from the start: usually the writer stored the decoded body but kept
    # the header. Keep the bytes unchanged.
    return data, "not-encoded"


def _split_tokens(value: str | None) -> list[str]:
    if not value:
        return []
    return [t.strip().lower() for t in value.split(",") if t.strip()]


def _mime_and_charset(value: str | None) -> tuple[str, str | None]:
    if not value:
        return "", None
    value = _clean_str(value)
    mime = value.split(";", 1)[0].strip().lower()
    if mime and not _MIME_RX.match(mime):
        mime = "invalid"
    m = _CHARSET_RX.search(value)
    charset = m.group(1).strip().lower() if m else None
    return mime, charset


@overload
def _clean_str(value: str) -> str: ...
@overload
def _clean_str(value: None) -> None: ...
def _clean_str(value: str | None) -> str | None:
    if value is None:
        return None
    try:
        value.encode("utf-8")
        return value
    except UnicodeEncodeError:
        return value.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def _clean_url(value: str | None) -> str:
    """WARC-Target-URI as a safe string: trimmed, <...> removed (wget 1.19 bug),
    whitespace and control characters %-encoded; bytes that are not valid UTF-8 were already
    %-encoded when the header was decoded (valid UTF-8 IRIs are kept as they are)."""
    if not value:
        return ""
    raw = value.strip().encode("utf-8", "surrogateescape")
    if raw.startswith(b"<") and raw.endswith(b">"):
        raw = raw[1:-1].strip()
    if _URL_SAFE_RX.match(raw):
        return raw.decode("ascii")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return "".join(chr(b) if 0x20 < b < 0x7F else f"%{b:02X}" for b in raw)
    return "".join(c if (ord(c) > 0x20 and ord(c) != 0x7F and not 0x80 <= ord(c) <= 0x9F)
                   else "".join(f"%{b:02X}" for b in c.encode("utf-8")) for c in text)


def _http_status(http_headers) -> int | None:
    if not http_headers:
        return None
    try:
        code = int(http_headers.get_statuscode())
    except (ValueError, TypeError, AttributeError):
        return None
    return code if 100 <= code <= 999 else None


# --------------------------------------------------------------------------------------------
# The reader
# --------------------------------------------------------------------------------------------

class _Resync(Exception):
    def __init__(self, scan_from: int):
        super().__init__(scan_from)
        self.scan_from = scan_from


class _FileReader:
    def __init__(self, stream, file_name, stats, max_payload_bytes, history):
        self.src = _Source(stream, history)
        self.file = file_name
        self.stats = stats
        self.cap = max(0, int(max_payload_bytes))
        self.mime_keys: set[str] = set()
        self.multi_member_warned = False
        self.shared_ordinal: dict[int, int] = {}
        self.pending_resync: int | None = None
        self.crossing_warned = False

    # --- resynchronisation ---------------------------------------------------------------

    def _find_resync(self, start: int) -> int | None:
        """First offset >= start where a gzip member that decompresses to a record header,
        or a WARC/ARC header line (after a newline), begins; None if there is none."""
        src = self.src
        got = src.seek_abs(start)
        if got > start:
            start = got
        buf = b""
        buf_start = start
        i = 0
        eof = False

        def refill() -> bool:
            """Append the next block, dropping what the scan has passed; False at end of file."""
            nonlocal buf, buf_start, i
            chunk = src.read(_SCAN_BLOCK)
            if not chunk:
                return False
            keep = max(0, i - 1)
            buf = buf[keep:] + chunk
            buf_start += keep
            i -= keep
            return True

        while True:
            if not eof and len(buf) - i < 2 * _PEEK:
                if refill():
                    continue
                eof = True
            g = buf.find(b"\x1f\x8b\x08", i)
            m = _PLAIN_RESYNC_RX.search(buf, max(i, 1))
            cands = [c for c in (g, m.start() if m else -1) if c >= 0]
            if not cands:
                if eof:
                    return None
                i = max(i, len(buf) - 8200)
                if not refill():
                    eof = True
                continue
            c = min(cands)
            if c + _PEEK > len(buf) and not eof:
                chunk = src.read(_SCAN_BLOCK)
                if chunk:
                    buf += chunk
                    continue
                eof = True
            if c == g:
                try:
                    head = zlib.decompressobj(31).decompress(buf[c:c + _PEEK], 512)
                except zlib.error:
                    head = b""
                if head and _looks_like_record_start(head):
                    return buf_start + c
            elif _plausible_header_block(buf[c:c + _PEEK]):
                return buf_start + c
            i = c + 1

    # --- one record ----------------------------------------------------------------------

    def _non_html_key(self, mime: str) -> str:
        key = mime or "unknown"
        if key not in self.mime_keys:
            if len(self.mime_keys) >= MAX_MIME_KEYS:
                return "non_html:other"
            self.mime_keys.add(key)
        return "non_html:" + key

    def _process(self, it: _Iter, record, offset: int, synthetic_id: str):
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
            stats._error(offset, "record without Content-Length")
            raise _Resync(offset + 1)
        if not cl.strip().isdigit():
            stats._error(offset, f"invalid Content-Length {cl.strip()[:40]!r}")
            damaged = True

        http = record.http_headers or None
        reason = None
        sniff = False
        mime, charset = "", None
        if rec_type in SKIPPED_TYPES:
            reason = rec_type
        elif rec_type in ("response", "resource"):
            if rec_type == "response" and http:
                mime, charset = _mime_and_charset(http.get_header("Content-Type"))
            else:
                mime, charset = _mime_and_charset(rec_headers.get_header("Content-Type"))
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
            stats._error(offset, "record block not followed by a blank line "
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
        if crossed:
            notes.append("spans-gzip-members")
            if not self.crossing_warned:
                self.crossing_warned = True
                stats._warning(offset, "record block continues in the next gzip member(s) "
                                       "(first such record; see notes)")
        if short and (damaged or reason is not None):
            stats._error(offset, short_msg)
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
        if "chunked" in te:
            body, status = _dechunk(payload, complete_input=not raw_over and not short)
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
                payload_complete = len(payload) >= int(http_len.strip())
        if short:
            if not payload_complete:
                stats._error(offset, short_msg)
                return "skip", "damaged"
            stats._error(offset, short_msg + " (HTTP payload complete: record kept)")
            notes.append("record-truncated-payload-complete")
        codings = [t for t in te if t not in ("chunked", "identity")] + \
                  [t for t in ce if t != "identity"]
        for coding in reversed(codings):
            payload, status = _decode_content(payload, coding, self.cap)
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
        rid = _clean_str(rid.strip()) if rid and rid.strip() else None
        if rid is None:
            rid = synthetic_id
            notes.append("synthetic-id")
        date = rec_headers.get_header("WARC-Date")
        return "html", HtmlRecord(
            record_id=rid,
            warc_file=self.file,
            offset=offset,
            warc_date=_clean_str(date.strip()) if date else None,
            url=_clean_url(rec_headers.get_header("WARC-Target-URI")),
            record_type=rec_type,
            http_status=_http_status(http) if rec_type == "response" else None,
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
        it = _Iter(self.src)
        gen = iter(it)
        while True:
            offset = it.offset
            if len(stats.errors) >= MAX_ERRORS:
                stats._error(offset, f"{MAX_ERRORS} errors: rest of the file abandoned")
                return ("stop",)
            shared_before = it.multi_record_members
            try:
                record = next(gen)
            except StopIteration:
                return self._finish_segment(it, ("end",))
            except _StreamError as exc:
                stats._error(offset, f"stream error: {exc}")
                return ("stop",)
            except _GzipDamage as exc:
                stats._error(offset, str(exc))
                return self._finish_segment(it, ("resync", offset + 1))
            except Exception as exc:
                stats._error(offset, f"unreadable record header: {type(exc).__name__}: "
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
                stats._skip("damaged")
                return self._finish_segment(it, ("resync", exc.scan_from))
            except _StreamError as exc:
                stats._skip("damaged")
                stats._error(offset, f"stream error: {exc}")
                return ("stop",)
            except Exception as exc:
                stats._skip("damaged")
                stats._error(offset, f"damaged record: {type(exc).__name__}: "
                                     f"{str(exc).strip()[:300]}")
                return self._finish_segment(it, ("resync", offset + 1))
            if kind == "skip":
                stats._skip(value)
            else:
                stats.html_records += 1
                if value.payload_truncated:
                    stats.truncated_payloads += 1
                yield value
            if self.pending_resync is not None:
                pos, self.pending_resync = self.pending_resync, None
                return self._finish_segment(it, ("resync", pos))

    def _finish_segment(self, it: _Iter, action):
        stats = self.stats
        if it.multi_record_members and not self.multi_member_warned:
            self.multi_member_warned = True
            stats._warning(0, "several records share one gzip member (whole-file gzip); "
                              "records after the first report the member's offset")
        tm = it.truncated_member()
        if tm is not None and not any(e["offset"] >= tm for e in stats.errors):
            stats._error(tm, "gzip member truncated (input ends inside it)")
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
                pos = self._find_resync(action[1])
            except _StreamError as exc:
                stats._error(self.src.tell(), f"stream error: {exc}")
                return
            if stats.errors:
                stats.errors[-1]["resync_offset"] = pos
            if pos is None:
                stats.reached_end = True
                return
            self.src.seek_abs(pos)


def iter_html_records(stream: BinaryIO | io.RawIOBase, file_name: str, stats: WarcFileStats,
                      max_payload_bytes: int = DEFAULT_MAX_PAYLOAD_BYTES, *,
                      resync_history_bytes: int = _HISTORY) -> Iterator[HtmlRecord]:
    """Yield the HTML records of one WARC/ARC file read from a binary stream.

    Never raises (damage and stream errors end up in `stats.errors`); `stats` is filled in
    as the iteration proceeds and is final when the iterator is exhausted or closed.
    `stats.seconds` counts only the time spent inside the iterator."""
    stats.file = file_name
    t0 = time.perf_counter()
    inside = True
    try:
        try:
            source = _maybe_zstd(stream)
        except (ZstdInputError, OSError) as exc:
            stats._error(0, f"cannot read: {exc}")
            return
        reader = _FileReader(source, file_name, stats, max_payload_bytes, resync_history_bytes)
        gen = reader.run()
        while True:
            try:
                rec = next(gen)
            except StopIteration:
                break
            except Exception as exc:  # defensive: a bug must not kill a Spark task
                stats._error(reader.src.tell(), f"internal error: {type(exc).__name__}: {exc}")
                break
            stats.seconds += time.perf_counter() - t0
            inside = False
            yield rec
            inside = True
            t0 = time.perf_counter()
        stats.completed = stats.reached_end and not stats.errors
    except Exception as exc:  # pragma: no cover - defensive
        stats._error(-1, f"internal error: {type(exc).__name__}: {exc}")
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


# --------------------------------------------------------------------------------------------
# Writing test/benchmark WARCs
# --------------------------------------------------------------------------------------------

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
