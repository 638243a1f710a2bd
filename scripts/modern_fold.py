"""Convention-aware training on every shared set, screened on validation fold 1 -> docs/modern.md.

Prepares every page of every set once (cached with --cache), then trains each variant on the pages of
folds 0, 2-5 and scores every page of fold 1 with `cleaner.gold.score` (macro word F1 per set). Variants:

  old           the configured model without conventions, trained on the 2007-2013 sets only
                (today's default model, trained the same way)
  all           the same, trained on every set
  conv          convention-aware (`cleaner train --conventions`, [train] conventions / convention_of),
                trained on every set, each page scored under its set's convention
  conv-old      the same, trained on the 2007-2013 sets only
  final         `conv` trained on every page of every set, with its marker typer and the sidecar of
                `cleaner train --conventions` (training manifest, left-out pages), saved as --save/final.crfsuite

`--config conf/onepass.toml` trains one pass (4x faster); the figures of the variants of one run are
comparable with each other, not with the stacked default's 6-fold figures.

    .venv/bin/python scripts/modern_fold.py --cache /tmp/prep.pkl [--config X.toml] [--families F,G] \\
        [--jobs 2] VARIANT...

The cache holds the prepared pages of one config and family set: use one cache file per feature variant.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import pickle
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from cleaner.config import load_config  # noqa: E402
from cleaner.gold.data import find_pages, load_folds, manifest_hash  # noqa: E402
from cleaner.gold.score import aggregate  # noqa: E402
from cleaner.label.convention import Conventions  # noqa: E402
from cleaner.label.decide import DecisionSettings  # noqa: E402
from cleaner.learn.cv import trainable  # noqa: E402
from cleaner.learn.train import model_meta, predict, prepare, train_model, with_typer  # noqa: E402

OLD_SETS = ("cleaneval-dev", "cleaneval-final", "cleanportaleval", "dragnet")
VALIDATION_FOLD = 1
_STATE: dict = {}


def train_final(t: float) -> tuple[str, dict, float]:
    """The shipped model: `conv` on every page (as `cleaner train --conventions` makes it)."""
    docs, config = _STATE["docs"], _STATE["config"]
    tc = config["train"]
    conventions = Conventions.from_config(config)
    min_al = float(tc["min_alignment"])
    train = trainable(docs, min_al)
    kept = {d.key for d in train}
    empty_gold = [d.key for d in docs if d.key not in kept and (d.gold_words == 0 or not d.texts)]
    left_out = [(d.key, round(d.coverage, 3)) for d in docs if d.key not in kept and d.key not in empty_gold]
    pages = [p for p in find_pages(_STATE["data"]) if p.gold_path is not None]
    c1, c2, iters = float(tc["c1"]), float(tc["c2"]), int(tc["max_iterations"])
    meta = model_meta(config, _STATE["families"], c1=c1, c2=c2, max_iterations=iters, manifest=manifest_hash(pages),
                      n_docs=len(train), conventions=conventions,
                      extra={"cross_validation": None, "grid": None, "left_out": left_out,
                             "left_out_empty_gold": empty_gold})
    model = train_model(train, config, c1=c1, c2=c2, max_iterations=iters, conventions=conventions, meta=meta)
    with_typer(model, train, config, conventions).save(Path(_STATE["save"]) / "final.crfsuite")
    return "final", {}, time.time() - t


def run_variant(name: str) -> tuple[str, dict, float]:
    if name == "final":
        return train_final(time.time())
    docs, config = _STATE["docs"], _STATE["config"]
    tc = config["train"]
    conventions = Conventions.from_config(config) if name.startswith("conv") else None
    sets = OLD_SETS if name.endswith("old") else None
    train = trainable([d for d in docs if d.fold != VALIDATION_FOLD and (sets is None or d.dataset in sets)],
                      float(tc["min_alignment"]))
    t = time.time()
    model = train_model(train, config, c1=float(tc["c1"]), c2=float(tc["c2"]),
                        max_iterations=int(tc["max_iterations"]), conventions=conventions)
    if _STATE.get("save"):
        model.save(Path(_STATE["save"]) / f"{name}.crfsuite")
    settings = DecisionSettings.from_config(config)
    out: dict = {}
    for d in docs:
        if d.fold != VALIDATION_FOLD:
            continue
        conv = conventions.of(d.dataset) if conventions else None
        out.setdefault(d.dataset, []).append(predict(model, d, settings, conv).score)
        if conventions and conv != conventions.default:  # the old sets under `main` too
            out.setdefault(d.dataset + " (main)", []).append(predict(model, d, settings, conventions.default).score)
    return name, {k: (aggregate(v)["macro_f1"], len(v)) for k, v in out.items()}, time.time() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("variants", nargs="+")
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data"))
    ap.add_argument("--config")
    ap.add_argument("--cache")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--save", help="folder to save each variant's model in")
    ap.add_argument("--families",
                    help="feature families, comma-separated (default: cleaner.page.features.DEFAULT_FAMILIES)")
    args = ap.parse_args()
    config = load_config(args.config) if args.config else load_config()
    cache = Path(args.cache) if args.cache else None
    families = tuple(args.families.split(",")) if args.families else None
    if cache and cache.exists():
        docs = pickle.loads(cache.read_bytes())
    else:
        pages = [p for p in find_pages(args.data) if p.gold_path is not None]
        docs = prepare(pages, config, families, folds=load_folds(args.data), processes=args.jobs)
        if cache:
            cache.write_bytes(pickle.dumps(docs, protocol=pickle.HIGHEST_PROTOCOL))
    _STATE.update(docs=docs, config=config, save=args.save, data=args.data, families=families)
    if args.jobs > 1 and len(args.variants) > 1:
        with mp.get_context("fork").Pool(min(args.jobs, len(args.variants))) as pool:
            results = pool.map(run_variant, args.variants)
    else:
        results = [run_variant(v) for v in args.variants]
    results = [r for r in results if r[1]]
    sets = sorted({s for _, r, _ in results for s in r})
    print("| variant | " + " | ".join(f"{s} (n={results[0][1].get(s, (0, 0))[1]})" for s in sets) + " | minutes |")
    print("|---|" + "---|" * (len(sets) + 1))
    for name, r, secs in results:
        cells = " | ".join(f"{r[s][0]:.4f}" if s in r else "–" for s in sets)
        print(f"| `{name}` | {cells} | {secs / 60:.0f} |")


if __name__ == "__main__":
    main()
