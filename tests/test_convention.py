"""Annotation conventions as model input: a real convention-aware CRF trained on shared pages."""

from __future__ import annotations

import subprocess
import sys

import pytest

from cleaner.config import Config, _merge, load_config
from cleaner.convention import ConventionError, Conventions
from cleaner.decide import DecisionSettings


@pytest.fixture(scope="module")
def convention_model(tmp_path_factory, data_dir):
    """Trained like `cleaner train --conventions` on 12 CleanEval-dev and 12 Dragnet pages."""
    from cleaner.data import find_pages
    from cleaner.model import CrfModel
    from cleaner.train import fit, model_meta, prepare, trainable

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
    # the modern sets (chaos, big5-*, fundus, wcxb) and any other set keep the main content only: the default
    assert c.default == "main" and c.of("chaos") == "main" and c.of("wcxb") == "main" and c.of("my-own-set") == "main"
    assert c.of("dragnet") == "dragnet" and c.of("cleaneval-final") == "cleaneval" and c.of("cleanportaleval") == "cleaneval"
    rows = c.apply([["idclass.nav", "tag.self=a", "-1:tag.self=p", "char.alpha=5"]], "dragnet")
    assert rows == [["idclass.nav", "tag.self=a", "-1:tag.self=p", "char.alpha=5", "conv=dragnet",
                     "dragnet|idclass.nav", "dragnet|tag.self=a"]]  # only the block's own id/class and tags
    with pytest.raises(ConventionError, match="knows main, cleaneval, dragnet"):
        c.apply(rows, "wikipedia")


def test_a_convention_unknown_to_the_config_is_refused():
    cfg = Config(_merge(load_config().data, {"train": {"convention_of": {"dragnet": "news"}}}))
    with pytest.raises(ConventionError, match="news"):
        Conventions.from_config(cfg)


def test_the_convention_changes_what_the_model_keeps(convention_model):
    from cleaner.model import load_model

    path, docs = convention_model
    model = load_model(path)
    assert model.conventions.names == ("main", "cleaneval", "dragnet")
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
    from cleaner.data import find_pages
    from cleaner.model import load_model

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
    from cleaner.model import load_model

    model = load_model(small_model)
    assert model.conventions is None and model.check_convention("") is None
    with pytest.raises(ConventionError, match="not trained with annotation conventions"):
        model.check_convention("article")


def test_cli_checks_the_convention_before_cleaning(convention_model, small_model, data_dir, tmp_path):
    path, _ = convention_model
    page = next((data_dir / "cleaneval-dev" / "html").glob("*.html"))
    cli = [sys.executable, "-m", "cleaner.cli", "clean", str(page), "--out", str(tmp_path / "o")]
    ok = subprocess.run(cli + ["--model", str(path), "--convention", "dragnet", "-q"], capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr
    assert (tmp_path / "o" / (page.stem + ".txt")).exists()
    bad = subprocess.run(cli + ["--model", str(path), "--convention", "wiki", "-q"], capture_output=True, text=True)
    assert bad.returncode == 4 and "unknown convention 'wiki'" in bad.stderr
    plain = subprocess.run(cli + ["--model", str(small_model), "--convention", "article", "-q"],
                           capture_output=True, text=True)
    assert plain.returncode == 4 and "not trained with annotation conventions" in plain.stderr


def test_the_shipped_convention_model_loads_and_knows_both_conventions():
    from pathlib import Path

    import cleaner
    from cleaner.model import load_model

    model = load_model(Path(cleaner.__file__).parent / "models" / "conventions.crfsuite")  # checks its sidecar hash
    assert model.conventions.names == ("cleaneval", "article")
    assert model.meta["cross_validation"]["cleaneval-final"]["macro_f1"] > 0.9


def test_a_convention_aware_model_is_handed_readable_attributes(convention_model):
    # its conventions rewrite readable attributes (id/class, tags) before they are encoded
    from cleaner.model import load_model
    from cleaner.segment import segment_blocks

    path, _ = convention_model
    model = load_model(path)
    rows = model.features(segment_blocks("<div class=nav><a href=/>Home</a></div><p>Some text here.</p>").blocks)
    assert all(isinstance(a, str) for row in rows for a in row)
    assert model.tag(rows, convention="dragnet")[0]


def test_a_convention_aware_model_is_trained_one_pass(data_dir, tmp_path):
    # The default config trains a stacked model; conventions and stacking were never built
    # together, so `train --conventions` asks for the one-pass overlay instead of guessing.
    from pathlib import Path

    base = [sys.executable, "-m", "cleaner.cli", "train", str(data_dir), "--conventions", "-q",
            "--out", str(tmp_path / "m.crfsuite")]
    r = subprocess.run(base, capture_output=True, text=True)
    assert r.returncode == 2 and "conf/onepass.toml" in r.stderr
    overlay = Path(__file__).resolve().parents[1] / "conf" / "onepass.toml"
    r = subprocess.run(base + ["--config", str(overlay), "--datasets", "nonexistent"], capture_output=True, text=True)
    assert r.returncode == 3 and "conf/onepass.toml" not in r.stderr  # (no such data set: exit 3)


def test_the_shipped_modern_model_keeps_the_main_content_by_default(data_dir):
    """cleaner/models/modern.crfsuite: trained on every shared set, old and modern, with each set's convention
    (docs/modern.md); `main` is its default, the other two are asked for by name."""
    from pathlib import Path

    import cleaner
    from cleaner.api import clean_html
    from cleaner.data import find_pages
    from cleaner.gold import read_gold
    from cleaner.model import load_model
    from cleaner.score import score_document

    model = load_model(Path(cleaner.__file__).parent / "models" / "modern.crfsuite")  # checks its sidecar hash
    assert model.conventions.names == ("main", "cleaneval", "dragnet") and model.typer is not None
    assert model.meta["training_sets"]["wcxb"] > 700 and model.meta["training_sets"]["dragnet"] > 1300
    page = find_pages(data_dir, ["dragnet"])[0]
    main, own = (clean_html(page.read_html(), model=model, config=Config(_merge(load_config().data, {
        "model": {"convention": conv}}))) for conv in ("", "dragnet"))
    assert main.ok and own.ok
    gold = read_gold(page.gold_path)
    assert score_document(own.cleaneval, gold).f1 > 0.8
