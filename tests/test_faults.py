"""Faults during the Spark job: a record that crashes the Python worker (poison), and a
Python worker killed in the middle of a job on the local standalone cluster.

Both run real crashes of real workers: the poison record makes the worker read address 0
(`CLEANER_FAULT_INJECT`, jobs/worker.py), the cluster test SIGKILLs the executor's Python
workers. Each test starts its own JVM (a subprocess), so it never disturbs a session of
another test file in the same pytest process.
"""

from __future__ import annotations

import collections
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pyarrow.parquet as pq
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


def test_the_marker_names_the_record_being_cleaned_whatever_was_written_before(tmp_path):
    """The marker is written over the last record in one write (no truncate, so no moment without a marker): a short
    record after a long one reads back as itself, and the retry of a task that died on it rejects that record."""
    from types import SimpleNamespace

    from jobs.worker import _PoisonGuard

    settings = {"marker_dir": str(tmp_path), "run_id": "run"}
    piece = {"key": "file.warc.gz#0"}
    first = _PoisonGuard(piece, settings, attempt=0)
    long_record = SimpleNamespace(offset=123_456_789, record_id="<urn:uuid:" + "7" * 60 + ">")
    short_record = SimpleNamespace(offset=9, record_id="<urn:uuid:1>")
    assert first.check(long_record) is None and first.check(short_record) is None
    with open(f"{first.stem}.0.json") as fh:
        assert json.load(fh) == {"offset": 9, "record_id": "<urn:uuid:1>"}
    first.close(remove=False)  # the worker died: its markers stay, with a fatal signal's trace beside them
    Path(f"{first.stem}.0.crash").write_text("Fatal Python error: Segmentation fault\n")
    retry = _PoisonGuard(piece, settings, attempt=1)
    try:
        assert retry.check(long_record) is None
        assert "fatal signal" in (retry.check(short_record) or "")
    finally:
        retry.close()
    assert not list(tmp_path.glob("run/*"))  # the piece is done: every attempt's markers are gone


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

    record = json.loads((out / ".run.json").read_text())
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
    # (1,200 records, four tasks of ~300: each cleans for about a second on a fast machine, long enough to be killed
    # mid-task; with 360 a task could end before the kill, and no task was lost to test)
    write_html_warc(_pages(data_dir, 1200), warc, date=DATE)
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
            # is cleaning), then kill the executor's Python workers at once, mid-task
            deadline = time.time() + 240
            while time.time() < deadline and submit.poll() is None:
                busy = [m for m in markers.glob("*/*.json") if _size(m) > 0]
                pids = _descendants_named(worker.pid, "pyspark.daemon") if busy else []
                if pids:
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

            record = json.loads((out / ".run.json").read_text())
            assert record["spark"]["master"] == url
            assert_accounted(record)
            rows = read_rows(out)
            keys = [tuple(row[k] for k in KEY) for row in rows]
            assert len(keys) == len(set(keys)) == 1200  # every record exactly once
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


# ------------------------------------------------------------------------------------------
# Runs that overlap, crash, or whose inputs change (issue 31; the table: docs/faults.md).
# Every check compares the distinct record ids of the rows readers see (the newest rows of each file,
# NEWEST_ROWS below) with the response ids of the inputs, counts duplicates, and checks exit codes.
# ------------------------------------------------------------------------------------------

from conftest import make_warc  # noqa: E402
from test_job import run_job  # noqa: E402

from jobs.clean_warc import JobError  # noqa: E402
from jobs.runs import SimulatedCrash  # noqa: E402

# The rows readers see when a file was cleaned again (it changed): those of the newest run covering it
# (docs/faults.md gives the same for Spark).
NEWEST_ROWS = """SELECT * FROM read_parquet('{out}/run=*/**/*.parquet', hive_partitioning = true,
                                             union_by_name = true)
                 QUALIFY run = max(run) OVER (PARTITION BY warc_file)"""


def _newest(out: Path) -> list[dict]:
    import duckdb

    con = duckdb.connect()
    cur = con.execute(NEWEST_ROWS.format(out=out))
    names = [d[0] for d in cur.description]
    return [dict(zip(names, row)) for row in cur.fetchall()]


def _response_ids(*paths: Path) -> set[tuple]:
    out = set()
    for p in paths:
        out |= {(os.path.realpath(p), r.offset, r.record_id) for r in direct_records(p)[0]}
    return out


def assert_exact(out: Path, *paths: Path) -> None:
    """Every record of `paths` exactly once in what readers see; no staging or temporary file left."""
    rows = _newest(out)
    keys = collections.Counter(tuple(r[k] for k in KEY) for r in rows)
    dupes = sum(n - 1 for n in keys.values())
    assert dupes == 0, f"{dupes} duplicated rows"
    assert set(keys) == _response_ids(*paths)
    assert not (out / ".staging").exists() or not list((out / ".staging").iterdir())
    assert not [p for p in out.rglob(".*") if ".json." in p.name], "a temporary file survived"


def _cli_env(**extra) -> dict:
    return _env(**extra)


def _start(args: list, **env) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, str(JOB), *map(str, args), "--no-progress"], env=_cli_env(**env),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
                            start_new_session=True)


def _wait_for(pred, timeout: float, proc=None) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline:
        if pred():
            return
        if proc is not None and proc.poll() is not None:
            raise AssertionError(f"job ended early ({proc.returncode}): {proc.stderr.read()[-3000:]}")
        time.sleep(0.2)
    raise AssertionError("timed out")


@pytest.fixture(scope="module")
def spark():
    """A session of this module's own, stopped at its end: its Python workers load other models and configs
    than those of tests/test_job.py, which counts model loads per worker on fresh ones."""
    from pyspark.sql import SparkSession

    session = (SparkSession.builder.master("local[2]").appName("test_faults")
               .config("spark.driver.host", "127.0.0.1")
               .config("spark.driver.bindAddress", "127.0.0.1")
               .config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false")
               .getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.fixture(scope="module")
def fault_warcs(tmp_path_factory, data_dir) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("fault_warcs")
    dev = data_dir / "cleaneval-dev" / "html"
    return {
        "a": make_warc(d / "a.warc.gz", str(dev), "--limit", "24"),
        "b": make_warc(d / "b.warc.gz", str(data_dir / "dragnet" / "html"), "--limit", "16"),
        "c": make_warc(d / "c.warc.gz", str(data_dir / "cleanportaleval" / "html"), "--limit", "10"),
    }




@pytest.mark.slow
def test_unusable_outputs_are_refused_before_any_work(tmp_path, fault_warcs, small_model):
    a = fault_warcs["a"]
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    cases = {"file/sub": blocker / "sub", "a file": blocker}
    mounted = None
    if os.geteuid() == 0:  # root writes anywhere: a read-only file system is what refuses it
        ro = tmp_path / "ro"
        ro.mkdir()
        if subprocess.run(["mount", "-t", "tmpfs", "-o", "ro,size=1m", "tmpfs", str(ro)]).returncode == 0:
            mounted = ro
            cases["read-only dir"] = ro
            cases["/ro/new"] = ro / "new"
    else:
        ro = tmp_path / "ro"
        ro.mkdir()
        ro.chmod(0o555)
        cases["read-only dir"] = ro
        cases["/ro/new"] = ro / "new"
    try:
        for what, out in cases.items():
            r = subprocess.run([sys.executable, str(JOB), "--input", str(a), "--output", str(out),
                                "--model", str(small_model)], env=_env(), capture_output=True, text=True,
                               timeout=120, cwd=ROOT)
            assert r.returncode == 5, (what, r.stderr[-2000:])
            assert "Traceback" not in r.stderr, (what, r.stderr)
            lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
            assert len(lines) == 1 and "not usable" in lines[0], (what, r.stderr)  # one line, before the JVM
    finally:
        if mounted:
            subprocess.run(["umount", str(mounted)])
    assert "read-only dir" in cases


@pytest.mark.spark
@pytest.mark.slow
def test_two_jobs_at_once_and_a_killed_worker(tmp_path, fault_warcs, small_model, spark):
    """A (its own JVM, default local master: retries) loses a Python worker once; B on the same output
    refuses at once naming A; C with --wait queues behind A and cleans only what A did not cover."""
    a, b, c = fault_warcs["a"], fault_warcs["b"], fault_warcs["c"]
    out = tmp_path / "out"
    common = ["--output", out, "--model", small_model, "--partition-by", ""]
    recs = direct_records(a)[0]
    victim = recs[len(recs) // 2].url  # the Python worker cleaning this page is killed (first attempt only)
    first = _start(["--input", a, b, *common], CLEANER_FAULT_INJECT=f"kill:{victim}")
    try:
        lease = out / ".lease.json"
        _wait_for(lease.exists, 240, first)
        holder = json.loads(lease.read_text())
        assert holder["pid"] == first.pid
        second = subprocess.run([sys.executable, str(JOB), "--input", str(a), str(b), *map(str, common)],
                                env=_env(), capture_output=True, text=True, timeout=120, cwd=ROOT)
        assert second.returncode == 5, second.stderr[-2000:]
        assert f"pid {first.pid}" in second.stderr and holder["run_id"] in second.stderr
        assert "Traceback" not in second.stderr
        # overlapping inputs, --skip-done, waiting: runs once A has published, cleans only c
        third = run_job(spark, "--input", b, c, *common, "--skip-done", "--wait", "600")
        assert first.wait(timeout=60) == 0
        err = first.stderr.read()
        assert "Lost task" in err or "exited unexpectedly" in err, err[-3000:]  # the worker was killed...
        assert set(third["files"]) == {str(c)} and set(third["skipped_done"]) == {str(b)}
    finally:
        if first.poll() is None:
            os.killpg(first.pid, signal.SIGKILL)
            first.wait(timeout=10)
    assert_exact(out, a, b, c)  # ... and the retry lost nothing, duplicated nothing
    assert not [r for r in read_rows(out) if r["reason"] == "poison"]  # one kill is not poison
    assert not (out / ".lease.json").exists()


@pytest.mark.spark
@pytest.mark.slow
def test_driver_killed_at_each_stage_leaves_every_record_once(tmp_path, fault_warcs, small_model, spark):
    a, b, c = fault_warcs["a"], fault_warcs["b"], fault_warcs["c"]
    out = tmp_path / "out"
    markers = tmp_path / "markers"
    conf = tmp_path / "job.toml"
    conf.write_text(f'[job]\nmarker_dir = "{markers}"\nmin_task_bytes = 1\ntasks_per_core = 2\n')
    common = ["--output", out, "--model", small_model, "--partition-by", "", "--conf", conf, "--skip-done"]
    run_job(spark, "--input", a, *common)

    # stopped in the middle of the Spark write (its jobs cancelled once files are in the staging directory;
    # scripts/fault_suite.py SIGKILLs real drivers there)
    with pytest.raises(SimulatedCrash):
        run_job(spark, "--input", a, b, *common, "--simulate-crash", "during_write")
    assert (out / ".lease.json").exists() and list((out / ".staging").iterdir())

    for stage in ("before_staging", "before_publish", "after_publish"):
        with pytest.raises(SimulatedCrash):
            run_job(spark, "--input", a, b, c, *common, "--simulate-crash", stage)
        assert (out / ".lease.json").exists()  # left behind, as by a kill
        if stage == "before_publish":
            assert list((out / ".staging").iterdir())
    # the dead runs' leases were taken over, their staging removed; everything exactly once
    last = run_job(spark, "--input", a, b, c, *common)
    assert last["status"] == "nothing_to_do"  # after_publish had published b and c
    assert_exact(out, a, b, c)
    assert not (out / ".lease.json").exists()


@pytest.mark.spark
@pytest.mark.slow
def test_a_live_lease_is_respected_and_a_stale_one_taken_over(tmp_path, fault_warcs, small_model, spark):
    a = fault_warcs["a"]
    out = tmp_path / "out"
    conf = tmp_path / "job.toml"
    conf.write_text("[job]\nlease_renew_s = 1\nlease_stale_s = 30\n")
    (out / ".staging" / "20240101T000000Z-aaaaaa").mkdir(parents=True)
    staged = out / ".staging" / "20240101T000000Z-aaaaaa" / "part-0.parquet"
    staged.write_bytes(b"PAR1")
    lease = out / ".lease.json"
    lease.write_text(json.dumps({"run_id": "20240101T000000Z-aaaaaa", "host": "elsewhere.example",
                                 "pid": 4242, "started_at": "2024-01-01T00:00:00+00:00", "token": "t"}))
    common = ["--input", a, "--output", out, "--model", small_model, "--partition-by", "", "--conf", conf]
    with pytest.raises(JobError) as err:  # renewed just now: a live run elsewhere
        run_job(spark, *common)
    assert err.value.code == 5 and "20240101T000000Z-aaaaaa" in str(err.value)
    assert "elsewhere.example" in str(err.value) and "pid 4242" in str(err.value)
    assert staged.exists()  # a live run's staging is left alone
    with pytest.raises(JobError) as err:  # --wait with a limit: still held when it ends
        run_job(spark, *common, "--wait", "1")
    assert err.value.code == 5 and "waited 1 s" in str(err.value)
    old = time.time() - 60
    os.utime(lease, (old, old))  # not renewed for a minute: stale
    record = run_job(spark, *common)
    assert record["status"] == "published" and not staged.exists()
    assert_exact(out, a)
    assert not lease.exists()


@pytest.mark.spark
@pytest.mark.slow
def test_disk_full_at_publish_tells_the_truth(tmp_path, fault_warcs, small_model, spark, monkeypatch):
    from jobs.clean_warc import main

    a, b = fault_warcs["a"], fault_warcs["b"]
    out = tmp_path / "out"
    common = ["--output", str(out), "--model", str(small_model), "--partition-by", "", "--skip-done",
              "--no-progress"]
    # full while writing the run record into the staged run: not published, exit 5, nothing left
    monkeypatch.setenv("CLEAN_WARC_FAULT", "write:.staging")
    assert main(["--input", str(a), *common], spark=spark) == 5
    assert not list(out.glob("run=*")) and not list((out / ".staging").iterdir())
    assert not [p for p in out.rglob(".*") if ".json." in p.name]
    # full while writing the index after the rename: the run IS published, exit 0, the next run indexes it
    monkeypatch.setenv("CLEAN_WARC_FAULT", "write:.runs")
    assert main(["--input", str(a), *common], spark=spark) == 0
    (published,) = out.glob("run=*")
    assert not (out / ".runs" / f"{published.name[4:]}.json").exists()
    monkeypatch.delenv("CLEAN_WARC_FAULT")
    assert main(["--input", str(a), str(b), *common], spark=spark) == 0
    assert len(list((out / ".runs").glob("*.json"))) == 2
    assert_exact(out, a, b)
    assert oct(os.stat(out / ".run.json").st_mode & 0o777) == oct(0o666 & ~_umask())
    assert oct(os.stat(published / ".run.json").st_mode & 0o777) == \
        oct(os.stat(next(published.rglob("*.parquet"))).st_mode & 0o777)


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


@pytest.mark.spark
@pytest.mark.slow
def test_a_file_that_ended_early_is_cleaned_again_once_complete(tmp_path, fault_warcs, small_model, spark):
    a, b = fault_warcs["a"], fault_warcs["b"]
    inp = tmp_path / "in"
    inp.mkdir()
    growing = inp / "growing.warc.gz"
    full = b.read_bytes()
    growing.write_bytes(full[: len(full) // 2])  # a copy still in progress
    out = tmp_path / "out"
    common = ["--input", inp, "--output", out, "--model", small_model, "--partition-by", "", "--skip-done"]
    r1 = run_job(spark, *common)
    f1 = r1["files"][str(growing)]
    assert f1["status"] == "incomplete" and 0 < f1["incomplete_at"] < len(full) // 2
    assert run_job(spark, *common)["status"] == "nothing_to_do"  # unchanged: it would end at the same byte

    growing.write_bytes(full)  # the copy completed: another size, another modification time
    r2 = run_job(spark, *common)
    assert r2["files"][str(growing)]["status"] == "done"
    assert r2["supersedes"] == {str(growing): r1["run_id"]}
    assert run_job(spark, *common)["status"] == "nothing_to_do"
    plain = read_rows(out)  # the partial rows were taken out of the first run once the second was published...
    assert len(plain) == r2["files"][str(growing)]["html_records"]
    aside = [pq.read_table(p).num_rows for p in (out / ".superseded").rglob("*.superseded")]
    assert sum(aside) == f1["html_records"]  # ... and kept aside, where no reader looks
    assert_exact(out, growing)  # readers of the newest rows see every record once


@pytest.mark.spark
@pytest.mark.slow
def test_one_file_by_two_paths_is_cleaned_once(tmp_path, fault_warcs, small_model, spark):
    real = tmp_path / "real"
    real.mkdir()
    shutil.copy(fault_warcs["a"], real / "a.warc.gz")
    (tmp_path / "link").symlink_to(real, target_is_directory=True)
    out = tmp_path / "out"
    record = run_job(spark, "--input", real, tmp_path / "link", tmp_path / "link" / "a.warc.gz",
                     "--output", out, "--model", small_model, "--partition-by", "")
    assert list(record["files"]) == [str(real / "a.warc.gz")]
    assert_exact(out, real / "a.warc.gz")


def test_temporary_directories_of_dead_drivers_are_swept(tmp_path):
    """What a killed driver leaves in the node's tmp (its code zip, its run's markers) is removed by the next
    run; a live driver's is not."""
    from jobs import tempdirs

    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    live = os.getpid()
    base = tmp_path / "markers"
    for run, pid in (("dead-run", dead.pid), ("live-run", live)):
        (base / run).mkdir(parents=True)
        (base / run / "0123.0.json").write_text("{}")
        (base / run / ".owner").write_text(json.dumps({"host": socket.gethostname(), "pid": pid}))
    code_dead = Path(tempfile.mkdtemp(prefix=f"{tempdirs.CODE_PREFIX}{dead.pid}-"))
    code_live = Path(tempfile.mkdtemp(prefix=f"{tempdirs.CODE_PREFIX}{live}-"))
    try:
        removed = tempdirs.sweep(str(base))
        assert not code_dead.exists() and code_live.exists()
        assert not (base / "dead-run").exists() and (base / "live-run" / "0123.0.json").exists()
        assert {str(code_dead), str(base / "dead-run")} <= set(removed)  # (and any other dead driver's)
    finally:
        shutil.rmtree(code_dead, ignore_errors=True)
        shutil.rmtree(code_live, ignore_errors=True)


@pytest.mark.spark
def test_the_lease_through_a_hadoop_filesystem(spark, tmp_path):
    """The lease as hdfs:// and s3a:// outputs take it (the JVM's FileSystem), on a file:// URI."""
    from jobs.lease import Lease, LeaseHeld, LeaseSettings
    from jobs.storage import HadoopFS

    root = f"file://{tmp_path}/out"
    fs = HadoopFS(spark, root)
    fs.mkdirs(root)
    settings = LeaseSettings(renew_s=1, stale_s=30)
    first = Lease(fs, root, "run-1", settings)
    first.acquire()
    second = Lease(fs, root, "run-2", settings)
    with pytest.raises(LeaseHeld) as err:
        second.acquire()
    assert "run run-1" in str(err.value) and f"pid {os.getpid()}" in str(err.value)
    first.renew()
    first.release()
    assert not fs.exists(first.path)
    second.acquire()
    assert json.loads(fs.read_text(second.path))["run_id"] == "run-2"
    second.release()


def test_local_masters_retry_failed_tasks_by_default():
    from jobs.clean_warc import with_local_retries

    assert with_local_retries("local", 4) == "local[1,4]"
    assert with_local_retries("local[2]", 4) == "local[2,4]"
    assert with_local_retries("local[*]", 3) == "local[*,3]"
    assert with_local_retries("local[2,3]", 4) == "local[2,3]"  # F given: kept
    assert with_local_retries("spark://h:7077", 4) == "spark://h:7077"  # spark.task.maxFailures decides
    assert with_local_retries("local[2]", 1) == "local[2]"  # [job] local_max_failures = 1: no retries


@pytest.mark.spark
@pytest.mark.slow
def test_a_full_disk_during_the_spark_write_is_exit_5_in_one_line(tmp_path, fault_warcs, small_model):
    # It was exit 1, "Spark job failed: ..." like any failed task; a full disk is the output's state (README: 5).
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root")
    small = tmp_path / "small"
    small.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(small)]).returncode:
        pytest.skip("tmpfs cannot be mounted here")
    try:
        r = subprocess.run([sys.executable, str(JOB), "--input", str(fault_warcs["a"]), "--output",
                            str(small / "out"), "--model", str(small_model), "--no-progress"], env=_env(),
                           capture_output=True, text=True, timeout=600, cwd=ROOT)
        assert r.returncode == 5, r.stderr[-3000:]
        errors = [ln for ln in r.stderr.splitlines() if "error" in ln.lower() and "disk is full" in ln]
        assert len(errors) == 1 and "not published" in errors[0], r.stderr[-3000:]
        assert not list((small / "out").glob("run=*"))
    finally:
        subprocess.run(["umount", "-l", str(small)])
