"""What the job reads: input lists, a base prefix for their entries, directories, and every path left out.

The shapes Common Crawl users give (cc-pyspark's conventions):

* `--input-list warc.paths.gz`: a path list as Common Crawl publishes it, gzip-compressed (recognised by
  its first bytes) or plain, local or remote (`file://`, `s3://`, `https://`, ... opened as the workers open
  WARCs, jobs/storage.py `open_input`); one entry a line, blank lines and `#` comments skipped;
* `--input-base PREFIX`: joined to every relative entry of the lists (`crawl-data/CC-MAIN-.../x.warc.gz`),
  e.g. `s3://commoncrawl/`, `https://data.commoncrawl.org/`, a local mirror or `file:///mirror/`; entries
  that are absolute paths or URIs are left as they are;
* a directory: its WARC/ARC files (`.warc`, `.arc`, either with `.gz` or `.zst`), recursively. Nothing else
  is taken, and nothing is left out silently: every file or directory not taken is listed with its reason
  (`.run.json` `inputs_skipped`, the summary), e.g. a `_old/` directory (names starting with `_` or `.` are
  not data to Hadoop and Spark), a `.part` download, a WET file, `notes.txt`.

`s3://` and `http(s)://` entries are read by the Python workers (pyarrow's S3 filesystem, fsspec) and are
looked up here, one request per file; other URIs (`hdfs://`, `s3a://`, ...) are listed by the JVM (globs and
directories allowed) once Spark runs (`resolve_jvm`).
"""

from __future__ import annotations

import gzip
import importlib.util
import os
import re
import urllib.parse
import urllib.request

from .storage import InputError, InputFile, is_local, local_path, open_input, scheme

# Names taken from a directory given as input.
WARC_NAME_RX = re.compile(r"\.w?arc(?:\.gz|\.zst)?$", re.I)
_PARTIAL_RX = re.compile(r"\.(?:part|partial|tmp|crdownload|download|inprogress)$", re.I)
_DERIVED_RX = re.compile(r"\.(?:wet|wat)(?:\.gz|\.zst)?$", re.I)
# Entries the Python workers open themselves (the JVM has no `s3:` or `https:` file system by default).
PYTHON_SCHEMES = ("s3", "http", "https")


def skip_reason(name: str, is_dir: bool = False) -> str | None:
    """Why a file (or directory) found in an input directory is not taken; None: taken."""
    if name.startswith(("_", ".")):
        what = "directory" if is_dir else "file"
        return (f"{what} name starts with '_' or '.' (not data to Hadoop and Spark); "
                "give it as its own --input to clean it")
    if is_dir:
        return None
    if _PARTIAL_RX.search(name):
        return "an unfinished download or temporary file (.part, .tmp, ...)"
    if _DERIVED_RX.search(name):
        return "a WET/WAT file (extracted text or metadata: no HTML to clean)"
    if not WARC_NAME_RX.search(name):
        return "not a WARC/ARC file name (.warc, .arc, optionally .gz or .zst)"
    return None


def list_directory(path: str) -> tuple[list[str], list[dict]]:
    """(WARC/ARC files below `path`, [{"path", "reason"}] of what was left out), both sorted."""
    taken: list[str] = []
    skipped: list[dict] = []
    for root, dirs, files in os.walk(path):
        keep = []
        for d in sorted(dirs):
            why = skip_reason(d, is_dir=True)
            if why:
                skipped.append({"path": os.path.join(root, d) + "/", "reason": why})
            else:
                keep.append(d)
        dirs[:] = keep
        for name in sorted(files):
            full = os.path.join(root, name)
            why = skip_reason(name)
            if why:
                skipped.append({"path": full, "reason": why})
            else:
                taken.append(full)
    return taken, skipped


def join_base(base: str | None, entry: str) -> str:
    """`entry` under `base` when it is relative; absolute paths and URIs unchanged."""
    if not base or scheme(entry) or os.path.isabs(entry):
        return entry
    if scheme(base):
        return base.rstrip("/") + "/" + entry.lstrip("/")
    return os.path.join(local_path(base), entry)


def read_input_list(path: str, base: str | None = None) -> list[str]:
    """Entries of a path list (gzip-compressed or plain, local or remote), joined to `base`."""
    try:
        fh = open(local_path(path), "rb") if is_local(path) else open_input(path)
        with fh:
            data = fh.read()
    except (OSError, ValueError, ImportError) as exc:
        raise InputError(f"cannot read input list {path}: {getattr(exc, 'strerror', None) or exc}") from exc
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError) as exc:
            raise InputError(f"input list {path} is a damaged gzip file: {exc}") from exc
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"input list {path} is not UTF-8 text (byte {exc.start}): give one path or URI "
                         "a line, plain or gzip-compressed") from exc
    entries = [ln.strip() for ln in text.splitlines()]
    return [join_base(base, e) for e in entries if e and not e.startswith("#")]


def check_base(base: str) -> None:
    """A local --input-base must be a directory (a remote one is checked file by file)."""
    if is_local(base) and not os.path.isdir(local_path(base)):
        raise InputError(f"--input-base {base} is not a directory")


def expand_directories(items: list[str]) -> tuple[list[str], list[dict]]:
    """Local directories replaced by their WARC/ARC files; (items, skipped). Raises InputError for a
    directory that holds none."""
    out: list[str] = []
    skipped: list[dict] = []
    for item in items:
        path = local_path(item) if is_local(item) else None
        if path is None or not os.path.isdir(path):
            out.append(item)
            continue
        taken, left = list_directory(path)
        skipped += left
        if not taken:
            listed = "; ".join(f"{os.path.relpath(s['path'], path)}: {s['reason']}" for s in left[:3])
            raise InputError(f"input directory holds no WARC/ARC file: {item}"
                             + (f" (left out: {listed}{' ...' if len(left) > 3 else ''})" if left else ""))
        out += taken
    return out, skipped


def split_python_remote(items: list[str]) -> tuple[list[str], list[str]]:
    """(items the Python workers open: s3://, http(s)://; the rest)."""
    python = [i for i in items if scheme(i) in PYTHON_SCHEMES]
    return python, [i for i in items if scheme(i) not in PYTHON_SCHEMES]


def _http_size(uri: str) -> int:
    req = urllib.request.Request(uri, method="HEAD", headers={"User-Agent": "webcleaner-clean_warc"})
    with urllib.request.urlopen(req, timeout=30) as resp:
        return int(resp.headers.get("Content-Length") or 0)


def _s3_size(uri: str) -> int:
    import pyarrow.fs as pafs

    fs, path = pafs.FileSystem.from_uri(uri)
    info = fs.get_file_info(path)
    if info.type != pafs.FileType.File:
        raise FileNotFoundError(f"no such object: {uri}")
    return int(info.size)


def stat_python_remote(items: list[str]) -> list[InputFile]:
    """Size of each s3:// / http(s):// file (no globs: one object each). Raises InputError."""
    out: list[InputFile] = []
    if any(scheme(i) in ("http", "https") for i in items) and not (
            importlib.util.find_spec("fsspec") and importlib.util.find_spec("aiohttp")):
        raise InputError("http(s):// inputs are read with fsspec's HTTP file system: install fsspec and aiohttp "
                         "(on the workers too), or read Common Crawl from s3://commoncrawl/")
    for uri in dict.fromkeys(items):
        if re.search(r"[*?\[{]", urllib.parse.urlparse(uri).path):
            raise InputError(f"globs are not supported for {scheme(uri)}:// inputs: {uri} (give a path list)")
        try:
            size = _http_size(uri) if scheme(uri) in ("http", "https") else _s3_size(uri)
        except Exception as exc:
            raise InputError(f"cannot reach input {uri}: {type(exc).__name__}: {exc}"[:400]) from exc
        out.append(InputFile(uri, size))
    return out


def resolve_jvm(spark, items: list[str]) -> tuple[list[InputFile], list[dict]]:
    """List Hadoop URIs (globs, directories) with the JVM's FileSystem: (files, skipped). Raises
    InputError."""
    jvm = spark.sparkContext._jvm
    conf = spark.sparkContext._jsc.hadoopConfiguration()
    out: list[InputFile] = []
    skipped: list[dict] = []
    seen: set[str] = set()

    def add(st) -> None:
        uri = st.getPath().toString()
        if uri not in seen:
            seen.add(uri)
            out.append(InputFile(uri, int(st.getLen()), int(st.getModificationTime()) * 1_000_000))

    def walk(fs, dir_status) -> None:
        for c in sorted(fs.listStatus(dir_status.getPath()), key=lambda c: c.getPath().getName()):
            why = skip_reason(c.getPath().getName(), is_dir=c.isDirectory())
            if why:
                suffix = "/" if c.isDirectory() else ""
                skipped.append({"path": c.getPath().toString() + suffix, "reason": why})
            elif c.isDirectory():
                walk(fs, c)
            else:
                add(c)

    for item in items:
        try:
            path = jvm.org.apache.hadoop.fs.Path(item)
            fs = path.getFileSystem(conf)
            statuses = fs.globStatus(path)
        except Exception as exc:  # py4j error: unknown scheme, credentials, ...
            msg = str(exc).strip().splitlines()[0][:300] if str(exc).strip() else type(exc).__name__
            raise InputError(f"cannot list input {item}: {msg}") from exc
        if statuses is None or len(statuses) == 0:
            raise InputError(f"input not found: {item}")
        before = len(out)
        for st in statuses:
            if st.isDirectory():
                walk(fs, st)
            else:
                add(st)
        if len(out) == before:
            raise InputError(f"input matches no WARC/ARC file: {item}")
    return out, skipped
