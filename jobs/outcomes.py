"""What became of the records of a WARC file: one typed outcome record, merged with `+`.

The worker (jobs/worker.py) fills one `Outcome` per piece (a whole file or a record range of it) and sends it,
with where and how the piece ran (`PieceOutcome`), as a plain dict: the value of a Spark accumulator, or of a
process pool's future (`cleaner clean-warc`). The driver reads it back with `from_dict` and adds the pieces of
a file (`Outcome.total`), then the files of the run; `file_entry` and `totals_entry` are the `.run.json` forms
of both, which the progress lines and the summary table read too. Each field says how it merges, so a counter
added here is merged, sent and read back everywhere at once.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

# Bands of expected word F1 the run's report counts cleaned records in (docs/confidence.md).
EXPECTED_F1_BANDS = ((0.9, "0.9-1"), (0.8, "0.8-0.9"), (0.5, "0.5-0.8"), (0.0, "0-0.5"))

# Rejection reasons that say the cleaner failed, not the page: a run whose every page was rejected for one
# of them (a config or model that breaks every page) is not published, so its files are not marked done.
SYSTEMATIC_REASONS = ("internal_error", "parse_error", "decode_failed", "timeout", "poison")
# ... when the run has at least this many HTML records: fewer pages that all fail may just be bad pages, and
# a run of them held back would be held back again by every --skip-done run, never done.
SYSTEMATIC_MIN_RECORDS = 5

# The reader's errors that say the input ended inside a gzip member or a record (cleaner/warc/read.py).
_EOF_ERRORS = ("gzip member truncated", "record truncated:")


def expected_f1_band(value: float | None) -> str:
    """The band of a record's expected word F1; "none" for labellers without probabilities."""
    if value is None:
        return "none"
    return next(name for low, name in EXPECTED_F1_BANDS if value >= low)


def by_band(counts: dict[str, int]) -> dict[str, int]:
    """Counts by band of expected word F1, the surest band first; empty bands left out."""
    order = [name for _, name in EXPECTED_F1_BANDS] + ["none"]
    return {name: counts[name] for name in order if counts.get(name)}


def _merged(how: str, default: Any = None, factory: Any = None) -> Any:
    """A field that says how two outcomes merge it: "sum", "counts" (dicts of counts added key by key),
    "join" (lists, in order), "first" (the first that is set) or "all" (true only when both are)."""
    if factory is not None:
        return field(default_factory=factory, metadata={"merge": how})
    return field(default=default, metadata={"merge": how})


@dataclass
class Outcome:
    """The outcome of the records of a piece, a file or a run. `Outcome()` is the zero: `a + Outcome() == a`.
    Accounting: cleaned + rejected == html_records, and html_records + skipped == records_read."""

    records_read: int = _merged("sum", 0)            # records whose header block the reader parsed
    html_records: int = _merged("sum", 0)            # HTML records: a row each
    cleaned: int = _merged("sum", 0)
    rejected: dict[str, int] = _merged("counts", factory=dict)     # reason -> HTML records
    expected_f1: dict[str, int] = _merged("counts", factory=dict)  # band -> cleaned records
    skipped: dict[str, int] = _merged("counts", factory=dict)      # reason -> records that are no HTML page
    errors: list[dict] = _merged("join", factory=list)     # the reader's: {"offset", "error"[, "resync_offset"]}
    warnings: list[dict] = _merged("join", factory=list)   # nothing lost: {"offset", "warning"}
    open_error: str | None = _merged("first")             # the file could not be opened (or read at all)
    first_internal_error: dict | None = _merged("first")  # {"offset", "error"} of the first internal_error
    reached_end: bool = _merged("all", True)              # the reader read to the end of the input
    completed: bool = _merged("all", True)                # ... with no error and the file opened
    bytes_read: int = _merged("sum", 0)
    truncated_payloads: int = _merged("sum", 0)     # payloads cut at the reader's cap
    blocks_truncated: int = _merged("sum", 0)       # pages over [limits] max_blocks: only the first were cleaned
    pieces: int = _merged("sum", 0)
    seconds: float = _merged("sum", 0.0)
    cpu_seconds: float = _merged("sum", 0.0)
    clean_seconds: float = _merged("sum", 0.0)
    reader_seconds: float = _merged("sum", 0.0)

    def __add__(self, other: Outcome) -> Outcome:
        merged: dict[str, Any] = {}
        for f in dataclasses.fields(self):
            a, b, how = getattr(self, f.name), getattr(other, f.name), f.metadata["merge"]
            if how == "sum":
                merged[f.name] = a + b
            elif how == "counts":
                merged[f.name] = {**a, **{k: a.get(k, 0) + v for k, v in b.items()}}
            elif how == "join":
                merged[f.name] = [*a, *b]
            elif how == "first":
                merged[f.name] = a or b
            else:
                merged[f.name] = a and b
        return Outcome(**merged)

    @classmethod
    def total(cls, outcomes: Iterable[Outcome]) -> Outcome:
        return sum(outcomes, cls())

    # --- counting, record by record (jobs/worker.py) ---

    def count_cleaned(self, expected_f1: float | None) -> None:
        self.cleaned += 1
        band = expected_f1_band(expected_f1)
        self.expected_f1[band] = self.expected_f1.get(band, 0) + 1

    def count_rejected(self, reason: str) -> None:
        self.rejected[reason] = self.rejected.get(reason, 0) + 1

    # --- what the counts say ---

    @property
    def accounted(self) -> bool:
        rejected = sum(self.rejected.values())
        return (self.cleaned + rejected + sum(self.skipped.values()) == self.records_read
                and self.cleaned + rejected == self.html_records)

    def whole_file(self) -> Outcome:
        """This total of a file's pieces as the run records the file: a file of which no record could be read,
        only errors, failed (to be retried), not done like an empty file."""
        if self.open_error or self.records_read or not self.errors:
            return self
        return dataclasses.replace(
            self, open_error=f"no WARC/ARC record could be read: {self.errors[0]['error']}"[:500], errors=[])

    def ended_at(self) -> int | None:
        """The byte offset where the file ended early (its last error is the input ending inside a gzip member
        or a record: a copy still in progress, a cut download), else None. Damage in the middle of a file,
        after which the reader found the next record and read to the end, is not ending early."""
        if not self.errors or self.open_error:
            return None
        last = max(self.errors, key=lambda e: e.get("offset", -1))
        if str(last.get("error", "")).startswith(_EOF_ERRORS) and last.get("resync_offset") is None:
            return int(last["offset"])
        if "resync_offset" in last and last["resync_offset"] is None:
            return int(last["offset"])  # unreadable from there on: no next record up to the end (cut in a header)
        return None

    @property
    def status(self) -> str:
        """A file's status in the run record: failed (not opened: retried by --skip-done), incomplete or done."""
        return "failed" if self.open_error else "incomplete" if self.ended_at() is not None else "done"

    # --- as dicts ---

    def to_dict(self) -> dict[str, Any]:
        """Every field, as plain values (the accumulator's form; from_dict reads it back)."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Outcome:
        return cls(**{f.name: data[f.name] for f in dataclasses.fields(cls) if f.name in data})

    def file_entry(self) -> dict[str, Any]:
        """The counts of a file's entry in `.run.json` (after its name, size, mtime and crawl)."""
        entry: dict[str, Any] = {
            "status": self.status, "open_error": self.open_error, "incomplete_at": self.ended_at(),
            "records_read": self.records_read, "html_records": self.html_records, "cleaned": self.cleaned,
            "rejected": dict(sorted(self.rejected.items())), "expected_f1": by_band(self.expected_f1),
            "skipped": dict(sorted(self.skipped.items())),
            "accounted": self.accounted, "completed": self.completed,
            "errors": self.errors, "warnings": len(self.warnings),
            "truncated_payloads": self.truncated_payloads, "blocks_truncated": self.blocks_truncated,
            "pieces": self.pieces,
            "seconds": round(self.seconds, 3), "clean_seconds": round(self.clean_seconds, 3),
            "cpu_seconds": round(self.cpu_seconds, 3), "bytes_read": self.bytes_read,
        }
        if self.first_internal_error:
            entry["first_internal_error"] = self.first_internal_error
        return entry

    @staticmethod
    def totals_entry(files: list[Outcome]) -> dict[str, Any]:
        """The run's `totals` in `.run.json` from the outcomes of its files (whole_file)."""
        t = Outcome.total(files)
        return {
            "files": len(files), "records_read": t.records_read, "html_records": t.html_records,
            "cleaned": t.cleaned, "rejected": dict(sorted(t.rejected.items())), "expected_f1": by_band(t.expected_f1),
            "skipped": dict(sorted(t.skipped.items())), "errors": len(t.errors),
            "failed_files": sum(f.status == "failed" for f in files),
            "incomplete_files": sum(f.status == "incomplete" for f in files),
            "damaged_files": sum(bool(f.errors) for f in files),
            "blocks_truncated": t.blocks_truncated,
        }


@dataclass
class PieceOutcome:
    """One piece's outcome with which piece it was and where and how it ran (the run record's `workers`)."""

    file: str
    start: int
    end: int | None
    part: int
    parts: int
    outcome: Outcome
    attempt: int = 0                    # the Spark task attempt that cleaned it
    poison_candidates: list[str] = field(default_factory=list)  # "offset:record id" rejected as poison
    task: int = -1
    pid: int = 0                        # the Python worker process
    max_rss_kb: int = 0
    model_loads_in_process: int = 0
    opened_model: bool = False
    gc_thresholds: list[int] = field(default_factory=list)
    native: str | None = None           # whether the worker ran the compiled stages (cleaner/__init__.py)

    def to_dict(self) -> dict[str, Any]:
        """One flat dict, the outcome's fields among the piece's (the accumulator's value)."""
        out = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name != "outcome"}
        return out | self.outcome.to_dict()

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PieceOutcome:
        own = {f.name: data[f.name] for f in dataclasses.fields(cls) if f.name != "outcome" and f.name in data}
        return cls(outcome=Outcome.from_dict(data), **own)


def systematic_failure(pieces: Iterable[Outcome]) -> str | None:
    """What went wrong when every HTML record of the run (at least SYSTEMATIC_MIN_RECORDS) was rejected for
    one reason that says the cleaner failed rather than the page (SYSTEMATIC_REASONS), else None."""
    run = Outcome.total(pieces)
    if run.html_records < SYSTEMATIC_MIN_RECORDS or run.cleaned or len(run.rejected) != 1:
        return None
    reason = next(iter(run.rejected))
    if reason not in SYSTEMATIC_REASONS:
        return None
    return f"every one of the {run.html_records} HTML records was rejected as {reason}"
