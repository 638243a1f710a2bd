"""A model's attribute rows written as C integers (cleaner/page/compiled_rows.pyx) against their readable reference
(cleaner.page.features.FeatureExtractor.parts_reference): the same ids, in the same order, block by block."""

from __future__ import annotations

import gzip

import numpy as np
import pytest

compiled = pytest.importorskip("cleaner.page.compiled_rows", reason="not built (scripts/build_native.py)")

from cleaner.config import load_config  # noqa: E402
from cleaner.label.crf import WindowRows, window_ids, window_rows  # noqa: E402
from cleaner.label.model import load_model  # noqa: E402
from cleaner.page.cues import block_cues, page_cue_context  # noqa: E402
from cleaner.page.features import AttributeParts  # noqa: E402
from cleaner.page.segment import BlockTable  # noqa: E402
from cleaner.page.pipeline import PageRejected, read_page  # noqa: E402


def _pages(data_dir, every: int):
    """Every `every`-th shared page (the heavy sets' too: wcxb's pages of 2025, one in three as often), read."""
    from conftest import sampled_pages

    from cleaner.gold.data import find_pages

    config = load_config()
    for page in sampled_pages(data_dir, every) + find_pages(data_dir, ["wcxb"])[:: 3 * every]:
        data = page.html_path.read_bytes()
        if page.html_path.name.endswith(".gz"):
            data = gzip.decompress(data)
        try:
            yield page.key, read_page(data, config).segmentation
        except PageRejected:
            continue


def _flat(rows: list[list]) -> tuple[np.ndarray, np.ndarray]:
    lens = [len(r) for r in rows]
    starts = np.zeros(len(rows), np.intp)
    np.cumsum(lens[:-1], out=starts[1:])
    return np.array([a for r in rows for a in r], np.intp), starts


def _both(model, seg) -> tuple[AttributeParts, AttributeParts]:
    ex = model.extractor()
    codec = model.naming_codec()
    window = window_ids(ex, codec)
    stats = ex.counts(seg.table)
    fast = ex.extract_parts(seg.table, stats, codec, seg.page, window)
    names = ex.attribute_names(codec, window)
    cue_feats = (block_cues(page_cue_context(ex.cues, names.cues, seg.table, stats, seg.page), seg.table, stats)
                 if ex.on.cue else [])
    return fast, ex.parts_reference(seg.table, stats, names, cue_feats, window)


@pytest.mark.parametrize("model_name", ["default", "cleaneval-2012"])
def test_the_compiled_rows_are_the_references_on_the_shared_pages(data_dir, model_name):
    """Every 15th shared page of every set (every 45th of wcxb), under the default (the `cue` family on, a
    convention's pair ids) and the stacked 2012 model (no cues): the compiled pass ran, and its ids and row starts are
    the reference's."""
    model = load_model(model_name)
    checked = 0
    for key, seg in _pages(data_dir, 15):
        fast, ref = _both(model, seg)
        assert fast.flat is not None and not fast.shared and not fast.private, "the compiled pass did not run"
        shared, shared_starts, shared_empty, private, private_starts = fast.flat
        ref_shared, ref_shared_starts = _flat(ref.shared)
        ref_private, ref_private_starts = _flat(ref.private)
        assert np.array_equal(shared, ref_shared) and np.array_equal(shared_starts, ref_shared_starts), key
        assert np.array_equal(private, ref_private) and np.array_equal(private_starts, ref_private_starts), key
        assert shared_empty == any(not row for row in ref.shared), key
        checked += 1
    assert checked > 220


def test_window_rows_score_the_compiled_rows_as_the_references(data_dir):
    """What the CRF reads: a convention's rows laid out from the compiled pass's WindowRows are those laid out from
    the reference's lists, and their state scores are equal bit for bit."""
    model = load_model("default")
    ex, codec = model.extractor(), model.naming_codec()
    state = model.tagger().state
    name = model.conventions.resolve("main")
    bias = model.attribute_ids[model.conventions.bias(name)]
    variant = model.conventions.names.index(name)
    for key, seg in list(_pages(data_dir, 60)):
        fast, ref = _both(model, seg)
        # (the default's rows name pair ids, which only a convention's rows lay out as the model's ids)
        a = WindowRows(fast, codec, ex).conjoined(variant, bias)
        b = WindowRows(ref, codec, ex).conjoined(variant, bias)
        assert np.array_equal(a.flat, b.flat) and np.array_equal(a.starts, b.starts), key
        scores_a, scores_b = a.sum(state), b.sum(state)
        assert np.array_equal(scores_a, scores_b), key
        assert len(window_rows(ex, seg.table, None, codec, seg.page)) == len(seg.table)


def test_a_page_without_blocks_gives_empty_rows():
    model = load_model("default")
    ex, codec = model.extractor(), model.naming_codec()
    parts = ex.extract_parts(BlockTable(), None, codec, None, window_ids(ex, codec))
    shared, shared_starts, shared_empty, private, private_starts = parts.flat
    assert len(shared) == len(shared_starts) == len(private) == len(private_starts) == 0 and not shared_empty
    assert len(WindowRows(parts, codec, ex)) == 0


def test_the_dup_counts_fold_case_as_the_reference_does():
    """The `dup` family counts a page's texts by their case fold. The compiled pass folds only the texts whose fold
    another text may share (_dup_keys: an ASCII text's fold read lowered, a signature of each fold counted): texts
    equal but for case, non-ASCII texts folding to ASCII ones (the long s, the Kelvin sign, ß and ss), a fold of
    another length than its text, empty and one-character texts, and many unique texts all get the reference's ids.
    """
    texts = (["Read more", "READ MORE", "read more", "Read More", "Straße", "STRASSE", "strasse", "ſtop", "stop",
              "\u212aelvin", "kelvin", "Ǆ", "ǆ", "x", "X", "é", "É", "", "naïve café", "NAÏVE CAFÉ", "ß"]
             + [f"a text of its own number {i} that no other text repeats" for i in range(300)])
    body = "".join(f"<p>{t}</p>" if t else "<p><img src=x.png></p>" for t in texts)
    html = f"<html><head><title>t</title></head><body>{body}<p>Read more</p></body></html>".encode()
    seg = read_page(html, load_config()).segmentation
    model = load_model("default")
    assert model.extractor().on.dup
    fast, ref = _both(model, seg)
    ref_shared, ref_shared_starts = _flat(ref.shared)
    ref_private, ref_private_starts = _flat(ref.private)
    shared, shared_starts, _, private, private_starts = fast.flat
    assert np.array_equal(shared, ref_shared) and np.array_equal(shared_starts, ref_shared_starts)
    assert np.array_equal(private, ref_private) and np.array_equal(private_starts, ref_private_starts)
    kept = {b.text for b in seg.blocks}
    assert {"READ MORE", "Straße", "STRASSE", "ſtop", "\u212aelvin", "Ǆ", "NAÏVE CAFÉ"} <= kept  # (blocks of their own)
