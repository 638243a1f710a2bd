"""The README's quickstarts run as written: each block marked `<!-- quickstart: NAME -->` is executed (`sh`
blocks with bash, `python` blocks with the project's interpreter) in a folder holding `page.html` and
`sample.warc.gz`, with the project's .venv/bin first on the PATH as after `source .venv/bin/activate`; the
test checks what a user would see: text printed, Parquet rows for every HTML record, JSON Lines written."""

from __future__ import annotations

import gzip
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from conftest import ROOT

BLOCK = re.compile(r"<!-- quickstart: ([\w-]+) -->\n```(sh|python)\n(.*?)```", re.S)
PAGES = 8  # HTML records of the sample WARC
EXPECTED = ("library", "metadata", "cli", "one-machine", "loaders", "spark-local", "cluster", "datatrove")


def quickstarts() -> dict[str, tuple[str, str]]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return {name: (lang, code) for name, lang, code in BLOCK.findall(text)}


@pytest.fixture(scope="module")
def workdir(tmp_path_factory, data_dir) -> Path:
    d = tmp_path_factory.mktemp("quickstart")
    pages = sorted((data_dir / "cleaneval-dev" / "html").glob("*.html"), key=lambda p: int(p.stem))
    shutil.copy(pages[0], d / "page.html")
    subprocess.run([sys.executable, str(ROOT / "scripts" / "make_warc.py"), str(data_dir / "cleaneval-dev" / "html"),
                    "--limit", str(PAGES), "--date", "2024-05-06T07:08:09Z", "--out", str(d / "sample.warc.gz")],
                   check=True, capture_output=True)
    return d


def run_block(name: str, cwd: Path, **env_more: str) -> subprocess.CompletedProcess:
    lang, code = quickstarts()[name]
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}", **env_more)
    env.pop("MASTER", None)
    cmd = ["bash", "-euo", "pipefail", "-c", code] if lang == "sh" else [sys.executable, "-c", code]
    r = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, (name, r.returncode, r.stderr[-3000:])
    return r


def parquet_rows(folder: Path) -> list[dict]:
    files = sorted(folder.rglob("*.parquet"))
    assert files, f"no Parquet under {folder}"
    return [row for f in files for row in pq.read_table(f).to_pylist()]


def test_the_readme_has_every_quickstart():
    assert set(EXPECTED) <= set(quickstarts()), sorted(quickstarts())


def test_library_and_cli_quickstarts_print_the_page_text(workdir):
    lib = run_block("library", workdir).stdout
    cli = run_block("cli", workdir).stdout
    assert len(lib.split()) > 20 and not lib.startswith("rejected")
    assert "<p>" not in cli and lib.split() == cli.split()  # the same text by both ways in


def test_markdown_quickstart_prints_the_same_words(workdir):
    markdown = run_block("markdown", workdir).stdout
    text = run_block("cli", workdir).stdout
    words = [w for w in (w.strip("#*`>|-") for w in markdown.split()) if w]
    assert len(words) > 20 and sum(w in set(text.split()) for w in words) >= 0.9 * len(words)  # (the same text)


def test_metadata_quickstart_prints_the_columns(workdir):
    out = run_block("metadata", workdir).stdout
    assert "'title': " in out and "'published': " in out and "'page_type': " in out


@pytest.mark.parametrize("name, out", [("one-machine", "cleaned-local"), ("spark-local", "cleaned-spark"),
                                       ("cluster", "cleaned-cluster")])
def test_warc_quickstarts_write_a_row_for_every_record(workdir, name, out):
    r = run_block(name, workdir)
    rows = parquet_rows(workdir / out)
    assert len(rows) == PAGES and len({row["id"] for row in rows}) == PAGES
    assert sum(row["status"] == "cleaned" for row in rows) >= PAGES - 1
    if name == "one-machine":  # its DuckDB query printed rows with a language
        assert "en" in r.stdout


def test_loaders_quickstart_reads_each_document_once(workdir, tmp_path):
    if not (workdir / "cleaned-local").exists():
        run_block("one-machine", workdir)
    out = run_block("loaders", workdir, HF_HOME=str(tmp_path / "hf")).stdout
    assert out.startswith(f"{PAGES} documents;") and f" {PAGES} │" in out  # datasets' rows, then DuckDB's count


def test_datatrove_quickstart_writes_json_lines(workdir):
    run_block("datatrove", workdir)
    docs = []
    for f in sorted((workdir / "cleaned-datatrove").glob("*.jsonl.gz")):
        with gzip.open(f, "rt", encoding="utf-8") as lines:
            docs += [json.loads(line) for line in lines]
    assert len(docs) >= PAGES - 1 and all(d["text"].strip() for d in docs)


def test_every_script_is_listed_in_scripts_readme_and_every_listed_one_is_there():
    """What developers run is listed in scripts/README.md (issue 44): each file of scripts/ is named in its tables,
    and each script its tables name is there, but the ones its "Removed" section says git keeps."""
    text = (ROOT / "scripts" / "README.md").read_text(encoding="utf-8")
    kept, _, removed = text.partition("## Removed")
    named = set(re.findall(r"`([\w.-]+\.(?:py|sh))`", kept))
    present = {p.name for p in (ROOT / "scripts").iterdir() if p.suffix in (".py", ".sh")}
    assert present - named == set(), "scripts not listed in scripts/README.md"
    assert named - present == set(), "scripts/README.md lists scripts that are not there"
    gone = set(re.findall(r"^\| `([\w.-]+\.py)`", removed, re.M))
    assert gone and not gone & present
