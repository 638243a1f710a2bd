"""Tagging through scores (cleaner.label.crf): the same labels and marginals as CRFsuite on the model itself."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import numpy as np
import pycrfsuite
import pytest

from cleaner.config import load_config
from cleaner.label.crf import (AttributeIds, ChainWeights, FlatRows, ScoringTagger, Vocabulary, WindowIds, WindowRows,
                               read_crfsuite, window_ids)
from cleaner.label.crf import window_rows as window_rows_of
from cleaner.page.decode import decode_html
from cleaner.page.features import FeatureExtractor
from cleaner.label.model import CODEC, CrfModel, load_model, open_tagger
from cleaner.page.segment import segment_blocks, table_of
from conftest import sampled_pages


@pytest.fixture(scope="module")
def packaged():
    return load_model("cleaneval-2012")  # the stacked packaged model: two passes over one vocabulary


def test_the_model_file_reads_as_crfsuite_dumps_it(packaged):
    model = read_crfsuite(packaged.data)
    info = open_tagger(packaged.data).info()
    assert model.labels == sorted(info.labels, key=lambda y: int(info.labels[y]))
    weights = model.state_weights()
    assert weights.keys() == info.state_features.keys()
    # CRFsuite's dump prints six decimals; the file holds the doubles
    assert all(abs(weights[k] - w) <= 1e-6 for k, w in info.state_features.items())
    t = model.transitions
    assert all(abs(t[model.labels.index(a), model.labels.index(b)] - w) <= 1e-6
               for (a, b), w in info.transitions.items())


def test_shared_pages_tag_as_crfsuite_tags_them(packaged, data_dir):
    # Both passes of the packaged model, on pages of every data set: the labels are CRFsuite's,
    # the marginals agree to rounding.
    config = load_config()
    ids = packaged.attribute_ids
    checked = 0
    for data, tagger in ((packaged.data, packaged.tagger()), (packaged.first_pass, packaged.first_tagger())):
        reference = open_tagger(data)
        for page in sampled_pages(data_dir, 97):
            blocks = segment_blocks(decode_html(page.read_html()).text, config).blocks
            if not blocks:
                continue
            readable = packaged.extractor().extract(table_of(blocks))
            tagger.set(ids.encode(readable))
            reference.set(CODEC.encode(readable))
            assert tagger.tag() == reference.tag(), page.key
            worst = max(abs(tagger.marginal(y, i) - reference.marginal(y, i))
                        for i in range(len(blocks)) for y in tagger.labels())
            assert worst < 1e-9, page.key
            checked += 1
    assert checked >= 40


def test_the_default_model_tags_as_crfsuite_tags_it_under_each_convention(data_dir):
    # The convention-aware default: its conventions rewrite the readable rows, which are then scored by ids.
    default = load_model()
    config = load_config()
    reference = open_tagger(default.data)
    checked = 0
    for page in sampled_pages(data_dir, 197):
        blocks = segment_blocks(decode_html(page.read_html()).text, config).blocks
        if not blocks:
            continue
        readable = default.extractor().extract(table_of(blocks))
        for convention in default.conventions.names:
            rows = default.conventions.apply(readable, convention)
            reference.set(CODEC.encode(rows))
            labels, probabilities = default.tag(readable, convention=convention)
            assert labels == reference.tag(), (page.key, convention)
            assert max(abs(p - reference.marginal(y, i)) for i, (y, p) in enumerate(zip(labels, probabilities))) < 1e-9
            checked += 1
    assert checked >= 3 * 15


def test_unknown_attributes_and_empty_rows_score_nothing(packaged):
    vocabulary, main, _ = packaged._parsed
    tagger = ScoringTagger(ChainWeights(vocabulary, main))
    ids = AttributeIds(vocabulary, packaged.encoded)
    known = ids["bias"]
    assert known > 0 and ids["no.such=attribute"] == 0 and ids.encode([["no.such=attribute"]]) == [[0]]
    scores = tagger.scores([[known], [], [0, 0], [known, known]])
    assert scores.shape == (4, len(main.labels))
    assert np.allclose(scores[1], 0) and np.allclose(scores[2], 0)
    assert np.allclose(scores[3], 2 * scores[0]) and not np.allclose(scores[0], 0)
    # rows given as the names the file stores tag as readable ones do
    assert ids.encode([[CODEC["bias"], CODEC["no.such=attribute"]]]) == [[known, 0]]


@pytest.mark.parametrize("window", [0, 1, 2])
def test_window_rows_score_as_the_laid_out_rows(packaged, data_dir, window):
    # What clean_html scores (the attributes kept apart from the neighbour window) against the rows
    # FeatureExtractor.extract lays out, block by block, for both passes' weights: pages of every set,
    # and pages shorter than the window (the first and last blocks read the page's ends).
    config = load_config()
    feature_config = config.overlay({"features": {"window": window}}, "test")
    ex = FeatureExtractor(feature_config)
    ids = packaged.attribute_ids
    pages = [segment_blocks(decode_html(p.read_html()).text, config).blocks
             for p in sampled_pages(data_dir, 131)]
    pages += [pages[0][:1], pages[0][:2], pages[0][:3]]
    states = [packaged.tagger().state, packaged.first_tagger().state]
    for blocks in pages:
        rows = ex.extract(table_of(blocks), None, ids)
        window_rows = window_rows_of(ex, table_of(blocks), None, ids)
        own = FlatRows([row[:k] for row, k in zip(rows, rows.own_counts)])
        assert len(window_rows) == len(blocks)
        for state in states:
            assert np.allclose(window_rows.sum(state), FlatRows(rows).sum(state), rtol=0, atol=1e-9)
            assert np.allclose(window_rows.own_only().sum(state), own.sum(state), rtol=0, atol=1e-9)
        if window:  # the neighbours' attributes weigh: leaving them out changes the scores
            assert not np.allclose(window_rows.sum(states[0]), own.sum(states[0]))


def test_the_window_deals_local_ids_only_to_names_a_model_knows(packaged):
    # Every name no model knows, at any offset, is local id 0 (all its ids 0) and is not kept, so the ids are
    # bounded by the model's vocabulary and are never reset; a known name keeps its local id, whose column holds its
    # own id and its ids as each neighbour sees it.
    ex = packaged.extractor()
    ids = packaged.attribute_ids
    window = window_ids(ex, ids)
    size = len(window)
    assert [window[f"tag.self=no-such-element-{k}"] for k in range(1000)] == [0] * 1000
    assert len(window) == size and window.table()[:, 0].tolist() == [0] * (1 + len(window.offsets))
    known = next(name for name in ("tag.self=p", "tag.self=div", "tag.self=a") if ids[name])
    local = window[known]
    assert local > 0 and window[known] == local and len(WindowIds(ex, ids)) == 0
    column = window.table()[:, local].tolist()
    assert column == [ids[known]] + [ex.neighbour_names(offset, ids)[known] for offset in window.offsets]
    with pytest.raises(TypeError):  # parts named without the window are refused, not misread
        WindowRows(ex.extract_parts([], None, ids), ids, ex)


@pytest.mark.parametrize("damage", ["truncated", "magic", "features"])
def test_a_damaged_model_file_is_refused(packaged, damage):
    data = bytearray(packaged.data)
    if damage == "truncated":
        data = data[:-100]
    elif damage == "magic":
        data[:4] = b"XXXX"
    else:
        data[48:52] = b"NOPE"  # the feature chunk's id
    with pytest.raises(ValueError):
        read_crfsuite(bytes(data))


def test_a_vocabulary_gives_each_name_one_id_over_models(packaged):
    main, first = read_crfsuite(packaged.data), read_crfsuite(packaged.first_pass)
    vocabulary = Vocabulary([main, first])
    assert len(vocabulary) == len(set(main.attributes) | set(first.attributes)) + 1
    assert sorted(vocabulary.index.values()) == list(range(1, len(vocabulary)))
    w = vocabulary.state_matrix(first)
    assert w.shape == (len(vocabulary), len(first.labels)) and not w[0].any()


def _train_readable(c1: float) -> bytes:
    """A small CRF trained by CRFsuite itself on readable attribute names (no codes)."""
    trainer = pycrfsuite.Trainer(verbose=False)
    X = [[["a", "b"], ["c"], ["a", "d"]], [["b"], ["c", "d"], ["e"]], [["a"], ["a", "e"], ["b", "c"]]]
    y = [["x", "y", "z"], ["y", "z", "x"], ["x", "x", "y"]]
    for xs, ys in zip(X * 4, y * 4):
        trainer.append(xs, ys)
    trainer.set_params({"c1": c1, "c2": 0.0, "max_iterations": 50})
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "m.crfsuite")
        trainer.train(path)
        return Path(path).read_bytes()


@pytest.mark.parametrize("c1,labels_with_state", [(0.0, 3), (5.0, 2), (50.0, 0)])  # L1 prunes state features
def test_models_stored_readable_and_pruned_ones_tag_as_crfsuite_tags_them(c1, labels_with_state):
    data = _train_readable(c1)
    model_file = read_crfsuite(data)
    assert len(set(model_file.features[model_file.features["type"] == 0]["dst"].tolist())) == labels_with_state
    model = CrfModel(data, {})  # no attribute encoding in the sidecar: the file stores readable names
    assert not model.encoded
    reference = open_tagger(data)
    rows = [["a", "c"], ["b"], ["zzz"], ["d", "e", "a"], ["c"]]
    labels, probabilities = model.tag(rows)
    reference.set(rows)
    assert labels == reference.tag()
    assert probabilities == pytest.approx([reference.marginal(y, i) for i, y in enumerate(labels)], abs=1e-12)


def test_the_threads_taggers_share_the_model_weights_read_only(packaged, data_dir):
    # Each thread tags with a tagger of its own (it holds the sequence it last set) over the one read-only copy of
    # the model's weights: the pool worker's Arrow writer thread labels pages too, and building the weights
    # again for it cost ~2.6 M instructions a page of the job. Pages label the same in either thread.
    from concurrent.futures import ThreadPoolExecutor

    from cleaner.api import clean_html

    model = CrfModel(packaged.data, packaged.meta, packaged.markers, packaged.first_pass)  # (nothing opened yet)
    pages = [p.read_html() for p in sampled_pages(data_dir, 53)][:6]

    def run() -> tuple[list, list]:
        taggers = [model.tagger(), model.first_tagger(), model.typer._tagger()]
        cleaned = [clean_html(page, model=model, keep_blocks=True, all_marginals=True) for page in pages]
        return taggers, [(r.cleaneval, r.labels, r.confidences, r.marginals) for r in cleaned]

    here, alone = run()
    with ThreadPoolExecutor(1) as pool:
        there, together = pool.submit(run).result()
    assert together == alone
    for mine, theirs in zip(here, there):
        assert mine is not theirs
        assert mine.state is theirs.state and mine.transitions is theirs.transitions
        for array in (mine.state, mine.transitions):
            assert not array.flags.writeable
            with pytest.raises(ValueError):
                array[0, 0] = 1.0
    assert not model._both_states.flags.writeable
