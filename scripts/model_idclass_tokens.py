#!/usr/bin/env python
"""Give a model saved before its sidecar held `idclass_tokens` the list that training now writes (or check it).

    .venv/bin/python scripts/model_idclass_tokens.py MODEL DATA_DIR... [--jobs 2] [--check]

`cleaner train` writes into a model's sidecar the id/class tokens of its training pages that some attribute of the
model names (cleaner.learn.train.known_idclass_tokens); the features then name every other token as unknown without
computing its BLAKE2b codes (cleaner.page.feature_names.PrefixCache; docs/speed.md, stop 69). A model saved without
the list works as before, every token looked up. This script prepares the pages of DATA_DIR (every page with a gold,
as `cleaner train` reads them) with the model's own [segment]/[features] and families, and writes the list the
training would have written, through the same function. Give it the pages the model was trained on, or more: a
token of no page given is named unknown, so a page the model learned from and the script did not see would lose
what the model knows of its tokens (`scripts/snapshot_outputs.py --against` on the training pages shows whether
anything moved). `--check`: write nothing; exit 1 when the sidecar's list differs from the one computed.

Exit codes: 0 written (or, with --check, the same), 1 --check found a difference, 2 usage or input error.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model", help="the model's .crfsuite file (its sidecar beside it)")
    ap.add_argument("data", nargs="+", help="the data folders it was trained on (cleaner train's DATA_DIR)")
    ap.add_argument("--jobs", type=int, default=2, help="worker processes preparing the pages (default 2)")
    ap.add_argument("--check", action="store_true", help="compare with the sidecar's list; write nothing")
    args = ap.parse_args(argv)

    from cleaner.config import load_config
    from cleaner.gold.data import find_pages
    from cleaner.label.crf_model import CrfModel
    from cleaner.label.model import load_model
    from cleaner.learn.train import known_idclass_tokens, prepare, with_idclass_tokens

    try:
        model = load_model(args.model)
    except Exception as exc:  # (a missing or unreadable model: its own message)
        print(f"model_idclass_tokens: {exc}", file=sys.stderr)
        return 2
    if not isinstance(model, CrfModel):
        print(f"model_idclass_tokens: {args.model} is not a CRF model", file=sys.stderr)
        return 2
    pages = []
    for d in args.data:
        try:
            pages.extend(p for p in find_pages(d) if p.gold_path is not None)
        except FileNotFoundError as exc:
            print(f"model_idclass_tokens: {exc}", file=sys.stderr)
            return 2
    families = tuple(model.meta.get("families") or ()) or None
    docs = prepare(pages, model.feature_config(load_config()), families, processes=args.jobs)
    tokens = known_idclass_tokens(model, docs)
    if tokens is None:
        print("model_idclass_tokens: this model names its attributes readable: no list applies", file=sys.stderr)
        return 2
    seen = len(set().union(*(d.idclass_tokens or () for d in docs)))
    print(f"{len(pages)} pages, {seen} distinct id/class tokens, {len(tokens)} of them known to the model",
          file=sys.stderr)
    if args.check:
        same = model.idclass_tokens == frozenset(tokens)
        print("the sidecar's list is the same" if same else "the sidecar's list differs", file=sys.stderr)
        return 0 if same else 1
    with_idclass_tokens(model, tokens).save(args.model)
    print(f"written into {args.model}.json", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
