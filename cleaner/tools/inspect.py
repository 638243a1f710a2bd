"""`cleaner inspect`: one page's labelled blocks as a self-contained HTML view.

    cleaner inspect PAGE.html [--gold GOLD.txt] [--model M] --out VIEW.html
    cleaner inspect --warc FILE (--record-id ID | --url URL) [--gold GOLD.txt] --out VIEW.html

The view lists the page's blocks in order, each coloured by its predicted label with the
label's probability; a click (or Enter) opens the block's containers, all label marginals
and its strongest CRF state features (the attributes of the block whose weight for the
label is largest in magnitude). With a gold file, each block also shows the gold label
from the project's aligner (`align_blocks`), disagreements are outlined, and the header
gives the document's word P/R/F1, text-only and markup figures from the project's scorer.

The file has no external resource: CSS and JS are inline, a Content-Security-Policy
forbids every fetch, and all page text is HTML-escaped (pages are hostile input).

`analyse_page` and the helpers below are shared with `cleaner annotate`.
"""

from __future__ import annotations

import html
import json
import sys
import time
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from ..api import CleanResult, clean_html
from ..gold.align import align_blocks
from ..labels import LABELS
from ..page.segment import Block, table_of

EXIT_OK, EXIT_PARTIAL, EXIT_USAGE, EXIT_INPUT, EXIT_MODEL = 0, 1, 2, 3, 4
TOP_FEATURES = 8
# A decoded page with more than this share of U+FFFD / control characters is not text.
UNDECODABLE_SHARE = 0.05
CSP = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:"

# What a user is told for each rejection reason of `clean_html` (plus `undecodable`, `unreadable`).
REASON_MESSAGES = {
    "unreadable": "The file cannot be read.",
    "empty": "The file is empty (no bytes, or only whitespace).",
    "not_text": "The bytes are binary (an image, a PDF stream, random data), not an HTML page.",
    "too_large": "The page is larger than the size limit ([limits] max_html_bytes).",
    "undecodable": "The file does not decode as text: {share:.0%} of its characters are undecodable or "
    "control characters (a binary file, or an encoding the decoder does not recognise).",
    "decode_failed": "The page could not be decoded.",
    "parse_error": "The HTML could not be parsed.",
    "no_text": "The page has no text: there is no block to show or label.",
    "no_content": "The model labels every block of this page as boilerplate (other).",
    "timeout": "Processing the page ran out of its time budget ([limits] time_budget_s).",
    "internal_error": "Internal error while processing the page.",
}


def web_asset(name: str) -> str:
    """The text of a file in cleaner/web/ (CSS, JS and HTML inlined into the views)."""
    return resources.files("cleaner").joinpath("web", name).read_text(encoding="utf-8")


def esc(value) -> str:
    return html.escape(str(value), quote=True)


def json_for_script(value) -> str:
    """JSON that is safe inside an inline <script> element (no `</script>`, no `<!--`)."""
    return (json.dumps(value, ensure_ascii=False)
            .replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))


# -- analysis -------------------------------------------------------------------------------


@dataclass
class PageAnalysis:
    """One page cleaned with its blocks kept, plus what a viewer needs to explain it."""

    status: str  # "ok" (blocks to show) | "error" (nothing to show: see reason/message)
    reason: str | None = None
    message: str = ""
    result: CleanResult | None = None
    blocks: list[Block] = field(default_factory=list)
    labels: list[str] = field(default_factory=list)  # predicted
    confidences: list[float] = field(default_factory=list)
    marginals: list[dict[str, float]] = field(default_factory=list)
    features: list[list[str]] = field(default_factory=list)  # CRF attributes per block
    bad_char_share: float = 0.0

    @property
    def ok(self) -> bool:
        return self.status == "ok"


def undecodable_share(text: str) -> float:
    """Share of U+FFFD and control characters (other than whitespace) in a decoded text."""
    if not text:
        return 0.0
    bad = sum(1 for ch in text if ch == "\ufffd" or (ord(ch) < 32 and ch not in "\t\n\r\f")
              or 0x7F <= ord(ch) < 0xA0)
    return bad / len(text)


def reason_message(reason: str | None, error: str | None = None, share: float = 0.0) -> str:
    msg = REASON_MESSAGES.get(reason or "", f"The page was rejected ({reason}).").format(share=share)
    if error and reason in ("internal_error", "parse_error", "decode_failed"):
        msg += f" ({error})"
    return msg


def analyse_page(data: bytes, *, model, config, http_charset: str | None = None,
                 with_features: bool = True) -> PageAnalysis:
    """Clean a page keeping its blocks; never raises (failures become status "error")."""
    from ..page.decode import decode_html

    try:
        decoded = decode_html(bytes(data), http_charset=http_charset, config=config)
        share = undecodable_share(decoded.text)
    except Exception:
        share = 0.0
    if share > UNDECODABLE_SHARE:
        return PageAnalysis("error", "undecodable", reason_message("undecodable", share=share), bad_char_share=share)
    res = clean_html(data, http_charset=http_charset, model=model, config=config, keep_blocks=True,
                     all_marginals=True)
    if not res.blocks:
        return PageAnalysis("error", res.reason, reason_message(res.reason, res.error), result=res)
    out = PageAnalysis("ok", res.reason, reason_message(res.reason) if res.reason else "", result=res,
                       blocks=res.blocks, labels=res.labels or [], confidences=res.confidences or [],
                       marginals=res.marginals or [], bad_char_share=share)
    if with_features:
        try:
            extractor = model.extractor()
            blocks = table_of(res.blocks)
            out.features = extractor.extract(blocks, extractor.counts(blocks), page=res.page)
        except Exception:  # the view is still useful without features
            out.features = []
    return out


_WEIGHTS: dict[str, dict[str, dict[str, float]]] = {}


def feature_weights(model) -> dict[str, dict[str, float]]:
    """{readable attribute: {label: weight}} of the model's CRF state features (cached per model).

    The model file stores attributes under short codes (model.AttributeCodec); the index
    is keyed by those codes and `_ReadableWeights` looks readable names up through them.
    """
    from ..label.crf_model import attribute_code, attribute_weights

    key = model.hash
    if key not in _WEIGHTS:
        index: dict[str, dict[str, float]] = {}
        for (attr, label), w in attribute_weights(model).items():
            index.setdefault(attr, {})[label] = w
        _WEIGHTS[key] = _ReadableWeights(index, lambda a: attribute_code(model, a))
    return _WEIGHTS[key]


class _ReadableWeights(dict):
    """A weight index keyed by stored codes, queried with readable attribute names."""

    def __init__(self, by_code: dict, encode):
        super().__init__(by_code)
        self._encode = encode

    def __contains__(self, attr) -> bool:
        return dict.__contains__(self, self._encode(attr))

    def __getitem__(self, attr):
        return dict.__getitem__(self, self._encode(attr))


def strongest_features(attrs: list[str], label: str, weights: dict[str, dict[str, float]],
                       k: int = TOP_FEATURES) -> list[tuple[str, float]]:
    """The k attributes of a block with the largest |weight| for `label`."""
    scored = [(a, weights[a][label]) for a in attrs if a in weights and label in weights[a]]
    scored.sort(key=lambda aw: (-abs(aw[1]), aw[0]))
    return scored[:k]


# -- the view --------------------------------------------------------------------------------


def _fmt(x: float | None) -> str:
    return "–" if x is None else f"{x:.3f}"


def _features_table(feats: list[tuple[str, float]], label: str) -> str:
    if not feats:
        return ""
    rows = "".join(
        f'<tr><td class="w {"pos" if w >= 0 else "neg"}">{w:+.3f}</td><td><code>{esc(a)}</code></td></tr>'
        for a, w in feats
    )
    return (f'<div>Strongest features for <b>{esc(label)}</b> '
            f'(CRF state weights of this block\'s attributes):</div><table>{rows}</table>')


def _block_html(i: int, a: PageAnalysis, gold: list[str] | None, weights) -> str:
    b = a.blocks[i]
    label = a.labels[i]
    p = a.confidences[i] if i < len(a.confidences) else None
    g = gold[i] if gold is not None else None
    dis = g is not None and g != label
    path = " › ".join(b.containers) or "(top level)"
    cls = f"blk L-{label}" + (" dis" if dis else "")
    title = f"{label}" + (f" {p:.2f}" if p is not None else "") + (f" · gold {g}" if g else "") + f" · {path}"
    gold_badge = f'<span class="badge gold L-{esc(g)}">gold: {esc(g)}</span>' if g is not None else ""
    head = (
        f'<div class="{cls}" id="b{i}" data-i="{i}" data-label="{esc(label)}"'
        + (f' data-gold="{esc(g)}"' if g is not None else "")
        + f' tabindex="0" aria-expanded="false" title="{esc(title)}">'
        f'<span class="idx">{i}</span><span class="badge L-{esc(label)}">{esc(label)}</span>'
        f'<span class="prob">{"" if p is None else f"{p:.2f}"}</span>{gold_badge}'
        f'<span class="text">{esc(b.text)}</span></div>'
    )
    # Details (shown on click).
    parts = [f'<div><b>containers</b> <code>{esc(path)}</code></div>']
    flags = []
    if b.in_link:
        flags.append("inside a link")
    if b.artificial:
        flags.append(f"made up by the segmenter ({b.artificial})")
    if b.idclass:
        flags.append("id/class: " + " ".join(b.idclass[:12]))
    if flags:
        parts.append(f"<div>{esc(' · '.join(flags))}</div>")
    if i < len(a.marginals) and a.marginals[i]:
        m = a.marginals[i]
        cells = "".join(
            f'<td><span class="swatch L-{esc(y)}"></span>{esc(y)} {m[y]:.3f}</td>'
            for y in sorted(m, key=lambda y: -m[y])
        )
        parts.append(f"<table><tr><th>marginals</th>{cells}</tr></table>")
    if weights is not None and i < len(a.features):
        parts.append(_features_table(strongest_features(a.features[i], label, weights), label))
        if dis and g is not None:
            parts.append(_features_table(strongest_features(a.features[i], g, weights), g))
    return head + f'<div class="details">{"".join(parts)}</div>'


def render_view(a: PageAnalysis, *, title: str, source: list[str], model=None, gold_text: str | None = None,
                gold_name: str | None = None) -> str:
    """The self-contained HTML of one page's view (see module docstring)."""
    from ..gold.score import score_document

    gold_labels = None
    notices: list[tuple[str, str]] = []
    score_html = ""
    if a.message:
        notices.append(("error" if not a.ok else "", a.message))
    if gold_text is not None:
        pred = a.result.cleaneval if a.result is not None else ""
        s = score_document(pred, gold_text)
        agree_html = ""
        if a.ok:
            al = align_blocks(a.blocks, gold_text)
            gold_labels = al.labels
            n_dis = sum(1 for x, y in zip(a.labels, gold_labels) if x != y)
            bad = ' class="bad"' if n_dis else ""
            agree_html = ('<table class="scores" id="blocks-agree"><tr>'
                          f'<th>blocks agreeing</th><td id="agree">{len(a.blocks) - n_dis}/{len(a.blocks)}</td>'
                          f'<th>disagreements</th><td id="n-dis"{bad}>{n_dis}</td>'
                          f'<th>gold words on page</th><td id="coverage">{al.coverage:.1%}</td></tr></table>')
            if al.coverage < 0.5:
                notices.append(("", f"Only {al.coverage:.0%} of the gold words are found on the page: "
                                    "the gold file may not describe this page."))
        score_html = (
            '<table class="scores" id="scores"><tr>'
            f'<th>word P</th><td id="precision">{_fmt(s.precision)}</td>'
            f'<th>R</th><td id="recall">{_fmt(s.recall)}</td>'
            f'<th>F1</th><td id="f1">{_fmt(s.f1)}</td>'
            f'<th>text-only</th><td id="text-only">{_fmt(s.text_only)}</td>'
            f'<th>markup P</th><td id="markup-precision">{_fmt(s.markup_precision)}</td>'
            f'<th>R</th><td id="markup-recall">{_fmt(s.markup_recall)}</td>'
            f'<th>F1</th><td id="markup-f1">{_fmt(s.markup_f1)}</td>'
            f"</tr></table>{agree_html}"
        )
    weights = None
    if model is not None and a.features:
        try:
            weights = feature_weights(model)
        except Exception:
            weights = None
    counts = {y: 0 for y in LABELS}
    for y in a.labels:
        counts[y] = counts.get(y, 0) + 1
    legend = '<span class="meta">predicted:</span> ' + "".join(
        f'<span class="item L-{esc(y)}"><span class="swatch"></span>{esc(y)} <span class="n" data-label="{esc(y)}">'
        f"{n}</span></span>"
        for y, n in counts.items()
    )
    controls = ('<span class="controls"><label><input type="checkbox" id="hide-other"> hide other</label>'
                + ('<label><input type="checkbox" id="only-dis"> only disagreements</label>'
                   '<span class="meta">keys: <kbd>n</kbd>/<kbd>N</kbd> next/previous disagreement, '
                   'click a block for its features</span>' if gold_labels is not None
                   else '<span class="meta">click a block for its containers, marginals and features</span>')
                + "</span>")
    blocks_html = "\n".join(_block_html(i, a, gold_labels, weights) for i in range(len(a.blocks)))
    res = a.result
    meta = list(source)
    if res is not None:
        if res.url:
            meta.append(f"URL {res.url}")
        if res.encoding:
            meta.append(f"encoding {res.encoding} ({res.encoding_source})")
        meta.append(f"model {res.model_hash}")
        meta.append(f"{len(a.blocks)} blocks")
        if res.stats is not None:
            meta.append(f"{res.stats.words_kept}/{res.stats.words_total} words kept")
            if res.stats.expected_f1 is not None:
                meta.append(f"expected word F1 {res.stats.expected_f1:.2f}")
    if gold_name:
        meta.append(f"gold {gold_name}")
    notices_html = "".join(
        f'<div class="notice {k}" role="{"alert" if k else "status"}">{esc(m)}</div>' for k, m in notices
    )
    out_html = ""
    if res is not None and res.cleaneval:
        out_html = (f'<section class="out"><details><summary>Cleaned text (CleanEval format, '
                    f'{res.stats.n_segments if res.stats else "?"} segments)</summary>'
                    f'<pre id="cleaned">{esc(res.cleaneval)}</pre></details></section>')
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{CSP}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="cleaner inspect">
<title>{esc(title)} — cleaner inspect</title>
<style>{web_asset("labels.css")}
{web_asset("inspect.css")}</style>
</head><body>
<header class="top">
<h1>{esc(title)}</h1>
<div class="meta">{esc(" · ".join(meta))}</div>
{notices_html}
<div class="row">{score_html}</div>
<div class="row legend" id="legend">{legend}{controls}</div>
</header>
<main>
<div id="blocks" data-n="{len(a.blocks)}">
{blocks_html}
</div>
{out_html}
</main>
<script>{web_asset("inspect.js")}</script>
</body></html>
"""


# -- WARC records ---------------------------------------------------------------------------


def _strip_id(value: str) -> str:
    return value.strip().strip("<>").lower()


def find_warc_record(path: str, record_id: str | None = None, url: str | None = None):
    """The first HTML record of a WARC/ARC file with this record id (or target URL).

    Returns (record, stats, n_matches); record is None when nothing matches.
    """
    from ..warc.read import iter_html_records, open_warc
    from ..warc.records import WarcFileStats

    stats = WarcFileStats()
    found, n = None, 0
    want_id = _strip_id(record_id) if record_id else None
    with open_warc(path) as fh:
        for rec in iter_html_records(fh, Path(path).name, stats):
            if want_id is not None:
                hit = _strip_id(rec.record_id) == want_id
            else:
                hit = rec.url == url or rec.url.rstrip("/") == (url or "").rstrip("/")
            if hit:
                n += 1
                if found is None:
                    found = rec
                    if want_id is not None:  # record ids are unique: stop reading
                        break
    return found, stats, n


# -- the command ----------------------------------------------------------------------------


def _fail(code: int, message: str) -> int:
    print(f"cleaner: error: {message}", file=sys.stderr)
    return code


def cmd_inspect(args) -> int:
    from ..config import ConfigError, load_config
    from ..gold.gold import read_gold
    from ..label.model import load_model
    from ..label.model_files import ModelError

    if bool(args.page) == bool(args.warc):
        return _fail(EXIT_USAGE, "give either PAGE.html or --warc FILE (with --record-id or --url)")
    if args.warc and bool(args.record_id) == bool(args.url):
        return _fail(EXIT_USAGE, "--warc needs exactly one of --record-id ID or --url URL")
    if not args.warc and (args.record_id or args.url):
        return _fail(EXIT_USAGE, "--record-id / --url select a record of --warc FILE")
    gold_text = None
    if args.gold:
        try:
            gold_text = read_gold(args.gold)
        except OSError as exc:
            return _fail(EXIT_INPUT, f"cannot read gold file {args.gold}: {exc.strerror or exc}")
    try:
        config = load_config(args.config)
    except ConfigError as exc:
        return _fail(EXIT_MODEL, str(exc))
    try:
        model = load_model(args.model)
    except ModelError as exc:
        return _fail(EXIT_MODEL, str(exc))

    http_charset = None
    if args.page:
        path = Path(args.page)
        try:
            data = path.read_bytes()
        except OSError as exc:
            return _fail(EXIT_INPUT, f"cannot read {path}: {exc.strerror or exc}")
        title, source = path.name, [str(path)]
    else:
        try:
            rec, stats, n = find_warc_record(args.warc, args.record_id, args.url)
        except OSError as exc:
            return _fail(EXIT_INPUT, f"cannot read {args.warc}: {exc.strerror or exc}")
        if rec is None:
            what = f"record id {args.record_id}" if args.record_id else f"URL {args.url}"
            return _fail(EXIT_INPUT, f"no HTML record with {what} in {args.warc} "
                         f"({stats.html_records} HTML records of {stats.records_read} read)")
        data, http_charset = rec.payload, rec.http_charset
        title = rec.url or rec.record_id
        source = [f"{Path(args.warc).name} record {rec.record_id} at offset {rec.offset}",
                  f"{rec.record_type} {rec.http_status or ''} {rec.content_type}".strip(),
                  f"date {rec.warc_date}"]
        if n > 1:
            source.append(f"first of {n} records with this URL")
        if rec.payload_truncated:
            source.append("payload truncated")
    t0 = time.perf_counter()
    a = analyse_page(data, model=model, config=config, http_charset=http_charset)
    view = render_view(a, title=title, source=source, model=model, gold_text=gold_text,
                       gold_name=Path(args.gold).name if args.gold else None)
    out = Path(args.out)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(view, encoding="utf-8")
    except OSError as exc:
        return _fail(EXIT_INPUT, f"cannot write {out}: {exc.strerror or exc}")
    if not args.quiet:
        what = f"{len(a.blocks)} blocks" if a.ok else f"no blocks: {a.message}"
        print(f"view of {title} written to {out} ({what}, {time.perf_counter() - t0:.1f}s)", file=sys.stderr)
    if not a.ok or (a.result is not None and not a.result.ok):
        return EXIT_PARTIAL
    return EXIT_OK


def add_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "inspect", help="write an HTML view of one page's labelled blocks",
        description="Label one page (a file, or a record of a WARC file) and write a self-contained HTML "
        "view: every block coloured by its predicted label with its probability; click a block for its "
        "containers, marginals and strongest CRF features. With --gold, the aligned gold labels, the "
        "disagreements and the document's word P/R/F1 and markup F1. Exit 1 when the page is rejected "
        "(the view then says why).")
    p.add_argument("page", nargs="?", metavar="PAGE.html", help="the page (or use --warc)")
    p.add_argument("--gold", metavar="GOLD.txt", help="gold text (CleanEval or Dragnet format) to compare with")
    p.add_argument("--warc", metavar="FILE", help="read the page from this WARC/ARC file")
    p.add_argument("--record-id", metavar="ID", help="WARC-Record-ID of the record (with --warc)")
    p.add_argument("--url", metavar="URL", help="target URL of the record (with --warc; the first match)")
    p.add_argument("--out", required=True, metavar="VIEW.html", help="the HTML file to write")
    p.add_argument("--model", metavar="M", help="model file (default: the packaged model)")
    p.add_argument("--config", metavar="TOML", help="config overlay (default: conf/default.toml)")
    p.add_argument("-q", "--quiet", action="store_true")
    p.set_defaults(func=cmd_inspect)
