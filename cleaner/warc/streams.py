"""A raw byte stream that counts what it hands out, the base of the WARC readers' wrappers."""

from __future__ import annotations

import io


class CountingReader(io.RawIOBase):
    """A readable raw stream whose tell() is `start` plus the bytes read() has returned: a WARC reader over it
    reports record offsets in the coordinates the wrapper chooses (the file's, or the decompressed WARC's).
    A subclass defines read(size) and adds what it returns to `_pos`."""

    def __init__(self, start: int = 0):
        super().__init__()
        self._pos = start

    def readable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def readinto(self, buf) -> int:
        data = self.read(len(buf))
        buf[:len(data)] = data
        return len(data)
