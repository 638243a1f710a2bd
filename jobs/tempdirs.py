"""The driver's temporary directories, and the sweep of those a killed driver left behind.

Two kinds live in the node's temporary directory:

* `clean_warc-code-<pid>-<random>/`: the zip of `jobs/` shipped to the workers (clean_warc.py `_ship_code`);
* `clean_warc-markers/<run id>/`: the poison-record markers of a run's tasks on this node (jobs/worker.py),
  with an `.owner` file naming the driver (host, pid, process start) written by `claim`.

A driver removes its own on every way out (`finally`, `atexit`); a driver that was killed cannot, so every
run sweeps at start the directories whose driver, on this host, no longer runs. A directory of a driver on
another host, or of one that still runs, is left alone.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import socket
import tempfile

from .lease import process_alive, process_start

log = logging.getLogger("clean_warc")

CODE_PREFIX = "clean_warc-code-"
MARKERS = "clean_warc-markers"
OWNER = ".owner"


def markers_base(marker_dir: str) -> str:
    """The directory holding the runs' marker directories ([job] marker_dir, else the system's tmp)."""
    return marker_dir or os.path.join(tempfile.gettempdir(), MARKERS)


def claim(run_markers: str) -> None:
    """Create a run's marker directory with its owner: this driver process."""
    try:
        os.makedirs(run_markers, exist_ok=True)
        pid = os.getpid()
        with open(os.path.join(run_markers, OWNER), "w") as fh:
            json.dump({"host": socket.gethostname(), "pid": pid, "pid_start": process_start(pid)}, fh)
    except OSError:  # no usable local directory: the workers run without containment (jobs/worker.py)
        pass


def _owner_gone(owner: dict) -> bool:
    return (owner.get("host") == socket.gethostname() and isinstance(owner.get("pid"), int)
            and not process_alive(owner["pid"], owner.get("pid_start")))


def sweep(marker_dir: str = "") -> list[str]:
    """Remove the temporary directories of drivers on this host that no longer run; returns them."""
    removed = []
    tmp = tempfile.gettempdir()
    try:
        names = os.listdir(tmp)
    except OSError:
        names = []
    for name in names:
        if not name.startswith(CODE_PREFIX):
            continue
        pid = name[len(CODE_PREFIX):].split("-", 1)[0]
        if pid.isdigit() and not process_alive(int(pid), None):
            shutil.rmtree(os.path.join(tmp, name), ignore_errors=True)
            removed.append(os.path.join(tmp, name))
    base = markers_base(marker_dir)
    try:
        runs = os.listdir(base)
    except OSError:
        runs = []
    for run in runs:
        path = os.path.join(base, run)
        try:
            with open(os.path.join(path, OWNER)) as fh:
                owner = json.load(fh)
        except (OSError, ValueError):
            continue  # no owner (written by a worker of a driver elsewhere): not ours to judge
        if _owner_gone(owner):
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
    if removed:
        log.info("removed %d temporary directories of drivers that no longer run: %s", len(removed),
                 ", ".join(removed[:3]) + (" ..." if len(removed) > 3 else ""))
    return removed
