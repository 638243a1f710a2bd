"""Shared fixtures: where the shared data lives, and a small CRF trained for real."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT.parent / "shared" / "data"

# The sets a test that takes "every N-th shared page" samples: all but wcxb, whose 1,497 pages are
# gzip-compressed and on average five times the size of the others' (about 390 MB raw), so that such a
# test stays as fast as it was. A test about wcxb names it.
HEAVY_SETS = ("wcxb",)


# The fetch date of every test WARC (scripts/make_warc.py --date), so that rows and partitions are reproducible.
WARC_DATE = "2024-05-06T07:08:09Z"


def make_warc(out: Path, *args: str, date: str = WARC_DATE) -> Path:
    """A WARC of shared pages built by the project's own script (`args`: its input folder and options)."""
    import subprocess
    import sys

    subprocess.run([sys.executable, str(ROOT / "scripts" / "make_warc.py"), *map(str, args), "--date", date,
                    "--out", str(out)], check=True, capture_output=True)
    return out


def two_markups(data_dir, folder: Path) -> Path:
    """dragnet/42 (XHTML 1.0) and the same page declared HTML5, as xhtml.html and html5.html in `folder`."""
    page = (data_dir / "dragnet" / "html" / "42.html").read_bytes()
    xhtml_doctype = page[:page.index(b">") + 1]
    assert b"XHTML 1.0" in xhtml_doctype
    folder.mkdir()
    (folder / "xhtml.html").write_bytes(page)
    (folder / "html5.html").write_bytes(b"<!DOCTYPE html>" + page[len(xhtml_doctype):])
    return folder


def load_script(name: str):
    """scripts/<name>.py as a module named `name`, registered in sys.modules (a script's process pool pickles its
    functions by their module's name)."""
    import importlib.util
    import sys

    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def sampled_pages(data_dir: Path = DATA, every: int = 1):
    """Every `every`-th page of the shared sets but HEAVY_SETS (cleaner.gold.data.find_pages' order)."""
    from cleaner.gold.data import find_pages

    return [p for p in find_pages(data_dir) if p.dataset not in HEAVY_SETS][::every]


@pytest.fixture(scope="session")
def data_dir() -> Path:
    if not DATA.is_dir():
        pytest.fail(f"shared data not found at {DATA} (the project expects ../shared/data)")
    return DATA


@pytest.fixture(scope="session")
def small_model(tmp_path_factory, data_dir):
    """A real stacked CRF (first pass, second pass and marker typer) trained on 24 shared pages
    (seconds), for tests of the machinery.

    Quality is tested on the shipped model (test_quality.py), not on this one.
    """
    from cleaner.config import load_config
    from cleaner.gold.data import find_pages
    from cleaner.learn.cv import trainable
    from cleaner.learn.train import model_meta, prepare, train_model, with_typer

    # Its second pass reads the first pass's decided labels, as the packaged default's does, so `tag` needs
    # the blocks' word counts beside their attribute rows.
    config = load_config().overlay({"stacking": {"enabled": True, "inner_folds": 2},
                                    "markers": {"enabled": True}})
    pages = find_pages(data_dir, ["cleaneval-dev"])[:12] + find_pages(data_dir, ["dragnet"])[:12]
    docs = prepare(pages, config, processes=1, progress=False)
    meta = model_meta(config, None, c1=0.05, c2=0.05, max_iterations=30, manifest="test", n_docs=len(docs))
    model = train_model(trainable(docs, 0.5), config, c1=0.05, c2=0.05, max_iterations=30, meta=meta)
    # with its marker typer, as `cleaner train` makes it
    model = with_typer(model, trainable(docs, 0.5), config)
    assert model.typer is not None and model.stacking is not None
    return model.save(tmp_path_factory.mktemp("model") / "small.crfsuite")
