"""How much of the cross-validated quality is the memory of a site? -> docs/sites.md

`folds.tsv` splits the shared pages by document, not by site, and most Dragnet pages come
from sites with several pages, so a held-out page usually has siblings from the same site
(same template, same id/class names) in the training folds. A corpus is mostly made of
sites the model never saw. This script:

1. names the site of every page: the host of its canonical link, og:url or <base>, else the
   host its absolute links point to most often (saved pages carry no URL; a heuristic);
2. counts sites per data set and how many validation pages (fold 1) have a site that also
   occurs in the training folds (0, 2-5);
3. trains on all pages of the training folds and reports macro word F1 on fold 1 separately
   for pages of seen and unseen sites, for the variants given (`scripts/variants.py` names;
   default: the configured CRF and the Dragnet system).

    .venv/bin/python scripts/site_overlap.py [--data ../shared/data] [--out docs/sites.md] [VARIANT...]
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from variants import SETS, VALIDATION_FOLD, make_lab  # noqa: E402

from cleaner.config import load_config  # noqa: E402
from cleaner.gold.data import find_pages, load_folds, load_sites, page_sites  # noqa: E402
from cleaner.gold.score import aggregate  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("variants", nargs="*", default=None,
                    help="scripts/variants.py names (default: iter:<max_iterations>, the configured CRF, and dragnet)")
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data"))
    ap.add_argument("--out", default=str(ROOT / "docs" / "sites.md"))
    args = ap.parse_args(argv)
    configured = f"iter:{load_config()['train']['max_iterations']}"
    args.variants = args.variants or [configured, "dragnet"]
    folds = load_folds(args.data)
    pages = [p for p in find_pages(args.data) if p.gold_path is not None]
    site = page_sites(pages, load_sites(args.data))
    train_sites = Counter(site[p.key] for p in pages if folds.get(p.key) not in (None, VALIDATION_FOLD))

    def seen(key: str) -> bool:
        return site[key] is not None and train_sites[site[key]] > 0

    overview = ["| set | pages | sites | pages per site (mean) | fold-1 pages | of them from a site in folds 0, 2-5 |",
                "|---|---|---|---|---|---|"]
    for s in SETS:
        ps = [p for p in pages if p.dataset == s]
        val = [p for p in ps if folds.get(p.key) == VALIDATION_FOLD]
        n_sites = len({site[p.key] for p in ps})
        overview.append(f"| {s} | {len(ps)} | {n_sites} | {len(ps) / max(n_sites, 1):.1f} | {len(val)} | "
                        f"{sum(seen(p.key) for p in val)} |")
    lab = make_lab(args.data)
    rows = ["| variant | set | seen-site pages | F1 seen | unseen-site pages | F1 unseen | unseen − seen |",
            "|---|---|---|---|---|---|---|"]
    for v in args.variants:
        labelled = lab.run_pages(v)
        for s in SETS:
            a = [sc for d, sc in labelled if d.dataset == s and seen(d.key)]
            b = [sc for d, sc in labelled if d.dataset == s and not seen(d.key)]
            fa = aggregate(a)["macro_f1"] if a else None
            fb = aggregate(b)["macro_f1"] if b else None
            diff = f"{fb - fa:+.4f}" if a and b else "–"
            rows.append(f"| `{v}` | {s} | {len(a)} | {'–' if fa is None else f'{fa:.4f}'} | {len(b)} | "
                        f"{'–' if fb is None else f'{fb:.4f}'} | {diff} |")
        print(v, "done", file=sys.stderr, flush=True)
    nl = "\n"
    Path(args.out).write_text(f"""# Seen and unseen sites

The cross-validation with every fold's sites held out of its training, all folds: `docs/eval-unseen-sites.md`
(`cleaner eval --cv --unseen-sites`); earlier regularisations and id/class cut-offs measured this way:
`docs/ablation.md`.

`folds.tsv` holds pages out by document, not by site. Saved pages carry no URL, so the site of a page is
inferred from its HTML (canonical link, og:url or `<base>`, else the host its absolute links point to most
often): a heuristic, good enough to count. Produced by `scripts/site_overlap.py {' '.join(args.variants)}`.

{nl.join(overview)}

Trained on all pages of folds 0 and 2-5, validated on fold 1, split by whether the page's site also occurs in
the training folds (variants as in `scripts/variants.py`; `{configured}` is the configured CRF):

{nl.join(rows)}
""")
    return 0


if __name__ == "__main__":
    sys.exit(main())
