"""The marker typer (cleaner.label.markers): segments, targets, training, and the model files."""

from __future__ import annotations

import json

import pycrfsuite
import pytest

from cleaner.api import clean_html
from cleaner.config import load_config
from cleaner.label.markers import (
    MarkerSettings,
    MarkerTyper,
    PageLayout,
    block_attributes,
    gold_markers,
    readable_names,
    segment_features,
    segment_spans,
    train_typer,
    training_sequence,
    typed_rows,
)
from cleaner.label.model import ModelError, copy_model, load_model, markers_path
from cleaner.page.segment import segment_blocks

SETTINGS = MarkerSettings.from_config(load_config())


def test_spans_follow_markers_and_end_at_other():
    labels = ["other", "header", "paragraph", "continuation", "other", "continuation", "list", "list"]
    assert segment_spans(labels) == [(1, 2), (2, 4), (6, 7), (7, 8)]
    assert segment_spans(["other", "continuation"]) == []


def test_gold_markers_carry_the_segment_marker_to_its_continuations():
    assert gold_markers(["header", "continuation", "other", "list", "continuation"]) == [
        "header", "header", None, "list", "list"]


def test_settings_round_trip_through_the_sidecar():
    assert MarkerSettings.from_meta(json.loads(json.dumps(SETTINGS.to_meta()))) == SETTINGS


def test_disabled_typer_has_no_settings():
    config = load_config().overlay({"markers": {"enabled": False}}, "test")
    assert MarkerSettings.from_config(config) is None


def _page(html: str):
    blocks = segment_blocks(html).blocks
    texts = [b.text for b in blocks]
    words = [len(t.split()) for t in texts]
    return blocks, texts, words


# A page of headings and paragraphs whose block CRF (here: a fixed labelling with flat
# marginals) called every segment a paragraph; the gold marks the <h2> lines as headers.
HTML = "".join(f"<h2>Part {i} of the story</h2><p>It went on for a while, and then it stopped. Then more.</p>"
               for i in range(4))


def _flat(labels, positions):
    return [[1 / 3] * len(positions) for _ in labels]


def test_typer_learns_what_the_block_crf_missed():
    blocks, texts, words = _page(HTML)
    assert len(blocks) == 8
    crf = ["paragraph"] * 8
    gold = ["header", "paragraph"] * 4
    layout = [block_attributes(b, SETTINGS) for b in blocks]
    seq = training_sequence(crf, _flat, layout.__getitem__, texts, words, gold, SETTINGS)
    assert seq is not None and seq[1] == gold
    typer = MarkerTyper(train_typer([seq] * 5, SETTINGS), SETTINGS)
    assert typer.retype(crf, _flat, layout.__getitem__, texts, words) == gold
    # It changes markers only: kept text and segment starts stay as the block CRF said.
    mixed = ["paragraph", "paragraph", "continuation", "other", "paragraph", "paragraph", "other", "other"]
    out = typer.retype(mixed, _flat, layout.__getitem__, texts, words)
    assert [y == "other" for y in out] == [y == "other" for y in mixed]
    assert [y == "continuation" for y in out] == [y == "continuation" for y in mixed]


def test_trained_model_carries_its_typer(small_model):
    model = load_model(small_model)
    assert model.typer is not None
    side = json.loads(small_model.with_name(small_model.name + ".json").read_text())
    assert markers_path(small_model).name == "small.markers.crfsuite"
    assert side["markers"]["training_documents"] > 0
    assert side["model_hash"] == model.hash
    r = clean_html(HTML.encode(), model=model)
    assert r.status == "cleaned" and r.cleaneval.startswith("<")


def _copy(small_model, folder):
    path = copy_model(small_model, folder / "m.crfsuite")
    return path, markers_path(path)


def test_a_typer_file_that_does_not_match_its_sidecar_is_refused(small_model, tmp_path):
    # A model is its files; copied under another name they load together.
    path, _ = _copy(small_model, tmp_path / "ok")
    assert load_model(path).typer is not None
    path, typer = _copy(small_model, tmp_path / "damaged")
    typer.write_bytes(typer.read_bytes()[:-10])
    with pytest.raises(ModelError, match="does not match"):
        load_model(path)
    path, typer = _copy(small_model, tmp_path / "missing")
    typer.unlink()
    with pytest.raises(ModelError, match="cannot read the marker typer"):
        load_model(path)


class _CheckedTyper(MarkerTyper):
    """The shipped typer, which also tags each page's segments with CRFsuite's own tagger, to compare."""

    def __init__(self, data: bytes, settings):
        super().__init__(data, settings)
        self.reference = pycrfsuite.Tagger()
        self.reference.open_inmemory(data)
        self.segments = 0

    def retype(self, labels, marginals_at, block_attrs, texts, word_counts):
        retyped = super().retype(labels, marginals_at, block_attrs, texts, word_counts)
        spans = segment_spans(labels)
        x = segment_features(spans, labels, marginals_at, block_attrs, texts, word_counts, self.settings)
        expected = list(labels)
        for (s, _), marker in zip(spans, self.reference.tag(x) if spans else []):
            expected[s] = marker
        assert retyped == expected
        self.segments += len(spans)
        return retyped


def test_the_typer_tags_every_segment_as_crfsuite_does(data_dir):
    # The typer's tagging moved from CRFsuite's tagger to the block CRF's (scores from the weights, the compiled
    # chain): on the shared pages it must give CRFsuite's markers, segment for segment.
    from conftest import sampled_pages

    model = load_model()
    typer = _CheckedTyper(model.typer.data, model.typer.settings)
    model.__dict__["typer"] = typer  # (a cached property: this model's typer is the checked one)
    for page in sampled_pages(data_dir, 30):
        clean_html(page.read_html(), model=model)
    assert typer.segments > 3000  # (4,693 segments of 151 pages)


class _RowsTyper(MarkerTyper):
    """The shipped typer, which also writes each page's rows from its blocks (typed_rows, as retype does) and as their
    readable reference does (segment_features, reading block_attributes), in ids and readable, to compare."""

    def __init__(self, data: bytes, settings):
        super().__init__(data, settings)
        self.segments = 0

    def retype(self, labels, marginals_at, block_attrs, texts, word_counts):
        assert isinstance(block_attrs, PageLayout)  # (clean_html's layout: the one whose blocks retype reads)
        blocks, settings, spans = block_attrs.blocks, self.settings, segment_spans(labels)
        layout = [block_attributes(b, settings) for b in blocks.blocks()]
        for names in (self._names, readable_names(settings)):
            rows = typed_rows(spans, labels, marginals_at, blocks, texts, word_counts, names)
            assert rows == segment_features(spans, labels, marginals_at, layout.__getitem__, texts, word_counts,
                                            settings, names)
        self.segments += len(spans)
        return super().retype(labels, marginals_at, block_attrs, texts, word_counts)


def test_the_rows_read_from_the_blocks_are_the_references(data_dir):
    """Every 15th shared page of every set (every 45th of wcxb, whose pages of 2025 are long): typed_rows gives
    segment_features' rows, the same attributes in the same order (their scores are summed in that order)."""
    from conftest import sampled_pages

    from cleaner.gold.data import find_pages

    model = load_model()
    typer = _RowsTyper(model.typer.data, model.typer.settings)
    model.__dict__["typer"] = typer  # (a cached property: this model's typer is the checking one)
    for page in sampled_pages(data_dir, 15) + find_pages(data_dir, ["wcxb"])[::45]:
        clean_html(page.read_html(), model=model)
    assert typer.segments > 5000


def test_the_compiled_text_shape_is_the_references():
    """What the typer reads of a segment's text, compiled (compiled_text.text_shape), equals its reference
    (markers.text_shape): words, capitalised words, all caps and a sentence ending inside, in every script, with
    whitespace that is not a space and a titlecase letter (ǅ) among them."""
    import random

    compiled = pytest.importorskip("cleaner.page.compiled_text", reason="not built (scripts/build_native.py)")
    from cleaner.label.markers import text_shape

    rng = random.Random(3)
    alphabet = "aA .!?\t\n\x1cÉé ǅ\u2028İ中x"
    texts = ["", "A. b", "ABC DEF", "ABC déf", "ǅ", "x.\u00a0y", "Hi!  There", "ÉTÉ 2025", "中文。文"]
    texts += ["".join(rng.choice(alphabet) for _ in range(n)) for n in range(60) for _ in range(50)]
    for text in texts:
        assert compiled.text_shape(text) == text_shape(text), repr(text)


@pytest.mark.parametrize("bins", [SETTINGS.word_bins, (1, 80, 40), (5,)])
def test_the_typer_names_a_count_as_its_bin_whatever_the_bins_order(bins):
    # TyperNames looks a count's bin up in a table up to the largest bin; above it the name is "more", as _bin says.
    from dataclasses import replace

    from cleaner.label.markers import TyperNames, _bin

    names = TyperNames(replace(SETTINGS, word_bins=bins))
    for value in range(0, 3 * max(bins) + 2):
        assert names.binned(names.words, value) == "words=" + _bin(value, bins), value
        assert names.binned(names.segments, value) == "page.segments=" + _bin(value, bins), value
