"""Quality gate on the shipped default model.

A fixed sample of shared pages (every 25th page of the two large sets, every 5th of the two
small ones: 3 pages of CleanEval-dev made the markup floor a coin toss) is cleaned with the packaged
model and scored with the project's scorer. The model was trained on these pages, so the
floors guard against regressions (a feature or segmentation change the model was not
retrained for, a broken model file) rather than measuring generalisation: the
cross-validated figures are in docs/eval.md.
"""

import json

import pytest

from cleaner.api import clean_html
from cleaner.data import find_pages
from cleaner.gold import read_gold
from cleaner.model import DEFAULT_MODEL_PATH, first_pass_path, load_model, markers_path, model_files, sidecar_path
from cleaner.score import aggregate, score_document

FLOORS = {  # macro word F1, markup F1 on the sample
    "cleaneval-dev": (0.90, 0.60),
    "cleaneval-final": (0.90, 0.60),
    "cleanportaleval": (0.88, 0.60),
    "dragnet": (0.90, None),
}


ONE_PASS_MODEL_PATH = DEFAULT_MODEL_PATH.with_name("onepass.crfsuite")


def test_default_model_is_packaged_whole_small_and_consistent():
    assert sum(f.stat().st_size for f in model_files(DEFAULT_MODEL_PATH)) < 20_000_000
    meta = json.loads(sidecar_path(DEFAULT_MODEL_PATH).read_text())
    model = load_model()
    assert meta["model_hash"] == model.hash
    assert meta["labels"] == ["header", "paragraph", "list", "continuation", "other"]
    assert meta["training_documents"] > 2000
    # the marker typer ships with it (cleaner/markers.py), trained on the pages with marked golds
    assert model.typer is not None and meta["markers"]["training_documents"] > 700
    assert markers_path(DEFAULT_MODEL_PATH).stat().st_size < 1_000_000
    # stacked (cleaner/stacking.py): a first pass whose decided labels the second pass reads
    assert model.stacking is not None
    assert meta["stacking"]["training_documents"] == meta["training_documents"]


def test_one_pass_model_is_the_default_models_first_pass():
    model = load_model(ONE_PASS_MODEL_PATH)
    meta = json.loads(sidecar_path(ONE_PASS_MODEL_PATH).read_text())
    assert meta["model_hash"] == model.hash and model.typer is not None and model.stacking is None
    default = json.loads(sidecar_path(DEFAULT_MODEL_PATH).read_text())
    assert meta["training_manifest_hash"] == default["training_manifest_hash"]
    # The same feature settings (Config.section_hash leaves out those of opt-in families neither reads:
    # a model trained later also records settings added since, such as [features.cues]).
    assert meta["config_hash"] == default["config_hash"] and meta["families"] == default["families"]
    # The same pages, config and seed train the same first pass (deterministic L-BFGS).
    assert first_pass_path(DEFAULT_MODEL_PATH).read_bytes() == ONE_PASS_MODEL_PATH.read_bytes()


@pytest.mark.parametrize("model_path", [DEFAULT_MODEL_PATH, ONE_PASS_MODEL_PATH], ids=["default", "onepass"])
@pytest.mark.parametrize("dataset", sorted(FLOORS))
def test_shipped_model_meets_quality_floors(data_dir, dataset, model_path):
    model = load_model(model_path)
    scores = []
    pages = find_pages(data_dir, [dataset])
    for page in pages[:: 5 if len(pages) < 100 else 25]:
        res = clean_html(page.html_path.read_bytes(), model=model)
        scores.append(score_document(res.cleaneval, read_gold(page.gold_path)))
    figures = aggregate(scores)
    f1_floor, markup_floor = FLOORS[dataset]
    assert figures["macro_f1"] >= f1_floor, figures
    if markup_floor is not None:
        assert figures["macro_markup_f1"] >= markup_floor, figures
