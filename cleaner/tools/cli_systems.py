"""`--model-kind` for `cleaner train | eval | clean`: the seed systems on the command line.

The CRF's commands (`cleaner.tools.cli_clean`, `cleaner.tools.cli_train_eval`) hand a command over to these functions
when `--model-kind` is not `crf`, with their own command for the CRF (`crf_train`, `crf_clean`: `all` runs the CRF too),
so this module never imports them; what both use is in `cleaner.tools.cli_common`.
With `all`, `train` writes OUT/<kind>.npz for every system (and OUT/crf.crfsuite),
`clean` writes OUT/<kind>/ from the systems in the directory --model (training-free kinds
need no file), and `eval --cv` cross-validates every system and writes the comparison
table (default docs/systems.md).
"""

from __future__ import annotations

import copy
import json
import os
import statistics
import sys
import time
from pathlib import Path

from ..label.systems import KINDS, SystemError_, is_training_free, load_system, make_system
from . import cli_common as common

ROOT = Path(__file__).resolve().parent.parent.parent
DEFAULT_REPORT = ROOT / "docs" / "systems.md"
CRF_FILE = "crf.crfsuite"


def _kinds(kind: str) -> list[str]:
    return list(KINDS) if kind == "all" else [kind]


def _system_path(model: str | None, kind: str, many: bool) -> str | None:
    """The system file of `kind`: --model itself, or DIR/<kind>.npz with --model-kind all."""
    if model is None:
        return None
    if many or Path(model).is_dir():
        p = Path(model) / f"{kind}.npz"
        return str(p) if p.exists() else None
    return model


# -- train ------------------------------------------------------------------------------------


def train(args, crf_train) -> int:
    """`cleaner train --model-kind KIND`; `crf_train(args)` is the CRF's `cleaner train`."""
    from ..gold.data import manifest_hash
    from ..learn.cv import trainable
    from ..learn.systems_evaluate import prepare_docs

    config = common.config_from_args(args)
    kinds = _kinds(args.model_kind)
    many = args.model_kind == "all"
    out = Path(args.out)
    pages, folds = common.gold_pages_from_args(args)
    docs = None
    t0 = time.time()
    for kind in kinds:
        if kind == "crf":
            sub = copy.copy(args)
            sub.model_kind, sub.out = "crf", str(out / CRF_FILE)
            code = crf_train(sub)
            if code != common.EXIT_OK:
                return code
            continue
        system = make_system(kind)
        if system.trainable:
            if docs is None:
                docs = prepare_docs(pages, config, folds, progress=not args.quiet)
            train_docs = trainable(docs, float(config["train"]["min_alignment"]))
            if not train_docs:
                return common.fail(common.EXIT_INPUT, "no page has a gold file that aligns with it")
            system.fit([d.page for d in train_docs], [d.labels for d in train_docs])
        path = system.save(out / f"{kind}.npz" if many else out)
        info = getattr(system, "info", None)
        print(f"{kind} system written to {path}" + (f" ({json.dumps(info)[:200]})" if info else "")
              + (f", trained on {len(train_docs)} pages of {manifest_hash(pages)}" if system.trainable else
                 " (training-free)"), file=sys.stderr)
    print(f"done in {time.time() - t0:.0f}s", file=sys.stderr)
    return common.EXIT_OK


# -- clean ------------------------------------------------------------------------------------


def clean(args, pages, skipped, crf_clean) -> int:
    """`cleaner clean --model-kind KIND`: `pages` and `skipped` as cleaner.tools.inputs.collect found them;
    `crf_clean(args)` is the CRF's `cleaner clean`."""
    from ..learn.systems_clean import clean_page

    config = common.config_from_args(args)
    kinds = _kinds(args.model_kind)
    many = args.model_kind == "all"
    if many and "-" in args.paths:
        return common.fail(common.EXIT_USAGE, "--model-kind all reads each input once per system: standard input "
                                         "(-) can be read only once, save it to a file")
    worst = common.EXIT_OK
    for kind in kinds:
        out = str(Path(args.out) / kind) if many else args.out
        if kind == "crf":
            sub = copy.copy(args)
            sub.model_kind, sub.out = "crf", out
            if many:
                sub.model = _crf_path(args.model)
            code = crf_clean(sub)
            worst = max(worst, code)
            continue
        try:
            system = load_system(_system_path(args.model, kind, many), kind)
        except SystemError_ as exc:
            return common.fail(common.EXIT_MODEL, str(exc))
        as_json = args.format == "json"
        code = common.clean_files(
            pages, skipped, out, args.format,
            lambda data, system=system, as_json=as_json: clean_page(data, system, config=config, keep_blocks=as_json),
            quiet=args.quiet, progress=args.progress, overwrite=args.overwrite,
            max_blocks=int(config["limits"]["max_blocks"]), label=kind, config=config,
            skip_done=getattr(args, "skip_done", False),
        )
        worst = max(worst, code)
    return worst


def _crf_path(model: str | None) -> str | None:
    if model and Path(model).is_dir():
        p = Path(model) / CRF_FILE
        return str(p) if p.exists() else None
    return None


# -- eval -------------------------------------------------------------------------------------


def _dev_timing_model(docs_pages, folds, config, quiet: bool):
    """A CRF trained by the development protocol (every 2nd page of the folds other than the
    validation fold 1, 80 iterations), only to time clean_html for the CRF row."""
    from ..label.attribute_codes import ATTRIBUTE_ENCODING
    from ..label.crf_model import CrfModel
    from ..learn.cv import trainable
    from ..learn.train import fit, prepare

    pages = [p for p in docs_pages if folds.get(p.key) not in (None, 1)][::2]
    prepared = prepare(pages, config, None, folds, processes=1, progress=not quiet)
    data = fit(trainable(prepared, float(config["train"]["min_alignment"])), config,
               c1=float(config["train"]["c1"]), c2=float(config["train"]["c2"]), max_iterations=80)
    return CrfModel(data, {"attribute_encoding": ATTRIBUTE_ENCODING})


def _stored_crf_cv(args, config, pages, many: bool, log):
    """(model, its stored 6-fold figures) when the CRF model (--model, or the packaged default) was
    cross-validated by `cleaner train --cv` with the current config's settings on exactly these pages;
    else None (the CRF is then cross-validated here)."""
    from ..gold.data import manifest_hash
    from ..label.model import load_model
    from ..label.model_files import ModelError
    from ..page.features import DEFAULT_FAMILIES

    try:
        model = load_model(_crf_path(args.model) if many else args.model)
    except ModelError as exc:
        log(f"crf: no stored cross-validation ({exc})")
        return None
    m, tc = model.meta, config["train"]
    checks = {
        "cross-validation figures": bool(m.get("cross_validation")),
        "c1": m.get("c1") == float(tc["c1"]),
        "c2": m.get("c2") == float(tc["c2"]),
        "iterations": m.get("max_iterations") == int(tc["max_iterations"]),
        "families": tuple(m.get("families") or ()) == tuple(DEFAULT_FAMILIES),
        "feature config": m.get("config_hash") == config.section_hash(families=DEFAULT_FAMILIES),
        "training pages": m.get("training_manifest_hash") == manifest_hash(pages),
        "sites held out": bool(m.get("cross_validation_unseen_sites")) == bool(getattr(args, "unseen_sites", False)),
    }
    failed = [k for k, ok in checks.items() if not ok]
    if failed:
        log(f"crf: model {model.hash} differs from the current settings/pages ({', '.join(failed)}): cross-validating")
        return None
    log(f"crf: reusing the 6-fold cross-validation stored with model {model.hash} by `cleaner train --cv` "
        f"(c1={m['c1']}, c2={m['c2']}, {m['max_iterations']} iterations, same folds and pages)")
    return model, m["cross_validation"]


def evaluate(args) -> int:
    from ..learn.evaluate import (
        page_type_figures,
        paired_comparison,
        read_page_table,
        snippet_scores,
        summary_table,
        wcxb_scores,
    )
    from ..learn.evaluate import write_page_table as write_pages
    from ..learn.systems_evaluate import (
        apply_system,
        crf_cross_validate,
        cross_validate_system,
        figures_by_set,
        load_notes,
        load_results,
        median_ms,
        prepare_docs,
        reported_figures,
        save_results,
        systems_table,
        time_crf,
    )

    config = common.config_from_args(args)
    kinds = _kinds(args.model_kind)
    many = args.model_kind == "all"
    if many and (args.pages or args.against):
        return common.fail(common.EXIT_USAGE, "--pages and --against compare one labeller's pages: give one "
                                              "--model-kind, not all")
    pages, folds = common.gold_pages_from_args(args)
    baseline = None
    if args.against:  # read first: a wrong file should not cost a cross-validation
        try:
            baseline = read_page_table(Path(args.against))
        except (OSError, ValueError) as exc:
            return common.fail(common.EXIT_INPUT, str(exc))
    fold_ids = common.chosen_folds(args.folds, pages, folds)
    results_path = Path(args.results) if getattr(args, "results", None) else None
    results = load_results(results_path) if results_path else {}
    notes: dict = load_notes(results_path) if results_path else {}
    sites = common.sites_from_args(args, pages)  # None unless --cv --unseen-sites
    unseen = sites is not None
    if results and (notes.get("cv", True) != bool(args.cv) or notes.get("unseen_sites", False) != unseen
                    or notes.get("folds") != fold_ids):
        results, notes = {}, {}  # results of another protocol: not reusable
    notes["cv"] = bool(args.cv)
    notes["unseen_sites"] = unseen
    notes["folds"] = fold_ids
    kind_log = notes.setdefault("log", {})
    reported: dict[str, dict] = {}  # kind -> set -> figures stored with a model (the CRF's cross-validation)
    reported_ms: dict[str, float | None] = {}
    log_lines: list[str] = []

    current: list[str | None] = [None]

    def log(msg: str) -> None:
        log_lines.append(msg)
        if current[0]:
            kind_log.setdefault(current[0], []).append(msg)
        if not args.quiet:
            print(msg, file=sys.stderr)

    systems = {}
    if not args.cv:
        for kind in kinds:
            if kind == "crf":
                continue  # the CRF is evaluated by `cleaner eval --model M` itself
            try:
                systems[kind] = load_system(_system_path(args.model, kind, many), kind)
            except SystemError_ as exc:
                if many and not is_training_free(kind):
                    log(f"{kind}: skipped ({exc})")
                    continue
                return common.fail(common.EXIT_MODEL, str(exc))
    docs = prepare_docs(pages, config, folds, progress=not args.quiet)
    log(f"prepared {len(docs)} pages (load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")
    keys = {d.key for d in docs}
    # the CRF's cross-validation is by far the slowest: run it last (results are saved as they come)
    for kind in sorted(kinds, key=lambda k: k == "crf"):
        if kind in results and {r.key for r in results[kind]} == keys:
            log(f"{kind}: results reused from {results_path}; the log of the run that made them:")
            log_lines.extend("    " + line for line in kind_log.get(kind, []))
            continue
        current[0] = kind
        kind_log[kind] = []
        t0 = time.time()
        if args.cv and kind == "crf" and kind not in results and not unseen and fold_ids is None:
            stored = _stored_crf_cv(args, config, pages, many, log)
            if stored is not None:
                model, cv = stored
                ms = time_crf(model, docs, config)
                reported[kind] = reported_figures(cv, ms, {d.key: d.dataset for d in docs})
                reported_ms[kind] = statistics.median(ms.values()) if ms else None
                log(f"crf: timed clean_html with model {model.hash} in {time.time() - t0:.0f}s "
                    f"(load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")
                continue
        if args.cv and kind == "crf":
            model = _dev_timing_model(pages, folds, config, args.quiet)
            results[kind] = crf_cross_validate(pages, folds, config, processes=args.jobs, progress=not args.quiet,
                                               timing_model=model, timing_docs=docs, sites=sites, fold_ids=fold_ids)
        elif args.cv:
            results[kind] = cross_validate_system(kind, docs, config, progress=not args.quiet, log=log, sites=sites,
                                                  fold_ids=fold_ids)
        elif kind in systems:
            results[kind] = apply_system(systems[kind], docs)
        else:
            continue
        log(f"{kind}: evaluated in {time.time() - t0:.0f}s")
        if results_path:
            save_results(results_path, results, notes)
    order = [k for k in KINDS if (k in results or k in reported) and k in kinds]
    figs = figures_by_set({k: results[k] for k in order if k in results}) | reported
    ms_all = {k: median_ms(results[k]) for k in order if k in results} | reported_ms
    summary, detail = systems_table(figs, ms_all, order)
    print(summary)
    print(detail)
    one = results.get(kinds[0]) if not many else None  # one labeller: the CRF's per-page tables too
    if one is not None:
        wcxb = wcxb_scores(one, docs)
        by_type = page_type_figures(one, common.page_types_from_args(args), wcxb,
                                    snippet_scores(one, common.snippets_from_args(args)))
        if by_type:
            print("By page type:\n\n" + summary_table(by_type))
        if baseline is not None:
            print(f"Against {args.against}, page by page:\n\n" + paired_comparison(one, baseline))
        if args.pages:
            print(f"per-page figures written to {write_pages(one, Path(args.pages), wcxb)}", file=sys.stderr)
    default_report = DEFAULT_REPORT.with_name("systems-unseen-sites.md") if unseen else DEFAULT_REPORT
    report = Path(args.report) if args.report else (default_report if many and args.cv else None)
    if report:
        write_report(report, summary, detail, args.cv, log_lines, unseen)
        print(f"report written to {report}", file=sys.stderr)
    if args.json:
        Path(args.json).write_text(json.dumps({k: figs[k] for k in order}, indent=2) + "\n")
    return common.EXIT_OK


def write_report(path: Path, summary: str, detail: str, cv: bool, log_lines: list[str],
                 unseen_sites: bool = False) -> None:
    how = (
        "6-fold cross-validation by document on `folds.tsv`: fold k of all four sets is held out together, every "
        "system is trained on the other five folds (pages whose gold aligns below `[train] min_alignment` are left "
        "out of training, as for the CRF) and labels the held-out pages; the six test folds are pooled per set."
        if cv else "Systems applied to every page as trained (no cross-validation)."
    ) + (common.UNSEEN_SITES_NOTE if unseen_sites else "")
    text = f"""# The seed systems side by side

{how} Every system labels the project's own blocks (`cleaner.page.segment`), and every figure comes from
`cleaner.gold.score` (macro averages over pages). Produced by `cleaner eval --model-kind all --cv`
(with `--results FILE`, per-page results are kept and a rerun evaluates only the systems missing from it; see the
run log).

* **word F1**, **text-only**: the scorer's macro figures.
* **markup F1**: only the CRF labels segments (header / paragraph / list); every other system turns each run of
  consecutive content blocks into one `<p>` segment, so its markup F1 says little. Dragnet gold has no markers.
* **block acc**: share of blocks whose content-vs-noise decision agrees with the gold-aligned label.
* **ms/page**: CPU milliseconds of the whole pipeline per page (decode + segment + labelling + assembly; one
  thread), median over the set's pages, measured on a shared 2-core machine under load (compare systems with
  each other, not with other tables). For the CRF: `clean_html` (features, CRF, decision stage) with the
  shipped model.
* **crf**: the project's default CRF with the config's settings (c1, c2, iterations, every feature family,
  decision stage). Its figures are the 6-fold cross-validation `cleaner train --cv` stored with the shipped model
  (`cleaner/models/default.crfsuite.json`), reused when that model's settings, feature config and training pages
  match the current ones (see the run log); otherwise, and always with `--unseen-sites`,
  `cleaner.learn.train.cross_validate` is run on the same folds.
  The CRF's design decisions were made on fold 1, so its figures are slightly optimistic there; the seed
  systems were implemented from their papers without tuning on these folds.

## Word F1 (macro)

{summary}
## All figures

{detail}
## Systems as implemented

See the module docstrings in `cleaner/label/systems/` for details and approximations:

* **dragnet** - Kohlschütter text/link density of the block, its inline run (Kohlschütter block) and their
  neighbours; CETR tag ratio, smoothed, smoothed |derivative| and the k-means prediction; id/class tokens with
  extreme content:noise odds; standardised; L2 logistic regression, C by 3-fold grouped CV within the training
  folds (log-loss) on at most 60,000 blocks, final fit on at most 200,000 blocks (sampled by page).
* **mss** - token naive Bayes (token trigram, most recent unclosed tag; hashed counts, add-one smoothing),
  scores P(content) - 0.5, one maximum-scoring contiguous token range (linear time). **mss-hr**: the range may
  not contain an `<hr>`. **mss-baseline**: tags -3.25, text tokens +1, no training.
* **fiasco** - target nodes (immediate text >= 10 % of the subtree's text; inline elements belong to their
  block-level parent) from a reparse that reproduces the project's blocks; linguistic and structural features
  scaled to [-1, 1]; RBF SVM, C x gamma grid by 3-fold grouped CV on 3,000 nodes, final fit on 12,000 nodes.
* **everything** - every block. **largest-group** - the innermost `<div>`/`<td>` holding the most words.

## Run log

```
""" + "\n".join(log_lines) + "\n```\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
