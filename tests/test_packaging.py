"""The package as a cluster gets it: `pip install .` (the packed virtualenv of scripts/pack_env.sh, a
Kubernetes image) must carry its config, its models and its web assets, and clean a page with no
checkout around it. The Spark executors, and the driver in cluster deploy mode, have nothing else."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import cleaner
from cleaner.api import clean_html
from cleaner.data import find_pages
from cleaner.model import load_model

ROOT = Path(__file__).resolve().parent.parent

# Run in a fresh interpreter whose only `cleaner` is the unpacked wheel.
_PROBE = """
import json, sys
import cleaner, cleaner.config
from cleaner.api import clean_html
from cleaner.model import load_model
page = open(sys.argv[1], "rb").read()
r = clean_html(page)
print(json.dumps({"package": cleaner.__file__, "config": str(cleaner.config.DEFAULT_CONFIG_PATH),
                  "model": load_model().hash, "status": r.status, "cleaneval": r.cleaneval,
                  "native": cleaner.native_modules()}))
"""


def _source_copy(dst: Path) -> Path:
    """What `pip install .` reads, copied so that the build leaves nothing in the checkout."""
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(ROOT / "cleaner", dst / "cleaner", symlinks=True, ignore=ignore)  # cleaner/conf -> ../conf
    shutil.copytree(ROOT / "conf", dst / "conf", ignore=ignore)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, dst / name)
    return dst


@pytest.mark.slow
def test_the_wheel_carries_config_models_and_assets_and_cleans_without_the_checkout(tmp_path, data_dir):
    src = _source_copy(tmp_path / "src")
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "--disable-pip-version-check",
         "-w", str(tmp_path / "dist"), str(src)],
        capture_output=True, text=True, timeout=600,
    )
    assert build.returncode == 0, build.stderr[-2000:]
    (wheel,) = (tmp_path / "dist").glob("webcleaner-*.whl")
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        for expected in (
            *(f"cleaner/models/{p.name}" for p in (ROOT / "cleaner" / "models").iterdir()),
            *(f"cleaner/conf/{p.name}" for p in (ROOT / "conf").glob("*.toml")),
            *(f"cleaner/web/{p.name}" for p in (ROOT / "cleaner" / "web").iterdir()),
        ):
            assert expected in names, f"{expected} is not in {wheel.name}"
        # The compiled stages travel with the package when the checkout has built them (scripts/pack_env.sh does).
        built = cleaner.NATIVE_STATUS.startswith("compiled")
        if built:
            assert f"cleaner/{cleaner.NATIVE_DIR}/manifest.json" in names
        site = tmp_path / "site"
        zf.extractall(site)

    page = next(p for p in find_pages(data_dir, ["cleaneval-final"]) if p.gold_path is not None).html_path
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | {"PYTHONPATH": str(site)}
    run = subprocess.run([sys.executable, "-c", _PROBE, str(page)], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    got = json.loads(run.stdout.splitlines()[-1])
    # The installed package, not this checkout (whose editable install is on the path too).
    assert Path(got["package"]).is_relative_to(site), got["package"]
    assert Path(got["config"]).is_relative_to(site), got["config"]
    # The same model and settings as the checkout: the same cleaned text, byte for byte.
    assert got["model"] == load_model().hash
    here = clean_html(page.read_bytes())
    assert got["status"] == here.status == "cleaned"
    assert got["cleaneval"] == here.cleaneval
    assert got["native"] == (sorted(cleaner.NATIVE_MODULES) if built else [])
