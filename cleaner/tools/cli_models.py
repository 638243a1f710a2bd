"""`cleaner models`: what each packaged model (or each model given) is, its files, and how it scored.
The parser that sets it up is cleaner.tools.cli.build_parser."""

from __future__ import annotations

import json
from pathlib import Path

from .cli_common import EXIT_INPUT, EXIT_MODEL, EXIT_OK
from .cli_common import fail as _fail


def packaged_models() -> list[Path]:
    """The models shipped in the package (cleaner/models), the default first."""
    from ..label.model_files import COMPANIONS
    from ..packaged import DEFAULT_MODEL_PATH

    companions = tuple(suffix for _, suffix, _, _ in COMPANIONS)
    found = sorted(p for p in DEFAULT_MODEL_PATH.parent.glob("*.crfsuite") if not p.name.endswith(companions))
    return sorted(found, key=lambda p: p != DEFAULT_MODEL_PATH)


def describe_model(path: Path) -> dict:
    """What a user needs to pick a model: what it is, its files, and its cross-validated figures."""
    from ..config import load_config
    from ..label.model import load_model
    from ..label.model_files import model_files
    from ..packaged import DEFAULT_MODEL_PATH, packaged_model_path

    model = load_model(path)
    meta = model.meta
    files = model_files(path)
    kind = ["one pass"]
    if model.stacking:
        own = "" if model.stacking.first_pass_neighbours else ", own attributes only"
        kind = [f"stacked (first pass: decided labels{own})"]
    if model.conventions is not None:
        kind.append("conventions " + " / ".join(model.conventions.names) + " (--convention)")
    if model.typer is not None:
        kind.append("marker typer")
    # the conventions it cleans by when no --model is given (conf/default.toml [model.by_convention]), and those
    # whose pages in HTML5 markup it cleans ([model.html5_by_convention])
    tables = load_config()["model"]

    def conventions_in(table: str) -> list[str]:
        return [convention for convention, name in tables[table].items()
                if packaged_model_path(name).resolve() == Path(path).resolve()]

    serves, serves_html5 = conventions_in("by_convention"), conventions_in("html5_by_convention")
    cv = {ds: {"pages": f.get("n_docs"), "word_f1": f.get("macro_f1"), "text_only": f.get("macro_text_only"),
               "markup_f1": f.get("macro_markup_f1")}
          for ds, f in (meta.get("cross_validation") or {}).items() if ds != "all"}
    return {
        "path": str(path),
        "default": Path(path).resolve() == DEFAULT_MODEL_PATH.resolve(),
        "hash": model.hash,
        "kind": ", ".join(kind),
        "serves": serves,
        "serves_html5_pages": serves_html5,
        "files": [f.name for f in files],
        "bytes": sum(f.stat().st_size for f in files),
        "training_documents": meta.get("training_documents"),
        "c1": meta.get("c1"),
        "c2": meta.get("c2"),
        "feature_version": meta.get("feature_version"),
        "cross_validation": cv,
        "cross_validation_unseen_sites": bool(meta.get("cross_validation_unseen_sites")),
        "note": meta.get("note"),  # how it was trained, when its sidecar says (a model without --cv figures)
    }


def cmd_models(args) -> int:
    from ..label.model import resolve_model_path
    from ..label.model_files import ModelError

    paths = [resolve_model_path(p) for p in args.models] if args.models else packaged_models()
    out = []
    for path in paths:
        if not path.exists():
            return _fail(EXIT_INPUT, f"model not found: {path}")
        try:
            out.append(describe_model(path))
        except (ModelError, OSError, ValueError) as exc:
            return _fail(EXIT_MODEL, f"{path}: {exc}")
    if args.json:
        print(json.dumps(out, indent=2))
        return EXIT_OK
    for d in out:
        print(f"{d['path']}{'  (default)' if d['default'] else ''}")
        print(f"  model {d['hash']}: {d['kind']}; {d['training_documents']} training pages, c1={d['c1']} "
              f"c2={d['c2']}, {d['bytes'] / 1e6:.1f} MB in {len(d['files'])} files")
        if d["serves"]:
            print(f"  cleans by --convention {' / '.join(d['serves'])} when no --model is given "
                  "([model.by_convention])")
        if d["serves_html5_pages"]:
            print(f"  cleans the pages in HTML5 markup (<!DOCTYPE html>) by --convention "
                  f"{' / '.join(d['serves_html5_pages'])} when no --model is given ([model.html5_by_convention])")
        if d["note"]:
            print(f"  {d['note']}")
        if d["cross_validation"]:
            how = "by document ("
            if d["cross_validation_unseen_sites"]:
                how = "with unseen sites (each fold's sites held out of its training; "
            print(f"  cross-validated {how}macro word F1 / text-only / markup F1):")
            for ds, f in d["cross_validation"].items():
                figures = " / ".join("–" if f[k] is None else f"{f[k]:.3f}"
                                     for k in ("word_f1", "text_only", "markup_f1"))
                print(f"    {ds:<16} {f['pages']:>5} pages  {figures}")
    return EXIT_OK
