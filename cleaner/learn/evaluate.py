"""Evaluation figures and the Markdown report.

Per data set, and per wcxb page type: the scorer's macro and micro figures (word P/R/F1,
text-only, markup P/R/F1), block labelling accuracy on the full label set and on content
vs noise (against the gold-aligned labels), a confusion matrix and the distribution of
per-document F1 (plotted next to the report); for wcxb also WCXB's own metric
(`cleaner.gold.score.wcxb_f1`), the figure its leaderboard gives, and for a set that lists must-have and
must-not snippets (wcxb's `snippets.jsonl`, `cleaner.gold.snippets`) their F1 and accuracy.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..gold.gold import read_text
from ..gold.score import aggregate, bootstrap_interval, score_document, wcxb_f1
from ..gold.snippets import PageSnippets, SnippetCounts, snippet_counts
from ..label.markers import MARKERS
from ..labels import CONTENT_LABELS, HEADER, LABELS, LIST, OTHER, PARAGRAPH
from ..output.assemble import assemble

# The sets also scored by WCXB's own metric (its leaderboard's), and the page types of its pages.tsv in
# the order its README gives them.
WCXB_METRIC_SETS = ("wcxb",)
PAGE_TYPES = ("article", "forum", "product", "collection", "listing", "documentation", "service")


@dataclass
class SetFigures:
    dataset: str
    n_docs: int
    scores: dict
    block_accuracy: float
    content_accuracy: float
    confusion: dict[str, dict[str, int]]  # gold -> predicted -> count
    f1s: list[float]
    wcxb_f1: float | None = None  # mean of WCXB's per-page figure, for a group of WCXB_METRIC_SETS pages only
    # the must-have / must-not snippets of the group's pages that list them, summed (None: no page lists any)
    snippets: SnippetCounts | None = None


def wcxb_scores(results, docs) -> dict[str, float]:
    """Page key -> WCXB's per-page figure of every result of WCXB_METRIC_SETS (the gold from `docs`,
    the prepared pages, matched by key)."""
    golds = {d.key: d.gold for d in docs if d.dataset in WCXB_METRIC_SETS}
    return {r.key: wcxb_f1(r.prediction, golds[r.key]) for r in results if r.key in golds}


def snippet_scores(results, snippets: dict[str, PageSnippets]) -> dict[str, SnippetCounts]:
    """Page key -> how its snippets (`cleaner.gold.snippets.load_snippets`) fare in its output, read as the scorer
    reads it (segments without markers, entities decoded: `read_text`, as scripts/peers.py scores every system),
    for every result whose page lists snippets."""
    return {r.key: snippet_counts(read_text(r.prediction), snippets[r.key]) for r in results if r.key in snippets}


def _group_figures(name: str, rs: list, wcxb: dict[str, float] | None,
                   snippets: dict[str, SnippetCounts] | None = None) -> SetFigures:
    conf: dict[str, dict[str, int]] = {g: {p: 0 for p in LABELS} for g in LABELS}
    total = correct = content_correct = 0
    for r in rs:
        for g, p in zip(r.gold_labels, r.pred_labels):
            conf.setdefault(g, {}).setdefault(p, 0)
            conf[g][p] += 1
            total += 1
            correct += g == p
            content_correct += (g in CONTENT_LABELS) == (p in CONTENT_LABELS)
    bag = [wcxb[r.key] for r in rs if r.key in wcxb] if wcxb else []
    listed = [snippets[r.key] for r in rs if r.key in snippets] if snippets else []
    return SetFigures(
        name,
        len(rs),
        aggregate([r.score for r in rs]),
        correct / total if total else 0.0,
        content_correct / total if total else 0.0,
        conf,
        [r.score.f1 for r in rs],
        float(np.mean(bag)) if bag and len(bag) == len(rs) else None,
        sum(listed, SnippetCounts()) if listed else None,
    )


def figures(results, datasets: list[str] | None = None, wcxb: dict[str, float] | None = None,
            snippets: dict[str, SnippetCounts] | None = None) -> list[SetFigures]:
    """Group DocResults by data set (plus an 'all' row) and compute every figure; with `wcxb`
    (`wcxb_scores`), the WCXB metric of the groups made of its pages; with `snippets` (`snippet_scores`), the
    snippets of the groups' pages that list them."""
    groups: dict[str, list] = defaultdict(list)
    for r in results:
        groups[r.dataset].append(r)
    names = datasets or sorted(groups)
    out = []
    for name in names + (["all"] if len(names) > 1 else []):
        rs = [r for r in results] if name == "all" else groups.get(name, [])
        if rs:
            out.append(_group_figures(name, rs, wcxb, snippets))
    return out


def page_type_figures(results, page_types: dict[str, str], wcxb: dict[str, float] | None = None,
                      snippets: dict[str, SnippetCounts] | None = None) -> list[SetFigures]:
    """The figures of each page type (`cleaner.gold.data.load_page_types`: wcxb's article, forum, ...), as
    `figures` gives them per set; a group is named `set: type` (`wcxb: forum`)."""
    groups: dict[tuple[str, str], list] = defaultdict(list)
    for r in results:
        kind = page_types.get(r.key)
        if kind is not None:
            groups[(r.dataset, kind)].append(r)

    def order(group: tuple[str, str]):
        dataset, kind = group
        return dataset, PAGE_TYPES.index(kind) if kind in PAGE_TYPES else len(PAGE_TYPES), kind

    return [_group_figures(f"{d}: {k}", groups[(d, k)], wcxb, snippets) for d, k in sorted(groups, key=order)]


@dataclass
class MarkupDiagnosis:
    """Where a set's markup F1 is lost: the model's output rescored with parts of the gold.

    `with_gold_markers`: every block that both the model and the gold start a segment
    with gets the gold's marker (the model's segmentation, the annotators' choice of
    header / paragraph / list). `with_gold_segments`: every block both keep gets its gold
    label (segment starts and markers from the gold, the kept text the model's). What is
    left below 1.0 after both is the model keeping or dropping the wrong text.
    """

    dataset: str
    n_docs: int
    predicted: float
    with_gold_markers: float
    with_gold_segments: float
    marker_confusion: dict[str, dict[str, int]]  # gold marker -> predicted marker, at shared starts


def markup_diagnosis(results, docs) -> list[MarkupDiagnosis]:
    """Per set whose gold has markers: see MarkupDiagnosis. `docs` are the prepared pages
    (texts, word counts, gold) of `results`, matched by key."""
    by_key = {d.key: d for d in docs}
    groups: dict[str, list] = defaultdict(list)
    for r in results:
        d = by_key.get(r.key)
        if d is not None and r.score.markup_f1 is not None and len(r.pred_labels) == len(d.texts):
            groups[r.dataset].append((r, d))
    out = []
    for name in sorted(groups):
        scores: dict[str, list] = {"predicted": [], "markers": [], "segments": []}
        conf = {g: {p: 0 for p in MARKERS} for g in MARKERS}
        for r, d in groups[name]:
            pred, gold = r.pred_labels, r.gold_labels
            markers = [g if (p in MARKERS and g in MARKERS) else p for g, p in zip(gold, pred)]
            segments = [g if (p != OTHER and g != OTHER) else p for g, p in zip(gold, pred)]
            for g, p in zip(gold, pred):
                if g in MARKERS and p in MARKERS:
                    conf[g][p] += 1
            scores["predicted"].append(r.score)
            for key, labels in (("markers", markers), ("segments", segments)):
                out_text = assemble(d.texts, labels, None, d.word_counts, None, d.gaps, d.shown).cleaneval
                scores[key].append(score_document(out_text, d.gold))
        m = {k: aggregate(v)["macro_markup_f1"] or 0.0 for k, v in scores.items()}
        out.append(MarkupDiagnosis(name, len(groups[name]), m["predicted"], m["markers"], m["segments"], conf))
    return out


def markup_table(diags: list[MarkupDiagnosis]) -> str:
    head = (
        "| set | docs | markup F1 | with the gold's markers | with the gold's segments | marker agreement "
        "| gold header → paragraph / list | gold paragraph → header / list | gold list → header / paragraph |\n"
        "|---|---|---|---|---|---|---|---|---|\n"
    )
    rows = []
    for x in diags:
        c = x.marker_confusion
        total = sum(sum(v.values()) for v in c.values())
        agree = sum(c[g][g] for g in MARKERS) / total if total else 0.0
        rows.append(
            f"| {x.dataset} | {x.n_docs} | {x.predicted:.3f} | {x.with_gold_markers:.3f} | {x.with_gold_segments:.3f} "
            f"| {agree:.3f} | {c[HEADER][PARAGRAPH]} / {c[HEADER][LIST]} "
            f"| {c[PARAGRAPH][HEADER]} / {c[PARAGRAPH][LIST]} "
            f"| {c[LIST][HEADER]} / {c[LIST][PARAGRAPH]} |"
        )
    return head + "\n".join(rows) + "\n"


MARKUP_NOTE = (
    "The model's output rescored with parts of the gold, to show where markup is lost. *With the gold's markers*: "
    "every block that both the model and the gold start a segment with takes the gold's marker (header / "
    "paragraph / list); *with the gold's segments*: every block both keep takes its gold label (segment starts and "
    "markers). Word F1 is the same in all three columns. The marker columns count blocks both start a segment with."
)


def _ranks(values) -> np.ndarray:
    """Ranks 1..n, ties given their mean rank."""
    a = np.asarray(values, dtype=float)
    ranks = np.empty(len(a))
    ranks[a.argsort(kind="mergesort")] = np.arange(1, len(a) + 1)
    _, tie, counts = np.unique(a, return_inverse=True, return_counts=True)
    return (np.bincount(tie, weights=ranks) / counts)[tie]


def expected_f1_check(results, bad_below: float = 0.8) -> list[dict]:
    """Per set, how well each page's expected F1 (cleaner.output.assemble.expected_scores) tells its real word F1:
    Spearman's rho, the area under the ROC curve for flagging pages below `bad_below` (None when a set
    has no such page or only such pages), mean expected against mean real F1, and the lowest fifth by
    expected F1 (its mean real F1 and share of pages below `bad_below`)."""
    groups: dict[str, list] = defaultdict(list)
    for r in results:
        expected = getattr(r, "expected_f1", None)  # (labellers without probabilities have none)
        if expected is not None:
            groups[r.dataset].append((expected, r.score.f1))
    groups["all"] = [x for name in sorted(groups) for x in groups[name]]
    out = []
    for name, pairs in groups.items():
        if len(pairs) < 3:
            continue
        expected, real = np.array(pairs).T
        rho = float(np.corrcoef(_ranks(expected), _ranks(real))[0, 1])
        bad = real < bad_below
        n_bad, n_good = int(bad.sum()), int((~bad).sum())
        auc = None
        if n_bad and n_good:  # Mann-Whitney: P(a bad page is rated below a good one)
            auc = float((_ranks(-expected)[bad].sum() - n_bad * (n_bad + 1) / 2) / (n_bad * n_good))
        low = expected <= np.quantile(expected, 0.2)
        out.append({"dataset": name, "docs": len(pairs), "bad": n_bad, "rho": rho, "auc": auc,
                    "mean_expected": float(expected.mean()), "mean_real": float(real.mean()),
                    "low_fifth_real": float(real[low].mean()), "low_fifth_bad": float(bad[low].mean())})
    return out


def expected_f1_table(rows: list[dict]) -> str:
    head = ("| set | docs | below 0.8 F1 | Spearman ρ (expected, real F1) | AUC for pages below 0.8 "
            "| mean expected F1 | mean real F1 | lowest fifth by expected F1: real F1 / share below 0.8 |\n"
            "|---|---|---|---|---|---|---|---|\n")
    return head + "\n".join(
        f"| {x['dataset']} | {x['docs']} | {x['bad']} | {x['rho']:.3f} | {_f(x['auc'])} | {x['mean_expected']:.3f} "
        f"| {x['mean_real']:.3f} | {x['low_fifth_real']:.3f} / {x['low_fifth_bad']:.0%} |" for x in rows) + "\n"


EXPECTED_F1_NOTE = (
    "Each page's expected word F1 (the `expected_f1` column of the output: cleaner.output.assemble.expected_scores, "
    "docs/confidence.md) against its real word F1. A corpus builder filters or reviews pages by it."
)


def _f(x) -> str:
    return "–" if x is None else f"{x:.3f}"


def _interval(values: list[float]) -> str:
    ci = bootstrap_interval(values)
    return "–" if ci is None else f"{ci[0]:.3f}–{ci[1]:.3f}"


def summary_table(figs: list[SetFigures]) -> str:
    """The figures of each set; the interval is a 95 % bootstrap over its pages (how far the
    macro F1 could move with another sample of pages like these). When a group has WCXB's metric,
    a column after the others gives it, and when its pages list snippets, their F1 and accuracy after it (last:
    readers of the older reports' columns keep their places)."""
    bag = any(f.wcxb_f1 is not None for f in figs)
    listed = any(f.snippets is not None for f in figs)
    head = (
        "| set | docs | word P | word R | word F1 | F1 95 % interval | text-only | markup P | markup R | markup F1 "
        "| micro F1 | block acc | content acc |" + (" WCXB metric |" if bag else "")
        + (" snippet F1 | snippet acc |" if listed else "")
        + "\n|---|---|---|---|---|---|---|---|---|---|---|---|---|" + ("---|" if bag else "")
        + ("---|---|" if listed else "") + "\n"
    )
    rows = []
    for f in figs:
        s = f.scores
        rows.append(
            f"| {f.dataset} | {f.n_docs} | {_f(s['macro_precision'])} | {_f(s['macro_recall'])} "
            f"| **{_f(s['macro_f1'])}** | {_interval(f.f1s)} | {_f(s['macro_text_only'])} "
            f"| {_f(s['macro_markup_precision'])} "
            f"| {_f(s['macro_markup_recall'])} | {_f(s['macro_markup_f1'])} | {_f(s['micro_f1'])} "
            f"| {_f(f.block_accuracy)} | {_f(f.content_accuracy)} |" + (f" {_f(f.wcxb_f1)} |" if bag else "")
            + ((f" {_f(f.snippets.f1)} | {_f(f.snippets.accuracy)} |" if f.snippets is not None else " – | – |")
               if listed else "")
        )
    return head + "\n".join(rows) + "\n"


PAGE_TYPE_NOTE = (
    "wcxb's pages by their page type (its pages.tsv). Content is what the page exists to deliver for its type: an "
    "article's text, every post of a forum thread, a product's description and specifications, the items of a "
    "collection or listing, documentation text and code, a service page's copy. *WCXB metric*: WCXB's own per-page "
    "figure (F1 of lowercase `\\w+` tokens as bags of words), its leaderboard's mean. *Snippet F1 / acc*: its "
    "must-have and must-not snippets (`snippets.jsonl`) summed over the pages: a must-have found in the output is a "
    "true positive, a must-not found a false positive; accuracy is the share of all snippets judged right."
)


def confusion_table(f: SetFigures) -> str:
    labels = [lab for lab in LABELS if lab in f.confusion]
    head = "| gold \\ predicted | " + " | ".join(labels) + " |\n|---|" + "---|" * len(labels) + "\n"
    rows = [f"| {g} | " + " | ".join(str(f.confusion[g].get(p, 0)) for p in labels) + " |" for g in labels]
    return head + "\n".join(rows) + "\n"


def plot_f1(figs: list[SetFigures], path: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sets = [f for f in figs if f.dataset != "all"]
    fig, ax = plt.subplots(figsize=(7, 3.6), dpi=110)
    ax.boxplot([f.f1s for f in sets], orientation="horizontal", showfliers=True, flierprops={"markersize": 2})
    ax.set_yticks(range(1, len(sets) + 1), [f"{f.dataset} (n={f.n_docs})" for f in sets])
    ax.set_xlabel("per-document word F1")
    ax.set_xlim(0, 1.01)
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)
    return path


def write_report(
    figs: list[SetFigures], path: Path, title: str, preamble: str = "", markup: list[MarkupDiagnosis] | None = None,
    expected: list[dict] | None = None, by_type: list[SetFigures] | None = None,
) -> Path:
    path = Path(path)
    plot = plot_f1(figs, path.with_suffix(".png"))
    parts = [f"# {title}\n", preamble.strip() + "\n" if preamble else "", "## Figures (macro averages unless marked)\n",
             summary_table(figs), f"\n![per-document F1]({plot.name})\n"]
    if by_type:
        parts.append("\n## By page type\n\n" + PAGE_TYPE_NOTE + "\n\n" + summary_table(by_type))
    if markup:
        parts.append("\n## Where markup is lost\n\n" + MARKUP_NOTE + "\n\n" + markup_table(markup))
    if expected:
        parts.append("\n## How sure the model is of a page\n\n" + EXPECTED_F1_NOTE + "\n\n"
                     + expected_f1_table(expected))
    for f in figs:
        parts.append(f"\n## Block labels: {f.dataset}\n\n" + confusion_table(f))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(parts))
    return path


# -- per-page figures, and two runs compared page by page ---------------------------------

PAGE_COLUMNS = ("page", "dataset", "fold", "word_p", "word_r", "word_f1", "text_only", "markup_f1", "expected_f1",
                "wcxb_f1")
# A table written before the WCXB metric had its column reads as well.
_OLDER_PAGE_COLUMNS = PAGE_COLUMNS[:-1]


def _figure_text(x: float) -> str:
    return f"{x:.6f}"


def _as_written(x: float) -> float:
    """A figure as the table holds it."""
    return float(_figure_text(x))


def write_page_table(results, path: Path, wcxb: dict[str, float] | None = None) -> Path:
    """One row per scored page (tab-separated, PAGE_COLUMNS; empty where a figure does not apply: the
    WCXB metric is given by `wcxb`, `wcxb_scores`), so that another run can be compared with this one
    page by page (`paired_comparison`, scripts/peers.py --project-pages)."""
    wcxb = wcxb or {}
    def cell(x) -> str:
        return "" if x is None else (_figure_text(x) if isinstance(x, float) else str(x))

    lines = ["\t".join(PAGE_COLUMNS)]
    for r in sorted(results, key=lambda r: r.key):
        s = r.score
        lines.append("\t".join(cell(x) for x in (r.key, r.dataset, r.fold, s.precision, s.recall, s.f1, s.text_only,
                                                   s.markup_f1, r.expected_f1, wcxb.get(r.key))))
    path = Path(path)
    path.write_text("\n".join(lines) + "\n")
    return path


def read_page_table(path: Path) -> dict[str, dict[str, str]]:
    """A table of `write_page_table`: page -> its row (strings)."""
    rows = Path(path).read_text().splitlines()
    columns = tuple(rows[0].split("\t")) if rows else ()
    if columns not in (PAGE_COLUMNS, _OLDER_PAGE_COLUMNS):
        raise ValueError(f"{path}: not a per-page table of `cleaner eval --pages` "
                         f"(its columns: {', '.join(PAGE_COLUMNS)})")
    out = {}
    for n, line in enumerate(rows[1:], start=2):
        cells = line.split("\t")
        if len(cells) != len(columns):
            raise ValueError(f"{path}, line {n}: {len(cells)} cells, not {len(columns)}")
        row = dict(zip(columns, cells))
        # The two figures paired_comparison reads; markup is empty where the gold has no markers.
        for name, value in (("word_f1", row["word_f1"]), ("markup_f1", row["markup_f1"] or "0")):
            try:
                float(value)
            except ValueError:
                raise ValueError(f"{path}, line {n}: {name} is not a number") from None
        out[cells[0]] = row
    return out


def paired_comparison(results, baseline: dict[str, dict[str, str]]) -> str:
    """This run against a per-page table of another, on the pages both scored: per set, the macro
    word F1 (and markup F1) of each, the difference with its 95 % paired bootstrap interval over
    the pages, and how many pages went up and down. A difference whose interval holds 0 is one
    the pages cannot tell from noise."""
    by_set: dict[str, list[tuple[float, float, float | None, float | None]]] = defaultdict(list)
    for r in results:
        row = baseline.get(r.key)
        if row is None:
            continue
        old_markup = float(row["markup_f1"]) if row["markup_f1"] else None
        # This run's figures as the table would hold them (six decimals), so that a page that did
        # not change differs by exactly 0, not by the table's rounding.
        new_markup = None if r.score.markup_f1 is None else _as_written(r.score.markup_f1)
        for name in (r.dataset, "all"):
            by_set[name].append((float(row["word_f1"]), _as_written(r.score.f1), old_markup, new_markup))
    head = ("| set | pages | word F1 before | after | difference | 95 % paired interval | pages up / down "
            "| markup F1 before | after |\n|---|---|---|---|---|---|---|---|---|\n")
    lines = []
    for name in sorted(by_set, key=lambda n: (n == "all", n)):
        rows = by_set[name]
        diffs = [new - old for old, new, _, _ in rows]
        ci = bootstrap_interval(diffs)
        marked = [(a, b) for _, _, a, b in rows if a is not None and b is not None]
        mk = (f"{np.mean([a for a, _ in marked]):.3f} | {np.mean([b for _, b in marked]):.3f}" if marked
              else "– | –")
        lines.append(
            f"| {name} | {len(rows)} | {np.mean([o for o, _, _, _ in rows]):.4f} "
            f"| {np.mean([n for _, n, _, _ in rows]):.4f} "
            f"| {np.mean(diffs):+.4f} | {'–' if ci is None else f'{ci[0]:+.4f} to {ci[1]:+.4f}'} "
            f"| {sum(d > 1e-9 for d in diffs)} / {sum(d < -1e-9 for d in diffs)} | {mk} |")
    if not lines:
        return "No page of this run is in the baseline table.\n"
    return head + "\n".join(lines) + "\n"
