"""The lease on an output directory: one run at a time plans, writes and publishes into it.

A run takes the lease before it plans (before it looks at what is done), keeps it while it runs and
gives it back at the end:

* **take**: an exclusive create of `OUT/.lease.json` (`O_CREAT | O_EXCL` on a local disk; on HDFS
  `create(overwrite=false)`, which the name node makes atomic). The file names the holder: host, pid,
  run id, when it started; its modification time is the last renewal.
* **renew**: a heartbeat thread touches the file every `[job] lease_renew_s` seconds after checking that
  the file still holds its token (a run that finds another token has lost the lease and will not
  publish).
* **give back**: delete the file (the job's `finally`, and `atexit` for an interpreter that exits).

A second run finds the file: it waits (`--wait [SECONDS]`) or refuses with exit 5 naming the holder. A
lease is **stale** when it was not renewed for `[job] lease_stale_s` seconds, or at once when its holder
ran on this host and that process (pid + start time, so a reused pid does not count) or that run (a
run of this very process that is gone) no longer exists. A stale lease is taken over under a
take-over lock (`OUT/.lease.takeover`, itself an exclusive create), which makes "check it is still the
same stale lease, delete it, create ours" one step for every run that wants to take over; only the
holder of the lease then removes the staging directories of dead runs (jobs/runs.py `recover`).

Object stores: S3 (since 2024), GCS and Azure Blob offer a conditional write (`If-None-Match: *`), the
same exclusive create; Hadoop's S3A uses it when `fs.s3a.create.conditional.enabled` is on (Hadoop 3.4.2
and later). A store or client without conditional writes cannot make the create exclusive: there,
one scheduler must start the runs of one output directory one after another, or the lease must live on
a file system that has an exclusive create (see docs/faults.md). The optimistic check at publish
(jobs/runs.py `overlap`) is the second line in every case.
"""

from __future__ import annotations

import atexit
import json
import logging
import os
import secrets
import socket
import threading
import time
from dataclasses import dataclass
from datetime import UTC, datetime

log = logging.getLogger("clean_warc")

LEASE = ".lease.json"
TAKEOVER = ".lease.takeover"

# Tokens of the leases this process holds right now: a lease of this pid whose token is not here
# belonged to a run of this process that is gone (a test that simulated a crash).
_LIVE_TOKENS: set[str] = set()


class LeaseHeld(Exception):
    """Another live run holds the lease (the message names it)."""

    def __init__(self, holder: dict, message: str):
        super().__init__(message)
        self.holder = holder


class LeaseLost(Exception):
    """This run's lease was taken over (it stopped renewing it for longer than the stale time)."""


@dataclass(frozen=True)
class LeaseSettings:
    renew_s: float      # heartbeat interval
    stale_s: float      # not renewed for this long: the holder is taken for dead

    @classmethod
    def from_config(cls, job: dict) -> LeaseSettings:
        return cls(float(job["lease_renew_s"]), float(job["lease_stale_s"]))


def process_start(pid: int) -> str | None:
    """The start time of process `pid` in clock ticks since boot (Linux), None when unknown or gone."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


def process_alive(pid: int, start: str | None) -> bool:
    """Whether process `pid` runs and is the process that started at `start` (when known)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # exists, another user's
    now = process_start(pid)
    return start is None or now is None or now == start


def describe(holder: dict, age: float | None = None) -> str:
    renewed = f", last renewed {age:.0f} s ago" if age is not None else ""
    return (f"run {holder.get('run_id', '?')} on host {holder.get('host', '?')} pid {holder.get('pid', '?')}, "
            f"started {holder.get('started_at', '?')}{renewed}")


class Lease:
    """The lease of one run on one output directory (`fs`: jobs.storage LocalFS or HadoopFS)."""

    def __init__(self, fs, root: str, run_id: str, settings: LeaseSettings, new_run_id=None):
        self.fs = fs
        self.new_run_id = new_run_id
        self.root = root
        self.path = fs.join(root, LEASE)
        self.takeover_path = fs.join(root, TAKEOVER)
        self.run_id = run_id
        self.settings = settings
        self.token = secrets.token_hex(8)
        self.held = False
        self.lost: str | None = None
        self.took_over: dict | None = None  # the dead holder whose lease this run took
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    # --- what is in the file -----------------------------------------------------------------------

    def _content(self) -> str:
        pid = os.getpid()
        return json.dumps({"run_id": self.run_id, "host": socket.gethostname(), "pid": pid,
                           "pid_start": process_start(pid), "token": self.token,
                           "started_at": datetime.now(UTC).isoformat(timespec="seconds")}) + "\n"

    def _read(self) -> tuple[dict, float] | None:
        """(holder, seconds since its last renewal) of the current lease file, None when there is none."""
        try:
            text = self.fs.read_text(self.path)
            age = max(0.0, time.time() - self.fs.mtime(self.path))
        except FileNotFoundError:
            return None
        except Exception as exc:  # OSError locally, a py4j error through Hadoop
            if not self.fs.exists(self.path):
                return None
            raise OSError(f"cannot read the lease {self.path}: {exc}") from exc
        try:
            holder = json.loads(text)
            if not isinstance(holder, dict):
                raise ValueError("not an object")
        except ValueError:
            holder = {"run_id": "?", "unreadable": True}  # half-written by a holder killed while creating it
        return holder, age

    def dead_reason(self, holder: dict, age: float) -> str | None:
        """Why the holder is taken for dead, None while it counts as alive."""
        if age > self.settings.stale_s:
            return f"not renewed for {age:.0f} s (stale after {self.settings.stale_s:g} s)"
        if holder.get("host") == socket.gethostname() and isinstance(holder.get("pid"), int):
            pid = holder["pid"]
            if not process_alive(pid, holder.get("pid_start")):
                return f"its process {pid} on this host is gone"
            if pid == os.getpid() and holder.get("token") not in _LIVE_TOKENS:
                return "its run in this process is gone"
        if holder.get("unreadable") and age > min(self.settings.stale_s, 3 * self.settings.renew_s):
            return "the lease file is unreadable and not renewed"
        return None

    # --- take, renew, give back --------------------------------------------------------------------

    def acquire(self, wait_s: float | None = None, poll_s: float = 1.0) -> None:
        """Take the lease; wait up to `wait_s` seconds (None: do not wait) for a live holder to give it
        back. Raises LeaseHeld naming the holder."""
        deadline = None if wait_s is None else time.monotonic() + wait_s
        announced = False
        while True:
            if self._try_create():
                return self._start()
            current = self._read()
            if current is None:
                time.sleep(0.05)
                continue  # given back between our create and our read: try again
            holder, age = current
            why = self.dead_reason(holder, age)
            if why is not None and self._take_over(holder, why):
                return self._start()
            if why is None:
                if deadline is None or time.monotonic() >= deadline:
                    raise LeaseHeld(holder, f"output directory {self.root} is in use by {describe(holder, age)}"
                                    + ("" if deadline is None else f"; waited {wait_s:g} s")
                                    + ": one run per output directory at a time (--wait to queue behind it)")
                if not announced:
                    log.info("output directory %s is in use by %s: waiting", self.root, describe(holder, age))
                    announced = True
            time.sleep(poll_s)

    def _try_create(self) -> bool:
        if self.new_run_id is not None:  # a run id of the moment the lease is taken (ids sort by time)
            self.run_id = self.new_run_id()
        return self.fs.create_exclusive(self.path, self._content())

    def _take_over(self, holder: dict, why: str) -> bool:
        """Replace the stale lease of `holder` by ours, under the take-over lock. False when another run was
        faster (it took the lease over, or a new run took it)."""
        if not self.fs.create_exclusive(self.takeover_path, self.token + "\n"):
            try:  # a run killed while holding the take-over lock leaves it behind: old ones are removed
                if time.time() - self.fs.mtime(self.takeover_path) > self.settings.stale_s:
                    self.fs.delete(self.takeover_path)
            except OSError:
                pass
            return False
        try:
            current = self._read()
            if current is not None:
                again, age = current
                if again.get("token") != holder.get("token") or self.dead_reason(again, age) is None:
                    return False  # not the lease we judged dead any more
                self.fs.delete(self.path)
            if not self._try_create():
                return False
            log.warning("took over the lease on %s from %s: %s", self.root, describe(holder), why)
            self.took_over = dict(holder, why=why)
            return True
        finally:
            try:
                self.fs.delete(self.takeover_path)
            except OSError:
                pass

    def _start(self) -> None:
        self.held = True
        _LIVE_TOKENS.add(self.token)
        atexit.register(self.release)
        self._thread = threading.Thread(target=self._heartbeat, name="clean_warc-lease", daemon=True)
        self._thread.start()

    def _heartbeat(self) -> None:
        while not self._stop.wait(self.settings.renew_s):
            try:
                self.renew()
            except LeaseLost as exc:
                self.lost = str(exc)
                log.error("%s", exc)
                return
            except OSError as exc:  # a passing storage error: the next beat tries again
                log.warning("cannot renew the lease on %s: %s", self.root, exc)

    def renew(self) -> None:
        self.check()
        self.fs.touch(self.path)

    def check(self) -> None:
        """Raise LeaseLost unless the lease file is still ours."""
        if self.lost:
            raise LeaseLost(self.lost)
        current = self._read()
        if current is None or current[0].get("token") != self.token:
            holder = describe(current[0]) if current else "nobody"
            raise LeaseLost(f"lost the lease on {self.root} (now held by {holder}): this run does not publish")

    def abandon(self) -> None:
        """Stop renewing and forget the lease without giving it back (a simulated crash)."""
        self._stop.set()
        _LIVE_TOKENS.discard(self.token)
        self.held = False

    def release(self) -> None:
        """Give the lease back if it is still ours (idempotent)."""
        if not self.held:
            return
        self.abandon()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=5)
        try:
            current = self._read()
            if current is not None and current[0].get("token") == self.token:
                self.fs.delete(self.path)
        except OSError as exc:
            log.warning("cannot give back the lease %s: %s (the next run takes it over once it is stale)",
                        self.path, exc)
