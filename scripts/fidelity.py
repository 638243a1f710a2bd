#!/usr/bin/env python
"""Text fidelity: is the cleaned text the text a browser shows? (docs/fidelity.md)

    .venv/bin/python scripts/fidelity.py lsp [--data ../shared/data] [--sets fundus,chaos]
    .venv/bin/python scripts/fidelity.py browser [--data ../shared/data] [--per-set 25] [--worst 10]

`lsp` counts letter-space-punctuation sequences, the mark of words padded by inline elements
("Speech ,"): a letter or digit (a Unicode word character other than `_`), one or more U+0020
spaces, then one of `, . ; : ! ? ) ]` (regex LSP below), in the packaged default model's plain
output of every page of each set and in the set's gold text.

`browser` loads each sampled page (the decoded text, served as UTF-8, scripts off, every other
request refused) in Debian's headless Chromium, removes its <noscript> elements (the cleaner reads a
page as a browser running scripts shows it) and takes `document.body.innerText`. The kept
blocks of the page (the default model's labelling; image alt texts left out, since innerText has
none) are assembled as the cleaner assembles them, and both texts are cut into whitespace-separated,
case-folded tokens. A line of the cleaned text whose characters (spaces aside) innerText does not
show anywhere is text the browser does not display (a box hidden by the page's style sheet: a
sign-in dialog, a "your browser is not supported" banner); the cleaner cannot see style sheets, and
which blocks it keeps is the labeller's business, not the text's: those tokens are counted apart
("hidden"). The other lines' tokens are aligned with innerText's by difflib.SequenceMatcher. Token
agreement = the cleaned tokens the alignment pairs with the same token of innerText, over the
cleaned tokens shown: a word split ("i n" for "in") or padded punctuation ("Speech ," for
"Speech,") costs its tokens, two words glued ("foobar" for "foo bar") one, a dropped "." after a
link ("here" for "here.") one.
"""

from __future__ import annotations

import argparse
import difflib
import re
import sys
import time
import unicodedata
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))  # browser_setup: the project's one way to get Chromium

from cleaner.api import clean_html  # noqa: E402
from cleaner.gold.align import OTHER  # noqa: E402
from cleaner.gold.data import find_pages  # noqa: E402
from cleaner.label.model import load_model  # noqa: E402
from cleaner.output.assemble import assemble  # noqa: E402
from cleaner.page.decode import decode_html  # noqa: E402
from cleaner.page.segment import table_of  # noqa: E402

LSP = re.compile(r"[^\W_] +[,.;:!?)\]]")
PAGE_URL = "http://fidelity.invalid/page"
BROWSER_SETS = ("cleaneval-dev", "cleaneval-final", "cleanportaleval", "dragnet", "chaos", "big5-2017", "fundus")


def lsp_count(text: str) -> int:
    """Letter-space-punctuation sequences in `text` (module docstring)."""
    return len(LSP.findall(text))


def tokens(text: str) -> list[str]:
    # Case-folded: innerText applies CSS text-transform, which no cleaner sees.
    return unicodedata.normalize("NFKC", text).casefold().split()


def token_agreement(cleaned: str, shown: str) -> tuple[int, int, int]:
    """(tokens of `cleaned` paired with the same token of `shown`, tokens of `cleaned` that `shown`
    displays, tokens of `cleaned` it does not: hidden), as in the module docstring."""
    b = tokens(shown)
    displayed = "".join(b)
    p: list[str] = []
    hidden = 0
    for line in cleaned.splitlines():
        t = tokens(line)
        if "".join(t) in displayed:  # (spacing aside: the spacing is what is measured)
            p.extend(t)
        else:
            hidden += len(t)
    blocks = difflib.SequenceMatcher(None, b, p, autojunk=False).get_matching_blocks()
    return sum(m.size for m in blocks), len(p), hidden


def kept_text(data: bytes, model=None) -> str:
    """The cleaner's plain text of the page's kept blocks, image alt texts left out."""
    res = clean_html(data, model=model, keep_blocks=True)
    if res.status != "cleaned":
        return ""
    labels = [OTHER if b.artificial == "img-alt" else y for b, y in zip(res.blocks, res.labels)]
    return assemble(table_of(res.blocks), labels).plain


def open_page(context):
    """A page of `context` that serves one document at PAGE_URL and refuses every other request."""
    page = context.new_page()
    page.body = b""

    def route(r):
        if r.request.url == PAGE_URL:
            r.fulfill(status=200, body=page.body, headers={"content-type": "text/html; charset=utf-8"})
        else:
            r.abort()

    page.route("**/*", route)
    return page


# With scripts off a browser displays <noscript>, and a page's "please turn JavaScript on" style there
# may hide the whole article; the cleaner reads the page as a browser that runs scripts does, without
# <noscript>, so the comparison removes them (and their style sheets) before reading innerText.
_INNER_TEXT = """() => {
    document.querySelectorAll('noscript').forEach(e => e.remove());
    return document.body ? document.body.innerText : '';
}"""


def inner_text(page, html: str, timeout_ms: int = 20_000) -> str:
    """document.body.innerText of `html` in `page` (from open_page)."""
    page.body = html.encode("utf-8", "surrogatepass").decode("utf-8", "replace").encode("utf-8")
    page.goto(PAGE_URL, wait_until="domcontentloaded", timeout=timeout_ms)
    return page.evaluate(_INNER_TEXT)


def browser_sample(data_dir: str | Path, per_set: int) -> list:
    """Every (len // per_set)-th page of each of BROWSER_SETS: a fixed sample across sites."""
    out = []
    for name in BROWSER_SETS:
        pages = find_pages(Path(data_dir) / name) if (Path(data_dir) / name).is_dir() else []
        step = max(1, len(pages) // per_set)
        out.extend(pages[::step][:per_set])
    return out


def cmd_lsp(args) -> int:
    model = load_model()
    print("| set | pages | cleaned output | gold |\n|---|---|---|---|")
    for name in args.sets.split(","):
        pages = find_pages(Path(args.data) / name)
        ours = sum(lsp_count(clean_html(p.read_html(), model=model).plain or "") for p in pages)
        gold = sum(lsp_count(p.read_gold()) for p in pages if p.gold_path)
        print(f"| {name} | {len(pages)} | {ours} | {gold} |", flush=True)
    return 0


def cmd_browser(args) -> int:
    from browser_setup import ensure_chromium, scriptless_context

    model = load_model()
    pages = browser_sample(args.data, args.per_set)
    per_set: dict[str, list[int]] = {}
    worst = []
    t0 = time.monotonic()
    with scriptless_context(ensure_chromium()) as context:
        tab = open_page(context)
        for p in pages:
            data = p.read_html()
            shown = inner_text(tab, decode_html(data).text)
            m, n, h = token_agreement(kept_text(data, model), shown)
            acc = per_set.setdefault(p.dataset, [0, 0, 0, 0])
            acc[0] += m
            acc[1] += n
            acc[2] += h
            acc[3] += 1
            worst.append((m / n if n else 1.0, n - m, h, p.key))
    print(f"{len(pages)} pages in {time.monotonic() - t0:.0f} s\n")
    print("| set | pages | cleaned tokens shown | agreeing | agreement | hidden tokens |\n|---|---|---|---|---|---|")
    tot = [0, 0, 0, 0]
    for name, acc in per_set.items():
        tot = [t + a for t, a in zip(tot, acc)]
        m, n, h, k = acc
        print(f"| {name} | {k} | {n} | {m} | {m / n if n else 1:.4f} | {h} |")
    m, n, h, k = tot
    print(f"| all | {k} | {n} | {m} | {m / n if n else 1:.4f} | {h} |")
    if args.worst:
        print("\nlowest pages (agreement, tokens off, hidden tokens, page):")
        for a, off, h, key in sorted(worst)[: args.worst]:
            print(f"  {a:.4f} {off:5d} {h:5d} {key}")
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data"))
    sub = ap.add_subparsers(dest="cmd", required=True)
    lsp = sub.add_parser("lsp", help="letter-space-punctuation counts of the output and the gold")
    lsp.add_argument("--sets", default="fundus,chaos")
    br = sub.add_parser("browser", help="token agreement with Chromium's innerText")
    br.add_argument("--per-set", type=int, default=25, help="pages per set (default 25)")
    br.add_argument("--worst", type=int, default=10, help="list this many lowest pages")
    args = ap.parse_args(argv)
    return cmd_lsp(args) if args.cmd == "lsp" else cmd_browser(args)


if __name__ == "__main__":
    sys.exit(main())
