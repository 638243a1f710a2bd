"""Where `cleaner clean` writes: one file per page in a folder, one JSON line per page in a file, or
standard output. Every destination is checked before the first page is cleaned, so that a run is
refused whole (nothing written) rather than stopping half-way or overwriting what it should not.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import TextIO

from ..output.files import write_atomic
from .inputs import Page

STDOUT = "-"
FORMATS = ("cleaneval", "txt", "json", "jsonl")
SUFFIX = {"cleaneval": ".txt", "txt": ".txt", "json": ".json", "jsonl": ".jsonl"}


class OutputRefused(Exception):
    """The output cannot or must not be written; the message names the file and what to do."""


def render(result, page: Page, fmt: str, corpus=None) -> str:
    """The bytes written for one page, as text: CleanEval segments, plain text, or a JSON document
    (one line; `json` with the blocks, `jsonl` without; with `corpus` (cleaner.output.corpus.CorpusColumns) the
    Spark job's corpus columns of the plain text: language, dedup keys, quality signals)."""
    if fmt == "cleaneval":
        return result.cleaneval + ("\n" if result.cleaneval else "")  # a rejected page: an empty file
    if fmt == "txt":
        return result.plain + ("\n" if result.plain else "")
    doc = result_json(result, page.shown, blocks=fmt == "json")
    if corpus is not None:
        doc.update(corpus.columns(result.plain))
    return json.dumps(doc, ensure_ascii=False) + "\n"


def result_json(result, name: str, *, blocks: bool = True) -> dict:
    doc = {
        "file": name,
        "status": result.status,
        "reason": result.reason,
        "error": result.error,
        # more than [limits] max_blocks blocks: only the first were cleaned (README, "Cleaning pages")
        "truncated": result.blocks_truncated,
        "n_blocks": result.n_blocks,
        "encoding": result.encoding,
        "encoding_source": result.encoding_source,
        "model_hash": result.model_hash,
        **result.metadata_columns(),  # title, published, author, ...: the job's columns (docs/metadata.md)
        "stats": result.stats.to_dict() if result.stats else None,
        # the names of the job's columns: `text` the plain text (what datasets and datatrove read), `cleaneval`
        # the same with its <h>/<p>/<l> segment markers
        "text": result.plain,
        "cleaneval": result.cleaneval,
    }
    if blocks:
        doc["blocks"] = _blocks(result)
    return doc


def _blocks(result) -> list[dict]:
    out = []
    if result.blocks is not None:
        for i, b in enumerate(result.blocks):
            entry = {
                "index": i,
                "text": b.text,
                "label": result.labels[i],
                "probability": round(result.confidences[i], 6),
                "containers": list(b.containers),
                "gap": b.gap,  # what a browser shows before the block: "", " " or "\n" (docs/fidelity.md)
            }
            if result.marginals:
                entry["marginals"] = {k: round(v, 6) for k, v in result.marginals[i].items()}
            out.append(entry)
    return out


class FolderOutput:
    """OUT/<page name><suffix> for each page (sub-folders as the inputs have them). A page's file appears
    only once it is whole (written beside it, then renamed), so the files in OUT are the record of what an
    interrupted run did, and `skip_done` resumes it: a page whose output exists is not cleaned again."""

    def __init__(self, root: Path, fmt: str, *, overwrite: bool, skip_done: bool = False):
        self.root, self.suffix, self.overwrite, self.skip_done = root, SUFFIX[fmt], overwrite, skip_done
        self.shown = str(root)
        self.done: list[Page] = []  # with skip_done: the pages whose output a run before this one wrote

    def target(self, page: Page) -> Path:
        return self.root / (page.name + self.suffix)

    def check(self, pages: list[Page]) -> None:
        if self.root.exists() and not self.root.is_dir():
            raise OutputRefused(f"--out {self.root} is a file, not a folder: give a folder (it is created), "
                                "- for standard output, or --format jsonl to write one file")
        inputs = {os.path.abspath(p.path) for p in pages if p.path is not None}
        existing = []
        for page in pages:
            t = self.target(page)
            if os.path.abspath(t) in inputs:
                raise OutputRefused(f"the output {t} would replace the input {t}: give another --out")
            if t.exists():
                existing.append(t)
                if self.skip_done:
                    self.done.append(page)
        if existing and not self.overwrite and not self.skip_done:
            more = f" (and {len(existing) - 1} more)" if len(existing) > 1 else ""
            raise OutputRefused(f"{existing[0]} exists{more}: add --overwrite to replace, or give another --out")
        try:
            self.root.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise OutputRefused(f"cannot create the folder {self.root}: {exc.strerror or exc}") from exc

    def write(self, page: Page, text: str) -> None:
        t = self.target(page)
        try:
            t.parent.mkdir(parents=True, exist_ok=True)
            # whole or not there (what --skip-done relies on); no fsync: a page is cleaned again at little cost
            write_atomic(t, text, fsync=False)
        except OSError as exc:
            raise OutputRefused(f"cannot write {t}: {exc.strerror or exc}") from exc

    def close(self) -> None:
        pass


class StreamOutput:
    """Every page's output, one after the other, on standard output or in one file (jsonl)."""

    def __init__(self, path: Path | None, *, overwrite: bool):
        self.path, self.overwrite = path, overwrite
        self.fh: TextIO | None = None
        self.shown = "standard output" if path is None else str(path)

    def check(self, pages: list[Page]) -> None:
        if self.path is None:
            self.fh = sys.stdout
            return
        if self.path.is_dir():
            raise OutputRefused(f"--out {self.path} is a folder: --format jsonl writes one file, give its name "
                                "(or - for standard output)")
        if any(p.path is not None and os.path.abspath(p.path) == os.path.abspath(self.path) for p in pages):
            raise OutputRefused(f"the output {self.path} would replace an input: give another --out")
        if self.path.exists() and not self.overwrite:
            raise OutputRefused(f"{self.path} exists: add --overwrite to replace it, or give another --out")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.fh = self.path.open("w", encoding="utf-8")
        except OSError as exc:
            raise OutputRefused(f"cannot write {self.path}: {exc.strerror or exc}") from exc

    def write(self, page: Page, text: str) -> None:
        assert self.fh is not None, "check() opens the output"
        try:
            self.fh.write(text)
            if self.path is None:
                self.fh.flush()  # a reader of the pipe gets each page as it is cleaned
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise OutputRefused(f"cannot write {self.shown}: {exc.strerror or exc}") from exc

    def close(self) -> None:
        if self.fh is not None and self.path is not None:
            self.fh.close()


def output_for(out: str | None, fmt: str, *, overwrite: bool, skip_done: bool = False):
    """The destination of --out (None or - : standard output) for --format `fmt`; `skip_done` only for a folder."""
    if skip_done and (out is None or out == STDOUT or fmt == "jsonl"):
        raise OutputRefused("--skip-done resumes a run into a folder of one file per page: give --out DIR "
                            "(not standard output, not --format jsonl)")
    if out is None or out == STDOUT:
        return StreamOutput(None, overwrite=overwrite)
    if fmt == "jsonl":
        return StreamOutput(Path(out), overwrite=overwrite)
    return FolderOutput(Path(out), fmt, overwrite=overwrite, skip_done=skip_done)
