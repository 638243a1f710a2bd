"""zstd-compressed WARCs (.warc.zst), with or without the dictionary frame of the IIPC warc.zst convention.

A zstd file is recognised by its first bytes, whatever its name; its record offsets (and `bytes_read`) are
those of the decompressed WARC.
"""

from __future__ import annotations

import io
from typing import IO, BinaryIO, cast

from .streams import CountingReader

# The IIPC's warc.zst convention (as in Common Crawl's and wget's zstd WARCs): one or more zstd frames per
# record, optionally preceded by a skippable frame with this magic that carries the dictionary the frames
# were compressed with (itself zstd-compressed or raw).
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
ZSTD_DICT_MAGIC = b"\x5d\x2a\x4d\x18"  # skippable frame 0x184D2A5D, little-endian
_ZSTD_SKIPPABLE_HIGH = b"\x2a\x4d\x18"  # skippable frames 0x184D2A50-5F (the low nibble varies)


class ZstdInputError(Exception):
    """A zstd WARC that cannot be read (no zstandard, a broken dictionary frame)."""


class _Prefixed(CountingReader):
    """The caller's stream with bytes already read from it put back in front."""

    def __init__(self, head: bytes, fh, start: int):
        super().__init__(start)
        self._head, self._fh = head, fh

    def read(self, size: int = -1) -> bytes:
        if self._head:
            data = self._head if size is None or size < 0 else self._head[:size]
            self._head = self._head[len(data):]
        else:
            data = self._fh.read(size)
        self._pos += len(data)
        return data

    def rewind_to(self, pos: int) -> bool:
        """Read again from `pos` (an offset of the caller's stream, as tell() counts) when that stream can seek
        (a local file); False when it cannot."""
        try:
            if pos < 0 or not self._fh.seekable():
                return False
            self._fh.seek(pos)
        except (OSError, AttributeError, ValueError):
            return False
        self._head, self._pos = b"", pos
        return True


class _ZstdStream(CountingReader):
    """The decompressed bytes of a zstd WARC; tell() counts them, so record offsets of a .warc.zst are
    offsets into the decompressed WARC (a zstd file has no byte offset a reader could seek to)."""

    def __init__(self, reader):
        super().__init__()
        self._reader = reader

    def read(self, size: int = -1) -> bytes:
        try:
            data = self._reader.read(1 << 20 if size is None or size < 0 else size)
        except Exception as exc:  # zstandard.ZstdError: damage, or a dictionary the frames do not match
            hint = (" (the frames need a dictionary: a warc.zst carries it in a skippable frame at its "
                    "start, and this one has none or another)" if "dictionary" in str(exc).lower() else "")
            raise OSError(f"zstd: {exc}{hint}") from None
        self._pos += len(data)
        return data


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


def zstd_or_plain(fh: BinaryIO | io.RawIOBase) -> io.RawIOBase:
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
