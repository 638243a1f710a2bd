"""Ablation of the CRF's feature families (development protocol) -> docs/ablation.md.

For each feature family, the change of macro word F1 per data set when the family is
removed, against the model with every family. A cheaper protocol than the 6-fold
cross-validation, to stay within the CPU budget:

* validation: fold 1 of folds.tsv (the project's validation fold for design decisions),
  all four data sets;
* training: every 2nd page (in the data's order) of the other five folds;
* the config's c1 / c2, `--iterations` L-BFGS iterations (80), the decision stage as
  configured; one process.

Pages are prepared once with every family; a variant without family F drops the
attributes of F (own and neighbours'), which is exactly what `FeatureExtractor(families=...)`
produces. Figures come from `cleaner.gold.score` via `cleaner.learn.train.predict`.

    .venv/bin/python scripts/ablation.py [--data ../shared/data] [--out docs/ablation.md]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from cleaner.config import load_config  # noqa: E402
from cleaner.gold.data import find_pages, load_folds  # noqa: E402
from cleaner.gold.score import aggregate  # noqa: E402
from cleaner.label.decide import DecisionSettings  # noqa: E402
from cleaner.label.model import ATTRIBUTE_ENCODING, CrfModel  # noqa: E402
from cleaner.learn.cv import trainable  # noqa: E402
from cleaner.learn.train import fit, predict, prepare  # noqa: E402
from cleaner.page.features import DEFAULT_FAMILIES  # noqa: E402

SETS = ("cleaneval-dev", "cleaneval-final", "cleanportaleval", "dragnet")
VALIDATION_FOLD = 1


def family_of(attr: str) -> str:
    if attr[:1] in "+-" and ":" in attr:
        attr = attr.split(":", 1)[1]
    return attr.split("=", 1)[0].split(".", 1)[0]


def without(docs, family: str | None):
    """Shallow copies of the prepared pages without the attributes of `family`."""
    if family is None:
        return docs
    out = []
    for d in docs:
        c = type(d)(**vars(d))
        c.features = [[a for a in row if family_of(a) != family] for row in d.features]
        out.append(c)
    return out


def run_variant(train_docs, val_docs, config, family, iterations):
    tc = config["train"]
    t = time.process_time()
    data = fit(without(train_docs, family), config, c1=float(tc["c1"]), c2=float(tc["c2"]), max_iterations=iterations)
    model = CrfModel(data, {"attribute_encoding": ATTRIBUTE_ENCODING})
    settings = DecisionSettings.from_config(config)
    results = [predict(model, d, settings) for d in without(val_docs, family)]
    f1 = {}
    for s in SETS:
        rs = [r.score for r in results if r.dataset == s]
        if rs:
            f1[s] = aggregate(rs)["macro_f1"]
    return f1, time.process_time() - t, data


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data"))
    ap.add_argument("--out", default=str(ROOT / "docs" / "ablation.md"))
    ap.add_argument("--json", default=None, help="also write the raw figures here")
    ap.add_argument("--iterations", type=int, default=80)
    ap.add_argument("--every", type=int, default=2, help="use every N-th training page")
    ap.add_argument("--families", default=",".join(DEFAULT_FAMILIES), help="families to ablate")
    ap.add_argument("--save-model", default=None, help="write the all-families model here")
    args = ap.parse_args(argv)

    config = load_config()
    folds = load_folds(args.data)
    pages = [p for p in find_pages(args.data) if p.gold_path is not None]
    val_pages = [p for p in pages if folds.get(p.key) == VALIDATION_FOLD]
    train_pages = [p for p in pages if folds.get(p.key) not in (None, VALIDATION_FOLD)][:: args.every]
    t0 = time.time()
    val_docs = prepare(val_pages, config, None, folds, processes=1, progress=False)
    train_docs = trainable(prepare(train_pages, config, None, folds, processes=1, progress=False),
                           float(config["train"]["min_alignment"]))
    print(f"prepared {len(train_docs)} training pages (of {len(train_pages)}), {len(val_docs)} validation pages "
          f"in {time.time() - t0:.0f}s", file=sys.stderr)
    families = [f for f in args.families.split(",") if f]
    rows = {}
    base, secs, data = run_variant(train_docs, val_docs, config, None, args.iterations)
    if args.save_model:
        CrfModel(data, {"attribute_encoding": ATTRIBUTE_ENCODING}).save(args.save_model)
    print(f"all families: {json.dumps({k: round(v, 4) for k, v in base.items()})} ({secs:.0f}s)", file=sys.stderr)
    for fam in families:
        f1, secs, _ = run_variant(train_docs, val_docs, config, fam, args.iterations)
        rows[fam] = f1
        print(f"without {fam}: " + json.dumps({k: round(f1[k] - base[k], 4) for k in f1}) + f" ({secs:.0f}s)",
              file=sys.stderr)
    if args.json:
        Path(args.json).write_text(json.dumps({"all": base, "without": rows}, indent=2) + "\n")
    write(Path(args.out), base, rows, len(train_docs), len(train_pages), val_docs, args, config)
    print(f"written {args.out} ({time.time() - t0:.0f}s)", file=sys.stderr)
    return 0


def write(path: Path, base, rows, n_train, n_train_pages, val_docs, args, config) -> None:
    sets = [s for s in SETS if s in base]
    n_val = {s: sum(1 for d in val_docs if d.dataset == s) for s in sets}

    def delta(x):
        return f"{x:+.4f}"

    head = "| removed family | " + " | ".join(f"{s} (n={n_val[s]})" for s in sets) + " | mean |\n"
    head += "|---|" + "---|" * (len(sets) + 1) + "\n"
    lines = ["| none (all families): macro F1 | " + " | ".join(f"{base[s]:.4f}" for s in sets)
             + f" | {sum(base[s] for s in sets) / len(sets):.4f} |"]
    for fam, f1 in rows.items():
        d = [f1[s] - base[s] for s in sets]
        lines.append(f"| {fam} | " + " | ".join(delta(x) for x in d) + f" | {delta(sum(d) / len(d))} |")
    hurts = [fam for fam, f1 in rows.items() if sum(f1[s] - base[s] for s in sets) > 0]
    tc = config["train"]
    text = f"""# Ablation of the CRF's feature families

Change of macro word F1 (`cleaner.gold.score`) per data set when one feature family is removed from the CRF,
against the CRF with every family (first row: its absolute macro F1). Negative = the family helps.

**Protocol (development, not the 6-fold cross-validation):** trained on every
{args.every}{"nd" if args.every == 2 else "th"} page of the five folds other than fold 1 of `folds.tsv`
({n_train} pages used of {n_train_pages}; pages whose gold aligns below `min_alignment` left out), validated
on all pages of fold 1, the project's validation fold for design decisions ({sum(n_val.values())} pages;
`folds.tsv` numbers its folds 0-5, so training uses folds 0, 2, 3, 4 and 5); c1={tc['c1']}, c2={tc['c2']},
{args.iterations} L-BFGS iterations (the default model uses {tc['max_iterations']}), decision stage as configured.
A variant without a family drops that family's attributes, its own and its neighbours'. Produced by
`scripts/ablation.py`. Differences of a few thousandths are within the noise of one validation fold
(CleanEval-dev and CleanPortalEval have few pages in it).

{head}{chr(10).join(lines)}

Families whose removal raised the mean macro F1 on this fold: {', '.join(hurts) if hurts else 'none'}.
"""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


if __name__ == "__main__":
    sys.exit(main())
