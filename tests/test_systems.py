"""The seed systems (cleaner/label/systems): fit, predict, save/load without pickles, MSS, CLI."""

from __future__ import annotations

import json
import random
import subprocess
import sys
import zipfile

import numpy as np
import pytest

from cleaner.labels import CONTENT_LABELS, CONTINUATION, LABELS, OTHER, PARAGRAPH
from cleaner.config import load_config
from cleaner.gold.data import find_pages, load_folds
from cleaner.page.segment import segment_blocks
from cleaner.label.systems import SYSTEMS, PageInput, SystemError_, load_system, make_system
from cleaner.learn.systems_evaluate import cross_validate_system, prepare_docs
from cleaner.label.systems.fiasco import dom_nodes, rbf_decision
from cleaner.label.systems.mss import MssBaseline, MssHr, max_subsequence
from cleaner.learn.systems_clean import clean_page

CLI = [sys.executable, "-m", "cleaner.tools.cli"]


def run(*args):
    return subprocess.run([*CLI, *map(str, args)], capture_output=True, text=True)


@pytest.fixture(scope="module")
def docs(data_dir):
    pages = find_pages(data_dir, ["cleaneval-dev"])[:6] + find_pages(data_dir, ["dragnet"])[:6]
    return prepare_docs(pages, load_config(), load_folds(data_dir), progress=False)


def _valid(labels, n):
    assert len(labels) == n
    assert set(labels) <= set(LABELS)
    # content runs open with a paragraph; a continuation only follows content
    for prev, lab in zip([OTHER] + labels, labels):
        if lab == CONTINUATION:
            assert prev in CONTENT_LABELS
        if lab == PARAGRAPH:
            assert prev not in CONTENT_LABELS


@pytest.mark.parametrize("kind", sorted(SYSTEMS))
def test_system_fits_on_real_pages_and_predicts_valid_labels(kind, docs):
    train, test = docs[1:-1], [docs[0], docs[-1]]
    system = make_system(kind).fit([d.page for d in train], [d.labels for d in train])
    n_content = 0
    for d in test:
        labels = system.predict(d.page)
        _valid(labels, len(d.page.blocks))
        n_content += sum(lab in CONTENT_LABELS for lab in labels)
    assert n_content > 0  # every system keeps something of these pages


@pytest.mark.parametrize("kind", [k for k in sorted(SYSTEMS) if SYSTEMS[k].trainable])
def test_save_load_round_trip_without_pickle(kind, docs, tmp_path):
    train = docs[2:]
    system = make_system(kind).fit([d.page for d in train], [d.labels for d in train])
    path = system.save(tmp_path / f"{kind}.npz")
    with np.load(path, allow_pickle=False) as z:  # would raise on any object array
        assert "__meta__" in z.files
    with zipfile.ZipFile(path) as zf:
        assert all(name.endswith(".npy") for name in zf.namelist())
    again = load_system(path, kind)
    for d in docs[:2]:
        assert again.predict(d.page) == system.predict(d.page)
    with pytest.raises(SystemError_):
        load_system(path, "mss-baseline" if kind != "mss-baseline" else "dragnet")


def test_system_file_errors(tmp_path):
    with pytest.raises(SystemError_):
        load_system(tmp_path / "missing.npz", "dragnet")
    bad = tmp_path / "bad.npz"
    np.save(tmp_path / "obj.npy", np.array([{"a": 1}], dtype=object), allow_pickle=True)
    with zipfile.ZipFile(bad, "w") as zf:
        zf.write(tmp_path / "obj.npy", "__meta__.npy")
    with pytest.raises(SystemError_):
        load_system(bad, "dragnet")
    with pytest.raises(SystemError_):
        load_system(None, "fiasco")  # needs a trained file
    assert load_system(None, "everything").kind == "everything"


@pytest.mark.parametrize(
    "scores, expected",
    [
        ([], (0, -1)),
        ([-1.0, -2.0], (0, -1)),
        ([0.0, 0.0], (0, -1)),
        ([3.0], (0, 0)),
        ([1.0, -2.0, 3.0], (2, 2)),
        ([2.0, -1.0, 2.0], (0, 2)),
        ([-2.0, 1.0, 1.0, -5.0, 1.0], (1, 2)),
        ([-1.0, 4.0, -1.0, -1.0, 2.0, -9.0], (1, 1)),
        ([-1.0, 4.0, -1.0, -1.0, 3.0, -9.0], (1, 4)),
    ],
)
def test_max_subsequence_hand_cases(scores, expected):
    assert max_subsequence(scores) == expected


def test_max_subsequence_matches_brute_force():
    rng = random.Random(1)
    for _ in range(200):
        s = [rng.choice([-3, -1, 0.5, 1, 2]) for _ in range(rng.randint(1, 25))]
        i, j = max_subsequence(s)
        best = max([0.0] + [sum(s[a : b + 1]) for a in range(len(s)) for b in range(a, len(s))])
        assert abs((sum(s[i : j + 1]) if j >= i else 0.0) - best) < 1e-9


HAND_PAGE = """<html><body>
<div id="nav"><ul><li><a href="/">Home</a></li><li><a href="/a">About</a></li><li><a href="/n">News</a></li>
<li><a href="/c">Contact</a></li></ul></div>
<div id="main"><h1>A quiet village</h1>
<p>The village lies at the foot of the hills, and its people have farmed the valley for centuries without
much news reaching the outside world, which suits them well.</p>
<p>Every autumn the harvest festival brings the families together for a week of music, food and long evenings
by the river, and visitors are welcome to join.</p></div>
<div id="foot"><a href="/p">Privacy</a> | <a href="/t">Terms</a> | <a href="/s">Sitemap</a></div>
</body></html>"""


def _hand_blocks():
    return segment_blocks(HAND_PAGE, load_config()).blocks


def test_training_free_mss_baseline_on_a_hand_made_page():
    blocks = _hand_blocks()
    labels = MssBaseline().predict(PageInput(blocks, HAND_PAGE))
    kept = [b.text for b, lab in zip(blocks, labels) if lab in CONTENT_LABELS]
    assert kept[0].startswith("A quiet village") or kept[0].startswith("The village")
    assert any(t.startswith("Every autumn") for t in kept)
    assert not any(t in ("Home", "About", "Privacy", "Sitemap") for t in kept)
    res = clean_page(HAND_PAGE.encode(), MssBaseline())
    assert res.ok and "Every autumn" in res.cleaneval and "Sitemap" not in res.cleaneval


def test_mss_hr_range_does_not_cross_an_hr(monkeypatch):
    html = "<body><p>one two three four five</p><hr><p>six seven eight</p></body>"
    blocks = segment_blocks(html, load_config()).blocks
    system = MssHr()
    monkeypatch.setattr(system, "token_probabilities", lambda toks, ctx: np.full(len(toks), 0.9))
    labels = system.predict(PageInput(blocks, html))
    assert [lab in CONTENT_LABELS for lab in labels] == [True, False]
    plain = make_system("mss")
    monkeypatch.setattr(plain, "token_probabilities", lambda toks, ctx: np.full(len(toks), 0.9))
    assert [lab in CONTENT_LABELS for lab in plain.predict(PageInput(blocks, html))] == [True, True]


def test_largest_group_keeps_the_main_div():
    blocks = _hand_blocks()
    labels = make_system("largest-group").predict(PageInput(blocks, HAND_PAGE))
    kept = " ".join(b.text for b, lab in zip(blocks, labels) if lab in CONTENT_LABELS)
    assert "Every autumn" in kept and "Home" not in kept and "Privacy" not in kept


def test_fiasco_reparse_reproduces_the_project_blocks(docs):
    for d in docs:
        node_of_block, nodes = dom_nodes(d.page.html, d.page.blocks)
        assert len(node_of_block) == len(d.page.blocks)
        assert all(nd["sub_words"] is not None for nd in nodes)  # no fallback


def test_fiasco_decision_equals_sklearn():
    from sklearn.svm import SVC

    rng = np.random.default_rng(0)
    x = rng.uniform(-1, 1, (120, 5))
    y = (x[:, 0] + x[:, 1] ** 2 > 0.3).astype(int)
    clf = SVC(C=10, gamma=0.5).fit(x, y)
    ours = rbf_decision(x, clf.support_vectors_, clf.dual_coef_[0], float(clf.intercept_[0]), 0.5)
    assert np.allclose(ours, clf.decision_function(x), atol=1e-8)


def test_cross_validation_uses_the_folds(docs):
    res = cross_validate_system("mss-baseline", docs, progress=False)
    assert sorted(r.key for r in res) == sorted(d.key for d in docs)
    assert all(r.ms is not None and r.ms > 0 and 0 <= r.score.f1 <= 1 for r in res)


def test_cli_model_kind_paths(tmp_path, data_dir):
    ds = data_dir / "cleaneval-dev"
    page = ds / "html" / "1.html"
    r = run("train", ds, "--model-kind", "mss", "--limit", "8", "--out", tmp_path / "mss.npz", "-q")
    assert r.returncode == 0, r.stderr
    r = run("clean", page, "--model-kind", "mss", "--model", tmp_path / "mss.npz", "--out", tmp_path / "a", "-q")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "a" / "1.txt").read_text().startswith("<p> ")
    r = run("clean", page, "--model-kind", "mss-baseline", "--out", tmp_path / "b", "--format", "json", "-q")
    assert r.returncode == 0, r.stderr
    doc = json.loads((tmp_path / "b" / "1.json").read_text())
    assert doc["status"] == "cleaned" and {b["label"] for b in doc["blocks"]} <= set(LABELS)
    r = run("clean", page, "--model-kind", "dragnet", "--out", tmp_path / "c")
    assert r.returncode == 4 and "needs a trained system file" in r.stderr
    r = run("clean", page, "--model-kind", "fiasco", "--model", tmp_path / "mss.npz", "--out", tmp_path / "c")
    assert r.returncode == 4 and "holds a 'mss' system" in r.stderr
    r = run("eval", ds, "--model-kind", "mss", "--model", tmp_path / "mss.npz", "--limit", "4", "-q")
    assert r.returncode == 0, r.stderr
    assert "| mss |" in r.stdout
    r = run("eval", ds, "--model-kind", "everything", "--cv", "--limit", "6", "-q", "--report", tmp_path / "s.md",
            "--results", tmp_path / "r.json")
    assert r.returncode == 0, r.stderr
    assert "| everything |" in r.stdout and (tmp_path / "s.md").exists() and (tmp_path / "r.json").exists()


def test_cli_model_kind_all_train_and_clean(tmp_path, data_dir):
    ds = data_dir / "cleaneval-dev"
    r = run("train", ds, "--model-kind", "all", "--limit", "6", "--max-iterations", "5", "--jobs", "1",
            "--out", tmp_path / "m", "-q")
    assert r.returncode == 0, r.stderr
    names = sorted(p.name for p in (tmp_path / "m").iterdir())
    assert "crf.crfsuite" in names and all(f"{k}.npz" in names for k in SYSTEMS)
    r = run("clean", ds / "html" / "2.html", "--model-kind", "all", "--model", tmp_path / "m", "--out", tmp_path / "o",
            "-q")
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in (tmp_path / "o").iterdir()) == sorted(["crf", *SYSTEMS])
    assert all((tmp_path / "o" / k / "2.txt").exists() for k in ["crf", *SYSTEMS])


def test_crf_row_reuses_only_matching_stored_cross_validation(small_model, data_dir):
    from types import SimpleNamespace

    from cleaner.label.model import load_model
    from cleaner.tools.cli_systems import _stored_crf_cv
    from cleaner.learn.systems_evaluate import reported_figures, systems_table

    pages = find_pages(data_dir, ["cleaneval-dev"])[:3]
    messages = []
    args = SimpleNamespace(model=str(small_model))
    assert _stored_crf_cv(args, load_config(), pages, False, messages.append) is None  # no stored CV
    assert "cross-validation figures" in messages[-1]
    meta = load_model(small_model).meta
    assert meta.get("cross_validation") is None
    cv = {"cleaneval-dev": {"n_docs": 3, "macro_f1": 0.9, "macro_text_only": 0.8, "macro_markup_f1": 0.5,
                            "macro_precision": 0.9, "macro_recall": 0.9, "content_accuracy": 0.95}, "all": {}}
    figs = {"crf": reported_figures(cv, {p.key: 10.0 for p in pages}, {p.key: p.dataset for p in pages})}
    summary, detail = systems_table(figs, {"crf": 10.0})
    assert "| crf | 0.900 | 10.0 |" in summary and "| crf | cleaneval-dev | 3 | 0.900 | 0.800 | 0.500 |" in detail
