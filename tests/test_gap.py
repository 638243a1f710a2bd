"""scripts/gap.py explains a page through the model the cross-validation scored it with (saved by
`cross_validate(models_dir=...)`): with [stacking] on, the attributes the second pass reads of the page (its own
rows and the first pass's view, `pass1.*`), not a one-pass model's."""

from __future__ import annotations

import importlib.util

import pytest

from cleaner.config import load_config
from cleaner.gold.data import find_pages, load_folds
from cleaner.label.decide import DecisionSettings
from cleaner.label.model import CrfModel, load_model
from cleaner.learn.train import cross_validate, predict, prepare

from conftest import ROOT

# Few iterations and two inner folds: the test is about what is read, not about quality.
FAST = {"train": {"max_iterations": 12}, "stacking": {"enabled": True, "inner_folds": 2},
        "markers": {"enabled": False}}


def _script():
    spec = importlib.util.spec_from_file_location("gap", ROOT / "scripts" / "gap.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_page_is_explained_by_what_the_second_pass_of_its_fold_model_reads(data_dir, tmp_path):
    gap = _script()
    config = load_config().overlay(FAST)
    pages = find_pages(data_dir, ["cleaneval-dev"])[:10] + find_pages(data_dir, ["dragnet"])[:10]
    docs = prepare(pages, config, None, load_folds(data_dir), processes=1, progress=False)
    d = next(x for x in docs if x.dataset == "cleaneval-dev" and x.gold_words > 0)
    tc = config["train"]
    results = cross_validate(docs, config, c1=float(tc["c1"]), c2=float(tc["c2"]),
                             max_iterations=int(tc["max_iterations"]), folds=[d.fold], processes=1, progress=False,
                             models_dir=tmp_path)
    # the saved fold model is the one the cross-validation scored the fold's pages with
    model = load_model(tmp_path / f"fold-{d.fold}.crfsuite")
    assert model.stacking is not None
    decision = DecisionSettings.from_config(config)
    scored = next(r for r in results if r.key == d.key)
    assert predict(model, d, decision).score == scored.score

    rows = gap.second_pass_rows(model, d, decision)
    assert all(row[: len(own)] == own and sum(a.startswith("pass1.") for a in row) == 5
               for row, own in zip(rows, d.features))
    # the second pass alone, given these rows, tags the page as the stacked model does
    by_hand = CrfModel(model.data, {"attribute_encoding": model.meta["attribute_encoding"]}).tag(rows)
    labels, probabilities = model.tag(d.features, word_counts=d.word_counts, decision=decision)
    assert by_hand[0] == labels and by_hand[1] == pytest.approx(probabilities, abs=1e-12)

    reasons = gap.explain(docs, [d.key], config, tmp_path, top=50)[d.key]
    assert reasons and [v for _, v in reasons] == sorted((v for _, v in reasons), reverse=True)
    read = {a for row in rows for a in row}
    assert {a for a, _ in reasons} <= read
    assert any(a.startswith("pass1.") for a, _ in reasons)
