"""A saved page's bytes: the one reader of gzip-compressed pages (`NAME.html.gz`, as wcxb keeps them).

`cleaner clean` (cleaner.tools.inputs), the data sets (cleaner.gold.data) and `scripts/make_warc.py` read a
compressed page here, so that all of them see the same text. A `.gz` file may hold several gzip members one
after another (`gzip -c a b > p.gz`, `cat a.gz b.gz`, a download resumed by appending): gzip and `zcat` read them
all as one stream, and so does this reader; zlib's decompressor alone stops at the end of the first.
"""

from __future__ import annotations

import zlib
from pathlib import Path

GZIP_MAGIC = b"\x1f\x8b"
# Over [limits] max_html_bytes (10 MB): a page past it is rejected as too_large anyway, and a decompression
# bomb stops here.
GUNZIP_LIMIT = 64 * 1024 * 1024


def gunzip(data: bytes, limit: int = GUNZIP_LIMIT) -> bytes:
    """`data` decompressed when it is gzip-compressed, every member of it, up to `limit` bytes in all.
    Anything else, or a first member that is damaged, is returned as it is (for clean_html to judge). What
    follows a member and is no gzip member (the zero padding some tools add, damage) ends the page there, as
    `zcat` ends it (with a warning that has nowhere to go here); a member cut short gives what it holds."""
    if data[:2] != GZIP_MAGIC:
        return data
    parts: list[bytes] = []
    room = limit
    rest = data
    while rest[:2] == GZIP_MAGIC and room > 0:
        inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
        try:
            part = inflater.decompress(rest, room)
        except zlib.error:
            if not parts:
                return data
            break
        parts.append(part)
        room -= len(part)
        if not inflater.eof:  # cut short, or the limit reached
            break
        rest = inflater.unused_data
    return b"".join(parts)


def read_saved_page(path: str | Path, limit: int = GUNZIP_LIMIT) -> bytes:
    """The bytes of a saved page file, decompressed when they are gzip-compressed (whatever the name)."""
    return gunzip(Path(path).read_bytes(), limit)
