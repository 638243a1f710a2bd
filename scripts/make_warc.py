#!/usr/bin/env python
"""Pack HTML files into a deterministic gzipped WARC (test data and benchmark input).

Every .html/.htm file (and gzip-compressed .html.gz, stored decompressed: every gzip member)
becomes a `response` record with real HTTP headers (status line,
Content-Type, Content-Length, Date, Server) and the file's bytes, unchanged, as payload;
the WARC starts with a warcinfo record. Output is reproducible: record ids are derived
from the file paths and dates come from the files' mtimes (or --date).

Examples:
  python scripts/make_warc.py ../shared/data/cleaneval-dev/html --out /tmp/dev.warc.gz
  python scripts/make_warc.py ../shared/data/dragnet --with-requests --repeat 20 \\
      --date 2024-01-01T00:00:00Z --out /tmp/bench.warc.gz
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import urllib.parse
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from cleaner.page.saved import read_saved_page  # noqa: E402
from cleaner.warc import write_html_warc  # noqa: E402

_TEXT_ID_RX = re.compile(rb'^\s*<text\s[^>]*?\bid\s*=\s*"([^"]+)"', re.I)
HTML_SUFFIXES = (".html", ".htm", ".html.gz")


def _natural_key(path: Path):
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", str(path))]


def collect_files(inputs: list[str]) -> list[Path]:
    """Files given directly, plus every .html/.htm file under given directories,
    in natural order (2.html before 10.html), without duplicates."""
    out: list[Path] = []
    seen: set[Path] = set()
    for item in inputs:
        path = Path(item)
        if path.is_dir():
            found = sorted((p for p in path.rglob("*")
                            if p.is_file() and p.name.lower().endswith(HTML_SUFFIXES)),
                           key=_natural_key)
        elif path.is_file():
            found = [path]
        else:
            raise SystemExit(f"make_warc: no such file or directory: {item}")
        for p in found:
            key = p.resolve()
            if key not in seen:
                seen.add(key)
                out.append(p)
    return out


def page_url(path: Path, body: bytes, url_prefix: str) -> str:
    """CleanEval-style pages start with <text id="URL" ...>: use that URL. Otherwise
    url_prefix + dataset/file name (the dataset is the folder above html/, if any)."""
    m = _TEXT_ID_RX.match(body[:4096])
    if m:
        url = m.group(1).decode("utf-8", "replace").strip()
        if re.match(r"^[A-Za-z][A-Za-z0-9+.-]*://", url):
            return url
    parent = path.resolve().parent
    dataset = parent.parent.name if parent.name == "html" else parent.name
    prefix = url_prefix if url_prefix.endswith("/") else url_prefix + "/"
    return prefix + urllib.parse.quote(f"{dataset}/{path.name}")


def _repeat_url(url: str, k: int) -> str:
    if k == 0:
        return url
    base, hash_, frag = url.partition("#")
    sep = "&" if "?" in base else "?"
    return f"{base}{sep}repeat={k}{hash_}{frag}"


def _parse_date(value: str) -> datetime:
    try:
        dt = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"not an ISO date: {value!r}") from exc
    return dt if dt.tzinfo else dt.replace(tzinfo=UTC)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="make_warc.py",
        description=__doc__.split("\n\n")[0],
        epilog="Record ids are UUIDv5 of the record kind, position and URL; with --date "
               "(or unchanged mtimes) two runs give byte-identical files.",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("inputs", nargs="+", metavar="HTML_DIR_OR_FILES",
                    help="HTML files, or directories searched recursively for *.html/*.htm")
    ap.add_argument("--out", required=True, metavar="FILE.warc.gz", help="WARC file to write")
    ap.add_argument("--url-prefix", default="http://example.test/",
                    help="URL prefix for pages without a CleanEval <text id=...> line "
                         "(default: %(default)s)")
    ap.add_argument("--charset", default=None,
                    help="add '; charset=CHARSET' to the Content-Type (default: none, "
                         "Content-Type: text/html)")
    ap.add_argument("--limit", type=int, default=None, metavar="N",
                    help="use only the first N input files")
    ap.add_argument("--repeat", type=int, default=1, metavar="K",
                    help="write the pages K times (distinct URLs '?repeat=k' and ids), "
                         "for benchmark WARCs (default: 1)")
    ap.add_argument("--with-requests", action="store_true",
                    help="also write a 'request' record before each response")
    ap.add_argument("--date", type=_parse_date, default=None,
                    help="ISO date for every record (default: each file's mtime)")
    ap.add_argument("--no-gzip", action="store_true", help="write an uncompressed WARC")
    args = ap.parse_args(argv)
    if args.repeat < 1:
        ap.error("--repeat must be >= 1")
    if args.limit is not None and args.limit < 0:
        ap.error("--limit must be >= 0")

    files = collect_files(args.inputs)
    if args.limit is not None:
        files = files[:args.limit]
    if not files:
        ap.error("no .html/.htm/.html.gz files found")

    def pages():
        for k in range(args.repeat):
            for path in files:
                body = read_saved_page(path) if path.name.lower().endswith(".gz") else path.read_bytes()
                mtime = datetime.fromtimestamp(int(path.stat().st_mtime), tz=UTC)
                yield _repeat_url(page_url(path, body, args.url_prefix), k), body, mtime

    n = write_html_warc(pages(), args.out, charset=args.charset, date=args.date,
                        with_requests=args.with_requests, gzip=not args.no_gzip)
    size = os.path.getsize(args.out)
    print(f"make_warc: {n} response records from {len(files)} files -> {args.out} "
          f"({size:,} bytes)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
