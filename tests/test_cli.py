"""The `cleaner` command line contract (used by other tools): files, formats, exit codes."""

import json
import subprocess
import sys

import pytest

CLI = [sys.executable, "-m", "cleaner.cli"]


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
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["empty.txt", "p1.txt", "p2.txt"]
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
        (["clean", "/nonexistent/page.html", "--out", "/tmp/x"], 3, "input not found: /nonexistent/page.html"),
        (["clean", "README.md", "--out", "/tmp/x", "--model", "/nonexistent.crfsuite"], 4, "/nonexistent.crfsuite"),
        (["clean"], 2, "required"),
        (["frobnicate"], 2, "invalid choice"),
        (["models", "/nonexistent.crfsuite"], 3, "model not found: /nonexistent.crfsuite"),
        (["models", "README.md"], 4, "README.md"),
    ],
)
def test_exit_codes_and_messages(args, code, message):
    r = run(*args)
    assert r.returncode == code
    assert message in r.stderr


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
    for bad in ("7", "1,x"):  # no page in fold 7; not a number
        r = run("eval", folder, "--cv", "--folds", bad, "-q")
        assert r.returncode == 2 and "--folds" in r.stderr
    r = run("eval", folder, "--folds", "1", "-q")
    assert r.returncode == 2 and "add --cv" in r.stderr
    r = run("eval", folder, "--cv", "--folds", "1", "--model-kind", "dragnet", "-q")
    assert r.returncode == 2 and "are for the CRF" in r.stderr


def test_models_describes_each_packaged_model_and_its_cross_validated_figures(small_model):
    from cleaner.model import DEFAULT_MODEL_PATH, load_model, sidecar_path

    r = run("models", "--json")
    assert r.returncode == 0, r.stderr
    models = json.loads(r.stdout)
    assert models[0]["default"] and models[0]["path"] == str(DEFAULT_MODEL_PATH)
    assert models[0]["hash"] == load_model().hash
    assert models[0]["kind"] == "stacked (first pass: decided labels), marker typer"
    by_name = {m["path"].rsplit("/", 1)[1]: m for m in models}
    assert set(by_name) == {"default.crfsuite", "onepass.crfsuite", "conventions.crfsuite"}
    assert by_name["onepass.crfsuite"]["kind"] == "one pass, marker typer"
    assert "default.pass1.crfsuite" in by_name["default.crfsuite"]["files"]
    assert "conventions cleaneval / article" in by_name["conventions.crfsuite"]["kind"]
    cv = json.loads(sidecar_path(DEFAULT_MODEL_PATH).read_text())["cross_validation"]["cleaneval-final"]
    assert models[0]["cross_validation"]["cleaneval-final"] == {
        "pages": cv["n_docs"], "word_f1": cv["macro_f1"], "text_only": cv["macro_text_only"],
        "markup_f1": cv["macro_markup_f1"]}
    text = run("models").stdout
    assert f"cleaneval-final    681 pages  {cv['macro_f1']:.3f} / " in text and "(default)" in text
    # a model given by path; one trained without --cv has no figures to show
    r = run("models", small_model)
    assert r.returncode == 0 and "stacked" in r.stdout and "cross-validated" not in r.stdout
