"""`cleaner`: the command line: its parser and `main`. The commands are in their own modules: `clean`
(cleaner.tools.cli_clean), `train` and `eval` (cleaner.tools.cli_train_eval), `models` (cleaner.tools.cli_models), the
modules of EXTRA_COMMAND_MODULES; what they share (exit codes, the config and pages named) in cleaner.tools.cli_common.

    cleaner clean PATH...|- [--out DIR|FILE|-] [--model NAME|M] [--convention main|article|cleaneval|dragnet]
                 [--format cleaneval|txt|json|jsonl|markdown [--links] [--images] [--emphasis]]
                 [--overwrite | --skip-done]
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
    5  the output is refused or fails (clean: an output exists without --overwrite, --out is a file, a folder
       written with other settings, the disk is full)
  130  interrupted (Ctrl-C; clean says in one line what was written)
"""

from __future__ import annotations

import argparse
import sys

from .cli_clean import cmd_clean
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
from .cli_models import (  # noqa: F401 (describe_model, packaged_models: read from here too)
    cmd_models,
    describe_model,
    packaged_models,
)
from .cli_train_eval import cmd_eval, cmd_train

# Each module defines add_parser(subparsers) and sets `func` on its sub-parser. jobs.local_job is
# `clean-warc`, the WARC job on local processes: named, not imported, so that cleaner/ depends on no job
# code (a cleaner without jobs/ beside it just has no clean-warc).
EXTRA_COMMAND_MODULES = ("cleaner.tools.inspect", "cleaner.tools.annotate", "jobs.local_job")
# --model-kind choices (cleaner/label/systems; kept here so that --help needs no heavy import)
MODEL_KINDS = ("crf", "dragnet", "mss", "mss-baseline", "mss-hr", "fiasco", "everything", "largest-group", "all")


def _version_text() -> str:
    import cleaner

    return f"webcleaner {cleaner.__version__} ({cleaner.NATIVE_STATUS})"


class _VersionLine(argparse.Action):
    """--version: the version line as it is (argparse's own version action wraps it at 80 columns, and the list of
    compiled modules is longer)."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, help=None):
        super().__init__(option_strings, dest, nargs=0, default=default, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        print(_version_text())
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="cleaner",
        description="Clean web pages into CleanEval text (<h>/<p>/<l> segments) with a CRF block labeller; "
        "train and evaluate the model.",
        epilog="Exit codes: 0 ok, 1 some pages rejected, truncated or missing (clean), 2 bad usage, 3 input missing, "
        "4 invalid model/config, 5 output refused (clean).",
    )
    parser.add_argument("--version", action=_VersionLine,
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
                       "4 invalid model or config; 5 output refused or failed (an output exists, --out is a file, "
                       "the folder was written with other settings, the disk is full); 130 interrupted (Ctrl-C: "
                       "one line says what was written; a jsonl file is left as FILE.incomplete).")
    p.add_argument("paths", nargs="*", metavar="PATH",
                   help="HTML files, folders, or - for standard input (none: a page piped in on standard input)")
    p.add_argument("--out", metavar="DIR",
                   help="output folder (created), one file per page; with --format jsonl a file; - or none: "
                   "standard output (one page, or --format json/jsonl: one line per page)")
    p.add_argument("--format", choices=("cleaneval", "txt", "json", "jsonl", "markdown"), default="cleaneval",
                   help="cleaneval: text with <h>/<p>/<l> segment markers (the default, on a terminal too: the "
                   "markers are the labels, headings and list items, that a corpus is filtered and checked by, and "
                   "the gold of the CleanEval sets is written so); txt: plain text, one segment "
                   "a line; json: one document per page with the blocks, labels and probabilities; jsonl: one "
                   "line per page (status, reason, truncated, stats, text, cleaneval, the corpus columns) in one file; "
                   "markdown: the kept text as Markdown (headings, lists, tables, fenced code, formulas as TeX; "
                   "docs/fidelity.md)")
    p.add_argument("--links", action="store_true", help="--format markdown: links as [text](address)")
    p.add_argument("--images", action="store_true", help="--format markdown: images as ![alt](address) (left out "
                   "otherwise)")
    p.add_argument("--emphasis", action="store_true", help="--format markdown: <strong>/<b> as **bold**, <em>/<i> as "
                   "*italic* (trafilatura's --formatting)")
    done = p.add_mutually_exclusive_group()
    done.add_argument("--overwrite", action="store_true", help="replace outputs that exist (refused without it)")
    done.add_argument("--skip-done", action="store_true",
                      help="resume an interrupted run into --out DIR: a page whose output file exists is not cleaned "
                           "again (an output file appears only once it is whole); refused when the folder was "
                           "written with another format, convention, model or config (DIR/.cleaner-settings.json)")
    p.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="show a progress bar on stderr (default: only when stderr is a terminal)")
    p.add_argument("--jobs", type=int, default=1, metavar="N",
                   help="clean with N processes (forked); the output is the same, in the same order, as with 1 "
                   "(default: 1)")
    p.add_argument("--model", metavar="M", help="model: a packaged model's name (default, cleaneval-2012: "
                   "`cleaner models`) or a model file (default: the packaged model of the convention, "
                   "[model.by_convention]: default for main, cleaneval-2012 for cleaneval and dragnet, but default "
                   "for a cleaneval page in HTML5 markup, [model.html5_by_convention])")
    p.add_argument("--config", metavar="TOML", help="config overlay (default: conf/default.toml)")
    p.add_argument("--convention", metavar="NAME",
                   help="what to keep (docs/conventions.md): main (the page's main content: on an article page the "
                   "article's text, mostly without its headline, and without comments; every post of a forum thread, "
                   "a listing's items), article (an article page's headline and text, as news golds keep it), "
                   "cleaneval (everything a reader takes for the page's text) or dragnet (the article and its "
                   "comments); "
                   "default: [model] convention (main). Without --model it picks the model too (`cleaner models`): "
                   "cleaneval and dragnet are served by cleaneval-2012, trained on pages of 2007-2013, except that "
                   "a cleaneval page in HTML5 markup (<!DOCTYPE html>: today's pages) goes to the default "
                   "(docs/modern.md section 31); "
                   "a model given by --model that was trained without conventions (cleaneval-2012) refuses it")
    p.add_argument("--model-kind", choices=MODEL_KINDS, default="crf",
                   help="labeller (cleaner/label/systems): a non-CRF kind takes its system file as --model (none for "
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
    p.add_argument("--pages", metavar="FILE.tsv", help="with --cv: write each held-out page's figures of the chosen "
                   "c1/c2, as `eval --cv --pages` does (for --against, scripts/peers.py --project-pages)")
    p.add_argument("--fold-models", metavar="DIR", help="with --cv and one c1/c2 point (--c1, --c2): keep each "
                   "fold's model as DIR/fold-<k>.crfsuite, as `eval --cv --fold-models` does (to score the held-out "
                   "pages again under other decision settings with `eval --cv --fold-models DIR --rescore`)")
    p.add_argument("--conventions", action="store_true",
                   help="train a convention-aware model: each page is given the annotation convention of its "
                   "set's gold ([train] conventions, convention_of; docs/conventions.md), and the convention is "
                   "chosen when cleaning (--convention); --cv then scores each page under its own set's convention")
    p.add_argument("--model-kind", choices=MODEL_KINDS, default="crf",
                   help="labeller to train (cleaner/label/systems; a non-CRF system is one .npz file); with `all`, "
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
    p.add_argument("--train-without", metavar="KEYS.txt", help="with --cv: leave the pages listed (dataset/id, one a "
                   "line) out of every fold's training; they are still held out and scored (a learning curve: what "
                   "added pages bring, on the same held-out pages)")
    p.add_argument("--fold-models", metavar="DIR", help="with --cv: keep each fold's model as DIR/fold-<k>.crfsuite "
                   "(to inspect it, or to score the held-out pages again with other decision settings: --rescore)")
    p.add_argument("--rescore", action="store_true",
                   help="with --cv --fold-models DIR: train nothing; score each fold's held-out pages with the model "
                   "an earlier run kept in DIR, under this run's config (a change of [decision] on the same folds, "
                   "in a minute; compare with --against that run's --pages)")
    p.add_argument("--conventions", action="store_true",
                   help="with --cv: train convention-aware models (as `train --conventions`) and score each page "
                   "under its own set's convention")
    p.add_argument("--convention", metavar="NAME",
                   help="with --model, a convention-aware model: score every page under this convention (main, "
                   "article, cleaneval, dragnet) instead of each set's own (chaos, big5, fundus, wcxb and your own "
                   "sets: main; CleanEval's sets: cleaneval; Dragnet: dragnet); without --model, score the model "
                   "[model.by_convention] names for it (and for its pages in HTML5 markup the one "
                   "[model.html5_by_convention] names)")
    p.add_argument("--json", metavar="FILE", help="write the figures as JSON")
    p.add_argument("--pages", metavar="FILE.tsv", help="write each page's figures (word P/R/F1, text-only, markup F1, "
                   "expected F1, fold), to compare another run with this one page by page (--against); the CRF's "
                   "or one --model-kind's")
    p.add_argument("--against", metavar="FILE.tsv", help="compare this run with another's --pages table on the pages "
                   "both scored: per set, the difference of macro F1 with its 95 %% paired bootstrap interval")
    p.add_argument("--model-kind", choices=MODEL_KINDS, default="crf",
                   help="labeller to evaluate (cleaner/label/systems); `all --cv` compares every system on the same "
                   "folds and writes docs/systems.md unless --report is given")
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
