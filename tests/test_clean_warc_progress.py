"""`cleaner clean-warc` inside a file (issue 44): a progress line while the files are cleaned, and Ctrl-C that stops
at once, says what was kept, keeps the files finished (published whole, so that --skip-done stays exact) and exits
130. Real WARCs built with scripts/make_warc.py, the real command in its own process group, a real SIGINT."""

from __future__ import annotations

import collections
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pyarrow.parquet as pq

from conftest import ROOT, make_warc


def test_progress_and_ctrl_c_keep_the_finished_files_and_skip_done_stays_exact(data_dir, tmp_path):
    # 1,497 pages of 2025, ~8 s on one core: still under way when the small file is done and a progress line has
    # said so (dragnet's 1,381 lighter pages took ~4 s, and the cleaning keeps getting faster)
    big = make_warc(tmp_path / "big.warc.gz", str(data_dir / "wcxb" / "html"))
    small = make_warc(tmp_path / "small.warc.gz", str(data_dir / "cleaneval-dev" / "html"), "--limit", "5")
    conf = tmp_path / "files.toml"
    conf.write_text('[job]\ndistribution = "files"\n')  # one task per file: the small one ends first
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "cleaner.tools.cli", "clean-warc", str(big), str(small), "--out", str(out),
           "--jobs", "2", "--conf", str(conf)]
    proc = subprocess.Popen([*cmd, "--progress", "--progress-every", "1"], cwd=ROOT, stderr=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True, start_new_session=True)
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(proc.stderr), daemon=True)  # type: ignore[arg-type]
    reader.start()

    def seen(text: str) -> bool:
        return any(text in line for line in list(lines))

    deadline = time.monotonic() + 300
    while not (seen("small.warc.gz") and seen("progress: ") and proc.poll() is None):
        assert proc.poll() is None and time.monotonic() < deadline, "".join(lines)[-3000:]
        time.sleep(0.1)
    time.sleep(1.5)  # the big file is under way: a progress line says how far
    progress = [ln for ln in lines if "progress: " in ln]
    assert progress and " records, " in progress[-1] and "1 of 2 files done" in progress[-1]

    t0 = time.monotonic()
    os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C: the whole foreground group, workers too
    proc.wait(timeout=60)
    stopped_in = time.monotonic() - t0
    reader.join(timeout=10)
    text = "".join(lines)
    assert proc.returncode == 130, text[-3000:]
    assert stopped_in < 3.0, f"stopped in {stopped_in:.1f} s"
    said = [ln for ln in lines if "interrupted: " in ln]
    assert len(said) == 1 and "kept 1 of 2 files whole (5 rows)" in said[0], text[-3000:]
    print(f"Ctrl-C to exit: {stopped_in:.2f} s")

    # the run published holds the small file's rows alone, and says so; nothing staged is left
    runs = sorted(out.glob("run=*"))
    assert len(runs) == 1 and not list((out / ".staging").iterdir())
    record = json.loads((runs[0] / ".run.json").read_text())
    assert [f["name"] for f in record["files"].values()] == ["small.warc.gz"]
    assert set(pq.read_table(out).column("warc_file").to_pylist()) == {str(small)}

    # --skip-done cleans the big file, and every record is there once; no progress line off a terminal unasked
    again = subprocess.run([*cmd, "--skip-done"], cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert again.returncode == 0, again.stderr[-3000:]
    assert "progress: " not in again.stderr
    second = json.loads((out / ".run.json").read_text())
    assert [f["name"] for f in second["files"].values()] == ["big.warc.gz"]
    rows = pq.read_table(out, columns=["warc_file", "warc_offset", "record_id"]).to_pylist()
    keys = collections.Counter(tuple(r.values()) for r in rows)
    assert max(keys.values()) == 1
    assert len(rows) == 5 + second["files"][str(big)]["html_records"]
    assert Path(out / ".run.json").exists()
