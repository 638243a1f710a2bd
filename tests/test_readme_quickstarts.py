"""The README's quickstarts for `cleaner clean-warc` and the datatrove step, run as a reader would: each code
block copied out of README.md as it stands and run in a folder holding `crawl/` (a WARC built from the shared
pages with scripts/make_warc.py) and `.venv` (this checkout's)."""

from __future__ import annotations

import gzip
import json
import re
import subprocess
import sys

import pytest
from conftest import ROOT

README = (ROOT / "README.md").read_text()


def block_under(heading: str, lang: str) -> str:
    """The first ```lang code block after the README heading that starts with `heading`."""
    at = README.index("\n## " + heading)
    m = re.compile(rf"```{lang}\n(.*?)```", re.S).search(README, at)
    assert m, f"no {lang} block under {heading!r}"
    return m.group(1)


@pytest.fixture
def reader_folder(tmp_path, data_dir):
    (tmp_path / "crawl").mkdir()
    subprocess.run([sys.executable, str(ROOT / "scripts" / "make_warc.py"), str(data_dir / "dragnet" / "html"),
                    "--limit", "12", "--out", str(tmp_path / "crawl" / "sample.warc.gz")],
                   check=True, capture_output=True, timeout=120)
    (tmp_path / ".venv").symlink_to(ROOT / ".venv")
    return tmp_path


def test_the_clean_warc_quickstart(reader_folder):
    with gzip.open(reader_folder / "warc.paths.gz", "wt") as fh:
        fh.write("sample.warc.gz\n")
    script = block_under("WARC files on one machine", "sh")
    run = subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=reader_folder, capture_output=True,
                         text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    record = json.loads((reader_folder / "cleaned" / ".run.json").read_text())
    assert record["output"]["rows_written"] == 12 and record["totals"]["cleaned"] == 12
    # the second line found the path list's one file done by the first
    assert "nothing to do" in run.stderr
    assert len(list((reader_folder / "cleaned").glob("run=*"))) == 1


def test_the_datatrove_quickstart(reader_folder):
    (reader_folder / "pipeline.py").write_text(block_under("In a datatrove pipeline", "python"))
    run = subprocess.run([str(reader_folder / ".venv" / "bin" / "python"), "pipeline.py"], cwd=reader_folder,
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    docs = []
    for f in sorted((reader_folder / "cleaned").glob("*.jsonl.gz")):
        with gzip.open(f, "rt") as lines:
            docs += [json.loads(line) for line in lines]
    assert len(docs) == 12
    assert all(d["text"].strip() and d["metadata"]["cleaner_status"] == "cleaned" for d in docs)
