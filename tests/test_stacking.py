"""Stacked labelling (cleaner.label.stacking): what the second pass reads of the first, and the model files."""

from __future__ import annotations

import json

import pytest

from cleaner.api import clean_html
from cleaner.config import load_config
from cleaner.label.crf import WindowRows
from cleaner.label.decide import DecisionSettings
from cleaner.label.model import (
    CODEC,
    CrfModel,
    ModelError,
    attribute_code,
    attribute_weights,
    copy_model,
    first_pass_path,
    load_model,
    model_files,
)
from cleaner.page.segment import segment_blocks, table_of
from cleaner.label.stacking import StackingSettings, first_pass_attributes, first_pass_ids, inner_fold

SETTINGS = StackingSettings(windows=(1,), inner_folds=3)


def _same_tagging(a, b) -> bool:
    """The same labels, and probabilities equal up to the order in which the passes' scores are summed."""
    return a[0] == b[0] and a[1] == pytest.approx(b[1], abs=1e-12)


def _attrs(row):
    return dict(a.split("=", 1) for a in row)


def test_a_block_sees_its_first_pass_label_confidence_window_and_range():
    labels = ["other", "paragraph", "continuation", "other", "other"]
    p_other = [0.9, 0.1, 0.3, 0.8, 0.95]
    rows = [_attrs(r) for r in first_pass_attributes(labels, p_other, SETTINGS)]
    assert [r["pass1.label"] for r in rows] == labels
    assert [r["pass1.p"] for r in rows] == ["0", "9", "7", "1", "0"]  # P(content) in tenths, rounded down
    # mean P(content) of the neighbours within 1 block, the block itself left out
    assert rows[0]["pass1.w1"] == "9" and rows[2]["pass1.w1"] == "5" and rows[4]["pass1.w1"] == "1"
    assert [r["pass1.range"] for r in rows] == ["before", "in", "in", "after", "after"]
    # the tagger gets them as the codes the model stores, named once per attribute, not per page
    readable = first_pass_attributes(labels, p_other, SETTINGS)
    assert first_pass_attributes(labels, p_other, SETTINGS, CODEC) == CODEC.encode(readable)


def test_the_view_as_ids_is_the_view_named_with_ids():
    # What tagging hands the second pass: an array of the attribute ids of the same view, P(content)
    # at the ends of [0, 1] and rounded past them included (1 - P(other) can be -1e-16).
    model = load_model("cleaneval-2012")  # (a stacked packaged model)
    labels = ["other", "paragraph", "continuation", "header", "other", "list", "other"]
    p_other = [1.0, 0.0, 1.0 + 2e-16, -2e-16, 0.999, 0.5, 0.05]
    readable = first_pass_attributes(labels, p_other, model.stacking)
    assert [_attrs(r)["pass1.p"] for r in readable] == ["0", "9", "0", "9", "0", "5", "9"]
    ids = first_pass_ids(labels, p_other, model.stacking, model.attribute_ids)
    assert ids.tolist() == model.attribute_ids.encode(readable) and ids.min() > 0


def test_a_page_the_first_pass_keeps_nothing_of_is_marked_so():
    rows = [_attrs(r) for r in first_pass_attributes(["other"] * 3, [0.99] * 3, SETTINGS)]
    assert {r["pass1.range"] for r in rows} == {"none"}
    assert first_pass_attributes([], [], SETTINGS) == []


def test_settings_round_trip_and_disable():
    settings = StackingSettings.from_config(load_config().overlay({"stacking": {"enabled": True}}))
    assert StackingSettings.from_meta(json.loads(json.dumps(settings.to_meta()))) == settings
    assert StackingSettings.from_config(load_config().overlay({"stacking": {"enabled": False}})) is None


def test_inner_folds_are_stable_and_cover_every_fold():
    keys = [f"cleaneval-final/{i}" for i in range(60)]
    folds = [inner_fold(k, 3) for k in keys]
    assert folds == [inner_fold(k, 3) for k in keys]
    assert set(folds) == {0, 1, 2}


def test_the_second_pass_learned_to_read_the_first(small_model):
    model = load_model(small_model)
    assert model.first_pass and model.stacking is not None
    weights = attribute_weights(model)
    codes = {attribute_code(model, f"pass1.label={y}") for y in ("paragraph", "other")}
    assert any(abs(w) > 0 for (attr, _), w in weights.items() if attr in codes)


def test_tagging_runs_the_first_pass_then_the_second_on_its_view(small_model):
    # The two passes by hand, as two plain models, give the stacked model's labels.
    model = load_model(small_model)
    page = ("<html><body><div class=nav><a href=/>Home</a> <a href=/a>About</a></div>"
            + "".join(f"<p>This is sentence number {i} of the article, and it goes on a while.</p>" for i in range(12))
            + "<div class=foot>Copyright 2007</div></body></html>")
    blocks = segment_blocks(page).blocks
    features = model.extractor().extract(table_of(blocks))
    encoding = {"attribute_encoding": model.meta["attribute_encoding"]}
    counts = [len(b.text.split()) for b in blocks]
    first = CrfModel(model.first_pass, encoding)
    decided = first.label(features, counts, DecisionSettings())  # what the first pass alone would output
    view = first_pass_attributes(decided.labels, decided.p_other, model.stacking)
    second = CrfModel(model.data, encoding)
    by_hand = second.tag([row + more for row, more in zip(features, view)])
    # (the stacked model scores both passes' rows in one gather: readable rows and WindowRows alike)
    assert _same_tagging(model.tag(features, word_counts=counts), by_hand)
    assert _same_tagging(model.tag(model.features(table_of(blocks)), word_counts=counts), by_hand)
    assert model.hash != second.hash  # the first pass is part of what the hash names
    result = clean_html(page.encode(), model=model)
    assert result.ok and "sentence number 5" in result.plain


def test_the_first_pass_file_is_checked_like_the_model(small_model, tmp_path):
    path = copy_model(small_model, tmp_path / "ok" / "m.crfsuite")
    assert first_pass_path(path) in model_files(path)
    assert load_model(path).hash == load_model(small_model).hash
    meta = json.loads(path.with_name("m.crfsuite.json").read_text())
    assert meta["stacking"]["settings"] == {"windows": [3, 10], "inner_folds": 2, "first_pass_labels": "decided",
                                            "first_pass_neighbours": True}
    damaged = copy_model(small_model, tmp_path / "damaged" / "m.crfsuite")
    first_pass_path(damaged).write_bytes(first_pass_path(damaged).read_bytes()[:-10])
    with pytest.raises(ModelError, match="first-pass CRF .* does not match"):
        load_model(damaged)
    missing = copy_model(small_model, tmp_path / "missing" / "m.crfsuite")
    first_pass_path(missing).unlink()
    with pytest.raises(ModelError, match="cannot read the first-pass CRF"):
        load_model(missing)


def test_the_second_pass_reads_the_first_pass_decided_labels(small_model, data_dir):
    # The second pass reads the first pass's labels after the decision stage (cleaner.label.decide), the labels the
    # first pass alone would output: a decision that rescues more blocks changes what the second pass reads.
    from cleaner.gold.data import find_pages
    from cleaner.label.decide import decide
    from cleaner.learn.train import prepare

    model = load_model(small_model)
    d = prepare(find_pages(data_dir, ["cleaneval-dev"])[:1], load_config(), processes=1, progress=False)[0]
    eager = DecisionSettings(content_threshold=0.0)  # every block with any P(content) is rescued
    encoding = {"attribute_encoding": model.meta["attribute_encoding"]}
    first = CrfModel(model.first_pass, encoding)
    viterbi, _ = first.tag(d.features, marginals=False)
    labelling = first.label(d.features, d.word_counts, eager, marginals=True)
    decided, _ = decide(viterbi, labelling.marginals, d.word_counts, eager, p_other=labelling.p_other)
    assert decided == labelling.labels
    assert decided != viterbi
    view = first_pass_attributes(decided, labelling.p_other, model.stacking)
    by_hand = CrfModel(model.data, encoding).tag([row + more for row, more in zip(d.features, view)])
    assert _same_tagging(model.tag(d.features, word_counts=d.word_counts, decision=eager), by_hand)
    with pytest.raises(ValueError, match="word counts"):
        model.tag(d.features)


@pytest.mark.parametrize("read", ["viterbi", None])
def test_a_model_stacked_on_the_first_pass_viterbi_path_is_refused_at_load(small_model, tmp_path, read):
    # Reading the first pass's Viterbi path was measured, rejected and removed: a model whose second pass learnt
    # from it (its sidecar says so, or predates the key) would now be handed decided labels, so it is refused
    path = copy_model(small_model, tmp_path / "old.crfsuite")
    side = path.with_name("old.crfsuite.json")
    meta = json.loads(side.read_text())
    meta["stacking"]["settings"].pop("first_pass_labels")
    if read:
        meta["stacking"]["settings"]["first_pass_labels"] = read
    side.write_text(json.dumps(meta))
    with pytest.raises(ModelError, match="stacked on the first pass's viterbi labels, a variant this version no"):
        load_model(path)


def test_a_first_pass_can_read_only_each_blocks_own_attributes(data_dir):
    # first_pass_neighbours = false: the first passes (the shipped one and the inner folds') are trained on
    # each block's own attributes; tagging gives them just those: the page's WindowRows without the
    # neighbours, or rows sliced by their own_counts.
    from cleaner.gold.data import find_pages
    from cleaner.page.features import AttributeRows, own_attribute_count
    from cleaner.learn.cv import trainable
    from cleaner.learn.train import prepare, train_model

    config = load_config().overlay({"stacking": {"enabled": True, "inner_folds": 2, "first_pass_neighbours": False},
                                    "markers": {"enabled": False}})
    pages = find_pages(data_dir, ["cleaneval-dev"])[:6] + find_pages(data_dir, ["dragnet"])[:6]
    docs = trainable(prepare(pages, config, processes=1, progress=False), 0.5)
    model = train_model(docs, config, c1=0.05, c2=0.05, max_iterations=20)
    assert model.stacking.first_pass_neighbours is False
    assert StackingSettings.from_meta(model.meta["stacking"]["settings"]) == model.stacking
    encoding = {"attribute_encoding": model.meta["attribute_encoding"]}
    first, second = CrfModel(model.first_pass, encoding), CrfModel(model.data, encoding)
    # the first pass has no weight for any neighbour's attribute; the second pass has many
    neighbours = {attribute_code(first, a) for d in docs for row in d.features for a in row[own_attribute_count(row):]}
    assert not neighbours & {a for a, _ in attribute_weights(first)}
    assert len(neighbours & {a for a, _ in attribute_weights(second)}) > 50
    blocks = segment_blocks(pages[0].html_path.read_bytes().decode("utf-8", "replace"), config).blocks
    window_rows = model.features(table_of(blocks))  # as clean_html scores them
    rows = model.extractor().extract(table_of(blocks), None, model.attribute_ids)  # ids, laid out in rows
    readable = model.extractor().extract(table_of(blocks))
    assert isinstance(window_rows, WindowRows)
    assert isinstance(rows, AttributeRows) and rows.own_counts == readable.own_counts
    assert readable.own_counts == [own_attribute_count(row) for row in readable]
    assert any(k < len(row) for k, row in zip(readable.own_counts, readable))
    own = [row[:k] for row, k in zip(readable, readable.own_counts)]
    counts = [len(b.text.split()) for b in blocks]
    decided = first.label(own, counts, DecisionSettings())
    view = first_pass_attributes(decided.labels, decided.p_other, model.stacking)
    by_hand = second.tag([row + more for row, more in zip(readable, view)])
    # the page's WindowRows (the fast path), sliced rows, whole readable rows (CRFsuite skips what the
    # first pass never saw) and plain encoded rows without own_counts all label the page the same
    assert _same_tagging(model.tag(window_rows, word_counts=counts), by_hand)
    assert _same_tagging(model.tag(rows, word_counts=counts), by_hand)
    assert _same_tagging(model.tag(list(readable), word_counts=counts), by_hand)
    assert _same_tagging(model.tag(CODEC.encode(readable), word_counts=counts), by_hand)
    assert clean_html(pages[0].html_path.read_bytes(), model=model).ok


def test_a_stacking_setting_of_the_wrong_type_is_refused():
    with pytest.raises(ValueError, match="first_pass_neighbours"):
        StackingSettings.from_config(load_config().overlay({"stacking": {"first_pass_neighbours": "false"}}))


@pytest.mark.parametrize("setting", ['first_pass_labels = "viterbi"', 'first_pass_neighbours = "no"'])
def test_a_config_file_with_a_bad_stacking_setting_is_refused_on_reading(tmp_path, setting, data_dir):
    from cleaner.tools.cli import EXIT_MODEL, main

    bad = tmp_path / "bad.toml"
    bad.write_text(f"[stacking]\n{setting}\n")
    out = tmp_path / "m.crfsuite"
    # exit 4 (a model or config error), before any page is read
    assert main(["train", str(data_dir / "cleaneval-dev"), "--config", str(bad), "--out", str(out)]) == EXIT_MODEL
    assert not out.exists()


def test_too_few_pages_to_stack_give_a_one_pass_model(data_dir):
    from cleaner.gold.data import find_pages
    from cleaner.learn.train import prepare, train_model

    config = load_config().overlay({"stacking": {"enabled": True, "inner_folds": 3}})
    docs = prepare(find_pages(data_dir, ["cleaneval-dev"])[:1], config, processes=1, progress=False)
    model = train_model(docs, config, c1=0.05, c2=0.05, max_iterations=10)
    assert model.first_pass is None and model.stacking is None and "stacking" not in model.meta
    assert model.tag(docs[0].features, marginals=False)[0]


def test_the_configs_train_what_the_packaged_models_are():
    from pathlib import Path

    from cleaner.label.model import DEFAULT_MODEL_PATH

    # the default config trains the stacked kind of cleaneval-2012 (the default until issue 29); conf/onepass.toml
    # the one-pass kind of the convention-aware default (`cleaner train --conventions --config conf/onepass.toml`)
    assert StackingSettings.from_config(load_config()) == load_model(
        DEFAULT_MODEL_PATH.with_name("cleaneval-2012.crfsuite")).stacking
    overlay = Path(__file__).resolve().parents[1] / "conf" / "onepass.toml"
    assert StackingSettings.from_config(load_config(overlay)) is None
    assert load_model().stacking is None and load_model().conventions is not None
