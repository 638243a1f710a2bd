"""The CRF's inference (cleaner.label.compiled_chain, compiled; cleaner.label.chain, its readable reference).

What a user relies on: the compiled chain is what labels pages, and it gives exactly the floats of its
reference. tests/test_crf.py shows that both give CRFsuite's labels and marginals.
"""

from __future__ import annotations

import math
import os

import numpy as np
import pytest
from conftest import sampled_pages

import cleaner
from cleaner.config import load_config
from cleaner.label import chain, crf
from cleaner.label.model import load_model
from cleaner.page.decode import decode_html
from cleaner.page.segment import segment_blocks, table_of


def _compiled():
    if crf.compiled_chain is None:
        if os.environ.get(cleaner.PURE_PYTHON_ENV, "") not in ("", "0"):
            pytest.skip("pure Python asked for")
        pytest.fail(f"the compiled chain is not built: {cleaner.NATIVE_STATUS}")
    return crf.compiled_chain


def _both(state: np.ndarray, trans: np.ndarray):
    """(compiled path, compiled marginals, reference path, reference marginals)."""
    compiled = _compiled()
    state = np.ascontiguousarray(state, dtype=np.float64)
    trans = np.ascontiguousarray(trans, dtype=np.float64)
    path = np.empty(len(state), np.intp)
    table = np.empty_like(state)
    compiled.viterbi(state, trans, path)
    compiled.marginals(state, trans, table)
    return path.tolist(), table.tolist(), chain.viterbi(state.tolist(), trans.tolist()), \
        chain.marginals(state.tolist(), trans.tolist())


def test_the_compiled_chain_is_what_tags_pages():
    _compiled()
    assert "label.compiled_chain" in cleaner.native_modules()


def test_the_compiled_chain_equals_its_reference_to_the_last_bit_on_hard_sequences():
    rng = np.random.default_rng(47)
    cases = [
        (rng.normal(0, 3, (300, 5)), rng.normal(0, 2, (5, 5))),  # an ordinary page
        (np.zeros((40, 5)), np.zeros((5, 5))),  # every path ties: the first label wins everywhere
        (np.round(rng.normal(0, 1, (60, 5))), np.round(rng.normal(0, 1, (5, 5)))),  # many ties among integers
        (rng.normal(0, 40, (200, 5)), rng.normal(0, 30, (5, 5))),  # scores whose exponentials under/overflow
        (rng.normal(0, 1, (1, 5)), rng.normal(0, 1, (5, 5))),  # one block
        (rng.normal(0, 1, (25, 3)), rng.normal(0, 1, (3, 3))),  # another number of labels
    ]
    for state, trans in cases:
        path, table, ref_path, ref_table = _both(state, trans)
        assert path == ref_path
        assert table == ref_table  # floats equal, not close (NaN-free: NaN != NaN would fail here)
    path, table, _, _ = _both(np.zeros((40, 5)), np.zeros((5, 5)))
    assert path == [0] * 40 and all(math.isclose(p, 0.2) for row in table for p in row)


def test_an_empty_sequence_and_mismatched_shapes():
    compiled = _compiled()
    empty = np.zeros((0, 5))
    compiled.viterbi(empty, np.zeros((5, 5)), np.empty(0, np.intp))
    assert chain.viterbi([], [[0.0] * 5] * 5) == [] and chain.marginals([], [[0.0] * 5] * 5) == []
    with pytest.raises(ValueError):
        compiled.viterbi(np.zeros((3, 4)), np.zeros((5, 5)), np.empty(3, np.intp))
    with pytest.raises(ValueError):
        compiled.marginals(np.zeros((3, 5)), np.zeros((5, 5)), np.empty((2, 5)))


def test_shared_pages_chain_alike_compiled_and_in_the_reference(data_dir):
    # The default model's scores of pages of every set: the compiled chain and its reference give the same
    # labels and the same marginals, float for float. (tests/test_crf.py: both are CRFsuite's on the model.)
    model = load_model()
    tagger = model.tagger()
    config = load_config()
    checked = 0
    for page in sampled_pages(data_dir, 53):
        blocks = segment_blocks(decode_html(page.read_html()).text, config).blocks
        if not blocks:
            continue
        readable = model.conventions.apply(model.extractor().extract(table_of(blocks)), None)
        scores = tagger.scores(model.attribute_ids.encode(readable))
        path, table, ref_path, ref_table = _both(scores, tagger.transitions)
        assert path == ref_path and table == ref_table, page.key
        checked += 1
    assert checked >= 40


def _reference_sums(rows: crf.FlatRows, state: np.ndarray, flat: np.ndarray) -> np.ndarray:
    """FlatRows.sum as NumPy computes it (the reference of compiled_chain.row_sums): gather, then reduceat."""
    out = np.zeros((rows.n, state.shape[1]))
    full = np.flatnonzero(np.diff(rows.starts, append=len(flat)))
    if len(full):
        out[full] = np.add.reduceat(state[flat], rows.starts[full])
    return out


def test_block_scores_are_summed_as_the_reference_sums_them_to_the_last_bit():
    rng = np.random.default_rng(7)
    # A model's labels, both passes' side by side, more labels, and a state that is not C-ordered.
    for labels, order in ((5, "C"), (10, "C"), (17, "C"), (5, "F")):
        state = rng.normal(size=(400, labels)) * 10.0 ** rng.integers(-12, 12, size=(400, 1))
        state[0] = 0.0
        state = np.asarray(state, order=order)
        for lens in ([3, 0, 5, 1, 0, 0, 7], [0, 0, 0, 4], [1] * 50, list(rng.integers(0, 90, size=300)),
                     [129, 0, 1000, 8], [7, 8, 9, 15, 16, 17, 127, 128, 129, 130, 255, 256, 257]):
            flat = rng.integers(0, 400, size=int(sum(lens)))
            rows = crf.FlatRows(flat=flat.astype(np.intp), lens=list(lens))
            got = rows.sum(state)
            assert got.tobytes() == _reference_sums(rows, state, rows.flat).tobytes()  # (the sign of a zero too)


def test_rows_are_flattened_and_their_starts_found_as_the_reference_does():
    compiled = _compiled()
    rows = [[3, 1, 4], [], [1, 5, 9, 2, 6], [5]]
    out = np.empty(9, np.intp)
    compiled.flatten_rows(rows, out)
    assert out.tolist() == [3, 1, 4, 1, 5, 9, 2, 6, 5]
    with pytest.raises(ValueError):
        compiled.flatten_rows(rows, np.empty(8, np.intp))

    rows = [["b", "a"], [], ["b", "c", "a"], ["d"]]
    starts = np.empty(len(rows), np.intp)
    assert compiled.row_starts(rows, starts) == (6, 1) and starts.tolist() == [0, 2, 2, 5]
