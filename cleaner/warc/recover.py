"""Recovering from damage: a rewindable view of the caller's stream and where the next record starts.

After damage the reader (cleaner/warc/read.py) looks for the next gzip member that decompresses to a record
header, or the next `WARC/1.x` / ARC header line, from a byte after the damage on. Non-seekable streams work
too: `RewindableSource` keeps the last HISTORY_BYTES raw bytes behind its read position, and when the caller's
stream can seek (a local file) it goes back further by seeking, as after a record whose declared Content-Length
ran to the end of the file.
"""

from __future__ import annotations

import collections
import re
import zlib
from typing import BinaryIO

SCAN_BLOCK = 1 << 20
PEEK_BYTES = 1 << 16
HISTORY_BYTES = 8 << 20      # raw bytes kept behind the read position for resynchronisation

_WARC_LINE_RX = re.compile(rb"WARC/(?:1\.[01]|0\.1[78])\r?\n")
_ARC_LINE_RX = re.compile(
    rb"(?:https?|ftp|ftps|dns|filedesc):[^\r\n]{1,8192}? \S+ \d{12,18} \S+ -?\d+\r?\n")
_PLAIN_RESYNC_RX = re.compile(rb"(?<=\n)(?:" + _WARC_LINE_RX.pattern + rb"|"
                              + _ARC_LINE_RX.pattern + rb")")


class StreamError(Exception):
    """The underlying stream itself failed (I/O error): not recoverable by resync."""


class RewindableSource:
    """Wraps the caller's binary stream: tell() is the absolute offset, and the last
    `history` bytes behind the read position can be re-read (used only to resynchronise
    after damage, so non-seekable streams work too)."""

    def __init__(self, fh: BinaryIO, history: int = HISTORY_BYTES):
        self._fh = fh
        try:
            start = int(fh.tell())
        except Exception:
            start = 0
        self.start = start
        self._chunks: collections.deque[tuple[int, bytes]] = collections.deque()
        self._end = start      # absolute end of everything read from fh
        self._pos = start      # current read position
        self._history = max(int(history), SCAN_BLOCK + 2 * PEEK_BYTES)
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
        """Go to `pos`, or as near as the kept history allows: the position now read from."""
        if pos < self.history_start and self._seek_back(pos):
            return pos
        pos = max(min(pos, self._end), self.history_start)
        self._pos = pos
        return pos

    def _seek_back(self, pos: int) -> bool:
        """Read again from `pos`, before the kept history, when the caller's stream can go back there."""
        rewind = getattr(self._fh, "rewind_to", None)
        if pos < self.start or rewind is None or not rewind(pos):
            return False
        self._chunks.clear()
        self._end = self._pos = pos
        self.eof = False
        return True

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
            size = SCAN_BLOCK
        if size == 0:
            return b""
        if self._pos < self._end:
            return self._replay(size)
        if self.eof:
            return b""
        try:
            data = self._fh.read(size)
        except Exception as exc:  # the caller's stream failed
            raise StreamError(f"{type(exc).__name__}: {exc}") from exc
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


def looks_like_record_start(data: bytes) -> bool:
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


def find_resync(src: RewindableSource, start: int) -> int | None:
    """First offset >= start where a gzip member that decompresses to a record header,
    or a WARC/ARC header line (after a newline), begins; None if there is none."""
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
        chunk = src.read(SCAN_BLOCK)
        if not chunk:
            return False
        keep = max(0, i - 1)
        buf = buf[keep:] + chunk
        buf_start += keep
        i -= keep
        return True

    while True:
        if not eof and len(buf) - i < 2 * PEEK_BYTES:
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
        if c + PEEK_BYTES > len(buf) and not eof:
            chunk = src.read(SCAN_BLOCK)
            if chunk:
                buf += chunk
                continue
            eof = True
        if c == g:
            try:
                head = zlib.decompressobj(31).decompress(buf[c:c + PEEK_BYTES], 512)
            except zlib.error:
                head = b""
            if head and looks_like_record_start(head):
                return buf_start + c
        elif _plausible_header_block(buf[c:c + PEEK_BYTES]):
            return buf_start + c
        i = c + 1
