"""What `cleaner clean` reads: the pages behind its PATH arguments, and the name of each one's output.

Every path given is accounted for: it becomes a page to clean, or a skipped file with its reason
(listed by the command), or a missing input. A folder is searched for every file that looks like
HTML by its content, whatever its name (`index.php`, no extension, `.xhtml`, gzip-compressed
`NAME.html.gz`, cleaned decompressed); a file named on the
command line is always cleaned, as the user asked for it (a non-HTML file is then rejected by
`clean_html` with its reason).

Outputs never collide: each page keeps its path relative to the inputs' common folder, and two
pages that would still share a name (`a.html` and `a.htm`) keep their whole file name.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from ..page.saved import gunzip

STDIN = "-"
# Files with these suffixes are taken from a folder even when empty or odd (then rejected with a
# reason, so a page saved as .html is never dropped silently); any other file is taken by content.
HTML_SUFFIXES = (".html", ".htm", ".xhtml", ".shtml")
WARC_SUFFIXES = (".warc", ".warc.gz", ".arc", ".arc.gz")
WARC_ADVICE = ("a WARC/ARC file: clean it with cleaner clean-warc {path} --out DIR (or the Spark job, "
               "python jobs/clean_warc.py --input {path} --output DIR)")
# Names of text that may quote HTML: such a file is taken only when it starts with a tag.
TEXT_SUFFIXES = (".txt", ".md", ".rst", ".csv", ".tsv", ".json", ".jsonl", ".js", ".css", ".py")
SNIFF_BYTES = 65536
_CONTROL = bytes(range(0, 9)) + bytes(range(14, 27)) + bytes(range(28, 32)) + b"\x7f"
# A tag that only HTML has. CleanEval gold files are made of `<p>`, `<h>` and `<l>` markers, so a
# bare `<p>` does not count (a `<p class=...>` does); `<h>` and `<l>` are no HTML tags.
_HTML_TAG = re.compile(
    rb"<(?:!doctype\s+html|(?:html|head|body|title|meta|link|script|style|div|span|table|tr|td|font|center|"
    rb"frameset|frame|iframe|form|a|img|br|hr|h[1-6]|ul|ol|li|b|i|section|article|nav|header|footer|main|"
    rb"noscript|base|pre)[\s>/]|p[\s/]|text\s+id=)",  # <text id=...>: the CleanEval wrapper line
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Page:
    """One page to clean: a file (or standard input) and the name its output gets (no suffix)."""

    path: Path | None  # None: standard input
    name: str  # relative output name without suffix: "sub/a" for DIR/sub/a.html
    shown: str  # how messages name it

    def read(self) -> bytes:
        import sys

        return gunzip(sys.stdin.buffer.read() if self.path is None else self.path.read_bytes())


@dataclass(frozen=True)
class Skipped:
    """A path not cleaned, with why. `failed`: the user asked for it (named it, or it could not be
    read), so the run is partial; a folder's non-HTML files are skipped as expected."""

    shown: str
    reason: str
    outcome: str  # counted as: not_html, gold, hidden, warc, missing, unreadable, duplicate
    failed: bool


def is_warc(path: Path, head: bytes = b"") -> bool:
    """A WARC or ARC file, by its name or its first record (gzip-compressed or not)."""
    if path.name.lower().endswith(WARC_SUFFIXES):
        return True
    return gunzip(head, 64).startswith((b"WARC/", b"filedesc://"))


def looks_like_html(head: bytes) -> bool:
    """Whether the first bytes of a file are an HTML page (or fragment): no binary content, and a tag
    that only HTML has. UTF-16 pages are read as such."""
    if head[:2] in (b"\xff\xfe", b"\xfe\xff") or head[1:SNIFF_BYTES:2].count(0) > len(head) // 4:
        head = head.decode("utf-16-be" if head[:1] == b"\x00" or head[:2] == b"\xfe\xff" else "utf-16-le",
                           "ignore").encode("ascii", "ignore")
    control = len(head) - len(head.translate(None, _CONTROL))
    if control * 20 > len(head):  # binary (the cleaner's own rule, cleaner.api: not_text)
        return False
    return _HTML_TAG.search(head) is not None


def _sniff(path: Path) -> tuple[bytes, str | None]:
    """The first bytes of a file (decompressed when it is gzip-compressed), or the reason it
    cannot be read."""
    try:
        with path.open("rb") as fh:
            return gunzip(fh.read(SNIFF_BYTES), SNIFF_BYTES), None
    except OSError as exc:
        return b"", exc.strerror or str(exc)


def collect(specs: list[str]) -> tuple[list[Page], list[Skipped]]:
    """The pages behind the PATH arguments, in the order given (a folder's files sorted), and every
    path skipped with its reason."""
    found: list[tuple[Path | None, Path | None, str]] = []  # (file, root it is named relative to, shown)
    skipped: list[Skipped] = []
    seen: set[str] = set()

    def take(path: Path | None, root: Path | None, shown: str) -> None:
        key = STDIN if path is None else os.path.abspath(path)
        if key in seen:
            skipped.append(Skipped(shown, "given twice: cleaned once", "duplicate", False))
            return
        seen.add(key)
        found.append((path, root, shown))

    for spec in specs:
        if spec == STDIN:
            take(None, None, "standard input")
            continue
        p = Path(spec)
        if p.is_dir():
            for f, reason, outcome, failed in _walk(p):
                if reason is None:
                    take(f, p, str(f))
                else:
                    skipped.append(Skipped(str(f), reason, outcome, failed))
        elif p.is_file():
            head, error = _sniff(p)
            if error is not None:
                skipped.append(Skipped(spec, f"cannot read: {error}", "unreadable", True))
            elif is_warc(p, head):
                skipped.append(Skipped(spec, WARC_ADVICE.format(path=spec), "warc", True))
            else:
                take(p, p.parent, spec)
        elif p.exists() or p.is_symlink():
            skipped.append(Skipped(spec, "not a file or a folder (a broken link, a device?)", "unreadable", True))
        else:
            skipped.append(Skipped(spec, "input not found", "missing", True))
    return _name(found), skipped


def _walk(folder: Path):
    """(file, None, ...) for each page in `folder`, (file, reason, outcome, failed) for each file
    skipped; sorted, symbolic links to folders not followed (no loops), hidden folders not entered."""
    unreadable: list[OSError] = []  # a folder os.walk cannot list: reported, not passed over
    for dirpath, dirnames, filenames in os.walk(folder, onerror=unreadable.append, followlinks=False):
        while unreadable:
            exc = unreadable.pop()
            yield Path(exc.filename or folder), f"cannot read the folder: {exc.strerror or exc}", "unreadable", True
        here = Path(dirpath)
        for d in sorted(dirnames):
            if d.startswith("."):
                yield here / d, "a hidden folder: not searched", "hidden", False
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in sorted(filenames):
            f = here / name
            if not f.is_file():
                yield f, "not a regular file (a broken link?)", "unreadable", False
                continue
            head, error = _sniff(f)
            if error is not None:
                yield f, f"cannot read: {error}", "unreadable", True
            elif is_warc(f, head):
                yield f, WARC_ADVICE.format(path=f), "warc", False
            elif name.lower().endswith(HTML_SUFFIXES) or (looks_like_html(head) and not _is_gold(f)
                                                           and not _text_about_html(f, head)):
                yield f, None, None, None
            elif _is_gold(f):
                yield f, "the gold text of the page beside it", "gold", False
            elif name.startswith("."):
                yield f, "a hidden file that is not HTML", "hidden", False
            else:
                yield f, "not HTML by its content", "not_html", False
    for exc in unreadable:
        yield Path(exc.filename or folder), f"cannot read the folder: {exc.strerror or exc}", "unreadable", True


def _text_about_html(f: Path, head: bytes) -> bool:
    """A text file that mentions tags (a README.md on `<p>` markers, a script building `<div>`s) is
    not a page: with such a name, a page starts with its first tag."""
    return f.suffix.lower() in TEXT_SUFFIXES and not head.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"<")


def _is_gold(f: Path) -> bool:
    """NAME.txt beside NAME.html (the annotation layout), or gold/NAME.txt beside html/NAME.html (a
    data set's layout): a page's gold text (`cleaner eval`, `annotate`), not a page, even when it
    quotes HTML."""
    if f.suffix.lower() != ".txt":
        return False
    pages = [f.with_suffix(s) for s in HTML_SUFFIXES]
    if f.parent.name == "gold":
        pages += [f.parent.parent / "html" / (f.stem + s) for s in HTML_SUFFIXES + (".html.gz",)]
    return any(p.is_file() for p in pages)


def _stem(rel: str) -> str:
    """`sub/a.html` -> `sub/a`, `0001.html.gz` -> `0001`, `.hidden` and `noext` as they are."""
    folder, _, name = rel.rpartition("/")
    if name.lower().endswith(".gz"):
        name = name[:-3]
    if "." in name[1:]:
        name = name[: name.rindex(".")]
    return f"{folder}/{name}" if folder else name


def _name(found: list[tuple[Path | None, Path | None, str]]) -> list[Page]:
    """Output names: each page's path relative to the common folder of the inputs' roots (a folder
    given is its own root, a file given is named in its folder), its suffix dropped; pages whose
    names would still collide keep their whole file name (a.html -> a.html, a.htm -> a.htm)."""
    roots = [os.path.abspath(r) for _, r, _ in found if r is not None]
    base = os.path.commonpath(roots) if roots else ""
    rel = []
    for path, _, _ in found:
        if path is None:
            rel.append("stdin")
        else:
            rel.append(os.path.relpath(os.path.abspath(path), base).replace(os.sep, "/"))
    stems = [_stem(r) for r in rel]
    counts: dict[str, int] = {}
    for s in stems:
        counts[s] = counts.get(s, 0) + 1
    names = [stem if counts[stem] == 1 else r for r, stem in zip(rel, stems)]
    taken: set[str] = set()
    for i in range(len(names)):  # a stem equal to another page's whole name (a.html.htm, a.html + a.htm)
        while names[i] in taken:
            names[i] += "~"
        taken.add(names[i])
    return [Page(path, name, shown) for (path, _, shown), name in zip(found, names)]
