"""Cross-validation of the seed systems on the project's folds, and the comparison table.

Protocol (the data README's): fold k of all four data sets is held out together, a system
is trained on the other five folds (pages whose gold aligns below [train] min_alignment
are left out of training) and scores the held-out pages, in the CRF's loop and by its rules
(`cleaner.learn.cv`); the figures of the six test folds (or of those `--folds` chose) are
pooled per set. A page's result is the CRF's record (`cleaner.learn.train.DocResult`: score,
gold-aligned and predicted block labels, output), so one set of figures serves both
(`cleaner.learn.evaluate.figures`: the scorer's `aggregate`, block accuracy content vs. noise
against the gold-aligned labels of `cleaner.gold.align`), as do the per-page table and the
paired comparison (`--pages`, `--against`).

Time per page is CPU time (`time.thread_time`: clean_html's CPU-time budget arms a process CPU
timer, and while one is armed Linux reads the process's CPU clock in scheduler ticks) of the whole pipeline:
decode + segment (measured once per page while preparing) + the system's labelling +
assembly. The CRF row is scored by `cleaner.learn.train.cross_validate` with the config's
settings; its time is that of `clean_html` with a CRF trained by the development
protocol (folds 2-6, every 2nd page; tagging cost does not depend on the iterations).
"""

from __future__ import annotations

import dataclasses
import json
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from tqdm import tqdm

from ..config import Config, load_config
from ..gold.align import align_blocks
from ..gold.data import read_html_file
from ..gold.score import DocScore, score_document
from ..label.systems import make_system
from ..label.systems.base import PageInput
from ..output.assemble import assemble
from ..page.pipeline import read_page_to_score
from ..page.segment import BlockTable
from .cv import cross_validate_folds
from .evaluate import SetFigures, figures
from .train import DocResult

DATASET_ORDER = ("cleaneval-dev", "cleaneval-final", "cleanportaleval", "dragnet")


@dataclass
class SysDoc:
    key: str
    dataset: str
    fold: int | None
    page: PageInput
    labels: list[str]
    gold: str
    coverage: float
    gold_words: int
    prep_ms: float  # CPU ms of decode + segment
    html_path: str = ""
    table: BlockTable = field(default_factory=BlockTable)  # the page's blocks as the assembly reads them (page.blocks')

    @property
    def n_blocks(self) -> int:
        return len(self.page.blocks)


def prepare_docs(pages, config: Config | None = None, folds: dict | None = None, progress: bool = True) -> list[SysDoc]:
    """decode -> segment -> align every page (one process; ~10 ms a page)."""
    config = config or load_config()
    folds = folds or {}
    docs = []
    for p in tqdm(pages, desc="prepare", unit="page", disable=not progress, file=sys.stderr):
        t = time.thread_time()
        read = read_page_to_score(p.read_html(), config)
        decoded, seg = read.decoded, read.segmentation
        ms = (time.thread_time() - t) * 1000
        gold = p.read_gold()
        al = align_blocks(seg.blocks, gold)
        docs.append(SysDoc(p.key, p.dataset, folds.get(p.key), PageInput(seg.blocks, decoded.text), al.labels, gold,
                           al.coverage, al.gold_words, ms, str(p.html_path), seg.table))
    return docs


def score_labels(doc: SysDoc, labels: list[str], ms: float | None) -> DocResult:
    out = assemble(doc.table, labels)
    return DocResult(doc.key, doc.dataset, doc.fold, score_document(out.cleaneval, doc.gold), doc.labels, labels,
                     out.cleaneval, doc.coverage, ms=ms)


def _label_timed(system, doc: SysDoc) -> tuple[list[str], float]:
    t = time.thread_time()
    labels = system.predict(doc.page)
    assemble(doc.table, labels)  # (as cleaner.learn.systems_clean assembles the page's table)
    return labels, doc.prep_ms + (time.thread_time() - t) * 1000


def cross_validate_system(kind: str, docs: list[SysDoc], config: Config | None = None, progress: bool = True,
                          log=None, sites: dict[str, str | None] | None = None,
                          fold_ids: list[int] | None = None) -> list[DocResult]:
    """The seed system's k-fold CV (`cleaner.learn.cv.cross_validate_folds`, the CRF's loop): a system made and
    trained per fold on the other folds' pages, labelling and scoring the held-out pages.

    With `sites`, a fold's training pages exclude every site that occurs in the fold; with `fold_ids`, only
    those folds are held out (trained for and scored). The folds run one after another in this process, under
    one BLAS thread: a page's time is CPU time measured here."""
    from threadpoolctl import threadpool_limits

    config = config or load_config()

    def train(fold: int, train_docs: list[SysDoc]):
        system = make_system(kind)
        if system.trainable:
            t = time.process_time()
            system.fit([d.page for d in train_docs], [d.labels for d in train_docs])
            if log:
                info = getattr(system, "info", None)
                log(f"{kind} fold {fold}: trained on {len(train_docs)} pages in {time.process_time() - t:.0f}s CPU"
                    + (f" {json.dumps(info)[:300]}" if info else ""))
        return system

    def score(system, doc: SysDoc) -> DocResult:
        return score_labels(doc, *_label_timed(system, doc))

    with threadpool_limits(1):
        return cross_validate_folds(docs, train, score, min_alignment=float(config["train"]["min_alignment"]),
                                    sites=sites, folds=fold_ids, processes=1, progress=progress, desc=f"cv {kind}")


def apply_system(system, docs: list[SysDoc]) -> list[DocResult]:
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):
        return [score_labels(d, *_label_timed(system, d)) for d in docs]


def crf_cross_validate(pages, folds, config: Config, processes: int = 1, progress: bool = True,
                       timing_model=None, timing_docs: list[SysDoc] | None = None,
                       sites: dict[str, str | None] | None = None,
                       fold_ids: list[int] | None = None) -> list[DocResult]:
    """The CRF row: `cleaner.learn.train.cross_validate` with the config's c1, c2, iterations (on `fold_ids` only, when
    given), each page timed by `time_crf` with `timing_model` when given."""
    from .train import cross_validate, prepare

    tc = config["train"]
    prepared = prepare(pages, config, None, folds, processes=processes, progress=progress)
    res = cross_validate(prepared, config, c1=float(tc["c1"]), c2=float(tc["c2"]),
                         max_iterations=int(tc["max_iterations"]), folds=fold_ids, processes=processes,
                         progress=progress, sites=sites)
    del prepared
    ms: dict[str, float] = {}
    if timing_model is not None and timing_docs is not None:
        ms = time_crf(timing_model, timing_docs, config)
    return [dataclasses.replace(r, ms=ms.get(r.key)) for r in res]


def time_crf(model, docs: list[SysDoc], config: Config) -> dict[str, float]:
    """CPU ms of clean_html per page (decode, segment, features, CRF, decision, assembly)."""
    from threadpoolctl import threadpool_limits

    from ..api import clean_html

    out = {}
    with threadpool_limits(1):
        for d in docs:
            data = read_html_file(d.html_path)
            t = time.thread_time()
            clean_html(data, model=model, config=config)
            out[d.key] = (time.thread_time() - t) * 1000
    return out


# -- results files and the table -------------------------------------------------------------


# A results file's layout: 2 = every page's whole DocResult (files of layout 1 held a shorter record per page
# and are not reused: the systems in them are evaluated again).
RESULTS_FORMAT = 2


def _result_json(r: DocResult) -> dict:
    return dataclasses.asdict(r)


def _result_from_json(d: dict) -> DocResult:
    return DocResult(**dict(d, score=DocScore(**d["score"])))


def load_results(path: Path) -> dict[str, list[DocResult]]:
    if not path or not Path(path).exists():
        return {}
    doc = json.loads(Path(path).read_text())
    if doc.get("notes", {}).get("format") != RESULTS_FORMAT:
        return {}
    return {kind: [_result_from_json(r) for r in rs] for kind, rs in doc.get("systems", {}).items()}


def load_notes(path: Path) -> dict:
    if not path or not Path(path).exists():
        return {}
    return json.loads(Path(path).read_text()).get("notes", {})


def save_results(path: Path, results: dict[str, list[DocResult]], notes: dict | None = None) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    doc = {"systems": {k: [_result_json(r) for r in rs] for k, rs in results.items()},
           "notes": dict(notes or {}, format=RESULTS_FORMAT)}
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(doc))
    tmp.replace(path)


def table_figures(f: SetFigures, rs: list[DocResult]) -> dict:
    """The seed-system table's row of one set: its figures (`cleaner.learn.evaluate.figures`) and the CPU ms of
    its pages `rs`."""
    agg = f.scores
    ms = [r.ms for r in rs if r.ms is not None]
    return {
        "n_docs": f.n_docs,
        "word_f1": agg["macro_f1"],
        "text_only": agg["macro_text_only"],
        "markup_f1": agg["macro_markup_f1"],
        "precision": agg["macro_precision"],
        "recall": agg["macro_recall"],
        "content_accuracy": f.content_accuracy if any(r.pred_labels for r in rs) else None,
        "ms_median": statistics.median(ms) if ms else None,
        "ms_mean": statistics.fmean(ms) if ms else None,
    }


def figures_by_set(results: dict[str, list[DocResult]]) -> dict[str, dict[str, dict]]:
    out: dict[str, dict[str, dict]] = {}
    for kind, rs in results.items():
        sets = sorted({r.dataset for r in rs}, key=lambda s: (DATASET_ORDER.index(s) if s in DATASET_ORDER else 99, s))
        out[kind] = {f.dataset: table_figures(f, [r for r in rs if r.dataset == f.dataset])
                     for f in figures(rs, sets) if f.dataset != "all"}
    return out


def reported_figures(cv: dict, ms: dict[str, float], datasets: dict[str, str]) -> dict[str, dict]:
    """Per-set figures from a CRF model's stored cross-validation summary (`cleaner train --cv`:
    the scorer's macro figures and content accuracy), with CPU ms per page measured here."""
    out = {}
    for s, f in cv.items():
        if s == "all":
            continue
        times = [v for k, v in ms.items() if datasets.get(k) == s]
        out[s] = {
            "n_docs": f.get("n_docs"), "word_f1": f.get("macro_f1"), "text_only": f.get("macro_text_only"),
            "markup_f1": f.get("macro_markup_f1"), "precision": f.get("macro_precision"),
            "recall": f.get("macro_recall"), "content_accuracy": f.get("content_accuracy"),
            "ms_median": statistics.median(times) if times else None,
            "ms_mean": statistics.fmean(times) if times else None,
        }  # fmt: skip
    return dict(sorted(out.items(), key=lambda kv: (DATASET_ORDER.index(kv[0]) if kv[0] in DATASET_ORDER else 99,
                                                    kv[0])))


def _f(x, digits=3) -> str:
    return "–" if x is None else f"{x:.{digits}f}"


def systems_table(figs: dict[str, dict[str, dict]], ms_all: dict[str, float | None], order: list[str] | None = None):
    """(word-F1 summary table, table of every figure) in Markdown; figs: kind -> set -> figures."""
    kinds = [k for k in (order or list(figs)) if k in figs]
    sets: list[str] = []
    for k in kinds:
        for s in figs[k]:
            if s not in sets:
                sets.append(s)
    head = "| system | " + " | ".join(sets) + " | ms/page (median) |\n|---|" + "---|" * (len(sets) + 1) + "\n"
    rows = []
    for k in kinds:
        cells = [_f(figs[k][s]["word_f1"]) if s in figs[k] else "–" for s in sets]
        rows.append(f"| {k} | " + " | ".join(cells) + f" | {_f(ms_all.get(k), 1)} |")
    summary = head + "\n".join(rows) + "\n"
    head2 = ("| system | set | pages | word F1 | text-only | markup F1 | word P | word R "
             "| block acc (content vs noise) | ms/page median | ms/page mean |\n"
             "|---|---|---|---|---|---|---|---|---|---|---|\n")
    rows2 = []
    for k in kinds:
        for s, f in figs[k].items():
            rows2.append(f"| {k} | {s} | {f['n_docs']} | {_f(f['word_f1'])} | {_f(f['text_only'])} "
                         f"| {_f(f['markup_f1'])} | {_f(f['precision'])} | {_f(f['recall'])} "
                         f"| {_f(f['content_accuracy'])} "
                         f"| {_f(f['ms_median'], 1)} | {_f(f['ms_mean'], 1)} |")
    return summary, head2 + "\n".join(rows2) + "\n"


def median_ms(rs: list[DocResult]) -> float | None:
    ms = [r.ms for r in rs if r.ms is not None]
    return statistics.median(ms) if ms else None
