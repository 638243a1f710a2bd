"""`cleaner annotate DIR`: label the blocks of a folder of pages in the browser, write gold files.

    cleaner annotate DIR [--port P] [--host 127.0.0.1 | ::1] [--model M | --no-model]

A small local web application over a folder of `NAME.html` pages (the folder layout that
`cleaner train DIR` reads). It shows a page as its blocks, pre-labelled by the model (or by
the page's gold file `NAME.txt` when there is one that aligns with the page); the user sets
labels with the mouse or the keys h / p / l / c / o (header, paragraph, list, continuation,
other) on one block or a range (shift+click, shift+arrows) and saves. Saving writes
`NAME.txt` beside the page in CleanEval format, atomically (temporary file + rename).

The gold file is written so that the aligner reads back the labels given: `header` /
`paragraph` / `list` blocks open a `<h>` / `<p>` / `<l>` segment, `continuation` blocks join
the open segment, `other` blocks are left out (exactly `assemble`). After writing, the file
is aligned back to the page (`align_blocks`) and the blocks whose label would read back
differently are reported: a block without any word (a gold file cannot mark it), a leading
continuation (nothing to continue: it reads back as paragraph), or text repeated elsewhere
on the page that the alignment attributes to the other copy.

Server: waitress, bound to 127.0.0.1 by default, behind the checks of annotate_server.py
(exact Host, no cross-site request, a per-session token on every request, JSON-only posts).
The page and all its data are served by this process: no network.

    GET  /?token=T              the application (one HTML page, inline CSS and JS; the token inside)
    GET  /api/pages             [{name, gold}] for every NAME.html of DIR
    GET  /api/page?name=NAME    the page's blocks, labels and notices (or a clear error)
    POST /api/save              {name, version, labels} -> writes NAME.txt, reports the round trip
"""

from __future__ import annotations

import hashlib
import re
import sys
import threading
from dataclasses import dataclass
from html import escape
from http import HTTPStatus
from pathlib import Path

from ..gold.align import align_blocks
from ..labels import CONTINUATION, LABELS, OTHER, PARAGRAPH
from ..output.assemble import assemble
from ..output.files import write_atomic
from ..page.segment import Block
from .annotate_server import AnnotateApp, RequestError, is_loopback, make_server, new_token
from .inspect import UNDECODABLE_SHARE, PageAnalysis, analyse_page, reason_message, undecodable_share, web_asset

EXIT_OK, EXIT_PARTIAL, EXIT_USAGE, EXIT_INPUT, EXIT_MODEL = 0, 1, 2, 3, 4
DEFAULT_PORT = 8765
_MARKER_RE = re.compile(r"<([phlPHL])>")
_WS = re.compile(r"\s+")
MARKER = {"header": "<h>", "paragraph": "<p>", "list": "<l>"}


# -- gold files -----------------------------------------------------------------------------


def escape_markers(text: str) -> str:
    """Make `<p>` / `<h>` / `<l>` written in page text inert in a gold file.

    The gold parser would take them for segment markers; `&lt;p>` is not a marker and the
    scorer (which decodes entities) still reads the same words.
    """
    return _MARKER_RE.sub(lambda m: "&lt;" + m.group(0)[1:], text)


def gold_from_labels(texts: list[str], labels: list[str]) -> str:
    """CleanEval gold text for blocks with these labels: one marked segment per line."""
    segments = assemble(list(texts), list(labels)).segments
    lines = [f"{MARKER[label]} {escape_markers(_WS.sub(' ', text).strip())}" for label, text in segments]
    return "\n".join(lines) + ("\n" if lines else "")


def expected_labels(labels: list[str]) -> list[str]:
    """The labels a gold file can express: a continuation with no open segment is a paragraph."""
    out, open_seg = [], False
    for y in labels:
        if y == CONTINUATION and not open_seg:
            y = PARAGRAPH
        open_seg = open_seg or y != OTHER
        out.append(y)
    return out


def round_trip(blocks: list[Block], labels: list[str], gold: str) -> dict:
    """Align a written gold file back to the page; which blocks read back differently, and why."""
    from ..gold.score import score_document, words

    back = align_blocks(blocks, gold).labels
    # The content the read-back labels select, against the file: F1 = 1 when training sees it all.
    s = score_document(gold_from_labels([b.text for b in blocks], back), gold)
    expected = expected_labels(labels)
    mismatches = []
    for i, (given, got) in enumerate(zip(labels, back)):
        if given == got:
            continue
        if got == expected[i]:
            why = "nothing before it to continue: saved as the start of a paragraph"
        elif given != OTHER and not words(blocks[i].text):
            why = "it has no word: a gold file cannot mark it"
        else:
            why = "its text also occurs elsewhere on the page and aligns there"
        mismatches.append({"i": i, "given": given, "reads_back": got, "why": why})
    return {"labels": back, "mismatches": mismatches, "f1": s.f1, "markup_f1": s.markup_f1}


# -- the application ------------------------------------------------------------------------


@dataclass
class _Cached:
    key: tuple
    version: str
    analysis: PageAnalysis


def _segment_only(data: bytes, config) -> PageAnalysis:
    """Blocks without a model (--no-model), read as the cleaner reads them: every block starts as `other`."""
    from ..page.pipeline import PageRejected, read_page

    try:
        read = read_page(data, config)
    except PageRejected as rejected:
        return PageAnalysis("error", rejected.reason, reason_message(rejected.reason, rejected.error))
    share = undecodable_share(read.decoded.text)
    if share > UNDECODABLE_SHARE:
        return PageAnalysis("error", "undecodable", reason_message("undecodable", share=share))
    return PageAnalysis("ok", blocks=read.blocks, labels=[OTHER] * len(read.blocks))


class Annotator:
    """The folder, the model and the page logic, independent of HTTP (tested directly)."""

    def __init__(self, folder: str | Path, model=None, config=None):
        from ..config import load_config

        self.folder = Path(folder).resolve()
        self.model = model
        self.config = config or load_config()
        self.min_alignment = float(self.config["train"]["min_alignment"])
        # Guards the cache only. A page is read and labelled outside it (the model's taggers are per thread,
        # cleaner.label.crf_model), so one slow page never holds up another's loading or saving: a lock held
        # across a parse kept a second page waiting 38 s behind a 450 KB page of <option>s.
        self._lock = threading.Lock()
        self._cache: dict[str, _Cached] = {}

    def inside(self, path: Path) -> bool:
        """A regular file whose real path lies in the folder: a symlink out of it is no page."""
        try:
            real = path.resolve(strict=True)
        except (OSError, RuntimeError):
            return False
        return real.is_relative_to(self.folder) and real.is_file()

    # Pages are exactly what `cleaner train DIR` reads: DIR/*.html with DIR/NAME.txt as gold.
    def names(self) -> list[str]:
        return sorted(p.name for p in self.folder.glob("*.html") if self.inside(p))

    def _html_path(self, name) -> Path:
        if not isinstance(name, str) or name not in self.names():
            shown = repr(name)[:120] if isinstance(name, str) else type(name).__name__
            raise RequestError(HTTPStatus.NOT_FOUND, f"no page {shown} in this folder")
        return self.folder / name

    @staticmethod
    def gold_path(html_path: Path) -> Path:
        return html_path.with_suffix(".txt")

    def pages(self) -> list[dict]:
        return [{"name": n, "gold": self.inside(self.gold_path(self.folder / n))} for n in self.names()]

    def _analysis(self, path: Path) -> tuple[str, PageAnalysis]:
        """The page's version and analysis: from the cache while the file is unchanged, else read and labelled
        with no lock held, then published under it (two requests for one changed page may both label it)."""
        try:
            st = path.stat()
            key = (st.st_mtime_ns, st.st_size)
            with self._lock:
                hit = self._cache.get(path.name)
            if hit is not None and hit.key == key:
                return hit.version, hit.analysis
            data = path.read_bytes()
        except OSError as exc:
            return "", PageAnalysis("error", "unreadable", f"{reason_message('unreadable')} ({exc.strerror or exc})")
        version = hashlib.sha256(data).hexdigest()[:16]
        if self.model is None:
            a = _segment_only(data, self.config)
        else:
            a = analyse_page(data, model=self.model, config=self.config, with_features=False)
        with self._lock:
            self._cache[path.name] = _Cached(key, version, a)
        return version, a

    def page(self, name) -> dict:
        from ..gold.gold import read_gold

        path = self._html_path(name)
        gold_path = self.gold_path(path)
        version, a = self._analysis(path)
        out: dict = {"name": path.name, "gold_file": gold_path.name, "version": version, "notices": []}
        if not a.ok:
            out.update(status="error", reason=a.reason, message=a.message, blocks=[], labels=[])
            return out
        res = a.result
        out.update(
            status="ok",
            encoding=res.encoding if res else None,
            url=res.url if res else None,
            blocks=[
                {
                    "text": b.text,
                    "path": " › ".join(b.containers),
                    "pred": a.labels[i] if self.model is not None else None,
                    "p": round(a.confidences[i], 3) if i < len(a.confidences) else None,
                }
                for i, b in enumerate(a.blocks)
            ],
            model=res.model_hash if res else None,
        )
        labels, source = list(a.labels), ("model" if self.model is not None else "none")
        gold: dict[str, bool | int | float | None] = {"exists": self.inside(gold_path), "coverage": None, "words": 0}
        if gold_path.is_symlink() and not gold["exists"]:
            out["notices"].append({"level": "error", "text": f"The gold file {gold_path.name} links outside the "
                                   "folder: not read; saving replaces the link with a file."})
        if gold["exists"]:
            try:
                text = read_gold(gold_path)
            except OSError as exc:
                out["notices"].append({"level": "error", "text": f"The gold file {gold_path.name} cannot be read "
                                       f"({exc.strerror or exc}); showing the model's labels."})
                text = None
            if text is not None:
                al = align_blocks(a.blocks, text)
                gold.update(coverage=round(al.coverage, 4), words=al.gold_words)
                if al.gold_words and al.coverage < self.min_alignment:
                    out["notices"].append({"level": "error", "text": (
                        f"The gold file {gold_path.name} no longer aligns with this page: only "
                        f"{al.coverage:.0%} of its {al.gold_words} words are found on the page "
                        f"(cleaner train needs {self.min_alignment:.0%}). Showing the "
                        f"{'model' if self.model is not None else 'default'} labels instead; "
                        "saving replaces the gold file.")})
                else:
                    labels, source = al.labels, "gold"
                    if al.gold_words and al.coverage < 0.98:
                        out["notices"].append({"level": "warn", "text": (
                            f"{al.gold_words - al.aligned_gold_words} of the {al.gold_words} words of "
                            f"{gold_path.name} are not on the page; the labels shown are what the aligner "
                            "reads from it.")})
        if a.reason == "no_content" and source == "model":
            out["notices"].append({"level": "info", "text": a.message})
        out.update(labels=labels, source=source, gold=gold)
        return out

    def save(self, name, labels, version=None) -> dict:
        path = self._html_path(name)
        current, a = self._analysis(path)
        if not a.ok:
            raise RequestError(HTTPStatus.CONFLICT, f"{path.name} has no blocks to label: {a.message}")
        if version is not None and version != current:
            raise RequestError(HTTPStatus.CONFLICT, f"{path.name} changed on disk since it was loaded: reload it")
        if not isinstance(labels, list) or len(labels) != len(a.blocks):
            raise RequestError(HTTPStatus.BAD_REQUEST, f"expected {len(a.blocks)} labels, got "
                               f"{len(labels) if isinstance(labels, list) else type(labels).__name__}")
        bad = sorted({str(y)[:40] if isinstance(y, str) else type(y).__name__ for y in labels if y not in LABELS})
        if bad:
            raise RequestError(HTTPStatus.BAD_REQUEST, f"unknown labels {bad}; known: {', '.join(LABELS)}")
        gold = gold_from_labels([b.text for b in a.blocks], labels)
        gold_path = self.gold_path(path)
        try:
            write_atomic(gold_path, gold)
        except OSError as exc:
            raise RequestError(HTTPStatus.INTERNAL_SERVER_ERROR,
                               f"cannot write {gold_path.name}: {exc.strerror or exc}") from exc
        rt = round_trip(a.blocks, labels, gold)
        n_segments = sum(1 for y in expected_labels(labels) if y not in (OTHER, CONTINUATION))
        from ..gold.score import words

        return {
            "ok": True,
            "file": gold_path.name,
            "segments": n_segments,
            "words": len(words(gold)),
            "round_trip": rt,
            "trainable": bool(n_segments),
        }


# -- HTTP -----------------------------------------------------------------------------------


def app_html() -> str:
    return (web_asset("annotate.html")
            .replace("/*@CSS@*/", web_asset("labels.css") + "\n" + web_asset("annotate.css"))
            .replace("/*@JS@*/", web_asset("annotate.js")))


def page_html(token: str) -> str:
    """The application page, with this session's token for its API calls (annotate.js reads it)."""
    meta = f'<meta name="cleaner-token" content="{escape(token)}">'
    return app_html().replace("<title>", meta + "\n<title>", 1)


# -- the command ----------------------------------------------------------------------------


def _fail(code: int, message: str) -> int:
    print(f"cleaner: error: {message}", file=sys.stderr)
    return code


def cmd_annotate(args) -> int:
    from ..config import ConfigError, load_config
    from ..label.model import load_model
    from ..label.model_files import ModelError

    folder = Path(args.dir)
    if not folder.is_dir():
        return _fail(EXIT_INPUT, f"not a directory: {folder}")
    try:
        config = load_config(args.config)
    except ConfigError as exc:
        return _fail(EXIT_MODEL, str(exc))
    model = None
    if not args.no_model:
        try:
            model = load_model(args.model)
        except ModelError as exc:
            return _fail(EXIT_MODEL, f"{exc} (use --no-model to start every block as `other`)")
    app = Annotator(folder, model, config)
    if not app.names():
        return _fail(EXIT_INPUT, f"no .html pages in {folder} (annotate works on a folder of NAME.html files)")
    host, remote, problem = bind_address(args.host, args.allow_remote)
    if problem:
        return _fail(EXIT_USAGE, problem)
    token = new_token()
    web = AnnotateApp(app, page_html, token, remote=remote, verbose=args.verbose)
    try:
        server = make_server(web, host, args.port)
    except (OSError, ValueError) as exc:
        return _fail(EXIT_USAGE, f"cannot listen on {args.host}:{args.port}: {getattr(exc, 'strerror', None) or exc}")
    port = server.effective_port
    shown = f"[{host}]" if ":" in host else host
    if remote:
        print(f"cleaner: warning: serving on {host}, reachable from other machines: anyone who sees the address "
              "below (token included) can read the pages and write gold files, and the traffic is not encrypted",
              file=sys.stderr)
    print(f"annotating {len(app.names())} pages of {app.folder} at http://{shown}:{port}/?token={token} "
          "(Ctrl+C to stop)", flush=True)
    try:
        server.run()  # returns on Ctrl+C, after stopping the worker threads
    finally:
        server.close()
    return EXIT_OK


def bind_address(host: str, allow_remote: bool) -> tuple[str, bool, str | None]:
    """(address to bind, whether it is reachable from other machines, a usage error or None)."""
    address = host.strip().strip("[]")
    if address.lower() == "localhost":
        address = "127.0.0.1"  # one socket, the address the printed URL names
    if is_loopback(address):
        return address, False, None
    if not allow_remote:
        return address, True, (f"--host {host} serves beyond this machine: pass --allow-remote as well to mean it "
                               "(every request then needs the session token; nothing is encrypted)")
    return address, True, None


def add_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "annotate", help="label the blocks of a folder of pages in the browser (writes gold files)",
        description="Serve a local web page over DIR/*.html: each page is shown as its blocks, pre-labelled "
        "by the model (or by NAME.txt when it exists); set labels with the mouse or the keys h/p/l/c/o "
        "(shift+click or shift+arrows for a range) and save: NAME.txt is written beside the page in CleanEval "
        "format, so that `cleaner train DIR` can use the folder.")
    p.add_argument("dir", metavar="DIR", help="folder of NAME.html pages (gold files NAME.txt are written there)")
    p.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT}; 0: any free port)")
    p.add_argument("--host", default="127.0.0.1",
                   help="address to bind (default 127.0.0.1: this machine only; ::1 for IPv6; another address "
                   "needs --allow-remote)")
    p.add_argument("--allow-remote", action="store_true",
                   help="allow a --host that other machines can reach (the session token guards every request)")
    p.add_argument("--model", metavar="M", help="model for the initial labels (default: the packaged model)")
    p.add_argument("--no-model", action="store_true", help="no model: every block starts as `other`")
    p.add_argument("--config", metavar="TOML", help="config overlay (default: conf/default.toml)")
    p.add_argument("-v", "--verbose", action="store_true", help="log every request")
    p.set_defaults(func=cmd_annotate)
