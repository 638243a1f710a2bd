"""Where the job's files live: inputs (local paths, globs, lists, Hadoop URIs) and the output
directory (local, or any Hadoop FileSystem through the driver's JVM).

Three places touch storage, with different tools at hand:

* the driver before Spark starts: local paths, `file://` URIs and globs are resolved and
  checked here, so a missing input fails before a JVM is launched;
* the driver after Spark started: non-local URIs (hdfs://, s3a://, gs://, abfs://, ...) are
  listed with the JVM's Hadoop FileSystem (the same code and credentials Spark itself uses),
  and the output directory is managed through it when it is not local;
* the Python workers: `open_input` opens a WARC for streaming. Local paths with `open()`;
  other URIs with fsspec when installed, else `pyarrow.fs` (S3 natively, HDFS via libhdfs).
"""

from __future__ import annotations

import glob as _glob
import json
import os
import re
import shutil
import urllib.parse
from collections.abc import Iterable
from dataclasses import dataclass
from typing import BinaryIO

from cleaner.output.files import write_atomic
from cleaner.warc.streams import CountingReader

_SCHEME_RX = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]+)://")
_GLOB_RX = re.compile(r"[*?\[{]")
# Extensions of the files taken from a directory given as input.
WARC_SUFFIX_RX = re.compile(r"\.w?arc(?:\.gz)?$", re.I)


class InputError(Exception):
    """An input path/pattern/list is missing or matches nothing."""


def scheme(uri: str) -> str | None:
    m = _SCHEME_RX.match(uri)
    return m.group(1).lower() if m else None


def is_local(uri: str) -> bool:
    return scheme(uri) in (None, "file")


def local_path(uri: str) -> str:
    """A local path from a plain path or a file:// URI."""
    if uri.startswith("file:"):
        return urllib.parse.unquote(urllib.parse.urlparse(uri).path)
    return uri


def to_uri(path_or_uri: str) -> str:
    """Absolute file:// URI for local paths; other URIs unchanged (what Spark is given)."""
    if is_local(path_or_uri):
        return "file://" + urllib.parse.quote(os.path.abspath(local_path(path_or_uri)))
    return path_or_uri


def base_name(uri: str) -> str:
    return uri.rstrip("/").rsplit("/", 1)[-1]


def is_gzip_name(uri: str) -> bool:
    return ".gz" in base_name(uri).lower()


# ------------------------------------------------------------------------------------------
# Inputs
# ------------------------------------------------------------------------------------------

@dataclass
class InputFile:
    uri: str          # canonical: the real local path (symlinks resolved), or the full URI
    size: int
    mtime_ns: int | None = None   # modification time where the store gives one: with size, the file's version

    @property
    def name(self) -> str:
        return base_name(self.uri)


def read_input_list(path: str) -> list[str]:
    """Lines of an input list (one path/URI/glob per line; blank lines and # comments skipped)."""
    try:
        with open(local_path(path), encoding="utf-8") as fh:
            lines = fh.read().splitlines()
    except OSError as exc:
        raise InputError(f"cannot read input list {path}: {exc.strerror or exc}") from exc
    return [ln.strip() for ln in lines if ln.strip() and not ln.strip().startswith("#")]


def _dir_files(path: str) -> list[str]:
    out = []
    for root, dirs, files in os.walk(path):
        dirs[:] = sorted(d for d in dirs if not d.startswith((".", "_")))
        for name in sorted(files):
            if not name.startswith((".", "_")) and WARC_SUFFIX_RX.search(name):
                out.append(os.path.join(root, name))
    return out


def resolve_local(items: Iterable[str]) -> tuple[list[InputFile], list[str]]:
    """Resolve local paths, file:// URIs, directories and globs (no Spark needed).

    Returns (local files, remote items left for the JVM). Raises InputError naming the first
    item that does not exist or matches nothing."""
    files: list[InputFile] = []
    remote: list[str] = []
    seen: set[str] = set()

    def add(path: str) -> None:
        path = os.path.realpath(path)  # one file by two paths (a symlinked directory) is one input
        if path in seen:
            return
        try:
            st = os.stat(path)
        except OSError as exc:
            raise InputError(f"input not readable: {path}: {exc.strerror or exc}") from exc
        if not os.access(path, os.R_OK):
            raise InputError(f"input not readable: {path}")
        seen.add(path)
        files.append(InputFile(path, st.st_size, st.st_mtime_ns))

    for item in items:
        if not is_local(item):
            remote.append(item)
            continue
        path = local_path(item)
        if _GLOB_RX.search(path) and not os.path.exists(path):
            matches = sorted(p for p in _glob.glob(os.path.expanduser(path), recursive=True)
                             if os.path.isfile(p))
            if not matches:
                raise InputError(f"input pattern matches no file: {item}")
            for p in matches:
                add(p)
        elif os.path.isdir(path):
            found = _dir_files(path)
            if not found:
                raise InputError(f"input directory holds no WARC/ARC file: {item}")
            for p in found:
                add(p)
        elif os.path.isfile(path):
            add(path)
        else:
            raise InputError(f"input not found: {item}")
    return files, remote


# ------------------------------------------------------------------------------------------
# Opening WARCs on the workers
# ------------------------------------------------------------------------------------------

class RangeReader(CountingReader):
    """Bytes [start, end) of a seekable binary file; tell() is the absolute offset, so the
    WARC reader reports the same record offsets as when reading the whole file."""

    def __init__(self, fh, start: int, end: int | None):
        super().__init__(start)
        self._fh = fh
        if start:
            fh.seek(start)
        self._end = end

    def read(self, size: int = -1) -> bytes:
        if size is None or size < 0:
            size = 1 << 20
        if self._end is not None:
            size = min(size, self._end - self._pos)
        if size <= 0:
            return b""
        data = self._fh.read(size)
        self._pos += len(data)
        return data

    def close(self) -> None:
        try:
            self._fh.close()
        finally:
            super().close()


_S3_ALIASES = {"s3a": "s3", "s3n": "s3"}


def _remote_open(uri: str, seekable: bool) -> BinaryIO:
    sch = scheme(uri) or ""
    mapped = _S3_ALIASES.get(sch, sch) + uri[len(sch):] if sch in _S3_ALIASES else uri
    try:
        import fsspec  # optional: s3fs, gcsfs, adlfs, ... when installed
    except ImportError:
        fsspec = None
    if fsspec is not None:
        try:
            return fsspec.open(mapped, "rb").open()
        except (ImportError, ValueError):
            pass  # no fsspec implementation for this scheme: try pyarrow
    import pyarrow.fs as pafs

    fs, path = pafs.FileSystem.from_uri(mapped)
    if seekable:
        return fs.open_input_file(path)
    return fs.open_input_stream(path, buffer_size=1 << 20)


def open_input(uri: str, start: int = 0, end: int | None = None) -> BinaryIO | RangeReader:
    """Open a WARC (or bytes [start, end) of it) for streaming."""
    ranged = bool(start) or end is not None
    if is_local(uri):
        fh = open(local_path(uri), "rb", buffering=1 << 20)
    else:
        fh = _remote_open(uri, seekable=ranged)
    if not ranged:
        return fh
    return RangeReader(fh, start, end)


# ------------------------------------------------------------------------------------------
# The output directory, driver side
# ------------------------------------------------------------------------------------------

class LocalFS:
    """Output directory operations on the local file system."""

    kind = "local"

    def join(self, base: str, *parts: str) -> str:
        return os.path.join(base, *parts)

    def exists(self, path: str) -> bool:
        return os.path.exists(path)

    def isdir(self, path: str) -> bool:
        return os.path.isdir(path)

    def mkdirs(self, path: str) -> None:
        os.makedirs(path, exist_ok=True)

    def listdir(self, path: str) -> list[str]:
        return sorted(os.listdir(path)) if os.path.isdir(path) else []

    def rename(self, src: str, dst: str) -> None:
        if os.path.exists(dst):
            raise FileExistsError(dst)
        os.rename(src, dst)

    def delete(self, path: str) -> None:
        if os.path.isdir(path):
            shutil.rmtree(path)
        elif os.path.exists(path):
            os.remove(path)

    def read_text(self, path: str) -> str:
        with open(path, encoding="utf-8") as fh:
            return fh.read()

    def write_text(self, path: str, text: str) -> None:
        """Atomic: readers see the old or the new file, never half of one. The file gets the mode a new
        file gets (0666 & ~umask, as Spark's Parquet files), not mkstemp's 0600; a failed write (disk
        full) leaves no temporary file behind."""
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        write_atomic(path, text, after_write=lambda: _injected_write_fault(path))

    def create_exclusive(self, path: str, text: str) -> bool:
        """Create `path` holding `text` unless it exists (O_EXCL): True when this call created it."""
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        except FileExistsError:
            return False
        try:
            os.write(fd, text.encode("utf-8"))
            os.fsync(fd)
        finally:
            os.close(fd)
        return True

    def mtime(self, path: str) -> float:
        return os.stat(path).st_mtime

    def touch(self, path: str) -> None:
        os.utime(path)

    def files(self, path: str) -> list[tuple[str, int]]:
        """(path, size) of every visible file below path (not _* / .* names)."""
        out = []
        for root, dirs, names in os.walk(path):
            dirs[:] = sorted(d for d in dirs if not d.startswith(("_", ".")))
            for n in sorted(names):
                if not n.startswith(("_", ".")):
                    p = os.path.join(root, n)
                    out.append((p, os.path.getsize(p)))
        return out

    def spark_path(self, path: str) -> str:
        return to_uri(path)


class HadoopFS:
    """Output directory operations through the driver JVM's Hadoop FileSystem
    (hdfs://, s3a://, abfs://, gs://, file://, ...)."""

    kind = "hadoop"

    def __init__(self, spark, root: str):
        sc = spark.sparkContext
        self._jvm = sc._jvm
        self._conf = sc._jsc.hadoopConfiguration()
        self._fs = self._path(root).getFileSystem(self._conf)

    def _path(self, p: str):
        return self._jvm.org.apache.hadoop.fs.Path(p)

    def join(self, base: str, *parts: str) -> str:
        return "/".join([base.rstrip("/"), *parts])

    def exists(self, path: str) -> bool:
        return bool(self._fs.exists(self._path(path)))

    def isdir(self, path: str) -> bool:
        p = self._path(path)
        return bool(self._fs.exists(p)) and self._fs.getFileStatus(p).isDirectory()

    def mkdirs(self, path: str) -> None:
        self._fs.mkdirs(self._path(path))

    def listdir(self, path: str) -> list[str]:
        p = self._path(path)
        if not self._fs.exists(p):
            return []
        return sorted(s.getPath().getName() for s in self._fs.listStatus(p))

    def rename(self, src: str, dst: str) -> None:
        if self.exists(dst):
            raise FileExistsError(dst)
        if not self._fs.rename(self._path(src), self._path(dst)):
            raise OSError(f"rename {src} -> {dst} failed")

    def delete(self, path: str) -> None:
        self._fs.delete(self._path(path), True)

    def read_text(self, path: str) -> str:
        stream = self._fs.open(self._path(path))
        try:
            return self._jvm.org.apache.commons.io.IOUtils.toString(stream, "UTF-8")
        finally:
            stream.close()

    def write_text(self, path: str, text: str) -> None:
        parent, name = path.rstrip("/").rsplit("/", 1)
        tmp = f"{parent}/.{name}.tmp"
        out = self._fs.create(self._path(tmp), True)
        try:
            out.write(bytearray(text.encode("utf-8")))
        finally:
            out.close()
        if self.exists(path):
            self.delete(path)
        if not self._fs.rename(self._path(tmp), self._path(path)):
            raise OSError(f"cannot write {path}")

    def create_exclusive(self, path: str, text: str) -> bool:
        """create(overwrite=false): atomic on HDFS; on S3A only with conditional writes (docs/faults.md)."""
        try:
            out = self._fs.create(self._path(path), False)
        except Exception as exc:  # py4j: FileAlreadyExistsException
            if "AlreadyExists" in str(exc) or self.exists(path):
                return False
            raise OSError(f"cannot create {path}: {str(exc).strip().splitlines()[0][:300]}") from exc
        try:
            out.write(bytearray(text.encode("utf-8")))
        finally:
            out.close()
        return True

    def mtime(self, path: str) -> float:
        try:
            return self._fs.getFileStatus(self._path(path)).getModificationTime() / 1000.0
        except Exception as exc:
            if not self.exists(path):
                raise FileNotFoundError(path) from exc
            raise OSError(str(exc)[:300]) from exc

    def touch(self, path: str) -> None:
        import time as _time

        try:
            self._fs.setTimes(self._path(path), int(_time.time() * 1000), -1)
        except Exception:  # object stores have no setTimes: rewrite the object (a new modification time)
            self.write_text(path, self.read_text(path))

    def files(self, path: str) -> list[tuple[str, int]]:
        out = []
        it = self._fs.listFiles(self._path(path), True)
        root = self._fs.makeQualified(self._path(path)).toString().rstrip("/")
        while it.hasNext():
            st = it.next()
            full = st.getPath().toString()
            rel = full[len(root):].lstrip("/") if full.startswith(root) else full
            if not any(part.startswith(("_", ".")) for part in rel.split("/")):
                out.append((full, int(st.getLen())))
        return sorted(out)

    def spark_path(self, path: str) -> str:
        return path


# Test hook: CLEAN_WARC_FAULT="write:<path substring>" makes LocalFS.write_text of a matching path fail with
# ENOSPC after its temporary file was created and written to (a disk filling up while publishing).
WRITE_FAULT_ENV = "CLEAN_WARC_FAULT"


def _injected_write_fault(path: str) -> None:
    kind, sep, needle = os.environ.get(WRITE_FAULT_ENV, "").partition(":")
    if kind == "write" and sep and needle and needle in path:
        import errno

        raise OSError(errno.ENOSPC, "No space left on device (injected)", path)


def json_dumps(obj) -> str:
    return json.dumps(obj, indent=2, sort_keys=False, ensure_ascii=False, default=str) + "\n"
