"""decode -> segment -> a seed system -> assemble, returning the same `CleanResult` as
`cleaner.api.clean_html` (same rejection reasons; never raises)."""

from __future__ import annotations

import time

from ..api import CleanResult, finish, read_into
from ..config import Config, load_config
from ..label.systems.base import BlockLabeller, PageInput
from ..page.pipeline import CpuBudget


def clean_page(
    data: bytes,
    system: BlockLabeller,
    *,
    http_charset: str | None = None,
    config: Config | None = None,
    keep_blocks: bool = False,
) -> CleanResult:
    try:
        return _clean(data, system, http_charset, config, keep_blocks)
    except MemoryError:
        return CleanResult("rejected", "internal_error", error="MemoryError")
    except Exception as exc:  # the contract: no exception escapes
        return CleanResult("rejected", "internal_error", error=f"{type(exc).__name__}: {exc}"[:500])


def _clean(data, system, http_charset, config, keep_blocks) -> CleanResult:
    config = config or load_config()
    result = CleanResult("rejected", model_hash=system.kind, decision=system.kind)
    timings = result.timings_ms
    budget = CpuBudget(float(config["limits"]["time_budget_s"]))
    read = read_into(result, data, http_charset, config, config, budget)
    if read is None:
        return result
    page, seg = read.decoded, read.segmentation
    t = time.perf_counter()
    labels = system.predict(PageInput(seg.blocks, page.text))
    timings["system"] = (time.perf_counter() - t) * 1000
    if keep_blocks:
        result.blocks, result.labels = seg.blocks, labels
        result.confidences = [1.0] * len(labels)
    return finish(result, seg.table, labels)
