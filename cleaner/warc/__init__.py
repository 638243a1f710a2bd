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

One module per role; this package re-exports the public names (`from cleaner.warc import X`):

    records.py  HtmlRecord, WarcFileStats (the accounting), the limits
    read.py     iter_html_records, open_warc: the reader, record by record
    archive.py  warcio's iterator and gzip reader, adapted to report damage
    recover.py  the rewindable source and the search for the next record after damage
    codings.py  chunked transfer coding and gzip/deflate/br content codings undone, with caps
    content.py  media type, charset, URL, status; sniff_html
    zstd.py     .warc.zst input (with or without a dictionary)
    write.py    write_html_warc
"""

from .content import HTML_MIMES, SNIFF_MIMES, sniff_html
from .read import SKIPPED_TYPES, iter_html_records, open_warc
from .records import DEFAULT_MAX_PAYLOAD_BYTES, MAX_ERRORS, MAX_MIME_KEYS, HtmlRecord, WarcFileStats
from .write import write_html_warc
from .zstd import ZSTD_DICT_MAGIC, ZSTD_MAGIC, ZstdInputError

__all__ = [
    "DEFAULT_MAX_PAYLOAD_BYTES",
    "HTML_MIMES",
    "MAX_ERRORS",
    "MAX_MIME_KEYS",
    "SKIPPED_TYPES",
    "SNIFF_MIMES",
    "ZSTD_DICT_MAGIC",
    "ZSTD_MAGIC",
    "HtmlRecord",
    "WarcFileStats",
    "ZstdInputError",
    "iter_html_records",
    "open_warc",
    "sniff_html",
    "write_html_warc",
]
