"""Annotation conventions as model input: a real convention-aware CRF trained on shared pages."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from cleaner.config import Config, _merge, load_config
from cleaner.page.segment import table_of
from cleaner.label.convention import ConventionError, Conventions
from cleaner.label.decide import DecisionSettings


@pytest.fixture(scope="module")
def convention_model(tmp_path_factory, data_dir):
    """Trained like `cleaner train --conventions` on 12 CleanEval-dev and 12 Dragnet pages."""
    from cleaner.gold.data import find_pages
    from cleaner.label.model import CrfModel
    from cleaner.learn.cv import trainable
    from cleaner.learn.train import fit, model_meta, prepare

    config = load_config()
    conventions = Conventions.from_config(config)
    pages = find_pages(data_dir, ["cleaneval-dev"])[:12] + find_pages(data_dir, ["dragnet"])[:12]
    docs = prepare(pages, config, processes=1, progress=False)
    data = fit(trainable(docs, 0.5), config, c1=0.05, c2=0.05, max_iterations=30, conventions=conventions)
    meta = model_meta(config, None, c1=0.05, c2=0.05, max_iterations=30, manifest="test", n_docs=len(docs),
                      conventions=conventions)
    return CrfModel(data, meta).save(tmp_path_factory.mktemp("model") / "conv.crfsuite"), docs


def test_each_set_gets_the_convention_of_its_gold():
    c = Conventions.from_config(load_config())
    # wcxb and any other set keep the main content: the default; the article sets the headline and the article
    assert c.default == "main" and c.of("wcxb") == "main" and c.of("my-own-set") == "main"
    assert {c.of(s) for s in ("chaos", "fundus", "big5-2005", "big5-2017")} == {"article"}
    assert c.of("dragnet") == "dragnet" and c.of("cleaneval-final") == "cleaneval" and c.of("cleanportaleval") == "cleaneval"
    rows = c.apply([["idclass.nav", "tag.self=a", "-1:tag.self=p", "char.alpha=5"]], "dragnet")
    assert rows == [["idclass.nav", "tag.self=a", "-1:tag.self=p", "char.alpha=5", "conv=dragnet",
                     "dragnet|idclass.nav", "dragnet|tag.self=a"]]  # only the block's own id/class and tags
    with pytest.raises(ConventionError, match="knows main, article, cleaneval, dragnet"):
        c.apply(rows, "wikipedia")


def test_a_convention_unknown_to_the_config_is_refused():
    cfg = Config(_merge(load_config().data, {"train": {"convention_of": {"dragnet": "news"}}}))
    with pytest.raises(ConventionError, match="news"):
        Conventions.from_config(cfg)


def test_the_convention_changes_what_the_model_keeps(convention_model):
    from cleaner.label.model import load_model

    path, docs = convention_model
    model = load_model(path)
    assert model.conventions.names == ("main", "article", "cleaneval", "dragnet")
    changed = 0
    for d in docs:
        p_ce = model.label(d.features, d.word_counts, DecisionSettings(), convention="cleaneval").p_other
        p_ar = model.label(d.features, d.word_counts, DecisionSettings(), convention="dragnet").p_other
        changed += any(abs(a - b) > 1e-6 for a, b in zip(p_ce, p_ar))
    assert changed >= len(docs) // 2
    # no convention = the model's default
    d = docs[0]
    assert model.tag(d.features, convention=None) == model.tag(d.features, convention="main")


def test_clean_html_takes_the_convention_from_the_config(convention_model, data_dir):
    from cleaner.api import clean_html
    from cleaner.gold.data import find_pages
    from cleaner.label.model import load_model

    path, _ = convention_model
    model = load_model(path)
    html = find_pages(data_dir, ["dragnet"])[0].html_path.read_bytes()
    outs = {}
    for conv in ("cleaneval", "dragnet"):
        cfg = Config(_merge(load_config().data, {"model": {"convention": conv}}))
        r = clean_html(html, model=model, config=cfg, keep_blocks=True)
        assert r.status == "cleaned"
        outs[conv] = r.confidences
    assert outs["cleaneval"] != outs["dragnet"]


def test_a_model_without_conventions_refuses_one(small_model):
    from cleaner.label.model import load_model

    model = load_model(small_model)
    assert model.conventions is None and model.check_convention("") is None
    with pytest.raises(ConventionError, match="not trained with annotation conventions"):
        model.check_convention("article")


def test_cli_checks_the_convention_before_cleaning(convention_model, small_model, data_dir, tmp_path):
    path, _ = convention_model
    page = next((data_dir / "cleaneval-dev" / "html").glob("*.html"))
    cli = [sys.executable, "-m", "cleaner.tools.cli", "clean", str(page), "--out", str(tmp_path / "o")]
    ok = subprocess.run(cli + ["--model", str(path), "--convention", "dragnet", "-q"], capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr
    assert (tmp_path / "o" / (page.stem + ".txt")).exists()
    bad = subprocess.run(cli + ["--model", str(path), "--convention", "wiki", "-q"], capture_output=True, text=True)
    assert bad.returncode == 4 and "unknown convention 'wiki'" in bad.stderr
    plain = subprocess.run(cli + ["--model", str(small_model), "--convention", "article", "-q"],
                           capture_output=True, text=True)
    assert plain.returncode == 4 and "not trained with annotation conventions" in plain.stderr


def test_a_convention_aware_model_tags_its_ids_as_its_readable_attributes(convention_model):
    # clean_html hands the model ids (WindowRows, named with its pair ids), whose conventions' copies are laid
    # out from the ids; what it was trained on are readable rows rewritten by Conventions.apply
    from cleaner.label.crf import WindowRows
    from cleaner.label.model import load_model
    from cleaner.page.segment import segment_blocks

    path, _ = convention_model
    model = load_model(path)
    blocks = segment_blocks("<div class=nav><a href=/>Home</a></div><p>Some text here.</p>").table
    rows = model.features(blocks)
    assert isinstance(rows, WindowRows)
    readable = model.extractor().extract(blocks)
    for conv in model.conventions.names:
        assert model.tag(rows, convention=conv) == model.tag(readable, convention=conv)


def test_conventions_that_conjoin_a_neighbours_attributes_are_applied_to_readable_rows(convention_model):
    # the pair ids name a block's own attributes only: a model whose conventions copy `-1:...` attributes
    # is handed readable rows, and tags as it was trained
    from cleaner.label.model import CrfModel, load_model
    from cleaner.page.segment import segment_blocks

    path, _ = convention_model
    trained = load_model(path)
    meta = dict(trained.meta, conventions=dict(trained.meta["conventions"], attributes=["idclass.", "-1:tag."]))
    model = CrfModel(trained.data, meta)
    blocks = segment_blocks("<div class=nav><a href=/>Home</a></div><p>Some text here.</p>").table
    rows = model.features(blocks)
    assert all(isinstance(a, str) for row in rows for a in row)
    assert any(a.startswith("dragnet|-1:tag.") for row in model.conventions.apply(rows, "dragnet") for a in row)
    assert model.tag(rows, convention="dragnet")[0]


@pytest.fixture(scope="module")
def packaged():
    """The packaged default: convention-aware (main, cleaneval, dragnet), trained on every shared set."""
    from cleaner.label.model import load_model

    return load_model()


def _shared_segmentations(data_dir, model):
    """Pages of every shared set (wcxb too), segmented as clean_html segments them for `model`."""
    from cleaner.gold.data import find_pages
    from cleaner.page.decode import decode_html
    from cleaner.page.segment import segment_blocks
    from conftest import sampled_pages

    config = model.feature_config(load_config())
    pages = sampled_pages(data_dir, 97) + find_pages(data_dir, ["wcxb"])[::120]
    segs = [segment_blocks(decode_html(p.read_html()).text, config) for p in pages]
    return [s for s in segs if s.blocks]


@pytest.mark.parametrize("window, max_names", [(0, None), (1, None), (2, None), (1, 40)])
def test_ids_lay_out_each_conventions_rows_as_the_readable_attributes_do(packaged, data_dir, window, max_names,
                                                                         monkeypatch):
    # The fast path (WindowRows.conjoined over the pair ids of ConjoinedIds) against the readable path the
    # model was trained on (FeatureExtractor.extract, Conventions.apply, then ids), id for id and in the same
    # order, under each convention: pages of every set, pages shorter than the window (their first and last
    # blocks read the page's ends), and with `max_names` the codec's name cache emptied before nearly every page
    # (the extractor keeps the pair ids it was given: they must stay valid).
    from cleaner.label.crf import AttributeIds, FlatRows, window_rows
    from cleaner.page.features import FeatureExtractor

    if max_names:
        monkeypatch.setattr(AttributeIds, "MAX_ENTRIES", max_names)
    ex = FeatureExtractor(packaged.feature_config().overlay({"features": {"window": window}}, "test"),
                          tuple(packaged.meta["families"]))
    conventions, codec, ids = packaged.conventions, packaged.convention_ids, packaged.attribute_ids
    segs = _shared_segmentations(data_dir, packaged)
    pages = [s.blocks for s in segs] + [segs[0].blocks[:k] for k in (1, 2, 3)]
    pairs = 0
    for blocks in pages:
        rows = window_rows(ex, table_of(blocks), None, codec)
        readable = ex.extract(table_of(blocks), None, None)
        for k, conv in enumerate(conventions.names):
            laid_out = FlatRows(ids.encode(conventions.apply(readable, conv)))
            # the compiled pass (cleaner/label/compiled_chain.pyx, when built) and its NumPy reference alike
            for fast in (rows.conjoined(k, ids[conventions.bias(conv)]),
                         rows.conjoined_reference(k, ids[conventions.bias(conv)])):
                assert fast.flat.tolist() == laid_out.flat.tolist()
                assert fast.starts.tolist() == laid_out.starts.tolist()
        pairs += int((rows.private.flat >= codec.first_pair).sum())
    assert pairs > len(pages)  # (id/class tokens and tags were conjoined: the test saw copies)


def test_a_convention_aware_model_tags_the_fast_path_as_the_readable_one(packaged, data_dir):
    # what clean_html gives the packaged convention-aware model, against the readable rows: the same labels and
    # every marginal equal to the last bit, under each convention (the scores are summed in the same order)
    segs = _shared_segmentations(data_dir, packaged)
    ex, settings = packaged.extractor(), DecisionSettings()
    differ = 0
    for s in segs:
        stats = ex.counts(s.table)
        words = stats.words
        fast_rows, readable = packaged.features(s.table, stats), ex.extract(s.table, stats, None)
        by_convention = []
        for conv in packaged.conventions.names:
            fast = packaged.label(fast_rows, words, settings, convention=conv, marginals=True)
            assert fast == packaged.label(readable, words, settings, convention=conv, marginals=True)
            by_convention.append(fast.marginals)
        differ += by_convention[0] != by_convention[2]
    assert differ >= len(segs) // 2  # (the convention is read: `main` and `dragnet` differ)


def test_a_convention_aware_model_is_trained_one_pass(data_dir, tmp_path):
    # The default config trains a stacked model; conventions and stacking were never built
    # together, so `train --conventions` asks for the one-pass overlay instead of guessing.
    from pathlib import Path

    base = [sys.executable, "-m", "cleaner.tools.cli", "train", str(data_dir), "--conventions", "-q",
            "--out", str(tmp_path / "m.crfsuite")]
    r = subprocess.run(base, capture_output=True, text=True)
    assert r.returncode == 2 and "conf/onepass.toml" in r.stderr
    overlay = Path(__file__).resolve().parents[1] / "conf" / "onepass.toml"
    r = subprocess.run(base + ["--config", str(overlay), "--datasets", "nonexistent"], capture_output=True, text=True)
    assert r.returncode == 3 and "conf/onepass.toml" not in r.stderr  # (no such data set: exit 3)


# dragnet/42, a blog post (Paulo Coelho, "13 July: Viva Rosa Mystica!") and its readers' comments: Dragnet's gold
# keeps the comments, the `main` convention the post only.
POST = "I encourage you to visit the Rosa Mystica shrine"
COMMENT = "Sad but I know nothing about Catholic Church"


@pytest.fixture(scope="module")
def post_with_comments(data_dir):
    return data_dir / "dragnet" / "html" / "42.html"


def test_the_default_model_keeps_the_main_content_unless_asked_for_another_convention(post_with_comments):
    """The packaged default is convention-aware and trained on every shared set, old and modern: it cleans by
    `main` unless told otherwise (`clean_html(convention=...)`, or [model] convention of the config), and then the
    model of that convention cleans ([model.by_convention])."""
    from cleaner.api import clean_html
    from cleaner.label.model import load_model

    model = load_model()  # checks its sidecar hash
    assert set(model.conventions.names) == {"main", "article", "cleaneval", "dragnet"} and model.typer is not None
    assert load_config()["model"]["convention"] == "main"
    html = post_with_comments.read_bytes()
    default, main, dragnet = (clean_html(html, convention=c) for c in (None, "main", "dragnet"))
    assert default.ok and main.ok and dragnet.ok
    assert default.cleaneval == main.cleaneval
    assert POST in main.plain and COMMENT not in main.plain
    assert POST in dragnet.plain and COMMENT in dragnet.plain
    by_config = clean_html(html, config=load_config().overlay({"model": {"convention": "dragnet"}}))
    assert by_config.cleaneval == dragnet.cleaneval


def test_a_convention_the_model_does_not_know_is_a_wrong_argument(post_with_comments, small_model):
    """clean_html turns every page's failure into a rejection, but a wrong `convention` is the caller's: raised
    at once, with a line that says what to do. A model trained without conventions still runs with the default
    config (its `main` is passed over)."""
    from cleaner.api import clean_html
    from cleaner.label.model import load_model

    html = post_with_comments.read_bytes()
    with pytest.raises(ConventionError, match="unknown convention 'opinion'; this model knows main, article"):
        clean_html(html, convention="opinion")
    old = load_model(small_model)
    with pytest.raises(ConventionError, match="not trained with annotation conventions"):
        clean_html(html, model=old, convention="main")
    assert clean_html(html, model=old).ok
    # an overlay that asks the old model for a convention: every page says why it was not cleaned
    asked = clean_html(html, model=old, config=load_config().overlay({"model": {"convention": "dragnet"}}))
    assert asked.reason == "internal_error" and "not trained with annotation conventions" in asked.error


def test_cli_cleans_by_the_convention_asked(post_with_comments, tmp_path):
    cli = [sys.executable, "-m", "cleaner.tools.cli", "clean", str(post_with_comments), "--format", "txt", "-q"]
    out = {c: subprocess.run(cli + (["--convention", c] if c else []), capture_output=True, text=True)
           for c in ("", "dragnet")}
    assert all(r.returncode == 0 for r in out.values()), {c: r.stderr for c, r in out.items()}
    assert POST in out[""].stdout and COMMENT not in out[""].stdout
    assert POST in out["dragnet"].stdout and COMMENT in out["dragnet"].stdout
    old = subprocess.run(cli + ["--model", "cleaneval-2012", "--convention", "main"], capture_output=True, text=True)
    assert old.returncode == 4 and "not trained with annotation conventions" in old.stderr
    assert len(old.stderr.strip().splitlines()) == 1
    plain = subprocess.run(cli + ["--model", "cleaneval-2012"], capture_output=True, text=True)
    assert plain.returncode == 0 and POST in plain.stdout


def test_each_convention_is_cleaned_by_the_model_the_config_names_for_it(post_with_comments):
    """[model.by_convention]: without a model, `main` is cleaned by the convention-aware default, and the old sets'
    conventions by the stacked model trained on those sets alone (cleaneval-2012, better on them under
    cross-validation), which tags without a convention: the same output as that model asked for by name. A model
    given still cleans by the convention asked of it."""
    from cleaner.api import clean_html
    from cleaner.label.model import load_model, model_for_convention

    html = post_with_comments.read_bytes()
    default, old = load_model(), load_model("cleaneval-2012")
    by_name = clean_html(html, model=old)
    for convention in ("cleaneval", "dragnet"):
        served = clean_html(html, convention=convention)
        assert served.ok and served.model_hash == old.hash and served.cleaneval == by_name.cleaneval
        by_config = clean_html(html, config=load_config().overlay({"model": {"convention": convention}}))
        assert by_config.model_hash == old.hash and by_config.cleaneval == by_name.cleaneval
    main = clean_html(html, convention="main")
    assert main.model_hash == default.hash and main.cleaneval == clean_html(html, model=default).cleaneval
    assert clean_html(html, model=default, convention="dragnet").model_hash == default.hash
    # an overlay can send a convention to another packaged model: the default then cleans by dragnet
    overlay = load_config().overlay({"model": {"by_convention": {"dragnet": "default"}}})
    serving = model_for_convention(overlay, None, "dragnet")
    assert (serving.model.hash, serving.convention, serving.chosen) == (default.hash, "dragnet", "dragnet")
    serving = model_for_convention(load_config(), None, "dragnet")
    assert (serving.model.hash, serving.convention, serving.chosen) == (old.hash, None, "dragnet")


XHTML_DOCTYPE = (b'<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Strict//EN" '
                 b'"http://www.w3.org/TR/xhtml1/DTD/xhtml1-strict.dtd">')


@pytest.mark.parametrize("head, html5", [
    (b"<!DOCTYPE html>", True), (b"<!doctype HTML >", True), (b"\xef\xbb\xbf<!DocType\n html>", True),
    (b"<?xml version='1.0'?>\n<!-- built 2025 --><!DOCTYPE html>", True),
    (b'<!DOCTYPE html SYSTEM "about:legacy-compat">', True), (b'<text id="x">\n<!DOCTYPE html>', True),
    (XHTML_DOCTYPE, False), (b'<!DOCTYPE HTML PUBLIC "-//W3C//DTD HTML 4.01//EN">', False), (b"<html>", False),
    (b"", False), (b"<!DOCTYPE htmlx>", False), ("<!DOCTYPE html>".encode("utf-16"), False),
    (b" " * 4096 + b"<!DOCTYPE html>", False),  # past the first 4 KB: not where a doctype is
])
def test_a_page_in_html5_markup_is_told_by_its_doctype(head, html5):
    from cleaner.page.doctype import declares_html5

    assert declares_html5(head + b"<html><body><p>Text.</p></body></html>") is html5


def test_cleaneval_pages_in_html5_markup_are_cleaned_by_the_default(post_with_comments):
    """[model.html5_by_convention]: without a model, `cleaneval` sends a page in HTML5 markup to the default (by the
    cleaneval convention), which keeps more of today's pages than cleaneval-2012, and an older page to cleaneval-2012,
    better on the pages of its era (docs/modern.md section 31). Only the doctype decides: the same page in both
    markups is cleaned by each as each would clean it alone. `dragnet`, `main` and a model given are not routed."""
    from cleaner.api import clean_html
    from cleaner.label.model import load_model, model_for_convention

    old_markup = post_with_comments.read_bytes()
    assert old_markup.startswith(XHTML_DOCTYPE)
    html5 = b"<!DOCTYPE html>" + old_markup[len(XHTML_DOCTYPE):]
    default, old = load_model(), load_model("cleaneval-2012")
    serving = model_for_convention(load_config(), None, "cleaneval")
    assert (serving.model.hash, serving.convention, serving.chosen) == (old.hash, None, "cleaneval")
    assert (serving.html5.model.hash, serving.html5.convention) == (default.hash, "cleaneval")
    assert serving.hash == f"{old.hash}+{default.hash}"  # what an output's settings record
    assert serving.for_page(html5) is serving.html5 and serving.for_page(old_markup) is serving
    for page, model, convention in ((old_markup, old, None), (html5, default, "cleaneval")):
        alone = clean_html(page, model=model, convention=convention)
        for routed in (clean_html(page, convention="cleaneval"), clean_html(page, model=serving),
                       clean_html(page, config=load_config().overlay({"model": {"convention": "cleaneval"}}))):
            assert routed.ok and routed.model_hash == model.hash and routed.cleaneval == alone.cleaneval
    # the default keeps the post's readers' comments under cleaneval (everything a reader sees), as cleaneval-2012
    assert COMMENT in clean_html(html5, convention="cleaneval").plain
    for convention, model in (("dragnet", old), ("main", default)):
        assert model_for_convention(load_config(), None, convention).html5 is None
        assert clean_html(html5, convention=convention).model_hash == model.hash
    assert model_for_convention(load_config(), "cleaneval-2012").html5 is None
    assert clean_html(html5, model=old).model_hash == old.hash
    # a ServingModel handed over cleans by its own convention: asking it for another is the caller's mistake
    with pytest.raises(ConventionError, match="cleans by convention 'cleaneval', not 'main'"):
        clean_html(html5, model=serving, convention="main")
    # an overlay can take the route away: cleaneval-2012 then cleans every page
    unrouted = load_config().overlay({"model": {"html5_by_convention": {"cleaneval": "cleaneval-2012"}}})
    assert model_for_convention(unrouted, None, "cleaneval").html5 is None


def test_cli_records_the_model_that_cleaned_by_the_convention(post_with_comments, tmp_path):
    """Each page's line names the model that cleaned it (under `cleaneval`, the HTML5 page's the default's); the
    output's settings name both, so that a later run with other models does not write into it."""
    from cleaner.label.model import load_model
    from cleaner.output.run_settings import SETTINGS_FILE

    pages = tmp_path / "pages"
    pages.mkdir()
    (pages / "a-xhtml.html").write_bytes(post_with_comments.read_bytes())
    (pages / "b-html5.html").write_bytes(b"<!DOCTYPE html>" + post_with_comments.read_bytes()[len(XHTML_DOCTYPE):])
    cli = [sys.executable, "-m", "cleaner.tools.cli", "clean", str(pages), "--format", "json", "-q"]
    hashes, recorded = {}, {}
    for convention in ("", "cleaneval"):
        out = tmp_path / (convention or "main")
        r = subprocess.run(cli + ["--out", str(out)] + (["--convention", convention] if convention else []),
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        hashes[convention] = [json.loads((out / f"{name}.json").read_text())["model_hash"]
                              for name in ("a-xhtml", "b-html5")]
        recorded[convention] = json.loads((out / SETTINGS_FILE).read_text())["model_hash"]
    default, old = load_model().hash, load_model("cleaneval-2012").hash
    assert hashes == {"": [default, default], "cleaneval": [old, default]}
    assert recorded == {"": default, "cleaneval": f"{old}+{default}"}


def test_the_pair_table_grows_past_its_buffer_and_keeps_what_it_gave():
    """ConjoinedIds' pair table (what WindowRows.conjoined lays a convention's rows out from) grows as pages bring new
    pairs, into a buffer that doubles: every pair id's row is its attribute's own id and its copies', also past the
    first buffer's 1,024 rows, and a table given out earlier reads the same rows after the buffer has grown."""
    from cleaner.label.crf import ConjoinedIds, Vocabulary

    vocabulary = Vocabulary([])
    for k in range(3000):
        for name in (f"idclass.t{k}", f"main|idclass.t{k}"):
            vocabulary.index[name.encode()] = len(vocabulary.index) + 1
    ids = ConjoinedIds(vocabulary, False, ("main|",), ("idclass.",))
    for k in range(500):
        ids[f"idclass.t{k}"]
    early = ids.pair_table()
    early_rows = early.copy()
    for k in range(3000):
        ids[f"idclass.t{k}"]
    ids["tag.self=p"]  # (not conjoined: no pair)
    table = ids.pair_table()
    assert table.shape == (3000, 2)
    for k in (0, 499, 1023, 1024, 2999):
        pair = ids[f"idclass.t{k}"] - ids.first_pair
        assert tuple(table[pair]) == (vocabulary.index[f"idclass.t{k}".encode()],
                                      vocabulary.index[f"main|idclass.t{k}".encode()])
    assert (early == early_rows).all() and (table[:500] == early_rows).all()
