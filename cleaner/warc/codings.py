"""HTTP codings undone with caps: chunked transfer coding (verified: bytes that are not really chunked are
kept) and the content codings gzip, deflate and br (output bounded, against decompression bombs)."""

from __future__ import annotations

import re
import zlib

try:  # optional: only used for Content-Encoding: br
    import brotli as _brotli
except ImportError:  # pragma: no cover - depends on the environment
    _brotli = None


def dechunk(raw: bytes, complete_input: bool = True) -> tuple[bytes, str]:
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


def decode_content(data: bytes, coding: str, cap: int) -> tuple[bytes, str]:
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
