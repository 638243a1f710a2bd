"""Training and decision variants of the CRF on validation fold 1 -> docs/variants.md.

The development protocol behind the choices in `conf/default.toml` that are not feature
families (those are `scripts/ablation.py`): L-BFGS iterations, regularisation, and three
ways of combining the CRF with the Dragnet system (`cleaner.label.systems.dragnet`):

  iter:N           c1/c2 from the config, N L-BFGS iterations
  reg:C1,C2,N      other regularisation (N iterations, CRFsuite stops earlier when converged)
  idclass-df:K     id/class attributes kept only for tokens seen in >= K training pages
  stack            Dragnet's P(content), out-of-fold on the training pages (inner folds = the
                   outer folds), as binned CRF attributes of the block and its neighbours
  fuse:W,T         late fusion: a block the CRF labels other is kept when
                   (1-W) * P_crf(content) + W * P_dragnet(content) > T
  dragnet          the Dragnet system alone (reference)
  style:P:INFER    annotation conventions as model input: every training page carries its set's
                   convention (`conv=cleaneval` for the three CleanEval sets, `conv=article` for
                   Dragnet's) and a convention-conjoined copy of its attributes whose names start
                   with one of the comma-separated prefixes P ("-" = none, only the bias);
                   validation pages are tagged with INFER: `matched` (each page its own set's
                   convention), `cleaneval`, `article` or `none` (no convention attributes)
  dragnet-matched  the Dragnet system trained per convention: CleanEval pages scored by a model
                   trained on the CleanEval training pages, Dragnet pages by one trained on
                   Dragnet's (the fair reference for `style:...:matched`)

Validation: every page of fold 1 of folds.tsv. Training: every `--every`-th page of folds
0, 2-5 (1 = all, as in the real model). Figures: macro word F1 and markup F1 from
`cleaner.gold.score`, per data set. One validation fold is noisy (CleanEval-dev and
CleanPortalEval have 13 and 17 pages in it): read differences of a few thousandths as ties.

    .venv/bin/python scripts/variants.py [--every 1] [--out docs/variants.md] [--title T] VARIANT...
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from cleaner.config import load_config  # noqa: E402
from cleaner.gold.data import find_pages, load_folds  # noqa: E402
from cleaner.gold.score import aggregate, score_document  # noqa: E402
from cleaner.label.convention import Conventions  # noqa: E402
from cleaner.label.decide import DecisionSettings  # noqa: E402
from cleaner.label.model import CrfModel  # noqa: E402
from cleaner.label.systems.base import PageInput, run_labels  # noqa: E402
from cleaner.label.systems.dragnet import Dragnet  # noqa: E402
from cleaner.learn.cv import trainable  # noqa: E402
from cleaner.learn.train import fit, predict, prepare, tagging_meta  # noqa: E402
from cleaner.output.assemble import assemble  # noqa: E402

SETS = ("cleaneval-dev", "cleaneval-final", "cleanportaleval", "dragnet")
VALIDATION_FOLD = 1


def with_window(rows: list[list[str]]) -> list[list[str]]:
    n = len(rows)
    return [rows[i] + (["-1:" + a for a in rows[i - 1]] if i else [])
            + (["+1:" + a for a in rows[i + 1]] if i + 1 < n else [])
            for i in range(n)]


# The conventions of the config ([train] conventions, convention_of), as `cleaner train --conventions` uses them.
CONVENTIONS = Conventions.from_config(load_config())


def convention(dataset: str) -> str:
    return CONVENTIONS.of(dataset)


def with_convention(rows: list[list[str]], conv: str | None, prefixes: tuple[str, ...]) -> list[list[str]]:
    """`rows` as a model trained with conventions conjoined to `prefixes` sees them (None: no convention)."""
    if conv is None:
        return rows
    return Conventions(CONVENTIONS.names, CONVENTIONS.by_dataset, prefixes).apply(rows, conv)


class Lab:
    def __init__(self, train_docs, val_docs, config, min_alignment):
        self.train, self.val, self.config, self.min_alignment = train_docs, val_docs, config, min_alignment
        self.base = {id(d): d.features for d in train_docs + val_docs}
        self._dragnet_val = None
        self._plain = None  # the configured CRF's results, shared by the fuse:W,T variants
        self._style_models: dict = {}  # prefixes -> CrfModel, shared by the style:P:INFER variants

    def _restore(self):
        for d in self.train + self.val:
            d.features = self.base[id(d)]

    def dragnet_probs(self, train, test) -> dict[str, np.ndarray]:
        m = Dragnet().fit([PageInput(d.blocks) for d in train], [d.labels for d in train])
        return {d.key: m.probabilities(d.blocks) for d in test}

    def dragnet_val(self):
        if self._dragnet_val is None:
            self._dragnet_val = self.dragnet_probs(trainable(self.train, self.min_alignment), self.val)
        return self._dragnet_val

    def crf(self, c1, c2, iterations, extra=None):
        self._restore()
        if extra is not None:
            for d in self.train + self.val:
                d.features = [a + b for a, b in zip(d.features, extra[d.key])]
        data = fit(trainable(self.train, self.min_alignment), self.config, c1=c1, c2=c2, max_iterations=iterations)
        model = CrfModel(data, tagging_meta())
        res = [predict(model, d, DecisionSettings.from_config(self.config)) for d in self.val]
        self._restore()
        return res

    def scores(self, labelled) -> dict:
        """labelled: (doc, DocScore) pairs -> figures per set."""
        out = {}
        for s in SETS:
            rs = [sc for d, sc in labelled if d.dataset == s]
            if rs:
                a = aggregate(rs)
                out[s] = {"f1": a["macro_f1"], "markup": a["macro_markup_f1"] if s != "dragnet" else None}
        return out

    def run(self, variant: str) -> dict:
        return self.scores(self.run_pages(variant))

    def run_pages(self, variant: str) -> list:
        """(validation page, DocScore) for every validation page under `variant`."""
        tc = self.config["train"]
        c1, c2, iters = float(tc["c1"]), float(tc["c2"]), int(tc["max_iterations"])
        name, _, arg = variant.partition(":")
        if name == "iter":
            res = self.crf(c1, c2, int(arg))
        elif name == "reg":
            a, b, n = arg.split(",")
            res = self.crf(float(a), float(b), int(n))
        elif name == "idclass-df":
            df = Counter()
            for d in self.train:
                df.update({a for row in d.features for a in row if a.startswith("idclass.")})
            keep = {a for a, k in df.items() if k >= int(arg)}
            saved = dict(self.base)
            for d in self.train + self.val:
                self.base[id(d)] = [[a for a in row if not a.startswith("idclass.") or a in keep]
                                    for row in saved[id(d)]]
            try:
                res = self.crf(c1, c2, iters)
            finally:
                self.base = saved
        elif name == "stack":
            probs = {}
            fold_ids = sorted({d.fold for d in self.train})
            for f in fold_ids:  # out-of-fold for the training pages
                inner = trainable([d for d in self.train if d.fold != f], self.min_alignment)
                probs.update(self.dragnet_probs(inner, [d for d in self.train if d.fold == f]))
            probs.update(self.dragnet_val())
            extra = {k: with_window([[f"stack.p={min(int(p * 10), 9)}"] for p in ps]) for k, ps in probs.items()}
            res = self.crf(c1, c2, iters, extra)
        elif name == "fuse":
            w, t = map(float, arg.split(","))
            probs = self.dragnet_val()
            if self._plain is None:
                self._plain = self.crf(c1, c2, iters)
            labelled = []
            for d, r in zip(self.val, self._plain):
                q = (1 - w) * (1 - np.asarray(r.p_other)) + w * probs[d.key]
                labels = []
                for i, y in enumerate(r.pred_labels):
                    if y == "other" and q[i] > t:
                        y = "paragraph" if not labels or labels[-1] == "other" else "continuation"
                    labels.append(y)
                text = assemble(d.texts, labels, None, d.word_counts, None, d.gaps, d.shown).cleaneval
                labelled.append((d, score_document(text, d.gold)))
            return labelled
        elif name == "style":
            prefixes_arg, _, infer = arg.rpartition(":")
            prefixes = tuple(p for p in prefixes_arg.split(",") if p and p != "-")
            if infer not in ("matched", "cleaneval", "article", "none"):
                raise SystemExit(f"style: unknown inference convention {infer!r}")
            model = self._style_models.get(prefixes)
            if model is None:
                self._restore()
                for d in self.train:
                    d.features = with_convention(d.features, convention(d.dataset), prefixes)
                data = fit(trainable(self.train, self.min_alignment), self.config, c1=c1, c2=c2, max_iterations=iters)
                model = self._style_models[prefixes] = CrfModel(data, tagging_meta())
                self._restore()
            res = []
            for d in self.val:
                conv = {"matched": convention(d.dataset), "none": None}.get(infer, infer)
                d.features = with_convention(self.base[id(d)], conv, prefixes)
                res.append(predict(model, d, DecisionSettings.from_config(self.config)))
            self._restore()
        elif name == "dragnet-matched":
            by_conv = {}
            for conv in ("cleaneval", "article"):
                train = trainable([d for d in self.train if convention(d.dataset) == conv], self.min_alignment)
                by_conv[conv] = self.dragnet_probs(train, [d for d in self.val if convention(d.dataset) == conv])
            return [(d, score_document(assemble(d.texts, run_labels(list(by_conv[convention(d.dataset)][d.key] >= 0.5)),
                                                None, d.word_counts, None, d.gaps, d.shown).cleaneval, d.gold))
                    for d in self.val]
        elif name == "dragnet":
            probs = self.dragnet_val()
            return [(d, score_document(assemble(d.texts, run_labels(list(probs[d.key] >= 0.5)), None,
                                           d.word_counts, None, d.gaps, d.shown).cleaneval, d.gold)) for d in self.val]
        else:
            raise SystemExit(f"unknown variant {variant!r}")
        return [(d, r.score) for d, r in zip(self.val, res)]


def make_lab(data: str, every: int = 1, processes: int = 2) -> Lab:
    """Prepare fold 1 (validation) and every `every`-th page of the other folds (training)."""
    config = load_config()
    folds = load_folds(data)
    pages = [p for p in find_pages(data) if p.gold_path is not None]
    val_pages = [p for p in pages if folds.get(p.key) == VALIDATION_FOLD]
    train_pages = [p for p in pages if folds.get(p.key) not in (None, VALIDATION_FOLD)][::every]
    t0 = time.time()
    docs = prepare(val_pages + train_pages, config, None, folds, processes=processes, progress=False, keep_blocks=True)
    lab = Lab(docs[len(val_pages):], docs[: len(val_pages)], config, float(config["train"]["min_alignment"]))
    print(f"prepared {len(lab.train)} training and {len(lab.val)} validation pages in {time.time() - t0:.0f}s",
          file=sys.stderr)
    return lab


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("variants", nargs="+")
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data"))
    ap.add_argument("--every", type=int, default=1, help="use every N-th training page")
    ap.add_argument("--out", default=str(ROOT / "docs" / "variants.md"))
    ap.add_argument("--json", default=None)
    ap.add_argument("--title", default="Training and decision variants", help="heading of the Markdown file")
    ap.add_argument("--processes", type=int, default=2, help="for preparing the pages")
    args = ap.parse_args(argv)
    lab = make_lab(args.data, args.every, args.processes)
    val = lab.val
    rows = {}
    for v in args.variants:
        t = time.time()
        rows[v] = lab.run(v)
        print(v, json.dumps({s: round(x["f1"], 4) for s, x in rows[v].items()}), f"({time.time() - t:.0f}s)",
              file=sys.stderr, flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2) + "\n")
    write(Path(args.out), rows, val, len(lab.train), args)
    return 0


def write(path: Path, rows: dict, val, n_train: int, args) -> None:
    n_val = {s: sum(1 for d in val if d.dataset == s) for s in SETS}

    def cell(x, key):
        return "–" if x is None or x.get(key) is None else f"{x[key]:.4f}"

    head = ("| variant | " + " | ".join(f"{s} (n={n_val[s]})" for s in SETS) + " | mean F1 | "
            + " | ".join(f"markup {s}" for s in SETS[:3]) + " |\n|---|" + "---|" * (len(SETS) + 4) + "\n")
    lines = []
    for v, r in rows.items():
        f1s = [r[s]["f1"] for s in SETS if s in r]
        lines.append(f"| `{v}` | " + " | ".join(cell(r.get(s), "f1") for s in SETS) + f" | {sum(f1s) / len(f1s):.4f} | "
                     + " | ".join(cell(r.get(s), "markup") for s in SETS[:3]) + " |")
    path.write_text(f"""# {args.title} (validation fold 1)

Macro word F1 and markup F1 (`cleaner.gold.score`) on fold 1 of `folds.tsv` (the project's validation
fold), training on {"all" if args.every == 1 else f"every {args.every}th"} page{"s" if args.every == 1 else ""}
of folds 0 and 2-5 ({n_train} pages before the alignment filter). Produced by
`scripts/variants.py {' '.join(args.variants)}` (`--every {args.every}`); see the script's docstring for what
each variant is. One fold is noisy: differences of a few thousandths are ties, and CleanEval-dev /
CleanPortalEval have few pages in it.

{head}{chr(10).join(lines)}
""")


if __name__ == "__main__":
    sys.exit(main())
