"""scripts/check_imports.py, which scripts/test.sh runs first: the project's imports point down its layers
(docs/architecture.md), with no circles and no private names taken, and a breach of any of them fails it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from conftest import load_script

ROOT = Path(__file__).resolve().parent.parent


def _script():
    return load_script("check_imports")


def test_the_project_passes():
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "check_imports.py")], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout
    assert "0 circles, 0 private names taken, 0 imports up the layers" in proc.stdout


def test_every_module_of_the_package_is_in_a_layer():
    ci = _script()
    for path in (ROOT / "cleaner").rglob("*.py"):
        if "_native" not in path.parts:
            assert ci.layer_of(ci.module_name(path)) is not None, path


def test_the_layers_are_in_order_and_an_import_up_them_is_reported():
    ci = _script()
    order = [ci.layer_of(m) for m in ("cleaner.config", "cleaner.warc.read", "cleaner.page.segment",
                                       "cleaner.gold.align", "cleaner.label.systems.mss", "cleaner.output.assemble",
                                       "cleaner.api", "cleaner.learn.train", "cleaner.tools.cli", "jobs.worker")]
    assert order == sorted(order) and len(set(order)) == len(order)
    assert ci.layer_of("cleaner.apis") is None and ci.layer_of("cleaner.somewhere_new") is None
    graph = {
        "cleaner.page.segment": {"cleaner.config", "cleaner.label.model"},  # up: a violation
        "cleaner.label.model": {"cleaner.page.segment", "cleaner.packaged"},  # down: fine
        "cleaner.config": set(),
        "cleaner.packaged": set(),
        "cleaner.somewhere_new": set(),  # in no layer
    }
    found = ci.layer_violations(graph)
    assert len(found) == 2
    assert any("cleaner.page.segment" in v and "imports cleaner.label.model" in v for v in found)
    assert any("cleaner.somewhere_new is in no layer" in v for v in found)
