"""Where `cleaner clean` writes: one file per page in a folder, one JSON line per page in a file, or
standard output. Every destination is checked before the first page is cleaned, so that a run is
refused whole (nothing written) rather than stopping half-way or overwriting what it should not.

Nothing that looks finished is unfinished: a page's file, and the JSON Lines file of a whole run, appear
under their names only once whole (written to a hidden temporary name beside them, then renamed). A run
that fails (disk full) leaves no temporary file; one interrupted (Ctrl-C) leaves the lines it wrote as
`NAME.incomplete`, and says so.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path
from typing import BinaryIO, TextIO

from ..output.files import new_file_mode, write_atomic
from ..output.run_settings import SETTINGS_FILE, read_folder_settings, settings_difference
from .inputs import Page

STDOUT = "-"
FORMATS = ("cleaneval", "txt", "json", "jsonl", "markdown")
SUFFIX = {"cleaneval": ".txt", "txt": ".txt", "json": ".json", "jsonl": ".jsonl", "markdown": ".md"}


INCOMPLETE_SUFFIX = ".incomplete"


class OutputRefused(Exception):
    """The output cannot or must not be written; the message names the file and what to do."""


def file_name_text(name: str) -> str:
    """A file name as JSON can hold it. The OS gives names as bytes, which Python decodes with
    surrogateescape: a name that is not UTF-8 (`caf\\xe9.html`, Latin-1 on Linux) then holds lone surrogates,
    which no UTF-8 output can encode. Each byte that is not UTF-8 is written as `\\xNN` (`caf\\xe9.html`),
    every other name as it is."""
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def render(result, page: Page, fmt: str, corpus=None) -> str:
    """The bytes written for one page, as text: CleanEval segments, plain text, or a JSON document
    (one line; `json` with the blocks, `jsonl` without; with `corpus` (cleaner.output.corpus.CorpusColumns) the
    Spark job's corpus columns of the plain text: language, dedup keys, quality signals)."""
    if fmt == "cleaneval":
        return result.cleaneval + ("\n" if result.cleaneval else "")  # a rejected page: an empty file
    if fmt == "txt":
        return result.plain + ("\n" if result.plain else "")
    if fmt == "markdown":  # (clean_html(markdown=...): cleaner.output.markdown)
        return result.markdown + "\n" if result.markdown else ""
    doc = result_json(result, page.shown, blocks=fmt == "json")
    if corpus is not None:
        doc.update(corpus.columns(result.plain))
    return json.dumps(doc, ensure_ascii=False) + "\n"


def result_json(result, name: str, *, blocks: bool = True) -> dict:
    doc = {
        "file": file_name_text(name),
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
    interrupted run did, and `skip_done` resumes it: a page whose output exists is not cleaned again.
    `settings` (cleaner.output.run_settings) are recorded in the folder: a run with other settings is refused,
    so that one folder never holds two kinds of output (unless --overwrite)."""

    def __init__(self, root: Path, fmt: str, *, overwrite: bool, skip_done: bool = False,
                 settings: dict | None = None):
        self.root, self.suffix, self.overwrite, self.skip_done = root, SUFFIX[fmt], overwrite, skip_done
        self.settings = settings
        self.shown = str(root)
        self.done: list[Page] = []  # with skip_done: the pages whose output a run before this one wrote
        self.written = 0

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
        recorded = read_folder_settings(self.root) if self.settings is not None else None
        difference = settings_difference(recorded, self.settings or {})
        if difference and not self.overwrite:
            raise OutputRefused(f"{self.root} holds pages cleaned with other settings ({difference}): give "
                                "another --out, or --overwrite to clean into it with these")
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            if self.settings is not None and recorded != self.settings:
                write_atomic(self.root / SETTINGS_FILE, json.dumps(self.settings, indent=1) + "\n", fsync=False)
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
        self.written += 1

    def finish(self) -> None:
        pass

    def abandon(self, *, interrupted: bool) -> str:
        """What an interrupted or failed run leaves: every page file written is whole."""
        return f"{self.written} page files written into {self.root}, each whole: --skip-done resumes"


class StreamOutput:
    """Every page's output, one after the other, on standard output or in one file (jsonl). The file is
    written under a hidden temporary name beside it and renamed once the last page is in (`finish`), so a
    reader never takes a run cut short by a full disk or a Ctrl-C for a whole one."""

    def __init__(self, path: Path | None, *, overwrite: bool, named_folder: bool = False):
        self.path, self.overwrite = path, overwrite
        self.named_folder = named_folder  # --out DIR/: a trailing slash means a folder, even one not there yet
        self.fh: TextIO | None = None  # standard output
        self.file: BinaryIO | None = None  # the temporary file (bytes, so that its whole lines are counted)
        self.tmp: Path | None = None
        self.whole_bytes = 0  # the end of the last page written whole
        self.written = 0
        self.shown = "standard output" if path is None else str(path)

    def check(self, pages: list[Page]) -> None:
        if self.path is None:
            self.fh = sys.stdout
            return
        if self.named_folder or self.path.is_dir():
            raise OutputRefused(f"--out {self.path}{os.sep if self.named_folder else ''} is a folder: --format jsonl "
                                "writes one file, give its name (or - for standard output)")
        if any(p.path is not None and os.path.abspath(p.path) == os.path.abspath(self.path) for p in pages):
            raise OutputRefused(f"the output {self.path} would replace an input: give another --out")
        if self.path.exists() and not self.overwrite:
            raise OutputRefused(f"{self.path} exists: add --overwrite to replace it, or give another --out")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=f".{self.path.name}.", suffix=".tmp")
            self.tmp = Path(tmp)
            os.fchmod(fd, new_file_mode())
            self.file = os.fdopen(fd, "wb")
        except OSError as exc:
            self._remove_tmp()
            raise OutputRefused(f"cannot write {self.path}: {exc.strerror or exc}") from exc

    def write(self, page: Page, text: str) -> None:
        try:
            if self.file is not None:
                data = text.encode("utf-8")
                self.file.write(data)
                self.whole_bytes += len(data)
            else:
                assert self.fh is not None, "check() opens the output"
                self.fh.write(text)
                self.fh.flush()  # a reader of the pipe gets each page as it is cleaned
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise OutputRefused(f"cannot write {self.shown}: {exc.strerror or exc}") from exc
        self.written += 1

    def finish(self) -> None:
        """Every page is in: the file takes its name (a full disk shows here at the latest: OutputRefused)."""
        if self.path is None or self.file is None or self.tmp is None:
            return
        try:
            self.file.close()
            os.replace(self.tmp, self.path)
        except OSError as exc:
            self._remove_tmp()
            raise OutputRefused(f"cannot write {self.path}: {exc.strerror or exc}") from exc
        self.file = self.tmp = None

    def abandon(self, *, interrupted: bool) -> str:
        """The run stops before its end. Failed (disk full): the temporary file goes, nothing is left under any
        name. Interrupted: the whole lines written so far are kept as NAME.incomplete, a name no reader of NAME
        takes for the finished file. Returns what was written, for the one line that says so."""
        if self.path is None:
            return f"{self.written} pages written to standard output"
        if self.file is None or self.tmp is None:
            return f"{self.path} written whole"
        if interrupted:
            partial = self.path.with_name(self.path.name + INCOMPLETE_SUFFIX)
            try:
                self.file.flush()
                self.file.truncate(self.whole_bytes)  # a page the interrupt caught half-written goes
                self.file.close()
                os.replace(self.tmp, partial)
                self.file = self.tmp = None
                return f"{self.written} pages written to {partial} (incomplete: not renamed to {self.path})"
            except OSError:
                pass
        self._remove_tmp()
        return f"nothing written to {self.path}"

    def _remove_tmp(self) -> None:
        if self.file is not None:
            try:
                self.file.close()
            except OSError:  # the last buffered bytes found the disk full: the file goes anyway
                pass
            self.file = None
        if self.tmp is not None:
            try:
                self.tmp.unlink()
            except OSError:
                pass
            self.tmp = None


def output_for(out: str | None, fmt: str, *, overwrite: bool, skip_done: bool = False, settings: dict | None = None):
    """The destination of --out (None or - : standard output) for --format `fmt`; `skip_done` only for a folder,
    whose `settings` are recorded and checked (cleaner.output.run_settings)."""
    if skip_done and (out is None or out == STDOUT or fmt == "jsonl"):
        raise OutputRefused("--skip-done resumes a run into a folder of one file per page: give --out DIR "
                            "(not standard output, not --format jsonl)")
    if out is None or out == STDOUT:
        return StreamOutput(None, overwrite=overwrite)
    if fmt == "jsonl":
        return StreamOutput(Path(out), overwrite=overwrite, named_folder=out.endswith(("/", os.sep)))
    return FolderOutput(Path(out), fmt, overwrite=overwrite, skip_done=skip_done, settings=settings)
