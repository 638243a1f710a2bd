"""The collector settings of the processes that clean pages (cleaner/tools/runtime.py), and the property
that makes them safe: cleaning pages leaves no reference cycles behind."""

from __future__ import annotations

import gc
import os
import subprocess
import sys

import pytest

from cleaner.api import clean_html
from cleaner.config import ConfigError, load_config
from cleaner.gold.data import find_pages
from cleaner.label.model import load_model
from cleaner.tools.runtime import gc_thresholds, tune_gc

from conftest import ROOT


@pytest.fixture
def restore_gc():
    before = gc.get_threshold()
    yield
    gc.set_threshold(*before)


def test_cleaning_pages_leaves_no_reference_cycles(data_dir):
    """The raised thresholds only cost memory if cleaning makes cycles: with the collector off, every
    object a page allocates must be freed by reference counting, rejected pages included."""
    model, config = load_model(), load_config()
    pages = [p for ds in ("cleaneval-final", "cleanportaleval", "dragnet") for p in find_pages(data_dir, [ds])[:15]]
    inputs = [p.read_html() for p in pages]
    inputs += [b"", b"\x00\xff" * 500, b"<html><body></body></html>", b"<p>" * 5000 + b"deep",
               "<p>caf\u00e9 \udcff</p>".encode("utf-8", "surrogatepass")]
    clean_html(inputs[0], model=model, config=config)  # first use builds tables and caches: not per page
    gc.collect()
    enabled = gc.isenabled()
    gc.disable()
    try:
        outcomes = {clean_html(data, model=model, config=config).status for data in inputs}
        unreachable = gc.collect()
    finally:
        if enabled:
            gc.enable()
    assert outcomes == {"cleaned", "rejected"}
    assert unreachable == 0, f"cleaning {len(inputs)} pages left {unreachable} objects in reference cycles"


def test_tune_gc_sets_the_configured_thresholds_and_returns_the_old(restore_gc, tmp_path):
    gc.set_threshold(700, 10, 10)
    overlay = tmp_path / "gc.toml"
    overlay.write_text("[runtime]\ngc_thresholds = [12345, 7, 9]\n")
    assert tune_gc(load_config(overlay)) == (700, 10, 10)
    assert gc.get_threshold() == (12345, 7, 9)
    overlay.write_text("[runtime]\ngc_thresholds = []\n")  # [] leaves the process as it is
    assert gc_thresholds(load_config(overlay)) is None
    tune_gc(load_config(overlay))
    assert gc.get_threshold() == (12345, 7, 9)


def test_the_default_config_raises_the_young_threshold():
    thresholds = gc_thresholds(load_config())
    assert thresholds is not None and thresholds[0] > 700


@pytest.mark.parametrize("value", ["[0, 10, 10]", "[1000, 10]", "['a', 1, 1]", "5000", "[true, 1, 1]"])
def test_bad_thresholds_stop_at_reading_the_config(tmp_path, value):
    overlay = tmp_path / "bad.toml"
    overlay.write_text(f"[runtime]\ngc_thresholds = {value}\n")
    with pytest.raises(ConfigError, match="gc_thresholds"):
        load_config(overlay)


def test_the_clean_command_runs_with_the_configured_thresholds(tmp_path):
    """`cleaner clean` is a process that cleans pages: it sets the collector up before the first page."""
    page = tmp_path / "page.html"
    page.write_text("<html><body><h1>Title</h1><p>" + "A sentence of the page. " * 30 + "</p></body></html>")
    code = ("import gc, sys; from cleaner.tools.cli import main; rc = main(sys.argv[1:]); "
            "print(gc.get_threshold()); sys.exit(rc)")
    out = subprocess.run([sys.executable, "-c", code, "clean", str(page), "--out", str(tmp_path / "out")],
                         cwd=ROOT, capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == str(gc_thresholds(load_config()))
    assert (tmp_path / "out" / "page.txt").read_text().strip()
