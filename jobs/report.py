"""What the driver tells its user: log lines, a progress line per finished WARC file (read from the counters
while the job runs) and the summary table of a run record."""

from __future__ import annotations

import logging
import shutil
import sys
import threading
import time

from . import formats
from .outcomes import Outcome, PieceOutcome
from .storage import base_name

log = logging.getLogger("clean_warc")


class _JobLogHandler(logging.StreamHandler):
    """The job's stderr handler, marked so that setup_logging adds it once."""

    _clean_warc = True


def setup_logging() -> None:
    if not any(getattr(h, "_clean_warc", False) for h in log.handlers):
        h = _JobLogHandler(sys.stderr)
        h.setFormatter(logging.Formatter("%(asctime)s clean_warc: %(message)s", "%H:%M:%S"))
        log.addHandler(h)
    log.setLevel(logging.INFO)
    log.propagate = False


class ProgressLogger(threading.Thread):
    """One line per finished WARC file, from the pieces' outcomes in `acc.value` (polled while the job runs)."""

    def __init__(self, acc, pieces: list[dict], interval: float = 1.0, crash_when=None, stop_when=None):
        super().__init__(name="clean_warc-progress", daemon=True)
        self.acc = acc
        self.crash_when = crash_when  # test hook --simulate-crash during_write: (when, crash)
        self.stop_when = stop_when  # (when, stop): the job stops early, as when the run lost its lease
        self.interval = interval
        self.parts: dict[str, int] = {}
        for p in pieces:
            self.parts[p["uri"]] = p["parts"]
        self.order = list(dict.fromkeys(p["uri"] for p in pieces))
        self.logged: set[str] = set()
        self._stop_event = threading.Event()

    def run(self) -> None:
        while not self._stop_event.wait(self.interval):
            self.poll()

    def stop(self) -> None:
        self._stop_event.set()
        self.join(timeout=10)
        self.poll()

    def poll(self) -> None:
        try:
            snap = self.acc.value
        except Exception:
            return
        if self.crash_when is not None and self.crash_when[0]():  # the write is under way: stop the job
            self.crash_when[1]()
            self.crash_when = None
        if self.stop_when is not None and self.stop_when[0]():
            self.stop_when[1]()
            self.stop_when = None
        by_file: dict[str, list[PieceOutcome]] = {}
        for value in snap.values():
            piece = PieceOutcome.from_dict(value)
            by_file.setdefault(piece.file, []).append(piece)
        for uri, done in by_file.items():
            if uri in self.logged or len(done) < self.parts.get(uri, 1):
                continue
            self.logged.add(uri)
            f = Outcome.total(p.outcome for p in sorted(done, key=lambda p: p.start))
            extra = f" ({f.pieces} ranges)" if f.pieces > 1 else ""
            err = f", OPEN FAILED: {f.open_error}" if f.open_error else ""
            log.info("WARC %d/%d done: %s%s: %d records, %d cleaned, %d rejected, %d skipped, "
                     "%d errors, %.1f s%s", len(self.logged), len(self.parts), base_name(uri), extra,
                     f.records_read, f.cleaned, sum(f.rejected.values()),
                     sum(f.skipped.values()), len(f.errors), f.seconds, err)


class StatusLine:
    """`cleaner clean-warc`'s progress inside the files: records and MB of pages cleaned so far, their rates and the
    files done. On a terminal one line rewritten in place; elsewhere nothing, unless asked (`wanted`: --progress),
    then a log line every `every` seconds. `seen`: {worker pid: (records, payload bytes)} so far."""

    interval = 0.5  # how often the driver looks

    def __init__(self, stream, wanted: bool | None, pieces: list[dict], every: float = 10.0):
        self.stream = stream
        tty = bool(getattr(stream, "isatty", lambda: False)())
        self.on = tty if wanted is None else wanted
        self.tty = tty and self.on
        self.every = every
        self.parts: dict[str, set[str]] = {}
        for p in pieces:
            self.parts.setdefault(p["uri"], set()).add(p["key"])
        self.t0 = self.last = time.monotonic()
        self.drawn = False

    def text(self, seen: dict, counters: dict) -> str:
        records = sum(r for r, _ in seen.values())
        mb = sum(b for _, b in seen.values()) / 1e6
        done = sum(1 for keys in self.parts.values() if keys <= counters.keys())
        took = max(time.monotonic() - self.t0, 1e-9)
        return (f"{records:,} records, {mb:,.1f} MB of pages cleaned ({records / took:,.1f} records/s, "
                f"{mb / took:,.2f} MB/s); {done} of {len(self.parts)} files done; {took:,.0f} s")

    def show(self, seen: dict, counters: dict) -> None:
        if not self.on:
            return
        now = time.monotonic()
        if self.tty:
            width = shutil.get_terminal_size((100, 20)).columns - 1
            self.stream.write("\r" + self.text(seen, counters)[:width] + "\x1b[K")
            self.stream.flush()
            self.drawn = True
        elif now - self.last >= self.every:
            self.last = now
            log.info("progress: %s", self.text(seen, counters))

    def clear(self) -> None:
        if self.drawn:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self.drawn = False


def print_summary(record: dict, stream, max_files: int = 40) -> None:
    t = record["totals"]
    rows = []
    for f in record["files"].values():
        rows.append((f["name"], f["records_read"], f["html_records"], f["cleaned"],
                     sum(f["rejected"].values()), sum(f["skipped"].values()),
                     len(f["errors"]) + bool(f.get("open_error")),  # a file not read: its one error
                     f"{f['seconds']:.1f}", f["status"]))
    width = max([len("file"), len("TOTAL")] + [min(len(r[0]), 48) for r in rows])
    head = ("file", "records", "html", "cleaned", "rejected", "skipped", "errors", "seconds",
            "status")
    fmt = f"{{:<{width}}} {{:>8}} {{:>7}} {{:>8}} {{:>9}} {{:>8}} {{:>7}} {{:>8}}  {{}}"
    w = stream.write
    w(f"\nclean_warc run {record['run_id']}: {t['files']} WARC files, "
      f"{record['distribution']['tasks']} tasks ({record['distribution']['split_files']} files "
      f"split into record ranges)\n")
    w(fmt.format(*head) + "\n")
    for r in rows[:max_files]:
        name = r[0] if len(r[0]) <= 48 else "..." + r[0][-45:]
        w(fmt.format(name, *r[1:]) + "\n")
    if len(rows) > max_files:
        w(f"... {len(rows) - max_files} more files (see .run.json)\n")
    w(fmt.format("TOTAL", t["records_read"], t["html_records"], t["cleaned"],
                 sum(t["rejected"].values()), sum(t["skipped"].values()), t["errors"] + t["failed_files"],
                 f"{record['elapsed_s']:.1f}", f"{t['failed_files']} failed") + "\n")
    if t["rejected"]:
        w("rejected: " + ", ".join(f"{k} {v}" for k, v in t["rejected"].items()) + "\n")
    if t.get("expected_f1"):
        w("cleaned by expected word F1: " + ", ".join(f"{k} {v}" for k, v in t["expected_f1"].items()) + "\n")
    if t.get("blocks_truncated"):
        max_blocks = record["config"].get("limits", {}).get("max_blocks")
        w(f"truncated: {t['blocks_truncated']} pages had more than {max_blocks} blocks ([limits] max_blocks): only "
          "the first were cleaned (column blocks_truncated)\n")
    if t["skipped"]:
        w("skipped:  " + ", ".join(f"{k} {v}" for k, v in t["skipped"].items()) + "\n")
    left = record.get("inputs_skipped") or []
    if left:
        w(f"inputs left out: {len(left)} (each with its reason in .run.json inputs_skipped)\n")
        for s in left[:10]:
            w(f"  {s['path']}: {s['reason']}\n")
        if len(left) > 10:
            w(f"  ... {len(left) - 10} more\n")
    o = record["output"]
    w(f"rows written: {o['rows_written']} in {o['parquet_files']} {formats.NAMES[o.get('format', 'parquet')]} files "
      f"({o['bytes_written'] / 1e6:.2f} MB) -> {o['run_dir']}\n")
    w(f"elapsed {record['elapsed_s']:.1f} s, {record['docs_per_s']} documents/s; "
      f"errors: {t['errors'] + t['failed_files']} in {t['damaged_files'] + t['failed_files']} files "
      f"({f'{failed} not read at all, open_error; ' if (failed := t['failed_files']) else ''}"
      "file + offset in .run.json)\n")
    stream.flush()
