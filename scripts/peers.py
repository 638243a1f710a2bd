#!/usr/bin/env python
"""Other cleaners on every shared page, scored by the project's scorer beside this project's shipped model.

    .venv/bin/python scripts/peers.py --cache /tmp/peers [--data ../shared/data] [--out docs/peers.md]
        [--fold-models DIR | --project-pages TSV]

The peers (dev-only dependencies: `pip install -e '.[dev]'`):

* `trafilatura`: trafilatura.extract(page bytes), its defaults (comments and tables kept);
* `trafilatura-recall`: the same with favor_recall=True;
* `readability`: readability-lxml's Document(page).summary(), the page decoded by resiliparse's charset
  detector, the summary's HTML turned into text with a line break at each block element (so that two
  paragraphs' words do not run together);
* `resiliparse`: extract_plain_text(main_content=True), the page decoded by resiliparse's own detector;
* `justext`: jusText with its English stoplist (the one language its stoplists and this comparison share; on
  pages in other languages it keeps little), paragraphs not classed boilerplate;
* `project`: this project's shipped default model (cleaner.api.clean_html), its CleanEval output; a
  convention-aware model cleans each page by its set's convention (CleanEval's sets `cleaneval`, Dragnet
  `dragnet`, the modern sets `main`). With `--fold-models DIR` (the models a `cleaner eval --cv --fold-models DIR`
  kept), each page is cleaned by the model of the fold that held it out (folds.tsv): the cross-validation's outputs,
  where `--project-pages` reads only its figures.

Each system runs on each page once: its output, CPU milliseconds and any failure are cached as
`CACHE/<system>-<version>/<set>/<id>.json` outside the repository (a peer's version is its package's and a
hash of the function here that calls it; the project's is its model's hash and a hash of the source of
the cleaner's modules that cleaning a page loads: a change to either is run again). Pages the cache holds
are not run again: a second run only scores. A page that a system fails on (an exception, or more than
--timeout seconds) scores as an empty output, as the data README says. One process: the peers are CPU-heavy
and this machine is shared.

The peers' outputs are plain text: a "<p>" in them is text, not a marker (cleaner.gold.gold.as_plain_text). Every
figure comes from cleaner.gold.score: macro word F1 per set, and per wcxb page type WCXB's own metric too; per set
the difference between the project and the best peer (the peer of the highest macro F1 on that set) with its
paired 95 % bootstrap interval over the pages. A set with must-have / must-not snippets (wcxb's `snippets.jsonl`,
cleaner.gold.snippets) gets their table too: per system the share of `with` snippets its outputs hold, of `without`
snippets they hold, and the precision, F1 and accuracy of the two, summed over the pages. The report is written to
--out.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.metadata
import inspect
import json
import signal
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from cleaner.gold.data import Page, find_pages, load_folds, load_page_types  # noqa: E402
from cleaner.gold.gold import as_plain_text, read_text  # noqa: E402
from cleaner.gold.score import bootstrap_interval, score_document, wcxb_f1  # noqa: E402
from cleaner.gold.snippets import SnippetCounts, load_snippets, snippet_counts  # noqa: E402
from cleaner.learn.evaluate import PAGE_TYPES, WCXB_METRIC_SETS  # noqa: E402

PEERS = ("trafilatura", "trafilatura-recall", "readability", "resiliparse", "justext")
SYSTEMS = ("project",) + PEERS
SETS = ("cleaneval-dev", "cleaneval-final", "cleanportaleval", "dragnet", "chaos", "big5-2005", "big5-2009",
        "big5-2013", "big5-2017", "fundus", "wcxb")
OLD_SETS = SETS[:4]  # the shipped model was trained on all their pages

# The data README's reference figures (its "Reference figures" table: macro word F1, whole sets), to check
# that the peers run here as they ran there. wcxb also by WCXB's metric.
REFERENCE = {
    "trafilatura": {"cleaneval-dev": 0.753, "cleaneval-final": 0.838, "cleanportaleval": 0.885, "dragnet": 0.894,
                    "chaos": 0.930, "big5-2005": 0.919, "big5-2009": 0.949, "big5-2013": 0.951,
                    "big5-2017": 0.963, "fundus": 0.947, "wcxb": 0.806},
    "trafilatura-recall": {"chaos": 0.938},
    "resiliparse": {"cleaneval-dev": 0.866, "cleaneval-final": 0.889, "cleanportaleval": 0.855, "dragnet": 0.831,
                    "chaos": 0.886, "big5-2005": 0.903, "big5-2009": 0.889, "big5-2013": 0.879,
                    "big5-2017": 0.904, "fundus": 0.874, "wcxb": 0.762},
    "readability": {"cleaneval-dev": 0.827, "cleaneval-final": 0.880, "cleanportaleval": 0.908, "dragnet": 0.814,
                    "chaos": 0.917, "big5-2005": 0.849, "big5-2009": 0.966, "big5-2013": 0.966,
                    "big5-2017": 0.944, "fundus": 0.885, "wcxb": 0.692},
    "justext": {"cleaneval-dev": 0.828, "cleaneval-final": 0.869, "cleanportaleval": 0.792, "dragnet": 0.775,
                "chaos": 0.859, "big5-2005": 0.889, "big5-2009": 0.910, "big5-2013": 0.847, "big5-2017": 0.869,
                "wcxb": 0.684},
}
REFERENCE_WCXB_METRIC = {"trafilatura": 0.818, "resiliparse": 0.773, "readability": 0.701, "justext": 0.703}
REFERENCE_TRAFILATURA_TYPES = {"article": 0.927, "documentation": 0.914, "service": 0.773, "product": 0.653,
                               "forum": 0.654, "listing": 0.587, "collection": 0.563}

_BLOCK_TAGS = frozenset((
    "p", "div", "h1", "h2", "h3", "h4", "h5", "h6", "li", "ul", "ol", "dl", "dt", "dd", "table", "tr", "td", "th",
    "pre", "blockquote", "br", "hr", "section", "article", "header", "footer", "aside", "figure", "figcaption",
))


# -- the systems --------------------------------------------------------------------------------------


def _trafilatura(data: bytes, favor_recall: bool = False) -> str:
    import trafilatura

    return trafilatura.extract(data, favor_recall=favor_recall) or ""


def _readability(data: bytes) -> str:
    import lxml.html
    from readability import Document
    from resiliparse.parse.encoding import bytes_to_str, detect_encoding

    # Given bytes, readability-lxml's own charset guess fails on 11 shared pages (a meta charset of
    # "viscii", "utf-8,%3csvg ..."): the page is decoded by resiliparse's detector instead.
    summary = Document(bytes_to_str(data, detect_encoding(data))).summary(html_partial=True)
    root = lxml.html.fromstring(summary)
    for el in root.iter():
        if isinstance(el.tag, str) and el.tag.lower() in _BLOCK_TAGS:
            el.tail = "\n" + (el.tail or "")
            el.text = "\n" + (el.text or "")
    return "\n".join(line.strip() for line in root.text_content().splitlines() if line.strip())


def _resiliparse(data: bytes) -> str:
    from resiliparse.extract.html2text import extract_plain_text
    from resiliparse.parse.encoding import bytes_to_str, detect_encoding

    return extract_plain_text(bytes_to_str(data, detect_encoding(data)), main_content=True)


def _justext(data: bytes) -> str:
    import justext

    paragraphs = justext.justext(data, justext.get_stoplist("English"))
    return "\n".join(p.text for p in paragraphs if not p.is_boilerplate)


class _Project:
    def __init__(self, model_name: str | None, fold_models: Path | None = None, folds: dict[str, int] | None = None):
        from cleaner.config import load_config
        from cleaner.label.model import load_model
        from cleaner.tools.runtime import tune_gc

        self.config = load_config()
        tune_gc(self.config)
        self.fold_models, self.folds = fold_models, folds or {}
        self.model = load_model(model_name) if fold_models is None else None
        self._by_fold: dict[int, object] = {}

    def _model_of(self, page: Page):
        """The shipped (or given) model; with fold models, the one of the fold that held `page` out."""
        if self.fold_models is None:
            return self.model
        from cleaner.label.model import load_model

        fold = self.folds[page.key]
        if fold not in self._by_fold:
            self._by_fold[fold] = load_model(str(self.fold_models / f"fold-{fold}.crfsuite"))
        return self._by_fold[fold]

    def __call__(self, data: bytes, page: Page) -> str:
        """The page cleaned by the convention of its set's gold when the model is convention-aware (CleanEval's
        sets `cleaneval`, Dragnet `dragnet`, the others `main`), as `cleaner eval --model` scores it."""
        from cleaner.api import clean_html

        model = self._model_of(page)
        conventions = model.conventions
        result = clean_html(data, model=model, config=self.config,
                            convention=conventions.of(page.dataset) if conventions else None)
        return result.cleaneval if result.ok else ""


def _version(dist: str) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "missing"


def project_version(model_name: str | None, fold_models: Path | None = None) -> str:
    """The model's hash (with `fold_models`, a hash of their files, sidecars and companions) and a hash of the
    source of every cleaner module that cleaning a page loads (not the scorer's, the evaluation's: a change there
    needs no new outputs)."""
    from cleaner.api import clean_html
    from cleaner.label.model import load_model

    model = load_model(model_name)
    clean_html(b"<html><body><h1>A title</h1><p>A paragraph of a page, cleaned once.</p></body></html>", model=model)
    sources = {ROOT / "cleaner" / (name.split(".", 1)[1].split("__mypyc")[0].replace(".", "/") + ".py")
               for name in sys.modules if name.startswith("cleaner.")}
    sources.add(ROOT / "cleaner" / "__init__.py")
    h = hashlib.sha256()
    for path in sorted(p for p in sources if p.is_file()):
        h.update(path.relative_to(ROOT).as_posix().encode())
        h.update(path.read_bytes())
    if fold_models is not None:
        models = hashlib.sha256()
        for path in sorted(fold_models.glob("fold-*")):  # (each model with its sidecar and marker typer)
            models.update(path.name.encode())
            models.update(path.read_bytes())
        return f"folds-{models.hexdigest()[:12]}-{h.hexdigest()[:12]}"
    return f"{model.hash[:12]}-{h.hexdigest()[:12]}"


def _called(dist: str, function) -> str:
    """A peer's version: its package's, and a hash of the function here that calls it."""
    return f"{_version(dist)}-{hashlib.sha256(inspect.getsource(function).encode()).hexdigest()[:8]}"


def system_versions(model_name: str | None, fold_models: Path | None = None) -> dict[str, str]:
    traf = _called("trafilatura", _trafilatura)
    return {"project": project_version(model_name, fold_models), "trafilatura": traf, "trafilatura-recall": traf,
            "readability": _called("readability-lxml", _readability),
            "resiliparse": _called("resiliparse", _resiliparse), "justext": _called("justext", _justext)}


def make_system(name: str, model_name: str | None, fold_models: Path | None = None,
                folds: dict[str, int] | None = None):
    return {"project": lambda: _Project(model_name, fold_models, folds), "trafilatura": lambda: _trafilatura,
            "trafilatura-recall": lambda: (lambda data: _trafilatura(data, favor_recall=True)),
            "readability": lambda: _readability, "resiliparse": lambda: _resiliparse,
            "justext": lambda: _justext}[name]()


# -- running and caching --------------------------------------------------------------------------------


class _Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise _Timeout


def cache_path(cache: Path, system: str, version: str, page: Page) -> Path:
    return cache / f"{system}-{version}" / page.dataset / f"{page.id}.json"


def run_system(name: str, version: str, pages: list[Page], cache: Path, timeout: int, model_name,
               fold_models: Path | None = None, folds: dict[str, int] | None = None) -> int:
    """Run `name` on every page the cache does not hold yet; the number of pages run."""
    todo = [p for p in pages if not cache_path(cache, name, version, p).exists()]
    if not todo:
        return 0
    system = make_system(name, model_name, fold_models, folds)
    signal.signal(signal.SIGALRM, _alarm)
    t_start = time.time()
    for i, page in enumerate(todo, 1):
        data = page.read_html()
        error = None
        c0 = time.process_time()
        signal.alarm(timeout)
        try:
            text = system(data, page) if name == "project" else system(data)
        except _Timeout:
            text, error = "", f"more than {timeout} s"
        except Exception as exc:  # a peer's failure on a page is an empty output, recorded
            text, error = "", f"{type(exc).__name__}: {exc}"[:300]
        finally:
            signal.alarm(0)
        ms = (time.process_time() - c0) * 1000
        path = cache_path(cache, name, version, page)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"text": text, "cpu_ms": round(ms, 2), "error": error}, ensure_ascii=False))
        if i % 200 == 0 or i == len(todo):
            print(f"[peers] {name}: {i}/{len(todo)} pages, {time.time() - t_start:.0f} s", file=sys.stderr, flush=True)
    return len(todo)


# -- scoring and the report ----------------------------------------------------------------------------


@dataclass
class PageScores:
    f1: dict[str, float]  # system -> word F1
    text_only: dict[str, float]
    wcxb: dict[str, float]  # system -> WCXB's metric (wcxb pages only)
    cpu_ms: dict[str, float]
    failed: dict[str, bool]
    snippets: dict[str, SnippetCounts]  # system -> its output's snippet counts (pages with snippets only)


def score_pages(pages: list[Page], cache: Path, versions: dict[str, str],
                project_rows: dict[str, dict[str, str]] | None = None,
                snippets: dict | None = None) -> dict[str, PageScores]:
    """Every system's figures on every page; with `project_rows` (a `cleaner eval --pages` table),
    the project's come from there (a cross-validation's), not from its cached outputs."""
    out = {}
    for page in pages:
        gold = page.read_gold()
        s = PageScores({}, {}, {}, {}, {}, {})
        listed = (snippets or {}).get(page.key)
        for name in SYSTEMS:
            if name == "project" and project_rows is not None:
                row = project_rows[page.key]
                s.f1[name], s.text_only[name] = float(row["word_f1"]), float(row["text_only"])
                if page.dataset in WCXB_METRIC_SETS:
                    s.wcxb[name] = float(row.get("wcxb_f1") or "nan")
                s.cpu_ms[name], s.failed[name] = float("nan"), False
                continue
            record = json.loads(cache_path(cache, name, versions[name], page).read_text())
            text = record["text"] if name == "project" else as_plain_text(record["text"])
            doc = score_document(text, gold)
            s.f1[name], s.text_only[name] = doc.f1, doc.text_only
            if page.dataset in WCXB_METRIC_SETS:
                s.wcxb[name] = wcxb_f1(text, gold)
            s.cpu_ms[name] = record["cpu_ms"]
            s.failed[name] = record["error"] is not None
            if listed is not None:  # (the words the scorer reads: the project's without its markers)
                s.snippets[name] = snippet_counts(read_text(text), listed)
        out[page.key] = s
    return out


def _mean(xs) -> float:
    return statistics.fmean(xs) if xs else float("nan")


def _paired(diffs: list[float]) -> str:
    ci = bootstrap_interval(diffs)
    return "–" if ci is None else f"{ci[0]:+.3f} to {ci[1]:+.3f}"


def set_table(pages: list[Page], scores: dict[str, PageScores]) -> tuple[str, list[str]]:
    """The table of every set x every system, and the lines where a peer's figure is off the README's."""
    head = ("| set | pages | this project | trafilatura | trafilatura favor_recall | readability-lxml | resiliparse "
            "| jusText | best peer | project − best peer | 95 % paired interval |\n"
            "|---|---|---|---|---|---|---|---|---|---|---|\n")
    rows, off = [], []
    for ds in SETS:
        keys = [p.key for p in pages if p.dataset == ds]
        if not keys:
            continue
        macro = {n: _mean([scores[k].f1[n] for k in keys]) for n in SYSTEMS}
        best = max(PEERS, key=lambda n: macro[n])
        diffs = [scores[k].f1["project"] - scores[k].f1[best] for k in keys]
        cells = " | ".join(f"{macro[n]:.3f}" for n in SYSTEMS)
        mark = " ¹" if ds in OLD_SETS else ""
        rows.append(f"| {ds}{mark} | {len(keys)} | {cells} | {best} | {statistics.fmean(diffs):+.3f} "
                    f"| {_paired(diffs)} |")
        for n in PEERS:
            ref = REFERENCE.get(n, {}).get(ds)
            if ref is not None and abs(round(macro[n], 3) - ref) > 0.005:
                off.append(f"{n} on {ds}: {macro[n]:.3f} here, {ref:.3f} in the data README")
    return head + "\n".join(rows) + "\n", off


def page_type_table(pages: list[Page], scores: dict[str, PageScores], types: dict[str, str]) -> tuple[str, list[str]]:
    """wcxb by page type: WCXB's metric (word F1 of this scorer in brackets) of every system."""
    head = ("| page type | pages | this project | trafilatura | trafilatura favor_recall | readability-lxml "
            "| resiliparse | jusText | project − trafilatura (WCXB metric) | 95 % paired interval |\n"
            "|---|---|---|---|---|---|---|---|---|---|\n")
    rows, off = [], []
    wcxb = [p.key for p in pages if p.dataset in WCXB_METRIC_SETS]
    for kind in PAGE_TYPES + ("all",):
        keys = [k for k in wcxb if kind == "all" or types.get(k) == kind]
        if not keys:
            continue
        cells = " | ".join(
            f"{_mean([scores[k].wcxb[n] for k in keys]):.3f} ({_mean([scores[k].f1[n] for k in keys]):.3f})"
            for n in SYSTEMS)
        diffs = [scores[k].wcxb["project"] - scores[k].wcxb["trafilatura"] for k in keys]
        rows.append(f"| {kind} | {len(keys)} | {cells} | {statistics.fmean(diffs):+.3f} | {_paired(diffs)} |")
        traf = _mean([scores[k].wcxb["trafilatura"] for k in keys])
        ref = REFERENCE_TRAFILATURA_TYPES.get(kind)
        if ref is not None and abs(round(traf, 3) - ref) > 0.005:
            off.append(f"trafilatura on wcxb {kind} (WCXB metric): {traf:.3f} here, {ref:.3f} in the data README")
    for n, ref in REFERENCE_WCXB_METRIC.items():
        got = _mean([scores[k].wcxb[n] for k in wcxb])
        if wcxb and abs(round(got, 3) - ref) > 0.005:
            off.append(f"{n} on wcxb (WCXB metric): {got:.3f} here, {ref:.3f} in the data README")
    return head + "\n".join(rows) + "\n", off


def speed_table(pages: list[Page], scores: dict[str, PageScores]) -> str:
    head = ("| system | median CPU ms/page, dragnet | median, all pages | mean, all pages | pages failed |\n"
            "|---|---|---|---|---|\n")
    rows = []
    for n in SYSTEMS:
        drag = [scores[p.key].cpu_ms[n] for p in pages if p.dataset == "dragnet"]
        every = [scores[p.key].cpu_ms[n] for p in pages]
        if all(x != x for x in every):  # NaN: figures from a table, not a run here
            continue
        failed = sum(scores[p.key].failed[n] for p in pages)
        rows.append(f"| {n} | {statistics.median(drag) if drag else float('nan'):.1f} | {statistics.median(every):.1f} "
                    f"| {statistics.fmean(every):.1f} | {failed} |")
    return head + "\n".join(rows) + "\n"


def snippet_table(pages: list[Page], scores: dict[str, PageScores], types: dict[str, str]) -> str:
    """Per system, its outputs' must-have and must-not snippets (cleaner.gold.snippets) summed over the pages that list
    them, and by page type its F1 of the two; the project against the best peer, page by page (each page's accuracy,
    its snippets judged right), with a paired 95 % bootstrap interval."""
    keys = [p.key for p in pages if scores[p.key].snippets]
    systems = [n for n in SYSTEMS if keys and all(n in scores[k].snippets for k in keys)]
    if not keys or not systems:
        return ""

    def total(name: str, among: list[str]) -> SnippetCounts:
        out = SnippetCounts()
        for k in among:
            out = out + scores[k].snippets[name]
        return out

    head = ("| system | must-have found | must-not kept | precision | F1 | accuracy |\n"
            "|---|---|---|---|---|---|\n")
    rows = []
    for n in systems:
        t = total(n, keys)
        kept = t.kept / (t.kept + t.left_out) if t.kept + t.left_out else 0.0
        rows.append(f"| {n} | {t.recall:.3f} ({t.found:,} of {t.found + t.missed:,}) | {kept:.3f} ({t.kept:,} of "
                    f"{t.kept + t.left_out:,}) | {t.precision:.3f} | {t.f1:.3f} | {t.accuracy:.3f} |")
    text = head + "\n".join(rows) + "\n"
    kinds = [k for k in PAGE_TYPES if any(types.get(key) == k for key in keys)]
    if kinds:
        text += ("\nF1 of the snippets by page type:\n\n| page type | pages | " + " | ".join(systems) + " |\n|---|---|"
                 + "---|" * len(systems) + "\n")
        for kind in kinds:
            among = [k for k in keys if types.get(k) == kind]
            text += (f"| {kind} | {len(among)} | " + " | ".join(f"{total(n, among).f1:.3f}" for n in systems) + " |\n")
    if "project" in systems and len(systems) > 1:
        best = max((n for n in systems if n != "project"), key=lambda n: total(n, keys).f1)
        diffs = [scores[k].snippets["project"].accuracy - scores[k].snippets[best].accuracy for k in keys]
        text += (f"\nThe project against the peer of the best snippet F1 ({best}), each page's accuracy: "
                 f"{statistics.fmean(diffs):+.3f} on average over {len(keys):,} pages, 95 % paired interval "
                 f"{_paired(diffs)}.\n")
    return text


HEADER = """# This project and the other cleaners on the shared pages

Written by `scripts/peers.py` (`.venv/bin/python scripts/peers.py --cache DIR --out docs/peers.md`): every page
of every shared set, each system run once on it (its output cached outside the repository), every figure from
the project's scorer (`cleaner/gold/score.py`, the data README's) on whole sets, no training. The peers and how
they are called: the script's docstring (trafilatura's defaults keep comments and tables; readability-lxml's
summary HTML is turned into text with a line break at each block element; resiliparse with
`main_content=True`; jusText with its English stoplist). Their outputs are plain text: a `<p>` in them is a
word, not a marker. A page a system fails on scores as an empty output. *This project* is the shipped default
model (`cleaner/models/default.crfsuite`) through `cleaner.api.clean_html`, its CleanEval output scored as is (a
convention-aware model cleans each set's pages by its gold's convention: CleanEval's `cleaneval`, Dragnet's `dragnet`,
the others `main`).
"""

SET_NOTE = """¹ The shipped model was trained on every page of these four sets: its figures there are optimistic (its
cross-validated ones are in `docs/eval.md`). On the modern sets it never saw a page. jusText's stoplist is
English: on fundus, most of whose pages are in other languages, it keeps little (the data README leaves that
cell out). *Best peer*: the peer of
the highest macro word F1 on the set; the interval is a 95 % paired bootstrap over the set's pages of the
per-page difference (project − that peer), 2,000 resamples, seed 0 (`cleaner.gold.score.bootstrap_interval`).
"""


FOLD_MODELS_NOTE = """*This project* here: each page cleaned by the model of the cross-validation's fold that held it
out (`--fold-models`, the models a `cleaner eval --cv --unseen-sites --fold-models DIR` kept: no model saw the
page's site), its outputs scored as the peers' are. *Best peer*: the peer of the highest macro word F1 on the set;
the interval is a 95 % paired bootstrap over the set's pages of the per-page difference (project − that peer),
2,000 resamples, seed 0.
"""

SNIPPET_NOTE = """Each page lists 3-8-word passages a correct output must contain and passages it must not (menus,
buttons, banners), judged by substring after Unicode NFKC, case folding and whitespace collapsed
(`cleaner.gold.snippets`; read so, the gold texts hold 99.3 % of the must-have snippets and 0.3 % of the must-not).
Summed over the pages: precision = must-have found / (found + must-not kept), F1 of that and the must-have share
found, accuracy = the share of all snippets judged right. Every snippet weighs alike, where the word scorer weighs a
page's words: a page's short boilerplate counts as much as its long paragraphs.
"""

PROJECT_PAGES_NOTE = """*This project* here: the per-page figures of a `cleaner eval --cv --pages` table (each page
scored by the model of the fold that held it out), on the pages that table holds; the peers on the same pages.
*Best peer*: the peer of the highest macro word F1 on the set; the interval is a 95 % paired bootstrap over
the set's pages of the per-page difference (project − that peer), 2,000 resamples, seed 0.
"""


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data"))
    ap.add_argument("--cache", required=True, help="folder for the systems' outputs (outside the repository)")
    ap.add_argument("--out", help="write the Markdown tables there (default: print them)")
    ap.add_argument("--systems", default=",".join(SYSTEMS), help=f"comma-separated, of {', '.join(SYSTEMS)}")
    ap.add_argument("--model", help="the project's model (default: the packaged default)")
    ap.add_argument("--timeout", type=int, default=120, help="seconds a system may take on one page")
    ap.add_argument("--run-only", action="store_true", help="fill the cache, score nothing")
    ap.add_argument("--every", type=int, default=1, help="every N-th page of each set only (quick looks)")
    ap.add_argument("--sets", default=",".join(SETS), help="comma-separated sets (default: every shared set)")
    ap.add_argument("--fold-models", metavar="DIR",
                    help="the project's outputs by the models a `cleaner eval --cv --fold-models DIR` kept, each page "
                    "cleaned by the model of the fold that held it out (folds.tsv): a cross-validation's outputs, "
                    "whose snippets are scored too")
    ap.add_argument("--project-pages", metavar="TSV",
                    help="the project's per-page figures from `cleaner eval --cv [--unseen-sites] --pages TSV` "
                    "instead of the shipped model's outputs: the peers are compared with a cross-validation, on "
                    "the pages it scored")
    args = ap.parse_args(argv)
    if args.fold_models and (args.project_pages or args.model):
        ap.error("--fold-models gives the project's outputs: not with --project-pages or --model")
    fold_models = Path(args.fold_models).resolve() if args.fold_models else None
    if fold_models is not None and not any(fold_models.glob("fold-*.crfsuite")):
        ap.error(f"no fold-<k>.crfsuite in {fold_models}")
    folds = load_folds(args.data) if fold_models is not None else {}
    cache = Path(args.cache).resolve()
    if ROOT in cache.parents or cache == ROOT:
        ap.error("--cache must be outside the repository (the outputs hold the shared pages' text)")
    chosen = [s.strip() for s in args.systems.split(",") if s.strip()]
    unknown = [s for s in chosen if s not in SYSTEMS]
    if unknown:
        ap.error(f"unknown systems {unknown}")
    wanted = [name.strip() for name in args.sets.split(",") if name.strip()]
    if not set(wanted) <= set(SETS):
        ap.error(f"unknown sets {sorted(set(wanted) - set(SETS))}")
    pages = [p for p in find_pages(args.data) if p.gold_path is not None and p.dataset in wanted]
    pages = [p for ds in SETS for p in [q for q in pages if q.dataset == ds][:: args.every]]
    project_rows = None
    if args.project_pages:
        from cleaner.learn.evaluate import read_page_table

        project_rows = read_page_table(Path(args.project_pages))
        pages = [p for p in pages if p.key in project_rows]
        chosen = [n for n in chosen if n != "project"]
    if fold_models is not None:
        pages = [p for p in pages if p.key in folds]
    versions = system_versions(args.model, fold_models)
    for name in chosen:
        n = run_system(name, versions[name], pages, cache, args.timeout, args.model, fold_models, folds)
        print(f"[peers] {name} {versions[name]}: {n} pages run, {len(pages) - n} from the cache", file=sys.stderr)
    if args.run_only:
        return 0
    missing = [n for n in SYSTEMS if not (n == "project" and project_rows is not None)
               and not all(cache_path(cache, n, versions[n], p).exists() for p in pages)]
    if missing:
        print(f"[peers] not every page is cached for {missing}: run them first (--systems)", file=sys.stderr)
        return 1
    scores = score_pages(pages, cache, versions, project_rows, load_snippets(args.data))
    sets, off_sets = set_table(pages, scores)
    page_types = load_page_types(args.data)
    types, off_types = page_type_table(pages, scores, page_types)
    snippets = snippet_table(pages, scores, page_types)
    if project_rows is not None:
        versions["project"] = f"per-page figures of {args.project_pages} ({len(pages)} pages)"
    if project_rows is not None or fold_models is not None:  # (a cross-validation's: no page of them was trained on)
        sets = sets.replace(" ¹ |", " |")
    versions_line = ", ".join(f"{n} {v}" for n, v in versions.items())
    note = (PROJECT_PAGES_NOTE if project_rows is not None else FOLD_MODELS_NOTE if fold_models is not None
            else SET_NOTE)
    text = (f"{HEADER}\nSystems: {versions_line}.\n\n## Macro word F1 by set\n\n{sets}\n{note}\n"
            f"## wcxb by page type: WCXB's metric (this scorer's word F1)\n\n{types}\n"
            + (f"## Must-have and must-not snippets (wcxb's `snippets.jsonl`)\n\n{SNIPPET_NOTE}\n{snippets}\n"
               if snippets else "")
            + f"## CPU per page (one run on a shared machine: indicative)\n\n{speed_table(pages, scores)}\n"
            "## Against the data README's reference figures (differences above 0.005)\n\n"
            + ("\n".join(f"* {line}" for line in off_sets + off_types) or "None.") + "\n")
    if args.out:
        Path(args.out).write_text(text)
        print(f"[peers] tables written to {args.out}", file=sys.stderr)
    else:
        print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
