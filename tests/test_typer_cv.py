"""scripts/typer_cv.py measures the marker typer from cached block labellings: its figures must be the ones
`cleaner train --cv` (cleaner.learn.train.cross_validate) gives for the same pages and settings, typer on and off,
or a typer decision made with it would rest on a different model than the one shipped."""

from __future__ import annotations

import pytest
from conftest import HEAVY_SETS, load_script

from cleaner.config import load_config
from cleaner.gold.data import find_pages, load_folds
from cleaner.gold.score import aggregate
from cleaner.learn.train import cross_validate, prepare

EVERY = 40  # 55 pages of all four sets and all six folds
# One process throughout: a pool forked from the pytest worker inherits the threads of the tests that ran in it before
# (Spark's py4j, a job's lease heartbeat, Arrow's allocator), and a child can hang forever on a lock one of them held
# at the fork (a CI run hung here: typer_cv's cache pool, children in futex_wait). The figures do not depend on it.
JOBS = 1


def _sampled_sets(data_dir) -> list[str]:
    """Every shared set but wcxb (conftest.HEAVY_SETS), for the script and the test alike."""
    return sorted(d.name for d in data_dir.iterdir() if (d / "html").is_dir() and d.name not in HEAVY_SETS)
# Few iterations and two inner folds: the test is about the harness, not about quality.
FAST = '[train]\nmax_iterations = 12\n[stacking]\ninner_folds = 2\n'
NO_TYPER = FAST + '[markers]\nenabled = false\n'


def _script():
    return load_script("typer_cv")


def _cv_markup(data_dir, overlay_path) -> dict[str, float]:
    config = load_config(overlay_path)
    pages = [p for p in find_pages(data_dir, _sampled_sets(data_dir)) if p.gold_path is not None][::EVERY]
    docs = prepare(pages, config, None, load_folds(data_dir), processes=1, progress=False)
    tc = config["train"]
    results = cross_validate(docs, config, c1=float(tc["c1"]), c2=float(tc["c2"]),
                             max_iterations=int(tc["max_iterations"]), processes=JOBS, progress=False)
    by_set: dict[str, list] = {}
    for r in results:
        by_set.setdefault(r.dataset, []).append(r.score)
    # The sets whose golds mark segments: markup is meaningless on the others.
    return {k: f["macro_markup_f1"] for k, f in ((k, aggregate(v)) for k, v in by_set.items())
            if f["n_markup_docs"]}


@pytest.fixture(scope="module")
def harness(tmp_path_factory, data_dir):
    tmp = tmp_path_factory.mktemp("typer_cv")
    (tmp / "fast.toml").write_text(FAST)
    (tmp / "no_typer.toml").write_text(NO_TYPER)
    script = _script()
    cache = tmp / "folds.pkl"
    assert script.main(["cache", "--data", str(data_dir), "--config", str(tmp / "fast.toml"), "--out", str(cache),
                        "--every", str(EVERY), "--jobs", str(JOBS), "--datasets", *_sampled_sets(data_dir)]) == 0
    return script, cache, tmp


@pytest.mark.parametrize("overlay", ["fast.toml", "no_typer.toml"])
def test_typer_cv_reproduces_cross_validation(harness, data_dir, overlay):
    script, cache, tmp = harness
    figures = script.evaluate(cache, tmp / overlay, jobs=JOBS)
    expected = _cv_markup(data_dir, tmp / overlay)
    assert set(figures) == set(expected)
    # The CleanEval-format sets are scored; the plain-text golds (Dragnet, the modern sets) never are.
    assert {"cleaneval-dev", "cleaneval-final", "cleanportaleval"} <= set(figures)
    assert not set(figures) & {"dragnet", "chaos", "fundus", "big5-2017"}
    for dataset, f in figures.items():
        assert f["all"] == pytest.approx(expected[dataset], abs=1e-9), dataset
        assert 0 < f["pages"]


def test_typer_cv_typer_changes_the_markup(harness):
    """The overlay's [markers] reaches the typer: with it disabled, the block CRF's own markers are scored."""
    script, cache, tmp = harness
    on = script.evaluate(cache, tmp / "fast.toml", jobs=JOBS)
    off = script.evaluate(cache, tmp / "no_typer.toml", jobs=JOBS)
    assert any(on[k]["all"] != off[k]["all"] for k in on)
