"""The compiled per-block stages (cleaner.NATIVE_MODULES, built by scripts/build_native.py).

What a user relies on: the README's setup builds them, they are what runs, they give exactly what
the Python source gives, and a build that no longer matches its source is never used.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import json
import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import load_script, make_warc, sampled_pages

import cleaner
from cleaner.api import clean_html
from cleaner.output.corpus import default_corpus_columns

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT.parent / "shared" / "data"

# A child interpreter that cleans pages and pickles what a user gets from each.
_CLEAN = r"""
import gzip, pickle, sys
sys.path.insert(0, sys.argv[1])
import cleaner
from cleaner.api import clean_html
from cleaner.output.corpus import default_corpus_columns
from cleaner.output.markdown import MarkdownOptions
MARKDOWN = MarkdownOptions(links=True, images=True, emphasis=True)  # (the Markdown's modules are compiled too)
def variants(data):
    # the page, and damaged copies: cut mid-tag, nesting spliced in, invalid UTF-8 and odd attributes
    # (compiled code checks its annotations at run time: a wrong one would show here as internal_error)
    half = len(data) // 2
    yield data
    yield data[:half]
    yield data[:half] + b"<div><span>" * 3000 + data[half:]
    yield data[:half] + b"\xed\xa0\x80\xff\xfe&#xD800;&#0;&#x110000;" + data[half:]
    yield data[:half] + b'<p id="' + b"x " * 300 + b'" class hidden style="display: none">t</p><img alt=" a  b ">' + data[half:]
out = []
for path in sys.argv[3:]:
    raw = open(path, "rb").read()
    for data in variants(gzip.decompress(raw) if path.endswith(".gz") else raw):
        r = clean_html(data, keep_blocks=True, markdown=MARKDOWN)
        out.append((r.status, r.reason, r.error, r.cleaneval, r.labels, r.confidences, r.decision, r.markdown,
                    r.markdown_fallback, default_corpus_columns().columns(r.plain or "")))
pickle.dump((cleaner.native_modules(), out), open(sys.argv[2], "wb"))
"""


def _sample_pages(every: int = 40) -> list[str]:
    return [str(p.html_path) for p in sampled_pages(DATA, every)]


def test_the_setup_builds_the_compiled_stages_and_they_are_what_runs():
    # scripts/setup_env.sh (run by the README's test command) builds them; a broken build must fail here,
    # not slow every page down unnoticed. (WEBCLEANER_PURE_PYTHON=1 is the documented way to opt out.)
    if os.environ.get(cleaner.PURE_PYTHON_ENV, "") not in ("", "0"):
        pytest.skip("pure Python asked for")
    result = clean_html(b"<p>Hello <b>world</b>, a page.</p>")
    default_corpus_columns().columns(result.plain or "")  # (the job's corpus columns: their compiled module too)
    assert cleaner.NATIVE_STATUS.startswith("compiled"), cleaner.NATIVE_STATUS
    assert cleaner.native_modules() == sorted(cleaner.NATIVE_MODULES)


def test_compiled_and_pure_python_give_the_same_output(tmp_path):
    pages = _sample_pages()
    assert len(pages) > 50
    results = {}
    for mode in ("native", "pure"):
        env = dict(os.environ)
        env[cleaner.PURE_PYTHON_ENV] = "1" if mode == "pure" else "0"
        out = tmp_path / f"{mode}.pkl"
        subprocess.run([sys.executable, "-c", _CLEAN, str(ROOT), str(out), *pages], env=env, check=True,
                       cwd=tmp_path)
        results[mode] = pickle.loads(out.read_bytes())
    native_modules, native = results["native"]
    pure_modules, pure = results["pure"]
    assert pure_modules == []
    if os.environ.get(cleaner.PURE_PYTHON_ENV, "") in ("", "0"):
        assert native_modules == sorted(cleaner.NATIVE_MODULES)
    assert len(pure) == 5 * len(pages) and sum(r[0] == "cleaned" for r in pure) > 200
    assert not [r for r in native if r[1] == "internal_error"]
    for k, (a, b) in enumerate(zip(native, pure)):
        assert a == b, (pages[k // 5], k % 5)  # outcome, labels, text, probabilities, Markdown, corpus columns


def _fake_package(tmp_path: Path, build: bool = True) -> Path:
    """A package directory with the compiled modules' sources and, optionally, a build of them."""
    pkg = tmp_path / "pkg"
    pkg.mkdir(parents=True)
    for m in cleaner.NATIVE_MODULES:
        source = cleaner.source_path(pkg, m)  # a module of a sub-package: pkg/page/text.py, pkg/label/compiled_chain.pyx
        source.parent.mkdir(parents=True, exist_ok=True)
        source.write_text(f"# {m}\n")
    if build:
        suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
        native = pkg / cleaner.NATIVE_DIR
        for m in cleaner.NATIVE_MODULES:
            built = cleaner.module_path(native, m, suffix)  # pkg/_native/page/text<suffix>
            built.parent.mkdir(parents=True, exist_ok=True)
            built.write_bytes(b"\x7fELF")
        manifest = {"sources": {m: cleaner.source_digest(cleaner.source_path(pkg, m)) for m in cleaner.NATIVE_MODULES},
                    "extension_suffix": suffix}
        (native / "manifest.json").write_text(json.dumps(manifest))
    return pkg


def test_a_build_that_matches_its_sources_is_used(tmp_path):
    pkg = _fake_package(tmp_path)
    native, why = cleaner.native_build_status(pkg)
    assert native == pkg / cleaner.NATIVE_DIR and why.startswith("compiled")


def test_an_edited_module_is_never_shadowed_by_its_stale_build(tmp_path):
    pkg = _fake_package(tmp_path)
    (pkg / "page" / "features.py").write_text("# features, edited after the build\n")
    native, why = cleaner.native_build_status(pkg)
    assert native is None and "page/features.py changed" in why
    pkg = _fake_package(tmp_path / "cython")
    (pkg / "label" / "compiled_chain.pyx").write_text("# the chain, edited after the build\n")
    native, why = cleaner.native_build_status(pkg)
    assert native is None and "label/compiled_chain.pyx changed" in why


def test_a_missing_damaged_or_foreign_build_is_not_used(tmp_path):
    assert cleaner.native_build_status(_fake_package(tmp_path / "a", build=False))[0] is None

    pkg = _fake_package(tmp_path / "b")
    manifest = pkg / cleaner.NATIVE_DIR / "manifest.json"
    manifest.write_text("{not json")
    assert cleaner.native_build_status(pkg) == (None, "unreadable manifest (JSONDecodeError)")

    pkg = _fake_package(tmp_path / "c")
    manifest = pkg / cleaner.NATIVE_DIR / "manifest.json"
    data = json.loads(manifest.read_text())
    manifest.write_text(json.dumps(dict(data, extension_suffix=".cpython-39-darwin.so")))
    native, why = cleaner.native_build_status(pkg)
    assert native is None and "another interpreter" in why

    pkg = _fake_package(tmp_path / "d")
    for so in (pkg / cleaner.NATIVE_DIR / "page").glob("segment*"):
        so.unlink()
    native, why = cleaner.native_build_status(pkg)
    assert native is None and why.startswith("incomplete")

    pkg = _fake_package(tmp_path / "e")  # a build of the flat layout before cleaner/page/ (or of other modules)
    manifest = pkg / cleaner.NATIVE_DIR / "manifest.json"
    data = json.loads(manifest.read_text())
    manifest.write_text(json.dumps(dict(data, sources={m.rpartition(".")[2]: d for m, d in data["sources"].items()})))
    native, why = cleaner.native_build_status(pkg)
    assert native is None and why.startswith("stale: built for other modules")


def test_a_profile_guided_build_says_so_and_an_interrupted_one_is_not_used(tmp_path, monkeypatch):
    monkeypatch.delenv(cleaner.PROFILE_TRAINING_ENV, raising=False)
    pkg = _fake_package(tmp_path / "a")
    manifest = pkg / cleaner.NATIVE_DIR / "manifest.json"
    data = json.loads(manifest.read_text())
    manifest.write_text(json.dumps(dict(data, profile={"pages": 1131, "summary": "1131 pages of data"})))
    native, why = cleaner.native_build_status(pkg)
    assert native is not None and why.startswith("compiled, profile-guided (1131 pages of data): ")
    # the instrumented build a profile-guided build trains with (slower, writing counts at exit), left in place when
    # the build was killed during its training: rebuilt by --if-stale, never run
    manifest.write_text(json.dumps(dict(data, profile={"summary": "instrumented, training"})))
    native, why = cleaner.native_build_status(pkg)
    assert native is None and "instrumented build" in why
    monkeypatch.setenv(cleaner.PROFILE_TRAINING_ENV, "1")  # (the build script's own training run)
    assert cleaner.native_build_status(pkg)[0] is not None


def _build_script():
    return load_script("build_native")


def test_the_profile_training_cleans_pages_as_the_job_does(tmp_path):
    # The training run of a profile-guided build (scripts/build_native.py --profile-pages), against the build in
    # place: it reads a folder of HTML files and WARC files, and cleans each page with its Markdown and corpus columns.
    if cleaner.NATIVE_BUILD is None:
        pytest.skip(f"no build in place to train: {cleaner.NATIVE_STATUS}")
    pages = sampled_pages(DATA, 400)
    folder = tmp_path / "html"
    folder.mkdir()
    for k, page in enumerate(pages[:6]):
        (folder / f"{k}.html").write_bytes(page.read_html())
    warc = make_warc(tmp_path / "sample.warc.gz", str(DATA / "dragnet" / "html"), "--limit", "5")
    env = dict(os.environ, **{cleaner.PROFILE_TRAINING_ENV: "1"})
    proc = subprocess.run([sys.executable, "-c", _build_script()._TRAIN, str(ROOT), "1500", str(folder), str(warc)],
                          capture_output=True, text=True, env=env, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    count, summary = proc.stdout.strip().splitlines()[-1].removeprefix("TRAINED ").split(" ", 1)
    assert int(count) > 6 and "cleaned" in summary and "html, sample.warc.gz" in summary
    # at most the limit, spread over every source
    proc = subprocess.run([sys.executable, "-c", _build_script()._TRAIN, str(ROOT), "3", str(folder)],
                          capture_output=True, text=True, env=env, cwd=tmp_path)
    assert proc.stdout.strip().splitlines()[-1].startswith("TRAINED 3 ")


def test_a_profile_guided_build_without_its_pages_says_why_before_compiling(tmp_path):
    build = _build_script()
    with pytest.raises(build.ProfileFailed, match="no such file or folder: .*nowhere"):
        build._profile_guided(cleaner, ROOT / "cleaner", tmp_path / "out", {}, tmp_path, [str(tmp_path / "nowhere")],
                              1500)
    assert not (tmp_path / "out").exists()


def test_the_build_script_reports_a_current_build():
    if not cleaner.NATIVE_STATUS.startswith("compiled"):
        pytest.skip(cleaner.NATIVE_STATUS)
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "build_native.py"), "--check"],
                          capture_output=True, text=True)
    assert proc.returncode == 0 and "compiled" in proc.stdout


def test_the_command_line_says_which_build_runs():
    env = dict(os.environ)
    for value, expected in (("1", "pure Python"), ("0", cleaner.NATIVE_STATUS)):
        env[cleaner.PURE_PYTHON_ENV] = value
        out = subprocess.run([sys.executable, "-m", "cleaner.tools.cli", "--version"], env=env, capture_output=True,
                             text=True, check=True).stdout
        assert out.startswith(f"webcleaner {cleaner.__version__} (") and expected in out, out


def test_an_installed_package_without_a_build_says_how_to_get_one(tmp_path):
    # `cleaner --version` of a wheel said "not built (scripts/build_native.py)", a script a wheel user does not have
    pkg = _fake_package(tmp_path / "site-packages", build=False)
    native, why = cleaner.native_build_status(pkg)
    assert native is None and "pure Python" in why and "pip install" in why and "scripts/" not in why
    (tmp_path / "checkout").mkdir()
    checkout = _fake_package(tmp_path / "checkout", build=False)
    (tmp_path / "checkout" / "scripts").mkdir()
    (tmp_path / "checkout" / "scripts" / "build_native.py").write_text("# the build script of a checkout\n")
    assert cleaner.native_build_status(checkout) == (None, "not built (scripts/build_native.py)")
