"""`cleaner`: the command line.

    cleaner clean PATH...|- [--out DIR|FILE|-] [--model NAME|M] [--convention main|cleaneval|dragnet]
                 [--format cleaneval|txt|json|jsonl] [--overwrite | --skip-done]
    cleaner train DATA_DIR... --out MODEL [--cv]
    cleaner eval [DATA_DIR...] [--model M | --cv] [--report FILE]
    cleaner clean-warc WARC... --out DIR [--jobs N] [--skip-done]   (jobs/local_job.py: the WARC job, no Spark)

Exit codes (stable, for scripts):
    0  success
    1  finished, but some pages were rejected, truncated or not found (clean: the rest is cleaned)
       or a quality gate failed (eval)
    2  bad usage (unknown option, missing argument)
    3  an input is missing or unreadable (clean: nothing to clean at all)
    4  the model or the config is invalid
    5  the output is refused or fails (clean: an output exists without --overwrite, --out is a file)
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from .cli_common import (  # noqa: F401 (EXIT_*, DEFAULT_DATA: the command line's constants, read from here too)
    DEFAULT_DATA,
    EXIT_INPUT,
    EXIT_MODEL,
    EXIT_OK,
    EXIT_OUTPUT,
    EXIT_PARTIAL,
    EXIT_USAGE,
    UNSEEN_SITES_NOTE,
    clean_files,
    report_skipped,
)
from .cli_common import chosen_folds as _chosen_folds
from .cli_common import config_from_args as _config
from .cli_common import fail as _fail
from .cli_common import gold_pages_from_args as _pages
from .cli_common import page_types_from_args as _page_types
from .cli_common import sites_from_args as _sites

# Each module defines add_parser(subparsers) and sets `func` on its sub-parser. jobs.local_job is
# `clean-warc`, the WARC job on local processes: named, not imported, so that cleaner/ depends on no job
# code (a cleaner without jobs/ beside it just has no clean-warc).
EXTRA_COMMAND_MODULES = ("cleaner.inspect", "cleaner.annotate", "jobs.local_job")
# --model-kind choices (cleaner/systems; kept here so that --help needs no heavy import)
MODEL_KINDS = ("crf", "dragnet", "mss", "mss-baseline", "mss-hr", "fiasco", "everything", "largest-group", "all")


def _load(args):
    """The config and the model that cleans: --model, else the model of the convention chosen (--convention, else
    the config's; cleaner.model.model_for_convention), checked once so that no page fails on it (errors name the
    file). The config's [model] convention is the one the model tags with."""
    from .convention import ConventionError
    from .model import ModelError, model_for_convention

    config = _config(args)
    try:
        serving = model_for_convention(config, getattr(args, "model", None), getattr(args, "convention", None))
    except (ModelError, ConventionError) as exc:
        raise SystemExit(_fail(EXIT_MODEL, str(exc))) from exc
    return serving.config_for(config), serving


# -- clean --------------------------------------------------------------------------------


def cmd_clean(args) -> int:
    from .inputs import collect

    fmt = args.format
    to_stdout = args.out in (None, "-")
    if to_stdout and getattr(args, "model_kind", "crf") == "all":
        return _fail(EXIT_USAGE, "--model-kind all writes one folder per system: give --out DIR")
    pages, skipped = collect(args.paths)
    if to_stdout and fmt in ("cleaneval", "txt") and len(pages) > 1:
        return _fail(EXIT_USAGE, f"{len(pages)} pages to standard output would run together: give --out DIR "
                                 "(one file per page), or --format jsonl (one line per page)")
    if not pages:
        report_skipped(skipped, quiet=False)
        return _fail(EXIT_INPUT, "nothing to clean: no HTML file among " + ", ".join(args.paths))
    if getattr(args, "model_kind", "crf") != "crf":
        from .systems.cli import clean as clean_with_system

        return clean_with_system(args, pages, skipped, crf_clean=cmd_clean)
    from .api import clean_html

    config, serving = _load(args)
    model = serving.model
    as_json = fmt == "json"
    return clean_files(
        pages, skipped, args.out, fmt,
        lambda data: clean_html(data, model=model, config=config, keep_blocks=as_json, all_marginals=as_json),
        quiet=args.quiet, progress=args.progress, overwrite=args.overwrite,
        max_blocks=int(config["limits"]["max_blocks"]), config=config, skip_done=args.skip_done,
    )


# -- train / eval -------------------------------------------------------------------------


def _families(args):
    from .features import FAMILIES

    if not args.families:
        return None
    fams = tuple(f.strip() for f in args.families.split(",") if f.strip())
    unknown = [f for f in fams if f not in FAMILIES]
    if unknown:
        raise SystemExit(_fail(EXIT_USAGE, f"unknown feature families {unknown}; known: {', '.join(FAMILIES)}"))
    return fams


def _cv_summary(results, wcxb: dict[str, float] | None = None, page_types: dict[str, str] | None = None) -> dict:
    """Each set's figures (and "all"); with `wcxb` (cleaner.evaluate.wcxb_scores) its sets' WCXB metric
    (`macro_wcxb_f1`), with `page_types` the figures of each page type under its set's `page_types`."""
    from .evaluate import figures, page_type_figures

    # Six decimals: a figure stored at four and shown at three can round differently from the
    # report's (0.92754 -> 0.9275 -> 0.927 against 0.928).
    def entry(f) -> dict:
        out = {
            k: (round(v, 6) if isinstance(v, float) else v)
            for k, v in f.scores.items()
            if k.startswith(("macro_", "micro_", "n_docs"))
        } | {"block_accuracy": round(f.block_accuracy, 6), "content_accuracy": round(f.content_accuracy, 6)}
        if f.wcxb_f1 is not None:
            out["macro_wcxb_f1"] = round(f.wcxb_f1, 6)
        return out

    summary = {f.dataset: entry(f) for f in figures(results, wcxb=wcxb)}
    for f in page_type_figures(results, page_types or {}, wcxb):
        dataset, kind = f.dataset.split(": ", 1)
        summary[dataset].setdefault("page_types", {})[kind] = entry(f)
    return summary


def cmd_train(args) -> int:
    if getattr(args, "model_kind", "crf") != "crf":
        from .systems.cli import train as train_system

        return train_system(args, crf_train=cmd_train)
    from .data import manifest_hash
    from .train import cross_validate, model_meta, prepare, train_model, trainable, with_typer

    config = _config(args)
    families = _families(args)
    pages, folds = _pages(args)
    tc = config["train"]
    c1 = args.c1 if args.c1 is not None else float(tc["c1"])
    c2 = args.c2 if args.c2 is not None else float(tc["c2"])
    iters = args.max_iterations or int(tc["max_iterations"])
    conventions = _conventions(args, config)
    t0 = time.time()
    docs = prepare(pages, config, families, folds, processes=args.jobs, progress=not args.quiet)
    min_al = float(tc["min_alignment"])
    train_docs = trainable(docs, min_al)
    kept = {d.key for d in train_docs}
    empty_gold = [d.key for d in docs if d.key not in kept and (d.gold_words == 0 or not d.texts)]
    left_out = [(d.key, round(d.coverage, 3)) for d in docs if d.key not in kept and d.key not in empty_gold]
    print(f"prepared {len(docs)} pages; {len(train_docs)} used for training; left out: {len(left_out)} whose gold "
          f"aligns below {min_al} {left_out[:10]}{' ...' if len(left_out) > 10 else ''}, {len(empty_gold)} with an "
          f"empty gold or no text {empty_gold[:10]}", file=sys.stderr)
    if not train_docs:
        return _fail(EXIT_INPUT, "no page has a gold file that aligns with it")
    cv_figures = None
    grid_log = []
    grid_results: dict = {}
    if args.cv:
        best: tuple[float, float, float, dict] | None = None
        sites = _sites(args, pages)
        grid = [(a, b) for a in tc["c1_grid"] for b in tc["c2_grid"]] if args.c1 is None else [(c1, c2)]
        for a, b in grid:
            res = cross_validate(docs, config, c1=a, c2=b, max_iterations=iters, processes=args.jobs,
                                 progress=not args.quiet, conventions=conventions, sites=sites)
            summary = _cv_summary(res)
            grid_results[(a, b)] = res
            sets = [v["macro_f1"] for k, v in summary.items() if k != "all"]
            mean_f1 = sum(sets) / max(1, len(sets))
            grid_log.append({"c1": a, "c2": b, "mean_macro_f1": round(mean_f1, 4)})
            print(f"cv c1={a} c2={b}: mean macro F1 over sets {mean_f1:.4f}", file=sys.stderr)
            if best is None or mean_f1 > best[0]:
                best = (mean_f1, a, b, summary)
        assert best is not None  # the grid has at least one point
        _, c1, c2, cv_figures = best
        if args.report:
            _write_cv_report(grid_results[(c1, c2)], docs, Path(args.report), c1, c2, iters, grid_log, conventions,
                             unseen_sites=args.unseen_sites, config=config, page_types=_page_types(args))
    meta = model_meta(config, families, c1=c1, c2=c2, max_iterations=iters, manifest=manifest_hash(pages),
                      n_docs=len(train_docs), conventions=conventions,
                      extra={"cross_validation": cv_figures, "grid": grid_log or None, "left_out": left_out,
                             "left_out_empty_gold": empty_gold})
    model = train_model(train_docs, config, c1=c1, c2=c2, max_iterations=iters, conventions=conventions, meta=meta,
                        processes=args.jobs)
    path = with_typer(model, train_docs, config, conventions).save(args.out)
    size = len(model.data) + len(model.first_pass or b"")
    print(f"model written to {path} ({size / 1e6:.1f} MB, c1={c1}, c2={c2}, {time.time() - t0:.0f}s)",
          file=sys.stderr)
    return EXIT_OK


def _conventions(args, config):
    """`--conventions` (train, eval --cv): the config's annotation conventions, or None without the flag.
    Exits with a one-line error when the config names none or asks for stacking (never built nor measured
    together with conventions)."""
    if not getattr(args, "conventions", False):
        return None
    from .convention import ConventionError, Conventions
    from .stacking import StackingSettings

    try:
        conventions = Conventions.from_config(config)
    except ConventionError as exc:
        raise SystemExit(_fail(EXIT_MODEL, str(exc))) from None
    if StackingSettings.from_config(config) is not None:
        raise SystemExit(_fail(EXIT_USAGE, "a convention-aware model is one pass: add --config conf/onepass.toml "
                                           "(or an overlay with [stacking] enabled = false)"))
    return conventions


_ONLY_FOLDS = (" **Only folds {folds} were trained and scored** (`--folds`): compare these figures with the same "
               "folds of another run.")


def _passes(stacking) -> str:
    """How many CRF passes the report's models make (cleaner.stacking), for its header."""
    if stacking is None:
        return " One pass (no stacking)."
    windows = " / ".join(f"±{w}" for w in stacking.windows)
    reads = "" if stacking.first_pass_neighbours else " (reading each block's own attributes only)"
    return (f" Stacked: inside each fold a first pass{reads} labels the pages, and the CRF also reads its "
            f"decided labels and P(content) (windows {windows} blocks; "
            f"{stacking.inner_folds} inner folds).")


def _conventions_note(conventions, asked: str | None = None) -> str:
    """What a report says of how a convention-aware model's pages were scored."""
    head = (f" Convention-aware model (`cleaner train --conventions`, attributes conjoined: "
            f"{', '.join(conventions.attributes)}): ")
    if asked:
        return head + (f"every page is tagged with the `{asked}` convention (`--convention`), whatever its set's "
                       "gold keeps: the old sets' figures are not comparable with their own convention's.")
    return head + (f"every page is tagged with the annotation convention of its set's gold "
                   f"({', '.join(f'{k}: {v}' for k, v in sorted(conventions.by_dataset.items()))}; every other "
                   f"set: {conventions.default}), so each set's figures are comparable with models trained on it "
                   "alone.")


def _write_cv_report(results, docs, path: Path, c1, c2, iters, grid_log=None, conventions=None,
                     unseen_sites=False, *, config, folds: list[int] | None = None,
                     page_types: dict[str, str] | None = None) -> None:
    from .evaluate import (
        expected_f1_check,
        figures,
        markup_diagnosis,
        page_type_figures,
        summary_table,
        wcxb_scores,
        write_report,
    )
    from .stacking import StackingSettings

    wcxb = wcxb_scores(results, docs)
    figs = figures(results, wcxb=wcxb)
    untouched = [r for r in results if r.fold not in (None, 1)]
    conv = _conventions_note(conventions) if conventions else ""
    how = (
        f"6-fold cross-validation by document (folds.tsv: fold k of all sets held out together; a model is trained on "
        f"the other five folds of all sets), c1={c1}, c2={c2}, {iters} L-BFGS iterations, decision stage as configured."
        f"{_passes(StackingSettings.from_config(config))}"
        f"{conv}{UNSEEN_SITES_NOTE if unseen_sites else ''}"
        f"{_ONLY_FOLDS.format(folds=folds) if folds else ''}\n\n"
        "Design decisions (feature window, decision thresholds, regularisation) were made on fold 1 used as a "
        "validation fold, so the all-fold figures below are slightly optimistic for fold 1. The same figures on "
        "the other folds (0, 2-5) only, which no decision looked at:\n\n" + summary_table(figures(untouched, wcxb=wcxb))
    )
    if grid_log and len(grid_log) > 1:
        how += "\nRegularisation grid (mean macro F1 over sets):\n\n| c1 | c2 | mean F1 |\n|---|---|---|\n" + "\n".join(
            f"| {g['c1']} | {g['c2']} | {g['mean_macro_f1']} |" for g in grid_log) + "\n"
    write_report(figs, path, "Cross-validated evaluation of the CRF cleaner", how, markup_diagnosis(results, docs),
                 expected_f1_check(results), page_type_figures(results, page_types or {}, wcxb))
    print(f"report written to {path}", file=sys.stderr)


def cmd_eval(args) -> int:
    if args.folds and not args.cv:
        return _fail(EXIT_USAGE, "--folds chooses folds of a cross-validation: add --cv")
    if getattr(args, "model_kind", "crf") != "crf":
        from .systems.cli import evaluate as evaluate_systems

        return evaluate_systems(args)
    from .evaluate import (
        expected_f1_check,
        figures,
        markup_diagnosis,
        page_type_figures,
        summary_table,
        wcxb_scores,
        write_report,
    )
    from .train import cross_validate, predict, prepare

    config = _config(args)
    pages, folds = _pages(args)
    tc = config["train"]
    baseline = None
    if args.against:  # read first: a wrong file should not cost a cross-validation
        from .evaluate import read_page_table

        try:
            baseline = read_page_table(Path(args.against))
        except (OSError, ValueError) as exc:
            return _fail(EXIT_INPUT, str(exc))
    if args.conventions and not args.cv:
        return _fail(EXIT_USAGE, "--conventions trains convention-aware models: add --cv (a saved model already "
                                 "knows whether it is one)")
    if args.convention and args.cv:
        return _fail(EXIT_USAGE, "--convention scores a saved model (--model); with --cv, --conventions scores each "
                                 "page under its own set's convention")
    conventions = _conventions(args, config)
    if args.cv:
        families = _families(args)
        fold_ids = _chosen_folds(args.folds, pages, folds)
        docs = prepare(pages, config, families, folds, processes=args.jobs, progress=not args.quiet)
        c1 = args.c1 if args.c1 is not None else float(tc["c1"])
        c2 = args.c2 if args.c2 is not None else float(tc["c2"])
        iters = args.max_iterations or int(tc["max_iterations"])
        results = cross_validate(docs, config, c1=c1, c2=c2, max_iterations=iters, folds=fold_ids,
                                 processes=args.jobs, progress=not args.quiet, sites=_sites(args, pages),
                                 models_dir=args.fold_models, conventions=conventions)
        if args.report:
            _write_cv_report(results, docs, Path(args.report), c1, c2, iters, conventions=conventions,
                             unseen_sites=args.unseen_sites, config=config, folds=fold_ids,
                             page_types=_page_types(args))
            args.report = None
        how = ""
    else:
        _, serving = _load(args)
        model = serving.model
        config = model.feature_config(config)
        docs = prepare(pages, config, tuple(model.meta.get("families") or ()) or None, folds,
                       processes=args.jobs, progress=not args.quiet)
        from .decide import DecisionSettings

        # A convention-aware model cleans each set's pages by the convention of the set's gold (the model's
        # own by_dataset), as `eval --cv --conventions` scores them, unless --convention names one for all.
        asked = serving.convention if args.convention else None
        settings = DecisionSettings.from_config(config)
        conventions = model.conventions
        results = [predict(model, d, settings, asked or (conventions.of(d.dataset) if conventions else None))
                   for d in docs]
        how = (f"model {model.hash} applied to every page (no cross-validation: figures are optimistic for its "
               "training pages).")
        if conventions is not None:
            how += _conventions_note(conventions, asked)
        elif args.convention:  # no --model: the model [model.by_convention] names, trained without conventions
            how += (f" `--convention {serving.chosen}` is served by this model ([model.by_convention]), trained "
                    "without conventions: every page is cleaned as it was trained.")
        seen = _trained_on(model, pages)
        if seen:
            how += " " + seen
            print(f"cleaner: note: {seen.replace('**', '').replace('`', '')}", file=sys.stderr)
    wcxb = wcxb_scores(results, docs)
    page_types = _page_types(args)
    figs = figures(results, wcxb=wcxb)
    by_type = page_type_figures(results, page_types, wcxb)
    print(summary_table(figs))
    if by_type:
        print("By page type:\n\n" + summary_table(by_type))
    if args.against:
        from .evaluate import paired_comparison

        assert baseline is not None  # read above whenever --against is given
        print(f"Against {args.against}, page by page:\n\n" + paired_comparison(results, baseline))
    if args.pages:
        from .evaluate import write_page_table

        print(f"per-page figures written to {write_page_table(results, Path(args.pages), wcxb)}", file=sys.stderr)
    if args.report:
        path = write_report(figs, Path(args.report), "Evaluation", how, markup_diagnosis(results, docs),
                            expected_f1_check(results), by_type)
        print(f"report written to {path}", file=sys.stderr)
    if args.json:
        Path(args.json).write_text(json.dumps(_cv_summary(results, wcxb, page_types), indent=2) + "\n")
    return EXIT_OK


def _trained_on(model, pages) -> str:
    """A note when some pages scored are pages the model was trained on (known from its sidecar's
    training manifest, cleaner.data.training_pages): their figures are not what a new page gets."""
    import hashlib

    from .data import training_pages

    trained = training_pages(model.meta, DEFAULT_DATA)
    if not trained:
        return ""
    n = sum(hashlib.sha256(p.read_html()).digest() in trained for p in pages)
    if not n:
        return ""
    cv = {k: v for k, v in (model.meta.get("cross_validation") or {}).items() if k != "all"}
    figures = ", ".join(f"{k} {v['macro_f1']:.3f}" for k, v in cv.items() if "macro_f1" in v)
    return (f"**{n} of the {len(pages)} pages scored are pages this model was trained on** (its sidecar's training "
            f"manifest): their figures are optimistic. The model's cross-validated word F1 (`cleaner models`), "
            f"what a page it never saw gets: {figures or 'not recorded'}.")


# -- models -------------------------------------------------------------------------------


def packaged_models() -> list[Path]:
    """The models shipped in the package (cleaner/models), the default first."""
    from .model import COMPANIONS, DEFAULT_MODEL_PATH

    companions = tuple(suffix for _, suffix, _, _ in COMPANIONS)
    found = sorted(p for p in DEFAULT_MODEL_PATH.parent.glob("*.crfsuite") if not p.name.endswith(companions))
    return sorted(found, key=lambda p: p != DEFAULT_MODEL_PATH)


def describe_model(path: Path) -> dict:
    """What a user needs to pick a model: what it is, its files, and its cross-validated figures."""
    from .config import load_config
    from .model import DEFAULT_MODEL_PATH, load_model, model_files
    from .packaged import packaged_model_path

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
    # the conventions it cleans by when no --model is given (conf/default.toml [model.by_convention])
    serves = [convention for convention, name in load_config()["model"]["by_convention"].items()
              if packaged_model_path(name).resolve() == Path(path).resolve()]
    cv = {ds: {"pages": f.get("n_docs"), "word_f1": f.get("macro_f1"), "text_only": f.get("macro_text_only"),
               "markup_f1": f.get("macro_markup_f1")}
          for ds, f in (meta.get("cross_validation") or {}).items() if ds != "all"}
    return {
        "path": str(path),
        "default": Path(path).resolve() == DEFAULT_MODEL_PATH.resolve(),
        "hash": model.hash,
        "kind": ", ".join(kind),
        "serves": serves,
        "files": [f.name for f in files],
        "bytes": sum(f.stat().st_size for f in files),
        "training_documents": meta.get("training_documents"),
        "c1": meta.get("c1"),
        "c2": meta.get("c2"),
        "feature_version": meta.get("feature_version"),
        "cross_validation": cv,
        "note": meta.get("note"),  # how it was trained, when its sidecar says (a model without --cv figures)
    }


def cmd_models(args) -> int:
    from .model import ModelError, resolve_model_path

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
        if d["note"]:
            print(f"  {d['note']}")
        if d["cross_validation"]:
            print("  cross-validated by document (macro word F1 / text-only / markup F1):")
            for ds, f in d["cross_validation"].items():
                figures = " / ".join("–" if f[k] is None else f"{f[k]:.3f}"
                                     for k in ("word_f1", "text_only", "markup_f1"))
                print(f"    {ds:<16} {f['pages']:>5} pages  {figures}")
    return EXIT_OK


# -- main ---------------------------------------------------------------------------------


def _version_text() -> str:
    import cleaner

    return f"webcleaner {cleaner.__version__} ({cleaner.NATIVE_STATUS})"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="cleaner",
        description="Clean web pages into CleanEval text (<h>/<p>/<l> segments) with a CRF block labeller; "
        "train and evaluate the model.",
        epilog="Exit codes: 0 ok, 1 some pages rejected, truncated or missing (clean), 2 bad usage, 3 input missing, "
        "4 invalid model/config, 5 output refused (clean).",
    )
    parser.add_argument("--version", action="version", version=_version_text(),
                        help="the package version and whether its compiled stages run (scripts/build_native.py)")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("clean", help="clean HTML files into CleanEval text, plain text or JSON",
                       description="Clean each HTML file given, every file that looks like HTML by its content "
                       "under a folder given (other files are listed as skipped, with why), or standard input (-). "
                       "Each page's output keeps its path relative to the inputs' common folder: "
                       "OUT/sub/a.txt for DIR/sub/a.html; existing outputs are never replaced without --overwrite. "
                       "Rejected pages get an empty file and a message on stderr; a page with more than "
                       "[limits] max_blocks blocks is cleaned up to that many, with a warning (exit 1).",
                       epilog="Exit codes: 0 every page cleaned whole; 1 some pages rejected, truncated or not "
                       "found (the others are cleaned); 2 bad usage; 3 nothing to clean (no input found); "
                       "4 invalid model or config; 5 output refused or failed (an output exists, --out is a file).")
    p.add_argument("paths", nargs="+", metavar="PATH", help="HTML files, folders, or - for standard input")
    p.add_argument("--out", metavar="DIR",
                   help="output folder (created), one file per page; with --format jsonl a file; - or none: "
                   "standard output (one page, or --format json/jsonl: one line per page)")
    p.add_argument("--format", choices=("cleaneval", "txt", "json", "jsonl"), default="cleaneval",
                   help="cleaneval: text with <h>/<p>/<l> segment markers (default); txt: plain text, one segment "
                   "a line; json: one document per page with the blocks, labels and probabilities; jsonl: one "
                   "line per page (status, reason, truncated, stats, text, cleaneval, the corpus columns) in one file")
    done = p.add_mutually_exclusive_group()
    done.add_argument("--overwrite", action="store_true", help="replace outputs that exist (refused without it)")
    done.add_argument("--skip-done", action="store_true",
                      help="resume an interrupted run into --out DIR: a page whose output file exists is not cleaned "
                           "again (an output file appears only once it is whole)")
    p.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="show a progress bar on stderr (default: only when stderr is a terminal)")
    p.add_argument("--model", metavar="M", help="model: a packaged model's name (default, cleaneval-2012: "
                   "`cleaner models`) or a model file (default: the packaged model of the convention, "
                   "[model.by_convention]: default for main, cleaneval-2012 for cleaneval and dragnet)")
    p.add_argument("--config", metavar="TOML", help="config overlay (default: conf/default.toml)")
    p.add_argument("--convention", metavar="NAME",
                   help="what to keep (docs/conventions.md): main (the page's main content: on an article page the "
                   "article only, without comments; every post of a forum thread, a listing's items), cleaneval "
                   "(everything a reader takes for the page's text) or dragnet (the article and its comments); "
                   "default: [model] convention (main). Without --model it picks the model too (`cleaner models`); "
                   "a model given by --model that was trained without conventions (cleaneval-2012) refuses it")
    p.add_argument("--model-kind", choices=MODEL_KINDS, default="crf",
                   help="labeller (cleaner/systems): a non-CRF kind takes its system file as --model (none for "
                   "training-free kinds); with `all`, --model is a directory from `train --model-kind all`")
    p.add_argument("-q", "--quiet", action="store_true", help="no summary, no per-page messages (pages not "
                   "cleaned or truncated are still reported)")
    p.set_defaults(func=cmd_clean)

    def data_args(q, what):
        q.add_argument("data_dirs", nargs="*", metavar="DATA_DIR",
                       help=f"{what}: a data root (../shared/data), one data set (html/ + gold/), or a folder "
                       "of NAME.html pages with NAME.txt gold beside them (default: ../shared/data)")
        q.add_argument("--datasets", nargs="+", metavar="NAME", help="only these data sets of a data root")
        q.add_argument("--config", metavar="TOML", help="config overlay")
        q.add_argument("--limit", type=int, help="use only the first N pages (quick runs)")
        q.add_argument("--jobs", type=int, default=2, help="worker processes (default 2)")
        q.add_argument("--c1", type=float, help="L1 regularisation (default from config)")
        q.add_argument("--c2", type=float, help="L2 regularisation (default from config: 8, chosen for the ~2,000 "
                       "shared pages; CRFsuite does not scale it by the number of pages, so a model of a few dozen "
                       "pages needs a smaller one, e.g. 0.05)")
        q.add_argument("--max-iterations", type=int, help="L-BFGS iterations (default from config)")
        q.add_argument("--families", help="comma-separated feature families (ablation); default all")
        q.add_argument("--unseen-sites", action="store_true",
                       help="with --cv: train each fold's model without the pages of any site that occurs in the "
                       "fold, in any set (sites from the data root's sites.tsv, else inferred from the HTML), so "
                       "every held-out page is from an unseen site")
        q.add_argument("-q", "--quiet", action="store_true")

    p = sub.add_parser("train", help="train a CRF model from pages with gold text",
                       description="Prepare the pages (decode, segment, features, align gold), leave out pages "
                       "whose gold aligns badly, and train a CRF with L-BFGS. With --cv, c1/c2 are chosen by "
                       "k-fold cross-validation by document over the grid in the config, and the figures are "
                       "stored in the model's sidecar. With [stacking] in the config, the CRF is two: a first pass "
                       "and a CRF that also reads its labelling, trained on first-pass labellings of held-out inner "
                       "folds ([stacking] inner_folds + 2 trainings). Then the marker typer ([markers] in the config) "
                       "is trained on the CRF's labelling of the pages whose gold marks its segments (<h>/<p>/<l>).")
    data_args(p, "training data")
    p.add_argument("--out", required=True, metavar="MODEL",
                   help="model path (writes MODEL, MODEL.json and, with a marker typer, "
                   "the MODEL stem + .markers.crfsuite, with stacking the MODEL stem + .pass1.crfsuite)")
    p.add_argument("--cv", action="store_true", help="choose c1/c2 by cross-validation (the grid in the config, "
                   "or only --c1/--c2 when given: then the CV just measures them)")
    p.add_argument("--report", metavar="FILE.md", help="with --cv: write the cross-validation report (and FILE.png)")
    p.add_argument("--conventions", action="store_true",
                   help="train a convention-aware model: each page is given the annotation convention of its "
                   "set's gold ([train] conventions, convention_of; docs/conventions.md), and the convention is "
                   "chosen when cleaning (--convention); --cv then scores each page under its own set's convention")
    p.add_argument("--model-kind", choices=MODEL_KINDS, default="crf",
                   help="labeller to train (cleaner/systems; a non-CRF system is one .npz file); with `all`, "
                   "--out is a directory that gets <kind>.npz for each system and crf.crfsuite")
    p.set_defaults(func=cmd_train)

    p = sub.add_parser("eval", help="score a model, or cross-validate, with the project's scorer",
                       description="Score cleaned output against gold text (word P/R/F1, text-only, markup "
                       "P/R/F1, macro and micro), block accuracy and a confusion matrix per data set. With --cv, "
                       "train one model per fold (folds.tsv) and score the held-out pages.")
    data_args(p, "evaluation data")
    p.add_argument("--model", metavar="M", help="model to evaluate (default: the packaged model); a convention-aware "
                   "model cleans each set's pages by the convention of its gold, as `--cv --conventions` does")
    p.add_argument("--cv", action="store_true", help="k-fold cross-validation by document instead of --model")
    p.add_argument("--report", metavar="FILE.md", help="write a Markdown report (and FILE.png)")
    p.add_argument("--folds", metavar="K,K", help="with --cv: train and score only these folds (the shared "
                   "data's folds.tsv numbers them 0-5), a quicker screen of a change: compare it with the same "
                   "folds of a full run, not with the all-fold figures")
    p.add_argument("--fold-models", metavar="DIR", help="with --cv: keep each fold's model as DIR/fold-<k>.crfsuite "
                   "(to inspect it, or to score the held-out pages again with other decision settings)")
    p.add_argument("--conventions", action="store_true",
                   help="with --cv: train convention-aware models (as `train --conventions`) and score each page "
                   "under its own set's convention")
    p.add_argument("--convention", metavar="NAME",
                   help="with --model, a convention-aware model: score every page under this convention (main, "
                   "cleaneval, dragnet) instead of each set's own (chaos, big5, fundus, wcxb and your own sets: "
                   "main; CleanEval's sets: cleaneval; Dragnet: dragnet); without --model, score the model "
                   "[model.by_convention] names for it")
    p.add_argument("--json", metavar="FILE", help="write the figures as JSON")
    p.add_argument("--pages", metavar="FILE.tsv", help="write each page's figures (word P/R/F1, text-only, markup F1, "
                   "expected F1, fold), to compare another run with this one page by page (--against); the CRF's "
                   "or one --model-kind's")
    p.add_argument("--against", metavar="FILE.tsv", help="compare this run with another's --pages table on the pages "
                   "both scored: per set, the difference of macro F1 with its 95 %% paired bootstrap interval")
    p.add_argument("--model-kind", choices=MODEL_KINDS, default="crf",
                   help="labeller to evaluate (cleaner/systems); `all --cv` compares every system on the same folds "
                   "and writes docs/systems.md unless --report is given")
    p.add_argument("--results", metavar="FILE.json",
                   help="with --model-kind: per-page results of each system are kept here; systems already in "
                   "it are not evaluated again")
    p.set_defaults(func=cmd_eval)

    p = sub.add_parser("models", help="describe the packaged models (or the models given): what each is and "
                       "how it scored", description="For each model: its hash, what it is (one pass or stacked, "
                       "annotation conventions, marker typer), its files, and the cross-validated figures stored "
                       "in its sidecar by `cleaner train --cv`, to choose a --model with.")
    p.add_argument("models", nargs="*", metavar="MODEL", help="model files (default: every packaged model)")
    p.add_argument("--json", action="store_true", help="print JSON instead of text")
    p.set_defaults(func=cmd_models)

    # Commands that live in their own modules register themselves here.
    import importlib

    for module in EXTRA_COMMAND_MODULES:
        try:
            importlib.import_module(module).add_parser(sub)
        except ModuleNotFoundError as exc:
            if exc.name not in (module, module.partition(".")[0]):
                raise
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except SystemExit as exc:
        return int(exc.code) if isinstance(exc.code, int) else EXIT_USAGE
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
