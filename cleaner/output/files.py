"""Writing output files: whole or not at all, with the mode every output of the project gets.

Shared by the annotation tool's gold files, `cleaner clean`'s per-page outputs and the job's run records
(jobs/storage.py), so that each of them is either the old file or the new one to a reader, never half of
one, and a file appears under its name only once it is whole (what `--skip-done` relies on).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path


def new_file_mode() -> int:
    """The mode open() gives a new file: 0666 less the umask (mkstemp makes 0600)."""
    try:  # Linux: the umask without changing it (os.umask() both reads and sets: not thread-safe)
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return 0o666 & ~int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return 0o666 & ~mask


def write_atomic(path: str | Path, text: str, *, fsync: bool = True,
                 after_write: Callable[[], None] | None = None) -> None:
    """Write `path` through a hidden temporary file beside it, renamed into place; a failed write (disk
    full) leaves no temporary file behind. `fsync`: the bytes reach the disk before the rename (records
    that must survive a power cut); `after_write`: a test hook run once the text is written."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, new_file_mode())
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
            if after_write is not None:
                after_write()
            if fsync:
                fh.flush()
                os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
