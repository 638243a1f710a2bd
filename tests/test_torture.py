"""scripts/torture.py: the catalogue of hostile inputs through the job, every input PASS.

Runs the script as a subprocess (its own JVM on local[2,3], with the fault-injection hook in
the workers' environment), with the small test model.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from conftest import ROOT


@pytest.mark.spark
@pytest.mark.slow
def test_torture_catalogue_all_pass(tmp_path, small_model, data_dir):
    md = tmp_path / "torture.md"
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable, SPARK_LOCAL_IP="127.0.0.1")
    env.pop("PYSPARK_GATEWAY_PORT", None)
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "torture.py"),
                        "--model", str(small_model), "--markdown", str(md)],
                       capture_output=True, text=True, timeout=600, env=env, cwd=ROOT)
    table = md.read_text() if md.exists() else ""
    assert r.returncode == 0, table + r.stdout[-3000:] + r.stderr[-3000:]
    rows = [line for line in table.splitlines() if line.startswith("| ") and "input" not in line]
    assert len(rows) >= 30
    assert all(line.endswith("| PASS |") for line in rows), table
    for name in ("poison.warc.gz", "decompression-bomb", "page-100mb.warc", "nesting-1m",
                 "truncated-gzip", "corrupt-member", "shared/example-trunc.warc"):
        assert name in table
