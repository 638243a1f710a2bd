"""decode -> segment -> a seed system -> assemble, returning the same `CleanResult` as
`cleaner.api.clean_html` (same rejection reasons; never raises)."""

from __future__ import annotations

import time

from ..api import CleanResult, _Budget, _sanitize
from ..assemble import assemble
from ..config import Config, load_config
from ..decode import decode_html
from ..segment import segment_blocks
from .base import BlockLabeller, PageInput


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
    limits = config["limits"]
    result = CleanResult("rejected", model_hash=system.kind, decision=system.kind)
    timings = result.timings_ms
    if data is None or not isinstance(data, (bytes, bytearray, memoryview)):
        result.reason, result.error = "internal_error", f"expected bytes, got {type(data).__name__}"
        return result
    if len(data) > int(limits["max_html_bytes"]):
        result.reason = "too_large"
        return result
    if not bytes(data[:4096]).strip() and not bytes(data).strip():
        result.reason = "empty"
        return result
    budget = _Budget(float(limits.get("time_budget_s", 0)))
    t = time.perf_counter()
    try:
        page = decode_html(bytes(data), http_charset=http_charset, config=config)
    except Exception as exc:
        result.reason, result.error = "decode_failed", f"{type(exc).__name__}: {exc}"[:500]
        return result
    timings["decode"] = (time.perf_counter() - t) * 1000
    result.encoding, result.encoding_source, result.replacements = page.encoding, page.source, page.replacements
    if page.wrapper:
        result.url = page.wrapper.get("id")
    if budget.expired():
        result.reason = "timeout"
        return result
    t = time.perf_counter()
    try:
        seg = segment_blocks(page.text, config)
    except Exception as exc:
        result.reason, result.error = "parse_error", f"{type(exc).__name__}: {exc}"[:500]
        return result
    timings["segment"] = (time.perf_counter() - t) * 1000
    result.n_blocks = len(seg.blocks)
    result.blocks_truncated, result.nesting_capped = seg.truncated, seg.nesting_capped
    if not seg.blocks:
        result.reason = "no_text"
        return result
    if budget.expired():
        result.reason = "timeout"
        return result
    t = time.perf_counter()
    labels = system.predict(PageInput(seg.blocks, page.text))
    timings["system"] = (time.perf_counter() - t) * 1000
    t = time.perf_counter()
    out = assemble(seg.blocks, labels)
    result.cleaneval, n1 = _sanitize(out.cleaneval)
    result.plain, _ = _sanitize(out.plain)
    result.sanitized_chars = n1
    result.stats = out.stats
    timings["assemble"] = (time.perf_counter() - t) * 1000
    if keep_blocks:
        result.blocks, result.labels = seg.blocks, labels
        result.confidences = [1.0] * len(labels)
    if not out.segments:
        result.reason = "no_content"
        return result
    result.status = "cleaned"
    return result
