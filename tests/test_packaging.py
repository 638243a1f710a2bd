"""The package as a cluster gets it: `pip install .` (the packed virtualenv of scripts/pack_env.sh, a
Kubernetes image) must carry its config, its models and its web assets, and clean a page with no
checkout around it. The Spark executors, and the driver in cluster deploy mode, have nothing else."""

from __future__ import annotations

import importlib.machinery
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
from cleaner.gold.data import find_pages
from cleaner.label.model import load_model
from cleaner.output.corpus import default_corpus_columns

ROOT = Path(__file__).resolve().parent.parent

# Run in a fresh interpreter whose only `cleaner` is the unpacked wheel.
_PROBE = """
import json, sys
import cleaner, cleaner.config
from cleaner.api import clean_html
from cleaner.label.model import load_model
from cleaner.output.corpus import default_corpus_columns
page = open(sys.argv[1], "rb").read()
r = clean_html(page)
print(json.dumps({"package": cleaner.__file__, "config": str(cleaner.config.DEFAULT_CONFIG_PATH),
                  "model": load_model().hash, "status": r.status, "cleaneval": r.cleaneval,
                  "columns": default_corpus_columns().columns(r.plain), "native": cleaner.native_modules()}))
"""


def _source_copy(dst: Path, *, with_build: bool = True) -> Path:
    """What `pip install .` reads, copied so that the build leaves nothing in the checkout; `with_build=False`: as a
    fresh clone has it, without the checkout's compiled stages (cleaner/_native/, not in git)."""
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", *(() if with_build else (cleaner.NATIVE_DIR,)))
    shutil.copytree(ROOT / "cleaner", dst / "cleaner", symlinks=True, ignore=ignore)  # cleaner/conf -> ../conf
    shutil.copytree(ROOT / "conf", dst / "conf", ignore=ignore)
    shutil.copytree(ROOT / "jobs", dst / "jobs", ignore=ignore)
    for name in ("pyproject.toml", "README.md", "setup.py", "MANIFEST.in", "requirements.lock",
                 "scripts/build_native.py"):
        (dst / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / name, dst / name)
    return dst


@pytest.mark.slow
def test_the_wheel_carries_config_models_and_assets_and_cleans_without_the_checkout(tmp_path, data_dir):
    wheel = _build_wheel(tmp_path, _source_copy(tmp_path / "src"))
    site = tmp_path / "site"
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        for expected in (
            *(f"cleaner/models/{p.name}" for p in (ROOT / "cleaner" / "models").iterdir()),
            *(f"cleaner/conf/{p.name}" for p in (ROOT / "conf").glob("*.toml")),
            *(f"cleaner/web/{p.name}" for p in (ROOT / "cleaner" / "web").iterdir()),
        ):
            assert expected in names, f"{expected} is not in {wheel.name}"
        # The compiled stages travel with the package: the checkout's current build, else one setup.py makes.
        assert f"cleaner/{cleaner.NATIVE_DIR}/manifest.json" in names
        zf.extractall(site)

    page = next(p for p in find_pages(data_dir, ["cleaneval-final"]) if p.gold_path is not None).html_path
    got = _probe(site, page, tmp_path)
    assert Path(got["config"]).is_relative_to(site), got["config"]
    # The same model and settings as the checkout: the same cleaned text, byte for byte.
    assert got["model"] == load_model().hash
    here = clean_html(page.read_bytes())
    assert got["status"] == here.status == "cleaned"
    assert got["cleaneval"] == here.cleaneval
    assert got["columns"] == json.loads(json.dumps(default_corpus_columns().columns(here.plain)))
    assert got["native"] == sorted(cleaner.NATIVE_MODULES)


def _probe(site: Path, page: Path, cwd: Path) -> dict:
    """_PROBE run on `page` in a fresh interpreter whose only `cleaner` is the unpacked wheel at `site`."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | {"PYTHONPATH": str(site)}
    run = subprocess.run([sys.executable, "-c", _PROBE, str(page)], cwd=cwd, env=env,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    got = json.loads(run.stdout.splitlines()[-1])
    # The installed package, not this checkout (whose editable install is on the path too).
    assert Path(got["package"]).is_relative_to(site), got["package"]
    return got


@pytest.mark.slow
def test_the_sdist_of_a_fresh_clone_builds_a_wheel_that_runs_the_compiled_stages(tmp_path, data_dir):
    """`pip install` from the sdist (or a clone: the same build step) compiles the stages with a C compiler alone:
    mypy and Cython come from pyproject.toml's build requirements, the build script from the sdist. The wheel is
    tagged for this platform, not as pure Python, and runs them compiled, with the checkout's output byte for byte."""
    src = _source_copy(tmp_path / "clone", with_build=False)
    sdist = subprocess.run([sys.executable, "-m", "build", "--sdist", "--outdir", str(tmp_path / "sdist"), str(src)],
                           capture_output=True, text=True, timeout=900)
    assert sdist.returncode == 0, sdist.stdout[-2000:] + sdist.stderr[-2000:]
    (archive,) = (tmp_path / "sdist").glob("webcleaner-*.tar.gz")
    wheel = _build_wheel(tmp_path, archive)
    assert not wheel.name.endswith("-py3-none-any.whl"), wheel.name  # it holds this platform's extensions
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    site = tmp_path / "site"
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        for module in cleaner.NATIVE_MODULES:
            assert f"cleaner/{cleaner.module_path(Path(cleaner.NATIVE_DIR), module, suffix)}" in names, module
        zf.extractall(site)

    page = next(p for p in find_pages(data_dir, ["cleaneval-final"]) if p.gold_path is not None).html_path
    got = _probe(site, page, tmp_path)
    assert got["native"] == sorted(cleaner.NATIVE_MODULES)
    assert got["cleaneval"] == clean_html(page.read_bytes()).cleaneval


def _build_wheel(tmp_path: Path, source: Path) -> Path:
    """`pip wheel` of `source` (a source folder or an sdist) into tmp_path/dist, as a user builds it."""
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "--disable-pip-version-check",
         "-w", str(tmp_path / "dist"), str(source)],
        capture_output=True, text=True, timeout=900,
    )
    assert build.returncode == 0, build.stderr[-3000:]
    (wheel,) = (tmp_path / "dist").glob("webcleaner-*.whl")
    return wheel


@pytest.mark.slow
def test_an_installed_wheel_gives_the_commands_and_models_from_any_directory(tmp_path, data_dir):
    """`pip install` of the wheel into a fresh virtualenv: `cleaner` (models, clean from stdin) and the
    Spark job's command run from a folder far from any checkout, on the package's own models and config.
    The dependencies come from this project's .venv (its site-packages on the new venv's path), so no
    registry is needed; the package itself is only the wheel's."""
    wheel = _build_wheel(tmp_path, _source_copy(tmp_path / "src"))
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    py = venv / "bin" / "python"
    # this venv's pip installs into the new one (pip --python): --no-deps, the dependencies are on the path
    inst = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(py), "install", "-q", "--no-deps",
         "--disable-pip-version-check", str(wheel)],
        capture_output=True, text=True, timeout=600,
    )
    assert inst.returncode == 0, inst.stderr[-2000:]
    site_new = subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                              capture_output=True, text=True, check=True).stdout.strip()
    import sysconfig

    # A plain path line: the project venv's own .pth files (its editable `cleaner`) are not read from it.
    (Path(site_new) / "deps_of_the_project_venv.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    away = tmp_path / "elsewhere"
    away.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}

    def run(*argv, stdin=None):
        return subprocess.run([*argv], cwd=away, env=env, input=stdin, capture_output=True, timeout=300)

    where = run(str(py), "-c", "import cleaner, jobs.clean_warc; print(cleaner.__file__); print(jobs.__file__)")
    assert where.returncode == 0, where.stderr.decode()[-2000:]
    for line in where.stdout.decode().split():
        assert Path(line).is_relative_to(Path(site_new)), line  # the installed package, not this checkout

    models = run(str(venv / "bin" / "cleaner"), "models", "--json")
    assert models.returncode == 0, models.stderr.decode()[-2000:]
    described = json.loads(models.stdout)
    default = next(d for d in described if d["default"])
    assert Path(default["path"]).is_relative_to(Path(site_new))
    assert default["hash"] == load_model().hash
    assert {Path(d["path"]).stem for d in described} == {"default", "cleaneval-2012"}

    page = next(p for p in find_pages(data_dir, ["cleaneval-final"]) if p.gold_path is not None).html_path
    cleaned = run(str(venv / "bin" / "cleaner"), "clean", "-", stdin=page.read_bytes())
    assert cleaned.returncode == 0, cleaned.stderr.decode()[-2000:]
    # byte for byte what this checkout's command prints
    here = subprocess.run([sys.executable, "-m", "cleaner.tools.cli", "clean", "-"], cwd=ROOT, input=page.read_bytes(),
                          capture_output=True, timeout=300)
    assert here.returncode == 0 and here.stdout.strip(), here.stderr.decode()[-2000:]
    assert cleaned.stdout == here.stdout
    by_name = run(str(venv / "bin" / "cleaner"), "clean", "-", "--model", "cleaneval-2012", stdin=page.read_bytes())
    assert by_name.returncode == 0, by_name.stderr.decode()[-2000:]
    assert by_name.stdout.strip()

    # the WARC job on local processes, from the installed jobs package
    warc = tmp_path / "three.warc.gz"
    subprocess.run([sys.executable, str(ROOT / "scripts" / "make_warc.py"), str(page.parent), "--limit", "3",
                    "--out", str(warc)], check=True, capture_output=True, timeout=120)
    local = run(str(venv / "bin" / "cleaner"), "clean-warc", str(warc), "--out", str(away / "out"), "--jobs", "1")
    assert local.returncode == 0, local.stderr.decode()[-2000:]
    record = json.loads((away / "out" / ".run.json").read_text())
    assert record["totals"]["cleaned"] == 3 and record["output"]["rows_written"] == 3

    job = run(str(venv / "bin" / "cleaner-spark-job"), "--help")
    assert job.returncode == 0, job.stderr.decode()[-2000:]
    assert b"--input" in job.stdout and b"--output" in job.stdout
    # A usage mistake is answered before any JVM starts, with the job's documented code.
    no_input = run(str(venv / "bin" / "cleaner-spark-job"), "--output", str(tmp_path / "out"))
    assert no_input.returncode == 2, no_input.stderr.decode()[-2000:]
    assert b"no input" in no_input.stderr
