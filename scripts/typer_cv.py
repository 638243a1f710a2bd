"""Cross-validate the marker typer on all folds in about a minute, from cached block labellings.

The typer (`cleaner/label/markers.py`) only re-types the segments the block CRF keeps, so its
markup F1 can be measured on every fold without retraining the block CRF each time. Two steps:

  cache  trains each fold's block CRF once as `cleaner train --cv` does (the configured model:
         stacked by default; 6 folds, ~60 min on 2 cores) and stores, for the fold's training
         pages whose gold has markers and for its held-out pages, the decided labels, P(content)
         and every label's marginal per block, with the pages' blocks.
  eval   trains the typer configured in `--config` (its [markers] settings) per fold on the
         block CRF's in-sample labelling of the training pages, as `cleaner train` does,
         re-types the held-out pages, and prints markup F1 per data set: all folds, and folds
         0 and 2-5 (fold 1 is the validation fold that earlier decisions looked at).

Word F1 cannot change (the typer keeps the text and the segment starts), so a typer change
needs only `eval`: the shipped typer reproduces the markup figures of `docs/eval.md`.

    .venv/bin/python scripts/typer_cv.py cache --out /tmp/folds.pkl
    .venv/bin/python scripts/typer_cv.py eval /tmp/folds.pkl [--config overlay.toml]
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import pickle
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from cleaner.config import load_config  # noqa: E402
from cleaner.gold.data import find_pages, load_folds  # noqa: E402
from cleaner.gold.score import aggregate, score_document  # noqa: E402
from cleaner.label.decide import DecisionSettings  # noqa: E402
from cleaner.label.markers import (  # noqa: E402
    MarkerSettings,
    MarkerTyper,
    block_attributes,
    table_marginals,
    train_typer,
    training_sequence,
)
from cleaner.learn.cv import fold_training_docs  # noqa: E402
from cleaner.learn.train import has_markers, prepare, train_model  # noqa: E402
from cleaner.output.assemble import assemble  # noqa: E402

_STATE: dict = {}


def _cache_fold(fold: int) -> tuple[int, dict]:
    docs, config = _STATE["docs"], _STATE["config"]
    tc = config["train"]
    train_docs = fold_training_docs(docs, fold, float(tc["min_alignment"]))
    model = train_model(train_docs, config, c1=float(tc["c1"]), c2=float(tc["c2"]),
                        max_iterations=int(tc["max_iterations"]))
    decision = DecisionSettings.from_config(config)
    wanted = [d for d in train_docs if d.texts and has_markers(d.gold)] + [d for d in docs if d.fold == fold]
    tagged = {}
    for d in wanted:
        t = model.label(d.features, d.word_counts, decision, marginals=True)
        tagged[d.key] = (t.labels, t.p_content, t.marginals)
    print(f"fold {fold}: block CRF trained, {len(tagged)} pages labelled", file=sys.stderr, flush=True)
    return fold, {"train": [d.key for d in train_docs if d.key in tagged], "tagged": tagged}


def _in_processes(function, items: list, jobs: int):
    """`function` over `items`, in `jobs` forked processes (unordered), or in this one when `jobs` is 1: no fork at all
    (a caller's other threads may hold locks that a forked child would wait on forever)."""
    if jobs <= 1:
        yield from map(function, items)
        return
    with mp.get_context("fork").Pool(jobs) as pool:
        yield from pool.imap_unordered(function, items)


def cache(args) -> int:
    config = load_config(args.config)
    # Every Nth page keeps all sets and folds in a quick check of the script.
    pages = [p for p in find_pages(args.data, args.datasets) if p.gold_path is not None][:: args.every]
    docs = prepare(pages, config, None, load_folds(args.data), processes=args.jobs, keep_blocks=True)
    _STATE.update(docs=docs, config=config)
    folds = dict(_in_processes(_cache_fold, sorted({d.fold for d in docs if d.fold is not None}), args.jobs))
    # The features are what the block CRF read; the typer reads blocks, texts and words.
    pages_out = {d.key: {"dataset": d.dataset, "fold": d.fold, "blocks": d.blocks, "texts": d.texts,
                         "gaps": d.gaps, "shown": d.shown, "word_counts": d.word_counts, "gold": d.gold,
                         "gold_labels": d.labels} for d in docs}
    with open(args.out, "wb") as fh:
        pickle.dump({"pages": pages_out, "folds": folds}, fh, protocol=pickle.HIGHEST_PROTOCOL)
    print(f"written {args.out}", file=sys.stderr)
    return 0


def _eval_fold(fold: int) -> list[tuple[str, str, int, object]]:
    pages, part, settings = _STATE["pages"], _STATE["folds"][fold], _STATE["settings"]

    def inputs(key):
        p = pages[key]
        labels, p_content, marginals = part["tagged"][key]
        # Only segments' first blocks are read: their layout is computed when asked, as MarkerTyper.layout_of does.
        blocks = p["blocks"]
        return p, labels, p_content, table_marginals(marginals), (lambda i: block_attributes(blocks[i], settings))

    typer = None
    if settings is not None:  # else: [markers] disabled, the block CRF's own markers are scored
        sequences = []
        for key in part["train"]:
            p, labels, _, marginals_at, layout = inputs(key)
            seq = training_sequence(labels, marginals_at, layout, p["texts"], p["word_counts"], p["gold_labels"],
                                    settings)
            if seq is not None:
                sequences.append(seq)
        typer = MarkerTyper(train_typer(sequences, settings), settings)
    out = []
    for key, p in pages.items():
        if p["fold"] != fold:
            continue
        _, labels, p_content, marginals_at, layout = inputs(key)
        if typer is not None:
            labels = typer.retype(labels, marginals_at, layout, p["texts"], p["word_counts"])
        text = assemble(p["texts"], labels, None, p["word_counts"], p_content, p.get("gaps"),
                        p.get("shown")).cleaneval
        out.append((key, p["dataset"], fold, score_document(text, p["gold"])))
    return out


def evaluate(cache_path: str | Path, config_path: Path | None = None, jobs: int = 2) -> dict[str, dict]:
    """Markup F1 per data set from a cache: {dataset: {"all": F1 over all folds, "rest": over folds 0, 2-5,
    "pages": pages with markers}}, with the typer of `config_path`'s [markers] (none when disabled)."""
    with open(cache_path, "rb") as fh:
        data = pickle.load(fh)
    settings = MarkerSettings.from_config(load_config(config_path))
    _STATE.update(pages=data["pages"], folds=data["folds"], settings=settings)
    results = []
    for part in _in_processes(_eval_fold, sorted(data["folds"]), jobs):
        results.extend(part)
    by_set = defaultdict(list)
    for _, dataset, fold, score in results:
        by_set[dataset].append((fold, score))
    figures = {}
    # Markup is scored only where the gold marks its segments (CleanEval, CleanPortalEval); the
    # article and main-content golds (Dragnet, chaos, big5, fundus, wcxb) have no markers.
    for dataset, rows in sorted(by_set.items()):
        every = aggregate([s for _, s in rows])
        if every["n_markup_docs"]:
            rest = aggregate([s for fold, s in rows if fold != 1])
            figures[dataset] = {"all": every["macro_markup_f1"], "rest": rest["macro_markup_f1"],
                                "pages": every["n_markup_docs"]}
    return figures


def print_figures(figures: dict[str, dict], typer: bool) -> None:
    print(f"markup F1 ({'typer as configured' if typer else 'no typer: the block CRF markers'}); "
          "all folds (folds 0, 2-5)")
    for dataset, f in figures.items():
        print(f"  {dataset:16s} {f['all']:.4f} ({f['rest'] or 0:.4f})  {f['pages']} pages")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("cache", help="train each fold's block CRF once and cache its labellings")
    c.add_argument("--data", default=str(ROOT.parent / "shared" / "data"))
    c.add_argument("--config", type=Path, help="config overlay of the block CRF")
    c.add_argument("--out", required=True)
    c.add_argument("--jobs", type=int, default=2)
    c.add_argument("--every", type=int, default=1, help="only every Nth page (a quick check of the script)")
    c.add_argument("--datasets", nargs="+", metavar="NAME", help="only these data sets (default: all)")
    e = sub.add_parser("eval", help="cross-validate the configured typer from a cache")
    e.add_argument("cache")
    e.add_argument("--config", type=Path, help="config overlay: the [markers] settings to measure")
    e.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args(argv)
    if args.cmd == "cache":
        return cache(args)
    print_figures(evaluate(args.cache, args.config, args.jobs), MarkerSettings.from_config(load_config(args.config))
                  is not None)
    return 0


if __name__ == "__main__":
    sys.exit(main())
