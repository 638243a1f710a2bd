"""Faults during the Spark job: a record that crashes the Python worker (poison), and a
Python worker killed in the middle of a job on the local standalone cluster.

Both run real crashes of real workers: the poison record makes the worker read address 0
(`CLEANER_FAULT_INJECT`, jobs/worker.py), the cluster test SIGKILLs the executor's Python
workers. Each test starts its own JVM (a subprocess), so it never disturbs a session of
another test file in the same pytest process.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import ROOT
from test_job import (  # noqa: F401  (helpers shared with the job tests)
    JOB, KEY, assert_accounted, direct_records, read_rows, standalone_cluster, submit_command,
)

from cleaner.warc import write_html_warc

os.environ["PYSPARK_PYTHON"] = sys.executable
os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")

DATE = "2024-05-06T07:08:09Z"


def _pages(data_dir: Path, n: int, poison_at: int | None = None) -> list[tuple[str, bytes]]:
    src = sorted((data_dir / "cleaneval-dev" / "html").glob("*.html"), key=lambda p: int(p.stem))
    pages = []
    for i in range(n):
        url = f"http://faults.test/page-{i}"
        if i == poison_at:
            url = "http://faults.test/POISON-page"
        pages.append((url, src[i % len(src)].read_bytes()))
    return pages


def _env(**extra) -> dict:
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable, SPARK_LOCAL_IP="127.0.0.1")
    env.pop("PYSPARK_GATEWAY_PORT", None)
    env.update(extra)
    return env


def _ids(path: Path) -> set[tuple]:
    return {(str(path), r.offset, r.record_id) for r in direct_records(path)[0]}


@pytest.mark.spark
@pytest.mark.slow
def test_poison_record_is_rejected_and_the_task_carries_on(tmp_path, data_dir, small_model):
    warc = tmp_path / "poison.warc.gz"
    write_html_warc(_pages(data_dir, 14, poison_at=6), warc, date=DATE)
    clean = tmp_path / "clean.warc.gz"
    write_html_warc(_pages(data_dir, 5)[1:], clean, date=DATE)
    out = tmp_path / "out"
    markers = tmp_path / "markers"
    conf = tmp_path / "job.toml"
    conf.write_text(f'[job]\nmarker_dir = "{markers}"\n')
    r = subprocess.run(
        [sys.executable, str(JOB), "--input", str(warc), str(clean), "--output", str(out),
         "--model", str(small_model), "--conf", str(conf), "--master", "local[2,3]",
         "--no-progress", "--partition-by", ""],
        env=_env(CLEANER_FAULT_INJECT="segfault:POISON"), capture_output=True, text=True,
        timeout=300, cwd=ROOT)
    assert r.returncode == 0, r.stderr[-4000:]
    # the worker really crashed, and Spark retried the task
    assert "Python worker exited unexpectedly" in r.stderr or "Lost task" in r.stderr, \
        r.stderr[-4000:]
    assert "poison record in poison.warc.gz" in r.stderr

    record = json.loads((out / "_run.json").read_text())
    assert_accounted(record)
    f = record["files"][str(warc)]
    assert f["rejected"].get("poison") == 1 and f["html_records"] == 14
    assert record["totals"]["rejected"]["poison"] == 1
    assert "poison" not in record["files"][str(clean)]["rejected"]
    rows = read_rows(out)
    keys = [tuple(row[k] for k in KEY) for row in rows]
    assert len(keys) == len(set(keys))  # nothing twice
    assert set(keys) == _ids(warc) | _ids(clean)  # nothing lost
    poison = [row for row in rows if row["reason"] == "poison"]
    assert len(poison) == 1 and poison[0]["url"] == "http://faults.test/POISON-page"
    assert poison[0]["status"] == "rejected" and "crashed the Python worker" in poison[0]["error"]
    assert sum(row["status"] == "cleaned" for row in rows) >= 10  # the others were cleaned
    assert not list(markers.rglob("*"))  # markers are removed once the pieces are done


def _descendants_named(root_pid: int, needle: str) -> list[int]:
    """Pids below root_pid (our own daemons only) whose command line contains needle and
    whose parent's does too: the Python workers forked by pyspark.daemon."""
    procs: dict[int, tuple[int, str]] = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as fh:
                ppid = int(fh.read().rsplit(")", 1)[1].split()[1])
            with open(f"/proc/{d}/cmdline", "rb") as fh:
                cmd = fh.read().replace(b"\0", b" ").decode("utf-8", "replace")
        except (OSError, ValueError, IndexError):
            continue
        procs[int(d)] = (ppid, cmd)

    def under(pid: int) -> bool:
        seen = 0
        while pid in procs and seen < 100:
            if pid == root_pid:
                return True
            pid, seen = procs[pid][0], seen + 1
        return False

    return [pid for pid, (ppid, cmd) in procs.items()
            if needle in cmd and ppid in procs and needle in procs[ppid][1] and under(pid)]


@pytest.mark.spark
@pytest.mark.slow
def test_killed_python_workers_on_the_standalone_cluster_lose_nothing(tmp_path, data_dir,
                                                                      small_model):
    import pyspark

    warc = tmp_path / "big.warc.gz"
    write_html_warc(_pages(data_dir, 360), warc, date=DATE)
    conf = tmp_path / "split.toml"
    markers = tmp_path / "markers"
    conf.write_text(f'[job]\nmin_task_bytes = 1\ntasks_per_core = 2\nmarker_dir = "{markers}"\n')

    spark_home = Path(pyspark.__file__).parent
    logs = tmp_path / "logs"
    logs.mkdir()
    env = _env(SPARK_HOME=str(spark_home), PYSPARK_DRIVER_PYTHON=sys.executable,
               SPARK_LOG_DIR=str(logs), SPARK_WORKER_DIR=str(tmp_path / "work"))
    submit = None
    killed: list[int] = []
    with standalone_cluster(spark_home, env, tmp_path / "work", logs) as (url, worker):
        try:
            out = tmp_path / "out"
            err_path = logs / "submit.err"
            submit = subprocess.Popen(
                submit_command(spark_home, url)
                + ["--conf", "spark.task.maxFailures=4",
                   str(JOB), "--input", str(warc), "--output", str(out), "--conf", str(conf),
                   "--model", str(small_model), "--partition-by", "", "--no-progress"],
                env=env, stdout=open(logs / "submit.out", "wb"), stderr=open(err_path, "wb"),
                cwd=tmp_path, start_new_session=True)
            # wait until records are being cleaned (a worker's poison marker names the record it
            # is cleaning), then kill the executor's Python workers mid-task
            deadline = time.time() + 240
            while time.time() < deadline and submit.poll() is None:
                busy = [m for m in markers.glob("*/*.json") if _size(m) > 0]
                pids = _descendants_named(worker.pid, "pyspark.daemon") if busy else []
                if pids:
                    time.sleep(1)
                    for pid in _descendants_named(worker.pid, "pyspark.daemon"):
                        try:
                            os.kill(pid, signal.SIGKILL)
                            killed.append(pid)
                        except ProcessLookupError:
                            pass
                    break
                time.sleep(0.1)
            assert killed, "no Python worker to kill (job too fast?)"
            assert submit.wait(timeout=300) == 0, err_path.read_text()[-4000:]
            stderr = err_path.read_text(errors="replace") + (logs / "submit.out").read_text()
            assert "Lost task" in stderr or "exited unexpectedly" in stderr, stderr[-4000:]

            record = json.loads((out / "_run.json").read_text())
            assert record["spark"]["master"] == url
            assert_accounted(record)
            rows = read_rows(out)
            keys = [tuple(row[k] for k in KEY) for row in rows]
            assert len(keys) == len(set(keys)) == 360  # every record exactly once
            assert set(keys) == _ids(warc)
            assert not [row for row in rows if row["reason"] == "poison"]  # a kill is not poison
        finally:
            if submit is not None and submit.poll() is None:
                os.killpg(submit.pid, signal.SIGKILL)
                submit.wait(timeout=10)


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:  # removed meanwhile: its piece is done
        return 0
