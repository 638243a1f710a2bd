#!/usr/bin/env python
"""The fault-injection suite, bigger than tests/test_faults.py: real drivers SIGKILLed, real Python workers
SIGKILLed, jobs started side by side, a full disk, inputs that change. For release checks.

Every scenario runs `python jobs/clean_warc.py` as separate processes (each its own JVM, local mode) on WARCs
built from the shared pages with scripts/make_warc.py, then checks what readers see (the newest rows of each
file, docs/faults.md) against the response records of the inputs: every record id exactly once, no
duplicate, and the exit code of every run against the documented one. Prints the table of docs/faults.md.

    .venv/bin/python scripts/fault_suite.py [--pages 340] [--only kill_driver_write,two_at_once] [--json out.json]

Scenarios that mount a tmpfs (disk full while writing, a read-only output) need root; without it they are
reported as skipped.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
JOB = ROOT / "jobs" / "clean_warc.py"
DATA = ROOT.parent / "shared" / "data"

from cleaner.warc import WarcFileStats, iter_html_records  # noqa: E402

NEWEST_ROWS = """SELECT warc_file, warc_offset, record_id
                 FROM read_parquet('{out}/run=*/**/*.parquet', hive_partitioning = true, union_by_name = true)
                 QUALIFY run = max(run) OVER (PARTITION BY warc_file)"""


def env(**extra) -> dict:
    e = dict(os.environ, PYSPARK_PYTHON=sys.executable, SPARK_LOCAL_IP="127.0.0.1")
    e.pop("PYSPARK_GATEWAY_PORT", None)
    e.update(extra)
    return e


class Run:
    """One job process."""

    def __init__(self, args: list, log: Path, **extra_env):
        self.log = log
        self.fh = open(log, "w")
        self.proc = subprocess.Popen([sys.executable, str(JOB), *map(str, args), "--no-progress"], env=env(**extra_env),
                                     stdout=self.fh, stderr=subprocess.STDOUT, cwd=ROOT, start_new_session=True)

    def wait(self, timeout: float = 1800) -> int:
        try:
            return self.proc.wait(timeout=timeout)
        finally:
            self.fh.close()

    def kill(self) -> None:
        """SIGKILL the driver process only (its JVM exits when the driver's pipe closes)."""
        self.proc.send_signal(signal.SIGKILL)

    def text(self) -> str:
        return self.log.read_text(errors="replace")


def wait_until(pred, timeout: float, run: Run | None = None) -> bool:
    end = time.time() + timeout
    while time.time() < end:
        if pred():
            return True
        if run is not None and run.proc.poll() is not None:
            return False
        time.sleep(0.1)
    return False


def response_ids(paths) -> set[tuple]:
    out = set()
    for p in paths:
        with open(p, "rb") as fh:
            out |= {(os.path.realpath(p), r.offset, r.record_id)
                    for r in iter_html_records(fh, str(p), WarcFileStats())}
    return out


def check(out: Path, paths) -> dict:
    import duckdb

    rows = duckdb.connect().execute(NEWEST_ROWS.format(out=out)).fetchall() if list(out.glob("run=*")) else []
    keys = collections.Counter(rows)
    expected = response_ids(paths)
    leftovers = [str(p) for p in out.rglob(".*") if ".json." in p.name]
    staging = list((out / ".staging").iterdir()) if (out / ".staging").is_dir() else []
    return {"expected": len(expected), "distinct": len(keys), "duplicates": sum(n - 1 for n in keys.values()),
            "missing": len(expected - set(keys)), "extra": len(set(keys) - expected),
            "temp_files": len(leftovers), "staging_left": len(staging),
            "exact": set(keys) == expected and all(n == 1 for n in keys.values())}


def python_workers(root_pid: int) -> list[int]:
    """pyspark.daemon children below `root_pid` (the Python workers)."""
    procs = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                ppid = int(open(f"/proc/{d}/stat").read().rsplit(")", 1)[1].split()[1])
                cmd = open(f"/proc/{d}/cmdline", "rb").read().replace(b"\0", b" ").decode(errors="replace")
            except (OSError, IndexError, ValueError):
                continue
            procs[int(d)] = (ppid, cmd)

    def under(pid):
        for _ in range(50):
            if pid == root_pid:
                return True
            if pid not in procs:
                return False
            pid = procs[pid][0]
        return False

    return [p for p, (pp, cmd) in procs.items() if "pyspark.daemon" in cmd and pp in procs
            and "pyspark.daemon" in procs[pp][1] and under(p)]


def staged_files(out: Path) -> bool:
    return any(f for _, _, f in os.walk(out / ".staging"))


# ------------------------------------------------------------------------------------------
# Scenarios: each returns (exit codes, the paths whose records must be there, notes)
# ------------------------------------------------------------------------------------------

class Suite:
    def __init__(self, work: Path, warcs: dict[str, Path], model: list[str]):
        self.work = work
        self.w = warcs
        self.model = model

    def out(self, name: str) -> Path:
        return self.work / "out" / name

    def args(self, out: Path, *inputs, skip=True) -> list:
        return (["--input", *inputs, "--output", out, *self.model, "--partition-by", ""]
                + (["--skip-done"] if skip else []))

    def run(self, name: str, out: Path, *inputs, extra=(), **e) -> Run:
        n = len(list(self.work.glob(f"logs/{name}-*.log")))
        return Run(self.args(out, *inputs) + list(extra), self.work / "logs" / f"{name}-{n}.log", **e)

    # driver killed at a stage, then a --skip-done re-run
    def _kill_driver(self, name: str, when) -> tuple:
        out = self.out(name)
        a, b = self.w["a"], self.w["b"]
        first = self.run(name, out, a, b)
        hit = wait_until(lambda: when(out), 900, first)
        if hit:
            first.kill()
        c1 = first.wait()
        c2 = self.run(name, out, a, b).wait()
        return [c1, c2], [a, b], "killed" if hit else "ended before the kill point"

    def kill_driver_planning(self):
        return self._kill_driver("kill_driver_planning", lambda o: (o / ".lease.json").exists())

    def kill_driver_write(self):
        return self._kill_driver("kill_driver_write", staged_files)

    def kill_driver_staged(self):  # written, before publish: the hook stops it where a kill would
        out = self.out("kill_driver_staged")
        a, b = self.w["a"], self.w["b"]
        c1 = self.run("kill_driver_staged", out, a, b, extra=["--simulate-crash", "before_publish"]).wait()
        c2 = self.run("kill_driver_staged", out, a, b).wait()
        return [c1, c2], [a, b], ""

    def kill_driver_publish(self):  # renamed, index not written
        out = self.out("kill_driver_publish")
        a, b = self.w["a"], self.w["b"]
        c1 = self.run("kill_driver_publish", out, a, b, extra=["--simulate-crash", "after_publish"]).wait()
        c2 = self.run("kill_driver_publish", out, a, b).wait()
        return [c1, c2], [a, b], ""

    def kill_worker(self):
        out = self.out("kill_worker")
        a, b = self.w["a"], self.w["b"]
        run = self.run("kill_worker", out, a, b)
        killed = []
        if wait_until(lambda: bool(python_workers(run.proc.pid)) and staged_files(out) is False
                      and (out / ".lease.json").exists(), 900, run):
            time.sleep(3)  # into the cleaning
            for pid in python_workers(run.proc.pid):
                try:
                    os.kill(pid, signal.SIGKILL)
                    killed.append(pid)
                except ProcessLookupError:
                    pass
        c = run.wait()
        return [c], [a, b], f"{len(killed)} Python workers killed"

    def two_at_once(self):  # same inputs, no --wait: one publishes, the other refuses
        out = self.out("two_at_once")
        a, b = self.w["a"], self.w["b"]
        r1, r2 = self.run("two_at_once", out, a, b), self.run("two_at_once", out, a, b)
        return sorted([r1.wait(), r2.wait()]), [a, b], ""

    def overlap_wait(self):  # overlapping inputs, the second with --wait: it cleans only what is new
        out = self.out("overlap_wait")
        a, b, c = self.w["a"], self.w["b"], self.w["c"]
        r1 = self.run("overlap_wait", out, a, b)
        wait_until(lambda: (out / ".lease.json").exists(), 300, r1)
        r2 = self.run("overlap_wait", out, b, c, extra=["--wait"])
        return [r1.wait(), r2.wait()], [a, b, c], ""

    def live_staging(self):  # a second run while the first one's staging is being written
        out = self.out("live_staging")
        a, b = self.w["a"], self.w["b"]
        r1 = self.run("live_staging", out, a, b)
        wait_until(lambda: staged_files(out), 900, r1)
        c2 = self.run("live_staging", out, a, b).wait()
        return [r1.wait(), c2], [a, b], ""

    def stale_lease(self):  # a dead run's lease (not renewed for long) and its staging
        out = self.out("stale_lease")
        a = self.w["a"]
        (out / ".staging" / "20200101T000000Z-dead00").mkdir(parents=True)
        (out / ".staging" / "20200101T000000Z-dead00" / "part-0.parquet").write_bytes(b"PAR1")
        (out / ".lease.json").write_text(json.dumps({"run_id": "20200101T000000Z-dead00", "host": "gone.example",
                                                     "pid": 1, "token": "x"}))
        old = time.time() - 3600
        os.utime(out / ".lease.json", (old, old))
        return [self.run("stale_lease", out, a).wait()], [a], ""

    def disk_full_publish(self):  # ENOSPC injected while writing the index after the commit rename
        out = self.out("disk_full_publish")
        a = self.w["a"]
        c1 = self.run("disk_full_publish", out, a, CLEAN_WARC_FAULT="write:.runs").wait()
        c2 = self.run("disk_full_publish", out, a).wait()
        return [c1, c2], [a], ""

    def disk_full_write(self):  # a real full tmpfs while Spark writes; then room again
        if os.geteuid() != 0:
            return None
        mnt = self.work / "small"
        mnt.mkdir()
        if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(mnt)]).returncode:
            return None
        try:
            out = mnt / "out"
            a = self.w["a"]
            c1 = self.run("disk_full_write", out, a).wait()
            subprocess.run(["mount", "-o", "remount,size=64m", str(mnt)], check=True)
            c2 = self.run("disk_full_write", out, a).wait()
            result = check(out, [a])
        finally:
            subprocess.run(["umount", "-l", str(mnt)])
        return [c1, c2], [a], "", result

    def truncated_then_complete(self):
        inp = self.work / "growing"
        inp.mkdir(exist_ok=True)
        f = inp / "growing.warc.gz"
        full = self.w["a"].read_bytes()
        f.write_bytes(full[: len(full) // 2])
        out = self.out("truncated_then_complete")
        c1 = self.run("truncated_then_complete", out, f).wait()
        f.write_bytes(full)
        c2 = self.run("truncated_then_complete", out, f).wait()
        return [c1, c2], [f], ""

    def two_paths(self):
        real = self.work / "real"
        real.mkdir(exist_ok=True)
        shutil.copy(self.w["a"], real / "a.warc.gz")
        link = self.work / "link"
        if not link.exists():
            link.symlink_to(real, target_is_directory=True)
        out = self.out("two_paths")
        return [self.run("two_paths", out, real, link).wait()], [real / "a.warc.gz"], ""

    def unusable_output(self):
        blocker = self.work / "blocker"
        blocker.write_text("x")
        codes = [self.run("unusable_output", blocker / "sub", self.w["a"]).wait()]
        return codes, [], "file/sub"


EXPECTED = {  # the documented exit codes of each scenario's runs (docs/faults.md)
    "kill_driver_planning": [-9, 0], "kill_driver_write": [-9, 0], "kill_driver_staged": [70, 0],
    "kill_driver_publish": [70, 0], "kill_worker": [0], "two_at_once": [0, 5], "overlap_wait": [0, 0],
    "live_staging": [0, 5], "stale_lease": [0], "disk_full_publish": [0, 0], "disk_full_write": [5, 0],
    "truncated_then_complete": [0, 0], "two_paths": [0], "unusable_output": [5],
}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pages", type=int, default=340, help="HTML pages in each of the WARCs a and b")
    ap.add_argument("--model", help="model (default: the packaged one)")
    ap.add_argument("--only", help="comma-separated scenario names")
    ap.add_argument("--work", type=Path, help="work directory (default: a new temporary one, removed)")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="fault_suite-"))
    (work / "logs").mkdir(parents=True, exist_ok=True)
    (work / "in").mkdir(exist_ok=True)
    make = ROOT / "scripts" / "make_warc.py"
    warcs = {}
    for name, src, n in (("a", DATA / "cleaneval-final" / "html", args.pages),
                         ("b", DATA / "dragnet" / "html", args.pages),
                         ("c", DATA / "cleanportaleval" / "html", 30)):
        warcs[name] = work / "in" / f"{name}.warc.gz"
        if not warcs[name].exists():
            subprocess.run([sys.executable, str(make), str(src), "--limit", str(n), "--date", "2024-01-01T00:00:00Z",
                            "--out", str(warcs[name])], check=True, capture_output=True)
    suite = Suite(work, warcs, ["--model", args.model] if args.model else [])
    names = args.only.split(",") if args.only else list(EXPECTED)
    table = []
    for name in names:
        t = time.perf_counter()
        got = getattr(suite, name)()
        if got is None:
            table.append({"scenario": name, "skipped": "needs root (tmpfs)"})
            print(f"{name}: skipped (needs root for a tmpfs)", flush=True)
            continue
        codes, paths, note = got[:3]
        result = got[3] if len(got) > 3 else check(suite.out(name), paths) if paths else {"exact": True}
        ok = result["exact"] and codes == EXPECTED[name]
        row = {"scenario": name, "exit_codes": codes, "expected_codes": EXPECTED[name], **result, "note": note,
               "seconds": round(time.perf_counter() - t, 1), "ok": ok}
        table.append(row)
        print(json.dumps(row), flush=True)
    print("\n| scenario | exit codes | records expected | distinct | duplicates | missing | ok |")
    print("|---|---|---|---|---|---|---|")
    for r in table:
        if "skipped" in r:
            print(f"| {r['scenario']} | skipped: {r['skipped']} | | | | | |")
            continue
        print(f"| {r['scenario']} | {' then '.join(map(str, r['exit_codes']))} | {r.get('expected', 0)} | "
              f"{r.get('distinct', 0)} | {r.get('duplicates', 0)} | {r.get('missing', 0)} | "
              f"{'yes' if r['ok'] else 'NO'} |")
    if args.json:
        args.json.write_text(json.dumps(table, indent=1) + "\n")
    if not args.work:
        shutil.rmtree(work, ignore_errors=True)
    return 0 if all(r.get("ok", True) for r in table) else 1


if __name__ == "__main__":
    sys.exit(main())
