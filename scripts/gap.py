"""Where the CRF loses to the Dragnet system on CleanEval, page by page -> docs/gap.md.

Both systems are cross-validated on the folds of `folds.tsv` (the CRF with the config's settings,
as `cleaner train --cv`; the Dragnet system as `cleaner eval --model-kind dragnet --cv`, or read
from a results file of that command). The macro F1 difference of a set is the mean of its
per-page differences, so it can be split exactly into the pages behind it:

* pages whose gold text is empty (F1 is 1 for empty output and 0 for anything else),
* "dropped content": the CRF keeps under 30 % of the gold words the Dragnet system finds
  (recall < 0.3 while the Dragnet system's is >= 0.7),
* every other page.

With `--explain N`, the N pages that cost the CRF most are explained: in the model of their fold (the
one the cross-validation scored them with; with [stacking] enabled, a first pass and the second pass
that reads its labelling) the attributes that push their gold-content words
hardest towards `other` (state weight other - paragraph, word-weighted over the page's gold-content
blocks) are listed, over the attributes the (second) pass reads of the page: the page's own rows and
the first pass's view of it (`pass1.*`, cleaner.label.stacking).

    .venv/bin/python scripts/gap.py [--dragnet-results FILE] [--explain 8] [--out docs/gap.md]
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from cleaner.config import load_config  # noqa: E402
from cleaner.gold.data import find_pages, load_folds  # noqa: E402
from cleaner.gold.score import bootstrap_interval  # noqa: E402
from cleaner.label.decide import DecisionSettings  # noqa: E402
from cleaner.label.model import CODEC, first_pass_view, load_model, open_tagger  # noqa: E402
from cleaner.label.stacking import StackingSettings  # noqa: E402
from cleaner.learn.systems_evaluate import cross_validate_system, load_results, prepare_docs  # noqa: E402
from cleaner.learn.train import cross_validate, prepare  # noqa: E402
from cleaner.tools.inspect import feature_weights  # noqa: E402

SETS = ("cleaneval-dev", "cleaneval-final", "cleanportaleval")
DROPPED_CRF_RECALL, DROPPED_REF_RECALL = 0.3, 0.7


def category(crf, ref) -> str:
    if crf.n_gold == 0:
        return "empty gold"
    if crf.recall < DROPPED_CRF_RECALL and ref.recall >= DROPPED_REF_RECALL:
        return "dropped content"
    return "other pages"


def second_pass_rows(model, d, decision: DecisionSettings) -> list[list[str]]:
    """The readable attribute rows the model's CRF (a stacked model's second pass) reads of page `d`:
    its own rows, plus a stacked model's first-pass view of it, as `CrfModel.tag` forms it. (A first
    pass that reads only each block's own attributes labels whole rows the same.)"""
    if model.stacking is None:
        return d.features
    view = first_pass_view(open_tagger(model.first_pass), CODEC.encode(d.features), model.stacking,
                           d.word_counts, decision)
    return [row + more for row, more in zip(d.features, view)]


def explain(docs, keys, config, models_dir: Path, top: int = 6) -> dict[str, list[tuple[str, float]]]:
    """Attributes pushing each page's gold content towards `other` in the model of its fold (the one the
    cross-validation scored the page with, saved in `models_dir` as `fold-<k>.crfsuite`)."""
    by_key = {d.key: d for d in docs}
    decision = DecisionSettings.from_config(config)
    out = {}
    for fold in sorted({by_key[k].fold for k in keys}):
        model = load_model(models_dir / f"fold-{fold}.crfsuite")
        w = feature_weights(model)  # readable attribute -> {label: weight}
        for key in (k for k in keys if by_key[k].fold == fold):
            d = by_key[key]
            push: dict[str, float] = defaultdict(float)
            words = 0
            for row, y, n in zip(second_pass_rows(model, d, decision), d.labels, d.word_counts):
                if y == "other" or not n:
                    continue
                words += n
                for a in row:
                    if a in w:
                        push[a] += n * (w[a].get("other", 0.0) - w[a].get("paragraph", 0.0))
            out[key] = sorted(((a, v / words) for a, v in push.items()), key=lambda x: -x[1])[:top] if words else []
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data"))
    ap.add_argument("--dragnet-results", default=None, help="results JSON of `cleaner eval --model-kind dragnet --cv`")
    ap.add_argument("--explain", type=int, default=8, help="explain the N pages that cost the CRF most")
    ap.add_argument("--processes", type=int, default=2)
    ap.add_argument("--out", default=str(ROOT / "docs" / "gap.md"))
    args = ap.parse_args(argv)

    config = load_config()
    tc = config["train"]
    folds = load_folds(args.data)
    pages = [p for p in find_pages(args.data) if p.gold_path is not None and p.dataset in SETS]
    t0 = time.time()
    prepared = prepare(pages, config, None, folds, processes=args.processes, progress=False)
    # The CRF trains on every set, as the shipped model does; only the CleanEval pages are compared.
    others = [p for p in find_pages(args.data) if p.gold_path is not None and p.dataset not in SETS]
    prepared += prepare(others, config, None, folds, processes=args.processes, progress=False)
    models_dir = Path(tempfile.mkdtemp(prefix="gap-models-"))  # each fold's model, for --explain
    crf = {r.key: r for r in cross_validate(prepared, config, c1=float(tc["c1"]), c2=float(tc["c2"]),
                                             max_iterations=int(tc["max_iterations"]), processes=args.processes,
                                             progress=False, models_dir=models_dir)}
    print(f"crf cross-validated in {time.time() - t0:.0f}s", file=sys.stderr)
    if args.dragnet_results:
        stored = load_results(Path(args.dragnet_results)).get("dragnet")
        if stored is None:  # no dragnet results, or a file of the older per-page layout (not reused)
            sys.exit(f"gap.py: {args.dragnet_results} holds no dragnet results of this layout: run "
                     "`cleaner eval --model-kind dragnet --cv --results FILE` again")
        ref = {r.key: r for r in stored}
    else:
        sysdocs = prepare_docs(pages + others, config, folds, progress=False)
        ref = {r.key: r for r in cross_validate_system("dragnet", sysdocs, config, progress=False)}
        del sysdocs

    lines = []
    worst = []
    for s in SETS:
        keys = sorted(k for k, r in crf.items() if r.dataset == s and k in ref)
        n = len(keys)
        diff = {k: crf[k].score.f1 - ref[k].score.f1 for k in keys}
        by_cat: dict[str, list[str]] = defaultdict(list)
        for k in keys:
            by_cat[category(crf[k].score, ref[k].score)].append(k)
        mean_crf = sum(crf[k].score.f1 for k in keys) / n
        mean_ref = sum(ref[k].score.f1 for k in keys) / n
        lo, hi = bootstrap_interval(list(diff.values()))
        lines.append(f"| {s} | {n} | {mean_crf:.3f} | {mean_ref:.3f} | "
                     f"{mean_crf - mean_ref:+.3f} ({lo:+.3f} to {hi:+.3f}) | "
                     + " | ".join(f"{len(by_cat[c])}: {sum(diff[k] for k in by_cat[c]) / n:+.3f}"
                                  for c in ("empty gold", "dropped content", "other pages")) + " |")
        worst += sorted(keys, key=lambda k: diff[k])[: max(args.explain, 5)]
    worst = sorted(worst, key=lambda k: crf[k].score.f1 - ref[k].score.f1)
    reasons = explain(prepared, worst[: args.explain], config, models_dir) if args.explain else {}
    shutil.rmtree(models_dir, ignore_errors=True)
    rows = []
    for k in worst[: max(args.explain, 10)]:
        c, r = crf[k].score, ref[k].score
        why = ", ".join(f"`{a}` {v:+.2f}" for a, v in reasons.get(k, [])[:4])
        rows.append(f"| {k} | {c.n_gold} | {c.precision:.2f} / {c.recall:.2f} | {r.precision:.2f} / {r.recall:.2f} | "
                    f"{c.f1 - r.f1:+.3f} | {why} |")
    stacking = StackingSettings.from_config(config)
    crf_kind = ("stacked, the default: a first-pass CRF, and a second-pass CRF that also reads the first pass's "
                f"labelling of the page after the decision stage, [stacking] inner_folds = {stacking.inner_folds}"
                if stacking else "one pass: [stacking] disabled")
    read_by = ", over the attributes its second pass reads of the page" if stacking else ""
    pass1 = ("; `pass1.` the first pass's view of the page: its label, P(content) in tenths, the mean P(content) "
             "within each window `w<k>=`, and where the block lies against the blocks it keeps") if stacking else ""
    Path(args.out).write_text(f"""# Where the CRF loses to the Dragnet system on CleanEval

Produced by `scripts/gap.py` (see its docstring): both systems cross-validated on the 6 folds of `folds.tsv`,
the CRF as `conf/default.toml` configures it ({crf_kind}; c1/c2 {tc['c1']}/{tc['c2']},
{tc['max_iterations']} iterations).
Macro word F1 per set, the difference with its 95 % paired bootstrap interval over the set's pages, and the
difference split into the pages behind it (count: contribution to the difference of the macro means).
"Dropped content": CRF recall < {DROPPED_CRF_RECALL} where the Dragnet system's is ≥ {DROPPED_REF_RECALL}.

| set | pages | CRF | Dragnet system | difference | empty gold | dropped content | other pages |
|---|---|---|---|---|---|---|---|
{chr(10).join(lines)}

The pages that cost the CRF most (P / R of each system). For the first {args.explain}, the attributes that push
the page's gold-content words hardest towards `other` in the model of its fold, the one the cross-validation
scored it with{read_by} (state weight of `other` minus `paragraph`, mean per gold-content word; `-1:` / `+1:` are the
neighbours' attributes{pass1}):

| page | gold words | CRF P / R | Dragnet P / R | F1 difference | strongest push to `other` |
|---|---|---|---|---|---|
{chr(10).join(rows)}
""")
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
