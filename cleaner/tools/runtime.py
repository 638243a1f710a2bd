"""Process-wide settings for a process whose work is cleaning pages: Python's cyclic garbage collector.

Why: cleaning one page allocates tens of thousands of container objects (blocks, attribute lists, rows) that
stay alive until the page is done and are then freed by reference counting. The cleaner makes no reference
cycles: after 731 shared pages cleaned with the collector off, `gc.collect()` finds nothing to free
(tests/test_runtime.py keeps it so). CPython's collector does not know that: it runs a young collection
whenever 700 more container objects are alive than at the last one, so a page triggers dozens of them; each
promotes the page's live objects to the older generations, and those promotions trigger full collections
that walk every object of the process. On the shared pages that was 7-9 % of the cleaner's CPU time, for
no memory returned; the full collections fall on a few pages, so it shows in the mean CPU per page (the
throughput: -5 % tuned) rather than the median (docs/speed.md, stop 23).

So the processes that clean pages (the `cleaner` commands, the Spark job's Python workers, the benchmark
scripts) raise the collector's thresholds from `[runtime]` in conf/default.toml: a young collection after
`gc_thresholds[0]` net allocations instead of 700. Cycles that other code makes (an exception's traceback,
a library's internals) are still collected, only later. The library itself (`cleaner.api.clean_html`) never
changes a process-wide setting: an application that embeds it calls `tune_gc` when it wants the same.
"""

from __future__ import annotations

import gc

from ..config import Config, load_config


def gc_thresholds(config: Config | None = None) -> tuple[int, ...] | None:
    """The collector thresholds `[runtime] gc_thresholds` asks for (checked by cleaner.config when the
    config is read); None = leave Python's own."""
    config = config or load_config()
    values = config["runtime"]["gc_thresholds"]
    return tuple(values) if values else None


def tune_gc(config: Config | None = None) -> tuple[int, int, int]:
    """Set this process's collector thresholds as `[runtime]` says (see the module docstring); the
    thresholds before, so that a caller can put them back with `gc.set_threshold(*before)`."""
    before = gc.get_threshold()
    thresholds = gc_thresholds(config)
    if thresholds is not None:
        gc.set_threshold(*thresholds)
    return before
