"""What the command line's subcommands share: exit codes, error lines, the config and the gold pages
named on the command line, cleaning files into outputs.

The CRF's commands (`cleaner.tools.cli_clean`, `cleaner.tools.cli_train_eval`, `cleaner.tools.cli_models`, set up by
`cleaner.tools.cli`) and `cleaner.tools.cli_systems` (the seed systems' `--model-kind`) import from here, so none
imports another's internals.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

EXIT_OK, EXIT_PARTIAL, EXIT_USAGE, EXIT_INPUT, EXIT_MODEL, EXIT_OUTPUT = 0, 1, 2, 3, 4, 5
EXIT_INTERRUPTED = 130  # Ctrl-C, as a shell reports SIGINT (128 + 2)
DEFAULT_DATA = Path(__file__).resolve().parents[3] / "shared" / "data"


def fail(code: int, message: str) -> int:
    print(f"cleaner: error: {message}", file=sys.stderr)
    return code


def config_from_args(args):
    """The config named on the command line (--config overlay); a bad one ends the command."""
    from ..config import ConfigError, load_config
    from .runtime import tune_gc

    try:
        config = load_config(getattr(args, "config", None))
    except ConfigError as exc:
        raise SystemExit(fail(EXIT_MODEL, str(exc))) from exc
    tune_gc(config)  # every command that reads a config cleans pages ([runtime], cleaner/tools/runtime.py)
    return config


def serving_model_from_args(args):
    """The config and the model that cleans: --model, else the model of the convention chosen (--convention, else
    the config's; cleaner.label.model.model_for_convention), checked once so that no page fails on it (errors name the
    file). The config's [model] convention is the one the model tags with."""
    from ..label.convention import ConventionError
    from ..label.model import model_for_convention
    from ..label.model_files import ModelError

    config = config_from_args(args)
    try:
        serving = model_for_convention(config, getattr(args, "model", None), getattr(args, "convention", None))
    except (ModelError, ConventionError) as exc:
        raise SystemExit(fail(EXIT_MODEL, str(exc))) from exc
    return serving.config_for(config), serving


def report_skipped(skipped, *, quiet: bool) -> None:
    """One line per path not cleaned: always when the user asked for it (named it), else unless -q."""
    for s in skipped:
        if s.failed:
            print(f"cleaner: {s.shown}: not cleaned ({s.reason})", file=sys.stderr)
        elif not quiet:
            print(f"cleaner: {s.shown}: skipped ({s.reason})", file=sys.stderr)


class _Cleaned:
    """What the writing loop needs of a page's cleaning (`CleanResult` is not sent back from a worker)."""

    __slots__ = ("ok", "reason", "error", "blocks_truncated", "text", "unreadable")

    def __init__(self, ok=False, reason=None, error=None, blocks_truncated=False, text="", unreadable=None):
        self.ok, self.reason, self.error, self.blocks_truncated = ok, reason, error, blocks_truncated
        self.text, self.unreadable = text, unreadable


# The work of one page in the pool's workers: (clean_one, fmt, corpus), set before the pool forks (a closure over
# the model is not picklable; forked workers inherit it).
_WORK: tuple | None = None


def _clean_page(page) -> _Cleaned:
    """Read, clean and render one page (in the command's process, or in a worker of --jobs)."""
    from .outputs import render

    assert _WORK is not None
    clean_one, fmt, corpus = _WORK
    try:
        data = page.read()
    except OSError as exc:
        return _Cleaned(unreadable=str(exc.strerror or exc))
    res = clean_one(data)
    return _Cleaned(res.ok, res.reason, res.error, bool(res.blocks_truncated), render(res, page, fmt, corpus))


def _ignore_ctrl_c() -> None:
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the command's to handle: it stops the pool itself


def _cleaned_pages(pages, jobs: int):
    """Each page's _Cleaned, in the order of `pages`: here, or with `jobs` forked processes (the same code on the same
    bytes: the output is the same byte for byte). Yields (page, cleaned); the pool is stopped on every way out."""
    if jobs <= 1 or len(pages) < 2:
        for page in pages:
            yield page, _clean_page(page)
        return
    import multiprocessing

    pool = multiprocessing.get_context("fork").Pool(min(jobs, len(pages)), initializer=_ignore_ctrl_c)
    try:
        yield from zip(pages, pool.imap(_clean_page, pages, chunksize=1))
        pool.close()
    finally:
        pool.terminate()
        pool.join()


def clean_files(pages, skipped, out: str | None, fmt: str, clean_one, *, quiet: bool, progress: bool | None,
                overwrite: bool, max_blocks: int | None = None, label: str = "", config=None,
                skip_done: bool = False, settings: dict | None = None, jobs: int = 1) -> int:
    """Clean each page with `clean_one(bytes) -> CleanResult` and write its output (cleaner.tools.outputs);
    report rejected, truncated and skipped pages. The exit code: 0 when every page given was cleaned
    whole, 1 when some were rejected, truncated or not found (the rest is cleaned), 5 when the output
    is refused (nothing written; a folder recorded with other `settings`, cleaner.output.run_settings) or fails
    (disk full: one line), 130 when interrupted (one line: what was written)."""
    from tqdm import tqdm

    from .outputs import OutputRefused, output_for

    global _WORK

    try:
        sink = output_for(out, fmt, overwrite=overwrite, skip_done=skip_done, settings=settings)
    except OutputRefused as exc:
        return fail(EXIT_USAGE, str(exc))
    # the JSON formats carry the job's corpus columns (language, dedup keys, quality signals), as configured
    corpus = None
    if fmt in ("json", "jsonl"):
        from ..output.corpus import CorpusColumns, default_corpus_columns

        corpus = CorpusColumns.from_settings(config.settings.corpus) if config is not None else default_corpus_columns()
    try:
        sink.check(pages)
    except OutputRefused as exc:
        return fail(EXIT_OUTPUT, str(exc))
    done_before = getattr(sink, "done", [])
    if done_before:  # --skip-done: their outputs are whole (written, then renamed into place)
        given = len(pages)
        done_keys = {id(p) for p in done_before}
        pages = [p for p in pages if id(p) not in done_keys]
        if not quiet:
            print(f"cleaner: {len(done_before)} of {given} pages done by an earlier run (--skip-done)", file=sys.stderr)
    report_skipped(skipped, quiet=quiet)
    rejected: dict[str, int] = {}
    truncated = 0
    prefix = f"{label}: " if label else ""
    show_bar = (sys.stderr.isatty() if progress is None else progress) and not quiet and len(pages) > 1
    _WORK = (clean_one, fmt, corpus)
    cleaned = _cleaned_pages(pages, jobs)
    try:
        for page, res in tqdm(cleaned, total=len(pages), desc=f"clean {label}".strip(), unit="page",
                              disable=not show_bar, file=sys.stderr):
            if res.unreadable is not None:
                print(f"cleaner: {page.shown}: not cleaned (cannot read: {res.unreadable})", file=sys.stderr)
                rejected["unreadable"] = rejected.get("unreadable", 0) + 1
                continue
            if not res.ok:
                rejected[res.reason] = rejected.get(res.reason, 0) + 1
                if not quiet:
                    why = f"{res.reason}{': ' + res.error if res.error else ''}"
                    print(f"cleaner: {prefix}{page.shown}: rejected ({why})", file=sys.stderr)
            if res.blocks_truncated:
                truncated += 1
                limit = f"first {max_blocks} " if max_blocks else "first "
                print(f"cleaner: warning: {prefix}{page.shown}: truncated: only its {limit}blocks were cleaned "
                      f"(raise [limits] max_blocks with --config)", file=sys.stderr)
            sink.write(page, res.text)
        sink.finish()
    except OutputRefused as exc:  # disk full: one line, and what is left (never a file cut mid-page)
        return fail(EXIT_OUTPUT, f"{exc}; {sink.abandon(interrupted=False)}")
    except BrokenPipeError:  # `cleaner clean ... | head`: the reader is gone, nothing more to say
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 (stands in for stdout until the process exits)
        sink.abandon(interrupted=False)
        return EXIT_OUTPUT
    except KeyboardInterrupt:  # Ctrl-C: what was written, and under which name
        cleaned.close()  # --jobs: the workers stopped
        print(f"cleaner: interrupted: {sink.abandon(interrupted=True)}", file=sys.stderr)
        return EXIT_INTERRUPTED
    finally:
        cleaned.close()
        _WORK = None
    n_bad = sum(rejected.values())
    failed: dict[str, int] = {}
    for s in skipped:
        failed[s.outcome] = failed.get(s.outcome, 0) + s.failed
    failed = {k: v for k, v in failed.items() if v}
    code = EXIT_PARTIAL if n_bad or truncated or failed else EXIT_OK
    # Piped to standard output, a run that went well says nothing (`cat page.html | cleaner clean -`).
    if not quiet and not (code == EXIT_OK and out in (None, "-") and not skipped):
        parts = []
        if rejected:
            parts.append("rejected: " + ", ".join(f"{k}={v}" for k, v in sorted(rejected.items())))
        if truncated:
            parts.append(f"truncated: {truncated}")
        if failed:
            parts.append("not cleaned: " + ", ".join(f"{k}={v}" for k, v in sorted(failed.items())))
        n_skip = sum(not s.failed for s in skipped)
        if n_skip:
            parts.append(f"skipped: {n_skip} files (listed above)")
        # (a path that could not be cleaned at all, one named but missing say, is a page asked for too)
        asked = len(pages) + sum(failed.values())
        print(f"{prefix}cleaned {len(pages) - n_bad}/{asked} pages into {sink.shown}"
              + (f" ({'; '.join(parts)})" if parts else ""), file=sys.stderr)
    return code


def gold_pages_from_args(args):
    from ..gold.data import find_pages, load_folds

    pages, folds = [], {}
    for d in args.data_dirs or [str(DEFAULT_DATA)]:
        try:
            pages.extend(find_pages(d, args.datasets))
        except FileNotFoundError as exc:
            raise SystemExit(fail(EXIT_INPUT, str(exc))) from exc
        folds.update(load_folds(d))
    pages = [p for p in pages if p.gold_path is not None]
    if not pages:
        raise SystemExit(fail(EXIT_INPUT, "no pages with a gold file found in " + ", ".join(args.data_dirs or [])))
    if args.limit:
        pages = pages[: args.limit]
    if not folds:  # user folders: deterministic folds by key
        import zlib

        folds = {p.key: zlib.crc32(p.key.encode()) % 6 + 1 for p in pages}
    return pages, folds


def sites_from_args(args, pages):
    """Page key -> site for `--cv --unseen-sites` (None: split by document only)."""
    if not (getattr(args, "cv", False) and getattr(args, "unseen_sites", False)):
        return None
    from ..gold.data import load_sites, page_sites

    listed: dict[str, str] = {}
    for d in args.data_dirs or [str(DEFAULT_DATA)]:
        listed.update(load_sites(d))
    return page_sites(pages, listed)


def page_types_from_args(args) -> dict[str, str]:
    """Page key -> page type of the data dirs' sets that list them (wcxb/pages.tsv)."""
    from ..gold.data import load_page_types

    out: dict[str, str] = {}
    for d in args.data_dirs or [str(DEFAULT_DATA)]:
        if Path(d).is_dir():
            out.update(load_page_types(d))
    return out


def snippets_from_args(args) -> dict:
    """Page key -> its must-have and must-not snippets, of the data dirs' sets that list them (wcxb/snippets.jsonl,
    cleaner.gold.snippets)."""
    from ..gold.snippets import load_snippets

    out: dict = {}
    for d in args.data_dirs or [str(DEFAULT_DATA)]:
        if Path(d).is_dir():
            out.update(load_snippets(d))
    return out


def chosen_folds(spec: str | None, pages, folds: dict[str, int]) -> list[int] | None:
    """`--folds 0,1` -> [0, 1] (None: every fold); a fold no page is in is a usage error."""
    if not spec:
        return None
    known = sorted({folds[p.key] for p in pages if p.key in folds})
    try:
        chosen = sorted({int(k) for k in spec.split(",") if k.strip()})
    except ValueError:
        raise SystemExit(fail(EXIT_USAGE, f"--folds takes fold numbers separated by commas, not {spec!r}")) from None
    unknown = [k for k in chosen if k not in known]
    if unknown or not chosen:
        raise SystemExit(fail(EXIT_USAGE, f"--folds {spec}: no page is in fold(s) {unknown}; the folds are {known}"))
    return chosen


UNSEEN_SITES_NOTE = (
    " **Unseen sites** (`--unseen-sites`): each fold's model is trained without the pages of every site that occurs "
    "in the fold, in any set (a site in chaos and fundus is held out of both), so every held-out page is from a site "
    "the model never saw, as most pages of a new crawl are. The site of a modern page is the one sites.tsv names "
    "(its registered domain); an old page's is inferred from its HTML (canonical link, og:url, `<base>`, else the "
    "host its links point to most often), and is the listed site its host is under, if any "
    "(`edition.cnn.com` -> `cnn.com`). The training sets are smaller than in the split by document "
    "(CleanPortalEval's four sites leave no CleanPortalEval page to train on)."
)
