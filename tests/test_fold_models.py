"""`cleaner eval --cv --fold-models DIR` (`cross_validate(models_dir=...)`) saves each fold's model, and the saved
model is the one the cross-validation scored the fold's pages with: with [stacking] on, its first pass and the second
pass that reads it, tagging the page as the cross-validation did. (Until commit 190de3c, `scripts/gap.py` explained
pages through these models; the script is gone, what it read is tested here.)"""

from __future__ import annotations

from cleaner.config import load_config
from cleaner.gold.data import find_pages, load_folds
from cleaner.label.decide import DecisionSettings
from cleaner.label.model import load_model
from cleaner.learn.train import cross_validate, predict, prepare
from cleaner.page.features import DEFAULT_FAMILIES

# Few iterations and two inner folds: the test is about what is saved, not about quality.
FAST = {"train": {"max_iterations": 12}, "stacking": {"enabled": True, "inner_folds": 2},
        "markers": {"enabled": False}}


def test_the_saved_fold_model_is_the_one_that_scored_the_folds_pages(data_dir, tmp_path):
    config = load_config().overlay(FAST)
    pages = find_pages(data_dir, ["cleaneval-dev"])[:10] + find_pages(data_dir, ["dragnet"])[:10]
    docs = prepare(pages, config, None, load_folds(data_dir), processes=1, progress=False)
    d = next(x for x in docs if x.dataset == "cleaneval-dev" and x.gold_words > 0)
    tc = config["train"]
    results = cross_validate(docs, config, c1=float(tc["c1"]), c2=float(tc["c2"]),
                             max_iterations=int(tc["max_iterations"]), folds=[d.fold], processes=1, progress=False,
                             models_dir=tmp_path)
    model = load_model(tmp_path / f"fold-{d.fold}.crfsuite")
    assert model.stacking is not None and model.first_pass is not None
    decision = DecisionSettings.from_config(config)
    for doc in (x for x in docs if x.fold == d.fold):
        scored = next(r for r in results if r.key == doc.key)
        assert predict(model, doc, decision).score == scored.score


def test_a_saved_fold_model_reads_pages_with_the_families_the_cross_validation_used(data_dir, tmp_path):
    # `cleaner eval --model`, `clean` and `inspect` read a page with the families and feature config of the model's
    # sidecar: a fold model saved without them read its pages with the default families, not those it was trained on
    # (the `cue` family of the default recipe left out), and labelled them otherwise than the cross-validation had.
    config = load_config().overlay(FAST)
    families = DEFAULT_FAMILIES + ("cue",)
    pages = find_pages(data_dir, ["wcxb"])[:16]
    docs = prepare(pages, config, families, load_folds(data_dir), processes=1, progress=False)
    fold = next(x.fold for x in docs if x.gold_words > 0)
    tc = config["train"]
    results = cross_validate(docs, config, c1=float(tc["c1"]), c2=float(tc["c2"]),
                             max_iterations=int(tc["max_iterations"]), folds=[fold], processes=1, progress=False,
                             models_dir=tmp_path, families=families)
    model = load_model(tmp_path / f"fold-{fold}.crfsuite")
    assert tuple(model.meta["families"]) == families and model.extractor().on.cue
    assert model.meta["config_hash"] == config.section_hash(families=families)
    held_out = [p for p, x in zip(pages, docs) if x.fold == fold]
    again = prepare(held_out, config, tuple(model.meta["families"]), load_folds(data_dir), processes=1,
                    progress=False)  # (as `cleaner eval --model` prepares the pages of a saved model)
    decision = DecisionSettings.from_config(config)
    for doc in again:
        assert predict(model, doc, decision).score == next(r for r in results if r.key == doc.key).score


def test_rescoring_reads_the_kept_fold_models_under_the_run_s_decision_settings(data_dir, tmp_path):
    # `eval --cv --fold-models DIR --rescore`: a [decision] change measured on the folds of an earlier run without
    # training them again. With the same config the figures are that run's; with another decision setting they are
    # what the same models give under it; a fold without a kept model, or a model read with other families, is refused.
    import pytest

    config = load_config().overlay(FAST)
    pages = find_pages(data_dir, ["wcxb"])[:16]
    docs = prepare(pages, config, None, load_folds(data_dir), processes=1, progress=False)
    fold = next(x.fold for x in docs if x.gold_words > 0)
    tc = config["train"]
    run = dict(c1=float(tc["c1"]), c2=float(tc["c2"]), max_iterations=int(tc["max_iterations"]), folds=[fold],
               processes=1, progress=False, models_dir=tmp_path)
    first = cross_validate(docs, config, **run)
    again = cross_validate(docs, config, rescore=True, **run)
    assert [(r.key, r.score) for r in again] == [(r.key, r.score) for r in first]

    everything = config.overlay({"decision": {"content_threshold": 0.01}})
    model = load_model(tmp_path / f"fold-{fold}.crfsuite")
    decision = DecisionSettings.from_config(everything)
    rescored = cross_validate(docs, everything, rescore=True, **run)
    assert [r.score for r in rescored] == [predict(model, d, decision).score for d in docs if d.fold == fold]
    assert [r.score for r in rescored] != [r.score for r in first]  # (the setting moves these pages)

    other = next(k for k in {x.fold for x in docs} if k != fold)
    with pytest.raises(ValueError, match=f"no saved model for fold {other}"):
        cross_validate(docs, config, rescore=True, **dict(run, folds=[other]))
    with pytest.raises(ValueError, match="other feature families"):
        cross_validate(docs, config, rescore=True, families=DEFAULT_FAMILIES + ("cue",), **run)
