"""`cleaner clean`: clean HTML files into CleanEval text, plain text or JSON with the CRF (a seed system's
`--model-kind` goes to cleaner.tools.cli_systems). The parser that sets it up is cleaner.tools.cli.build_parser."""

from __future__ import annotations

from .cli_common import EXIT_INPUT, EXIT_USAGE, clean_files, report_skipped
from .cli_common import fail as _fail
from .cli_common import serving_model_from_args as _load

# --format markdown's flags: each turns on the field of cleaner.output.markdown.MarkdownOptions of its name.
MARKDOWN_FLAGS = ("links", "images", "emphasis")


def cmd_clean(args) -> int:
    from .inputs import collect

    if not args.paths:  # `cat page.html | cleaner clean`: a page piped in needs no `-`
        if not _piped_in():
            return _fail(EXIT_USAGE, "nothing to clean: a PATH is required (HTML files or folders), or a page "
                                     "piped in (- for standard input)")
        args.paths = ["-"]
    fmt = args.format
    if getattr(args, "jobs", 1) < 1:
        return _fail(EXIT_USAGE, "--jobs must be at least 1")
    to_stdout = args.out in (None, "-")
    if to_stdout and getattr(args, "model_kind", "crf") == "all":
        return _fail(EXIT_USAGE, "--model-kind all writes one folder per system: give --out DIR")
    pages, skipped = collect(args.paths)
    if any(getattr(args, name, False) for name in MARKDOWN_FLAGS) and fmt != "markdown":
        return _fail(EXIT_USAGE, "--links, --images and --emphasis are options of --format markdown")
    if to_stdout and fmt in ("cleaneval", "txt", "markdown") and len(pages) > 1:
        return _fail(EXIT_USAGE, f"{len(pages)} pages to standard output would run together: give --out DIR "
                                 "(one file per page), or --format jsonl (one line per page)")
    if not pages:
        report_skipped(skipped, quiet=False)
        return _fail(EXIT_INPUT, "nothing to clean: no HTML file among " + ", ".join(args.paths))
    if getattr(args, "model_kind", "crf") != "crf":
        if fmt == "markdown":
            return _fail(EXIT_USAGE, "--format markdown is the CRF's (--model-kind crf)")
        from .cli_systems import clean as clean_with_system

        return clean_with_system(args, pages, skipped, crf_clean=cmd_clean)
    from ..api import clean_html
    from ..output.markdown import MarkdownOptions
    from ..output.run_settings import output_settings

    config, serving = _load(args)
    as_json = fmt == "json"
    markdown = (MarkdownOptions(**{name: getattr(args, name, False) for name in MARKDOWN_FLAGS})
                if fmt == "markdown" else False)
    shape = fmt + "".join(f" --{name}" for name in MARKDOWN_FLAGS if getattr(args, name, False))  # (recorded)
    settings = output_settings(shape, serving.chosen, serving.hash, config)
    return clean_files(
        pages, skipped, args.out, fmt,
        lambda data: clean_html(data, model=serving, config=config, keep_blocks=as_json, all_marginals=as_json,
                                markdown=markdown),
        quiet=args.quiet, progress=args.progress, overwrite=args.overwrite,
        max_blocks=int(config["limits"]["max_blocks"]), config=config, skip_done=args.skip_done,
        settings=settings, jobs=getattr(args, "jobs", 1),
    )


def _piped_in() -> bool:
    """Whether standard input can hold a page: a pipe or a file with bytes, not a terminal, /dev/null (a cron
    job's or CI's standard input) or an empty file."""
    import os
    import stat
    import sys

    if sys.stdin is None or sys.stdin.isatty():
        return False
    try:
        mode = os.fstat(sys.stdin.fileno())
    except (OSError, ValueError):
        return False
    return not (stat.S_ISCHR(mode.st_mode) or (stat.S_ISREG(mode.st_mode) and mode.st_size == 0))
