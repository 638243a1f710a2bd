#!/usr/bin/env python
"""Benchmark page-decoding pipelines on the shared annotated pages (docs/decoding.md).

For each pipeline variant and page: decode the page bytes, then measure
  * gold-word coverage: the fraction of the gold file's words (gold decoded BOM -> UTF-8 ->
    windows-1252; markers, the `URL:` line and Dragnet separator lines dropped; entities decoded;
    words = re.findall(r"\\w+", casefold(NFKC(text)))) that occur among the page text's words
    (entities decoded as well, markup included: only the decoding differs between variants);
  * the same restricted to the gold words with a non-ASCII character (where decoding matters),
    against the gold as is and against the gold with its reversible mojibake undone (some gold
    files keep "donâ€™t" as the annotators saw a UTF-8 page shown as windows-1252);
  * the U+FFFD produced by decoding, and the time of the decode call.
Prints one table per data set and a pooled one (mean coverage over all pages and over the pages
that are not pure ASCII, non-ASCII gold words found, pages where the variant is below the best
variant for that page, pages with any U+FFFD, median µs per page, how often each source decided),
then the time of the detector alone on the pages that are not valid UTF-8.

    .venv/bin/python scripts/bench_decode.py [--data ../shared/data] [--sets cleaneval-dev,...]
        [--variants name,name] [--repeat 3] [--list-diffs]

The other detectors once measured beside faust-cchardet (resiliparse's uchardet wrapper, charset-normalizer,
none) were removed from cleaner/page/decode.py with their variants here; docs/decoding.md keeps their figures.
resiliparse's own decoding pipeline stays a reference (`ref: resiliparse own`, when it is installed).
"""

from __future__ import annotations

import argparse
import codecs
import html
import re
import statistics
import sys
import time
import unicodedata
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from cleaner.config import load_config  # noqa: E402
from cleaner.page import decode as dec  # noqa: E402

SETS = ("cleaneval-dev", "cleaneval-final", "cleanportaleval", "dragnet")
WORD = re.compile(r"\w+")
MARKER = re.compile(r"<[phlPHL]>")
SEPARATOR = re.compile(r"^[\W_]*\s*C\s*O\s*M\s*M\s*E\s*N\s*T\s*S?[\W_]*$", re.I)
WRAPPER_ENC = re.compile(rb'\A\s*<text[^>\n]*?\sencoding="([^"]*)"')


def words(text: str) -> list[str]:
    return WORD.findall(unicodedata.normalize("NFKC", text).casefold())


NON_ASCII_RUN = re.compile(r"[^\x00-\x7f]+")


def _unmojibake_run(m: re.Match) -> str:
    run = m.group(0)
    try:
        raw = b"".join(bytes([ord(ch)]) if 0x80 <= ord(ch) <= 0x9F else ch.encode("cp1252")
                       for ch in run)
        return raw.decode("utf-8")
    except UnicodeError:
        return run


def unmojibake(text: str) -> str:
    """Some gold files keep what the annotators saw: a UTF-8 page shown as windows-1252 (as its
    meta said) left "donâ€™t" in them. Undo it run by run where it is exactly reversible (a run of
    non-ASCII characters that, written back as windows-1252, is valid UTF-8)."""
    return NON_ASCII_RUN.sub(_unmojibake_run, text)


def gold_text(raw: bytes) -> str:
    for bom, codec in ((codecs.BOM_UTF8, "utf-8"), (codecs.BOM_UTF16_LE, "utf-16-le"),
                       (codecs.BOM_UTF16_BE, "utf-16-be")):
        if raw.startswith(bom):
            text = raw[len(bom):].decode(codec, "replace")
            break
    else:
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            text = raw.decode("cp1252", "replace")
    lines = text.splitlines()
    if lines and lines[0].lstrip().startswith("URL:"):
        lines = lines[1:]
    lines = [ln for ln in lines if not (SEPARATOR.match(ln.strip()) and "comment" in ln.lower())]
    return html.unescape(MARKER.sub(" ", "\n".join(lines)))


# ------------------------------------------------------------------------------ variants
def cfg(**overrides) -> dict:
    base = dict(load_config()["decode"])
    base.update(overrides)
    return base


# What a browser does (trust the declaration, detector straight away, any detector answer).
BROWSER = dict(invalid_declared_utf8="trust", valid_utf8_wins=False, utf8_first=False,
               western_guard=False, detector_whatwg_only=False)
# The UTF-8 handling of decode_html without the detector-answer checks.
UTF8 = dict(invalid_declared_utf8="repair", valid_utf8_wins=True, utf8_first=True,
            western_guard=False, detector_whatwg_only=False)
FULL = dict(invalid_declared_utf8="repair", valid_utf8_wins=True, utf8_first=True,
            western_guard=True, detector_whatwg_only=True)


def external_resiliparse(data: bytes):
    """resiliparse's own pipeline: meta (first 1 KiB) then uchardet, then bytes_to_str."""
    from resiliparse.parse.encoding import bytes_to_str, detect_encoding

    enc = detect_encoding(data, max_len=65536, from_html_meta=True)
    text = bytes_to_str(data, enc, errors="replace")
    return text, enc, "external", text.count("\ufffd")


def naive_utf8_cp1252(data: bytes):
    try:
        return data.decode("utf-8"), "utf-8", "external", 0
    except UnicodeDecodeError:
        return data.decode("cp1252", "replace"), "cp1252", "external", 0


def wrapper_label(data: bytes):
    """Reference only: decode with the CleanEval wrapper's encoding attribute (utf-8 if unknown)."""
    m = WRAPPER_ENC.match(data[:4096])
    codec = dec.lookup_label(m.group(1)) if m else None
    codec = codec or "utf-8"
    text = data.decode(codec, "replace")
    return text, codec, "wrapper" if m and dec.lookup_label(m.group(1)) else "default", text.count("\ufffd")


def variants() -> dict[str, object]:
    return {
        "browser+cchardet": cfg(**BROWSER),
        "utf8+cchardet": cfg(**UTF8),
        "full+cchardet": cfg(**FULL),
        "default -valid_utf8_wins": cfg(valid_utf8_wins=False),
        "default invalid_utf8=trust": cfg(invalid_declared_utf8="trust"),
        "default invalid_utf8=detect": cfg(invalid_declared_utf8="detect"),
        "default -utf8_first": cfg(utf8_first=False),
        "default prescan=1024": cfg(prescan_bytes=1024),
        "default prescan=16384": cfg(prescan_bytes=16384),
        "ref: resiliparse own": external_resiliparse,
        "ref: utf8 else cp1252": naive_utf8_cp1252,
        "ref: wrapper label": wrapper_label,
    }


def run_variant(variant, data: bytes):
    if callable(variant):  # reference pipelines: strip the CleanEval wrapper as decode_html does
        text, enc, src, n = variant(data)
        return dec._strip_wrapper(text)[0], enc, src, n
    page = dec.decode_html(data, config=variant)
    return page.text, page.encoding, page.source, page.replacements


# ------------------------------------------------------------------------------ main
def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data"))
    ap.add_argument("--sets", default=",".join(SETS))
    ap.add_argument("--variants", default="", help="comma-separated variant names (default all)")
    ap.add_argument("--repeat", type=int, default=3, help="timing rounds (min per page is kept)")
    ap.add_argument("--list-diffs", action="store_true",
                    help="list pages where the variants' coverage differs")
    args = ap.parse_args(argv)

    all_variants = variants()
    names = [n for n in args.variants.split(",") if n] or list(all_variants)
    data_dir = Path(args.data)

    pages = []  # (set, id, bytes, gold words, is_ascii)
    for s in args.sets.split(","):
        for html_path in sorted((data_dir / s / "html").glob("*.html")):
            gold_path = data_dir / s / "gold" / (html_path.stem + ".txt")
            if not gold_path.exists():
                continue
            gt = gold_text(gold_path.read_bytes())
            g = words(gt)
            if not g:
                continue
            raw = html_path.read_bytes()
            g2 = words(unmojibake(gt))
            pages.append((s, html_path.stem, raw, g, raw.isascii(), g2))
    print(f"{len(pages)} pages with a non-empty gold file", file=sys.stderr)

    word_cache: dict[int, set] = {}
    cov = defaultdict(dict)  # variant -> page index -> coverage
    fffd = defaultdict(dict)
    nonascii = defaultdict(dict)  # variant -> page -> (non-ASCII gold words found, total)
    nonascii2 = defaultdict(dict)  # the same with the gold's mojibake undone
    sources = defaultdict(lambda: defaultdict(Counter))
    encodings = defaultdict(dict)
    times = defaultdict(lambda: defaultdict(lambda: float("inf")))

    for name in names:
        variant = all_variants[name]
        for i, (s, _pid, raw, g, _, g2) in enumerate(pages):
            text, enc, src, n = run_variant(variant, raw)
            key = hash(text)
            if key not in word_cache:
                word_cache[key] = set(words(html.unescape(text)))
            have = word_cache[key]
            cov[name][i] = sum(1 for w in g if w in have) / len(g)
            nx = [w for w in g if not w.isascii()]
            nonascii[name][i] = (sum(1 for w in nx if w in have), len(nx))
            nx2 = [w for w in g2 if not w.isascii()]
            nonascii2[name][i] = (sum(1 for w in nx2 if w in have), len(nx2))
            fffd[name][i] = n
            sources[name][s][src] += 1
            encodings[name][i] = enc
    for _ in range(args.repeat):  # timing rounds, interleaved so that no variant gets a warm cache
        for name in names:
            variant = all_variants[name]
            for i, (_, _, raw, _, _, _) in enumerate(pages):
                t0 = time.perf_counter_ns()
                run_variant(variant, raw)
                times[name][i] = min(times[name][i], time.perf_counter_ns() - t0)

    best = {i: max(cov[n][i] for n in names) for i in range(len(pages))}
    set_names = args.sets.split(",")
    for scope in set_names + ["all"]:
        idx = [i for i, p in enumerate(pages) if scope == "all" or p[0] == scope]
        non_ascii = [i for i in idx if not pages[i][4]]
        print(f"\n### {scope}: {len(idx)} pages, {len(non_ascii)} not pure ASCII\n")
        print("| variant | mean cov | mean cov non-ASCII pages | non-ASCII gold words found "
              "| same, gold mojibake undone | pages < best | pages with U+FFFD | U+FFFD total "
              "| median µs | sources |")
        print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
        for name in names:
            c = statistics.fmean(cov[name][i] for i in idx)
            cn = statistics.fmean(cov[name][i] for i in non_ascii) if non_ascii else float("nan")
            worse = sum(1 for i in idx if cov[name][i] < best[i] - 1e-9)
            found = sum(nonascii[name][i][0] for i in idx)
            total = max(1, sum(nonascii[name][i][1] for i in idx))
            found2 = sum(nonascii2[name][i][0] for i in idx)
            total2 = max(1, sum(nonascii2[name][i][1] for i in idx))
            nf = sum(1 for i in idx if fffd[name][i] > 0)
            tf = sum(fffd[name][i] for i in idx)
            med = statistics.median(times[name][i] for i in idx) / 1000
            src = Counter()
            for s in (set_names if scope == "all" else [scope]):
                src.update(sources[name][s])
            srcs = " ".join(f"{k}:{v}" for k, v in sorted(src.items(), key=lambda kv: -kv[1]))
            print(f"| {name} | {c:.4f} | {cn:.4f} | {found / total:.4f} ({total}) "
                  f"| {found2 / total2:.4f} ({total2}) | {worse} | {nf} "
                  f"| {tf} | {med:.1f} | {srcs} |")

    # The detectors alone, on the bounded sample of every page that is not valid UTF-8 (the
    # pages where decode_html calls one).
    det_bytes = int(load_config()["decode"]["detector_bytes"])
    samples = []
    for _, _, raw, _, _, _ in pages:
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError:
            samples.append(raw[:det_bytes])
    print(f"\n### the detector alone on the {len(samples)} pages that are not valid UTF-8 "
          f"(first {det_bytes} bytes)\n")
    print("| detector | median µs | mean µs |")
    print("| --- | --- | --- |")
    dec.detect_charset(b"warm up")
    best_t = [float("inf")] * len(samples)
    for _ in range(args.repeat):
        for j, smp in enumerate(samples):
            t0 = time.perf_counter_ns()
            dec.detect_charset(smp)
            best_t[j] = min(best_t[j], time.perf_counter_ns() - t0)
    print(f"| faust-cchardet | {statistics.median(best_t) / 1000:.1f} | {statistics.fmean(best_t) / 1000:.1f} |")

    if args.list_diffs:
        print("\n### pages where coverage differs between variants\n")
        for i, (s, pid, _, g, _, _) in enumerate(pages):
            vals = {n: cov[n][i] for n in names}
            if max(vals.values()) - min(vals.values()) > 1e-9:
                row = " ".join(f"{n}={vals[n]:.3f}/{encodings[n][i]}" for n in names)
                print(f"{s}/{pid} ({len(g)} gold words): {row}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
