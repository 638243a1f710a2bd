"""`cleaner inspect` and `cleaner annotate`, checked in headless Chromium (Debian's package).

The browser is Debian's chromium, installed by `browser_setup.ensure_chromium` when
missing, driven by Playwright. Screenshots are kept in artifacts/ (set
CLEANER_DOC_SCREENSHOTS=1 to refresh the copies in docs/img/ as well).
"""

from __future__ import annotations

import html
import json
import os
import shutil
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from browser_setup import LAUNCH_ARGS, ChromiumInstallFailed, ChromiumUnavailable, ensure_chromium

# One browser, on one xdist worker: Chromium is the heaviest thing in the suite.
pytestmark = pytest.mark.xdist_group("browser")

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = ROOT / "artifacts"
DOCS_IMG = ROOT / "docs" / "img"
# A short CleanEval page whose gold uses every label (header, paragraph, list, continuation, other).
DATASET, PAGE_ID = "cleaneval-dev", "54"
HOSTILE_HTML = (
    "<html><head><title>x</title></head><body><h1>Hostile &quot;page&quot;</h1>"
    "<p>&lt;script&gt;alert(1)&lt;/script&gt;</p>"
    "<p>&lt;img src=x onerror=alert(2)&gt; and the &lt;p&gt; tag in running text</p>"
    "<p class='&quot;&gt;&lt;script&gt;alert(3)&lt;/script&gt;'>An ordinary paragraph of text.</p>"
    "</body></html>"
)


# -- fixtures -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def chromium() -> str:
    try:
        return ensure_chromium()
    except ChromiumUnavailable as exc:
        pytest.skip(f"no Chromium and no way to install it: {exc}")
    except ChromiumInstallFailed as exc:
        pytest.fail(f"installing Debian's chromium failed: {exc}")


@pytest.fixture(scope="module")
def browser(chromium):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=chromium, args=LAUNCH_ARGS)
        yield b
        b.close()


@pytest.fixture
def page(browser):
    ctx = browser.new_context(viewport={"width": 1200, "height": 760})
    pg = ctx.new_page()
    pg.dialogs = []  # any alert() would mean page text ran as code
    pg.on("dialog", lambda d: (pg.dialogs.append(d.message), d.dismiss()))
    pg.requests = []
    pg.on("request", lambda r: pg.requests.append(r.url))
    yield pg
    ctx.close()


def shot(pg, name: str) -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / name
    pg.screenshot(path=str(path))
    if os.environ.get("CLEANER_DOC_SCREENSHOTS"):
        DOCS_IMG.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, DOCS_IMG / name)
    return path


def run_cli(*args) -> int:
    from cleaner.cli import main

    return main([str(a) for a in args])


def page_blocks(html_path: Path, model_path=None):
    """Blocks of a page as the commands see them, and the model's labels."""
    from cleaner.api import clean_html
    from cleaner.model import load_model

    res = clean_html(html_path.read_bytes(), model=load_model(model_path), keep_blocks=True)
    return res


# -- inspect --------------------------------------------------------------------------------


def test_inspect_view_in_chromium(page, small_model, data_dir, tmp_path):
    from cleaner.align import align_blocks
    from cleaner.gold import read_gold
    from cleaner.score import score_document

    html_path = data_dir / DATASET / "html" / f"{PAGE_ID}.html"
    gold = data_dir / DATASET / "gold" / f"{PAGE_ID}.txt"
    out = tmp_path / "view.html"
    assert run_cli("inspect", html_path, "--gold", gold, "--model", small_model, "--out", out, "-q") == 0

    res = page_blocks(html_path, small_model)
    gold_text = read_gold(gold)
    gold_labels = align_blocks(res.blocks, gold_text).labels
    s = score_document(res.cleaneval, gold_text)
    n_dis = sum(a != b for a, b in zip(res.labels, gold_labels))

    page.goto(out.as_uri())
    blocks = page.locator("#blocks .blk")
    assert blocks.count() == len(res.blocks)
    got = page.eval_on_selector_all(
        "#blocks .blk", "els => els.map(e => [e.dataset.label, e.dataset.gold, getComputedStyle(e).borderLeftColor,"
        " e.querySelector('.text').textContent])")
    assert [g[0] for g in got] == res.labels
    assert [g[1] for g in got] == gold_labels
    assert [g[3] for g in got] == [b.text for b in res.blocks]
    # Coloured by label: one colour per label, different labels in different colours.
    colour = {}
    for label, _, rgb, _ in got:
        assert colour.setdefault(label, rgb) == rgb
    assert len(set(colour.values())) == len(colour) >= 3
    # Disagreements stand out, and the header has the scorer's figures.
    assert page.locator(".blk.dis").count() == n_dis > 0
    assert page.locator(".blk.dis").first.evaluate("e => getComputedStyle(e).outlineStyle") != "none"
    assert page.inner_text("#f1") == f"{s.f1:.3f}"
    assert page.inner_text("#precision") == f"{s.precision:.3f}"
    assert page.inner_text("#recall") == f"{s.recall:.3f}"
    assert page.inner_text("#markup-f1") == f"{s.markup_f1:.3f}"
    assert page.inner_text("#n-dis") == str(n_dis)
    # A click opens the block's containers, marginals and strongest features.
    first_dis = page.locator(".blk.dis").first
    i = int(first_dis.get_attribute("data-i"))
    details = page.locator(f"#b{i} + .details")
    assert not details.is_visible()
    first_dis.click()
    assert details.is_visible()
    text = details.inner_text()
    assert "Strongest features for" in text and "containers" in text and "marginals" in text
    assert " › ".join(res.blocks[i].containers) in text
    # The filter shows the disagreements only.
    page.check("#only-dis")
    assert page.locator("#blocks .blk:visible").count() == n_dis
    page.uncheck("#only-dis")
    first_dis.scroll_into_view_if_needed()
    shot(page, "inspect.png")
    assert all(u.startswith(("file:", "data:")) for u in page.requests), page.requests
    assert page.dialogs == []


def test_inspect_shows_hostile_text_as_text(page, small_model, tmp_path):
    src = tmp_path / "hostile.html"
    src.write_text(HOSTILE_HTML)
    out = tmp_path / "hostile-view.html"
    run_cli("inspect", src, "--model", small_model, "--out", out, "-q")
    raw = out.read_text()
    assert "<script>alert" not in raw and "<img src=x" not in raw
    page.goto(out.as_uri())
    texts = page.eval_on_selector_all("#blocks .blk .text", "els => els.map(e => e.textContent)")
    assert "<script>alert(1)</script>" in texts
    assert any(t.startswith("<img src=x onerror=alert(2)>") for t in texts)
    assert page.evaluate("document.scripts.length") == 1  # the view's own script only
    assert page.locator("img").count() == 0
    page.locator("#blocks .blk").nth(1).click()
    assert page.dialogs == []


def test_inspect_warc_record_and_exit_codes(small_model, data_dir, tmp_path):
    from cleaner.inspect import find_warc_record

    warc = data_dir / "warc" / "example.warc.gz"
    rec, _, _ = find_warc_record(str(warc), url="http://example.com/")
    assert rec is not None
    out = tmp_path / "rec.html"
    assert run_cli("inspect", "--warc", warc, "--url", "http://example.com/", "--model", small_model,
                   "--out", out, "-q") == 0
    by_url = out.read_text()
    assert "Example Domain" in by_url and html.escape(rec.record_id) in by_url
    assert "expected word F1 " in by_url  # how sure the model is of the page (docs/confidence.md)
    assert run_cli("inspect", "--warc", warc, "--record-id", rec.record_id, "--model", small_model,
                   "--out", out, "-q") == 0
    assert out.read_text() == by_url
    assert run_cli("inspect", "--warc", warc, "--record-id", "<urn:uuid:nope>", "--model", small_model,
                   "--out", out, "-q") == 3
    assert run_cli("inspect", "--warc", warc, "--out", out) == 2
    assert run_cli("inspect", "--out", out) == 2
    assert run_cli("inspect", tmp_path / "missing.html", "--model", small_model, "--out", out) == 3
    page_ = data_dir / DATASET / "html" / f"{PAGE_ID}.html"
    assert run_cli("inspect", page_, "--gold", tmp_path / "missing.txt", "--out", out) == 3
    assert run_cli("inspect", page_, "--model", tmp_path / "missing.crfsuite", "--out", out) == 4
    empty = tmp_path / "empty.html"
    empty.write_bytes(b"")
    assert run_cli("inspect", empty, "--model", small_model, "--out", out, "-q") == 1
    assert "The file is empty" in out.read_text()


# -- annotate -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def annotate_dir(tmp_path_factory, data_dir):
    """A folder of shared pages plus the bad inputs the annotator must explain."""
    d = tmp_path_factory.mktemp("annotate")
    shutil.copyfile(data_dir / DATASET / "html" / f"{PAGE_ID}.html", d / "article.html")
    shutil.copyfile(data_dir / DATASET / "html" / "12.html", d / "second.html")
    (d / "hostile.html").write_text(HOSTILE_HTML)
    (d / "binary.html").write_bytes(bytes(range(256)) * 16)
    (d / "notext.html").write_text("<html><head><script>var x = 1;</script></head><body>  </body></html>")
    # A gold file that describes another page.
    shutil.copyfile(data_dir / DATASET / "html" / "49.html", d / "stale.html")
    shutil.copyfile(data_dir / DATASET / "gold" / "44.txt", d / "stale.txt")
    return d


@pytest.fixture(scope="module")
def annotate_server(annotate_dir, small_model):
    proc = subprocess.Popen(
        [sys.executable, "-m", "cleaner.cli", "annotate", str(annotate_dir), "--port", "0", "--model",
         str(small_model)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
    )
    line: list[str] = []
    reader = threading.Thread(target=lambda: line.append(proc.stdout.readline()), daemon=True)
    reader.start()
    reader.join(60)
    if not line or "http://" not in line[0]:
        proc.kill()
        pytest.fail(f"cleaner annotate did not start: {line} {proc.stderr.read()[-2000:]}")
    url = line[0].split("http://", 1)[1].split("/", 1)[0]
    yield f"http://{url}/"
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()


def _labels_in_page(pg) -> list[str]:
    return pg.eval_on_selector_all("#blocks .blk", "els => els.map(e => e.dataset.label)")


def _open(pg, base: str, name: str):
    pg.goto(f"{base}#{name}")
    pg.wait_for_function("n => document.getElementById('page-name').textContent === n"
                         " && document.getElementById('status').textContent !== 'loading…'", arg=name)


KEY = {"header": "h", "paragraph": "p", "list": "l", "continuation": "c", "other": "o"}


def test_annotate_label_save_reload_train_clean(page, annotate_server, annotate_dir, small_model, data_dir, tmp_path):
    from cleaner.align import align_blocks
    from cleaner.api import clean_html
    from cleaner.assemble import assemble
    from cleaner.gold import read_gold
    from cleaner.model import load_model
    from cleaner.score import score_document

    html_path = annotate_dir / "article.html"
    res = page_blocks(html_path, small_model)
    blocks = res.blocks
    # What the annotator wants: the labels of the page's own hand-cleaned gold.
    target = align_blocks(blocks, read_gold(data_dir / DATASET / "gold" / f"{PAGE_ID}.txt")).labels
    assert set(target) == {"header", "paragraph", "list", "continuation", "other"}

    _open(page, annotate_server, "article.html")
    assert page.locator("#blocks .blk").count() == len(blocks)
    assert _labels_in_page(page) == res.labels  # pre-filled from the model
    assert "labels from the model" in page.inner_text("#source")

    # Keys and range selection: blocks 0-2 with shift+arrows, "l", then "m" back to the model.
    page.locator('.blk[data-i="0"]').click()
    page.keyboard.press("Shift+ArrowDown")
    page.keyboard.press("Shift+ArrowDown")
    assert page.locator(".blk.sel").count() == 3
    page.keyboard.press("l")
    assert _labels_in_page(page)[:3] == ["list"] * 3
    assert page.locator("#dirty").is_visible()
    page.keyboard.press("m")
    assert _labels_in_page(page)[:3] == res.labels[:3]

    # Now the real work: every run of blocks whose label differs from the target, selected
    # with click + shift+click and labelled alternately with a key and a toolbar button.
    runs: list[tuple[int, int, str]] = []
    for i, (have, want) in enumerate(zip(res.labels, target)):
        if have != want:
            if runs and runs[-1][1] == i - 1 and runs[-1][2] == want:
                runs[-1] = (runs[-1][0], i, want)
            else:
                runs.append((i, i, want))
    assert runs, "the model already agrees with the gold: pick another page"
    for n, (lo, hi, want) in enumerate(runs):
        page.locator(f'.blk[data-i="{lo}"]').click()
        if hi > lo:
            page.locator(f'.blk[data-i="{hi}"]').click(modifiers=["Shift"])
        if n % 2:
            page.click(f'#toolbar button[data-label="{want}"]')
        else:
            page.keyboard.press(KEY[want])
    assert _labels_in_page(page) == target
    page.locator('.blk[data-i="8"]').click()  # a range selection, for the screenshot
    page.locator('.blk[data-i="10"]').click(modifiers=["Shift"])
    assert page.locator(".blk.sel").count() == 3
    assert _labels_in_page(page) == target
    shot(page, "annotate.png")

    page.keyboard.press("Control+s")
    page.wait_for_function("() => document.getElementById('status').textContent.startsWith('Saved')")
    assert "read back differently" not in page.inner_text("#status")
    assert not page.locator("#dirty").is_visible()
    assert page.locator('#pages li[data-name="article.html"].has-gold').count() == 1

    # The gold file: CleanEval markers, F1 = 1 (and markup F1 = 1) against the labels given,
    # and the aligner reads exactly these labels back.
    gold_path = annotate_dir / "article.txt"
    gold = read_gold(gold_path)
    assert gold.splitlines()[0][:3] in ("<h>", "<p>", "<l>")
    given = assemble(blocks, target).cleaneval
    s = score_document(given, gold)
    assert (s.f1, s.markup_f1) == (1.0, 1.0)
    assert align_blocks(blocks, gold).labels == target
    assert not [p for p in annotate_dir.iterdir() if p.name.endswith(".tmp")]

    # Reloading shows the saved labels, now read from the gold file.
    page.reload()
    page.wait_for_function("() => document.getElementById('source').textContent.startsWith('labels from article.txt')")
    assert _labels_in_page(page) == target

    # `cleaner train` accepts the folder (the stale gold is left out), and a model trained on
    # the annotated page cleans it into exactly the annotated content. (The default L2 prior,
    # c2 = 8, is sized for thousands of training pages; a model of one page is given a weak one.)
    model_path = tmp_path / "annotated.crfsuite"
    assert run_cli("train", annotate_dir, "--out", model_path, "--jobs", "1", "-q", "--c2", "0.05") == 0
    out_dir = tmp_path / "cleaned"
    assert run_cli("clean", html_path, "--model", model_path, "--out", out_dir, "-q") == 0
    cleaned = (out_dir / "article.txt").read_text(encoding="utf-8").rstrip("\n")
    assert cleaned == given
    assert clean_html(html_path.read_bytes(), model=load_model(model_path)).cleaneval == given
    assert page.dialogs == []


def test_annotate_explains_bad_input(page, annotate_server, annotate_dir):
    _open(page, annotate_server, "binary.html")
    assert "does not decode as text" in page.inner_text("#message")
    assert page.locator("#blocks .blk").count() == 0
    assert page.locator("#save").is_disabled()

    _open(page, annotate_server, "notext.html")
    assert "has no text" in page.inner_text("#message")

    _open(page, annotate_server, "stale.html")
    notice = page.inner_text(".notice.error")
    assert "no longer aligns with this page" in notice and "stale.txt" in notice
    assert "the gold file does not align" in page.inner_text("#source")
    assert page.locator("#blocks .blk").count() > 0
    shot(page, "annotate-stale-gold.png")

    # Hostile page text is shown as text, and `<p>` in it does not become a gold marker.
    _open(page, annotate_server, "hostile.html")
    texts = page.eval_on_selector_all("#blocks .blk .text", "els => els.map(e => e.textContent)")
    assert "<script>alert(1)</script>" in texts
    page.locator('.blk[data-i="0"]').click()
    page.keyboard.press("h")
    page.keyboard.press("Shift+End")
    page.click('#toolbar button[data-label="paragraph"]')
    page.click("#save")
    page.wait_for_function("() => document.getElementById('status').textContent.startsWith('Saved')")
    assert "round trip F1 1.000, markup F1 1.000." in page.inner_text("#status")
    gold = (annotate_dir / "hostile.txt").read_text()
    assert "&lt;p> tag" in gold and "<script>alert(1)</script>" in gold
    assert gold.startswith("<h> Hostile \"page\"\n<p> ")
    body = page.inner_text("body")
    assert "Traceback" not in body
    assert page.dialogs == []
    assert all(u.startswith(annotate_server) for u in page.requests), page.requests


def _request(url: str, data=None, headers=None):
    req = urllib.request.Request(url, data=data, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=20) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_annotate_api_refuses_bad_requests(annotate_server, annotate_dir):
    base = annotate_server
    status, pages = _request(base + "api/pages")
    assert status == 200 and "article.html" in [p["name"] for p in pages["pages"]]
    assert _request(base + "api/page?name=../../etc/passwd")[0] == 404
    assert _request(base + "api/pages", headers={"Host": "evil.example:80"})[0] == 403
    assert _request(base + "api/save", data=b"name=x", headers={"Content-Type": "application/x-www-form-urlencoded"})[0] == 415
    _, pg = _request(base + "api/page?name=second.html")
    n = len(pg["blocks"])

    def save(body):
        return _request(base + "api/save", data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})

    assert save({"name": "second.html", "version": pg["version"], "labels": ["other"] * (n - 1)})[0] == 400
    assert save({"name": "second.html", "version": pg["version"], "labels": ["boiler"] * n})[0] == 400
    assert save({"name": "second.html", "version": "0" * 16, "labels": ["other"] * n})[0] == 409
    status, err = save({"name": "binary.html", "labels": []})
    assert status == 409 and "decode" in err["error"]
    assert not (annotate_dir / "second.txt").exists()


# -- gold files (no browser) ----------------------------------------------------------------


def test_gold_files_read_back_as_the_labels_given(data_dir, tmp_path):
    from cleaner.align import align_blocks
    from cleaner.annotate import expected_labels, gold_from_labels, round_trip, write_atomic
    from cleaner.assemble import assemble
    from cleaner.config import load_config
    from cleaner.data import find_pages
    from cleaner.decode import decode_html
    from cleaner.gold import parse_segments, read_gold
    from cleaner.score import score_document
    from cleaner.segment import segment_blocks

    config = load_config()
    n_blocks = n_mismatch = 0
    for dataset in ("cleaneval-dev", "dragnet", "cleanportaleval"):
        for p in find_pages(data_dir, [dataset])[:6]:
            blocks = segment_blocks(decode_html(p.html_path.read_bytes(), config=config).text, config).blocks
            labels = align_blocks(blocks, read_gold(p.gold_path)).labels
            gold = gold_from_labels([b.text for b in blocks], labels)
            rt = round_trip(blocks, labels, gold)
            # The gold file holds the labelled blocks word for word, joined by spaces, so that the aligner
            # reads its words back to the blocks (the cleaner's output joins touching blocks: "i<b>n</b>" is
            # "in", which no block's words are; docs/fidelity.md).
            s = score_document(assemble([b.text for b in blocks], labels).cleaneval, gold)
            assert s.f1 == 1.0 and s.markup_f1 in (None, 1.0), p.key
            n_blocks += len(blocks)
            n_mismatch += len(rt["mismatches"])
            assert all("elsewhere" in m["why"] for m in rt["mismatches"]), rt["mismatches"]
    assert n_mismatch <= n_blocks * 0.002

    # Markers in page text stay text; a leading continuation is a paragraph; `other` is dropped.
    texts = ["Menu", "Use the <p> tag, or <H>", "and more", "Title", "Item one"]
    labels = ["continuation", "continuation", "other", "header", "list"]
    gold = gold_from_labels(texts, labels)
    assert gold == "<p> Menu Use the &lt;p> tag, or &lt;H>\n<h> Title\n<l> Item one\n"
    assert [s.marker for s in parse_segments(gold)] == ["p", "h", "l"]
    assert expected_labels(labels) == ["paragraph", "continuation", "other", "header", "list"]

    target = tmp_path / "page.txt"
    target.write_text("old")
    write_atomic(target, gold)
    assert target.read_text() == gold
    assert [p.name for p in tmp_path.iterdir()] == ["page.txt"]
