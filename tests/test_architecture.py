"""docs/architecture.md's route for a new labeller, followed by a toy one: a `BlockLabeller` subclass, cleaned
with through the seed systems' pipeline (`cleaner.learn.systems_clean.clean_page`, which reads pages with
`cleaner.page.pipeline.read_page` as `clean_html` does), registered in `SYSTEMS` and scored by the evaluation path of every `--model-kind`."""

from __future__ import annotations

from cleaner.api import clean_html
from cleaner.config import load_config
from cleaner.gold.data import find_pages, load_folds
from cleaner.learn.evaluate import figures
from cleaner.labels import CONTENT_LABELS
from cleaner.page.pipeline import read_page
from cleaner.label.systems import SYSTEMS, BlockLabeller, PageInput, run_labels
from cleaner.learn.systems_clean import clean_page
from cleaner.learn.systems_evaluate import cross_validate_system, prepare_docs

MIN_WORDS = 12


class LongBlocks(BlockLabeller):
    """Keeps the blocks of at least MIN_WORDS words: the smallest labeller that still tells text from menus."""

    kind = "long-blocks"
    trainable = False

    def predict(self, page: PageInput) -> list[str]:
        return run_labels([len(b.text.split()) >= MIN_WORDS for b in page.blocks])


def test_a_toy_labeller_cleans_a_real_page_through_the_public_pipeline(data_dir):
    data = (data_dir / "cleaneval-dev" / "html" / "1.html").read_bytes()
    result = clean_page(data, LongBlocks(), keep_blocks=True)
    assert result.ok, result.reason
    # it labelled the blocks every labeller gets: those read_page cuts, the ones the CRF labels too
    crf = clean_html(data, keep_blocks=True)
    assert [b.text for b in result.blocks] == [b.text for b in read_page(data, load_config()).blocks]
    assert [b.text for b in result.blocks] == [b.text for b in crf.blocks]
    # the output is the blocks it kept, in page order, and nothing else
    kept = [b.text for b, y in zip(result.blocks, result.labels) if y in CONTENT_LABELS]
    short = [b.text for b in result.blocks if 0 < len(b.text.split()) < MIN_WORDS]
    assert kept and short
    position = 0
    for text in kept:
        found = result.plain.find(text, position)
        assert found >= 0, text
        position = found + len(text)
    assert len(result.plain.split()) == sum(len(t.split()) for t in kept)
    assert result.model_hash == "long-blocks"


def test_a_page_a_toy_labeller_cannot_read_is_refused_as_the_crf_refuses_it():
    for data, reason in ((b"", "empty"), (b"  \n ", "empty"), (bytes(range(32)) * 100, "not_text")):
        result = clean_page(data, LongBlocks())
        assert (result.status, result.reason) == ("rejected", reason)
        assert clean_html(data).reason == reason


def test_a_registered_toy_labeller_is_cross_validated_like_every_model_kind(data_dir, monkeypatch):
    monkeypatch.setitem(SYSTEMS, LongBlocks.kind, LongBlocks)
    pages = find_pages(data_dir, ["cleaneval-dev"])[:20]
    folds = load_folds(data_dir)
    docs = prepare_docs(pages, load_config(), folds, progress=False)
    results = cross_validate_system(LongBlocks.kind, docs, progress=False, fold_ids=[1])
    assert sorted(r.key for r in results) == sorted(p.key for p in pages if folds.get(p.key) == 1)
    (row,) = figures(results)
    assert row.n_docs == len(results) > 0
    assert 0.3 < row.scores["macro_f1"] <= 1  # it keeps text: well above nothing, scored by the one scorer


def test_the_command_line_offers_every_registered_labeller():
    # docs/architecture.md: a labeller becomes a --model-kind by SYSTEMS and cli.MODEL_KINDS together
    from cleaner.label import systems
    from cleaner.tools import cli

    assert cli.MODEL_KINDS == systems.MODEL_KINDS

