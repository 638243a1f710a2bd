"""The records a WARC file yields and the accounting of one file (cleaner/warc/read.py fills both)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

DEFAULT_MAX_PAYLOAD_BYTES = 10_000_000
MAX_MIME_KEYS = 50           # distinct "non_html:<mime>" keys per file; the rest -> non_html:other
MAX_ERRORS = 1000            # after this many errors in one file, stop reading it


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

    def count_skip(self, reason: str) -> None:
        self.skipped[reason] = self.skipped.get(reason, 0) + 1

    def add_error(self, offset: int, error: str) -> dict:
        entry = {"offset": int(offset), "error": error}
        self.errors.append(entry)
        return entry

    def add_warning(self, offset: int, warning: str) -> None:
        self.warnings.append({"offset": int(offset), "warning": warning})
