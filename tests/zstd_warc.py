"""Test helper: a plain WARC (built by scripts/make_warc.py) compressed as a `.warc.zst`, the way the
IIPC warc.zst convention writes one: a zstd frame per record, compressed with a dictionary that a
skippable frame (magic 0x184D2A5D) at the start of the file carries, itself zstd-compressed."""

from __future__ import annotations

from pathlib import Path

import zstandard

from cleaner.warc import ZSTD_DICT_MAGIC
from jobs.scan import scan_plain_records


def record_bytes(plain: Path) -> list[bytes]:
    raw = plain.read_bytes()
    with open(plain, "rb") as fh:
        offsets = scan_plain_records(fh, len(raw))
    assert offsets, f"{plain} is not a plain WARC of whole records"
    return [raw[a:b] for a, b in zip(offsets, offsets[1:] + [len(raw)])]


def write_zstd_warc(plain: Path, out: Path, *, dictionary: bool = True, with_dict_frame: bool = True,
                    compress_dict: bool = True) -> Path:
    """`plain` compressed record by record; with a trained dictionary (in a leading skippable frame,
    itself compressed unless `compress_dict` is False; no frame when `with_dict_frame` is False: frames
    that cannot be read without it)."""
    records = record_bytes(plain)
    if not dictionary:
        cctx = zstandard.ZstdCompressor(level=3)
        out.write_bytes(b"".join(cctx.compress(r) for r in records))
        return out
    trained = zstandard.train_dictionary(8192, records * 8)
    cctx = zstandard.ZstdCompressor(level=3, dict_data=trained)
    frames = b"".join(cctx.compress(r) for r in records)
    packed = zstandard.ZstdCompressor().compress(trained.as_bytes()) if compress_dict else trained.as_bytes()
    head = ZSTD_DICT_MAGIC + len(packed).to_bytes(4, "little") + packed if with_dict_frame else b""
    out.write_bytes(head + frames)
    return out
