"""`cleaner train` and `cleaner eval`: train a CRF model, score one or cross-validate, and write their reports
(a seed system's `--model-kind` goes to cleaner.tools.cli_systems). The parser that sets them up is
cleaner.tools.cli.build_parser."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from .cli_common import DEFAULT_DATA, EXIT_INPUT, EXIT_MODEL, EXIT_OK, EXIT_USAGE, UNSEEN_SITES_NOTE
from .cli_common import chosen_folds as _chosen_folds
from .cli_common import config_from_args as _config
from .cli_common import fail as _fail
from .cli_common import gold_pages_from_args as _pages
from .cli_common import page_types_from_args as _page_types
from .cli_common import serving_model_from_args as _load
from .cli_common import sites_from_args as _sites
from .cli_common import snippets_from_args as _snippets


def _families(args):
    from ..page.features import FAMILIES

    if not args.families:
        return None
    fams = tuple(f.strip() for f in args.families.split(",") if f.strip())
    unknown = [f for f in fams if f not in FAMILIES]
    if unknown:
        raise SystemExit(_fail(EXIT_USAGE, f"unknown feature families {unknown}; known: {', '.join(FAMILIES)}"))
    return fams


def _cv_summary(results, wcxb: dict[str, float] | None = None, page_types: dict[str, str] | None = None,
                snippets: dict | None = None) -> dict:
    """Each set's figures (and "all"); with `wcxb` (cleaner.learn.evaluate.wcxb_scores) its sets' WCXB metric
    (`macro_wcxb_f1`), with `snippets` (snippet_scores) the snippets of the pages that list them (`snippet_f1`,
    `snippet_accuracy` and their counts), with `page_types` the figures of each page type under its set's
    `page_types`."""
    from ..learn.evaluate import figures, page_type_figures

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
        if f.snippets is not None:
            c = f.snippets
            out |= {"snippet_f1": round(c.f1, 6), "snippet_accuracy": round(c.accuracy, 6),
                    "snippets": {"found": c.found, "missed": c.missed, "kept": c.kept, "left_out": c.left_out}}
        return out

    summary = {f.dataset: entry(f) for f in figures(results, wcxb=wcxb, snippets=snippets)}
    for f in page_type_figures(results, page_types or {}, wcxb, snippets):
        dataset, kind = f.dataset.split(": ", 1)
        summary[dataset].setdefault("page_types", {})[kind] = entry(f)
    return summary


def cmd_train(args) -> int:
    if getattr(args, "model_kind", "crf") != "crf":
        from .cli_systems import train as train_system

        return train_system(args, crf_train=cmd_train)
    from ..gold.data import manifest_hash
    from ..learn.cv import trainable
    from ..learn.train import cross_validate, model_meta, prepare, train_model, with_typer

    if args.pages and not args.cv:
        return _fail(EXIT_USAGE, "--pages writes the cross-validation's per-page figures: add --cv")
    if args.fold_models and not (args.cv and args.c1 is not None):
        # (one directory holds one point's fold models: a grid's points would overwrite each other's)
        return _fail(EXIT_USAGE, "--fold-models keeps the cross-validation's fold models of one c1/c2 point: add "
                                 "--cv --c1 C1 --c2 C2")
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
                                 progress=not args.quiet, conventions=conventions, sites=sites,
                                 models_dir=args.fold_models, families=families)
            summary = _cv_summary(res)
            grid_results[(a, b)] = res
            sets = [v["macro_f1"] for k, v in summary.items() if k != "all"]
            mean_f1 = sum(sets) / max(1, len(sets))
            grid_log.append({"c1": a, "c2": b, "mean_macro_f1": round(mean_f1, 4)})
            print(f"cv c1={a} c2={b}: mean macro F1 over sets {mean_f1:.4f}", file=sys.stderr)
            if best is None or mean_f1 > best[0]:
                best = (mean_f1, a, b, summary)
        assert best is not None  # the grid has at least one point
        _, c1, c2, _ = best
        # The chosen point's figures as `eval --json` gives them (the WCXB metric, the page types), stored with
        # the model; its per-page table (--pages) is what scripts/peers.py --project-pages compares the peers with.
        from ..learn.evaluate import snippet_scores, wcxb_scores, write_page_table

        chosen = grid_results[(c1, c2)]
        page_types = _page_types(args)
        wcxb = wcxb_scores(chosen, docs)
        snippets = snippet_scores(chosen, _snippets(args))
        cv_figures = _cv_summary(chosen, wcxb, page_types, snippets)
        if args.pages:
            print(f"per-page figures written to {write_page_table(chosen, Path(args.pages), wcxb)}", file=sys.stderr)
        if args.report:
            _write_cv_report(chosen, docs, Path(args.report), c1, c2, iters, grid_log, conventions,
                             unseen_sites=args.unseen_sites, config=config, page_types=page_types, snippets=snippets)
    meta = model_meta(config, families, c1=c1, c2=c2, max_iterations=iters, manifest=manifest_hash(pages),
                      n_docs=len(train_docs), conventions=conventions,
                      extra={"cross_validation": cv_figures,
                             "cross_validation_unseen_sites": bool(args.unseen_sites) if args.cv else None,
                             "grid": grid_log or None, "left_out": left_out,
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
    from ..label.convention import ConventionError, Conventions
    from ..label.stacking import StackingSettings

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
    """How many CRF passes the report's models make (cleaner.label.stacking), for its header."""
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
                     page_types: dict[str, str] | None = None,
                     train_without: tuple[str, int] | None = None, snippets: dict | None = None) -> None:
    from ..label.stacking import StackingSettings
    from ..learn.evaluate import (
        expected_f1_check,
        figures,
        markup_diagnosis,
        page_type_figures,
        summary_table,
        wcxb_scores,
        write_report,
    )

    wcxb = wcxb_scores(results, docs)
    figs = figures(results, wcxb=wcxb, snippets=snippets)
    untouched = [r for r in results if r.fold not in (None, 1)]
    untouched_figs = figures(untouched, wcxb=wcxb, snippets=snippets)
    conv = _conventions_note(conventions) if conventions else ""
    how = (
        f"6-fold cross-validation by document (folds.tsv: fold k of all sets held out together; a model is trained on "
        f"the other five folds of all sets), c1={c1}, c2={c2}, {iters} L-BFGS iterations, decision stage as configured."
        f"{_passes(StackingSettings.from_config(config))}"
        f"{conv}{UNSEEN_SITES_NOTE if unseen_sites else ''}"
        f"{_ONLY_FOLDS.format(folds=folds) if folds else ''}"
        + (f" **{train_without[1]} pages ({train_without[0]}) trained no fold's model** (`--train-without`): they "
           "are held out and scored as the others." if train_without and train_without[1] else "")
        + "\n\n"
        "Design decisions (feature window, decision thresholds, regularisation) were made on fold 1 used as a "
        "validation fold, so the all-fold figures below are slightly optimistic for fold 1. The same figures on "
        "the other folds (0, 2-5) only, which no decision looked at:\n\n" + summary_table(untouched_figs)
    )
    if grid_log and len(grid_log) > 1:
        how += "\nRegularisation grid (mean macro F1 over sets):\n\n| c1 | c2 | mean F1 |\n|---|---|---|\n" + "\n".join(
            f"| {g['c1']} | {g['c2']} | {g['mean_macro_f1']} |" for g in grid_log) + "\n"
    write_report(figs, path, "Cross-validated evaluation of the CRF cleaner", how, markup_diagnosis(results, docs),
                 expected_f1_check(results), page_type_figures(results, page_types or {}, wcxb, snippets))
    print(f"report written to {path}", file=sys.stderr)


def cmd_eval(args) -> int:
    if args.folds and not args.cv:
        return _fail(EXIT_USAGE, "--folds chooses folds of a cross-validation: add --cv")
    if getattr(args, "model_kind", "crf") != "crf":
        from .cli_systems import evaluate as evaluate_systems

        return evaluate_systems(args)
    from ..label.model_files import ModelError
    from ..learn.evaluate import (
        expected_f1_check,
        figures,
        markup_diagnosis,
        page_type_figures,
        snippet_scores,
        summary_table,
        wcxb_scores,
        write_report,
    )
    from ..learn.train import FoldModelError, cross_validate, predict, prepare

    config = _config(args)
    pages, folds = _pages(args)
    tc = config["train"]
    baseline = None
    if args.against:  # read first: a wrong file should not cost a cross-validation
        from ..learn.evaluate import read_page_table

        try:
            baseline = read_page_table(Path(args.against))
        except (OSError, ValueError) as exc:
            return _fail(EXIT_INPUT, str(exc))
    leave_out: frozenset[str] = frozenset()
    if args.train_without:
        if not args.cv:
            return _fail(EXIT_USAGE, "--train-without leaves pages out of a cross-validation's training: add --cv")
        try:
            leave_out = frozenset(line.strip() for line in Path(args.train_without).read_text().splitlines()
                                  if line.strip() and not line.startswith("#"))
        except OSError as exc:
            return _fail(EXIT_INPUT, str(exc))
        unknown = leave_out - {p.key for p in pages}
        if unknown:
            return _fail(EXIT_INPUT, f"--train-without names {len(unknown)} pages not among those scored, e.g. "
                                     f"{sorted(unknown)[0]}")
    if args.conventions and not args.cv:
        return _fail(EXIT_USAGE, "--conventions trains convention-aware models: add --cv (a saved model already "
                                 "knows whether it is one)")
    if args.convention and args.cv:
        return _fail(EXIT_USAGE, "--convention scores a saved model (--model); with --cv, --conventions scores each "
                                 "page under its own set's convention")
    if args.rescore and not (args.cv and args.fold_models):
        return _fail(EXIT_USAGE, "--rescore scores the held-out pages with the fold models of an earlier run: add "
                                 "--cv --fold-models DIR")
    conventions = _conventions(args, config)
    if args.cv:
        families = _families(args)
        fold_ids = _chosen_folds(args.folds, pages, folds)
        docs = prepare(pages, config, families, folds, processes=args.jobs, progress=not args.quiet)
        c1 = args.c1 if args.c1 is not None else float(tc["c1"])
        c2 = args.c2 if args.c2 is not None else float(tc["c2"])
        iters = args.max_iterations or int(tc["max_iterations"])
        try:
            results = cross_validate(docs, config, c1=c1, c2=c2, max_iterations=iters, folds=fold_ids,
                                     processes=args.jobs, progress=not args.quiet, sites=_sites(args, pages),
                                     models_dir=args.fold_models, conventions=conventions, leave_out=leave_out,
                                     families=families, rescore=args.rescore)
        except (FoldModelError, ModelError) as exc:  # (a fold model to rescore with: missing, unreadable, other)
            return _fail(EXIT_INPUT, str(exc))
        if args.report:
            _write_cv_report(results, docs, Path(args.report), c1, c2, iters, conventions=conventions,
                             unseen_sites=args.unseen_sites, config=config, folds=fold_ids,
                             page_types=_page_types(args), train_without=(args.train_without, len(leave_out)),
                             snippets=snippet_scores(results, _snippets(args)))
            args.report = None
        how = ""
    else:
        _, serving = _load(args)
        from ..label.decide import DecisionSettings

        results, docs, notes = [], [], []
        # Each page is scored by the model that cleans it (ServingModel.for_page: the HTML5 pages' own, where the
        # convention has one), with that model's features.
        for served, group in _pages_by_model(serving, pages):
            model = served.model
            model_config = model.feature_config(config)
            group_docs = prepare(group, model_config, tuple(model.meta.get("families") or ()) or None, folds,
                                 processes=args.jobs, progress=not args.quiet)
            # A convention-aware model cleans each set's pages by the convention of the set's gold (the model's
            # own by_dataset), as `eval --cv --conventions` scores them, unless --convention names one for all.
            asked = served.convention if args.convention else None
            settings = DecisionSettings.from_config(model_config)
            conventions = model.conventions
            results += [predict(model, d, settings, asked or (conventions.of(d.dataset) if conventions else None))
                        for d in group_docs]
            docs += group_docs
            how = (f"model {model.hash} applied to every page{_html5_share(serving, served, group)} (no "
                   "cross-validation: figures are optimistic for its training pages).")
            if conventions is not None:
                how += _conventions_note(conventions, asked)
            elif args.convention:  # no --model: the model [model.by_convention] names, trained without conventions
                how += (f" `--convention {serving.chosen}` is served by this model ([model.by_convention]), "
                        "trained without conventions: every page is cleaned as it was trained.")
            seen = _trained_on(model, group)
            if seen:
                how += " " + seen
                print(f"cleaner: note: {seen.replace('**', '').replace('`', '')}", file=sys.stderr)
            notes.append(how)
        how = " ".join(notes)
    wcxb = wcxb_scores(results, docs)
    snippets = snippet_scores(results, _snippets(args))
    page_types = _page_types(args)
    figs = figures(results, wcxb=wcxb, snippets=snippets)
    by_type = page_type_figures(results, page_types, wcxb, snippets)
    print(summary_table(figs))
    if by_type:
        print("By page type:\n\n" + summary_table(by_type))
    if args.against:
        from ..learn.evaluate import paired_comparison

        assert baseline is not None  # read above whenever --against is given
        print(f"Against {args.against}, page by page:\n\n" + paired_comparison(results, baseline))
    if args.pages:
        from ..learn.evaluate import write_page_table

        print(f"per-page figures written to {write_page_table(results, Path(args.pages), wcxb)}", file=sys.stderr)
    if args.report:
        path = write_report(figs, Path(args.report), "Evaluation", how, markup_diagnosis(results, docs),
                            expected_f1_check(results), by_type)
        print(f"report written to {path}", file=sys.stderr)
    if args.json:
        Path(args.json).write_text(json.dumps(_cv_summary(results, wcxb, page_types, snippets), indent=2) + "\n")
    return EXIT_OK


def _pages_by_model(serving, pages) -> list[tuple]:
    """[(the model, the pages it cleans)], each group in the order of `pages`: the choice cleaning makes
    (ServingModel.for_page)."""
    if serving.html5 is None:
        return [(serving, pages)]
    chosen = [serving.for_page(p.read_html()) for p in pages]
    return [(served, group) for served in serving.served
            if (group := [p for p, model in zip(pages, chosen) if model is served])]


def _html5_share(serving, served, group) -> str:
    """What the report says of which pages a model cleaned, when two share them."""
    if serving.html5 is None:
        return ""
    which = "in HTML5 markup" if served is serving.html5 else "not in HTML5 markup"
    return (f" {which} ({len(group)} pages; `--convention {serving.chosen}` without --model: "
            "[model.html5_by_convention])")


def _trained_on(model, pages) -> str:
    """A note when some pages scored are pages the model was trained on (known from its sidecar's
    training manifest, cleaner.gold.data.training_pages): their figures are not what a new page gets.
    When the manifest is not that of the shared data as it is now (the data grew since the model was
    trained), which shared pages it was trained on is unknown, and the note says so for the shared pages
    scored."""
    import hashlib

    from ..gold.data import training_pages

    trained = training_pages(model.meta, DEFAULT_DATA)
    if trained is None:
        if not model.meta.get("training_manifest_hash"):
            return ""
        shared = sum(Path(p.html_path).resolve().is_relative_to(DEFAULT_DATA.resolve()) for p in pages)
        if not shared:
            return ""
        return (f"**Which of the {len(pages)} pages scored this model was trained on is not known**: {shared} are "
                f"shared pages, and its sidecar's training manifest is not that of `{DEFAULT_DATA}` as it is now. "
                f"If it was trained on them, their figures are optimistic. {cross_validated_figures(model.meta)}")
    n = sum(hashlib.sha256(p.read_html()).digest() in trained for p in pages)
    if not n:
        return ""
    return (f"**{n} of the {len(pages)} pages scored are pages this model was trained on** (its sidecar's training "
            f"manifest): their figures are optimistic. {cross_validated_figures(model.meta)}")


def cross_validated_figures(meta: dict) -> str:
    """One sentence: a model's cross-validated word F1 per set, what a page it never saw gets, from its sidecar's
    `cross_validation` (`cleaner train --cv`); else where the figures of its recipe are (a `docs/eval*.md` report its
    sidecar's note names) and the command that measures them."""
    import re

    cv = {k: v for k, v in (meta.get("cross_validation") or {}).items() if k != "all" and "macro_f1" in v}
    if cv:
        figures = ", ".join(f"{k} {v['macro_f1']:.3f}" for k, v in cv.items())
        return (f"The model's cross-validated word F1 (its sidecar; `cleaner models`), what a page it never saw "
                f"gets: {figures}.")
    reports = re.findall(r"docs/eval[\w.-]*\.md", meta.get("note") or "")
    where = (f"the cross-validation of the recipe it was trained by is {reports[0]} (named by its sidecar's note; "
             "`cleaner models` prints it)" if reports else "`cleaner models` prints how it was trained")
    return (f"Its sidecar records no cross-validated figure (a model trained without `--cv`): {where}, and "
            "`cleaner eval --cv` with the settings it was trained by measures what a page it never saw gets.")
