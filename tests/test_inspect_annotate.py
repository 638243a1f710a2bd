"""`cleaner inspect` and `cleaner annotate`, checked in headless Chromium (Debian's package).

The browser is Debian's chromium, installed by `browser_setup.chromium_or_skip` when
missing, driven by Playwright. Screenshots are kept in artifacts/ (set
CLEANER_DOC_SCREENSHOTS=1 to refresh the copies in docs/img/ as well).
"""

from __future__ import annotations

import html
import json
import http.server
import os
import shutil
import socket
import stat
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from browser_setup import LAUNCH_ARGS, chromium_or_skip

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
EVIL = "evil.example"  # the hostile site of the attack tests (mapped to 127.0.0.1 in the browser only)


# -- fixtures -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def chromium() -> str:
    return chromium_or_skip()


@pytest.fixture(scope="module")
def browser(chromium):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        # A foreign site for the cross-origin attacks: its name resolves to this machine.
        b = pw.chromium.launch(executable_path=chromium,
                               args=[*LAUNCH_ARGS, f"--host-resolver-rules=MAP {EVIL} 127.0.0.1"])
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
    from cleaner.tools.cli import main

    return main([str(a) for a in args])


def page_blocks(html_path: Path, model_path=None):
    """Blocks of a page as the commands see them, and the model's labels."""
    from cleaner.api import clean_html
    from cleaner.label.model import load_model

    res = clean_html(html_path.read_bytes(), model=load_model(model_path), keep_blocks=True)
    return res


# -- inspect --------------------------------------------------------------------------------


def test_inspect_view_in_chromium(page, small_model, data_dir, tmp_path):
    from cleaner.gold.align import align_blocks
    from cleaner.gold.gold import read_gold
    from cleaner.gold.score import score_document

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
    from cleaner.tools.inspect import find_warc_record

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
    # Symlinks out of the folder are no pages (issue 32): a system file, and a page beside the folder.
    (d / "etc.html").symlink_to("/etc/hostname")
    outside = d.parent / f"{d.name}-outside.html"
    outside.write_text("<html><body><p>A page outside the folder, with a paragraph of text.</p></body></html>")
    (d / "outside.html").symlink_to(outside)
    return d


@dataclass
class Served:
    """A running `cleaner annotate`: the URL it printed (with its token), and its parts."""

    url: str  # http://127.0.0.1:PORT/?token=T
    base: str  # http://127.0.0.1:PORT/
    host: str
    port: int
    token: str
    proc: subprocess.Popen


def start_annotate(folder, *options) -> Served:
    proc = subprocess.Popen(
        [sys.executable, "-m", "cleaner.tools.cli", "annotate", str(folder), "--port", "0", *map(str, options)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
    )
    line: list[str] = []
    reader = threading.Thread(target=lambda: line.append(proc.stdout.readline()), daemon=True)
    reader.start()
    reader.join(60)
    if not line or "http://" not in line[0]:
        proc.kill()
        pytest.fail(f"cleaner annotate did not start: {line} {proc.stderr.read()[-2000:]}")
    url = "http://" + line[0].split("http://", 1)[1].split()[0]
    base, token = url.split("?token=")
    hostport = base[len("http://"):].rstrip("/")
    host, port = hostport.rsplit(":", 1)
    return Served(url, base, host, int(port), token, proc)


def stop(served: Served) -> None:
    served.proc.terminate()
    try:
        served.proc.wait(10)
    except subprocess.TimeoutExpired:
        served.proc.kill()


@pytest.fixture(scope="module")
def annotate_server(annotate_dir, small_model):
    served = start_annotate(annotate_dir, "--model", small_model)
    yield served
    stop(served)


def _labels_in_page(pg) -> list[str]:
    return pg.eval_on_selector_all("#blocks .blk", "els => els.map(e => e.dataset.label)")


def _open(pg, served: Served, name: str):
    pg.goto(f"{served.url}#{name}")
    pg.wait_for_function("n => document.getElementById('page-name').textContent === n"
                         " && document.getElementById('status').textContent !== 'loading…'", arg=name)


KEY = {"header": "h", "paragraph": "p", "list": "l", "continuation": "c", "other": "o"}


def test_annotate_label_save_reload_train_clean(page, annotate_server, annotate_dir, small_model, data_dir, tmp_path):
    from cleaner.gold.align import align_blocks
    from cleaner.api import clean_html
    from cleaner.output.assemble import assemble
    from cleaner.page.segment import table_of
    from cleaner.gold.gold import read_gold
    from cleaner.label.model import load_model
    from cleaner.gold.score import score_document

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
    given = assemble(table_of(blocks), target).cleaneval
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
    umask = os.umask(0o022)
    os.umask(umask)
    assert stat.S_IMODE((annotate_dir / "hostile.txt").stat().st_mode) == 0o666 & ~umask  # like other outputs
    assert "&lt;p> tag" in gold and "<script>alert(1)</script>" in gold
    assert gold.startswith("<h> Hostile \"page\"\n<p> ")
    body = page.inner_text("body")
    assert "Traceback" not in body
    assert page.dialogs == []
    assert all(u.startswith(annotate_server.base) for u in page.requests), page.requests


def _request(served: Served, path: str, data=None, headers=None, token=True, timeout=20):
    """(status, JSON answer) of a request to the annotation server; the session token unless token=False."""
    hdrs = {"X-Cleaner-Token": served.token} if token else {}
    hdrs.update(headers or {})
    req = urllib.request.Request(served.base + path, data=data, headers=hdrs)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def _save_body(served: Served, name: str, label: str = "paragraph") -> bytes:
    """A valid save of every block of `name` as `label`: what an attacker would want written."""
    _, pg = _request(served, "api/page?name=" + name)
    assert pg["status"] == "ok"
    return json.dumps({"name": name, "version": pg["version"], "labels": [label] * len(pg["blocks"])}).encode()


def test_annotate_api_refuses_bad_requests(annotate_server, annotate_dir):
    base = annotate_server
    status, pages = _request(base, "api/pages")
    assert status == 200 and "article.html" in [p["name"] for p in pages["pages"]]
    assert _request(base, "api/page?name=../../etc/passwd")[0] == 404
    assert _request(base, "api/save", data=b"name=x", headers={"Content-Type": "application/x-www-form-urlencoded"})[0] == 415
    _, pg = _request(base, "api/page?name=second.html")
    n = len(pg["blocks"])

    def save(body):
        return _request(base, "api/save", data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})

    assert save({"name": "second.html", "version": pg["version"], "labels": ["other"] * (n - 1)})[0] == 400
    assert save({"name": "second.html", "version": pg["version"], "labels": ["boiler"] * n})[0] == 400
    assert save({"name": "second.html", "version": "0" * 16, "labels": ["other"] * n})[0] == 409
    status, err = save({"name": "binary.html", "labels": []})
    assert status == 409 and "decode" in err["error"]
    assert not (annotate_dir / "second.txt").exists()


# -- attacks (issue 32): each way in that was found, tried as an attacker would --------------


def _raw(served: Served, data: bytes) -> bytes:
    """Send bytes on one connection, then a request that asks the server to close it; all it answers.

    The server answers a connection's requests in order, so whatever it parsed out of `data` has
    been answered (and done) before the closing request's answer.
    """
    closer = b"GET /api/pages HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nX-Cleaner-Token: %s\r\nConnection: close\r\n\r\n" % (
        served.port, served.token.encode())
    with socket.create_connection(("127.0.0.1", served.port), timeout=20) as s:
        s.sendall(data + closer)
        out = b""
        while chunk := s.recv(65536):
            out += chunk
    return out


def _statuses(raw: bytes) -> list[int]:
    """The status of each response in a byte stream of responses (each framed by its Content-Length)."""
    out = []
    while raw:
        head, sep, rest = raw.partition(b"\r\n\r\n")
        assert sep, raw[:200]
        lines = head.split(b"\r\n")
        out.append(int(lines[0].split()[1]))
        length = next(int(v) for k, _, v in (h.partition(b":") for h in lines[1:]) if k.lower() == b"content-length")
        raw = rest[length:]
    return out


def test_smuggled_save_over_a_raw_socket_writes_nothing(annotate_server, annotate_dir):
    served, host = annotate_server, f"127.0.0.1:{annotate_server.port}".encode()
    body = _save_body(served, "second.html")
    # The inner request is a complete, valid save, token included: only the framing stands in its way.
    inner = (b"POST /api/save HTTP/1.1\r\nHost: " + host + b"\r\nX-Cleaner-Token: " + served.token.encode()
             + b"\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body) + body)

    def outer(target: bytes, headers: bytes, payload: bytes = inner) -> bytes:
        return (b"POST " + target + b" HTTP/1.1\r\n" + headers + b"Content-Length: %d\r\n\r\n" % len(payload)
                + payload)

    # Control: two requests pipelined on one connection both get an answer, so one answer below is
    # the server refusing the outer request and not parsing its body, not the helper missing a reply.
    get = b"GET /api/pages HTTP/1.1\r\nHost: " + host + b"\r\nX-Cleaner-Token: " + served.token.encode() + b"\r\n\r\n"
    assert _statuses(_raw(served, get + get)) == [200, 200, 200]

    token = b"X-Cleaner-Token: " + served.token.encode() + b"\r\n"
    attacks = {
        # what a foreign page's "simple" text/plain POST looks like (no token, it cannot read it)
        "text/plain, no token": (outer(b"/api/save", b"Host: " + host + b"\r\nContent-Type: text/plain\r\n"), 403),
        "text/plain with token": (outer(b"/api/save", b"Host: " + host + b"\r\n" + token
                                        + b"Content-Type: text/plain\r\n"), 415),
        "unknown path": (outer(b"/nowhere", b"Host: " + host + b"\r\n" + token), 404),
        "foreign Host": (outer(b"/api/save", b"Host: 127.evil.example\r\nContent-Type: text/plain\r\n"), 403),
        "wrong method": (outer(b"/api/pages", b"Host: " + host + b"\r\n" + token + b"Content-Type: text/plain\r\n"),
                         405),
        "chunked text/plain": (b"POST /api/save HTTP/1.1\r\nHost: " + host + b"\r\nContent-Type: text/plain\r\n"
                               b"Transfer-Encoding: chunked\r\n\r\n%x\r\n" % len(inner) + inner + b"\r\n0\r\n\r\n",
                               403),
    }
    for what, (request, status) in attacks.items():
        assert _statuses(_raw(served, request)) == [status, 200], what
        assert not (annotate_dir / "second.txt").exists(), what
    # A body over the limit is refused before it is read, and the connection closed (nothing after it is read).
    too_large = (b"POST /api/save HTTP/1.1\r\nHost: " + host + b"\r\n" + token + b"Content-Type: application/json\r\n"
                 b"Content-Length: %d\r\n\r\n" % (16 << 20 | 1) + inner)
    assert _statuses(_raw(served, too_large)) == [413]
    assert not (annotate_dir / "second.txt").exists()


def test_annotate_answers_only_its_own_host_names(annotate_server, annotate_dir):
    served, port = annotate_server, annotate_server.port
    for host in (f"127.evil.example:{port}", f"127.0.0.1.nip.io:{port}", f"localhost.evil.example:{port}",
                 f"evil.example:{port}", f"127.0.0.2:{port}", f"127.0.0.1:{port + 1}", "127.0.0.1", f"[::2]:{port}"):
        status, err = _request(served, "api/pages", headers={"Host": host})
        assert status == 403 and "answers only to" in err["error"], host
    for host in (f"127.0.0.1:{port}", f"localhost:{port}", f"LOCALHOST:{port}", f"[::1]:{port}"):
        status, answer = _request(served, "api/pages", headers={"Host": host})
        assert status == 200 and answer["folder"] == annotate_dir.name, host
    # No answer names an absolute path (the folder's is the user's business).
    for path in ("api/pages", "api/page?name=article.html", "api/page?name=missing.html", "api/page?name=etc.html"):
        assert str(annotate_dir.parent) not in json.dumps(_request(served, path)[1]), path


def test_annotate_needs_the_session_token(annotate_server, annotate_dir):
    served = annotate_server
    wrong = served.token[:-1] + ("y" if served.token.endswith("x") else "x")  # one character off
    for path in ("api/pages", "api/page?name=second.html"):
        assert _request(served, path, token=False)[0] == 403
        assert _request(served, path, headers={"X-Cleaner-Token": wrong}, token=False)[0] == 403
        # in the query it opens the page, not the API: a form or an <img> can put it in a URL
        assert _request(served, path + ("&" if "?" in path else "?") + "token=" + served.token, token=False)[0] == 403
    body = _save_body(served, "second.html")
    assert _request(served, "api/save", data=body, headers={"Content-Type": "application/json"}, token=False)[0] == 403
    assert not (annotate_dir / "second.txt").exists()
    # The application page itself: only with the token printed, which it then carries.
    for url in (served.base, served.base + "?token=nope"):
        with pytest.raises(urllib.error.HTTPError) as exc:
            urllib.request.urlopen(url, timeout=20)
        assert exc.value.code == 403 and b"?token=" in exc.value.read()
    with urllib.request.urlopen(served.url, timeout=20) as r:
        assert f'<meta name="cleaner-token" content="{served.token}">' in r.read().decode()


def test_annotate_refuses_cross_site_requests_and_bad_bodies(annotate_server, annotate_dir):
    served = annotate_server
    json_ct = {"Content-Type": "application/json"}
    body = _save_body(served, "second.html")
    for headers in ({"Origin": f"http://{EVIL}"}, {"Origin": "null"}, {"Origin": f"http://127.0.0.1:{served.port + 1}"},
                    {"Sec-Fetch-Site": "cross-site"}, {"Sec-Fetch-Site": "same-site"}):
        assert _request(served, "api/pages", headers=headers)[0] == 403, headers
        assert _request(served, "api/save", data=body, headers={**json_ct, **headers})[0] == 403, headers
    assert not (annotate_dir / "second.txt").exists()
    own = {"Origin": f"http://127.0.0.1:{served.port}", "Sec-Fetch-Site": "same-origin"}
    assert _request(served, "api/pages", headers=own)[0] == 200
    for ctype in ("text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"):
        assert _request(served, "api/save", data=body, headers={"Content-Type": ctype})[0] == 415, ctype
    # Bodies that used to end in "500 internal error": a one-line 400 now.
    for bad, says in ((b"[" * 100_000, "nested too deeply"), (b"\xff\xfe", "not valid JSON"), (b"[]", "JSON object"),
                      (b'{"name": "second.html", "labels": [[[["x"]]]]}', "labels")):
        status, err = _request(served, "api/save", data=bad, headers=json_ct)
        assert status == 400 and says in err["error"] and "\n" not in err["error"], bad[:20]
    assert not (annotate_dir / "second.txt").exists()


def test_annotate_serves_no_symlink_out_of_the_folder(annotate_server):
    served = annotate_server
    names = [p["name"] for p in _request(served, "api/pages")[1]["pages"]]
    assert "article.html" in names and "etc.html" not in names and "outside.html" not in names
    for name in ("etc.html", "outside.html", "../" + annotate_server.base):
        status, err = _request(served, "api/page?name=" + urllib.request.quote(name))
        assert status == 404 and "no page" in err["error"], name


def test_annotate_answers_its_user_under_slow_and_many_requests(annotate_server):
    served = annotate_server
    slow: list[socket.socket] = []
    try:
        # 300 connections that never finish their headers (each used to hold a thread for ever).
        for _ in range(300):
            s = socket.create_connection(("127.0.0.1", served.port), timeout=5)
            s.sendall(b"GET /api/pages HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nX-Slow: " % served.port)
            slow.append(s)
        t0 = time.monotonic()
        assert _request(served, "api/pages", timeout=5)[0] == 200
        alone = time.monotonic() - t0
        # 100 requests at once (the stdlib server's backlog of 5 left 13 of them unanswered for 15 s),
        # and the user's own request in the middle of them.
        with ThreadPoolExecutor(100) as pool:
            crowd = [pool.submit(_request, served, "api/pages") for _ in range(100)]
            t0 = time.monotonic()
            mine = _request(served, "api/page?name=second.html", timeout=5)
            amid = time.monotonic() - t0
            statuses = [f.result()[0] for f in crowd]
        assert mine[0] == 200 and statuses == [200] * 100
        assert alone < 1.0 and amid < 1.0, (alone, amid)
    finally:
        for s in slow:
            s.close()


def test_annotate_cross_origin_page_in_chromium_writes_nothing(page, annotate_server, annotate_dir):
    """A hostile site open in the user's browser (its name mapped to this machine) tries every write it can."""
    served = annotate_server
    target = f"http://127.0.0.1:{served.port}"
    body = _save_body(served, "second.html").decode()
    inner = (f"POST /api/save HTTP/1.1\r\nHost: 127.0.0.1:{served.port}\r\nX-Cleaner-Token: {served.token}\r\n"
             f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n{body}")
    # A text/plain form posts `name=value`: the JSON is split at its last '"' so that the '=' falls in a string.
    cut = body.rindex('"')
    hostile = f"""<!DOCTYPE html><html><body>
<iframe name="sink"></iframe>
<form id="f" method="POST" enctype="text/plain" target="sink" action="{target}/api/save?token={served.token}">
<input type="hidden" name="{html.escape(body[:cut])}" value="{html.escape(body[cut:])}"></form>
<script>
var T = {json.dumps(target)}, TOKEN = {json.dumps(served.token)};
function tried(p) {{
  return p.then(function (r) {{ return "answered " + r.type; }}, function () {{ return "failed"; }});
}}
Promise.all([
  tried(fetch(T + "/api/save", {{method: "POST", mode: "no-cors", body: {json.dumps(inner)}}})),
  tried(fetch(T + "/api/save?token=" + TOKEN, {{method: "POST", mode: "no-cors",
        headers: {{"Content-Type": "text/plain"}}, body: {json.dumps(body)}}})),
  tried(fetch(T + "/api/save", {{method: "POST", headers: {{"Content-Type": "application/json",
        "X-Cleaner-Token": TOKEN}}, body: {json.dumps(body)}}})),
  tried(fetch(T + "/api/pages", {{headers: {{"X-Cleaner-Token": TOKEN}}}}).then(function (r) {{ return r.text(); }})),
]).then(function (r) {{ window.results = r; document.getElementById("f").submit(); }});
</script></body></html>""".encode()

    class Hostile(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(hostile)))
            self.end_headers()
            self.wfile.write(hostile)

        def log_message(self, *args):
            pass

    evil = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Hostile)
    threading.Thread(target=evil.serve_forever, daemon=True).start()
    seen: list[tuple[str, int]] = []
    page.on("response", lambda r: seen.append((r.url, r.status)) if r.url.startswith(target) else None)
    try:
        page.goto(f"http://{EVIL}:{evil.server_port}/")
        page.wait_for_function("() => window.results !== undefined")
        results = page.evaluate("window.results")
        for _ in range(100):  # the form's post (into the iframe) comes last
            if sum("/api/save" in url for url, _ in seen) >= 3:
                break
            page.wait_for_timeout(100)
        page.wait_for_timeout(300)  # time for any write to land
    finally:
        evil.shutdown()
        evil.server_close()
    # The requests reached the server (no-cors ones answer opaquely), were refused, and the reads failed.
    assert results[:2] == ["answered opaque"] * 2 and results[2:] == ["failed", "failed"], results
    saves = [status for url, status in seen if "/api/save" in url]
    assert len(saves) >= 3 and all(status in (403, 415) for status in saves), seen
    assert not (annotate_dir / "second.txt").exists()
    # DNS rebinding: the foreign name, now resolving to this machine, opens nothing, token or not.
    response = page.goto(f"http://{EVIL}:{served.port}/?token={served.token}")
    assert response.status == 403 and "answers only to" in page.inner_text("body")
    assert page.dialogs == []


def test_annotate_internal_error_says_its_kind_not_its_paths(capfd):
    from cleaner.tools.annotate_server import AnnotateApp

    class Broken:  # an annotator whose bug would reveal a path in its message
        folder, model = Path("/home/someone/pages"), None

        def pages(self):
            raise OSError(2, "No such file or directory", "/home/someone/pages/.secret")

    app = AnnotateApp(Broken(), lambda token: "", "t0ken")
    app.hosts = frozenset({"127.0.0.1:8765"})
    started: list = []
    body = b"".join(app({"REQUEST_METHOD": "GET", "PATH_INFO": "/api/pages", "HTTP_HOST": "127.0.0.1:8765",
                         "HTTP_X_CLEANER_TOKEN": "t0ken"}, lambda status, headers: started.append(status)))
    assert started == ["500 Internal Server Error"]
    assert json.loads(body) == {"error": "internal error (FileNotFoundError); the terminal running cleaner annotate "
                                         "has the details"}
    assert "/home/someone/pages/.secret" in capfd.readouterr().err  # the user sees it where they started the server


def test_annotate_host_options(tmp_path, data_dir):
    from cleaner.tools.annotate import bind_address

    assert bind_address("127.0.0.1", False) == ("127.0.0.1", False, None)
    assert bind_address("localhost", False) == ("127.0.0.1", False, None)
    assert bind_address("[::1]", False) == ("::1", False, None)
    address, remote, problem = bind_address("0.0.0.0", False)
    assert remote and "--allow-remote" in problem
    assert bind_address("0.0.0.0", True) == ("0.0.0.0", True, None)
    folder = tmp_path / "pages"
    folder.mkdir()
    shutil.copyfile(data_dir / DATASET / "html" / "12.html", folder / "a.html")
    assert run_cli("annotate", folder, "--host", "0.0.0.0", "--no-model") == 2  # usage: no server started
    # With --allow-remote: a warning, the user's own host names, and still the token on every request.
    # (Requests are sent to 127.0.0.1 only.)
    served = start_annotate(folder, "--host", "0.0.0.0", "--allow-remote", "--no-model")
    try:
        url = f"http://127.0.0.1:{served.port}/api/pages"
        own_name = {"Host": f"annotator.lan:{served.port}"}
        req = urllib.request.Request(url, headers={"X-Cleaner-Token": served.token, **own_name})
        with urllib.request.urlopen(req, timeout=20) as r:
            assert r.status == 200
        with pytest.raises(urllib.error.HTTPError) as exc:
            urllib.request.urlopen(urllib.request.Request(url, headers=own_name), timeout=20)
        assert exc.value.code == 403
    finally:
        stop(served)
    err = served.proc.stderr.read()
    assert "warning: serving on 0.0.0.0, reachable from other machines" in err
    # IPv6 loopback works, with the same checks.
    try:
        socket.socket(socket.AF_INET6).bind(("::1", 0))
    except OSError:
        pytest.skip("no IPv6 loopback on this machine")
    served = start_annotate(folder, "--host", "::1", "--no-model")
    try:
        assert served.base.startswith("http://[::1]:")
        url = served.base + "api/pages"
        req = urllib.request.Request(url, headers={"X-Cleaner-Token": served.token})
        with urllib.request.urlopen(req, timeout=20) as r:
            assert [p["name"] for p in json.loads(r.read())["pages"]] == ["a.html"]
        with pytest.raises(urllib.error.HTTPError) as exc:
            urllib.request.urlopen(url, timeout=20)
        assert exc.value.code == 403
    finally:
        stop(served)


# -- gold files (no browser) ----------------------------------------------------------------


def test_gold_files_read_back_as_the_labels_given(data_dir, tmp_path):
    from cleaner.gold.align import align_blocks
    from cleaner.tools.annotate import expected_labels, gold_from_labels, round_trip, write_atomic
    from cleaner.output.assemble import assemble
    from cleaner.config import load_config
    from cleaner.gold.data import find_pages
    from cleaner.page.decode import decode_html
    from cleaner.gold.gold import parse_segments, read_gold
    from cleaner.gold.score import score_document
    from cleaner.page.segment import segment_blocks

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
    # The mode every other output gets (0644 under the usual umask), not mkstemp's 0600.
    for mask in (0o022, 0o077, 0o002):
        old = os.umask(mask)
        try:
            write_atomic(target, gold)
        finally:
            os.umask(old)
        assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~mask


def test_annotate_answers_on_the_loopback_address_it_was_given(tmp_path, data_dir):
    """`--host 127.0.0.2` was accepted, but the address it printed answered 403 (its Host was not among the
    server's names): the loopback address it listens on is one of them."""
    folder = tmp_path / "pages"
    folder.mkdir()
    (folder / "a.html").write_bytes((data_dir / "cleaneval-dev/html/1.html").read_bytes())
    served = start_annotate(folder, "--host", "127.0.0.2", "--no-model")
    try:
        assert served.base.startswith("http://127.0.0.2:")
        with urllib.request.urlopen(served.url, timeout=20) as r:  # the page the command printed
            assert r.status == 200
        req = urllib.request.Request(served.base + "api/pages", headers={"X-Cleaner-Token": served.token})
        with urllib.request.urlopen(req, timeout=20) as r:
            assert [p["name"] for p in json.loads(r.read())["pages"]] == ["a.html"]
    finally:
        stop(served)
