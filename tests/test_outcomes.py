"""The job's outcome counters (jobs/outcomes.py): a file cleaned in record ranges is counted as the same file
cleaned whole, the counters survive the trip through the accumulator, and a file no record of which could be
read is failed (retried by --skip-done), not done. Real WARCs, the real worker and the packaged model."""

from __future__ import annotations

import pickle

import pytest

from cleaner.config import load_config
from cleaner.label.model import model_for_convention
from conftest import make_warc
from jobs import scan, worker
from jobs.outcomes import Outcome, PieceOutcome, systematic_failure

TIMING = ("seconds", "clean_seconds", "cpu_seconds")


def _clean(piece: dict, model, config) -> tuple[list[tuple], PieceOutcome]:
    rows: list[tuple] = []
    cleaning = worker.process_piece(piece, model, config, {"run_id": "test-outcomes"})
    while True:
        try:
            rows.append(next(cleaning))
        except StopIteration as done:
            return rows, done.value


@pytest.fixture(scope="module")
def model_and_config():
    config = load_config()
    return model_for_convention(config), config


def test_a_file_cleaned_in_record_ranges_is_counted_as_the_file_cleaned_whole(tmp_path, data_dir, model_and_config):
    model, config = model_and_config
    warc = make_warc(tmp_path / "pages.warc.gz", data_dir / "cleaneval-final" / "html", "--limit", "9",
                     "--with-requests")
    size = warc.stat().st_size
    whole_rows, whole = _clean({"uri": str(warc), "key": f"{warc}#0", "crawl": "t", "start": 0, "end": None},
                               model, config)
    with open(warc, "rb") as fh:
        cuts = scan.cut_points(scan.record_offsets(fh, size, True), size, 3)
    assert len(cuts) == 4  # three record ranges
    ranges = [_clean({"uri": str(warc), "key": f"{warc}#{a}", "crawl": "t", "start": a, "end": b,
                      "part": i, "parts": 3}, model, config)
              for i, (a, b) in enumerate(zip(cuts, cuts[1:]))]

    # the pieces arrive in any order; a file's outcome is their sum in file order
    pieces = [PieceOutcome.from_dict(d.to_dict()) for _, d in reversed(ranges)]
    merged = Outcome.total(p.outcome for p in sorted(pieces, key=lambda p: p.start))
    untimed = {k: v for k, v in merged.file_entry().items() if k not in TIMING}
    expected = {k: v for k, v in whole.outcome.file_entry().items() if k not in TIMING} | {"pieces": 3}
    assert untimed == expected
    assert merged.records_read == 19 and merged.html_records == 9 == sum(len(r) for r, _ in ranges)
    assert merged.cleaned + sum(merged.rejected.values()) == 9 and merged.accounted
    assert sum(len(r) for r, _ in ranges) == len(whole_rows)
    assert merged.status == "done" and merged.completed


def test_the_counters_survive_the_trip_through_the_accumulator():
    piece = PieceOutcome(file="a.warc.gz", start=10, end=20, part=1, parts=2, task=3, pid=7,
                         outcome=Outcome(records_read=3, html_records=2, cleaned=1, rejected={"no_content": 1},
                                         expected_f1={"0.9-1": 1}, skipped={"request": 1}, pieces=1,
                                         errors=[{"offset": 12, "error": "x"}], seconds=0.5))
    sent = pickle.loads(pickle.dumps(piece.to_dict()))  # what Spark's accumulator and the process pool carry
    assert sent["html_records"] == 2 and sent["file"] == "a.warc.gz"  # one flat dict, as before
    assert PieceOutcome.from_dict(sent) == piece
    assert piece.outcome + Outcome() == piece.outcome


def test_a_file_of_which_no_record_could_be_read_is_failed_not_done():
    unreadable = Outcome(pieces=1, errors=[{"offset": 0, "error": "unreadable record header: junk",
                                            "resync_offset": None}]).whole_file()
    assert unreadable.status == "failed" and unreadable.errors == []
    assert unreadable.open_error == "no WARC/ARC record could be read: unreadable record header: junk"
    cut = Outcome(records_read=2, html_records=1, cleaned=1, skipped={"warcinfo": 1}, pieces=1,
                  errors=[{"offset": 900, "error": "gzip member truncated (input ends inside it)"}]).whole_file()
    assert cut.status == "incomplete" and cut.file_entry()["incomplete_at"] == 900
    totals = Outcome.totals_entry([unreadable, cut, Outcome(records_read=1, skipped={"warcinfo": 1}, pieces=1)])
    assert (totals["files"], totals["failed_files"], totals["incomplete_files"], totals["damaged_files"]) == \
        (3, 1, 1, 1)
    assert totals["errors"] == 1 and totals["skipped"] == {"warcinfo": 2}
    # a run whose every record failed for one reason of the cleaner's is held back; the pages' reasons are not
    assert systematic_failure([Outcome(html_records=5, rejected={"timeout": 5})]) is not None
    assert systematic_failure([Outcome(html_records=5, rejected={"no_content": 5})]) is None
