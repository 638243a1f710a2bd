"""The `cleaner` command line contract (used by other tools): files, formats, exit codes."""

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import cleaner

CLI = [sys.executable, "-m", "cleaner.tools.cli"]


def run(*args, **kw):
    return subprocess.run([*CLI, *map(str, args)], capture_output=True, text=True, **kw)


def test_clean_writes_one_cleaneval_file_per_page(tmp_path, data_dir, small_model):
    pages = tmp_path / "pages"
    pages.mkdir()
    for i in ("1", "2"):
        (pages / f"p{i}.html").write_bytes((data_dir / f"cleaneval-dev/html/{i}.html").read_bytes())
    (pages / "empty.html").write_bytes(b"")
    r = run("clean", pages, "--out", tmp_path / "out", "--model", small_model)
    assert r.returncode == 1, r.stderr  # one page rejected
    assert "empty.html: rejected (empty)" in r.stderr
    assert sorted(p.name for p in (tmp_path / "out").iterdir() if p.name != ".cleaner-settings.json") == ["empty.txt", "p1.txt", "p2.txt"]
    text = (tmp_path / "out/p1.txt").read_text()
    assert text.splitlines()[0][:4] in ("<p> ", "<h> ", "<l> ")
    assert (tmp_path / "out/empty.txt").read_text() == ""


def test_clean_json_gives_blocks_labels_and_probabilities(tmp_path, data_dir, small_model):
    page = data_dir / "cleaneval-dev/html/1.html"
    r = run("clean", page, "--out", tmp_path, "--model", small_model, "--format", "json")
    assert r.returncode == 0, r.stderr
    doc = json.loads((tmp_path / "1.json").read_text())
    assert doc["status"] == "cleaned" and doc["blocks"]
    b = doc["blocks"][0]
    assert b["label"] in ("header", "paragraph", "list", "continuation", "other")
    assert abs(sum(b["marginals"].values()) - 1) < 1e-3 and 0 < b["probability"] <= 1
    # How each block is joined to the one before, as a browser shows it (this page has all three).
    assert {x["gap"] for x in doc["blocks"]} == {"", " ", "\n"}


@pytest.mark.parametrize(
    "args, code, message",
    [
        (["clean", "/nonexistent/page.html", "--out", "/tmp/x"], 3, "/nonexistent/page.html: not cleaned (input not found)"),
        (["clean", "README.md", "--out", "/tmp/x", "--model", "/nonexistent.crfsuite"], 4, "/nonexistent.crfsuite"),
        (["clean"], 2, "required"),
        (["clean", "README.md", "--format", "html"], 2, "invalid choice"),
        (["frobnicate"], 2, "invalid choice"),
        (["models", "/nonexistent.crfsuite"], 3, "model not found: /nonexistent.crfsuite"),
        (["models", "README.md"], 4, "README.md"),
    ],
)
def test_exit_codes_and_messages(args, code, message):
    r = run(*args, stdin=subprocess.DEVNULL)  # (no page piped in: `cleaner clean` alone is a usage error)
    assert r.returncode == code
    assert message in r.stderr
    assert "Traceback" not in r.stderr


def test_help_explains_each_command():
    for cmd in ("clean", "train", "eval", "models"):
        r = run(cmd, "--help")
        assert r.returncode == 0 and "usage: cleaner " + cmd in r.stdout


def test_train_then_eval_on_a_folder_of_annotated_pages(tmp_path, data_dir):
    folder = tmp_path / "annotated"
    folder.mkdir()
    for i in ("1", "2", "3", "4", "5", "6"):
        (folder / f"{i}.html").write_bytes((data_dir / f"cleaneval-dev/html/{i}.html").read_bytes())
        (folder / f"{i}.txt").write_bytes((data_dir / f"cleaneval-dev/gold/{i}.txt").read_bytes())
    model = tmp_path / "m.crfsuite"
    r = run("train", folder, "--out", model, "--max-iterations", "20", "--jobs", "1", "-q")
    assert r.returncode == 0, r.stderr
    meta = json.loads((tmp_path / "m.crfsuite.json").read_text())
    assert meta["training_documents"] == 6 and meta["labels"][0] == "header"
    r = run("eval", folder, "--model", model, "--jobs", "1", "-q", "--report", tmp_path / "r.md")
    assert r.returncode == 0, r.stderr
    assert "| annotated | 6 |" in r.stdout
    assert (tmp_path / "r.png").stat().st_size > 1000
    # CleanEval-style golds carry markers, so the report says where markup is lost.
    assert "## Where markup is lost" in (tmp_path / "r.md").read_text()


def test_train_with_cv_stores_its_figures_and_writes_its_per_page_table(tmp_path, data_dir):
    """`train --cv --pages` keeps what `eval --cv --pages` gives (the table scripts/peers.py --project-pages
    reads) and stores the chosen point's figures in the sidecar, saying whether sites were held out; with
    --fold-models it keeps the fold models, which rescore to the same table. --pages without --cv, and --fold-models
    over a grid of points, are usage errors."""
    folder = tmp_path / "annotated"
    folder.mkdir()
    for i in ("1", "2", "3", "4", "5", "6", "7", "8"):
        (folder / f"{i}.html").write_bytes((data_dir / f"cleaneval-dev/html/{i}.html").read_bytes())
        (folder / f"{i}.txt").write_bytes((data_dir / f"cleaneval-dev/gold/{i}.txt").read_bytes())
    model, pages = tmp_path / "m.crfsuite", tmp_path / "p.tsv"
    folds = tmp_path / "folds"
    r = run("train", folder, "--out", model, "--cv", "--c1", "0.05", "--c2", "1", "--max-iterations", "5",
            "--jobs", "1", "-q", "--pages", pages, "--fold-models", folds)
    assert r.returncode == 0, r.stderr
    meta = json.loads((tmp_path / "m.crfsuite.json").read_text())
    rows = pages.read_text().splitlines()
    assert len(rows) == 9 and rows[0].startswith("page\tdataset\tfold\tword_p")
    mean_f1 = sum(float(row.split("\t")[5]) for row in rows[1:]) / 8
    assert meta["cross_validation"]["annotated"]["n_docs"] == 8
    assert abs(meta["cross_validation"]["annotated"]["macro_f1"] - mean_f1) < 1e-5
    assert meta["cross_validation_unseen_sites"] is False
    assert "cross-validated by document (macro" in run("models", model).stdout
    # --fold-models kept each fold's model: rescoring with them gives the training's cross-validation, page by page
    assert len(list(folds.glob("fold-?.crfsuite"))) == len({row.split("\t")[2] for row in rows[1:]})
    again = tmp_path / "again.tsv"
    r = run("eval", folder, "--cv", "--c1", "0.05", "--c2", "1", "--max-iterations", "5", "--jobs", "1", "-q",
            "--fold-models", folds, "--rescore", "--pages", again)
    assert r.returncode == 0, r.stderr
    assert again.read_text() == pages.read_text()
    r = run("train", folder, "--out", tmp_path / "n.crfsuite", "--pages", tmp_path / "q.tsv")
    assert r.returncode == 2 and "add --cv" in r.stderr
    r = run("train", folder, "--out", tmp_path / "n.crfsuite", "--cv", "--fold-models", folds)  # a grid of points
    assert r.returncode == 2 and "--c1" in r.stderr


def test_eval_scores_a_convention_aware_model_by_each_sets_own_convention(tmp_path, data_dir):
    """`cleaner eval --model M` cleans each set's pages by the convention of its gold, as `--cv --conventions`
    does, so that the old sets' figures compare with the models trained on them; the report says so. A blog
    post whose Dragnet gold keeps the readers' comments (dragnet/42) scores low under `main`, which drops them."""
    dragnet = tmp_path / "dragnet"  # a data set named as the shared one: its gold keeps the comments
    for part, suffix in (("html", ".html"), ("gold", ".txt")):
        (dragnet / part).mkdir(parents=True)
        (dragnet / part / f"42{suffix}").write_bytes((data_dir / "dragnet" / part / f"42{suffix}").read_bytes())
    f1 = {}
    for convention in ("", "main"):
        figures = tmp_path / f"{convention or 'own'}.json"
        r = run("eval", dragnet, "--jobs", "1", "-q", "--json", figures, "--report", tmp_path / "r.md",
                *(["--convention", convention] if convention else []))
        assert r.returncode == 0, r.stderr
        f1[convention] = json.loads(figures.read_text())["dragnet"]["macro_f1"]
        report = (tmp_path / "r.md").read_text()
        assert ("annotation convention of its set's gold" in report) == (not convention)
        assert ("tagged with the `main` convention" in report) == bool(convention)
    assert f1[""] > 0.9 and f1[""] > f1["main"] + 0.3, f1
    r = run("eval", dragnet, "--cv", "--convention", "main", "-q")
    assert r.returncode == 2 and "--conventions" in r.stderr


def test_eval_scores_each_page_by_the_model_that_cleans_it(tmp_path, data_dir):
    """`eval --convention cleaneval` without --model scores what `clean --convention cleaneval` ships: the pages in
    HTML5 markup (washingtonpost.com's blog in CleanPortalEval) by the default, the others by cleaneval-2012
    ([model.html5_by_convention]); each page's figures are those of its model asked for by name."""
    folder = tmp_path / "annotated"
    folder.mkdir()
    for name in ("washingtonpost.com_blog1_10", "washingtonpost.com_blog1_4", "bbc.co.uk_news_01", "bbc.co.uk_news_02"):
        (folder / f"{name}.html").write_bytes((data_dir / f"cleanportaleval/html/{name}.html").read_bytes())
        (folder / f"{name}.txt").write_bytes((data_dir / f"cleanportaleval/gold/{name}.txt").read_bytes())

    def page_f1(*args) -> dict[str, str]:
        pages = tmp_path / "pages.tsv"
        r = run("eval", folder, "--jobs", "1", "-q", "--pages", pages, "--report", tmp_path / "r.md", *args)
        assert r.returncode == 0, r.stderr
        rows = [line.split("\t") for line in pages.read_text().splitlines()]
        return {row[0].split("/")[-1]: row[rows[0].index("word_f1")] for row in rows[1:]}

    routed = page_f1("--convention", "cleaneval")
    report = (tmp_path / "r.md").read_text()
    assert "in HTML5 markup (2 pages" in report and "not in HTML5 markup (2 pages" in report
    default = page_f1("--model", "default", "--convention", "cleaneval")
    old = page_f1("--model", "cleaneval-2012")  # (trained without conventions: it is cleaneval's model)
    assert routed == {name: (default if name.startswith("washingtonpost") else old)[name] for name in routed}
    assert default != old


def test_cv_on_unseen_sites_reports_how_it_split(tmp_path, data_dir):
    folder = tmp_path / "annotated"
    folder.mkdir()
    for i in ("1", "2", "3", "4", "5", "6", "7", "8"):
        (folder / f"{i}.html").write_bytes((data_dir / f"cleaneval-dev/html/{i}.html").read_bytes())
        (folder / f"{i}.txt").write_bytes((data_dir / f"cleaneval-dev/gold/{i}.txt").read_bytes())
    r = run("eval", folder, "--cv", "--unseen-sites", "--max-iterations", "10", "--jobs", "1", "-q",
            "--report", tmp_path / "cv.md")
    assert r.returncode == 0, r.stderr
    report = (tmp_path / "cv.md").read_text()
    assert "**Unseen sites**" in report and "| annotated | 8 |" in report
    assert "Stacked: inside each fold a first pass" in report and "decided labels" in report  # the default config
    assert "## Where markup is lost" in report


def test_eval_writes_per_page_figures_and_compares_two_runs_page_by_page(tmp_path, data_dir, small_model):
    folder = tmp_path / "annotated"
    folder.mkdir()
    for i in ("40", "41", "42", "43", "44"):
        (folder / f"{i}.html").write_bytes((data_dir / f"cleaneval-dev/html/{i}.html").read_bytes())
        (folder / f"{i}.txt").write_bytes((data_dir / f"cleaneval-dev/gold/{i}.txt").read_bytes())
    before = tmp_path / "before.tsv"
    r = run("eval", folder, "--model", small_model, "--jobs", "1", "-q", "--pages", before, "--json", tmp_path / "s.json")
    assert r.returncode == 0, r.stderr
    rows = [line.split("\t") for line in before.read_text().splitlines()]
    assert rows[0][:6] == ["page", "dataset", "fold", "word_p", "word_r", "word_f1"]
    assert sorted(row[0] for row in rows[1:]) == [f"annotated/{i}" for i in ("40", "41", "42", "43", "44")]
    macro = json.loads((tmp_path / "s.json").read_text())["annotated"]["macro_f1"]
    assert abs(sum(float(row[5]) for row in rows[1:]) / 5 - macro) < 1e-5
    # the same run again: no page moves
    r = run("eval", folder, "--model", small_model, "--jobs", "1", "-q", "--against", before)
    assert r.returncode == 0, r.stderr
    assert "| annotated | 5 |" in r.stdout and "| +0.0000 |" in r.stdout and "| 0 / 0 |" in r.stdout
    # against a run that scored every page 0 (one page left out of it: compared on the 4 both scored)
    zero = tmp_path / "zero.tsv"
    zero.write_text("\n".join(["\t".join(rows[0])] + ["\t".join(row[:5] + ["0.0"] + row[6:]) for row in rows[2:]]) + "\n")
    r = run("eval", folder, "--model", small_model, "--jobs", "1", "-q", "--against", zero)
    assert r.returncode == 0, r.stderr
    gain = sum(float(row[5]) for row in rows[2:]) / 4
    line = next(line for line in r.stdout.splitlines() if line.startswith("| annotated | 4 |"))
    assert f"| {gain:+.4f} |" in line and f"| {sum(float(row[5]) > 0 for row in rows[2:])} / 0 |" in line
    r = run("eval", folder, "--model", small_model, "-q", "--against", tmp_path / "s.json")
    assert r.returncode == 3 and "not a per-page table" in r.stderr
    cut = tmp_path / "cut.tsv"  # a table cut off in the middle of a row
    cut.write_text(before.read_text()[:-20])
    r = run("eval", folder, "--model", small_model, "-q", "--against", cut)
    assert r.returncode == 3 and "line 6" in r.stderr


def test_cv_on_chosen_folds_trains_and_scores_only_those(tmp_path, data_dir):
    folder = tmp_path / "annotated"
    folder.mkdir()
    fold_of = {"1": 0, "2": 0, "3": 1, "4": 1, "5": 1, "6": 2, "7": 2, "8": 3}
    for i in fold_of:
        (folder / f"{i}.html").write_bytes((data_dir / f"cleaneval-dev/html/{i}.html").read_bytes())
        (folder / f"{i}.txt").write_bytes((data_dir / f"cleaneval-dev/gold/{i}.txt").read_bytes())
    (folder / "folds.tsv").write_text("dataset\tid\tfold\n" + "".join(f"annotated\t{i}\t{k}\n" for i, k in fold_of.items()))
    models = tmp_path / "folds"
    r = run("eval", folder, "--cv", "--folds", "1,3", "--max-iterations", "10", "--jobs", "1", "-q",
            "--fold-models", models, "--json", tmp_path / "cv.json", "--report", tmp_path / "cv.md")
    assert r.returncode == 0, r.stderr
    assert json.loads((tmp_path / "cv.json").read_text())["annotated"]["n_docs"] == 4  # pages 3, 4, 5 and 8
    assert sorted(p.name for p in models.glob("fold-?.crfsuite")) == ["fold-1.crfsuite", "fold-3.crfsuite"]
    assert "Only folds [1, 3] were trained and scored" in (tmp_path / "cv.md").read_text()
    # --rescore: the same folds scored again with the kept models, no training (the same figures); a fold without a
    # kept model is refused (exit 3), and --rescore without --cv --fold-models is a usage error
    r = run("eval", folder, "--cv", "--folds", "1,3", "--max-iterations", "10", "--jobs", "1", "-q",
            "--fold-models", models, "--rescore", "--json", tmp_path / "again.json")
    assert r.returncode == 0, r.stderr
    assert json.loads((tmp_path / "again.json").read_text()) == json.loads((tmp_path / "cv.json").read_text())
    r = run("eval", folder, "--cv", "--folds", "0", "--jobs", "1", "-q", "--fold-models", models, "--rescore")
    assert r.returncode == 3 and "no saved model for fold 0" in r.stderr
    r = run("eval", folder, "--cv", "-q", "--rescore")
    assert r.returncode == 2 and "--fold-models" in r.stderr
    for bad in ("7", "1,x"):  # no page in fold 7; not a number
        r = run("eval", folder, "--cv", "--folds", bad, "-q")
        assert r.returncode == 2 and "--folds" in r.stderr
    r = run("eval", folder, "--folds", "1", "-q")
    assert r.returncode == 2 and "add --cv" in r.stderr
    r = run("eval", folder, "--conventions", "-q")  # a saved model already is convention-aware or not
    assert r.returncode == 2 and "add --cv" in r.stderr
    r = run("eval", folder, "--cv", "--conventions", "-q")  # the stacked default config: refused before any work
    assert r.returncode == 2 and "one pass" in r.stderr
    # a seed system goes the same way: only the chosen folds scored, its pages' figures in the same table, and a
    # rerun compared with it page by page (0 pages moved: the system and the folds are the same)
    pages = tmp_path / "mss.tsv"
    r = run("eval", folder, "--cv", "--folds", "1,3", "--model-kind", "mss-baseline", "-q", "--pages", pages)
    assert r.returncode == 0, r.stderr
    rows = [line.split("\t") for line in pages.read_text().splitlines()]
    assert sorted(row[0] for row in rows[1:]) == ["annotated/3", "annotated/4", "annotated/5", "annotated/8"]
    assert "| mss-baseline | annotated | 4 |" in r.stdout
    r = run("eval", folder, "--cv", "--folds", "1,3", "--model-kind", "mss-baseline", "-q", "--against", pages)
    assert r.returncode == 0, r.stderr
    assert "| annotated | 4 |" in r.stdout and "| 0 / 0 |" in r.stdout
    r = run("eval", folder, "--cv", "--folds", "1", "--model-kind", "all", "-q", "--pages", pages)
    assert r.returncode == 2 and "give one --model-kind" in r.stderr
    r = run("eval", folder, "--folds", "1", "--model-kind", "mss-baseline", "-q")
    assert r.returncode == 2 and "add --cv" in r.stderr


def test_models_describes_each_packaged_model_and_its_cross_validated_figures(small_model):
    from cleaner.label.model import DEFAULT_MODEL_PATH, load_model, sidecar_path

    r = run("models", "--json")
    assert r.returncode == 0, r.stderr
    models = json.loads(r.stdout)
    assert models[0]["default"] and models[0]["path"] == str(DEFAULT_MODEL_PATH)
    assert models[0]["hash"] == load_model().hash
    # the default: one pass, convention-aware, trained on every set; the stacked model of the old sets by name
    assert models[0]["kind"].startswith("one pass, conventions main / article / cleaneval / dragnet (--convention)")
    by_name = {m["path"].rsplit("/", 1)[1]: m for m in models}
    assert set(by_name) == {"default.crfsuite", "cleaneval-2012.crfsuite"}
    old = by_name["cleaneval-2012.crfsuite"]
    assert old["kind"] == "stacked (first pass: decided labels), marker typer"
    # which conventions each cleans by when no --model is given (conf/default.toml [model.by_convention])
    assert (models[0]["serves"], old["serves"]) == (["main", "article"], ["cleaneval", "dragnet"])
    # and whose pages in HTML5 markup ([model.html5_by_convention]): cleaneval's go to the default
    assert (models[0]["serves_html5_pages"], old["serves_html5_pages"]) == (["cleaneval"], [])
    assert "cleaneval-2012.pass1.crfsuite" in old["files"] and "the packaged default until issue 29" in old["note"]
    cv = json.loads(sidecar_path(DEFAULT_MODEL_PATH.with_name("cleaneval-2012.crfsuite")).read_text())[
        "cross_validation"]["cleaneval-final"]
    assert old["cross_validation"]["cleaneval-final"] == {
        "pages": cv["n_docs"], "word_f1": cv["macro_f1"], "text_only": cv["macro_text_only"],
        "markup_f1": cv["macro_markup_f1"]}
    text = run("models").stdout
    assert f"cleaneval-final    681 pages  {cv['macro_f1']:.3f} / " in text and "(default)" in text
    assert old["note"] in text and "cleans by --convention cleaneval / dragnet when no --model is given" in text
    # a model given by path; one trained without --cv has no figures to show
    r = run("models", small_model)
    assert r.returncode == 0 and "stacked" in r.stdout and "cross-validated" not in r.stdout


# -- cleaner clean: outputs never collide, nothing is lost silently (issue 30) ---------------------


def copy_page(src, dst):
    dst.parent.mkdir(parents=True, exist_ok=True)
    dst.write_bytes(src.read_bytes())
    return dst


def test_outputs_keep_the_inputs_relative_paths_and_are_never_replaced(tmp_path, data_dir, small_model):
    dev, final = data_dir / "cleaneval-dev/html", data_dir / "cleaneval-final/html"
    pages = tmp_path / "pages"
    copy_page(dev / "1.html", pages / "a.html")
    copy_page(dev / "2.html", pages / "sub/a.html")
    copy_page(dev / "3.html", pages / "b.htm")
    copy_page(dev / "4.html", pages / "b.html")  # same stem in one folder: both keep their whole name
    out = tmp_path / "out"
    r = run("clean", pages, "--out", out, "--model", small_model)
    assert r.returncode == 0, r.stderr
    assert "cleaned 4/4 pages" in r.stderr
    written = sorted(str(p.relative_to(out)) for p in out.rglob("*.txt"))
    assert written == ["a.txt", "b.htm.txt", "b.html.txt", "sub/a.txt"]
    assert (out / "a.txt").read_text() != (out / "sub/a.txt").read_text()
    # two folders with a page of the same name (60.html is in both CleanEval sets)
    two = tmp_path / "two"
    r = run("clean", copy_page(dev / "60.html", tmp_path / "dev/html/60.html").parent,
            copy_page(final / "60.html", tmp_path / "final/html/60.html").parent, "--out", two, "--model", small_model)
    assert r.returncode == 0, r.stderr
    assert sorted(str(p.relative_to(two)) for p in two.rglob("*.txt")) == ["dev/html/60.txt", "final/html/60.txt"]
    # a second run into the same folder is refused whole, nothing replaced; --overwrite replaces
    (out / "a.txt").write_text("kept")
    r = run("clean", pages, "--out", out, "--model", small_model)
    assert r.returncode == 5 and "a.txt exists (and 3 more): add --overwrite" in r.stderr, r.stderr
    assert (out / "a.txt").read_text() == "kept" and "Traceback" not in r.stderr
    r = run("clean", pages, "--out", out, "--model", small_model, "--overwrite", "-q")
    assert r.returncode == 0 and (out / "a.txt").read_text().startswith("<")
    # a folder in the annotation layout cleaned into itself: the gold files are not replaced
    ann = tmp_path / "annotated"
    copy_page(dev / "5.html", ann / "5.html")
    gold = copy_page(data_dir / "cleaneval-dev/gold/5.txt", ann / "5.txt").read_bytes()
    r = run("clean", ann, "--out", ann, "--model", small_model)
    assert r.returncode == 5 and f"{ann / '5.txt'} exists" in r.stderr
    assert (ann / "5.txt").read_bytes() == gold
    # --out naming a file: one line, what to do
    r = run("clean", ann, "--out", ann / "5.txt", "--model", small_model)
    assert r.returncode == 5 and r.stderr.count("\n") == 1 and "is a file, not a folder" in r.stderr


def test_a_folder_takes_every_page_by_content_and_lists_what_it_skips(tmp_path, data_dir, small_model):
    dev = data_dir / "cleaneval-dev/html"
    pages = tmp_path / "site"
    copy_page(dev / "1.html", pages / "index.php")
    copy_page(dev / "2.html", pages / "about")  # no extension
    copy_page(dev / "3.html", pages / "doc.xhtml")
    copy_page(dev / "4.html", pages / "4.html")
    copy_page(data_dir / "cleaneval-dev/gold/4.txt", pages / "4.txt")  # its gold text
    (pages / "style.css").write_text("body { color: red }\n")
    copy_page(data_dir / "warc/example.warc.gz", pages / "crawl.warc.gz")
    copy_page(dev / "5.html", pages / ".hidden/5.html")
    copy_page(data_dir / "wcxb/html/0002.html.gz", pages / "0002.html.gz")  # gzip-compressed, as wcxb keeps them
    r = run("clean", pages, "--out", tmp_path / "out", "--model", small_model)
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in (tmp_path / "out").iterdir() if p.name != ".cleaner-settings.json") == [
        "0002.txt", "4.txt", "about.txt", "doc.txt", "index.txt"]
    for name, why in [("4.txt", "the gold text of the page beside it"), ("style.css", "not HTML by its content"),
                      ("crawl.warc.gz", "jobs/clean_warc.py"), (".hidden", "a hidden folder: not searched")]:
        assert f"{pages / name}: skipped (" in r.stderr and why in r.stderr, name
    assert "cleaned 5/5 pages" in r.stderr and "skipped: 4 files" in r.stderr
    # each page cleans the same named alone as found in the folder
    alone = run("clean", pages / "about", "--model", small_model)
    assert alone.returncode == 0 and alone.stdout == (tmp_path / "out/about.txt").read_text()
    unzipped = subprocess.run([*CLI, "clean", "-", "--model", str(small_model)], capture_output=True,
                              input=gzip.decompress((pages / "0002.html.gz").read_bytes()))
    assert unzipped.returncode == 0 and unzipped.stdout.decode() == (tmp_path / "out/0002.txt").read_text()
    assert len(unzipped.stdout) > 100


def test_a_missing_input_among_many_is_reported_and_the_rest_cleaned(tmp_path, data_dir, small_model):
    page = data_dir / "cleaneval-dev/html/10.html"
    r = run("clean", tmp_path / "nope.html", page, "--out", tmp_path / "out", "--model", small_model)
    assert r.returncode == 1, r.stderr
    assert f"{tmp_path / 'nope.html'}: not cleaned (input not found)" in r.stderr
    assert "cleaned 1/2 pages" in r.stderr and "not cleaned: missing=1" in r.stderr  # (two were asked for)
    assert (tmp_path / "out/10.txt").stat().st_size > 0
    # a WARC given to clean: a distinct outcome that names the command that cleans it
    warc = data_dir / "warc/example.warc.gz"
    r = run("clean", warc, page, "--out", tmp_path / "out2", "--model", small_model)
    assert r.returncode == 1
    assert f"{warc}: not cleaned (a WARC/ARC file: clean it with cleaner clean-warc {warc} --out DIR" in r.stderr
    r = run("clean", warc, "--model", small_model)
    assert r.returncode == 3 and "nothing to clean" in r.stderr and "rejected (not_text)" not in r.stderr


def test_stdin_stdout_and_formats(tmp_path, data_dir):
    from cleaner.api import clean_html

    page = data_dir / "cleaneval-dev/html/12.html"
    want = clean_html(page.read_bytes())
    r = subprocess.run([*CLI, "clean", "-"], input=page.read_bytes(), capture_output=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.decode() == want.cleaneval + "\n" and r.stderr == b""  # the bytes of the page's output
    r = run("clean", page, "--out", "-", "--format", "txt")
    assert r.returncode == 0 and r.stdout == want.plain + "\n"
    assert "<p>" not in r.stdout and "<h>" not in r.stdout
    r = run("clean", page, "--out", tmp_path / "ce")
    assert (tmp_path / "ce/12.txt").read_text() == want.cleaneval + "\n"  # unchanged by this issue
    two = [page, data_dir / "cleaneval-dev/html/13.html"]
    r = run("clean", *two, "--format", "jsonl")
    lines = [json.loads(line) for line in r.stdout.splitlines()]
    assert r.returncode == 0 and [d["file"] for d in lines] == [str(p) for p in two]
    assert lines[0]["cleaneval"] == want.cleaneval and lines[0]["text"] == want.plain and "blocks" not in lines[0]
    assert lines[0]["truncated"] is False and lines[0]["stats"]["truncated"] is False
    r = run("clean", *two, "--format", "jsonl", "--out", tmp_path / "all.jsonl")
    assert r.returncode == 0 and len((tmp_path / "all.jsonl").read_text().splitlines()) == 2
    r = run("clean", *two, "--format", "jsonl", "--out", tmp_path / "all.jsonl")
    assert r.returncode == 5 and "all.jsonl exists" in r.stderr
    r = run("clean", *two)  # two pages of text would run together on stdout
    assert r.returncode == 2 and "--format jsonl" in r.stderr and r.stdout == ""


def test_a_packaged_model_by_name_from_any_folder(tmp_path, data_dir):
    page = data_dir / "cleaneval-dev/html/14.html"
    from cleaner.api import clean_html
    from cleaner.label.model import load_model

    old = load_model(Path(cleaner.__file__).parent / "models/cleaneval-2012.crfsuite")
    want = clean_html(page.read_bytes(), model=old)
    assert want.cleaneval != clean_html(page.read_bytes()).cleaneval  # (not the default's output)
    for spec in ("cleaneval-2012", "cleaneval-2012.crfsuite", "cleaner/models/cleaneval-2012.crfsuite"):
        r = run("clean", page, "--model", spec, cwd=tmp_path)
        assert r.returncode == 0, (spec, r.stderr)
        assert r.stdout == want.cleaneval + "\n", spec
    r = run("clean", page, "--model", "onepass", cwd=tmp_path)  # (removed in issue 29: docs/eval-onepass.md)
    assert r.returncode == 4 and "the name of a packaged model: cleaneval-2012, default" in r.stderr


def test_a_truncated_page_is_warned_counted_and_flagged(tmp_path):
    page = tmp_path / "long.html"
    page.write_text("<html><body>" + "".join(f"<p>Paragraph {i} of a long page.</p>" for i in range(120)) + "</body></html>")
    conf = tmp_path / "limit.toml"
    conf.write_text("[limits]\nmax_blocks = 50\n")
    r = run("clean", page, "--out", tmp_path / "out", "--format", "json", "--config", conf)
    assert r.returncode == 1, r.stderr
    assert "warning: " + str(page) + ": truncated: only its first 50 blocks were cleaned" in r.stderr
    assert "cleaned 1/1 pages" in r.stderr and "truncated: 1" in r.stderr
    doc = json.loads((tmp_path / "out/long.json").read_text())
    assert doc["truncated"] is True and doc["stats"]["truncated"] is True and doc["n_blocks"] == 50
    assert "Paragraph 49 " in doc["text"] and "Paragraph 50 " not in doc["text"]
    r = run("clean", page, "--out", tmp_path / "out2", "--config", conf, "-q")  # text formats: warned and counted
    assert r.returncode == 1 and "truncated" in r.stderr
    r = run("clean", page, "--out", tmp_path / "out3")  # under the default limit: whole, exit 0
    # (the model, not the limit, decides on the last lines: the default drops the page's last two as a footer)
    assert r.returncode == 0 and "Paragraph 100 " in (tmp_path / "out3/long.txt").read_text()
    assert "truncated: " not in r.stderr


def test_progress_bar_only_on_a_terminal_or_when_asked(tmp_path, data_dir, small_model):
    pages = [data_dir / f"cleaneval-dev/html/{i}.html" for i in (15, 16)]
    quiet = run("clean", *pages, "--out", tmp_path / "a", "--model", small_model)  # stderr is a pipe here
    assert quiet.returncode == 0 and "page/s" not in quiet.stderr and "%|" not in quiet.stderr
    bar = run("clean", *pages, "--out", tmp_path / "b", "--model", small_model, "--progress")
    assert bar.returncode == 0 and "2/2" in bar.stderr and "%|" in bar.stderr


def test_eval_says_when_it_scores_the_models_own_training_pages(tmp_path, data_dir):
    folder = tmp_path / "annotated"
    for i in ("20", "21"):
        copy_page(data_dir / f"cleaneval-dev/html/{i}.html", folder / f"{i}.html")
        copy_page(data_dir / f"cleaneval-dev/gold/{i}.txt", folder / f"{i}.txt")
    # (the old default: its sidecar's training manifest is that of the shared data as it is now)
    r = run("eval", folder, "--model", "cleaneval-2012", "--jobs", "1", "-q", "--report", tmp_path / "r.md")
    assert r.returncode == 0, r.stderr
    assert "2 of the 2 pages scored are pages this model was trained on" in r.stderr
    assert "cleaneval-dev 0.917" in r.stderr  # the cross-validated figure from its sidecar
    assert "2 of the 2 pages scored are pages this model was trained on" in (tmp_path / "r.md").read_text()


def test_eval_names_where_a_models_cross_validated_figure_is(tmp_path, data_dir):
    """`cleaner eval --model M` on shared pages says what a page M never saw gets: the cross-validated figures of
    M's sidecar when `cleaner train --cv` recorded them, else the report of its recipe that its sidecar's note names
    and the command that measures it (issue 44: the default model's figure was "not recorded"). A sidecar whose
    training manifest is not that of the shared data as it is now (the data grew) says which pages it was trained on
    is unknown rather than nothing."""
    from cleaner.label.model_files import copy_model, sidecar_path
    from cleaner.packaged import packaged_model_path

    def model_with(**changes):
        path = copy_model(packaged_model_path("default"), tmp_path / f"m{len(changes)}" / "m.crfsuite")
        meta = json.loads(sidecar_path(path).read_text())
        meta.update(training_manifest_hash="0" * 16, **changes)  # trained on other pages than these
        sidecar_path(path).write_text(json.dumps(meta))
        return path

    without = model_with(cross_validation=None)  # (the packaged default records its figures)
    r = run("eval", data_dir / "cleanportaleval", "--limit", "4", "--model", without, "--jobs", "1", "-q")
    assert r.returncode == 0, r.stderr
    note = " ".join(r.stderr.split())
    assert "Which of the 4 pages scored this model was trained on is not known" in note
    assert "not recorded" not in note
    assert "the cross-validation of the recipe it was trained by is docs/eval-default-unseen-sites.md" in note
    assert (Path(cleaner.__file__).parents[1] / "docs/eval-default-unseen-sites.md").is_file()
    assert "cleaner eval --cv" in note

    figures = {"cleanportaleval": {"macro_f1": 0.9213, "n_docs": 54}, "all": {"macro_f1": 0.92, "n_docs": 54}}
    recorded = model_with(cross_validation=figures, note="")
    r = run("eval", data_dir / "cleanportaleval", "--limit", "4", "--model", recorded, "--jobs", "1", "-q")
    assert r.returncode == 0, r.stderr
    note = " ".join(r.stderr.split())
    assert "cross-validated word F1 (its sidecar; cleaner models), what a page it never saw gets: " \
           "cleanportaleval 0.921." in note


def test_the_shared_data_root_as_a_folder_input_is_every_page_once(data_dir):
    """Every page of every set (html/*.html, wcxb's html/*.html.gz) is found by its content; every gold
    file, WARC and table is skipped with its reason; nothing else."""
    from collections import Counter

    from cleaner.tools.inputs import collect

    pages, skipped = collect([str(data_dir)])
    want = sorted(str(p) for p in data_dir.glob("*/html/*") if p.name.endswith((".html", ".html.gz")))
    assert sorted(p.shown for p in pages) == want
    outcomes = Counter(s.outcome for s in skipped)
    assert outcomes["gold"] == len(list(data_dir.glob("*/gold/*.txt")))
    assert outcomes["warc"] == len(list((data_dir / "warc").iterdir()))
    assert set(outcomes) == {"gold", "warc", "not_html"} and outcomes["not_html"] <= 6  # README.md, *.tsv, *.jsonl
    assert len({p.name for p in pages}) == len(pages)  # one output each


def test_eval_reports_wcxb_by_page_type_with_wcxbs_own_metric(tmp_path, data_dir, small_model):
    # A data root with a few wcxb pages (gzip-compressed, an empty gold among them) and its pages.tsv.
    root = tmp_path / "data"
    (root / "wcxb" / "html").mkdir(parents=True)
    (root / "wcxb" / "gold").mkdir()
    ids = {"4249": "article", "4420": "article", "4802": "forum", "4145": "forum", "4225": "product"}
    rows = ["id\tpage_type\turl\tdomain"]
    for i, kind in ids.items():
        for part, name in (("html", f"{i}.html.gz"), ("gold", f"{i}.txt")):
            (root / "wcxb" / part / name).write_bytes((data_dir / "wcxb" / part / name).read_bytes())
        rows.append(f"{i}\t{kind}\thttps://x/{i}\tx")
    (root / "wcxb" / "pages.tsv").write_text("\n".join(rows) + "\n")
    listed = [line for line in (data_dir / "wcxb" / "snippets.jsonl").read_text().splitlines()
              if line.strip() and json.loads(line)["id"] in ids]
    (root / "wcxb" / "snippets.jsonl").write_text("\n".join(listed) + "\n")
    r = run("eval", root, "--model", small_model, "--jobs", "1", "-q", "--json", tmp_path / "s.json",
            "--report", tmp_path / "r.md", "--pages", tmp_path / "p.tsv")
    assert r.returncode == 0, r.stderr
    assert "| WCXB metric |" in r.stdout and "| wcxb: forum | 2 |" in r.stdout
    assert "| snippet F1 | snippet acc |" in r.stdout
    summary = json.loads((tmp_path / "s.json").read_text())
    wcxb = summary["wcxb"]
    assert wcxb["n_docs"] == 5 and wcxb["macro_markup_f1"] is None  # plain gold: no markup figure
    assert set(wcxb["page_types"]) == {"article", "forum", "product"}
    assert wcxb["page_types"]["article"]["n_docs"] == 2
    assert 0 <= wcxb["macro_wcxb_f1"] <= 1 and wcxb["macro_wcxb_f1"] != wcxb["macro_f1"]
    mean = sum(t["macro_f1"] * t["n_docs"] for t in wcxb["page_types"].values()) / 5
    assert abs(mean - wcxb["macro_f1"]) < 1e-5  # the types partition the set
    # the snippets the five pages list, every one judged once, and the types' counts partitioning the set's
    rows_listed = [json.loads(line) for line in listed]
    counts = wcxb["snippets"]
    assert counts["found"] + counts["missed"] == sum(len(row.get("with", ())) for row in rows_listed) > 0
    assert counts["kept"] + counts["left_out"] == sum(len(row.get("without", ())) for row in rows_listed) > 0
    assert wcxb["snippet_accuracy"] == pytest.approx(
        (counts["found"] + counts["left_out"]) / sum(counts.values()), abs=1e-6)
    for key in counts:
        assert sum(t["snippets"][key] for t in wcxb["page_types"].values()) == counts[key]
    report = (tmp_path / "r.md").read_text()
    assert "## By page type" in report and "| wcxb: product | 1 |" in report
    from cleaner.learn.evaluate import read_page_table

    pages = read_page_table(tmp_path / "p.tsv")  # the WCXB metric per page, for scripts/peers.py --project-pages
    assert sum(float(row["wcxb_f1"]) for row in pages.values()) / 5 == pytest.approx(wcxb["macro_wcxb_f1"], abs=1e-5)


def test_json_formats_carry_the_jobs_corpus_columns(tmp_path, data_dir):
    """`--format jsonl` gives each page the Spark job's corpus columns of its plain text: its language (a German
    and an English news page), the exact-duplicate hash (the same page under two names: one hash) and the
    near-duplicate band keys."""
    de, en = data_dir / "fundus/html/at-DerStandard_2024_05_03.html", data_dir / "cleaneval-dev/html/12.html"
    copy = tmp_path / "copy.html"
    copy.write_bytes(de.read_bytes())
    r = run("clean", de, en, copy, "--format", "jsonl")
    assert r.returncode == 0, r.stderr
    docs = [json.loads(line) for line in r.stdout.splitlines()]
    assert [d["language"] for d in docs] == ["de", "en", "de"]
    assert all(d["language_score"] >= 0.9 and len(d["minhash_bands"]) == 14 for d in docs)
    assert docs[0]["text_hash"] == docs[2]["text_hash"] != docs[1]["text_hash"]


def test_skip_done_resumes_an_interrupted_run(tmp_path, data_dir):
    """An output file appears only whole, so the files in OUT record what an interrupted run did: a run cut
    after its first pages (here: run on the first three, with a half-written temporary file left as a kill
    would) is resumed with --skip-done, which cleans only the rest and leaves the done outputs untouched."""
    pages = tmp_path / "pages"
    pages.mkdir()
    for n in (1, 2, 3, 4, 5):
        copy_page(data_dir / f"cleaneval-dev/html/{n}.html", pages / f"{n}.html")
    out = tmp_path / "out"
    first = run("clean", *(pages / f"{n}.html" for n in (1, 2, 3)), "--out", out)
    assert first.returncode in (0, 1), first.stderr
    assert not list(out.glob(".*.tmp"))  # no temporary file left by a finished write
    (out / ".4.txt.part").write_text("<p> half a pa")  # what a kill in the middle of a write leaves
    before = {p.name: p.stat().st_mtime_ns for p in out.glob("*.txt")}
    r = run("clean", pages, "--out", out)
    assert r.returncode == 5 and "--overwrite" in r.stderr  # without the flag, refused as before
    r = run("clean", pages, "--out", out, "--skip-done")
    assert r.returncode in (0, 1), r.stderr
    assert "3 of 5 pages done by an earlier run" in r.stderr and "cleaned 2/2 pages" in r.stderr
    assert sorted(p.name for p in out.glob("*.txt")) == [f"{n}.txt" for n in (1, 2, 3, 4, 5)]
    assert {n: out.joinpath(n).stat().st_mtime_ns for n in before} == before
    assert (out / "4.txt").read_text().strip() and not (out / "4.txt").read_text().startswith("<p> half a pa")
    assert run("clean", pages, "--out", "-", "--skip-done").returncode == 2  # a stream cannot be resumed


def test_a_page_gzipped_in_several_members_is_read_whole(tmp_path, data_dir, small_model):
    """`gzip -c head tail > p.html.gz` (or a download resumed by appending) is one page of two gzip members:
    `zcat` shows all of it, and so does every reader of saved pages (clean, the data sets, make_warc)."""
    from conftest import make_warc

    from cleaner.gold.data import read_html_file
    from cleaner.warc import WarcFileStats, iter_html_records

    html = (data_dir / "cleaneval-dev/html/2.html").read_bytes()
    cut = html.index(b"<", len(html) // 2)  # the second member starts at a tag past the middle
    pages = tmp_path / "html"
    pages.mkdir()
    (pages / "p.html.gz").write_bytes(gzip.compress(html[:cut]) + gzip.compress(html[cut:]))
    assert gzip.decompress((pages / "p.html.gz").read_bytes()) == html  # what zcat shows

    whole = subprocess.run([*CLI, "clean", "-", "--model", str(small_model), "--format", "txt"],
                           capture_output=True, input=html)
    assert whole.returncode == 0 and len(whole.stdout) > 200
    r = run("clean", pages, "--out", tmp_path / "out", "--model", small_model, "--format", "txt")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "out/p.txt").read_bytes() == whole.stdout
    named = run("clean", pages / "p.html.gz", "--model", small_model, "--format", "txt")
    assert named.stdout.encode() == whole.stdout

    assert read_html_file(pages / "p.html.gz") == html
    warc = make_warc(tmp_path / "p.warc.gz", pages)
    with open(warc, "rb") as fh:
        records = list(iter_html_records(fh, warc.name, WarcFileStats()))
    assert len(records) == 1 and records[0].payload == html


def _five_pages(data_dir, folder: Path, odd_name: bytes | None = None) -> list[Path]:
    """Five shared pages in `folder`, the third under `odd_name` (bytes: any name the OS allows)."""
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for i in range(1, 6):
        name = odd_name if (i == 3 and odd_name) else f"p{i}.html".encode()
        target = Path(os.fsdecode(bytes(folder) + b"/" + name))
        target.write_bytes((data_dir / f"cleaneval-dev/html/{i}.html").read_bytes())
        out.append(target)
    return out


def test_a_file_name_that_is_not_utf8_is_written_and_the_run_goes_on(tmp_path, data_dir, small_model):
    """`caf\\xe9.html` (a Latin-1 name on Linux) ended a jsonl run with a UnicodeEncodeError after 1 of 5 lines:
    the name is written with its non-UTF-8 bytes as \\xNN, and every page is cleaned."""
    pages = tmp_path / "pages"
    _five_pages(data_dir, pages, b"caf\xe9.html")
    out = tmp_path / "out.jsonl"
    r = run("clean", pages, "--out", out, "--format", "jsonl", "--model", small_model)
    assert r.returncode == 0, r.stderr
    docs = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert len(docs) == 5 and all(d["status"] == "cleaned" for d in docs)
    assert sorted(Path(d["file"]).name for d in docs) == ["caf\\xe9.html", "p1.html", "p2.html", "p4.html",
                                                          "p5.html"]
    # one JSON file per page: the file is named as the page is (bytes and all), the name inside it as above
    r = run("clean", pages, "--out", tmp_path / "json", "--format", "json", "--model", small_model)
    assert r.returncode == 0, r.stderr
    written = os.listdir(bytes(tmp_path / "json"))
    assert b"caf\xe9.json" in written and len(written) == 6  # and the settings (.cleaner-settings.json)
    doc = json.loads((tmp_path / "json" / os.fsdecode(b"caf\xe9.json")).read_text())
    assert doc["file"].endswith("caf\\xe9.html") and doc["text"]


@pytest.fixture
def full_disk(tmp_path):
    """A real 64 KB tmpfs (needs root, which CI and the development machines have)."""
    mnt = tmp_path / "small"
    mnt.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mnt)],
                      capture_output=True).returncode:
        pytest.skip("mounting a tmpfs needs root")
    yield mnt
    subprocess.run(["umount", "-l", str(mnt)], check=False)


def test_a_full_disk_during_jsonl_is_exit_5_one_line_and_no_file_cut_short(tmp_path, data_dir, small_model,
                                                                            full_disk):
    """Disk full while writing --format jsonl printed a traceback, exited 1 and left a last line cut mid-text
    under the output's name: now exit 5, one line saying so, and no file (nor a temporary one) is left."""
    pages = tmp_path / "pages"
    for i in range(1, 31):
        copy_page(data_dir / f"cleaneval-dev/html/{i}.html", pages / f"{i}.html")
    r = run("clean", pages, "--out", full_disk / "out.jsonl", "--format", "jsonl", "--model", small_model, "-q")
    assert r.returncode == 5, r.stderr
    assert r.stderr.count("\n") == 1 and "No space left on device" in r.stderr, r.stderr
    assert "Traceback" not in r.stderr
    assert os.listdir(full_disk) == []  # neither out.jsonl nor its temporary file


def test_ctrl_c_during_jsonl_leaves_no_finished_looking_file_and_says_what_was_written(tmp_path, data_dir,
                                                                                       small_model):
    """Ctrl-C left a shorter out.jsonl that looked finished: the run writes a temporary file and renames it
    when every page is in; interrupted, it keeps the whole lines written as out.jsonl.incomplete and says so in
    one line (exit 130)."""
    import signal
    import time

    pages = tmp_path / "pages"
    # (each page 8 times, 464 pages: the run must still be going when the signal arrives, and a page takes 2-3 ms)
    for src in sorted((data_dir / "cleaneval-dev/html").glob("*.html")):
        for copy in range(8):
            copy_page(src, pages / f"{copy}-{src.name}")
    total = len(list(pages.iterdir()))
    out = tmp_path / "o" / "out.jsonl"
    # Ctrl-C as a terminal sends it: a child started where SIGINT is ignored (a test run in the background, under
    # nohup) would inherit that and, rightly, never see it
    proc = subprocess.Popen([*CLI, "clean", str(pages), "--out", str(out), "--format", "jsonl", "--model",
                             str(small_model), "-q"], stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 120
    # until two whole lines reached the temporary file: the run has then surely counted the first (a signal that
    # lands between a page's write and its count rightly drops that page, and with it the only line there was)
    while time.monotonic() < deadline:
        tmp = [p for p in out.parent.glob(".out.jsonl.*.tmp")] if out.parent.exists() else []
        if tmp and tmp[0].read_bytes().count(b"\n") >= 2:
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert not out.exists()  # no shorter file under the final name
    partial = out.with_name("out.jsonl.incomplete")
    lines = partial.read_text().splitlines()
    assert 0 < len(lines) < total and all(json.loads(line)["status"] for line in lines)  # whole lines only
    assert err.splitlines() == [f"cleaner: interrupted: {len(lines)} pages written to {partial} "
                                f"(incomplete: not renamed to {out})"]
    assert [p.name for p in out.parent.iterdir()] == ["out.jsonl.incomplete"]
    # run to its end, the file takes its name
    r = run("clean", pages, "--out", out, "--format", "jsonl", "--model", small_model, "-q")
    assert r.returncode == 0 and len(out.read_text().splitlines()) == total


def test_skip_done_with_other_settings_is_refused_naming_the_difference(tmp_path, data_dir, small_model):
    """A run with --format txt resumed with --format cleaneval --skip-done left one folder holding both kinds:
    the folder records the settings that shape it, and a run with others is refused (exit 5, one line naming the
    difference) unless --overwrite."""
    pages = tmp_path / "pages"
    for i in (1, 2, 3):
        copy_page(data_dir / f"cleaneval-dev/html/{i}.html", pages / f"{i}.html")
    out = tmp_path / "out"
    r = run("clean", pages, "--out", out, "--format", "txt", "--model", small_model)
    assert r.returncode == 0, r.stderr
    settings = json.loads((out / ".cleaner-settings.json").read_text())
    assert settings["format"] == "txt" and settings["model_hash"] and settings["config_hash"]
    (out / "3.txt").unlink()  # as a run interrupted before its last page leaves it
    r = run("clean", pages, "--out", out, "--format", "cleaneval", "--skip-done", "--model", small_model)
    assert r.returncode == 5 and r.stderr.count("\n") == 1, r.stderr
    assert "other settings (format txt, this run cleaneval)" in r.stderr
    assert not (out / "3.txt").exists()
    # the same settings resume it
    r = run("clean", pages, "--out", out, "--format", "txt", "--skip-done", "--model", small_model)
    assert r.returncode == 0 and "2 of 3 pages done by an earlier run" in r.stderr
    # a config that changes the output is a difference too
    overlay = tmp_path / "big.toml"
    overlay.write_text("[limits]\nmax_blocks = 100000\n")
    r = run("clean", pages, "--out", out, "--format", "txt", "--skip-done", "--model", small_model,
            "--config", overlay)
    assert r.returncode == 5 and "other settings (config " in r.stderr
    # --overwrite: cleaned again with these settings, which the folder then records
    r = run("clean", pages, "--out", out, "--format", "cleaneval", "--overwrite", "--model", small_model)
    assert r.returncode == 0, r.stderr
    assert json.loads((out / ".cleaner-settings.json").read_text())["format"] == "cleaneval"


def test_jsonl_out_with_a_trailing_slash_is_a_folder_not_a_file(tmp_path, data_dir, small_model):
    """`--out dir/ --format jsonl` wrote a file named `dir`: a trailing slash means a folder, which jsonl (one
    file) refuses in one line, as it refuses a folder that exists."""
    page = data_dir / "cleaneval-dev/html/1.html"
    r = run("clean", page, "--out", f"{tmp_path / 'dir'}/", "--format", "jsonl", "--model", small_model)
    assert r.returncode == 5 and r.stderr.count("\n") == 1, r.stderr
    assert f"--out {tmp_path / 'dir'}/ is a folder" in r.stderr
    assert not (tmp_path / "dir").exists()


def test_a_page_piped_in_needs_no_dash(data_dir, small_model):
    # `cat page.html | cleaner clean` was a usage error ("the following arguments are required: PATH")
    page = (data_dir / "cleaneval-dev/html/10.html").read_text(encoding="latin-1")
    piped = run("clean", "--format", "txt", "--model", small_model, input=page)
    dashed = run("clean", "-", "--format", "txt", "--model", small_model, input=page)
    assert piped.returncode == 0, piped.stderr
    assert piped.stdout == dashed.stdout and len(piped.stdout) > 100


@pytest.mark.parametrize("fmt, out", [("jsonl", "all.jsonl"), ("cleaneval", "folder")])
def test_jobs_writes_what_one_process_writes_in_the_same_order(tmp_path, data_dir, small_model, fmt, out):
    """`cleaner clean --jobs N` (issue 44): a process pool over the pages, the same bytes in the same order as --jobs 1,
    the same messages (a rejected page, a missing one) in the same order."""
    pages = tmp_path / "pages"
    pages.mkdir()
    for i in range(1, 13):
        (pages / f"p{i:02d}.html").write_bytes((data_dir / f"cleaneval-dev/html/{i}.html").read_bytes())
    (pages / "p05b.html").write_bytes(b"")  # rejected (empty), in the middle
    results = {}
    for jobs in ("1", "3"):
        target = tmp_path / jobs / out
        r = run("clean", pages, tmp_path / "missing.html", "--out", target, "--format", fmt, "--model", small_model,
                "--jobs", jobs)
        assert r.returncode == 1, r.stderr  # one page rejected, one missing
        files = sorted(target.rglob("*")) if target.is_dir() else [target]
        results[jobs] = ([(f.name, f.read_bytes()) for f in files if f.is_file()], r.stderr.replace(str(target), "OUT"))
    assert results["1"] == results["3"]
    written, stderr = results["3"]
    assert "p05b.html: rejected (empty)" in stderr and "cleaned 12/14 pages" in stderr
    if fmt == "jsonl":
        names = [json.loads(line)["file"] for line in written[0][1].decode().splitlines()]
        assert names == sorted(names) and len(names) == 13  # the pages' order, kept
    else:
        assert len(written) == 14  # 13 pages and the folder's settings file
    assert run("clean", pages, "--jobs", "0").returncode == 2


def test_jobs_resumes_exactly_with_skip_done_and_shows_progress(tmp_path, data_dir, small_model):
    """`cleaner clean --jobs 2 --skip-done` (issue 44: order and names kept, exact resume, progress): a run cut short
    is finished by cleaning only the pages without an output, the done outputs left untouched, the whole equal to one
    uninterrupted run; `--progress` counts the pages as the pool finishes them."""
    pages = tmp_path / "pages"
    pages.mkdir()
    for i in range(1, 9):
        (pages / f"p{i}.html").write_bytes((data_dir / f"cleaneval-dev/html/{i}.html").read_bytes())
    whole, cut = tmp_path / "whole", tmp_path / "cut"
    for out in (whole, cut):
        assert run("clean", pages, "--out", out, "--model", small_model, "--jobs", "2").returncode == 0
    for i in (2, 5, 6):
        (cut / f"p{i}.txt").unlink()
    os.utime(cut / "p1.txt", (946684800, 946684800))  # a done output: left as it is
    r = run("clean", pages, "--out", cut, "--model", small_model, "--jobs", "2", "--skip-done", "--progress")
    assert r.returncode == 0, r.stderr
    assert "cleaned 3/3 pages" in r.stderr and "3/3" in r.stderr.replace("\r", "\n").splitlines()[-2]
    assert (cut / "p1.txt").stat().st_mtime == 946684800
    assert {f.name: f.read_bytes() for f in cut.iterdir()} == {f.name: f.read_bytes() for f in whole.iterdir()}


def test_clean_warc_and_the_spark_job_take_the_same_flags_and_each_help_names_the_other():
    """One set of flags (issue 44): `cleaner clean-warc` and the Spark job both take --input and positionals,
    --output and --format parquet|jsonl; each --help names the other."""
    warc = run("clean-warc", "--help")
    job = subprocess.run([sys.executable, str(Path(cleaner.__file__).parents[1] / "jobs" / "clean_warc.py"), "--help"],
                         capture_output=True, text=True)
    assert warc.returncode == 0 and job.returncode == 0, job.stderr
    for help_text in (warc.stdout, job.stdout):
        for flag in ("--input", "--output", "--format {parquet,jsonl}", "--skip-done", "--overwrite"):
            assert flag in help_text, flag
    assert "jobs/clean_warc.py" in " ".join(warc.stdout.split())
    assert "cleaner clean-warc" in " ".join(job.stdout.split())
